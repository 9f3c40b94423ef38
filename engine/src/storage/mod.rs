//! The Kubernetes side of CSI: the controllers that turn claims into volumes and volumes
//! into mounts. Each is a type with its own state (its work sets and rate limiter) that
//! implements [`Component`]: one pass over the store through its context, returning whether
//! it changed anything; the engine runs them until nothing changes.
//!
//! - `provisioner`: external-provisioner (CreateVolume / DeleteVolume, PV objects);
//! - `binder`: kube-controller-manager's PV controller (the provisioner annotations,
//!   binding, Released) and the pvc-protection and pv-protection controllers;
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
pub mod listers;
pub mod provisioner;
pub mod registration;
pub mod resizer;
pub mod snapshotter;
pub mod topology;
pub mod work;

use crate::control::{Component, Ctx};
use crate::csi::types::{AccessModeType, VolumeCapability};
use crate::csi::{K8sAccessMode, to_csi_access_mode};
use crate::util::time::Millis;

/// The driver every StorageClass of the lab names.
pub(crate) const DRIVER: &str = crate::csi::DRIVER_NAME;
pub(crate) use crate::cluster::{PV_PROTECTION, PVC_PROTECTION};
/// The finalizer external-attacher puts on the VolumeAttachments it handles.
pub(crate) const ATTACHER_FINALIZER: &str = "external-attacher/hostpath-csi-lab";
/// Annotation the scheduler sets on a WaitForFirstConsumer claim.
pub(crate) const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Annotation telling which provisioner handles a claim (the PV controller sets it when
/// provisioning starts; external-provisioner only takes claims that name it).
pub(crate) const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// The deprecated name of [`STORAGE_PROVISIONER`], which the PV controller still writes
/// beside it (`setClaimProvisioner`, "remove the beta storage provisioner anno after the
/// deprecation period").
pub(crate) const BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";
/// The finalizer external-provisioner puts on the PVs it provisions; removed after
/// DeleteVolume (sig-storage-lib-external-provisioner `finalizerPV`).
pub(crate) const PROVISIONER_FINALIZER: &str =
    "external-provisioner.volume.kubernetes.io/finalizer";
/// The source external-provisioner's events are recorded with: sig-storage-lib-external-
/// provisioner's `NewProvisionController` names its recorder `DRIVER_HOSTNAME_UUID` (the
/// hostname is the controller pod's, `csi-hostpathplugin-0` for the lab's driver, and the
/// UUID one made at start, here a fixed one).
pub(crate) const PROVISIONER_EVENT_SOURCE: &str =
    "hostpath.csi.lab_csi-hostpathplugin-0_5d6b1c0e-3a2f-11ef-9c4b-0242ac120003";
/// The source external-resizer's events are recorded with (`NewResizeController`:
/// `external-resizer DRIVER`).
pub(crate) const RESIZER_EVENT_SOURCE: &str = "external-resizer hostpath.csi.lab";
/// The source csi-snapshotter's events are recorded with (its sidecar controller:
/// `csi-snapshotter DRIVER`).
pub(crate) const SNAPSHOTTER_EVENT_SOURCE: &str = "csi-snapshotter hostpath.csi.lab";
/// The default StorageClass annotation.
pub(crate) const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// The snapshot class the lab installs.
pub(crate) const SNAPSHOT_CLASS: &str = "csi-hostpath-snapclass";
pub use crate::control::backoff::{RETRY_BACKOFF, RETRY_BACKOFF_MAX, backoff_actor, retry_delay};

/// The CSI volume capability for a PV's access modes and volume mode, as kubelet and the
/// sidecars build it (csi-lib-utils access mode mapping).
pub(crate) fn volume_capability(
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
pub(crate) fn multi_attach_allowed(access_modes: &[String]) -> bool {
    access_modes
        .iter()
        .any(|m| m == "ReadOnlyMany" || m == "ReadWriteMany")
}

/// The storage controllers and sidecars of a cluster, each with its own state, in the
/// order the engine runs them on every pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct StorageControllers {
    /// external-provisioner.
    pub provisioner: provisioner::Provisioner,
    /// kube-controller-manager's PV controller.
    pub binder: binder::PvController,
    /// snapshot-controller and csi-snapshotter.
    pub snapshotter: snapshotter::Snapshotter,
    /// external-resizer.
    pub resizer: resizer::Resizer,
    /// kube-controller-manager's attach/detach controller.
    pub attach_detach: attach_detach::AttachDetach,
    /// external-attacher.
    pub attacher: attacher::Attacher,
    /// kube-controller-manager's pvc-protection controller.
    pub protection: binder::PvcProtection,
    /// kube-controller-manager's pv-protection controller.
    pub pv_protection: binder::PvProtection,
    /// Where the last full pass started in the watch log (see [`work::StorageWatch`]).
    pub watch: work::StorageWatch,
}

impl StorageControllers {
    /// The storage controllers' earliest timer after `now`: a sidecar's retry (its rate
    /// limiter), or an attach that times out.
    pub fn next_timer(&self, api: &crate::cluster::Cluster, now: Millis) -> Option<Millis> {
        [
            self.provisioner.backoff.next_retry(now),
            self.snapshotter.backoff.next_retry(now),
            self.resizer.backoff.next_retry(now),
            self.attach_detach.next_timer(api, now),
            self.attacher.backoff.next_retry(now),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Run every storage controller once; true when any of them changed something. When
    /// nothing written since the last full pass is storage's business and no controller
    /// kept work from it, each one only moves on in the watch log (see
    /// [`work::StorageWatch`]): the pass would have selected nothing and changed nothing.
    pub(crate) fn reconcile_all(&mut self, ctx: &mut Ctx<'_>) -> bool {
        if let Some(from) = self.watch.quiet_since(&ctx.api.revs)
            && self.quiet_since(ctx, from)
        {
            let next = ctx.api.revs.next_event;
            self.skip_to(from, next);
            return false;
        }
        self.watch.pass_starts(&ctx.api.revs);
        let mut changed = false;
        changed |= self.provisioner.reconcile(ctx);
        changed |= self.binder.reconcile(ctx);
        changed |= self.snapshotter.reconcile(ctx);
        changed |= self.resizer.reconcile(ctx);
        changed |= self.attach_detach.reconcile(ctx);
        changed |= self.attacher.reconcile(ctx);
        changed |= self.protection.reconcile(ctx);
        changed |= self.pv_protection.reconcile(ctx);
        changed
    }

    /// Whether no controller kept work from its last pass, and each has read the watch log
    /// at least up to `from`.
    fn quiet_since(&self, ctx: &Ctx<'_>, from: u64) -> bool {
        let api = &*ctx.api;
        self.provisioner.provision.quiet_since(from)
            && self.provisioner.released.quiet_since(from)
            && self.provisioner.finalizers.quiet_since(from)
            && self.binder.work.quiet_since(from)
            && self.binder.claims.quiet_since(from)
            // snapshot-controller and csi-snapshotter walk their objects on every pass.
            && api.snapshots.is_empty()
            && api.snapshot_contents.is_empty()
            && self.resizer.work.quiet_since(from)
            && self.attach_detach.quiet_since(from)
            && self.attacher.work.quiet_since(from)
            && self.protection.work.quiet_since(from)
            && self.pv_protection.work.quiet_since(from)
    }

    /// Every controller has read the watch log up to `next`: the events from `from` on are
    /// none of storage's business.
    fn skip_to(&mut self, from: u64, next: u64) {
        self.provisioner.provision.skip_to(next);
        self.provisioner.released.skip_to(next);
        self.provisioner.finalizers.skip_to(next);
        self.binder.work.skip_to(next);
        self.binder.claims.skip_to(next);
        self.binder.free.skip_to(from, next);
        self.resizer.work.skip_to(next);
        self.attach_detach.wants.skip_to(next);
        self.attacher.work.skip_to(next);
        self.attacher.vas_by_pv.skip_to(from, next);
        self.protection.work.skip_to(next);
        self.pv_protection.work.skip_to(next);
    }

    /// Every controller's retry times by `controller/object`, for the save file's state.
    pub(crate) fn retry_times(
        &self,
    ) -> std::collections::BTreeMap<String, crate::util::time::Millis> {
        let limiters = [
            &self.provisioner.backoff,
            &self.snapshotter.backoff,
            &self.resizer.backoff,
            &self.attacher.backoff,
        ];
        limiters
            .iter()
            .flat_map(|b| b.retry_times())
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }
}

#[cfg(test)]
mod source_tests {
    /// The sidecars' event sources name the lab's driver as the real ones name theirs.
    #[test]
    fn the_sidecars_event_sources_name_the_driver() {
        let d = super::DRIVER;
        assert!(super::PROVISIONER_EVENT_SOURCE.starts_with(&format!("{d}_csi-hostpathplugin-0_")));
        assert_eq!(super::RESIZER_EVENT_SOURCE, format!("external-resizer {d}"));
        assert_eq!(
            super::SNAPSHOTTER_EVENT_SOURCE,
            format!("csi-snapshotter {d}")
        );
    }
}
