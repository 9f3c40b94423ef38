//! One wire record per call a plugin received: a CNI plugin execution (env, stdin, stdout)
//! or a CSI RPC (request, then response or gRPC status). Messages are kept typed and
//! rendered to JSON, or summarised, only when someone looks, so recording is cheap. A
//! record never changes once made: the call log's entries share it (`Arc`) and render
//! their lines from it, even after the wire log has let it go.

use super::call::Actor;
use crate::cni::runtime::WireCall;
use crate::csi::types::{CsiRequest, CsiResponse};
use crate::csi::{Code, Service, Status};
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

/// A CSI request on the wire: its JSON, and the volume or snapshot it is about.
pub trait WireRequest: WireMessage {
    /// The volume or snapshot the request names (see [`CsiRequest`]), if any.
    fn subject(&self) -> Option<&str>;
    /// The node a ControllerPublish/Unpublish names (`node_id`), if any.
    fn node_id(&self) -> Option<&str>;
    /// The staging path a Node request names (`staging_target_path`), if any.
    fn staging_path(&self) -> Option<&str>;
    /// The pod's mount path a NodePublish/Unpublish names (`target_path`), if any.
    fn target_path(&self) -> Option<&str>;
    /// The capability the request asks for, if any.
    fn capability(&self) -> Option<&crate::csi::types::VolumeCapability>;
}

impl<T: WireMessage + CsiRequest> WireRequest for T {
    fn subject(&self) -> Option<&str> {
        CsiRequest::subject(self)
    }

    fn node_id(&self) -> Option<&str> {
        CsiRequest::node_id(self)
    }

    fn staging_path(&self) -> Option<&str> {
        CsiRequest::staging_path(self)
    }

    fn target_path(&self) -> Option<&str> {
        CsiRequest::target_path(self)
    }

    fn capability(&self) -> Option<&crate::csi::types::VolumeCapability> {
        CsiRequest::capability(self)
    }
}

/// A CSI response on the wire: its JSON, and the summary its type gives (see
/// [`CsiResponse`]).
pub trait WireReply: WireMessage {
    /// The typed summary, or `None` to take the JSON rule.
    fn summary(&self) -> Option<String>;
    /// The ID of the volume it returns (CreateVolume's), if any.
    fn volume_id(&self) -> Option<&str>;
}

impl<T: WireMessage + CsiResponse> WireReply for T {
    fn summary(&self) -> Option<String> {
        CsiResponse::summary(self)
    }

    fn volume_id(&self) -> Option<&str> {
        CsiResponse::volume_id(self)
    }
}

/// One CSI RPC as it crossed the socket.
#[derive(Debug, Clone)]
pub struct CsiCall {
    /// Who called (`external-provisioner`, `kubelet(node-1)`, `you`).
    pub caller: Actor,
    /// The node plugin called, for Node RPCs.
    pub node: Option<String>,
    /// The service.
    pub service: Service,
    /// The method (`CreateVolume`).
    pub rpc: &'static str,
    /// The request.
    pub request: Arc<dyn WireRequest>,
    /// The response, or the status of a failed call.
    pub reply: Result<Arc<dyn WireReply>, Status>,
}

impl CsiCall {
    /// The full gRPC method path (`/csi.v1.Controller/CreateVolume`).
    pub fn path(&self) -> String {
        format!("/{}/{}", self.service.grpc_name(), self.rpc)
    }

    /// The volume or snapshot the request is about (`-` when none).
    pub(crate) fn subject(&self) -> &str {
        self.request.subject().unwrap_or("-")
    }

    /// The gRPC code the call ended with (`OK` when it answered).
    pub fn code(&self) -> Code {
        match &self.reply {
            Ok(_) => Code::Ok,
            Err(s) => s.code,
        }
    }

