//! The API server's store: typed objects with metadata/spec/status, a resourceVersion on
//! every write, generation bumped only by spec changes, a status subresource that keeps
//! generation, optimistic concurrency (a stale resourceVersion is a Conflict), and a bounded
//! watch-event log readable from an index.

use super::meta::Meta;
use crate::util::chunked::ChunkedVec;
use crate::util::hash::LookupMap;
use serde::Serialize;
use serde::ser::SerializeMap;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::net::IpAddr;
use std::sync::Arc;

/// A kind of object: its spec type names the kind and its status type.
pub trait Kind: Clone + PartialEq + Serialize + fmt::Debug + Send + Sync + 'static {
    /// Which kind it is.
    const API_KIND: super::ApiKind;
    /// `kind` (`Pod`).
    const KIND: &'static str = Self::API_KIND.name();
    /// `apiVersion` (`v1`, `storage.k8s.io/v1`).
    const API_VERSION: &'static str;
    /// The resource name errors use (`pods`, `storageclasses.storage.k8s.io`).
    const RESOURCE: &'static str;
    /// Whether objects live in a namespace.
    const NAMESPACED: bool;
    /// Whether the kind's fields sit at the top level instead of under `spec`/`status`
    /// (StorageClass).
    const FLAT: bool = false;
    /// Whether the kind has a `status` (a CRD without a status subresource, such as
    /// NetworkAttachmentDefinition, prints none).
    const HAS_STATUS: bool = true;
    /// The status type.
    type Status: Clone + PartialEq + Serialize + Default + fmt::Debug + Send + Sync;

    /// Whether the store keeps a label index of the kind ([`super::LabelIndex`]): pods,
    /// the kind a lab holds by the hundred thousand. A selector on another kind reads its
    /// objects (5,000 nodes at most), and their writes pay nothing for an index.
    const LABEL_INDEX: bool = false;

    /// The finalizer the API server's StorageObjectInUseProtection admission plugin
    /// appends to every object of the kind created without it
    /// (`plugin/pkg/admission/storage/storageobjectinuseprotection`): claims and volumes.
    const PROTECTION_FINALIZER: Option<&'static str> = None;

    /// Whether the kind's registry strategy keeps `metadata.generation` (1 on create, one
    /// more on each spec change): NetworkPolicy, CSIDriver and custom resources do; a Pod,
    /// PVC, PV, Node or VolumeAttachment of Kubernetes 1.31 has none (0, not printed).
    const GENERATION: bool = false;

    /// Take a stored object (under table key `key`) out of the store's field indexes
    /// ([`FieldIndexes`]), before it is written or removed. Most kinds have no index.
    fn unindex(_index: &mut FieldIndexes, _key: &SharedKey, _obj: &Object<Self>) {}

    /// Enter a stored object (under table key `key`) in the store's field indexes, after it
    /// was written.
    fn index(_index: &mut FieldIndexes, _key: &SharedKey, _obj: &Object<Self>) {}

    /// Keep the field indexes after a write of the status subresource alone: `old` is the
    /// status the object had, `obj` the object as written (its metadata and spec as they
    /// were). Only an index on a status field can change; a kind with one overrides this.
    fn restatus(
        _index: &mut FieldIndexes,
        _key: &SharedKey,
        _old: &Self::Status,
        _obj: &Object<Self>,
    ) {
    }

    /// The kind's registry strategy on create (`PrepareForCreate`), given the time of the
    /// request: what it sets beyond metadata. Most kinds set nothing.
    fn prepare_for_create(_obj: &mut Object<Self>, _tick: crate::util::time::Millis) {}

    /// The facts of the object as written that a watch event carries (see [`EventFacts`]).
    fn event_facts(_obj: &Object<Self>) -> EventFacts {
        EventFacts::default()
    }
}

/// What a watch event says about the object it names, typed, for the informers' event
/// filters: a real watch event carries the whole object, and a filtered handler (the
/// scheduler's `unassignedPod`) looks at it without reading the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventFacts {
    /// A pod whose `spec.nodeName` is set (bound to a node).
    pub assigned: bool,
    /// A pod that names volumes (`spec.volumes`, immutable): the storage controllers'
    /// informers pass over the events of a pod without any.
    pub volumes: bool,
}

/// A table key (namespace, name) shared by the table's order map, the object's slot and
/// metadata ([`Meta::namespace`], [`Meta::name`]) and the field indexes: one copy of the
/// key per object, however many maps name it.
pub type SharedKey = Arc<(String, String)>;

/// The store's indexes on pod fields, kept on every pod write and delete, and the nodes'
/// network fields kept typed on every node write. The pod indexes: `spec.nodeName`
/// (the index the API server's watch cache keeps for kubelets' and `describe node`'s
/// `fieldSelector=spec.nodeName=NODE`) and the addresses of `status.podIPs` (`podIP`, and
/// a dual-stack pod's other address: how the packet walker finds the pod holding an address).
/// Each holds the pods' table keys (shared with the table) in the table's order: a node
/// holds a few dozen pods, so a sorted vector is all its set needs; an address is one pod's,
/// so the address index is one ordered set of (address, key) pairs, with no set per address
/// (an IPv4 address held as its 4 bytes: a pair is 16 bytes where an `IpAddr`'s is 32).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldIndexes {
    /// Pods by `spec.nodeName` (scheduled pods only).
    pods_by_node: LookupMap<String, Vec<SharedKey>>,
    /// Pods by each IPv4 address in `status.podIPs` (pods with an address only).
    pods_by_ipv4: BTreeSet<(u32, SharedKey)>,
    /// Pods by each IPv6 address in `status.podIPs`.
    pods_by_ipv6: BTreeSet<(u128, SharedKey)>,
    /// Each node's network fields, parsed once per write of the node.
    node_nets: BTreeMap<String, NodeNetFields>,
}

// One a running pod, in a B-tree of 150,000 at issue 41's scale.
const _: () = assert!(std::mem::size_of::<(u32, SharedKey)>() <= 16);

/// A node's network fields as typed values: what the packet walker and the route views
/// read of every node, parsed when the node is written instead of at each read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeNetFields {
    /// `spec.podCIDR`, if set and valid.
    pub pod_cidr: Option<ipnet::IpNet>,
    /// The `InternalIP` of `status.addresses`, if any and valid.
    pub internal_ip: Option<IpAddr>,
}

