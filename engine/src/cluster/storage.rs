//! The storage API kinds: StorageClass, PersistentVolumeClaim, PersistentVolume,
//! VolumeAttachment, CSIDriver, CSINode, VolumeSnapshot and VolumeSnapshotContent, with
//! the field names Kubernetes prints.

use super::store::Kind;
use serde::Serialize;
use std::collections::BTreeMap;

/// The finalizer the StorageObjectInUseProtection admission plugin puts on every claim;
/// kube-controller-manager's pvc-protection controller removes it from a deleted claim no
/// pod uses.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// The finalizer the StorageObjectInUseProtection admission plugin puts on every PV;
/// kube-controller-manager's pv-protection controller removes it from a deleted PV that is
/// no longer Bound.
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

fn is_false(b: &bool) -> bool {
    !*b
}

/// `StorageClass` (storage.k8s.io/v1). Its fields sit at the top level, not under `spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct StorageClassSpec {
    /// The CSI driver that provisions volumes of this class.
    pub provisioner: String,
    /// Opaque parameters passed to CreateVolume.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// `Delete` or `Retain`.
    pub reclaim_policy: String,
    /// `Immediate` or `WaitForFirstConsumer`.
    pub volume_binding_mode: String,
    /// Whether claims of this class may grow.
    #[serde(skip_serializing_if = "is_false")]
    pub allow_volume_expansion: bool,
    /// Topology the class is restricted to (`topology.kubernetes.io/zone in […]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_topologies: Vec<TopologySelectorTerm>,
}

impl StorageClassSpec {
    /// Whether volumes of this class wait for a pod to be scheduled before they are
    /// provisioned or bound (`volumeBindingMode: WaitForFirstConsumer`).
    pub fn waits_for_first_consumer(&self) -> bool {
        self.volume_binding_mode == "WaitForFirstConsumer"
    }

    /// Whether a node with these labels is in the class's `allowedTopologies`
    /// (`v1helper.MatchTopologySelectorTerms`): no term allows every node; otherwise one
    /// term must hold, every one of its requirements on a label the node has with one of
    /// the values. A term with no requirement selects nothing.
    pub fn allows_node(&self, labels: &BTreeMap<String, String>) -> bool {
        self.allowed_topologies.is_empty()
            || self.allowed_topologies.iter().any(|t| {
                !t.match_label_expressions.is_empty()
                    && t.match_label_expressions
                        .iter()
                        .all(|r| labels.get(&r.key).is_some_and(|v| r.values.contains(v)))
            })
    }
}

/// One `allowedTopologies` term.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TopologySelectorTerm {
    /// Label requirements ANDed together.
    pub match_label_expressions: Vec<TopologyRequirement>,
}

/// `key in values`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct TopologyRequirement {
    /// Label key.
    pub key: String,
    /// Allowed values.
    pub values: Vec<String>,
}

/// Nothing: StorageClass, CSIDriver and CSINode (storage.k8s.io/v1) have no status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NoStatus {}

impl Kind for StorageClassSpec {
    const API_KIND: super::ApiKind = super::ApiKind::StorageClass;
    const API_VERSION: &'static str = "storage.k8s.io/v1";
    const RESOURCE: &'static str = "storageclasses.storage.k8s.io";
    const NAMESPACED: bool = false;
    const FLAT: bool = true;
    type Status = NoStatus;
}

/// `spec.resources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Resources {
    /// `requests.storage` and friends.
    pub requests: BTreeMap<String, String>,
}

/// `spec.dataSource` / `dataSourceRef`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TypedLocalObjectReference {
    /// `snapshot.storage.k8s.io` for snapshots, empty for PVCs.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// `VolumeSnapshot` or `PersistentVolumeClaim`.
    pub kind: String,
    /// Name in the claim's namespace.
    pub name: String,
}

/// `PersistentVolumeClaim.spec` (v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PvcSpec {
    /// `ReadWriteOnce`, `ReadOnlyMany`, `ReadWriteMany`, `ReadWriteOncePod`.
    pub access_modes: Vec<String>,
    /// `requests.storage`.
    pub resources: Resources,
    /// The class (set to the default class on create when omitted).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub storage_class_name: String,
    /// `Filesystem` or `Block`.
    pub volume_mode: String,
    /// The bound PV's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub volume_name: String,
    /// Snapshot or claim to pre-populate from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_source: Option<TypedLocalObjectReference>,
}

