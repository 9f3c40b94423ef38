//! The volume view model shared by `show volumes` and the dashboard: for every claim, the
//! chain PVC → PV → volume ID → VolumeAttachment → staging path → publish targets, with the
//! CSI lifecycle state on each node (CREATED, NODE_READY, VOL_READY, PUBLISHED); and what
//! each Node's status reports about volumes (`volumesInUse`, `volumesAttached`).

use crate::cluster::{AttachedVolume, Cluster, NodeStatus};
use crate::engine::Lab;
use std::collections::{BTreeMap, BTreeSet};

/// One node's part of a volume's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeVolume {
    /// The node.
    pub node: String,
    /// The driver's lifecycle state on that node.
    pub state: String,
    /// The VolumeAttachment name (short form).
    pub attachment: Option<String>,
    /// `status.attached`.
    pub attached: bool,
    /// The staging path, once staged.
    pub staging: Option<String>,
    /// Published target paths.
    pub targets: Vec<String>,
}

/// One claim and where its volume stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeRow {
    /// `ns/name` of the claim.
    pub pvc: String,
    /// Pending, Bound, Lost (or Terminating).
    pub pvc_phase: String,
    /// The bound PV.
    pub pv: Option<String>,
    /// The driver's volume ID.
    pub volume_id: Option<String>,
    /// The size (PV capacity, or the request while pending).
    pub size: String,
    /// The first node it is attached to (for filtering).
    pub node: Option<String>,
    /// Per node.
    pub nodes: Vec<NodeVolume>,
}

/// Every claim's row, in (namespace, name) order.
pub fn volume_rows(lab: &Lab) -> Vec<VolumeRow> {
    let mut rows = Vec::new();
    for pvc in lab.cluster.pvcs.values() {
        let pv = crate::storage::listers::pv_for_claim(
            &lab.cluster,
            pvc.metadata.namespace(),
            pvc.name(),
        );
        let volume_id = pv.map(|p| p.spec.csi.volume_handle.clone());
        let size = pv
            .and_then(|p| p.spec.capacity.get("storage").cloned())
            .or_else(|| pvc.spec.resources.requests.get("storage").cloned())
            .unwrap_or_default();
        let mut nodes = Vec::new();
        if let (Some(pv), Some(id)) = (pv, volume_id.as_ref()) {
            let mut node_names: Vec<String> = lab
                .cluster
                .volume_attachments
                .values()
                .filter(|va| va.spec.source.persistent_volume_name == pv.name())
                .map(|va| va.spec.node_name.clone())
                .collect();
            if let Some(rec) = lab.driver.volume(id) {
                node_names.extend(rec.staged.keys().cloned());
                node_names.extend(rec.published.keys().cloned());
                node_names.extend(rec.attachments.keys().cloned());
            }
            node_names.sort();
            node_names.dedup();
            for n in node_names {
                let va_name =
                    crate::storage::attach_detach::attachment_name(id, &pv.spec.csi.driver, &n);
                let va = lab
                    .cluster
                    .volume_attachments
                    .get(&(crate::cluster::no_namespace(), va_name.clone()));
                let rec = lab.driver.volume(id);
                nodes.push(NodeVolume {
                    state: lab
                        .driver
                        .lifecycle(id, &n)
                        .map(|s| s.name().to_string())
                        .unwrap_or_else(|| "CREATED".into()),
                    attachment: va
                        .map(|_| crate::storage::attach_detach::short_va(&va_name).to_string()),
                    attached: va.is_some_and(|v| v.status.attached),
                    staging: rec.and_then(|r| r.staged.get(&n)).map(|s| s.path.clone()),
                    targets: rec.map(|r| r.targets_on(&n)).unwrap_or_default(),
                    node: n,
                });
            }
        }
        rows.push(VolumeRow {
            pvc: pvc.key(),
            pvc_phase: if pvc.metadata.deletion_tick().is_some() {
                "Terminating".into()
            } else {
                pvc.status.phase.clone()
            },
            pv: pv.map(|p| p.name().to_string()),
            volume_id,
            size,
            node: nodes.first().map(|n| n.node.clone()),
            nodes,
        });
    }
    rows
}

/// What one node's status reports about volumes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeVolumes {
    /// `volumesInUse`.
    pub in_use: BTreeSet<String>,
    /// `volumesAttached` names.
    pub attached: BTreeSet<String>,
}

impl NodeVolumes {
    /// Write the report into a copy of a node's status.
    pub fn fill(&self, status: &mut NodeStatus) {
        status.volumes_in_use = self.in_use.iter().cloned().collect();
        status.volumes_attached = self
            .attached
            .iter()
            .map(|name| AttachedVolume {
                name: name.clone(),
                device_path: String::new(),
            })
            .collect();
    }
}

