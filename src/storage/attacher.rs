//! external-attacher: for each VolumeAttachment of the lab's driver, call
//! ControllerPublishVolume and set `status.attached` (with the publish_context as
//! `attachmentMetadata`); for one being deleted, call ControllerUnpublishVolume and drop its
//! finalizer so it goes away.

use super::{ATTACHER_FINALIZER, DRIVER, volume_capability};
use crate::cluster::{Object, VaSpec, VolumeError};
use crate::csi::types::{ControllerPublishVolumeRequest, ControllerUnpublishVolumeRequest};
use crate::engine::Lab;
use crate::record::Level;

impl Lab {
    /// One pass of external-attacher.
    pub fn run_attacher(&mut self) -> bool {
        // Only attachments with something to do: an attached one not being deleted is done.
        let vas: Vec<Object<VaSpec>> = self.storage_work.attacher.select(
            &self.cluster.revs,
            &self.cluster.volume_attachments,
            super::work::only_own,
            |va| {
                va.spec.attacher == DRIVER
                    && (va.metadata.deletion_tick.is_some() || !va.status.attached)
            },
        );
        let mut changed = false;
        for va in vas {
            let key = format!("attacher/{}", va.name());
            if self.backing_off(&key) {
                continue;
            }
            if va.metadata.deletion_tick.is_some() {
                changed |= self.detach(&va, &key);
            } else if !va.status.attached {
                changed |= self.attach(&va, &key);
            }
        }
        changed
    }

    fn attach(&mut self, va: &Object<VaSpec>, key: &str) -> bool {
        let _ = self
            .cluster
            .volume_attachments()
            .add_finalizer("", va.name(), ATTACHER_FINALIZER);
        // external-attacher also holds the PV, so it cannot go while an attachment names it.
        let _ = self.cluster.pvs().add_finalizer(
            "",
            &va.spec.source.persistent_volume_name,
            ATTACHER_FINALIZER,
        );
        let Some(pv) = self
            .cluster
            .pvs
            .get(&(
                crate::cluster::no_namespace(),
                va.spec.source.persistent_volume_name.clone(),
            ))
            .cloned()
        else {
            return false;
        };
        let cap = match volume_capability(
            &pv.spec.access_modes,
            &pv.spec.volume_mode,
            &pv.spec.csi.fs_type,
            self.driver_snmw(),
        ) {
            Ok(c) => c,
            Err(e) => {
                self.write_attach_error(va, e);
                self.set_backoff(key.to_string());
                return true;
            }
        };
        let node_id = self.csi_node_id(&va.spec.node_name);
        let req = ControllerPublishVolumeRequest {
            volume_id: pv.spec.csi.volume_handle.clone(),
            node_id,
            volume_capability: Some(cap),
            readonly: false,
            volume_context: pv.spec.csi.volume_attributes.clone(),
            ..Default::default()
        };
        match self.csi_call(
            "external-attacher",
            None,
            "ControllerPublishVolume",
            req,
            |d, r| d.controller_publish_volume(r),
        ) {
            Ok(_)
                if self.crash_at(
                    None,
                    crate::faults::CrashPoint::AttacherAfterPublish,
                ) =>
            {
                let what = format!(
                    "after ControllerPublishVolume returned, before status.attached of {} was written",
                    crate::storage::attach_detach::short_va(va.name())
                );
                self.sidecar_crashed("external-attacher", key, &what);
            }
            Ok(resp) => {
                self.clear_backoff(key);
                if let Ok(cur) = self
                    .cluster
                    .volume_attachments()
                    .get("", va.name())
                    .cloned()
                {
                    let mut next = cur.clone();
                    next.status.attached = true;
                    next.status.attachment_metadata = resp.publish_context.clone();
                    next.status.attach_error = None;
                    let _ = self.cluster.volume_attachments().update_status(&next);
                }
                self.volume_attached_events(va);
            }
            Err(status) => {
                self.write_attach_error(va, status.go_error_string());
                let pods = self
                    .pods_on_node_using(&va.spec.node_name, &va.spec.source.persistent_volume_name);
                for p in pods {
                    self.event(
                        "attachdetach-controller",
                        "FailedAttachVolume",
                        format!(
                            "AttachVolume.Attach failed for volume \"{}\" : {}",
                            va.spec.source.persistent_volume_name,
                            status.go_error_string()
                        ),
                        format!("Pod/{p}"),
                        Level::Warning,
                    );
                }
                self.set_backoff(key.to_string());
            }
        }
        true
    }

