//! external-resizer: a bound claim whose requested size rose above its capacity gets
//! ControllerExpandVolume; the PV's capacity follows. When the driver says
//! `node_expansion_required`, the claim waits in FileSystemResizePending until kubelet calls
//! NodeExpandVolume on a node where it is mounted — "the disk grew but the filesystem did
//! not" until then.

use super::volume_capability;
use crate::cluster::{Object, PvcCondition, PvcSpec};
use crate::control::{Component, Ctx};
use crate::csi::types::{CapacityRange, ControllerExpandVolumeRequest};
use crate::record::Level;
use crate::util::quantity::{format_bytes, parse_bytes};

/// The condition a claim carries while kubelet still has to grow the filesystem.
pub const FS_RESIZE_PENDING: &str = "FileSystemResizePending";

/// external-resizer: ControllerExpandVolume for bound claims asking for more than they have.
#[derive(Debug, Clone, Default)]
pub struct Resizer {
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
                super::listers::pv_for_claim(ctx.api, &pvc.metadata.namespace, pvc.name()).cloned()
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
            let object = format!("PersistentVolumeClaim/{}", pvc.key());
            ctx.event(
                "external-resizer",
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
                        .get(&pvc.metadata.namespace, pvc.name())
                        .cloned()
                    {
                        let mut next = cur.clone();
                        if resp.node_expansion_required {
                            next.status
                                .conditions
                                .retain(|c| c.condition_type != FS_RESIZE_PENDING);
                            next.status.conditions.push(PvcCondition {
                                condition_type: FS_RESIZE_PENDING.into(),
                                status: "True".into(),
                                message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.".into(),
                            });
                        } else {
                            next.status.capacity.insert("storage".into(), size.clone());
                        }
                        let _ = ctx.api.pvcs().update_status(&next);
                    }
                    if resp.node_expansion_required {
                        ctx.event(
                            "external-resizer",
                            "FileSystemResizeRequired",
                            "Require file system resize of volume on node".into(),
                            object,
                            Level::Normal,
                        );
                    } else {
                        ctx.event(
                            "external-resizer",
                            "VolumeResizeSuccessful",
                            "Resize volume succeeded".into(),
                            object,
                            Level::Normal,
                        );
                    }
                }
                Err(status) => {
                    ctx.event(
                        "external-resizer",
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
