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

/// Run one logical line (with an optional leading `!`) and report it.
pub fn run_line(desk: &mut Desk, line_no: usize, line: &str) -> Option<LineReport> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let (expect_fail, command) = match trimmed.strip_prefix('!') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, trimmed),
    };
    let (stdout, stderr, failed) = match desk.execute(command) {
        Ok(out) => (out.to_text(), String::new(), false),
        Err(e) => (
            e.output.to_text(),
            format!("error: {}\n", safe(&e.message)),
            true,
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
    for (line_no, line) in logical_lines(text) {
        let Some(report) = run_line(desk, line_no, &line) else {
            continue;
        };
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
