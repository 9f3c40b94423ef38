//! kubelet's volume manager for CSI volumes: wait for the attach (VolumeAttachment
//! `status.attached`), NodeStageVolume once per node at the global mount
//! (`/var/lib/kubelet/plugins/kubernetes.io/csi/<driver>/<sha256(volume handle)>/globalmount`),
//! NodePublishVolume once per pod at
//! (`/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount`), NodeExpandVolume
//! when a resize waits for the node (right after NodeStageVolume at the staging path when the
//! volume is being mounted, at a pod's target path when it is already in use); and the reverse on teardown: NodeUnpublish, then
//! NodeUnstage when no other pod on the node uses the volume.
//!
//! Each of those runs as one of the operation executor's operations (`super::operations`):
//! MountVolume (stage, publish, expand) per volume, UnmountVolume (NodeUnpublish) per volume
//! and pod, UnmountDevice (NodeUnstage) per volume. A failed one is retried after its own
//! backoff (500 ms doubling to 2 min 2 s), not the pod worker's: kubelet logs
//! `Operation for "{volumeName:… podName:… nodeName:}" failed. No retries permitted until …
//! (durationBeforeRetry 500ms). Error: …`, and a failed mount is also a FailedMount event
//! (an unmount is not: `GenerateUnmountVolumeFunc` has no event recorder).

use super::Kubelet;
use super::operations::{OperationKey, UNMOUNT_DEVICE, VOLUME_MOUNT, VOLUME_UNMOUNT};
use crate::cluster::{Object, PodSpec, PvSpec, Uid};
use crate::control::Ctx;
use crate::csi::types::{
    CapacityRange, NodeExpandVolumeRequest, NodePublishVolumeRequest, NodeStageVolumeRequest,
    NodeUnpublishVolumeRequest, NodeUnstageVolumeRequest,
};
use crate::record::Actor;
use crate::storage::resizer::{FS_RESIZE_PENDING, merge_resize_conditions};
use crate::storage::{DRIVER, volume_capability};
use crate::util::quantity::parse_bytes;
use sha2::{Digest, Sha256};

pub use crate::cluster::reports::Mounts;

/// The global mount path of a volume on a node.
pub(crate) fn staging_path(volume_handle: &str) -> String {
    let digest = Sha256::digest(volume_handle.as_bytes());
    let hex = crate::util::hash::to_hex(&digest);
    format!("/var/lib/kubelet/plugins/kubernetes.io/csi/{DRIVER}/{hex}/globalmount")
}

/// Block volumes: kubelet's staging path (`csi_block.go` getStagingPath).
pub(crate) fn block_staging_path(pv: &str) -> String {
    format!("/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/staging/{pv}")
}

/// Block volumes: kubelet's publish path (`csi_block.go` getPublishPath), a file per pod.
pub(crate) fn block_target_path(pod_uid: Uid, pv: &str) -> String {
    format!("/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish/{pv}/{pod_uid}")
}

/// The per-pod mount path of a volume.
pub(crate) fn target_path(pod_uid: Uid, pv: &str) -> String {
    format!("/var/lib/kubelet/pods/{pod_uid}/volumes/kubernetes.io~csi/{pv}/mount")
}

/// Why a pod's volumes are not ready yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MountWait {
    /// Waiting for another controller; retried on every pass at no cost.
    Waiting(&'static str, String),
    /// Waiting for the attach/detach controller to attach volumes (their names). kubelet
    /// v1.32, the one the lab models, records no event for it: `WaitForAttachAndMount`
    /// gives up after 2m3s with an error `SyncPod` does not report (`wait.Interrupted`:
    /// only errors other than the timeout become a FailedMount "Unable to attach or mount
    /// volumes" event), and the pod worker tries again. What a learner sees comes from the
    /// attach/detach controller (FailedAttachVolume) and from `get volumeattachments`.
    Unattached(Vec<String>),
    /// A volume operation failed now (its event text); its FailedMount event and kubelet's
    /// log line are written, and the operation waits for its backoff.
    Failed(String),
    /// An operation the pod needs is still in its backoff (true when others made progress
    /// in this pass).
    BackingOff(bool),
    /// kubelet died mid-operation (`fault inject kubelet-after-stage`); it resumes after
    /// its restart.
    Crashed,
}

