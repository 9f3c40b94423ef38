//! kube-controller-manager's taint eviction controller (`pkg/controller/tainteviction`,
//! `taint-eviction-controller` since 1.29): a pod on a node with a `NoExecute` taint it does
//! not tolerate is deleted at once; one it tolerates for a while is deleted when that while
//! runs out. Deleting it adds the `DisruptionTarget` condition
//! (`DeletionByTaintManager`), records `TaintManagerEviction` "Marking for deletion Pod
//! NS/NAME" and deletes the pod gracefully: only its node's kubelet can finish that, so on
//! a lost node the pod stays `Terminating` until the node comes back.
//!
//! The lab's pods carry the two tolerations the DefaultTolerationSeconds admission plugin
//! gives every pod (`node.kubernetes.io/not-ready` and `…/unreachable`, `NoExecute`, 300 s)
//! and no others; the node lifecycle controller's taints are the only `NoExecute` taints a
//! node gets. So a pod on a lost node goes 300 s after the node was tainted (40 s after it
//! went silent), or 300 s after the pod was created there, whichever is later: the
//! controller starts a pod's timer when it first sees the pod under the taint
//! (`processPodOnNode`). When the taint goes first (the node is back), the scheduled
//! deletion is cancelled with "Cancelling deletion of Pod NS/NAME".
//!
//! The lab keeps no queue of its own: a pod's time is read from the taint's `timeAdded`
//! and the pod's creation. Where the real controller's queue would remember more — a node
//! going from `not-ready` to `unreachable` gets a newly stamped taint, and the real
//! controller keeps the first taint's timer — the lab's timer starts again.

use crate::cluster::{Condition, NodeSpec, Object, PodSpec, Taint};
use crate::control::Ctx;
use crate::record::{Level, Message};
use crate::util::time::Millis;

/// The controller's name, as its events report it.
pub(crate) const NAME: &str = "taint-eviction-controller";

/// The condition the controller adds before it deletes a pod
/// (`v1.DisruptionTarget`, GA with PodDisruptionConditions in 1.31).
pub(crate) const DISRUPTION_TARGET: &str = "DisruptionTarget";

/// The condition the controller adds to a pod it evicts.
const EVICTED: Condition = Condition::fixed(
    DISRUPTION_TARGET,
    "True",
    "DeletionByTaintManager",
    "Taint manager: deleting due to NoExecute taint",
);

/// How long a pod tolerates a `NoExecute` taint: `None` for not at all (the shortest
/// `tolerationSeconds` of the tolerations that match, as `getMinTolerationTime` takes).
fn toleration(pod: &PodSpec, taint: &Taint) -> Option<Millis> {
    pod.tolerations
        .list()
        .iter()
        .filter(|t| t.tolerates(taint))
        // A negative tolerationSeconds is taken as 0: evicted at once.
        .map(|t| Millis::secs(u64::try_from(t.toleration_seconds).unwrap_or(0)))
        .min()
}

/// When the controller deletes `pod`, bound to `node`: `None` when the node has no
/// `NoExecute` taint or the controller already evicted the pod.
pub(crate) fn due(node: &Object<NodeSpec>, pod: &Object<PodSpec>) -> Option<Millis> {
    if evicted(pod) {
        return None;
    }
    node.spec
        .taints
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .map(|t| {
            // The controller sees the pod under the taint from the later of the two.
            let seen = t
                .time_added
                .unwrap_or(pod.metadata.creation_tick)
                .max(pod.metadata.creation_tick);
            toleration(&pod.spec, t).map_or(seen, |wait| seen.saturating_add(wait))
        })
        .min()
}

/// Whether the controller already evicted the pod.
fn evicted(pod: &Object<PodSpec>) -> bool {
    pod.status
        .conditions
        .iter()
        .any(|c| c.condition_type == DISRUPTION_TARGET)
}

/// Every pod the controller has a deletion time for, with that time, in node then pod
/// order (the pods on the nodes with a `NoExecute` taint, not evicted yet).
fn deletions(api: &crate::cluster::Cluster) -> impl Iterator<Item = (&Object<PodSpec>, Millis)> {
    api.nodes
        .values()
        .filter(|n| n.spec.taints.iter().any(|t| t.effect == "NoExecute"))
        .flat_map(|node| {
            api.pods_on_node(node.name())
                .filter_map(move |p| due(node, p).map(|t| (p, t)))
        })
}

