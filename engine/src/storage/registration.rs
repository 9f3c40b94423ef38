//! node-driver-registrar and kubelet's plugin registration: when the node plugin starts,
//! the registrar announces it on `/var/lib/kubelet/plugins_registry/<driver>-reg.sock`;
//! kubelet calls NodeGetInfo and fills the CSINode object (node ID, topology keys, attach
//! limit) and labels the node with the driver's topology.

use super::DRIVER;
use crate::cluster::{CsiNodeDriver, CsiNodeSpec, Object, VolumeNodeResources};
use crate::control::Ctx;
use crate::csi::types::NodeGetInfoRequest;
use crate::record::{Actor, Agent, Detail};

/// What node-driver-registrar logs when it announces the plugin (the socket is
/// `<driver>-reg.sock`: see the test that it names [`DRIVER`]).
const REGISTER_LINE: &str = "/var/lib/kubelet/plugins_registry/hostpath.csi.lab-reg.sock → kubelet";

/// The node plugin on `node` has started: node-driver-registrar announces it, kubelet
/// calls NodeGetInfo, writes the CSINode object and labels the node with the topology.
pub(crate) fn register_csi_node(ctx: &mut Ctx<'_>, node: &str) {
    ctx.log(
        Actor::on(Agent::NodeDriverRegistrar, node),
        "register",
        Detail::Static(REGISTER_LINE),
    );
    let actor = Actor::kubelet(node);
    let info = ctx.csi_call(
        &actor,
        Some(node),
        "NodeGetInfo",
        NodeGetInfoRequest::default(),
        |d, r| d.node_get_info(node, r),
    );
    let Ok(mut info) = info else { return };
    // The response is kubelet's to keep: its segments are taken, not copied.
    let segments = info
        .accessible_topology
        .take()
        .map(|t| t.segments)
        .unwrap_or_default();
    let spec = CsiNodeSpec {
        drivers: vec![CsiNodeDriver {
            name: DRIVER.into(),
            node_id: info.node_id.clone(),
            topology_keys: segments.keys().cloned().collect(),
            allocatable: (info.max_volumes_per_node > 0).then_some(VolumeNodeResources {
                count: info.max_volumes_per_node,
            }),
        }],
    };
    let clock = ctx.clock;
    let _ = ctx
        .api
        .csi_nodes()
        .create(Object::new(node, "", spec), clock);
    // kubelet labels the node with the driver's topology segments: a patch of the
    // labels, not a read of the whole Node and a write of it back.
    let _ = ctx.api.nodes().patch_labels(
        "",
        node,
        segments.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    );
    ctx.log(
        actor,
        "CSINode",
        Detail::CsiNodeRegistered {
            node: node.to_string(),
            driver: DRIVER,
            node_id: info.node_id,
            segments,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_socket_is_the_drivers() {
        assert_eq!(
            REGISTER_LINE,
            format!("/var/lib/kubelet/plugins_registry/{DRIVER}-reg.sock → kubelet")
        );
    }
}
