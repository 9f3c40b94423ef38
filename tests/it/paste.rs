//! Pasting into the REPL and the dashboard on a terminal (issue 38, item 4): a paste typed
//! in one key at a time is read in time linear in its length, a line longer than the
//! longest command (`MAX_LINE`) is refused at once with a message, and a Ctrl-C queued
//! behind a long paste is honoured.
//!
//! Each session runs on a pseudo-terminal of its own (120×40), fed the paste as a terminal
//! without bracketed paste would send it, one character after another. The bounds are generous (a busy 2-core machine in
//! a debug build): they catch the old quadratic reading (a 100,000-character paste took
//! over 300 s in the REPL; Ctrl-C behind it was still not honoured after 90 s in the
//! dashboard), not ordinary slowness. The figures measured are in BENCHMARKS.md.

use crate::oracle;
use lab_engine::command::MAX_LINE;
use std::io::{Read, Write};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Far above what reading a paste takes now; far below what it took before.
const BOUND: Duration = Duration::from_secs(30);

/// The paste: `n` characters, no newline.
fn paste(n: usize) -> Vec<u8> {
    vec![b'x'; n]
}

/// A front end of the lab on a pseudo-terminal (its stdin, stdout and stderr), its screen
/// collected as it comes.
pub(super) struct Session {
    child: Child,
    pub(super) stdin: Option<std::fs::File>,
    shown: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    pub(super) fn start(args: &[&str]) -> Session {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        rustix::termios::tcsetwinsize(
            &master,
            rustix::termios::Winsize {
                ws_row: 40,
                ws_col: 120,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .expect("its size");
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().expect("a path"))
            .expect("the terminal side");
        let child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
            .args(args)
            .env("TERM", "xterm")
            .env("CNI_CSI_LAB_HISTORY", "")
            .env("CNI_CSI_LAB_PROGRESS", "")
            .stdin(slave.try_clone().expect("stdin"))
            .stdout(slave.try_clone().expect("stdout"))
            .stderr(slave)
            .spawn()
            .expect("the lab runs");
        let master = std::fs::File::from(master);
        let shown = Arc::new(Mutex::new(Vec::new()));
        let mut out = master.try_clone().expect("the screen");
        let sink = Arc::clone(&shown);
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = out.read(&mut buf) {
                sink.lock().expect("screen").extend_from_slice(&buf[..n]);
            }
        });
        Session {
            child,
            stdin: Some(master),
            shown,
        }
    }

    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.shown.lock().expect("screen")).into_owned()
    }

    /// Wait until the screen (from byte `from` on) satisfies `done`; how long it took.
    pub(super) fn wait_for(
        &self,
        what: &str,
        from: usize,
        done: impl Fn(&str) -> bool,
    ) -> Duration {
        let start = Instant::now();
        loop {
            let t = self.text();
            if done(t.get(from..).unwrap_or("")) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < BOUND,
                "no {what} after {BOUND:?}; the screen ends with:\n{}",
                tail(&t)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Type `bytes` (from a thread: the terminal takes them as fast as the lab reads).
    pub(super) fn type_in(&mut self, bytes: Vec<u8>) -> std::thread::JoinHandle<std::fs::File> {
        let mut stdin = self.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            stdin.write_all(&bytes).expect("typed");
            stdin.flush().expect("flushed");
            stdin
        })
    }

    /// Wait for the process to end; how long it took.
    pub(super) fn wait_exit(&mut self) -> Duration {
        let start = Instant::now();
        loop {
            if self.child.try_wait().expect("the session runs").is_some() {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < BOUND,
                "the session did not end; the screen ends with:\n{}",
                tail(&self.text())
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.shown.lock().expect("screen").len()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The end of a screen, for failure messages.
fn tail(t: &str) -> String {
    let cut = t.len().saturating_sub(2000);
    let cut = (cut..t.len())
        .find(|i| t.is_char_boundary(*i))
        .unwrap_or(t.len());
    format!("{:?}", &t[cut..])
}

/// What the REPL shows once a line passed MAX_LINE.
fn helper_hint() -> &'static str {
    "over the longest command: refused"
}

pub(super) fn skip(test: &str) -> bool {
    let missing = std::path::Path::new("/dev/ptmx")
        .exists()
        .then_some(())
        .map_or(
            Some("it needs /dev/ptmx (pseudo-terminals)".to_string()),
            |()| None,
        );
    !oracle::run_or_skip(test, missing)
}

/// The REPL: a 100,000-character paste, then Ctrl-C, then a command. The paste is read
/// through (the line stops at MAX_LINE and says it is refused), the Ctrl-C drops it, and
/// the command runs, all within the bound.
#[test]
fn repl_reads_a_long_paste_through_and_honours_ctrl_c_behind_it() {
    if skip("repl_reads_a_long_paste_through_and_honours_ctrl_c_behind_it") {
        return;
    }
    let mut s = Session::start(&["repl"]);
    s.wait_for("prompt", 0, |t| {
        t.contains("Ctrl-D quits") && t.contains("]> ")
    });
    std::thread::sleep(Duration::from_millis(200));
    let mark = s.len();
    let start = Instant::now();
    let mut bytes = paste(100_000);
    bytes.push(0x03);
    let typing = s.type_in(bytes);
    // Honoured: the line was refused as it came, then a new prompt after the Ctrl-C.
    s.wait_for("a prompt after Ctrl-C", mark, |t| {
        t.rfind(helper_hint())
            .is_some_and(|i| t[i..].contains("]> "))
    });
    let took = start.elapsed();
    let mut stdin = typing.join().expect("typing");
    std::thread::sleep(Duration::from_millis(200));
    let mark = s.len();
    stdin.write_all(b"echo after-the-paste\r").expect("typed");
    s.stdin = Some(stdin);
    s.wait_for("the command after Ctrl-C", mark, |t| {
        t.contains("\nafter-the-paste")
    });
    let shown = s.text();
    let shown = &shown[mark..];
    assert!(
        !shown.contains("any command may be"),
        "Ctrl-C dropped the line: nothing was entered"
    );
    assert!(took < BOUND, "{took:?}");
    eprintln!("repl: 100,000-character paste, then Ctrl-C honoured: {took:?}");
    s.stdin
        .as_mut()
        .expect("stdin")
        .write_all(b"quit\r")
        .expect("typed");
    s.wait_exit();
}

/// The REPL: a 10,000-character line entered is refused whole, with the message, and
/// kept out of the history (Up brings back the line before it).
#[test]
fn repl_refuses_a_line_longer_than_any_command() {
    if skip("repl_refuses_a_line_longer_than_any_command") {
        return;
    }
    let mut s = Session::start(&["repl"]);
    s.wait_for("prompt", 0, |t| {
        t.contains("Ctrl-D quits") && t.contains("]> ")
    });
    std::thread::sleep(Duration::from_millis(200));
    let mut stdin = s.stdin.take().expect("stdin");
    stdin.write_all(b"echo before\r").expect("typed");
    s.stdin = Some(stdin);
    // Typed once the next prompt is up (between two prompts the terminal is in its
    // line mode, which holds 4,095 characters of a line and drops the rest).
    s.wait_for("echo and a prompt", 0, |t| {
        t.find("\nbefore").is_some_and(|i| t[i..].contains("]> "))
    });
    std::thread::sleep(Duration::from_millis(200));
    let mark = s.len();
    let start = Instant::now();
    let mut bytes = paste(10_000);
    bytes.push(b'\r');
    let typing = s.type_in(bytes);
    s.wait_for("the refusal", mark, |t| t.contains("any command may be"));
    let took = start.elapsed();
    let mut stdin = typing.join().expect("typing");
    let shown = s.text()[mark..].to_string();
    assert!(
        shown.contains(&format!(
            "longer than any command may be (at most {MAX_LINE} characters), refused"
        )),
        "{}",
        tail(&shown)
    );
    assert!(!shown.contains("unknown command"), "nothing was run");
    eprintln!("repl: 10,000-character line entered and refused: {took:?}");
    // The history holds `echo before`, not the refused line.
    let mark = s.len();
    stdin.write_all(b"\x1b[A\r").expect("typed");
    s.wait_for("the line from history", mark, |t| t.contains("\nbefore"));
    stdin.write_all(b"quit\r").expect("typed");
    s.stdin = Some(stdin);
    s.wait_exit();
}

/// The dashboard: `:` then a 100,000-character paste, then Ctrl-C: the dashboard quits
/// within the bound (it applies what is queued before it draws, and a Ctrl-C anywhere in
/// the queue first).
#[test]
fn dashboard_honours_ctrl_c_behind_a_long_paste() {
    if skip("dashboard_honours_ctrl_c_behind_a_long_paste") {
        return;
    }
    let mut s = Session::start(&["dash"]);
    s.wait_for("the dashboard", 0, |t| t.contains("quit"));
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let mut bytes = b":".to_vec();
    bytes.extend(paste(100_000));
    bytes.push(0x03);
    let _typing = s.type_in(bytes);
    s.wait_exit();
    let took = start.elapsed();
    assert!(took < BOUND, "{took:?}");
    eprintln!("dashboard: 100,000-character paste + Ctrl-C, until it exits: {took:?}");
}

/// The dashboard: a 10,000-character line typed and entered is refused and nothing runs;
/// the next command runs at once. (The message itself is checked in process below: the
/// screen's diffs may cut a word of it.)
#[test]
fn dashboard_refuses_a_line_longer_than_any_command() {
    if skip("dashboard_refuses_a_line_longer_than_any_command") {
        return;
    }
    let mut s = Session::start(&["dash"]);
    s.wait_for("the dashboard", 0, |t| t.contains("quit"));
    std::thread::sleep(Duration::from_millis(300));
    let mark = s.len();
    let start = Instant::now();
    let mut bytes = b":".to_vec();
    bytes.extend(paste(10_000));
    bytes.extend_from_slice(b"\r:echo after-the-paste\r");
    let _typing = s.type_in(bytes);
    s.wait_for("the command after the long line", mark, |t| {
        t.contains("after-the-paste")
    });
    let took = start.elapsed();
    let shown = s.text()[mark..].to_string();
    assert!(!shown.contains("unknown command"), "nothing was run");
    eprintln!("dashboard: 10,000-character line refused, then a command: {took:?}");
}

/// The dashboard's command line stops at MAX_LINE: the character past it is refused with
/// the message in the flash line, every later one dropped until Enter, which runs nothing.
#[test]
fn the_dashboards_command_line_stops_at_max_line() {
    use cni_csi_lab::tui::keymap::Edit;
    use cni_csi_lab::tui::{Action, App, Theme};
    let mut app = App::new(crate::common::lab(), Theme::standard());
    let _ = app.update(Action::Resize(120, 40));
    for c in std::iter::once(':').chain(std::iter::repeat_n('x', 10_000)) {
        let mut next = Some(Action::Edit(Edit::Insert(c)));
        while let Some(a) = next {
            next = app.update(a);
        }
    }
    assert_eq!(app.ui.prompt.text.len(), MAX_LINE);
    assert!(app.ui.prompt.refused);
    let flash = app
        .ui
        .flash
        .as_ref()
        .map(|f| f.text.clone())
        .unwrap_or_default();
    assert_eq!(flash, lab_engine::command::typed_line_too_long());
    let pods_before = app.desk.lab.cluster().pods.len();
    let mut next = Some(Action::Submit);
    while let Some(a) = next {
        next = app.update(a);
    }
    assert!(app.ui.prompt.text.is_empty() && !app.ui.prompt.refused);
    assert_eq!(app.desk.lab.cluster().pods.len(), pods_before);
}