impl FieldIndexes {
    /// The keys of the pods bound to `node`, in table order.
    pub fn pods_on_node<'a>(
        &'a self,
        node: &str,
    ) -> impl DoubleEndedIterator<Item = &'a (String, String)> + 'a {
        self.pods_by_node
            .get(node)
            .into_iter()
            .flatten()
            .map(|k| &**k)
    }

    /// How many pods are bound to `node`.
    pub fn pod_count_on_node(&self, node: &str) -> usize {
        self.pods_by_node.get(node).map_or(0, Vec::len)
    }

    /// The keys of the pods with `ip` among their `status.podIPs`, in table order.
    pub fn pods_with_ip<'a>(
        &'a self,
        ip: IpAddr,
    ) -> impl Iterator<Item = &'a (String, String)> + 'a {
        let (v4, v6) = match ip {
            IpAddr::V4(a) => {
                let a = u32::from(a);
                let v4 = self.pods_by_ipv4.range((a, SharedKey::clone(&LEAST_KEY))..);
                (Some(v4.take_while(move |(at, _)| *at == a)), None)
            }
            IpAddr::V6(a) => {
                let a = u128::from(a);
                let v6 = self.pods_by_ipv6.range((a, SharedKey::clone(&LEAST_KEY))..);
                (None, Some(v6.take_while(move |(at, _)| *at == a)))
            }
        };
        let v4 = v4.into_iter().flatten().map(|(_, k)| &**k);
        v4.chain(v6.into_iter().flatten().map(|(_, k)| &**k))
    }

    /// Every node's network fields, by name (the node table's order).
    pub fn node_nets(&self) -> impl Iterator<Item = (&str, &NodeNetFields)> {
        self.node_nets.iter().map(|(n, f)| (n.as_str(), f))
    }

    /// Take a node out (before it is written or removed).
    pub(super) fn unindex_node(&mut self, node: &Object<super::NodeSpec>) {
        self.node_nets.remove(node.metadata.name());
    }

    /// Enter a node (after it was written; a node already in is written over).
    pub(super) fn index_node(&mut self, node: &Object<super::NodeSpec>) {
        let fields = NodeNetFields {
            pod_cidr: node.spec.pod_cidr.parse().ok(),
            internal_ip: node.status.internal_ip().and_then(|ip| ip.parse().ok()),
        };
        match self.node_nets.get_mut(node.metadata.name()) {
            Some(at) => *at = fields,
            None => {
                self.node_nets.insert(node.metadata.name().clone(), fields);
            }
        }
    }

    /// Take the pod under `key` out (before it is written or removed).
    pub(super) fn unindex_pod(&mut self, key: &SharedKey, pod: &Object<super::PodSpec>) {
        let node = pod.spec.node_name.as_str();
        if !node.is_empty() {
            take_out(&mut self.pods_by_node, node, key);
        }
        self.unindex_pod_ip(key, &pod.status);
    }

    /// Enter the pod under `key` (after it was written).
    pub(super) fn index_pod(&mut self, key: &SharedKey, pod: &Object<super::PodSpec>) {
        let node = pod.spec.node_name.as_str();
        if !node.is_empty() {
            match self.pods_by_node.get_mut(node) {
                Some(set) => put_in(set, key),
                None => {
                    self.pods_by_node
                        .insert(node.to_string(), vec![key.clone()]);
                }
            }
        }
        self.index_pod_ip(key, &pod.status);
    }

    /// Move the pod under `key` after a write of its status alone (`old` the status it
    /// had): only its addresses can have changed.
    pub(super) fn restatus_pod(
        &mut self,
        key: &SharedKey,
        old: &super::PodStatus,
        pod: &Object<super::PodSpec>,
    ) {
        if (old.pod_ip, old.second_pod_ip()) != (pod.status.pod_ip, pod.status.second_pod_ip()) {
            self.unindex_pod_ip(key, old);
            self.index_pod_ip(key, &pod.status);
        }
    }

    fn unindex_pod_ip(&mut self, key: &SharedKey, status: &super::PodStatus) {
        for ip in status.pod_ip.into_iter().chain(status.second_pod_ip()) {
            match ip {
                IpAddr::V4(a) => self.pods_by_ipv4.remove(&(a.into(), SharedKey::clone(key))),
                IpAddr::V6(a) => self.pods_by_ipv6.remove(&(a.into(), SharedKey::clone(key))),
            };
        }
    }

    fn index_pod_ip(&mut self, key: &SharedKey, status: &super::PodStatus) {
        for ip in status.pod_ip.into_iter().chain(status.second_pod_ip()) {
            match ip {
                IpAddr::V4(a) => self.pods_by_ipv4.insert((a.into(), SharedKey::clone(key))),
                IpAddr::V6(a) => self.pods_by_ipv6.insert((a.into(), SharedKey::clone(key))),
            };
        }
    }

    /// Panics (debug builds' check) unless the indexes are what a scan of `pods` gives.
    #[cfg(any(debug_assertions, test))]
    pub(crate) fn assert_matches(
        &self,
        nodes: &Table<super::NodeSpec>,
        pods: &Table<super::PodSpec>,
    ) {
        let mut again = FieldIndexes::default();
        for n in nodes.values() {
            again.index_node(n);
        }
        for (k, p) in pods.shared_iter() {
            again.index_pod(k, p);
        }
        assert_eq!(*self, again, "the store's pod field indexes are stale");
    }
}

/// The least table key (namespace and name empty): where an address's pairs begin in
/// [`FieldIndexes`]'s address index.
static LEAST_KEY: std::sync::LazyLock<SharedKey> =
    std::sync::LazyLock::new(|| Arc::new((no_namespace(), no_namespace())));

/// Put `key` in the sorted `set` (once).
fn put_in(set: &mut Vec<SharedKey>, key: &SharedKey) {
    if let Err(at) = set.binary_search(key) {
        set.insert(at, key.clone());
    }
}

