//! The core API kinds the network side needs: Namespace, Node and Pod.

use super::store::Kind;
use crate::util::time::Millis;
use serde::Serialize;
use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

/// Text that is usually a literal (a phase, a condition type, a reason): borrowed when it
/// is, so copying an object copies no such string.
pub type Text = std::borrow::Cow<'static, str>;

/// `Namespace` (v1). Kubernetes labels each namespace `kubernetes.io/metadata.name=<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NamespaceSpec {}

impl Kind for NamespaceSpec {
    const API_KIND: super::ApiKind = super::ApiKind::Namespace;
    const API_VERSION: &'static str = "v1";
    const RESOURCE: &'static str = "namespaces";
    const NAMESPACED: bool = false;
    type Status = NamespaceStatus;
}

/// `Namespace.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamespaceStatus {
    /// Always `Active` in the lab.
    pub phase: String,
}

impl Default for NamespaceStatus {
    fn default() -> Self {
        NamespaceStatus {
            phase: "Active".into(),
        }
    }
}

/// `Node.spec` (v1): the pod CIDR the node's pods are addressed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// `podCIDR`.
    #[serde(rename = "podCIDR", skip_serializing_if = "String::is_empty")]
    pub pod_cidr: String,
    /// `podCIDRs`.
    #[serde(skip_serializing_if = "Vec::is_empty", rename = "podCIDRs")]
    pub pod_cidrs: Vec<String>,
    /// `taints`: the lab writes `node.kubernetes.io/unschedulable` for a cordoned node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// `unschedulable` (`kubectl cordon`): the scheduler's NodeUnschedulable filter refuses
    /// the node for new pods; a pod that names the node itself still runs there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
}

/// A node taint (`spec.taints[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint's key.
    pub key: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
    /// When it was added (`timeAdded`, RFC 3339 on the wire), as the node lifecycle
    /// controller and `kubectl cordon` stamp it.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::meta::opt_tick_as_timestamp"
    )]
    pub time_added: Option<crate::util::time::Millis>,
}

/// The taint a cordoned node carries (`node.kubernetes.io/unschedulable:NoSchedule`,
/// added by the node lifecycle controller's TaintNodesByCondition).
pub(crate) const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

impl Kind for NodeSpec {
    const API_KIND: super::ApiKind = super::ApiKind::Node;
    const API_VERSION: &'static str = "v1";
    const RESOURCE: &'static str = "nodes";
    const NAMESPACED: bool = false;
    type Status = NodeStatus;

    fn unindex(
        index: &mut super::store::FieldIndexes,
        _key: &super::store::SharedKey,
        obj: &super::Object<Self>,
    ) {
        index.unindex_node(obj);
    }

    fn index(
        index: &mut super::store::FieldIndexes,
        _key: &super::store::SharedKey,
        obj: &super::Object<Self>,
    ) {
        index.index_node(obj);
    }

    /// `status.addresses` holds the node's InternalIP: its fields are read again.
    fn restatus(
        index: &mut super::store::FieldIndexes,
        _key: &super::store::SharedKey,
        _old: &NodeStatus,
        obj: &super::Object<Self>,
    ) {
        index.index_node(obj);
    }
}

/// One entry of `Node.status.addresses`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeAddress {
    /// `InternalIP`, `Hostname`… (a literal: every node's is borrowed).
    #[serde(rename = "type")]
    pub address_type: Text,
    /// The address.
    pub address: String,
}

/// A condition (`Ready` …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    pub condition_type: Text,
    /// `True`, `False` or `Unknown`.
    pub status: Text,
    /// Machine-readable reason.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub reason: Text,
    /// Human-readable message.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: Text,
}

impl Condition {
    /// A condition whose every field is fixed text (for the static lists pods share).
    pub const fn fixed(
        condition_type: &'static str,
        status: &'static str,
        reason: &'static str,
        message: &'static str,
    ) -> Condition {
        Condition {
            condition_type: Text::Borrowed(condition_type),
            status: Text::Borrowed(status),
            reason: Text::Borrowed(reason),
            message: Text::Borrowed(message),
        }
    }
}

/// A pod's `status.conditions`: most pods share a static list (see `PodStatus::conditions`).
pub type Conditions = std::borrow::Cow<'static, [Condition]>;

