//! The runtime side of CNI, as libcni (`libcni/api.go`) does it: ADD runs the chain in list
//! order threading prevResult and caches the final result; DEL runs it in reverse with the
//! cached result; CHECK forwards the cached result (never when `disableCheck`); GC deletes
//! cached attachments not in the valid list and then sends GC to every plugin; STATUS asks
//! every plugin. Every plugin execution, delegated IPAM calls included, is recorded.

use super::conf::{NetworkConfigList, PluginConf};
use super::plugin::{Attachment, CniCommand, CniEnv, PluginOutput, PluginReply, Stdin};
use super::result_cache::{CacheEntry, ResultCache};
use super::skel;
use super::types::{CniError, CniResult};
use super::version;
use crate::cluster::meta::Uid;
use crate::cluster::store::SharedKey;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `CNI_PATH` as the lab's runtime sets it.
pub const CNI_PATH: &str = "/opt/cni/bin";

/// [`CNI_PATH`] as every invocation's environment holds it, allocated once.
static SHARED_CNI_PATH: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from(CNI_PATH));

/// A network list ready to run: the parsed list plus each plugin's stdin base (the plugin
/// object with `name` and `cniVersion` injected, as `buildOneConfig` does).
#[derive(Debug, Clone)]
pub struct Network {
    /// The parsed list. Each plugin's `raw` object has moved into [`Network::injected`]
    /// (left `null` here), so a node holds its plugin objects once, not twice.
    pub list: Arc<NetworkConfigList>,
    /// Per plugin, the object with `name` and `cniVersion` set.
    pub injected: Vec<Arc<Value>>,
    /// The list's name, shared with the result cache's keys.
    pub name: Arc<str>,
}

impl Network {
    /// Prepare a parsed list for execution. What equals the network prepared before it on
    /// this thread (see [`LastNetwork`]) is that network's shared copy.
    pub fn new(mut list: NetworkConfigList) -> Self {
        let (name, cni_version) = (&list.name, &list.cni_version);
        let injected: Vec<Value> = list
            .plugins
            .iter_mut()
            .map(|p| {
                let raw = std::mem::take(&mut p.raw);
                inject_name_version(raw, name, cni_version)
            })
            .collect();
        LAST_NETWORK.with(|last| {
            let mut last = last.borrow_mut();
            let network = Network {
                name: last.share_name(&list.name),
                injected: injected
                    .into_iter()
                    .enumerate()
                    .map(|(i, doc)| last.share_doc(i, doc))
                    .collect(),
                list: last.share_list(list),
            };
            *last = LastNetwork::of(&network);
            network
        })
    }
}

/// The parts of the network prepared last on a thread, held weakly: a node's runtime
/// loading a conflist that every node holds (a template filled in with each node's
/// podCIDR) gets the same plugin documents as the node before it for every plugin whose
/// object does not name the podCIDR (portmap, bandwidth), and the same list, so the nodes
/// share one copy of each (and a plugin decodes a shared document once: [`DocMemo`]).
/// Compared by value, so a part is shared only with an equal one; held weakly, so it keeps
/// nothing alive.
///
/// [`DocMemo`]: super::plugins::memo::DocMemo
#[derive(Default)]
struct LastNetwork {
    name: Option<std::sync::Weak<str>>,
    list: std::sync::Weak<NetworkConfigList>,
    injected: Vec<std::sync::Weak<Value>>,
}

thread_local! {
    static LAST_NETWORK: std::cell::RefCell<LastNetwork> =
        std::cell::RefCell::new(LastNetwork::default());
}

impl LastNetwork {
    fn of(network: &Network) -> Self {
        LastNetwork {
            name: Some(Arc::downgrade(&network.name)),
            list: Arc::downgrade(&network.list),
            injected: network.injected.iter().map(Arc::downgrade).collect(),
        }
    }

    fn share_name(&self, name: &str) -> Arc<str> {
        match self.name.as_ref().and_then(std::sync::Weak::upgrade) {
            Some(last) if *last == *name => last,
            _ => Arc::from(name),
        }
    }

