//! The pod network seen from above: node route tables (host-gw), NetworkPolicy as
//! `networking.k8s.io/v1` defines it, and a hop-by-hop trace of one packet.
//!
//! The module is standalone: the engine builds a [`ClusterNet`] (plain data: nodes, pods,
//! namespaces, policies) from its objects and asks questions of it:
//!
//! - [`routes::node_table`] / [`routes::pod_table`]: `ip route` lines of a node or a pod netns;
//! - [`policy::evaluate`]: is a [`Flow`] allowed, and which policies decided ([`Verdict`]);
//! - [`validate::validate_policy`]: the apiserver's validation of a NetworkPolicy on create;
//! - [`trace::trace`]: the path of a packet, hop by hop, with the policy checks on it.
//!
//! Nothing here mutates state; every answer is a function of the view.

pub mod policy;
pub mod routes;
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
