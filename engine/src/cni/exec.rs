//! How libcni runs a plugin: it looks the binary up in `CNI_PATH`, executes it with the
//! `CNI_*` environment and the config document on stdin, and decodes what it printed on
//! stdout and its exit code into a result or an error (`pkg/invoke`: `FindInPath`,
//! `ExecPlugin`, `RawExec`). [`PluginExec`] is that one step; the runtime
//! ([`super::runtime::Invoker`]) calls nothing else to run a plugin.
//!
//! [`InProcess`] is today's implementation: the plugin models of [`super::plugins`] run
//! against the node's kernel model ([`Host`]), and the delegations a plugin makes (bridge →
//! host-local) are reported so the wire log can show them. An executor of real binaries
//! stands behind the same trait: it decodes stdout and the exit code into the same reply
//! and reports no delegations (the real plugin runs its IPAM itself).

use super::host::Host;
use super::plugin::{CniEnv, PluginCtx, PluginReply, Stdin};
use super::registry::Registry;
use super::runtime::{FaultHook, Injected, killed_error};
use std::sync::Arc;

/// One execution's outcome: the plugin's reply as libcni decodes it from (stdout, exit
/// code), and the delegated executions it made, in order.
#[derive(Debug)]
pub(crate) struct Execution {
    /// `Ok` for exit code 0 (the result, the versions, or nothing), `Err` for the error
    /// document a failed plugin printed.
    pub reply: PluginReply,
    /// Each delegated invocation: plugin type, env, stdin and reply.
    pub delegations: Vec<(String, Arc<CniEnv>, Stdin, PluginReply)>,
}

/// Runs plugin binaries for the runtime (see the module doc).
pub(crate) trait PluginExec {
    /// Whether a plugin of this type is installed in `CNI_PATH` (`FindInPath`).
    fn installed(&self, plugin_type: &str) -> bool;

    /// The release of containernetworking/plugins in `CNI_PATH`.
    fn release(&self) -> super::release::PluginsRelease;

    /// Execute the plugin with `env` and `stdin`. `injected` is the armed fault the runtime
    /// found for this execution; `faults` is asked again for each delegate the plugin runs.
    fn exec(
        &mut self,
        plugin_type: &str,
        env: &Arc<CniEnv>,
        stdin: &Stdin,
        injected: Option<Injected>,
        faults: Option<&mut dyn FaultHook>,
    ) -> Execution;
}

/// The plugin models, run in-process on one node's kernel model.
pub(crate) struct InProcess<'a> {
    /// The plugins installed in `/opt/cni/bin`.
    pub registry: &'a Registry,
    /// The node the plugins run on: its links, namespaces, routes, netfilter and disk.
    pub host: &'a mut Host,
    /// The API server and kubelet as a plugin with a kubeconfig reaches them (Multus).
    pub kube: Option<&'a mut dyn super::kube_api::KubeClient>,
}

impl PluginExec for InProcess<'_> {
    fn installed(&self, plugin_type: &str) -> bool {
        self.registry.find(plugin_type).is_some()
    }

    fn release(&self) -> super::release::PluginsRelease {
        self.registry.release()
    }

    fn exec(
        &mut self,
        plugin_type: &str,
        env: &Arc<CniEnv>,
        stdin: &Stdin,
        injected: Option<Injected>,
        faults: Option<&mut dyn FaultHook>,
    ) -> Execution {
        let Some(p) = self.registry.find(plugin_type) else {
            return Execution {
                reply: Err(super::types::CniError::internal(format!(
                    "failed to find plugin {plugin_type:?} in path [{}]",
                    env.path
                ))),
                delegations: Vec::new(),
            };
        };
        let mut ctx = PluginCtx {
            host: self.host,
            registry: self.registry,
            delegations: super::plugin::Delegations {
                calls: Vec::new(),
                env: Some(env.clone()),
            },
            faults: faults.map(|f| f as &mut dyn FaultHook),
            kube: self
                .kube
                .as_deref_mut()
                .map(|k| k as &mut dyn super::kube_api::KubeClient),
        };
        let reply = match injected {
            None => super::skel::dispatch(p, &mut ctx, env, stdin),
            Some(Injected::Error(e)) => Err(e),
            Some(Injected::KilledAfterIpam) => {
                // The plugin ran its IPAM delegate, then the process was killed.
                if let Some(ipam) = stdin.conf.get("ipam").and_then(|i| i.get("type")) {
                    let _ = ctx.delegate(ipam.as_str().unwrap_or_default(), env, stdin);
                }
                Err(killed_error())
            }
        };
        Execution {
            reply,
            delegations: std::mem::take(&mut ctx.delegations.calls),
        }
    }
}
