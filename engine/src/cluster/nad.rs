//! NetworkAttachmentDefinition (`k8s.cni.cncf.io/v1`), the CRD Multus reads
//! (`network-attachment-definition-client: artifacts/networks-crd.yaml`,
//! `pkg/apis/k8s.cni.cncf.io/v1/types.go`): namespaced, short name `net-attach-def`, a
//! spec with one string field `config` (a CNI config or conflist as text, possibly empty)
//! and no status. The API server stores any string; Multus parses it when a pod uses it.

use serde::Serialize;

/// The annotation naming the device-plugin resource whose devices this network uses.
pub(crate) const RESOURCE_NAME_ANNOTATION: &str = "k8s.v1.cni.cncf.io/resourceName";
/// The pod annotation listing the networks a pod wants besides the cluster network.
pub(crate) const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";
/// The pod annotation Multus writes after ADD: every attachment's interface and IPs.
pub(crate) const NETWORK_STATUS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/network-status";

/// `spec` of a NetworkAttachmentDefinition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NetAttachDefSpec {
    /// `spec.config` (omitted when empty, as the Go struct's `omitempty` does).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub config: String,
}

/// A NetworkAttachmentDefinition has no status; this empty type is never printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NoStatus {}

impl super::Kind for NetAttachDefSpec {
    const API_KIND: super::ApiKind = super::ApiKind::NetworkAttachmentDefinition;
    /// A custom resource: the API server keeps metadata.generation.
    const GENERATION: bool = true;
    const API_VERSION: &'static str = "k8s.cni.cncf.io/v1";
    const RESOURCE: &'static str = "network-attachment-definitions.k8s.cni.cncf.io";
    const NAMESPACED: bool = true;
    const HAS_STATUS: bool = false;
    type Status = NoStatus;
}
