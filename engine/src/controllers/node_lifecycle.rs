//! kube-controller-manager's node lifecycle controller: a node whose kubelet stopped posting
//! status for the grace period gets `Ready=Unknown`, and `Ready=True` again once it posts.
//! The lab's kubelets "stop posting" while a `node-down` fault is armed on their node.

use crate::cluster::Condition;
use crate::control::{Component, Ctx};
use crate::faults::Target;

/// How long the node lifecycle controller waits for a silent kubelet before it marks the
/// node's Ready condition Unknown (kube-controller-manager `--node-monitor-grace-period`,
/// 40s).
pub const NODE_MONITOR_GRACE_SEC: crate::util::time::Millis = crate::util::time::Millis::secs(40);

/// The node lifecycle controller (stateless: it reads the Node objects and the heartbeats).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeLifecycle;

impl Component for NodeLifecycle {
    fn name(&self) -> &'static str {
        "node-lifecycle-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl NodeLifecycle {
    /// The earliest time after `now` at which a lost node's grace period runs out.
    pub fn next_timer(
        faults: &crate::faults::Faults,
        now: crate::util::time::Millis,
    ) -> Option<crate::util::time::Millis> {
        faults
            .armed
            .iter()
            .filter(|f| f.target == Target::NodeDown)
            .map(|f| f.armed_at.saturating_add(NODE_MONITOR_GRACE_SEC))
            .filter(|t| *t > now)
            .min()
    }

    /// The node lifecycle controller's view of lost nodes: Ready becomes Unknown once the
    /// kubelet has been silent for the grace period, and True again when it posts status.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = false;
        // Only the nodes whose Ready condition has to change, found by reading the Node
        // objects in place (in name order, as before): a tick on 1,000 nodes used to clone
        // every Node object to find the one or two lost ones.
        let flips: Vec<(String, bool)> = ctx
            .api
            .nodes
            .values()
            .filter_map(|o| {
                let n = o.name();
                let lost_since = ctx
                    .faults
                    .armed
                    .iter()
                    .find(|f| f.target == Target::NodeDown && f.node.as_deref() == Some(n))
                    .map(|f| f.armed_at);
                let want_unknown = lost_since
                    .is_some_and(|t| ctx.clock >= t.saturating_add(NODE_MONITOR_GRACE_SEC));
                let is_unknown = o
                    .status
                    .conditions
                    .iter()
                    .any(|c| c.condition_type == "Ready" && c.status == "Unknown");
                (want_unknown != is_unknown).then(|| (n.to_string(), want_unknown))
            })
            .collect();
        for (n, want_unknown) in flips {
            let Ok(cur) = ctx.api.nodes().get("", &n).cloned() else {
                continue;
            };
            let mut next = cur;
            next.status.conditions = vec![if want_unknown {
                Condition {
                    condition_type: "Ready".into(),
                    status: "Unknown".into(),
                    reason: "NodeStatusUnknown".into(),
                    message: "Kubelet stopped posting node status.".into(),
                }
            } else {
                Condition {
                    condition_type: "Ready".into(),
                    status: "True".into(),
                    reason: "KubeletReady".into(),
                    message: "kubelet is posting ready status".into(),
                }
            }];
            if ctx.api.nodes().update_status(&next).is_ok() {
                changed = true;
                if want_unknown {
                    ctx.log_warning(
                        "node-lifecycle-controller",
                        "NodeNotReady",
                        format!("node {n}: Ready=Unknown (Kubelet stopped posting node status.)"),
                    );
                } else {
                    ctx.log(
                        crate::record::Actor::kubelet(&n),
                        "NodeReady",
                        format!("node {n} status is now: NodeReady"),
                    );
                }
            }
        }
        changed
    }
}