/// Why a pod's volumes are not torn down yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TeardownWait {
    /// An operation failed now (kubelet logged it); it waits for its backoff.
    Failed,
    /// Every operation left is in its backoff: nothing ran.
    BackingOff,
}

/// The pod's name for the volume bound to `pv` (`OuterVolumeSpecName`: the pod spec's
/// volume name), or the PV's name when no claim of the pod leads to it any more.
fn outer_volume_name(ctx: &Ctx<'_>, pod: &Object<PodSpec>, pv: &str) -> String {
    let ns = pod.metadata.namespace();
    pod.spec
        .volumes()
        .iter()
        .find(|v| {
            crate::storage::listers::pv_for_claim(
                ctx.api,
                ns,
                &v.persistent_volume_claim.claim_name,
            )
            .is_some_and(|p| p.name() == pv)
        })
        .map(|v| v.name.clone())
        .unwrap_or_else(|| pv.to_string())
}

/// A failed step of a volume operation: the operation generator's prefix
/// (`MountVolume.MountDevice failed`) and the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpFailure {
    /// `MountVolume.SetUp failed`, `UnmountDevice failed`, ….
    pub prefix: &'static str,
    /// The error after ` : `.
    pub cause: String,
}

impl OpFailure {
    fn new(prefix: &'static str, cause: impl Into<String>) -> Self {
        OpFailure {
            prefix,
            cause: cause.into(),
        }
    }

    /// `generateVolumeMsg`'s simple message (events): `<prefix> for volume "<name>" : <cause>`.
    pub(crate) fn simple(&self, volume: &str) -> String {
        format!("{} for volume \"{volume}\" : {}", self.prefix, self.cause)
    }

    /// `generateVolumeMsgDetailed` (logs): `<prefix> for volume "<name>" <details> : <cause>`.
    pub(crate) fn detailed(&self, volume: &str, details: &str) -> String {
        format!(
            "{} for volume \"{volume}\" {details} : {}",
            self.prefix, self.cause
        )
    }
}

/// How a step of MountVolume ended short of success.
enum MountStop {
    Failed(OpFailure),
    Crashed,
}

impl From<OpFailure> for MountStop {
    fn from(f: OpFailure) -> Self {
        MountStop::Failed(f)
    }
}

/// The checks `GenerateMountVolumeFunc` makes before it mounts a volume for a pod
/// (`pkg/volume/util/operationexecutor/operation_generator.go`), in its order; they fail the
/// MountVolume operation, so the FailedMount event and the backoff follow. The scheduler makes the same checks for the pods it
/// places, so only a pod whose `spec.nodeName` came with it (`pod create --node`) fails here.
///
/// - `checkNodeAffinity` (`pkg/volume/util/util.go` CheckNodeAffinity): the PV's required
///   node affinity must match the node's labels, else `MountVolume.NodeAffinity check failed
///   for volume "<pv>" : no matching NodeSelectorTerms`.
/// - ReadWriteOncePod, when it is the PV's only access mode: a volume already mounted for
///   another pod *on this node* (`IsVolumeMountedElsewhere`, kubelet's own actual state of
///   the world) fails with `MountVolume.SetUp failed for volume "<pv>" : volume uses the
///   ReadWriteOncePod access mode and is already in use by another pod`. kubelet cannot see
///   another node; there the attach/detach controller's Multi-Attach error stops the pod.
pub(crate) fn mount_checks(
    ctx: &Ctx<'_>,
    pod: &Object<PodSpec>,
    pv: &Object<PvSpec>,
    node: &str,
) -> Result<(), OpFailure> {
    if let Some(affinity) = &pv.spec.node_affinity {
        let labels = ctx
            .api
            .nodes
            .get(&(crate::cluster::no_namespace(), node.to_string()))
            .map(|n| n.metadata.labels.clone())
            .unwrap_or_default();
        if !affinity.admits(&labels) {
            return Err(OpFailure::new(
                "MountVolume.NodeAffinity check failed",
                "no matching NodeSelectorTerms",
            ));
        }
    }
    let only_rwop = pv.spec.access_modes.len() == 1
        && pv.spec.access_modes.iter().any(|m| m == "ReadWriteOncePod");
    let me = pod.key();
    let elsewhere = ctx
        .api
        .mounts
        .published_keys(node)
        .any(|(_, p, v)| v == pv.name() && *p != me);
    if only_rwop && elsewhere {
        return Err(OpFailure::new(
            "MountVolume.SetUp failed",
            "volume uses the ReadWriteOncePod access mode and is already in use by another pod",
        ));
    }
    Ok(())
}

