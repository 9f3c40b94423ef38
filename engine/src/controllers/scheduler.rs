//! kube-scheduler. A pod without `spec.nodeName` is placed by filtering and scoring the
//! nodes ([`super::placement`]: Ready, NodeResourcesFit for extended resources, the pod's
//! node selector, the volume checks; LeastAllocated, then the node name), or stays Pending
//! with a FailedScheduling event that says why no node fits. From 100 nodes on a cycle
//! searches only part of the cluster, as the real one does (`percentageOfNodesToScore`,
//! walking [`super::node_tree`] from where the last cycle stopped).
//!
//! A pod created with `spec.nodeName` (`pod create --node`) is never seen here: the
//! scheduler's informer only queues pods whose `spec.nodeName` is empty
//! (`pkg/scheduler/eventhandlers.go`, `unassignedPod`), so there is no `Scheduled` or
//! `FailedScheduling` event for it. The node's kubelet admits it itself
//! ([`crate::kubelet`]: resources, node selector) and its volume manager does the volume
//! checks (`MountVolume.NodeAffinity check failed`, the ReadWriteOncePod check).

use crate::cluster::{Cluster, Condition, Conditions, Object, PodSpec, VolumeNodeAffinity};
use crate::control::{Component, Ctx};
use crate::record::{Detail, Level, Message};
use crate::storage::work::WorkSet;
use std::collections::BTreeMap;

/// kube-scheduler, as far as the lab needs it: places the pods with no node, and the
/// VolumeBinding plugin's WaitForFirstConsumer choice for them.
#[derive(Debug, Clone, Default)]
pub struct Scheduler {
    /// Pods with no node yet, not being deleted (its informer's unscheduled-pods queue).
    pub unscheduled: WorkSet,
    /// Its cache: a `NodeInfo` per node, with the pods bound to it, in the node tree's
    /// walk order.
    cache: super::node_info::NodeInfos,
    /// Where the next cycle starts in that order (`nextStartNodeIndex`).
    next_start: usize,
}

impl Component for Scheduler {
    fn name(&self) -> &'static str {
        "default-scheduler"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

/// Whether the pod has no node yet: the scheduler's `unassignedPod` (`len(pod.Spec.NodeName) == 0`).
fn unassigned(p: &Object<PodSpec>) -> bool {
    p.metadata.deletion_tick().is_none() && p.spec.node_name.is_empty()
}

/// The informer's filter on the event itself: a pod written with `spec.nodeName` stays
/// assigned (the field is never cleared), so only events of pods written without one can
/// bring a pod to the queue. A pod created bound (`pod create --node`) is never looked up.
fn may_be_unassigned(e: &crate::cluster::WatchEvent) -> bool {
    !e.facts.assigned
}

/// A bound pod's conditions until kubelet reports its own.
static SCHEDULED: [Condition; 1] = [Condition::fixed("PodScheduled", "True", "", "")];

impl Scheduler {
    /// The scheduling cycle up to VolumeBinding's PreBind for every pod with no node that
    /// uses a WaitForFirstConsumer claim: the claim gets `volume.kubernetes.io/selected-node`
    /// = the node the cycle picks, and the pod is not bound yet (`pvc bind` in step mode).
    /// A pod with `spec.nodeName` never gets here, so its claims are never given a node.
    pub(crate) fn schedule_wffc_claims(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let pending: Vec<Object<PodSpec>> = self.unscheduled.select_filtered(
            &ctx.api.revs,
            &ctx.api.pods,
            crate::storage::work::only_own,
            may_be_unassigned,
            unassigned,
        );
        let mut changed = false;
        for pod in pending.iter().filter(|p| !p.spec.volumes().is_empty()) {
            if let Ok(node) = self.decide(ctx, pod) {
                changed |= self.select_node_for_claims(ctx, pod, &node);
            }
        }
        changed
    }

    /// One pass of the scheduler: place the pods with no node. The cache takes in every
    /// Node event first, as its informer would, so nodes keep their arrival order.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.cache.refresh_nodes(&ctx.api.revs, &ctx.api.nodes);
        let pending: Vec<Object<PodSpec>> = self.unscheduled.select_filtered(
            &ctx.api.revs,
            &ctx.api.pods,
            crate::storage::work::only_own,
            may_be_unassigned,
            unassigned,
        );
        let mut changed = false;
        for pod in pending {
            changed |= self.schedule_unbound(ctx, pod);
        }
        changed
    }

