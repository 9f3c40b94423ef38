//! CSI spec messages and enums, shaped like `container-storage-interface/spec:csi.proto` (v1).
//!
//! Field names, field order and enum numbers are csi.proto's; the JSON form is protojson
//! with proto names (see `protojson.rs` for the exact rules). A oneof is modelled as a set of
//! `Option` fields, at most one of which a well-formed message sets; drivers check the rest.

use super::protojson::{
    Timestamp, int64, is_default, is_false, is_zero_i32, is_zero_i64, opt_int64, proto_enum,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A `map<string, string>` field (printed with sorted keys).
pub(crate) type StringMap = BTreeMap<String, String>;

// ---------------------------------------------------------------------------------------
// Enums (numbers: csi.proto; reference E.3/E.4)
// ---------------------------------------------------------------------------------------

proto_enum! {
    /// `PluginCapability.Service.Type`.
    ServiceType, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: the plugin serves the Controller service.
        ControllerService = 1 => "CONTROLLER_SERVICE",
        /// 2: volumes are not equally reachable from every node (topology).
        VolumeAccessibilityConstraints = 2 => "VOLUME_ACCESSIBILITY_CONSTRAINTS",
        /// 3: the plugin serves the GroupController service.
        GroupControllerService = 3 => "GROUP_CONTROLLER_SERVICE",
        /// 4 (alpha): the plugin serves SnapshotMetadata.
        SnapshotMetadataService = 4 => "SNAPSHOT_METADATA_SERVICE",
    }
}

proto_enum! {
    /// `PluginCapability.VolumeExpansion.Type`.
    ExpansionType, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: volumes can grow while published.
        Online = 1 => "ONLINE",
        /// 2: volumes can grow only while not published.
        Offline = 2 => "OFFLINE",
    }
}

proto_enum! {
    /// `ControllerServiceCapability.RPC.Type`.
    ControllerRpcType, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: CreateVolume / DeleteVolume.
        CreateDeleteVolume = 1 => "CREATE_DELETE_VOLUME",
        /// 2: ControllerPublishVolume / ControllerUnpublishVolume (attach/detach).
        PublishUnpublishVolume = 2 => "PUBLISH_UNPUBLISH_VOLUME",
        /// 3: ListVolumes.
        ListVolumes = 3 => "LIST_VOLUMES",
        /// 4: GetCapacity.
        GetCapacity = 4 => "GET_CAPACITY",
        /// 5: CreateSnapshot / DeleteSnapshot.
        CreateDeleteSnapshot = 5 => "CREATE_DELETE_SNAPSHOT",
        /// 6: ListSnapshots.
        ListSnapshots = 6 => "LIST_SNAPSHOTS",
        /// 7: CreateVolume from another volume.
        CloneVolume = 7 => "CLONE_VOLUME",
        /// 8: ControllerPublishVolume honours `readonly`.
        PublishReadonly = 8 => "PUBLISH_READONLY",
        /// 9: ControllerExpandVolume.
        ExpandVolume = 9 => "EXPAND_VOLUME",
        /// 10: ListVolumes reports published_node_ids.
        ListVolumesPublishedNodes = 10 => "LIST_VOLUMES_PUBLISHED_NODES",
        /// 11 (alpha): volume condition in ListVolumes / ControllerGetVolume.
        VolumeCondition = 11 => "VOLUME_CONDITION",
        /// 12 (alpha): ControllerGetVolume.
        GetVolume = 12 => "GET_VOLUME",
        /// 13 (alpha): SINGLE_NODE_SINGLE_WRITER / SINGLE_NODE_MULTI_WRITER access modes.
        SingleNodeMultiWriter = 13 => "SINGLE_NODE_MULTI_WRITER",
        /// 14: ControllerModifyVolume.
        ModifyVolume = 14 => "MODIFY_VOLUME",
        /// 15 (alpha): GetSnapshot.
        GetSnapshot = 15 => "GET_SNAPSHOT",
    }
}

proto_enum! {
    /// `NodeServiceCapability.RPC.Type`.
    NodeRpcType, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: NodeStageVolume / NodeUnstageVolume.
        StageUnstageVolume = 1 => "STAGE_UNSTAGE_VOLUME",
        /// 2: NodeGetVolumeStats.
        GetVolumeStats = 2 => "GET_VOLUME_STATS",
        /// 3: NodeExpandVolume.
        ExpandVolume = 3 => "EXPAND_VOLUME",
        /// 4 (alpha): volume condition in NodeGetVolumeStats.
        VolumeCondition = 4 => "VOLUME_CONDITION",
        /// 5 (alpha): SINGLE_NODE_SINGLE_WRITER / SINGLE_NODE_MULTI_WRITER access modes.
        SingleNodeMultiWriter = 5 => "SINGLE_NODE_MULTI_WRITER",
        /// 6: `volume_mount_group` is honoured.
        VolumeMountGroup = 6 => "VOLUME_MOUNT_GROUP",
    }
}