/// Take `key` out of the set under `at`, dropping the set when it empties.
fn take_out<A: Hash + Eq + ?Sized, K: Hash + Eq + std::borrow::Borrow<A>>(
    map: &mut LookupMap<K, Vec<SharedKey>>,
    at: &A,
    key: &SharedKey,
) {
    if let Some(set) = map.get_mut(at) {
        if let Ok(i) = set.binary_search(key) {
            set.remove(i);
        }
        if set.is_empty() {
            map.remove(at);
        }
    }
}

/// One API object: metadata, spec and status.
#[derive(Debug, Clone, PartialEq)]
pub struct Object<K: Kind> {
    /// `metadata`.
    pub metadata: Meta,
    /// `spec`.
    pub spec: K,
    /// `status`.
    pub status: K::Status,
}

impl<K: Kind> Object<K> {
    /// A new object with an empty status.
    pub fn new(name: &str, namespace: &str, spec: K) -> Self {
        let ns = if K::NAMESPACED { namespace } else { "" };
        Object {
            metadata: Meta::named(name, ns),
            spec,
            status: K::Status::default(),
        }
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name()
    }

    /// `namespace/name`, or just the name for cluster-scoped kinds.
    pub fn key(&self) -> String {
        if self.metadata.namespace().is_empty() {
            self.metadata.name().clone()
        } else {
            [self.metadata.namespace(), "/", self.metadata.name()].concat()
        }
    }
}

impl<K: Kind> Serialize for Object<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("apiVersion", K::API_VERSION)?;
        m.serialize_entry("kind", K::KIND)?;
        m.serialize_entry("metadata", &self.metadata)?;
        if K::FLAT {
            if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&self.spec) {
                for (k, v) in fields {
                    m.serialize_entry(&k, &v)?;
                }
            }
        } else {
            m.serialize_entry("spec", &self.spec)?;
            if K::HAS_STATUS {
                m.serialize_entry("status", &self.status)?;
            }
        }
        m.end()
    }
}

/// An error as the API server reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The object does not exist.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        /// Resource name (`pods`).
        resource: &'static str,
        /// Object name.
        name: String,
    },
    /// An object with that name exists.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        /// Resource name.
        resource: &'static str,
        /// Object name.
        name: String,
    },
    /// The write carried a stale resourceVersion.
    #[error(
        "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict {
        /// Resource name.
        resource: &'static str,
        /// Object name.
        name: String,
    },
    /// An admission plugin refused the request (`admission.NewForbidden`).
    #[error("{resource} \"{name}\" is forbidden: {reason}")]
    Forbidden {
        /// Resource name.
        resource: &'static str,
        /// Object name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The object is invalid.
    #[error("{resource} \"{name}\" is invalid: {reason}")]
    Invalid {
        /// Resource name.
        resource: &'static str,
        /// Object name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

impl ApiError {
    /// The reason kubectl prints in `Error from server (<Reason>)`.
    pub fn reason(&self) -> &'static str {
        match self {
            ApiError::NotFound { .. } => "NotFound",
            ApiError::AlreadyExists { .. } => "AlreadyExists",
            ApiError::Conflict { .. } => "Conflict",
            ApiError::Forbidden { .. } => "Forbidden",
            ApiError::Invalid { .. } => "Invalid",
        }
    }
}

/// ADDED, MODIFIED or DELETED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object (or its status) was written.
    Modified,
    /// The object was removed.
    Deleted,
}

impl EventType {
    /// The type as a watch stream spells it (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn name(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One watch event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatchEvent {
    /// Position in the event stream (0-based, never reused).
    pub index: u64,
    /// The event type.
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// The object's kind (serialized as its `kind` spelling, `CSIDriver`).
    #[serde(serialize_with = "kind_name")]
    pub kind: super::ApiKind,
    /// `namespace/name` or name.
    pub key: String,
    /// The object's resourceVersion after the write.
    pub resource_version: u64,
    /// The object's facts as written (not part of the watch stream the views print).
    #[serde(skip)]
    pub facts: EventFacts,
}

/// A kind as an object's `kind` field spells it.
fn kind_name<S: serde::Serializer>(kind: &super::ApiKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

/// Objects of one kind, ordered by (namespace, name), with point reads by hash.
///
/// The ordered map keeps every list in (namespace, name) order; each key there names a
/// slot holding the object and the same key ([`SharedKey`]: one copy of it, which the
/// store's field indexes share too). A point read (`get`, every write's lookup) hashes the key
/// instead of walking the ordered map: at 150,000 pods a walk compares keys sharing long
/// prefixes some 40 times. The hash index keeps only the key's 64-bit hash and the slot,
/// and a hit is confirmed against the object's own `metadata` (its namespace and name are
/// its key); a key the index cannot hold (a hash already taken by another key, or an
/// object whose metadata does not spell its key) sits in `strays`, read only on a miss.
pub struct Table<K: Kind> {
    /// Every key, in order, with the slot of its object.
    order: BTreeMap<SharedKey, u32>,
    /// The objects with their keys; `None` for a free slot (in chunks: a pod table holds
    /// one a pod, and a doubling `Vec` leaves up to half its room unused).
    slots: ChunkedVec<Option<Slot<K>>>,
    /// Free slots, reused last freed first.
    free: Vec<u32>,
    /// A key's hash → its slot, for every key not in `strays`.
    index: HashMap<u64, u32, BuildHasherDefault<KeyHashed>>,
    /// The keys not in `index`, with their slots.
    strays: BTreeMap<SharedKey, u32>,
}

/// A live slot of a [`Table`]: the object and its key (the order map's own). The object is
/// shared, so a reader may hold it past a write ([`Table::get_held`]: a kubelet's pod
/// worker) without copying it; a write changes it in place while no reader holds it, and
/// copies it first while one does (`Arc::make_mut`), so a held object never changes.
#[derive(Clone)]
struct Slot<K: Kind> {
    key: SharedKey,
    obj: Arc<Object<K>>,
}

/// The hasher of [`Table`]'s index, whose keys are hashes already.
#[derive(Default)]
pub struct KeyHashed(u64);

impl Hasher for KeyHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The hash of a table key (namespace, name).
fn key_hash(namespace: &str, name: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one((namespace, name))
}

impl<K: Kind> Default for Table<K> {
    fn default() -> Self {
        Table {
            order: BTreeMap::new(),
            slots: ChunkedVec::new(),
            free: Vec::new(),
            index: HashMap::default(),
            strays: BTreeMap::new(),
        }
    }
}

impl<K: Kind> Clone for Table<K> {
    fn clone(&self) -> Self {
        Table {
            order: self.order.clone(),
            slots: self.slots.clone(),
            free: self.free.clone(),
            index: self.index.clone(),
            strays: self.strays.clone(),
        }
    }
}

impl<K: Kind> fmt::Debug for Table<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Kind> PartialEq for Table<K> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<K: Kind> std::ops::Index<&(String, String)> for Table<K> {
    type Output = Object<K>;
    fn index(&self, key: &(String, String)) -> &Object<K> {
        self.get(key).expect("no object under the key")
    }
}

impl<'a, K: Kind> IntoIterator for &'a Table<K> {
    type Item = (&'a (String, String), &'a Object<K>);
    type IntoIter = TableIter<'a, K>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The keys and objects of a [`Table`], in (namespace, name) order.
pub struct TableIter<'a, K: Kind> {
    keys: std::collections::btree_map::Iter<'a, SharedKey, u32>,
    table: &'a Table<K>,
}

impl<'a, K: Kind> Iterator for TableIter<'a, K> {
    type Item = (&'a (String, String), &'a Object<K>);
    fn next(&mut self) -> Option<Self::Item> {
        let table = self.table;
        self.keys
            .next()
            .map(|(k, &slot)| (&**k, table.object(slot)))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.keys.size_hint()
    }
}

impl<K: Kind> DoubleEndedIterator for TableIter<'_, K> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let table = self.table;
        self.keys
            .next_back()
            .map(|(k, &slot)| (&**k, table.object(slot)))
    }
}

