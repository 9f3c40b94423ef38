//! Raw CSI commands: the learner plays a sidecar or kubelet and sends one RPC. Output is
//! the response in protojson form (csi.proto field names), or the gRPC status.

use super::{Lab, LabError};
use crate::command::grammar::CsiCmd;
use crate::csi::types::*;
use crate::csi::{K8sAccessMode, Status};
use crate::record::wire::WireMessage;
use crate::render::{Line, Outcome, Role};
use crate::util::quantity::parse_bytes;
use serde_json::Value;
use std::collections::BTreeMap;

/// The caller a learner's own `csi …` command is recorded as.
pub(crate) const YOU: &str = "you";

/// What `csi serve` says where no front end can hold a socket open (a script, a lesson, a
/// plain session): the REPL and the dashboard serve it themselves.
pub(crate) const SERVE_NEEDS_A_SESSION: &str = "csi serve runs in an interactive session: type it in the REPL (`cni-csi-lab repl` on a terminal) or the dashboard, or serve from the shell with `cni-csi-lab csi serve --socket PATH`; a script, a lesson or a piped session cannot keep a socket open";

/// What [`Lab::csi_remote_call`] gives back.
#[derive(Debug)]
pub struct RemoteCall {
    /// The driver's response as protojson (proto field names), or its status.
    pub reply: Result<Value, Status>,
    /// The call-log lines the call added (the call itself, then what the control loops
    /// did after it), as the lab prints them.
    pub calls: Vec<Line>,
}

/// An access mode by CSI name (`SINGLE_NODE_WRITER`) or Kubernetes short name (`RWO`).
fn access_mode(text: &str) -> Result<AccessModeType, LabError> {
    if let Some(m) = AccessModeType::from_name(&text.to_ascii_uppercase()) {
        return Ok(m);
    }
    if let Some(k) = K8sAccessMode::parse(text) {
        return crate::csi::to_csi_access_mode(&[k], false).map_err(LabError::msg);
    }
    let names: Vec<&str> = AccessModeType::ALL.iter().map(|m| m.name()).collect();
    Err(LabError::msg(format!(
        "unknown access mode {text:?}: expected one of {} (or RWO, ROX, RWX, RWOP)",
        names.join(", ")
    )))
}

fn capability(access: &str, block: bool) -> Result<VolumeCapability, LabError> {
    let mode = access_mode(access)?;
    Ok(if block {
        VolumeCapability::block(mode)
    } else {
        VolumeCapability::mount(mode, "ext4")
    })
}

fn size(text: &str) -> Result<i64, LabError> {
    parse_bytes(text).map_err(LabError::msg)
}

/// The response as the command prints it, or the status as an error.
fn reply<R: WireMessage>(rpc: &str, r: Result<R, Status>) -> Result<Outcome, LabError> {
    match r {
        Ok(resp) => {
            let mut out = Outcome::empty();
            out.block(&crate::cni::types::to_go_json(&resp.to_json()), Role::Json);
            Ok(out)
        }
        Err(s) => {
            let mut out = Outcome::empty();
            out.block(&crate::cni::types::to_go_json(&s), Role::Json);
            Err(LabError::with_output(
                format!(
                    "CSI {} ({}) from {rpc}: {}",
                    s.code.name(),
                    s.code.number(),
                    s.message
                ),
                out,
            )
            .because(super::Reason::Csi(s.code)))
        }
    }
}

impl Lab {
    fn default_staging(&self, id: &str) -> String {
        // kubelet's globalmount is named after the volume handle (a `pvc/NAME` reference
        // stands for its claim's handle).
        let handle = self.volume_ref(id).unwrap_or_else(|_| id.to_string());
        crate::kubelet::volumes::staging_path(&handle)
    }

    /// A volume ID as the learner gives it: the driver's ID itself, or `pvc/NAME`
    /// (`pvc/NS/NAME`) for the volume behind a bound claim (its PV's `spec.csi.volumeHandle`)
    /// — the ID external-attacher and kubelet read from the PV, without copying it by hand.
    fn volume_ref(&self, id: &str) -> Result<String, LabError> {
        let Some(claim) = id.strip_prefix("pvc/") else {
            return Ok(id.to_string());
        };
        let (ns, name) = claim.split_once('/').unwrap_or(("default", claim));
        let key = (ns.to_string(), name.to_string());
        let Some(pvc) = self.cluster.pvcs.get(&key) else {
            return Err(LabError::msg(format!(
                "Error from server (NotFound): persistentvolumeclaims {name:?} not found (give a volume ID, or pvc/NAME of a bound claim)"
            )));
        };
        let pv_key = (crate::cluster::no_namespace(), pvc.spec.volume_name.clone());
        match self.cluster.pvs.get(&pv_key) {
            Some(pv) if !pvc.spec.volume_name.is_empty() => Ok(pv.spec.csi.volume_handle.clone()),
            _ => Err(LabError::msg(format!(
                "claim {ns}/{name} is not bound to a PersistentVolume yet (phase {}): it has no volume ID",
                pvc.status.phase
            ))),
        }
    }

