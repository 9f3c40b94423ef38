//! Teaching text fitted to the terminal: a lesson's prose is hard-wrapped in its source at
//! about 90 columns, so on an 80-column terminal the terminal itself would break words in
//! two. A line with a [`Role::Prose`] or [`Role::Note`] span, or one that is all
//! [`Role::Dim`], is re-wrapped
//! at word boundaries to the terminal's width, its continuation lines indented under the
//! text (under an option's text for `  A) …`, an item's for `- …`). Every other line —
//! tables, JSON, the call log — is left as the lab printed it, as kubectl leaves its
//! columns to the terminal.

use lab_engine::render::{Line, Outcome, Role, Span};
use lab_ui::app::prose_continuation;
use unicode_width::UnicodeWidthStr;

/// `out` with its teaching lines wrapped to `width` columns: a lesson paragraph's
/// hard-wrapped lines joined first (as the dashboard's Output pane joins them, see
/// [`prose_continuation`]), then each teaching line wrapped at words.
pub fn fit(out: &Outcome, width: usize) -> Outcome {
    let mut fitted = Outcome::empty();
    let mut push = |line: Line| {
        if reflowable(&line) && UnicodeWidthStr::width(line.text().as_str()) > width {
            for l in wrap(&line, width) {
                fitted.line(l);
            }
        } else {
            fitted.line(line);
        }
    };
    // The paragraph being joined, while its lines continue one another.
    let mut paragraph: Option<Line> = None;
    for line in out.lines() {
        if let Some(p) = paragraph.as_mut()
            && let Some(text) = continuing(p, &line)
            && let Some(span) = p.spans.last_mut()
        {
            span.text.push(' ');
            span.text.push_str(text);
            continue;
        }
        if let Some(p) = paragraph.take() {
            push(p);
        }
        if prose_continuation(&line).is_some() || list_item(&line).is_some() {
            paragraph = Some(line.into_owned());
        } else {
            push(line.into_owned());
        }
    }
    if let Some(p) = paragraph {
        push(p);
    }
    fitted
}

/// A lesson's list item (`- …`, `* …`): one prose span.
fn list_item(line: &Line) -> Option<&str> {
    let [span] = line.spans.as_slice() else {
        return None;
    };
    let t = span.text.as_str();
    (span.role == Role::Prose && (t.starts_with("- ") || t.starts_with("* "))).then_some(t)
}

/// The text `line` adds to `paragraph` when it continues it: a paragraph's next line, or
/// a list item's next line indented under it (`  …`, as Markdown writes it).
fn continuing<'l>(paragraph: &Line, line: &'l Line) -> Option<&'l str> {
    if list_item(paragraph).is_some() {
        let [span] = line.spans.as_slice() else {
            return None;
        };
        let rest = span.text.strip_prefix("  ")?;
        let nested = rest.starts_with(' ') || rest.starts_with("- ") || rest.starts_with("* ");
        (span.role == Role::Prose && !rest.is_empty() && !nested).then_some(rest)
    } else {
        prose_continuation(line)
    }
}

/// Whether a line is teaching text a front end may re-wrap.
fn reflowable(line: &Line) -> bool {
    line.spans
        .iter()
        .any(|s| matches!(s.role, Role::Prose | Role::Note))
        || (!line.spans.is_empty() && line.spans.iter().all(|s| s.role == Role::Dim))
}

/// The columns a continuation line is indented by: the line's own indent, and the marker
/// of a list item (`- `) or a quiz option (`A) `) after it.
fn hanging_indent(text: &str) -> usize {
    let indent = text.len() - text.trim_start_matches(' ').len();
    let rest = &text[indent..];
    let marker = if rest.starts_with("- ") || rest.starts_with("* ") {
        2
    } else {
        let mut chars = rest.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(c), Some(')'), Some(' ')) if c.is_ascii_alphanumeric() => 3,
            _ => 0,
        }
    };
    indent + marker
}

