//! The attach/detach controller's desired state, kept up to date instead of rebuilt.
//!
//! What a pod wants attached depends on the pod (its node, its claims, whether it is
//! terminating), on its claims' bindings, on the bound PVs, and, for a terminating pod, on
//! what kubelet still has mounted. Each pass reads the watch log from where the last one
//! stopped and recomputes only the pods an event may have changed: the pod itself, the pods
//! using a claim or PV that was written, and every terminating pod (kubelet's mounts are
//! not in the store, so those are looked at every pass). It likewise keeps which wants may
//! need a VolumeAttachment and which VolumeAttachments may no longer be wanted. A first
//! pass, a watch log that dropped events not read yet, or a write to the CSIDriver starts
//! over from every pod, as a relist does.
//!
//! Debug builds (every test) check each pass against the full computation.

use super::work::{LookupMap, event_key, events_from};
use crate::cluster::{ApiKind, Revisions, VaSpec};
use std::collections::{BTreeMap, BTreeSet};

/// A table key: (namespace, name).
pub type Key = (String, String);

/// One volume a pod on a node wants attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// The PV.
    pub pv: String,
    /// Its volume handle.
    pub handle: String,
    /// The CSI driver the PV names: the VolumeAttachment's attacher.
    pub driver: String,
    /// The node.
    pub node: String,
    /// Whether its access modes allow attachment to several nodes.
    pub multi: bool,
    /// The pods that want it, as (namespace, name), in key order.
    pub pods: Vec<Key>,
    /// The name of its VolumeAttachment (see [`super::attach_detach::attachment_name`]),
    /// hashed once when the want appears.
    pub attachment: String,
}

/// Desired attachments by PV, then node.
pub(crate) type Wants = BTreeMap<String, BTreeMap<String, Want>>;

/// Whether (pv, node) is wanted.
pub fn wanted(wants: &Wants, pv: &str, node: &str) -> bool {
    wants
        .get(pv)
        .is_some_and(|by_node| by_node.contains_key(node))
}

/// What one pod contributes: the claims it names (bound or not) and its wants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PodWants {
    /// (namespace, claim) for every volume.
    pub claims: Vec<Key>,
    /// The wants.
    pub parts: Vec<WantPart>,
    /// Whether the pod is terminating (its wants then depend on kubelet's mounts).
    pub terminating: bool,
}

/// One volume a pod wants attached to its node, as [`PodWants`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WantPart {
    /// The PV.
    pub pv: String,
    /// Its volume handle.
    pub handle: String,
    /// The CSI driver the PV names.
    pub driver: String,
    /// The pod's node.
    pub node: String,
    /// Whether the PV's access modes allow attachment to several nodes.
    pub multi: bool,
}

/// The desired state and the work for the next pass.
#[derive(Debug, Clone, Default)]
pub(crate) struct AttachWants {
    /// The index of the first watch event not read yet (`None`: start over).
    seen: Option<u64>,
    /// Each pod's contribution.
    by_pod: LookupMap<Key, PodWants>,
    /// Pods by the claims they name.
    pods_of_claim: LookupMap<Key, BTreeSet<Key>>,
    /// Pods by the PVs they want.
    pods_of_pv: LookupMap<String, BTreeSet<Key>>,
    /// Terminating pods (recomputed every pass).
    terminating: BTreeSet<Key>,
    /// The desired attachments.
    pub wants: Wants,
    /// Wants that may lack a VolumeAttachment: looked at by the next attach loop.
    pub to_attach: BTreeSet<(String, String)>,
    /// VolumeAttachments that may no longer be wanted: looked at by the next detach loop.
    pub to_detach: BTreeSet<String>,
    /// VolumeAttachment name → (pv, node), for events about attachments already gone.
    va_target: LookupMap<String, (String, String)>,
    /// PV → (node, VolumeAttachment name) of every VolumeAttachment naming it: the nodes a
    /// volume is attached (or being attached) to, as the controller's actual state of the
    /// world answers `GetNodesForAttachedVolume`, without a walk of every attachment.
    vas_of_pv: LookupMap<String, BTreeSet<(String, String)>>,
}

