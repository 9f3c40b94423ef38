//! The Kubernetes side of CSI: the controllers that turn claims into volumes and volumes
//! into mounts. Each is a small reconcile function over the store that returns whether it
//! changed anything; the engine runs them until nothing changes.
//!
//! - `provisioner`: external-provisioner (CreateVolume / DeleteVolume, PV objects);
//! - `binder`: kube-controller-manager's PV controller (binding, Released) and the
//!   pvc-protection controller;
//! - `attach_detach`: kube-controller-manager's attach/detach controller (VolumeAttachment
//!   objects, Multi-Attach errors);
//! - `attacher`: external-attacher (ControllerPublish/Unpublish, `status.attached`);
//! - `resizer`: external-resizer (ControllerExpandVolume);
//! - `snapshotter`: snapshot-controller and the csi-snapshotter sidecar;
//! - `registration`: node-driver-registrar and kubelet's plugin registration (CSINode).

pub mod attach_detach;
pub mod attach_wants;
pub mod attacher;
pub mod binder;
pub mod provisioner;
pub mod registration;
pub mod resizer;
pub mod snapshotter;
pub mod view;
pub mod work;

use crate::csi::types::{AccessModeType, VolumeCapability};
use crate::csi::{K8sAccessMode, to_csi_access_mode};
use crate::engine::Lab;
use crate::record::{CallEvent, Level};

/// The driver every StorageClass of the lab names.
pub const DRIVER: &str = crate::csi::DRIVER_NAME;
/// The finalizer kube-controller-manager puts on claims in use.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// The finalizer external-attacher puts on the VolumeAttachments it handles.
pub const ATTACHER_FINALIZER: &str = "external-attacher/hostpath-csi-lab";
/// Annotation the scheduler sets on a WaitForFirstConsumer claim.
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Annotation telling which provisioner handles a claim.
pub const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// The default StorageClass annotation.
pub const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// The snapshot class the lab installs.
pub const SNAPSHOT_CLASS: &str = "csi-hostpath-snapclass";
/// Controller backoff after the first failed call, in logical seconds: the CSI sidecars'
/// `--retry-interval-start` default (1s); it doubles per failure in a row up to
/// [`RETRY_BACKOFF_MAX`] (`--retry-interval-max`, 5m) — client-go's
/// `ItemExponentialFailureRateLimiter` as external-provisioner, external-attacher,
/// external-resizer and csi-snapshotter configure it.
pub const RETRY_BACKOFF: u64 = 1;
/// The longest controller backoff (5 minutes).
pub const RETRY_BACKOFF_MAX: u64 = 300;

/// The delay before retry number `failures` (1 = after the first failure).
pub fn retry_delay(failures: u32) -> u64 {
    let shift = failures.saturating_sub(1).min(16);
    (RETRY_BACKOFF << shift).min(RETRY_BACKOFF_MAX)
}

/// The component and object a backoff key (`controller/object`) names, for the call log.
pub fn backoff_actor(key: &str) -> (&'static str, &str) {
    let (controller, object) = key.split_once('/').unwrap_or((key, ""));
    let actor = match controller {
        "provisioner" | "provisioner-delete" => "external-provisioner",
        "attacher" => "external-attacher",
        "resizer" => "external-resizer",
        "snapshotter" => "csi-snapshotter",
        _ => "controller",
    };
    (actor, object)
}

/// The CSI volume capability for a PV's access modes and volume mode, as kubelet and the
/// sidecars build it (csi-lib-utils access mode mapping).
pub fn volume_capability(
    access_modes: &[String],
    volume_mode: &str,
    fs_type: &str,
    single_node_multi_writer: bool,
) -> Result<VolumeCapability, String> {
    let modes: Vec<K8sAccessMode> = access_modes
        .iter()
        .filter_map(|m| K8sAccessMode::parse(m))
        .collect();
    let mode: AccessModeType = to_csi_access_mode(&modes, single_node_multi_writer)?;
    Ok(if volume_mode == "Block" {
        VolumeCapability::block(mode)
    } else {
        VolumeCapability::mount(mode, fs_type)
    })
}

/// Whether more than one node may use the volume (ROX or RWX), as the attach/detach
/// controller's `IsMultiAttachAllowed` decides.
pub fn multi_attach_allowed(access_modes: &[String]) -> bool {
    access_modes
        .iter()
        .any(|m| m == "ReadOnlyMany" || m == "ReadWriteMany")
}

impl Lab {
    /// Whether the driver advertises SINGLE_NODE_MULTI_WRITER.
    pub fn driver_snmw(&self) -> bool {
        use crate::csi::types::ControllerRpcType;
        self.driver
            .config
            .controller_capabilities
            .contains(&ControllerRpcType::SingleNodeMultiWriter)
    }

    /// Record a Kubernetes event on an object (`Kind/ns/name`), skipping an exact repeat of
    /// the object's previous event (the API server would only bump its count).
    pub fn event(
        &mut self,
        actor: &str,
        reason: &'static str,
        message: String,
        object: String,
        level: Level,
    ) {
        // The API server aggregates a repeated event (same object, reason and message) into
        // one with a count; the lab keeps the first.
        let uid = self.uid_of(&object);
        let repeat = self.calls.iter().rev().take(256).any(|(_, e)| {
            e.object.as_deref() == Some(object.as_str())
                && e.object_uid == uid
                && e.reason == Some(reason)
                && e.detail == message
        });
        if repeat {
            return;
        }
        self.log_event(CallEvent {
            seq: 0,
            tick: self.clock,
            actor: actor.to_string(),
            action: reason.into(),
            detail: message,
            level,
            reason: Some(reason),
            object_uid: self.uid_of(&object),
            object: Some(object),
            wire: None,
        });
    }

    /// The current UID of an object named `Kind/ns/name` (or `Kind/name`).
    pub fn uid_of(&self, object: &str) -> Option<String> {
        let mut parts = object.splitn(3, '/');
        let kind = parts.next()?;
        let a = parts.next()?;
        let (ns, name) = match parts.next() {
            Some(n) => (a.to_string(), n.to_string()),
            None => (crate::cluster::no_namespace(), a.to_string()),
        };
        let key = (ns, name);
        match kind {
            "Pod" => self.cluster.pods.get(&key).map(|o| o.metadata.uid.clone()),
            "PersistentVolumeClaim" => self.cluster.pvcs.get(&key).map(|o| o.metadata.uid.clone()),
            "PersistentVolume" => self.cluster.pvs.get(&key).map(|o| o.metadata.uid.clone()),
            "VolumeSnapshot" => self
                .cluster
                .snapshots
                .get(&key)
                .map(|o| o.metadata.uid.clone()),
            _ => None,
        }
    }

    /// Run every storage controller once; true when any of them changed something.
    pub fn run_storage_controllers(&mut self) -> bool {
        let mut changed = false;
        changed |= self.run_provisioner();
        changed |= self.run_binder();
        changed |= self.run_snapshotter();
        changed |= self.run_resizer();
        changed |= self.run_attach_detach();
        changed |= self.run_attacher();
        changed |= self.run_pvc_protection();
        changed
    }
}