proto_enum! {
    /// `VolumeCapability.AccessMode.Mode` (reference E.4).
    AccessModeType, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: published once read-write on a single node.
        SingleNodeWriter = 1 => "SINGLE_NODE_WRITER",
        /// 2: published once read-only on a single node.
        SingleNodeReaderOnly = 2 => "SINGLE_NODE_READER_ONLY",
        /// 3: read-only on many nodes.
        MultiNodeReaderOnly = 3 => "MULTI_NODE_READER_ONLY",
        /// 4: many nodes, one of them read-write.
        MultiNodeSingleWriter = 4 => "MULTI_NODE_SINGLE_WRITER",
        /// 5: read-write on many nodes.
        MultiNodeMultiWriter = 5 => "MULTI_NODE_MULTI_WRITER",
        /// 6 (alpha): one workload read-write on one node.
        SingleNodeSingleWriter = 6 => "SINGLE_NODE_SINGLE_WRITER",
        /// 7 (alpha): many workloads read-write on one node.
        SingleNodeMultiWriter = 7 => "SINGLE_NODE_MULTI_WRITER",
    }
}

impl AccessModeType {
    /// True for the MULTI_NODE_* modes, the only ones that may be published to several nodes.
    pub(crate) fn is_multi_node(self) -> bool {
        matches!(
            self,
            AccessModeType::MultiNodeReaderOnly
                | AccessModeType::MultiNodeSingleWriter
                | AccessModeType::MultiNodeMultiWriter
        )
    }
}

proto_enum! {
    /// `VolumeUsage.Unit`.
    UsageUnit, default Unknown {
        /// 0.
        Unknown = 0 => "UNKNOWN",
        /// 1: bytes.
        Bytes = 1 => "BYTES",
        /// 2: inodes.
        Inodes = 2 => "INODES",
    }
}

// ---------------------------------------------------------------------------------------
// Shared messages
// ---------------------------------------------------------------------------------------

/// `VolumeCapability.BlockVolume`: access through a raw block device (intentionally empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockVolume {}

/// `VolumeCapability.MountVolume`: access through a mounted filesystem.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MountVolume {
    /// Filesystem type (`ext4`, `xfs`); empty = unspecified.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fs_type: String,
    /// Mount options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mount_flags: Vec<String>,
    /// Group to own the mounted volume (needs VOLUME_MOUNT_GROUP).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_mount_group: String,
}

/// `VolumeCapability.AccessMode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessMode {
    /// The mode (REQUIRED).
    #[serde(default, skip_serializing_if = "is_default")]
    pub mode: AccessModeType,
}

/// `VolumeCapability`: an access type (`block` or `mount`) and an access mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeCapability {
    /// Access through the block device API (oneof access_type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockVolume>,
    /// Access through a filesystem (oneof access_type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountVolume>,
    /// How the volume may be shared (REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_mode: Option<AccessMode>,
}

impl VolumeCapability {
    /// A mount capability with the given mode and filesystem type.
    pub fn mount(mode: AccessModeType, fs_type: &str) -> Self {
        VolumeCapability {
            block: None,
            mount: Some(MountVolume {
                fs_type: fs_type.to_string(),
                ..MountVolume::default()
            }),
            access_mode: Some(AccessMode { mode }),
        }
    }

    /// A block capability with the given mode.
    pub fn block(mode: AccessModeType) -> Self {
        VolumeCapability {
            block: Some(BlockVolume {}),
            mount: None,
            access_mode: Some(AccessMode { mode }),
        }
    }

    /// The access mode, UNKNOWN when unset.
    pub fn mode(&self) -> AccessModeType {
        self.access_mode.map(|a| a.mode).unwrap_or_default()
    }
}

/// `CapacityRange`: required_bytes ≤ size ≤ limit_bytes; 0 means unset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityRange {
    /// The volume must be at least this big.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub required_bytes: i64,
    /// The volume must not be bigger than this.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub limit_bytes: i64,
}

/// `Topology`: segments such as `{"topology.hostpath.csi.lab/node": "node-1"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Key/value pairs naming where something is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub segments: StringMap,
}

/// `TopologyRequirement`: where a new volume must (requisite) or should (preferred) be.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyRequirement {
    /// The volume MUST be accessible from at least one of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requisite: Vec<Topology>,
    /// Try these first, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred: Vec<Topology>,
}

/// `VolumeContentSource.SnapshotSource`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSource {
    /// The snapshot to restore from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub snapshot_id: String,
}

/// `VolumeContentSource.VolumeSource`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeSource {
    /// The volume to clone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
}

/// `VolumeContentSource`: pre-populate from a snapshot or clone a volume (oneof type).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeContentSource {
    /// Restore from this snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotSource>,
    /// Clone this volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<VolumeSource>,
}

impl VolumeContentSource {
    #[cfg(test)]
    /// A snapshot source.
    pub(crate) fn from_snapshot(id: &str) -> Self {
        VolumeContentSource {
            snapshot: Some(SnapshotSource {
                snapshot_id: id.to_string(),
            }),
            volume: None,
        }
    }

    #[cfg(test)]
    /// A volume (clone) source.
    pub(crate) fn from_volume(id: &str) -> Self {
        VolumeContentSource {
            snapshot: None,
            volume: Some(VolumeSource {
                volume_id: id.to_string(),
            }),
        }
    }
}

