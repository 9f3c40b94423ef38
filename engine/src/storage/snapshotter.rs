//! snapshot-controller and the csi-snapshotter sidecar (kubernetes-csi/external-snapshotter
//! `pkg/common-controller/snapshot_controller.go` and `pkg/sidecar-controller/
//! snapshot_controller.go`): a VolumeSnapshot gets a VolumeSnapshotContent
//! (`snapcontent-<snapshot uid>`), the sidecar calls CreateSnapshot (`snapshot-<snapshot
//! uid>`) and fills the content's status, and the controller copies it back to the
//! VolumeSnapshot. Deleting a VolumeSnapshot deletes its content, and the sidecar calls
//! DeleteSnapshot (deletionPolicy Delete) before it lets the content go.
//!
//! The finalizers and annotations, and who sets and removes them:
//! - [`SNAPSHOT_AS_SOURCE`] on every VolumeSnapshot not being deleted (snapshot-controller,
//!   first sync); removed when it is deleted and no Pending claim restores from it;
//! - [`SNAPSHOT_BOUND`] on a VolumeSnapshot bound to a content with deletionPolicy Delete;
//!   removed once that content object is gone;
//! - [`CONTENT_BOUND`] on every bound content (snapshot-controller); removed by the sidecar
//!   after DeleteSnapshot succeeded;
//! - [`PVC_AS_SOURCE`] on the source claim before the content is created; removed when no
//!   snapshot of the claim is still unready (or the last one is deleted);
//! - [`BEING_CREATED`] on a content while CreateSnapshot has not answered (kept after a
//!   retryable error, so a deletion waits), [`BEING_DELETED`] once the VolumeSnapshot is
//!   being deleted (the sidecar deletes only a content that carries it).

use super::{DRIVER, SNAPSHOT_CLASS};
use crate::cluster::{ApiKind, ObjectRef};
use crate::cluster::{
    ContentSource, Object, ObjectReference, VolumeSnapshotContentSpec, VolumeSnapshotSpec,
};
use crate::control::{Component, Ctx};
use crate::csi::protojson::Timestamp;
use crate::csi::status::Code;
use crate::csi::types::{CreateSnapshotRequest, DeleteSnapshotRequest};
use crate::record::Level;
use crate::util::quantity::format_bytes;

/// On a VolumeSnapshot: a claim may still be restored from it.
pub(crate) const SNAPSHOT_AS_SOURCE: &str =
    "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection";
/// On a VolumeSnapshot bound to a content that is deleted with it.
pub(crate) const SNAPSHOT_BOUND: &str =
    "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection";
/// On a bound VolumeSnapshotContent, until the sidecar deleted the snapshot.
pub(crate) const CONTENT_BOUND: &str =
    "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection";
/// On the source claim while a snapshot is being taken of it.
pub(crate) const PVC_AS_SOURCE: &str = "snapshot.storage.kubernetes.io/pvc-as-source-protection";
/// On a content while CreateSnapshot has not answered.
pub(crate) const BEING_CREATED: &str =
    "snapshot.storage.kubernetes.io/volumesnapshot-being-created";
/// On a content whose VolumeSnapshot is being deleted.
pub(crate) const BEING_DELETED: &str =
    "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted";

/// snapshot-controller and csi-snapshotter: VolumeSnapshot → content → CreateSnapshot, and DeleteSnapshot when a snapshot is deleted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshotter {
    /// Its work queue's rate limiter.
    pub backoff: crate::control::Backoff,
    /// Snapshots whose deletion waits for a restore, with the resourceVersion their
    /// SnapshotDeletePending event was recorded at. snapshot-controller records the event
    /// when it syncs the snapshot and returns without error (no requeue), so it comes again
    /// only when the snapshot changes, not on every pass of the lab's loop.
    delete_pending: std::collections::BTreeMap<(String, String), u64>,
}

