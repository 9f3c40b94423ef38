//! The live dashboard on a terminal (crossterm): the dashboard itself ([`App`], its keymap,
//! panes and theme) is the `lab-ui` crate, re-exported here; this module turns terminal
//! events into its keys and actions, gives it `csi serve` and the disk's file names
//! ([`Native`]), and runs the loop. [`run_loop`] is generic over the backend so tests drive
//! it with `TestBackend` and scripted events.
//!
//! The terminal is restored on every exit path: normal return and errors (a guard's `Drop`),
//! panics (ratatui's hook, wrapped to also turn mouse capture off), and SIGTERM/SIGHUP/SIGINT
//! (a `signal-hook` flag the loop checks at least every tick; in raw mode Ctrl-C is a key).
//! Terminal input is read on its own thread (the event-driven template's shape) so the
//! loop never blocks inside the terminal library.

mod host;

pub use host::Native;
pub use lab_engine::dash::{LessonView, VolumeRow, VolumeState, volume_rows};
pub use lab_ui::{Action, App, Mode, Palette, Pane, Theme};
pub use lab_ui::{app, complete, keymap, theme, view};

use crossterm::event::{self, Event, MouseButton, MouseEventKind};
use lab_engine::lesson::Desk;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use std::collections::VecDeque;
use std::io::{self, IsTerminal};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// How the dashboard looks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    /// High-contrast theme with thicker borders and more spacing (for a projector).
    pub big: bool,
    /// No colour at all (emphasis by weight only).
    pub no_color: bool,
    /// The palette (`--theme`); none: dark, or high contrast with `big`.
    pub palette: Option<Palette>,
    /// Record every frame into this asciicast v2 file (`--record`, [`crate::cast`]).
    pub record: Option<std::path::PathBuf>,
}

impl Options {
    /// Options with `no_color` taken from the environment (`NO_COLOR` set and non-empty,
    /// as no-color.org defines it).
    pub fn from_env(big: bool) -> Self {
        Options {
            big,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            palette: None,
            record: None,
        }
    }
}

/// What the loop gets from its source of events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A terminal event.
    Event(Event),
    /// Nothing happened for a while.
    Tick,
    /// Stop now (a signal, or a scripted source that ran out).
    Shutdown,
}

/// A source of events: the terminal, or a script in tests.
pub trait EventSource {
    /// The next input (blocking at most about a tick).
    fn next_input(&mut self) -> io::Result<Input>;

    /// The next input if one is already waiting (never blocks): the loop applies what is
    /// queued before it draws again.
    fn pending(&mut self) -> io::Result<Option<Input>> {
        Ok(None)
    }

    /// Whether Ctrl-C was pressed, however many inputs are queued before it.
    fn interrupted(&self) -> bool {
        false
    }
}

/// Scripted events for tests; [`Input::Shutdown`] once they run out.
#[derive(Debug, Clone, Default)]
pub struct ScriptedEvents(pub VecDeque<Event>);

impl EventSource for ScriptedEvents {
    fn next_input(&mut self) -> io::Result<Input> {
        Ok(self.0.pop_front().map_or(Input::Shutdown, Input::Event))
    }
}

/// The terminal's events, read on a thread of their own and received with a tick timeout,
/// so a termination signal ends the loop even if the terminal is gone (crossterm 0.29
/// spins inside its read when the tty reports end-of-file after a hangup).
pub struct CrosstermEvents {
    rx: mpsc::Receiver<io::Result<Event>>,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    tick: Duration,
    /// Counts calls of `next_input`: the loop is alive while it moves (see [`Watchdog`]).
    heartbeat: Arc<AtomicU64>,
    /// Set by the reader thread when Ctrl-C is pressed (see [`Watchdog`]).
    ctrl_c: Arc<AtomicBool>,
    /// Set by the reader thread when Ctrl-C is pressed, for the loop (see
    /// [`EventSource::interrupted`]).
    interrupt: Arc<AtomicBool>,
}

