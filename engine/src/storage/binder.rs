//! kube-controller-manager's persistent volume controller (a claim to provision gets the
//! provisioner annotations; binding a claim to the PV whose claimRef names it; a PV whose
//! claim is gone becomes Released), its pvc-protection controller (a deleted claim stays
//! Terminating while a pod still uses it) and its pv-protection controller (a deleted PV
//! stays while it is Bound).

use super::work::Key;
use super::{BETA_STORAGE_PROVISIONER, PV_PROTECTION, PVC_PROTECTION, STORAGE_PROVISIONER};
use crate::cluster::{Object, ObjectRef, PvSpec, PvcSpec};
use crate::control::{Component, Ctx};
use crate::record::Level;

/// kube-controller-manager's PV controller: annotates claims to provision, binds claims and PVs, marks PVs Released.
#[derive(Debug, Clone, Default)]
pub(crate) struct PvController {
    /// PVs whose phase or claim binding is not done, and the claim each names.
    pub work: super::work::BinderWork,
    /// Unbound claims not handed to a provisioner yet.
    pub claims: super::work::WorkSet,
    /// The PVs a claim can be matched to (its volume index, `pkg/controller/volume/
    /// persistentvolume/index.go`).
    pub free: super::work::FreePvs,
    /// The unbound claims it recorded an event on, with the claim's resourceVersion then
    /// and the event's reason and message: upstream syncs a claim when it is written (and
    /// on its 15 s resync, not modelled), not on every pass, so an unchanged claim is not
    /// told the same again.
    told: std::collections::BTreeMap<super::work::SharedKey, (u64, &'static str, String)>,
}

/// kube-controller-manager's pv-protection controller: a deleted PV keeps its finalizer
/// while it is Bound (`pkg/controller/volume/pvprotection/pv_protection_controller.go`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PvProtection {
    /// Deleted PVs still holding the finalizer.
    pub work: super::work::WorkSet,
}

impl Component for PvProtection {
    fn name(&self) -> &'static str {
        "pv-protection-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.protect(ctx)
    }
}

impl PvProtection {
    /// Drop [`PV_PROTECTION`] from a deleted PV that is not Bound (`isBeingUsed`).
    pub(crate) fn protect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let deleting = self
            .work
            .keys(&ctx.api.revs, &ctx.api.pvs, super::work::only_own, |pv| {
                pv.metadata.deletion_tick().is_some()
                    && pv.metadata.finalizers().iter().any(|f| f == PV_PROTECTION)
                    && pv.status.phase != "Bound"
            });
        let mut changed = false;
        for key in deleting {
            changed |= ctx
                .api
                .pvs()
                .remove_finalizer("", &key.1, PV_PROTECTION)
                .is_ok();
        }
        changed
    }
}

impl Component for PvController {
    fn name(&self) -> &'static str {
        "persistentvolume-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

/// kube-controller-manager's pvc-protection controller: a deleted claim keeps its finalizer
/// while a pod still uses it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PvcProtection {
    /// Deleted claims still holding the finalizer.
    pub work: super::work::WorkSet,
}

impl Component for PvcProtection {
    fn name(&self) -> &'static str {
        "pvc-protection-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.protect(ctx)
    }
}