impl Component for Snapshotter {
    fn name(&self) -> &'static str {
        "csi-snapshotter"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

/// The content name snapshot-controller gives a dynamically provisioned snapshot.
pub(crate) fn content_name(vs: &Object<VolumeSnapshotSpec>) -> String {
    format!("snapcontent-{}", vs.metadata.uid)
}

fn has(finalizers: &[String], f: &str) -> bool {
    finalizers.iter().any(|x| x == f)
}

/// `IsSnapshotDeletionCandidate`: being deleted and still holding one of its finalizers.
fn deletion_candidate(vs: &Object<VolumeSnapshotSpec>) -> bool {
    let f = vs.metadata.finalizers();
    vs.metadata.deletion_tick().is_some() && (has(f, SNAPSHOT_AS_SOURCE) || has(f, SNAPSHOT_BOUND))
}

/// Whether a content points back at this very snapshot (`IsVolumeSnapshotRefSet`).
fn points_at(c: &Object<VolumeSnapshotContentSpec>, vs: &Object<VolumeSnapshotSpec>) -> bool {
    let r = &c.spec.volume_snapshot_ref;
    r.name == vs.name() && r.namespace == *vs.metadata.namespace() && r.uid == vs.metadata.uid
}

/// gRPC codes after which a CreateSnapshot may still be running in the driver
/// (`isCSIFinalError`): the being-created annotation stays.
fn final_error(code: Code) -> bool {
    !matches!(
        code,
        Code::Cancelled
            | Code::DeadlineExceeded
            | Code::Unavailable
            | Code::ResourceExhausted
            | Code::Aborted
    )
}

/// A content's `creationTime` (nanoseconds since the Unix epoch) as the VolumeSnapshot's
/// `metav1.Time` prints it (RFC 3339, whole seconds).
fn creation_timestamp(nanos: i64) -> String {
    Timestamp::from_seconds(nanos.div_euclid(1_000_000_000)).to_rfc3339()
}

impl Snapshotter {
    /// One pass of both controllers: every VolumeSnapshot (snapshot-controller), then every
    /// content (snapshot-controller's content sync, then the sidecar's).
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = false;
        let snaps: Vec<(String, String)> = ctx.api.snapshots.keys().cloned().collect();
        for key in snaps {
            // Re-read: an earlier sync of this pass may have changed or removed it.
            let Some(vs) = ctx.api.snapshots.get(&key).cloned() else {
                continue;
            };
            changed |= self.sync_snapshot(ctx, &vs);
        }
        let contents: Vec<(String, String)> = ctx.api.snapshot_contents.keys().cloned().collect();
        for key in &contents {
            if let Some(c) = ctx.api.snapshot_contents.get(key).cloned() {
                changed |= sync_content(ctx, &c);
            }
        }
        for key in &contents {
            if let Some(c) = ctx.api.snapshot_contents.get(key).cloned() {
                changed |= self.sidecar_sync_content(ctx, &c);
            }
        }
        changed
    }

    /// snapshot-controller's `syncSnapshot`.
    fn sync_snapshot(&mut self, ctx: &mut Ctx<'_>, vs: &Object<VolumeSnapshotSpec>) -> bool {
        let mut changed = check_and_remove_pvc_finalizer(ctx, vs, false);
        if vs.metadata.deletion_tick().is_some() {
            return process_deletion(&mut self.delete_pending, ctx, vs) || changed;
        }
        changed |= add_snapshot_finalizers(ctx, vs);
        let Some(vs) = ctx
            .api
            .snapshots
            .get(&(vs.metadata.namespace().clone(), vs.name().to_string()))
            .cloned()
        else {
            return changed;
        };
        if !vs.status.ready_to_use || vs.status.bound_volume_snapshot_content_name.is_empty() {
            changed |= sync_unready(ctx, &vs);
        }
        changed
    }

    /// csi-snapshotter's `syncContent`: delete a content whose snapshot is being deleted,
    /// or cut the snapshot of a new one.
    fn sidecar_sync_content(
        &mut self,
        ctx: &mut Ctx<'_>,
        c: &Object<VolumeSnapshotContentSpec>,
    ) -> bool {
        let ann = c.metadata.annotations();
        // shouldDelete: being deleted, not waiting for a CreateSnapshot answer, and marked
        // by snapshot-controller.
        if c.metadata.deletion_tick().is_some() {
            if ann.contains_key(BEING_CREATED) || !ann.contains_key(BEING_DELETED) {
                return false;
            }
            return self.delete_content(ctx, c);
        }
        if c.status.snapshot_handle.is_empty() && !c.spec.source.volume_handle.is_empty() {
            return self.create_snapshot(ctx, c);
        }
        if c.status.ready_to_use && ann.contains_key(BEING_CREATED) {
            return remove_annotation(ctx, c.name(), BEING_CREATED);
        }
        false
    }

