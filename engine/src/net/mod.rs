//! The pod network seen from above: NetworkPolicy as `networking.k8s.io/v1` defines it, and
//! the walk of one packet through the nodes' kernels.
//!
//! The engine builds a [`ClusterNet`] (plain data: nodes, pods, namespaces, policies) from
//! its objects, and a [`trace::Fabric`] of the nodes' kernels (the tables the plugins and
//! the network daemon wrote), and asks:
//!
//! - [`policy::evaluate`]: is a [`Flow`] allowed, and which policies decided ([`Verdict`]);
//! - [`validate::validate_policy`]: the apiserver's validation of a NetworkPolicy on create;
//! - [`trace::trace`]: the path of a packet, hop by hop, through routes, bridges, veths,
//!   netfilter hooks and tunnels, with the policy checks on the packet as each hook sees it.
//!
//! Nothing here mutates state; every answer is a function of the view and the kernels.

pub mod bpf;
pub(crate) mod calico;
pub mod hop;
pub mod policy;
pub mod trace;
pub mod validate;
pub mod view;

#[cfg(test)]
mod scenarios;

pub use policy::{Decision, Direction, Flow, Protocol, Verdict};
pub use trace::Trace;
pub use view::{ClusterNet, ContainerPort, Endpoint, NodeNet, PodNet, Policy};

/// Why a question about the network could not be answered (an unknown name, a trace that
/// cannot start). A packet that is dropped or unroutable is not an error: it is an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// No pod with this namespace and name.
    #[error("pods \"{name}\" not found in namespace \"{namespace}\"")]
    PodNotFound {
        /// The namespace looked in.
        namespace: String,
        /// The pod name.
        name: String,
    },
    /// No node with this name.
    #[error("nodes \"{0}\" not found")]
    NodeNotFound(String),
    /// A word that is neither a pod, a node nor an IP address.
    #[error("\"{0}\" is not a pod, a node or an IP address")]
    Unresolvable(String),
    /// A trace must start inside the cluster.
    #[error("a trace starts at a pod or a node; {0} is neither")]
    TraceSource(String),
}
