//! csi.proto's three services (Identity, Controller, Node) as one Rust trait: what a CSI
//! client can call on a driver's sockets. The sidecars, kubelet and the learner's `csi …`
//! commands reach the driver only through it; the in-process [`Driver`] is today's
//! implementation, and a client of a real gRPC socket can stand behind it unchanged.
//!
//! Node RPCs name the node plugin they are sent to (`node`): each node runs its own plugin
//! socket, and a call to a node with no registered plugin fails UNAVAILABLE, as a client
//! finds no socket.

use super::driver::Driver;
use super::status::Status;
use super::types::*;

/// Declares the trait's methods and the in-process implementation's delegation at once.
macro_rules! csi_services {
    (
        controller { $( $(#[$cdoc:meta])* $c:ident($creq:ty) -> $cresp:ty; )* }
        node { $( $(#[$ndoc:meta])* $n:ident($nreq:ty) -> $nresp:ty; )* }
    ) => {
        /// A CSI driver as its clients see it (see the module doc).
        pub trait CsiEndpoint {
            $( $(#[$cdoc])* fn $c(&mut self, req: $creq) -> Result<$cresp, Status>; )*
            $( $(#[$ndoc])* fn $n(&mut self, node: &str, req: $nreq) -> Result<$nresp, Status>; )*
            /// Any RPC by name, protojson in and out (`csi call`).
            fn call_json(
                &mut self,
                node: Option<&str>,
                rpc: &str,
                req: &serde_json::Value,
            ) -> Result<serde_json::Value, Status>;
        }

        impl CsiEndpoint for Driver {
            $( fn $c(&mut self, req: $creq) -> Result<$cresp, Status> { Driver::$c(self, req) } )*
            $(
                fn $n(&mut self, node: &str, req: $nreq) -> Result<$nresp, Status> {
                    self.node(node)?.$n(req)
                }
            )*
            fn call_json(
                &mut self,
                node: Option<&str>,
                rpc: &str,
                req: &serde_json::Value,
            ) -> Result<serde_json::Value, Status> {
                self.call(node, rpc, req)
            }
        }
    };
}

csi_services! {
    controller {
        /// Identity.GetPluginInfo.
        get_plugin_info(GetPluginInfoRequest) -> GetPluginInfoResponse;
        /// Identity.GetPluginCapabilities.
        get_plugin_capabilities(GetPluginCapabilitiesRequest) -> GetPluginCapabilitiesResponse;
        /// Identity.Probe.
        probe(ProbeRequest) -> ProbeResponse;
        /// Controller.CreateVolume.
        create_volume(CreateVolumeRequest) -> CreateVolumeResponse;
        /// Controller.DeleteVolume.
        delete_volume(DeleteVolumeRequest) -> DeleteVolumeResponse;
        /// Controller.ControllerPublishVolume.
        controller_publish_volume(ControllerPublishVolumeRequest) -> ControllerPublishVolumeResponse;
        /// Controller.ControllerUnpublishVolume.
        controller_unpublish_volume(ControllerUnpublishVolumeRequest) -> ControllerUnpublishVolumeResponse;
        /// Controller.ValidateVolumeCapabilities.
        validate_volume_capabilities(ValidateVolumeCapabilitiesRequest) -> ValidateVolumeCapabilitiesResponse;
        /// Controller.ListVolumes.
        list_volumes(ListVolumesRequest) -> ListVolumesResponse;
        /// Controller.ControllerGetVolume.
        controller_get_volume(ControllerGetVolumeRequest) -> ControllerGetVolumeResponse;
        /// Controller.GetCapacity.
        get_capacity(GetCapacityRequest) -> GetCapacityResponse;
        /// Controller.ControllerGetCapabilities.
        controller_get_capabilities(ControllerGetCapabilitiesRequest) -> ControllerGetCapabilitiesResponse;
        /// Controller.CreateSnapshot.
        create_snapshot(CreateSnapshotRequest) -> CreateSnapshotResponse;
        /// Controller.DeleteSnapshot.
        delete_snapshot(DeleteSnapshotRequest) -> DeleteSnapshotResponse;
        /// Controller.ListSnapshots.
        list_snapshots(ListSnapshotsRequest) -> ListSnapshotsResponse;
        /// Controller.ControllerExpandVolume.
        controller_expand_volume(ControllerExpandVolumeRequest) -> ControllerExpandVolumeResponse;
    }
    node {
        /// Node.NodeStageVolume.
        node_stage_volume(NodeStageVolumeRequest) -> NodeStageVolumeResponse;
        /// Node.NodeUnstageVolume.
        node_unstage_volume(NodeUnstageVolumeRequest) -> NodeUnstageVolumeResponse;
        /// Node.NodePublishVolume.
        node_publish_volume(NodePublishVolumeRequest) -> NodePublishVolumeResponse;
        /// Node.NodeUnpublishVolume.
        node_unpublish_volume(NodeUnpublishVolumeRequest) -> NodeUnpublishVolumeResponse;
        /// Node.NodeGetVolumeStats.
        node_get_volume_stats(NodeGetVolumeStatsRequest) -> NodeGetVolumeStatsResponse;
        /// Node.NodeExpandVolume.
        node_expand_volume(NodeExpandVolumeRequest) -> NodeExpandVolumeResponse;
        /// Node.NodeGetCapabilities.
        node_get_capabilities(NodeGetCapabilitiesRequest) -> NodeGetCapabilitiesResponse;
        /// Node.NodeGetInfo.
        node_get_info(NodeGetInfoRequest) -> NodeGetInfoResponse;
    }
}
