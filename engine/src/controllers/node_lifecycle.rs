//! kube-controller-manager's node lifecycle controller: a node whose kubelet stopped posting
//! status for the grace period gets `Ready=Unknown`, and `Ready=True` again once it posts.
//! The lab's kubelets "stop posting" while a `node-down` fault is armed on their node.
//!
//! It also taints a node whose Ready condition is not True
//! (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`): `Ready=False` gives
//! `node.kubernetes.io/not-ready`, `Ready=Unknown` `node.kubernetes.io/unreachable`, each
//! with `NoSchedule` (TaintNodesByCondition, `doNoScheduleTaintingPass`, on the Node's
//! update) and `NoExecute` (taint-based eviction, `doNoExecuteTaintingPass`, which swaps one
//! key for the other at once). Both carry `timeAdded` (`SwapNodeControllerTaint` stamps
//! every taint it adds) and go when Ready is True again (`markNodeAsReachable`). The real
//! NoExecute taint follows on the next `monitorNodeHealth` pass (every 5 s) through a rate
//! limited queue; the lab adds both in one pass. When a node stops being Ready its pods are
//! marked not ready (`MarkPodsNotReady`); the taint eviction controller
//! ([`super::taint_eviction`]) deletes them once their 300 s toleration of the NoExecute
//! taint (DefaultTolerationSeconds) runs out.

use crate::cluster::{ApiKind, NodeSpec, Object, ObjectRef, Taint};

/// The node lifecycle controller's event source (`EventSource{Component: "node-controller"}`).
const NODE_CONTROLLER: &str = "node-controller";
use crate::control::{Component, Ctx};
use crate::faults::Target;

/// How long the node lifecycle controller waits for a silent kubelet before it marks the
/// node's Ready condition Unknown (kube-controller-manager `--node-monitor-grace-period`,
/// 40s).
pub const NODE_MONITOR_GRACE_SEC: crate::util::time::Millis = crate::util::time::Millis::secs(40);

/// The taint key of a node whose Ready condition is False (`v1.TaintNodeNotReady`).
pub(crate) const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";
/// The taint key of a node whose Ready condition is Unknown (`v1.TaintNodeUnreachable`).
pub(crate) const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";
/// The effects the controller gives each of its two keys, in the order it adds them.
const EFFECTS: [&str; 2] = ["NoSchedule", "NoExecute"];

/// The key the controller's taints have on a node in this state: none while Ready is True
/// (or absent: `nodeConditionToTaintKeyStatusMap` maps only False and Unknown).
fn wanted_key(node: &Object<NodeSpec>) -> Option<&'static str> {
    let ready = node
        .status
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready")?;
    match &*ready.status {
        "False" => Some(NOT_READY_TAINT),
        "Unknown" => Some(UNREACHABLE_TAINT),
        _ => None,
    }
}

/// One of the controller's taints (either key, any effect).
fn is_ours(t: &Taint) -> bool {
    t.key == NOT_READY_TAINT || t.key == UNREACHABLE_TAINT
}

/// Whether the node carries exactly the controller's taints its Ready condition calls for
/// (read in place: a pass over 5,000 nodes allocates nothing for the matching ones).
fn taints_match(node: &Object<NodeSpec>) -> bool {
    let taints = &node.spec.taints;
    let ours = taints.iter().filter(|t| is_ours(t));
    match wanted_key(node) {
        None => ours.count() == 0,
        Some(key) => {
            ours.clone().all(|t| t.key == key)
                && ours.count() == EFFECTS.len()
                && EFFECTS
                    .iter()
                    .all(|e| taints.iter().any(|t| t.key == key && t.effect == *e))
        }
    }
}

/// The node's taints with the controller's brought in line with its Ready condition: the
/// stale ones removed (`RemoveTaintOffNode`), the missing ones appended
/// (`AddOrUpdateTaintOnNode` appends) with `timeAdded` now; every other taint kept.
fn retaint(node: &Object<NodeSpec>, now: crate::util::time::Millis) -> Vec<Taint> {
    let want = wanted_key(node);
    let mut taints: Vec<Taint> = Vec::with_capacity(node.spec.taints.len() + EFFECTS.len());
    for t in &node.spec.taints {
        let keep = !is_ours(t)
            || (Some(&*t.key) == want
                && EFFECTS.contains(&&*t.effect)
                && !taints
                    .iter()
                    .any(|k| k.key == t.key && k.effect == t.effect));
        if keep {
            taints.push(t.clone());
        }
    }
    if let Some(key) = want {
        for effect in EFFECTS {
            if !taints.iter().any(|t| t.key == key && t.effect == effect) {
                taints.push(Taint {
                    key: key.into(),
                    effect: effect.into(),
                    time_added: Some(now),
                });
            }
        }
    }
    taints
}

