//! The cluster's API objects and the API server store that holds them.

pub mod label_index;
pub mod label_query;
pub mod meta;
pub mod nad;
pub mod objects;
pub mod pod_deletion;
pub mod policy;
pub mod reference;
pub mod reports;
pub mod selector;
pub mod storage;
pub mod store;

pub use label_index::LabelIndex;
pub use meta::{Meta, Uid};
pub use objects::*;
pub use reference::{ApiKind, ObjectRef};
pub use storage::*;
pub(crate) use store::WatchTap;
pub use store::{
    ApiError, EventFacts, EventType, FieldIndexes, Kind, NodeNetFields, Object, Revisions, Table,
    TableOps, WatchEvent, no_namespace,
};

/// Every table of the cluster plus the shared revision counters, and one accessor per
/// table that pairs it with the counters (`cluster.pods().create(…)`).
macro_rules! tables {
    ($( $(#[$doc:meta])* $field:ident: $spec:ty ),* $(,)?) => {
        /// Every table of the cluster plus the shared revision counters.
        #[derive(Debug, Clone, Default)]
        pub struct Cluster {
            /// resourceVersion counter, uid counter and the watch log.
            pub revs: Revisions,
            /// What each kubelet's volume manager has mounted (`volumesInUse`, see `reports`).
            pub mounts: reports::Mounts,
            /// The pods that use claims, by node and by claim (an informer index, see
            /// `reports`).
            pub volume_pods: reports::VolumePods,
            /// The store's indexes on pod fields (`spec.nodeName`, the addresses of
            /// `status.podIPs`).
            pub fields: FieldIndexes,
            /// The store's label index: per kind and namespace, each label's objects.
            pub labels: LabelIndex,
            $( $(#[$doc])* pub $field: Table<$spec>, )*
        }

        impl Cluster {
            $(
                /// Operations on this table.
                pub fn $field(&mut self) -> TableOps<'_, $spec> {
                    TableOps {
                        table: &mut self.$field,
                        revs: &mut self.revs,
                        index: &mut self.fields,
                        labels: &mut self.labels,
                    }
                }
            )*
        }
    };
}

tables! {
    /// Namespaces.
    namespaces: NamespaceSpec,
    /// Nodes.
    nodes: NodeSpec,
    /// Pods.
    pods: PodSpec,
    /// NetworkPolicies.
    policies: policy::NetworkPolicySpec,
    /// NetworkAttachmentDefinitions (`k8s.cni.cncf.io`, Multus).
    net_attach_defs: nad::NetAttachDefSpec,
    /// StorageClasses.
    storage_classes: StorageClassSpec,
    /// PersistentVolumeClaims.
    pvcs: PvcSpec,
    /// PersistentVolumes.
    pvs: PvSpec,
    /// VolumeAttachments.
    volume_attachments: VaSpec,
    /// CSIDrivers.
    csi_drivers: CsiDriverSpec,
    /// CSINodes.
    csi_nodes: CsiNodeSpec,
    /// VolumeSnapshots.
    snapshots: VolumeSnapshotSpec,
    /// VolumeSnapshotContents.
    snapshot_contents: VolumeSnapshotContentSpec,
}

impl Cluster {
    /// The pods bound to `node`, in table order: a read of the `spec.nodeName` field index
    /// (what the API server serves `fieldSelector=spec.nodeName=NODE` from), not a walk of
    /// every pod. Debug builds check the index against that walk.
    pub fn pods_on_node<'a>(
        &'a self,
        node: &str,
    ) -> impl DoubleEndedIterator<Item = &'a Object<PodSpec>> + 'a {
        debug_assert!(
            self.fields.pods_on_node(node).eq(self
                .pods
                .iter()
                .filter(|(_, p)| p.spec.node_name == node)
                .map(|(k, _)| k)),
            "the spec.nodeName index is stale for {node}"
        );
        self.fields
            .pods_on_node(node)
            .filter_map(|k| self.pods.get(k))
    }
}