/// The keys of the pods whose deletion time passes `when`.
fn keys_where(
    api: &crate::cluster::Cluster,
    when: impl Fn(Millis) -> bool,
) -> Vec<(String, String)> {
    deletions(api)
        .filter(|(_, t)| when(*t))
        .map(|(p, _)| (p.metadata.namespace().clone(), p.metadata.name().clone()))
        .collect()
}

/// The pods the controller has scheduled for deletion and not deleted yet, by key: the
/// ones a node's recovery would cancel.
pub(crate) fn scheduled(api: &crate::cluster::Cluster, now: Millis) -> Vec<(String, String)> {
    keys_where(api, |t| t > now)
}

/// Of the pods in `scheduled`, the ones whose scheduled deletion is gone with their node's
/// `NoExecute` taint (the pod is still there, not evicted): the ones to cancel.
pub(crate) fn cancelled(
    api: &crate::cluster::Cluster,
    scheduled: Vec<(String, String)>,
) -> Vec<(String, String)> {
    scheduled
        .into_iter()
        .filter(|key| {
            api.pods.get(key).is_some_and(|p| {
                !evicted(p)
                    && api
                        .nodes
                        .get_named("", &p.spec.node_name)
                        .is_none_or(|n| due(n, p).is_none())
            })
        })
        .collect()
}

/// The earliest deletion after `now` the controller has scheduled.
pub(crate) fn next_timer(api: &crate::cluster::Cluster, now: Millis) -> Option<Millis> {
    deletions(api).map(|(_, t)| t).filter(|t| *t > now).min()
}

/// The pods whose deletion is due at `now`, by key, in node then pod order.
pub(crate) fn due_now(api: &crate::cluster::Cluster, now: Millis) -> Vec<(String, String)> {
    keys_where(api, |t| t <= now)
}

/// Evict one pod (`deletePodHandler`): the event, the `DisruptionTarget` condition, then a
/// graceful delete (the deletion timestamp set; the pod's kubelet finishes it). True when
/// the pod is there (the event is recorded then, whatever the writes find).
pub(crate) fn evict(ctx: &mut Ctx<'_>, key: &(String, String)) -> bool {
    let Ok(pod) = ctx.api.pods().get(&key.0, &key.1).cloned() else {
        return false;
    };
    ctx.pod_event(
        NAME,
        "TaintManagerEviction",
        Message::TaintEviction,
        &pod,
        Level::Normal,
    );
    let marked = ctx
        .write_pod_status(key, NAME, |s| {
            if !s
                .conditions
                .iter()
                .any(|c| c.condition_type == DISRUPTION_TARGET)
            {
                s.conditions.to_mut().push(EVICTED);
            }
        })
        .is_ok();
    let Ok(mut pod) = ctx.api.pods().get(&key.0, &key.1).cloned() else {
        return marked;
    };
    // `DeleteOptions{}`: no grace period, so the pod's own (`BeforeDelete`).
    if crate::cluster::pod_deletion::mark_for_deletion(&mut pod, ctx.clock) {
        let _ = ctx.api.pods().update(pod);
    }
    true
}