    /// Dispatch `csi …`.
    pub fn csi(&mut self, cmd: CsiCmd) -> Result<Outcome, LabError> {
        match cmd {
            CsiCmd::GetPluginInfo => {
                let r = self.csi_call(
                    YOU,
                    None,
                    "GetPluginInfo",
                    GetPluginInfoRequest::default(),
                    |d, r| d.get_plugin_info(r),
                );
                reply("GetPluginInfo", r)
            }
            CsiCmd::GetPluginCapabilities => {
                let r = self.csi_call(
                    YOU,
                    None,
                    "GetPluginCapabilities",
                    GetPluginCapabilitiesRequest::default(),
                    |d, r| d.get_plugin_capabilities(r),
                );
                reply("GetPluginCapabilities", r)
            }
            CsiCmd::Probe => {
                let r = self.csi_call(YOU, None, "Probe", ProbeRequest::default(), |d, r| {
                    d.probe(r)
                });
                reply("Probe", r)
            }
            CsiCmd::ControllerGetCapabilities => {
                let r = self.csi_call(
                    YOU,
                    None,
                    "ControllerGetCapabilities",
                    ControllerGetCapabilitiesRequest::default(),
                    |d, r| d.controller_get_capabilities(r),
                );
                reply("ControllerGetCapabilities", r)
            }
            CsiCmd::CreateVolume {
                name,
                size: sz,
                access,
                block,
                params,
                from_snapshot,
                from_volume,
                node,
            } => {
                let mut parameters = BTreeMap::new();
                for p in &params {
                    let (k, v) = p.split_once('=').ok_or_else(|| {
                        LabError::msg(format!("invalid parameter {p:?}: expected KEY=VALUE"))
                    })?;
                    parameters.insert(k.to_string(), v.to_string());
                }
                let capacity_range = match &sz {
                    Some(s) => Some(CapacityRange {
                        required_bytes: size(s)?,
                        limit_bytes: 0,
                    }),
                    None => None,
                };
                let volume_content_source = match (from_snapshot, from_volume) {
                    (Some(_), Some(_)) => {
                        return Err(LabError::msg(
                            "--from-snapshot and --from-volume are exclusive (volume_content_source is a oneof)",
                        ));
                    }
                    (Some(s), None) => Some(VolumeContentSource {
                        snapshot: Some(SnapshotSource { snapshot_id: s }),
                        volume: None,
                    }),
                    (None, Some(v)) => Some(VolumeContentSource {
                        snapshot: None,
                        volume: Some(VolumeSource {
                            volume_id: self.volume_ref(&v)?,
                        }),
                    }),
                    (None, None) => None,
                };
                let accessibility_requirements = match node {
                    Some(n) => {
                        let seg = self
                            .driver
                            .nodes()
                            .find(|x| x.node_id == n)
                            .map(|x| x.segments.clone())
                            .unwrap_or_else(|| {
                                BTreeMap::from([(
                                    crate::csi::TOPOLOGY_KEY_NODE.to_string(),
                                    n.clone(),
                                )])
                            });
                        let t = Topology { segments: seg };
                        Some(TopologyRequirement {
                            requisite: vec![t.clone()],
                            preferred: vec![t],
                        })
                    }
                    None => None,
                };
                let req = CreateVolumeRequest {
                    name,
                    capacity_range,
                    volume_capabilities: vec![capability(&access, block)?],
                    parameters,
                    volume_content_source,
                    accessibility_requirements,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "CreateVolume", req, |d, r| d.create_volume(r));
                reply("CreateVolume", r)
            }
            CsiCmd::DeleteVolume { id } => {
                let req = DeleteVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "DeleteVolume", req, |d, r| d.delete_volume(r));
                reply("DeleteVolume", r)
            }
            CsiCmd::ControllerPublish {
                id,
                node,
                readonly,
                access,
            } => {
                let req = ControllerPublishVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    node_id: node,
                    volume_capability: Some(capability(&access, false)?),
                    readonly,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "ControllerPublishVolume", req, |d, r| {
                    d.controller_publish_volume(r)
                });
                reply("ControllerPublishVolume", r)
            }
            CsiCmd::ControllerUnpublish { id, node } => {
                let req = ControllerUnpublishVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    node_id: node,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "ControllerUnpublishVolume", req, |d, r| {
                    d.controller_unpublish_volume(r)
                });
                reply("ControllerUnpublishVolume", r)
            }
            CsiCmd::ValidateVolumeCapabilities { id, access } => {
                let req = ValidateVolumeCapabilitiesRequest {
                    volume_id: self.volume_ref(&id)?,
                    volume_capabilities: vec![capability(&access, false)?],
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "ValidateVolumeCapabilities", req, |d, r| {
                    d.validate_volume_capabilities(r)
                });
                reply("ValidateVolumeCapabilities", r)
            }
            CsiCmd::ListVolumes {
                max_entries,
                starting_token,
            } => {
                let req = ListVolumesRequest {
                    max_entries,
                    starting_token,
                };
                let r = self.csi_call(YOU, None, "ListVolumes", req, |d, r| d.list_volumes(r));
                reply("ListVolumes", r)
            }
            CsiCmd::ControllerGetVolume { id } => {
                let req = ControllerGetVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                };
                let r = self.csi_call(YOU, None, "ControllerGetVolume", req, |d, r| {
                    d.controller_get_volume(r)
                });
                reply("ControllerGetVolume", r)
            }
            CsiCmd::GetCapacity => {
                let r = self.csi_call(
                    YOU,
                    None,
                    "GetCapacity",
                    GetCapacityRequest::default(),
                    |d, r| d.get_capacity(r),
                );
                reply("GetCapacity", r)
            }
            CsiCmd::CreateSnapshot { name, volume } => {
                let req = CreateSnapshotRequest {
                    source_volume_id: self.volume_ref(&volume)?,
                    name,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "CreateSnapshot", req, |d, r| {
                    d.create_snapshot(r)
                });
                reply("CreateSnapshot", r)
            }
            CsiCmd::DeleteSnapshot { id } => {
                let req = DeleteSnapshotRequest {
                    snapshot_id: id,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "DeleteSnapshot", req, |d, r| {
                    d.delete_snapshot(r)
                });
                reply("DeleteSnapshot", r)
            }
            CsiCmd::ListSnapshots {
                snapshot_id,
                source_volume_id,
                max_entries,
                starting_token,
            } => {
                let req = ListSnapshotsRequest {
                    max_entries,
                    starting_token,
                    source_volume_id,
                    snapshot_id,
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "ListSnapshots", req, |d, r| d.list_snapshots(r));
                reply("ListSnapshots", r)
            }
            CsiCmd::ControllerExpand { id, size: sz } => {
                let req = ControllerExpandVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    capacity_range: Some(CapacityRange {
                        required_bytes: size(&sz)?,
                        limit_bytes: 0,
                    }),
                    volume_capability: Some(capability("SINGLE_NODE_WRITER", false)?),
                    ..Default::default()
                };
                let r = self.csi_call(YOU, None, "ControllerExpandVolume", req, |d, r| {
                    d.controller_expand_volume(r)
                });
                reply("ControllerExpandVolume", r)
            }
            CsiCmd::NodeStage {
                id,
                node,
                staging,
                access,
            } => {
                let staging_target_path = staging.unwrap_or_else(|| self.default_staging(&id));
                let req = NodeStageVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    staging_target_path,
                    volume_capability: Some(capability(&access, false)?),
                    ..Default::default()
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodeStageVolume", req, |d, r| {
                    d.node_stage_volume(&n, r)
                });
                reply("NodeStageVolume", r)
            }
            CsiCmd::NodeUnstage { id, node, staging } => {
                let staging_target_path = staging.unwrap_or_else(|| self.default_staging(&id));
                let req = NodeUnstageVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    staging_target_path,
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodeUnstageVolume", req, |d, r| {
                    d.node_unstage_volume(&n, r)
                });
                reply("NodeUnstageVolume", r)
            }
            CsiCmd::NodePublish {
                id,
                node,
                target,
                staging,
                readonly,
                access,
            } => {
                let staging_target_path = staging.unwrap_or_else(|| self.default_staging(&id));
                let req = NodePublishVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    staging_target_path,
                    target_path: target,
                    volume_capability: Some(capability(&access, false)?),
                    readonly,
                    ..Default::default()
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodePublishVolume", req, |d, r| {
                    d.node_publish_volume(&n, r)
                });
                reply("NodePublishVolume", r)
            }
            CsiCmd::NodeUnpublish { id, node, target } => {
                let req = NodeUnpublishVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    target_path: target,
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodeUnpublishVolume", req, |d, r| {
                    d.node_unpublish_volume(&n, r)
                });
                reply("NodeUnpublishVolume", r)
            }
            CsiCmd::NodeExpand {
                id,
                node,
                path,
                size: sz,
            } => {
                let capacity_range = match sz {
                    Some(s) => Some(CapacityRange {
                        required_bytes: size(&s)?,
                        limit_bytes: 0,
                    }),
                    None => self.driver.volume(&id).map(|v| CapacityRange {
                        required_bytes: v.capacity_bytes,
                        limit_bytes: 0,
                    }),
                };
                let req = NodeExpandVolumeRequest {
                    volume_id: self.volume_ref(&id)?,
                    volume_path: path,
                    capacity_range,
                    ..Default::default()
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodeExpandVolume", req, |d, r| {
                    d.node_expand_volume(&n, r)
                });
                reply("NodeExpandVolume", r)
            }
            CsiCmd::NodeGetInfo { node } => {
                let n = node.clone();
                let r = self.csi_call(
                    YOU,
                    Some(&node),
                    "NodeGetInfo",
                    NodeGetInfoRequest::default(),
                    |d, r| d.node_get_info(&n, r),
                );
                reply("NodeGetInfo", r)
            }
            CsiCmd::NodeGetCapabilities { node } => {
                let n = node.clone();
                let r = self.csi_call(
                    YOU,
                    Some(&node),
                    "NodeGetCapabilities",
                    NodeGetCapabilitiesRequest::default(),
                    |d, r| d.node_get_capabilities(&n, r),
                );
                reply("NodeGetCapabilities", r)
            }
            CsiCmd::NodeGetVolumeStats { id, node, path } => {
                let req = NodeGetVolumeStatsRequest {
                    volume_id: self.volume_ref(&id)?,
                    volume_path: path,
                    ..Default::default()
                };
                let n = node.clone();
                let r = self.csi_call(YOU, Some(&node), "NodeGetVolumeStats", req, |d, r| {
                    d.node_get_volume_stats(&n, r)
                });
                reply("NodeGetVolumeStats", r)
            }
            CsiCmd::Serve { .. } => Err(LabError::msg(SERVE_NEEDS_A_SESSION)),
            CsiCmd::Call { rpc, request, node } => {
                let req: Value = serde_json::from_str(&request).map_err(|e| {
                    LabError::msg(format!(
                        "the request is not JSON ({e}); give a protojson object with csi.proto field names, e.g. '{{\"volume_id\": \"vol-1\"}}'"
                    ))
                })?;
                // protojson reads a message from an object only: serde would fill a struct
                // from an array by position, or take `null` as the empty request.
                if !req.is_object() {
                    return Err(LabError::msg(format!(
                        "the request is {}, not a JSON object; give a protojson object with csi.proto field names, e.g. '{{\"volume_id\": \"vol-1\"}}' ('{{}}' for an empty request)",
                        crate::util::text::json_kind(&req)
                    )));
                }
                // protojson accepts the JSON names (`volumeId`) as well as the proto names.
                let req = crate::csi::protojson::proto_field_names(&req);
                let (_, method) = crate::csi::resolve(&rpc).map_err(|s| {
                    LabError::msg(format!(
                        "CSI {} ({}): {}",
                        s.code.name(),
                        s.code.number(),
                        s.message
                    ))
                })?;
                let n = node.clone();
                let r = self.csi_call(YOU, node.as_deref(), method, req, |d, r| {
                    d.call_json(n.as_deref(), method, &r)
                });
                reply(method, r)
            }
        }
    }

    /// One CSI call that arrived from outside the lab (`csi serve`, a gRPC client on the
    /// socket): run exactly as `csi call RPC 'JSON' [--node NODE]` typed at the prompt, so it
    /// is journaled (a save replays it), faults apply, the control loops run after it, and it
    /// lands in the call log and the wire log as `you`. `request` is protojson with proto
    /// field names. The reply is the driver's response or status, read back from the wire
    /// log; an RPC the driver does not serve is UNIMPLEMENTED and never reaches it (grpc-go
    /// answers so before any handler runs).
    pub fn csi_remote_call(
        &mut self,
        rpc: &str,
        node: Option<&str>,
        request: &Value,
    ) -> RemoteCall {
        let (service, method) = match crate::csi::resolve(rpc) {
            Ok(found) => found,
            Err(s) => {
                return RemoteCall {
                    reply: Err(s),
                    calls: Vec::new(),
                };
            }
        };
        // The socket's node answers the Node service only; Identity and Controller calls go
        // to the controller, as `csi call` without --node sends them.
        let node = node.filter(|_| service == crate::csi::Service::Node);
        let json = request.to_string();
        let quote = |s: &str| {
            shlex::try_quote(s)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| format!("'{}'", s.replace('\'', "")))
        };
        let mut text = format!("csi call {method} {}", quote(&json));
        if let Some(n) = node {
            text.push_str(&format!(" --node {}", quote(n)));
        }
        let cmd = crate::command::Command::Csi(CsiCmd::Call {
            rpc: method.to_string(),
            request: json,
            node: node.map(str::to_string),
        });
        let wire_mark = self.wire.next_seq();
        let call_mark = self.calls.next_seq();
        let result = self.execute_command(&text, cmd);
        let reply = self
            .wire
            .iter()
            .filter(|(seq, _)| *seq >= wire_mark)
            .find_map(|(_, r)| match r {
                crate::record::WireRecord::Csi(c)
                    if c.caller == crate::record::Actor::Component(YOU) && c.rpc == method =>
                {
                    Some(match &c.reply {
                        Ok(resp) => Ok(resp.to_json()),
                        Err(s) => Err(s.clone()),
                    })
                }
                _ => None,
            })
            .unwrap_or_else(|| {
                let why = match &result {
                    Ok(_) => "the call was not recorded".to_string(),
                    Err(e) => e.message.clone(),
                };
                Err(Status::internal(why))
            });
        let calls = (call_mark..self.calls.next_seq())
            .filter_map(|seq| self.calls.get(seq))
            .map(super::views::call_line)
            .collect();
        RemoteCall { reply, calls }
    }

    /// `show volumes [NODE]`: every claim's path from PVC to publish targets.
    pub(crate) fn show_volumes(&self, node: Option<&str>) -> Result<Outcome, LabError> {
        self.show_volumes_seen(node).map(|(out, _)| out)
    }

    /// `show volumes [NODE]`, with the rows it printed.
    pub(super) fn show_volumes_seen(
        &self,
        node: Option<&str>,
    ) -> Result<(Outcome, Vec<crate::engine::volume_view::VolumeRow>), LabError> {
        let rows = crate::engine::volume_view::volume_rows(self);
        let mut out = Outcome::empty();
        let mut shown = Vec::new();
        if rows.is_empty() {
            out.line(Line::styled(
                "No volumes yet — try `pvc create data --size 1Gi` and `pod create web --node node-1 --pvc data`",
                Role::Dim,
            ));
            return Ok((out, shown));
        }
        for r in rows {
            if node.is_some_and(|n| r.node.as_deref() != Some(n)) {
                continue;
            }
            shown.push(r.clone());
            out.line(
                Line::new()
                    .push(format!("pvc/{}", r.pvc), Role::Name)
                    .push(
                        format!(" {}", r.pvc_phase),
                        if r.pvc_phase == "Bound" {
                            Role::Good
                        } else {
                            Role::Warn
                        },
                    )
                    .push(
                        format!(
                            " → pv {} → volume {} {}",
                            r.pv.as_deref().unwrap_or("-"),
                            r.volume_id.as_deref().unwrap_or("-"),
                            r.size
                        ),
                        Role::Plain,
                    ),
            );
            if r.nodes.is_empty() {
                out.line(Line::styled(
                    "    CREATED (not attached to any node)".to_string(),
                    Role::Dim,
                ));
            }
            for n in &r.nodes {
                out.line(
                    Line::new()
                        .push(format!("    {:<8}", n.node), Role::Name)
                        .push(format!("{:<11}", n.state), Role::Good)
                        .push(
                            format!(
                                " va {} attached={}",
                                n.attachment.as_deref().unwrap_or("-"),
                                n.attached
                            ),
                            Role::Dim,
                        ),
                );
                if let Some(s) = &n.staging {
                    out.line(Line::styled(format!("      staged    {s}"), Role::Plain));
                }
                for t in &n.targets {
                    out.line(Line::styled(format!("      published {t}"), Role::Plain));
                }
            }
        }
        Ok((out, shown))
    }
}