    /// Filter and score: the chosen node, or the FailedScheduling message. The cycle
    /// moves the next one's starting node on (`next_start`).
    fn decide(&mut self, ctx: &Ctx<'_>, pod: &Object<PodSpec>) -> Result<String, String> {
        let mut next_start = self.next_start;
        let decided = self.decide_from(ctx, pod, &mut next_start);
        self.next_start = next_start;
        decided
    }

    /// The cycle [`Self::decide`] runs, starting at `*next_start` and leaving there where
    /// the next cycle would start (a caller that only looks ahead drops it).
    fn decide_from(
        &mut self,
        ctx: &Ctx<'_>,
        pod: &Object<PodSpec>,
        next_start: &mut usize,
    ) -> Result<String, String> {
        let checks = VolumeChecks::prepare(ctx.api, pod);
        if let Some(reason) = pod_level_volume_reason(ctx.api, &checks, pod) {
            return Err(reason);
        }
        self.cache
            .refresh(&ctx.api.revs, &ctx.api.nodes, &ctx.api.pods);
        // The cache's upkeep, checked against one built from the tables now.
        #[cfg(debug_assertions)]
        self.cache.assert_matches(&ctx.api.nodes, &ctx.api.pods);
        let search = super::placement::Search {
            nodes: self.cache.snapshot(),
            next_start,
        };
        super::placement::place(pod, search, |node, labels| {
            node_volume_reason(&checks, pod, node, labels)
        })
    }

    /// A pod with no `spec.nodeName`: filter every node, score the feasible ones, bind the
    /// pod to the best (see [`crate::controllers::placement`]), or leave it Pending with the
    /// FailedScheduling event that says why no node fits.
    ///
    /// `pod` is the pod as the pass selected it: the pass writes no other pod's object
    /// before it, and nothing else writes during the pass, so it is the table's pod and is
    /// bound as it is (not looked up again).
    fn schedule_unbound(&mut self, ctx: &mut Ctx<'_>, pod: Object<PodSpec>) -> bool {
        let key = (pod.metadata.namespace().clone(), pod.name().to_string());
        let node = match self.decide(ctx, &pod) {
            Ok(node) => node,
            Err(reason) => return self.mark_unschedulable(ctx, &pod, &key, reason),
        };
        // VolumeBinding's PreBind (`volume_binding.go`): the claims get the chosen node and
        // the binding waits until they are bound, so provisioning comes before Scheduled.
        let annotated = self.select_node_for_claims(ctx, &pod, &node);
        if self.waits_for_claims(ctx, &pod) {
            return annotated;
        }
        debug_assert_eq!(
            ctx.api.pods.get(&key),
            Some(&pod),
            "the pod to bind is the table's"
        );
        let mut bound = pod;
        bound.spec.node_name = node.clone();
        if ctx.api.pods().update(bound.clone()).is_err() {
            return false;
        }
        ctx.api.volume_pods.set_node(&key, &node);
        ctx.log(
            "default-scheduler",
            "bind",
            Detail::Binding {
                pod: bound.name().to_string(),
                node: node.clone(),
            },
        );
        ctx.pod_event(
            "default-scheduler",
            "Scheduled",
            Message::Assigned(node.clone()),
            &bound,
            Level::Normal,
        );
        let _ = ctx.write_pod_status(&key, "default-scheduler", |st| {
            st.conditions = Conditions::Borrowed(&SCHEDULED);
        });
        true
    }

    /// Pending with `PodScheduled=False` and a FailedScheduling event, once per message.
    fn mark_unschedulable(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
        key: &(String, String),
        reason: String,
    ) -> bool {
        let already = pod
            .status
            .conditions
            .iter()
            .any(|c| c.condition_type == "PodScheduled" && c.message == reason);
        if already {
            return false;
        }
        ctx.pod_event(
            "default-scheduler",
            "FailedScheduling",
            reason.clone(),
            pod,
            Level::Warning,
        );
        let _ = ctx.write_pod_status(key, "default-scheduler", |st| {
            st.phase = "Pending".into();
            st.conditions = vec![Condition {
                condition_type: "PodScheduled".into(),
                status: "False".into(),
                reason: "Unschedulable".into(),
                message: reason.clone().into(),
            }]
            .into();
        });
        true
    }

