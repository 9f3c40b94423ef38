//! node-driver-registrar and kubelet's plugin registration: when the node plugin starts,
//! the registrar announces it on `/var/lib/kubelet/plugins_registry/<driver>-reg.sock`;
//! kubelet calls NodeGetInfo and fills the CSINode object (node ID, topology keys, attach
//! limit) and labels the node with the driver's topology.

use super::DRIVER;
use crate::cluster::{CsiNodeDriver, CsiNodeSpec, Object};
use crate::control::Ctx;
use crate::csi::types::NodeGetInfoRequest;
use crate::record::{Actor, Agent};
use std::collections::BTreeMap;

/// The node plugin on `node` has started: node-driver-registrar announces it, kubelet
/// calls NodeGetInfo, writes the CSINode object and labels the node with the topology.
pub(crate) fn register_csi_node(ctx: &mut Ctx<'_>, node: &str) {
    ctx.log(
        Actor::on(Agent::NodeDriverRegistrar, node),
        "register",
        format!("/var/lib/kubelet/plugins_registry/{DRIVER}-reg.sock → kubelet"),
    );
    let actor = Actor::kubelet(node);
    let info = ctx.csi_call(
        &actor,
        Some(node),
        "NodeGetInfo",
        NodeGetInfoRequest::default(),
        |d, r| d.node_get_info(node, r),
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
    let clock = ctx.clock;
    let _ = ctx
        .api
        .csi_nodes()
        .create(Object::new(node, "", spec), clock);
    // kubelet labels the node with the driver's topology segments.
    if let Ok(mut next) = ctx.api.nodes().get("", node).cloned() {
        for (k, v) in &segments {
            next.metadata.labels.insert(k.clone(), v.clone());
        }
        let _ = ctx.api.nodes().update(next);
    }
    ctx.log(
        actor,
        "CSINode",
        format!(
            "csinode/{node}: driver {DRIVER} nodeID={} topology {segments:?}",
            info.node_id
        ),
    );
}
