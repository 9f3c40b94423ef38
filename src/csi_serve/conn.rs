//! The connections of `csi serve`'s socket. The server accepts them itself, not through
//! tokio's `UnixListenerStream`, which tonic would retry at once after every failed accept
//! (out of file descriptors, it spins a core) and whose connections stay open for as long
//! as the client likes. Here:
//! - at most [`MAX_CONNECTIONS`] are open at once (fewer under a low `ulimit -n`): one more
//!   closes the connection idle longest to make room, or is closed at once when every
//!   connection has a call running;
//! - a connection that makes no call within [`IDLE_TIMEOUT`] of being accepted is closed;
//! - HTTP/2 pings every [`KEEPALIVE_INTERVAL`] close a connection whose peer does not answer
//!   within [`KEEPALIVE_TIMEOUT`] (grpc-go's keepalive);
//! - a failed accept is tried again after [`ACCEPT_BACKOFF`]; out of descriptors (EMFILE,
//!   ENFILE), the connection idle longest is closed first to free one, and the cap becomes
//!   one fewer than the connections open then;
//! - stopping closes every connection at once (tonic's graceful stop waits for each, forever
//!   for a client that never sends a byte).
//!
//! A connection that has made a call stays open however quiet it goes, as with grpc-go's
//! defaults: the CSI sidecars exit when their connection to the driver drops
//! (csi-lib-utils' `ExitOnConnectionLoss`), so a driver must not close it for being idle;
//! the cap is what bounds them.
//!
//! A connection is closed by ending its reads: the HTTP/2 layer sees the end of the stream
//! and drops the connection, which closes the socket.

use super::authority::AuthorityFix;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::time::{Instant, Sleep};

/// The most connections served at once; under a low `ulimit -n` it is half the process's
/// file descriptors, so that the lab keeps the other half.
/// A lab has a handful of clients (a sidecar or two, csc, grpcurl, csi-sanity); the cap is
/// for the client that opens connections and never closes them.
pub const MAX_CONNECTIONS: usize = 64;

/// A connection that makes no call within this long of being accepted is closed: a client
/// that connects and stalls (or never completes the HTTP/2 handshake) holds a descriptor and
/// serves no one. (grpc-go closes a connection whose handshake has not finished in 120 s.)
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the server pings each connection (an HTTP/2 PING)...
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);

/// ...and how long the peer has to answer before the connection is closed (grpc-go's
/// default keepalive timeout): a peer that went away without closing its end is noticed.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the server waits after a failed accept before the next one.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The caps one server runs with: the constants above, which tests shorten.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_connections: usize,
    pub(super) idle_timeout: Duration,
    pub(super) keepalive_interval: Duration,
    pub(super) keepalive_timeout: Duration,
    pub(super) accept_backoff: Duration,
}

impl Limits {
    /// The constants, with the connections capped at half this process's file descriptors.
    pub(super) fn for_this_process() -> Limits {
        let fds = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let half = fds.map_or(usize::MAX, |n| usize::try_from(n / 2).unwrap_or(usize::MAX));
        Limits {
            max_connections: MAX_CONNECTIONS.min(half).max(1),
            idle_timeout: IDLE_TIMEOUT,
            keepalive_interval: KEEPALIVE_INTERVAL,
            keepalive_timeout: KEEPALIVE_TIMEOUT,
            accept_backoff: ACCEPT_BACKOFF,
        }
    }
}

/// What the server knows of one connection, shared by its reads (which end it when told to
/// or when it has made no call in time) and the calls that run on it (which it finds in
/// each request's extensions, see [`Activity::call`]).
#[derive(Debug)]
pub(super) struct Activity {
    /// Calls running on the connection.
    running: AtomicUsize,
    /// Whether it has made a call.
    called: AtomicBool,
    /// When it was accepted, then when its last call ended.
    idle_since: Mutex<Instant>,
    /// Set to close it.
    closing: AtomicBool,
    /// Set once it is dropped (its socket closed).
    gone: AtomicBool,
    /// The task that reads it, woken to close it.
    reader: Mutex<Option<Waker>>,
}

/// A call running on a connection; the connection is idle again when it drops.
pub(super) struct Running(Arc<Activity>);

impl Drop for Running {
    fn drop(&mut self) {
        *lock(&self.0.idle_since) = Instant::now();
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity {
            running: AtomicUsize::new(0),
            called: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
            closing: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            reader: Mutex::new(None),
        })
    }

    /// A call starts on the connection: it is busy until the returned guard drops.
    pub(super) fn call(self: &Arc<Self>) -> Running {
        self.running.fetch_add(1, Ordering::SeqCst);
        self.called.store(true, Ordering::SeqCst);
        Running(Arc::clone(self))
    }

    /// How long the connection has had no call running, `None` while one runs.
    fn idle_for(&self, now: Instant) -> Option<Duration> {
        (self.running.load(Ordering::SeqCst) == 0)
            .then(|| now.saturating_duration_since(*lock(&self.idle_since)))
    }

    /// Close the connection: its reads end the next time they are polled, which this asks
    /// for.
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        if let Some(w) = lock(&self.reader).take() {
            w.wake();
        }
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }
}

