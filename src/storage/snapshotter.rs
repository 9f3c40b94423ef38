//! snapshot-controller and the csi-snapshotter sidecar: a VolumeSnapshot gets a
//! VolumeSnapshotContent (`snapcontent-<snapshot uid>`), the sidecar calls CreateSnapshot
//! (`snapshot-<snapshot uid>`) and fills the content's status, and the controller copies
//! readiness and size back to the VolumeSnapshot. A content whose snapshot is gone is
//! deleted with DeleteSnapshot (deletionPolicy Delete).

use super::{DRIVER, SNAPSHOT_CLASS};
use crate::cluster::{
    ContentSource, Object, ObjectReference, VolumeSnapshotContentSpec, VolumeSnapshotSpec,
};
use crate::control::{Component, Ctx};
use crate::csi::types::{CreateSnapshotRequest, DeleteSnapshotRequest};
use crate::record::Level;
use crate::util::quantity::format_bytes;

/// snapshot-controller and csi-snapshotter: VolumeSnapshot → content → CreateSnapshot, and DeleteSnapshot for orphaned contents.
#[derive(Debug, Clone, Default)]
pub struct Snapshotter {
    /// Its work queue's rate limiter.
    pub backoff: crate::control::Backoff,
}

impl Component for Snapshotter {
    fn name(&self) -> &'static str {
        "csi-snapshotter"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl Snapshotter {
    /// One pass of the snapshot controllers.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = false;
        let snaps: Vec<Object<VolumeSnapshotSpec>> = ctx.api.snapshots.values().cloned().collect();
        for vs in snaps {
            changed |= self.sync_snapshot(ctx, &vs);
        }
        // Contents whose snapshot is gone: delete the snapshot in the driver, then the content.
        let orphans: Vec<Object<VolumeSnapshotContentSpec>> = ctx
            .api
            .snapshot_contents
            .values()
            .filter(|c| {
                let r = &c.spec.volume_snapshot_ref;
                ctx.api
                    .snapshots
                    .get(&(r.namespace.clone(), r.name.clone()))
                    .is_none_or(|s| s.metadata.uid != r.uid)
            })
            .cloned()
            .collect();
        for c in orphans {
            if c.spec.deletion_policy == "Delete" && !c.status.snapshot_handle.is_empty() {
                let req = DeleteSnapshotRequest {
                    snapshot_id: c.status.snapshot_handle.clone(),
                    ..Default::default()
                };
                if ctx
                    .csi_call("csi-snapshotter", None, "DeleteSnapshot", req, |d, r| {
                        d.delete_snapshot(r)
                    })
                    .is_err()
                {
                    continue;
                }
            }
            let _ = ctx.api.snapshot_contents().delete("", c.name());
            changed = true;
        }
        changed
    }

