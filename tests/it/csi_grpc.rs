//! `cni-csi-lab csi serve --socket PATH` driven by a client no one here wrote: Python
//! `grpcio` with server reflection (tests/grpc/csi_sanity.py) runs the csi-sanity cases the
//! driver claims over the unix socket. Without python3 and those packages the test is
//! skipped with one line (under `CI=true` it fails: `.ci/run` installs them).

use crate::oracle;

use std::io::{BufRead, BufReader, Read};
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
    let _ = std::fs::remove_dir_all(&dir);
}

/// `csi serve` typed into the dashboard: the socket opens, the calls a client makes run on
/// the dashboard's ticks and show in its output and call log, a second `csi serve` is
/// refused, `csi serve stop` removes the socket, and quitting with it open removes it too.
#[test]
fn the_dashboard_serves_the_socket_while_it_runs() {
    use cni_csi_lab::tui::{Action, App, Theme};
    if !oracle::run_or_skip(
        "the_dashboard_serves_the_socket_while_it_runs",
        python_client_missing(),
    ) {
        return;
    }
    let dir = temp_dir("dash");
    let socket = dir.join("csi.sock");
    let mut app = App::new(crate::common::lab(), Theme::standard());
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
        app.desk.lab.calls.iter().any(|(_, c)| c
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
