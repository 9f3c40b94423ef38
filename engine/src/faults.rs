//! Fault injection (`fault inject|list|clear`): the learner makes a CNI plugin or a CSI RPC
//! fail, crashes a component at a named point, or takes a node's kubelet away, and watches
//! the control loops retry and converge.
//!
//! Faults are deterministic: each is counted (`--times N`, default 1) and fires on the next
//! matching call; nothing is random. They are checked at a few hook points only:
//! - every plugin execution, delegated IPAM calls included (`cni::runtime::FaultHook`,
//!   implemented here by [`FaultScope`]): the plugin prints the CNI error JSON with the code;
//! - every CSI RPC (`Lab::csi_call`): the RPC answers the gRPC status;
//! - the crash points of [`CrashPoint`], each in the component it names;
//! - `node-down`: that node's kubelet stops acting until the fault is cleared.
//!
//! What the real components do after a crash (and what the lab models) is written on each
//! [`CrashPoint`]; the restart delays are [`KUBELET_RESTART_SEC`] and
//! [`container_restart_delay`].

use crate::cni::plugin::CniCommand;
use crate::cni::runtime::{FaultHook, Injected};
use crate::cni::types::CniError;
use crate::csi::status::{Code, Status};
use crate::util::time::Millis;
use std::collections::BTreeMap;
use std::fmt;

/// systemd restarts a dead kubelet after this many seconds (`RestartSec=10` in the
/// kubelet.service unit the Kubernetes packages ship).
pub(crate) const KUBELET_RESTART_SEC: Millis = Millis::secs(10);

/// The CNI code a plugin fault uses when `--code` is not given (11, "Try again later").
pub(crate) const DEFAULT_CNI_CODE: u32 = crate::cni::types::code::TRY_AGAIN_LATER;

/// The gRPC code a CSI fault uses when `--code` is not given.
pub(crate) const DEFAULT_GRPC_CODE: Code = Code::Unavailable;

/// kubelet's container restart backoff for a crashed sidecar container: the first restart is
/// immediate, then 10 s doubling up to 300 s (CrashLoopBackOff; `kubelet/kubelet.go`
/// `backOffPeriod`/`MaxContainerBackOff`). `restarts` counts earlier restarts.
pub(crate) fn container_restart_delay(restarts: u32) -> Millis {
    if restarts == 0 {
        return Millis::ZERO;
    }
    let shift = (restarts - 1).min(16);
    Millis::secs((10u64 << shift).min(300))
}

/// A named point where a component dies mid-operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CrashPoint {
    /// kubelet dies after NodeStageVolume returned, before NodePublishVolume. systemd
    /// restarts it after 10 s; it no longer knows the volume is staged, so it calls
    /// NodeStageVolume again (the driver must answer OK: same volume, same path) and then
    /// NodePublishVolume.
    KubeletAfterStage,
    /// The bridge plugin process is killed after its IPAM delegate allocated. libcni sees
    /// `netplugin failed with no error message: signal: killed`; containerd is alive, so it
    /// tears the failed ADD down with DEL and host-local releases the address: nothing leaks.
    BridgeAfterIpam,
    /// containerd itself dies during ADD, after the IPAM delegate allocated. No DEL follows
    /// and libcni never cached the result; kubelet's RunPodSandbox fails with `Unavailable`
    /// and is retried with a new sandbox ID. The old lease stays in host-local's store: it
    /// leaks. CNI GC does not help (libcni GC only DELs cached attachments and the reference
    /// plugins implement no GC); the cleanup is a DEL for the leaked container ID.
    ContainerdAfterIpam,
    /// external-provisioner dies after CreateVolume returned, before it wrote the PV. On
    /// restart it calls CreateVolume again with the same name (`pvc-<uid>`); the driver's
    /// idempotency returns the same volume and the PV is written: nothing leaks.
    ProvisionerAfterCreate,
    /// external-attacher dies after ControllerPublishVolume returned, before it wrote
    /// `status.attached`. On restart it publishes again (idempotent) and writes the status.
    AttacherAfterPublish,
}

/// Every crash point, in the order `help` lists them.
pub(crate) const CRASH_POINTS: [CrashPoint; 5] = [
    CrashPoint::KubeletAfterStage,
    CrashPoint::BridgeAfterIpam,
    CrashPoint::ContainerdAfterIpam,
    CrashPoint::ProvisionerAfterCreate,
    CrashPoint::AttacherAfterPublish,
];