/// `Node.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NodeStatus {
    /// Addresses; the lab sets `InternalIP` and `Hostname`.
    pub addresses: Vec<NodeAddress>,
    /// Conditions; the lab keeps `Ready`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// `capacity`: what the node has (`cpu`, `memory`, `pods`, and the extended resources
    /// kubelet's device manager reports: healthy plus unhealthy devices). Shared between
    /// nodes that report the same list (every lab node is the same machine); a writer
    /// takes its own copy with `Arc::make_mut`.
    #[serde(
        skip_serializing_if = "no_resources",
        serialize_with = "shared_resources"
    )]
    pub capacity: Arc<ResourceList>,
    /// `allocatable`: what pods may request (capacity less the reservations; for a device
    /// plugin's resource, its healthy devices). Shared as `capacity` is.
    #[serde(
        skip_serializing_if = "no_resources",
        serialize_with = "shared_resources"
    )]
    pub allocatable: Arc<ResourceList>,
    /// `nodeInfo`: what kubelet reports of the machine (`get nodes -o wide`'s VERSION,
    /// OS-IMAGE, KERNEL-VERSION and CONTAINER-RUNTIME columns).
    #[serde(rename = "nodeInfo")]
    pub node_info: NodeSystemInfo,
    /// `volumesInUse`: the attachable volumes kubelet's volume manager wants or has on the
    /// node. Empty in the store: it is a report (`super::reports`), filled in when a node
    /// is read.
    #[serde(rename = "volumesInUse", skip_serializing_if = "Vec::is_empty")]
    pub volumes_in_use: Vec<String>,
    /// `volumesAttached`: what the attach/detach controller has attached to the node.
    /// Empty in the store, like `volumes_in_use`.
    #[serde(rename = "volumesAttached", skip_serializing_if = "Vec::is_empty")]
    pub volumes_attached: Vec<AttachedVolume>,
}

/// `Node.status.nodeInfo` (`NodeSystemInfo`), as kubelet fills it in from the machine: the
/// lab's nodes are one kind of VM, a Debian 12 (bookworm) host on its 6.1 kernel (the
/// kernel whose sysctls `tuning` knows) running containerd. `kubeProxyVersion` is empty:
/// v1.31.0's kubelet leaves it unset (the DisableNodeKubeProxyVersion gate, beta and on
/// in 1.31.0). The machine, system and boot ids are each node's own, derived from its name
/// ([`NodeSystemInfo::lab`]); `None` (`""`, Go's zero value) in a status no kubelet wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeSystemInfo {
    /// `/etc/machine-id` (32 hex digits).
    #[serde(rename = "machineID", serialize_with = "machine_id_text")]
    pub machine_id: Option<[u8; 16]>,
    /// The firmware's `/sys/class/dmi/id/product_uuid`.
    #[serde(rename = "systemUUID", serialize_with = "uuid_text")]
    pub system_uuid: Option<[u8; 16]>,
    /// `/proc/sys/kernel/random/boot_id`.
    #[serde(rename = "bootID", serialize_with = "uuid_text")]
    pub boot_id: Option<[u8; 16]>,
    /// `uname -r`.
    pub kernel_version: &'static str,
    /// `PRETTY_NAME` of the host's `/etc/os-release`.
    pub os_image: &'static str,
    /// The CRI runtime's `Version` answer, `<runtime name>://<version>`.
    pub container_runtime_version: &'static str,
    /// kubelet's own version.
    pub kubelet_version: &'static str,
    /// Deprecated; empty (see the type's note).
    pub kube_proxy_version: &'static str,
    /// `GOOS`.
    pub operating_system: &'static str,
    /// `GOARCH`.
    pub architecture: &'static str,
}

impl NodeSystemInfo {
    /// What every lab node's kubelet reports but the ids (the default is Go's zero value,
    /// a status no kubelet has written).
    pub const LAB: NodeSystemInfo = NodeSystemInfo {
        machine_id: None,
        system_uuid: None,
        boot_id: None,
        kernel_version: "6.1.0-25-amd64",
        os_image: "Debian GNU/Linux 12 (bookworm)",
        container_runtime_version: "containerd://1.7.22",
        kubelet_version: "v1.31.0-lab",
        kube_proxy_version: "",
        operating_system: "linux",
        architecture: "amd64",
    };

    /// What node `node`'s kubelet reports: [`Self::LAB`] with the machine's ids, random
    /// version-4 UUIDs on a real machine (systemd's machine-id, the hypervisor's SMBIOS
    /// UUID, the kernel's boot id), here derived from the node's name so that every run
    /// prints the same.
    pub fn lab(node: &str) -> NodeSystemInfo {
        let id = |what: &str| Some(crate::util::hash::uuid_v4_bytes(&[node, what]));
        NodeSystemInfo {
            machine_id: id("machine-id"),
            system_uuid: id("product_uuid"),
            boot_id: id("boot_id"),
            ..Self::LAB
        }
    }

