//! `lesson play` in the REPL: the reference commands are typed visibly at the lesson's pace,
//! run, and their output shown; with `--step`, Enter advances (q then Enter stops).

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
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => false,
            Ok(_) => line.trim() != "q",
        }
    }
}
