//! The one interface every CNI plugin sits behind: an environment plus a stdin document in,
//! a result or an error out — exactly what a plugin binary sees (`pkg/skel`).
//!
//! Plugins are stateless, like the real binaries: all their state lives on the node
//! ([`Host`]: links, netns, iptables, tc, host-local's files). An in-process model and an
//! exec of a real binary can both stand behind [`Plugin`], since the wire record is the same.

use super::host::Host;
use super::types::{CniError, CniResult};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// `CNI_COMMAND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum CniCommand {
    /// Add a container to a network.
    Add,
    /// Remove a container from a network.
    Del,
    /// Check that a container's networking is as expected.
    Check,
    /// Remove stale resources (1.1.0).
    Gc,
    /// Report whether the plugin can serve ADD (1.1.0).
    Status,
    /// Report supported versions.
    Version,
}

impl CniCommand {
    /// The value of `CNI_COMMAND`.
    pub fn as_str(self) -> &'static str {
        match self {
            CniCommand::Add => "ADD",
            CniCommand::Del => "DEL",
            CniCommand::Check => "CHECK",
            CniCommand::Gc => "GC",
            CniCommand::Status => "STATUS",
            CniCommand::Version => "VERSION",
        }
    }

    /// The lower-case verb libcni uses in wrapped errors (`failed (add): …`).
    pub fn verb(self) -> &'static str {
        match self {
            CniCommand::Add => "add",
            CniCommand::Del => "delete",
            CniCommand::Check => "check",
            CniCommand::Gc => "gc",
            CniCommand::Status => "status",
            CniCommand::Version => "version",
        }
    }
}

/// The `CNI_*` environment of one invocation (SPEC §3 "Parameters").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CniEnv {
    /// `CNI_COMMAND`.
    pub command: Option<CniCommand>,
    /// `CNI_CONTAINERID` (empty for GC, STATUS, VERSION), shared with the runtime's conf
    /// and the leases IPAM writes for it.
    pub container_id: Arc<str>,
    /// `CNI_NETNS` (may be empty for DEL), shared with the runtime's conf and the host's
    /// namespaces.
    pub netns: Arc<str>,
    /// `CNI_IFNAME`, shared with the runtime's conf.
    pub ifname: Arc<str>,
    /// `CNI_ARGS`: `K=V;K2=V2`.
    pub args: String,
    /// `CNI_PATH` (the runtime's one text, shared).
    pub path: Arc<str>,
}

impl CniEnv {
    /// The variables as libcni's `invoke.Args.AsEnv` sets them, in that order; empty
    /// values are still set, as libcni does.
    pub fn vars(&self) -> [(&'static str, &str); 6] {
        let cmd = self.command.map(|c| c.as_str()).unwrap_or("");
        [
            ("CNI_COMMAND", cmd),
            ("CNI_CONTAINERID", &self.container_id),
            ("CNI_NETNS", &self.netns),
            ("CNI_ARGS", &self.args),
            ("CNI_IFNAME", &self.ifname),
            ("CNI_PATH", &self.path),
        ]
    }

    /// The command, or VERSION when unset.
    pub fn cmd(&self) -> CniCommand {
        self.command.unwrap_or(CniCommand::Version)
    }
}

/// What a plugin reads on stdin. The plugin's own object from the conflist (with `name` and
/// `cniVersion` injected by the runtime) is kept as JSON, since runtimes must pass unknown
/// keys through; `runtimeConfig` and `prevResult` are kept typed and merged on [`Stdin::to_json`].
#[derive(Debug, Clone)]
pub struct Stdin {
    /// The plugin object with `name` and `cniVersion` set (no `capabilities`, per SPEC §4).
    pub conf: Arc<Value>,
    /// The list whose `name` and `cniVersion` the runtime set in `conf` (libcni's
    /// `injectConf`), when a runtime built this stdin: the two are read from it, typed,
    /// instead of from the document ([`Stdin::network_name`], [`Stdin::cni_version`]).
    pub list: Option<Arc<super::conf::NetworkConfigList>>,
    /// `runtimeConfig`, present only when non-empty (libcni `injectRuntimeConfig`).
    pub runtime_config: Option<Arc<Value>>,
    /// `prevResult`: none for the first ADD, the final ADD result for DEL and CHECK.
    pub prev_result: Option<Arc<CniResult>>,
    /// GC: the attachments still valid (`cni.dev/valid-attachments`).
    pub valid_attachments: Option<Arc<Vec<Attachment>>>,
}

/// One attachment, as GC names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Attachment {
    /// The container ID.
    #[serde(rename = "containerID")]
    pub container_id: String,
    /// The interface name.
    pub ifname: String,
}