    /// The machine id as `/etc/machine-id` holds it (32 lowercase hex digits), or `""`.
    pub fn machine_id_text(&self) -> String {
        self.machine_id
            .map(|b| crate::util::hash::to_hex(&b))
            .unwrap_or_default()
    }

    /// The system UUID in its 8-4-4-4-12 form, or `""`.
    pub fn system_uuid_text(&self) -> String {
        self.system_uuid.map(uuid_form).unwrap_or_default()
    }

    /// The boot id in its 8-4-4-4-12 form, or `""`.
    pub fn boot_id_text(&self) -> String {
        self.boot_id.map(uuid_form).unwrap_or_default()
    }
}

/// 16 bytes as a UUID's lowercase 8-4-4-4-12 text.
fn uuid_form(b: [u8; 16]) -> String {
    let hex = crate::util::hash::to_hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn machine_id_text<S: serde::Serializer>(id: &Option<[u8; 16]>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(
        &id.map(|b| crate::util::hash::to_hex(&b))
            .unwrap_or_default(),
    )
}

fn uuid_text<S: serde::Serializer>(id: &Option<[u8; 16]>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(&id.map(uuid_form).unwrap_or_default())
}

/// One entry of `Node.status.volumesAttached`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttachedVolume {
    /// The unique volume name (`kubernetes.io/csi/<driver>^<volume handle>`).
    pub name: String,
    /// Where the device shows up; CSI's attacher reports none (`csi_attacher.go`: "Don't
    /// return attachID as a devicePath"), and the field is printed even when empty.
    #[serde(rename = "devicePath")]
    pub device_path: String,
}

/// A `ResourceList` (`cpu: "4"`, `intel.com/sriov_netdevice: "2"`), quantities as text.
pub(crate) type ResourceList = std::collections::BTreeMap<String, String>;

/// Whether a Node's shared resource list is empty (then it is left out of `-o yaml`).
fn no_resources(list: &Arc<ResourceList>) -> bool {
    list.is_empty()
}

/// A Node's shared resource list, serialized as the list itself.
fn shared_resources<S: serde::Serializer>(
    list: &Arc<ResourceList>,
    out: S,
) -> Result<S::Ok, S::Error> {
    list.as_ref().serialize(out)
}

impl NodeStatus {
    /// The InternalIP, if any.
    pub fn internal_ip(&self) -> Option<&str> {
        self.addresses
            .iter()
            .find(|a| a.address_type == "InternalIP")
            .map(|a| a.address.as_str())
    }

    /// The ExternalIP, if any (the lab's nodes have none).
    pub fn external_ip(&self) -> Option<&str> {
        self.addresses
            .iter()
            .find(|a| a.address_type == "ExternalIP")
            .map(|a| a.address.as_str())
    }
}

/// `containers[].ports[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Port inside the pod.
    pub container_port: u16,
    /// Port on the node (0 = none).
    #[serde(skip_serializing_if = "is_zero_u16")]
    pub host_port: u16,
    /// TCP, UDP or SCTP.
    pub protocol: String,
}

fn is_zero_u16(v: &u16) -> bool {
    *v == 0
}

/// One container of a pod (the lab runs one, `app`, from one image: both names are
/// borrowed, not copied into each pod, unless a manifest gave others).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Container {
    /// Container name.
    pub name: Text,
    /// Image.
    pub image: Text,
    /// Declared ports.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    /// `resources`, `volumeMounts` and `volumeDevices`, held only when any is set (most
    /// pods ask for no resources and mount no claim). Read with [`Container::resources`],
    /// [`Container::volume_mounts`] and [`Container::volume_devices`].
    #[serde(flatten)]
    rare: Option<Box<ContainerRare>>,
}

/// The rare part of a [`Container`]: never all empty (an empty one is none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct ContainerRare {
    /// `resources`: requests and limits (extended resources need both, equal).
    #[serde(skip_serializing_if = "ResourceRequirements::is_empty")]
    resources: ResourceRequirements,
    /// `volumeMounts`: where the pod's filesystem volumes appear in the container.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    volume_mounts: Vec<VolumeMount>,
    /// `volumeDevices`: where the pod's block volumes appear in the container.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    volume_devices: Vec<VolumeDevice>,
}

/// `containers[].volumeMounts[]`: a pod volume mounted at a path in the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// The pod volume (`spec.volumes[].name`).
    pub name: String,
    /// Where it appears in the container.
    pub mount_path: String,
    /// Mounted read-only in this container.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// `containers[].volumeDevices[]`: a pod's block volume as a device in the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeDevice {
    /// The pod volume (`spec.volumes[].name`).
    pub name: String,
    /// The device's path in the container.
    pub device_path: String,
}