impl AttachWants {
    /// Bring the desired state up to date. `compute` gives a pod's contribution (`None`
    /// for a pod that is gone or uses no claims).
    pub fn refresh(
        &mut self,
        revs: &Revisions,
        pods_with_volumes: &crate::cluster::reports::VolumePods,
        vas: &crate::cluster::Table<VaSpec>,
        mut compute: impl FnMut(&Key) -> Option<PodWants>,
    ) {
        let events = self.seen.and_then(|seen| events_from(revs, seen));
        let mut dirty: BTreeSet<Key> = self.terminating.clone();
        let mut restart = events.is_none();
        // With no pod using a claim, now or at the last pass, no pod event can matter (the
        // usual case of a network-only cluster).
        let pods_matter = !pods_with_volumes.is_empty() || !self.by_pod.is_empty();
        if let Some(events) = events {
            for e in events {
                if !pods_matter
                    && matches!(
                        e.kind,
                        ApiKind::Pod | ApiKind::PersistentVolumeClaim | ApiKind::PersistentVolume
                    )
                {
                    continue;
                }
                if e.kind == ApiKind::Pod {
                    // A pod without volumes never wants anything attached (its volumes are
                    // immutable): its events are not even looked at.
                    if e.facts.volumes {
                        dirty.insert(event_key(e).0);
                    }
                } else if e.kind == ApiKind::PersistentVolumeClaim {
                    if let Some(pods) = self.pods_of_claim.get(&event_key(e).0) {
                        dirty.extend(pods.iter().cloned());
                    }
                } else if e.kind == ApiKind::PersistentVolume {
                    if let Some(pods) = self.pods_of_pv.get(&e.key) {
                        dirty.extend(pods.iter().cloned());
                    }
                } else if e.kind == ApiKind::VolumeAttachment {
                    let name = &e.key;
                    let target = vas.get_named("", name).map(|va| {
                        (
                            va.spec.source.persistent_volume_name.clone(),
                            va.spec.node_name.clone(),
                        )
                    });
                    match target {
                        Some(t) => {
                            self.to_attach.insert(t.clone());
                            self.track_va(name, t);
                            self.to_detach.insert(name.clone());
                        }
                        None => {
                            if let Some(t) = self.untrack_va(name) {
                                self.to_attach.insert(t);
                            }
                            self.to_detach.remove(name);
                        }
                    }
                } else if e.kind == ApiKind::CsiDriver {
                    restart = true;
                }
            }
        }
        self.seen = Some(revs.next_event);
        if restart {
            *self = AttachWants {
                seen: self.seen,
                ..Default::default()
            };
            dirty = pods_with_volumes.keys().cloned().collect();
            for va in vas.values() {
                let t = (
                    va.spec.source.persistent_volume_name.clone(),
                    va.spec.node_name.clone(),
                );
                self.track_va(va.name(), t);
                self.to_detach.insert(va.name().to_string());
            }
        }
        for key in dirty {
            let next = compute(&key).unwrap_or_default();
            self.set_pod(&key, next);
        }
    }

    /// Whether nothing is queued and the watch log is read at least up to `from` (see
    /// [`super::work::StorageWatch`]).
    pub(crate) fn quiet_since(&self, from: u64) -> bool {
        self.terminating.is_empty()
            && self.to_attach.is_empty()
            && self.to_detach.is_empty()
            && self.seen.is_some_and(|s| s >= from)
    }

    /// Mark the watch log read up to `next` (no event from its position on matters here).
    pub(crate) fn skip_to(&mut self, next: u64) {
        self.seen = Some(next);
    }

    /// Note a VolumeAttachment of the table, naming `target` (pv, node): from its watch
    /// event, or as the pass creates it (the next pass reads its event and notes it again).
    /// A VolumeAttachment's source and node never change (its spec is immutable).
    pub(crate) fn track_va(&mut self, name: &str, target: (String, String)) {
        if self.va_target.get(name) == Some(&target) {
            return;
        }
        self.untrack_va(name);
        self.vas_of_pv
            .entry(target.0.clone())
            .or_default()
            .insert((target.1.clone(), name.to_string()));
        self.va_target.insert(name.to_string(), target);
    }