/// `createVolumeSpec`'s check of how the pod's containers use a volume against the PV's
/// `volumeMode`: a block volume mounted as a filesystem, or a filesystem volume given as a
/// device, is an error the volume manager records for the pod.
fn mode_mismatch(pod: &Object<PodSpec>, volume: &str, mode: &str) -> Option<String> {
    let containers = pod.spec.containers.iter();
    let mounted = containers
        .clone()
        .any(|c| c.volume_mounts().iter().any(|m| m.name == volume));
    let device = containers
        .clone()
        .any(|c| c.volume_devices().iter().any(|d| d.name == volume));
    let mode = if mode.is_empty() { "Filesystem" } else { mode };
    if mounted && mode != "Filesystem" {
        Some(format!(
            "volume {volume} has volumeMode {mode}, but is specified in volumeMounts"
        ))
    } else if device && mode != "Block" {
        Some(format!(
            "volume {volume} has volumeMode {mode}, but is specified in volumeDevices"
        ))
    } else {
        None
    }
}

/// The FailedMount message of a pod the desired state of world populator could not take
/// whole (`processPodVolumes`: a claim that does not exist or is not bound is left out, with
/// an error for the pod), or `None` when every volume was processed. `WaitForAttachAndMount`
/// (`pkg/kubelet/volumemanager/volume_manager.go`) stops at the first poll that pops the
/// pod's errors and wraps them (sorted, joined by `; `) as
/// `unmounted volumes=%v, unattached volumes=%v, failed to process volumes=%v: %w`; kubelet
/// records that as `Unable to attach or mount volumes: %v`. Unmounted: the pod's volumes not
/// mounted for it; unattached: the processed ones whose attach the node does not report yet;
/// failed to process: the ones left out. (A real pod also has its projected
/// `kube-api-access-…` volume, which the lab does not model.)
fn unprocessed_volumes(ctx: &Ctx<'_>, pod: &Object<PodSpec>) -> Option<String> {
    let ns = pod.metadata.namespace();
    let mut errors = Vec::new();
    let volumes: Vec<_> = pod
        .spec
        .used_volumes()
        .map(|v| {
            let claim = &v.persistent_volume_claim.claim_name;
            if ctx.api.pvcs.get_named(ns, claim).is_none() {
                errors.push(format!(
                    "error processing PVC {ns}/{claim}: failed to fetch PVC from API server: persistentvolumeclaims \"{claim}\" not found"
                ));
                return (v, None);
            }
            let pv = crate::storage::listers::pv_for_claim(ctx.api, ns, claim);
            let Some(pv) = pv else {
                errors.push(format!("error processing PVC {ns}/{claim}: PVC is not bound"));
                return (v, None);
            };
            // A volume whose spec fails is left out of the desired state too.
            match mode_mismatch(pod, &v.name, &pv.spec.volume_mode) {
                Some(e) => {
                    errors.push(e);
                    (v, None)
                }
                None => (v, Some(pv)),
            }
        })
        .collect();
    if errors.is_empty() {
        return None;
    }
    let node = &pod.spec.node_name;
    let me = pod.key();
    let (mut not_in_dsw, mut unattached, mut unmounted) = (Vec::new(), Vec::new(), Vec::new());
    for (v, pv) in volumes {
        let Some(pv) = pv else {
            not_in_dsw.push(v.name.clone());
            unmounted.push(v.name.clone());
            continue;
        };
        let mounted = ctx
            .api
            .mounts
            .published_keys(node)
            .any(|(_, p, name)| *p == me && name == pv.name());
        if !mounted {
            unmounted.push(v.name.clone());
        }
        if crate::storage::listers::attach_required(ctx.api, &pv.spec.csi.driver) {
            let va = crate::storage::attach_detach::attachment_name(
                &pv.spec.csi.volume_handle,
                &pv.spec.csi.driver,
                node,
            );
            let attached = ctx
                .api
                .volume_attachments
                .get_named("", &va)
                .is_some_and(|va| va.status.attached);
            if !attached {
                unattached.push(v.name.clone());
            }
        }
    }
    // `PopPodErrors` lists its set sorted; the volume lists are sorted too.
    errors.sort();
    errors.dedup();
    for list in [&mut unmounted, &mut unattached, &mut not_in_dsw] {
        list.sort();
    }
    Some(format!(
        "Unable to attach or mount volumes: unmounted volumes=[{}], unattached volumes=[{}], failed to process volumes=[{}]: {}",
        unmounted.join(" "),
        unattached.join(" "),
        not_in_dsw.join(" "),
        errors.join("; ")
    ))
}