// One a pod (in its spec's own allocation): the rare resources are boxed to keep this size.
const _: () = assert!(std::mem::size_of::<Container>() <= 80);

/// The image of the lab's pods (`pod create`).
pub const LAB_IMAGE: &str = "registry.k8s.io/nginx-slim:0.27";

/// `SetDefaults_Container`'s imagePullPolicy: `Always` when the image's tag is `latest`
/// (`parsers.ParseImageName` reads an image without a tag or digest as `latest`),
/// `IfNotPresent` otherwise.
pub fn image_pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    // A tag follows the last `:` after the last `/` (a `:` before it is a registry port).
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.split_once(':').map(|(_, tag)| tag);
    match tag {
        Some("latest") => "Always",
        None if !digest => "Always",
        _ => "IfNotPresent",
    }
}

/// The containers of a `pod create` pod without ports or resources: one, `app`, from
/// [`LAB_IMAGE`]. Such a pod's spec borrows them ([`PodSpec::containers`]) instead of
/// holding a copy.
pub static LAB_CONTAINERS: [Container; 1] = [Container {
    name: Cow::Borrowed("app"),
    image: Cow::Borrowed(LAB_IMAGE),
    ports: Vec::new(),
    rare: None,
}];

/// The requirements of a container that asks for nothing.
static NO_RESOURCES: ResourceRequirements = ResourceRequirements {
    limits: ResourceList::new(),
    requests: ResourceList::new(),
};

impl Container {
    /// A container of this name and image, with its ports and resources.
    pub fn new(
        name: impl Into<Text>,
        image: impl Into<Text>,
        ports: Vec<ContainerPort>,
        resources: ResourceRequirements,
    ) -> Self {
        Container {
            name: name.into(),
            image: image.into(),
            ports,
            rare: None,
        }
        .with_rare(|r| r.resources = resources)
    }

    /// The container with these `volumeMounts` and `volumeDevices`.
    pub fn with_volumes(self, mounts: Vec<VolumeMount>, devices: Vec<VolumeDevice>) -> Self {
        self.with_rare(|r| {
            r.volume_mounts = mounts;
            r.volume_devices = devices;
        })
    }

    fn with_rare(mut self, set: impl FnOnce(&mut ContainerRare)) -> Self {
        let mut rare = self.rare.take().map(|b| *b).unwrap_or_default();
        set(&mut rare);
        let empty = rare.resources.is_empty()
            && rare.volume_mounts.is_empty()
            && rare.volume_devices.is_empty();
        self.rare = (!empty).then(|| Box::new(rare));
        self
    }

    /// `resources`: requests and limits (both empty when the container asks for none).
    pub fn resources(&self) -> &ResourceRequirements {
        self.rare.as_ref().map_or(&NO_RESOURCES, |r| &r.resources)
    }

    /// `volumeMounts`, in the order given.
    pub fn volume_mounts(&self) -> &[VolumeMount] {
        self.rare.as_ref().map_or(&[], |r| &r.volume_mounts)
    }

    /// `volumeDevices`, in the order given.
    pub fn volume_devices(&self) -> &[VolumeDevice] {
        self.rare.as_ref().map_or(&[], |r| &r.volume_devices)
    }

    /// Whether the container uses pod volume `name`, mounted or as a device (kubelet's
    /// `GetPodVolumeNames`).
    pub fn uses_volume(&self, name: &str) -> bool {
        self.volume_mounts().iter().any(|m| m.name == name)
            || self.volume_devices().iter().any(|d| d.name == name)
    }
}

/// `containers[].resources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ResourceRequirements {
    /// `limits`.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub limits: ResourceList,
    /// `requests` (for an extended resource, equal to its limit).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub requests: ResourceList,
}

impl ResourceRequirements {
    /// Neither requests nor limits.
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty() && self.requests.is_empty()
    }
}

/// A volume of a pod backed by a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodVolume {
    /// Volume name in the pod.
    pub name: String,
    /// The claim.
    pub persistent_volume_claim: ClaimRef,
}

/// `persistentVolumeClaim` volume source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRef {
    /// Claim name.
    pub claim_name: String,
    /// Mount read-only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A pod's toleration of node taints (`spec.tolerations[]`), fields in the API's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// The taint key it matches.
    pub key: &'static str,
    /// `Exists` (any value) or `Equal`.
    pub operator: &'static str,
    /// The taint effect it matches.
    pub effect: &'static str,
    /// How long a matching `NoExecute` taint is tolerated before the pod is evicted.
    pub toleration_seconds: i64,
}

