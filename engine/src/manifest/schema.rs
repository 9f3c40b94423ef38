//! The fields of each kind the lab reads from a manifest, in Kubernetes JSON shape
//! (k8s.io/api `core/v1/types.go`, `storage/v1/types.go`, external-snapshotter's
//! `client/apis/volumesnapshot/v1/types.go`, the NetworkAttachmentDefinition CRD).
//!
//! A field not declared here is reported by `serde_ignored`: if it is a real field the lab
//! does not model ([`UNMODELLED`]) apply warns and goes on; otherwise it is refused as the
//! API server's strict field validation refuses it.

use crate::cluster::policy::NetworkPolicySpec;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Any value: a field accepted and not read (`serde_ignored` does not report it).
pub type Any = serde_json::Value;

/// `apiVersion` and `kind`, read first to pick the type of the rest.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TypeMeta {
    /// `apiVersion`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind`.
    #[serde(default)]
    pub kind: Option<String>,
}

/// `metadata` as a manifest gives it. The fields the API server sets (`uid`,
/// `creationTimestamp`, …) are accepted so that `get -o yaml` output applies back; only
/// `resourceVersion` has an effect (optimistic concurrency).
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct MetaM {
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
    /// `namespace`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// `labels`.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// `annotations`.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// `resourceVersion`: when given, it must be the object's current one.
    #[serde(default)]
    pub resource_version: Option<String>,
    /// Set by the server; accepted and ignored.
    #[serde(default)]
    pub uid: Option<Any>,
    /// Set by the server; accepted and ignored.
    #[serde(default)]
    pub generation: Option<Any>,
    /// Set by the server; accepted and ignored.
    #[serde(default)]
    pub creation_timestamp: Option<Any>,
    /// Set by the server; accepted and ignored.
    #[serde(default)]
    pub deletion_timestamp: Option<Any>,
    /// Set by controllers; accepted and ignored (the lab's controllers keep their own).
    #[serde(default)]
    pub finalizers: Option<Any>,
    /// Set by the server; accepted and ignored.
    #[serde(default)]
    pub managed_fields: Option<Any>,
}