impl CrashPoint {
    /// The name `fault inject` takes.
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::KubeletAfterStage => "kubelet-after-stage",
            CrashPoint::BridgeAfterIpam => "bridge-after-ipam",
            CrashPoint::ContainerdAfterIpam => "containerd-after-ipam",
            CrashPoint::ProvisionerAfterCreate => "provisioner-after-create",
            CrashPoint::AttacherAfterPublish => "attacher-after-publish",
        }
    }

    /// The crash point with this name.
    pub fn parse(s: &str) -> Option<CrashPoint> {
        CRASH_POINTS.iter().copied().find(|c| c.name() == s)
    }

    /// Whether the crash happens on a node (so `--node` narrows it).
    pub(crate) fn on_node(self) -> bool {
        matches!(
            self,
            CrashPoint::KubeletAfterStage
                | CrashPoint::BridgeAfterIpam
                | CrashPoint::ContainerdAfterIpam
        )
    }
}

/// What a fault hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A CNI plugin binary, by type, for one CNI command.
    Plugin {
        /// The plugin type (`bridge`, `host-local`, …).
        plugin_type: String,
        /// The command that fails (ADD unless `--command` says otherwise).
        command: CniCommand,
    },
    /// A CSI RPC by method name.
    Rpc(&'static str),
    /// A component dies at this point.
    Crash(CrashPoint),
    /// The node's kubelet stops acting (until cleared).
    NodeDown,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Plugin {
                plugin_type,
                command,
            } => write!(f, "{plugin_type} {}", command.as_str()),
            Target::Rpc(r) => f.write_str(r),
            Target::Crash(c) => f.write_str(c.name()),
            Target::NodeDown => f.write_str("node-down"),
        }
    }
}

/// The error a fault makes the call return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultCode {
    /// A CNI error code.
    Cni(u32),
    /// A gRPC status code.
    Grpc(Code),
    /// No code: a crash or a lost node.
    None,
}

impl fmt::Display for FaultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultCode::Cni(c) => write!(f, "CNI code {c}"),
            FaultCode::Grpc(c) => write!(f, "{c}"),
            FaultCode::None => f.write_str("-"),
        }
    }
}

/// One armed fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Its number (`fault clear ID`).
    pub id: u32,
    /// What it hits.
    pub target: Target,
    /// Only on this node (any node when absent).
    pub node: Option<String>,
    /// Calls left before it is spent (`None`: until cleared, for `node-down`).
    pub remaining: Option<u32>,
    /// The error it injects.
    pub code: FaultCode,
    /// How many times it fired.
    pub fired: u32,
    /// The logical clock when it was armed.
    pub armed_at: Millis,
}

impl Fault {
    fn matches_node(&self, node: Option<&str>) -> bool {
        match (&self.node, node) {
            (None, _) => true,
            (Some(want), Some(n)) => want == n,
            (Some(_), None) => false,
        }
    }

    /// The message an injected error carries.
    pub fn message(&self) -> String {
        format!(
            "injected fault #{}: {} fails ({})",
            self.id, self.target, self.code
        )
    }
}

/// The armed faults and the state of what they broke.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Armed faults in the order they were armed.
    pub armed: Vec<Fault>,
    /// The next fault number.
    pub next_id: u32,
    /// kubelets restarting after a crash: node → the tick they are back.
    pub kubelet_down_until: BTreeMap<String, Millis>,
    /// Restarts of each sidecar container so far (for CrashLoopBackOff).
    pub restarts: BTreeMap<&'static str, u32>,
}

/// What `fault inject` was asked for, before validation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request<'a> {
    /// The target name.
    pub target: &'a str,
    /// `--node`.
    pub node: Option<&'a str>,
    /// `--times`.
    pub times: Option<u32>,
    /// `--code`.
    pub code: Option<&'a str>,
    /// `--command` (plugin faults only).
    pub command: Option<&'a str>,
}

/// Parse a CNI error code: a number (the well-known codes 1–11, 50, 51, 999, or 100+ for
/// plugin-specific errors).
pub(crate) fn parse_cni_code(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| {
        format!("invalid CNI code {s:?}: expected a number (1-7, 11, 50, 51, 999, or 100 and up)")
    })?;
    if n == 0 {
        return Err(
            "invalid CNI code 0: 0 is success; use 1-7, 11, 50, 51, 999, or 100 and up".into(),
        );
    }
    Ok(n)
}