    fn share_list(&self, list: NetworkConfigList) -> Arc<NetworkConfigList> {
        match self.list.upgrade() {
            Some(last) if *last == list => last,
            _ => Arc::new(list),
        }
    }

    fn share_doc(&self, i: usize, doc: Value) -> Arc<Value> {
        match self.injected.get(i).and_then(std::sync::Weak::upgrade) {
            Some(last) if *last == doc => last,
            _ => Arc::new(doc),
        }
    }
}

fn inject_name_version(raw: Value, name: &str, cni_version: &str) -> Value {
    let mut obj = match raw {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    obj.insert("name".into(), Value::String(name.to_string()));
    obj.insert("cniVersion".into(), Value::String(cni_version.to_string()));
    Value::Object(obj)
}

/// What the runtime knows about one attachment (`libcni.RuntimeConf`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuntimeConf {
    /// `CNI_CONTAINERID` (shared with the result cache's key).
    pub container_id: Arc<str>,
    /// `CNI_NETNS`.
    pub netns: Arc<str>,
    /// `CNI_IFNAME` (shared with the result cache's key).
    pub ifname: Arc<str>,
    /// `CNI_ARGS`, as text when a plugin runs ([`RuntimeConf::args_text`]).
    pub args: CniArgs,
    /// Capability arguments (`portMappings`, `bandwidth`, …) offered to plugins.
    pub capability_args: CapabilityArgs,
}

// One a pod sandbox (shared by the sandbox record and the result cache): the ID, namespace
// path and the pod's key are shared text, not copies; the capability arguments most pods
// lack are boxed.
const _: () = assert!(std::mem::size_of::<RuntimeConf>() <= 88);

/// A runtime conf's capability arguments by name, in name order; boxed, and held only
/// when one is set (a pod without host ports or bandwidth annotations has none).
// The box is the point: `None` is one word, where an empty `BTreeMap` is three.
#[allow(clippy::box_collection)]
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapabilityArgs(Option<Box<BTreeMap<String, Value>>>);

impl CapabilityArgs {
    /// The argument offered for capability `cap`.
    pub fn get(&self, cap: &str) -> Option<&Value> {
        self.0.as_deref()?.get(cap)
    }

    /// Offer `value` for capability `cap`.
    pub fn insert(&mut self, cap: String, value: Value) {
        self.0.get_or_insert_default().insert(cap, value);
    }
}

/// The arguments a runtime passes in `CNI_ARGS` (libcni's `RuntimeConf.Args`).
#[derive(Debug, Clone, PartialEq)]
pub enum CniArgs {
    /// Given as text, kept verbatim (`K=V;K2=V2`, as libcni joins `Args`).
    Text(Box<str>),
    /// containerd's labels for a pod sandbox, the pod's identity held typed:
    /// `IgnoreUnknown=1;K8S_POD_NAMESPACE=…;K8S_POD_NAME=…;K8S_POD_INFRA_CONTAINER_ID=<the
    /// sandbox's ID>;K8S_POD_UID=…`, in that order.
    Pod {
        /// The pod's (namespace, name): the store's key, shared.
        pod: SharedKey,
        /// The pod's UID.
        uid: Uid,
    },
}

impl Default for CniArgs {
    fn default() -> Self {
        CniArgs::Text(Box::default())
    }
}

impl RuntimeConf {
    /// `CNI_ARGS` as the plugins and the wire log see it.
    pub fn args_text(&self) -> String {
        match &self.args {
            CniArgs::Text(text) => text.to_string(),
            CniArgs::Pod { pod, uid } => [
                "IgnoreUnknown=1;K8S_POD_NAMESPACE=",
                &pod.0,
                ";K8S_POD_NAME=",
                &pod.1,
                ";K8S_POD_INFRA_CONTAINER_ID=",
                &self.container_id,
                ";K8S_POD_UID=",
                &uid.text(),
            ]
            .concat(),
        }
    }

    fn env(&self, cmd: CniCommand) -> CniEnv {
        CniEnv {
            command: Some(cmd),
            container_id: Arc::clone(&self.container_id),
            netns: Arc::clone(&self.netns),
            ifname: Arc::clone(&self.ifname),
            args: self.args_text(),
            path: Arc::clone(&SHARED_CNI_PATH),
        }
    }