    /// Forget a VolumeAttachment that is gone; its (pv, node), if it was known.
    fn untrack_va(&mut self, name: &str) -> Option<(String, String)> {
        let (pv, node) = self.va_target.remove(name)?;
        if let Some(set) = self.vas_of_pv.get_mut(&pv) {
            set.remove(&(node.clone(), name.to_string()));
            if set.is_empty() {
                self.vas_of_pv.remove(&pv);
            }
        }
        Some((pv, node))
    }

    /// The nodes other than `node` that a VolumeAttachment of `pv` names (the table as
    /// the last refresh read it, and the attachments this pass created since).
    pub(crate) fn attached_elsewhere(&self, pv: &str, node: &str) -> BTreeSet<String> {
        self.vas_of_pv
            .get(pv)
            .into_iter()
            .flatten()
            .filter(|(n, _)| n != node)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Replace a pod's contribution, updating the indexes and the work sets.
    fn set_pod(&mut self, key: &Key, next: PodWants) {
        let prev = self.by_pod.remove(key).unwrap_or_default();
        if prev == next {
            if next != PodWants::default() {
                self.by_pod.insert(key.clone(), next);
            }
            return;
        }
        for claim in &prev.claims {
            if let Some(pods) = self.pods_of_claim.get_mut(claim) {
                pods.remove(key);
                if pods.is_empty() {
                    self.pods_of_claim.remove(claim);
                }
            }
        }
        // The wants this pod alone kept: one it wants again (its terminating flag changed)
        // keeps its VolumeAttachment name rather than hashing it anew.
        let mut released: Vec<Want> = Vec::new();
        for WantPart { pv, node, .. } in &prev.parts {
            if let Some(pods) = self.pods_of_pv.get_mut(pv) {
                pods.remove(key);
                if pods.is_empty() {
                    self.pods_of_pv.remove(pv);
                }
            }
            let Some(by_node) = self.wants.get_mut(pv) else {
                continue;
            };
            if let Some(w) = by_node.get_mut(node) {
                w.pods.retain(|p| p != key);
                if w.pods.is_empty() {
                    // Its VolumeAttachment may now be unwanted.
                    if let Some(gone) = by_node.remove(node) {
                        self.to_detach.insert(gone.attachment.clone());
                        released.push(gone);
                    }
                }
            }
            if by_node.is_empty() {
                self.wants.remove(pv);
            }
        }
        self.terminating.remove(key);
        if next.terminating {
            self.terminating.insert(key.clone());
        }
        for claim in &next.claims {
            self.pods_of_claim
                .entry(claim.clone())
                .or_default()
                .insert(key.clone());
        }
        for WantPart {
            pv,
            handle,
            driver,
            node,
            multi,
        } in &next.parts
        {
            self.pods_of_pv
                .entry(pv.clone())
                .or_default()
                .insert(key.clone());
            let w = self
                .wants
                .entry(pv.clone())
                .or_default()
                .entry(node.clone())
                .or_insert_with(|| Want {
                    attachment: released
                        .iter()
                        .position(|w| w.handle == *handle && w.driver == *driver && w.node == *node)
                        .map(|at| released.swap_remove(at).attachment)
                        .unwrap_or_else(|| {
                            super::attach_detach::attachment_name(handle, driver, node)
                        }),
                    pv: pv.clone(),
                    handle: handle.clone(),
                    driver: driver.clone(),
                    node: node.clone(),
                    multi: *multi,
                    pods: Vec::new(),
                });
            // In key order; a pod naming the claim twice is listed twice, as a rebuild
            // from every pod would list it.
            let at = w.pods.partition_point(|p| p <= key);
            w.pods.insert(at, key.clone());
            self.to_attach.insert((pv.clone(), node.clone()));
        }
        if next != PodWants::default() {
            self.by_pod.insert(key.clone(), next);
        }
    }
}

/// Every want as (pv, node, pods), in order: what the debug check compares.
#[cfg(debug_assertions)]
pub(crate) fn want_keys(wants: &Wants) -> Vec<(String, String, Vec<Key>)> {
    wants
        .values()
        .flat_map(BTreeMap::values)
        .map(|w| (w.pv.clone(), w.node.clone(), w.pods.clone()))
        .collect()
}
