//! The lab's CSI driver `hostpath.csi.lab`: configuration, registered nodes and volume state.
//!
//! Modelled on `kubernetes-csi/csi-driver-host-path` (`pkg/hostpath/*.go`, `pkg/state/state.go`)
//! with the codes of the CSI spec (reference E.5/E.6). One `Driver` holds the controller's view
//! and every node plugin's view; node RPCs go through `Driver::node(node_id)`.
//!
//! Choices (documented here once):
//! - IDs are deterministic and readable: `vol-` / `snap-` + 8 hex digits of the name
//!   (`crate::util::hash`), re-salted on the rare collision.
//! - Sizes: a volume with no capacity_range gets `default_volume_size` (1 GiB), or its
//!   source's size; `max_volume_size` (1 TiB) → OUT_OF_RANGE; `total_capacity` (100 TiB) is
//!   shared by all volumes and GetCapacity reports what is left.
//! - Nodes: `add_node` registers a node plugin with topology
//!   `{"topology.hostpath.csi.lab/node": id, "topology.kubernetes.io/zone": zone}` and an
//!   attach limit (`DEFAULT_MAX_VOLUMES_PER_NODE` = 16; 0 = unlimited).
//! - Codes: the spec's where its error table has a row, hostpath's where the spec is silent.
//! - Lifecycle checks are always on (hostpath's `--check-volume-lifecycle`): DeleteVolume of a
//!   volume in use → FAILED_PRECONDITION (spec), ControllerUnpublish while staged/published →
//!   INTERNAL, NodeUnstage while published → INTERNAL, NodeStage before ControllerPublish →
//!   INTERNAL (all three as the hostpath driver; the spec is silent). NodePublish before
//!   NodeStage → FAILED_PRECONDITION (hostpath).
//! - Topology: a volume created with accessibility_requirements lives on the node CreateVolume
//!   picks, as a hostpath volume lives on its node; other nodes are NOT_FOUND to it
//!   (ControllerPublish: hostpath's foreign-node message; node RPCs: an unknown volume).
//!   Volumes created without requirements are reachable from every node.
//! - Access modes: CreateVolume takes every mode with either access type, as
//!   csi-driver-host-path does (it checks only that block and mount are not both asked
//!   for); an RWX or ROX volume still lives on one node, so a pod on another node fails its
//!   attach with hostpath's NOT_FOUND. Volumes are devices (`/dev/lab/vol-…` in the publish
//!   context).
//! - Snapshots are independent of their source volume (hostpath keeps a tarball), so a volume
//!   with snapshots may be deleted.

use super::status::Status;
use super::types::*;
use crate::util::hash::hex_id;
use std::collections::BTreeMap;

/// The driver name.
pub const DRIVER_NAME: &str = "hostpath.csi.lab";
/// Topology key naming the node a volume lives on.
pub const TOPOLOGY_KEY_NODE: &str = "topology.hostpath.csi.lab/node";
/// Well-known Kubernetes zone key, set when a node has a zone.
pub const TOPOLOGY_KEY_ZONE: &str = "topology.kubernetes.io/zone";
/// Default attach limit per node.
pub(crate) const DEFAULT_MAX_VOLUMES_PER_NODE: i64 = 16;

const GIB: i64 = 1 << 30;
const TIB: i64 = 1 << 40;

