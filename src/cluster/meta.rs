//! Object metadata as the API server keeps it: name, namespace, uid, resourceVersion,
//! generation, labels, annotations.

use serde::Serialize;
use std::collections::BTreeMap;

/// `metadata` of an object (`ObjectMeta`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// The object's name.
    pub name: String,
    /// The namespace; empty for cluster-scoped kinds.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// A deterministic UID derived from kind, namespace and name and the creation counter.
    pub uid: String,
    /// Assigned by the store on every write (a decimal string, as Kubernetes prints it).
    #[serde(serialize_with = "rv_as_string")]
    pub resource_version: u64,
    /// Bumped only when the spec changes.
    pub generation: u64,
    /// Labels.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// The logical time the object was created (the lab's clock, not wall time).
    pub creation_tick: u64,
    /// Set when deletion was requested and teardown is still running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_tick: Option<u64>,
    /// Finalizers that hold the object until they are removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

fn rv_as_string<S: serde::Serializer>(rv: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rv.to_string())
}

impl Meta {
    /// Metadata for a new object (uid and resourceVersion are set by the store).
    pub fn named(name: &str, namespace: &str) -> Self {
        Meta {
            name: name.to_string(),
            namespace: namespace.to_string(),
            ..Default::default()
        }
    }
}
