//! node-driver-registrar and kubelet's plugin registration: when the node plugin starts,
//! the registrar announces it on `/var/lib/kubelet/plugins_registry/<driver>-reg.sock`;
//! kubelet calls NodeGetInfo and fills the CSINode object (node ID, topology keys, attach
//! limit) and labels the node with the driver's topology.

use super::DRIVER;
use crate::cluster::{CsiNodeDriver, CsiNodeSpec, Object};
use crate::csi::types::NodeGetInfoRequest;
use crate::engine::Lab;
use std::collections::BTreeMap;

impl Lab {
    /// Register the driver's node plugin on a node (called when the node joins).
    pub fn register_csi_node(&mut self, node: &str, zone: Option<&str>) {
        if self.driver.add_node_default(node, zone).is_err() {
            return;
        }
        self.log(
            format!("node-driver-registrar({node})"),
            "register",
            format!("/var/lib/kubelet/plugins_registry/{DRIVER}-reg.sock → kubelet"),
        );
        let actor = format!("kubelet({node})");
        let info = self.csi_call(
            &actor,
            Some(node),
            "NodeGetInfo",
            NodeGetInfoRequest::default(),
            |d, r| d.node(node)?.node_get_info(r),
        );
        let Ok(info) = info else { return };
        let segments = info
            .accessible_topology
            .as_ref()
            .map(|t| t.segments.clone())
            .unwrap_or_default();
        let spec = CsiNodeSpec {
            drivers: vec![CsiNodeDriver {
                name: DRIVER.into(),
                node_id: info.node_id.clone(),
                topology_keys: segments.keys().cloned().collect(),
                allocatable: (info.max_volumes_per_node > 0)
                    .then(|| BTreeMap::from([("count".to_string(), info.max_volumes_per_node)])),
            }],
        };
        let clock = self.clock;
        let _ = self
            .cluster
            .csi_nodes()
            .create(Object::new(node, "", spec), clock);
        // kubelet labels the node with the driver's topology segments.
        if let Ok(mut next) = self.cluster.nodes().get("", node).cloned() {
            for (k, v) in &segments {
                next.metadata.labels.insert(k.clone(), v.clone());
            }
            let _ = self.cluster.nodes().update(next);
        }
        self.log(
            actor,
            "CSINode",
            format!(
                "csinode/{node}: driver {DRIVER} nodeID={} topology {segments:?}",
                info.node_id
            ),
        );
    }
}
