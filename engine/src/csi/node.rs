//! The Node service of one node plugin: stage, publish, stats, expansion, node info.
//!
//! Messages and checks follow `kubernetes-csi/csi-driver-host-path:pkg/hostpath/nodeserver.go`;
//! codes follow the CSI spec (reference E.5), including the second-NodePublishVolume table.
//! The paths are bookkeeping only: the lab mounts nothing.

use super::driver::{
    AccessType, Driver, Publication, Staging, VolumeRecord, go_list, go_quoted_list,
    volume_not_found,
};
use super::status::Status;
use super::types::*;

/// mke2fs's default bytes-per-inode (`inode_ratio` in mke2fs.conf).
const INODE_RATIO: i64 = 16 * 1024;
/// The inodes an empty ext4 uses (1–10 reserved, 11 lost+found).
const RESERVED_INODES: i64 = 11;

/// hostpath's message for a SINGLE_NODE_SINGLE_WRITER volume published twice (nodeserver.go).
pub(crate) const ACCESS_MODE_CONFLICT: &str = "volume uses SINGLE_NODE_SINGLE_WRITER access mode and is already mounted at a different target path";

/// The Node service of the plugin running on one node.
#[derive(Debug)]
pub struct NodeService<'a> {
    driver: &'a mut Driver,
    node_id: String,
}

impl Driver {
    /// The node plugin on `node_id`; UNAVAILABLE when no plugin is registered there (as a
    /// client would find no socket).
    pub fn node(&mut self, node_id: &str) -> Result<NodeService<'_>, Status> {
        if !self.node_registered(node_id) {
            return Err(Status::unavailable(format!(
                "no {} node plugin is registered on node {node_id:?}",
                self.config.name
            )));
        }
        Ok(NodeService {
            driver: self,
            node_id: node_id.to_string(),
        })
    }
}

/// Another node that holds the volume (staged or published) in a way that forbids `mode`
/// here: one of the two modes is not MULTI_NODE_*. This catches a volume attached to two
/// nodes as MULTI_NODE_* and then staged or published with a SINGLE_NODE_* capability.
fn other_node_conflict(vol: &VolumeRecord, node_id: &str, mode: AccessModeType) -> Option<String> {
    let attached = vol
        .attachments
        .iter()
        .filter(|(n, _)| n.as_str() != node_id)
        .map(|(n, a)| (n.clone(), a.capability.mode()));
    let staged = vol
        .staged
        .iter()
        .filter(|(n, _)| n.as_str() != node_id)
        .map(|(n, s)| (n.clone(), s.capability.mode()));
    let published = vol
        .published
        .iter()
        .filter(|(n, _)| n.as_str() != node_id)
        .flat_map(|(n, t)| t.values().map(move |p| (n.clone(), p.capability.mode())));
    attached
        .chain(staged)
        .chain(published)
        .find(|(_, m)| !mode.is_multi_node() || !m.is_multi_node())
        .map(|(n, _)| n)
}

fn not_there(path: &str) -> String {
    format!("Could not get file information from {path}: stat {path}: no such file or directory")
}

