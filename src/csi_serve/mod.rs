//! `cni-csi-lab csi serve --socket PATH [--node NODE]`: the lab's CSI driver
//! (`hostpath.csi.lab`) on a real gRPC unix socket, as a CSI driver serves its sidecars and
//! kubelet, while the lab runs in this process.
//!
//! Two threads. A tokio current-thread runtime runs the tonic server ([`grpc`]); it decodes
//! each call and sends it to the thread that owns the [`Lab`] (the caller of [`run`]), which
//! runs the calls one at a time in arrival order through [`Lab::csi_remote_call`] (the path
//! of `csi call`: same codes and messages, the call log and the wire log, the journal) and
//! prints each call-log line as it lands. The engine knows nothing of tokio or tonic.
//!
//! SIGINT, SIGTERM and SIGHUP stop the server and remove the socket; the exit status is then
//! 128 + the signal's number, as for the other front ends (see `util::signals`).

pub mod grpc;

use crate::Lab;
use grpc::Job;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// Where and as which node to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The unix socket to create (a stale socket file there is replaced, as CSI drivers do).
    pub socket: PathBuf,
    /// The node whose node plugin answers the Node service (default: the lab's first node).
    pub node: Option<String>,
}

/// How often the lab's thread looks for a signal while no call arrives.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Serve until a termination signal; returns the exit status (128 + the signal), or an
/// error when the socket cannot be served.
pub fn run(lab: &mut Lab, opts: &ServeOptions, out: &mut dyn Write) -> Result<u8, String> {
    let node = match &opts.node {
        Some(n) if !lab.nodes.contains_key(n) => {
            return Err(format!(
                "node {n:?} not found (the lab has: {})",
                node_names(lab)
            ));
        }
        Some(n) => Some(n.clone()),
        None => lab.nodes.keys().next().cloned(),
    };
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in crate::util::signals::SIGNALS {
        signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
            .map_err(|e| format!("cannot watch for signals: {e}"))?;
    }
    let listener = bind(&opts.socket)?;
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::Builder::new()
        .name("grpc".into())
        .spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all() // io for the socket, time for the clients' grpc-timeout
                .build()
                .map_err(|e| format!("cannot start the gRPC runtime: {e}"))?;
            rt.block_on(async move {
                let listener = tokio::net::UnixListener::from_std(listener)
                    .map_err(|e| format!("cannot listen: {e}"))?;
                grpc::serve(listener, jobs_tx, async {
                    let _ = stop_rx.await;
                })
                .await
            })
        })
        .map_err(|e| format!("cannot start the gRPC thread: {e}"))?;
    let _ = writeln!(
        out,
        "serving {} (csi.v1 Identity, Controller, Node{}) on unix://{} with server reflection; Ctrl-C stops",
        crate::csi::DRIVER_NAME,
        node.as_deref()
            .map(|n| format!(" as {n}"))
            .unwrap_or_default(),
        opts.socket.display()
    );
    let _ = out.flush();
    let ended = loop {
        match jobs_rx.recv_timeout(SIGNAL_POLL) {
            Ok(job) => handle(lab, node.as_deref(), job, out),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break None,
        }
        let sig = signal.load(Ordering::Relaxed);
        if sig != 0 {
            break i32::try_from(sig).ok();
        }
    };
    let _ = stop_tx.send(());
    let _ = std::fs::remove_file(&opts.socket);
    match ended {
        Some(sig) => Ok(crate::util::signals::exit_status(sig)),
        None => match server.join() {
            Ok(Err(e)) => Err(e),
            _ => Err("the gRPC server stopped".to_string()),
        },
    }
}

/// Run one job on the lab and print what it logged.
fn handle(lab: &mut Lab, node: Option<&str>, job: Job, out: &mut dyn Write) {
    match job {
        Job::Call {
            path,
            request,
            reply,
        } => {
            let call = lab.csi_remote_call(&path, node, &request);
            if call.calls.is_empty() {
                if let Err(s) = &call.reply {
                    let _ = writeln!(out, "  grpc  {path}: {s}");
                }
            }
            for line in &call.calls {
                let _ = writeln!(out, "{}", line.text());
            }
            let _ = reply.send(call.reply);
        }
        Job::Rejected { path, status } => {
            let _ = writeln!(out, "  grpc  {path}: {status}");
        }
    }
    let _ = out.flush();
}

fn node_names(lab: &Lab) -> String {
    if lab.nodes.is_empty() {
        return "no nodes".to_string();
    }
    lab.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
}

/// Bind the socket. A socket file left by a server that is gone is removed first (as
/// csi-driver-host-path does before it listens); a live server or a file that is not a
/// socket is an error, never overwritten.
fn bind(path: &Path) -> Result<std::os::unix::net::UnixListener, String> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!(
                "{} exists and is not a socket: give another --socket path",
                path.display()
            ));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!(
                "a server is already listening on {}",
                path.display()
            ));
        }
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))?;
    }
    let listener = std::os::unix::net::UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    Ok(listener)
}
