//! external-attacher: for each VolumeAttachment of the lab's driver, call
//! ControllerPublishVolume and set `status.attached` (with the publish_context as
//! `attachmentMetadata`); for one being deleted, call ControllerUnpublishVolume and drop its
//! finalizer so it goes away.

use super::{ATTACHER_FINALIZER, DRIVER, volume_capability};
use crate::cluster::{Object, VaSpec, VolumeError};
use crate::control::{Component, Ctx};
use crate::csi::types::{ControllerPublishVolumeRequest, ControllerUnpublishVolumeRequest};
use crate::record::Level;

/// external-attacher: ControllerPublish/Unpublish for VolumeAttachments, `status.attached`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attacher {
    /// VolumeAttachments not attached yet, or being deleted.
    pub work: super::work::WorkSet,
    /// Its work queue's rate limiter.
    pub backoff: crate::control::Backoff,
    /// The attachments held by the rate limiter after a failed attach. Their deletion is an
    /// update its VolumeAttachment informer hands to the queue at once (`vaUpdated`:
    /// `shouldEnqueueVAChange` passes any change but the attacher's own error fields), so
    /// the detach does not wait out the attach's backoff.
    attach_failed: std::collections::BTreeSet<String>,
    /// Its VolumeAttachment informer's index by PV.
    pub(super) vas_by_pv: super::work::VasByPv,
}

impl Component for Attacher {
    fn name(&self) -> &'static str {
        "external-attacher"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl Attacher {
    /// One pass of external-attacher.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        // Only attachments with something to do: an attached one not being deleted is done.
        let vas: Vec<Object<VaSpec>> = self.work.select(
            &ctx.api.revs,
            &ctx.api.volume_attachments,
            super::work::only_own,
            |va| {
                va.spec.attacher == DRIVER
                    && (va.metadata.deletion_tick().is_some() || !va.status.attached)
            },
        );
        let mut changed = false;
        for va in vas {
            let key = format!("attacher/{}", va.name());
            if va.metadata.deletion_tick().is_some() && self.attach_failed.remove(&key) {
                self.backoff.requeue(&key);
            }
            if self.backoff.waiting(ctx.clock, &key) {
                continue;
            }
            if va.metadata.deletion_tick().is_some() {
                changed |= self.detach(ctx, &va, &key);
            } else if !va.status.attached {
                changed |= self.attach(ctx, &va, &key);
            }
        }
        changed
    }

    fn attach(&mut self, ctx: &mut Ctx<'_>, va: &Object<VaSpec>, key: &str) -> bool {
        let _ = ctx
            .api
            .volume_attachments()
            .add_finalizer("", va.name(), ATTACHER_FINALIZER);
        // external-attacher also holds the PV, so it cannot go while an attachment names it.
        let _ = ctx.api.pvs().add_finalizer(
            "",
            &va.spec.source.persistent_volume_name,
            ATTACHER_FINALIZER,
        );
        let Some(pv) = ctx
            .api
            .pvs
            .get_named("", &va.spec.source.persistent_volume_name)
        else {
            return false;
        };
        let cap = volume_capability(
            &pv.spec.access_modes,
            &pv.spec.volume_mode,
            &pv.spec.csi.fs_type,
            ctx.caps.single_node_multi_writer,
        );
        let (volume_id, volume_context) = (
            pv.spec.csi.volume_handle.clone(),
            pv.spec.csi.volume_attributes.clone(),
        );
        let cap = match cap {
            Ok(c) => c,
            Err(e) => {
                self.write_attach_error(ctx, va, e);
                self.attach_failed.insert(key.to_string());
                self.backoff.fail(ctx, key.to_string());
                return true;
            }
        };
        let node_id = super::listers::csi_node_id(ctx.api, &va.spec.node_name);
        let req = ControllerPublishVolumeRequest {
            volume_id,
            node_id,
            volume_capability: Some(cap),
            readonly: false,
            volume_context,
            ..Default::default()
        };
        match ctx.csi_call(
            "external-attacher",
            None,
            "ControllerPublishVolume",
            req,
            |d, r| d.controller_publish_volume(r),
        ) {
            Ok(_) if ctx.crash_at(None, crate::faults::CrashPoint::AttacherAfterPublish) => {
                let what = format!(
                    "after ControllerPublishVolume returned, before status.attached of {} was written",
                    crate::storage::attach_detach::short_va(va.name())
                );
                crate::control::sidecar_crashed(
                    ctx,
                    &mut self.backoff,
                    "external-attacher",
                    key,
                    &what,
                );
            }
            Ok(resp) => {
                self.attach_failed.remove(key);
                self.backoff.clear(key);
                if let Ok(mut next) = ctx.api.volume_attachments().get("", va.name()).cloned() {
                    next.status.attached = true;
                    next.status.attachment_metadata = resp.publish_context.clone();
                    next.status.attach_error = None;
                    let _ = ctx.api.volume_attachments().update_status(&next);
                }
                self.volume_attached_events(ctx, va);
            }
            Err(status) => {
                self.write_attach_error(ctx, va, status.go_error_string());
                let pods = super::listers::pods_on_node_using(
                    ctx.api,
                    &va.spec.node_name,
                    &va.spec.source.persistent_volume_name,
                );
                for p in pods {
                    ctx.event(
                        "attachdetach-controller",
                        "FailedAttachVolume",
                        format!(
                            "AttachVolume.Attach failed for volume \"{}\" : {}",
                            va.spec.source.persistent_volume_name,
                            status.go_error_string()
                        ),
                        p,
                        Level::Warning,
                    );
                }
                self.attach_failed.insert(key.to_string());
                self.backoff.fail(ctx, key.to_string());
            }
        }
        true
    }

