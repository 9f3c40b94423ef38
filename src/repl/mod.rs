//! The interactive front end: a rustyline line editor over the lab (completion, usage
//! hints, a highlighted verb, history in the user's data directory), and a plain mode that
//! reads stdin line by line for pipes and tests. Both go through `Desk::execute`, like every
//! other front end; `quit`/`exit` are the only words handled here.

pub mod helper;
pub mod history;
pub mod playback;

use crate::engine::{Lab, Mode};
use crate::lesson::Desk;
use crate::render::{Outcome, ansi};
use crate::util::text::plural;
use helper::LabHelper;
use owo_colors::OwoColorize;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Config, Editor};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::rc::Rc;

/// How the REPL paints and where it keeps history.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Colour on stdout.
    pub color_out: bool,
    /// Colour on stderr.
    pub color_err: bool,
    /// The history file (none: no history).
    pub history: Option<std::path::PathBuf>,
    /// Record the session into this asciicast v2 file (`--record`, [`crate::cast`]).
    pub record: Option<std::path::PathBuf>,
}

/// Words that end the session.
pub fn is_quit(line: &str) -> bool {
    matches!(line.trim(), "quit" | "exit" | "q")
}

/// The prompt's context: `2 nodes · 3 pods`, plus `step` and the clock when they matter.
pub fn context(lab: &Lab) -> String {
    let mut parts = vec![
        plural(lab.cluster.nodes.len(), "node", "nodes"),
        plural(lab.cluster.pods.len(), "pod", "pods"),
    ];
    if lab.mode == Mode::Step {
        parts.push("step".to_string());
    }
    if lab.clock > crate::util::time::Millis::ZERO {
        parts.push(format!("t={}", lab.clock.secs_text()));
    }
    parts.join(" · ")
}

/// The prompt, plain and styled (same width): `lab[2 nodes · 0 pods]> `.
pub fn prompt(lab: &Lab, color: bool) -> (String, String) {
    let ctx = context(lab);
    let raw = format!("lab[{ctx}]> ");
    let styled = if color {
        format!("{}[{}]> ", "lab".bold(), ctx.dimmed())
    } else {
        raw.clone()
    };
    (raw, styled)
}

/// The welcome line.
pub fn banner(lab: &Lab) -> String {
    let nodes = lab.completion_names("nodes");
    let cluster = if nodes.is_empty() {
        "an empty cluster (add one: node add node-1)".to_string()
    } else {
        format!(
            "{} ({})",
            plural(nodes.len(), "node", "nodes"),
            nodes.join(", ")
        )
    };
    format!(
        "cni-csi-lab {}: {cluster}.\nType `help` for commands, `explain` for concepts; Tab completes; Ctrl-D quits.",
        env!("CARGO_PKG_VERSION")
    )
}

