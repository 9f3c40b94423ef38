//! The volume view model shared by `show volumes` and the dashboard: for every claim, the
//! chain PVC → PV → volume ID → VolumeAttachment → staging path → publish targets, with the
//! CSI lifecycle state on each node (CREATED, NODE_READY, VOL_READY, PUBLISHED).

use crate::engine::Lab;

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
            &pvc.metadata.namespace,
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
                    crate::storage::attach_detach::attachment_name(id, crate::storage::DRIVER, &n);
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
            pvc_phase: if pvc.metadata.deletion_tick.is_some() {
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