/// Every node's volume report, in one walk of the pods with claims, the mounts and the
/// VolumeAttachments:
///
/// - `volumesInUse` is kubelet's `GetVolumesInUse`: the attachable volumes of its desired
///   state (pods on the node, not being deleted, whose claims are bound) and of its actual
///   state (staged or published until NodeUnstageVolume), sorted. A CSI volume is
///   attachable when its CSIDriver asks for attach.
/// - `volumesAttached` is the attach/detach controller's actual state: a VolumeAttachment
///   reported `attached`; taken off when its detach starts (`RemoveVolumeFromReportAsAttached`)
///   and put back while a detach fails (`detachError`).
pub(crate) fn node_volumes(c: &Cluster) -> BTreeMap<String, NodeVolumes> {
    let mut out: BTreeMap<String, NodeVolumes> = BTreeMap::new();
    let attachable = crate::storage::listers::attach_required(c, crate::storage::DRIVER);
    let name_of = |pv: &str| {
        c.pvs
            .get(&(crate::cluster::no_namespace(), pv.to_string()))
            .map(|pv| {
                crate::cluster::reports::unique_volume_name(
                    &pv.spec.csi.driver,
                    &pv.spec.csi.volume_handle,
                )
            })
    };
    if attachable {
        for key in c.volume_pods.keys() {
            let Some(pod) = c.pods.get(key) else {
                continue;
            };
            if pod.spec.node_name.is_empty() || pod.metadata.deletion_tick().is_some() {
                continue;
            }
            for v in pod.spec.volumes() {
                let pv = crate::storage::listers::pv_for_claim(
                    c,
                    pod.metadata.namespace(),
                    &v.persistent_volume_claim.claim_name,
                );
                if let Some(pv) = pv {
                    out.entry(pod.spec.node_name.clone())
                        .or_default()
                        .in_use
                        .insert(crate::cluster::reports::unique_volume_name(
                            &pv.spec.csi.driver,
                            &pv.spec.csi.volume_handle,
                        ));
                }
            }
        }
        let mounted = c
            .mounts
            .staged
            .keys()
            .map(|(n, pv)| (n, pv))
            .chain(c.mounts.published.keys().map(|(n, _, pv)| (n, pv)));
        for (node, pv) in mounted {
            if let Some(name) = name_of(pv) {
                out.entry(node.clone()).or_default().in_use.insert(name);
            }
        }
    }
    for va in c.volume_attachments.values() {
        let detaching = va.metadata.deletion_tick().is_some() && va.status.detach_error.is_none();
        if !va.status.attached || detaching {
            continue;
        }
        if let Some(name) = name_of(&va.spec.source.persistent_volume_name) {
            out.entry(va.spec.node_name.clone())
                .or_default()
                .attached
                .insert(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lab: &mut Lab, line: &str) {
        if let Err(e) = lab.execute(line) {
            panic!("{line}: {}", e.message);
        }
    }

    /// (volumesInUse, volumesAttached) of node-2, where the test's volume lives.
    fn report(lab: &Lab) -> (Vec<String>, Vec<String>) {
        let r = node_volumes(&lab.cluster)
            .remove("node-2")
            .unwrap_or_default();
        (
            r.in_use.into_iter().collect(),
            r.attached.into_iter().collect(),
        )
    }

    #[test]
    fn node_status_reports_volumes_wanted_mounted_and_attached() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create db --size 1Gi");
        let handle = lab
            .cluster
            .pvs
            .values()
            .next()
            .unwrap()
            .spec
            .csi
            .volume_handle
            .clone();
        let name = format!("kubernetes.io/csi/hostpath.csi.lab^{handle}");
        assert_eq!(report(&lab), (vec![], vec![]));
        // kubelet wants the volume as soon as the pod is on the node; it is not attached.
        run(
            &mut lab,
            "fault inject ControllerPublishVolume --code INTERNAL",
        );
        run(&mut lab, "pod create p --node node-2 --pvc db");
        assert_eq!(report(&lab), (vec![name.clone()], vec![]));
        run(&mut lab, "tick 1");
        assert_eq!(report(&lab), (vec![name.clone()], vec![name.clone()]));
        // Teardown, one hop at a time: unmounted, then the detach starts, then it is done.
        run(&mut lab, "mode step");
        run(&mut lab, "pod delete p");
        assert_eq!(report(&lab), (vec![name.clone()], vec![name.clone()]));
        run(&mut lab, "reconcile kubelet --node node-2");
        assert_eq!(report(&lab), (vec![], vec![name.clone()]));
        run(&mut lab, "reconcile attachdetach");
        assert_eq!(report(&lab), (vec![], vec![]));
        // A failing detach is reported attached again.
        run(
            &mut lab,
            "fault inject ControllerUnpublishVolume --code INTERNAL",
        );
        run(&mut lab, "reconcile attacher");
        assert_eq!(report(&lab), (vec![], vec![name.clone()]));
        run(&mut lab, "tick 1");
        run(&mut lab, "reconcile attacher");
        assert_eq!(report(&lab), (vec![], vec![]));
    }
}
