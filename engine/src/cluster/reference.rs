//! Which kind an object is, and a reference to one object, as values: what events, the
//! call log and the views name instead of a `"Kind/ns/name"` string (Kubernetes'
//! `ObjectReference`, which `EventRecorder` takes and `describe` filters events by).

use serde::Serialize;
use std::fmt;

/// Every API kind the lab's API server stores: one per table of [`super::Cluster`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ApiKind {
    /// `v1` Namespace.
    Namespace,
    /// `v1` Node.
    Node,
    /// `v1` Pod.
    Pod,
    /// `networking.k8s.io/v1` NetworkPolicy.
    NetworkPolicy,
    /// `k8s.cni.cncf.io/v1` NetworkAttachmentDefinition (Multus).
    NetworkAttachmentDefinition,
    /// `storage.k8s.io/v1` StorageClass.
    StorageClass,
    /// `v1` PersistentVolumeClaim.
    PersistentVolumeClaim,
    /// `v1` PersistentVolume.
    PersistentVolume,
    /// `storage.k8s.io/v1` VolumeAttachment.
    VolumeAttachment,
    /// `storage.k8s.io/v1` CSIDriver.
    CsiDriver,
    /// `storage.k8s.io/v1` CSINode.
    CsiNode,
    /// `snapshot.storage.k8s.io/v1` VolumeSnapshot.
    VolumeSnapshot,
    /// `snapshot.storage.k8s.io/v1` VolumeSnapshotContent.
    VolumeSnapshotContent,
}

impl ApiKind {
    /// Every kind, in the order the API server's tables are declared.
    pub const ALL: [ApiKind; 13] = [
        ApiKind::Namespace,
        ApiKind::Node,
        ApiKind::Pod,
        ApiKind::NetworkPolicy,
        ApiKind::NetworkAttachmentDefinition,
        ApiKind::StorageClass,
        ApiKind::PersistentVolumeClaim,
        ApiKind::PersistentVolume,
        ApiKind::VolumeAttachment,
        ApiKind::CsiDriver,
        ApiKind::CsiNode,
        ApiKind::VolumeSnapshot,
        ApiKind::VolumeSnapshotContent,
    ];

    /// The kind as an object's `kind` field spells it (`Pod`, `CSIDriver`).
    pub const fn name(self) -> &'static str {
        match self {
            ApiKind::Namespace => "Namespace",
            ApiKind::Node => "Node",
            ApiKind::Pod => "Pod",
            ApiKind::NetworkPolicy => "NetworkPolicy",
            ApiKind::NetworkAttachmentDefinition => "NetworkAttachmentDefinition",
            ApiKind::StorageClass => "StorageClass",
            ApiKind::PersistentVolumeClaim => "PersistentVolumeClaim",
            ApiKind::PersistentVolume => "PersistentVolume",
            ApiKind::VolumeAttachment => "VolumeAttachment",
            ApiKind::CsiDriver => "CSIDriver",
            ApiKind::CsiNode => "CSINode",
            ApiKind::VolumeSnapshot => "VolumeSnapshot",
            ApiKind::VolumeSnapshotContent => "VolumeSnapshotContent",
        }
    }
}

impl ApiKind {
    /// The kind an object's `kind` field names (`Pod`, `CSIDriver`; the case matters), if
    /// the lab serves it: what a reference to an object (a claim's `dataSource`) names.
    pub fn from_name(name: &str) -> Option<ApiKind> {
        ApiKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for ApiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One object, by kind, namespace (empty for a cluster-scoped kind) and name: what an
/// event is about. Shown as `Kind/namespace/name` (`Pod/default/web`, `Node/node-1`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectRef {
    /// The kind.
    pub kind: ApiKind,
    /// The namespace; empty for cluster-scoped kinds.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectRef {
    /// A reference to an object of `kind` in `namespace` (empty: cluster-scoped).
    pub fn new(kind: ApiKind, namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectRef {
            kind,
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// A reference to this object.
    pub fn to<K: super::Kind>(obj: &super::Object<K>) -> Self {
        ObjectRef::new(K::API_KIND, obj.metadata.namespace(), obj.metadata.name())
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Kind;

    #[test]
    fn every_table_s_kind_is_listed_once_and_named_as_its_objects() {
        let declared = [
            crate::cluster::NamespaceSpec::API_KIND,
            crate::cluster::NodeSpec::API_KIND,
            crate::cluster::PodSpec::API_KIND,
            crate::cluster::policy::NetworkPolicySpec::API_KIND,
            crate::cluster::nad::NetAttachDefSpec::API_KIND,
            crate::cluster::StorageClassSpec::API_KIND,
            crate::cluster::PvcSpec::API_KIND,
            crate::cluster::PvSpec::API_KIND,
            crate::cluster::VaSpec::API_KIND,
            crate::cluster::CsiDriverSpec::API_KIND,
            crate::cluster::CsiNodeSpec::API_KIND,
            crate::cluster::VolumeSnapshotSpec::API_KIND,
            crate::cluster::VolumeSnapshotContentSpec::API_KIND,
        ];
        assert_eq!(declared, ApiKind::ALL);
        assert_eq!(crate::cluster::CsiDriverSpec::KIND, "CSIDriver");
        for kind in ApiKind::ALL {
            assert_eq!(ApiKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(ApiKind::from_name("pod"), None);
        let web = ObjectRef::new(ApiKind::Pod, "default", "web");
        assert_eq!(web.to_string(), "Pod/default/web");
        assert_eq!(
            ObjectRef::new(ApiKind::Node, "", "node-1").to_string(),
            "Node/node-1"
        );
    }
}