    /// The sidecar's delete: DeleteSnapshot (deletionPolicy Delete, a snapshot was cut), clear
    /// the content's status, then drop [`CONTENT_BOUND`] so the API server removes it.
    fn delete_content(&mut self, ctx: &mut Ctx<'_>, c: &Object<VolumeSnapshotContentSpec>) -> bool {
        let name = c.name().to_string();
        let key = format!("snapshotter-delete/{name}");
        if self.backoff.waiting(ctx.clock, &key) {
            return false;
        }
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
                ctx.event_from(
                    "csi-snapshotter",
                    Some(super::SNAPSHOTTER_EVENT_SOURCE),
                    "SnapshotDeleteError",
                    "Failed to delete snapshot",
                    ObjectRef::new(ApiKind::VolumeSnapshotContent, "", name),
                    Level::Warning,
                );
                self.backoff.fail(ctx, key);
                return true;
            }
            self.backoff.clear(&key);
            // clearVolumeContentStatus: the snapshot is gone from the storage system.
            if let Ok(cur) = ctx.api.snapshot_contents().get("", &name).cloned() {
                let mut next = cur.clone();
                next.status.snapshot_handle.clear();
                next.status.ready_to_use = false;
                next.status.creation_time = None;
                next.status.restore_size = None;
                let _ = ctx.api.snapshot_contents().update_status(&next);
            }
        }
        let _ = ctx
            .api
            .snapshot_contents()
            .remove_finalizer("", &name, CONTENT_BOUND);
        true
    }

    /// `createSnapshotWrapper`: mark the content, call CreateSnapshot, write what the
    /// driver answered, and unmark it.
    fn create_snapshot(
        &mut self,
        ctx: &mut Ctx<'_>,
        c: &Object<VolumeSnapshotContentSpec>,
    ) -> bool {
        let name = c.name().to_string();
        let r = &c.spec.volume_snapshot_ref;
        let object = ObjectRef::new(ApiKind::VolumeSnapshot, &r.namespace, &r.name);
        let key = format!("snapshotter/{name}");
        if self.backoff.waiting(ctx.clock, &key) {
            return false;
        }
        if !c.metadata.annotations().contains_key(BEING_CREATED) {
            let mut next = c.clone();
            next.metadata
                .annotations_mut()
                .insert(BEING_CREATED.into(), "yes".into());
            if ctx.api.snapshot_contents().update(next).is_err() {
                return false;
            }
        }
        let req = CreateSnapshotRequest {
            source_volume_id: c.spec.source.volume_handle.clone(),
            name: format!("snapshot-{}", r.uid),
            ..Default::default()
        };
        match ctx.csi_call("csi-snapshotter", None, "CreateSnapshot", req, |d, r| {
            d.create_snapshot(r)
        }) {
            Ok(resp) => {
                self.backoff.clear(&key);
                let snap = resp.snapshot.unwrap_or_default();
                // A driver that gives no creation_time gets the sidecar's clock.
                let at = snap
                    .creation_time
                    .filter(|t| *t != Timestamp::default())
                    .unwrap_or_else(|| {
                        Timestamp::from_millis(
                            crate::cluster::meta::EPOCH_UNIX
                                .saturating_mul(1000)
                                .saturating_add(
                                    i64::try_from(ctx.clock.as_ms()).unwrap_or(i64::MAX),
                                ),
                        )
                    });
                let nanos = at
                    .seconds
                    .saturating_mul(1_000_000_000)
                    .saturating_add(i64::from(at.nanos));
                if let Ok(cur) = ctx.api.snapshot_contents().get("", &name).cloned() {
                    let mut next = cur.clone();
                    next.status.snapshot_handle = snap.snapshot_id.clone();
                    next.status.ready_to_use = snap.ready_to_use;
                    if next.status.creation_time.is_none() {
                        next.status.creation_time = Some(nanos);
                    }
                    if next.status.restore_size.is_none() && snap.size_bytes > 0 {
                        next.status.restore_size = Some(snap.size_bytes);
                    }
                    let _ = ctx.api.snapshot_contents().update_status(&next);
                }
                remove_annotation(ctx, &name, BEING_CREATED);
            }
            Err(status) => {
                if final_error(status.code) {
                    remove_annotation(ctx, &name, BEING_CREATED);
                }
                ctx.event_from(
                    "csi-snapshotter",
                    Some(super::SNAPSHOTTER_EVENT_SOURCE),
                    "SnapshotCreationFailed",
                    format!("Failed to create snapshot: {}", status.go_error_string()),
                    object,
                    Level::Warning,
                );
                self.backoff.fail(ctx, key);
            }
        }
        true
    }
}

