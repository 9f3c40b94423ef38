//! The rustyline helper: a thin adapter over `command::complete` (completion and usage
//! hints from the clap tree and live names from the lab), a verb highlighter, and a
//! validator that lets a trailing `\` continue the line. It holds the lab behind
//! `Arc<Mutex<…>>`: the loop locks it only between two `readline` calls, and `csi serve`'s
//! thread while it runs a call that arrived (completion then offers the grammar alone).

use crate::ansi;
use lab_engine::command::complete::{self, Names, Wanted};
use lab_engine::command::help;
use lab_engine::lesson::Desk;
use lab_engine::render::Role;
use owo_colors::OwoColorize;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The REPL's helper.
pub struct LabHelper {
    /// The desk (its lab), for live names.
    pub desk: Arc<Mutex<Desk>>,
    /// Whether to emit colours.
    pub color: bool,
    /// Set by [`LongLine`] once the line being typed reached `MAX_LINE`.
    pub overflow: Arc<AtomicBool>,
    files: FilenameCompleter,
    history: HistoryHinter,
}

impl LabHelper {
    /// A helper over a shared desk.
    pub fn new(desk: Arc<Mutex<Desk>>, color: bool) -> Self {
        LabHelper {
            desk,
            color,
            overflow: Arc::new(AtomicBool::new(false)),
            files: FilenameCompleter::new(),
            history: HistoryHinter::new(),
        }
    }
}

/// Lines longer than this get no usage hint, history hint or colour: working them out on
/// every key of a long paste made typing quadratic (the line editor's own fast path, a key
/// written as it is, needs no hint and no highlighted character).
pub const DECORATED_LINE: usize = 256;

/// What the line shows once it reached `MAX_LINE`.
pub const OVERFLOW_HINT: &str =
    "  ← over the longest command: refused, the rest is dropped (Enter or Ctrl-C)";

/// Bound to every key (`Event::Any`): a character that would make the line longer than
/// `MAX_LINE` is dropped, and so is every one after it until Enter or Ctrl-C, each at the
/// cost of a look at the line's length, so a runaway paste (100,000 characters, typed
/// into the terminal one by one) is read through at once and a Ctrl-C behind it is
/// honoured. The first one dropped redraws the line once, with [`OVERFLOW_HINT`]; the
/// loop refuses the line when it is entered.
pub struct LongLine(pub Arc<AtomicBool>);

impl rustyline::ConditionalEventHandler for LongLine {
    fn handle(
        &self,
        evt: &rustyline::Event,
        _n: rustyline::RepeatCount,
        _positive: bool,
        ctx: &rustyline::EventContext<'_>,
    ) -> Option<rustyline::Cmd> {
        use rustyline::{Cmd, KeyCode, Modifiers};
        let key = evt.get(0)?;
        let c = match key {
            rustyline::KeyEvent(KeyCode::Char(c), m)
                if *m == Modifiers::NONE || *m == Modifiers::SHIFT =>
            {
                *c
            }
            _ => return None,
        };
        if self.0.load(Ordering::Relaxed) {
            return Some(Cmd::Noop);
        }
        if ctx.line().len() + c.len_utf8() > lab_engine::command::MAX_LINE {
            self.0.store(true, Ordering::Relaxed);
            return Some(Cmd::Repaint);
        }
        None
    }
}

/// Names from the shared lab; none while the lab is borrowed elsewhere.
struct Shared<'a>(&'a Mutex<Desk>);

impl Names for Shared<'_> {
    fn names(&self, wanted: Wanted<'_>) -> Vec<String> {
        self.0
            .try_lock()
            .map(|mut desk| match wanted {
                Wanted::Lessons => desk.lessons.parsed().ids(),
                other => desk.lab.completion_names(other),
            })
            .unwrap_or_default()
    }
}

/// Candidates for `line` at `pos` as rustyline pairs (each replacement ends in a space so
/// a unique completion moves on to the next word).
pub fn candidates(line: &str, pos: usize, names: &dyn Names) -> (usize, Vec<Pair>, bool) {
    let c = complete::complete(line, pos, names);
    let pairs = c
        .candidates
        .into_iter()
        .map(|w| Pair {
            display: w.clone(),
            replacement: format!("{w} "),
        })
        .collect();
    (c.start, pairs, c.wants_path)
}

impl Completer for LabHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, pairs, wants_path) = candidates(line, pos, &Shared(&self.desk));
        if wants_path {
            return self.files.complete(line, pos, ctx);
        }
        Ok((start, pairs))
    }
}

/// A hint: usage text after the cursor, of which a prefix may be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabHint {
    display: String,
    complete_up_to: usize,
}

impl rustyline::hint::Hint for LabHint {
    fn display(&self) -> &str {
        &self.display
    }

    fn completion(&self) -> Option<&str> {
        self.display
            .get(..self.complete_up_to)
            .filter(|s| !s.is_empty())
    }
}

impl Hinter for LabHelper {
    type Hint = LabHint;

