//! The gRPC side of `csi serve`: a tonic server on a unix socket. Its three CSI services
//! decode each request with csi.proto's descriptor (no generated types: every method is
//! bridged the same way), turn it into protojson and hand it to the thread that owns the
//! lab; the answer comes back as protojson and is encoded with the method's output
//! descriptor, or becomes a `grpc-status` with the lab's code and message.
//!
//! What a client that sends something wrong gets is what grpc-go (which every Kubernetes CSI
//! driver is built on) answers:
//! - an unknown service: UNIMPLEMENTED `unknown service csi.v9.Foo`;
//! - an unknown method of a served service: UNIMPLEMENTED
//!   `unknown method Foo for service csi.v1.Controller`;
//! - bytes that do not decode as the request message: INTERNAL
//!   `grpc: error unmarshalling request: …` (grpc-go `server.go`, `processUnaryRPC`);
//! - a request that decodes but misses what the spec requires: whatever the driver answers,
//!   INVALID_ARGUMENT for a missing name or volume ID (spec.md, each RPC's error table).

use super::conn::{self, Activity, Limits};
use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor, SerializeOptions};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::mpsc;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::{Body, BoxFuture, Context, Poll, Service, StdError, http};
use tonic::server::{Grpc, NamedService, UnaryService};

/// The encoded `FileDescriptorSet` of proto/csi.proto and the well-known types it imports
/// (written by build.rs).
pub const CSI_DESCRIPTOR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/csi_descriptor.bin"));

/// The services served, by gRPC name (the lab's driver has no GroupController or
/// SnapshotMetadata service: calls to them are unknown services, as for csi-driver-host-path
/// started without them).
pub const SERVICES: [&str; 3] = ["csi.v1.Identity", "csi.v1.Controller", "csi.v1.Node"];

/// A message for the thread that owns the lab.
#[derive(Debug)]
pub enum Job {
    /// A call to run on the lab's driver.
    Call {
        /// The full method path (`/csi.v1.Controller/CreateVolume`).
        path: String,
        /// The request as protojson with proto field names.
        request: serde_json::Value,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Result<serde_json::Value, lab_engine::csi::Status>>,
    },
    /// A call answered before it reached the lab (unknown method, undecodable request):
    /// only reported.
    Rejected {
        /// The method path the client called.
        path: String,
        /// The status it was answered with.
        status: lab_engine::csi::Status,
    },
}

/// csi.proto's descriptors, decoded once per process.
fn pool() -> Result<DescriptorPool, String> {
    static POOL: std::sync::OnceLock<Result<DescriptorPool, String>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| DescriptorPool::decode(CSI_DESCRIPTOR).map_err(|e| e.to_string()))
        .clone()
}