/// Print one command's result: the output on `out`, then `error: …` on `err`.
pub fn print_result(
    result: Result<Outcome, crate::LabError>,
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<bool> {
    let paint = |o: &Outcome, color: bool| {
        if color { ansi::paint(o) } else { o.to_text() }
    };
    match result {
        Ok(o) => {
            out.write_all(paint(&o, opts.color_out).as_bytes())?;
            out.flush()?;
            Ok(true)
        }
        Err(e) => {
            out.write_all(paint(&e.output, opts.color_out).as_bytes())?;
            out.flush()?;
            let msg = if opts.color_err {
                ansi::paint_error(&e.message)
            } else {
                format!("error: {}\n", crate::render::escape_controls(&e.message))
            };
            err.write_all(msg.as_bytes())?;
            err.flush()?;
            Ok(false)
        }
    }
}

/// The line-editing REPL. Ctrl-C clears the line (twice in a row on an empty prompt
/// quits), Ctrl-D or `quit` quits. Returns the desk as the session left it.
pub fn run(desk: Desk, opts: &Options) -> std::io::Result<Desk> {
    let desk = Rc::new(RefCell::new(desk));
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .history_ignore_dups(true)
        .map_err(std::io::Error::other)?
        .history_ignore_space(true)
        .max_history_size(1000)
        .map_err(std::io::Error::other)?
        .auto_add_history(false)
        .build();
    let mut rl: Editor<LabHelper, DefaultHistory> =
        Editor::with_config(config.clone()).map_err(std::io::Error::other)?;
    rl.set_helper(Some(LabHelper::new(desk.clone(), opts.color_out)));
    if let Some(h) = &opts.history {
        // A missing or unreadable history is not a reason to refuse to start.
        let _ = rl.load_history(h);
    }
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut cast = match &opts.record {
        Some(path) => {
            let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
            Some(crate::cast::LiveCast::new(crate::cast::Cast::create(
                path,
                w,
                h,
                "cni-csi-lab repl",
            )?))
        }
        None => None,
    };
    {
        let d = desk.borrow();
        let text = format!("{}\n", banner(&d.lab));
        stdout.lock().write_all(text.as_bytes())?;
        if let Some(c) = cast.as_mut() {
            c.output(&text)?;
        }
    }
    let mut interrupts = 0;
    // A history file that cannot be written is said once, on stderr, not after every line.
    let mut history_warned = false;
    loop {
        let p = prompt(&desk.borrow().lab, opts.color_out);
        match rl.readline(&p) {
            Ok(input) => {
                interrupts = 0;
                if let Some(c) = cast.as_mut() {
                    // What the terminal showed: the prompt and the line as typed.
                    c.output(&format!("{}{input}\n", p.1))?;
                }
                let mut line = helper::join_continued(&input);
                if let Some(word) = crate::command::heredoc_marker(&line).map(str::to_string) {
                    // A here-document: read its lines (prompt `> `, as a shell does) up to
                    // the closing word; Ctrl-C abandons it.
                    loop {
                        match rl.readline("> ") {
                            Ok(more) => {
                                if let Some(c) = cast.as_mut() {
                                    c.output(&format!("> {more}\n"))?;
                                }
                                line.push('\n');
                                line.push_str(&more);
                                if more.trim() == word {
                                    break;
                                }
                            }
                            Err(ReadlineError::Interrupted) | Err(ReadlineError::Eof) => {
                                line.clear();
                                break;
                            }
                            Err(e) => return Err(std::io::Error::other(e)),
                        }
                    }
                    if line.is_empty() {
                        continue;
                    }
                }
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(input.as_str());
                    if let Some(h) = &opts.history {
                        // Merged with what other sessions saved meanwhile, under a lock.
                        let saved = history::append_entry(h, input.as_str(), &config);
                        if let Err(e) = saved
                            && !history_warned
                        {
                            history_warned = true;
                            let _ = writeln!(
                                stderr.lock(),
                                "warning: cannot save history to {}: {e} (said once; the session goes on without saving it)",
                                h.display()
                            );
                        }
                    }
                }
                if is_quit(&line) {
                    break;
                }
                if crate::command::help::is_clear_word(line.trim()) {
                    let _ = rl.clear_screen();
                    if let Some(c) = cast.as_mut() {
                        c.output("\x1b[H\x1b[2J")?;
                    }
                    continue;
                }
                if let Ok(Some(crate::command::Command::Lesson(
                    crate::command::grammar::LessonCmd::Play { id, speed, step },
                ))) = crate::command::parse(crate::command::strip_comment(&line))
                {
                    // Live playback: typed visibly and paced, not printed all at once.
                    let mut sink = playback::TerminalSink {
                        color: opts.color_out,
                    };
                    let opts_play = crate::lesson::play::PlayOptions { speed, step };
                    let r = desk
                        .borrow_mut()
                        .lesson_play_live(&id, opts_play, &mut sink);
                    if let Err(e) = r {
                        print_result(Err(e), opts, &mut stdout.lock(), &mut stderr.lock())?;
                    }
                    continue;
                }
                let result = desk.borrow_mut().execute(&line);
                match cast.as_mut() {
                    Some(c) => {
                        let mut out = crate::cast::Tee::new(stdout.lock(), c);
                        print_result(result, opts, &mut out, &mut stderr.lock())?;
                        out.flush()?;
                    }
                    None => {
                        print_result(result, opts, &mut stdout.lock(), &mut stderr.lock())?;
                    }
                }
            }
            Err(ReadlineError::Interrupted) => {
                interrupts += 1;
                if interrupts >= 2 {
                    break;
                }
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(std::io::Error::other(e)),
        }
    }
    drop(rl);
    Ok(Rc::try_unwrap(desk)
        .map(RefCell::into_inner)
        .unwrap_or_else(|rc| {
            std::mem::replace(&mut *rc.borrow_mut(), Desk::with_lab(Lab::empty()))
        }))
}

/// The plain REPL (`repl --plain`, or stdin not a terminal): prompts on `out`, reads lines
/// from `input`, `\` continues a line, errors do not end the session.
pub fn run_plain(
    desk: &mut Desk,
    input: &mut dyn BufRead,
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    let mut pending = String::new();
    loop {
        let (raw, styled) = prompt(&desk.lab, opts.color_out);
        let p = if pending.is_empty() {
            if opts.color_out { styled } else { raw }
        } else {
            "...> ".to_string()
        };
        out.write_all(p.as_bytes())?;
        out.flush()?;
        let mut buf = String::new();
        if input.read_line(&mut buf)? == 0 {
            writeln!(out)?;
            return Ok(());
        }
        let line = buf.trim_end_matches(['\n', '\r']);
        if let Some(more) = line.strip_suffix('\\') {
            pending.push_str(more);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        if let Some(word) = crate::command::heredoc_marker(&pending).map(str::to_string) {
            // A here-document: its lines, up to the closing word, go with the command.
            loop {
                out.write_all(b"> ")?;
                out.flush()?;
                let mut more = String::new();
                if input.read_line(&mut more)? == 0 {
                    break;
                }
                let more = more.trim_end_matches(['\n', '\r']);
                pending.push('\n');
                pending.push_str(more);
                if more.trim() == word {
                    break;
                }
            }
        }
        let line = std::mem::take(&mut pending);
        if is_quit(&line) {
            return Ok(());
        }
        if crate::command::help::is_clear_word(line.trim()) {
            // A plain session has no screen of its own to clear: nothing to do.
            continue;
        }
        print_result(desk.execute(&line), opts, out, err)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_shows_the_cluster_briefly() {
        let mut lab = Lab::new();
        assert_eq!(prompt(&lab, false).0, "lab[2 nodes · 0 pods]> ");
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("mode step").unwrap();
        lab.execute("tick 5").unwrap();
        assert_eq!(
            prompt(&lab, false).0,
            "lab[2 nodes · 1 pod · step · t=5s]> "
        );
        let (raw, styled) = prompt(&lab, true);
        assert_eq!(ansi::strip(&styled), raw);
    }

    #[test]
    fn plain_mode_keeps_going_after_errors_and_stops_at_quit() {
        let mut desk = Desk::new();
        let script = "nod\npod create web \\\n --node node-1\nquit\nnode list\n";
        let mut out = Vec::new();
        let mut err = Vec::new();
        run_plain(
            &mut desk,
            &mut script.as_bytes(),
            &Options::default(),
            &mut out,
            &mut err,
        )
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        let err = String::from_utf8(err).unwrap();
        assert!(err.starts_with("error: unknown command \"nod\""), "{err}");
        assert!(out.contains("lab[2 nodes · 1 pod]> "), "{out}");
        assert!(
            !out.contains("NAME"),
            "quit stopped before node list: {out}"
        );
        assert_eq!(desk.lab.cluster.pods.len(), 1);
    }
}