/// A manifest object: `metadata`, a `spec` (or the top-level fields of a flat kind) and
/// a `status` the API server ignores on create and update.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectM<S> {
    /// `apiVersion` (already checked).
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind` (already checked).
    #[serde(default)]
    pub kind: Option<String>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: MetaM,
    /// `spec`.
    #[serde(default = "Option::default")]
    pub spec: Option<S>,
    /// `status`: ignored, as the API server ignores it outside the status subresource.
    #[serde(default)]
    pub status: Option<Any>,
}

/// `Namespace.spec` (`finalizers` only, which the lab does not model).
#[derive(Debug, Deserialize, Default, Clone)]
pub struct NamespaceSpecM {}

/// `containers[].ports[]`.
#[derive(Debug, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPortM {
    /// `containerPort`.
    pub container_port: i64,
    /// `hostPort`.
    #[serde(default)]
    pub host_port: Option<i64>,
    /// `protocol` (default TCP).
    #[serde(default)]
    pub protocol: Option<String>,
    /// `name`: accepted; the lab's ports have no names.
    #[serde(default)]
    pub name: Option<Any>,
}

/// `containers[].resources`.
#[derive(Debug, Deserialize, Default, Clone, PartialEq)]
pub struct ResourcesM {
    /// `limits`.
    #[serde(default)]
    pub limits: BTreeMap<String, Quantity>,
    /// `requests`.
    #[serde(default)]
    pub requests: BTreeMap<String, Quantity>,
}

/// A quantity as YAML writes it: `100Gi`, `"2"` or a bare number. Anything else (a
/// mapping, a list, `true`, `null`) is refused saying what a quantity looks like.
#[derive(Debug, Clone, PartialEq)]
pub enum Quantity {
    /// `100Gi`, `"1"`.
    Text(String),
    /// `1`.
    Int(i64),
    /// `0.5`.
    Float(f64),
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor)
    }
}

/// Reads a [`Quantity`] from a string or a number.
struct QuantityVisitor;

impl serde::de::Visitor<'_> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "a quantity: a number, or a number with a suffix such as 10Gi, 500Mi, 1.5G or 100m",
        )
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
        Ok(Quantity::Text(v.to_string()))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
        Ok(Quantity::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
        Ok(i64::try_from(v).map_or_else(|_| Quantity::Text(v.to_string()), Quantity::Int))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
        Ok(Quantity::Float(v))
    }
}

impl Quantity {
    /// The quantity as Kubernetes prints it.
    pub fn text(&self) -> String {
        match self {
            Quantity::Text(s) => s.clone(),
            Quantity::Int(i) => i.to_string(),
            Quantity::Float(f) => f.to_string(),
        }
    }
}

/// One container.
#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ContainerM {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `image`.
    #[serde(default)]
    pub image: String,
    /// `ports`.
    #[serde(default)]
    pub ports: Vec<ContainerPortM>,
    /// `resources`.
    #[serde(default)]
    pub resources: ResourcesM,
    /// `volumeMounts`.
    #[serde(default)]
    pub volume_mounts: Vec<VolumeMountM>,
    /// `volumeDevices`.
    #[serde(default)]
    pub volume_devices: Vec<VolumeDeviceM>,
}

/// `containers[].volumeMounts[]`.
#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMountM {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `mountPath`.
    #[serde(default)]
    pub mount_path: String,
    /// `readOnly`.
    #[serde(default)]
    pub read_only: bool,
}

/// `containers[].volumeDevices[]`.
#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct VolumeDeviceM {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `devicePath`.
    #[serde(default)]
    pub device_path: String,
}

/// `persistentVolumeClaim` volume source.
#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSourceM {
    /// `claimName`.
    #[serde(default)]
    pub claim_name: String,
    /// `readOnly`.
    #[serde(default)]
    pub read_only: bool,
}

/// One pod volume; only claims are modelled.
#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct VolumeM {
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `persistentVolumeClaim`.
    #[serde(default)]
    pub persistent_volume_claim: Option<ClaimSourceM>,
}

/// `Pod.spec`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PodSpecM {
    /// `nodeName`.
    #[serde(default)]
    pub node_name: Option<String>,
    /// `nodeSelector`.
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// `containers`.
    #[serde(default)]
    pub containers: Vec<ContainerM>,
    /// `volumes`.
    #[serde(default)]
    pub volumes: Vec<VolumeM>,
}

/// `resources` of a claim.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct ClaimResourcesM {
    /// `requests`.
    #[serde(default)]
    pub requests: BTreeMap<String, Quantity>,
    /// `limits`: accepted and ignored (the lab provisions the request).
    #[serde(default)]
    pub limits: Option<Any>,
}

/// `dataSource` / `dataSourceRef`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct DataSourceM {
    /// `apiGroup`.
    #[serde(default)]
    pub api_group: Option<String>,
    /// `kind`.
    #[serde(default)]
    pub kind: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
}

/// `PersistentVolumeClaim.spec`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PvcSpecM {
    /// `accessModes`.
    #[serde(default)]
    pub access_modes: Vec<String>,
    /// `resources`.
    #[serde(default)]
    pub resources: ClaimResourcesM,
    /// `storageClassName`: absent → the default class; `""` → no class.
    #[serde(default)]
    pub storage_class_name: Option<String>,
    /// `volumeMode` (default Filesystem).
    #[serde(default)]
    pub volume_mode: Option<String>,
    /// `volumeName`: pre-bind to this PV.
    #[serde(default)]
    pub volume_name: Option<String>,
    /// `dataSource`.
    #[serde(default)]
    pub data_source: Option<DataSourceM>,
    /// `dataSourceRef`: read like `dataSource` when that is absent.
    #[serde(default)]
    pub data_source_ref: Option<DataSourceM>,
}

/// `spec.csi` of a PV.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct CsiSourceM {
    /// `driver`.
    #[serde(default)]
    pub driver: String,
    /// `volumeHandle`.
    #[serde(default)]
    pub volume_handle: String,
    /// `fsType`.
    #[serde(default)]
    pub fs_type: Option<String>,
    /// `volumeAttributes`.
    #[serde(default)]
    pub volume_attributes: BTreeMap<String, String>,
    /// `readOnly`: accepted and ignored.
    #[serde(default)]
    pub read_only: Option<Any>,
}

/// `claimRef` of a PV.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRefM {
    /// `kind`.
    #[serde(default)]
    pub kind: Option<String>,
    /// `apiVersion`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// `namespace`.
    #[serde(default)]
    pub namespace: String,
    /// `name`.
    #[serde(default)]
    pub name: String,
    /// `uid`.
    #[serde(default)]
    pub uid: Option<String>,
    /// `resourceVersion` (ObjectReference's is a string).
    #[serde(default)]
    pub resource_version: Option<String>,
}

/// `key In values` of a node selector term.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct NodeSelectorRequirementM {
    /// `key`.
    #[serde(default)]
    pub key: String,
    /// `operator`: the lab reads `In`.
    #[serde(default)]
    pub operator: String,
    /// `values`.
    #[serde(default)]
    pub values: Vec<String>,
}

/// One node selector term.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTermM {
    /// `matchExpressions`.
    #[serde(default)]
    pub match_expressions: Vec<NodeSelectorRequirementM>,
}

/// `nodeSelectorTerms`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorM {
    /// `nodeSelectorTerms`.
    #[serde(default)]
    pub node_selector_terms: Vec<NodeSelectorTermM>,
}

/// `spec.nodeAffinity` of a PV.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct VolumeNodeAffinityM {
    /// `required`.
    #[serde(default)]
    pub required: NodeSelectorM,
}

/// `PersistentVolume.spec`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PvSpecM {
    /// `capacity`.
    #[serde(default)]
    pub capacity: BTreeMap<String, Quantity>,
    /// `accessModes`.
    #[serde(default)]
    pub access_modes: Vec<String>,
    /// `claimRef`: pre-bound to this claim.
    #[serde(default)]
    pub claim_ref: Option<ClaimRefM>,
    /// `persistentVolumeReclaimPolicy` (default Retain for a PV made by hand).
    #[serde(default)]
    pub persistent_volume_reclaim_policy: Option<String>,
    /// `storageClassName`.
    #[serde(default)]
    pub storage_class_name: Option<String>,
    /// `volumeMode` (default Filesystem).
    #[serde(default)]
    pub volume_mode: Option<String>,
    /// `csi`: the only volume source the lab models.
    #[serde(default)]
    pub csi: Option<CsiSourceM>,
    /// `nodeAffinity`.
    #[serde(default)]
    pub node_affinity: Option<VolumeNodeAffinityM>,
    /// `mountOptions`: accepted and ignored.
    #[serde(default)]
    pub mount_options: Option<Any>,
}

/// One `allowedTopologies` requirement.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct TopologyRequirementM {
    /// `key`.
    #[serde(default)]
    pub key: String,
    /// `values`.
    #[serde(default)]
    pub values: Vec<String>,
}

/// One `allowedTopologies` term.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct TopologyTermM {
    /// `matchLabelExpressions`.
    #[serde(default)]
    pub match_label_expressions: Vec<TopologyRequirementM>,
}

/// `StorageClass`: its fields sit at the top level.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageClassM {
    /// `apiVersion` (already checked).
    #[serde(default)]
    pub api_version: Option<String>,
    /// `kind` (already checked).
    #[serde(default)]
    pub kind: Option<String>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: MetaM,
    /// `provisioner`.
    #[serde(default)]
    pub provisioner: String,
    /// `parameters`.
    #[serde(default)]
    pub parameters: BTreeMap<String, Quantity>,
    /// `reclaimPolicy` (default Delete).
    #[serde(default)]
    pub reclaim_policy: Option<String>,
    /// `volumeBindingMode` (default Immediate).
    #[serde(default)]
    pub volume_binding_mode: Option<String>,
    /// `allowVolumeExpansion`.
    #[serde(default)]
    pub allow_volume_expansion: Option<bool>,
    /// `allowedTopologies`.
    #[serde(default)]
    pub allowed_topologies: Vec<TopologyTermM>,
    /// `mountOptions`: accepted and ignored.
    #[serde(default)]
    pub mount_options: Option<Any>,
}

/// `VolumeSnapshot.spec.source`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSourceM {
    /// `persistentVolumeClaimName`.
    #[serde(default)]
    pub persistent_volume_claim_name: Option<String>,
    /// `volumeSnapshotContentName`: a pre-provisioned snapshot (not modelled).
    #[serde(default)]
    pub volume_snapshot_content_name: Option<String>,
}

/// `VolumeSnapshot.spec`.
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSpecM {
    /// `source`.
    #[serde(default)]
    pub source: SnapshotSourceM,
    /// `volumeSnapshotClassName`.
    #[serde(default)]
    pub volume_snapshot_class_name: Option<String>,
}

/// `NetworkAttachmentDefinition.spec`.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct NadSpecM {
    /// `config`.
    #[serde(default)]
    pub config: String,
}

/// The spec of a NetworkPolicy is read with the store's own type.
pub(crate) type PolicySpecM = NetworkPolicySpec;

/// Real Kubernetes fields the lab accepts in a manifest without modelling them, as
/// paths with `[]` for any index. Apply names each one it meets in a warning; any other
/// field is refused (`kubectl apply --validate=strict`).
pub(crate) const UNMODELLED: &[&str] = &[
    "metadata.generateName",
    "metadata.ownerReferences",
    "metadata.selfLink",
    "spec.restartPolicy",
    "spec.terminationGracePeriodSeconds",
    "spec.activeDeadlineSeconds",
    "spec.dnsPolicy",
    "spec.dnsConfig",
    "spec.serviceAccountName",
    "spec.serviceAccount",
    "spec.automountServiceAccountToken",
    "spec.securityContext",
    "spec.imagePullSecrets",
    "spec.hostname",
    "spec.subdomain",
    "spec.affinity",
    "spec.tolerations",
    "spec.schedulerName",
    "spec.priority",
    "spec.priorityClassName",
    "spec.preemptionPolicy",
    "spec.enableServiceLinks",
    "spec.initContainers",
    "spec.topologySpreadConstraints",
    "spec.hostNetwork",
    "spec.hostPID",
    "spec.hostIPC",
    "spec.shareProcessNamespace",
    "spec.runtimeClassName",
    "spec.readinessGates",
    "spec.containers[].command",
    "spec.containers[].args",
    "spec.containers[].env",
    "spec.containers[].envFrom",
    "spec.containers[].workingDir",
    "spec.containers[].volumeMounts[].subPath",
    "spec.containers[].volumeMounts[].subPathExpr",
    "spec.containers[].volumeMounts[].mountPropagation",
    "spec.containers[].volumeMounts[].recursiveReadOnly",
    "spec.containers[].imagePullPolicy",
    "spec.containers[].livenessProbe",
    "spec.containers[].readinessProbe",
    "spec.containers[].startupProbe",
    "spec.containers[].lifecycle",
    "spec.containers[].securityContext",
    "spec.containers[].stdin",
    "spec.containers[].tty",
    "spec.containers[].terminationMessagePath",
    "spec.containers[].terminationMessagePolicy",
    "spec.containers[].resizePolicy",
    "spec.containers[].ports[].hostIP",
    "spec.volumes[].emptyDir",
    "spec.volumes[].configMap",
    "spec.volumes[].secret",
    "spec.volumes[].hostPath",
    "spec.volumes[].projected",
    "spec.volumes[].downwardAPI",
    "spec.volumes[].ephemeral",
    "spec.selector",
    "spec.volumeAttributesClassName",
    "spec.nodeAffinity.required.nodeSelectorTerms[].matchFields",
];