/// `checkandAddSnapshotFinalizers`: the source finalizer at once, the bound one when the
/// snapshot is bound to a content that is deleted with it.
fn add_snapshot_finalizers(ctx: &mut Ctx<'_>, vs: &Object<VolumeSnapshotSpec>) -> bool {
    let f = vs.metadata.finalizers();
    let content = ctx
        .api
        .snapshot_contents
        .get(&(crate::cluster::no_namespace(), content_name(vs)))
        .filter(|c| points_at(c, vs));
    let add_source = !has(f, SNAPSHOT_AS_SOURCE);
    let add_bound = content.is_some_and(|c| c.spec.deletion_policy == "Delete")
        && !has(f, SNAPSHOT_BOUND)
        && !vs.status.bound_volume_snapshot_content_name.is_empty();
    if !add_source && !add_bound {
        return false;
    }
    let mut next = vs.clone();
    if add_source {
        next.metadata
            .finalizers_mut()
            .push(SNAPSHOT_AS_SOURCE.into());
    }
    if add_bound {
        next.metadata.finalizers_mut().push(SNAPSHOT_BOUND.into());
    }
    ctx.api.snapshots().update(next).is_ok()
}

/// `syncUnreadySnapshot` for a dynamically provisioned snapshot: bind to its content, or
/// create the content.
fn sync_unready(ctx: &mut Ctx<'_>, vs: &Object<VolumeSnapshotSpec>) -> bool {
    let existing = ctx
        .api
        .snapshot_contents
        .get(&(crate::cluster::no_namespace(), content_name(vs)))
        .filter(|c| points_at(c, vs))
        .cloned();
    if let Some(content) = existing {
        return update_snapshot_status(ctx, vs, &content);
    }
    match create_snapshot_content(ctx, vs) {
        Ok(content) => {
            ctx.event(
                "snapshot-controller",
                "CreatingSnapshot",
                format!(
                    "Waiting for a snapshot {} to be created by the CSI driver.",
                    vs.key()
                ),
                ObjectRef::to(vs),
                Level::Normal,
            );
            update_snapshot_status(ctx, vs, &content);
            true
        }
        Err((wrote, cause)) => {
            let message = format!("Failed to create snapshot content with error {cause}");
            snapshot_error(ctx, vs, "SnapshotContentCreationFailed", message) || wrote
        }
    }
}

/// `createSnapshotContent`: protect the source claim first (`ensurePVCFinalizer`), then
/// find its volume and create the content. The error says whether the claim was written.
fn create_snapshot_content(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
) -> Result<Object<VolumeSnapshotContentSpec>, (bool, String)> {
    let ns = vs.metadata.namespace().clone();
    let claim = vs.spec.source.persistent_volume_claim_name.clone();
    let wrote = ensure_pvc_finalizer(ctx, vs).map_err(|e| (false, e))?;
    // getCreateSnapshotInput looks the class up before the volume; the lab has one
    // VolumeSnapshotClass, csi-hostpath-snapclass (`pkg/common-controller/snapshot_controller.go`).
    let class = &vs.spec.volume_snapshot_class_name;
    if class != SNAPSHOT_CLASS {
        return Err((
            wrote,
            format!(
                "failed to get input parameters to create snapshot {}: \"volumesnapshotclass.snapshot.storage.k8s.io \\\"{class}\\\" not found\"",
                vs.name()
            ),
        ));
    }
    let Some(pv) = super::listers::pv_for_claim(ctx.api, &ns, &claim).cloned() else {
        // getVolumeFromVolumeSnapshot on a claim not bound yet.
        return Err((
            wrote,
            format!(
                "failed to get input parameters to create snapshot {}: \"the PVC {claim} is not yet bound to a PV, will not attempt to take a snapshot\"",
                vs.name()
            ),
        ));
    };
    let content = Object::new(
        &content_name(vs),
        "",
        VolumeSnapshotContentSpec {
            deletion_policy: "Delete".into(),
            driver: DRIVER.into(),
            source: ContentSource {
                volume_handle: pv.spec.csi.volume_handle.clone(),
            },
            // `createSnapshotContent`: `ref.GetReference(scheme.Scheme, snapshot)`.
            volume_snapshot_ref: ObjectReference::of(vs),
            volume_snapshot_class_name: SNAPSHOT_CLASS.into(),
        },
    );
    let clock = ctx.clock;
    ctx.api
        .snapshot_contents()
        .create(content, clock)
        .cloned()
        .map_err(|e| (wrote, e.to_string()))
}