impl PvController {
    /// One pass of the PV controller.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = self.sync_unbound_claims(ctx);
        // PVs: bind to their claim, or become Released when it is gone.
        // Only PVs with something to do: a phase to change or a claim still to bind.
        let pvcs = &ctx.api.pvcs;
        let pvs = self.work.keys(&ctx.api.revs, &ctx.api.pvs, |pv| {
            let claim = pv.spec.claim_ref.as_ref().and_then(|r| {
                pvcs.get_named(&r.namespace, &r.name)
                    .filter(|c| c.metadata.uid == r.uid)
            });
            let want = wanted_phase(pv, claim.is_some());
            pv.status.phase != want
                || claim.is_some_and(|c| c.spec.volume_name.is_empty() || c.status.phase != "Bound")
        });
        for key in pvs {
            let Some(pv) = ctx.api.pvs.get(&key) else {
                continue;
            };
            let claim = pv.spec.claim_ref.as_ref().and_then(|r| {
                ctx.api
                    .pvcs
                    .get_shared(&r.namespace, &r.name)
                    .filter(|(_, c)| c.metadata.uid == r.uid)
                    .map(|(k, _)| k.clone())
            });
            let want = wanted_phase(pv, claim.is_some());
            if pv.status.phase != want {
                let mut next = pv.clone();
                next.status.phase = want.into();
                // The API server's status strategy times the phase change at the request
                // (`lastPhaseTransitionTime`); this write is the one that changes a PV's
                // phase, so the request's time is the controller's.
                next.status.last_phase_transition_time = Some(ctx.clock);
                if ctx.api.pvs().update_status(&next).is_ok() {
                    changed = true;
                    ctx.log(
                        "persistentvolume-controller",
                        "phase",
                        format!("persistentvolume {} → {want}", key.1),
                    );
                }
            }
            if let Some(claim) = claim {
                changed |= self.bind_claim(ctx, &claim, &key);
            }
        }
        changed
    }

    /// `syncUnboundClaim` for claims no PV is bound to: a claim of a class whose
    /// provisioner should make its volume gets [`STORAGE_PROVISIONER`] (and the beta
    /// name) and an ExternalProvisioning event (`provisionClaimOperationExternal`), once
    /// its binding mode allows it: at once (Immediate) or once the scheduler picked a node
    /// (WaitForFirstConsumer, `volume.kubernetes.io/selected-node`).
    fn sync_unbound_claims(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let claims = self
            .claims
            .keys(&ctx.api.revs, &ctx.api.pvcs, super::work::only_own, |p| {
                p.metadata.deletion_tick().is_none()
                    && if p.spec.volume_name.is_empty() {
                        !p.metadata.annotations().contains_key(STORAGE_PROVISIONER)
                    } else {
                        // Pre-bound by its manifest (`spec.volumeName`), not bound yet.
                        p.status.phase != "Bound"
                    }
            });
        let mut changed = false;
        self.told.retain(|k, _| claims.binary_search(k).is_ok());
        for key in claims {
            let free = self.free.refresh(&ctx.api.revs, &ctx.api.pvs);
            let Some(pvc) = ctx.api.pvcs.get(&key) else {
                continue;
            };
            let object = ObjectRef::to(pvc);
            match unbound_claim_step(ctx.api, pvc, free) {
                ClaimStep::Wait => {}
                ClaimStep::Bind(pv) => {
                    let (pv, pvc) = (pv.clone(), pvc.clone());
                    changed |= bind_volume_to_claim(ctx, &pv, &pvc);
                }
                ClaimStep::Tell(reason, message, level) => {
                    let told = (pvc.metadata.resource_version, reason, message.clone());
                    if self.told.get(&key) == Some(&told) {
                        continue;
                    }
                    self.told.insert(key.clone(), told);
                    ctx.event(
                        "persistentvolume-controller",
                        reason,
                        message,
                        object,
                        level,
                    );
                }
                ClaimStep::Provision(provisioner) => {
                    // setClaimProvisioner (pkg/controller/volume/persistentvolume/
                    // pv_controller.go): both names, the beta one kept "until the
                    // deprecation period" ends.
                    let mut next = pvc.clone();
                    let ann = next.metadata.annotations_mut();
                    ann.insert(BETA_STORAGE_PROVISIONER.into(), provisioner.clone());
                    ann.insert(STORAGE_PROVISIONER.into(), provisioner.clone());
                    if ctx.api.pvcs().update(next).is_err() {
                        continue;
                    }
                    changed = true;
                    ctx.event(
                        "persistentvolume-controller",
                        "ExternalProvisioning",
                        format!(
                            "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
                        ),
                        object,
                        Level::Normal,
                    );
                }
            }
        }
        changed
    }

    /// Bind the claim `claim` to the PV `pv` names it in: its `spec.volumeName`, then its
    /// phase Bound with the PV's access modes and capacity.
    fn bind_claim(&mut self, ctx: &mut Ctx<'_>, claim: &Key, pv: &Key) -> bool {
        let mut changed = false;
        let (ns, name) = (&claim.0, &claim.1);
        let Some(vol) = ctx.api.pvs.get(pv) else {
            return false;
        };
        let (access_modes, capacity) = (vol.spec.access_modes.clone(), vol.spec.capacity.clone());
        let unnamed = ctx
            .api
            .pvcs
            .get(claim)
            .filter(|cur| cur.spec.volume_name.is_empty())
            .cloned();
        if let Some(mut next) = unnamed {
            next.spec.volume_name = pv.1.clone();
            let ann = next.metadata.annotations_mut();
            ann.insert("pv.kubernetes.io/bind-completed".into(), "yes".into());
            ann.insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
            if ctx.api.pvcs().update(next).is_ok() {
                changed = true;
            }
        }
        let unbound = ctx
            .api
            .pvcs
            .get(claim)
            .filter(|cur| cur.status.phase != "Bound")
            .cloned();
        if let Some(mut next) = unbound {
            next.status.phase = "Bound".into();
            next.status.access_modes = access_modes;
            let size = capacity.get("storage").cloned().unwrap_or_default();
            next.status.capacity = capacity;
            if ctx.api.pvcs().update_status(&next).is_ok() {
                changed = true;
                ctx.log(
                    "persistentvolume-controller",
                    "bind",
                    format!(
                        "claim {}/{name} Bound to persistentvolume {} ({size})",
                        ns, pv.1
                    ),
                );
            }
        }
        changed
    }
}

