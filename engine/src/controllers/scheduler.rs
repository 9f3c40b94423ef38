//! kube-scheduler. A pod without `spec.nodeName` is placed by filtering and scoring the
//! nodes ([`super::placement`]: Ready, the pod's node selector, NodePorts,
//! NodeResourcesFit for extended resources, the volume checks; LeastAllocated, then the
//! node name), or stays Pending with a FailedScheduling event that says why no node fits.
//! From 100 nodes on a cycle
//! searches only part of the cluster, as the real one does (`percentageOfNodesToScore`,
//! walking [`super::node_tree`] from where the last cycle stopped).
//!
//! A pod created with `spec.nodeName` (`pod create --node`) is never seen here: the
//! scheduler's informer only queues pods whose `spec.nodeName` is empty
//! (`pkg/scheduler/eventhandlers.go`, `unassignedPod`), so there is no `Scheduled` or
//! `FailedScheduling` event for it. The node's kubelet admits it itself
//! ([`crate::kubelet`]: resources, node selector, host ports) and its volume manager does
//! the volume checks (`MountVolume.NodeAffinity check failed`, the ReadWriteOncePod check).

use crate::cluster::{
    Cluster, Condition, Conditions, Object, PodSpec, StorageClassSpec, VolumeNodeAffinity,
};
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
        if let Some(reason) = &checks.prefilter {
            return Err(reason.clone());
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

/// VolumeRestrictions' reason when a ReadWriteOncePod claim of the pod is in use
/// (`ErrReasonReadWriteOncePodConflict`).
const READ_WRITE_ONCE_POD_CONFLICT: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

/// VolumeBinding's reason when a claim to bind or provision cannot be on the node
/// (`ErrReasonBindConflict`): here, a claim to provision whose class's `allowedTopologies`
/// leave the node out (`checkVolumeProvisions`).
const BIND_CONFLICT: &str = "node(s) didn't find available persistent volumes to bind";

/// VolumeBinding's reason when a bound claim's PV cannot be on the node
/// (`ErrReasonNodeConflict`).
const NODE_CONFLICT: &str = "node(s) had volume node affinity conflict";

/// The per-node volume checks (VolumeRestrictions' and VolumeBinding's Filters) for
/// `node`: the histogram reasons, each with whether preemption could resolve it.
fn node_volume_reason(
    checks: &VolumeChecks<'_>,
    pod: &Object<PodSpec>,
    node: &str,
    labels: &BTreeMap<String, String>,
) -> Vec<(String, bool)> {
    if pod.spec.volumes().is_empty() {
        return Vec::new();
    }
    checks.node_reasons(node, labels)
}

/// The scheduler's volume checks for one pod, with its claims, their classes and PVs, and
/// the ReadWriteOncePod users looked up once per scheduling cycle rather than once per
/// node.
struct VolumeChecks<'a> {
    /// The PreFilter failure that fails the pod whatever the node (VolumeRestrictions' and
    /// VolumeBinding's PreFilter: a missing or deleted claim, an unbound Immediate claim),
    /// as the whole FailedScheduling message.
    prefilter: Option<String>,
    /// Whether a ReadWriteOncePod claim of the pod is used by another pod on a node
    /// (VolumeRestrictions' PreFilter counts them cluster-wide, `conflictingPVCRefCount`;
    /// its Filter then fails every node it runs on).
    read_write_once_pod_in_use: bool,
    /// VolumeBinding's per-node checks, in the pod's claim order.
    steps: Vec<Step<'a>>,
}

