//! One entry point for every RPC by name, with JSON in and out, so the engine can record the
//! exact request, response or status of each call (the wire view).
//!
//! RPC names are the bare method (`CreateVolume`) or the full gRPC path
//! (`/csi.v1.Controller/CreateVolume`). Requests are parsed as protojson (proto names,
//! unknown fields rejected); a request that does not parse fails the way grpc-go fails an
//! undecodable message: INTERNAL `grpc: error unmarshalling request: …`.

use super::driver::Driver;
use super::status::Status;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The three CSI services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `csi.v1.Identity`.
    Identity,
    /// `csi.v1.Controller`.
    Controller,
    /// `csi.v1.Node`.
    Node,
}

impl Service {
    /// The gRPC service name (`csi.v1.Controller`).
    pub(crate) fn grpc_name(self) -> &'static str {
        match self {
            Service::Identity => "csi.v1.Identity",
            Service::Controller => "csi.v1.Controller",
            Service::Node => "csi.v1.Node",
        }
    }
}

/// Every RPC the driver serves, with its service.
pub const RPCS: &[(&str, Service)] = &[
    ("GetPluginInfo", Service::Identity),
    ("GetPluginCapabilities", Service::Identity),
    ("Probe", Service::Identity),
    ("CreateVolume", Service::Controller),
    ("DeleteVolume", Service::Controller),
    ("ControllerPublishVolume", Service::Controller),
    ("ControllerUnpublishVolume", Service::Controller),
    ("ValidateVolumeCapabilities", Service::Controller),
    ("ListVolumes", Service::Controller),
    ("ControllerGetVolume", Service::Controller),
    ("GetCapacity", Service::Controller),
    ("ControllerGetCapabilities", Service::Controller),
    ("CreateSnapshot", Service::Controller),
    ("DeleteSnapshot", Service::Controller),
    ("ListSnapshots", Service::Controller),
    ("ControllerExpandVolume", Service::Controller),
    ("NodeStageVolume", Service::Node),
    ("NodeUnstageVolume", Service::Node),
    ("NodePublishVolume", Service::Node),
    ("NodeUnpublishVolume", Service::Node),
    ("NodeGetVolumeStats", Service::Node),
    ("NodeExpandVolume", Service::Node),
    ("NodeGetCapabilities", Service::Node),
    ("NodeGetInfo", Service::Node),
];

/// The service and bare method of an RPC name, or UNIMPLEMENTED as grpc-go answers an unknown
/// service or method.
pub fn resolve(rpc: &str) -> Result<(Service, &'static str), Status> {
    let (service, method) = match rpc.strip_prefix('/') {
        Some(full) => match full.split_once('/') {
            Some((s, m)) => (Some(s), m),
            None => (None, full),
        },
        None => (None, rpc),
    };
    if let Some(s) = service
        && ![Service::Identity, Service::Controller, Service::Node]
            .iter()
            .any(|k| k.grpc_name() == s)
    {
        return Err(Status::unimplemented(format!("unknown service {s}")));
    }
    match RPCS
        .iter()
        .find(|(m, k)| *m == method && service.is_none_or(|s| s == k.grpc_name()))
    {
        Some((m, k)) => Ok((*k, m)),
        None => {
            let svc = service.unwrap_or("csi.v1");
            Err(Status::unimplemented(format!(
                "unknown method {method} for service {svc}"
            )))
        }
    }
}

fn decode<T: DeserializeOwned>(req: &Value) -> Result<T, Status> {
    let v = if req.is_null() {
        Value::Object(Default::default())
    } else {
        super::protojson::proto_field_names(req)
    };
    serde_json::from_value(v)
        .map_err(|e| Status::internal(format!("grpc: error unmarshalling request: {e}")))
}

fn encode<T: Serialize>(resp: T) -> Result<Value, Status> {
    serde_json::to_value(resp)
        .map_err(|e| Status::internal(format!("grpc: error while marshaling: {e}")))
}