/// `Volume`: what CreateVolume returns and ListVolumes lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// Size in bytes (0 = unknown).
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub capacity_bytes: i64,
    /// The ID every later call uses.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// Opaque context passed back on publish calls.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
    /// The source it was pre-populated from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_source: Option<VolumeContentSource>,
    /// Where it can be reached from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accessible_topology: Vec<Topology>,
}

/// `VolumeCondition` (alpha): health of a volume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeCondition {
    /// True when something is wrong.
    #[serde(default, skip_serializing_if = "is_false")]
    pub abnormal: bool,
    /// What is wrong.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `Snapshot`: a point-in-time copy of a volume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Size of the source volume when cut.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub size_bytes: i64,
    /// The snapshot ID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub snapshot_id: String,
    /// The volume it was cut from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_volume_id: String,
    /// When it was cut (the lab's logical clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<Timestamp>,
    /// Whether it can be restored from.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ready_to_use: bool,
    /// The group snapshot it belongs to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group_snapshot_id: String,
}

// ---------------------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------------------

/// `GetPluginInfoRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetPluginInfoRequest {}

/// `GetPluginInfoResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetPluginInfoResponse {
    /// Driver name in domain notation (`hostpath.csi.lab`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Driver version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor_version: String,
    /// Optional opaque facts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub manifest: StringMap,
}

/// `GetPluginCapabilitiesRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetPluginCapabilitiesRequest {}

/// `PluginCapability.Service`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginService {
    /// Which service.
    #[serde(rename = "type", default, skip_serializing_if = "is_default")]
    pub kind: ServiceType,
}

/// `PluginCapability.VolumeExpansion`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginVolumeExpansion {
    /// ONLINE or OFFLINE.
    #[serde(rename = "type", default, skip_serializing_if = "is_default")]
    pub kind: ExpansionType,
}

/// `PluginCapability` (oneof type: service | volume_expansion).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginCapability {
    /// A service the plugin provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<PluginService>,
    /// The kind of expansion the plugin supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_expansion: Option<PluginVolumeExpansion>,
}

/// `GetPluginCapabilitiesResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetPluginCapabilitiesResponse {
    /// The plugin's capabilities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<PluginCapability>,
}

/// `ProbeRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeRequest {}

/// `ProbeResponse`: `ready` is a BoolValue (absent = ready).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeResponse {
    /// Whether initialisation finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

// ---------------------------------------------------------------------------------------
// Controller
// ---------------------------------------------------------------------------------------

/// `CreateVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateVolumeRequest {
    /// Idempotency name (REQUIRED), e.g. `pvc-<uid>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Size bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_range: Option<CapacityRange>,
    /// Capabilities the volume must have (REQUIRED).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_capabilities: Vec<VolumeCapability>,
    /// StorageClass parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: StringMap,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// Snapshot or volume to pre-populate from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_content_source: Option<VolumeContentSource>,
    /// Where the volume must/should be reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessibility_requirements: Option<TopologyRequirement>,
    /// VolumeAttributesClass parameters (needs MODIFY_VOLUME).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mutable_parameters: StringMap,
}

/// `CreateVolumeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateVolumeResponse {
    /// The volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
}

/// `DeleteVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
}

/// `DeleteVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteVolumeResponse {}

/// `ControllerPublishVolumeRequest` (attach).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerPublishVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// The node, as NodeGetInfo reported it (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_id: String,
    /// How the node will use it (REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_capability: Option<VolumeCapability>,
    /// Attach read-only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub readonly: bool,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// The volume_context CreateVolume returned.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
}

/// `ControllerPublishVolumeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerPublishVolumeResponse {
    /// Passed on to NodeStage/NodePublish (e.g. the device path).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub publish_context: StringMap,
}

/// `ControllerUnpublishVolumeRequest` (detach).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerUnpublishVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// The node; empty = every node.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_id: String,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
}

/// `ControllerUnpublishVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerUnpublishVolumeResponse {}

/// `ValidateVolumeCapabilitiesRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateVolumeCapabilitiesRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// Its volume_context.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
    /// The capabilities to check (REQUIRED).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_capabilities: Vec<VolumeCapability>,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: StringMap,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// Its mutable parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mutable_parameters: StringMap,
}

/// `ValidateVolumeCapabilitiesResponse.Confirmed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateVolumeCapabilitiesConfirmed {
    /// The volume_context that was validated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
    /// The capabilities that are supported (all of the requested ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_capabilities: Vec<VolumeCapability>,
    /// The parameters that were validated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: StringMap,
    /// The mutable parameters that were validated.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mutable_parameters: StringMap,
}

/// `ValidateVolumeCapabilitiesResponse`: `confirmed` only when all are supported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateVolumeCapabilitiesResponse {
    /// Set when every requested capability is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<ValidateVolumeCapabilitiesConfirmed>,
    /// Why not, when not confirmed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `ListVolumesRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListVolumesRequest {
    /// Page size, 0 = all (int32: a JSON number).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub max_entries: i32,
    /// `next_token` of the previous page.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub starting_token: String,
}