impl Kubelet {
    /// Attach-wait, stage, publish (and node-expand) every volume of a pod.
    pub(crate) fn mount_pod_volumes(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
    ) -> Result<bool, MountWait> {
        let node = pod.spec.node_name.clone();
        let actor = Actor::kubelet(&node);
        let mut changed = false;
        let mut unattached = Vec::new();
        let mut failed: Option<String> = None;
        let mut backing_off = false;
        if let Some(msg) = unprocessed_volumes(ctx, pod) {
            return Err(MountWait::Waiting("FailedMount", msg));
        }
        for v in pod.spec.used_volumes() {
            let claim = &v.persistent_volume_claim.claim_name;
            let ns = pod.metadata.namespace();
            let Some(pv) = crate::storage::listers::pv_for_claim(ctx.api, ns, claim).cloned()
            else {
                continue;
            };
            // The reconciler mounts only what the node reports attached
            // (`VerifyControllerAttachedVolume` first); the checks of `MountVolume` follow.
            let attachment = crate::storage::listers::attach_required(ctx.api, &pv.spec.csi.driver)
                .then(|| {
                    crate::storage::attach_detach::attachment_name(
                        &pv.spec.csi.volume_handle,
                        &pv.spec.csi.driver,
                        &node,
                    )
                });
            if let Some(va) = &attachment {
                let attached = ctx
                    .api
                    .volume_attachments
                    .get_named("", va)
                    .is_some_and(|va| va.status.attached);
                if !attached {
                    unattached.push(v.name.clone());
                    continue;
                }
            }
            // Each volume is an operation of its own: one failing or backing off does not
            // keep the reconciler from the others.
            let read_only = v.persistent_volume_claim.read_only;
            match self.mount_volume(ctx, pod, &pv, attachment.as_deref(), read_only, &actor) {
                Ok(c) => changed |= c,
                Err(MountWait::Failed(msg)) => {
                    failed.get_or_insert(msg);
                }
                Err(MountWait::BackingOff(c)) => {
                    changed |= c;
                    backing_off = true;
                }
                Err(other) => return Err(other),
            }
        }
        if let Some(msg) = failed {
            return Err(MountWait::Failed(msg));
        }
        if !unattached.is_empty() {
            return Err(MountWait::Unattached(unattached));
        }
        if backing_off {
            return Err(MountWait::BackingOff(changed));
        }
        Ok(changed)
    }