/// What `syncUnboundClaim` does with a claim no PV is bound to, decided from the listers.
enum ClaimStep<'a> {
    /// Nothing now: the claim stays Pending and is tried again.
    Wait,
    /// Bind this existing volume to it.
    Bind(&'a Object<PvSpec>),
    /// An event on the claim: its reason, message and level.
    Tell(&'static str, String, Level),
    /// Hand it to this provisioner.
    Provision(String),
}

/// `syncUnboundClaim` for `pvc`: an existing volume first (`findBestMatchForClaim`);
/// provisioning only when none matches, once its class's binding mode allows it: at once
/// (Immediate) or once the scheduler picked a node (WaitForFirstConsumer,
/// `volume.kubernetes.io/selected-node`).
fn unbound_claim_step<'a>(
    api: &'a crate::cluster::Cluster,
    pvc: &Object<PvcSpec>,
    free: &std::collections::BTreeSet<String>,
) -> ClaimStep<'a> {
    if let Some(pv) = matching_volume(api, pvc, free) {
        return ClaimStep::Bind(pv);
    }
    if !pvc.spec.volume_name.is_empty() {
        // syncUnboundClaim: the requested volume is missing or taken.
        return ClaimStep::Wait;
    }
    if pvc.spec.storage_class_name.is_empty() {
        // syncUnboundClaim's last case: no volume matched and nothing can provision one.
        return ClaimStep::Tell(
            "FailedBinding",
            "no persistent volumes available for this claim and no storage class is set"
                .to_string(),
            Level::Normal,
        );
    }
    let Some(class) = super::listers::class_of(api, pvc) else {
        return ClaimStep::Tell(
            "ProvisioningFailed",
            format!(
                "storageclass.storage.k8s.io \"{}\" not found",
                pvc.spec.storage_class_name
            ),
            Level::Warning,
        );
    };
    let wffc = class.spec.waits_for_first_consumer();
    if wffc
        && !pvc
            .metadata
            .annotations()
            .contains_key(super::SELECTED_NODE)
    {
        // emitEventForUnboundDelayBindingClaim (`pv_controller.go`): the pods that use
        // the claim and have no node yet (findNonScheduledPodsByPVC) are named. A pod
        // with `spec.nodeName` from its manifest is not one of them, and no component
        // ever gives the claim a node for it: it stays Pending (the Kubernetes docs:
        // "do not use nodeName" with WaitForFirstConsumer; use a node selector).
        let waiting: Vec<&str> =
            super::listers::pods_using(api, pvc.metadata.namespace(), pvc.metadata.name())
                .into_iter()
                .filter(|p| {
                    p.spec.node_name.is_empty()
                        && p.status.phase != "Failed"
                        && p.status.phase != "Succeeded"
                })
                .map(|p| p.name())
                .collect();
        let (reason, message) = match waiting.as_slice() {
            [] => (
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".to_string(),
            ),
            [one] => (
                "WaitForPodScheduled",
                format!("waiting for pod {one} to be scheduled"),
            ),
            many => (
                "WaitForPodScheduled",
                format!("waiting for pods {} to be scheduled", many.join(",")),
            ),
        };
        return ClaimStep::Tell(reason, message, Level::Normal);
    }
    ClaimStep::Provision(class.spec.provisioner.clone())
}