    fn sync_snapshot(&mut self, ctx: &mut Ctx<'_>, vs: &Object<VolumeSnapshotSpec>) -> bool {
        let ns = vs.metadata.namespace.clone();
        let object = format!("VolumeSnapshot/{}", vs.key());
        let content_name = format!("snapcontent-{}", vs.metadata.uid);
        let mut changed = false;
        if vs.status.bound_volume_snapshot_content_name.is_empty() {
            let claim = vs.spec.source.persistent_volume_claim_name.clone();
            let Some(pv) = super::listers::pv_for_claim(ctx.api, &ns, &claim).cloned() else {
                // syncUnreadySnapshot → createSnapshotContent: ensurePVCFinalizer fails on a
                // missing claim, getVolumeFromVolumeSnapshot on an unbound one
                // (external-snapshotter `pkg/common-controller/snapshot_controller.go`).
                let cause = if ctx.api.pvcs.contains_key(&(ns.clone(), claim.clone())) {
                    format!(
                        "failed to get input parameters to create snapshot {}: \"the PVC {claim} is not yet bound to a PV, will not attempt to take a snapshot\"",
                        vs.name()
                    )
                } else {
                    format!(
                        "snapshot controller failed to update {} on API server: cannot get claim from snapshot",
                        vs.name()
                    )
                };
                let message = format!("Failed to create snapshot content with error {cause}");
                return snapshot_error(ctx, vs, "SnapshotContentCreationFailed", message);
            };
            let content = Object::new(
                &content_name,
                "",
                VolumeSnapshotContentSpec {
                    deletion_policy: "Delete".into(),
                    driver: DRIVER.into(),
                    source: ContentSource {
                        volume_handle: pv.spec.csi.volume_handle.clone(),
                    },
                    volume_snapshot_ref: ObjectReference {
                        kind: "VolumeSnapshot".into(),
                        namespace: ns.clone(),
                        name: vs.name().to_string(),
                        uid: vs.metadata.uid.clone(),
                    },
                    volume_snapshot_class_name: SNAPSHOT_CLASS.into(),
                },
            );
            let clock = ctx.clock;
            let _ = ctx.api.snapshot_contents().create(content, clock);
            if let Ok(cur) = ctx.api.snapshots().get(&ns, vs.name()).cloned() {
                let mut next = cur.clone();
                next.status.bound_volume_snapshot_content_name = content_name.clone();
                next.status.error = None;
                let _ = ctx.api.snapshots().update_status(&next);
            }
            ctx.event(
                "snapshot-controller",
                "CreatingSnapshot",
                format!(
                    "Waiting for a snapshot {} to be created by the CSI driver.",
                    vs.key()
                ),
                object.clone(),
                Level::Normal,
            );
            changed = true;
        }
        let Some(content) = ctx
            .api
            .snapshot_contents
            .get(&(crate::cluster::no_namespace(), content_name.clone()))
            .cloned()
        else {
            return changed;
        };
        if content.status.snapshot_handle.is_empty() {
            let key = format!("snapshotter/{content_name}");
            if self.backoff.waiting(ctx.clock, &key) {
                return changed;
            }
            let req = CreateSnapshotRequest {
                source_volume_id: content.spec.source.volume_handle.clone(),
                name: format!("snapshot-{}", vs.metadata.uid),
                ..Default::default()
            };
            match ctx.csi_call("csi-snapshotter", None, "CreateSnapshot", req, |d, r| {
                d.create_snapshot(r)
            }) {
                Ok(resp) => {
                    self.backoff.clear(&key);
                    let snap = resp.snapshot.unwrap_or_default();
                    if let Ok(cur) = ctx.api.snapshot_contents().get("", &content_name).cloned() {
                        let mut next = cur.clone();
                        next.status.snapshot_handle = snap.snapshot_id.clone();
                        next.status.ready_to_use = snap.ready_to_use;
                        next.status.restore_size = Some(snap.size_bytes);
                        let _ = ctx.api.snapshot_contents().update_status(&next);
                    }
                }
                Err(status) => {
                    ctx.event(
                        "csi-snapshotter",
                        "SnapshotCreationFailed",
                        format!("Failed to create snapshot: {}", status.go_error_string()),
                        object.clone(),
                        Level::Warning,
                    );
                    self.backoff.fail(ctx, key);
                    return true;
                }
            }
            changed = true;
        }
        // Copy readiness back to the VolumeSnapshot.
        let Some(content) = ctx
            .api
            .snapshot_contents
            .get(&(crate::cluster::no_namespace(), content_name))
            .cloned()
        else {
            return changed;
        };
        if let Ok(cur) = ctx.api.snapshots().get(&ns, vs.name()).cloned() {
            if cur.status.ready_to_use != content.status.ready_to_use {
                let mut next = cur.clone();
                next.status.ready_to_use = content.status.ready_to_use;
                next.status.restore_size = content
                    .status
                    .restore_size
                    .map(format_bytes)
                    .unwrap_or_default();
                next.status.creation_time = crate::cluster::meta::timestamp(ctx.clock);
                let _ = ctx.api.snapshots().update_status(&next);
                ctx.event(
                    "snapshot-controller",
                    "SnapshotReady",
                    format!("Snapshot {} is ready to use.", vs.key()),
                    object,
                    Level::Normal,
                );
                changed = true;
            }
        }
        changed
    }
}

/// `updateSnapshotErrorStatusWithEvent`: `status.error` and `readyToUse: false`, and a
/// Warning event, unless the same error is already set.
fn snapshot_error(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
    reason: &'static str,
    message: String,
) -> bool {
    if vs
        .status
        .error
        .as_ref()
        .is_some_and(|e| e.message == message)
    {
        return false;
    }
    let ns = vs.metadata.namespace.clone();
    if let Ok(cur) = ctx.api.snapshots().get(&ns, vs.name()).cloned() {
        let mut next = cur.clone();
        next.status.ready_to_use = false;
        next.status.error = Some(crate::cluster::VolumeSnapshotError {
            message: message.clone(),
            time: crate::cluster::meta::timestamp(ctx.clock),
        });
        let _ = ctx.api.snapshots().update_status(&next);
    }
    ctx.event(
        "snapshot-controller",
        reason,
        message,
        format!("VolumeSnapshot/{}", vs.key()),
        Level::Warning,
    );
    true
}