impl Toleration {
    /// Whether it tolerates `taint`: the same key and effect. That is the whole rule for the
    /// lab's tolerations, all `Exists` (any value), and its taints, which have no value; an
    /// `Equal` toleration would also compare the value.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        self.key == taint.key && self.effect == taint.effect
    }
}

/// The tolerations the DefaultTolerationSeconds admission plugin adds to every pod that has
/// none of its own for these taints (kube-apiserver's
/// `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`,
/// 300 by default). A lab pod has exactly these: a manifest's own `spec.tolerations` is
/// not modelled (apply says so).
pub const DEFAULT_TOLERATIONS: [Toleration; 2] = [
    Toleration {
        key: "node.kubernetes.io/not-ready",
        operator: "Exists",
        effect: "NoExecute",
        toleration_seconds: 300,
    },
    Toleration {
        key: "node.kubernetes.io/unreachable",
        operator: "Exists",
        effect: "NoExecute",
        toleration_seconds: 300,
    },
];

/// `spec.tolerations` of a lab pod: [`DEFAULT_TOLERATIONS`], held by no pod (it is the
/// same list on every one) and written out where the object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DefaultTolerations;

impl DefaultTolerations {
    /// The tolerations, in the order admission added them.
    pub fn list(self) -> &'static [Toleration] {
        &DEFAULT_TOLERATIONS
    }
}

impl Serialize for DefaultTolerations {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.list().serialize(s)
    }
}

/// `Pod.spec` (v1), the parts the lab models.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodSpec {
    /// The node it is scheduled to.
    pub node_name: String,
    /// Containers: borrowed from [`LAB_CONTAINERS`] when they are the lab's one container
    /// (what `pod create` makes unless given ports or resources, the same on every such
    /// pod), owned otherwise.
    pub containers: Cow<'static, [Container]>,
    /// `volumes` and `nodeSelector`, held only when either is set (most pods have
    /// neither): read with [`PodSpec::volumes`] and [`PodSpec::node_selector`].
    rare: Option<Box<PodSpecRare>>,
    /// `spec.tolerations`: the DefaultTolerationSeconds admission plugin's two.
    pub tolerations: DefaultTolerations,
}

// A pod's object is boxed in the store, one a pod: the rare volumes and node selector are
// boxed to keep this size.
const _: () = assert!(std::mem::size_of::<PodSpec>() <= 56);

/// The rare part of a [`PodSpec`]: never all empty (an empty one is none).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct PodSpecRare {
    volumes: Vec<PodVolume>,
    node_selector: std::collections::BTreeMap<String, String>,
}

/// The node selector of a pod that has none.
static NO_NODE_SELECTOR: std::collections::BTreeMap<String, String> =
    std::collections::BTreeMap::new();

impl PodSpec {
    /// A pod's spec: the node it names (empty for the scheduler to choose), its containers,
    /// volumes and node selector, and the DefaultTolerationSeconds admission plugin's two
    /// tolerations.
    pub fn new(
        node_name: String,
        containers: Vec<Container>,
        volumes: Vec<PodVolume>,
        node_selector: std::collections::BTreeMap<String, String>,
    ) -> Self {
        let containers = if containers[..] == LAB_CONTAINERS[..] {
            Cow::Borrowed(&LAB_CONTAINERS[..])
        } else {
            Cow::Owned(containers)
        };
        let mut spec = PodSpec {
            node_name,
            containers,
            ..PodSpec::default()
        };
        spec.set_rare(|r| {
            r.volumes = volumes;
            r.node_selector = node_selector;
        });
        spec
    }

    /// `spec.volumes`.
    pub fn volumes(&self) -> &[PodVolume] {
        self.rare.as_ref().map_or(&[], |r| &r.volumes)
    }

    /// The volumes a container uses (in its `volumeMounts` or `volumeDevices`): the ones
    /// kubelet's volume manager mounts. It skips the others ("Skipping unused volume"),
    /// though the scheduler and the attach/detach controller still count them.
    pub fn used_volumes(&self) -> impl Iterator<Item = &PodVolume> {
        self.volumes()
            .iter()
            .filter(|v| self.containers.iter().any(|c| c.uses_volume(&v.name)))
    }

    /// `spec.nodeSelector`: labels a node must have (the scheduler's NodeAffinity filter,
    /// kubelet's admission).
    pub fn node_selector(&self) -> &std::collections::BTreeMap<String, String> {
        self.rare
            .as_ref()
            .map_or(&NO_NODE_SELECTOR, |r| &r.node_selector)
    }

    /// Replace `spec.volumes`.
    pub fn set_volumes(&mut self, volumes: Vec<PodVolume>) {
        self.set_rare(|r| r.volumes = volumes);
    }

