//! kube-controller-manager's attach/detach controller: every volume a pod on a node needs
//! (when the CSIDriver says `attachRequired`) gets a VolumeAttachment; a RWO volume
//! already attached elsewhere gets a Multi-Attach error instead; a VolumeAttachment no pod
//! needs, and whose volume the node no longer has mounted, is deleted.
//!
//! A PV may name a CSI driver the lab does not run (`ebs.csi.aws.com`): it has no
//! CSIDriver object, so attaching is required (`csi_plugin.go` skipAttach), and the
//! controller makes its VolumeAttachment as for any driver; no external-attacher serves
//! it, so it is never attached, and each attach operation times out after two minutes
//! (`AttachDetach::report_attach_timeouts`).

use super::attach_wants::{Key, PodWants, Want, WantPart, Wants, wanted};
use super::{DRIVER, multi_attach_allowed};
use crate::cluster::{ApiKind, Object, ObjectRef, VaSource, VaSpec};
use crate::control::{Component, Ctx};
use crate::record::Level;
use crate::util::time::Millis;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The VolumeAttachment name: `csi-` + sha256(volume handle + driver + node) in hex.
pub(crate) fn attachment_name(volume_handle: &str, driver: &str, node: &str) -> String {
    let digest = Sha256::new()
        .chain_update(volume_handle)
        .chain_update(driver)
        .chain_update(node)
        .finalize();
    let mut name = String::with_capacity("csi-".len() + 2 * digest.len());
    name.push_str("csi-");
    name.push_str(&crate::util::hash::to_hex(&digest));
    name
}

/// kube-controller-manager's attach/detach controller: a VolumeAttachment for every (PV, node) a scheduled pod needs, Multi-Attach errors, detach once kubelet unmounted.
#[derive(Debug, Clone, Default)]
pub(crate) struct AttachDetach {
    /// Its desired state of the world, kept from the watch log.
    pub wants: super::attach_wants::AttachWants,
    /// The VolumeAttachments it made for drivers the lab does not run, by name, with how
    /// many of its attach operations have timed out waiting for them so far.
    unserved: BTreeMap<String, u32>,
    /// The (PV, node) attachments queued behind a Multi-Attach error already reported: the
    /// desired state's `MultiAttachErrorReported`, so the event is recorded once while the
    /// attachment stays wanted (the reconciler's `reportMultiAttachError` guard), each with
    /// the pods that wanted it at the last pass. Upstream's desired state drops the
    /// (volume, node) and its flag the moment its last pod goes (`DeletePod`), and a pod
    /// that wants it again starts with none (`AddPod`); the lab sees passes only, so a want
    /// none of whose pods was there at the last pass counts as one that went in between.
    multi_reported: BTreeMap<(String, String), Vec<Key>>,
}

/// How long csi_attacher's Attach waits for the VolumeAttachment to be attached
/// (`pkg/volume/csi/csi_plugin.go` csiTimeout).
const CSI_ATTACH_TIMEOUT: Millis = Millis::secs(120);

/// When the attach operations started at `start` time out, in order: each waits
/// [`CSI_ATTACH_TIMEOUT`]; after the k-th failure the operation executor waits 500 ms ×
/// 2^(k-1), at most 2 min 2 s, before the next (`nestedpendingoperations`
/// exponential backoff).
fn attach_timeouts(start: Millis) -> impl Iterator<Item = Millis> {
    let mut backoff = Millis::ZERO;
    let mut at = start;
    std::iter::from_fn(move || {
        at = at
            .saturating_add(backoff)
            .saturating_add(CSI_ATTACH_TIMEOUT);
        backoff = crate::kubelet::operations::next_duration_before_retry(backoff);
        Some(at)
    })
}