/// What the driver advertises and how big things may get. `Default` is the lab's driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverConfig {
    /// Plugin name (GetPluginInfo).
    pub name: String,
    /// Plugin version (GetPluginInfo), the crate version by default.
    pub vendor_version: String,
    /// Plugin services (GetPluginCapabilities).
    pub plugin_services: Vec<ServiceType>,
    /// Volume expansion kind (GetPluginCapabilities), if any.
    pub volume_expansion: Option<ExpansionType>,
    /// Controller RPC capabilities.
    pub controller_capabilities: Vec<ControllerRpcType>,
    /// Node RPC capabilities.
    pub node_capabilities: Vec<NodeRpcType>,
    /// Size of a volume created without capacity_range.
    pub default_volume_size: i64,
    /// Largest volume (create or expand); above → OUT_OF_RANGE.
    pub max_volume_size: i64,
    /// Storage shared by all volumes (GetCapacity).
    pub total_capacity: i64,
    /// Attach limit used by `add_node_default`.
    pub default_max_volumes_per_node: i64,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            name: DRIVER_NAME.to_string(),
            vendor_version: env!("CARGO_PKG_VERSION").to_string(),
            plugin_services: vec![
                ServiceType::ControllerService,
                ServiceType::VolumeAccessibilityConstraints,
            ],
            volume_expansion: Some(ExpansionType::Online),
            controller_capabilities: vec![
                ControllerRpcType::CreateDeleteVolume,
                ControllerRpcType::PublishUnpublishVolume,
                ControllerRpcType::ListVolumes,
                ControllerRpcType::GetCapacity,
                ControllerRpcType::CreateDeleteSnapshot,
                ControllerRpcType::ListSnapshots,
                ControllerRpcType::CloneVolume,
                ControllerRpcType::PublishReadonly,
                ControllerRpcType::ExpandVolume,
                ControllerRpcType::ListVolumesPublishedNodes,
                ControllerRpcType::GetVolume,
                ControllerRpcType::SingleNodeMultiWriter,
            ],
            node_capabilities: vec![
                NodeRpcType::StageUnstageVolume,
                NodeRpcType::GetVolumeStats,
                NodeRpcType::ExpandVolume,
                NodeRpcType::SingleNodeMultiWriter,
            ],
            default_volume_size: GIB,
            max_volume_size: TIB,
            total_capacity: 100 * TIB,
            default_max_volumes_per_node: DEFAULT_MAX_VOLUMES_PER_NODE,
        }
    }
}

impl DriverConfig {
    #[cfg(test)]
    /// The lab's driver without STAGE_UNSTAGE_VOLUME (spec Figure 5: no NodeStage step).
    pub(crate) fn without_staging() -> Self {
        let mut c = DriverConfig::default();
        c.node_capabilities
            .retain(|c| *c != NodeRpcType::StageUnstageVolume);
        c
    }

    #[cfg(test)]
    /// The lab's driver without PUBLISH_UNPUBLISH_VOLUME (no attach step).
    pub(crate) fn without_attach() -> Self {
        let mut c = DriverConfig::default();
        c.controller_capabilities.retain(|c| {
            *c != ControllerRpcType::PublishUnpublishVolume
                && *c != ControllerRpcType::ListVolumesPublishedNodes
        });
        c
    }
}

/// How a volume is accessed: a filesystem or a raw block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessType {
    /// Filesystem (`mount`).
    Mount,
    /// Raw block (`block`).
    Block,
}

/// A registered node plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node ID (the Kubernetes node name in the lab).
    pub node_id: String,
    /// Topology segments NodeGetInfo reports.
    pub segments: StringMap,
    /// Attach limit (0 = unlimited).
    pub max_volumes_per_node: i64,
}

/// A volume attached to a node by ControllerPublishVolume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Attached read-only.
    pub readonly: bool,
    /// The capability it was attached with.
    pub capability: VolumeCapability,
    /// What ControllerPublish returned.
    pub publish_context: StringMap,
}

/// A volume staged on a node by NodeStageVolume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staging {
    /// The staging (global mount) path.
    pub path: String,
    /// The capability it was staged with.
    pub capability: VolumeCapability,
}

/// A volume published at one target path by NodePublishVolume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// The staging path given (empty without STAGE_UNSTAGE).
    pub staging_target_path: String,
    /// Mounted read-only.
    pub readonly: bool,
    /// The capability it was published with.
    pub capability: VolumeCapability,
    /// The publish_context given.
    pub publish_context: StringMap,
    /// The volume_context given.
    pub volume_context: StringMap,
}