impl Driver {
    /// Calls one RPC with a protojson request and returns the protojson response.
    /// `node` names the node plugin for Node RPCs (ignored by the others); a Node RPC without
    /// one fails with UNAVAILABLE.
    pub fn call(&mut self, node: Option<&str>, rpc: &str, req: &Value) -> Result<Value, Status> {
        let (service, method) = resolve(rpc)?;
        if service == Service::Node {
            let Some(node_id) = node else {
                return Err(Status::unavailable(format!(
                    "{method} must be sent to a node plugin, and no node was given"
                )));
            };
            let mut n = self.node(node_id)?;
            return match method {
                "NodeStageVolume" => encode(n.node_stage_volume(decode(req)?)?),
                "NodeUnstageVolume" => encode(n.node_unstage_volume(decode(req)?)?),
                "NodePublishVolume" => encode(n.node_publish_volume(decode(req)?)?),
                "NodeUnpublishVolume" => encode(n.node_unpublish_volume(decode(req)?)?),
                "NodeGetVolumeStats" => encode(n.node_get_volume_stats(decode(req)?)?),
                "NodeExpandVolume" => encode(n.node_expand_volume(decode(req)?)?),
                "NodeGetCapabilities" => encode(n.node_get_capabilities(decode(req)?)?),
                "NodeGetInfo" => encode(n.node_get_info(decode(req)?)?),
                _ => Err(Status::unimplemented(format!(
                    "unknown method {method} for service csi.v1.Node"
                ))),
            };
        }
        match method {
            "GetPluginInfo" => encode(self.get_plugin_info(decode(req)?)?),
            "GetPluginCapabilities" => encode(self.get_plugin_capabilities(decode(req)?)?),
            "Probe" => encode(self.probe(decode(req)?)?),
            "CreateVolume" => encode(self.create_volume(decode(req)?)?),
            "DeleteVolume" => encode(self.delete_volume(decode(req)?)?),
            "ControllerPublishVolume" => encode(self.controller_publish_volume(decode(req)?)?),
            "ControllerUnpublishVolume" => encode(self.controller_unpublish_volume(decode(req)?)?),
            "ValidateVolumeCapabilities" => {
                encode(self.validate_volume_capabilities(decode(req)?)?)
            }
            "ListVolumes" => encode(self.list_volumes(decode(req)?)?),
            "ControllerGetVolume" => encode(self.controller_get_volume(decode(req)?)?),
            "GetCapacity" => encode(self.get_capacity(decode(req)?)?),
            "ControllerGetCapabilities" => encode(self.controller_get_capabilities(decode(req)?)?),
            "CreateSnapshot" => encode(self.create_snapshot(decode(req)?)?),
            "DeleteSnapshot" => encode(self.delete_snapshot(decode(req)?)?),
            "ListSnapshots" => encode(self.list_snapshots(decode(req)?)?),
            "ControllerExpandVolume" => encode(self.controller_expand_volume(decode(req)?)?),
            _ => Err(Status::unimplemented(format!(
                "unknown method {method} for service {}",
                service.grpc_name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csi::status::Code;
    use serde_json::json;

    #[test]
    fn resolves_bare_and_full_names() {
        assert_eq!(
            resolve("CreateVolume").unwrap(),
            (Service::Controller, "CreateVolume")
        );
        assert_eq!(
            resolve("/csi.v1.Node/NodeGetInfo").unwrap(),
            (Service::Node, "NodeGetInfo")
        );
        let e = resolve("/csi.v1.Controller/NodeGetInfo").unwrap_err();
        assert_eq!(e.code, Code::Unimplemented);
        assert_eq!(
            e.message,
            "unknown method NodeGetInfo for service csi.v1.Controller"
        );
        assert_eq!(
            resolve("/csi.v9.Foo/Bar").unwrap_err().message,
            "unknown service csi.v9.Foo"
        );
    }

    #[test]
    fn call_round_trips_json() {
        let mut d = Driver::default();
        d.add_node_default("node-1", Some("zone-1")).unwrap();
        let resp = d
            .call(
                None,
                "CreateVolume",
                &json!({
                    "name": "pvc-a",
                    "capacity_range": {"required_bytes": "1073741824"},
                    "volume_capabilities": [{"mount": {}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}]
                }),
            )
            .unwrap();
        let id = resp["volume"]["volume_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("vol-") && id.len() == 12, "{id}");
        assert_eq!(resp["volume"]["capacity_bytes"], json!("1073741824"));
        // No accessibility requirements: reachable from every node (no accessible_topology).
        assert!(resp["volume"].get("accessible_topology").is_none());
        let info = d.call(Some("node-1"), "NodeGetInfo", &Value::Null).unwrap();
        assert_eq!(info["node_id"], json!("node-1"));
        assert_eq!(info["max_volumes_per_node"], json!("16"));
        let e = d.call(None, "NodeGetInfo", &json!({})).unwrap_err();
        assert_eq!(e.code, Code::Unavailable);
        let e = d
            .call(Some("node-9"), "NodeGetInfo", &json!({}))
            .unwrap_err();
        assert_eq!(e.code, Code::Unavailable);
        let e = d
            .call(None, "DeleteVolume", &json!({"volumeID": id}))
            .unwrap_err();
        assert_eq!(e.code, Code::Internal);
        assert!(
            e.message
                .starts_with("grpc: error unmarshalling request: unknown field `volumeID`"),
            "{}",
            e.message
        );
        assert_eq!(
            d.call(None, "DeleteVolume", &json!({"volume_id": id}))
                .unwrap(),
            json!({})
        );
    }
}