impl<K: Kind> ExactSizeIterator for TableIter<'_, K> {}

impl<K: Kind> Table<K> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `obj`'s metadata spells the key (namespace, name).
    fn spells(obj: &Object<K>, namespace: &str, name: &str) -> bool {
        obj.metadata.name() == name
            && if K::NAMESPACED {
                obj.metadata.namespace() == namespace
            } else {
                namespace.is_empty()
            }
    }

    fn object(&self, slot: u32) -> &Object<K> {
        &self.slots[slot as usize]
            .as_ref()
            .expect("a table key names a live slot")
            .obj
    }

    /// The key and the object in `slot`, the object to change in place.
    fn entry_mut(&mut self, slot: u32) -> (&SharedKey, &mut Object<K>) {
        let s = self.slots[slot as usize]
            .as_mut()
            .expect("a table key names a live slot");
        (&s.key, Arc::make_mut(&mut s.obj))
    }

    fn object_mut(&mut self, slot: u32) -> &mut Object<K> {
        self.entry_mut(slot).1
    }

    /// The slot of key (namespace, name), if present.
    fn find(&self, namespace: &str, name: &str) -> Option<u32> {
        match self.index.get(&key_hash(namespace, name)) {
            Some(&slot) if Self::spells(self.object(slot), namespace, name) => Some(slot),
            // The hash is another key's (or its object's metadata was changed in place).
            Some(_) => self.order.get(&owned_key(namespace, name)).copied(),
            None if self.strays.is_empty() => None,
            None => self.strays.get(&owned_key(namespace, name)).copied(),
        }
    }

    /// The object under `key`.
    pub fn get(&self, key: &(String, String)) -> Option<&Object<K>> {
        self.find(&key.0, &key.1).map(|s| self.object(s))
    }

    /// The object under (namespace, name), the key's parts borrowed.
    pub fn get_named(&self, namespace: &str, name: &str) -> Option<&Object<K>> {
        self.find(namespace, name).map(|s| self.object(s))
    }

    /// The object under `key`, to change in place (its namespace and name stay). No watch
    /// event is written: what a watcher caches (the scheduler's nodes, external-provisioner's
    /// topology) does not see the change, so a write a component makes goes through
    /// `update`/`update_status` instead.
    pub fn get_mut(&mut self, key: &(String, String)) -> Option<&mut Object<K>> {
        self.find(&key.0, &key.1).map(|s| self.object_mut(s))
    }

    /// The stored key (shared, so a reader may keep it: a kubelet's pod workers, a storage
    /// work set) and the object under (namespace, name).
    pub fn get_shared(&self, namespace: &str, name: &str) -> Option<(&SharedKey, &Object<K>)> {
        self.get_held(namespace, name).map(|(k, o)| (k, &**o))
    }

    /// The stored key and the object under (namespace, name), both shared: a reader that
    /// writes to the store while it reads the object (a kubelet's pod worker) holds them
    /// without copying the object, and a write to it meanwhile copies it instead.
    pub fn get_held(&self, namespace: &str, name: &str) -> Option<(&SharedKey, &Arc<Object<K>>)> {
        let s = self.slots[self.find(namespace, name)? as usize].as_ref()?;
        Some((&s.key, &s.obj))
    }

    /// The stored key equal to `key`, and its object.
    pub fn get_key_value(&self, key: &(String, String)) -> Option<(&(String, String), &Object<K>)> {
        let (k, &slot) = self.order.get_key_value(key)?;
        Some((&**k, self.object(slot)))
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &(String, String)) -> bool {
        self.find(&key.0, &key.1).is_some()
    }

    /// Put `obj` under `key` (a new key), returning its key and it in place.
    fn add(&mut self, key: (String, String), mut obj: Object<K>) -> (&SharedKey, &mut Object<K>) {
        let hash = key_hash(&key.0, &key.1);
        let key = Arc::new(key);
        // The object's names are the key's text when they spell it (one copy).
        obj.metadata.share_key(&key);
        let live = Some(Slot {
            key: key.clone(),
            obj: Arc::new(obj),
        });
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = live;
                s
            }
            None => {
                self.slots.push(live);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 objects")
            }
        };
        let indexed = Self::spells(self.object(slot), &key.0, &key.1)
            && match self.index.entry(hash) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(slot);
                    true
                }
                std::collections::hash_map::Entry::Occupied(_) => false,
            };
        if !indexed {
            self.strays.insert(key.clone(), slot);
        }
        self.order.insert(key, slot);
        self.entry_mut(slot)
    }

    /// Put `obj` under `key`, returning the object it replaced.
    pub fn insert(&mut self, key: (String, String), obj: Object<K>) -> Option<Object<K>> {
        let old = self.remove(&key);
        self.add(key, obj);
        old
    }

    /// Take the object under `key` out.
    pub fn remove(&mut self, key: &(String, String)) -> Option<Object<K>> {
        self.take(key).map(|(_, obj)| obj)
    }

    /// Take the object under `key` out, with its shared key.
    fn take(&mut self, key: &(String, String)) -> Option<(SharedKey, Object<K>)> {
        let slot = self.order.remove(key)?;
        if self.strays.remove(key).is_none() {
            self.index.remove(&key_hash(&key.0, &key.1));
        }
        let Slot { key, obj } = self.slots[slot as usize]
            .take()
            .expect("a table key names a live slot");
        self.free.push(slot);
        Some((key, Arc::unwrap_or_clone(obj)))
    }

    /// Every shared key and object, in order.
    #[cfg(any(debug_assertions, test))]
    fn shared_iter(&self) -> impl Iterator<Item = (&SharedKey, &Object<K>)> {
        self.order.iter().map(|(k, &s)| (k, self.object(s)))
    }

    /// Every key and object, in order.
    pub fn iter(&self) -> TableIter<'_, K> {
        TableIter {
            keys: self.order.iter(),
            table: self,
        }
    }

    /// The keys and objects in `range` of keys, in order.
    pub fn range<R: std::ops::RangeBounds<(String, String)>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = (&(String, String), &Object<K>)> {
        self.order
            .range(range)
            .map(|(k, &s)| (&**k, self.object(s)))
    }

    /// Every key, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &(String, String)> {
        self.order.keys().map(|k| &**k)
    }

    /// Every object, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Object<K>> {
        self.order.values().map(|&s| self.object(s))
    }

    /// Every object, in key order, to change in place (namespaces and names stay).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Object<K>> {
        self.iter_mut().map(|(_, o)| o)
    }

    /// Every key and object, in key order, the objects to change in place (namespaces and
    /// names stay).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&(String, String), &mut Object<K>)> {
        let mut objects: Vec<Option<&mut Object<K>>> = self
            .slots
            .iter_mut()
            .map(|o| o.as_mut().map(|s| Arc::make_mut(&mut s.obj)))
            .collect();
        self.order.iter().map(move |(k, &s)| {
            let obj = objects[s as usize]
                .take()
                .expect("a table key names a live slot");
            (&**k, obj)
        })
    }

    /// Keep only the objects `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&(String, String), &mut Object<K>) -> bool) {
        let gone: Vec<(String, String)> = self
            .iter_mut()
            .filter_map(|(k, o)| (!keep(k, o)).then(|| k.clone()))
            .collect();
        for k in &gone {
            self.remove(k);
        }
    }

    /// Take every object out.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// An owned table key, for the rare lookups that walk an ordered map.