impl Stdin {
    /// A stdin holding just a configuration object.
    pub fn from_conf(conf: Value) -> Self {
        Stdin {
            conf: Arc::new(conf),
            list: None,
            runtime_config: None,
            prev_result: None,
            valid_attachments: None,
        }
    }

    /// A string field of the configuration (`name`, `type`, `cniVersion`…), or "".
    pub(crate) fn str_field(&self, key: &str) -> &str {
        self.conf.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// The network name.
    pub fn network_name(&self) -> &str {
        match &self.list {
            Some(list) => &list.name,
            None => self.str_field("name"),
        }
    }

    /// The configuration's `cniVersion`.
    pub(crate) fn cni_version(&self) -> &str {
        match &self.list {
            Some(list) => &list.cni_version,
            None => self.str_field("cniVersion"),
        }
    }

    /// The document without `prevResult`, for plugins that never read it (host-local):
    /// the same answer as [`Stdin::to_json`] for them, without serializing the result.
    pub(crate) fn to_json_without_prev_result(&self) -> Cow<'_, Value> {
        match (&self.runtime_config, self.conf.as_ref()) {
            (None, conf) => Cow::Borrowed(conf),
            (Some(rc), Value::Object(m)) => {
                let mut obj = m.clone();
                obj.insert("runtimeConfig".into(), rc.as_ref().clone());
                Cow::Owned(Value::Object(obj))
            }
            (Some(_), other) => Cow::Borrowed(other),
        }
    }

    /// The whole document as it would be written to the plugin's stdin. Keys are sorted, as
    /// Go's `json.Marshal` of libcni's map orders them.
    pub fn to_json(&self) -> Value {
        let mut obj: Map<String, Value> = match self.conf.as_ref() {
            Value::Object(m) => m.clone(),
            other => return other.clone(),
        };
        if let Some(rc) = &self.runtime_config {
            obj.insert("runtimeConfig".into(), rc.as_ref().clone());
        }
        if let Some(prev) = &self.prev_result {
            obj.insert(
                "prevResult".into(),
                serde_json::to_value(prev.as_ref()).unwrap_or(Value::Null),
            );
        }
        if let Some(valid) = &self.valid_attachments {
            let list = serde_json::to_value(valid.as_ref()).unwrap_or(Value::Null);
            // libcni sends both keys (spec-v1.1.0 and HEAD names; reference §0.7).
            obj.insert("cni.dev/attachments".into(), list.clone());
            obj.insert("cni.dev/valid-attachments".into(), list);
        }
        Value::Object(obj)
    }
}

/// What a plugin printed: a result (ADD), nothing (DEL, CHECK, GC, STATUS), a version
/// document (VERSION), or an error.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginOutput {
    /// An ADD result.
    Result(Arc<CniResult>),
    /// Success with nothing on stdout.
    Empty,
    /// VERSION's answer.
    Versions(Value),
}

/// A plugin's answer to one invocation.
pub type PluginReply = Result<PluginOutput, CniError>;

/// Delegated calls a plugin made (bridge → host-local), reported so the wire log can show them.
#[derive(Debug, Default)]
pub struct Delegations {
    /// Each delegated invocation: plugin type, env, stdin and reply.
    pub calls: Vec<(String, Arc<CniEnv>, Stdin, PluginReply)>,
    /// The env of the execution that delegates, shared with the records of delegates that
    /// run with the very same env (the usual case) instead of copied into each.
    pub env: Option<Arc<CniEnv>>,
}

/// A CNI plugin binary.
pub trait Plugin: Send + Sync {
    /// The binary name (`type` in the config).
    fn type_name(&self) -> &'static str;