/// `ensurePVCFinalizer`: the source claim gets [`PVC_AS_SOURCE`] unless it is gone or being
/// deleted. True when it was added now.
fn ensure_pvc_finalizer(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
) -> Result<bool, String> {
    let ns = vs.metadata.namespace();
    let claim = &vs.spec.source.persistent_volume_claim_name;
    let Some(pvc) = ctx.api.pvcs.get(&(ns.clone(), claim.clone())) else {
        return Err(format!(
            "snapshot controller failed to update {} on API server: cannot get claim from snapshot",
            vs.name()
        ));
    };
    if has(pvc.metadata.finalizers(), PVC_AS_SOURCE) {
        return Ok(false);
    }
    if pvc.metadata.deletion_tick().is_some() {
        return Err(format!(
            "snapshot controller failed to update {claim} on API server: cannot add finalizer on claim because it is being deleted"
        ));
    }
    ctx.api
        .pvcs()
        .add_finalizer(ns, claim, PVC_AS_SOURCE)
        .map(|()| true)
        .map_err(|e| format!("snapshot controller failed to update {claim} on API server: {e}"))
}

/// `checkandRemovePVCFinalizer`: drop [`PVC_AS_SOURCE`] from the source claim once no
/// snapshot of it (other than this one, when it is being let go) is still unready.
fn check_and_remove_pvc_finalizer(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
    skip_current: bool,
) -> bool {
    let ns = vs.metadata.namespace();
    let claim = &vs.spec.source.persistent_volume_claim_name;
    let Some(pvc) = ctx.api.pvcs.get(&(ns.clone(), claim.clone())) else {
        return false;
    };
    if !has(pvc.metadata.finalizers(), PVC_AS_SOURCE) {
        return false;
    }
    // isPVCBeingUsed: a snapshot of the claim that is not ready yet.
    let in_use = ctx.api.snapshots.values().any(|s| {
        *s.metadata.namespace() == *ns
            && !(skip_current && s.name() == vs.name())
            && s.spec.source.persistent_volume_claim_name == *claim
            && !s.status.ready_to_use
    });
    if in_use {
        return false;
    }
    let (ns, claim) = (ns.clone(), claim.clone());
    match ctx.api.pvcs().remove_finalizer(&ns, &claim, PVC_AS_SOURCE) {
        Ok(gone) => {
            if gone {
                ctx.log(
                    "snapshot-controller",
                    "delete",
                    format!(
                        "claim {ns}/{claim} removed (no snapshot is being taken of it any more)"
                    ),
                );
            }
            true
        }
        Err(_) => false,
    }
}

/// `processSnapshotWithDeletionTimestamp`: wait while a claim is being restored from the
/// snapshot; otherwise mark its content, delete it (deletionPolicy Delete) and let the
/// snapshot go, keeping the bound finalizer until the content object is gone.
fn process_deletion(
    delete_pending: &mut std::collections::BTreeMap<(String, String), u64>,
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
) -> bool {
    if !deletion_candidate(vs) {
        return false;
    }
    let key = (vs.metadata.namespace().clone(), vs.name().to_string());
    let name = if vs.status.bound_volume_snapshot_content_name.is_empty() {
        content_name(vs)
    } else {
        vs.status.bound_volume_snapshot_content_name.clone()
    };
    let content = ctx
        .api
        .snapshot_contents
        .get(&(crate::cluster::no_namespace(), name))
        .filter(|c| points_at(c, vs))
        .cloned();
    let delete_content = content
        .as_ref()
        .is_some_and(|c| c.spec.deletion_policy == "Delete");
    if content.is_some() && being_restored(ctx, vs) {
        let version = vs.metadata.resource_version;
        if delete_pending.insert(key, version) != Some(version) {
            ctx.event(
                "snapshot-controller",
                "SnapshotDeletePending",
                "Snapshot is being used to restore a PVC",
                ObjectRef::to(vs),
                Level::Warning,
            );
        }
        return false;
    }
    delete_pending.remove(&key);
    let mut changed = false;
    if let Some(c) = &content {
        changed |= set_being_deleted(ctx, c);
        if delete_content && c.metadata.deletion_tick().is_none() {
            let clock = ctx.clock;
            changed |= ctx
                .api
                .snapshot_contents()
                .request_delete("", c.name(), clock)
                .is_ok();
        }
    }
    changed |= check_and_remove_pvc_finalizer(ctx, vs, true);
    let mut remove = vec![SNAPSHOT_AS_SOURCE];
    if !(content.is_some() && delete_content) {
        remove.push(SNAPSHOT_BOUND);
    }
    let (ns, vs_name) = (vs.metadata.namespace().clone(), vs.name().to_string());
    let Ok(cur) = ctx.api.snapshots().get(&ns, &vs_name).cloned() else {
        return changed;
    };
    if !cur
        .metadata
        .finalizers()
        .iter()
        .any(|f| remove.contains(&f.as_str()))
    {
        return changed;
    }
    if let Ok(gone) = ctx
        .api
        .snapshots()
        .remove_finalizers(&ns, &vs_name, &remove)
    {
        if gone {
            ctx.log(
                "snapshot-controller",
                "delete",
                format!("volumesnapshot {ns}/{vs_name} removed"),
            );
        }
        changed = true;
    }
    changed
}