    /// The MountVolume operation for one volume of a pod, under the operation executor's
    /// key for the volume: skipped while a failed one is in its backoff; a failure is the
    /// FailedMount event (the simple message) and kubelet's `No retries permitted until`
    /// line (the detailed one); a success forgets the key. `attachment` names the
    /// VolumeAttachment the node found attached (`None`: the driver needs no attach).
    fn mount_volume(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
        pv: &Object<PvSpec>,
        attachment: Option<&str>,
        read_only: bool,
        actor: &Actor,
    ) -> Result<bool, MountWait> {
        let node = pod.spec.node_name.clone();
        let unique =
            crate::cluster::reports::unique_volume_name(DRIVER, &pv.spec.csi.volume_handle);
        // An attachable, device-mountable volume mounts under the volume's key alone
        // (operation_executor.go MountVolume: "Avoid executing mount/map from multiple pods
        // referencing the same volume in parallel").
        let key = OperationKey::volume(&unique);
        if self
            .volume_ops
            .retry_wait(&key, VOLUME_MOUNT, ctx.clock)
            .is_some()
        {
            return Err(MountWait::BackingOff(false));
        }
        let result = if ctx.api.mounts.pod_uses(&node, &pod.key(), pv.name()) {
            Ok(())
        } else {
            mount_checks(ctx, pod, pv, &node).map_err(MountStop::from)
        }
        .and_then(|()| self.mount_one(ctx, pod, pv, attachment, read_only, actor));
        match result {
            Ok(changed) => {
                self.volume_ops.succeeded(&key);
                Ok(changed)
            }
            Err(MountStop::Crashed) => Err(MountWait::Crashed),
            Err(MountStop::Failed(f)) => {
                let simple = f.simple(pv.name());
                let detailed = f.detailed(
                    pv.name(),
                    &format!(
                        "(UniqueName: \"{unique}\") pod \"{}\" (UID: \"{}\")",
                        pod.name(),
                        pod.metadata.uid
                    ),
                );
                ctx.pod_event(
                    actor,
                    "FailedMount",
                    simple.clone(),
                    pod,
                    crate::record::Level::Warning,
                );
                let line = self
                    .volume_ops
                    .failed(&key, VOLUME_MOUNT, detailed, ctx.clock);
                ctx.log_warning(actor, "backoff", line);
                Err(MountWait::Failed(simple))
            }
        }
    }