/// The phase a PV should have: Bound to a claim that exists, Released once its claim is
/// gone, Available when it names none, or names one only by name and namespace (pre-bound
/// by its manifest: `syncVolume` waits for the claim).
fn wanted_phase(pv: &Object<PvSpec>, claim_exists: bool) -> &'static str {
    match &pv.spec.claim_ref {
        Some(_) if claim_exists => "Bound",
        Some(r) if r.uid.is_empty() => "Available",
        Some(_) => "Released",
        None => "Available",
    }
}

/// `findBestMatchForClaim` (`pkg/controller/volume/persistentvolume/index.go`,
/// `volume/util.FindMatchingVolume`) for a claim the scheduler does not bind: the volume
/// the claim names (`spec.volumeName`) if it is free for it, else the smallest volume not
/// bound to anything, of the claim's class and volume mode, whose access modes include the
/// claim's and whose capacity covers the request; a volume pre-bound to this claim by its
/// `claimRef` wins. A WaitForFirstConsumer claim takes only a pre-bound volume here: the
/// scheduler's VolumeBinding plugin chooses for the others, which the lab leaves to
/// provisioning. Only the PVs in `free` ([`super::work::FreePvs`]) can be chosen, so only
/// they are looked at.
fn matching_volume<'a>(
    api: &'a crate::cluster::Cluster,
    pvc: &Object<PvcSpec>,
    free: &std::collections::BTreeSet<String>,
) -> Option<&'a Object<PvSpec>> {
    use crate::util::quantity::parse_bytes;
    let classes = &api.storage_classes;
    if !pvc.spec.volume_name.is_empty() {
        let pv = api.pvs.get_named("", &pvc.spec.volume_name)?;
        let free = pv.spec.claim_ref.is_none()
            || prebound(pvc, pv) && pv.spec.claim_ref.as_ref().is_some_and(|r| r.uid.is_empty());
        return (free && pv.metadata.deletion_tick().is_none()).then_some(pv);
    }
    let wffc = classes
        .get(&(
            crate::cluster::no_namespace(),
            pvc.spec.storage_class_name.clone(),
        ))
        .is_some_and(|c| c.spec.waits_for_first_consumer());
    let want = pvc
        .spec
        .resources
        .requests
        .get("storage")
        .and_then(|q| parse_bytes(q).ok())
        .unwrap_or(0);
    let found = best_match(
        pvc,
        wffc,
        want,
        free.iter().filter_map(|name| api.pvs.get_named("", name)),
    );
    debug_assert_eq!(
        found.map(|pv| pv.name()),
        best_match(pvc, wffc, want, api.pvs.values()).map(|pv| pv.name()),
        "matching only the free PVs chose another volume than a scan"
    );
    found
}

