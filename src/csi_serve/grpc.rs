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

struct Shared {
    pool: DescriptorPool,
    jobs: mpsc::Sender<Job>,
}

impl Shared {
    /// Answer `status` without the lab, and tell the lab's thread so it can print it.
    fn reject(&self, path: &str, status: tonic::Status) -> tonic::Status {
        let code = lab_engine::csi::Code::from_number(status.code() as i32)
            .unwrap_or(lab_engine::csi::Code::Unknown);
        let _ = self.jobs.send(Job::Rejected {
            path: path.to_string(),
            status: lab_engine::csi::Status::new(code, status.message()),
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
        let unmarshal = |e: String| {
            self.shared.reject(
                &path,
                tonic::Status::internal(format!("grpc: error unmarshalling request: {e}")),
            )
        };
        let msg = DynamicMessage::decode(self.method.input(), body)
            .map_err(|e| unmarshal(e.to_string()))?;
        let opts = SerializeOptions::new().use_proto_field_name(true);
        let request = msg
            .serialize_with_options(serde_json::value::Serializer, &opts)
            .map_err(|e| unmarshal(e.to_string()))?;
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
            Ok(json) => {
                let out = DynamicMessage::deserialize(self.method.output(), json).map_err(|e| {
                    tonic::Status::internal(format!("grpc: error while marshaling: {e}"))
                })?;
                Ok(Bytes::from(out.encode_to_vec()))
            }
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
        let name = path.rsplit('/').next().unwrap_or_default().to_string();
        let method = self
            .shared
            .pool
            .get_service_by_name(SERVICES[I])
            .and_then(|s| s.methods().find(|m| m.name() == name));
        let shared = self.shared.clone();
        Box::pin(async move {
            let Some(method) = method else {
                let status = shared.reject(
                    &path,
                    tonic::Status::unimplemented(format!(
                        "unknown method {name} for service {}",
                        SERVICES[I]
                    )),
                );
                return Ok(status.into_http());
            };
            let mut grpc = Grpc::new(RawCodec);
            Ok(grpc.unary(Call { shared, method }, req).await)
        })
    }
}

/// Serve the CSI services and reflection on `listener` until `shutdown` resolves; every
/// call goes to `jobs`.
pub async fn serve(
    listener: tokio::net::UnixListener,
    jobs: mpsc::Sender<Job>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let pool = DescriptorPool::decode(CSI_DESCRIPTOR).map_err(|e| e.to_string())?;
    let shared = Arc::new(Shared { pool, jobs });
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
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    tonic::transport::Server::builder()
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
        .map_err(|e| e.to_string())
}