    fn volume_attached_events(&mut self, va: &Object<VaSpec>) {
        let pods =
            self.pods_on_node_using(&va.spec.node_name, &va.spec.source.persistent_volume_name);
        for p in pods {
            self.event(
                "attachdetach-controller",
                "SuccessfulAttachVolume",
                format!(
                    "AttachVolume.Attach succeeded for volume \"{}\"",
                    va.spec.source.persistent_volume_name
                ),
                format!("Pod/{p}"),
                Level::Normal,
            );
        }
    }

    fn write_attach_error(&mut self, va: &Object<VaSpec>, message: String) {
        if let Ok(cur) = self
            .cluster
            .volume_attachments()
            .get("", va.name())
            .cloned()
        {
            let mut next = cur.clone();
            next.status.attach_error = Some(VolumeError {
                message,
                time: crate::cluster::meta::timestamp(self.clock),
            });
            let _ = self.cluster.volume_attachments().update_status(&next);
        }
    }

    fn detach(&mut self, va: &Object<VaSpec>, key: &str) -> bool {
        let handle = self
            .cluster
            .pvs
            .get(&(
                crate::cluster::no_namespace(),
                va.spec.source.persistent_volume_name.clone(),
            ))
            .map(|pv| pv.spec.csi.volume_handle.clone());
        if va.status.attached {
            let Some(handle) = handle else {
                // The PV is gone: nothing the driver can be asked about.
                let _ = self.cluster.volume_attachments().remove_finalizer(
                    "",
                    va.name(),
                    ATTACHER_FINALIZER,
                );
                return true;
            };
            let req = ControllerUnpublishVolumeRequest {
                volume_id: handle,
                node_id: self.csi_node_id(&va.spec.node_name),
                ..Default::default()
            };
            if let Err(status) = self.csi_call(
                "external-attacher",
                None,
                "ControllerUnpublishVolume",
                req,
                |d, r| d.controller_unpublish_volume(r),
            ) {
                if let Ok(cur) = self
                    .cluster
                    .volume_attachments()
                    .get("", va.name())
                    .cloned()
                {
                    let mut next = cur.clone();
                    next.status.detach_error = Some(VolumeError {
                        message: status.go_error_string(),
                        time: crate::cluster::meta::timestamp(self.clock),
                    });
                    let _ = self.cluster.volume_attachments().update_status(&next);
                }
                self.set_backoff(key.to_string());
                return true;
            }
        }
        self.clear_backoff(key);
        let pv = va.spec.source.persistent_volume_name.clone();
        if let Ok(true) =
            self.cluster
                .volume_attachments()
                .remove_finalizer("", va.name(), ATTACHER_FINALIZER)
        {
            let still_named = self
                .cluster
                .volume_attachments
                .values()
                .any(|o| o.spec.source.persistent_volume_name == pv);
            if !still_named {
                let _ = self
                    .cluster
                    .pvs()
                    .remove_finalizer("", &pv, ATTACHER_FINALIZER);
            }
            self.log(
                "external-attacher",
                "detached",
                format!(
                    "{} detached from {}; volumeattachment removed",
                    va.spec.source.persistent_volume_name, va.spec.node_name
                ),
            );
        }
        true
    }

    /// The node ID the driver reported for a node (CSINode), or the node name.
    pub fn csi_node_id(&self, node: &str) -> String {
        self.cluster
            .csi_nodes
            .get(&(crate::cluster::no_namespace(), node.to_string()))
            .and_then(|c| c.spec.drivers.iter().find(|d| d.name == DRIVER))
            .map(|d| d.node_id.clone())
            .unwrap_or_else(|| node.to_string())
    }

    /// Keys of pods on a node that use a PV (only pods with claims can: the
    /// `pods_with_volumes` index, in the same order as the pod table).
    pub fn pods_on_node_using(&self, node: &str, pv: &str) -> Vec<String> {
        self.pods_with_volumes
            .iter()
            .filter_map(|k| self.cluster.pods.get(k))
            .filter(|p| p.spec.node_name == node)
            .filter(|p| {
                p.spec.volumes.iter().any(|v| {
                    self.pv_for_claim(&p.metadata.namespace, &v.persistent_volume_claim.claim_name)
                        .is_some_and(|x| x.name() == pv)
                })
            })
            .map(|p| p.key())
            .collect()
    }
}