/// The loop of `findBestMatchForClaim` over `pvs` in name order: the first volume pre-bound
/// to the claim by name, else the smallest fitting free one (the first of equal sizes).
fn best_match<'a>(
    pvc: &Object<PvcSpec>,
    wffc: bool,
    want: i64,
    pvs: impl Iterator<Item = &'a Object<PvSpec>>,
) -> Option<&'a Object<PvSpec>> {
    use crate::util::quantity::parse_bytes;
    let mut best: Option<(i64, &Object<PvSpec>)> = None;
    for pv in pvs {
        if pv.metadata.deletion_tick().is_some() {
            continue;
        }
        let size = pv
            .spec
            .capacity
            .get("storage")
            .and_then(|q| parse_bytes(q).ok())
            .unwrap_or(0);
        if size < want || pv.spec.volume_mode != pvc.spec.volume_mode {
            continue;
        }
        if prebound(pvc, pv) && pv.spec.claim_ref.as_ref().is_some_and(|r| r.uid.is_empty()) {
            return Some(pv);
        }
        if wffc || pv.spec.claim_ref.is_some() {
            continue;
        }
        if pv.spec.storage_class_name != pvc.spec.storage_class_name {
            continue;
        }
        if !pvc
            .spec
            .access_modes
            .iter()
            .all(|m| pv.spec.access_modes.contains(m))
        {
            continue;
        }
        if best.is_none_or(|(s, _)| size < s) {
            best = Some((size, pv));
        }
    }
    best.map(|(_, pv)| pv)
}

/// Whether the PV's claimRef names the claim (by uid too, when it has one).
fn prebound(pvc: &Object<PvcSpec>, pv: &Object<PvSpec>) -> bool {
    pv.spec.claim_ref.as_ref().is_some_and(|r| {
        r.name == *pvc.metadata.name()
            && r.namespace == *pvc.metadata.namespace()
            && (r.uid.is_empty() || r.uid == pvc.metadata.uid)
    })
}

/// `bindVolumeToClaim`: the volume's claimRef names the claim with its uid, and a
/// claimRef the controller chose is marked `pv.kubernetes.io/bound-by-controller`. The PV
/// pass then binds the claim to it.
fn bind_volume_to_claim(ctx: &mut Ctx<'_>, pv: &Object<PvSpec>, pvc: &Object<PvcSpec>) -> bool {
    let mut next = pv.clone();
    if next.spec.claim_ref.is_none() {
        next.metadata
            .annotations_mut()
            .insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
    }
    // `getBindVolumeToClaim`: a claimRef that already names the claim by its uid is kept
    // as it is; any other is replaced by a reference to the claim as read.
    let bound = next.spec.claim_ref.as_ref().is_some_and(|r| {
        r.name == *pvc.metadata.name()
            && r.namespace == *pvc.metadata.namespace()
            && r.uid == pvc.metadata.uid
    });
    if !bound {
        next.spec.claim_ref = Some(crate::cluster::ObjectReference::of(pvc));
    }
    if ctx.api.pvs().update(next).is_err() {
        return false;
    }
    ctx.log(
        "persistentvolume-controller",
        "bind",
        format!(
            "persistentvolume {} chosen for claim {} (an existing volume: nothing to provision)",
            pv.name(),
            pvc.key()
        ),
    );
    true
}