/// Everything the driver knows about one volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeRecord {
    /// The CreateVolume name.
    pub name: String,
    /// The volume ID.
    pub volume_id: String,
    /// Device size in bytes.
    pub capacity_bytes: i64,
    /// Filesystem size (grows on NodeExpandVolume; equals capacity for block).
    pub fs_size_bytes: i64,
    /// Bytes in use (the lab sets this to show a filling disk).
    pub used_bytes: i64,
    /// Mount or block.
    pub access_type: AccessType,
    /// The access modes CreateVolume asked for (a repeat must ask for the same).
    pub access_modes: Vec<AccessModeType>,
    /// CreateVolume parameters, returned as volume_context.
    pub parameters: StringMap,
    /// Snapshot or volume it was created from.
    pub content_source: Option<VolumeContentSource>,
    /// Where it can be reached from.
    pub accessible_topology: Vec<Topology>,
    /// ControllerPublish state by node.
    pub attachments: BTreeMap<String, Attachment>,
    /// NodeStage state by node.
    pub staged: BTreeMap<String, Staging>,
    /// NodePublish state by node, then by target path.
    pub published: BTreeMap<String, BTreeMap<String, Publication>>,
}

impl VolumeRecord {
    /// The volume as CreateVolume returns it.
    pub(crate) fn to_volume(&self) -> Volume {
        Volume {
            capacity_bytes: self.capacity_bytes,
            volume_id: self.volume_id.clone(),
            volume_context: self.parameters.clone(),
            content_source: self.content_source.clone(),
            accessible_topology: self.accessible_topology.clone(),
        }
    }

    /// True when attached, staged or published anywhere.
    pub fn in_use(&self) -> bool {
        !self.attachments.is_empty()
            || !self.staged.is_empty()
            || self.published.values().any(|t| !t.is_empty())
    }

    /// The node a volume with accessible topology lives on: its `TOPOLOGY_KEY_NODE` segment.
    /// Every topology the lab provisions carries one, since CreateVolume copies the segments
    /// of the node it picks (`pick_topology`). None for a volume reachable from every node.
    pub(crate) fn topology_node(&self) -> Option<&str> {
        self.accessible_topology
            .iter()
            .find_map(|t| t.segments.get(TOPOLOGY_KEY_NODE))
            .map(String::as_str)
    }

    /// Target paths published on a node.
    pub(crate) fn targets_on(&self, node_id: &str) -> Vec<String> {
        self.published
            .get(node_id)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// A snapshot the driver has cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRecord {
    /// The CreateSnapshot name.
    pub name: String,
    /// The snapshot as returned on the wire.
    pub snapshot: Snapshot,
}

/// Where a volume stands on one node (spec Figures 5 and 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LifecycleState {
    /// Created, not attached to this node.
    Created,
    /// Attached to this node (ControllerPublish done).
    NodeReady,
    /// Staged on this node (NodeStage done).
    VolReady,
    /// Published at one or more target paths.
    Published,
}

impl LifecycleState {
    /// Where a volume stands on a node from what the driver holds there: published at a
    /// target, else staged, else attached, else only created.
    pub fn of(attached: bool, staged: bool, published: bool) -> Self {
        if published {
            LifecycleState::Published
        } else if staged {
            LifecycleState::VolReady
        } else if attached {
            LifecycleState::NodeReady
        } else {
            LifecycleState::Created
        }
    }

    /// The spec's name (`NODE_READY`).
    pub fn name(self) -> &'static str {
        match self {
            LifecycleState::Created => "CREATED",
            LifecycleState::NodeReady => "NODE_READY",
            LifecycleState::VolReady => "VOL_READY",
            LifecycleState::Published => "PUBLISHED",
        }
    }
}

