//! What a command produced, as data: lines of spans with semantic roles. Front ends paint it
//! (plain text for scripts and tests, ANSI colours in the REPL, styled lines in the
//! dashboard), so colour is decided at the edge.

use serde::Serialize;

/// The meaning of a piece of output, which a painter maps to a style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Role {
    /// Ordinary text.
    Plain,
    /// A table header or a section title.
    Header,
    /// Something that succeeded (`created`, `allowed`).
    Good,
    /// Something that failed (`error:`, `denied`).
    Bad,
    /// A warning or a pending state.
    Warn,
    /// Secondary detail.
    Dim,
    /// Who acted (`kubelet(node-1)`, `host-local`).
    Actor,
    /// An object's name.
    Name,
    /// JSON on the wire.
    Json,
    /// Teaching prose, hard-wrapped in its source (a lesson's text): painted as plain text;
    /// a front end that wraps to its own width joins the lines of a paragraph first.
    Prose,
}

/// A run of text with one role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    /// The text.
    pub text: String,
    /// Its role.
    pub role: Role,
}

/// One line of output.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Line {
    /// The spans, left to right.
    pub spans: Vec<Span>,
}

impl Line {
    /// A line with one plain span.
    pub fn plain(text: impl Into<String>) -> Self {
        Line::new().push(text, Role::Plain)
    }

    /// An empty line to build on.
    pub fn new() -> Self {
        Line { spans: Vec::new() }
    }

    /// A line with one span of a role.
    pub fn styled(text: impl Into<String>, role: Role) -> Self {
        Line::new().push(text, role)
    }

    /// Append a span.
    pub fn push(mut self, text: impl Into<String>, role: Role) -> Self {
        self.spans.push(Span {
            text: text.into(),
            role,
        });
        self
    }

    /// The text without roles.
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }
}

/// Everything a command printed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Outcome {
    /// The lines, in order.
    pub lines: Vec<Line>,
}

impl Outcome {
    /// Nothing printed.
    pub fn empty() -> Self {
        Outcome::default()
    }

    /// Add a line.
    pub fn line(&mut self, line: Line) {
        self.lines.push(line);
    }

    /// Add a plain line.
    pub fn plain(&mut self, text: impl Into<String>) {
        self.lines.push(Line::plain(text));
    }

    /// Add each line of a multi-line text with one role.
    pub fn block(&mut self, text: &str, role: Role) {
        for l in text.lines() {
            self.lines.push(Line::styled(l, role));
        }
    }

    /// Append another outcome.
    pub fn extend(&mut self, other: Outcome) {
        self.lines.extend(other.lines);
    }

    /// Plain text, one line per line, each ending in a newline; control characters are
    /// escaped (see [`super::escape`]).
    pub fn to_text(&self) -> String {
        let len: usize = self
            .lines
            .iter()
            .map(|l| 1 + l.spans.iter().map(|s| s.text.len()).sum::<usize>())
            .sum();
        let mut s = String::with_capacity(len);
        for l in &self.lines {
            // Escaping goes character by character, so span by span is the same.
            for span in &l.spans {
                s.push_str(&super::escape_controls(&span.text));
            }
            s.push('\n');
        }
        s
    }
}