/// A claim condition (`Resizing`, `FileSystemResizePending`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PvcCondition {
    /// Condition type.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// `True`.
    pub status: String,
    /// `lastProbeTime`: the resize conditions never set it, so the API server writes the
    /// zero time as `null`.
    #[serde(serialize_with = "null_time")]
    pub last_probe_time: (),
    /// When the condition was set (the tick), written as a timestamp.
    #[serde(serialize_with = "tick_as_timestamp")]
    pub last_transition_time: crate::util::time::Millis,
    /// Human-readable message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A zero `metav1.Time`, as its JSON reads: `null`.
fn null_time<S: serde::Serializer>(_: &(), s: S) -> Result<S::Ok, S::Error> {
    s.serialize_none()
}

fn tick_as_timestamp<S: serde::Serializer>(
    tick: &crate::util::time::Millis,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&super::meta::timestamp(tick.whole_secs()))
}

/// `PersistentVolumeClaim.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PvcStatus {
    /// `Pending`, `Bound` or `Lost`.
    pub phase: String,
    /// The bound volume's access modes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    /// The bound volume's usable size (`storage`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, String>,
    /// Resize conditions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<PvcCondition>,
}

impl Default for PvcStatus {
    fn default() -> Self {
        PvcStatus {
            phase: "Pending".into(),
            access_modes: Vec::new(),
            capacity: BTreeMap::new(),
            conditions: Vec::new(),
        }
    }
}

impl Kind for PvcSpec {
    const API_KIND: super::ApiKind = super::ApiKind::PersistentVolumeClaim;
    const API_VERSION: &'static str = "v1";
    const RESOURCE: &'static str = "persistentvolumeclaims";
    const NAMESPACED: bool = true;
    const PROTECTION_FINALIZER: Option<&'static str> = Some(PVC_PROTECTION);
    type Status = PvcStatus;
}

/// `claimRef` of a PV (and a snapshot content's `volumeSnapshotRef`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// `apiVersion` (`v1` for a claim); empty when the writer gave none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `PersistentVolumeClaim`.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
    /// `resourceVersion`: the object's when the reference was taken; empty when the writer
    /// gave none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
}

impl ObjectReference {
    /// `reference.GetReference(scheme, obj)`, as the PV controller's binder, the external
    /// provisioner (a PV's `claimRef`) and the snapshot controller (a content's
    /// `volumeSnapshotRef`) take it: the object's apiVersion, kind, namespace, name, uid and
    /// its resourceVersion as they read it.
    pub fn of<K: Kind>(obj: &super::Object<K>) -> Self {
        ObjectReference {
            api_version: K::API_VERSION.into(),
            kind: K::KIND.into(),
            namespace: obj.metadata.namespace().clone(),
            name: obj.metadata.name().clone(),
            uid: obj.metadata.uid.to_string(),
            resource_version: obj.metadata.resource_version.to_string(),
        }
    }
}

/// `spec.csi` of a PV.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CsiPvSource {
    /// The driver name.
    pub driver: String,
    /// The driver's volume ID.
    pub volume_handle: String,
    /// Filesystem type.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fs_type: String,
    /// volume_context from CreateVolume.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub volume_attributes: BTreeMap<String, String>,
}

/// `spec.nodeAffinity.required` of a PV, flattened to the terms the provisioner writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct VolumeNodeAffinity {
    /// `required.nodeSelectorTerms`: each term's (key, values) requirements.
    pub required: NodeSelector,
}

impl VolumeNodeAffinity {
    /// Whether a node with these labels may use the volume: some term whose every `In`
    /// requirement the labels meet (the terms are ORed, a term's requirements ANDed;
    /// `component-helpers/scheduling/corev1/nodeaffinity`, used by the scheduler's
    /// VolumeBinding filter and kubelet's `CheckNodeAffinity` alike).
    pub fn admits(&self, labels: &BTreeMap<String, String>) -> bool {
        self.required.node_selector_terms.iter().any(|t| {
            t.match_expressions
                .iter()
                .all(|r| labels.get(&r.key).is_some_and(|v| r.values.contains(v)))
        })
    }
}

/// `nodeSelectorTerms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    /// ORed terms.
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// One term: requirements ANDed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    /// `key In values` requirements.
    pub match_expressions: Vec<NodeSelectorRequirement>,
}

/// `key In values`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NodeSelectorRequirement {
    /// Label key.
    pub key: String,
    /// Always `In` here.
    pub operator: String,
    /// Values.
    pub values: Vec<String>,
}