    fn volume_attached_events(&mut self, ctx: &mut Ctx<'_>, va: &Object<VaSpec>) {
        let pods = super::listers::pods_on_node_using(
            ctx.api,
            &va.spec.node_name,
            &va.spec.source.persistent_volume_name,
        );
        for p in pods {
            ctx.event(
                "attachdetach-controller",
                "SuccessfulAttachVolume",
                format!(
                    "AttachVolume.Attach succeeded for volume \"{}\"",
                    va.spec.source.persistent_volume_name
                ),
                p,
                Level::Normal,
            );
        }
    }

    fn write_attach_error(&mut self, ctx: &mut Ctx<'_>, va: &Object<VaSpec>, message: String) {
        if let Ok(mut next) = ctx.api.volume_attachments().get("", va.name()).cloned() {
            next.status.attach_error = Some(VolumeError {
                message,
                time: crate::cluster::meta::timestamp(ctx.clock.whole_secs()),
            });
            let _ = ctx.api.volume_attachments().update_status(&next);
        }
    }

    /// external-attacher's `syncDetach`: with its finalizer on the attachment it calls
    /// ControllerUnpublishVolume, whether or not the attach succeeded (`csiDetach` does not
    /// look at `status.attached`: a ControllerPublishVolume that failed, or whose answer was
    /// lost, may still have attached the volume), and drops the finalizer only on success.
    fn detach(&mut self, ctx: &mut Ctx<'_>, va: &Object<VaSpec>, key: &str) -> bool {
        if !va
            .metadata
            .finalizers()
            .iter()
            .any(|f| f == ATTACHER_FINALIZER)
        {
            // "VolumeAttachment is already detached".
            return false;
        }
        let handle = ctx
            .api
            .pvs
            .get_named("", &va.spec.source.persistent_volume_name)
            .map(|pv| pv.spec.csi.volume_handle.clone());
        let Some(handle) = handle else {
            // The PV is gone: nothing the driver can be asked about.
            let _ =
                ctx.api
                    .volume_attachments()
                    .remove_finalizer("", va.name(), ATTACHER_FINALIZER);
            return true;
        };
        let req = ControllerUnpublishVolumeRequest {
            volume_id: handle,
            node_id: super::listers::csi_node_id(ctx.api, &va.spec.node_name),
            ..Default::default()
        };
        if let Err(status) = ctx.csi_call(
            "external-attacher",
            None,
            "ControllerUnpublishVolume",
            req,
            |d, r| d.controller_unpublish_volume(r),
        ) {
            if let Ok(mut next) = ctx.api.volume_attachments().get("", va.name()).cloned() {
                next.status.detach_error = Some(VolumeError {
                    message: status.go_error_string(),
                    time: crate::cluster::meta::timestamp(ctx.clock.whole_secs()),
                });
                let _ = ctx.api.volume_attachments().update_status(&next);
            }
            self.backoff.fail(ctx, key.to_string());
            return true;
        }
        self.backoff.clear(key);
        let pv = va.spec.source.persistent_volume_name.clone();
        if let Ok(true) =
            ctx.api
                .volume_attachments()
                .remove_finalizer("", va.name(), ATTACHER_FINALIZER)
        {
            let still_named = self
                .vas_by_pv
                .names(&ctx.api.revs, &ctx.api.volume_attachments, &pv);
            if !still_named {
                let _ = ctx.api.pvs().remove_finalizer("", &pv, ATTACHER_FINALIZER);
            }
            ctx.log(
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
}
