//! kube-controller-manager's persistent volume controller (binding a claim to the PV whose
//! claimRef names it; a PV whose claim is gone becomes Released) and its pvc-protection
//! controller (a deleted claim stays Terminating while a pod still uses it).

use super::PVC_PROTECTION;
use crate::cluster::{Object, PvSpec, PvcSpec};
use crate::control::{Component, Ctx};

/// kube-controller-manager's PV controller: binds claims and PVs, marks PVs Released.
#[derive(Debug, Clone, Default)]
pub struct PvController {
    /// PVs whose phase or claim binding is not done, and the claim each names.
    pub work: super::work::BinderWork,
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
pub struct PvcProtection {
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
        let mut changed = false;
        // PVs: bind to their claim, or become Released when it is gone.
        // Only PVs with something to do: a phase to change or a claim still to bind.
        let pvcs = &ctx.api.pvcs;
        let pvs: Vec<Object<PvSpec>> = self.work.select(&ctx.api.revs, &ctx.api.pvs, |pv| {
            let claim = pv.spec.claim_ref.as_ref().and_then(|r| {
                pvcs.get(&(r.namespace.clone(), r.name.clone()))
                    .filter(|c| c.metadata.uid == r.uid)
            });
            let want = match (&pv.spec.claim_ref, claim) {
                (Some(_), Some(_)) => "Bound",
                (Some(_), None) => "Released",
                (None, _) => "Available",
            };
            pv.status.phase != want
                || claim.is_some_and(|c| c.spec.volume_name.is_empty() || c.status.phase != "Bound")
        });
        for pv in pvs {
            let claim = pv.spec.claim_ref.as_ref().and_then(|r| {
                ctx.api
                    .pvcs
                    .get(&(r.namespace.clone(), r.name.clone()))
                    .filter(|c| c.metadata.uid == r.uid)
                    .cloned()
            });
            let want = match (&pv.spec.claim_ref, &claim) {
                (Some(_), Some(_)) => "Bound",
                (Some(_), None) => "Released",
                (None, _) => "Available",
            };
            if pv.status.phase != want {
                let mut next = pv.clone();
                next.status.phase = want.into();
                if ctx.api.pvs().update_status(&next).is_ok() {
                    changed = true;
                    ctx.log(
                        "persistentvolume-controller",
                        "phase",
                        format!("persistentvolume {} → {want}", pv.name()),
                    );
                }
            }
            if let Some(pvc) = claim {
                changed |= self.bind_claim(ctx, &pvc, &pv);
            }
        }
        changed
    }

    fn bind_claim(
        &mut self,
        ctx: &mut Ctx<'_>,
        pvc: &Object<PvcSpec>,
        pv: &Object<PvSpec>,
    ) -> bool {
        let mut changed = false;
        let (ns, name) = (pvc.metadata.namespace.clone(), pvc.name().to_string());
        if pvc.spec.volume_name.is_empty() {
            let mut next = pvc.clone();
            next.spec.volume_name = pv.name().to_string();
            let ann = &mut next.metadata.annotations;
            ann.insert("pv.kubernetes.io/bind-completed".into(), "yes".into());
            ann.insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
            if ctx.api.pvcs().update(next).is_ok() {
                changed = true;
            }
        }
        let Ok(cur) = ctx.api.pvcs().get(&ns, &name).cloned() else {
            return changed;
        };
        if cur.status.phase != "Bound" {
            let mut next = cur.clone();
            next.status.phase = "Bound".into();
            next.status.access_modes = pv.spec.access_modes.clone();
            next.status.capacity = pv.spec.capacity.clone();
            if ctx.api.pvcs().update_status(&next).is_ok() {
                changed = true;
                ctx.log(
                    "persistentvolume-controller",
                    "bind",
                    format!(
                        "claim {}/{name} Bound to persistentvolume {} ({})",
                        ns,
                        pv.name(),
                        pv.spec.capacity.get("storage").cloned().unwrap_or_default()
                    ),
                );
            }
        }
        changed
    }
}

impl PvcProtection {
    /// The pvc-protection controller: drop the finalizer of a deleted claim no pod uses.
    pub fn protect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let deleting: Vec<(String, String)> = self
            .work
            .select(&ctx.api.revs, &ctx.api.pvcs, super::work::only_own, |p| {
                p.metadata.deletion_tick.is_some()
                    && p.metadata.finalizers.iter().any(|f| f == PVC_PROTECTION)
            })
            .into_iter()
            .map(|p| (p.metadata.namespace.clone(), p.name().to_string()))
            .collect();
        let mut changed = false;
        for (ns, name) in deleting {
            let used = ctx.api.pods.values().any(|pod| {
                pod.metadata.namespace == ns
                    && pod
                        .spec
                        .volumes
                        .iter()
                        .any(|v| v.persistent_volume_claim.claim_name == name)
            });
            if used {
                continue;
            }
            if let Ok(true) = ctx.api.pvcs().remove_finalizer(&ns, &name, PVC_PROTECTION) {
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