impl CrosstermEvents {
    /// Start the reader thread. It stops within a poll interval once this is dropped.
    pub fn start(stop: Arc<AtomicBool>, tick: Duration) -> io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let done = Arc::new(AtomicBool::new(false));
        let reader_done = Arc::clone(&done);
        let ctrl_c = Arc::new(AtomicBool::new(false));
        let reader_ctrl_c = Arc::clone(&ctrl_c);
        let interrupt = Arc::new(AtomicBool::new(false));
        let reader_interrupt = Arc::clone(&interrupt);
        std::thread::Builder::new()
            .name("tui-input".into())
            .spawn(move || {
                while !reader_done.load(Ordering::Relaxed) {
                    let got = match event::poll(Duration::from_millis(100)) {
                        Ok(false) => continue,
                        Ok(true) => event::read(),
                        Err(e) => Err(e),
                    };
                    if let Ok(Event::Key(k)) = &got {
                        if k.code == crossterm::event::KeyCode::Char('c')
                            && k.modifiers
                                .contains(crossterm::event::KeyModifiers::CONTROL)
                        {
                            reader_ctrl_c.store(true, Ordering::Relaxed);
                            reader_interrupt.store(true, Ordering::Relaxed);
                        }
                    }
                    let failed = got.is_err();
                    if tx.send(got).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(CrosstermEvents {
            rx,
            stop,
            done,
            tick,
            heartbeat: Arc::new(AtomicU64::new(0)),
            ctrl_c,
            interrupt,
        })
    }
}

impl Drop for CrosstermEvents {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl EventSource for CrosstermEvents {
    fn next_input(&mut self) -> io::Result<Input> {
        self.heartbeat.fetch_add(1, Ordering::Relaxed);
        if self.stop.load(Ordering::Relaxed) {
            return Ok(Input::Shutdown);
        }
        match self.rx.recv_timeout(self.tick) {
            Ok(Ok(e)) => Ok(Input::Event(e)),
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) if self.stop.load(Ordering::Relaxed) => {
                Ok(Input::Shutdown)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(Input::Tick),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(Input::Shutdown),
        }
    }

    fn pending(&mut self) -> io::Result<Option<Input>> {
        self.heartbeat.fetch_add(1, Ordering::Relaxed);
        if self.stop.load(Ordering::Relaxed) {
            return Ok(Some(Input::Shutdown));
        }
        match self.rx.try_recv() {
            Ok(Ok(e)) => Ok(Some(Input::Event(e))),
            Ok(Err(e)) => Err(e),
            Err(mpsc::TryRecvError::Empty) => Ok(None),
            Err(mpsc::TryRecvError::Disconnected) => Ok(Some(Input::Shutdown)),
        }
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }
}

/// The action a terminal event means in a mode (keys through the keymap; wheel and click
/// by position; resize; bracketed paste).
pub fn to_action(mode: Mode, e: &Event) -> Option<Action> {
    match e {
        Event::Key(k) => keymap::lookup(mode, &host::key(k)?),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => Some(Action::ScrollAt(m.column, m.row, 3)),
            MouseEventKind::ScrollUp => Some(Action::ScrollAt(m.column, m.row, -3)),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::ClickAt(m.column, m.row)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        Event::Paste(s) => Some(Action::Paste(s.clone())),
        _ => None,
    }
}

fn to_io<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

/// Draw one frame.
pub fn draw<B: Backend>(terminal: &mut Terminal<B>, app: &mut App) -> io::Result<()> {
    let size = terminal.size().map_err(to_io)?;
    app.ui.area = Rect::new(0, 0, size.width, size.height);
    let app: &App = app;
    terminal
        .draw(|f| {
            f.render_widget(app, f.area());
            if let Some(p) = view::cursor_position(app, f.area()) {
                f.set_cursor_position(p);
            }
        })
        .map_err(to_io)?;
    Ok(())
}

/// The event loop: draw, wait for an input, apply the actions it means, until quit.
pub fn run_loop<B: Backend, S: EventSource>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut S,
) -> io::Result<()> {
    while !app.should_quit() {
        draw(terminal, app)?;
        take_input(app, events)?;
    }
    Ok(())
}

/// Wait for an input and apply it, then everything already queued behind it, before the
/// next frame (for at most FRAME_BUDGET): a paste typed in one key at a time costs one
/// frame per batch, not one per character, so input is linear in its length. A Ctrl-C
/// queued behind it is honoured first.
fn take_input<S: EventSource>(app: &mut App, events: &mut S) -> io::Result<()> {
    let started = std::time::Instant::now();
    let mut input = Some(events.next_input()?);
    while let Some(i) = input {
        if events.interrupted() {
            apply(app, Action::Quit);
            break;
        }
        let action = match i {
            Input::Event(e) => to_action(app.ui.mode, &e),
            Input::Tick => Some(Action::Tick),
            Input::Shutdown => Some(Action::Quit),
        };
        if let Some(a) = action {
            apply(app, a);
        }
        if app.should_quit() || started.elapsed() >= FRAME_BUDGET {
            break;
        }
        input = events.pending()?;
    }
    Ok(())
}

/// The longest the loop applies queued input before it draws a frame.
pub const FRAME_BUDGET: Duration = Duration::from_millis(50);

/// Apply an action and the ones it leads to.
fn apply(app: &mut App, action: Action) {
    let mut next = Some(action);
    while let Some(a) = next {
        next = app.update(a);
    }
}

/// [`run_loop`] into a recording: also a marker each time the lesson moves to another
/// step (a lesson started, a step passed, a playback's heading).
pub fn run_recorded<B: Backend, S: EventSource>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut S,
    cast: &crate::cast::Shared,
) -> io::Result<()> {
    let step = |app: &App| {
        app.lesson
            .as_ref()
            .and_then(|l| l.text.lines().next().map(str::to_string))
    };
    let mut shown = step(app);
    while !app.should_quit() {
        draw(terminal, app)?;
        take_input(app, events)?;
        let now = step(app);
        if now != shown {
            if let Some(label) = &now {
                // Each frame is flushed into the recording as it is drawn: the marker
                // follows the frame before it.
                let mut c = crate::cast::lock(cast);
                c.marker(label)?;
                c.flush()?;
            }
            shown = now;
        }
    }
    Ok(())
}

/// Undoes what `run` turned on, whatever way the loop ends (`Drop`).
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> io::Result<Self> {
        crossterm::execute!(
            io::stdout(),
            crossterm::event::EnableMouseCapture,
            crossterm::event::EnableBracketedPaste
        )?;
        Ok(TerminalGuard)
    }