/// Parse a gRPC code: a name (`UNAVAILABLE`, `Unavailable`) or a number 1–16.
pub(crate) fn parse_grpc_code(s: &str) -> Result<Code, String> {
    let all: Vec<Code> = (1..=16).filter_map(Code::from_number).collect();
    let found = match s.parse::<i32>() {
        Ok(n) => Code::from_number(n).filter(|c| *c != Code::Ok),
        Err(_) => all
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(s) || c.go_name().eq_ignore_ascii_case(s)),
    };
    found.ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|c| c.name()).collect();
        format!(
            "invalid gRPC code {s:?}: expected a number 1-16 or one of {}",
            names.join(", ")
        )
    })
}

/// The names `fault inject` accepts, for error messages and help.
pub(crate) fn valid_targets(plugins: &[String]) -> String {
    let crashes: Vec<&str> = CRASH_POINTS.iter().map(|c| c.name()).collect();
    let rpcs: Vec<&str> = crate::csi::dispatch::RPCS.iter().map(|(m, _)| *m).collect();
    format!(
        "a CNI plugin type ({}), a CSI RPC ({}), a crash point ({}) or node-down",
        plugins.join(", "),
        rpcs.join(", "),
        crashes.join(", ")
    )
}

impl Faults {
    /// Arm a fault. `plugins` are the installed plugin types, `nodes` the known nodes. A
    /// rejected request changes nothing.
    pub(crate) fn arm(
        &mut self,
        req: &Request,
        plugins: &[String],
        nodes: &[String],
    ) -> Result<Fault, String> {
        if let Some(n) = req.node
            && !nodes.iter().any(|k| k == n)
        {
            return Err(format!(
                "node {n:?} not found (nodes: {})",
                nodes.join(", ")
            ));
        }
        if req.times == Some(0) {
            return Err("--times must be at least 1".into());
        }
        let (target, code) = if req.target == "node-down" {
            if req.node.is_none() {
                return Err("node-down needs --node NODE (which node is lost)".into());
            }
            if req.code.is_some() || req.times.is_some() || req.command.is_some() {
                return Err(
                    "node-down takes only --node: the node stays down until `fault clear`".into(),
                );
            }
            (Target::NodeDown, FaultCode::None)
        } else if let Some(c) = CrashPoint::parse(req.target) {
            if req.code.is_some() || req.command.is_some() {
                return Err(format!(
                    "{} is a crash point: it takes --node and --times, not --code or --command",
                    c.name()
                ));
            }
            if req.node.is_some() && !c.on_node() {
                return Err(format!(
                    "{} happens in a controller, not on a node: drop --node",
                    c.name()
                ));
            }
            (Target::Crash(c), FaultCode::None)
        } else if plugins.iter().any(|p| p == req.target) {
            let command = match req.command.map(|c| c.to_ascii_uppercase()).as_deref() {
                None | Some("ADD") => CniCommand::Add,
                Some("DEL") => CniCommand::Del,
                Some("CHECK") => CniCommand::Check,
                Some(other) => {
                    return Err(format!(
                        "invalid --command {other:?}: expected ADD, DEL or CHECK"
                    ));
                }
            };
            let code = match req.code {
                Some(c) => parse_cni_code(c)?,
                None => DEFAULT_CNI_CODE,
            };
            (
                Target::Plugin {
                    plugin_type: req.target.to_string(),
                    command,
                },
                FaultCode::Cni(code),
            )
        } else if let Some((m, _)) = crate::csi::dispatch::RPCS
            .iter()
            .find(|(m, _)| *m == req.target)
        {
            if req.command.is_some() {
                return Err("--command is for CNI plugin faults".into());
            }
            let code = match req.code {
                Some(c) => parse_grpc_code(c)?,
                None => DEFAULT_GRPC_CODE,
            };
            (Target::Rpc(m), FaultCode::Grpc(code))
        } else {
            return Err(format!(
                "unknown fault target {:?}: expected {}",
                req.target,
                valid_targets(plugins)
            ));
        };
        self.next_id += 1;
        let fault = Fault {
            id: self.next_id,
            remaining: match target {
                Target::NodeDown => None,
                _ => Some(req.times.unwrap_or(1)),
            },
            target,
            node: req.node.map(str::to_string),
            code,
            fired: 0,
            armed_at: Millis::ZERO,
        };
        self.armed.push(fault.clone());
        Ok(fault)
    }

