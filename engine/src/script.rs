//! Script playback: run the command language line by line with plain, deterministic output.
//! The first failing command stops the script (exit 1) unless `--keep-going`; a line
//! starting with `!` is expected to fail and fails the script if it succeeds. A trailing
//! `\` continues a line; `<<EOF` after a command gives it the lines up to `EOF` as its
//! standard input (`apply -f - <<EOF`). Tests and transcripts use this same path.

use crate::lesson::Desk;
use crate::render::escape_controls as safe;
use std::io::Write;

/// Options for a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Keep going after a failure (the exit status still reports it).
    pub keep_going: bool,
    /// Print each command before its output, prefixed `lab> `.
    pub echo: bool,
}

/// How one line went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineReport {
    /// 1-based line number where the command started.
    pub line_no: usize,
    /// The command text (without `!`).
    pub command: String,
    /// stdout text.
    pub stdout: String,
    /// stderr text (the error message, if any).
    pub stderr: String,
    /// Whether the line met its expectation (success, or failure for `!`).
    pub ok: bool,
}

/// Join `\`-continued lines; yields (first line number, logical line).
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut start = 0;
    // How the here-document being read ends, if one is open (its word and `<<-`).
    let mut heredoc: Option<(String, bool)> = None;
    for (i, raw) in text.lines().enumerate() {
        if let Some((word, strip_tabs)) = &heredoc {
            buf.push('\n');
            buf.push_str(raw);
            let end = crate::command::Heredoc {
                word,
                strip_tabs: *strip_tabs,
            };
            if end.ends_at(raw) {
                heredoc = None;
                out.push((start, std::mem::take(&mut buf)));
            }
            continue;
        }
        if buf.is_empty() {
            start = i + 1;
        }
        if let Some(stripped) = raw.strip_suffix('\\') {
            buf.push_str(stripped);
            buf.push(' ');
            continue;
        }
        buf.push_str(raw);
        let commented = buf.trim_start().starts_with('#');
        if let Some(h) = crate::command::heredoc_start(&buf).filter(|_| !commented) {
            heredoc = Some((h.word.to_string(), h.strip_tabs));
            continue;
        }
        out.push((start, std::mem::take(&mut buf)));
    }
    if !buf.is_empty() {
        out.push((start, buf));
    }
    out
}

/// Run one logical line (with an optional leading `!`) and report it, as the REPL runs it (a
/// `trace … --step` shows its first hop; [`run`] steps on or prints the rest).
pub fn run_line(desk: &mut Desk, line_no: usize, line: &str) -> Option<LineReport> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let (expect_fail, command) = match trimmed.strip_prefix('!') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, trimmed),
    };
    let ran = desk.run(command);
    // A failure that completed a lesson step is shown with the step's feedback, and is
    // still a failure (a `!` line expects it).
    let failed = ran.failed();
    let (stdout, stderr) = match ran.result {
        Ok(out) => (out.to_text(), String::new()),
        Err(e) => (
            e.output.to_text(),
            format!("{}{}\n", e.prefix(), safe(&e.message)),
        ),
    };
    let ok = failed == expect_fail;
    let stderr = if expect_fail && !failed {
        format!(
            "error: line {line_no}: expected `{}` to fail (it starts with !), but it succeeded\n",
            safe(command)
        )
    } else {
        stderr
    };
    Some(LineReport {
        line_no,
        command: command.to_string(),
        stdout,
        stderr,
        ok,
    })
}

/// The command of a logical line: `None` for a comment or a blank line, a `!` (expected
/// to fail) taken off.
fn command_of(line: &str) -> Option<&str> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    Some(trimmed.strip_prefix('!').map_or(trimmed, str::trim_start))
}

/// The commands of a script, each with the line it starts on: comments and blank lines
/// left out, a `!` (expected to fail) taken off.
pub fn commands(text: &str) -> Vec<(usize, String)> {
    logical_lines(text)
        .into_iter()
        .filter_map(|(line_no, line)| Some((line_no, command_of(&line)?.to_string())))
        .collect()
}

/// Run a whole script, writing stdout and stderr as it goes. Returns true when every line
/// met its expectation.
pub fn run(
    desk: &mut Desk,
    text: &str,
    opts: RunOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<bool> {
    let mut all_ok = true;
    let lines = logical_lines(text);
    for (i, (line_no, line)) in lines.iter().enumerate() {
        let Some(mut report) = run_line(desk, *line_no, line) else {
            continue;
        };
        // A script does not wait: a `trace … --step` steps on while the next command is a
        // `step`, as typed in the REPL; before any other command, or at the end, the rest
        // of the trace is printed at once.
        let next = lines[i + 1..].iter().find_map(|(_, l)| command_of(l));
        if let Some(rest) = desk.settle_stepping(next) {
            report.stdout.push_str(&rest.to_text());
        }
        if opts.echo {
            writeln!(
                out,
                "lab> {}",
                safe(&crate::util::clip::long_words(line.trim()))
            )?;
        }
        out.write_all(report.stdout.as_bytes())?;
        out.flush()?;
        err.write_all(report.stderr.as_bytes())?;
        if !report.ok {
            all_ok = false;
            if !report.stderr.contains("line ") {
                writeln!(
                    err,
                    "  (line {}: {})",
                    report.line_no,
                    safe(&crate::util::clip::long_words(&report.command))
                )?;
            }
            if !opts.keep_going {
                break;
            }
        }
    }
    Ok(all_ok)
}

/// How `play` paces a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Wait for Enter before each command.
    Step,
    /// Pause this many milliseconds after each command.
    Every(u64),
}

