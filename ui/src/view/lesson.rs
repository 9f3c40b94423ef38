//! The lesson pane, shown while a lesson runs: title, a progress bar with the step number
//! the REPL shows (quizzes counted apart), the NetworkPolicy verdicts of the flows the
//! step's checks name (as they are now) and the goal first so they show without scrolling,
//! then the step's text (a quiz's question and its options), and the hint when asked for
//! (`h`).

use super::{dim, draw_lines, pane_block};
use crate::app::App;
use crate::keymap::Pane;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The pane's lines at a width (text wraps at words).
pub fn lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(l) = &app.lesson else {
        return vec![dim(t, "no lesson running")];
    };
    let width = (width as usize).max(10);
    let n = l.total.max(1);
    let done = l.done.min(n);
    let label = format!(" {}", l.position);
    let bar_w = width.saturating_sub(label.chars().count()).clamp(4, 30);
    let filled = done * bar_w / n;
    let mut out = vec![Line::styled(l.title.clone(), t.header)];
    if l.total == 0 {
        // A script's playback: no steps to count, only the cue.
        out.push(Line::styled(l.position.clone(), t.plain));
    } else if label.chars().count() + 4 > width {
        // Too narrow for a bar beside the whole position (`… · variant 12` was cut at
        // 80×24 `--big`): the position alone, its step count saying the progress.
        out.push(Line::styled(l.position.clone(), t.plain));
    } else {
        out.push(Line::from(vec![
            Span::styled("█".repeat(filled), t.step_done),
            Span::styled("░".repeat(bar_w - filled), t.dim),
            Span::styled(label, t.plain),
        ]));
    }
    for v in &l.verdicts {
        out.extend(verdict_lines(app, v, width));
    }
    if !l.goal.is_empty() {
        for (i, row) in wrap_words(&l.goal, width.saturating_sub(6))
            .into_iter()
            .enumerate()
        {
            out.push(Line::from(vec![
                Span::styled(if i == 0 { "Goal: " } else { "      " }, t.header),
                Span::styled(row, t.name),
            ]));
        }
    }
    out.push(Line::raw(""));
    for para in l.text.lines() {
        for row in wrap_words(para, width) {
            out.push(Line::styled(row, t.plain));
        }
    }
    // A multiple-choice quiz's options, as the REPL lists them: `  A) …`, wrapped under
    // their text.
    for (label, option) in &l.options {
        for (i, row) in wrap_words(option, width.saturating_sub(5))
            .into_iter()
            .enumerate()
        {
            let head = if i == 0 {
                format!("  {label}) ")
            } else {
                "     ".to_string()
            };
            out.push(Line::from(vec![
                Span::styled(head, t.name),
                Span::styled(row, t.plain),
            ]));
        }
    }
    match (&l.hint, app.ui.show_hint) {
        (Some(h), true) => {
            out.push(Line::raw(""));
            for (i, row) in wrap_words(h, width.saturating_sub(6))
                .into_iter()
                .enumerate()
            {
                out.push(Line::from(vec![
                    Span::styled(if i == 0 { "Hint: " } else { "      " }, t.warn),
                    Span::styled(row, t.plain),
                ]));
            }
        }
        (Some(_), false) => out.push(dim(t, "(h shows a hint)")),
        (None, _) => {}
    }
    out
}

/// A flow the step asks about with its NetworkPolicy verdict now: `web → db:5432/TCP
/// denied`, and on a network that enforces none, what the policies would say.
fn verdict_lines(app: &App, v: &lab_engine::dash::Verdict, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let word = |allowed: bool| {
        if allowed {
            Span::styled("allowed", t.good)
        } else {
            Span::styled("denied", t.bad)
        }
    };
    // Segments that stay together, wrapped between them (a verdict is never cut).
    let mut segs = vec![
        vec![Span::styled("Policy: ", t.header)],
        vec![Span::styled(format!("{} →", v.src), t.name)],
        vec![Span::styled(
            format!(" {}:{}/{} ", v.dst, v.port, v.protocol),
            t.name,
        )],
        vec![word(v.allowed)],
    ];
    if !v.enforced {
        segs.push(vec![Span::styled(" · not enforced;", t.dim)]);
        segs.push(vec![
            Span::styled(" the policies say ", t.dim),
            word(v.policies_allow),
        ]);
    }
    super::wrap_segments(segs, width, 8)
}

/// Wrap text at spaces to a width (words longer than the width are cut).
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let wlen = word.chars().count();
        let clen = cur.chars().count();
        if clen > 0 && clen + 1 + wlen > width {
            rows.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || rows.is_empty() {
        rows.push(cur);
    }
    rows
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let block = pane_block(app, Pane::Lesson, Vec::new());
    let inner = block.inner(area);
    block.render(area, buf);
    let lines = lines(app, inner.width);
    let scroll = app.ui.scroll[Pane::Lesson.index()];
    draw_lines(buf, inner, &lines, scroll);
    // What the pane cannot show, on its border as the other panes say it (`↓ N more`).
    let h = inner.height as usize;
    let above = scroll.min(lines.len().saturating_sub(h));
    let below = lines.len().saturating_sub(above + h);
    super::more_cue(app, area, above, below, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap() {
        assert_eq!(wrap_words("a bb ccc dd", 6), ["a bb", "ccc dd"]);
        assert_eq!(wrap_words("", 5), [""]);
    }
}