    /// One line saying how the call went (`volume pvc-… 1Gi`, `OK`, `NOT_FOUND (5): …`):
    /// the typed response's summary, else the JSON rule ([`CsiCall::summary_from_json`]).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        self.write_summary(&mut out);
        out
    }

    /// [`CsiCall::summary`], written at the end of `out`.
    pub(crate) fn write_summary(&self, out: &mut String) {
        match &self.reply {
            Err(s) => {
                use std::fmt::Write;
                let _ = write!(
                    out,
                    "{} ({}): {}",
                    s.code.name(),
                    s.code.number(),
                    s.message
                );
            }
            Ok(resp) => match resp.summary() {
                Some(text) => out.push_str(&text),
                None => out.push_str(&self.summary_from_json()),
            },
        }
    }
}

/// A CNI or CSI wire record.
#[derive(Debug, Clone)]
pub enum WireRecord {
    /// A CNI plugin execution.
    Cni(Arc<WireCall>),
    /// A CSI RPC.
    Csi(Arc<CsiCall>),
}

impl WireRecord {
    /// A CNI plugin execution's record.
    pub fn cni(call: WireCall) -> Self {
        WireRecord::Cni(Arc::new(call))
    }
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
    pub(crate) fn exit_code(&self) -> i32 {
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
    pub(crate) fn subject_from_json(&self) -> String {
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
    pub(crate) fn summary_from_json(&self) -> String {
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
                    // CreateVolume is where the volume's node is decided: say it.
                    let node = (c.rpc == "CreateVolume")
                        .then(|| v.pointer("/volume/accessible_topology"))
                        .flatten()
                        .and_then(|t| t.as_array())
                        .and_then(|ts| {
                            ts.iter().find_map(|t| {
                                t.get("segments")?
                                    .get(crate::csi::driver::TOPOLOGY_KEY_NODE)?
                                    .as_str()
                            })
                        });
                    match node {
                        Some(node) => format!("volume {id} {size} on {node}"),
                        None => format!("volume {id} {size}"),
                    }
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
pub(crate) fn json_head(text: String) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// One line saying what a plugin execution did.
pub(crate) fn cni_summary(c: &WireCall) -> String {
    let mut s = String::with_capacity(96);
    write_cni_summary(c, &mut s);
    s
}

/// [`cni_summary`], written at the end of `s`.
pub(crate) fn write_cni_summary(c: &WireCall, s: &mut String) {
    match &c.reply {
        Err(e) => {
            use std::fmt::Write;
            match &e.crash {
                // What the plugin wrote: its panic line on stderr, nothing on stdout.
                Some(crash) => s.push_str(crash.stderr.lines().next().unwrap_or_default()),
                None => {
                    let _ = write!(s, "error code {}: {e}", e.code);
                }
            }
        }
        Ok(crate::cni::plugin::PluginOutput::Empty) => s.push_str("ok"),
        Ok(crate::cni::plugin::PluginOutput::Versions(v)) => {
            s.push_str(&serde_json::to_string(v).unwrap_or_default());
        }
        Ok(crate::cni::plugin::PluginOutput::Result(r)) => {
            let same = c
                .stdin
                .prev_result
                .as_ref()
                .is_some_and(|p| std::sync::Arc::ptr_eq(p, r) || p.as_ref() == r.as_ref());
            if same {
                s.push_str("result = prevResult (passed through)");
                return;
            }
            for (n, i) in r.interfaces.iter().enumerate() {
                if n > 0 {
                    s.push_str(" ↔ ");
                }
                s.push_str(&i.name);
                if !i.sandbox_path().is_empty() {
                    s.push_str(" (in pod)");
                }
            }
            if !r.interfaces.is_empty() && !r.ips.is_empty() {
                s.push_str(" · ");
            }
            for (n, ip) in r.ips.iter().enumerate() {
                if n > 0 {
                    s.push_str(", ");
                }
                use std::fmt::Write;
                let _ = write!(s, "{}", ip.address);
                if let Some(gw) = ip.gateway {
                    let _ = write!(s, " gw {gw}");
                }
            }
        }
    }
}