    fn mount_one(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
        pv: &Object<PvSpec>,
        attachment: Option<&str>,
        read_only: bool,
        actor: &Actor,
    ) -> Result<bool, MountStop> {
        let node = pod.spec.node_name.clone();
        let pv_name = pv.name().to_string();
        let handle = pv.spec.csi.volume_handle.clone();
        let mut changed = false;
        let cap = volume_capability(
            &pv.spec.access_modes,
            &pv.spec.volume_mode,
            &pv.spec.csi.fs_type,
            ctx.caps.single_node_multi_writer,
        )
        .map_err(|e| OpFailure::new("MountVolume.MountDevice failed", e))?;
        let publish_context = attachment
            .and_then(|va| ctx.api.volume_attachments.get_named("", va))
            .map(|va| va.status.attachment_metadata.clone())
            .unwrap_or_default();
        let block = pv.spec.volume_mode == "Block";
        let stage_path = match (ctx.caps.node_stage_unstage, block) {
            (false, _) => String::new(),
            (true, false) => staging_path(&handle),
            (true, true) => block_staging_path(&pv_name),
        };
        if ctx.caps.node_stage_unstage
            && !ctx
                .api
                .mounts
                .staged
                .contains_key(&(node.clone(), pv_name.clone()))
        {
            let req = NodeStageVolumeRequest {
                volume_id: handle.clone(),
                publish_context: publish_context.clone(),
                staging_target_path: stage_path.clone(),
                volume_capability: Some(cap.clone()),
                volume_context: pv.spec.csi.volume_attributes.clone(),
                ..Default::default()
            };
            let n = node.clone();
            ctx.csi_call(actor, Some(&node), "NodeStageVolume", req, |d, r| {
                d.node_stage_volume(&n, r)
            })
            .map_err(|s| OpFailure::new("MountVolume.MountDevice failed", s.go_error_string()))?;
            if ctx
                .faults
                .take_crash(Some(&node), crate::faults::CrashPoint::KubeletAfterStage)
                .is_some()
            {
                let what = format!(
                    "after NodeStageVolume of {pv_name} returned, before NodePublishVolume"
                );
                self.kubelet_crashed(ctx, &node, pod, &what);
                return Err(MountStop::Crashed);
            }
            ctx.api
                .mounts
                .staged
                .insert((node.clone(), pv_name.clone()), stage_path.clone());
            changed = true;
            // operation_generator.go's mountVolumeFunc: "Call resizeFileSystem after volume
            // is globally mounted": a resize pending since the claim was expanded unmounted
            // is done right after NodeStageVolume, at the staging path, before any
            // NodePublishVolume (the second call after SetUp is then a no-op).
            Self::node_expand_if_pending(
                ctx,
                pod,
                pv,
                &stage_path,
                &stage_path,
                cap.clone(),
                actor,
            )?;
        }
        let key = (node.clone(), pod.key(), pv_name.clone());
        let target = if block {
            block_target_path(pod.metadata.uid, &pv_name)
        } else {
            target_path(pod.metadata.uid, &pv_name)
        };
        if !ctx.api.mounts.published.contains_key(&key) {
            let mut volume_context = pv.spec.csi.volume_attributes.clone();
            let pod_info = ctx
                .api
                .csi_drivers
                .get(&(crate::cluster::no_namespace(), DRIVER.to_string()))
                .is_some_and(|d| d.spec.pod_info_on_mount);
            if pod_info {
                volume_context.insert("csi.storage.k8s.io/pod.name".into(), pod.name().into());
                volume_context.insert(
                    "csi.storage.k8s.io/pod.namespace".into(),
                    pod.metadata.namespace().clone(),
                );
                volume_context.insert(
                    "csi.storage.k8s.io/pod.uid".into(),
                    pod.metadata.uid.to_string(),
                );
                volume_context.insert(
                    "csi.storage.k8s.io/serviceAccount.name".into(),
                    "default".into(),
                );
                volume_context.insert("csi.storage.k8s.io/ephemeral".into(), "false".into());
            }
            let req = NodePublishVolumeRequest {
                volume_id: handle.clone(),
                publish_context,
                staging_target_path: stage_path.clone(),
                target_path: target.clone(),
                volume_capability: Some(cap.clone()),
                readonly: read_only,
                volume_context,
                ..Default::default()
            };
            let n = node.clone();
            ctx.csi_call(actor, Some(&node), "NodePublishVolume", req, |d, r| {
                d.node_publish_volume(&n, r)
            })
            .map_err(|s| OpFailure::new("MountVolume.SetUp failed", s.go_error_string()))?;
            ctx.api.mounts.published.insert(key, target.clone());
            changed = true;
        }
        changed |= Self::node_expand_if_pending(ctx, pod, pv, &target, &stage_path, cap, actor)?;
        Ok(changed)
    }

    fn node_expand_if_pending(
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
        pv: &Object<PvSpec>,
        target: &str,
        stage_path: &str,
        cap: crate::csi::types::VolumeCapability,
        actor: &Actor,
    ) -> Result<bool, OpFailure> {
        let Some(claim) = pv.spec.claim_ref.as_ref() else {
            return Ok(false);
        };
        // The claim, when a file system resize is pending on it (looked at, not copied).
        let pending = ctx
            .api
            .pvcs
            .get_named(&claim.namespace, &claim.name)
            .filter(|pvc| {
                pvc.status
                    .conditions
                    .iter()
                    .any(|c| c.condition_type == FS_RESIZE_PENDING)
            })
            .map(crate::cluster::ObjectRef::to);
        let Some(claim_ref) = pending else {
            return Ok(false);
        };
        let size = pv
            .spec
            .capacity
            .get("storage")
            .and_then(|s| parse_bytes(s).ok())
            .unwrap_or(0);
        let node = pod.spec.node_name.clone();
        let req = NodeExpandVolumeRequest {
            volume_id: pv.spec.csi.volume_handle.clone(),
            volume_path: target.to_string(),
            capacity_range: Some(CapacityRange {
                required_bytes: size,
                limit_bytes: 0,
            }),
            staging_target_path: stage_path.to_string(),
            volume_capability: Some(cap),
            ..Default::default()
        };
        let n = node.clone();
        ctx.csi_call(actor, Some(&node), "NodeExpandVolume", req, |d, r| {
            d.node_expand_volume(&n, r)
        })
        .map_err(|s| OpFailure::new("MountVolume.NodeExpandVolume failed", s.go_error_string()))?;
        // MarkFSResizeFinished (pkg/volume/util/resize_util.go; RecoverVolumeExpansionFailure
        // is off in 1.31): the new capacity, no resize conditions.
        if let Ok(cur) = ctx.api.pvcs().get(&claim.namespace, &claim.name).cloned() {
            let mut next = cur.clone();
            next.status.conditions =
                merge_resize_conditions(&cur.status.conditions, Vec::new(), false);
            if let Some(s) = pv.spec.capacity.get("storage") {
                next.status.capacity.insert("storage".into(), s.clone());
            }
            let _ = ctx.api.pvcs().update_status(&next);
        }
        ctx.event(
            actor,
            "FileSystemResizeSuccessful",
            format!(
                "MountVolume.NodeExpandVolume succeeded for volume \"{}\" {node}",
                pv.name()
            ),
            claim_ref,
            crate::record::Level::Normal,
        );
        Ok(true)
    }