    fn leave() {
        let _ = crossterm::execute!(
            io::stdout(),
            crossterm::event::DisableMouseCapture,
            crossterm::event::DisableBracketedPaste
        );
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        TerminalGuard::leave();
        ratatui::restore();
    }
}

/// Open the dashboard full screen on a lab and run it until the learner quits (Ctrl-C,
/// F10, or the command `quit`) or a termination signal arrives.
pub fn run(desk: Desk, options: Options) -> io::Result<()> {
    run_until_signal(desk, options).map(|_| ())
}

/// How long the loop may be busy (a long command, a slow frame) after Ctrl-C or a
/// termination signal before the [`Watchdog`] restores the terminal and exits for it.
pub const UNRESPONSIVE_GRACE: Duration = Duration::from_secs(1);

/// Keeps the dashboard responsive to Ctrl-C and termination signals while its loop is busy:
/// commands run on the loop's thread, so a signal or a Ctrl-C that the loop does not
/// pick up within [`UNRESPONSIVE_GRACE`] (its heartbeat, the calls for the next input,
/// stands still) makes this thread restore the terminal and exit with 128 + the signal
/// (130 for Ctrl-C).
struct Watchdog {
    finished: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(
        signal: Arc<AtomicUsize>,
        ctrl_c: Arc<AtomicBool>,
        heartbeat: Arc<AtomicU64>,
    ) -> io::Result<Self> {
        let finished = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&finished);
        std::thread::Builder::new()
            .name("tui-watchdog".into())
            .spawn(move || {
                let mut pending: Option<(u64, std::time::Instant)> = None;
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                    let sig = signal.load(Ordering::Relaxed);
                    let asked = sig != 0 || ctrl_c.load(Ordering::Relaxed);
                    let beat = heartbeat.load(Ordering::Relaxed);
                    match pending {
                        _ if !asked => pending = None,
                        None => pending = Some((beat, std::time::Instant::now())),
                        Some((b, _)) if b != beat && sig == 0 => {
                            // The loop took the Ctrl-C (whatever it means there).
                            ctrl_c.store(false, Ordering::Relaxed);
                            pending = None;
                        }
                        Some((b, since)) if b == beat && since.elapsed() >= UNRESPONSIVE_GRACE => {
                            if done.load(Ordering::Relaxed) {
                                return;
                            }
                            TerminalGuard::leave();
                            ratatui::restore();
                            let sig = if sig == 0 {
                                signal_hook::consts::SIGINT
                            } else {
                                sig as i32
                            };
                            std::process::exit(i32::from(crate::signals::exit_status(sig)));
                        }
                        Some((b, _)) if b != beat => {
                            pending = Some((beat, std::time::Instant::now()));
                        }
                        Some(_) => {}
                    }
                }
            })?;
        Ok(Watchdog { finished })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.finished.store(true, Ordering::Relaxed);
    }
}