impl NodeService<'_> {
    /// The node this plugin runs on.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    fn staging_enabled(&self) -> bool {
        self.driver.has_node_cap(NodeRpcType::StageUnstageVolume)
    }

    fn attach_enabled(&self) -> bool {
        self.driver
            .has_controller_cap(ControllerRpcType::PublishUnpublishVolume)
    }

    /// The volume as this node plugin sees it. One outside the volume's accessible topology
    /// does not have it: csi-driver-host-path keeps a volume in the state of the node that
    /// created it (its topology), so any other node's plugin answers NOT_FOUND, with the
    /// message of an unknown volume (pkg/hostpath/nodeserver.go, every RPC's
    /// `hp.state.GetVolumeByID`; pkg/state/state.go). The spec agrees: "Volume does not
    /// exist" is 5 NOT_FOUND for each node RPC. Volumes without topology are seen everywhere.
    fn volume(&self, volume_id: &str) -> Result<&VolumeRecord, Status> {
        let vol = self.driver.get_volume(volume_id)?;
        if self.driver.outside_topology(vol, &self.node_id) {
            return Err(volume_not_found(volume_id));
        }
        Ok(vol)
    }

    /// True when `path` is where the volume is staged or published on this node.
    fn holds_path(&self, vol: &VolumeRecord, path: &str) -> bool {
        vol.staged
            .get(&self.node_id)
            .is_some_and(|s| s.path == path)
            || vol
                .published
                .get(&self.node_id)
                .is_some_and(|t| t.contains_key(path))
    }

    /// NodeStageVolume: mount the device at the node's staging path.
    pub(crate) fn node_stage_volume(
        &mut self,
        req: NodeStageVolumeRequest,
    ) -> Result<NodeStageVolumeResponse, Status> {
        self.driver
            .require_node_cap(NodeRpcType::StageUnstageVolume, "NodeStageVolume")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        if req.staging_target_path.is_empty() {
            return Err(Status::invalid_argument("Target path missing in request"));
        }
        let Some(cap) = req.volume_capability else {
            return Err(Status::invalid_argument(
                "Volume Capability missing in request",
            ));
        };
        let attach = self.attach_enabled();
        let node = self.node_id.clone();
        let vol = self.volume(&req.volume_id)?;
        // Staged before ControllerPublish. The spec is silent (it only binds the CO: NodeStage
        // comes after a successful ControllerPublishVolume); hostpath answers INTERNAL
        // (pkg/hostpath/nodeserver.go NodeStageVolume, `EnableAttach && !vol.Attached`).
        if attach && !vol.attachments.contains_key(&node) {
            return Err(Status::internal(format!(
                "ControllerPublishVolume must be called on volume '{}' before staging on node",
                vol.volume_id
            )));
        }
        if let Some(st) = vol.staged.get(&node) {
            if st.path == req.staging_target_path {
                if st.capability == cap {
                    return Ok(NodeStageVolumeResponse {});
                }
                return Err(Status::already_exists(format!(
                    "volume {:?} is already staged at {:?} with an incompatible volume capability",
                    vol.volume_id, st.path
                )));
            }
            return Err(Status::failed_precondition(format!(
                "volume {:?} is already staged at {}",
                vol.volume_id,
                go_list(std::slice::from_ref(&st.path))
            )));
        }
        check_access_type(vol, &cap, "stage")?;
        if let Some(other) = other_node_conflict(vol, &node, cap.mode()) {
            return Err(Status::failed_precondition(format!(
                "volume {:?} is in use on node {other:?} and access mode {} is not MULTI_NODE",
                vol.volume_id,
                cap.mode()
            )));
        }
        let vol = self.driver.get_volume_mut(&req.volume_id)?;
        vol.staged.insert(
            node,
            Staging {
                path: req.staging_target_path,
                capability: cap,
            },
        );
        Ok(NodeStageVolumeResponse {})
    }

    /// NodeUnstageVolume: not staged there → OK; still published → INTERNAL (hostpath).
    pub(crate) fn node_unstage_volume(
        &mut self,
        req: NodeUnstageVolumeRequest,
    ) -> Result<NodeUnstageVolumeResponse, Status> {
        self.driver
            .require_node_cap(NodeRpcType::StageUnstageVolume, "NodeUnstageVolume")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        if req.staging_target_path.is_empty() {
            return Err(Status::invalid_argument("Target path missing in request"));
        }
        let node = self.node_id.clone();
        let vol = self.volume(&req.volume_id)?;
        if vol
            .staged
            .get(&node)
            .is_none_or(|s| s.path != req.staging_target_path)
        {
            return Ok(NodeUnstageVolumeResponse {});
        }
        // Unstaged while still published. The spec is silent (NodeUnstageVolume's table has
        // only NOT_FOUND; the CO calls it after every NodeUnpublishVolume); hostpath answers
        // INTERNAL (pkg/hostpath/nodeserver.go NodeUnstageVolume, `!vol.Published.Empty()`).
        let targets = vol.targets_on(&node);
        if !targets.is_empty() {
            return Err(Status::internal(format!(
                "volume {:?} is still published at {} on node {node:?}",
                vol.volume_id,
                go_quoted_list(&targets)
            )));
        }
        let vol = self.driver.get_volume_mut(&req.volume_id)?;
        vol.staged.remove(&node);
        Ok(NodeUnstageVolumeResponse {})
    }

    /// NodePublishVolume: bind-mount into a pod's target path (second-publish table of the
    /// spec, reference E.5).
    pub(crate) fn node_publish_volume(
        &mut self,
        req: NodePublishVolumeRequest,
    ) -> Result<NodePublishVolumeResponse, Status> {
        let Some(cap) = req.volume_capability.clone() else {
            return Err(Status::invalid_argument(
                "Volume capability missing in request",
            ));
        };
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        if req.target_path.is_empty() {
            return Err(Status::invalid_argument("Target path missing in request"));
        }
        if cap.block.is_some() && cap.mount.is_some() {
            return Err(Status::invalid_argument(
                "cannot have both block and mount access type",
            ));
        }
        let staging = self.staging_enabled();
        if staging && req.staging_target_path.is_empty() {
            // Spec: FAILED_PRECONDITION when STAGE_UNSTAGE_VOLUME is advertised and
            // staging_target_path is not set.
            return Err(Status::failed_precondition(
                "Staging target path missing in request",
            ));
        }
        let attach = self.attach_enabled();
        let snmw = self.driver.has_node_cap(NodeRpcType::SingleNodeMultiWriter);
        let node = self.node_id.clone();
        let mode = cap.mode();
        let vol = self.volume(&req.volume_id)?;
        let here = vol.published.get(&node);
        let other_targets: Vec<String> = here
            .map(|t| {
                t.keys()
                    .filter(|k| **k != req.target_path)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if mode == AccessModeType::SingleNodeSingleWriter && !other_targets.is_empty() {
            return Err(Status::failed_precondition(ACCESS_MODE_CONFLICT));
        }
        if staging {
            // Published before NodeStage. The spec's FAILED_PRECONDITION is for a missing
            // staging_target_path and is silent on a volume never staged; hostpath answers
            // FAILED_PRECONDITION, and INVALID_ARGUMENT for another staging path
            // (pkg/hostpath/nodeserver.go NodePublishVolume).
            match vol.staged.get(&node) {
                None => {
                    return Err(Status::failed_precondition(format!(
                        "volume {:?} must be staged before publishing",
                        vol.volume_id
                    )));
                }
                Some(st) if st.path != req.staging_target_path => {
                    return Err(Status::invalid_argument(format!(
                        "volume {:?} was staged at {}, not {:?}",
                        vol.volume_id,
                        go_list(std::slice::from_ref(&st.path)),
                        req.staging_target_path
                    )));
                }
                Some(_) => {}
            }
        } else if attach && !vol.attachments.contains_key(&node) {
            // Without STAGE_UNSTAGE_VOLUME, NodePublish is the first node RPC, so it asks
            // NodeStage's question (hostpath always stages and has no such check here; the
            // spec is silent) with NodeStage's code.
            return Err(Status::internal(format!(
                "ControllerPublishVolume must be called on volume '{}' before publishing on node",
                vol.volume_id
            )));
        }
        check_access_type(vol, &cap, "publish")?;

        let publication = Publication {
            staging_target_path: req.staging_target_path.clone(),
            readonly: req.readonly,
            capability: cap.clone(),
            publish_context: req.publish_context.clone(),
            volume_context: req.volume_context.clone(),
        };
        if let Some(existing) = here.and_then(|t| t.get(&req.target_path)) {
            // T1 = T2: OK when P1 = P2, else ALREADY_EXISTS.
            if *existing == publication {
                return Ok(NodePublishVolumeResponse {});
            }
            return Err(Status::already_exists(format!(
                "volume {:?} is already published at {:?} with different arguments",
                vol.volume_id, req.target_path
            )));
        }
        if !other_targets.is_empty() {
            // T1 ≠ T2: only MULTI_NODE_* (and SINGLE_NODE_MULTI_WRITER, when the node plugin
            // supports it) may be published at several targets on one node.
            let shareable = |m: AccessModeType| {
                m.is_multi_node() || (snmw && m == AccessModeType::SingleNodeMultiWriter)
            };
            let existing_modes = here
                .map(|t| t.values().map(|p| p.capability.mode()).collect::<Vec<_>>())
                .unwrap_or_default();
            if let Some(m) = std::iter::once(mode)
                .chain(existing_modes)
                .find(|m| !shareable(*m))
            {
                return Err(Status::failed_precondition(format!(
                    "volume {:?} uses access mode {m} and is already published at {}",
                    vol.volume_id,
                    go_quoted_list(&other_targets)
                )));
            }
        }
        if let Some(other) = other_node_conflict(vol, &node, mode) {
            return Err(Status::failed_precondition(format!(
                "volume {:?} is in use on node {other:?} and access mode {mode} is not MULTI_NODE",
                vol.volume_id
            )));
        }
        let vol = self.driver.get_volume_mut(&req.volume_id)?;
        vol.published
            .entry(node)
            .or_default()
            .insert(req.target_path, publication);
        Ok(NodePublishVolumeResponse {})
    }

    /// NodeUnpublishVolume: idempotent; unknown volume → NOT_FOUND (hostpath, spec).
    pub(crate) fn node_unpublish_volume(
        &mut self,
        req: NodeUnpublishVolumeRequest,
    ) -> Result<NodeUnpublishVolumeResponse, Status> {
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        if req.target_path.is_empty() {
            return Err(Status::invalid_argument("Target path missing in request"));
        }
        let node = self.node_id.clone();
        self.volume(&req.volume_id)?;
        let vol = self.driver.get_volume_mut(&req.volume_id)?;
        if let Some(targets) = vol.published.get_mut(&node) {
            targets.remove(&req.target_path);
            if targets.is_empty() {
                vol.published.remove(&node);
            }
        }
        Ok(NodeUnpublishVolumeResponse {})
    }

    /// NodeGetVolumeStats: byte usage of the filesystem at a staged or published path.
    pub(crate) fn node_get_volume_stats(
        &mut self,
        req: NodeGetVolumeStatsRequest,
    ) -> Result<NodeGetVolumeStatsResponse, Status> {
        self.driver
            .require_node_cap(NodeRpcType::GetVolumeStats, "NodeGetVolumeStats")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID not provided"));
        }
        if req.volume_path.is_empty() {
            return Err(Status::invalid_argument("Volume Path not provided"));
        }
        let vol = self.volume(&req.volume_id)?;
        if !self.holds_path(vol, &req.volume_path) {
            return Err(Status::not_found(not_there(&req.volume_path)));
        }
        let total = vol.fs_size_bytes;
        let used = vol.used_bytes.clamp(0, total);
        // hostpath reports BYTES and INODES from statfs. The lab's filesystem is an ext4 made
        // with mke2fs's default inode ratio (one inode per 16 KiB); an empty one uses its 11
        // reserved inodes (lost+found is inode 11).
        let inodes = total / INODE_RATIO;
        let inodes_used = RESERVED_INODES.min(inodes);
        Ok(NodeGetVolumeStatsResponse {
            usage: vec![
                VolumeUsage {
                    available: total - used,
                    total,
                    used,
                    unit: UsageUnit::Bytes,
                },
                VolumeUsage {
                    available: inodes - inodes_used,
                    total: inodes,
                    used: inodes_used,
                    unit: UsageUnit::Inodes,
                },
            ],
            volume_condition: None,
        })
    }

    /// NodeExpandVolume: grow the filesystem to the device size (or grow both when the
    /// controller cannot expand).
    pub(crate) fn node_expand_volume(
        &mut self,
        req: NodeExpandVolumeRequest,
    ) -> Result<NodeExpandVolumeResponse, Status> {
        self.driver
            .require_node_cap(NodeRpcType::ExpandVolume, "NodeExpandVolume")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID not provided"));
        }
        let vol = self.volume(&req.volume_id)?;
        if req.volume_path.is_empty() {
            return Err(Status::invalid_argument("Volume path not provided"));
        }
        let range = req.capacity_range.unwrap_or_default();
        if range.required_bytes < 0 || range.limit_bytes < 0 {
            return Err(Status::invalid_argument("cannot have negative capacity"));
        }
        let target = match (range.required_bytes, range.limit_bytes) {
            (0, 0) => vol.capacity_bytes,
            (0, l) => l,
            (r, _) => r,
        };
        let max = self.driver.config.max_volume_size;
        if target > max {
            return Err(Status::out_of_range(format!(
                "Requested capacity {target} exceeds maximum allowed {max}"
            )));
        }
        if !self.holds_path(vol, &req.volume_path) {
            return Err(Status::invalid_argument(not_there(&req.volume_path)));
        }
        if let Some(cap) = &req.volume_capability {
            check_expand_access_type(vol, cap)?;
        }
        let controller_expands = self
            .driver
            .has_controller_cap(ControllerRpcType::ExpandVolume);
        let grow_device = target.saturating_sub(vol.capacity_bytes).max(0);
        if grow_device > 0 {
            if controller_expands {
                return Err(Status::out_of_range(format!(
                    "Requested capacity {target} exceeds volume capacity {}; call ControllerExpandVolume first",
                    vol.capacity_bytes
                )));
            }
            if grow_device > self.driver.available_capacity() {
                return Err(Status::resource_exhausted(format!(
                    "requested capacity {target} exceeds remaining capacity"
                )));
            }
        }
        let vol = if grow_device > 0 {
            self.driver.set_volume_capacity(&req.volume_id, target)?
        } else {
            self.driver.get_volume_mut(&req.volume_id)?
        };
        vol.fs_size_bytes = vol.fs_size_bytes.max(vol.capacity_bytes);
        Ok(NodeExpandVolumeResponse {
            capacity_bytes: vol.fs_size_bytes,
        })
    }

    /// NodeGetCapabilities: the configured node RPCs.
    pub(crate) fn node_get_capabilities(
        &mut self,
        _req: NodeGetCapabilitiesRequest,
    ) -> Result<NodeGetCapabilitiesResponse, Status> {
        Ok(NodeGetCapabilitiesResponse {
            capabilities: self
                .driver
                .config
                .node_capabilities
                .iter()
                .map(|c| NodeServiceCapability {
                    rpc: Some(NodeRpc { kind: *c }),
                })
                .collect(),
        })
    }

    /// NodeGetInfo: node ID, attach limit and topology (with VOLUME_ACCESSIBILITY_CONSTRAINTS).
    pub(crate) fn node_get_info(
        &mut self,
        _req: NodeGetInfoRequest,
    ) -> Result<NodeGetInfoResponse, Status> {
        let topo = self
            .driver
            .has_plugin_service(ServiceType::VolumeAccessibilityConstraints);
        let Some(n) = self.driver.registered_node(&self.node_id) else {
            return Err(Status::unavailable(format!(
                "node plugin on {:?} is gone",
                self.node_id
            )));
        };
        Ok(NodeGetInfoResponse {
            node_id: n.node_id.clone(),
            max_volumes_per_node: n.max_volumes_per_node,
            accessible_topology: topo.then(|| Topology {
                segments: n.segments.clone(),
            }),
        })
    }
}