    /// NodeUnpublish every volume of a pod (UnmountVolume, per volume and pod), then
    /// NodeUnstage the ones no other pod on the node still uses (UnmountDevice, per
    /// volume). Each is an operation of its own: one failing does not stop the others, and
    /// it is retried after its backoff. Errors are kubelet's log lines only.
    pub(crate) fn unmount_pod_volumes(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Object<PodSpec>,
    ) -> Result<(), TeardownWait> {
        let node = pod.spec.node_name.clone();
        let actor = Actor::kubelet(&node);
        let pod_key = pod.key();
        let uid = pod.metadata.uid;
        let mut wait: Option<TeardownWait> = None;
        let published: Vec<((String, String, String), String)> = ctx
            .api
            .mounts
            .published
            .range(
                (
                    node.clone(),
                    pod_key.clone(),
                    crate::cluster::no_namespace(),
                )..,
            )
            .take_while(|((n, p, _), _)| *n == node && *p == pod_key)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // The pod's entries are one range of the map (node, then pod): a walk of every
        // node's mounts finds the same.
        debug_assert_eq!(
            published,
            ctx.api
                .mounts
                .published
                .iter()
                .filter(|((n, p, _), _)| *n == node && *p == pod_key)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>(),
            "a pod's published volumes are not one range"
        );
        let pod_pvs = self.pod_pv_names(ctx, pod);
        for (key, target) in published {
            let pv_name = key.2.clone();
            let handle = self.handle_of(ctx, &pv_name);
            let unique = crate::cluster::reports::unique_volume_name(DRIVER, &handle);
            let op = OperationKey::pod(&unique, &uid.text());
            if self
                .volume_ops
                .retry_wait(&op, VOLUME_UNMOUNT, ctx.clock)
                .is_some()
            {
                wait.get_or_insert(TeardownWait::BackingOff);
                continue;
            }
            let req = NodeUnpublishVolumeRequest {
                volume_id: handle.clone(),
                target_path: target,
            };
            let n = node.clone();
            match ctx.csi_call(&actor, Some(&node), "NodeUnpublishVolume", req, |d, r| {
                d.node_unpublish_volume(&n, r)
            }) {
                Ok(_) => {
                    self.volume_ops.succeeded(&op);
                    ctx.api.mounts.published.remove(&key);
                }
                Err(s) => {
                    // csi_mounter.go TearDownAt wraps the RPC error; the MountedVolume is
                    // named by the pod's volume (OuterVolumeSpecName) and the pod by its UID.
                    let f = OpFailure::new(
                        "UnmountVolume.TearDown failed",
                        format!(
                            "kubernetes.io/csi: Unmounter.TearDownAt failed: {}",
                            s.go_error_string()
                        ),
                    );
                    let detailed = f.detailed(
                        &outer_volume_name(ctx, pod, &pv_name),
                        &format!("(UniqueName: \"{unique}\") pod \"{uid}\" (UID: \"{uid}\")"),
                    );
                    let line = self
                        .volume_ops
                        .failed(&op, VOLUME_UNMOUNT, detailed, ctx.clock);
                    ctx.log_warning(&actor, "backoff", line);
                    wait = Some(TeardownWait::Failed);
                }
            }
        }
        // Then unstage what this pod used and no pod on the node still publishes.
        for pv_name in pod_pvs {
            let still_used = ctx.api.mounts.published_on(&node, &pv_name);
            if still_used {
                continue;
            }
            let Some(path) = ctx
                .api
                .mounts
                .staged
                .get(&(node.clone(), pv_name.clone()))
                .cloned()
            else {
                continue;
            };
            let handle = self.handle_of(ctx, &pv_name);
            let unique = crate::cluster::reports::unique_volume_name(DRIVER, &handle);
            let op = OperationKey::volume(&unique);
            if self
                .volume_ops
                .retry_wait(&op, UNMOUNT_DEVICE, ctx.clock)
                .is_some()
            {
                wait.get_or_insert(TeardownWait::BackingOff);
                continue;
            }
            let req = NodeUnstageVolumeRequest {
                volume_id: handle,
                staging_target_path: path,
            };
            let n = node.clone();
            match ctx.csi_call(&actor, Some(&node), "NodeUnstageVolume", req, |d, r| {
                d.node_unstage_volume(&n, r)
            }) {
                Ok(_) => {
                    self.volume_ops.succeeded(&op);
                    ctx.api.mounts.staged.remove(&(node.clone(), pv_name));
                }
                Err(s) => {
                    // csi_attacher.go UnmountDevice wraps the RPC error; an AttachedVolume
                    // is named by its PV and the node.
                    let f = OpFailure::new(
                        "UnmountDevice failed",
                        format!(
                            "kubernetes.io/csi: attacher.UnmountDevice failed: {}",
                            s.go_error_string()
                        ),
                    );
                    let detailed = f.detailed(
                        &pv_name,
                        &format!("(UniqueName: \"{unique}\") on node \"{node}\""),
                    );
                    let line = self
                        .volume_ops
                        .failed(&op, UNMOUNT_DEVICE, detailed, ctx.clock);
                    ctx.log_warning(&actor, "backoff", line);
                    wait = Some(TeardownWait::Failed);
                }
            }
        }
        wait.map_or(Ok(()), Err)
    }