/// `ListVolumesResponse.VolumeStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListVolumesVolumeStatus {
    /// Nodes the volume is controller-published to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published_node_ids: Vec<String>,
    /// Health (VOLUME_CONDITION).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_condition: Option<VolumeCondition>,
}

/// `ListVolumesResponse.Entry`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListVolumesEntry {
    /// The volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
    /// Where it is published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ListVolumesVolumeStatus>,
}

/// `ListVolumesResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListVolumesResponse {
    /// One page of volumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<ListVolumesEntry>,
    /// Token for the next page; empty on the last page.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub next_token: String,
}

/// `ControllerGetVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerGetVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
}

/// `ControllerGetVolumeResponse.VolumeStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerGetVolumeStatus {
    /// Nodes the volume is controller-published to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published_node_ids: Vec<String>,
    /// Health (VOLUME_CONDITION).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_condition: Option<VolumeCondition>,
}

/// `ControllerGetVolumeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerGetVolumeResponse {
    /// The volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Volume>,
    /// Where it is published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ControllerGetVolumeStatus>,
}

/// `GetCapacityRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetCapacityRequest {
    /// Capabilities the capacity is for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_capabilities: Vec<VolumeCapability>,
    /// StorageClass parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: StringMap,
    /// Topology segment the capacity is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible_topology: Option<Topology>,
}

/// `GetCapacityResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetCapacityResponse {
    /// Bytes still available.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub available_capacity: i64,
    /// Largest volume that could be created now (Int64Value).
    #[serde(default, with = "opt_int64", skip_serializing_if = "Option::is_none")]
    pub maximum_volume_size: Option<i64>,
    /// Smallest volume that could be created (Int64Value).
    #[serde(default, with = "opt_int64", skip_serializing_if = "Option::is_none")]
    pub minimum_volume_size: Option<i64>,
}

/// `ControllerGetCapabilitiesRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerGetCapabilitiesRequest {}

/// `ControllerServiceCapability.RPC`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerRpc {
    /// The RPC group.
    #[serde(rename = "type", default, skip_serializing_if = "is_default")]
    pub kind: ControllerRpcType,
}

/// `ControllerServiceCapability` (oneof type: rpc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerServiceCapability {
    /// An RPC capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpc: Option<ControllerRpc>,
}

/// `ControllerGetCapabilitiesResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerGetCapabilitiesResponse {
    /// The controller's capabilities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<ControllerServiceCapability>,
}

/// `CreateSnapshotRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSnapshotRequest {
    /// The volume to snapshot (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_volume_id: String,
    /// Idempotency name (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// VolumeSnapshotClass parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: StringMap,
}

/// `CreateSnapshotResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateSnapshotResponse {
    /// The snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
}

/// `DeleteSnapshotRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteSnapshotRequest {
    /// The snapshot (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub snapshot_id: String,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
}

/// `DeleteSnapshotResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteSnapshotResponse {}

/// `ListSnapshotsRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListSnapshotsRequest {
    /// Page size, 0 = all.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub max_entries: i32,
    /// `next_token` of the previous page.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub starting_token: String,
    /// Only snapshots of this volume.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_volume_id: String,
    /// Only this snapshot.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub snapshot_id: String,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
}

/// `ListSnapshotsResponse.Entry`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListSnapshotsEntry {
    /// The snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
}

/// `ListSnapshotsResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListSnapshotsResponse {
    /// One page of snapshots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<ListSnapshotsEntry>,
    /// Token for the next page; empty on the last page.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub next_token: String,
}

/// `ControllerExpandVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerExpandVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// The new size (REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_range: Option<CapacityRange>,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// How the volume is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_capability: Option<VolumeCapability>,
}

/// `ControllerExpandVolumeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerExpandVolumeResponse {
    /// The size after expansion.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub capacity_bytes: i64,
    /// Whether NodeExpandVolume must follow (the filesystem has not grown yet).
    #[serde(default, skip_serializing_if = "is_false")]
    pub node_expansion_required: bool,
}

// ---------------------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------------------

/// `NodeStageVolumeRequest` (format and mount the device at the staging path).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeStageVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// What ControllerPublish returned.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub publish_context: StringMap,
    /// Global mount directory (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub staging_target_path: String,
    /// How it will be used (REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_capability: Option<VolumeCapability>,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// The volume_context CreateVolume returned.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
}

/// `NodeStageVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeStageVolumeResponse {}

/// `NodeUnstageVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeUnstageVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// Where it was staged (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub staging_target_path: String,
}

/// `NodeUnstageVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeUnstageVolumeResponse {}

/// `NodePublishVolumeRequest` (bind-mount into the pod's directory).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodePublishVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// What ControllerPublish returned.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub publish_context: StringMap,
    /// Where it was staged (REQUIRED with STAGE_UNSTAGE_VOLUME).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub staging_target_path: String,
    /// The pod's mount path (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_path: String,
    /// How it will be used (REQUIRED).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_capability: Option<VolumeCapability>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub readonly: bool,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
    /// The volume_context (plus pod info when podInfoOnMount).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_context: StringMap,
}

/// `NodePublishVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodePublishVolumeResponse {}

/// `NodeUnpublishVolumeRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeUnpublishVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// The pod's mount path (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target_path: String,
}

/// `NodeUnpublishVolumeResponse` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeUnpublishVolumeResponse {}

/// `NodeGetVolumeStatsRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetVolumeStatsRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// A path where it is staged or published (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_path: String,
    /// Where it is staged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub staging_target_path: String,
}

/// `VolumeUsage`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VolumeUsage {
    /// Free.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub available: i64,
    /// Total.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub total: i64,
    /// Used.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub used: i64,
    /// BYTES or INODES.
    #[serde(default, skip_serializing_if = "is_default")]
    pub unit: UsageUnit,
}

/// `NodeGetVolumeStatsResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetVolumeStatsResponse {
    /// Usage figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usage: Vec<VolumeUsage>,
    /// Health (node VOLUME_CONDITION).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_condition: Option<VolumeCondition>,
}

/// `NodeExpandVolumeRequest` (grow the filesystem).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeExpandVolumeRequest {
    /// The volume (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_id: String,
    /// A path where it is staged or published (REQUIRED).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_path: String,
    /// The new size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_range: Option<CapacityRange>,
    /// Where it is staged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub staging_target_path: String,
    /// How it is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_capability: Option<VolumeCapability>,
    /// Secrets (csi_secret).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: StringMap,
}

/// `NodeExpandVolumeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeExpandVolumeResponse {
    /// The filesystem size after expansion.
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub capacity_bytes: i64,
}

/// `NodeGetCapabilitiesRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetCapabilitiesRequest {}

/// `NodeServiceCapability.RPC`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRpc {
    /// The RPC group.
    #[serde(rename = "type", default, skip_serializing_if = "is_default")]
    pub kind: NodeRpcType,
}

/// `NodeServiceCapability` (oneof type: rpc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeServiceCapability {
    /// An RPC capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpc: Option<NodeRpc>,
}

/// `NodeGetCapabilitiesResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetCapabilitiesResponse {
    /// The node plugin's capabilities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<NodeServiceCapability>,
}

/// `NodeGetInfoRequest` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetInfoRequest {}

