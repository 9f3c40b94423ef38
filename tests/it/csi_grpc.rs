//! `cni-csi-lab csi serve --socket PATH` driven by a client no one here wrote: Python
//! `grpcio` with server reflection (tests/grpc/csi_sanity.py) runs the csi-sanity cases the
//! driver claims over the unix socket. Without python3 and those packages the test is
//! skipped with one line (under `CI=true` it fails: `.ci/run` installs them).

use crate::oracle;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PIP: &str = "pip install grpcio grpcio-reflection protobuf";

fn python_client_missing() -> Option<String> {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import grpc, grpc_reflection.v1alpha.proto_reflection_descriptor_database, google.protobuf.json_format",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| {
        format!("python3 with grpcio, grpcio-reflection and protobuf missing (install: {PIP})")
    })
}

/// A fresh directory for one test's socket.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cni-csi-lab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Start `csi serve` and wait for its banner line and its socket.
fn serve(socket: &Path, extra: &[&str]) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(["csi", "serve", "--socket"])
        .arg(socket)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut banner = String::new();
    out.read_line(&mut banner).expect("a banner");
    assert!(banner.starts_with("serving hostpath.csi.lab"), "{banner:?}");
    let start = Instant::now();
    while !socket.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(socket.exists(), "no socket at {}", socket.display());
    (child, out)
}

/// Send `signal` to the server and return its exit code and the rest of its stdout.
fn stop(
    mut child: Child,
    mut out: BufReader<std::process::ChildStdout>,
    signal: &str,
) -> (Option<i32>, String) {
    let killed = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = child.wait().expect("the server ends");
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("stdout");
    (status.code(), rest)
}

