//! kube-controller-manager's attach/detach controller: every volume a pod on a node needs
//! (when the CSIDriver says `attachRequired`) gets a VolumeAttachment; a RWO volume
//! already attached elsewhere gets a Multi-Attach error instead; a VolumeAttachment no pod
//! needs, and whose volume the node no longer has mounted, is deleted.

use super::{DRIVER, multi_attach_allowed};
use crate::cluster::{Object, VaSource, VaSpec};
use crate::engine::Lab;
use crate::engine::log::Level;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The VolumeAttachment name: `csi-` + sha256(volume handle + driver + node) in hex.
pub fn attachment_name(volume_handle: &str, driver: &str, node: &str) -> String {
    let digest = Sha256::digest(format!("{volume_handle}{driver}{node}").as_bytes());
    format!("csi-{}", crate::util::hash::to_hex(&digest))
}

/// One volume a pod on a node wants attached.
#[derive(Debug, Clone)]
struct Want {
    pv: String,
    handle: String,
    node: String,
    multi: bool,
    /// The pods that want it, as (namespace, name): what the Multi-Attach message needs.
    pods: Vec<(String, String)>,
}

/// Desired attachments by PV, then node (nested so a VolumeAttachment's (PV, node) can be
/// looked up without building a key).
type Wants = BTreeMap<String, BTreeMap<String, Want>>;

fn wanted(wants: &Wants, pv: &str, node: &str) -> bool {
    wants
        .get(pv)
        .is_some_and(|by_node| by_node.contains_key(node))
}

impl Lab {
    /// Whether the CSIDriver object asks for attach (absent object: attach required).
    pub fn attach_required(&self) -> bool {
        self.cluster
            .csi_drivers
            .get(&(crate::cluster::no_namespace(), DRIVER.to_string()))
            .is_none_or(|d| d.spec.attach_required)
    }

    /// The PV a pod's claim is bound to, if any.
    pub fn pv_for_claim(&self, ns: &str, claim: &str) -> Option<&Object<crate::cluster::PvSpec>> {
        let pvc = self
            .cluster
            .pvcs
            .get(&(ns.to_string(), claim.to_string()))?;
        if pvc.spec.volume_name.is_empty() {
            return None;
        }
        self.cluster
            .pvs
            .get(&(crate::cluster::no_namespace(), pvc.spec.volume_name.clone()))
    }

    /// One pass of the attach/detach controller.
    pub fn run_attach_detach(&mut self) -> bool {
        if !self.attach_required() {
            return false;
        }
        // Desired state: (pv, node) for every pod in the API that uses a bound claim and
        // is not yet torn down (a terminating pod keeps its volumes until kubelet unmounts).
        let mut wants: Wants = BTreeMap::new();
        // The pods are read in place (not cloned): this runs on every pass, for every pod
        // that uses a claim.
        let pods = self
            .pods_with_volumes
            .iter()
            .filter_map(|k| self.cluster.pods.get(k))
            .filter(|p| !p.spec.volumes.is_empty() && crate::engine::scheduler::is_scheduled(p));
        for pod in pods {
            let terminating = pod.metadata.deletion_tick.is_some();
            for v in &pod.spec.volumes {
                let Some(pv) = self.pv_for_claim(
                    &pod.metadata.namespace,
                    &v.persistent_volume_claim.claim_name,
                ) else {
                    continue;
                };
                if pv.spec.csi.driver != DRIVER {
                    continue;
                }
                if terminating
                    && !self
                        .mounts
                        .pod_uses(&pod.spec.node_name, &pod.key(), pv.name())
                {
                    continue;
                }
                let by_node = match wants.get_mut(pv.name()) {
                    Some(m) => m,
                    None => wants.entry(pv.name().to_string()).or_default(),
                };
                let w = match by_node.get_mut(&pod.spec.node_name) {
                    Some(w) => w,
                    None => by_node
                        .entry(pod.spec.node_name.clone())
                        .or_insert_with(|| Want {
                            pv: pv.name().to_string(),
                            handle: pv.spec.csi.volume_handle.clone(),
                            node: pod.spec.node_name.clone(),
                            multi: multi_attach_allowed(&pv.spec.access_modes),
                            pods: Vec::new(),
                        }),
                };
                w.pods
                    .push((pod.metadata.namespace.clone(), pod.name().to_string()));
            }
        }
        let mut changed = false;
        // Attach what is wanted.
        for w in wants.values().flat_map(BTreeMap::values) {
            let name = attachment_name(&w.handle, DRIVER, &w.node);
            if self
                .cluster
                .volume_attachments
                .contains_key(&(crate::cluster::no_namespace(), name.clone()))
            {
                continue;
            }
            if !w.multi {
                let elsewhere: BTreeSet<String> = self
                    .cluster
                    .volume_attachments
                    .values()
                    .filter(|va| {
                        va.spec.source.persistent_volume_name == w.pv && va.spec.node_name != w.node
                    })
                    .map(|va| va.spec.node_name.clone())
                    .collect();
                if !elsewhere.is_empty() {
                    self.multi_attach_error(w, &elsewhere, &wants);
                    continue;
                }
            }
            let va = Object::new(
                &name,
                "",
                VaSpec {
                    attacher: DRIVER.into(),
                    source: VaSource {
                        persistent_volume_name: w.pv.clone(),
                    },
                    node_name: w.node.clone(),
                },
            );
            let clock = self.clock;
            if self.cluster.volume_attachments().create(va, clock).is_ok() {
                changed = true;
                self.log(
                    "attachdetach-controller",
                    "attach",
                    format!(
                        "volumeattachment {} created: {} → {}",
                        short_va(&name),
                        w.pv,
                        w.node
                    ),
                );
            }
        }
        // Detach what no pod wants and no kubelet has mounted.
        let vas: Vec<(String, String, String)> = self
            .cluster
            .volume_attachments
            .values()
            .filter(|va| {
                va.metadata.deletion_tick.is_none()
                    && !wanted(
                        &wants,
                        &va.spec.source.persistent_volume_name,
                        &va.spec.node_name,
                    )
            })
            .map(|va| {
                (
                    va.name().to_string(),
                    va.spec.source.persistent_volume_name.clone(),
                    va.spec.node_name.clone(),
                )
            })
            .collect();
        for (name, pv, node) in vas {
            if self.mounts.volume_in_use(&node, &pv) {
                continue;
            }
            let clock = self.clock;
            if self
                .cluster
                .volume_attachments()
                .request_delete("", &name, clock)
                .is_ok()
            {
                changed = true;
                self.log(
                    "attachdetach-controller",
                    "detach",
                    format!(
                        "volumeattachment {} deleted: {pv} no longer used on {node}",
                        short_va(&name)
                    ),
                );
            }
        }
        changed
    }

    fn multi_attach_error(&mut self, w: &Want, elsewhere: &BTreeSet<String>, wants: &Wants) {
        // The pods that use the volume on the other nodes (reportMultiAttachError).
        let others: Vec<&(String, String)> = wants
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
            self.event(
                "attachdetach-controller",
                "FailedAttachVolume",
                format!("Multi-Attach error for volume \"{}\" {msg}", w.pv),
                format!("Pod/{namespace}/{name}"),
                Level::Warning,
            );
        }
    }
}

/// `csi-` + the first 12 hex digits, for log lines.
pub fn short_va(name: &str) -> &str {
    name.get(..16).unwrap_or(name)
}
