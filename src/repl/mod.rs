//! The interactive front end: a rustyline line editor over the lab (completion, usage
//! hints, a highlighted verb, history in the user's data directory), and a plain mode that
//! reads stdin line by line for pipes and tests. Both go through `Desk::execute`, like every
//! other front end; `quit`/`exit` are the only words handled here.

pub mod helper;
pub mod history;
pub mod playback;
pub mod wrap;

use crate::ansi;
use helper::LabHelper;
use lab_engine::cluster::ApiKind;
use lab_engine::command::complete::Wanted;
use lab_engine::engine::{Lab, Mode};
use lab_engine::lesson::Desk;
use lab_engine::render::Outcome;
use lab_engine::resource::count;
use owo_colors::OwoColorize;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Config, Editor};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// Fit teaching text to the terminal's width (stdout is a terminal; see [`wrap`]).
    pub wrap: bool,
}

/// Words that end the session.
pub fn is_quit(line: &str) -> bool {
    matches!(line.trim(), "quit" | "exit" | "q")
}

/// Whether a line is `q` while a trace is stepped: it ends the stepping (`step end`), not
/// the session (`quit` and `exit` still quit).
fn ends_stepping(line: &str, stepping: bool) -> bool {
    stepping && line.trim() == "q"
}

/// The prompt's context: `2 nodes · 3 pods`, plus `step` and the clock when they matter.
pub fn context(lab: &Lab) -> String {
    let mut parts = vec![
        count(ApiKind::Node, lab.counts().0),
        count(ApiKind::Pod, lab.counts().1),
    ];
    if lab.mode() == Mode::Step {
        parts.push("step".to_string());
    }
    if lab.clock() > lab_engine::util::time::Millis::ZERO {
        parts.push(format!("t={}", lab.clock().secs_text()));
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
    let nodes = lab.completion_names(Wanted::Objects(ApiKind::Node));
    let cluster = if nodes.is_empty() {
        "an empty cluster (add one: node add node-1)".to_string()
    } else {
        format!(
            "{} ({})",
            count(ApiKind::Node, nodes.len()),
            nodes.join(", ")
        )
    };
    format!(
        "cni-csi-lab {}: {cluster}.\nType `lesson list` for the guided lessons, `help` for commands, `explain` for concepts; Tab completes; Ctrl-D quits.",
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
    let width = opts
        .wrap
        .then(crossterm::terminal::size)
        .and_then(Result::ok)
        .map(|(cols, _)| usize::from(cols).max(20));
    let paint = |o: &Outcome, color: bool| {
        let fitted;
        let o = match width {
            Some(w) => {
                fitted = wrap::fit(o, w);
                &fitted
            }
            None => o,
        };
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
                ansi::paint_error(e.prefix(), &e.message)
            } else {
                format!(
                    "{}{}\n",
                    e.prefix(),
                    lab_engine::render::escape_controls(&e.message)
                )
            };
            err.write_all(msg.as_bytes())?;
            err.flush()?;
            Ok(false)
        }
    }
}