impl std::fmt::Display for LifecycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The driver: identity, controller and every node plugin, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driver {
    /// What it advertises.
    pub config: DriverConfig,
    pub(crate) ready: bool,
    pub(crate) clock_now: super::protojson::Timestamp,
    pub(crate) nodes: BTreeMap<String, NodeInfo>,
    pub(crate) volumes: BTreeMap<String, VolumeRecord>,
    pub(crate) snapshots: BTreeMap<String, SnapshotRecord>,
    /// How many volumes are attached (ControllerPublished) to each node: the attach limit
    /// check reads this instead of walking every volume. Kept by ControllerPublishVolume
    /// and ControllerUnpublishVolume, the only writers of `attachments`.
    pub(crate) attached_per_node: BTreeMap<String, i64>,
    /// Volume ID by CreateVolume name, so a CreateVolume finds an existing name without
    /// walking every volume (hostpath's `GetVolumeByName` is such a walk; with V volumes,
    /// provisioning them one by one would be O(V²)). Names are unique: CreateVolume answers
    /// a name it has with that volume or ALREADY_EXISTS. Kept by
    /// [`Driver::insert_volume`] and [`Driver::remove_volume`], the only writers of
    /// `volumes`' keys.
    volume_ids_by_name: BTreeMap<String, String>,
    /// Snapshot ID by CreateSnapshot name, likewise (CreateSnapshot is idempotent by
    /// name). Kept by CreateSnapshot and DeleteSnapshot.
    snapshot_ids_by_name: BTreeMap<String, String>,
    /// The sum of every volume's `capacity_bytes`, what GetCapacity and the capacity checks
    /// subtract from `total_capacity`, kept as volumes are created, deleted and expanded
    /// instead of summed over every volume on each call. Wide enough never to overflow.
    used_capacity: i128,
}

impl Default for Driver {
    fn default() -> Self {
        Driver::new(DriverConfig::default())
    }
}

impl Driver {
    /// A driver with no nodes, volumes or snapshots.
    pub fn new(config: DriverConfig) -> Self {
        Driver {
            config,
            ready: true,
            clock_now: super::protojson::Timestamp::default(),
            nodes: BTreeMap::new(),
            volumes: BTreeMap::new(),
            snapshots: BTreeMap::new(),
            attached_per_node: BTreeMap::new(),
            volume_ids_by_name: BTreeMap::new(),
            snapshot_ids_by_name: BTreeMap::new(),
            used_capacity: 0,
        }
    }

    /// Registers a node plugin (as node-driver-registrar would). Fails on an empty or
    /// already registered ID, or a negative limit.
    pub(crate) fn add_node(
        &mut self,
        node_id: &str,
        zone: Option<&str>,
        max_volumes_per_node: i64,
    ) -> Result<(), String> {
        if node_id.is_empty() {
            return Err("node id must not be empty".to_string());
        }
        if self.node_registered(node_id) {
            return Err(format!("node {node_id:?} is already registered"));
        }
        if max_volumes_per_node < 0 {
            return Err(format!(
                "max_volumes_per_node must not be negative (got {max_volumes_per_node})"
            ));
        }
        let mut segments = StringMap::new();
        segments.insert(TOPOLOGY_KEY_NODE.to_string(), node_id.to_string());
        if let Some(z) = zone.filter(|z| !z.is_empty()) {
            segments.insert(TOPOLOGY_KEY_ZONE.to_string(), z.to_string());
        }
        self.nodes.insert(
            node_id.to_string(),
            NodeInfo {
                node_id: node_id.to_string(),
                segments,
                max_volumes_per_node,
            },
        );
        Ok(())
    }

    /// Whether a node plugin is registered on `node_id`.
    pub(crate) fn node_registered(&self, node_id: &str) -> bool {
        self.nodes.contains_key(node_id)
    }

    /// The node registered on `node_id`.
    pub(crate) fn registered_node(&self, node_id: &str) -> Option<&NodeInfo> {
        self.nodes.get(node_id)
    }

    /// Registers a node with the configured default attach limit.
    pub(crate) fn add_node_default(
        &mut self,
        node_id: &str,
        zone: Option<&str>,
    ) -> Result<(), String> {
        let max = self.config.default_max_volumes_per_node;
        self.add_node(node_id, zone, max)
    }

    /// Registered nodes, by ID.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }

    /// Volumes, by ID.
    pub fn volumes(&self) -> impl Iterator<Item = &VolumeRecord> {
        self.volumes.values()
    }

    /// One volume.
    pub fn volume(&self, volume_id: &str) -> Option<&VolumeRecord> {
        self.volumes.get(volume_id)
    }

    /// Snapshots, by ID.
    pub fn snapshots(&self) -> impl Iterator<Item = &SnapshotRecord> {
        self.snapshots.values()
    }