fn owned_key(namespace: &str, name: &str) -> (String, String) {
    let ns = if namespace.is_empty() {
        no_namespace()
    } else {
        namespace.to_string()
    };
    (ns, name.to_string())
}

/// How many watch events are kept (older ones are dropped; `events_since` reports the gap).
pub(crate) const WATCH_WINDOW: usize = 4096;

/// The bookkeeping every table shares: the resourceVersion counter, the uid counter, the
/// watch log and conflict injection.
#[derive(Debug, Clone, Default)]
pub struct Revisions {
    /// The last resourceVersion handed out.
    pub resource_version: u64,
    /// Objects created so far (feeds deterministic UIDs).
    pub created: u64,
    /// The watch log window.
    pub events: VecDeque<WatchEvent>,
    /// Index of the next watch event.
    pub next_event: u64,
    /// Test hook: the next N writes fail with Conflict even with a fresh resourceVersion
    /// (cni-csi-mini's "inject conflict" hook, used to prove kubelet really retries).
    pub inject_conflicts: u32,
    /// While a `get -w` watches a kind: each of its objects as written (see [`WatchTap`]).
    pub(crate) tap: Option<WatchTap>,
}

/// An object as one watch event carried it (an `Object<K>` of the tap's kind).
pub(crate) type TappedState = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// What a watch receives beside each event: the object as that write left it (a deleted
/// object as it was last). The API server's watch sends the object with every event; the
/// log keeps only keys, so the objects of the one kind a `get -w` watches are kept here
/// while it runs, until it prints them.
#[derive(Clone)]
pub(crate) struct WatchTap {
    kind: super::ApiKind,
    states: VecDeque<(u64, EventType, TappedState)>,
    /// One past the index of the last state dropped to keep the tap bounded.
    dropped_before: u64,
}

impl fmt::Debug for WatchTap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchTap")
            .field("kind", &self.kind)
            .field("states", &self.states.len())
            .finish()
    }
}

impl WatchTap {
    /// A tap on the objects of `kind`.
    pub(crate) fn new(kind: super::ApiKind) -> Self {
        WatchTap {
            kind,
            states: VecDeque::new(),
            dropped_before: 0,
        }
    }

    /// The kind it keeps.
    pub(crate) fn kind(&self) -> super::ApiKind {
        self.kind
    }

    /// The events with index ≥ `from`, each with its state, in order, forgetting every
    /// older one; `Err` when some of them were dropped (more than [`WATCH_WINDOW`] came).
    pub(crate) fn take_from(
        &mut self,
        from: u64,
    ) -> Result<Vec<(u64, EventType, TappedState)>, ()> {
        if from < self.dropped_before {
            return Err(());
        }
        while self.states.front().is_some_and(|(i, _, _)| *i < from) {
            self.states.pop_front();
        }
        Ok(self.states.drain(..).collect())
    }
}