/// An accepted connection: the socket, and what closes it.
pub(super) struct Conn {
    stream: UnixStream,
    activity: Arc<Activity>,
    idle_timeout: Duration,
    timer: Pin<Box<Sleep>>,
    /// What the client sends passes through it ([`super::authority`]).
    fix: AuthorityFix,
}

impl Conn {
    fn new(stream: UnixStream, activity: Arc<Activity>, idle_timeout: Duration) -> Conn {
        let timer = Box::pin(tokio::time::sleep(idle_timeout));
        Conn {
            stream,
            activity,
            idle_timeout,
            timer,
            fix: AuthorityFix::new(),
        }
    }

    /// Whether the connection is to end: told to, or no call made within the idle timeout.
    /// Otherwise the reading task is kept to be woken, and the timer set for the timeout.
    fn ending(&mut self, cx: &mut Context<'_>) -> bool {
        let a = &self.activity;
        {
            let mut reader = lock(&a.reader);
            if !reader.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *reader = Some(cx.waker().clone());
            }
        }
        if a.is_closing() {
            return true;
        }
        if a.called.load(Ordering::SeqCst) {
            return false;
        }
        loop {
            let now = Instant::now();
            let deadline = match a.idle_for(now) {
                Some(idle) if idle >= self.idle_timeout => {
                    a.closing.store(true, Ordering::SeqCst);
                    return true;
                }
                Some(idle) => now + (self.idle_timeout - idle),
                None => now + self.idle_timeout,
            };
            if self.timer.deadline() != deadline {
                self.timer.as_mut().reset(deadline);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return false;
            }
        }
    }

    fn closed_error() -> io::Error {
        io::Error::new(io::ErrorKind::ConnectionAborted, "closed by the server")
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.activity.gone.store(true, Ordering::SeqCst);
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.ending(cx) {
            return Poll::Ready(Ok(())); // the end of the stream
        }
        // The client's bytes go through the authority fix; what it holds back (part of a
        // frame) waits for more.
        let mut chunk = [0u8; 8192];
        while !this.fix.has_output() {
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.stream).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    this.fix.finish();
                    break;
                }
                Poll::Ready(Ok(())) => this.fix.push(read.filled()),
                other => return other,
            }
        }
        buf.put_slice(&this.fix.take(buf.remaining()));
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.activity.is_closing() {
            return Poll::Ready(Err(Conn::closed_error()));
        }
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.activity.is_closing() {
            return Poll::Ready(Err(Conn::closed_error()));
        }
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.activity.is_closing() {
            return Poll::Ready(Err(Conn::closed_error()));
        }
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = Arc<Activity>;

    /// tonic puts this in every request's extensions, where [`Activity::call`] finds it.
    fn connect_info(&self) -> Arc<Activity> {
        Arc::clone(&self.activity)
    }
}

/// Accept connections on `listener` and hand them to `conns` until `shutdown` resolves,
/// within `limits`; then close every connection still open.
pub(super) async fn accept(
    listener: UnixListener,
    conns: tokio::sync::mpsc::Sender<Conn>,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    let mut open: Vec<Arc<Activity>> = Vec::new();
    // The cap, lowered to what the process could hold when an accept finds it out of
    // descriptors.
    let mut cap = limits.max_connections;
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => r,
        };
        open.retain(|a| !a.gone.load(Ordering::SeqCst));
        let serving = open.iter().filter(|a| !a.is_closing()).count();
        match accepted {
            Ok((stream, _)) => {
                if serving >= cap {
                    if !close_longest_idle(&open) {
                        // Every connection has a call running: refuse this one.
                        drop(stream);
                        continue;
                    }
                    // The closed connection's task releases its descriptor before the
                    // next accept needs one.
                    tokio::task::yield_now().await;
                }
                let activity = Activity::new();
                open.push(Arc::clone(&activity));
                if conns
                    .send(Conn::new(stream, activity, limits.idle_timeout))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            Err(e) => {
                if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                    // `serving` connections and no more fit: at one fewer, the next accept
                    // has the descriptor it needs while a connection is closed for it.
                    cap = cap.min(serving.saturating_sub(1)).max(1);
                    close_longest_idle(&open);
                }
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(limits.accept_backoff) => {}
                }
            }
        }
    }
    for a in &open {
        a.close();
    }
}

/// Close the connection that has had no call running for longest, if one has none;
/// whether one was closed.
fn close_longest_idle(open: &[Arc<Activity>]) -> bool {
    let now = Instant::now();
    let longest = open
        .iter()
        .filter(|a| !a.is_closing())
        .filter_map(|a| a.idle_for(now).map(|idle| (idle, a)))
        .max_by_key(|(idle, _)| *idle);
    match longest {
        Some((_, a)) => {
            a.close();
            true
        }
        None => false,
    }
}