    #[cfg(test)]
    /// Sets the logical clock (seconds since the epoch) used for snapshot creation_time.
    pub(crate) fn set_clock(&mut self, seconds: i64) {
        self.clock_now = super::protojson::Timestamp::from_seconds(seconds);
    }

    /// What the driver's wall clock reads, in milliseconds since the Unix epoch.
    pub(crate) fn set_clock_millis(&mut self, millis: i64) {
        self.clock_now = super::protojson::Timestamp::from_millis(millis);
    }

    #[cfg(test)]
    /// Sets what Probe reports (false = healthy but still initialising).
    pub(crate) fn set_ready(&mut self, ready: bool) {
        self.ready = ready;
    }

    /// Where a volume stands on a node; None if the volume does not exist.
    pub fn lifecycle(&self, volume_id: &str, node_id: &str) -> Option<LifecycleState> {
        let v = self.volumes.get(volume_id)?;
        Some(LifecycleState::of(
            v.attachments.contains_key(node_id),
            v.staged.contains_key(node_id),
            v.published.get(node_id).is_some_and(|t| !t.is_empty()),
        ))
    }

    /// Bytes not taken by any volume (what GetCapacity reports).
    pub(crate) fn available_capacity(&self) -> i64 {
        // Capacities are never negative, so the exact sum clamped to i64 is what adding
        // them up with saturation gives.
        let used = i64::try_from(self.used_capacity).unwrap_or(i64::MAX);
        debug_assert_eq!(
            used,
            self.volumes
                .values()
                .map(|v| v.capacity_bytes)
                .fold(0i64, i64::saturating_add),
            "used_capacity is stale"
        );
        self.config.total_capacity.saturating_sub(used)
    }

    // -------------------------------------------------------------------------------
    // Helpers shared by the services
    // -------------------------------------------------------------------------------

    pub(crate) fn has_controller_cap(&self, c: ControllerRpcType) -> bool {
        self.config.controller_capabilities.contains(&c)
    }

    pub(crate) fn has_node_cap(&self, c: NodeRpcType) -> bool {
        self.config.node_capabilities.contains(&c)
    }

    pub(crate) fn has_plugin_service(&self, s: ServiceType) -> bool {
        self.config.plugin_services.contains(&s)
    }

    /// UNIMPLEMENTED unless the controller advertises `c` (spec: unsupported RPCs return 12).
    pub(crate) fn require_controller_cap(
        &self,
        c: ControllerRpcType,
        rpc: &str,
    ) -> Result<(), Status> {
        if self.has_controller_cap(c) {
            Ok(())
        } else {
            Err(Status::unimplemented(format!("{rpc} is not supported")))
        }
    }

    /// UNIMPLEMENTED unless the node plugin advertises `c`.
    pub(crate) fn require_node_cap(&self, c: NodeRpcType, rpc: &str) -> Result<(), Status> {
        if self.has_node_cap(c) {
            Ok(())
        } else {
            Err(Status::unimplemented(format!("{rpc} is not supported")))
        }
    }

    /// True when the volume carries accessible topology and none of it matches `node_id`'s
    /// segments (an unregistered node matches nothing). A volume without topology is
    /// reachable from every node: the spec lets the CO assume so when accessible_topology is
    /// empty.
    pub(crate) fn outside_topology(&self, vol: &VolumeRecord, node_id: &str) -> bool {
        if vol.accessible_topology.is_empty() {
            return false;
        }
        let Some(node) = self.nodes.get(node_id) else {
            return true;
        };
        !vol.accessible_topology
            .iter()
            .any(|t| segments_match(&node.segments, &t.segments))
    }

    /// The volume, or hostpath's NOT_FOUND (`pkg/state/state.go` GetVolumeByID).
    pub(crate) fn get_volume(&self, volume_id: &str) -> Result<&VolumeRecord, Status> {
        self.volumes
            .get(volume_id)
            .ok_or_else(|| volume_not_found(volume_id))
    }

    pub(crate) fn get_volume_mut(&mut self, volume_id: &str) -> Result<&mut VolumeRecord, Status> {
        self.volumes
            .get_mut(volume_id)
            .ok_or_else(|| volume_not_found(volume_id))
    }