    /// Replace `spec.nodeSelector`.
    pub fn set_node_selector(&mut self, selector: std::collections::BTreeMap<String, String>) {
        self.set_rare(|r| r.node_selector = selector);
    }

    /// Change the rare part, dropping it when it is left empty.
    fn set_rare(&mut self, change: impl FnOnce(&mut PodSpecRare)) {
        let mut rare = self.rare.take().map(|r| *r).unwrap_or_default();
        change(&mut rare);
        let empty = rare.volumes.is_empty() && rare.node_selector.is_empty();
        self.rare = (!empty).then(|| Box::new(rare));
    }
}

/// `Pod.spec` as the API writes it; empty volumes and node selector are left out.
impl Serialize for PodSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("PodSpec", 5)?;
        st.serialize_field("nodeName", &self.node_name)?;
        st.serialize_field("containers", &self.containers)?;
        if !self.volumes().is_empty() {
            st.serialize_field("volumes", self.volumes())?;
        }
        if !self.node_selector().is_empty() {
            st.serialize_field("nodeSelector", self.node_selector())?;
        }
        st.serialize_field("tolerations", &self.tolerations)?;
        st.end()
    }
}

impl Kind for PodSpec {
    const API_KIND: super::ApiKind = super::ApiKind::Pod;
    const API_VERSION: &'static str = "v1";
    const RESOURCE: &'static str = "pods";
    const NAMESPACED: bool = true;
    const LABEL_INDEX: bool = true;
    type Status = PodStatus;

    fn unindex(
        index: &mut super::store::FieldIndexes,
        key: &super::store::SharedKey,
        obj: &super::Object<Self>,
    ) {
        index.unindex_pod(key, obj);
    }

    fn index(
        index: &mut super::store::FieldIndexes,
        key: &super::store::SharedKey,
        obj: &super::Object<Self>,
    ) {
        index.index_pod(key, obj);
    }

    /// `status.podIP` is indexed: a pod whose address changed moves there.
    fn restatus(
        index: &mut super::store::FieldIndexes,
        key: &super::store::SharedKey,
        old: &PodStatus,
        obj: &super::Object<Self>,
    ) {
        index.restatus_pod(key, old, obj);
    }

    fn event_facts(obj: &super::Object<Self>) -> super::store::EventFacts {
        super::store::EventFacts {
            assigned: !obj.spec.node_name.is_empty(),
            volumes: !obj.spec.volumes().is_empty(),
        }
    }
}

/// `Pod.status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodStatus {
    /// Pending, Running, Succeeded, Failed.
    pub phase: Text,
    /// Conditions (PodScheduled, PodReadyToStartContainers, Initialized, ContainersReady, Ready):
    /// borrowed from one static list where every pod reports the same ones (kubelet's ready
    /// and not-ready sets), owned where a component wrote its own.
    pub conditions: Conditions,
    /// The node's InternalIP (`hostIP`).
    pub host_ip: Option<IpAddr>,
    /// The pod's address (`podIP`, and `podIPs[0]`, which the API requires to be the same):
    /// kubelet's `sortPodIPs` puts the sandbox's first address of the node's family first.
    /// Written with the second one by [`PodStatus::set_pod_ips`].
    pub pod_ip: Option<IpAddr>,
    /// `startTime`: when kubelet first wrote the pod's status (its status manager sets it
    /// on the first write and keeps it), as [`StatusTime`].
    start: Option<StatusTime>,
    /// The container's `state.running.startedAt`: when kubelet last started it (the pod
    /// went Running), as [`StatusTime`].
    started: Option<StatusTime>,
    /// `reason`, `message` and a dual-stack pod's second address, held only while one is
    /// set (a running single-stack pod has none).
    rare: Option<Box<PodStatusRare>>,
}

// A pod's object is boxed in the store, one a pod: the rare `reason`/`message` and second
// address are boxed to keep this size (the two times kubelet writes are whole seconds).
const _: () = assert!(std::mem::size_of::<PodStatus>() <= 104);
const _: () = assert!(std::mem::size_of::<Option<StatusTime>>() == 4);

/// A time kubelet writes in a pod's status (a `metav1.Time`, whole seconds when served):
/// the lab clock's seconds plus one, so an unset time costs no room beside a set one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusTime(std::num::NonZeroU32);

impl StatusTime {
    fn of(now: Millis) -> Self {
        let secs = u32::try_from(now.whole_secs()).unwrap_or(u32::MAX - 1);
        StatusTime(std::num::NonZeroU32::MIN.saturating_add(secs))
    }

    fn secs(self) -> u64 {
        u64::from(self.0.get() - 1)
    }
}