/// Cancel the scheduled deletion of a pod whose node lost its `NoExecute` taint
/// (`cancelWorkWithEvent`).
pub(crate) fn cancel(ctx: &mut Ctx<'_>, key: &(String, String)) {
    if let Ok(pod) = ctx.api.pods().get(&key.0, &key.1).cloned() {
        ctx.pod_event(
            NAME,
            "TaintManagerEviction",
            Message::TaintEvictionCancelled,
            &pod,
            Level::Normal,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::node_lifecycle::UNREACHABLE_TAINT;

    fn node(taints: &[(&str, &str, u64)]) -> Object<NodeSpec> {
        let mut n = Object::new("n1", "", NodeSpec::default());
        n.spec.taints = taints
            .iter()
            .map(|(k, e, at)| Taint {
                key: (*k).into(),
                effect: (*e).into(),
                time_added: Some(Millis::secs(*at)),
            })
            .collect();
        n
    }

    fn pod(created: u64) -> Object<PodSpec> {
        let mut p = Object::new("web", "default", PodSpec::default());
        p.metadata.creation_tick = Millis::secs(created);
        p
    }

    /// 300 s after the later of the taint and the pod; nothing without a NoExecute taint;
    /// at once for a NoExecute taint no pod tolerates; never again once evicted.
    #[test]
    fn a_pod_goes_when_its_toleration_runs_out() {
        let lost = node(&[
            (UNREACHABLE_TAINT, "NoSchedule", 40),
            (UNREACHABLE_TAINT, "NoExecute", 40),
        ]);
        assert_eq!(due(&lost, &pod(0)), Some(Millis::secs(340)));
        assert_eq!(due(&lost, &pod(100)), Some(Millis::secs(400)));
        assert_eq!(
            due(&node(&[(UNREACHABLE_TAINT, "NoSchedule", 40)]), &pod(0)),
            None
        );
        assert_eq!(
            due(&node(&[("dedicated", "NoExecute", 7)]), &pod(0)),
            Some(Millis::secs(7))
        );
        let mut gone = pod(0);
        gone.status.conditions.to_mut().push(EVICTED);
        assert_eq!(due(&lost, &gone), None);
    }

    /// Run lines, returning the text of the last one.
    fn run(lab: &mut crate::Lab, lines: &[&str]) -> String {
        let mut last = String::new();
        for line in lines {
            last = lab.execute(line).expect(line).to_text();
        }
        last
    }

    /// A pod on a lost node is marked not ready with the node, evicted 300 s after the
    /// node was tainted (Terminating: its kubelet is silent), and goes when the node is
    /// back; a pod on a healthy node stays.
    #[test]
    fn a_lost_node_loses_its_pods_after_five_minutes() {
        let mut lab = crate::Lab::new();
        run(
            &mut lab,
            &[
                "pod create web --node node-2",
                "pod create api --node node-1",
            ],
        );
        run(
            &mut lab,
            &["fault inject node-down --node node-2", "tick 40"],
        );
        let web = |lab: &crate::Lab| lab.cluster.pods.get_named("default", "web").cloned();
        let ready = |p: &Object<PodSpec>| {
            p.status
                .conditions
                .iter()
                .find(|c| c.condition_type == "Ready")
                .map(|c| c.status.to_string())
        };
        assert_eq!(ready(&web(&lab).unwrap()).as_deref(), Some("False"));
        assert!(web(&lab).unwrap().metadata.deletion_tick().is_none());
        let before = run(&mut lab, &["tick 299"]);
        assert!(!before.contains("Marking for deletion"), "{before}");
        let at = run(&mut lab, &["tick 1"]);
        assert!(at.contains("Marking for deletion Pod default/web"), "{at}");
        let p = web(&lab).unwrap();
        // Marked at 340 s with the pod's 30 s grace period (`BeforeDelete`).
        assert_eq!(p.metadata.deletion_tick(), Some(Millis::secs(370)));
        assert!(evicted(&p));
        assert!(
            lab.cluster
                .pods
                .get_named("default", "api")
                .unwrap()
                .metadata
                .deletion_tick()
                .is_none()
        );
        let text = run(&mut lab, &["get pods"]);
        assert!(text.contains("Terminating"), "{text}");
        run(&mut lab, &["fault clear"]);
        assert!(
            web(&lab).is_none(),
            "the kubelet finishes the deletion once back"
        );
    }

    /// A node back before the 300 s cancels the deletion, and its kubelet posts Ready again.
    #[test]
    fn a_node_back_in_time_cancels_the_eviction() {
        let mut lab = crate::Lab::new();
        run(
            &mut lab,
            &[
                "pod create web --node node-2",
                "fault inject node-down --node node-2",
                "tick 100",
            ],
        );
        let out = run(&mut lab, &["fault clear"]);
        assert!(
            out.contains("Cancelling deletion of Pod default/web"),
            "{out}"
        );
        let out = run(&mut lab, &["tick 600"]);
        assert!(!out.contains("Marking for deletion"), "{out}");
        let web = lab.cluster.pods.get_named("default", "web").unwrap();
        assert!(web.metadata.deletion_tick().is_none());
        assert!(
            web.status
                .conditions
                .iter()
                .any(|c| c.condition_type == "Ready" && c.status == "True")
        );
    }
}