/// `isVolumeBeingCreatedFromSnapshot`: a Pending claim names the snapshot as its source.
fn being_restored(ctx: &Ctx<'_>, vs: &Object<VolumeSnapshotSpec>) -> bool {
    ctx.api.pvcs.values().any(|p| {
        p.metadata.namespace() == vs.metadata.namespace()
            && p.status.phase == "Pending"
            && p.spec.data_source.as_ref().is_some_and(|d| {
                d.kind == ApiKind::VolumeSnapshot.name()
                    && d.api_group == "snapshot.storage.k8s.io"
                    && d.name == vs.name()
            })
    })
}

/// `setAnnVolumeSnapshotBeingDeleted`.
fn set_being_deleted(ctx: &mut Ctx<'_>, c: &Object<VolumeSnapshotContentSpec>) -> bool {
    let Ok(cur) = ctx.api.snapshot_contents().get("", c.name()).cloned() else {
        return false;
    };
    if cur.metadata.annotations().contains_key(BEING_DELETED) {
        return false;
    }
    let mut next = cur;
    next.metadata
        .annotations_mut()
        .insert(BEING_DELETED.into(), "yes".into());
    ctx.api.snapshot_contents().update(next).is_ok()
}

fn remove_annotation(ctx: &mut Ctx<'_>, content: &str, key: &str) -> bool {
    let Ok(cur) = ctx.api.snapshot_contents().get("", content).cloned() else {
        return false;
    };
    if !cur.metadata.annotations().contains_key(key) {
        return false;
    }
    let mut next = cur;
    next.metadata.annotations_mut().remove(key);
    ctx.api.snapshot_contents().update(next).is_ok()
}

/// snapshot-controller's `syncContent`: a bound content gets [`CONTENT_BOUND`]; one whose
/// snapshot is being deleted gets [`BEING_DELETED`].
fn sync_content(ctx: &mut Ctx<'_>, c: &Object<VolumeSnapshotContentSpec>) -> bool {
    let r = &c.spec.volume_snapshot_ref;
    if r.uid.is_empty() {
        return false;
    }
    if c.metadata.deletion_tick().is_none() && !has(c.metadata.finalizers(), CONTENT_BOUND) {
        return ctx
            .api
            .snapshot_contents()
            .add_finalizer("", c.name(), CONTENT_BOUND)
            .is_ok();
    }
    let deleting = ctx
        .api
        .snapshots
        .get(&(r.namespace.clone(), r.name.clone()))
        .filter(|s| s.metadata.uid == r.uid)
        .is_some_and(deletion_candidate);
    deleting && set_being_deleted(ctx, c)
}

/// `updateSnapshotStatus`: bind the snapshot to its content and copy what the content's
/// status says (creationTime, readyToUse, restoreSize), with the SnapshotCreated and
/// SnapshotReady events the first time each becomes true.
fn update_snapshot_status(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
    content: &Object<VolumeSnapshotContentSpec>,
) -> bool {
    let Ok(cur) = ctx
        .api
        .snapshots()
        .get(vs.metadata.namespace(), vs.name())
        .cloned()
    else {
        return false;
    };
    let mut st = cur.status.clone();
    let mut updated = false;
    let fresh = st.bound_volume_snapshot_content_name.is_empty();
    if fresh {
        st.bound_volume_snapshot_content_name = content.name().to_string();
        updated = true;
    }
    if let (true, Some(nanos)) = (st.creation_time.is_empty(), content.status.creation_time) {
        st.creation_time = creation_timestamp(nanos);
        updated = true;
    }
    let ready = content.status.ready_to_use;
    if fresh || st.ready_to_use != ready {
        st.ready_to_use = ready;
        updated = true;
        if ready {
            st.error = None;
        }
    }
    if let Some(size) = content.status.restore_size {
        if st.restore_size.is_empty() || (st.restore_size == "0" && size > 0) {
            st.restore_size = format_bytes(size);
            updated = true;
        }
    }
    // The content carries no error: a stale one on the snapshot is cleared.
    if st.error.is_some() {
        st.error = None;
        updated = true;
    }
    if !updated {
        return false;
    }
    let object = ObjectRef::to(vs);
    if cur.status.creation_time.is_empty() && !st.creation_time.is_empty() {
        ctx.event(
            "snapshot-controller",
            "SnapshotCreated",
            format!(
                "Snapshot {} was successfully created by the CSI driver.",
                vs.key()
            ),
            object.clone(),
            Level::Normal,
        );
    }
    if !cur.status.ready_to_use && st.ready_to_use {
        ctx.event(
            "snapshot-controller",
            "SnapshotReady",
            format!("Snapshot {} is ready to use.", vs.key()),
            object,
            Level::Normal,
        );
    }
    let mut next = cur;
    next.status = st;
    ctx.api.snapshots().update_status(&next).is_ok()
}

