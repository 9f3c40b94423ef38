//! What a CNI plugin holding a kubeconfig can reach (Multus): GET the pod and the
//! NetworkAttachmentDefinitions it names, write the pod's `network-status` annotation, and
//! ask kubelet's PodResources socket which devices the pod was allocated
//! (`/var/lib/kubelet/pod-resources/kubelet.sock`, `List`).
//!
//! The kubelet hands an implementation to the runtime for the length of one sandbox's CNI
//! calls ([`super::exec::InProcess::kube`]); plugins without a kubeconfig never look at it.
//! Writes are queued by the implementation and applied to the API store when the CNI
//! call returns, as one `UpdateStatus` would be.

use std::collections::BTreeMap;

/// The parts of a Pod a CNI plugin reads from the API server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodInfo {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
}

/// A NetworkAttachmentDefinition (`k8s.cni.cncf.io/v1`) as a client GETs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NadInfo {
    /// `spec.config`: a CNI config or conflist, as text (may be empty).
    pub config: String,
    /// `metadata.annotations` (`k8s.v1.cni.cncf.io/resourceName`).
    pub annotations: BTreeMap<String, String>,
}

/// One resource's devices allocated to a pod, as PodResources `List` reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodDevices {
    /// The extended resource (`intel.com/sriov_netdevice`).
    pub resource: String,
    /// Device IDs (for the SR-IOV device plugin: VF PCI addresses), across containers.
    pub device_ids: Vec<String>,
}

/// The API server and kubelet as a CNI plugin's clients see them (see the module doc).
pub trait KubeClient {
    /// GET pod `ns/name`; `None` when it does not exist.
    fn pod(&self, ns: &str, name: &str) -> Option<PodInfo>;
    /// GET NetworkAttachmentDefinition `ns/name`; `None` when it does not exist.
    fn net_attach_def(&self, ns: &str, name: &str) -> Option<NadInfo>;
    /// PodResources `List`, this pod's entries.
    fn pod_resources(&self, ns: &str, name: &str) -> Vec<PodDevices>;
    /// Set one annotation on the pod (queued; applied when the CNI call returns).
    fn annotate_pod(&mut self, ns: &str, name: &str, key: &str, value: &str);
    /// Record a Kubernetes event on the pod (`Eventf`: `AddedInterface`, Warning
    /// `NoNetworkFound`); queued like the writes. The default records nothing.
    fn event(&mut self, ns: &str, name: &str, warning: bool, reason: &'static str, message: &str) {
        let _ = (ns, name, warning, reason, message);
    }
}