/// Greedy word wrap keeping each word's role; a word longer than a line is left whole.
fn wrap(line: &Line, width: usize) -> Vec<Line> {
    let text = line.text();
    let hang = hanging_indent(&text).min(width / 2);
    let lead = text.len() - text.trim_start_matches(' ').len();
    // The words, each with its role, in order (a span boundary inside a word splits it:
    // the pieces stay together on one line).
    let mut words: Vec<Vec<Span>> = Vec::new();
    let mut glued = false;
    let mut skipped = 0;
    for span in &line.spans {
        let mut rest = span.text.as_str();
        // The line's own indent is put back on its first line.
        if skipped < lead {
            let n = (lead - skipped).min(rest.len() - rest.trim_start_matches(' ').len());
            rest = &rest[n..];
            skipped += n;
        }
        while !rest.is_empty() {
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            if spaces > 0 {
                glued = false;
                rest = &rest[spaces..];
                continue;
            }
            let end = rest.find(' ').unwrap_or(rest.len());
            let piece = Span {
                text: rest[..end].to_string(),
                role: span.role,
            };
            match words.last_mut() {
                Some(w) if glued => w.push(piece),
                _ => words.push(vec![piece]),
            }
            glued = end == rest.len();
            rest = &rest[end..];
        }
    }
    let mut lines = Vec::new();
    let mut current = Line::new().push(" ".repeat(lead), Role::Plain);
    let mut used = lead;
    let mut empty = true;
    for word in words {
        let w: usize = word
            .iter()
            .map(|s| UnicodeWidthStr::width(s.text.as_str()))
            .sum();
        if !empty && used + 1 + w > width {
            lines.push(std::mem::replace(
                &mut current,
                Line::new().push(" ".repeat(hang), Role::Plain),
            ));
            used = hang;
            empty = true;
        }
        if !empty {
            let role = word.first().map_or(Role::Plain, |s| s.role);
            current = current.push(" ", role);
            used += 1;
        }
        for s in word {
            current = current.push(s.text, s.role);
        }
        used += w;
        empty = false;
    }
    lines.push(current);
    // A line's indent span is dropped where it is empty, so the text is the lab's own.
    for l in &mut lines {
        l.spans.retain(|s| !s.text.is_empty());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(o: &Outcome) -> Vec<String> {
        o.lines().map(|l| l.text()).collect()
    }

    #[test]
    fn prose_wraps_at_words_and_tables_do_not() {
        let mut o = Outcome::empty();
        let prose =
            "host-local hands out addresses from the node's podCIDR and skips the network address";
        o.line(Line::styled(prose, Role::Prose));
        let row = "NAME   READY   STATUS    RESTARTS   AGE   IP            NODE     NOMINATED NODE   READINESS GATES";
        o.plain(row);
        let fitted = texts(&fit(&o, 40));
        assert_eq!(
            fitted,
            [
                "host-local hands out addresses from the",
                "node's podCIDR and skips the network",
                "address",
                row,
            ]
        );
        assert!(fitted.iter().take(3).all(|l| l.len() <= 40));
        // The words and their order are the lab's own.
        assert_eq!(fitted[..3].join(" "), prose);
    }

    #[test]
    fn a_paragraph_s_lines_are_joined_before_it_is_wrapped() {
        let mut o = Outcome::empty();
        for l in [
            "That is round robin: a freed",
            "address is not handed out again",
            "until the range wraps around.",
            "- a list item starts its own paragraph,",
            "  its next lines indented under it",
            "- and the next item another",
        ] {
            o.line(Line::styled(l, Role::Prose));
        }
        assert_eq!(
            texts(&fit(&o, 40)),
            [
                "That is round robin: a freed address is",
                "not handed out again until the range",
                "wraps around.",
                "- a list item starts its own paragraph,",
                "  its next lines indented under it",
                "- and the next item another",
            ]
        );
    }

    #[test]
    fn continuation_lines_hang_under_an_option_or_an_item() {
        let mut o = Outcome::empty();
        o.line(Line::styled(
            "  B) The runtime must not do that; a plugin may fail",
            Role::Prose,
        ));
        o.line(Line::styled(
            "- `parameters`: the StorageClass parameters",
            Role::Prose,
        ));
        assert_eq!(
            texts(&fit(&o, 30)),
            [
                "  B) The runtime must not do",
                "     that; a plugin may fail",
                "- `parameters`: the",
                "  StorageClass parameters",
            ]
        );
    }

    #[test]
    fn roles_stay_on_their_words_and_short_lines_are_untouched() {
        let mut o = Outcome::empty();
        o.line(
            Line::new()
                .push("Task: ", Role::Header)
                .push("Create a class fast with parameter type=ssd", Role::Prose),
        );
        o.line(Line::styled("short", Role::Prose));
        let fitted = fit(&o, 24);
        let lines: Vec<Line> = fitted.lines().map(|l| l.into_owned()).collect();
        assert_eq!(lines[0].spans[0].role, Role::Header);
        assert_eq!(lines[0].spans[0].text, "Task:");
        assert!(lines.iter().all(|l| l.text().len() <= 24));
        assert_eq!(lines.last().unwrap().text(), "short");
        // A word longer than the width is left whole.
        let mut long = Outcome::empty();
        long.line(Line::styled(
            "see /var/run/netns/cni-0123456789abcdef",
            Role::Prose,
        ));
        assert_eq!(
            texts(&fit(&long, 12)),
            ["see", "/var/run/netns/cni-0123456789abcdef"]
        );
    }
}