/// `updateSnapshotErrorStatusWithEvent`: `status.error` and `readyToUse: false`, and a
/// Warning event, unless the same error is already set.
fn snapshot_error(
    ctx: &mut Ctx<'_>,
    vs: &Object<VolumeSnapshotSpec>,
    reason: &'static str,
    message: String,
) -> bool {
    let ns = vs.metadata.namespace().clone();
    let Ok(cur) = ctx.api.snapshots().get(&ns, vs.name()).cloned() else {
        return false;
    };
    if cur
        .status
        .error
        .as_ref()
        .is_some_and(|e| e.message == message)
    {
        return false;
    }
    let mut next = cur;
    next.status.ready_to_use = false;
    next.status.error = Some(crate::cluster::VolumeSnapshotError {
        message: message.clone(),
        time: crate::cluster::meta::timestamp(ctx.clock.whole_secs()),
    });
    let _ = ctx.api.snapshots().update_status(&next);
    ctx.event(
        "snapshot-controller",
        reason,
        message,
        ObjectRef::to(vs),
        Level::Warning,
    );
    true
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

    fn vs(lab: &Lab, name: &str) -> Option<Object<VolumeSnapshotSpec>> {
        lab.cluster
            .snapshots
            .get(&("default".to_string(), name.to_string()))
            .cloned()
    }

    fn content(
        lab: &Lab,
        vs: &Object<VolumeSnapshotSpec>,
    ) -> Option<Object<VolumeSnapshotContentSpec>> {
        lab.cluster
            .snapshot_contents
            .get(&(crate::cluster::no_namespace(), content_name(vs)))
            .cloned()
    }

    fn claim_finalizers(lab: &Lab, name: &str) -> Vec<String> {
        lab.cluster
            .pvcs
            .get(&("default".to_string(), name.to_string()))
            .map(|p| p.metadata.finalizers().to_vec())
            .unwrap_or_default()
    }

    #[test]
    fn a_snapshot_being_taken_protects_its_claim_and_marks_its_content() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        run(&mut lab, "fault inject CreateSnapshot --code UNAVAILABLE");
        run(&mut lab, "snapshot create s1 --pvc db");
        // CreateSnapshot failed with a retryable code: the snapshot is bound but not ready.
        let s = vs(&lab, "s1").unwrap();
        assert_eq!(
            s.metadata.finalizers(),
            [SNAPSHOT_AS_SOURCE, SNAPSHOT_BOUND]
        );
        assert!(!s.status.ready_to_use && s.status.creation_time.is_empty());
        assert_eq!(
            claim_finalizers(&lab, "db"),
            [super::super::PVC_PROTECTION, PVC_AS_SOURCE]
        );
        let c = content(&lab, &s).unwrap();
        assert_eq!(c.metadata.finalizers(), [CONTENT_BOUND]);
        assert_eq!(c.metadata.annotations()[BEING_CREATED], "yes");
        assert_eq!(c.status.creation_time, None);
        // The retry succeeds: the claim is let go, the annotation dropped, the time copied.
        run(&mut lab, "tick 1");
        let s = vs(&lab, "s1").unwrap();
        assert!(s.status.ready_to_use);
        assert_eq!(claim_finalizers(&lab, "db"), [super::super::PVC_PROTECTION]);
        let c = content(&lab, &s).unwrap();
        assert!(!c.metadata.annotations().contains_key(BEING_CREATED));
        let cut = lab
            .driver
            .snapshots()
            .next()
            .unwrap()
            .snapshot
            .creation_time
            .unwrap();
        assert_eq!(s.status.creation_time, cut.to_rfc3339());
        assert_eq!(s.status.creation_time, "2025-01-01T00:00:01Z");
        assert_eq!(c.status.creation_time, Some(cut.seconds * 1_000_000_000));
    }

    #[test]
    fn a_final_create_error_drops_the_being_created_mark() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        run(&mut lab, "fault inject CreateSnapshot --code INTERNAL");
        run(&mut lab, "snapshot create s1 --pvc db");
        let s = vs(&lab, "s1").unwrap();
        let c = content(&lab, &s).unwrap();
        assert!(c.metadata.annotations().is_empty());
        assert_eq!(claim_finalizers(&lab, "db").len(), 2, "still being taken");
    }

    #[test]
    fn a_snapshot_of_a_missing_or_deleted_claim_adds_no_claim_finalizer() {
        let mut lab = Lab::new();
        run(&mut lab, "snapshot create s1 --pvc nope");
        let s = vs(&lab, "s1").unwrap();
        // The source finalizer comes first, whatever the claim.
        assert_eq!(s.metadata.finalizers(), [SNAPSHOT_AS_SOURCE]);
        assert!(content(&lab, &s).is_none());
        // A claim kept Terminating by a pod refuses the finalizer.
        run(&mut lab, "pvc create used --size 1Gi");
        run(&mut lab, "pod create p --node node-1 --pvc used");
        run(&mut lab, "pvc delete used");
        run(&mut lab, "snapshot create s2 --pvc used");
        let s = vs(&lab, "s2").unwrap();
        assert_eq!(
            s.status.error.unwrap().message,
            "Failed to create snapshot content with error snapshot controller failed to update used on API server: cannot add finalizer on claim because it is being deleted"
        );
        assert_eq!(
            claim_finalizers(&lab, "used"),
            [super::super::PVC_PROTECTION]
        );
    }

    #[test]
    fn deleting_a_snapshot_waits_for_restores_then_deletes_its_content() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        run(&mut lab, "snapshot create s1 --pvc db");
        let uid = vs(&lab, "s1").unwrap().metadata.uid;
        // A restore that waits for its first consumer keeps the snapshot in use.
        run(
            &mut lab,
            "pvc create r1 --size 1Gi --class local-wffc --from-snapshot s1",
        );
        run(&mut lab, "snapshot delete s1");
        let s = vs(&lab, "s1").unwrap();
        assert!(s.metadata.deletion_tick().is_some());
        assert_eq!(
            s.metadata.finalizers(),
            [SNAPSHOT_AS_SOURCE, SNAPSHOT_BOUND]
        );
        let c = content(&lab, &s).unwrap();
        assert!(c.metadata.deletion_tick().is_none());
        assert_eq!(c.metadata.annotations()[BEING_DELETED], "yes");
        // The claim is gone: the content is deleted, DeleteSnapshot called, and both go.
        run(&mut lab, "fault inject DeleteSnapshot --code INTERNAL");
        run(&mut lab, "pvc delete r1");
        let s = vs(&lab, "s1").unwrap();
        assert_eq!(s.metadata.finalizers(), [SNAPSHOT_BOUND]);
        let c = content(&lab, &s).unwrap();
        assert!(c.metadata.deletion_tick().is_some());
        assert_eq!(c.metadata.finalizers(), [CONTENT_BOUND]);
        assert!(
            !c.status.snapshot_handle.is_empty(),
            "DeleteSnapshot failed"
        );
        run(&mut lab, "tick 1");
        assert!(vs(&lab, "s1").is_none());
        assert!(
            !lab.cluster
                .snapshot_contents
                .contains_key(&(crate::cluster::no_namespace(), format!("snapcontent-{uid}")))
        );
        assert_eq!(lab.driver.snapshots().count(), 0);
    }

    #[test]
    fn a_snapshot_being_deleted_restores_no_new_claim() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        run(&mut lab, "snapshot create s1 --pvc db");
        run(&mut lab, "fault inject DeleteSnapshot --code INTERNAL");
        run(&mut lab, "snapshot delete s1");
        // DeleteSnapshot failed: the snapshot waits for its content, unprotected.
        assert_eq!(
            vs(&lab, "s1").unwrap().metadata.finalizers(),
            [SNAPSHOT_BOUND]
        );
        run(&mut lab, "pvc create r1 --size 1Gi --from-snapshot s1");
        let calls: Vec<_> = lab.calls.iter().map(|(_, e)| e.detail()).collect();
        assert!(
            calls.iter().any(|d| d.ends_with(
                "error getting handle for DataSource Type VolumeSnapshot by Name s1: snapshot s1 is being deleted"
            )),
            "{calls:?}"
        );
    }

    #[test]
    fn deleting_the_last_unready_snapshot_lets_its_claim_go() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create u --size 1Gi --class local-wffc");
        run(&mut lab, "snapshot create s1 --pvc u");
        assert_eq!(claim_finalizers(&lab, "u").len(), 2);
        run(&mut lab, "pvc delete u");
        assert!(claim_finalizers(&lab, "u").contains(&PVC_AS_SOURCE.to_string()));
        run(&mut lab, "snapshot delete s1");
        assert!(vs(&lab, "s1").is_none());
        assert!(lab.cluster.pvcs.is_empty());
    }
}