    fn runtime_config(&self, plugin: &PluginConf) -> Option<Arc<Value>> {
        let mut rc = Map::new();
        for cap in &plugin.capabilities {
            if let Some(v) = self.capability_args.get(cap) {
                rc.insert(cap.clone(), v.clone());
            }
        }
        (!rc.is_empty()).then(|| Arc::new(Value::Object(rc)))
    }
}

/// One plugin execution as seen on the wire.
#[derive(Debug, Clone)]
pub struct WireCall {
    /// The node it ran on.
    pub node: Arc<str>,
    /// Plugin type (binary name).
    pub plugin_type: String,
    /// 0 for a plugin the runtime ran, 1 for a delegate (IPAM) it ran.
    pub depth: u8,
    /// The environment.
    pub env: Arc<CniEnv>,
    /// Stdin.
    pub stdin: Stdin,
    /// The reply (stdout is derived from it).
    pub reply: PluginReply,
}

impl WireCall {
    /// Stdout exactly as the plugin printed it: nothing when it crashed (the error libcni
    /// made of that is the runtime's, not the plugin's).
    pub fn stdout(&self) -> String {
        match &self.reply {
            Err(e) if e.crash.is_some() => String::new(),
            reply => skel::stdout_of(reply),
        }
    }

    /// What the plugin wrote on stderr (a crash's panic; the models write nothing else).
    pub fn stderr(&self) -> &str {
        match &self.reply {
            Err(e) => e.crash.as_ref().map_or("", |c| c.stderr.as_str()),
            Ok(_) => "",
        }
    }

    /// Exit status: 0 on success, 1 on an error it printed, a crash's own status.
    pub(crate) fn exit_code(&self) -> i32 {
        match &self.reply {
            Ok(_) => 0,
            Err(e) => e.crash.as_ref().map_or(1, |c| c.exit_status),
        }
    }
}

/// An error from a chain operation: libcni's error text and the plugin's CNI error, if a
/// plugin produced one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChainError {
    /// The CNI error (from a plugin's stdout, or a libcni validation error); `None` for a
    /// plain Go error libcni returns itself, which carries no CNI code.
    pub error: Option<CniError>,
    /// The failing plugin's type, if a plugin failed.
    pub plugin: Option<String>,
    /// libcni's wrapped message (`plugin type="bridge" failed (add): …`).
    pub message: String,
}

impl ChainError {
    /// A plain Go error libcni returns itself (`fmt.Errorf`), with no CNI code.
    fn plain(message: String) -> Self {
        ChainError {
            error: None,
            plugin: None,
            message,
        }
    }
}

impl std::fmt::Display for ChainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What an armed fault (`fault inject`, `crate::faults`) does to one plugin execution.
#[derive(Debug, Clone, PartialEq)]
pub enum Injected {
    /// The plugin prints this CNI error on stdout and exits 1.
    Error(CniError),
    /// The plugin process is killed right after its IPAM delegate returned: the lease is
    /// written, nothing else is, and libcni sees an exit with no output.
    KilledAfterIpam,
}

/// The fault table as the runtime sees it: asked once per plugin execution.
pub trait FaultHook {
    /// The fault for this execution, if one is armed (it is counted when it fires).
    /// `delegated` is true for a delegate (IPAM) a plugin runs.
    fn on_exec(&mut self, plugin_type: &str, cmd: CniCommand, delegated: bool) -> Option<Injected>;
    /// Whether the runtime process itself died during the last operation.
    fn runtime_died(&self) -> bool;
}

/// libcni's error for a plugin that exited without printing anything
/// (`pkg/invoke/raw_exec.go` pluginErr).
pub(crate) fn killed_error() -> CniError {
    CniError::new(0, "netplugin failed with no error message: signal: killed")
}

/// libcni on one node: runs a network's chain through the plugin executor, keeps the
/// result cache, and records each execution.
pub(crate) struct Invoker<'a> {
    /// How plugins are executed (the in-process models, or real binaries).
    pub exec: &'a mut dyn super::exec::PluginExec,
    /// The node's libcni cache.
    pub cache: &'a mut ResultCache,
    /// Where executions are recorded.
    pub wire: &'a mut dyn FnMut(WireCall),
    /// The node's name (for the record).
    pub node: Arc<str>,
    /// Armed faults (`fault inject`), if any.
    pub faults: Option<&'a mut dyn FaultHook>,
}