/// NodeExpandVolume: the access type the CO says it uses must be the volume's (spec,
/// NodeExpandVolume Errors: "Exceeds capabilities", 3 INVALID_ARGUMENT). hostpath takes the
/// access type from volume_path instead (os.Stat: a directory, or a device) and refuses a
/// mismatch with these two messages (pkg/hostpath/nodeserver.go NodeExpandVolume); the spec
/// lets a plugin use either (volume_capability: "If volume_capability is omitted the SP MAY
/// determine access_type from given volume_path"). The lab's paths are bookkeeping with no
/// file type, so it checks the capability; one without an access type, or none at all,
/// passes (hostpath would go by the path).
fn check_expand_access_type(vol: &VolumeRecord, cap: &VolumeCapability) -> Result<(), Status> {
    match (cap.block.is_some(), cap.mount.is_some(), vol.access_type) {
        (true, false, AccessType::Mount) => Err(Status::invalid_argument(format!(
            "Volume {} is not a block device",
            vol.volume_id
        ))),
        (false, true, AccessType::Block) => Err(Status::invalid_argument(format!(
            "Volume {} is not a directory",
            vol.volume_id
        ))),
        _ => Ok(()),
    }
}

/// Block/mount of the capability must match the volume (nodeserver.go NodePublishVolume).
pub(super) fn check_access_type(
    vol: &VolumeRecord,
    cap: &VolumeCapability,
    verb: &str,
) -> Result<(), Status> {
    match (cap.block.is_some(), cap.mount.is_some()) {
        (true, true) => Err(Status::invalid_argument(
            "cannot have both block and mount access type",
        )),
        (false, false) => Err(Status::invalid_argument(
            "cannot have both mount and block access type be undefined",
        )),
        (true, false) if vol.access_type != AccessType::Block => Err(Status::invalid_argument(
            format!("cannot {verb} a non-block volume as block volume"),
        )),
        (false, true) if vol.access_type != AccessType::Mount => Err(Status::invalid_argument(
            format!("cannot {verb} a non-mount volume as mount volume"),
        )),
        _ => Ok(()),
    }
}
