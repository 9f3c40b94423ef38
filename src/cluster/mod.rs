//! The cluster's API objects and the API server store that holds them.

pub mod meta;
pub mod objects;
pub mod store;

pub use meta::Meta;
pub use objects::*;
pub use store::{ApiError, EventType, Kind, Object, Revisions, Table, TableOps, WatchEvent};

/// Every table of the cluster plus the shared revision counters.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// resourceVersion counter, uid counter and the watch log.
    pub revs: Revisions,
    /// Namespaces.
    pub namespaces: Table<NamespaceSpec>,
    /// Nodes.
    pub nodes: Table<NodeSpec>,
    /// Pods.
    pub pods: Table<PodSpec>,
    /// NetworkPolicies.
    pub policies: Table<crate::net::policy::NetworkPolicySpec>,
}

impl Cluster {
    /// Operations on the namespaces.
    pub fn namespaces(&mut self) -> TableOps<'_, NamespaceSpec> {
        TableOps {
            table: &mut self.namespaces,
            revs: &mut self.revs,
        }
    }

    /// Operations on the nodes.
    pub fn nodes(&mut self) -> TableOps<'_, NodeSpec> {
        TableOps {
            table: &mut self.nodes,
            revs: &mut self.revs,
        }
    }

    /// Operations on the NetworkPolicies.
    pub fn policies(&mut self) -> TableOps<'_, crate::net::policy::NetworkPolicySpec> {
        TableOps {
            table: &mut self.policies,
            revs: &mut self.revs,
        }
    }

    /// Operations on the pods.
    pub fn pods(&mut self) -> TableOps<'_, PodSpec> {
        TableOps {
            table: &mut self.pods,
            revs: &mut self.revs,
        }
    }
}
