//! What a command produced, as data: lines of spans with semantic roles. Front ends paint it
//! (plain text for scripts and tests, ANSI colours in the REPL, styled lines in the
//! dashboard), so colour is decided at the edge.

use serde::Serialize;
use std::borrow::Cow;
use std::sync::Arc;

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
    /// Teaching text beside a step's own prose (a task, a hint, a quiz's question and
    /// options, an answer's explanation): painted as plain text; a front end may re-wrap it
    /// to its own width, and the dashboard keeps it in the Output pane (the Lesson pane does
    /// not show it).
    Note,
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

/// A typed record that is one line of output, made only when the output is shown (a
/// call-log entry: its trace line).
pub trait ShownLine: std::fmt::Debug + Send + Sync {
    /// The line it shows as.
    fn shown_line(&self) -> Line;

    /// The line's text (its spans' texts, not escaped) appended to `out`: what
    /// [`Outcome::to_text`] prints, written without building the line when a record can.
    fn write_text(&self, out: &mut String) {
        for span in self.shown_line().spans {
            out.push_str(&span.text);
        }
    }
}

/// One piece of a command's output: a line made when the command ran, or a record made
/// into its line only when the output is shown.
#[derive(Debug, Clone)]
enum Item {
    Line(Line),
    Later(Arc<dyn ShownLine>),
}

impl Item {
    fn line(&self) -> Cow<'_, Line> {
        match self {
            Item::Line(l) => Cow::Borrowed(l),
            Item::Later(r) => Cow::Owned(r.shown_line()),
        }
    }

    fn into_line(self) -> Line {
        match self {
            Item::Line(l) => l,
            Item::Later(r) => r.shown_line(),
        }
    }
}

/// Everything a command printed: lines, and records it caused (the call-log trace a
/// command prints after its own lines), kept typed and made into lines only when a front
/// end asks ([`Outcome::lines`], [`Outcome::to_text`]). The records are shared, so the
/// log that holds them may drop them before the output is shown.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    items: Vec<Item>,
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.lines().eq(other.lines())
    }
}

impl Eq for Outcome {}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Lines<'a>(&'a Outcome);
        impl Serialize for Lines<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.lines())
            }
        }
        let mut st = s.serialize_struct("Outcome", 1)?;
        st.serialize_field("lines", &Lines(self))?;
        st.end()
    }
}

impl From<Vec<Line>> for Outcome {
    fn from(lines: Vec<Line>) -> Self {
        Outcome {
            items: lines.into_iter().map(Item::Line).collect(),
        }
    }
}

impl FromIterator<Line> for Outcome {
    fn from_iter<I: IntoIterator<Item = Line>>(iter: I) -> Self {
        Outcome {
            items: iter.into_iter().map(Item::Line).collect(),
        }
    }
}

impl Outcome {
    /// Nothing printed.
    pub fn empty() -> Self {
        Outcome::default()
    }

    /// Add a line.
    pub fn line(&mut self, line: Line) {
        self.items.push(Item::Line(line));
    }

    /// Add a plain line.
    pub fn plain(&mut self, text: impl Into<String>) {
        self.line(Line::plain(text));
    }

    /// Add each line of a multi-line text with one role.
    pub fn block(&mut self, text: &str, role: Role) {
        for l in text.lines() {
            self.line(Line::styled(l, role));
        }
    }

    /// Add records, each made into its line only when shown (a command's call-log
    /// entries: `  kubelet(node-1)  ADD  …`).
    pub fn later(&mut self, records: impl IntoIterator<Item = Arc<dyn ShownLine>>) {
        self.items.extend(records.into_iter().map(Item::Later));
    }

    /// Append another outcome.
    pub fn extend(&mut self, other: Outcome) {
        self.items.extend(other.items);
    }

    /// How many lines it shows.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it shows nothing.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The lines, in order; call-log records are made into lines here.
    pub fn lines(&self) -> impl ExactSizeIterator<Item = Cow<'_, Line>> + DoubleEndedIterator {
        self.items.iter().map(Item::line)
    }

    /// The lines, in order, taken out.
    pub fn into_lines(self) -> Vec<Line> {
        self.items.into_iter().map(Item::into_line).collect()
    }

    /// Keep only the first `n` lines.
    pub fn truncate(&mut self, n: usize) {
        self.items.truncate(n);
    }

    /// Plain text, one line per line, each ending in a newline; control characters are
    /// escaped (see [`super::escape`]).
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.items.len() * 96);
        for item in &self.items {
            match item {
                // Escaping goes character by character, so span by span is the same.
                Item::Line(l) => {
                    for span in &l.spans {
                        s.push_str(&super::escape_controls(&span.text));
                    }
                }
                Item::Later(r) => {
                    let start = s.len();
                    r.write_text(&mut s);
                    if let Cow::Owned(escaped) = super::escape_controls(&s[start..]) {
                        s.truncate(start);
                        s.push_str(&escaped);
                    }
                }
            }
            s.push('\n');
        }
        s
    }
}