    fn hint(&self, line: &str, pos: usize, ctx: &Context<'_>) -> Option<LabHint> {
        if self.overflow.load(Ordering::Relaxed) {
            return Some(LabHint {
                display: OVERFLOW_HINT.to_string(),
                complete_up_to: 0,
            });
        }
        if line.len() > DECORATED_LINE {
            return None;
        }
        if let Some(h) = complete::hint(line, pos) {
            return Some(LabHint {
                display: h.display,
                complete_up_to: h.complete_up_to,
            });
        }
        self.history.hint(line, pos, ctx).map(|h| LabHint {
            complete_up_to: h.len(),
            display: h,
        })
    }
}

/// Whether `word` starts a command the REPL knows (a verb, an alias, or quit/exit).
pub fn is_verb(word: &str) -> bool {
    help::find_sub(help::tree(), word).is_some()
        || matches!(word, "quit" | "exit" | "q")
        || help::REPL_ONLY.iter().any(|(n, _)| *n == word)
}

/// The line with its first word coloured: bold blue for a known verb, orange once an
/// unknown first word is finished. Same characters, same width.
pub fn highlight_verb(line: &str) -> Cow<'_, str> {
    let trimmed = line.trim_start();
    let lead = line.len() - trimmed.len();
    let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
    let Some(word) = trimmed.get(..end) else {
        return Cow::Borrowed(line);
    };
    if word.is_empty() {
        return Cow::Borrowed(line);
    }
    let finished = end < trimmed.len();
    let styled = if is_verb(word) {
        word.style(ansi::style(Role::Good)).to_string()
    } else if finished {
        word.style(ansi::style(Role::Bad)).to_string()
    } else {
        return Cow::Borrowed(line);
    };
    let head = line.get(..lead).unwrap_or("");
    let tail = trimmed.get(end..).unwrap_or("");
    Cow::Owned(format!("{head}{styled}{tail}"))
}

impl Highlighter for LabHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if self.color && line.len() <= DECORATED_LINE {
            highlight_verb(line)
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.color {
            Cow::Owned(hint.style(ansi::style(Role::Dim)).to_string())
        } else {
            Cow::Borrowed(hint)
        }
    }

    fn highlight_char(&self, line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.color && line.len() <= DECORATED_LINE
    }
}

impl Validator for LabHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for LabHelper {}

/// Join `\`-continued physical lines into one logical line.
pub fn join_continued(input: &str) -> String {
    input
        .lines()
        .map(|l| l.strip_suffix('\\').unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ansi::strip;
    use rustyline::hint::Hint;

    fn helper() -> LabHelper {
        LabHelper::new(Arc::new(Mutex::new(Desk::new())), true)
    }

    #[test]
    fn completion_uses_the_grammar_and_the_lab() {
        let h = helper();
        let names = Shared(&h.desk);
        let (start, pairs, _) = candidates("pod cr", 6, &names);
        assert_eq!(start, 4);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, "create ");
        let (_, pairs, _) = candidates("pod create web --node ", 22, &names);
        let shown: Vec<_> = pairs.iter().map(|p| p.display.as_str()).collect();
        assert_eq!(shown, vec!["node-1", "node-2"]);
        // Lesson ids after `lesson start|play`, from the lesson desk.
        for line in [
            "lesson start ch7",
            "lesson play ch7",
            "kubectl lesson start ch7",
        ] {
            let (_, pairs, _) = candidates(line, line.len(), &names);
            let shown: Vec<_> = pairs.iter().map(|p| p.display.as_str()).collect();
            assert_eq!(shown, vec!["ch7-hands-on"], "{line}");
        }
        // While the loop holds the lab, completion degrades to the grammar alone.
        let _guard = h.desk.lock().unwrap();
        let (_, pairs, _) = candidates("pod create web --node ", 22, &names);
        assert!(pairs.is_empty());
    }

    #[test]
    fn hints_accept_only_the_word() {
        let h = helper();
        let hist = rustyline::history::DefaultHistory::new();
        let ctx = Context::new(&hist);
        let hint = h.hint("pod cr", 6, &ctx).unwrap();
        assert_eq!(hint.display(), "eate NAME [options]");
        assert_eq!(hint.completion(), Some("eate "));
        let hint = h.hint("pod create ", 11, &ctx).unwrap();
        assert_eq!(hint.completion(), None);
    }

    #[test]
    fn the_verb_is_highlighted_without_changing_the_text() {
        let s = highlight_verb("  pod create web");
        assert!(s.contains("\x1b["));
        assert_eq!(strip(&s), "  pod create web");
        assert_eq!(highlight_verb("nod"), "nod");
        assert!(highlight_verb("nod x").contains("208"));
        assert_eq!(highlight_verb(""), "");
    }

    #[test]
    fn continued_lines_join() {
        assert_eq!(
            join_continued("pod create web \\\n--node node-1"),
            "pod create web  --node node-1"
        );
    }
}