/// How many attach operations started at `start` have timed out by `now`.
fn attach_timeouts_by(start: Millis, now: Millis) -> u32 {
    let n = attach_timeouts(start).take_while(|t| *t <= now).count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Component for AttachDetach {
    fn name(&self) -> &'static str {
        "attachdetach-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl AttachDetach {
    /// What one pod wants attached: for every claim it names that is bound to a PV whose
    /// CSI driver asks for attach, (PV, node), once the pod is scheduled; a terminating pod keeps only the
    /// volumes kubelet still has mounted for it. `None` for a pod that is gone.
    fn pod_wants(&self, ctx: &Ctx<'_>, key: &Key) -> Option<PodWants> {
        if !ctx.api.volume_pods.contains(key) {
            return None;
        }
        let pod = ctx.api.pods.get(key)?;
        let ns = pod.metadata.namespace();
        let mut out = PodWants {
            claims: pod
                .spec
                .volumes()
                .iter()
                .map(|v| (ns.clone(), v.persistent_volume_claim.claim_name.clone()))
                .collect(),
            parts: Vec::new(),
            terminating: pod.metadata.deletion_tick().is_some(),
        };
        // The controller's populator takes every pod with a node (`util.ProcessPodVolumes`:
        // `pod.Spec.NodeName`), scheduled or set by the manifest, unless it has terminated
        // (`DetermineVolumeAction`: a pod kubelet rejected at admission is Failed).
        let terminated = pod.status.phase == "Failed" || pod.status.phase == "Succeeded";
        if pod.spec.node_name.is_empty() || terminated {
            return Some(out);
        }
        for v in pod.spec.volumes() {
            let Some(pv) =
                super::listers::pv_for_claim(ctx.api, ns, &v.persistent_volume_claim.claim_name)
            else {
                continue;
            };
            // Only a CSI volume whose driver asks for attach is attachable (the lab's PVs are
            // CSI or nothing; a write to a CSIDriver makes the kept state start over).
            if pv.spec.csi.driver.is_empty()
                || !super::listers::attach_required(ctx.api, &pv.spec.csi.driver)
            {
                continue;
            }
            if out.terminating
                && !ctx
                    .api
                    .mounts
                    .pod_uses(&pod.spec.node_name, &pod.key(), pv.name())
            {
                continue;
            }
            out.parts.push(WantPart {
                pv: pv.name().to_string(),
                handle: pv.spec.csi.volume_handle.clone(),
                driver: pv.spec.csi.driver.clone(),
                node: pod.spec.node_name.clone(),
                multi: multi_attach_allowed(&pv.spec.access_modes),
            });
        }
        Some(out)
    }

    /// The desired state rebuilt from every pod that uses a claim (what the kept state
    /// must equal; debug builds check it on every pass).
    #[cfg(debug_assertions)]
    fn all_wants(&self, ctx: &Ctx<'_>) -> Wants {
        let mut fresh = super::attach_wants::AttachWants::default();
        fresh.refresh(
            &crate::cluster::Revisions::default(),
            &ctx.api.volume_pods,
            &ctx.api.volume_attachments,
            |k| self.pod_wants(ctx, k),
        );
        fresh.wants
    }

    /// Whether nothing is queued or waiting for a timeout, and the watch log is read at
    /// least up to `from` (see [`super::work::StorageWatch`]).
    pub(crate) fn quiet_since(&self, from: u64) -> bool {
        self.unserved.is_empty() && self.wants.quiet_since(from)
    }

    /// One pass of the attach/detach controller.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        // Desired state: (pv, node) for every pod in the API that uses a bound claim and
        // is not yet torn down (a terminating pod keeps its volumes until kubelet
        // unmounts); kept up to date from the watch log rather than rebuilt.
        let mut state = std::mem::take(&mut self.wants);
        state.refresh(
            &ctx.api.revs,
            &ctx.api.volume_pods,
            &ctx.api.volume_attachments,
            |k| self.pod_wants(ctx, k),
        );
        #[cfg(debug_assertions)]
        {
            let all = self.all_wants(ctx);
            assert_eq!(
                super::attach_wants::want_keys(&state.wants),
                super::attach_wants::want_keys(&all),
                "the attach/detach controller's kept state differs from a rebuild"
            );
            for w in state.wants.values().flat_map(BTreeMap::values) {
                assert_eq!(
                    w.attachment,
                    attachment_name(&w.handle, &w.driver, &w.node),
                    "a kept VolumeAttachment name differs from its hash"
                );
            }
            for w in all.values().flat_map(BTreeMap::values) {
                let name = attachment_name(&w.handle, &w.driver, &w.node);
                let has_va = ctx
                    .api
                    .volume_attachments
                    .contains_key(&(crate::cluster::no_namespace(), name));
                assert!(
                    has_va || state.to_attach.contains(&(w.pv.clone(), w.node.clone())),
                    "want {}→{} lacks a VolumeAttachment and is not queued",
                    w.pv,
                    w.node
                );
            }
            for va in ctx.api.volume_attachments.values() {
                let candidate = va.metadata.deletion_tick().is_none()
                    && !wanted(
                        &state.wants,
                        &va.spec.source.persistent_volume_name,
                        &va.spec.node_name,
                    );
                assert!(
                    !candidate || state.to_detach.contains(va.name()),
                    "unwanted VolumeAttachment {} is not queued for detach",
                    va.name()
                );
            }
        }
        let mut changed = false;
        // A report is forgotten with its want (see `multi_reported`).
        self.multi_reported.retain(|(pv, node), pods| {
            match state.wants.get(pv).and_then(|by_node| by_node.get(node)) {
                Some(w) if w.pods.iter().any(|p| pods.contains(p)) => {
                    pods.clone_from(&w.pods);
                    true
                }
                _ => false,
            }
        });
        // Attach what is wanted (in (pv, node) order, as a walk of every want would).
        let queued: Vec<(String, String)> = state.to_attach.iter().cloned().collect();
        for target in queued {
            let Some(w) = state
                .wants
                .get(&target.0)
                .and_then(|by_node| by_node.get(&target.1))
            else {
                state.to_attach.remove(&target);
                continue;
            };
            let name = w.attachment.clone();
            if ctx
                .api
                .volume_attachments
                .contains_key(&(crate::cluster::no_namespace(), name.clone()))
            {
                state.to_attach.remove(&target);
                continue;
            }
            if !w.multi {
                let elsewhere = state.attached_elsewhere(&w.pv, &w.node);
                debug_assert_eq!(
                    elsewhere,
                    ctx.api
                        .volume_attachments
                        .values()
                        .filter(|va| {
                            va.spec.source.persistent_volume_name == w.pv
                                && va.spec.node_name != w.node
                        })
                        .map(|va| va.spec.node_name.clone())
                        .collect::<BTreeSet<String>>(),
                    "the attach/detach controller's attachments by volume differ from a scan"
                );
                if !elsewhere.is_empty() {
                    // Stays queued: tried again on the next pass, reported once.
                    if !self.multi_reported.contains_key(&target) {
                        self.multi_reported.insert(target.clone(), w.pods.clone());
                        self.multi_attach_error(ctx, w, &elsewhere, &state.wants);
                    }
                    continue;
                }
            }
            let va = Object::new(
                &name,
                "",
                VaSpec {
                    attacher: w.driver.clone(),
                    source: VaSource {
                        persistent_volume_name: w.pv.clone(),
                    },
                    node_name: w.node.clone(),
                },
            );
            let clock = ctx.clock;
            if ctx.api.volume_attachments().create(va, clock).is_ok() {
                changed = true;
                ctx.log(
                    "attachdetach-controller",
                    "attach",
                    format!(
                        "volumeattachment {} created: {} → {}",
                        short_va(&name),
                        w.pv,
                        w.node
                    ),
                );
                if w.driver != DRIVER {
                    self.unserved.insert(name.clone(), 0);
                }
                state.to_attach.remove(&target);
                state.track_va(&name, target);
            }
        }
        self.report_attach_timeouts(ctx, &state.wants);
        // Detach what no pod wants and no kubelet has mounted (in name order).
        let queued: Vec<String> = state.to_detach.iter().cloned().collect();
        for name in queued {
            let target = ctx
                .api
                .volume_attachments
                .get_named("", &name)
                .filter(|va| va.metadata.deletion_tick().is_none())
                .map(|va| {
                    (
                        va.spec.source.persistent_volume_name.clone(),
                        va.spec.node_name.clone(),
                    )
                });
            let Some((pv, node)) = target else {
                state.to_detach.remove(&name);
                continue;
            };
            if wanted(&state.wants, &pv, &node) {
                state.to_detach.remove(&name);
                continue;
            }
            if ctx.api.mounts.volume_in_use(&node, &pv) {
                // Stays queued: kubelet's mounts are looked at again on the next pass.
                continue;
            }
            let clock = ctx.clock;
            if ctx
                .api
                .volume_attachments()
                .request_delete("", &name, clock)
                .is_ok()
            {
                changed = true;
                state.to_detach.remove(&name);
                ctx.log(
                    "attachdetach-controller",
                    "detach",
                    format!(
                        "volumeattachment {} deleted: {pv} no longer used on {node}",
                        short_va(&name)
                    ),
                );
            }
        }
        // A report is forgotten once its attachment is made or no longer wanted.
        self.multi_reported
            .retain(|target, _| state.to_attach.contains(target));
        self.wants = state;
        changed
    }

    /// The attach operations for drivers no external-attacher serves: each waits two
    /// minutes for its VolumeAttachment to be attached, fails, and is retried after a
    /// backoff; every failure is a FailedAttachVolume event on each pod that wants the
    /// volume there (`operation_generator.go` GenerateAttachVolumeFunc), as
    /// `AttachVolume.Attach failed for volume "PV" : timed out waiting for external-attacher
    /// of DRIVER CSI driver to attach volume HANDLE` (`csi_attacher.go`).
    /// The earliest attach timeout after `now` of a VolumeAttachment no external-attacher
    /// serves (a timer of the discrete-event clock: each timeout is reported at its time).
    pub fn next_timer(&self, api: &crate::cluster::Cluster, now: Millis) -> Option<Millis> {
        self.unserved
            .keys()
            .filter_map(|name| {
                let va = api.volume_attachments.get_named("", name)?;
                if va.status.attached || va.metadata.deletion_tick().is_some() {
                    return None;
                }
                attach_timeouts(va.metadata.creation_tick).find(|t| *t > now)
            })
            .min()
    }

    fn report_attach_timeouts(&mut self, ctx: &mut Ctx<'_>, wants: &Wants) {
        if self.unserved.is_empty() {
            return;
        }
        let mut reports: Vec<(String, Vec<Key>, u32)> = Vec::new();
        self.unserved.retain(|name, reported| {
            let Some(va) = ctx
                .api
                .volume_attachments
                .get_named("", name)
            else {
                return false;
            };
            if va.status.attached || va.metadata.deletion_tick().is_some() {
                return false;
            }
            let pv = &va.spec.source.persistent_volume_name;
            let Some(w) = wants.get(pv).and_then(|by_node| by_node.get(&va.spec.node_name))
            else {
                return true;
            };
            let due = attach_timeouts_by(va.metadata.creation_tick, ctx.clock);
            if due > *reported {
                let message = format!(
                    "AttachVolume.Attach failed for volume \"{pv}\" : timed out waiting for external-attacher of {} CSI driver to attach volume {}",
                    w.driver, w.handle
                );
                reports.push((message, w.pods.clone(), due - *reported));
                *reported = due;
            }
            true
        });
        for (message, pods, times) in reports {
            for _ in 0..times {
                for (namespace, name) in &pods {
                    ctx.event(
                        "attachdetach-controller",
                        "FailedAttachVolume",
                        message.clone(),
                        ObjectRef::new(ApiKind::Pod, namespace, name),
                        Level::Warning,
                    );
                }
            }
        }
    }

    fn multi_attach_error(
        &mut self,
        ctx: &mut Ctx<'_>,
        w: &Want,
        elsewhere: &BTreeSet<String>,
        wants: &Wants,
    ) {
        // The pods that use the volume on the other nodes (reportMultiAttachError).
        let others: Vec<&Key> = wants
            .get(&w.pv)
            .into_iter()
            .flat_map(BTreeMap::values)
            .filter(|o| elsewhere.contains(&o.node))
            .flat_map(|o| o.pods.iter())
            .collect();
        for (namespace, name) in &w.pods {
            let msg = if others.is_empty() {
                "Volume is already exclusively attached to one node and can't be attached to another".to_string()
            } else {
                let local: Vec<&str> = others
                    .iter()
                    .filter(|(ns, _)| ns == namespace)
                    .map(|(_, n)| n.as_str())
                    .collect();
                let other_ns = others.len() - local.len();
                if local.is_empty() {
                    format!("Volume is already used by {other_ns} pod(s) in different namespaces")
                } else if other_ns > 0 {
                    format!(
                        "Volume is already used by pod(s) {} and {other_ns} pod(s) in different namespaces",
                        local.join(", ")
                    )
                } else {
                    format!("Volume is already used by pod(s) {}", local.join(", "))
                }
            };
            ctx.event(
                "attachdetach-controller",
                "FailedAttachVolume",
                format!("Multi-Attach error for volume \"{}\" {msg}", w.pv),
                ObjectRef::new(ApiKind::Pod, namespace, name),
                Level::Warning,
            );
        }
    }
}

/// `csi-` + the first 12 hex digits, for log lines.
pub(crate) fn short_va(name: &str) -> &str {
    name.get(..16).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unserved_attach_times_out_every_two_minutes_plus_the_backoff() {
        let by = |ms: u64| attach_timeouts_by(Millis::ms(1_000), Millis::ms(1_000 + ms));
        assert_eq!(by(119_999), 0);
        assert_eq!(by(120_000), 1);
        // Retried 500 ms after the first failure, 1 s after the second.
        assert_eq!(by(240_499), 1);
        assert_eq!(by(240_500), 2);
        assert_eq!(by(361_500), 3);
        // The backoff stops doubling at 2 min 2 s: failures then come every 4 min 2 s.
        let far = by(10 * 3_600_000);
        assert_eq!(by(10 * 3_600_000 + 242_000), far + 1);
    }
}