/// The rare part of a [`PodStatus`]: never all empty (an empty one is none).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodStatusRare {
    reason: Text,
    message: String,
    /// A dual-stack pod's address of the other family (`podIPs[1]`): kubelet's `sortPodIPs`
    /// takes the sandbox's first one.
    second_pod_ip: Option<IpAddr>,
}

impl PodStatus {
    /// kubelet's status manager on every write: `startTime` is set on the first and kept
    /// from then on (`updateStatusInternal`).
    pub fn keep_start_time(&mut self, now: Millis) {
        self.start.get_or_insert(StatusTime::of(now));
    }

    /// kubelet started the pod's container now (`state.running.startedAt`).
    pub fn set_started(&mut self, now: Millis) {
        self.started = Some(StatusTime::of(now));
    }

    /// `startTime`, in whole seconds of the lab's clock (`None` before kubelet wrote one).
    pub fn start_secs(&self) -> Option<u64> {
        self.start.map(StatusTime::secs)
    }

    /// The container's `startedAt`, in whole seconds of the lab's clock.
    pub fn started_secs(&self) -> Option<u64> {
        self.started.map(StatusTime::secs)
    }

    /// Why a waiting container waits (`ContainerCreating`), or why the pod failed
    /// (`UnexpectedAdmissionError`, `OutOfpods`); empty when neither.
    pub fn reason(&self) -> &str {
        self.rare.as_ref().map_or("", |n| &n.reason)
    }

    /// A human-readable message (kubelet's `Pod was rejected: …`); empty when none.
    pub fn message(&self) -> &str {
        self.rare.as_ref().map_or("", |n| &n.message)
    }

    /// A dual-stack pod's address of the other family (`podIPs[1]`).
    pub fn second_pod_ip(&self) -> Option<IpAddr> {
        self.rare.as_ref().and_then(|n| n.second_pod_ip)
    }

    /// Set `reason`, keeping the rest.
    pub fn set_reason(&mut self, reason: impl Into<Text>) {
        self.set_rare(|n| n.reason = reason.into());
    }

    /// Set `message`, keeping the rest.
    pub fn set_message(&mut self, message: impl Into<String>) {
        self.set_rare(|n| n.message = message.into());
    }

    /// Set the pod's addresses (`podIPs`: `podIP`, then a dual-stack pod's other one); a
    /// second address without a first is dropped, as `podIPs[0]` must be `podIP`.
    pub fn set_pod_ips(&mut self, first: Option<IpAddr>, second: Option<IpAddr>) {
        self.pod_ip = first;
        let second = first.and(second);
        self.set_rare(|n| n.second_pod_ip = second);
    }

    /// Change the rare part, dropping it when it is left empty.
    fn set_rare(&mut self, change: impl FnOnce(&mut PodStatusRare)) {
        let mut rare = self.rare.take().map_or_else(
            || PodStatusRare {
                reason: Text::Borrowed(""),
                message: String::new(),
                second_pod_ip: None,
            },
            |n| *n,
        );
        change(&mut rare);
        let empty =
            rare.reason.is_empty() && rare.message.is_empty() && rare.second_pod_ip.is_none();
        self.rare = (!empty).then(|| Box::new(rare));
    }
}

impl Default for PodStatus {
    fn default() -> Self {
        PodStatus {
            phase: Text::Borrowed("Pending"),
            conditions: Conditions::Borrowed(&[]),
            host_ip: None,
            pod_ip: None,
            start: None,
            started: None,
            rare: None,
        }
    }
}

/// One entry of `status.podIPs`, as the API writes it (`- ip: 10.244.1.5`).
#[derive(Serialize)]
struct PodIp {
    ip: IpAddr,
}

/// `Pod.status` as the API writes it: `hostIP`, `podIP` and `podIPs` as text, each left out
/// while unset, as are empty conditions, reason and message.
impl Serialize for PodStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("PodStatus", 7)?;
        st.serialize_field("phase", &self.phase)?;
        if !self.conditions.is_empty() {
            st.serialize_field("conditions", &self.conditions)?;
        }
        if let Some(ip) = &self.host_ip {
            st.serialize_field("hostIP", ip)?;
        }
        if let Some(ip) = self.pod_ip {
            st.serialize_field("podIP", &ip)?;
            match self.second_pod_ip() {
                None => st.serialize_field("podIPs", &[PodIp { ip }])?,
                Some(second) => {
                    st.serialize_field("podIPs", &[PodIp { ip }, PodIp { ip: second }])?
                }
            }
        }
        if let Some(rare) = &self.rare {
            if !rare.reason.is_empty() {
                st.serialize_field("reason", &rare.reason)?;
            }
            if !rare.message.is_empty() {
                st.serialize_field("message", &rare.message)?;
            }
        }
        st.end()
    }
}