impl Revisions {
    fn bump(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    /// Keep `obj` as the event about to be recorded carries it, when a tap watches its kind.
    fn tap<K: Kind>(&mut self, event_type: EventType, obj: &Object<K>) {
        if let Some(tap) = self.tap.as_mut().filter(|t| t.kind == K::API_KIND) {
            if tap.states.len() == WATCH_WINDOW
                && let Some((i, _, _)) = tap.states.pop_front()
            {
                tap.dropped_before = i + 1;
            }
            let state: TappedState = std::sync::Arc::new(obj.clone());
            tap.states.push_back((self.next_event, event_type, state));
        }
    }

    fn record(
        &mut self,
        event_type: EventType,
        kind: super::ApiKind,
        key: String,
        rv: u64,
        facts: EventFacts,
    ) {
        if self.events.len() == WATCH_WINDOW {
            self.events.pop_front();
        }
        self.events.push_back(WatchEvent {
            index: self.next_event,
            event_type,
            kind,
            key,
            resource_version: rv,
            facts,
        });
        self.next_event += 1;
    }

    /// The index the next watch event will have (`show watch --since` it lists what
    /// happens from now on).
    pub(crate) fn next_event(&self) -> u64 {
        self.next_event
    }

    /// Watch events with index ≥ `index` still in the window.
    pub(crate) fn events_since(&self, index: u64) -> impl Iterator<Item = &WatchEvent> {
        self.events.iter().filter(move |e| e.index >= index)
    }

    fn take_injected_conflict(&mut self) -> bool {
        if self.inject_conflicts > 0 {
            self.inject_conflicts -= 1;
            true
        } else {
            false
        }
    }
}

/// Create/get/update/delete on one table, with the shared revisions.
pub struct TableOps<'a, K: Kind> {
    /// The objects.
    pub table: &'a mut Table<K>,
    /// Shared counters and the watch log.
    pub revs: &'a mut Revisions,
    /// The field indexes, kept on every write.
    pub(crate) index: &'a mut FieldIndexes,
    /// The label index, kept on every create, metadata write and delete.
    pub(crate) labels: &'a mut super::LabelIndex,
}

/// The namespace part of the table key of an object of kind `K` in `namespace`.
fn key_namespace<K: Kind>(namespace: &str) -> &str {
    if K::NAMESPACED { namespace } else { "" }
}

fn table_key(namespace: &str, name: &str, namespaced: bool) -> (String, String) {
    let ns = if namespaced && !namespace.is_empty() {
        namespace.to_string()
    } else {
        no_namespace()
    };
    (ns, name.to_string())
}

/// The namespace part of a cluster-scoped object's table key: empty, but with a buffer.
///
/// Comparing keys compares strings with `memcmp`, and glibc's AVX-512 `memcmp` takes a
/// very slow path (~100 ns instead of ~2) for a zero-length compare at the dangling
/// pointer of `String::new()` on some CPUs (the benchmark machine's EPYC among them).
/// Every lookup in the Node, PV, CSINode or VolumeAttachment table compares the empty
/// namespace about `log2(n)` times, so keys are built with this instead. A clone of an
/// empty `String` is `String::new()` again: keys that are cloned and then compared (the
/// storage controllers' work sets) use `storage::work::ObjKey`, whose ordering never hands
/// an empty string to `memcmp`.
pub fn no_namespace() -> String {
    String::with_capacity(1)
}