/// The line-editing REPL. Ctrl-C ends a `get -w` in progress, else clears the line (twice
/// in a row on an empty prompt quits), Ctrl-D or `quit` quits. Returns the desk as the session left it.
pub fn run(desk: Desk, opts: &Options) -> std::io::Result<Desk> {
    let desk = Arc::new(Mutex::new(desk));
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
    let helper = LabHelper::new(desk.clone(), opts.color_out);
    let overflow = Arc::clone(&helper.overflow);
    rl.set_helper(Some(helper));
    rl.bind_sequence(
        rustyline::Event::Any,
        rustyline::EventHandler::Conditional(Box::new(helper::LongLine(Arc::clone(&overflow)))),
    );
    if let Some(h) = &opts.history {
        // A missing or unreadable history is not a reason to refuse to start.
        let _ = rl.load_history(h);
        history::drop_long_entries(rl.history_mut());
    }
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // Shared with `csi serve`'s thread, whose lines are recorded as they print.
    let cast: Option<SharedCast> = match &opts.record {
        Some(path) => {
            let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
            Some(Arc::new(Mutex::new(crate::cast::LiveCast::new(
                crate::cast::Cast::create(path, w, h, "cni-csi-lab repl")?,
            ))))
        }
        None => None,
    };
    {
        let d = lock(&desk);
        let text = format!("{}\n", banner(&d.lab));
        stdout.lock().write_all(text.as_bytes())?;
        if let Some(c) = cast.as_ref() {
            lock_cast(c).output(&text)?;
        }
    }
    let mut interrupts = 0;
    let mut serving = Serving::default();
    // A history file that cannot be written is said once, on stderr, not after every line.
    let mut history_warned = false;
    loop {
        let p = prompt(&lock(&desk).lab, opts.color_out);
        overflow.store(false, std::sync::atomic::Ordering::Relaxed);
        let read = rl.readline(&p);
        let overflowed = overflow.swap(false, std::sync::atomic::Ordering::Relaxed);
        match read {
            Ok(input) if overflowed || input.len() > lab_engine::command::MAX_LINE => {
                // Refused whole (what was typed past the cap was dropped as it came), and
                // kept out of the history.
                interrupts = 0;
                let e = lab_engine::engine::LabError::msg(if overflowed {
                    lab_engine::command::typed_line_too_long()
                } else {
                    lab_engine::command::line_too_long(input.len())
                });
                print_result(Err(e), opts, &mut stdout.lock(), &mut stderr.lock())?;
            }
            Ok(input) => {
                interrupts = 0;
                if let Some(c) = cast.as_ref() {
                    // What the terminal showed: the prompt and the line as typed.
                    lock_cast(c).output(&format!("{}{input}\n", p.1))?;
                }
                let mut line = helper::join_continued(&input);
                if let Some((word, strip_tabs)) = lab_engine::command::heredoc_start(&line)
                    .map(|h| (h.word.to_string(), h.strip_tabs))
                {
                    let end = lab_engine::command::Heredoc {
                        word: &word,
                        strip_tabs,
                    };
                    // A here-document: read its lines (prompt `> `, as a shell does) up to
                    // the closing word; Ctrl-C abandons it.
                    loop {
                        match rl.readline("> ") {
                            Ok(more) => {
                                if let Some(c) = cast.as_ref() {
                                    lock_cast(c).output(&format!("> {more}\n"))?;
                                }
                                line.push('\n');
                                line.push_str(&more);
                                if end.ends_at(&more) {
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
                if is_quit(&line) && !ends_stepping(&line, lock(&desk).stepping().is_some()) {
                    break;
                }
                if lab_engine::command::help::is_clear_word(line.trim()) {
                    let _ = rl.clear_screen();
                    if let Some(c) = cast.as_ref() {
                        lock_cast(c).output("\x1b[H\x1b[2J")?;
                    }
                    continue;
                }
                match lab_engine::lesson::play::LivePlayback::of(&line) {
                    Some(lab_engine::lesson::play::LivePlayback::Lesson { id, options }) => {
                        // Live playback: typed visibly and paced, not printed all at once.
                        let r = with_play_sink(opts.color_out, &cast, |sink| {
                            lock(&desk).lesson_play_live(&id, options, sink)
                        });
                        if let Err(e) = r {
                            print_result(Err(e), opts, &mut stdout.lock(), &mut stderr.lock())?;
                        }
                        continue;
                    }
                    Some(lab_engine::lesson::play::LivePlayback::Script(a)) => {
                        // `play FILE`: the script typed out live, with its captions.
                        let planned = lock(&desk).script_plan(&a);
                        match planned {
                            Ok(events) => {
                                with_play_sink(opts.color_out, &cast, |sink| {
                                    lock(&desk).play_events(events, sink, false)
                                });
                            }
                            Err(e) => {
                                print_result(Err(e), opts, &mut stdout.lock(), &mut stderr.lock())?;
                            }
                        }
                        continue;
                    }
                    None => {}
                }
                let step_before = step_heading(&lock(&desk));
                let result = match crate::csi_serve::serve_request(&line) {
                    // `csi serve`: this session serves the socket on a thread of its own.
                    Some(req) => serving.control(req, &desk, &mut rl, opts.color_out, &cast),
                    None => lock(&desk).execute(&line),
                };
                if let Some(c) = cast.as_ref() {
                    mark_step(c, step_before, step_heading(&lock(&desk)))?;
                }
                match cast.as_ref() {
                    Some(c) => {
                        let mut guard = lock_cast(c);
                        let mut out = crate::cast::Tee::new(stdout.lock(), &mut guard);
                        print_result(result, opts, &mut out, &mut stderr.lock())?;
                        out.flush()?;
                    }
                    None => {
                        print_result(result, opts, &mut stdout.lock(), &mut stderr.lock())?;
                    }
                }
            }
            Err(ReadlineError::Interrupted) if lock(&desk).stepping().is_some() => {
                // Ctrl-C while stepping a trace ends the stepping, not the session.
                let result = lock(&desk).execute("step end");
                print_result(result, opts, &mut stdout.lock(), &mut stderr.lock())?;
            }
            Err(ReadlineError::Interrupted) => {
                let watched = lock(&desk).stop_watch();
                if watched.is_some() {
                    // Ctrl-C ends the `get -w` in progress, as it ends kubectl's watch,
                    // and the terminal shows it as it would there.
                    interrupts = 0;
                    stdout.lock().write_all(b"^C\n")?;
                    if let Some(c) = cast.as_ref() {
                        lock_cast(c).output("^C\n")?;
                    }
                    continue;
                }
                interrupts += 1;
                if interrupts >= 2 {
                    break;
                }
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(std::io::Error::other(e)),
        }
    }
    // The socket goes with the session (its thread ends, the file is removed).
    if let Some(said) = serving.stop() {
        let _ = writeln!(stdout.lock(), "{said}");
        if let Some(c) = cast.as_ref() {
            lock_cast(c).output(&format!("{said}\n"))?;
        }
    }
    drop(rl);
    Ok(Arc::try_unwrap(desk)
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .unwrap_or_else(|shared| {
            std::mem::replace(&mut *lock(&shared), Desk::with_lab(Lab::empty()))
        }))
}

/// The session's recording (`--record`), shared by the prompt loop and `csi serve`'s thread.
type SharedCast = crate::cast::Shared;

/// The heading of the lesson step in progress (`Step 2 · …`), if a lesson runs.
fn step_heading(desk: &Desk) -> Option<String> {
    lab_engine::dash::lesson_view(&desk.lab, &desk.lessons, None)
        .and_then(|v| v.text.lines().next().map(str::to_string))
}

/// A marker in the recording when a command moved the lesson to another step.
fn mark_step(
    cast: &SharedCast,
    before: Option<String>,
    after: Option<String>,
) -> std::io::Result<()> {
    match after {
        Some(step) if before.as_ref() != Some(&step) => lock_cast(cast).marker(&step),
        _ => Ok(()),
    }
}

/// The recording, locked (a panic on another thread does not stop the recording).
/// Run `f` with the terminal's playback sink, recorded into the session's cast too when
/// there is one (`--record`).
fn with_play_sink<R>(
    color: bool,
    cast: &Option<SharedCast>,
    f: impl FnOnce(&mut dyn lab_engine::lesson::play::PlaySink) -> R,
) -> R {
    let mut term = playback::TerminalSink { color };
    match cast {
        Some(c) => f(&mut crate::cast::RecordedSink {
            inner: &mut term,
            cast: c.clone(),
            color,
        }),
        None => f(&mut term),
    }
}

fn lock_cast(cast: &SharedCast) -> MutexGuard<'_, crate::cast::LiveCast> {
    cast.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One line of output.
fn said(text: impl Into<String>) -> Outcome {
    let mut o = Outcome::empty();
    o.plain(text);
    o
}

/// The desk, locked (a panic on `csi serve`'s thread does not lock the learner out).
fn lock(desk: &Mutex<Desk>) -> MutexGuard<'_, Desk> {
    desk.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `csi serve` in the REPL: the server and the thread that runs the calls it receives on
/// the shared desk, printing each call's lines above the prompt (rustyline's external
/// printer), while the learner goes on typing.
#[derive(Default)]
struct Serving {
    running: Option<ServeThread>,
}

struct ServeThread {
    banner: String,
    socket: std::path::PathBuf,
    stop: Arc<std::sync::atomic::AtomicBool>,
    /// Ends with what stopping said (`Err`: after why the server stopped).
    thread: std::thread::JoinHandle<Result<String, String>>,
}

/// How long the serving thread waits for a call before it looks at its stop flag.
const SERVE_POLL: std::time::Duration = std::time::Duration::from_millis(50);

impl Serving {
    fn control(
        &mut self,
        req: crate::csi_serve::ServeRequest,
        desk: &Arc<Mutex<Desk>>,
        rl: &mut Editor<LabHelper, DefaultHistory>,
        color: bool,
        cast: &Option<SharedCast>,
    ) -> Result<Outcome, lab_engine::engine::LabError> {
        use crate::csi_serve::ServeRequest;
        use lab_engine::engine::LabError;
        use std::sync::atomic::{AtomicBool, Ordering};
        match req {
            ServeRequest::Status => Ok(said(match &self.running {
                Some(t) if !t.thread.is_finished() => t.banner.clone(),
                _ => crate::csi_serve::NOT_SERVING.to_string(),
            })),
            ServeRequest::Stop => self
                .stop()
                .map(said)
                .ok_or_else(|| LabError::msg(crate::csi_serve::NOT_SERVING)),
            ServeRequest::Start(opts) => {
                if let Some(t) = &self.running
                    && !t.thread.is_finished()
                {
                    return Err(LabError::msg(crate::csi_serve::already_serving(&t.socket)));
                }
                let _ = self.stop();
                let server = crate::csi_serve::Server::start(&lock(desk).lab, &opts)
                    .map_err(LabError::msg)?;
                let mut printer = rl
                    .create_external_printer()
                    .map_err(|e| LabError::msg(format!("cannot print above the prompt: {e}")))?;
                let banner = server.banner();
                let stop = Arc::new(AtomicBool::new(false));
                let (desk, flag) = (Arc::clone(desk), Arc::clone(&stop));
                let cast = cast.clone();
                let thread = std::thread::Builder::new()
                    .name("csi-serve".into())
                    .spawn(move || -> Result<String, String> {
                        use rustyline::ExternalPrinter;
                        while !flag.load(Ordering::Relaxed) {
                            let job = match server.next_job(SERVE_POLL) {
                                Ok(Some(job)) => job,
                                Ok(None) => continue,
                                Err(e) => {
                                    let said = server.stop().unwrap_or_else(|said| said);
                                    return Err(format!("{e}; {said}"));
                                }
                            };
                            let lines = {
                                let mut d = lock(&desk);
                                let node = server.node.clone();
                                crate::csi_serve::handle(&mut d.lab, node.as_deref(), job)
                            };
                            let mut out = Outcome::empty();
                            for l in lines {
                                out.line(l);
                            }
                            let text = if color {
                                ansi::paint(&out)
                            } else {
                                out.to_text()
                            };
                            if let Some(c) = &cast {
                                // The recording shows the lines where the terminal did.
                                let mut c = lock_cast(c);
                                let _ = c.output(&text).and_then(|()| c.flush());
                            }
                            let _ = printer.print(text);
                        }
                        server.stop()
                    })
                    .map_err(|e| LabError::msg(format!("cannot start serving: {e}")))?;
                let socket = opts.socket.clone();
                self.running = Some(ServeThread {
                    banner: banner.clone(),
                    socket,
                    stop,
                    thread,
                });
                Ok(said(format!(
                    "{banner}; calls show here as they arrive, `csi serve stop` stops it"
                )))
            }
        }
    }

    /// Stop serving, if this session serves: what to say about it.
    fn stop(&mut self) -> Option<String> {
        let t = self.running.take()?;
        t.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        Some(match t.thread.join() {
            Ok(Ok(said) | Err(said)) => said,
            Err(_) => format!(
                "the serving thread failed; {}",
                crate::csi_serve::stopped(&t.socket)
            ),
        })
    }
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
    let Some(path) = &opts.record else {
        return plain_loop(desk, input, opts, out, err, None);
    };
    // `--record`: what the session wrote, and each line read as the terminal echoed it.
    let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
    let cast = crate::cast::shared(path, w, h, "cni-csi-lab repl --plain")?;
    let mut out = crate::cast::SharedTee::new(out, cast.clone());
    let mut err = crate::cast::SharedTee::new(err, cast.clone());
    plain_loop(desk, input, opts, &mut out, &mut err, Some(&cast))
}

fn plain_loop(
    desk: &mut Desk,
    input: &mut dyn BufRead,
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
    cast: Option<&SharedCast>,
) -> std::io::Result<()> {
    let record_input = |line: &str| -> std::io::Result<()> {
        if let Some(c) = cast {
            let mut c = lock_cast(c);
            c.output(&format!("{line}\n"))?;
            c.flush()?;
        }
        Ok(())
    };
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
        record_input(line)?;
        if let Some(more) = line.strip_suffix('\\') {
            pending.push_str(more);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        if let Some((word, strip_tabs)) =
            lab_engine::command::heredoc_start(&pending).map(|h| (h.word.to_string(), h.strip_tabs))
        {
            let end = lab_engine::command::Heredoc {
                word: &word,
                strip_tabs,
            };
            // A here-document: its lines, up to the closing word, go with the command.
            loop {
                out.write_all(b"> ")?;
                out.flush()?;
                let mut more = String::new();
                if input.read_line(&mut more)? == 0 {
                    break;
                }
                let more = more.trim_end_matches(['\n', '\r']);
                record_input(more)?;
                pending.push('\n');
                pending.push_str(more);
                if end.ends_at(more) {
                    break;
                }
            }
        }
        let line = std::mem::take(&mut pending);
        if is_quit(&line) && !ends_stepping(&line, desk.stepping().is_some()) {
            return Ok(());
        }
        if lab_engine::command::help::is_clear_word(line.trim()) {
            // A plain session has no screen of its own to clear: nothing to do.
            continue;
        }
        if let (
            Some(c),
            Ok(Some(lab_engine::command::Command::Lesson(
                lab_engine::command::grammar::LessonCmd::Play {
                    id,
                    speed,
                    step,
                    variant,
                },
            ))),
        ) = (
            cast,
            lab_engine::command::parse(lab_engine::command::strip_comment(&line)),
        ) {
            // Recorded: played event by event, so each step's heading gets its marker.
            let mut sink = playback::PlainSink {
                out: &mut *out,
                cast: c,
                color: opts.color_out,
            };
            let opts_play = lab_engine::lesson::play::PlayOptions {
                speed,
                step,
                variant,
            };
            if let Err(e) = desk.lesson_play_live(&id, opts_play, &mut sink) {
                print_result(Err(e), opts, out, err)?;
            }
            continue;
        }
        let step_before = step_heading(desk);
        print_result(desk.execute(&line), opts, out, err)?;
        if let Some(c) = cast {
            mark_step(c, step_before, step_heading(desk))?;
        }
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
        assert_eq!(desk.lab.counts().1, 1);
    }

    #[test]
    fn an_api_server_refusal_is_printed_as_kubectl_prints_it() {
        let mut desk = Desk::new();
        let mut out = Vec::new();
        let mut err = Vec::new();
        for color_err in [false, true] {
            err.clear();
            let opts = Options {
                color_err,
                ..Options::default()
            };
            run_plain(
                &mut desk,
                &mut "get pod nothere\n".as_bytes(),
                &opts,
                &mut out,
                &mut err,
            )
            .unwrap();
            let err = crate::ansi::strip(&String::from_utf8(err.clone()).unwrap());
            assert_eq!(
                err,
                "Error from server (NotFound): pods \"nothere\" not found\n"
            );
        }
    }
}
