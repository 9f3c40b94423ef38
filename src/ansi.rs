//! The ANSI painter for terminals: maps each [`Role`] to a style that stays readable for
//! colour-blind viewers. Success and failure never differ by red/green alone: success is
//! blue, failure is bold orange, and both keep their words (`created`, `denied`, `error:`).
//! JSON on the wire is lightly highlighted (keys, strings, literals). Scripts, pipes and
//! tests use the plain painter (`Outcome::to_text`); this one is only for terminals.

use lab_engine::render::{Line, Outcome, Role, escape_controls};
use owo_colors::{OwoColorize, Style, XtermColors};

/// Whether to colour: the `--color` flag's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour when the stream is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Decide for one stream. `NO_COLOR` (any non-empty value, see no-color.org) turns
    /// `auto` off; `always` wins over it.
    pub fn enabled(self, is_terminal: bool, no_color_env: Option<&str>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => is_terminal && no_color_env.is_none_or(|v| v.is_empty()),
        }
    }
}

/// Orange (xterm 208): the failure colour, distinct from blue for every common kind of
/// colour blindness.
const ORANGE: u8 = 208;

/// The style of a role.
pub fn style(role: Role) -> Style {
    match role {
        Role::Plain | Role::Json | Role::Prose | Role::Note => Style::new(),
        Role::Header => Style::new().bold().underline(),
        Role::Good => Style::new().blue().bold(),
        Role::Bad => Style::new().color(XtermColors::from(ORANGE)).bold(),
        Role::Warn => Style::new().yellow().italic(),
        Role::Dim => Style::new().dimmed(),
        Role::Actor => Style::new().magenta(),
        Role::Name => Style::new().bold(),
    }
}

/// A line in colour (no trailing newline); control characters in its text are escaped
/// (see [`super::escape`]), only the painter's own styles are escape sequences.
pub fn paint_line(line: &Line) -> String {
    let mut s = String::new();
    for span in &line.spans {
        let text = escape_controls(&span.text);
        if span.role == Role::Json {
            s.push_str(&json(&text));
        } else if text.is_empty() || span.role == Role::Plain {
            s.push_str(&text);
        } else {
            s.push_str(&text.style(style(span.role)).to_string());
        }
    }
    s
}

/// An outcome in colour, one line per line, each ending in a newline.
pub fn paint(out: &Outcome) -> String {
    let mut s = String::new();
    for l in out.lines() {
        s.push_str(&paint_line(&l));
        s.push('\n');
    }
    s
}

/// An error message as the front ends print it: its `prefix` (`LabError::prefix`: `error:`
/// or nothing) in the failure style, then the message (continuation lines, such as the
/// usage, dimmed).
pub fn paint_error(prefix: &str, message: &str) -> String {
    let message = escape_controls(message);
    let mut s = match prefix {
        "" => String::new(),
        prefix => format!("{} ", prefix.trim_end().style(style(Role::Bad))),
    };
    for (i, l) in message.lines().enumerate() {
        if i == 0 {
            s.push_str(l);
        } else {
            s.push('\n');
            s.push_str(&l.style(style(Role::Dim)).to_string());
        }
    }
    s.push('\n');
    s
}

/// Light JSON highlighting of one line of (pretty or compact) JSON: keys blue, strings
/// plain, numbers and literals magenta, punctuation as is. Works on any text: a line that
/// is not JSON comes out with the same characters.
pub fn json(text: &str) -> String {
    let key = Style::new().blue();
    let lit = Style::new().magenta();
    let mut out = String::with_capacity(text.len() + 16);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c == '"' {
            let start = i;
            i += 1;
            while let Some(&d) = chars.get(i) {
                i += 1;
                if d == '\\' {
                    i += 1;
                } else if d == '"' {
                    break;
                }
            }
            let end = i.min(chars.len());
            let s: String = chars.get(start..end).unwrap_or(&[]).iter().collect();
            let rest = chars.get(end..).unwrap_or(&[]);
            let is_key = rest.iter().find(|c| !c.is_whitespace()) == Some(&':');
            if is_key {
                out.push_str(&s.style(key).to_string());
            } else {
                out.push_str(&s);
            }
        } else if c == '-' || c.is_ascii_digit() || c.is_ascii_alphabetic() {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|d| d.is_ascii_alphanumeric() || matches!(d, '.' | '-' | '+'))
            {
                i += 1;
            }
            let s: String = chars.get(start..i).unwrap_or(&[]).iter().collect();
            if matches!(s.as_str(), "true" | "false" | "null") || s.parse::<f64>().is_ok() {
                out.push_str(&s.style(lit).to_string());
            } else {
                out.push_str(&s);
            }
            if i == start {
                i += 1;
                out.push(c);
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Remove ANSI escape sequences (for tests and width computations).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painting_keeps_the_text() {
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push("pod/web", Role::Name)
                .push(" created", Role::Good)
                .push(" (denied)", Role::Bad),
        );
        out.line(Line::styled(
            "  \"ips\": [{\"address\": \"10.244.1.2/24\", \"n\": 2, \"ok\": true}]",
            Role::Json,
        ));
        let painted = paint(&out);
        assert_ne!(painted, out.to_text());
        assert_eq!(strip(&painted), out.to_text());
    }

    #[test]
    fn failure_and_success_differ_by_more_than_hue() {
        let good = format!("{}", "x".style(style(Role::Good)));
        let bad = format!("{}", "x".style(style(Role::Bad)));
        // Blue (34) against orange (38;5;208): not the red/green pair; bad is also bold.
        assert!(good.contains("34"), "{good:?}");
        assert!(bad.contains("208") && bad.contains(";1m"), "{bad:?}");
        assert!(!good.contains("\x1b[32") && !bad.contains("\x1b[31"));
    }

    #[test]
    fn json_keys_are_highlighted_not_values() {
        let s = json("\"name\": \"cni0\",");
        assert!(s.starts_with("\x1b["), "{s:?}");
        assert!(s.ends_with("\"cni0\","), "{s:?}");
        assert_eq!(
            strip(&json("{\"a\":[1,-2.5e3,null]} x\\\"y")),
            "{\"a\":[1,-2.5e3,null]} x\\\"y"
        );
        assert_eq!(strip(&json("\"unterminated")), "\"unterminated");
    }

    #[test]
    fn color_choice_follows_flag_terminal_and_no_color() {
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(!ColorChoice::Auto.enabled(true, Some("1")));
        assert!(ColorChoice::Auto.enabled(true, Some("")));
        assert!(ColorChoice::Always.enabled(false, Some("1")));
        assert!(!ColorChoice::Never.enabled(true, None));
    }

    #[test]
    fn error_lines_are_painted_and_keep_their_words() {
        let e = paint_error("error: ", "unknown command \"nod\"\nusage: node list");
        assert_eq!(
            strip(&e),
            "error: unknown command \"nod\"\nusage: node list\n"
        );
    }
}