impl Invoker<'_> {
    /// `c.exec.FindInPath(net.Network.Type, c.Path)`: the plugin's binary, or the error.
    fn find_in_path(&self, plugin: &PluginConf) -> Result<(), ChainError> {
        // FindInPath's errors are plain Go errors (`fmt.Errorf`), with no CNI code.
        if plugin.plugin_type.contains('/') || plugin.plugin_type.contains('\\') {
            return Err(ChainError::plain(format!(
                "invalid plugin name: {}",
                plugin.plugin_type
            )));
        }
        if !self.exec.installed(&plugin.plugin_type) {
            // A binary of the release the lab does not model: FindInPath would find it and
            // the plugin would run; the lab stops the chain there as an execution failure.
            if let Some(e) = self.exec.release().not_modelled(&plugin.plugin_type) {
                return Err(ChainError {
                    message: e.to_string(),
                    error: Some(e),
                    plugin: Some(plugin.plugin_type.clone()),
                });
            }
            return Err(ChainError::plain(format!(
                "failed to find plugin {:?} in path [{CNI_PATH}]",
                plugin.plugin_type
            )));
        }
        Ok(())
    }

    /// Find a plugin and execute it ([`Invoker::find_in_path`], then [`Invoker::run`]).
    fn exec(
        &mut self,
        plugin: &PluginConf,
        env: &Arc<CniEnv>,
        stdin: Stdin,
    ) -> Result<PluginOutput, ChainError> {
        self.find_in_path(plugin)?;
        self.run(plugin, env, stdin)
    }

    /// Execute a plugin found in the path, recording it and its delegates.
    fn run(
        &mut self,
        plugin: &PluginConf,
        env: &Arc<CniEnv>,
        stdin: Stdin,
    ) -> Result<PluginOutput, ChainError> {
        let injected = match self.faults.as_deref_mut() {
            Some(f) => f.on_exec(&plugin.plugin_type, env.cmd(), false),
            None => None,
        };
        let faults = self.faults.as_deref_mut().map(|f| f as &mut dyn FaultHook);
        let super::exec::Execution { reply, delegations } =
            self.exec
                .exec(&plugin.plugin_type, env, &stdin, injected, faults);
        (self.wire)(WireCall {
            node: self.node.clone(),
            plugin_type: plugin.plugin_type.clone(),
            depth: 0,
            env: env.clone(),
            stdin,
            reply: reply.clone(),
        });
        for (plugin_type, denv, dstdin, dreply) in delegations {
            (self.wire)(WireCall {
                node: self.node.clone(),
                plugin_type,
                depth: 1,
                env: denv,
                stdin: dstdin,
                reply: dreply,
            });
        }
        reply.map_err(|e| ChainError {
            message: e.to_string(),
            error: Some(e),
            plugin: Some(plugin.plugin_type.clone()),
        })
    }

    /// The checks `addNetwork` makes after `FindInPath` and before it runs the plugin
    /// (`utils.ValidateContainerID`, `ValidateNetworkName`, `ValidateInterfaceName`, libcni
    /// 1.3.0 `libcni/api.go`); `delNetwork` and `checkNetwork` make none (each plugin's skel
    /// checks the ID and ifname itself).
    fn validate(rt: &RuntimeConf, net: &Network) -> Result<(), ChainError> {
        let wrap = |e: CniError| ChainError {
            message: e.to_string(),
            error: Some(e),
            plugin: None,
        };
        skel::validate_container_id(&rt.container_id).map_err(wrap)?;
        skel::validate_network_name(&net.list.name).map_err(wrap)?;
        skel::validate_ifname(&rt.ifname).map_err(wrap)?;
        Ok(())
    }

    fn wrap(plugin: &PluginConf, verb: &str, mut e: ChainError) -> ChainError {
        e.message = format!(
            "plugin {} failed ({verb}): {}",
            plugin.description(),
            e.message
        );
        e
    }

    /// `AddNetworkList`: run the chain in order, each plugin getting the previous result;
    /// cache and return the final result.
    pub fn add(
        &mut self,
        net: &Network,
        rt: &Arc<RuntimeConf>,
    ) -> Result<Arc<CniResult>, ChainError> {
        let env = Arc::new(rt.env(CniCommand::Add));
        let mut prev: Option<Arc<CniResult>> = None;
        for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
            // addNetwork: FindInPath, then the validation, then the plugin; AddNetworkList
            // wraps whichever fails: `fmt.Errorf("plugin %s failed (add): %w",
            // pluginDescription(net.Network), err)`.
            if let Err(e) = self.find_in_path(plugin).and(Self::validate(rt, net)) {
                return Err(Self::wrap(plugin, "add", e));
            }
            let stdin = Stdin {
                conf: conf.clone(),
                list: Some(Arc::clone(&net.list)),
                runtime_config: rt.runtime_config(plugin),
                prev_result: prev.clone(),
                valid_attachments: None,
            };
            match self.run(plugin, &env, stdin) {
                Ok(PluginOutput::Result(r)) => prev = Some(r.as_libcni_reads_it()),
                Ok(_) => {
                    // A plugin that prints nothing on ADD breaks the chain's result.
                    let e = CniError::new(
                        super::types::code::DECODING_FAILURE,
                        "unexpected end of JSON input",
                    );
                    return Err(Self::wrap(
                        plugin,
                        "add",
                        ChainError {
                            message: e.to_string(),
                            error: Some(e),
                            plugin: Some(plugin.plugin_type.clone()),
                        },
                    ));
                }
                Err(e) => return Err(Self::wrap(plugin, "add", e)),
            }
        }
        let result = prev.unwrap_or_default();
        self.cache.insert(
            &net.name,
            CacheEntry {
                rt: rt.clone(),
                result: result.clone(),
            },
        );
        Ok(result)
    }

    fn cached(&self, net: &Network, rt: &RuntimeConf) -> Option<Arc<CniResult>> {
        self.cache
            .get(&net.name, &rt.container_id, &rt.ifname)
            .map(|c| c.result.clone())
    }

    /// `DelNetworkList`: run the chain in reverse with the cached result (for 0.4.0+), then
    /// drop the cache entry.
    pub fn del(&mut self, net: &Network, rt: &RuntimeConf) -> Result<(), ChainError> {
        // `if gtet, err := version.GreaterThanOrEqualTo(list.CNIVersion, "0.4.0"); err != nil
        // { return err }`: a plain error.
        let uses_cache = version::gte(&net.list.cni_version, "0.4.0").map_err(ChainError::plain)?;
        let cached = if uses_cache {
            self.cached(net, rt)
        } else {
            None
        };
        let env = Arc::new(rt.env(CniCommand::Del));
        for (plugin, conf) in net.list.plugins.iter().zip(&net.injected).rev() {
            let stdin = Stdin {
                conf: conf.clone(),
                list: Some(Arc::clone(&net.list)),
                runtime_config: rt.runtime_config(plugin),
                prev_result: cached.clone(),
                valid_attachments: None,
            };
            if let Err(e) = self.exec(plugin, &env, stdin) {
                return Err(Self::wrap(plugin, "delete", e));
            }
        }
        self.cache.remove(&net.name, &rt.container_id, &rt.ifname);
        Ok(())
    }

    /// `CheckNetworkList`: refuse below 0.4.0, skip when `disableCheck`, else run in order
    /// with the cached result.
    pub fn check(&mut self, net: &Network, rt: &RuntimeConf) -> Result<(), ChainError> {
        // CheckNetworkList returns plain errors here, no CNI code:
        //     if gtet, err := version.GreaterThanOrEqualTo(list.CNIVersion, "0.4.0"); err != nil {
        //         return err
        //     } else if !gtet {
        //         return fmt.Errorf("configuration version %q %w", list.CNIVersion, ErrorCheckNotSupp)
        let v = &net.list.cni_version;
        if !version::gte(v, "0.4.0").map_err(ChainError::plain)? {
            return Err(ChainError::plain(format!(
                "configuration version {} does not support the CHECK command",
                crate::net::validate::go_quote(v)
            )));
        }
        if net.list.disable_check {
            return Ok(());
        }
        let cached = self.cached(net, rt);
        let env = Arc::new(rt.env(CniCommand::Check));
        for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
            let stdin = Stdin {
                conf: conf.clone(),
                list: Some(Arc::clone(&net.list)),
                runtime_config: rt.runtime_config(plugin),
                prev_result: cached.clone(),
                valid_attachments: None,
            };
            // libcni's CheckNetworkList returns the plugin's error unwrapped.
            self.exec(plugin, &env, stdin)?;
        }
        Ok(())
    }

    /// `GCNetworkList`: DEL every cached attachment of this network not in `valid`, then, for
    /// 1.1.0+, send GC to every plugin. Errors are collected, not fatal.
    pub(crate) fn gc(&mut self, net: &Network, valid: &[Attachment]) -> Vec<ChainError> {
        let mut errors = Vec::new();
        if net.list.disable_gc {
            return errors;
        }
        let stale: Vec<Arc<RuntimeConf>> = self
            .cache
            .of_network(&net.list.name)
            .filter(|e| {
                !valid
                    .iter()
                    .any(|a| *a.container_id == *e.container_id() && *a.ifname == *e.ifname())
            })
            .map(|e| e.rt.clone())
            .collect();
        for rt in stale {
            if let Err(mut e) = self.del(net, &rt) {
                e.message = format!(
                    "failed to delete stale attachment {} {}: {}",
                    rt.container_id, rt.ifname, e.message
                );
                errors.push(e);
            }
        }
        if version::gte(&net.list.cni_version, "1.1.0").unwrap_or(false) {
            let env = Arc::new(CniEnv {
                command: Some(CniCommand::Gc),
                path: Arc::clone(&SHARED_CNI_PATH),
                ..Default::default()
            });
            let valid = Arc::new(valid.to_vec());
            for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
                let stdin = Stdin {
                    conf: conf.clone(),
                    list: Some(Arc::clone(&net.list)),
                    runtime_config: None,
                    prev_result: None,
                    valid_attachments: Some(valid.clone()),
                };
                if let Err(mut e) = self.exec(plugin, &env, stdin) {
                    e.message =
                        format!("failed to GC plugin {}: {}", plugin.plugin_type, e.message);
                    errors.push(e);
                }
            }
        }
        errors
    }

    /// `GetStatusNetworkList`: a no-op below 1.1.0; else STATUS to each plugin, stopping at
    /// the first error.
    pub fn status(&mut self, net: &Network) -> Result<(), ChainError> {
        if !version::gte(&net.list.cni_version, "1.1.0").unwrap_or(false) {
            return Ok(());
        }
        let env = Arc::new(CniEnv {
            command: Some(CniCommand::Status),
            path: Arc::clone(&SHARED_CNI_PATH),
            ..Default::default()
        });
        for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
            let stdin = Stdin {
                conf: conf.clone(),
                list: Some(Arc::clone(&net.list)),
                runtime_config: None,
                prev_result: None,
                valid_attachments: None,
            };
            if let Err(e) = self.exec(plugin, &env, stdin) {
                return Err(Self::wrap(plugin, "status", e));
            }
        }
        Ok(())
    }

    /// VERSION to one plugin binary (`GetVersionInfo`), with libcni's placeholder env.
    pub fn version(&mut self, plugin_type: &str, cni_version: &str) -> Result<Value, ChainError> {
        let env = Arc::new(CniEnv {
            command: Some(CniCommand::Version),
            container_id: Arc::default(),
            netns: "dummy".into(),
            ifname: "dummy".into(),
            args: String::new(),
            path: "dummy".into(),
        });
        let plugin = PluginConf {
            plugin_type: plugin_type.to_string(),
            name: String::new(),
            capabilities: Vec::new(),
            raw: Value::Null,
        };
        let stdin = Stdin::from_conf(serde_json::json!({ "cniVersion": cni_version }));
        match self.exec(&plugin, &env, stdin)? {
            PluginOutput::Versions(v) => Ok(v),
            _ => Ok(Value::Null),
        }
    }
}
