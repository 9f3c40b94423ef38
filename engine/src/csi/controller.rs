//! The Controller service: volumes, attachments, snapshots, expansion.
//!
//! Messages and checks follow `kubernetes-csi/csi-driver-host-path:pkg/hostpath/
//! controllerserver.go` and `hostpath.go`; codes follow the CSI spec (reference E.5/E.6).
//! Every check runs before any state changes, so a rejected call changes nothing.

use super::driver::{
    AccessType, Attachment, Driver, SnapshotRecord, VolumeRecord, go_list, segments_match,
};
use super::protojson::binary_quantity;
use super::status::Status;
use super::types::*;
use std::collections::BTreeMap;

/// Parses a paging token: empty = 0, otherwise a non-negative decimal index.
fn parse_token(token: &str) -> Option<usize> {
    if token.is_empty() {
        Some(0)
    } else if token.bytes().all(|b| b.is_ascii_digit()) {
        token.parse::<u32>().ok().map(|n| n as usize)
    } else {
        None
    }
}

/// The page `[start, start+max)` of `len` items and the next token ("" on the last page).
fn page(start: usize, max_entries: i32, len: usize) -> (usize, usize, String) {
    let end = if max_entries <= 0 {
        len
    } else {
        start.saturating_add(max_entries as usize).min(len)
    };
    let next = if end < len {
        end.to_string()
    } else {
        String::new()
    };
    (start, end, next)
}

impl Driver {
    fn exhausted(&self, requested: i64) -> Status {
        let used = self
            .config
            .total_capacity
            .saturating_sub(self.available_capacity());
        Status::resource_exhausted(format!(
            "requested capacity {requested} exceeds remaining capacity, {} out of {} already used",
            binary_quantity(used),
            binary_quantity(self.config.total_capacity)
        ))
    }

    /// Topologies requested, preferred first.
    fn candidate_topologies(req: Option<&TopologyRequirement>) -> Vec<&Topology> {
        match req {
            Some(r) => r.preferred.iter().chain(r.requisite.iter()).collect(),
            None => Vec::new(),
        }
    }

    /// Picks where a new volume lives. The lab's driver is one controller over node-local
    /// storage, as csi-driver-host-path is (`pkg/hostpath/controllerserver.go` CreateVolume
    /// answers `accessible_topology` = `{topology.hostpath.csi/node: <its node>}`): a
    /// volume lives on one node, the first preferred topology a registered node matches
    /// (else the first requisite one), and its accessible_topology is that node's
    /// segments. external-provisioner always sends requirements to this driver (see
    /// `crate::storage::topology`), so every provisioned volume has a node.
    ///
    /// The access mode does not matter, as in csi-driver-host-path (its CreateVolume does not
    /// look at it; the lab refuses only UNKNOWN): an RWX or ROX volume lives on one node
    /// too, and ControllerPublish to any other node is NOT_FOUND. With no requirements (a raw
    /// `csi create-volume`) the volume is left reachable from every node: the spec lets the
    /// CO "assume the volume is equally accessible from all nodes" when accessible_topology
    /// is empty.
    fn pick_topology(&self, req: Option<&TopologyRequirement>) -> Result<Vec<Topology>, Status> {
        if !self.has_plugin_service(ServiceType::VolumeAccessibilityConstraints) {
            return Ok(Vec::new());
        }
        let candidates = Self::candidate_topologies(req);
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let node_for = |t: &Topology| {
            self.nodes
                .values()
                .find(|n| segments_match(&n.segments, &t.segments))
        };
        for t in candidates {
            if let Some(n) = node_for(t) {
                return Ok(vec![Topology {
                    segments: n.segments.clone(),
                }]);
            }
        }
        Err(Status::resource_exhausted(
            "Unable to provision in accessible_topology: no node matches the accessibility requirements",
        ))
    }