    /// Whether a WaitForFirstConsumer claim of the pod is not bound yet (its provisioning
    /// follows the `selected-node` annotation; the pod is bound after it).
    fn waits_for_claims(&self, ctx: &Ctx<'_>, pod: &Object<PodSpec>) -> bool {
        let ns = pod.metadata.namespace();
        pod.spec.volumes().iter().any(|v| {
            let claim = &v.persistent_volume_claim.claim_name;
            ctx.api.pvcs.get_named(ns, claim).is_some_and(|pvc| {
                pvc.spec.volume_name.is_empty()
                    && crate::storage::listers::class_of(ctx.api, pvc)
                        .is_some_and(|c| c.spec.waits_for_first_consumer())
            })
        })
    }

    /// Give each unbound WaitForFirstConsumer claim of the pod `selected-node` = `node`;
    /// true when one was written.
    fn select_node_for_claims(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
        node: &str,
    ) -> bool {
        let mut changed = false;
        let ns = pod.metadata.namespace();
        for v in pod.spec.volumes() {
            let claim = &v.persistent_volume_claim.claim_name;
            let Some(pvc) = ctx.api.pvcs.get_named(ns, claim) else {
                continue;
            };
            let wffc = crate::storage::listers::class_of(ctx.api, pvc)
                .is_some_and(|c| c.spec.waits_for_first_consumer());
            if wffc
                && pvc.spec.volume_name.is_empty()
                && !pvc
                    .metadata
                    .annotations()
                    .contains_key(crate::storage::SELECTED_NODE)
            {
                // Copied only to be written.
                let mut next = pvc.clone();
                next.metadata
                    .annotations_mut()
                    .insert(crate::storage::SELECTED_NODE.into(), node.to_string());
                if ctx.api.pvcs().update(next).is_ok() {
                    changed = true;
                    ctx.log(
                        "default-scheduler",
                        "bind volumes",
                        format!(
                            "pod {} → {node}: claim {ns}/{claim} (WaitForFirstConsumer) gets {}={node}",
                            pod.key(),
                            crate::storage::SELECTED_NODE,
                        ),
                    );
                }
            }
        }
        changed
    }
}

/// The volume checks that fail the pod whatever the node (VolumeBinding's and
/// VolumeRestrictions' PreFilter): a missing or deleted claim, an unbound Immediate
/// claim, a ReadWriteOncePod claim in use.
fn pod_level_volume_reason(
    api: &Cluster,
    checks: &VolumeChecks<'_>,
    pod: &Object<PodSpec>,
) -> Option<String> {
    // No volume check to run (a pod with no claims): nothing to look up.
    if checks.steps.is_empty() {
        return None;
    }
    let empty = BTreeMap::new();
    let labels = api
        .nodes
        .get(&(crate::cluster::no_namespace(), pod.spec.node_name.clone()))
        .map_or(&empty, |o| &o.metadata.labels);
    let reason = checks.reason(&pod.spec.node_name, labels)?;
    // The node-specific checks speak of "1 node(s)"; those are per node here.
    let per_node = reason.contains("did not match the node selected")
        || reason.contains("volume node affinity conflict");
    (!per_node).then_some(reason)
}

/// The per-node volume checks (VolumeBinding's Filter) for `node`, as a histogram
/// reason (`node(s) had volume node affinity conflict`).
fn node_volume_reason(
    checks: &VolumeChecks<'_>,
    pod: &Object<PodSpec>,
    node: &str,
    labels: &BTreeMap<String, String>,
) -> Option<String> {
    if pod.spec.volumes().is_empty() {
        return None;
    }
    let short = checks.node_reason(node, labels)?;
    debug_assert_eq!(
        Some(short.as_str()),
        checks.reason(node, labels).as_deref().map(histogram_reason),
        "the node's reason is its one-node message's"
    );
    Some(short)
}

/// The reason a one-node FailedScheduling message gives: "0/N nodes are available: 1
/// <reason>. preemption: …" → "<reason>" (a message of another shape, whole up to
/// ". preemption:").
fn histogram_reason(message: &str) -> &str {
    let head = message.split(". preemption:").next().unwrap_or(message);
    head.split_once(": 1 ").map(|(_, r)| r).unwrap_or(head)
}

/// The scheduler's volume checks for one pod, with its claims, their classes and PVs, and
/// the ReadWriteOncePod users looked up once per scheduling cycle rather than once per
/// node: each step is tried on a node in the order the checks run, and the first that
/// fails gives the reason.
struct VolumeChecks<'a> {
    /// How many nodes the cluster has (the messages cite it).
    nodes: usize,
    /// The checks, in order.
    steps: Vec<Step<'a>>,
}

