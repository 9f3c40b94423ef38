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
    /// The volume or snapshot the request is about (`-` when none).
    pub subject: String,
    /// One line saying how the call went (`volume pvc-… 1Gi`, `OK`, `NOT_FOUND (5): …`),
    /// worked out from the typed response when the call was made.
    pub summary: String,
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

impl CsiCall {
    /// The volume or snapshot a CSI call is about, read from the request's protojson (the
    /// rule [`crate::csi::types::CsiRequest`] keeps per type; debug builds check the two
    /// agree on every call).
    pub fn subject_from_json(&self) -> String {
        let req = self.request.to_json();
        for key in ["volume_id", "name", "snapshot_id", "source_volume_id"] {
            if let Some(v) = req.get(key).and_then(|v| v.as_str()) {
                return v.to_string();
            }
        }
        "-".into()
    }

    /// One line saying how a CSI call went, read from the reply's protojson: the rule
    /// [`crate::csi::types::CsiResponse`] keeps per type (and the one for raw JSON).
    pub fn summary_from_json(&self) -> String {
        let c = self;
        match &c.reply {
            Err(s) => format!("{} ({}): {}", s.code.name(), s.code.number(), s.message),
            Ok(resp) => {
                let v = resp.to_json();
                if let Some(id) = v.pointer("/volume/volume_id").and_then(|v| v.as_str()) {
                    let size = v
                        .pointer("/volume/capacity_bytes")
                        .and_then(|v| v.as_str())
                        .and_then(|s| s.parse::<i64>().ok())
                        .map(crate::util::quantity::format_bytes)
                        .unwrap_or_default();
                    format!("volume {id} {size}")
                } else if let Some(id) = v.pointer("/snapshot/snapshot_id").and_then(|v| v.as_str())
                {
                    format!("snapshot {id}")
                } else if let Some(bytes) = v
                    .get("capacity_bytes")
                    .and_then(|v| v.as_str())
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    let node = if v.get("node_expansion_required").and_then(|b| b.as_bool())
                        == Some(true)
                    {
                        ", node_expansion_required"
                    } else {
                        ""
                    };
                    format!(
                        "capacity {}{node}",
                        crate::util::quantity::format_bytes(bytes)
                    )
                } else if v.as_object().is_some_and(|m| m.is_empty()) {
                    "OK".into()
                } else {
                    json_head(serde_json::to_string(&v).unwrap_or_default())
                }
            }
        }
    }
}

/// A JSON text as the call log shows it: the first 60 characters, then `…` if there is more.
pub fn json_head(text: String) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// One line saying what a plugin execution did.
pub fn cni_summary(c: &WireCall) -> String {
    match &c.reply {
        Err(e) => format!("error code {}: {e}", e.code),
        Ok(crate::cni::plugin::PluginOutput::Empty) => "ok".into(),
        Ok(crate::cni::plugin::PluginOutput::Versions(v)) => {
            serde_json::to_string(v).unwrap_or_default()
        }
        Ok(crate::cni::plugin::PluginOutput::Result(r)) => {
            let same = c
                .stdin
                .prev_result
                .as_ref()
                .is_some_and(|p| std::sync::Arc::ptr_eq(p, r) || p.as_ref() == r.as_ref());
            if same {
                return "result = prevResult (passed through)".into();
            }
            let mut s = String::with_capacity(96);
            for (n, i) in r.interfaces.iter().enumerate() {
                if n > 0 {
                    s.push_str(" ↔ ");
                }
                s.push_str(&i.name);
                if !i.sandbox.is_empty() {
                    s.push_str(" (in pod)");
                }
            }
            if !r.interfaces.is_empty() {
                s.push_str(" · ");
            }
            for (n, ip) in r.ips.iter().enumerate() {
                if n > 0 {
                    s.push_str(", ");
                }
                s.push_str(&ip.address);
                if !ip.gateway.is_empty() {
                    s.push_str(" gw ");
                    s.push_str(&ip.gateway);
                }
            }
            s
        }
    }
}
