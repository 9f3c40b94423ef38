//! external-resizer: a bound claim whose requested size rose above its capacity gets
//! ControllerExpandVolume; the PV's capacity follows. When the driver says
//! `node_expansion_required`, the claim waits in FileSystemResizePending until kubelet calls
//! NodeExpandVolume on a node where it is mounted — "the disk grew but the filesystem did
//! not" until then.
//!
//! Kubernetes 1.31, which the lab models, has `RecoverVolumeExpansionFailure` alpha and off
//! (`pkg/features/kube_features.go`; beta and on from 1.32), and external-resizer v1.12 has
//! its own gate off too: the resize takes the legacy path (`resizePVC`), whose only marks on
//! the claim are its conditions. `markPVCResizeInProgress` sets Resizing;
//! `markPVCAsFSResizeRequired` replaces it with FileSystemResizePending (it keeps no old
//! resize condition); `markPVCResizeFinished`, or kubelet's `MarkFSResizeFinished`, writes
//! the new capacity and drops them. `status.allocatedResources` and
//! `allocatedResourceStatuses` belong to the gate: the 1.31 API server drops them
//! (`dropDisabledStatusFields`), so the lab has none.

use super::volume_capability;
use crate::cluster::{Object, ObjectRef, PvcCondition, PvcSpec};
use crate::control::{Component, Ctx};
use crate::csi::types::{CapacityRange, ControllerExpandVolumeRequest};
use crate::record::Level;
use crate::util::quantity::{format_bytes, parse_bytes};

/// The condition a claim carries while kubelet still has to grow the filesystem.
pub(crate) const FS_RESIZE_PENDING: &str = "FileSystemResizePending";
/// The condition a claim carries while a resize is in progress.
pub(crate) const RESIZING: &str = "Resizing";

/// The condition types a resize owns (external-resizer `knownResizeConditions`).
const RESIZE_CONDITIONS: [&str; 4] = [
    RESIZING,
    FS_RESIZE_PENDING,
    "ControllerResizeError",
    "NodeResizeError",
];

/// `MergeResizeConditionsOfPVC`: conditions a resize does not own stay; an old resize
/// condition is replaced by a new one of its type, kept when `keep_old`, else dropped; the
/// remaining new ones are appended.
pub(crate) fn merge_resize_conditions(
    old: &[PvcCondition],
    new: Vec<PvcCondition>,
    keep_old: bool,
) -> Vec<PvcCondition> {
    let mut new = new;
    let mut out = Vec::new();
    for c in old {
        if !RESIZE_CONDITIONS.contains(&c.condition_type.as_str()) {
            out.push(c.clone());
        } else if let Some(i) = new
            .iter()
            .position(|n| n.condition_type == c.condition_type)
        {
            // The same status keeps the condition as it was (its transition time).
            let n = new.remove(i);
            out.push(if n.status == c.status { c.clone() } else { n });
        } else if keep_old {
            out.push(c.clone());
        }
    }
    out.extend(new);
    out
}

/// external-resizer: ControllerExpandVolume for bound claims asking for more than they have.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resizer {
    /// Bound claims asking for more than their capacity.
    pub work: super::work::WorkSet,
    /// Its work queue's rate limiter.
    pub backoff: crate::control::Backoff,
}