/// `MarkPodsNotReady` (`pkg/controller/util/node`): when a node stops being Ready, every
/// pod on it whose Ready condition is True gets it False (one status update each, in pod
/// order; nothing else of the pod changes) and a Warning `NodeNotReady` "Node is not ready"
/// event. Its kubelet posts Ready again once it is back. The lab does it for a lost node
/// (Ready Unknown); for a Ready=False its live kubelet posted, the real kubelet's status
/// manager puts the pods' Ready back within seconds, and the lab leaves them as they are.
fn mark_pods_not_ready(ctx: &mut Ctx<'_>, node: &str) {
    let ready = |p: &Object<crate::cluster::PodSpec>| {
        p.status
            .conditions
            .iter()
            .any(|c| c.condition_type == "Ready" && c.status == "True")
    };
    let pods: Vec<(String, String)> = ctx
        .api
        .pods_on_node(node)
        .filter(|p| ready(p))
        .map(|p| (p.metadata.namespace().clone(), p.metadata.name().clone()))
        .collect();
    for key in pods {
        let written = ctx.write_pod_status(&key, "node-lifecycle-controller", |s| {
            if let Some(c) = s
                .conditions
                .to_mut()
                .iter_mut()
                .find(|c| c.condition_type == "Ready")
            {
                c.status = "False".into();
            }
        });
        // "record NodeNotReady event after updateStatus to make sure pod still exists",
        // through the controller's recorder (source `node-controller`).
        if written.is_ok() && ctx.api.pods.get(&key).is_some() {
            ctx.event_from(
                "node-lifecycle-controller",
                Some(NODE_CONTROLLER),
                "NodeNotReady",
                "Node is not ready",
                ObjectRef::new(ApiKind::Pod, key.0, key.1),
                crate::record::Level::Warning,
            );
        }
    }
}

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
    /// kubelet has been silent for the grace period, and True again when it posts status;
    /// then every node's taints follow its Ready condition.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = self.flip_ready(ctx);
        changed |= Self::taint_pass(ctx);
        changed
    }

    /// Ready's taints on every node whose taints do not match its Ready condition (in name
    /// order); no event (the real controller records none for a taint).
    fn taint_pass(ctx: &mut Ctx<'_>) -> bool {
        let stale: Vec<String> = ctx
            .api
            .nodes
            .values()
            .filter(|o| !taints_match(o))
            .map(|o| o.name().to_string())
            .collect();
        let mut changed = false;
        for n in stale {
            changed |= Self::taint_node(ctx, &n);
        }
        changed
    }

    /// The controller seeing one Node's update (its informer's event,
    /// `doNoScheduleTaintingPass` for that node): its taints brought in line with its Ready
    /// condition. True when the Node changed.
    pub fn taint_node(ctx: &mut Ctx<'_>, node: &str) -> bool {
        let Some(cur) = ctx.api.nodes.get(&(String::new(), node.to_string())) else {
            return false;
        };
        if taints_match(cur) {
            return false;
        }
        let mut next = cur.clone();
        next.spec.taints = retaint(&next, ctx.clock);
        ctx.api.nodes().update(next).is_ok()
    }

    /// Ready becomes Unknown on a node silent for the grace period, True on one posting again.
    fn flip_ready(&mut self, ctx: &mut Ctx<'_>) -> bool {
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
            if want_unknown {
                // tryUpdateNodeHealth: every condition kubelet posts goes Unknown.
                for c in &mut next.status.conditions {
                    c.status = "Unknown".into();
                    c.reason = "NodeStatusUnknown".into();
                    c.message = "Kubelet stopped posting node status.".into();
                }
            } else {
                // The kubelet posts its status again.
                next.status.conditions =
                    crate::kubelet::node_conditions(crate::kubelet::node_ready());
            }
            if ctx.api.nodes().update_status(&next).is_ok() {
                changed = true;
                if want_unknown {
                    // `RecordNodeStatusChange`: a Normal event on the Node, then the pods.
                    ctx.event_from(
                        "node-lifecycle-controller",
                        Some(NODE_CONTROLLER),
                        "NodeNotReady",
                        format!("Node {n} status is now: NodeNotReady"),
                        ObjectRef::new(ApiKind::Node, "", n.clone()),
                        crate::record::Level::Normal,
                    );
                    mark_pods_not_ready(ctx, &n);
                } else {
                    // kubelet's `recordNodeStatusEvent` once it posts Ready again.
                    ctx.event(
                        crate::record::Actor::kubelet(&n),
                        "NodeReady",
                        format!("Node {n} status is now: NodeReady"),
                        ObjectRef::new(ApiKind::Node, "", n.clone()),
                        crate::record::Level::Normal,
                    );
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Condition;
    use crate::util::time::Millis;

    fn node(ready: &str, taints: &[(&str, &str)]) -> Object<NodeSpec> {
        let mut n = Object::new("n1", "", NodeSpec::default());
        n.status.conditions = vec![Condition {
            condition_type: "Ready".into(),
            status: ready.to_string().into(),
            reason: "".into(),
            message: "".into(),
        }];
        n.spec.taints = taints
            .iter()
            .map(|(k, e)| Taint {
                key: (*k).into(),
                effect: (*e).into(),
                time_added: Some(THEN),
            })
            .collect();
        n
    }

    const THEN: Millis = Millis::secs(1);
    const NOW: Millis = Millis::secs(2);
    const LATER: Millis = Millis::secs(3);
    const AGAIN: Millis = Millis::secs(4);
    const BACK: Millis = Millis::secs(5);

    /// The test's name for a time.
    fn at(t: Option<Millis>) -> &'static str {
        match t.map(Millis::whole_secs) {
            Some(1) => "then",
            Some(2) => "now",
            Some(3) => "later",
            _ => "?",
        }
    }

    fn keys(taints: &[Taint]) -> Vec<String> {
        taints
            .iter()
            .map(|t| format!("{}:{}@{}", t.key, t.effect, at(t.time_added)))
            .collect()
    }

    /// The controller's taints follow Ready (swapped from one key to the other, appended
    /// with the time now), and a cordoned node's taint stays where it was.
    #[test]
    fn taints_follow_ready_and_keep_the_others() {
        let cordon = (crate::cluster::UNSCHEDULABLE_TAINT, "NoSchedule");
        let n = node("False", &[cordon]);
        assert!(!taints_match(&n));
        let t = retaint(&n, NOW);
        assert_eq!(
            keys(&t),
            [
                "node.kubernetes.io/unschedulable:NoSchedule@then",
                "node.kubernetes.io/not-ready:NoSchedule@now",
                "node.kubernetes.io/not-ready:NoExecute@now",
            ]
        );
        let mut n = node("Unknown", &[]);
        n.spec.taints = t;
        assert!(!taints_match(&n));
        n.spec.taints = retaint(&n, LATER);
        assert_eq!(
            keys(&n.spec.taints),
            [
                "node.kubernetes.io/unschedulable:NoSchedule@then",
                "node.kubernetes.io/unreachable:NoSchedule@later",
                "node.kubernetes.io/unreachable:NoExecute@later",
            ]
        );
        assert!(taints_match(&n));
        assert_eq!(retaint(&n, AGAIN), n.spec.taints, "nothing to change");
        n.status.conditions[0].status = "True".into();
        assert!(!taints_match(&n));
        n.spec.taints = retaint(&n, BACK);
        assert_eq!(
            keys(&n.spec.taints),
            ["node.kubernetes.io/unschedulable:NoSchedule@then"]
        );
        assert!(taints_match(&n));
    }

    /// A duplicated taint of the controller's is dropped, so a pass always converges.
    #[test]
    fn a_duplicate_taint_is_dropped() {
        let n = node(
            "False",
            &[
                (NOT_READY_TAINT, "NoSchedule"),
                (NOT_READY_TAINT, "NoSchedule"),
            ],
        );
        assert!(!taints_match(&n));
        let mut n = n;
        n.spec.taints = retaint(&n, NOW);
        assert_eq!(
            keys(&n.spec.taints),
            [
                "node.kubernetes.io/not-ready:NoSchedule@then",
                "node.kubernetes.io/not-ready:NoExecute@now",
            ]
        );
        assert!(taints_match(&n));
    }
}
