//! Real mode (`--real-cni`) as the engine sees it: every CNI execution the model makes is
//! also handed to a [`RealCni`], which runs the real plugin binary with the same
//! environment and stdin in real network namespaces and compares the two answers. The
//! engine owns no namespace, process or file: the front end implements [`RealCni`] (the
//! `cni-csi-lab` crate's `real_cni` module) and gives it to the lab
//! (`Lab::set_real_cni`); without one the lab is the model alone.
//!
//! Here are the types both sides share ([`RealCall`], [`Verdict`], [`Ran`]), the executor
//! that runs the model then the real plugin ([`SideBySide`]), and the comparison
//! ([`compare`]) that normalises MACs, random veth names and namespace paths.

pub mod compare;

use super::exec::{Execution, PluginExec};
use super::plugin::{CniCommand, CniEnv, PluginReply, Stdin};
use super::runtime::{FaultHook, Injected};
use std::sync::Arc;

/// The real plugins beside the model: what the engine asks of real mode. Implemented by
/// the front end that owns the kernel state; every method takes `&self` (the state sits
/// behind the implementation's own lock), so components hold it as a shared reference.
pub trait RealCni: Send + Sync {
    /// Run the real plugin for one execution the model has just made; the real call waits
    /// to be paired with the wire record the runtime writes ([`RealCni::pair`]).
    fn exec(&self, model: &Beside<'_>);
    /// Pair the real calls made during one operation with the wire records of its
    /// top-level executions (`(seq, plugin type, command)`, in order; delegated IPAM calls
    /// have no real call of their own); per record paired, its seq and the call-log line
    /// (text, whether it differs). A real call that matches no record is dropped.
    fn pair(&self, records: &[(u64, &str, CniCommand)]) -> Vec<(u64, String, bool)>;
    /// The model removed a pod's namespace (`model_path`): the real one goes too.
    fn netns_removed(&self, node: &str, model_path: &str);
    /// The lab was reset or replaced: everything real goes (namespaces, host-local's
    /// files, the real calls).
    fn reset(&self);
    /// The real call paired with wire record `seq`, if any.
    fn call(&self, seq: u64) -> Option<RealCall>;
    /// The real namespace of a lab node, or of a pod's model netns path on it.
    fn namespace(&self, node: &str, pod_netns: Option<&str>) -> Option<String>;
    /// Run a kernel tool (`ip -n NS route`) under real mode's timeout.
    fn tool(&self, argv: &[&str]) -> Ran;
    /// The real host-local's files on a node (its `ipam.dataDir`), once a real plugin has
    /// run there.
    fn host_local(&self, node: &str) -> Option<HostLocalFiles>;
}

/// The real host-local's data directory of one node, read whole for `show ipam --real`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLocalFiles {
    /// The directory (`<data dir>/real-cni/<pid>/host-local/<node>`).
    pub dir: String,
    /// Each network's directory (its path) with its files, sorted by name.
    pub networks: Vec<(String, Vec<NamedFile>)>,
}

/// A file's name and bytes.
pub(crate) type NamedFile = (String, Vec<u8>);

/// One model execution for real mode to repeat.
#[derive(Debug)]
pub struct Beside<'a> {
    /// The lab node it ran on.
    pub node: &'a str,
    /// The plugin type.
    pub plugin_type: &'a str,
    /// The environment the model's plugin got.
    pub env: &'a CniEnv,
    /// Its stdin.
    pub stdin: &'a Stdin,
    /// What the model answered.
    pub model: &'a PluginReply,
    /// Whether a fault answered instead of the model (the real plugin is then not run).
    pub injected: bool,
}

/// What became of one real execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The same answer as the model, after normalising.
    Same,
    /// A different answer: the difference lines (`- model`, `+ real`).
    Differs(Vec<String>),
    /// The real plugin was not run, and why.
    NotRun(String),
}

/// One execution of a real plugin binary beside the model's (a real wire record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealCall {
    /// The lab node (its namespace is `node_netns`).
    pub node: String,
    /// The node's real namespace.
    pub node_netns: String,
    /// The plugin type.
    pub plugin_type: String,
    /// `CNI_COMMAND`.
    pub command: CniCommand,
    /// The binary run.
    pub binary: String,
    /// The environment it got, in libcni's order.
    pub env: Vec<(String, String)>,
    /// Stdin as written to it.
    pub stdin: String,
    /// What was changed from the model's env and stdin, one sentence each.
    pub changes: Vec<String>,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
    /// Exit code (`None`: not run, or a signal ended it).
    pub exit: Option<i32>,
    /// Real paths and the model's (real, model), for normalising.
    pub paths: Vec<(String, String)>,
    /// What the model printed for the same execution.
    pub model_stdout: String,
    /// The outcome of the comparison.
    pub verdict: Verdict,
}

impl RealCall {
    /// The call-log line for it: `bridge ADD #0: same as the model`.
    pub fn event(&self, seq: u64) -> (String, bool) {
        let head = format!("{} {} #{seq}", self.plugin_type, self.command.as_str());
        match &self.verdict {
            Verdict::Same => (format!("{head}: same as the model"), false),
            Verdict::Differs(d) => (
                format!("{head}: DIFFERS from the model: {}", d.join(" · ")),
                true,
            ),
            Verdict::NotRun(why) => (format!("{head}: not run: {why}"), false),
        }
    }
}

/// What one kernel command did: its exit code (`None` when a signal ended it), stdout,
/// stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    /// Exit code; 124 is `timeout`'s "took too long".
    pub code: Option<i32>,
    /// Stdout, lossily decoded.
    pub stdout: String,
    /// Stderr, lossily decoded.
    pub stderr: String,
}

impl Ran {
    /// Exit code 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// `timeout` stopped it.
    pub fn timed_out(&self) -> bool {
        self.code == Some(124) || self.code == Some(137)
    }

    /// One line for an error message: stderr's last line, or the exit code.
    pub fn why(&self) -> String {
        let last = self.stderr.trim().lines().last().unwrap_or("").trim();
        match (last.is_empty(), self.code) {
            (false, _) => last.to_string(),
            (true, Some(c)) => format!("exit {c}"),
            (true, None) => "ended by a signal".into(),
        }
    }
}

/// The executor of real mode: the model's executor runs first (its answer is the one the
/// lab uses), then the real binary with the same env and stdin. With `real` `None` it is
/// the model alone.
pub(crate) struct SideBySide<'a> {
    /// The model's executor.
    pub model: &'a mut dyn PluginExec,
    /// Real mode, if it is on.
    pub real: Option<&'a dyn RealCni>,
    /// The node the plugins run on.
    pub node: &'a str,
}

impl PluginExec for SideBySide<'_> {
    fn installed(&self, plugin_type: &str) -> bool {
        self.model.installed(plugin_type)
    }

    fn release(&self) -> super::release::PluginsRelease {
        self.model.release()
    }

    fn exec(
        &mut self,
        plugin_type: &str,
        env: &Arc<CniEnv>,
        stdin: &Stdin,
        injected: Option<Injected>,
        faults: Option<&mut dyn FaultHook>,
    ) -> Execution {
        let was_injected = injected.is_some();
        let out = self.model.exec(plugin_type, env, stdin, injected, faults);
        if let Some(real) = self.real {
            real.exec(&Beside {
                node: self.node,
                plugin_type,
                env,
                stdin,
                model: &out.reply,
                injected: was_injected,
            });
        }
        out
    }
}

/// The error of a `--real` view when real mode is off.
pub(crate) const NOT_REAL: &str = "--real shows what the real plugins did, and this lab does not run them: start it with --real-cni (as root)";
