//! `cni-csi-lab csi serve --socket PATH [--node NODE]`: the lab's CSI driver
//! (`hostpath.csi.lab`) on a real gRPC unix socket, as a CSI driver serves its sidecars and
//! kubelet, while the lab runs in this process.
//!
//! Two threads. A tokio current-thread runtime runs the tonic server ([`grpc`]) on the
//! connections its own accept loop takes, within caps ([`MAX_CONNECTIONS`],
//! [`IDLE_TIMEOUT`], keepalive, [`ACCEPT_BACKOFF`]); it decodes each call and sends it to
//! the thread that owns the [`Lab`] (the caller of [`run`]), which runs the calls one at a
//! time in arrival order through [`Lab::csi_remote_call`] (the path of `csi call`: same
//! codes and messages, the call log and the wire log, the journal) and prints each call-log
//! line as it lands. The engine knows nothing of tokio or tonic.
//!
//! SIGINT, SIGTERM and SIGHUP stop the server and remove the socket (if the path is still
//! the socket it bound); the exit status is then 128 + the signal's number, as for the
//! other front ends (see `util::signals`).

mod authority;
mod conn;
pub mod grpc;
mod hpack;

pub use conn::{
    ACCEPT_BACKOFF, IDLE_TIMEOUT, KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT, MAX_CONNECTIONS,
};

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

/// A running gRPC server: its thread, the calls it decoded and has not yet handed to the
/// lab, and the socket it removes when stopped (or dropped). The thread that owns the lab
/// takes the calls with [`Server::next_job`] or [`Server::try_job`] and runs them with
/// [`handle`]; `cni-csi-lab csi serve` does so until a signal, the REPL on a thread of its
/// own, the dashboard on every tick (`csi serve` and `csi serve stop` in both).
pub struct Server {
    jobs: mpsc::Receiver<Job>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
    bound: Option<Bound>,
    /// The socket served.
    pub socket: PathBuf,
    /// The node whose node plugin answers the Node service.
    pub node: Option<String>,
}

impl Server {
    /// Check the node, bind the socket and start the server's thread.
    pub fn start(lab: &Lab, opts: &ServeOptions) -> Result<Server, String> {
        let node = match &opts.node {
            Some(n) if !lab.has_node(n) => {
                return Err(format!(
                    "node {n:?} not found (the lab has: {})",
                    node_names(lab)
                ));
            }
            Some(n) => Some(n.clone()),
            None => lab.node_names().next().map(str::to_string),
        };
        let (listener, bound) = bind(&opts.socket)?;
        let (jobs_tx, jobs) = mpsc::channel::<Job>();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
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
            .map_err(|e| {
                bound.remove();
                format!("cannot start the gRPC thread: {e}")
            })?;
        Ok(Server {
            jobs,
            stop: Some(stop),
            thread: Some(thread),
            bound: Some(bound),
            socket: opts.socket.clone(),
            node,
        })
    }

    /// The line said when serving starts.
    pub fn banner(&self) -> String {
        format!(
            "serving {} (csi.v1 Identity, Controller, Node{}) on unix://{} with server reflection",
            lab_engine::csi::DRIVER_NAME,
            self.node
                .as_deref()
                .map(|n| format!(" as {n}"))
                .unwrap_or_default(),
            self.socket.display()
        )
    }