impl<K: Kind> TableOps<'_, K> {
    /// Create an object; its uid, resourceVersion and generation (1, for a kind that keeps
    /// one) are assigned here.
    pub fn create(
        &mut self,
        mut obj: Object<K>,
        tick: crate::util::time::Millis,
    ) -> Result<&Object<K>, ApiError> {
        if K::NAMESPACED && obj.metadata.namespace().is_empty() {
            obj.metadata.set_namespace("default");
        }
        let key = table_key(obj.metadata.namespace(), obj.metadata.name(), K::NAMESPACED);
        if self.table.find(&key.0, &key.1).is_some() {
            return Err(ApiError::AlreadyExists {
                resource: K::RESOURCE,
                name: obj.metadata.name().clone(),
            });
        }
        if let Some(f) = K::PROTECTION_FINALIZER
            && !obj.metadata.finalizers().iter().any(|x| x == f)
        {
            obj.metadata.finalizers_mut().push(f.to_string());
        }
        self.revs.created += 1;
        obj.metadata.uid = crate::util::hash::uid(&[
            K::KIND,
            obj.metadata.namespace(),
            obj.metadata.name(),
            &self.revs.created.to_string(),
        ]);
        obj.metadata.resource_version = self.revs.bump();
        obj.metadata.generation = u64::from(K::GENERATION);
        obj.metadata.creation_tick = tick;
        K::prepare_for_create(&mut obj, tick);
        let rv = obj.metadata.resource_version;
        self.revs.tap(EventType::Added, &obj);
        let facts = K::event_facts(&obj);
        self.revs
            .record(EventType::Added, K::API_KIND, obj.key(), rv, facts);
        self.labels.insert::<K>(&obj.metadata);
        let (key, obj) = self.table.add(key, obj);
        K::index(self.index, key, obj);
        Ok(obj)
    }

    /// The object, if present.
    pub fn get(&self, namespace: &str, name: &str) -> Result<&Object<K>, ApiError> {
        self.table
            .find(key_namespace::<K>(namespace), name)
            .map(|slot| self.table.object(slot))
            .ok_or_else(|| ApiError::NotFound {
                resource: K::RESOURCE,
                name: name.to_string(),
            })
    }

    fn check_current(&mut self, obj: &Object<K>) -> Result<u32, ApiError> {
        let m = &obj.metadata;
        self.check_version(m.namespace(), m.name(), m.resource_version)
    }

    /// The table slot of `namespace/name` if its resourceVersion is still `rv` (and no
    /// conflict is injected), else NotFound or Conflict.
    fn check_version(&mut self, namespace: &str, name: &str, rv: u64) -> Result<u32, ApiError> {
        let slot = self
            .table
            .find(key_namespace::<K>(namespace), name)
            .ok_or_else(|| ApiError::NotFound {
                resource: K::RESOURCE,
                name: name.to_string(),
            })?;
        let current = self.table.object(slot);
        if current.metadata.resource_version != rv || self.revs.take_injected_conflict() {
            return Err(ApiError::Conflict {
                resource: K::RESOURCE,
                name: name.to_string(),
            });
        }
        Ok(slot)
    }

    /// Update metadata and spec (the status in `obj` is ignored, as the main resource
    /// endpoint does); generation (of a kind that keeps one) is bumped only when the spec
    /// changed.
    pub fn update(&mut self, obj: Object<K>) -> Result<u64, ApiError> {
        let slot = self.check_current(&obj)?;
        let rv = self.revs.bump();
        let (key, current) = self.table.entry_mut(slot);
        K::unindex(self.index, key, current);
        let relabelled = current.metadata.labels != obj.metadata.labels
            || current.metadata.namespace() != obj.metadata.namespace();
        if relabelled {
            self.labels.remove::<K>(&current.metadata);
        }
        let spec_changed = current.spec != obj.spec;
        let generation = current.metadata.generation + u64::from(K::GENERATION && spec_changed);
        let uid = std::mem::take(&mut current.metadata.uid);
        let creation_tick = current.metadata.creation_tick;
        current.metadata = obj.metadata;
        current.metadata.share_key(key);
        current.metadata.uid = uid;
        current.metadata.creation_tick = creation_tick;
        current.metadata.generation = generation;
        current.metadata.resource_version = rv;
        current.spec = obj.spec;
        K::index(self.index, key, current);
        if relabelled {
            self.labels.insert::<K>(&current.metadata);
        }
        let k = current.key();
        let facts = K::event_facts(current);
        self.revs.tap(EventType::Modified, current);
        self.revs
            .record(EventType::Modified, K::API_KIND, k, rv, facts);
        Ok(rv)
    }

    /// A merge patch of `metadata.labels` (kubelet's patch of its own Node): each label
    /// set, nothing else of the object read or copied. The same checks (NotFound, an
    /// injected Conflict), resourceVersion and watch event as an [`TableOps::update`] that
    /// changed only these labels; generation is kept (the spec is unchanged). The field
    /// indexes key on spec and status fields alone, so they stay as they are.
    pub(crate) fn patch_labels<'a>(
        &mut self,
        namespace: &str,
        name: &str,
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<u64, ApiError> {
        let Some(slot) = self.table.find(key_namespace::<K>(namespace), name) else {
            return Err(ApiError::NotFound {
                resource: K::RESOURCE,
                name: name.to_string(),
            });
        };
        if self.revs.take_injected_conflict() {
            return Err(ApiError::Conflict {
                resource: K::RESOURCE,
                name: name.to_string(),
            });
        }
        let rv = self.revs.bump();
        let current = self.table.object_mut(slot);
        self.labels.remove::<K>(&current.metadata);
        for (k, v) in labels {
            current.metadata.labels.insert(k.to_string(), v.to_string());
        }
        self.labels.insert::<K>(&current.metadata);
        current.metadata.resource_version = rv;
        let k = current.key();
        let facts = K::event_facts(current);
        self.revs.tap(EventType::Modified, current);
        self.revs
            .record(EventType::Modified, K::API_KIND, k, rv, facts);
        Ok(rv)
    }

    /// Write the status subresource: only `status` changes; generation is kept.
    pub(crate) fn update_status(&mut self, obj: &Object<K>) -> Result<u64, ApiError> {
        let m = &obj.metadata;
        self.write_status(
            m.namespace(),
            m.name(),
            m.resource_version,
            obj.status.clone(),
        )
    }

    /// The status subresource write of [`TableOps::update_status`] for a writer that read
    /// the object at resourceVersion `rv` and computed a new status from it.
    pub(crate) fn write_status(
        &mut self,
        namespace: &str,
        name: &str,
        rv: u64,
        status: K::Status,
    ) -> Result<u64, ApiError> {
        let slot = self.check_version(namespace, name, rv)?;
        let rv = self.revs.bump();
        let (key, current) = self.table.entry_mut(slot);
        let old = std::mem::replace(&mut current.status, status);
        current.metadata.resource_version = rv;
        K::restatus(self.index, key, &old, current);
        let k = current.key();
        let facts = K::event_facts(current);
        self.revs.tap(EventType::Modified, current);
        self.revs
            .record(EventType::Modified, K::API_KIND, k, rv, facts);
        Ok(rv)
    }

    /// Request deletion as the API server does: an object without finalizers goes at once
    /// (returned); one with finalizers gets a deletionTimestamp and stays until they are
    /// removed (`None`).
    pub(crate) fn request_delete(
        &mut self,
        namespace: &str,
        name: &str,
        tick: crate::util::time::Millis,
    ) -> Result<Option<Object<K>>, ApiError> {
        let current = self.get(namespace, name)?;
        if current.metadata.finalizers().is_empty() {
            return self.delete(namespace, name).map(Some);
        }
        if current.metadata.deletion_tick().is_none() {
            let mut obj = current.clone();
            obj.metadata.set_deletion_tick(Some(tick));
            self.update(obj)?;
        }
        Ok(None)
    }

    /// Add a finalizer (no-op if present).
    pub(crate) fn add_finalizer(
        &mut self,
        namespace: &str,
        name: &str,
        f: &str,
    ) -> Result<(), ApiError> {
        let current = self.get(namespace, name)?;
        if current.metadata.finalizers().iter().any(|x| x == f) {
            return Ok(());
        }
        let mut obj = current.clone();
        obj.metadata.finalizers_mut().push(f.to_string());
        self.update(obj).map(|_| ())
    }

    /// Remove a finalizer; an object being deleted goes away with its last finalizer.
    /// Returns true when the object was removed.
    pub(crate) fn remove_finalizer(
        &mut self,
        namespace: &str,
        name: &str,
        f: &str,
    ) -> Result<bool, ApiError> {
        self.remove_finalizers(namespace, name, &[f])
    }

    /// Remove several finalizers in one update (a controller that clears its own list in
    /// one write); an object being deleted goes away with its last finalizer. Returns true
    /// when the object was removed.
    pub(crate) fn remove_finalizers(
        &mut self,
        namespace: &str,
        name: &str,
        fs: &[&str],
    ) -> Result<bool, ApiError> {
        let current = self.get(namespace, name)?;
        if !current
            .metadata
            .finalizers()
            .iter()
            .any(|x| fs.contains(&x.as_str()))
        {
            return Ok(false);
        }
        let mut obj = current.clone();
        obj.metadata
            .finalizers_mut()
            .retain(|x| !fs.contains(&x.as_str()));
        let gone = obj.metadata.finalizers().is_empty() && obj.metadata.deletion_tick().is_some();
        self.update(obj)?;
        if gone {
            self.delete(namespace, name)?;
        }
        Ok(gone)
    }

    /// Remove the object.
    pub fn delete(&mut self, namespace: &str, name: &str) -> Result<Object<K>, ApiError> {
        let key = table_key(namespace, name, K::NAMESPACED);
        let (key, obj) = self.table.take(&key).ok_or_else(|| ApiError::NotFound {
            resource: K::RESOURCE,
            name: name.to_string(),
        })?;
        K::unindex(self.index, &key, &obj);
        self.labels.remove::<K>(&obj.metadata);
        let rv = self.revs.bump();
        // The DELETED event carries the object as it was last (kubectl prints that row).
        self.revs.tap(EventType::Deleted, &obj);
        let facts = K::event_facts(&obj);
        self.revs
            .record(EventType::Deleted, K::API_KIND, obj.key(), rv, facts);
        Ok(obj)
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::{Cluster, Object, PodSpec};
    use crate::util::time::Millis;

    fn names<'a>(keys: impl Iterator<Item = &'a (String, String)>) -> Vec<&'a str> {
        keys.map(|k| k.1.as_str()).collect()
    }

    /// A pod is found on its node once bound and at its address once it has one, and
    /// nowhere after it is deleted: what `describe node` and `trace` read.
    #[test]
    fn pod_field_indexes_follow_binding_status_and_delete() {
        let mut c = Cluster::default();
        let ip = "10.244.1.5".parse().unwrap();
        c.pods()
            .create(
                Object::new("b", "default", PodSpec::default()),
                Millis::ZERO,
            )
            .unwrap();
        let mut a = Object::new("a", "default", PodSpec::default());
        a.spec.node_name = "node-1".into();
        c.pods().create(a, Millis::ZERO).unwrap();
        assert_eq!(names(c.fields.pods_on_node("node-1")), ["a"]);
        let mut b = c.pods().get("default", "b").unwrap().clone();
        b.spec.node_name = "node-1".into();
        c.pods().update(b).unwrap();
        assert_eq!(names(c.fields.pods_on_node("node-1")), ["a", "b"]);
        let mut b = c.pods().get("default", "b").unwrap().clone();
        b.status.pod_ip = Some(ip);
        c.pods().update_status(&b).unwrap();
        assert_eq!(names(c.fields.pods_with_ip(ip)), ["b"]);
        c.pods().delete("default", "b").unwrap();
        assert_eq!(names(c.fields.pods_on_node("node-1")), ["a"]);
        assert_eq!(names(c.fields.pods_with_ip(ip)), Vec::<&str>::new());
        c.fields.assert_matches(&c.nodes, &c.pods);
    }

    /// A stored object's name and namespace are its table key's text (one copy), after a
    /// create and after an update whose object brought its own; renaming a copy read from
    /// the store changes neither the stored object nor its key.
    #[test]
    fn a_stored_objects_names_are_its_table_key() {
        let mut c = Cluster::default();
        let shares = |c: &Cluster| {
            let (key, obj) = c.pods.get_held("default", "a").unwrap();
            std::ptr::eq(key.1.as_str(), obj.metadata.name().as_str())
                && std::ptr::eq(key.0.as_str(), obj.metadata.namespace().as_str())
        };
        let a = Object::new("a", "default", PodSpec::default());
        c.pods().create(a, Millis::ZERO).unwrap();
        assert!(shares(&c));
        let mut again = Object::new("a", "default", PodSpec::default());
        again.metadata.resource_version = c
            .pods()
            .get("default", "a")
            .unwrap()
            .metadata
            .resource_version;
        again.metadata.labels.insert("app".into(), "web".into());
        c.pods().update(again).unwrap();
        assert!(shares(&c));
        let mut copy = c.pods().get("default", "a").unwrap().clone();
        copy.metadata.set_name("z");
        copy.metadata.set_namespace("prod");
        assert_eq!(
            (
                copy.metadata.namespace().as_str(),
                copy.metadata.name().as_str()
            ),
            ("prod", "z")
        );
        let stored = c.pods.get_named("default", "a").unwrap();
        assert_eq!(stored.metadata.name(), "a");
        assert_eq!(stored.metadata.labels["app"], "web");
        assert_eq!(names(c.pods.keys()), ["a"]);
        assert!(shares(&c));
    }

    /// kubelet's patch of its Node's labels leaves the store as reading the Node, adding
    /// the labels and updating it did: the object, its resourceVersion and generation, the
    /// watch event; a missing Node is NotFound and an injected conflict still fails it.
    #[test]
    fn a_label_patch_is_the_update_that_adds_the_labels() {
        use crate::cluster::NodeSpec;
        let mut patched = Cluster::default();
        let mut node = Object::new("node-1", "", NodeSpec::default());
        node.spec.pod_cidr = "10.244.1.0/24".into();
        node.metadata.labels.insert("a".into(), "1".into());
        patched.nodes().create(node, Millis::ZERO).unwrap();
        let mut updated = patched.clone();
        let labels = [("topology.hostpath.csi/node", "node-1"), ("a", "2")];
        let rv = patched.nodes().patch_labels("", "node-1", labels).unwrap();
        let mut next = updated.nodes().get("", "node-1").unwrap().clone();
        for (k, v) in labels {
            next.metadata.labels.insert(k.into(), v.into());
        }
        assert_eq!(updated.nodes().update(next).unwrap(), rv);
        assert_eq!(patched.nodes, updated.nodes);
        assert_eq!(
            patched.revs.events_since(0).collect::<Vec<_>>(),
            updated.revs.events_since(0).collect::<Vec<_>>()
        );
        assert!(matches!(
            patched.nodes().patch_labels("", "node-2", labels),
            Err(crate::cluster::ApiError::NotFound { .. })
        ));
        patched.revs.inject_conflicts = 1;
        assert!(matches!(
            patched.nodes().patch_labels("", "node-1", labels),
            Err(crate::cluster::ApiError::Conflict { .. })
        ));
        patched.fields.assert_matches(&patched.nodes, &patched.pods);
    }
}