/// `PersistentVolume.spec` (v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PvSpec {
    /// `storage`.
    pub capacity: BTreeMap<String, String>,
    /// Access modes.
    pub access_modes: Vec<String>,
    /// The claim this volume is bound to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_ref: Option<ObjectReference>,
    /// `Delete` or `Retain`.
    pub persistent_volume_reclaim_policy: String,
    /// The class.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub storage_class_name: String,
    /// `Filesystem` or `Block`.
    pub volume_mode: String,
    /// The CSI source.
    pub csi: CsiPvSource,
    /// Where the volume can be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<VolumeNodeAffinity>,
}

/// `PersistentVolume.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PvStatus {
    /// `Available`, `Bound`, `Released`, `Failed`.
    pub phase: String,
    /// `lastPhaseTransitionTime` (GA in v1.31): when the phase last changed, set by the
    /// API server's PV strategy on create (phase Pending) and on a status write that
    /// changes the phase.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::meta::opt_tick_as_timestamp"
    )]
    pub last_phase_transition_time: Option<crate::util::time::Millis>,
}

impl Default for PvStatus {
    fn default() -> Self {
        PvStatus {
            phase: "Pending".into(),
            last_phase_transition_time: None,
        }
    }
}

impl Kind for PvSpec {
    const API_KIND: super::ApiKind = super::ApiKind::PersistentVolume;
    const API_VERSION: &'static str = "v1";
    const RESOURCE: &'static str = "persistentvolumes";
    const NAMESPACED: bool = false;
    const PROTECTION_FINALIZER: Option<&'static str> = Some(PV_PROTECTION);
    type Status = PvStatus;

    /// `persistentvolumeStrategy.PrepareForCreate`: the status is reset to phase Pending,
    /// its transition time now.
    fn prepare_for_create(obj: &mut super::Object<Self>, tick: crate::util::time::Millis) {
        obj.status = PvStatus {
            phase: "Pending".into(),
            last_phase_transition_time: Some(tick),
        };
    }
}

/// `VolumeAttachment.spec.source`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaSource {
    /// The PV to attach.
    pub persistent_volume_name: String,
}

/// `VolumeAttachment.spec` (storage.k8s.io/v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaSpec {
    /// The driver that attaches (`hostpath.csi.lab`).
    pub attacher: String,
    /// What to attach.
    pub source: VaSource,
    /// Where.
    pub node_name: String,
}

/// `attachError` / `detachError`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct VolumeError {
    /// The error text.
    pub message: String,
    /// When (lab timestamp).
    pub time: String,
}

/// `VolumeAttachment.status`, written by external-attacher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VaStatus {
    /// Set once ControllerPublishVolume succeeded.
    pub attached: bool,
    /// The publish_context ControllerPublishVolume returned.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub attachment_metadata: BTreeMap<String, String>,
    /// The last attach error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attach_error: Option<VolumeError>,
    /// The last detach error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detach_error: Option<VolumeError>,
}

impl Kind for VaSpec {
    const API_KIND: super::ApiKind = super::ApiKind::VolumeAttachment;
    const API_VERSION: &'static str = "storage.k8s.io/v1";
    const RESOURCE: &'static str = "volumeattachments.storage.k8s.io";
    const NAMESPACED: bool = false;
    type Status = VaStatus;
}

/// `CSIDriver.spec` (storage.k8s.io/v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CsiDriverSpec {
    /// Whether the attach/detach controller must create VolumeAttachments.
    pub attach_required: bool,
    /// Whether kubelet passes pod info in NodePublish volume_context.
    pub pod_info_on_mount: bool,
    /// `Persistent` (and `Ephemeral`).
    pub volume_lifecycle_modes: Vec<String>,
    /// Whether the scheduler uses CSIStorageCapacity.
    pub storage_capacity: bool,
    /// `ReadWriteOnceWithFSType`, `File` or `None`.
    pub fs_group_policy: String,
    /// Whether kubelet calls NodePublishVolume again periodically (the API server
    /// defaults it to false). The lab's driver asks for no `tokenRequests` (unset).
    pub requires_republish: bool,
}

impl Kind for CsiDriverSpec {
    const API_KIND: super::ApiKind = super::ApiKind::CsiDriver;
    /// Its strategy keeps metadata.generation.
    const GENERATION: bool = true;
    const API_VERSION: &'static str = "storage.k8s.io/v1";
    const RESOURCE: &'static str = "csidrivers.storage.k8s.io";
    const NAMESPACED: bool = false;
    const HAS_STATUS: bool = false;
    type Status = NoStatus;
}