    /// The volume CreateVolume made under `name`, if any.
    pub(crate) fn volume_by_name(&self, name: &str) -> Option<&VolumeRecord> {
        let found = self
            .volume_ids_by_name
            .get(name)
            .and_then(|id| self.volumes.get(id));
        debug_assert_eq!(
            found.map(|v| &v.volume_id),
            self.volumes
                .values()
                .find(|v| v.name == name)
                .map(|v| &v.volume_id),
            "volume_ids_by_name is stale"
        );
        found
    }

    /// Stores a new volume (CreateVolume), indexing its name and counting its capacity.
    pub(crate) fn insert_volume(&mut self, record: VolumeRecord) {
        // IDs are fresh (`new_id`), so nothing is replaced; if it were, its entries go.
        self.remove_volume(&record.volume_id);
        self.volume_ids_by_name
            .insert(record.name.clone(), record.volume_id.clone());
        self.used_capacity += i128::from(record.capacity_bytes);
        self.volumes.insert(record.volume_id.clone(), record);
    }

    /// Drops a volume (DeleteVolume) from the store and its indexes.
    pub(crate) fn remove_volume(&mut self, volume_id: &str) -> Option<VolumeRecord> {
        let old = self.volumes.remove(volume_id)?;
        self.forget_volume(&old);
        Some(old)
    }

    /// Takes a volume that is no longer stored out of the name index and the used sum.
    fn forget_volume(&mut self, old: &VolumeRecord) {
        if self.volume_ids_by_name.get(&old.name) == Some(&old.volume_id) {
            self.volume_ids_by_name.remove(&old.name);
        }
        self.used_capacity -= i128::from(old.capacity_bytes);
    }

    /// Sets a volume's device size (expansion), keeping the used sum. Fails for an unknown
    /// volume, as [`Driver::get_volume_mut`] does.
    pub(crate) fn set_volume_capacity(
        &mut self,
        volume_id: &str,
        capacity: i64,
    ) -> Result<&mut VolumeRecord, Status> {
        let vol = self
            .volumes
            .get_mut(volume_id)
            .ok_or_else(|| volume_not_found(volume_id))?;
        self.used_capacity += i128::from(capacity) - i128::from(vol.capacity_bytes);
        vol.capacity_bytes = capacity;
        Ok(vol)
    }

    /// The snapshot CreateSnapshot cut under `name`, if any.
    pub(crate) fn snapshot_by_name(&self, name: &str) -> Option<&SnapshotRecord> {
        let found = self
            .snapshot_ids_by_name
            .get(name)
            .and_then(|id| self.snapshots.get(id));
        debug_assert_eq!(
            found.map(|s| &s.snapshot.snapshot_id),
            self.snapshots
                .values()
                .find(|s| s.name == name)
                .map(|s| &s.snapshot.snapshot_id),
            "snapshot_ids_by_name is stale"
        );
        found
    }

    /// Stores a new snapshot (CreateSnapshot), indexing its name.
    pub(crate) fn insert_snapshot(&mut self, record: SnapshotRecord) {
        let id = record.snapshot.snapshot_id.clone();
        self.remove_snapshot(&id);
        self.snapshot_ids_by_name
            .insert(record.name.clone(), id.clone());
        self.snapshots.insert(id, record);
    }

    /// Drops a snapshot (DeleteSnapshot) from the store and the name index.
    pub(crate) fn remove_snapshot(&mut self, snapshot_id: &str) -> Option<SnapshotRecord> {
        let old = self.snapshots.remove(snapshot_id)?;
        self.forget_snapshot(&old);
        Some(old)
    }

    fn forget_snapshot(&mut self, old: &SnapshotRecord) {
        if self.snapshot_ids_by_name.get(&old.name) == Some(&old.snapshot.snapshot_id) {
            self.snapshot_ids_by_name.remove(&old.name);
        }
    }