/// The full path of every method served (`/csi.v1.Identity/GetPluginInfo`, …).
pub fn method_paths() -> Vec<String> {
    let Ok(pool) = pool() else {
        return Vec::new();
    };
    SERVICES
        .iter()
        .filter_map(|s| pool.get_service_by_name(s))
        .flat_map(|s| {
            s.methods()
                .map(|m| format!("/{}/{}", s.full_name(), m.name()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The method at `path` (`/csi.v1.Controller/CreateVolume`), or what grpc-go answers a
/// path it does not serve.
fn resolve(pool: &DescriptorPool, path: &str) -> Result<MethodDescriptor, tonic::Status> {
    let (service, name) = path
        .trim_start_matches('/')
        .split_once('/')
        .unwrap_or((path.trim_start_matches('/'), ""));
    if !SERVICES.contains(&service) {
        return Err(tonic::Status::unimplemented(format!(
            "unknown service {service}"
        )));
    }
    pool.get_service_by_name(service)
        .and_then(|s| s.methods().find(|m| m.name() == name))
        .ok_or_else(|| {
            tonic::Status::unimplemented(format!("unknown method {name} for service {service}"))
        })
}

/// `body` as the request of `method`, in the form the lab takes (protojson with proto
/// field names), or what grpc-go answers bytes that are not that message.
fn decode(method: &MethodDescriptor, body: &[u8]) -> Result<serde_json::Value, tonic::Status> {
    let unmarshal =
        |e: String| tonic::Status::internal(format!("grpc: error unmarshalling request: {e}"));
    let msg = DynamicMessage::decode(method.input(), body).map_err(|e| unmarshal(e.to_string()))?;
    let opts = SerializeOptions::new().use_proto_field_name(true);
    msg.serialize_with_options(serde_json::value::Serializer, &opts)
        .map_err(|e| unmarshal(e.to_string()))
}

/// The lab's answer to `method` (protojson), encoded as its response message.
fn encode(method: &MethodDescriptor, json: serde_json::Value) -> Result<Bytes, tonic::Status> {
    let out = DynamicMessage::deserialize(method.output(), json)
        .map_err(|e| tonic::Status::internal(format!("grpc: error while marshaling: {e}")))?;
    Ok(Bytes::from(out.encode_to_vec()))
}

fn lab_status(s: tonic::Status) -> lab_engine::csi::Status {
    let code = lab_engine::csi::Code::from_number(s.code() as i32)
        .unwrap_or(lab_engine::csi::Code::Unknown);
    lab_engine::csi::Status::new(code, s.message())
}

/// One call without a socket: `body` decoded as the request of the method at `path`, run
/// on `lab` as the server runs a call from its client (`node` answers the Node service),
/// and the answer encoded; `Err` is the status the client gets. What the server does with
/// a call, from the bytes a client sends to the bytes it gets back, less HTTP/2 (the fuzz
/// target `grpc_request` drives it).
pub fn call_lab(
    lab: &mut crate::Lab,
    node: Option<&str>,
    path: &str,
    body: &[u8],
) -> Result<Bytes, lab_engine::csi::Status> {
    let pool =
        pool().map_err(|e| lab_engine::csi::Status::new(lab_engine::csi::Code::Internal, e))?;
    let method = resolve(&pool, path).map_err(lab_status)?;
    let request = decode(&method, body).map_err(lab_status)?;
    let reply = lab.csi_remote_call(path, node, &request).reply?;
    encode(&method, reply).map_err(lab_status)
}

struct Shared {
    pool: DescriptorPool,
    jobs: mpsc::Sender<Job>,
}

impl Shared {
    /// Answer `status` without the lab, and tell the lab's thread so it can print it.
    fn reject(&self, path: &str, status: tonic::Status) -> tonic::Status {
        let _ = self.jobs.send(Job::Rejected {
            path: path.to_string(),
            status: lab_status(status.clone()),
        });
        status
    }
}

/// Bytes in, bytes out: the method's descriptor decodes them (see [`Call`]).
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }
    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// One unary call of `method`.
struct Call {
    shared: Arc<Shared>,
    method: MethodDescriptor,
}

impl Call {
    async fn run(self, body: Bytes) -> Result<Bytes, tonic::Status> {
        let path = format!(
            "/{}/{}",
            self.method.parent_service().full_name(),
            self.method.name()
        );
        let request = decode(&self.method, &body).map_err(|s| self.shared.reject(&path, s))?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let stopped = || tonic::Status::unavailable("the lab has stopped");
        self.shared
            .jobs
            .send(Job::Call {
                path: path.clone(),
                request,
                reply: tx,
            })
            .map_err(|_| stopped())?;
        match rx.await.map_err(|_| stopped())? {
            Ok(json) => encode(&self.method, json),
            Err(s) => Err(tonic::Status::new(
                tonic::Code::from_i32(s.code.number()),
                s.message,
            )),
        }
    }
}

impl UnaryService<Bytes> for Call {
    type Response = Bytes;
    type Future = BoxFuture<tonic::Response<Bytes>, tonic::Status>;
    fn call(&mut self, req: tonic::Request<Bytes>) -> Self::Future {
        let call = Call {
            shared: self.shared.clone(),
            method: self.method.clone(),
        };
        Box::pin(async move { call.run(req.into_inner()).await.map(tonic::Response::new) })
    }
}

/// One CSI service, `SERVICES[I]`.
#[derive(Clone)]
struct CsiService<const I: usize> {
    shared: Arc<Shared>,
}

impl<const I: usize> NamedService for CsiService<I> {
    const NAME: &'static str = SERVICES[I];
}

impl<const I: usize, B> Service<http::Request<B>> for CsiService<I>
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let path = req.uri().path().to_string();
        let method = resolve(&self.shared.pool, &path);
        let shared = self.shared.clone();
        Box::pin(async move {
            let method = match method {
                Ok(method) => method,
                Err(status) => return Ok(shared.reject(&path, status).into_http()),
            };
            let mut grpc = Grpc::new(RawCodec);
            Ok(grpc.unary(Call { shared, method }, req).await)
        })
    }
}

/// Serve the CSI services and reflection on `listener` until `shutdown` resolves; every
/// call goes to `jobs`. The connections are held to the caps of [`super::conn`]; stopping
/// closes them all.
pub async fn serve(
    listener: tokio::net::UnixListener,
    jobs: mpsc::Sender<Job>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    serve_within(listener, jobs, shutdown, Limits::for_this_process()).await
}

/// [`serve`] within `limits`.
async fn serve_within(
    listener: tokio::net::UnixListener,
    jobs: mpsc::Sender<Job>,
    shutdown: impl std::future::Future<Output = ()>,
    limits: Limits,
) -> Result<(), String> {
    let shared = Arc::new(Shared {
        pool: pool()?,
        jobs,
    });
    let reflection = || {
        let mut b = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(CSI_DESCRIPTOR);
        for s in SERVICES {
            b = b.with_service_name(s);
        }
        b
    };
    let reflection_v1 = reflection().build_v1().map_err(|e| e.to_string())?;
    let reflection_v1alpha = reflection().build_v1alpha().map_err(|e| e.to_string())?;
    let mut routes = tonic::service::Routes::builder();
    routes
        .add_service(CsiService::<0> {
            shared: shared.clone(),
        })
        .add_service(CsiService::<1> {
            shared: shared.clone(),
        })
        .add_service(CsiService::<2> {
            shared: shared.clone(),
        })
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    let mut routes = routes.routes();
    // tonic answers an unknown service with an empty message; grpc-go names it.
    let router = std::mem::take(routes.axum_router_mut());
    *routes.axum_router_mut() = router.fallback(move |req: http::Request<axum::body::Body>| {
        let shared = shared.clone();
        async move {
            let path = req.uri().path().to_string();
            let service = path
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or_default();
            let status = shared.reject(
                &path,
                tonic::Status::unimplemented(format!("unknown service {service}")),
            );
            status.into_http::<tonic::body::Body>()
        }
    });
    // Every request, routed or not, marks its connection busy while it runs.
    let router = std::mem::take(routes.axum_router_mut());
    *routes.axum_router_mut() = router.layer(axum::middleware::from_fn(
        |req: axum::extract::Request, next: axum::middleware::Next| async move {
            let _running = req.extensions().get::<Arc<Activity>>().map(Activity::call);
            next.run(req).await
        },
    ));
    // The accept loop hands each connection over; when it stops, the stream ends and
    // tonic returns without waiting for the connections, which the loop has closed.
    let (conns, accepted) = tokio::sync::mpsc::channel(1);
    let incoming = tokio_stream::StreamExt::map(
        tokio_stream::wrappers::ReceiverStream::new(accepted),
        Ok::<_, Infallible>,
    );
    let server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(limits.keepalive_interval))
        .http2_keepalive_timeout(Some(limits.keepalive_timeout))
        .add_routes(routes)
        .serve_with_incoming(incoming);
    let (served, ()) = tokio::join!(server, conn::accept(listener, conns, limits, shutdown));
    served.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    //! The connection caps of [`super::conn`], on a real socket with short limits; the
    //! client is HTTP/2 written by hand (a handshake, a unary call), so that a call can be
    //! left running while the test holds its job.

    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    /// A server within `limits` on a socket in a fresh directory, on a thread of its own;
    /// the test holds the calls it receives.
    struct TestServer {
        dir: PathBuf,
        socket: PathBuf,
        jobs: mpsc::Receiver<Job>,
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<Result<(), String>>>,
    }

    impl TestServer {
        fn start(name: &str, limits: Limits) -> TestServer {
            let dir = std::env::temp_dir().join(format!("grpc-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("dir");
            let socket = dir.join("csi.sock");
            let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
            listener.set_nonblocking(true).expect("nonblocking");
            let (jobs_tx, jobs) = mpsc::channel();
            let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let thread = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(async move {
                    let listener = tokio::net::UnixListener::from_std(listener).expect("listen");
                    let stopped = async {
                        let _ = stop_rx.await;
                    };
                    serve_within(listener, jobs_tx, stopped, limits).await
                })
            });
            TestServer {
                dir,
                socket,
                jobs,
                stop: Some(stop),
                thread: Some(thread),
            }
        }

        /// The next call the server hands to the lab.
        fn job(&self) -> Job {
            self.jobs
                .recv_timeout(Duration::from_secs(10))
                .expect("a call reaches the lab")
        }
    }

    impl Drop for TestServer {
        fn drop(&mut self) {
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn limits(max_connections: usize, idle_timeout: Duration) -> Limits {
        Limits {
            max_connections,
            idle_timeout,
            ..Limits::for_this_process()
        }
    }

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

    /// An HTTP/2 connection that has done the handshake: the client's preface and SETTINGS
    /// sent, the server's SETTINGS read and acknowledged.
    fn h2(socket: &std::path::Path) -> UnixStream {
        let mut s = UnixStream::connect(socket).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .expect("preface");
        s.write_all(&frame(4, 0, 0, &[])).expect("settings");
        assert_eq!(read_frame(&mut s).expect("the server's SETTINGS").0, 4);
        s.write_all(&frame(4, 1, 0, &[])).expect("settings ack");
        s
    }

    /// Start a unary call of `path` on `stream` with an empty request message (headers as
    /// HPACK literals without indexing).
    fn call(s: &mut UnixStream, stream: u32, path: &str) {
        call_as(s, stream, path, "localhost");
    }

    /// [`call`] with `authority` as `:authority`.
    fn call_as(s: &mut UnixStream, stream: u32, path: &str, authority: &str) {
        let mut block = Vec::new();
        for (name, value) in [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", authority),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ] {
            block.push(0); // a literal, not indexed, with its name
            for text in [name, value] {
                block.push(u8::try_from(text.len()).expect("short"));
                block.extend(text.as_bytes());
            }
        }
        s.write_all(&frame(1, 0x4, stream, &block))
            .expect("headers");
        s.write_all(&frame(0, 0x1, stream, &[0; 5])).expect("data");
    }

    /// Whether the server closed the connection within `within` (frames it sends first,
    /// such as a GOAWAY, are read and dropped).
    fn closed_within(s: &mut UnixStream, within: Duration) -> bool {
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

    /// Without a socket, a call gets what a client on the socket gets: the lab's answer
    /// encoded as the response message, or grpc-go's status for a method not served and
    /// for bytes that are not the request.
    #[test]
    fn call_lab_answers_as_the_socket_does() {
        let mut lab = crate::Lab::new();
        let create = "/csi.v1.Controller/CreateVolume";
        let method = resolve(&pool().expect("csi.proto"), create).expect("served");
        let request = serde_json::json!({"name": "data", "volume_capabilities": [
            {"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}]});
        let request = DynamicMessage::deserialize(method.input(), request)
            .expect("a request")
            .encode_to_vec();
        let answer = call_lab(&mut lab, None, create, &request).expect("created");
        let answer = DynamicMessage::decode(method.output(), answer).expect("a response");
        let answer = answer
            .serialize_with_options(
                serde_json::value::Serializer,
                &SerializeOptions::new().use_proto_field_name(true),
            )
            .expect("json");
        assert_eq!(answer["volume"]["capacity_bytes"], "1073741824", "{answer}");
        assert!(
            lab.calls()
                .iter()
                .any(|(_, c)| c.action() == "CreateVolume")
        );
        let err = |path: &str, body: &[u8]| {
            let s = call_lab(&mut crate::Lab::new(), None, path, body).expect_err("refused");
            format!("{}: {}", s.code, s.message)
        };
        assert_eq!(
            err("/csi.v1.Controller/NoSuchMethod", b""),
            "UNIMPLEMENTED (12): unknown method NoSuchMethod for service csi.v1.Controller"
        );
        assert_eq!(
            err("/csi.v9.Nowhere/Probe", b""),
            "UNIMPLEMENTED (12): unknown service csi.v9.Nowhere"
        );
        let bad = err("/csi.v1.Controller/DeleteVolume", b"\x0a\xff\xff");
        assert!(
            bad.starts_with("INTERNAL (13): grpc: error unmarshalling request"),
            "{bad}"
        );
    }

    /// A connection that makes no call, whether or not it did the HTTP/2 handshake, is
    /// closed once the idle timeout has passed since it was accepted, not before.
    #[test]
    fn a_connection_that_makes_no_call_is_closed_after_the_idle_timeout() {
        let idle = Duration::from_millis(800);
        let server = TestServer::start("idle", limits(8, idle));
        let start = Instant::now();
        let mut handshaken = h2(&server.socket);
        let mut silent = UnixStream::connect(&server.socket).expect("connect");
        for s in [&mut handshaken, &mut silent] {
            assert!(closed_within(s, Duration::from_secs(10)), "closed");
            assert!(
                start.elapsed() >= idle,
                "closed after {:?}",
                start.elapsed()
            );
        }
    }

    /// A connection that has made a call stays open however long it stays quiet (a CSI
    /// sidecar exits when its connection to the driver drops).
    #[test]
    fn a_connection_that_has_made_a_call_stays_open() {
        let idle = Duration::from_millis(300);
        let server = TestServer::start("called", limits(8, idle));
        let mut s = h2(&server.socket);
        call(&mut s, 1, "/csi.v1.Identity/Probe");
        let Job::Call { reply, path, .. } = server.job() else {
            panic!("a call");
        };
        assert_eq!(path, "/csi.v1.Identity/Probe");
        reply.send(Ok(serde_json::json!({}))).expect("answered");
        // Its answer: a DATA frame on its stream.
        while read_frame(&mut s).expect("the answer") != (0, 1) {}
        assert!(!closed_within(&mut s, idle * 4), "still open");
    }

    /// grpcio on a unix socket sends the socket's path, percent-encoded, as `:authority`; a
    /// grpc-go server takes it, and so does this one (h2 alone resets the stream with
    /// PROTOCOL_ERROR before the call reaches the lab).
    #[test]
    fn a_call_with_grpcio_s_socket_path_authority_is_served() {
        let server = TestServer::start("authority", limits(8, Duration::from_secs(60)));
        let mut s = h2(&server.socket);
        call_as(&mut s, 1, "/csi.v1.Identity/Probe", "tmp%2Fcsi.sock");
        let Job::Call { reply, path, .. } = server.job() else {
            panic!("a call");
        };
        assert_eq!(path, "/csi.v1.Identity/Probe");
        reply.send(Ok(serde_json::json!({}))).expect("answered");
        loop {
            let frame = read_frame(&mut s).expect("the answer");
            assert_ne!(frame, (3, 1), "the stream was reset");
            if frame == (0, 1) {
                break;
            }
        }
    }

    /// At the cap a new connection closes the one idle longest; when every connection has
    /// a call running, the new one is closed at once and the busy ones stay.
    #[test]
    fn at_the_cap_the_connection_idle_longest_makes_room() {
        let server = TestServer::start("cap", limits(2, Duration::from_secs(60)));
        let mut oldest = h2(&server.socket);
        std::thread::sleep(Duration::from_millis(50));
        let mut busy = h2(&server.socket);
        call(&mut busy, 1, "/csi.v1.Identity/Probe");
        let mut held = vec![server.job()];
        let mut newest = h2(&server.socket);
        assert!(
            closed_within(&mut oldest, Duration::from_secs(10)),
            "made room"
        );
        call(&mut newest, 1, "/csi.v1.Identity/Probe");
        held.push(server.job());
        let mut refused = UnixStream::connect(&server.socket).expect("connect");
        assert!(
            closed_within(&mut refused, Duration::from_secs(10)),
            "refused"
        );
        for s in [&mut busy, &mut newest] {
            assert!(!closed_within(s, Duration::from_millis(300)), "busy stays");
        }
        drop(held);
    }
}