impl PvcProtection {
    /// The pvc-protection controller: drop the finalizer of a deleted claim no pod uses.
    pub(crate) fn protect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let deleting = self
            .work
            .keys(&ctx.api.revs, &ctx.api.pvcs, super::work::only_own, |p| {
                p.metadata.deletion_tick().is_some()
                    && p.metadata.finalizers().iter().any(|f| f == PVC_PROTECTION)
            });
        let mut changed = false;
        for key in deleting {
            let (ns, name) = (&key.0, &key.1);
            let used = !super::listers::pods_using(ctx.api, ns, name).is_empty();
            if used {
                continue;
            }
            if let Ok(true) = ctx.api.pvcs().remove_finalizer(ns, name, PVC_PROTECTION) {
                changed = true;
                ctx.log(
                    "pvc-protection-controller",
                    "delete",
                    format!("claim {ns}/{name} removed (no pod uses it any more)"),
                );
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PROVISIONER_FINALIZER, SELECTED_NODE};
    use super::*;
    use crate::engine::Lab;

    fn run(lab: &mut Lab, line: &str) {
        if let Err(e) = lab.execute(line) {
            panic!("{line}: {}", e.message);
        }
    }

    fn claim(lab: &Lab, name: &str) -> Object<PvcSpec> {
        lab.cluster.pvcs[&("default".to_string(), name.to_string())].clone()
    }

    fn pv_of(lab: &Lab, claim_uid: crate::cluster::Uid) -> Option<Object<PvSpec>> {
        lab.cluster
            .pvs
            .get(&(crate::cluster::no_namespace(), format!("pvc-{claim_uid}")))
            .cloned()
    }

    #[test]
    fn the_pv_controller_hands_a_claim_to_its_provisioner() {
        let mut lab = Lab::new();
        run(&mut lab, "mode step");
        run(&mut lab, "pvc create data --size 1Gi");
        assert!(claim(&lab, "data").metadata.annotations().is_empty());
        // external-provisioner takes no claim the PV controller has not annotated.
        run(&mut lab, "reconcile provisioner");
        let uid = claim(&lab, "data").metadata.uid;
        assert!(pv_of(&lab, uid).is_none());
        run(&mut lab, "reconcile binder");
        let ann = claim(&lab, "data").metadata.annotations().clone();
        assert_eq!(ann[STORAGE_PROVISIONER], "hostpath.csi.lab");
        assert_eq!(ann[BETA_STORAGE_PROVISIONER], "hostpath.csi.lab");
        run(&mut lab, "reconcile provisioner");
        let pv = pv_of(&lab, uid).expect("provisioned");
        assert_eq!(
            pv.metadata.finalizers(),
            [PROVISIONER_FINALIZER, PV_PROTECTION]
        );
    }

    #[test]
    fn a_wait_for_first_consumer_claim_is_annotated_once_a_node_is_selected() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create late --size 1Gi --class local-wffc");
        assert!(claim(&lab, "late").metadata.annotations().is_empty());
        // The scheduler selects the node (a pod pinned by spec.nodeName would never get one).
        run(
            &mut lab,
            "pod create p --node-selector kubernetes.io/hostname=node-1 --pvc late",
        );
        let ann = claim(&lab, "late").metadata.annotations().clone();
        assert_eq!(ann[SELECTED_NODE], "node-1");
        assert_eq!(ann[STORAGE_PROVISIONER], "hostpath.csi.lab");
        // A class of another provisioner is annotated with that provisioner's name.
        run(&mut lab, "sc create nfs --provisioner example.com/nfs");
        run(&mut lab, "pvc create share --size 1Gi --class nfs");
        let ann = claim(&lab, "share").metadata.annotations().clone();
        assert_eq!(ann[STORAGE_PROVISIONER], "example.com/nfs");
        assert!(claim(&lab, "share").spec.volume_name.is_empty());
    }

    #[test]
    fn a_retained_pv_loses_the_provisioner_finalizer() {
        let mut lab = Lab::new();
        run(&mut lab, "sc create keep --reclaim Retain");
        run(&mut lab, "pvc create kept --size 1Gi --class keep");
        let pv = pv_of(&lab, claim(&lab, "kept").metadata.uid).unwrap();
        assert_eq!(pv.metadata.finalizers(), [PV_PROTECTION]);
    }

    #[test]
    fn a_released_pv_is_deleted_then_let_go_by_both_finalizers() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create data --size 1Gi");
        let uid = claim(&lab, "data").metadata.uid;
        run(&mut lab, "fault inject DeleteVolume --code INTERNAL");
        run(&mut lab, "pvc delete data");
        // DeleteVolume failed: the PV is Released and keeps its finalizers, not deleted.
        let pv = pv_of(&lab, uid).unwrap();
        assert_eq!(pv.status.phase, "Released");
        assert!(pv.metadata.deletion_tick().is_none());
        assert_eq!(
            pv.metadata.finalizers(),
            [PROVISIONER_FINALIZER, PV_PROTECTION]
        );
        run(&mut lab, "mode step");
        run(&mut lab, "tick 1");
        run(&mut lab, "reconcile provisioner");
        // Deleted, without the provisioner's finalizer; pv-protection still holds it.
        let pv = pv_of(&lab, uid).unwrap();
        assert!(pv.metadata.deletion_tick().is_some());
        assert_eq!(pv.metadata.finalizers(), [PV_PROTECTION]);
        run(&mut lab, "reconcile binder");
        assert!(pv_of(&lab, uid).is_none());
    }
}