/// One driver registered on a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CsiNodeDriver {
    /// The driver name.
    pub name: String,
    /// The node ID NodeGetInfo returned.
    #[serde(rename = "nodeID")]
    pub node_id: String,
    /// Topology keys the driver reports.
    pub topology_keys: Vec<String>,
    /// The attach limit, when the driver reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<VolumeNodeResources>,
}

/// `CSINodeDriver.allocatable` (`VolumeNodeResources`): how many of the driver's volumes
/// the node may have attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VolumeNodeResources {
    /// `count`.
    pub count: i64,
}

/// `CSINode.spec` (storage.k8s.io/v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct CsiNodeSpec {
    /// Registered drivers.
    pub drivers: Vec<CsiNodeDriver>,
}

impl Kind for CsiNodeSpec {
    const API_KIND: super::ApiKind = super::ApiKind::CsiNode;
    const API_VERSION: &'static str = "storage.k8s.io/v1";
    const RESOURCE: &'static str = "csinodes.storage.k8s.io";
    const NAMESPACED: bool = false;
    const HAS_STATUS: bool = false;
    type Status = NoStatus;
}

/// `VolumeSnapshot.spec.source`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotSource {
    /// The claim to snapshot.
    pub persistent_volume_claim_name: String,
}

/// `VolumeSnapshot.spec` (snapshot.storage.k8s.io/v1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotSpec {
    /// What to snapshot.
    pub source: VolumeSnapshotSource,
    /// The snapshot class.
    pub volume_snapshot_class_name: String,
}

/// `VolumeSnapshot.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotStatus {
    /// The content object it is bound to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub bound_volume_snapshot_content_name: String,
    /// When the snapshot was cut: the content's `creationTime` (CreateSnapshot's
    /// `creation_time`) as a timestamp.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub creation_time: String,
    /// Ready to restore from.
    pub ready_to_use: bool,
    /// Minimum size of a volume restored from it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub restore_size: String,
    /// The last error snapshot-controller met (`status.error`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<VolumeSnapshotError>,
}

/// `VolumeSnapshot.status.error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotError {
    /// What went wrong.
    pub message: String,
    /// When (the lab's clock).
    pub time: String,
}

impl Kind for VolumeSnapshotSpec {
    const API_KIND: super::ApiKind = super::ApiKind::VolumeSnapshot;
    /// A custom resource: the API server keeps metadata.generation.
    const GENERATION: bool = true;
    const API_VERSION: &'static str = "snapshot.storage.k8s.io/v1";
    const RESOURCE: &'static str = "volumesnapshots.snapshot.storage.k8s.io";
    const NAMESPACED: bool = true;
    type Status = VolumeSnapshotStatus;
}

/// `VolumeSnapshotContent.spec.source`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ContentSource {
    /// The source volume's handle.
    pub volume_handle: String,
}

/// `VolumeSnapshotContent.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotContentSpec {
    /// `Delete` or `Retain`.
    pub deletion_policy: String,
    /// The driver.
    pub driver: String,
    /// The source.
    pub source: ContentSource,
    /// The snapshot it belongs to.
    pub volume_snapshot_ref: ObjectReference,
    /// The class.
    pub volume_snapshot_class_name: String,
}

/// `VolumeSnapshotContent.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSnapshotContentStatus {
    /// The driver's snapshot ID.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub snapshot_handle: String,
    /// When the driver cut the snapshot: CreateSnapshot's `creation_time` in nanoseconds
    /// since the Unix epoch (an `int64`, as csi-snapshotter writes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_time: Option<i64>,
    /// Ready to restore from.
    pub ready_to_use: bool,
    /// Size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restore_size: Option<i64>,
}

impl Kind for VolumeSnapshotContentSpec {
    const API_KIND: super::ApiKind = super::ApiKind::VolumeSnapshotContent;
    /// A custom resource: the API server keeps metadata.generation.
    const GENERATION: bool = true;
    const API_VERSION: &'static str = "snapshot.storage.k8s.io/v1";
    const RESOURCE: &'static str = "volumesnapshotcontents.snapshot.storage.k8s.io";
    const NAMESPACED: bool = false;
    type Status = VolumeSnapshotContentStatus;
}