/// One of VolumeBinding's per-node checks.
enum Step<'a> {
    /// A WaitForFirstConsumer claim not bound yet has a selected node: other nodes fail.
    Selected {
        /// Its `volume.kubernetes.io/selected-node`.
        selected: &'a str,
    },
    /// The bound PV's node affinity must admit the node.
    Affinity(&'a VolumeNodeAffinity),
    /// A WaitForFirstConsumer claim not bound yet is provisioned: its class's
    /// `allowedTopologies` must admit the node.
    Provision(&'a StorageClassSpec),
}

impl<'a> VolumeChecks<'a> {
    /// Look up what the checks need for `pod`.
    fn prepare(api: &'a Cluster, pod: &'a Object<PodSpec>) -> Self {
        let n = api.nodes.len();
        let ns = pod.metadata.namespace();
        let whole = |reason: String| {
            Some(format!(
                "0/{n} nodes are available: {reason}. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
            ))
        };
        let mut checks = VolumeChecks {
            prefilter: None,
            read_write_once_pod_in_use: false,
            steps: Vec::new(),
        };
        // VolumeRestrictions' PreFilter runs first and looks every claim up.
        let claims = pod.spec.volumes().iter().map(|v| {
            let claim = v.persistent_volume_claim.claim_name.as_str();
            (claim, api.pvcs.get(&(ns.to_string(), claim.to_string())))
        });
        let mut found = Vec::new();
        for (claim, pvc) in claims {
            let Some(pvc) = pvc else {
                checks.prefilter = whole(format!("persistentvolumeclaim \"{claim}\" not found"));
                return checks;
            };
            found.push((claim, pvc));
        }
        for &(claim, pvc) in &found {
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
                checks.read_write_once_pod_in_use |= in_use;
            }
        }
        // VolumeBinding's PreFilter: `podHasPVCs` walks every claim first (a claim being
        // deleted fails the pod whatever the others are), then `GetPodVolumeClaims` sorts
        // them and any unbound Immediate claim fails it.
        if let Some((claim, _)) = found
            .iter()
            .find(|(_, pvc)| pvc.metadata.deletion_tick().is_some())
        {
            checks.prefilter = whole(format!(
                "persistentvolumeclaim \"{claim}\" is being deleted"
            ));
            return checks;
        }
        // Then what its Filter checks per node.
        for (claim, pvc) in found {
            let class = crate::storage::listers::class_of(api, pvc)
                .filter(|c| c.spec.waits_for_first_consumer());
            if pvc.spec.volume_name.is_empty() {
                let Some(class) = class else {
                    checks.prefilter =
                        whole("pod has unbound immediate PersistentVolumeClaims".to_string());
                    return checks;
                };
                if let Some(selected) = pvc
                    .metadata
                    .annotations()
                    .get(crate::storage::SELECTED_NODE)
                {
                    checks.steps.push(Step::Selected { selected });
                }
                checks.steps.push(Step::Provision(&class.spec));
            }
            if let Some(affinity) = crate::storage::listers::pv_for_claim(api, ns, claim)
                .and_then(|pv| pv.spec.node_affinity.as_ref())
            {
                checks.steps.push(Step::Affinity(affinity));
            }
        }
        checks
    }

    /// Why the pod cannot go to `node` (with these labels): the reasons of the first
    /// volume Filter that fails there (the framework stops at a node's first failing
    /// plugin), each with whether preemption could resolve it.
    ///
    /// VolumeRestrictions fails as Unschedulable (removing the claim's user would help).
    /// VolumeBinding (`FindPodVolumes`) fails as UnschedulableAndUnresolvable with each
    /// reason that holds: a bound claim's PV node affinity, then the claims to bind (a
    /// selected node elsewhere ends the check; else the classes' `allowedTopologies`).
    fn node_reasons(&self, node: &str, labels: &BTreeMap<String, String>) -> Vec<(String, bool)> {
        if self.read_write_once_pod_in_use {
            return vec![(READ_WRITE_ONCE_POD_CONFLICT.to_string(), true)];
        }
        let mut out = Vec::new();
        let affinity_fails = self
            .steps
            .iter()
            .any(|s| matches!(s, Step::Affinity(a) if !a.admits(labels)));
        if affinity_fails {
            out.push((NODE_CONFLICT.to_string(), false));
        }
        // `FindPodVolumes`: a claim to bind whose `selected-node` names another node
        // ends the check at once ("Fast path, skip unmatched node":
        // `unboundVolumesSatisfied = false`, so `ErrReasonBindConflict`); else the claims
        // to provision meet the classes' `allowedTopologies` (`checkVolumeProvisions`).
        let elsewhere = self
            .steps
            .iter()
            .any(|s| matches!(s, Step::Selected { selected } if *selected != node));
        if elsewhere
            || self
                .steps
                .iter()
                .any(|s| matches!(s, Step::Provision(class) if !class.allows_node(labels)))
        {
            out.push((BIND_CONFLICT.to_string(), false));
        }
        out
    }
}