#[test]
fn python_grpcio_client_runs_the_sanity_cases_over_the_socket() {
    if !oracle::run_or_skip(
        "python_grpcio_client_runs_the_sanity_cases_over_the_socket",
        python_client_missing(),
    ) {
        return;
    }
    let dir = temp_dir("grpc");
    let socket = dir.join("csi.sock");
    let (child, out) = serve(&socket, &["--node", "node-2"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grpc/csi_sanity.py");
    let client = Command::new("python3")
        .arg(&script)
        .arg(&socket)
        .arg("node-2")
        .output()
        .expect("python3 runs");
    let (code, log) = stop(child, out, "TERM");
    let client_out = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "the client failed:\n{client_out}\n{}\nserver:\n{log}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert!(client_out.contains("all cases passed"), "{client_out}");
    // Every call that reached the lab printed its call-log line, as the lab prints it.
    for want in [
        "GetPluginInfo",
        "ALREADY_EXISTS (6)",
        "INVALID_ARGUMENT (3): Name missing in request",
        "ControllerPublishVolume",
        "NodeStageVolume",
        "NodeUnstageVolume",
        "DeleteVolume",
        "/csi.v1.Controller/NoSuchMethod: UNIMPLEMENTED (12)",
        "/csi.v9.Nowhere/Probe: UNIMPLEMENTED (12): unknown service csi.v9.Nowhere",
        "/csi.v1.Controller/DeleteVolume: INTERNAL (13): grpc: error unmarshalling request",
    ] {
        assert!(
            log.contains(want),
            "no {want:?} in the server's output:\n{log}"
        );
    }
    assert_eq!(code, Some(143), "SIGTERM ends it with 128+15:\n{log}");
    assert!(!socket.exists(), "the socket is removed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_stops_the_server_and_removes_the_socket() {
    let dir = temp_dir("grpc-int");
    let socket = dir.join("csi.sock");
    let (child, out) = serve(&socket, &[]);
    let (code, _) = stop(child, out, "INT");
    assert_eq!(code, Some(130));
    assert!(!socket.exists(), "the socket is removed");
    // A stale socket file (its server gone) is replaced, as CSI drivers do.
    let stale = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    drop(stale);
    assert!(socket.exists());
    let (child, out) = serve(&socket, &[]);
    let (code, _) = stop(child, out, "TERM");
    assert_eq!(code, Some(143));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_be_served_is_refused() {
    let dir = temp_dir("grpc-bad");
    let file = dir.join("not-a-socket");
    std::fs::write(&file, "keep me").expect("write");
    let bin = env!("CARGO_BIN_EXE_cni-csi-lab");
    let o = Command::new(bin)
        .args(["csi", "serve", "--socket"])
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a socket"));
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "keep me");
    let o = Command::new(bin)
        .args(["csi", "serve", "--node", "node-9", "--socket"])
        .arg(dir.join("s.sock"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("node \"node-9\" not found"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A socket a live server holds is refused, and that server goes on serving.
    let socket = dir.join("live.sock");
    let (child, out) = serve(&socket, &[]);
    let o = Command::new(bin)
        .args(["csi", "serve", "--socket"])
        .arg(&socket)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "a server is already listening on {}: stop it, or give another --socket path",
            socket.display()
        )),
        "{err}"
    );
    assert!(
        UnixStream::connect(&socket).is_ok(),
        "the first server serves"
    );
    let (code, _) = stop(child, out, "TERM");
    assert_eq!(code, Some(143));
    assert!(!socket.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server removes its socket path at exit only while it is still the socket it bound:
/// a plain file put there after it started is left as it is.
#[test]
fn a_file_put_at_the_socket_path_after_start_survives_stop() {
    let dir = temp_dir("grpc-file");
    let socket = dir.join("csi.sock");
    let (child, out) = serve(&socket, &[]);
    std::fs::remove_file(&socket).expect("rm");
    std::fs::write(&socket, "keep me").expect("write");
    let (code, rest) = stop(child, out, "TERM");
    assert_eq!(code, Some(143));
    assert_eq!(std::fs::read_to_string(&socket).expect("kept"), "keep me");
    assert!(
        rest.contains(&format!(
            "stopped serving on unix://{0} ({0} is no longer the socket it bound, so it is left in place)",
            socket.display()
        )),
        "{rest}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Another server that bound the same path after the first one's socket was removed keeps
/// its socket when the first one exits: its clients can still connect.
#[test]
fn a_second_servers_live_socket_survives_the_first_ones_exit() {
    let dir = temp_dir("grpc-second");
    let socket = dir.join("csi.sock");
    let (first, first_out) = serve(&socket, &[]);
    std::fs::remove_file(&socket).expect("rm");
    let (second, second_out) = serve(&socket, &["--node", "node-2"]);
    let (code, _) = stop(first, first_out, "TERM");
    assert_eq!(code, Some(143));
    assert!(
        UnixStream::connect(&socket).is_ok(),
        "the second server's socket is still there and served"
    );
    let (code, rest) = stop(second, second_out, "TERM");
    assert_eq!(code, Some(143));
    assert!(!socket.exists(), "the second server removes its own socket");
    assert!(rest.contains("(the socket is removed)"), "{rest}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `csi serve` typed into the dashboard: the socket opens, the calls a client makes run on
/// the dashboard's ticks and show in its output and call log, a second `csi serve` is
/// refused, `csi serve stop` removes the socket, and quitting with it open removes it too.
#[test]
fn the_dashboard_serves_the_socket_while_it_runs() {
    use cni_csi_lab::tui::{Action, App, Native, Theme};
    if !oracle::run_or_skip(
        "the_dashboard_serves_the_socket_while_it_runs",
        python_client_missing(),
    ) {
        return;
    }
    let dir = temp_dir("dash");
    let socket = dir.join("csi.sock");
    let mut app =
        App::new(crate::common::lab(), Theme::standard()).with_host(Box::new(Native::default()));
    let output = |app: &App| {
        app.ui
            .output
            .iter()
            .map(|l| l.text())
            .collect::<Vec<_>>()
            .join("\n")
    };
    app.run_command(&format!(
        "csi serve --socket {} --node node-2",
        socket.display()
    ));
    assert!(socket.exists(), "{}", output(&app));
    assert!(
        output(&app)
            .contains("serving hostpath.csi.lab (csi.v1 Identity, Controller, Node as node-2)"),
        "{}",
        output(&app)
    );
    // The client blocks until a tick runs its call: run it beside the ticks.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grpc/csi_sanity.py");
    let mut client = Command::new("python3")
        .arg(&script)
        .arg(&socket)
        .arg("node-2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let start = Instant::now();
    let status = loop {
        let _ = app.update(Action::Tick);
        if let Some(s) = client.try_wait().expect("the client runs") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the client did not finish"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut client_out = String::new();
    client
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut client_out)
        .expect("client output");
    assert!(status.success(), "{client_out}\n{}", output(&app));
    assert!(client_out.contains("all cases passed"), "{client_out}");
    let shown = output(&app);
    for want in [
        "NodeStageVolume",
        "INVALID_ARGUMENT (3): Name missing in request",
        "/csi.v9.Nowhere/Probe: UNIMPLEMENTED (12): unknown service csi.v9.Nowhere",
    ] {
        assert!(
            shown.contains(want),
            "no {want:?} in the output pane:\n{shown}"
        );
    }
    assert!(
        app.desk.lab.calls().iter().any(|(_, c)| c
            .csi()
            .is_some_and(|(_, call)| call.rpc == "NodeStageVolume")),
        "the calls are in the call log"
    );
    app.run_command("csi serve --socket /tmp/elsewhere.sock");
    assert!(
        output(&app).contains("already serving on unix://"),
        "{}",
        output(&app)
    );
    app.run_command("csi serve stop");
    assert!(!socket.exists(), "stop removes the socket");
    assert!(output(&app).contains("stopped serving on unix://"));
    app.run_command("csi serve stop");
    assert!(
        output(&app).ends_with("not serving: `csi serve --socket PATH` starts serving the driver")
    );
    // Quitting with the socket open removes it.
    app.run_command(&format!("csi serve --socket {}", socket.display()));
    assert!(socket.exists());
    drop(app);
    assert!(
        !socket.exists(),
        "dropping the dashboard removes the socket"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script or a piped session cannot keep a socket open: `csi serve` there says where it
/// runs, and the line changes nothing.
#[test]
fn csi_serve_in_a_script_says_where_it_runs() {
    let out = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(["run", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(b"csi serve --socket /tmp/never.sock\n")?;
            c.wait_with_output()
        })
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("csi serve runs in an interactive session"),
        "{err}"
    );
    assert!(!Path::new("/tmp/never.sock").exists());
}

/// How the names tests/grpc/hostile_names.py sends (an OSC that retitles the window, a CSI
/// that clears the screen, and the one-byte C1 CSI) must read on a terminal: escaped.
const HOSTILE_SHOWN: &str = r"v\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}2J";

/// Run tests/grpc/hostile_names.py against `socket`: three calls whose names are escape
/// sequences (CreateVolume, CreateVolume without capabilities, DeleteVolume).
fn hostile_client(socket: &Path) -> Child {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grpc/hostile_names.py");
    Command::new("python3")
        .arg(&script)
        .arg(socket)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs")
}

/// A child process that is killed if the test ends before it does.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The control characters in `text` but newline, tab and (a terminal's line ending) CR.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        .collect()
}

#[test]
fn csi_serve_prints_what_a_client_sent_escaped() {
    if !oracle::run_or_skip(
        "csi_serve_prints_what_a_client_sent_escaped",
        python_client_missing(),
    ) {
        return;
    }
    let dir = temp_dir("grpc-esc");
    let socket = dir.join("csi.sock");
    let (child, out) = serve(&socket, &[]);
    let client = hostile_client(&socket).wait_with_output().expect("client");
    let (_, log) = stop(child, out, "TERM");
    assert!(
        client.status.success(),
        "{}{}",
        String::from_utf8_lossy(&client.stdout),
        String::from_utf8_lossy(&client.stderr)
    );
    assert_eq!(log.matches(HOSTILE_SHOWN).count(), 3, "{log}");
    assert_eq!(raw_controls(&log), Vec::<char>::new(), "{log:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `csi serve` typed in the REPL (`cni-csi-lab repl` on a terminal: a pseudo-terminal made
/// by `script`) prints each call's lines above the prompt; a client's escape sequences
/// arrive there escaped, never raw (the prompt's own colours and cursor moves are the only
/// escape sequences on the terminal).
#[test]
fn csi_serve_in_the_repl_prints_what_a_client_sent_escaped() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let missing = python_client_missing().or_else(|| oracle::missing(false, &["script"], &[]));
    if !oracle::run_or_skip(
        "csi_serve_in_the_repl_prints_what_a_client_sent_escaped",
        missing,
    ) {
        return;
    }
    let dir = temp_dir("repl-esc");
    let socket = dir.join("csi.sock");
    let repl = format!("'{}' repl", env!("CARGO_BIN_EXE_cni-csi-lab"));
    let mut session = KillOnDrop(
        Command::new("script")
            .args(["-qfec", &repl, "/dev/null"])
            .env("TERM", "xterm")
            .env("CNI_CSI_LAB_HISTORY", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script runs"),
    );
    let shown = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let shown = Arc::clone(&shown);
        let mut stdout = session.0.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                shown.lock().expect("output").extend_from_slice(&buf[..n]);
            }
        })
    };
    let text = || String::from_utf8_lossy(&shown.lock().expect("output")).into_owned();
    // Each line is typed once the session has answered the one before (a line editor may
    // drop what is typed while it sets the terminal up).
    let wait_for = |what: &str, done: &dyn Fn(&str) -> bool| {
        let start = Instant::now();
        while !done(&text()) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no {what}; the session shows:\n{}",
                text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut stdin = session.0.stdin.take().expect("stdin");
    wait_for("prompt", &|t| {
        t.contains("Ctrl-D quits") && t.contains("]> ")
    });
    writeln!(stdin, "csi serve --socket {}", socket.display()).expect("typed");
    wait_for("banner", &|t| t.contains("calls show here as they arrive"));
    assert!(socket.exists(), "no socket; the session shows:\n{}", text());
    let client = hostile_client(&socket).wait_with_output().expect("client");
    assert!(client.status.success(), "{client:?}\n{}", text());
    wait_for("call-log lines", &|t| t.matches(HOSTILE_SHOWN).count() >= 3);
    writeln!(stdin, "csi serve stop").expect("typed");
    wait_for("stop", &|t| t.contains("stopped serving on unix://"));
    writeln!(stdin, "quit").expect("typed");
    let start = Instant::now();
    let ended = loop {
        if let Some(status) = session.0.try_wait().expect("the session runs") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            panic!("the session did not quit:\n{}", text());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    reader.join().expect("reader");
    let shown = text();
    assert!(ended.success(), "{shown}");
    assert_eq!(shown.matches(HOSTILE_SHOWN).count(), 3, "{shown:?}");
    for raw in ["pwned\x07", "\x1b[2J", "\u{9b}"] {
        assert!(
            !shown.contains(raw),
            "{raw:?} reached the terminal:\n{shown:?}"
        );
    }
    assert!(shown.contains("stopped serving on unix://"), "{shown}");
    assert!(!socket.exists(), "the socket is removed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `csi serve` typed in the dashboard: the call-log lines of a client's escape sequences
/// show escaped in the output pane, and no cell of the drawn screen holds a control
/// character.
#[test]
fn csi_serve_in_the_dashboard_shows_what_a_client_sent_escaped() {
    use cni_csi_lab::tui::{self, Action, App, Native, Theme};
    if !oracle::run_or_skip(
        "csi_serve_in_the_dashboard_shows_what_a_client_sent_escaped",
        python_client_missing(),
    ) {
        return;
    }
    let dir = temp_dir("dash-esc");
    let socket = dir.join("csi.sock");
    let (w, h) = (240, 60);
    let mut app =
        App::new(crate::common::lab(), Theme::standard()).with_host(Box::new(Native::default()));
    let _ = app.update(Action::Resize(w, h));
    app.run_command(&format!("csi serve --socket {}", socket.display()));
    assert!(socket.exists());
    let mut client = hostile_client(&socket);
    let start = Instant::now();
    let status = loop {
        let _ = app.update(Action::Tick);
        if let Some(s) = client.try_wait().expect("the client runs") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the client hangs"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success());
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    tui::draw(&mut terminal, &mut app).expect("drawn");
    let buf = terminal.backend().buffer();
    let mut screen = String::new();
    for y in 0..h {
        for x in 0..w {
            let symbol = buf[(x, y)].symbol();
            assert_eq!(raw_controls(symbol), Vec::<char>::new(), "cell ({x}, {y})");
            screen.push_str(symbol);
        }
        screen.push('\n');
    }
    assert!(screen.contains(HOSTILE_SHOWN), "{screen}");
    app.run_command("csi serve stop");
    let _ = std::fs::remove_dir_all(&dir);
}

/// HTTP/2 by hand, enough for a handshake and one unary call: what the connection tests
/// need without a gRPC library (and with connections left idle on purpose).
mod h2 {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).expect("small").to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], kind, flags];
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    /// The next frame's type and stream.
    fn read_frame(s: &mut UnixStream) -> std::io::Result<(u8, u32)> {
        let mut head = [0u8; 9];
        s.read_exact(&mut head)?;
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload)?;
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        Ok((head[3], stream))
    }

    /// A connection that has done the handshake (preface and SETTINGS both ways).
    pub fn connect(socket: &Path) -> std::io::Result<UnixStream> {
        let mut s = UnixStream::connect(socket)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")?;
        s.write_all(&frame(4, 0, 0, &[]))?;
        if read_frame(&mut s)?.0 != 4 {
            return Err(std::io::Error::other("no SETTINGS from the server"));
        }
        s.write_all(&frame(4, 1, 0, &[]))?;
        Ok(s)
    }

    /// Call Identity/Probe on a new connection; `Ok` once its answer's DATA frame arrives.
    pub fn probe(socket: &Path) -> std::io::Result<()> {
        let mut s = connect(socket)?;
        let mut block = Vec::new();
        for (name, value) in [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/csi.v1.Identity/Probe"),
            (":authority", "localhost"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ] {
            block.push(0); // a literal, not indexed, with its name
            for text in [name, value] {
                block.push(u8::try_from(text.len()).expect("short"));
                block.extend(text.as_bytes());
            }
        }
        s.write_all(&frame(1, 0x4, 1, &block))?;
        s.write_all(&frame(0, 0x1, 1, &[0; 5]))?;
        while read_frame(&mut s)? != (0, 1) {}
        Ok(())
    }

    /// Whether the server closed `s` within `within`.
    pub fn closed_within(s: &mut UnixStream, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut buf = [0u8; 1024];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            s.set_read_timeout(Some(left)).expect("timeout");
            match s.read(&mut buf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return false;
                }
                Err(_) => return true,
            }
        }
    }
}

/// More idle connections than the cap (MAX_CONNECTIONS) do not keep a new client out: each
/// one past the cap closes the one idle longest, and the new client's call is answered.
#[test]
fn idle_connections_beyond_the_cap_do_not_keep_a_new_client_out() {
    let dir = temp_dir("grpc-cap");
    let socket = dir.join("csi.sock");
    let (child, out) = serve(&socket, &[]);
    let cap = cni_csi_lab::csi_serve::MAX_CONNECTIONS;
    let mut idle: Vec<UnixStream> = (0..cap + 36)
        .map(|i| h2::connect(&socket).unwrap_or_else(|e| panic!("connection {i}: {e}")))
        .collect();
    let start = Instant::now();
    h2::probe(&socket).expect("the new client is answered");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(
        h2::closed_within(&mut idle[0], Duration::from_secs(5)),
        "the oldest idle connection made room"
    );
    let newest = idle.last_mut().expect("connections");
    assert!(!h2::closed_within(newest, Duration::from_millis(200)));
    let (code, log) = stop(child, out, "TERM");
    assert_eq!(code, Some(143));
    assert!(log.contains("Probe"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Wait for `child` to end, at most `within`; kill it and fail if it does not.
fn ends_within(child: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the server runs") {
            return status;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("{what}: still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM ends the server at once even while a client holds a connection on which it
/// never sent a byte (tonic's graceful stop would wait for it forever).
#[test]
fn stopping_does_not_wait_for_a_client_that_sends_nothing() {
    let dir = temp_dir("grpc-stall");
    let socket = dir.join("csi.sock");
    let (mut child, _out) = serve(&socket, &[]);
    let _silent = UnixStream::connect(&socket).expect("connect");
    let _idle = h2::connect(&socket).expect("handshake");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = ends_within(
        &mut child,
        Duration::from_secs(10),
        "csi serve after SIGTERM",
    );
    assert_eq!(status.code(), Some(143));
    assert!(!socket.exists(), "the socket is removed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CPU time a process has used (user and system), in clock ticks (/proc/PID/stat).
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // After the command name, which ends with ')': state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..]
        .split(' ')
        .collect();
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// Out of file descriptors (`ulimit -n 16`, 200 connections that never send a byte) the
/// server neither spins on the failing accept nor keeps new clients out: it backs off,
/// closes the connection idle longest to free a descriptor, caps itself below the limit,
/// and a new client's call is answered. (Before: a core at 100% and clients timing out.)
#[cfg(target_os = "linux")]
#[test]
fn out_of_file_descriptors_the_server_backs_off_and_still_serves() {
    let dir = temp_dir("grpc-emfile");
    let socket = dir.join("csi.sock");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 16 && exec '{}' csi serve --socket '{}'",
            env!("CARGO_BIN_EXE_cni-csi-lab"),
            socket.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut banner = String::new();
    out.read_line(&mut banner).expect("a banner");
    assert!(banner.starts_with("serving hostpath.csi.lab"), "{banner:?}");
    let held: Vec<UnixStream> = (0..200)
        .map(|_| UnixStream::connect(&socket).expect("connect (queued if not accepted)"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(child.id());
    let span = Duration::from_secs(2);
    std::thread::sleep(span);
    let used = cpu_ticks(child.id()) - before;
    let hz: u64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100);
    // A spinning accept loop uses the whole span; a quarter of it is far above a backoff.
    assert!(
        used * 4 < hz * span.as_secs(),
        "{used} ticks of CPU in {span:?} ({hz} a second)"
    );
    let start = Instant::now();
    h2::probe(&socket).expect("a new client is answered");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    drop(held);
    let (code, log) = stop(child, out, "TERM");
    assert_eq!(code, Some(143), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