    /// A clone's data is on its source's node(s): the clone lives there too, if the
    /// requirements allow one of them (node-local drivers such as TopoLVM confine a clone
    /// to its source's node; hostpath has only its own node). Outside the requirements the
    /// request cannot be met: RESOURCE_EXHAUSTED, the spec's code for an
    /// accessibility_requirements the plugin cannot satisfy.
    fn clone_topology(
        &self,
        req: Option<&TopologyRequirement>,
        src: &VolumeRecord,
    ) -> Result<Vec<Topology>, Status> {
        let candidates = Self::candidate_topologies(req);
        if candidates.is_empty() {
            return Ok(src.accessible_topology.clone());
        }
        let kept: Vec<Topology> = src
            .accessible_topology
            .iter()
            .filter(|have| {
                candidates
                    .iter()
                    .any(|want| segments_match(&have.segments, &want.segments))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            return Err(Status::resource_exhausted(format!(
                "Unable to provision in accessible_topology: source volume {} lives on node {}, outside the accessibility requirements",
                src.volume_id,
                src.topology_node().unwrap_or_default()
            )));
        }
        Ok(kept)
    }

    /// CreateVolume: provision a volume, idempotent by name.
    pub(crate) fn create_volume(
        &mut self,
        req: CreateVolumeRequest,
    ) -> Result<CreateVolumeResponse, Status> {
        self.require_controller_cap(ControllerRpcType::CreateDeleteVolume, "CreateVolume")?;
        if !req.mutable_parameters.is_empty()
            && !self.has_controller_cap(ControllerRpcType::ModifyVolume)
        {
            return Err(Status::invalid_argument(
                "unsupported capability MODIFY_VOLUME",
            ));
        }
        if req.name.is_empty() {
            return Err(Status::invalid_argument("Name missing in request"));
        }
        if req.volume_capabilities.is_empty() {
            return Err(Status::invalid_argument(
                "Volume Capabilities missing in request",
            ));
        }
        // Each capability names an access mode and exactly one access type (spec: "REQUIRED"
        // fields; a missing one is INVALID_ARGUMENT). hostpath does not check; a driver that
        // took UNKNOWN would promise nothing about sharing.
        for (i, c) in req.volume_capabilities.iter().enumerate() {
            if c.mode() == AccessModeType::Unknown {
                return Err(Status::invalid_argument(format!(
                    "volume_capabilities[{i}]: access_mode is required and cannot be UNKNOWN"
                )));
            }
            if c.block.is_none() && c.mount.is_none() {
                return Err(Status::invalid_argument(format!(
                    "volume_capabilities[{i}]: one of access type block or mount is required"
                )));
            }
        }
        let any_block = req.volume_capabilities.iter().any(|c| c.block.is_some());
        let any_mount = req.volume_capabilities.iter().any(|c| c.mount.is_some());
        if any_block && any_mount {
            return Err(Status::invalid_argument(
                "cannot have both block and mount access type",
            ));
        }
        let access_type = if any_block {
            AccessType::Block
        } else {
            AccessType::Mount
        };
        let range = req.capacity_range.unwrap_or_default();
        let (required, limit) = (range.required_bytes, range.limit_bytes);
        if required < 0 || limit < 0 {
            return Err(Status::invalid_argument("cannot have negative capacity"));
        }
        if limit > 0 && required > limit {
            return Err(Status::invalid_argument("capacity cannot exceed limit"));
        }
        let mut capacity = required;
        if capacity == 0 && limit > 0 {
            capacity = limit;
        }

        // Same name: the same volume if compatible, else ALREADY_EXISTS.
        if let Some(ex) = self.volume_by_name(&req.name) {
            return self.existing_volume(ex, &req, capacity, limit, access_type);
        }

        // Content source: must exist and be supported.
        let source_size = match &req.volume_content_source {
            None => None,
            Some(src) => Some(self.check_source(src, access_type)?),
        };
        if capacity == 0 {
            capacity = source_size.unwrap_or(self.config.default_volume_size);
        }
        if capacity > self.config.max_volume_size {
            return Err(Status::out_of_range(format!(
                "Requested capacity {capacity} exceeds maximum allowed {}",
                self.config.max_volume_size
            )));
        }
        if let (Some(src), Some(size)) = (&req.volume_content_source, source_size)
            && size > capacity
        {
            // hostpath.go loadFromSnapshot/loadFromVolume say InvalidArgument; the spec's
            // code for a capacity the plugin cannot honour is OUT_OF_RANGE.
            let msg = match (&src.snapshot, &src.volume) {
                (Some(s), _) => format!(
                    "snapshot {} size {size} is greater than requested volume size {capacity}",
                    s.snapshot_id
                ),
                (_, Some(v)) => format!(
                    "volume {} size {size} is greater than requested volume size {capacity}",
                    v.volume_id
                ),
                _ => format!("source size {size} is greater than requested volume size {capacity}"),
            };
            return Err(Status::out_of_range(msg));
        }
        if capacity > self.available_capacity() {
            return Err(self.exhausted(capacity));
        }
        let source_volume = req
            .volume_content_source
            .as_ref()
            .and_then(|c| c.volume.as_ref())
            .and_then(|v| self.volumes.get(&v.volume_id));
        let accessible_topology = match source_volume {
            Some(src) if !src.accessible_topology.is_empty() => {
                self.clone_topology(req.accessibility_requirements.as_ref(), src)?
            }
            _ => self.pick_topology(req.accessibility_requirements.as_ref())?,
        };

        let volume_id = self.new_id("vol", &req.name);
        let record = VolumeRecord {
            name: req.name.clone(),
            volume_id: volume_id.clone(),
            capacity_bytes: capacity,
            fs_size_bytes: capacity,
            used_bytes: 0,
            access_type,
            access_modes: requested_modes(&req),
            parameters: req.parameters.clone(),
            content_source: req.volume_content_source.clone(),
            accessible_topology,
            attachments: BTreeMap::new(),
            staged: BTreeMap::new(),
            published: BTreeMap::new(),
        };
        let volume = record.to_volume();
        self.insert_volume(record);
        Ok(CreateVolumeResponse {
            volume: Some(volume),
        })
    }

    /// Validates a content source and returns its size.
    fn check_source(
        &self,
        src: &VolumeContentSource,
        access_type: AccessType,
    ) -> Result<i64, Status> {
        match (&src.snapshot, &src.volume) {
            (Some(s), None) => {
                if !self.has_controller_cap(ControllerRpcType::CreateDeleteSnapshot) {
                    return Err(Status::invalid_argument(
                        "unsupported capability CREATE_DELETE_SNAPSHOT",
                    ));
                }
                let snap = self.get_snapshot(&s.snapshot_id)?;
                Ok(snap.snapshot.size_bytes)
            }
            (None, Some(v)) => {
                if !self.has_controller_cap(ControllerRpcType::CloneVolume) {
                    return Err(Status::invalid_argument(
                        "unsupported capability CLONE_VOLUME",
                    ));
                }
                let vol = self.get_volume(&v.volume_id)?;
                if vol.access_type != access_type {
                    return Err(Status::invalid_argument(format!(
                        "volume {} mode is not compatible with requested mode",
                        v.volume_id
                    )));
                }
                Ok(vol.capacity_bytes)
            }
            _ => Err(Status::invalid_argument(
                "volume content source must set exactly one of snapshot or volume",
            )),
        }
    }

    /// CreateVolume for a name that already exists (controllerserver.go, same-name branch).
    fn existing_volume(
        &self,
        ex: &VolumeRecord,
        req: &CreateVolumeRequest,
        capacity: i64,
        limit: i64,
        access_type: AccessType,
    ) -> Result<CreateVolumeResponse, Status> {
        let name = &req.name;
        if ex.capacity_bytes < capacity || (limit > 0 && ex.capacity_bytes > limit) {
            return Err(Status::already_exists(format!(
                "Volume with the same name: {name} but with different size already exist"
            )));
        }
        if req.volume_content_source != ex.content_source {
            let existing_is_snapshot = ex
                .content_source
                .as_ref()
                .is_some_and(|s| s.snapshot.is_some());
            let requested_is_snapshot = req
                .volume_content_source
                .as_ref()
                .is_some_and(|s| s.snapshot.is_some());
            let what = if existing_is_snapshot || requested_is_snapshot {
                "snapshot"
            } else {
                "volume"
            };
            return Err(Status::already_exists(format!(
                "existing volume source {what} id not matching"
            )));
        }
        if ex.access_type != access_type {
            return Err(Status::already_exists(format!(
                "Volume with the same name: {name} but with different access type already exist"
            )));
        }
        // The spec: a volume of that name that is not compatible with the request (its
        // capabilities included) is ALREADY_EXISTS.
        if ex.access_modes != requested_modes(req) {
            return Err(Status::already_exists(format!(
                "Volume with the same name: {name} but with different access mode already exist"
            )));
        }
        if ex.parameters != req.parameters {
            return Err(Status::already_exists(format!(
                "Volume with the same name: {name} but with different parameters already exist"
            )));
        }
        let candidates = Self::candidate_topologies(req.accessibility_requirements.as_ref());
        if self.has_plugin_service(ServiceType::VolumeAccessibilityConstraints)
            && !candidates.is_empty()
        {
            let fits = ex.accessible_topology.iter().any(|have| {
                candidates
                    .iter()
                    .any(|want| segments_match(&have.segments, &want.segments))
            });
            if !fits {
                return Err(Status::already_exists(format!(
                    "Volume with the same name: {name} but with different topology already exist"
                )));
            }
        }
        Ok(CreateVolumeResponse {
            volume: Some(ex.to_volume()),
        })
    }

    /// DeleteVolume: unknown → OK; in use → FAILED_PRECONDITION, the spec's row "Volume in
    /// use" (hostpath says INTERNAL, pkg/hostpath/controllerserver.go DeleteVolume; where the
    /// spec has a row, its code wins).
    pub fn delete_volume(
        &mut self,
        req: DeleteVolumeRequest,
    ) -> Result<DeleteVolumeResponse, Status> {
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        self.require_controller_cap(ControllerRpcType::CreateDeleteVolume, "DeleteVolume")?;
        let Some(vol) = self.volumes.get(&req.volume_id) else {
            return Ok(DeleteVolumeResponse {});
        };
        if vol.in_use() {
            let mut nodes: Vec<String> = vol.attachments.keys().cloned().collect();
            nodes.extend(vol.staged.keys().cloned());
            nodes.extend(
                vol.published
                    .iter()
                    .filter(|(_, t)| !t.is_empty())
                    .map(|(n, _)| n.clone()),
            );
            nodes.sort();
            nodes.dedup();
            let staged: Vec<String> = vol.staged.values().map(|s| s.path.clone()).collect();
            let published: Vec<String> = vol
                .published
                .values()
                .flat_map(|t| t.keys().cloned())
                .collect();
            return Err(Status::failed_precondition(format!(
                "Volume '{}' is still used (attached: {}, staged: {}, published: {}) by '{}' node",
                vol.volume_id,
                !vol.attachments.is_empty(),
                go_list(&staged),
                go_list(&published),
                nodes.join(",")
            )));
        }
        self.remove_volume(&req.volume_id);
        Ok(DeleteVolumeResponse {})
    }

    /// ControllerPublishVolume: attach a volume to a node.
    pub(crate) fn controller_publish_volume(
        &mut self,
        req: ControllerPublishVolumeRequest,
    ) -> Result<ControllerPublishVolumeResponse, Status> {
        self.require_controller_cap(
            ControllerRpcType::PublishUnpublishVolume,
            "ControllerPublishVolume",
        )?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID cannot be empty"));
        }
        if req.node_id.is_empty() {
            return Err(Status::invalid_argument("Node ID cannot be empty"));
        }
        let Some(cap) = req.volume_capability.clone() else {
            return Err(Status::invalid_argument(
                "Volume Capabilities cannot be empty",
            ));
        };
        if req.readonly && !self.has_controller_cap(ControllerRpcType::PublishReadonly) {
            return Err(Status::invalid_argument(
                "unsupported capability PUBLISH_READONLY",
            ));
        }
        let Some(node) = self.nodes.get(&req.node_id) else {
            return Err(Status::not_found(format!(
                "node id {} does not exist in the nodes list",
                req.node_id
            )));
        };
        let max = node.max_volumes_per_node;
        let vol = self.get_volume(&req.volume_id)?;
        // A node outside the volume's accessible topology. The spec's error table has no row
        // for it (the CO is to place workloads by topology); csi-driver-host-path answers
        // NOT_FOUND: its controller serves one node, a volume's topology is that node, and any
        // other node_id is refused (pkg/hostpath/controllerserver.go ControllerPublishVolume,
        // `req.NodeId != hp.config.NodeID`). The lab's one controller asks the same of the
        // volume's node. Volumes without topology (no accessibility_requirements) pass.
        if self.outside_topology(vol, &req.node_id) {
            return Err(Status::not_found(format!(
                "Not matching Node ID {} to hostpath Node ID {}",
                req.node_id,
                vol.topology_node().unwrap_or_default()
            )));
        }
        // A capability the volume was not created with (block for a mount volume, or the
        // other way round) is INVALID_ARGUMENT, as NodeStage/NodePublish answer it.
        super::node::check_access_type(vol, &cap, "publish")?;
        let publish_context: StringMap =
            [("device".to_string(), format!("/dev/lab/{}", vol.volume_id))]
                .into_iter()
                .collect();

        if let Some(att) = vol.attachments.get(&req.node_id) {
            if att.readonly != req.readonly {
                return Err(Status::already_exists(
                    "Volume published but has incompatible readonly flag",
                ));
            }
            if att.capability != cap {
                return Err(Status::already_exists(
                    "Volume published but has incompatible volume capability",
                ));
            }
            return Ok(ControllerPublishVolumeResponse {
                publish_context: att.publish_context.clone(),
            });
        }
        let mode = cap.mode();
        // Every mode the volume is used with on another node: attached, staged, published.
        let mut elsewhere = vol
            .attachments
            .iter()
            .map(|(n, a)| (n, a.capability.mode()))
            .chain(vol.staged.iter().map(|(n, s)| (n, s.capability.mode())))
            .chain(
                vol.published
                    .iter()
                    .flat_map(|(n, t)| t.values().map(move |p| (n, p.capability.mode()))),
            )
            .filter(|(n, _)| **n != req.node_id);
        if let Some((other, other_mode)) =
            elsewhere.find(|(_, m)| !mode.is_multi_node() || !m.is_multi_node())
        {
            let single = if mode.is_multi_node() {
                other_mode
            } else {
                mode
            };
            return Err(Status::failed_precondition(format!(
                "Volume '{}' is already published to node '{other}' and access mode {single} does not allow publishing to another node",
                vol.volume_id
            )));
        }
        let attached_here = self
            .attached_per_node
            .get(&req.node_id)
            .copied()
            .unwrap_or(0);
        debug_assert_eq!(
            attached_here,
            self.volumes
                .values()
                .filter(|v| v.attachments.contains_key(&req.node_id))
                .count() as i64,
            "attached_per_node is stale"
        );
        if max > 0 && attached_here >= max {
            return Err(Status::resource_exhausted(format!(
                "Cannot attach any more volumes to this node ('{}')",
                req.node_id
            )));
        }
        let vol = self.get_volume_mut(&req.volume_id)?;
        let previous = vol.attachments.insert(
            req.node_id.clone(),
            Attachment {
                readonly: req.readonly,
                capability: cap,
                publish_context: publish_context.clone(),
            },
        );
        if previous.is_none() {
            *self
                .attached_per_node
                .entry(req.node_id.clone())
                .or_default() += 1;
        }
        Ok(ControllerPublishVolumeResponse { publish_context })
    }