/// [`run`], telling how it ended: `Some(signal)` when SIGTERM, SIGHUP or SIGINT ended it
/// (the binary exits 128 + the signal), `None` when the learner quit. The terminal is
/// restored either way.
pub fn run_until_signal(desk: Desk, options: Options) -> io::Result<Option<i32>> {
    if !io::stdout().is_terminal() {
        return Err(io::Error::other(
            "the dashboard needs a terminal; use `cni-csi-lab run FILE` or `repl` otherwise",
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let caught = Arc::new(AtomicUsize::new(0));
    let mut signals: Vec<signal_hook::SigId> = Vec::new();
    #[cfg(unix)]
    for sig in crate::signals::SIGNALS {
        signals.push(signal_hook::flag::register(sig, Arc::clone(&stop))?);
        signals.push(signal_hook::flag::register_usize(
            sig,
            Arc::clone(&caught),
            sig as usize,
        )?);
    }
    // A recording is created before the screen changes, so an error reads normally.
    let cast = match &options.record {
        Some(path) => {
            let (w, h) = crossterm::terminal::size()?;
            Some(crate::cast::Cast::create(
                path,
                w,
                h,
                "cni-csi-lab dashboard",
            )?)
        }
        None => None,
    };
    // Raw mode, the alternate screen, and ratatui's panic hook (restore, then report).
    let mut terminal = ratatui::try_init()?;
    let guard = TerminalGuard::enter();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        TerminalGuard::leave();
        prev(info);
    }));
    let result = guard.and_then(|_g| {
        let mut app = App::new(
            desk,
            Theme::build(options.palette, options.big, options.no_color),
        )
        .with_host(Box::new(Native::default()));
        let mut events = CrosstermEvents::start(Arc::clone(&stop), Duration::from_millis(100))?;
        let _watchdog = Watchdog::start(
            Arc::clone(&caught),
            Arc::clone(&events.ctrl_c),
            Arc::clone(&events.heartbeat),
        )?;
        match cast {
            // The same screen, drawn through a writer that copies each frame to the cast.
            Some(cast) => {
                let live: crate::cast::Shared =
                    Arc::new(std::sync::Mutex::new(crate::cast::LiveCast::new(cast)));
                let tee = crate::cast::SharedTee::new(io::stdout(), Arc::clone(&live));
                let mut recorded = Terminal::new(ratatui::backend::CrosstermBackend::new(tee))?;
                let ran = run_recorded(&mut recorded, &mut app, &mut events, &live);
                drop(recorded);
                // Played back, the recording ends on a clear screen, as the terminal did
                // when the dashboard left its alternate screen.
                let mut live = crate::cast::lock(&live);
                live.output(crate::cast::CLEAR_SCREEN)?;
                live.flush()?;
                ran
            }
            None => run_loop(&mut terminal, &mut app, &mut events),
        }
    });
    // `_g` dropped above restored the terminal; make sure even if enter() failed.
    ratatui::restore();
    for id in signals {
        signal_hook::low_level::unregister(id);
    }
    result?;
    let sig = caught.load(Ordering::Relaxed);
    Ok((sig != 0).then_some(sig as i32))
}