    /// The snapshot, or hostpath's NOT_FOUND (GetSnapshotByID).
    pub(crate) fn get_snapshot(&self, snapshot_id: &str) -> Result<&SnapshotRecord, Status> {
        self.snapshots.get(snapshot_id).ok_or_else(|| {
            Status::not_found(format!(
                "snapshot id {snapshot_id} does not exist in the snapshots list"
            ))
        })
    }

    /// A fresh deterministic ID `<prefix>-<8 hex of name>`, re-salted if taken.
    pub(crate) fn new_id(&self, prefix: &str, name: &str) -> String {
        let taken = |id: &str| self.volumes.contains_key(id) || self.snapshots.contains_key(id);
        let mut id = format!("{prefix}-{}", hex_id(&[prefix, name], 8));
        let mut salt = 1u32;
        while taken(&id) {
            id = format!("{prefix}-{}", hex_id(&[prefix, name, &salt.to_string()], 8));
            salt = salt.saturating_add(1);
        }
        id
    }
}

/// hostpath's NOT_FOUND for a volume its state does not hold (`pkg/state/state.go`
/// GetVolumeByID).
pub(crate) fn volume_not_found(volume_id: &str) -> Status {
    Status::not_found(format!(
        "volume id {volume_id} does not exist in the volumes list"
    ))
}

/// True when every segment of `want` is present with the same value in `have`.
pub(crate) fn segments_match(have: &StringMap, want: &StringMap) -> bool {
    want.iter().all(|(k, v)| have.get(k) == Some(v))
}

/// Go's `%v` of a `[]string` (`[a b]`), as hostpath messages print path sets.
pub(crate) fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// Go's `%q` of a `[]string` (`["a" "b"]`).
pub(crate) fn go_quoted_list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", q.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(d: &mut Driver, name: &str, bytes: i64) -> String {
        d.create_volume(CreateVolumeRequest {
            name: name.into(),
            capacity_range: Some(CapacityRange {
                required_bytes: bytes,
                limit_bytes: 0,
            }),
            volume_capabilities: vec![VolumeCapability::mount(
                AccessModeType::SingleNodeWriter,
                "",
            )],
            ..Default::default()
        })
        .unwrap()
        .volume
        .unwrap()
        .volume_id
    }

    #[test]
    fn names_and_used_capacity_follow_create_expand_and_delete() {
        let mut d = Driver::default();
        let total = d.config.total_capacity;
        let a = create(&mut d, "a", GIB);
        let b = create(&mut d, "b", 2 * GIB);
        assert_eq!(d.available_capacity(), total - 3 * GIB);
        assert_eq!(d.volume_by_name("b").map(|v| &v.volume_id), Some(&b));
        // The same name again is the same volume and takes nothing more.
        assert_eq!(create(&mut d, "a", GIB), a);
        assert_eq!(d.available_capacity(), total - 3 * GIB);
        d.controller_expand_volume(ControllerExpandVolumeRequest {
            volume_id: b.clone(),
            capacity_range: Some(CapacityRange {
                required_bytes: 5 * GIB,
                limit_bytes: 0,
            }),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(d.available_capacity(), total - 6 * GIB);
        d.delete_volume(DeleteVolumeRequest {
            volume_id: a.clone(),
            ..Default::default()
        })
        .unwrap();
        assert!(d.volume_by_name("a").is_none());
        assert_eq!(d.available_capacity(), total - 5 * GIB);
        // The name is free again: a new volume (the same deterministic ID).
        assert_eq!(create(&mut d, "a", GIB), a);
        assert_eq!(d.available_capacity(), total - 6 * GIB);

        let snap = d
            .create_snapshot(CreateSnapshotRequest {
                source_volume_id: b.clone(),
                name: "s".into(),
                ..Default::default()
            })
            .unwrap()
            .snapshot
            .unwrap()
            .snapshot_id;
        assert_eq!(
            d.snapshot_by_name("s").map(|s| &s.snapshot.snapshot_id),
            Some(&snap)
        );
        d.delete_snapshot(DeleteSnapshotRequest {
            snapshot_id: snap,
            ..Default::default()
        })
        .unwrap();
        assert!(d.snapshot_by_name("s").is_none());
    }
}