    /// The PVs a pod's claims are bound to (found through the claim, or through the PV's
    /// claimRef once the claim is gone).
    fn pod_pv_names(&self, ctx: &Ctx<'_>, pod: &Object<PodSpec>) -> Vec<String> {
        let ns = pod.metadata.namespace();
        let mut out = Vec::new();
        for v in pod.spec.used_volumes() {
            let claim = &v.persistent_volume_claim.claim_name;
            let pv = crate::storage::listers::pv_for_claim(ctx.api, ns, claim)
                .map(|p| p.name().to_string())
                .or_else(|| {
                    ctx.api
                        .pvs
                        .values()
                        .find(|p| {
                            p.spec
                                .claim_ref
                                .as_ref()
                                .is_some_and(|r| r.namespace == *ns && r.name == *claim)
                        })
                        .map(|p| p.name().to_string())
                });
            if let Some(pv) = pv {
                if !out.contains(&pv) {
                    out.push(pv);
                }
            }
        }
        // Published entries of this pod name their PVs too (a claim may be gone entirely).
        let pod_key = pod.key();
        for (_, p, pv) in ctx.api.mounts.published_keys(&pod.spec.node_name) {
            if *p == pod_key && !out.contains(pv) {
                out.push(pv.clone());
            }
        }
        out
    }

    /// The volume handle of a PV (from the PV, or from the driver if the PV is gone).
    fn handle_of(&self, ctx: &Ctx<'_>, pv: &str) -> String {
        ctx.api
            .pvs
            .get(&(crate::cluster::no_namespace(), pv.to_string()))
            .map(|p| p.spec.csi.volume_handle.clone())
            .unwrap_or_default()
    }
}