/// `NodeGetInfoResponse`: what kubelet copies into CSINode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetInfoResponse {
    /// The node ID the controller expects in ControllerPublish.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_id: String,
    /// Attach limit (0 = the CO decides).
    #[serde(default, with = "int64", skip_serializing_if = "is_zero_i64")]
    pub max_volumes_per_node: i64,
    /// Where this node is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessible_topology: Option<Topology>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The typed summary of `resp` and the JSON rule's, as the call log would show them.
    fn both_summaries<R: CsiResponse + crate::record::WireMessage + Clone + 'static>(
        resp: R,
    ) -> (Option<String>, String) {
        let call = crate::record::wire::CsiCall {
            caller: "you".into(),
            node: None,
            service: crate::csi::Service::Node,
            rpc: "Test",
            request: std::sync::Arc::new(json!({})),
            reply: Ok(std::sync::Arc::new(resp.clone())),
        };
        (resp.summary(), call.summary_from_json())
    }

    #[test]
    fn typed_summaries_read_as_the_json_rule() {
        let topology = |pairs: &[(&str, &str)]| Topology {
            segments: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let infos = [
            NodeGetInfoResponse::default(),
            NodeGetInfoResponse {
                node_id: "node-1".into(),
                ..Default::default()
            },
            NodeGetInfoResponse {
                node_id: "a \"quoted\" \\ id\u{1}".into(),
                max_volumes_per_node: 3,
                accessible_topology: Some(topology(&[])),
            },
            NodeGetInfoResponse {
                node_id: "n".into(),
                max_volumes_per_node: 1,
                accessible_topology: Some(topology(&[("b/zone", "z"), ("a/node", "né")])),
            },
            NodeGetInfoResponse {
                node_id: "x".repeat(80),
                max_volumes_per_node: 0,
                accessible_topology: None,
            },
        ];
        for info in infos {
            let (typed, json) = both_summaries(info.clone());
            assert_eq!(typed.as_deref(), Some(json.as_str()), "{info:?}");
        }
        let publish = ControllerPublishVolumeResponse {
            publish_context: [("device".to_string(), "/dev/lab/vol-1".to_string())].into(),
        };
        let (typed, json) = both_summaries(publish);
        assert_eq!(typed.as_deref(), Some(json.as_str()));
        assert_eq!(json, r#"{"publish_context":{"device":"/dev/lab/vol-1"}}"#);
        for (bytes, node) in [(0, false), (0, true), (1 << 30, false), (5, true)] {
            let expand = ControllerExpandVolumeResponse {
                capacity_bytes: bytes,
                node_expansion_required: node,
            };
            let (typed, json) = both_summaries(expand);
            assert!(typed.is_none_or(|t| t == json), "{bytes} {node}: {json}");
        }
        let created = CreateVolumeResponse {
            volume: Some(Volume {
                volume_id: "vol-1".into(),
                capacity_bytes: 0,
                ..Default::default()
            }),
        };
        let (typed, json) = both_summaries(created);
        assert_eq!(typed.as_deref(), Some("volume vol-1 "));
        assert_eq!(json, "volume vol-1 ");
    }

    #[test]
    fn create_volume_request_uses_proto_names_and_int64_strings() {
        let req = CreateVolumeRequest {
            name: "pvc-1".into(),
            capacity_range: Some(CapacityRange {
                required_bytes: 10 << 30,
                limit_bytes: 0,
            }),
            volume_capabilities: vec![VolumeCapability::mount(
                AccessModeType::SingleNodeWriter,
                "ext4",
            )],
            ..Default::default()
        };
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(
            v,
            json!({
                "name": "pvc-1",
                "capacity_range": {"required_bytes": "10737418240"},
                "volume_capabilities": [
                    {"mount": {"fs_type": "ext4"}, "access_mode": {"mode": "SINGLE_NODE_WRITER"}}
                ]
            })
        );
        // Field order follows csi.proto.
        let text = serde_json::to_string(&req).unwrap();
        assert!(
            text.starts_with(r#"{"name":"pvc-1","capacity_range""#),
            "{text}"
        );
        let back: CreateVolumeRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
    }

    #[test]
    fn parsing_accepts_numbers_for_int64_and_enums() {
        let v = json!({
            "capacity_range": {"required_bytes": 5, "limit_bytes": "7"},
            "volume_capabilities": [{"block": {}, "access_mode": {"mode": 5}}]
        });
        let req: CreateVolumeRequest = serde_json::from_value(v).unwrap();
        assert_eq!(req.capacity_range.unwrap().required_bytes, 5);
        assert_eq!(req.capacity_range.unwrap().limit_bytes, 7);
        assert_eq!(
            req.volume_capabilities[0].mode(),
            AccessModeType::MultiNodeMultiWriter
        );
        assert_eq!(
            serde_json::to_value(&req.volume_capabilities[0]).unwrap(),
            json!({"block": {}, "access_mode": {"mode": "MULTI_NODE_MULTI_WRITER"}})
        );
    }

    #[test]
    fn unknown_fields_and_enum_values_are_rejected() {
        assert!(serde_json::from_value::<DeleteVolumeRequest>(json!({"volumeID": "x"})).is_err());
        assert!(
            serde_json::from_value::<AccessMode>(json!({"mode": "SINGLE_NODE_EVERYTHING"}))
                .is_err()
        );
        assert!(serde_json::from_value::<AccessMode>(json!({"mode": 99})).is_err());
    }

    #[test]
    fn wrappers_and_empty_messages_print_like_protojson() {
        let r = GetCapacityResponse {
            available_capacity: 1024,
            maximum_volume_size: Some(512),
            minimum_volume_size: Some(0),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"available_capacity": "1024", "maximum_volume_size": "512", "minimum_volume_size": "0"})
        );
        assert_eq!(
            serde_json::to_value(ProbeResponse { ready: Some(false) }).unwrap(),
            json!({"ready": false})
        );
        assert_eq!(
            serde_json::to_value(DeleteVolumeResponse {}).unwrap(),
            json!({})
        );
        let snap = Snapshot {
            size_bytes: 1,
            snapshot_id: "snap-1".into(),
            source_volume_id: "vol-1".into(),
            creation_time: Some(Timestamp::from_seconds(3)),
            ready_to_use: true,
            group_snapshot_id: String::new(),
        };
        assert_eq!(
            serde_json::to_value(&snap).unwrap(),
            json!({"size_bytes": "1", "snapshot_id": "snap-1", "source_volume_id": "vol-1",
                   "creation_time": "1970-01-01T00:00:03Z", "ready_to_use": true})
        );
    }

    #[test]
    fn enum_numbers_match_the_spec() {
        assert_eq!(ControllerRpcType::SingleNodeMultiWriter.number(), 13);
        assert_eq!(ControllerRpcType::GetVolume.number(), 12);
        assert_eq!(NodeRpcType::SingleNodeMultiWriter.number(), 5);
        assert_eq!(AccessModeType::SingleNodeSingleWriter.number(), 6);
        assert_eq!(AccessModeType::SingleNodeMultiWriter.number(), 7);
        assert_eq!(ServiceType::VolumeAccessibilityConstraints.number(), 2);
        assert_eq!(ExpansionType::Offline.number(), 2);
        assert_eq!(UsageUnit::Inodes.number(), 2);
        for m in AccessModeType::ALL {
            assert_eq!(AccessModeType::from_name(m.name()), Some(*m));
            assert_eq!(AccessModeType::from_number(m.number()), Some(*m));
        }
    }
}

// ---------------------------------------------------------------------------------------
// What a request is about
// ---------------------------------------------------------------------------------------

/// A CSI request, with the volume or snapshot it is about (the call log's `#N SUBJECT:`):
/// the first of `volume_id`, `name`, `snapshot_id`, `source_volume_id` that the message
/// has and is set, as its protojson form would show it; `-` when none.
pub(crate) trait CsiRequest {
    /// The subject, or `None` when the request names none.
    fn subject(&self) -> Option<&str>;

    /// The node a ControllerPublish/Unpublish names (`node_id`), if the request has one.
    fn node_id(&self) -> Option<&str> {
        None
    }

