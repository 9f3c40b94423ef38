//! `fault inject|list|clear` and what the lab does when an armed crash fires: the component
//! logs its death, restarts after the delay its supervisor uses, and resumes from what it
//! can see (the API objects, the driver's state), which is how real clusters converge.

use super::{Lab, LabError};
use crate::command::grammar::FaultCmd;
use crate::faults::{Fault, FaultCode, Request, Target};
use crate::record::{Actor, CallEvent, Level};
use crate::render::{Line, Outcome, Role, Table};

/// kube-controller-manager's `--node-monitor-grace-period` (40 s up to v1.31): after this
/// long without a status from the kubelet, the node lifecycle controller sets Ready to
/// Unknown.
pub use crate::controllers::node_lifecycle::NODE_MONITOR_GRACE_SEC;

impl Lab {
    /// Dispatch a `fault …` command.
    pub fn fault(&mut self, cmd: FaultCmd) -> Result<Outcome, LabError> {
        match cmd {
            FaultCmd::Inject {
                target,
                node,
                times,
                code,
                cni_command,
            } => {
                let plugins: Vec<String> = self
                    .registry
                    .names()
                    .into_iter()
                    .map(str::to_string)
                    .collect();
                let nodes: Vec<String> = self.nodes.keys().cloned().collect();
                let req = Request {
                    target: &target,
                    node: node.as_deref(),
                    times,
                    code: code.as_deref(),
                    command: cni_command.as_deref(),
                };
                let mut fault = self
                    .faults
                    .arm(&req, &plugins, &nodes)
                    .map_err(LabError::msg)?;
                fault.armed_at = self.clock;
                if let Some(f) = self.faults.armed.last_mut() {
                    f.armed_at = self.clock;
                }
                let text = describe(&fault);
                self.log_warning("lab", "fault inject", format!("#{} {text}", fault.id));
                if fault.target == Target::NodeDown {
                    let n = fault.node.clone().unwrap_or_default();
                    self.log_warning(
                        Actor::kubelet(&n),
                        "down",
                        format!(
                            "{n} is lost: its kubelet stops syncing pods and posting status; the node lifecycle controller marks it NotReady after {} without a status (`tick {}`)",
                            NODE_MONITOR_GRACE_SEC.secs_text(),
                            NODE_MONITOR_GRACE_SEC.tick_arg()
                        ),
                    );
                }
                let mut out = Outcome::empty();
                out.line(Line::styled(
                    format!("fault #{} armed: {text}", fault.id),
                    Role::Warn,
                ));
                Ok(out)
            }
            FaultCmd::List => Ok(self.fault_list()),
            FaultCmd::Clear { id } => {
                let id = match id.as_deref() {
                    None | Some("all") => None,
                    Some(s) => Some(
                        s.trim_start_matches('#')
                            .parse::<u32>()
                            .map_err(|_| {
                                LabError::msg(format!(
                                    "invalid fault {s:?}: expected a fault number (see `fault list`) or `all`"
                                ))
                            })?,
                    ),
                };
                let removed = self.faults.clear(id).map_err(LabError::msg)?;
                let mut out = Outcome::empty();
                if removed.is_empty() {
                    out.line(Line::styled("no fault is armed", Role::Dim));
                }
                for f in &removed {
                    out.line(Line::styled(
                        format!("fault #{} cleared: {}", f.id, subject(f)),
                        Role::Good,
                    ));
                    self.log("lab", "fault clear", format!("#{} {}", f.id, f.target));
                    if f.target == Target::NodeDown {
                        let n = f.node.clone().unwrap_or_default();
                        self.node_back(&n);
                    }
                }
                Ok(out)
            }
        }
    }

    fn fault_list(&self) -> Outcome {
        let mut out = Outcome::empty();
        if self.faults.armed.is_empty() {
            out.line(Line::styled(
                "no fault is armed (`fault inject TARGET` arms one; `help fault inject` lists the targets)",
                Role::Dim,
            ));
            return out;
        }
        let mut t = Table::new(&["ID", "TARGET", "NODE", "CODE", "LEFT", "FIRED", "SINCE"]);
        for f in &self.faults.armed {
            t.row([
                format!("#{}", f.id),
                f.target.to_string(),
                f.node.clone().unwrap_or_else(|| "*".into()),
                f.code.to_string(),
                f.remaining
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| "until cleared".into()),
                f.fired.to_string(),
                format!("t={}", f.armed_at.secs_text()),
            ]);
        }
        out.extend(t.render());
        out
    }

    fn log_warning(&mut self, actor: impl Into<Actor>, action: &'static str, detail: String) {
        let e = CallEvent::step(
            self.clock,
            actor.into(),
            action,
            detail.into(),
            Level::Warning,
        );
        self.log_event(e);
    }

    /// A lost node comes back: its kubelet posts status again and syncs every pod it has.
    fn node_back(&mut self, node: &str) {
        self.log(
            Actor::kubelet(node),
            "up",
            format!("{node} is back: the kubelet syncs its pods again"),
        );
        let pods: Vec<(String, String)> = self.cluster.fields.pods_on_node(node).cloned().collect();
        self.dirty.extend(pods);
        self.node_lifecycle();
    }
}

/// One line about a fault: what fails, where, how, how often.
fn describe(f: &Fault) -> String {
    match f.target {
        Target::NodeDown => format!("{} until `fault clear {}`", subject(f), f.id),
        _ => format!("{}, {}", subject(f), times(f)),
    }
}

/// What a fault breaks and where, without how long (`node-down on node-1`, `ADD fails with
/// 999 on node-1`): what `fault clear` says it cleared.
fn subject(f: &Fault) -> String {
    let node = f
        .node
        .as_deref()
        .map(|n| format!("on {n}"))
        .unwrap_or_else(|| "on any node".into());
    match (&f.target, f.code) {
        (Target::NodeDown, _) => format!("node-down {node}"),
        (Target::Crash(c), _) => format!(
            "crash at {}{}",
            c.name(),
            if c.on_node() {
                format!(" {node}")
            } else {
                String::new()
            }
        ),
        (t, FaultCode::None) => format!("{t} {node}"),
        (t, code) => format!("{t} fails with {code} {node}"),
    }
}

fn times(f: &Fault) -> String {
    match f.remaining {
        Some(1) => "next call".into(),
        Some(n) => format!("next {n} calls"),
        None => "until cleared".into(),
    }
}