/// One volume check.
enum Step<'a> {
    /// A WaitForFirstConsumer claim not bound yet has a selected node: other nodes fail.
    Selected {
        /// The claim.
        claim: &'a str,
        /// Its `volume.kubernetes.io/selected-node`.
        selected: &'a str,
    },
    /// The bound PV's node affinity must admit the node.
    Affinity(&'a VolumeNodeAffinity),
    /// Fails on every node, with this message.
    Fails(String),
}

impl<'a> VolumeChecks<'a> {
    /// Look up what the checks need for `pod`.
    fn prepare(api: &'a Cluster, pod: &'a Object<PodSpec>) -> Self {
        let n = api.nodes.len();
        let ns = pod.metadata.namespace();
        let mut steps = Vec::new();
        for v in pod.spec.volumes() {
            let claim = &v.persistent_volume_claim.claim_name;
            let Some(pvc) = api.pvcs.get(&(ns.clone(), claim.clone())) else {
                steps.push(Step::Fails(format!(
                    "0/{n} nodes are available: persistentvolumeclaim \"{claim}\" not found. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
                )));
                break;
            };
            if pvc.metadata.deletion_tick().is_some() {
                steps.push(Step::Fails(format!(
                    "0/{n} nodes are available: persistentvolumeclaim \"{claim}\" is being deleted. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
                )));
                break;
            }
            let wffc = crate::storage::listers::class_of(api, pvc)
                .is_some_and(|c| c.spec.waits_for_first_consumer());
            if pvc.spec.volume_name.is_empty() && wffc {
                if let Some(selected) = pvc
                    .metadata
                    .annotations()
                    .get(crate::storage::SELECTED_NODE)
                {
                    steps.push(Step::Selected { claim, selected });
                }
            }
            if pvc.spec.volume_name.is_empty() && !wffc {
                steps.push(Step::Fails(format!(
                    "0/{n} nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
                )));
                break;
            }
            if let Some(affinity) = crate::storage::listers::pv_for_claim(api, ns, claim)
                .and_then(|pv| pv.spec.node_affinity.as_ref())
            {
                steps.push(Step::Affinity(affinity));
            }
            if pvc
                .spec
                .access_modes
                .iter()
                .any(|m| m == "ReadWriteOncePod")
            {
                let in_use = crate::storage::listers::pods_using(api, ns, claim)
                    .into_iter()
                    .any(|other| {
                        other.metadata.uid != pod.metadata.uid
                        // Every pod assigned to a node counts, `--node` ones included
                        // (VolumeRestrictions counts the claims of each node's pods).
                        && !other.spec.node_name.is_empty()
                        && other.status.phase != "Failed"
                        && other.status.phase != "Succeeded"
                    });
                if in_use {
                    steps.push(Step::Fails(format!(
                        "0/{n} nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode. preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."
                    )));
                    break;
                }
            }
        }
        VolumeChecks { nodes: n, steps }
    }

    /// Why the pod cannot go to `node` (with these labels), in the scheduler's words.
    fn reason(&self, node: &str, labels: &BTreeMap<String, String>) -> Option<String> {
        let n = self.nodes;
        Some(match self.failing_step(node, labels)? {
            Step::Fails(message) => message.clone(),
            step => format!(
                "0/{n} nodes are available: 1 {}. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling.",
                step.node_reason()
            ),
        })
    }

    /// What the node's line of the scheduler's histogram says when a volume check fails on
    /// it (`node(s) had volume node affinity conflict`), without the one-node message
    /// around it.
    fn node_reason(&self, node: &str, labels: &BTreeMap<String, String>) -> Option<String> {
        self.failing_step(node, labels).map(Step::node_reason)
    }

    /// The first check that fails on `node`, in the order the checks run.
    fn failing_step(&self, node: &str, labels: &BTreeMap<String, String>) -> Option<&Step<'a>> {
        self.steps.iter().find(|step| match step {
            Step::Selected { selected, .. } => *selected != node,
            Step::Affinity(affinity) => !affinity.admits(labels),
            Step::Fails(_) => true,
        })
    }
}

impl Step<'_> {
    /// The histogram reason of a check that failed on a node.
    fn node_reason(&self) -> String {
        match self {
            Step::Selected { claim, selected } => format!(
                "node(s) did not match the node selected for persistentvolumeclaim \"{claim}\" ({}={selected})",
                crate::storage::SELECTED_NODE
            ),
            Step::Affinity(_) => "node(s) had volume node affinity conflict".to_string(),
            Step::Fails(message) => histogram_reason(message).to_string(),
        }
    }
}