    /// The staging (global mount) path a Node request names (`staging_target_path`), if any.
    fn staging_path(&self) -> Option<&str> {
        None
    }

    /// The pod's mount path a NodePublish/Unpublish names (`target_path`), if any.
    fn target_path(&self) -> Option<&str> {
        None
    }

    /// The capability the request asks for (CreateVolume's first), if any.
    fn capability(&self) -> Option<&VolumeCapability> {
        None
    }
}

/// A set string field, as protojson shows it: `None` when empty (proto3 leaves it out).
fn set(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// A request as the learner typed it (`csi call METHOD JSON`): the first of the keys it has
/// with a string value, even an empty one.
impl CsiRequest for serde_json::Value {
    fn subject(&self) -> Option<&str> {
        ["volume_id", "name", "snapshot_id", "source_volume_id"]
            .into_iter()
            .find_map(|key| self.get(key).and_then(|v| v.as_str()))
    }
}

/// `subject` for request types: the named fields, in the order above.
macro_rules! subject {
    ($($ty:ident => [$($field:ident),*];)*) => {
        $(impl CsiRequest for $ty {
            fn subject(&self) -> Option<&str> {
                // An empty field is left out of the message (proto3), so it names nothing.
                let fields: [&str; 0 $(+ { stringify!($field); 1 })*] = [$(self.$field.as_str()),*];
                fields.into_iter().find(|s| !s.is_empty())
            }
        })*
    };
}

subject! {
    GetPluginInfoRequest => [];
    GetPluginCapabilitiesRequest => [];
    ProbeRequest => [];
    DeleteVolumeRequest => [volume_id];
    ValidateVolumeCapabilitiesRequest => [volume_id];
    ListVolumesRequest => [];
    ControllerGetVolumeRequest => [volume_id];
    GetCapacityRequest => [];
    ControllerGetCapabilitiesRequest => [];
    CreateSnapshotRequest => [name, source_volume_id];
    DeleteSnapshotRequest => [snapshot_id];
    ListSnapshotsRequest => [snapshot_id, source_volume_id];
    ControllerExpandVolumeRequest => [volume_id];
    NodeGetVolumeStatsRequest => [volume_id];
    NodeExpandVolumeRequest => [volume_id];
    NodeGetCapabilitiesRequest => [];
    NodeGetInfoRequest => [];
}

impl CsiRequest for CreateVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.name)
    }

    fn capability(&self) -> Option<&VolumeCapability> {
        self.volume_capabilities.first()
    }
}

impl CsiRequest for ControllerPublishVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn node_id(&self) -> Option<&str> {
        set(&self.node_id)
    }

    fn capability(&self) -> Option<&VolumeCapability> {
        self.volume_capability.as_ref()
    }
}

impl CsiRequest for NodeStageVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn staging_path(&self) -> Option<&str> {
        set(&self.staging_target_path)
    }

    fn capability(&self) -> Option<&VolumeCapability> {
        self.volume_capability.as_ref()
    }
}

impl CsiRequest for NodePublishVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn staging_path(&self) -> Option<&str> {
        set(&self.staging_target_path)
    }

    fn target_path(&self) -> Option<&str> {
        set(&self.target_path)
    }

    fn capability(&self) -> Option<&VolumeCapability> {
        self.volume_capability.as_ref()
    }
}

impl CsiRequest for ControllerUnpublishVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn node_id(&self) -> Option<&str> {
        set(&self.node_id)
    }
}

impl CsiRequest for NodeUnstageVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn staging_path(&self) -> Option<&str> {
        set(&self.staging_target_path)
    }
}

impl CsiRequest for NodeUnpublishVolumeRequest {
    fn subject(&self) -> Option<&str> {
        set(&self.volume_id)
    }

    fn target_path(&self) -> Option<&str> {
        set(&self.target_path)
    }
}

/// How a response reads in one line of the call log, worked out from the typed message.
/// The rule is [`crate::record::wire::CsiCall::summary_from_json`]'s over the protojson
/// form (debug builds check the two agree on every call); a type without a rule of its own
/// (`None`) is summarised from its JSON.
pub(crate) trait CsiResponse {
    /// The summary, or `None` to take the JSON rule.
    fn summary(&self) -> Option<String> {
        None
    }

    /// The ID of the volume the response returns (CreateVolume's), if any.
    fn volume_id(&self) -> Option<&str> {
        None
    }
}

/// A response a raw `csi call` got back: the JSON rule.
impl CsiResponse for serde_json::Value {}

/// `volume ID SIZE` for a response that carries a volume with an ID (proto3 leaves an empty
/// ID and a zero size out of the message, so the JSON rule sees neither).
fn volume_summary(volume: &Option<Volume>) -> Option<String> {
    let v = volume.as_ref().filter(|v| !v.volume_id.is_empty())?;
    let size = if v.capacity_bytes == 0 {
        String::new()
    } else {
        crate::util::quantity::format_bytes(v.capacity_bytes)
    };
    Some(format!("volume {} {size}", v.volume_id))
}