    /// Find the first armed fault matching `pred` and count one firing; a spent fault is
    /// removed. Returns a copy of it as it fired.
    fn fire(&mut self, pred: impl Fn(&Fault) -> bool) -> Option<Fault> {
        let i = self.armed.iter().position(pred)?;
        let f = self.armed.get_mut(i)?;
        f.fired += 1;
        if let Some(r) = f.remaining.as_mut() {
            *r = r.saturating_sub(1);
        }
        let out = f.clone();
        if out.remaining == Some(0) {
            self.armed.remove(i);
        }
        Some(out)
    }

    /// A plugin execution: the CNI error to print instead, if a fault is armed for it.
    pub(crate) fn take_plugin(
        &mut self,
        node: &str,
        plugin_type: &str,
        cmd: CniCommand,
    ) -> Option<CniError> {
        let f = self.fire(|f| {
            matches!(&f.target, Target::Plugin { plugin_type: t, command } if t == plugin_type && *command == cmd)
                && f.matches_node(Some(node))
        })?;
        let code = match f.code {
            FaultCode::Cni(c) => c,
            _ => DEFAULT_CNI_CODE,
        };
        Some(CniError::new(code, f.message()))
    }

    /// A CSI RPC: the status to answer instead, if a fault is armed for it.
    pub(crate) fn take_rpc(&mut self, node: Option<&str>, rpc: &str) -> Option<Status> {
        let f =
            self.fire(|f| matches!(f.target, Target::Rpc(r) if r == rpc) && f.matches_node(node))?;
        let code = match f.code {
            FaultCode::Grpc(c) => c,
            _ => DEFAULT_GRPC_CODE,
        };
        Some(Status::new(code, f.message()))
    }

    /// A crash point is reached: the fault number if a crash is armed there.
    pub(crate) fn take_crash(&mut self, node: Option<&str>, point: CrashPoint) -> Option<u32> {
        self.fire(|f| f.target == Target::Crash(point) && f.matches_node(node))
            .map(|f| f.id)
    }

    /// Whether a node is lost (`node-down`).
    pub(crate) fn node_down(&self, node: &str) -> bool {
        self.armed
            .iter()
            .any(|f| f.target == Target::NodeDown && f.node.as_deref() == Some(node))
    }

    /// Whether a node's kubelet cannot act at `clock` (node lost, or restarting after a
    /// crash).
    pub(crate) fn kubelet_down(&self, node: &str, clock: Millis) -> bool {
        self.node_down(node)
            || self
                .kubelet_down_until
                .get(node)
                .is_some_and(|t| *t > clock)
    }

    /// The earliest time after `now` at which systemd has a crashed kubelet back.
    pub fn next_kubelet_restart(&self, now: Millis) -> Option<Millis> {
        self.kubelet_down_until
            .values()
            .copied()
            .filter(|t| *t > now)
            .min()
    }

    /// Remove one fault (by number) or all; returns what was removed.
    pub fn clear(&mut self, id: Option<u32>) -> Result<Vec<Fault>, String> {
        match id {
            None => Ok(std::mem::take(&mut self.armed)),
            Some(id) => match self.armed.iter().position(|f| f.id == id) {
                Some(i) => Ok(vec![self.armed.remove(i)]),
                None => {
                    let ids: Vec<String> =
                        self.armed.iter().map(|f| format!("#{}", f.id)).collect();
                    Err(if ids.is_empty() {
                        format!("fault #{id} not found: no fault is armed")
                    } else {
                        format!("fault #{id} not found (armed: {})", ids.join(", "))
                    })
                }
            },
        }
    }

    /// Count a restart of a sidecar container and return its delay before it runs again.
    pub(crate) fn restart_delay(&mut self, container: &'static str) -> Millis {
        let n = self.restarts.entry(container).or_insert(0);
        let d = container_restart_delay(*n);
        *n += 1;
        d
    }
}

/// The fault table seen from one node's plugin executions (`cni::runtime::FaultHook`).
pub(crate) struct FaultScope<'a> {
    /// The table.
    pub faults: &'a mut Faults,
    /// The node the plugins run on.
    pub node: &'a str,
    /// Set when containerd died mid-ADD (`containerd-after-ipam`).
    pub runtime_died: Option<u32>,
    /// Set when the bridge plugin was killed (`bridge-after-ipam`).
    pub plugin_killed: Option<u32>,
}

impl<'a> FaultScope<'a> {
    /// A scope for plugin executions on `node`.
    pub fn new(faults: &'a mut Faults, node: &'a str) -> Self {
        FaultScope {
            faults,
            node,
            runtime_died: None,
            plugin_killed: None,
        }
    }
}