    /// The next call, waiting at most `wait`; `Err` when the server has stopped (its thread
    /// ended: the error it ended with).
    pub fn next_job(&self, wait: Duration) -> Result<Option<Job>, String> {
        match self.jobs.recv_timeout(wait) {
            Ok(job) => Ok(Some(job)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err("the gRPC server stopped".to_string()),
        }
    }

    /// A call that has arrived, if any (never waits).
    pub fn try_job(&self) -> Option<Job> {
        self.jobs.try_recv().ok()
    }

    /// Stop serving: the server thread ends, and the socket file is removed if it is still
    /// the socket this server bound. Returns what to say about it ([`stopped`] and what
    /// became of the file), after the error the server thread ended with if it failed.
    pub fn stop(mut self) -> Result<String, String> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<String, String> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let ended = match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the gRPC server thread panicked".to_string()),
            None => Ok(()),
        };
        let file = match self.bound.take().map(|b| b.remove()) {
            Some(Removal::Removed) | None => "the socket is removed".to_string(),
            Some(Removal::Gone) => "the socket was already gone".to_string(),
            Some(Removal::NotOurs) => format!(
                "{} is no longer the socket it bound, so it is left in place",
                self.socket.display()
            ),
        };
        let said = format!("{} ({file})", stopped(&self.socket));
        match ended {
            Ok(()) => Ok(said),
            Err(e) => Err(format!("{e}; {said}")),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Serve until a termination signal; returns the exit status (128 + the signal), or an
/// error when the socket cannot be served.
pub fn run(lab: &mut Lab, opts: &ServeOptions, out: &mut dyn Write) -> Result<u8, String> {
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in crate::signals::SIGNALS {
        signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
            .map_err(|e| format!("cannot watch for signals: {e}"))?;
    }
    let server = Server::start(lab, opts)?;
    say(
        out,
        vec![lab_engine::render::Line::plain(format!(
            "{}; Ctrl-C stops",
            server.banner()
        ))],
    );
    let ended = loop {
        match server.next_job(SIGNAL_POLL) {
            Ok(Some(job)) => say(out, handle(lab, server.node.as_deref(), job)),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        let sig = signal.load(Ordering::Relaxed);
        if sig != 0 {
            break Ok(i32::try_from(sig).unwrap_or(0));
        }
    };
    let stopped = server.stop();
    if let Ok(said) = &stopped {
        say(out, vec![lab_engine::render::Line::plain(said.clone())]);
    }
    match ended {
        Ok(sig) => Ok(crate::signals::exit_status(sig)),
        Err(e) => Err(stopped.err().unwrap_or(e)),
    }
}

/// Write `lines` to the terminal through the plain painter, which escapes every control
/// character (see `render::escape`): a volume name, a node ID or a status message a client
/// sent is its bytes, and an ESC in them must not retitle or clear the terminal.
fn say(out: &mut dyn Write, lines: Vec<lab_engine::render::Line>) {
    let text = lab_engine::render::Outcome::from(lines).to_text();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Run one job on the lab; returns the lines to show (what it logged, or the gRPC status
/// of a call answered without the lab). They hold what the client sent as it sent it:
/// show them through a painter, which escapes control characters.
pub fn handle(lab: &mut Lab, node: Option<&str>, job: Job) -> Vec<lab_engine::render::Line> {
    let grpc_line = |path: &str, status: &lab_engine::csi::Status| {
        lab_engine::render::Line::new()
            .push("  grpc  ", lab_engine::render::Role::Actor)
            .push(format!("{path}: {status}"), lab_engine::render::Role::Bad)
    };
    match job {
        Job::Call {
            path,
            request,
            reply,
        } => {
            let call = lab.csi_remote_call(&path, node, &request);
            let mut lines = Vec::new();
            if call.calls.is_empty() {
                if let Err(s) = &call.reply {
                    lines.push(grpc_line(&path, s));
                }
            }
            lines.extend(call.calls);
            let _ = reply.send(call.reply);
            lines
        }
        Job::Rejected { path, status } => vec![grpc_line(&path, &status)],
    }
}

/// What a `csi serve` line typed in the REPL or the dashboard asks of it.
#[derive(Debug, Clone)]
pub enum ServeRequest {
    /// `csi serve --socket PATH [--node NODE]`.
    Start(ServeOptions),
    /// `csi serve stop`.
    Stop,
    /// `csi serve status`.
    Status,
}

/// The request of a `csi serve` line, or `None` for any other line (which the front end
/// runs as usual; a malformed `csi serve` line is left to the parser's error).
pub fn serve_request(line: &str) -> Option<ServeRequest> {
    use lab_engine::command::{Command, grammar::CsiCmd};
    let Ok(Some(Command::Csi(CsiCmd::Serve {
        action,
        socket,
        node,
    }))) = lab_engine::command::parse(lab_engine::command::strip_comment(line))
    else {
        return None;
    };
    Some(match (action.as_deref(), socket) {
        (Some("stop"), _) => ServeRequest::Stop,
        (Some(_), _) => ServeRequest::Status,
        (None, socket) => ServeRequest::Start(ServeOptions {
            socket: PathBuf::from(socket.unwrap_or_default()),
            node,
        }),
    })
}

/// What `csi serve stop` and `csi serve status` say when nothing is served.
pub const NOT_SERVING: &str = "not serving: `csi serve --socket PATH` starts serving the driver";

/// The refusal of a second `csi serve` while one serves.
pub fn already_serving(socket: &Path) -> String {
    format!(
        "already serving on unix://{}: `csi serve stop` first (one socket per session)",
        socket.display()
    )
}

/// What stopping says (before what became of the socket file).
pub fn stopped(socket: &Path) -> String {
    format!("stopped serving on unix://{}", socket.display())
}

fn node_names(lab: &Lab) -> String {
    if lab.counts().0 == 0 {
        return "no nodes".to_string();
    }
    lab.node_names().collect::<Vec<_>>().join(", ")
}

/// The socket file a server bound: its path, and the device and inode the path had right
/// after the bind. Stopping removes the path only while it is still that file (as systemd
/// and grpc-go servers do): if someone removed it and another server bound the path, or
/// put a file there, stopping leaves what is there now.
struct Bound {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

/// What stopping did with the socket file.
enum Removal {
    Removed,
    /// Nothing is at the path any more.
    Gone,
    /// Something else is at the path now (another server's socket, a file).
    NotOurs,
}

impl Bound {
    /// Remove the socket file if it is still the one bound.
    fn remove(&self) -> Removal {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        match std::fs::symlink_metadata(&self.path) {
            Err(_) => Removal::Gone,
            Ok(m) if m.file_type().is_socket() && m.dev() == self.dev && m.ino() == self.ino => {
                match std::fs::remove_file(&self.path) {
                    Ok(()) => Removal::Removed,
                    Err(_) => Removal::NotOurs,
                }
            }
            Ok(_) => Removal::NotOurs,
        }
    }
}

/// Bind the socket. A socket file left by a server that is gone (connecting to it is
/// refused) is removed first, as csi-driver-host-path does before it listens; a live server,
/// a socket that cannot be tried, or a file that is not a socket is an error, never
/// overwritten.
fn bind(path: &Path) -> Result<(std::os::unix::net::UnixListener, Bound), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!(
                "{} exists and is not a socket: give another --socket path",
                path.display()
            ));
        }
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(format!(
                    "a server is already listening on {}: stop it, or give another --socket path",
                    path.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                std::fs::remove_file(path).map_err(|e| {
                    format!("cannot remove the stale socket {}: {e}", path.display())
                })?;
            }
            Err(e) => {
                return Err(format!(
                    "{} is a socket that cannot be tried ({e}), so it is left in place: give another --socket path",
                    path.display()
                ));
            }
        }
    }
    let listener = std::os::unix::net::UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    let bound = Bound {
        path: path.to_path_buf(),
        dev: meta.dev(),
        ino: meta.ino(),
    };
    listener.set_nonblocking(true).map_err(|e| {
        bound.remove();
        format!("cannot listen on {}: {e}", path.display())
    })?;
    Ok((listener, bound))
}