/// The pause between commands when `play` is given none: 2 s.
pub const DEFAULT_PACE_MS: u64 = 2000;

/// How fast `play` types a command: a character every 25 ms.
const PLAY_CHAR_MS: u64 = 25;

/// A script as a class sees it played (`play FILE`): each run of `# comment` lines is a
/// caption shown before the command it precedes (the `#` and one space taken off), each
/// command typed and run, then the pace: a pause after it, or (`--step`) a wait for Enter
/// before it, once its caption is on screen, so a teacher talks over the caption and
/// then runs the command. A line starting with `!` is meant to fail. Blank lines end a
/// caption.
pub fn plan(text: &str, pace: Pace) -> Vec<crate::lesson::play::PlayEvent> {
    use crate::lesson::play::PlayEvent;
    let mut events = Vec::new();
    let mut caption: Vec<String> = Vec::new();
    for (_, line) in logical_lines(text) {
        let trimmed = line.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            caption.push(comment.strip_prefix(' ').unwrap_or(comment).to_string());
            continue;
        }
        if trimmed.is_empty() || !caption.is_empty() {
            // A blank line ends a caption: it is shown on its own (a file's title, a
            // narration with no command), not joined to the next one.
            if !caption.is_empty() {
                events.push(PlayEvent::Text(std::mem::take(&mut caption).join("\n")));
            }
            if trimmed.is_empty() {
                continue;
            }
        }
        if pace == Pace::Step {
            events.push(PlayEvent::WaitForKey);
        }
        let (expect_failure, command) = match trimmed.strip_prefix('!') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, trimmed),
        };
        events.push(PlayEvent::Type {
            command: command.to_string(),
            expect_failure,
            millis_per_char: PLAY_CHAR_MS,
        });
        if let Pace::Every(ms) = pace {
            events.push(PlayEvent::Pause { millis: ms });
        }
    }
    if !caption.is_empty() {
        events.push(PlayEvent::Text(caption.join("\n")));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::play::PlayEvent;

    const SCRIPT: &str = "# Two pods on one node.\n# They get .2 and .3.\npod create a --node node-1\n\npod create b --node node-1\n# A name taken:\n! pod create a --node node-1\n# the end\n";

    fn kinds(events: &[PlayEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                PlayEvent::Text(t) => format!("text {t:?}"),
                PlayEvent::Task(t) => format!("task {t:?}"),
                PlayEvent::Type {
                    command,
                    expect_failure,
                    ..
                } => format!(
                    "type {command}{}",
                    if *expect_failure { " (fails)" } else { "" }
                ),
                PlayEvent::Pause { millis } => format!("pause {millis}"),
                PlayEvent::WaitForKey => "wait".into(),
                PlayEvent::Title(h) => format!("title {h}"),
                PlayEvent::Heading(h) => format!("heading {h}"),
            })
            .collect()
    }

    #[test]
    fn comments_become_captions_before_their_command_and_the_pace_follows_each() {
        assert_eq!(
            kinds(&plan(SCRIPT, Pace::Every(1500))),
            [
                "text \"Two pods on one node.\\nThey get .2 and .3.\"",
                "type pod create a --node node-1",
                "pause 1500",
                "type pod create b --node node-1",
                "pause 1500",
                "text \"A name taken:\"",
                "type pod create a --node node-1 (fails)",
                "pause 1500",
                "text \"the end\"",
            ]
        );
        assert_eq!(
            kinds(&plan(SCRIPT, Pace::Step)),
            [
                "text \"Two pods on one node.\\nThey get .2 and .3.\"",
                "wait",
                "type pod create a --node node-1",
                "wait",
                "type pod create b --node node-1",
                "text \"A name taken:\"",
                "wait",
                "type pod create a --node node-1 (fails)",
                "text \"the end\"",
            ]
        );
    }

    #[test]
    fn a_blank_line_ends_a_caption() {
        assert_eq!(
            kinds(&plan(
                "# demo.lab\n\n# Two pods.\npod create a --node node-1\n",
                Pace::Step
            )),
            [
                "text \"demo.lab\"",
                "text \"Two pods.\"",
                "wait",
                "type pod create a --node node-1",
            ]
        );
    }

    #[test]
    fn play_in_a_script_runs_the_file_with_its_captions() {
        let dir = std::env::temp_dir().join(format!("lab-play-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("class.lab");
        std::fs::write(&f, SCRIPT).unwrap();
        let mut desk = crate::lesson::Desk::with_lab(crate::engine::Lab::with_edges(
            crate::engine::Lab::new,
            crate::edge::tests::disk(),
        ));
        let out = desk
            .execute(&format!("play {} --pace 1s", f.display()))
            .unwrap()
            .to_text();
        assert!(out.starts_with("Two pods on one node.\nThey get .2 and .3.\nlab> pod create a --node node-1\npod/a created\n"), "{out}");
        assert!(
            out.contains("A name taken:\nlab> pod create a --node node-1\n"),
            "{out}"
        );
        assert!(
            out.contains("\nError from server (AlreadyExists)")
                && !out.contains("error: Error from server"),
            "{out}"
        );
        assert!(out.ends_with("the end\n"), "{out}");
        assert_eq!(desk.lab.cluster.pods.len(), 2);
        // Lesson code may not read a file.
        let e = desk.execute_lesson_code("play /etc/passwd").unwrap_err();
        assert!(
            e.message.contains("lessons may not read or write files"),
            "{}",
            e.message
        );
        let e = desk.execute("play /nonexistent/x.lab").unwrap_err();
        assert!(
            e.message.starts_with("cannot play /nonexistent/x.lab: "),
            "{}",
            e.message
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