/// Responses with no fields: `OK`.
macro_rules! empty_response {
    ($($ty:ident),*) => {
        $(impl CsiResponse for $ty {
            fn summary(&self) -> Option<String> {
                Some("OK".into())
            }
        })*
    };
}

empty_response!(
    DeleteVolumeResponse,
    ControllerUnpublishVolumeResponse,
    DeleteSnapshotResponse,
    NodeStageVolumeResponse,
    NodeUnstageVolumeResponse,
    NodePublishVolumeResponse,
    NodeUnpublishVolumeResponse
);

impl CsiResponse for GetPluginInfoResponse {}
impl CsiResponse for GetPluginCapabilitiesResponse {}
impl CsiResponse for ProbeResponse {}
impl CsiResponse for ValidateVolumeCapabilitiesResponse {}
impl CsiResponse for ListVolumesResponse {}
impl CsiResponse for GetCapacityResponse {}
impl CsiResponse for ControllerGetCapabilitiesResponse {}
impl CsiResponse for ListSnapshotsResponse {}
impl CsiResponse for NodeGetVolumeStatsResponse {}
impl CsiResponse for NodeGetCapabilitiesResponse {}

impl CsiResponse for CreateVolumeResponse {
    fn volume_id(&self) -> Option<&str> {
        self.volume.as_ref().and_then(|v| set(&v.volume_id))
    }

    /// The volume, and the node the driver put it on, where that is decided (its
    /// accessible_topology's node key; the PV's node affinity comes from it).
    fn summary(&self) -> Option<String> {
        let mut text = volume_summary(&self.volume)?;
        let node = self.volume.iter().find_map(|v| {
            v.accessible_topology
                .iter()
                .find_map(|t| t.segments.get(super::driver::TOPOLOGY_KEY_NODE))
        });
        if let Some(node) = node {
            text.push_str(" on ");
            text.push_str(node);
        }
        Some(text)
    }
}

impl CsiResponse for ControllerGetVolumeResponse {
    fn summary(&self) -> Option<String> {
        volume_summary(&self.volume)
    }
}

impl CsiResponse for ControllerPublishVolumeResponse {
    fn summary(&self) -> Option<String> {
        if self.publish_context.is_empty() {
            return Some("OK".into());
        }
        let mut text = String::with_capacity(64);
        text.push('{');
        push_json_str(&mut text, "publish_context");
        text.push(':');
        push_json_map(&mut text, &self.publish_context);
        text.push('}');
        Some(crate::record::wire::json_head(text))
    }
}

impl CsiResponse for CreateSnapshotResponse {
    fn summary(&self) -> Option<String> {
        let s = self
            .snapshot
            .as_ref()
            .filter(|s| !s.snapshot_id.is_empty())?;
        Some(format!("snapshot {}", s.snapshot_id))
    }
}

impl CsiResponse for ControllerExpandVolumeResponse {
    fn summary(&self) -> Option<String> {
        match (self.capacity_bytes, self.node_expansion_required) {
            (0, false) => Some("OK".into()),
            (0, true) => None,
            (bytes, node) => Some(format!(
                "capacity {}{}",
                crate::util::quantity::format_bytes(bytes),
                if node {
                    ", node_expansion_required"
                } else {
                    ""
                }
            )),
        }
    }
}

impl CsiResponse for NodeExpandVolumeResponse {
    fn summary(&self) -> Option<String> {
        Some(match self.capacity_bytes {
            0 => "OK".into(),
            bytes => format!("capacity {}", crate::util::quantity::format_bytes(bytes)),
        })
    }
}

/// kubelet calls NodeGetInfo once per node: its summary is the head of the protojson form
/// (keys sorted, as the JSON rule prints them), written here without building a JSON tree.
impl CsiResponse for NodeGetInfoResponse {
    fn summary(&self) -> Option<String> {
        let mut text = String::with_capacity(96);
        let field = |text: &mut String, key: &str| {
            text.push(if text.is_empty() { '{' } else { ',' });
            push_json_str(text, key);
            text.push(':');
        };
        if let Some(t) = &self.accessible_topology {
            field(&mut text, "accessible_topology");
            text.push('{');
            if !t.segments.is_empty() {
                push_json_str(&mut text, "segments");
                text.push(':');
                push_json_map(&mut text, &t.segments);
            }
            text.push('}');
        }
        if self.max_volumes_per_node != 0 {
            field(&mut text, "max_volumes_per_node");
            text.push('"');
            text.push_str(&self.max_volumes_per_node.to_string());
            text.push('"');
        }
        if !self.node_id.is_empty() {
            field(&mut text, "node_id");
            push_json_str(&mut text, &self.node_id);
        }
        Some(if text.is_empty() {
            "OK".into()
        } else {
            text.push('}');
            crate::record::wire::json_head(text)
        })
    }
}

/// A string map as a JSON object (keys in order, as a BTreeMap keeps them).
fn push_json_map(text: &mut String, map: &StringMap) {
    text.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        push_json_str(text, k);
        text.push(':');
        push_json_str(text, v);
    }
    text.push('}');
}

/// `s` as a JSON string, escaped as serde_json escapes it.
fn push_json_str(text: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        text.push('"');
        text.push_str(s);
        text.push('"');
    } else {
        text.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}
