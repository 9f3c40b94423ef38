//! `lesson play` in the REPL: the reference commands are typed visibly at the lesson's pace,
//! run, and their output shown; with `--step`, Enter advances (q then Enter stops). The
//! plain REPL (`--plain`, a pipe) plays at once, and when it records, marks each step.

use crate::ansi;
use lab_engine::lesson::play::PlaySink;
use lab_engine::render::Outcome;
use std::io::{BufRead, Write};
use std::time::Duration;

/// A sink that writes to the terminal and sleeps between events.
pub struct TerminalSink {
    /// Paint with colours.
    pub color: bool,
}

impl PlaySink for TerminalSink {
    fn show(&mut self, out: &Outcome) {
        let text = if self.color {
            ansi::paint(out)
        } else {
            out.to_text()
        };
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes());
        let _ = o.flush();
    }

    fn type_command(&mut self, command: &str, millis_per_char: u64) {
        let mut o = std::io::stdout().lock();
        let _ = write!(o, "lab> ");
        for c in lab_engine::render::escape_controls(command).chars() {
            let _ = write!(o, "{c}");
            let _ = o.flush();
            std::thread::sleep(Duration::from_millis(millis_per_char));
        }
        let _ = writeln!(o);
        let _ = o.flush();
    }

    fn pause(&mut self, millis: u64) -> bool {
        std::thread::sleep(Duration::from_millis(millis));
        true
    }

    fn wait_for_key(&mut self) -> bool {
        {
            let mut o = std::io::stdout().lock();
            let _ = write!(o, "  [Enter: next · q Enter: stop] ");
            let _ = o.flush();
        }
        let mut line = String::new();
        let go_on = match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => false,
            // `q`, or Esc (a line-reading terminal passes it on as ESC), stops.
            Ok(_) => !matches!(line.trim(), "q" | "\u{1b}"),
        };
        if !go_on {
            let mut o = std::io::stdout().lock();
            let _ = writeln!(o, "── playback stopped");
            let _ = o.flush();
        }
        go_on
    }
}

/// `lesson play` in the plain REPL while it records (`repl --plain --record`): everything
/// printed at once to the session's output (which the recording already takes in), and an
/// asciicast marker where each step begins.
pub struct PlainSink<'a> {
    /// The session's output (teed into the recording).
    pub out: &'a mut dyn Write,
    /// The recording, for the markers.
    pub cast: &'a crate::cast::Shared,
    /// Paint with colours.
    pub color: bool,
}

impl PlaySink for PlainSink<'_> {
    fn show(&mut self, out: &Outcome) {
        let text = if self.color {
            ansi::paint(out)
        } else {
            out.to_text()
        };
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    fn type_command(&mut self, command: &str, _: u64) {
        let _ = writeln!(
            self.out,
            "lab> {}",
            lab_engine::render::escape_controls(command)
        );
    }

    fn pause(&mut self, _: u64) -> bool {
        true
    }

    fn wait_for_key(&mut self) -> bool {
        true
    }

    fn marker(&mut self, label: &str) {
        let _ = self.out.flush();
        let mut c = self
            .cast
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = c.marker(label).and_then(|()| c.flush());
    }
}