    /// ControllerUnpublishVolume: detach; not attached, unknown volume or node → OK.
    pub(crate) fn controller_unpublish_volume(
        &mut self,
        req: ControllerUnpublishVolumeRequest,
    ) -> Result<ControllerUnpublishVolumeResponse, Status> {
        self.require_controller_cap(
            ControllerRpcType::PublishUnpublishVolume,
            "ControllerUnpublishVolume",
        )?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID cannot be empty"));
        }
        let Some(vol) = self.volumes.get(&req.volume_id) else {
            // A volume that does not exist is not published (external-attacher#165).
            return Ok(ControllerUnpublishVolumeResponse {});
        };
        // A node the volume is not attached to, in or out of its topology, is OK. The spec
        // is not silent here ("If the volume … is not attached to the node corresponding to
        // the node_id, the Plugin MUST reply 0 OK"), so the lab follows it rather than
        // csi-driver-host-path, which since v1.10.0 (the commit that added the
        // ControllerPublishVolume NOT_FOUND modelled above) answers NOT_FOUND `Node ID %s
        // does not match to expected Node ID %s` for any node but its own. The lab takes
        // hostpath's answer only where the spec is silent, as it is for a publish outside the
        // topology. With hostpath's answer external-attacher, which unpublishes every
        // attachment it holds a finalizer on (also one whose publish failed), would retry
        // forever and the VolumeAttachment would never go.
        let nodes: Vec<String> = if req.node_id.is_empty() {
            vol.attachments.keys().cloned().collect()
        } else {
            vec![req.node_id.clone()]
        };
        // Unpublished while staged or published on that node. The spec is silent (its table
        // has only NOT_FOUND; the CO calls it after every NodeUnstage and NodeUnpublish);
        // hostpath answers INTERNAL (pkg/hostpath/controllerserver.go
        // ControllerUnpublishVolume, with --check-volume-lifecycle).
        for n in &nodes {
            let staged: Vec<String> = vol
                .staged
                .get(n)
                .map(|s| vec![s.path.clone()])
                .unwrap_or_default();
            let published = vol.targets_on(n);
            if !staged.is_empty() || !published.is_empty() {
                return Err(Status::internal(format!(
                    "Volume '{}' is still used (staged: {}, published: {}) by '{n}' node",
                    vol.volume_id,
                    go_list(&staged),
                    go_list(&published)
                )));
            }
        }
        let vol = self.get_volume_mut(&req.volume_id)?;
        let mut detached = Vec::new();
        for n in nodes {
            if vol.attachments.remove(&n).is_some() {
                detached.push(n);
            }
        }
        for n in detached {
            if let Some(count) = self.attached_per_node.get_mut(&n) {
                *count -= 1;
                if *count == 0 {
                    self.attached_per_node.remove(&n);
                }
            }
        }
        Ok(ControllerUnpublishVolumeResponse {})
    }

    /// ValidateVolumeCapabilities: `confirmed` only when every capability is supported.
    pub(crate) fn validate_volume_capabilities(
        &mut self,
        req: ValidateVolumeCapabilitiesRequest,
    ) -> Result<ValidateVolumeCapabilitiesResponse, Status> {
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID cannot be empty"));
        }
        if req.volume_capabilities.is_empty() {
            // controllerserver.go returns the volume ID as the message here.
            return Err(Status::invalid_argument(req.volume_id.clone()));
        }
        let vol = self.get_volume(&req.volume_id)?;
        for cap in &req.volume_capabilities {
            if cap.mount.is_none() && cap.block.is_none() {
                return Err(Status::invalid_argument(
                    "cannot have both mount and block access type be undefined",
                ));
            }
        }
        let snmw = self.has_controller_cap(ControllerRpcType::SingleNodeMultiWriter);
        let mut problem = None;
        for cap in &req.volume_capabilities {
            let is_block = cap.block.is_some();
            if cap.block.is_some() && cap.mount.is_some() {
                problem = Some("cannot have both block and mount access type".to_string());
            } else if is_block != (vol.access_type == AccessType::Block) {
                problem = Some(format!(
                    "volume {} is a {} volume",
                    vol.volume_id,
                    if vol.access_type == AccessType::Block {
                        "block"
                    } else {
                        "mount"
                    }
                ));
            } else {
                let mode = cap.mode();
                let supported = match mode {
                    AccessModeType::Unknown => false,
                    AccessModeType::SingleNodeSingleWriter
                    | AccessModeType::SingleNodeMultiWriter => snmw,
                    _ => true,
                };
                if !supported {
                    problem = Some(format!("access mode {mode} is not supported"));
                }
            }
            if problem.is_some() {
                break;
            }
        }
        Ok(match problem {
            Some(message) => ValidateVolumeCapabilitiesResponse {
                confirmed: None,
                message,
            },
            None => ValidateVolumeCapabilitiesResponse {
                confirmed: Some(ValidateVolumeCapabilitiesConfirmed {
                    volume_context: req.volume_context,
                    volume_capabilities: req.volume_capabilities,
                    parameters: req.parameters,
                    mutable_parameters: req.mutable_parameters,
                }),
                message: String::new(),
            },
        })
    }

    /// ListVolumes: volumes by ID, paged; the token is the index of the next entry.
    pub(crate) fn list_volumes(
        &mut self,
        req: ListVolumesRequest,
    ) -> Result<ListVolumesResponse, Status> {
        self.require_controller_cap(ControllerRpcType::ListVolumes, "ListVolumes")?;
        if req.max_entries < 0 {
            return Err(Status::invalid_argument("max_entries must not be negative"));
        }
        let Some(start) = parse_token(&req.starting_token) else {
            return Err(Status::aborted(
                "The type of startingToken should be integer",
            ));
        };
        let len = self.volumes.len();
        if start > len {
            return Err(Status::aborted(format!(
                "startingToken={start} > len(volumes)={len}"
            )));
        }
        let (start, end, next_token) = page(start, req.max_entries, len);
        let with_nodes = self.has_controller_cap(ControllerRpcType::ListVolumesPublishedNodes);
        let entries = self
            .volumes
            .values()
            .skip(start)
            .take(end - start)
            .map(|v| ListVolumesEntry {
                volume: Some(v.to_volume()),
                status: with_nodes.then(|| ListVolumesVolumeStatus {
                    published_node_ids: v.attachments.keys().cloned().collect(),
                    volume_condition: None,
                }),
            })
            .collect();
        Ok(ListVolumesResponse {
            entries,
            next_token,
        })
    }

    /// ControllerGetVolume: one volume and where it is attached.
    pub(crate) fn controller_get_volume(
        &mut self,
        req: ControllerGetVolumeRequest,
    ) -> Result<ControllerGetVolumeResponse, Status> {
        self.require_controller_cap(ControllerRpcType::GetVolume, "ControllerGetVolume")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        let vol = self.get_volume(&req.volume_id)?;
        Ok(ControllerGetVolumeResponse {
            volume: Some(vol.to_volume()),
            status: Some(ControllerGetVolumeStatus {
                published_node_ids: vol.attachments.keys().cloned().collect(),
                volume_condition: None,
            }),
        })
    }

    /// GetCapacity: what is left of `total_capacity` (0 for a topology no node matches).
    pub(crate) fn get_capacity(
        &mut self,
        req: GetCapacityRequest,
    ) -> Result<GetCapacityResponse, Status> {
        self.require_controller_cap(ControllerRpcType::GetCapacity, "GetCapacity")?;
        let mut available = self.available_capacity().max(0);
        if let Some(t) = &req.accessible_topology
            && self.has_plugin_service(ServiceType::VolumeAccessibilityConstraints)
            && !self
                .nodes
                .values()
                .any(|n| segments_match(&n.segments, &t.segments))
        {
            available = 0;
        }
        Ok(GetCapacityResponse {
            available_capacity: available,
            maximum_volume_size: Some(self.config.max_volume_size.min(available)),
            minimum_volume_size: Some(0),
        })
    }

    /// ControllerGetCapabilities: the configured controller RPCs.
    pub(crate) fn controller_get_capabilities(
        &mut self,
        _req: ControllerGetCapabilitiesRequest,
    ) -> Result<ControllerGetCapabilitiesResponse, Status> {
        Ok(ControllerGetCapabilitiesResponse {
            capabilities: self
                .config
                .controller_capabilities
                .iter()
                .map(|c| ControllerServiceCapability {
                    rpc: Some(ControllerRpc { kind: *c }),
                })
                .collect(),
        })
    }

    /// CreateSnapshot: cut a snapshot, idempotent by name.
    pub(crate) fn create_snapshot(
        &mut self,
        req: CreateSnapshotRequest,
    ) -> Result<CreateSnapshotResponse, Status> {
        self.require_controller_cap(ControllerRpcType::CreateDeleteSnapshot, "CreateSnapshot")?;
        if req.name.is_empty() {
            return Err(Status::invalid_argument("Name missing in request"));
        }
        if req.source_volume_id.is_empty() {
            return Err(Status::invalid_argument(
                "SourceVolumeId missing in request",
            ));
        }
        if let Some(ex) = self.snapshot_by_name(&req.name) {
            if ex.snapshot.source_volume_id == req.source_volume_id {
                return Ok(CreateSnapshotResponse {
                    snapshot: Some(ex.snapshot.clone()),
                });
            }
            return Err(Status::already_exists(format!(
                "snapshot with the same name: {} but with different SourceVolumeId already exist",
                req.name
            )));
        }
        let size_bytes = self.get_volume(&req.source_volume_id)?.capacity_bytes;
        let snapshot_id = self.new_id("snap", &req.name);
        let snapshot = Snapshot {
            size_bytes,
            snapshot_id: snapshot_id.clone(),
            source_volume_id: req.source_volume_id.clone(),
            creation_time: Some(self.clock_now),
            ready_to_use: true,
            group_snapshot_id: String::new(),
        };
        self.insert_snapshot(SnapshotRecord {
            name: req.name,
            snapshot: snapshot.clone(),
        });
        Ok(CreateSnapshotResponse {
            snapshot: Some(snapshot),
        })
    }

    /// DeleteSnapshot: unknown → OK.
    pub(crate) fn delete_snapshot(
        &mut self,
        req: DeleteSnapshotRequest,
    ) -> Result<DeleteSnapshotResponse, Status> {
        if req.snapshot_id.is_empty() {
            return Err(Status::invalid_argument("Snapshot ID missing in request"));
        }
        self.require_controller_cap(ControllerRpcType::CreateDeleteSnapshot, "DeleteSnapshot")?;
        self.remove_snapshot(&req.snapshot_id);
        Ok(DeleteSnapshotResponse {})
    }

    /// ListSnapshots: filtered by snapshot_id / source_volume_id, by ID, paged.
    pub(crate) fn list_snapshots(
        &mut self,
        req: ListSnapshotsRequest,
    ) -> Result<ListSnapshotsResponse, Status> {
        self.require_controller_cap(ControllerRpcType::ListSnapshots, "ListSnapshots")?;
        if req.max_entries < 0 {
            return Err(Status::invalid_argument("max_entries must not be negative"));
        }
        let matching: Vec<&SnapshotRecord> = self
            .snapshots
            .values()
            .filter(|s| req.snapshot_id.is_empty() || s.snapshot.snapshot_id == req.snapshot_id)
            .filter(|s| {
                req.source_volume_id.is_empty()
                    || s.snapshot.source_volume_id == req.source_volume_id
            })
            .collect();
        let Some(start) = parse_token(&req.starting_token) else {
            // controllerserver.go prints the still-zero startingToken here.
            return Err(Status::aborted(format!(
                "startingToken=0 !< int32={}",
                u32::MAX
            )));
        };
        let len = matching.len();
        if start > len {
            return Err(Status::aborted(format!(
                "startingToken={start} > len(snapshots)={len}"
            )));
        }
        let (start, end, next_token) = page(start, req.max_entries, len);
        let entries = matching
            .iter()
            .skip(start)
            .take(end - start)
            .map(|s| ListSnapshotsEntry {
                snapshot: Some(s.snapshot.clone()),
            })
            .collect();
        Ok(ListSnapshotsResponse {
            entries,
            next_token,
        })
    }

    /// ControllerExpandVolume: grow the device; the filesystem grows on NodeExpandVolume.
    pub(crate) fn controller_expand_volume(
        &mut self,
        req: ControllerExpandVolumeRequest,
    ) -> Result<ControllerExpandVolumeResponse, Status> {
        self.require_controller_cap(ControllerRpcType::ExpandVolume, "ControllerExpandVolume")?;
        if req.volume_id.is_empty() {
            return Err(Status::invalid_argument("Volume ID missing in request"));
        }
        let Some(range) = req.capacity_range else {
            return Err(Status::invalid_argument("Capacity range not provided"));
        };
        if range.required_bytes < 0 || range.limit_bytes < 0 {
            return Err(Status::invalid_argument("cannot have negative capacity"));
        }
        if range.limit_bytes > 0 && range.required_bytes > range.limit_bytes {
            return Err(Status::invalid_argument("capacity cannot exceed limit"));
        }
        let capacity = if range.required_bytes == 0 {
            range.limit_bytes
        } else {
            range.required_bytes
        };
        if capacity > self.config.max_volume_size {
            return Err(Status::out_of_range(format!(
                "Requested capacity {capacity} exceeds maximum allowed {}",
                self.config.max_volume_size
            )));
        }
        let available = self.available_capacity();
        let offline_only = self.config.volume_expansion == Some(ExpansionType::Offline);
        let node_expand = self.has_node_cap(NodeRpcType::ExpandVolume);
        let vol = self.get_volume(&req.volume_id)?;
        let grow = capacity.saturating_sub(vol.capacity_bytes).max(0);
        if grow > 0 && offline_only && vol.in_use() {
            return Err(Status::failed_precondition(format!(
                "volume {} is in use and the plugin only supports OFFLINE expansion",
                vol.volume_id
            )));
        }
        if grow > available {
            return Err(self.exhausted(capacity));
        }
        let vol = if grow > 0 {
            let vol = self.set_volume_capacity(&req.volume_id, capacity)?;
            if vol.access_type == AccessType::Block {
                vol.fs_size_bytes = capacity;
            }
            vol
        } else {
            self.get_volume_mut(&req.volume_id)?
        };
        Ok(ControllerExpandVolumeResponse {
            capacity_bytes: vol.capacity_bytes,
            node_expansion_required: node_expand
                && vol.access_type == AccessType::Mount
                && vol.fs_size_bytes < vol.capacity_bytes,
        })
    }
}

/// The access modes a CreateVolume asks for, sorted and without repeats.
fn requested_modes(req: &CreateVolumeRequest) -> Vec<AccessModeType> {
    let mut modes: Vec<AccessModeType> = req.volume_capabilities.iter().map(|c| c.mode()).collect();
    modes.sort_by_key(|m| m.number());
    modes.dedup();
    modes
}