/// A NetworkPolicy has no status: `NetworkPolicyStatus` (alpha in 1.24, never on by
/// default) left networking.k8s.io/v1 in Kubernetes 1.28 (kubernetes/kubernetes#115843),
/// so this empty type is never printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NetworkPolicyStatus {}

impl Kind for super::policy::NetworkPolicySpec {
    const API_KIND: super::ApiKind = super::ApiKind::NetworkPolicy;
    /// Its strategy keeps metadata.generation.
    const GENERATION: bool = true;
    const API_VERSION: &'static str = "networking.k8s.io/v1";
    const RESOURCE: &'static str = "networkpolicies.networking.k8s.io";
    const NAMESPACED: bool = true;
    const HAS_STATUS: bool = false;
    type Status = NetworkPolicyStatus;
}

impl PodSpec {
    /// The pod's total request of a resource, as an integer count (extended resources are
    /// whole numbers), summed over its containers; 0 when it asks for none.
    pub(crate) fn request_count(&self, resource: &str) -> i64 {
        self.containers
            .iter()
            .filter_map(|c| c.resources().requests.get(resource))
            .filter_map(|q| q.parse::<i64>().ok())
            .sum()
    }

    /// Whether a node with these labels matches `spec.nodeSelector` (every pair present).
    pub(crate) fn selector_matches(
        &self,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> bool {
        self.node_selector()
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
    }

    /// Whether any container requests an extended resource (see [`Self::extended_requests`]).
    pub(crate) fn has_extended_requests(&self) -> bool {
        self.containers
            .iter()
            .flat_map(|c| c.resources().requests.keys())
            .any(|k| is_extended_resource(k))
    }

    /// The extended resources any container requests (`vendor/name` outside
    /// `kubernetes.io`), in name order.
    pub(crate) fn extended_requests(&self) -> Vec<(String, i64)> {
        let mut names: Vec<&String> = self
            .containers
            .iter()
            .flat_map(|c| c.resources().requests.keys())
            .filter(|k| is_extended_resource(k))
            .collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|n| (n.clone(), self.request_count(n)))
            .collect()
    }
}

/// `v1helper.IsExtendedResourceName`: a fully-qualified name (it has a `/`) outside the
/// `kubernetes.io` domain and not a `requests.` quota name.
pub(crate) fn is_extended_resource(name: &str) -> bool {
    match name.split_once('/') {
        Some((domain, _)) => {
            !(domain == "kubernetes.io"
                || domain.ends_with(".kubernetes.io")
                || name.starts_with("requests."))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{
        Container, LAB_CONTAINERS, LAB_IMAGE, PodSpec, ResourceRequirements, image_pull_policy,
    };
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    /// A pod of the lab's one container borrows it (every `pod create` pod holds no copy);
    /// any other list is the pod's own; both read and serialize as the list they are.
    #[test]
    fn the_lab_container_is_borrowed_and_any_other_owned() {
        let spec = |image: &'static str| {
            let app = Container::new("app", image, Vec::new(), ResourceRequirements::default());
            PodSpec::new("node-1".into(), vec![app], Vec::new(), BTreeMap::new())
        };
        let lab = spec(LAB_IMAGE);
        assert!(matches!(lab.containers, Cow::Borrowed(_)));
        assert_eq!(lab.containers[..], LAB_CONTAINERS[..]);
        let other = spec("busybox");
        assert!(matches!(other.containers, Cow::Owned(_)));
        assert_eq!(other.containers[0].image, "busybox");
        let json = serde_json::to_value(&lab).unwrap();
        assert_eq!(
            json["containers"],
            serde_json::json!([{"name": "app", "image": LAB_IMAGE}])
        );
        let mut edited = lab.clone();
        edited.containers.to_mut()[0].image = "busybox".into();
        assert_eq!(edited, other);
        assert_eq!(
            lab.containers[0].image, LAB_IMAGE,
            "the shared list is unchanged"
        );
    }

    /// `SetDefaults_Container`: `latest`, or no tag and no digest, is `Always`.
    #[test]
    fn image_pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("registry.k8s.io/nginx-slim:0.27", "IfNotPresent"),
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("localhost:5000/nginx", "Always"),
            ("localhost:5000/nginx:1.2", "IfNotPresent"),
            ("nginx@sha256:abc", "IfNotPresent"),
            ("nginx:latest@sha256:abc", "Always"),
        ] {
            assert_eq!(image_pull_policy(image), policy, "{image}");
        }
    }
}
