//! One wire record per call a plugin received: a CNI plugin execution (env, stdin, stdout)
//! or a CSI RPC (request, then response or gRPC status). Messages are kept typed and
//! rendered to JSON only when someone looks, so recording is cheap.

use crate::cni::runtime::WireCall;
use crate::csi::{Service, Status};
use serde_json::Value;
use std::fmt::Debug;
use std::sync::Arc;

/// A message that can be shown as JSON on the wire view.
pub trait WireMessage: Debug + Send + Sync {
    /// The message in protojson form (csi.proto field names).
    fn to_json(&self) -> Value;
}

impl<T: serde::Serialize + Debug + Send + Sync> WireMessage for T {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One CSI RPC as it crossed the socket.
#[derive(Debug, Clone)]
pub struct CsiCall {
    /// Who called (`external-provisioner`, `kubelet(node-1)`, `you`).
    pub caller: String,
    /// The node plugin called, for Node RPCs.
    pub node: Option<String>,
    /// The service.
    pub service: Service,
    /// The method (`CreateVolume`).
    pub rpc: &'static str,
    /// The request.
    pub request: Arc<dyn WireMessage>,
    /// The response, or the status of a failed call.
    pub reply: Result<Arc<dyn WireMessage>, Status>,
}

impl CsiCall {
    /// The full gRPC method path (`/csi.v1.Controller/CreateVolume`).
    pub fn path(&self) -> String {
        format!("/{}/{}", self.service.grpc_name(), self.rpc)
    }
}

/// A CNI or CSI wire record.
#[derive(Debug, Clone)]
pub enum WireRecord {
    /// A CNI plugin execution.
    Cni(WireCall),
    /// A CSI RPC.
    Csi(CsiCall),
}

impl WireRecord {
    /// The node the call ran on (a CSI controller call has none).
    pub fn node(&self) -> Option<&str> {
        match self {
            WireRecord::Cni(c) => Some(&c.node),
            WireRecord::Csi(c) => c.node.as_deref(),
        }
    }

    /// The CNI container ID, or the CSI call's volume/snapshot subject.
    pub fn container_id(&self) -> &str {
        match self {
            WireRecord::Cni(c) => &c.env.container_id,
            WireRecord::Csi(_) => "",
        }
    }

    /// The CNI plugin type, or the CSI method name.
    pub fn plugin_type(&self) -> &str {
        match self {
            WireRecord::Cni(c) => &c.plugin_type,
            WireRecord::Csi(c) => c.rpc,
        }
    }

    /// The CNI exit status (0/1), or the gRPC code number (0 = OK).
    pub fn exit_code(&self) -> i32 {
        match self {
            WireRecord::Cni(c) => c.exit_code(),
            WireRecord::Csi(c) => c.reply.as_ref().err().map(|s| s.code.number()).unwrap_or(0),
        }
    }

    /// Whether the call failed.
    pub fn failed(&self) -> bool {
        match self {
            WireRecord::Cni(c) => c.reply.is_err(),
            WireRecord::Csi(c) => c.reply.is_err(),
        }
    }
}