impl FaultHook for FaultScope<'_> {
    fn on_exec(&mut self, plugin_type: &str, cmd: CniCommand, delegated: bool) -> Option<Injected> {
        if let Some(e) = self.faults.take_plugin(self.node, plugin_type, cmd) {
            return Some(Injected::Error(e));
        }
        if delegated || cmd != CniCommand::Add || plugin_type != "bridge" {
            return None;
        }
        let node = Some(self.node);
        if let Some(id) = self
            .faults
            .take_crash(node, CrashPoint::ContainerdAfterIpam)
        {
            self.runtime_died = Some(id);
            return Some(Injected::KilledAfterIpam);
        }
        if let Some(id) = self.faults.take_crash(node, CrashPoint::BridgeAfterIpam) {
            self.plugin_killed = Some(id);
            return Some(Injected::KilledAfterIpam);
        }
        None
    }

    fn runtime_died(&self) -> bool {
        self.runtime_died.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugins() -> Vec<String> {
        ["bridge", "host-local", "portmap"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn nodes() -> Vec<String> {
        vec!["node-1".into(), "node-2".into()]
    }

    fn req(target: &str) -> Request<'_> {
        Request {
            target,
            ..Default::default()
        }
    }

    #[test]
    fn plugin_fault_counts_down_and_is_spent() {
        let mut f = Faults::default();
        let r = Request {
            times: Some(2),
            code: Some("5"),
            ..req("bridge")
        };
        let fault = f.arm(&r, &plugins(), &nodes()).unwrap();
        assert_eq!(fault.id, 1);
        assert_eq!(fault.code, FaultCode::Cni(5));
        // DEL is not the armed command.
        assert!(f.take_plugin("node-1", "bridge", CniCommand::Del).is_none());
        let e = f.take_plugin("node-1", "bridge", CniCommand::Add).unwrap();
        assert_eq!(e.code, 5);
        assert_eq!(e.msg, "injected fault #1: bridge ADD fails (CNI code 5)");
        assert_eq!(f.armed[0].remaining, Some(1));
        assert!(f.take_plugin("node-2", "bridge", CniCommand::Add).is_some());
        assert!(f.armed.is_empty(), "spent after two calls");
        assert!(f.take_plugin("node-1", "bridge", CniCommand::Add).is_none());
    }

    #[test]
    fn node_scoped_fault_only_fires_there() {
        let mut f = Faults::default();
        let r = Request {
            node: Some("node-2"),
            ..req("host-local")
        };
        f.arm(&r, &plugins(), &nodes()).unwrap();
        assert!(
            f.take_plugin("node-1", "host-local", CniCommand::Add)
                .is_none()
        );
        let e = f
            .take_plugin("node-2", "host-local", CniCommand::Add)
            .unwrap();
        assert_eq!(e.code, 11, "default CNI code is 11 (try again later)");
    }

    #[test]
    fn rpc_fault_takes_names_and_numbers() {
        let mut f = Faults::default();
        f.arm(&req("CreateVolume"), &plugins(), &nodes()).unwrap();
        let r = Request {
            code: Some("resource_exhausted"),
            ..req("NodeStageVolume")
        };
        f.arm(&r, &plugins(), &nodes()).unwrap();
        let r = Request {
            code: Some("9"),
            ..req("DeleteVolume")
        };
        f.arm(&r, &plugins(), &nodes()).unwrap();
        let s = f.take_rpc(None, "CreateVolume").unwrap();
        assert_eq!(s.code, Code::Unavailable);
        assert_eq!(
            s.go_error_string(),
            "rpc error: code = Unavailable desc = injected fault #1: CreateVolume fails (UNAVAILABLE (14))"
        );
        assert_eq!(
            f.take_rpc(Some("node-1"), "NodeStageVolume").unwrap().code,
            Code::ResourceExhausted
        );
        assert_eq!(
            f.take_rpc(None, "DeleteVolume").unwrap().code,
            Code::FailedPrecondition
        );
    }

    #[test]
    fn unknown_target_lists_the_valid_ones_and_changes_nothing() {
        let mut f = Faults::default();
        let e = f.arm(&req("flannel"), &plugins(), &nodes()).unwrap_err();
        assert!(e.starts_with("unknown fault target \"flannel\": expected a CNI plugin type (bridge, host-local, portmap), a CSI RPC (GetPluginInfo,"), "{e}");
        assert!(e.contains("a crash point (kubelet-after-stage, bridge-after-ipam, containerd-after-ipam, provisioner-after-create, attacher-after-publish) or node-down"), "{e}");
        assert!(f.armed.is_empty());
        assert_eq!(f.next_id, 0);
    }

    #[test]
    fn bad_codes_and_options_are_rejected() {
        let mut f = Faults::default();
        let bad = |f: &mut Faults, r: Request| f.arm(&r, &plugins(), &nodes()).unwrap_err();
        let e = bad(
            &mut f,
            Request {
                code: Some("SLOW"),
                ..req("CreateVolume")
            },
        );
        assert!(
            e.starts_with(
                "invalid gRPC code \"SLOW\": expected a number 1-16 or one of CANCELLED, UNKNOWN,"
            ),
            "{e}"
        );
        let e = bad(
            &mut f,
            Request {
                code: Some("0"),
                ..req("CreateVolume")
            },
        );
        assert!(e.starts_with("invalid gRPC code \"0\""), "{e}");
        let e = bad(
            &mut f,
            Request {
                code: Some("x"),
                ..req("bridge")
            },
        );
        assert!(e.starts_with("invalid CNI code \"x\""), "{e}");
        let e = bad(
            &mut f,
            Request {
                times: Some(0),
                ..req("bridge")
            },
        );
        assert_eq!(e, "--times must be at least 1");
        let e = bad(&mut f, req("node-down"));
        assert_eq!(e, "node-down needs --node NODE (which node is lost)");
        let e = bad(
            &mut f,
            Request {
                node: Some("node-9"),
                ..req("bridge")
            },
        );
        assert_eq!(e, "node \"node-9\" not found (nodes: node-1, node-2)");
        let e = bad(
            &mut f,
            Request {
                node: Some("node-1"),
                ..req("provisioner-after-create")
            },
        );
        assert!(e.contains("drop --node"), "{e}");
        let e = bad(
            &mut f,
            Request {
                command: Some("GC"),
                ..req("bridge")
            },
        );
        assert_eq!(e, "invalid --command \"GC\": expected ADD, DEL or CHECK");
        assert!(f.armed.is_empty());
    }

    #[test]
    fn crash_and_node_down_and_clear() {
        let mut f = Faults::default();
        f.arm(&req("provisioner-after-create"), &plugins(), &nodes())
            .unwrap();
        let down = Request {
            node: Some("node-2"),
            ..req("node-down")
        };
        f.arm(&down, &plugins(), &nodes()).unwrap();
        assert!(f.node_down("node-2"));
        assert!(f.kubelet_down("node-2", Millis::secs(1000)));
        assert!(!f.kubelet_down("node-1", Millis::ZERO));
        assert_eq!(f.take_crash(None, CrashPoint::AttacherAfterPublish), None);
        assert_eq!(
            f.take_crash(None, CrashPoint::ProvisionerAfterCreate),
            Some(1)
        );
        assert_eq!(f.take_crash(None, CrashPoint::ProvisionerAfterCreate), None);
        // node-down never counts down.
        assert!(f.node_down("node-2"));
        assert_eq!(
            f.clear(Some(7)).unwrap_err(),
            "fault #7 not found (armed: #2)"
        );
        assert_eq!(f.clear(Some(2)).unwrap().len(), 1);
        assert!(!f.node_down("node-2"));
        assert_eq!(
            f.clear(Some(2)).unwrap_err(),
            "fault #2 not found: no fault is armed"
        );
        assert!(f.clear(None).unwrap().is_empty());
    }

    #[test]
    fn restart_backoff_is_crashloop_like() {
        assert_eq!(container_restart_delay(0), Millis::ZERO);
        assert_eq!(container_restart_delay(1), Millis::secs(10));
        assert_eq!(container_restart_delay(2), Millis::secs(20));
        assert_eq!(container_restart_delay(6), Millis::secs(300));
        assert_eq!(container_restart_delay(40), Millis::secs(300));
    }

    #[test]
    fn scope_crashes_only_bridge_add() {
        let mut f = Faults::default();
        f.arm(&req("containerd-after-ipam"), &plugins(), &nodes())
            .unwrap();
        let mut s = FaultScope::new(&mut f, "node-1");
        assert!(s.on_exec("host-local", CniCommand::Add, true).is_none());
        assert!(s.on_exec("bridge", CniCommand::Del, false).is_none());
        assert_eq!(
            s.on_exec("bridge", CniCommand::Add, false),
            Some(Injected::KilledAfterIpam)
        );
        assert!(s.runtime_died());
    }
}