impl Component for Resizer {
    fn name(&self) -> &'static str {
        "external-resizer"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl Resizer {
    /// One pass of external-resizer.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        // Only claims whose request is above their capacity (cheap to tell without the PV).
        let claims: Vec<Object<PvcSpec>> =
            self.work
                .select(&ctx.api.revs, &ctx.api.pvcs, super::work::only_own, |p| {
                    let want = p.spec.resources.requests.get("storage");
                    let have = p.status.capacity.get("storage");
                    p.status.phase == "Bound"
                        && want != have
                        && want.and_then(|w| parse_bytes(w).ok()).unwrap_or(0)
                            > have.and_then(|h| parse_bytes(h).ok()).unwrap_or(0)
                });
        let mut changed = false;
        for pvc in claims {
            let want = pvc
                .spec
                .resources
                .requests
                .get("storage")
                .and_then(|s| parse_bytes(s).ok())
                .unwrap_or(0);
            let Some(pv) =
                super::listers::pv_for_claim(ctx.api, pvc.metadata.namespace(), pvc.name())
                    .cloned()
            else {
                continue;
            };
            let pv_size = pv
                .spec
                .capacity
                .get("storage")
                .and_then(|s| parse_bytes(s).ok())
                .unwrap_or(0);
            if want <= pv_size {
                continue;
            }
            let key = format!("resizer/{}", pvc.key());
            if self.backoff.waiting(ctx.clock, &key) {
                continue;
            }
            let object = ObjectRef::to(&pvc);
            // markPVCResizeInProgress: Resizing, before the call.
            if let Ok(cur) = ctx
                .api
                .pvcs()
                .get(pvc.metadata.namespace(), pvc.name())
                .cloned()
            {
                let mut next = cur.clone();
                let resizing = PvcCondition {
                    condition_type: RESIZING.into(),
                    status: "True".into(),
                    last_transition_time: ctx.clock,
                    ..PvcCondition::default()
                };
                next.status.conditions =
                    merge_resize_conditions(&cur.status.conditions, vec![resizing], false);
                if next != cur {
                    let _ = ctx.api.pvcs().update_status(&next);
                }
            }
            ctx.event_from(
                "external-resizer",
                Some(super::RESIZER_EVENT_SOURCE),
                "Resizing",
                format!("External resizer is resizing volume {}", pv.name()),
                object.clone(),
                Level::Normal,
            );
            let cap = volume_capability(
                &pv.spec.access_modes,
                &pv.spec.volume_mode,
                &pv.spec.csi.fs_type,
                ctx.caps.single_node_multi_writer,
            )
            .ok();
            let req = ControllerExpandVolumeRequest {
                volume_id: pv.spec.csi.volume_handle.clone(),
                capacity_range: Some(CapacityRange {
                    required_bytes: want,
                    limit_bytes: 0,
                }),
                volume_capability: cap,
                ..Default::default()
            };
            changed = true;
            match ctx.csi_call(
                "external-resizer",
                None,
                "ControllerExpandVolume",
                req,
                |d, r| d.controller_expand_volume(r),
            ) {
                Ok(resp) => {
                    self.backoff.clear(&key);
                    let size = format_bytes(resp.capacity_bytes);
                    if let Ok(cur) = ctx.api.pvs().get("", pv.name()).cloned() {
                        let mut next = cur.clone();
                        next.spec.capacity.insert("storage".into(), size.clone());
                        let _ = ctx.api.pvs().update(next);
                    }
                    if let Ok(cur) = ctx
                        .api
                        .pvcs()
                        .get(pvc.metadata.namespace(), pvc.name())
                        .cloned()
                    {
                        let mut next = cur.clone();
                        let st = &mut next.status;
                        if resp.node_expansion_required {
                            // markPVCAsFSResizeRequired: FileSystemResizePending replaces
                            // Resizing (`keepOldResizeCondition` false).
                            let pending = PvcCondition {
                                condition_type: FS_RESIZE_PENDING.into(),
                                status: "True".into(),
                                last_transition_time: ctx.clock,
                                message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.".into(),
                                ..PvcCondition::default()
                            };
                            st.conditions = merge_resize_conditions(
                                &cur.status.conditions,
                                vec![pending],
                                false,
                            );
                        } else {
                            // markPVCResizeFinished.
                            st.capacity.insert("storage".into(), size.clone());
                            st.conditions =
                                merge_resize_conditions(&cur.status.conditions, Vec::new(), false);
                        }
                        let _ = ctx.api.pvcs().update_status(&next);
                    }
                    if resp.node_expansion_required {
                        ctx.event_from(
                            "external-resizer",
                            Some(super::RESIZER_EVENT_SOURCE),
                            "FileSystemResizeRequired",
                            "Require file system resize of volume on node",
                            object,
                            Level::Normal,
                        );
                    } else {
                        ctx.event_from(
                            "external-resizer",
                            Some(super::RESIZER_EVENT_SOURCE),
                            "VolumeResizeSuccessful",
                            "Resize volume succeeded",
                            object,
                            Level::Normal,
                        );
                    }
                }
                Err(status) => {
                    ctx.event_from(
                        "external-resizer",
                        Some(super::RESIZER_EVENT_SOURCE),
                        "VolumeResizeFailed",
                        format!(
                            "resize volume \"{}\" by resizer \"{}\" failed: {}",
                            pv.name(),
                            super::DRIVER,
                            status.go_error_string()
                        ),
                        object,
                        Level::Warning,
                    );
                    self.backoff.fail(ctx, key);
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Lab;

    fn run(lab: &mut Lab, line: &str) {
        if let Err(e) = lab.execute(line) {
            panic!("{line}: {}", e.message);
        }
    }

    fn status(lab: &Lab) -> crate::cluster::PvcStatus {
        lab.cluster.pvcs[&("default".to_string(), "db".to_string())]
            .status
            .clone()
    }

    fn types(st: &crate::cluster::PvcStatus) -> Vec<&str> {
        st.conditions
            .iter()
            .map(|c| c.condition_type.as_str())
            .collect()
    }

    fn cond(t: &str, message: &str) -> PvcCondition {
        PvcCondition {
            condition_type: t.into(),
            status: "True".into(),
            message: message.into(),
            ..PvcCondition::default()
        }
    }

    #[test]
    fn resize_conditions_merge_as_external_resizer_merges_them() {
        let old = vec![
            cond("Other", ""),
            cond(RESIZING, ""),
            cond(FS_RESIZE_PENDING, "a"),
        ];
        // The same status keeps the old condition (its message and transition time).
        let merged = merge_resize_conditions(&old, vec![cond(FS_RESIZE_PENDING, "b")], true);
        assert_eq!(
            merged,
            [
                cond("Other", ""),
                cond(RESIZING, ""),
                cond(FS_RESIZE_PENDING, "a")
            ]
        );
        // Another status replaces it.
        let mut off = cond(FS_RESIZE_PENDING, "b");
        off.status = "False".into();
        let merged = merge_resize_conditions(&old, vec![off.clone()], true);
        assert_eq!(merged, [cond("Other", ""), cond(RESIZING, ""), off]);
        let merged = merge_resize_conditions(&old, vec![cond(RESIZING, "")], false);
        assert_eq!(merged, [cond("Other", ""), cond(RESIZING, "")]);
        assert_eq!(
            merge_resize_conditions(&old, Vec::new(), false),
            [cond("Other", "")]
        );
    }

    /// Kubernetes 1.31's resize (RecoverVolumeExpansionFailure off): the claim's
    /// conditions say where it stands, Resizing then FileSystemResizePending alone, and the
    /// claim never shows `allocatedResources` or `allocatedResourceStatuses`.
    #[test]
    fn a_resize_shows_its_conditions_and_no_allocated_fields() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        let shown = |lab: &mut Lab| {
            let out = lab.execute("get pvc db -o json").expect("get").to_text();
            let v: serde_json::Value = serde_json::from_str(&out).expect("json");
            let status = v["status"].as_object().expect("a status").clone();
            assert!(!status.contains_key("allocatedResources"), "{out}");
            assert!(!status.contains_key("allocatedResourceStatuses"), "{out}");
        };
        // A retryable ControllerExpandVolume failure leaves Resizing.
        run(
            &mut lab,
            "fault inject ControllerExpandVolume --code UNAVAILABLE",
        );
        run(&mut lab, "pvc expand db 2Gi");
        let st = status(&lab);
        assert_eq!(types(&st), [RESIZING]);
        assert_eq!(st.capacity["storage"], "1Gi");
        shown(&mut lab);
        run(&mut lab, "tick 1");
        let st = status(&lab);
        assert_eq!(types(&st), [FS_RESIZE_PENDING]);
        assert_eq!(st.capacity["storage"], "1Gi");
        shown(&mut lab);
        // A failed NodeExpandVolume leaves the claim waiting; the retry finishes it.
        run(&mut lab, "fault inject NodeExpandVolume --code INTERNAL");
        run(&mut lab, "pod create p --node node-2 --pvc db");
        let st = status(&lab);
        assert_eq!(types(&st), [FS_RESIZE_PENDING]);
        assert_eq!(st.capacity["storage"], "1Gi");
        run(&mut lab, "tick 10");
        let st = status(&lab);
        assert!(st.conditions.is_empty());
        assert_eq!(st.capacity["storage"], "2Gi");
        shown(&mut lab);
    }
}