    /// The versions `VERSION` reports (in the newest release the lab models).
    fn supported_versions(&self) -> &'static [&'static str];

    /// Whether this binary is one of containernetworking/plugins (bridge, host-local,
    /// portmap…), whose behaviour follows the release the node runs
    /// ([`super::release::PluginsRelease`]); the other projects' plugins (flannel,
    /// Calico, Cilium, Multus, sriov-cni) have releases of their own.
    fn is_reference_plugin(&self) -> bool {
        false
    }

    /// Run one invocation on a node. `ctx` lets the plugin delegate to another plugin
    /// (IPAM), the way `ipam.ExecAdd` execs a binary found in `CNI_PATH`.
    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply;
}

/// What a plugin can reach while it runs: the node, and other plugins to delegate to.
pub struct PluginCtx<'a> {
    /// The node the plugin runs on (its kernel state and disk).
    pub host: &'a mut Host,
    /// The plugins installed in CNI_PATH.
    pub registry: &'a super::registry::Registry,
    /// Delegated calls made so far.
    pub delegations: Delegations,
    /// Armed faults (`fault inject`), checked before each delegate runs.
    pub faults: Option<&'a mut dyn super::runtime::FaultHook>,
    /// The API server and kubelet, for a plugin with a kubeconfig (Multus); `None` when
    /// the caller is not a kubelet (`cni add` from the command line).
    pub kube: Option<&'a mut dyn super::kube_api::KubeClient>,
}

impl PluginCtx<'_> {
    /// Delegate to another plugin by type with the same env and stdin (`ipam.ExecAdd` etc.).
    pub fn delegate(&mut self, plugin_type: &str, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let Some(p) = self.registry.find(plugin_type) else {
            // A binary of the release the lab does not model (dhcp as IPAM): the exec
            // failure libcni's invoke would give, code 0 (see `not_modelled`).
            if let Some(e) = self.registry.release().not_modelled(plugin_type) {
                return Err(e);
            }
            // No binary was found, so nothing ran: nothing goes on the wire.
            return Err(CniError::internal(format!(
                "failed to find plugin \"{plugin_type}\" in path [{}]",
                env.path
            )));
        };
        let injected = match self.faults.as_deref_mut() {
            Some(f) => f.on_exec(plugin_type, env.cmd(), true),
            None => None,
        };
        let env_shared = match &self.delegations.env {
            Some(a) if std::ptr::eq(a.as_ref(), env) => a.clone(),
            _ => Arc::new(env.clone()),
        };
        let mut inner = PluginCtx {
            host: self.host,
            registry: self.registry,
            delegations: Delegations {
                calls: Vec::new(),
                env: Some(env_shared.clone()),
            },
            faults: self
                .faults
                .as_deref_mut()
                .map(|f| f as &mut dyn super::runtime::FaultHook),
            kube: self
                .kube
                .as_deref_mut()
                .map(|k| k as &mut dyn super::kube_api::KubeClient),
        };
        let reply = match injected {
            Some(super::runtime::Injected::Error(e)) => Err(e),
            Some(super::runtime::Injected::KilledAfterIpam) => Err(super::runtime::killed_error()),
            None => super::skel::dispatch(p, &mut inner, env, stdin),
        };
        let nested = inner.delegations.calls;
        self.delegations.calls.push((
            plugin_type.to_string(),
            env_shared,
            stdin.clone(),
            reply.clone(),
        ));
        self.delegations.calls.extend(nested);
        reply
    }
}

/// The standard VERSION answer (`pkg/version/plugin.go`): skel prints the library's
/// current version as `cniVersion`.
pub(crate) fn version_reply(supported: &[&str]) -> PluginReply {
    version_reply_as(super::version::CURRENT, supported)
}

/// The VERSION answer of a plugin built on a library whose `version.Current()` is
/// `current` (an older release of the reference plugins, [`super::release`]).
pub(crate) fn version_reply_as(current: &str, supported: &[&str]) -> PluginReply {
    Ok(PluginOutput::Versions(serde_json::json!({
        "cniVersion": current,
        "supportedVersions": supported,
    })))
}

/// `version.All` of the CNI library.
pub(crate) const ALL_VERSIONS: &[&str] = &[
    "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0",
];

/// Versions 0.3.0 and later (`version.PluginSupports("0.3.0", …)` style plugins).
pub(crate) const VERSIONS_FROM_030: &[&str] = &["0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"];
