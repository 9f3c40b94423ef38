//! kube-scheduler's cache (`pkg/scheduler/backend/cache/cache.go`): a `NodeInfo` per node,
//! kept from the Node and Pod informers' events, and the node tree's walk order over them
//! (the snapshot `UpdateSnapshot` makes for each cycle), so a scheduling cycle reads typed,
//! already parsed facts in walk order and never the API store or its strings.
//!
//! A `NodeInfo` holds what the lab's filters and score read of a node (unschedulable,
//! taints, labels, allocatable parsed once: milli-CPU, memory bytes, pods, the extended
//! resources) and what its pods hold (how many, and the extended resources they request).
//! As in the real cache, a pod bound to a node the cache does not know (not added yet, or
//! deleted with pods left) keeps a `NodeInfo` with no node, which no cycle walks; it goes
//! with its last pod.
//!
//! Every Node and Pod watch event since the last look is applied in the watch log's order.
//! When the log has dropped events not read yet (or on the first look) the cache is built
//! again from the tables, as after a relist; the node tree keeps the order of the nodes
//! still present (see [`super::node_tree`]).
//!
//! As `UpdateSnapshot` takes only the `NodeInfo`s whose generation moved, a node is read
//! again only when an event is newer than the version of it the cache holds (the node's
//! resourceVersion), and a pod once per batch of its events; a slot is a node's number, so
//! the node tree and a cycle's walk order are lists of slots, and a cycle breaks score ties
//! by each node's rank in name order (kept with the walk order) instead of comparing names.

use super::host_ports::{HostPort, HostPortInfo};
use super::node_tree::NodeTree;
use crate::cluster::{
    EventType, Kind, NodeSpec, Object, PodSpec, Revisions, Table, is_extended_resource,
    no_namespace,
};
use crate::storage::work::{event_key, events_from};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// A table key: (namespace, name).
type Key = (String, String);

/// A pod as the cache counts it: its node's name, the extended resources it requests and
/// the host ports it holds.
#[cfg(any(test, debug_assertions))]
type Counted<'a> = (&'a str, &'a [(String, i64)], &'a [HostPort]);

/// A `NodeInfo` as a recompute compares it: all but its host ports.
#[cfg(any(test, debug_assertions))]
type Compared<'a> = (
    &'a String,
    &'a Option<NodeFacts>,
    usize,
    &'a BTreeMap<String, i64>,
);

/// What a node can give its pods (`status.allocatable`), parsed once per node write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Allocatable {
    /// `cpu` in millicores (0 when absent or unreadable).
    pub milli_cpu: i64,
    /// `memory` in bytes (0 when absent or unreadable).
    pub memory: i64,
    /// `pods`, when given as a whole number.
    pub pods: Option<usize>,
    /// The extended resources (`vendor/name`) given as a whole number.
    pub scalar: BTreeMap<String, i64>,
}

/// The facts of a node the scheduler's filters and score read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeFacts {
    /// The node's resourceVersion when they were read: an event no newer than it has
    /// nothing the cache has not seen.
    pub resource_version: u64,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// The key of the node's first taint a lab pod does not tolerate (TaintToleration:
    /// the first `NoSchedule` or `NoExecute` taint in `spec.taints` order; every pod
    /// tolerates the `not-ready` and `unreachable` NoExecute taints, as the
    /// DefaultTolerationSeconds admission plugin gives it, and nothing else).
    pub untolerated_taint: Option<String>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `status.allocatable`.
    pub allocatable: Allocatable,
}

impl NodeFacts {
    /// Read a node's facts.
    fn of(node: &Object<NodeSpec>) -> Self {
        let alloc = &node.status.allocatable;
        NodeFacts {
            resource_version: node.metadata.resource_version,
            unschedulable: node.spec.unschedulable,
            untolerated_taint: node
                .spec
                .taints
                .iter()
                .find(|t| !tolerated(t))
                .map(|t| t.key.clone()),
            labels: node.metadata.labels.clone(),
            allocatable: Allocatable {
                milli_cpu: alloc.get("cpu").map_or(0, |q| milli_cpu(q)),
                memory: alloc.get("memory").map_or(0, |q| bytes(q)),
                pods: alloc.get("pods").and_then(|q| q.parse().ok()),
                scalar: alloc
                    .iter()
                    .filter(|(k, _)| is_extended_resource(k))
                    .filter_map(|(k, q)| Some((k.clone(), q.parse::<i64>().ok()?)))
                    .collect(),
            },
        }
    }
}

/// Whether every lab pod tolerates the taint for scheduling: a `PreferNoSchedule` taint
/// filters nothing, and the `NoSchedule` and `NoExecute` ones only when a toleration
/// matches (every lab pod has the DefaultTolerationSeconds admission plugin's two, for
/// the `not-ready`/`unreachable` NoExecute taints).
fn tolerated(t: &crate::cluster::Taint) -> bool {
    match &*t.effect {
        "NoSchedule" | "NoExecute" => crate::cluster::DEFAULT_TOLERATIONS
            .iter()
            .any(|tol| tol.tolerates(t)),
        _ => true,
    }
}

/// `4` → 4000 millicores, `500m` → 500.
fn milli_cpu(q: &str) -> i64 {
    match q.strip_suffix('m') {
        Some(m) => m.parse().unwrap_or(0),
        None => q
            .parse::<i64>()
            .map(|c| c.saturating_mul(1000))
            .unwrap_or(0),
    }
}

/// `8034468Ki` → bytes (binary and decimal suffixes the lab writes).
fn bytes(q: &str) -> i64 {
    const UNITS: [(&str, i64); 6] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("k", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ];
    for (suffix, mult) in UNITS {
        if let Some(n) = q.strip_suffix(suffix) {
            return n
                .parse::<i64>()
                .map(|v| v.saturating_mul(mult))
                .unwrap_or(0);
        }
    }
    q.parse().unwrap_or(0)
}

/// One node's entry in the cache (`framework.NodeInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeInfo {
    /// The node's name.
    pub name: String,
    /// The node's facts; `None` while pods name a node the cache does not have.
    pub node: Option<NodeFacts>,
    /// How many pods bound to the node still hold its resources.
    pub pods: usize,
    /// What those pods request of each extended resource (only the ones some pod requests).
    pub requested: BTreeMap<String, i64>,
    /// The host ports those pods hold (`UsedPorts`).
    pub used_ports: HostPortInfo,
}

/// What a cycle reads of a node for a pod that asks for nothing but room (no node
/// selector, no extended resource, no host port, no volume): such a pod fails a node only
/// on the node's own state (NodeUnschedulable, TaintToleration, the pod count), so whether
/// it fits and the score it would give are kept with the node, updated when its facts or
/// its pods change, and a cycle reads two numbers per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Fit {
    /// Whether such a pod passes every filter on the node: a known node, not cordoned,
    /// with no untolerated taint and room for one more pod.
    pub open: bool,
    /// The node's LeastAllocated score with one more pod than it has.
    pub score: i64,
}

impl Fit {
    /// The fit of a `NodeInfo` as it stands.
    fn of(info: &NodeInfo) -> Self {
        match &info.node {
            None => Fit::default(),
            Some(f) => Fit {
                open: !f.unschedulable
                    && f.untolerated_taint.is_none()
                    && f.allocatable.pods.is_none_or(|max| info.pods < max),
                score: super::placement::least_allocated_score(
                    f.allocatable.milli_cpu,
                    f.allocatable.memory,
                    info.pods + 1,
                ),
            },
        }
    }
}

/// A pod that holds a node's resources, as the cache counted it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodInfo {
    /// The slot of its node's `NodeInfo`.
    slot: usize,
    /// The extended resources it requests (none for most pods: no allocation).
    requests: Vec<(String, i64)>,
    /// The host ports it holds (none for most pods: no allocation).
    ports: Vec<HostPort>,
}

/// The scheduler's cache: a `NodeInfo` per node name in slots, the pods counted on them,
/// and the node tree's walk order as slots.
#[derive(Debug, Clone, Default)]
pub struct NodeInfos {
    /// The index of the first Node watch event not read yet (`None` before the first
    /// look).
    nodes_seen: Option<u64>,
    /// The same for Pod events: they are read only when a cycle needs the counts, so a
    /// stream of pods created on a named node costs the scheduler nothing until then.
    pods_seen: Option<u64>,
    /// The order a cycle walks the nodes in.
    tree: NodeTree,
    /// The `NodeInfo`s; a freed slot is reused.
    slots: Vec<NodeInfo>,
    /// By slot: the `NodeInfo`'s [`Fit`], kept with it.
    fits: Vec<Fit>,
    /// The slot of each node name.
    slot_of: FxHashMap<String, usize>,
    /// Slots no node name uses.
    free: Vec<usize>,
    /// Each pod that holds a node's resources.
    pods: FxHashMap<Key, PodInfo>,
    /// The walk order and the nodes' ranks by name (the cycle's snapshot), rebuilt after
    /// the tree changes.
    walk: Option<Walk>,
}

/// The walk order of a snapshot, and what breaks its score ties.
#[derive(Debug, Clone, Default)]
struct Walk {
    /// The node tree's walk order, as slots.
    order: Vec<usize>,
    /// By slot: the node's place among the walked nodes' names in name order (a cycle's
    /// tie-break: the lower rank wins).
    rank: Vec<u32>,
    /// The walk order again, each slot with its rank (what a cycle reads per node).
    ranked: Vec<(usize, u32)>,
}

/// What a pod already holds on its node: the node's slot, the extended resources it
/// requests and the host ports it holds.
pub(crate) type OwnHold<'a> = (usize, &'a [(String, i64)], &'a [HostPort]);

/// A scheduling cycle's view of the cache: the nodes in walk order.
pub(crate) struct Snapshot<'a> {
    /// The walk order, as slots of `infos`.
    order: &'a [usize],
    /// Each walked slot's rank in name order.
    rank: &'a [u32],
    /// The walk order with each slot's rank.
    ranked: &'a [(usize, u32)],
    /// Every `NodeInfo`.
    infos: &'a [NodeInfo],
    /// Their fits, by slot.
    fits: &'a [Fit],
    /// The pods counted on them.
    pods: &'a FxHashMap<Key, PodInfo>,
}

impl<'a> Snapshot<'a> {
    /// How many nodes a cycle can walk.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// The slot of the `i`th node in walk order, and its rank (see [`Self::rank`]).
    pub fn ranked(&self, i: usize) -> (usize, u32) {
        self.ranked[i]
    }

    /// The fit of the node in `slot` for a pod that asks for nothing but room.
    pub fn fit(&self, slot: usize) -> Fit {
        self.fits[slot]
    }

    /// The `i`th node in walk order: its slot, `NodeInfo` and facts.
    pub fn get(&self, i: usize) -> (usize, &'a NodeInfo, &'a NodeFacts) {
        let slot = self.order[i];
        let info = &self.infos[slot];
        let facts = info
            .node
            .as_ref()
            .expect("the walk order holds only known nodes");
        (slot, info, facts)
    }

    /// The name of the node in `slot`.
    pub fn name(&self, slot: usize) -> &'a str {
        &self.infos[slot].name
    }

    /// A walked node's rank in name order: of two nodes, the one whose name sorts first
    /// has the lower rank.
    pub fn rank(&self, slot: usize) -> u32 {
        self.rank[slot]
    }

    /// The node a pod counts on (its slot), with what it requests and the host ports it
    /// holds there, if it holds a node's resources (keys are unique, so the pod at its key
    /// is the pod). A pod with no `spec.nodeName` holds none: it is not looked up.
    pub fn pod_node(&self, pod: &Object<PodSpec>) -> Option<OwnHold<'a>> {
        if pod.spec.node_name.is_empty() {
            return None;
        }
        let key = (
            pod.metadata.namespace().clone(),
            pod.metadata.name().clone(),
        );
        self.pods
            .get(&key)
            .map(|p| (p.slot, p.requests.as_slice(), p.ports.as_slice()))
    }
}

impl NodeInfos {
    /// Bring the cache up to date with the Node and Pod tables.
    pub fn refresh(&mut self, revs: &Revisions, nodes: &Table<NodeSpec>, pods: &Table<PodSpec>) {
        self.refresh_nodes(revs, nodes);
        match self.pods_seen.and_then(|seen| events_from(revs, seen)) {
            Some(events) => {
                // Each event is looked up in the table, so a pod's events in the same batch
                // would all find what its last one left: it is read once, in its last
                // event's place (so a pod written after another went adds its host ports
                // back, as its update would: see `HostPortInfo`).
                let events: Vec<_> = events.filter(|e| e.kind == PodSpec::API_KIND).collect();
                let mut read = FxHashSet::default();
                let mut last: Vec<_> = events
                    .iter()
                    .rev()
                    .filter(|e| read.insert(e.key.as_str()))
                    .collect();
                last.reverse();
                for e in last {
                    let key = event_key(e).0;
                    let pod = pods.get(&key);
                    self.note_pod(key, pod);
                }
            }
            None => self.relist_pods(pods),
        }
        self.pods_seen = Some(revs.next_event);
    }

    /// Bring the nodes up to date with the Node table (every scheduler pass does, so the
    /// tree sees the nodes arrive one by one).
    pub fn refresh_nodes(&mut self, revs: &Revisions, nodes: &Table<NodeSpec>) {
        match self.nodes_seen.and_then(|seen| events_from(revs, seen)) {
            Some(events) => {
                for e in events.filter(|e| e.kind == NodeSpec::API_KIND) {
                    // The node as the cache read it is at least as new as this event (a
                    // later event of the same batch, or a write the cache has seen): the
                    // node is not read again. A removal always is.
                    let seen = self
                        .slot_of
                        .get(e.key.as_str())
                        .and_then(|&slot| self.slots[slot].node.as_ref())
                        .is_some_and(|f| f.resource_version >= e.resource_version);
                    if seen && e.event_type != EventType::Deleted {
                        continue;
                    }
                    let key = event_key(e).0;
                    match nodes.get(&key) {
                        Some(node) => self.set_node(node),
                        None => self.remove_node(&key.1),
                    }
                }
            }
            None => self.relist_nodes(nodes),
        }
        self.nodes_seen = Some(revs.next_event);
    }

    /// A relist of the nodes: every node's facts read again; the tree keeps its order for
    /// the nodes still there.
    fn relist_nodes(&mut self, nodes: &Table<NodeSpec>) {
        for slot in 0..self.slots.len() {
            // A freed slot has no node: it is not freed twice.
            let info = &mut self.slots[slot];
            if info.node.is_some() && !nodes.contains_key(&(no_namespace(), info.name.clone())) {
                info.node = None;
                if self.tree.remove(slot) {
                    self.walk = None;
                }
                self.refit(slot);
                self.release_if_empty(slot);
            }
        }
        // The nodes still there keep their place; new ones come in list (name) order.
        for node in nodes.values() {
            self.set_node(node);
        }
    }

    /// A relist of the pods: every pod counted again.
    fn relist_pods(&mut self, pods: &Table<PodSpec>) {
        self.pods.clear();
        for slot in 0..self.slots.len() {
            // A freed slot has no pods: it is not freed twice.
            let info = &mut self.slots[slot];
            if info.pods > 0 {
                info.pods = 0;
                info.requested.clear();
                info.used_ports = HostPortInfo::default();
                self.refit(slot);
                self.release_if_empty(slot);
            }
        }
        for (key, pod) in pods {
            self.note_pod(key.clone(), Some(pod));
        }
    }

    /// The slot of `name`'s `NodeInfo`, made when there is none.
    fn slot(&mut self, name: &str) -> usize {
        match self.slot_of.get(name) {
            Some(&slot) => slot,
            None => {
                let info = NodeInfo {
                    name: name.to_string(),
                    node: None,
                    pods: 0,
                    requested: BTreeMap::new(),
                    used_ports: HostPortInfo::default(),
                };
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot] = info;
                        self.fits[slot] = Fit::default();
                        slot
                    }
                    None => {
                        self.slots.push(info);
                        self.fits.push(Fit::default());
                        self.slots.len() - 1
                    }
                };
                self.slot_of.insert(name.to_string(), slot);
                slot
            }
        }
    }

    /// Keep the slot's [`Fit`] with its `NodeInfo` after a change.
    fn refit(&mut self, slot: usize) {
        self.fits[slot] = Fit::of(&self.slots[slot]);
    }

    /// Free the slot of a `NodeInfo` with no node and no pods.
    fn release_if_empty(&mut self, slot: usize) {
        let info = &self.slots[slot];
        if info.node.is_none() && info.pods == 0 {
            self.slot_of.remove(&info.name);
            self.free.push(slot);
        }
    }

    /// `AddNode`/`UpdateNode`: the node's facts, and its place in the tree.
    fn set_node(&mut self, node: &Object<NodeSpec>) {
        let slot = self.slot(node.name());
        self.slots[slot].node = Some(NodeFacts::of(node));
        self.refit(slot);
        if self.tree.add_or_update(slot, node) {
            self.walk = None;
        }
    }

    /// `RemoveNode`: the node leaves the tree; its `NodeInfo` stays while pods count on it.
    fn remove_node(&mut self, name: &str) {
        if let Some(&slot) = self.slot_of.get(name) {
            if self.tree.remove(slot) {
                self.walk = None;
            }
            self.slots[slot].node = None;
            self.refit(slot);
            self.release_if_empty(slot);
        }
    }

    /// `AddPod`/`UpdatePod`/`RemovePod`: count the pod on the node whose resources it
    /// holds now (`None`: the pod is gone).
    fn note_pod(&mut self, key: Key, pod: Option<&Object<PodSpec>>) {
        let now = pod.filter(|p| !p.spec.node_name.is_empty() && is_active(p));
        let requests = now.map_or_else(Vec::new, |p| {
            if p.spec.has_extended_requests() {
                p.spec
                    .extended_requests()
                    .into_iter()
                    .filter(|(_, n)| *n != 0)
                    .collect()
            } else {
                Vec::new()
            }
        });
        let ports = now.map_or_else(Vec::new, |p| super::host_ports::wanted(&p.spec));
        if let (Some(old), Some(p)) = (self.pods.get(&key), now) {
            if self.slots[old.slot].name == p.spec.node_name
                && old.requests == requests
                && old.ports == ports
            {
                // `UpdatePod` is `removePod` then `addPod`: the pod's host ports are in the
                // set again, even if another pod's going took them out.
                self.slots[old.slot].used_ports.add(&ports);
                return;
            }
        }
        if let Some(old) = self.pods.remove(&key) {
            let info = &mut self.slots[old.slot];
            info.pods -= 1;
            info.used_ports.remove(&old.ports);
            for (resource, n) in &old.requests {
                if let Some(total) = info.requested.get_mut(resource) {
                    *total -= n;
                    if *total == 0 {
                        info.requested.remove(resource);
                    }
                }
            }
            self.refit(old.slot);
            self.release_if_empty(old.slot);
        }
        if let Some(p) = now {
            let slot = self.slot(&p.spec.node_name);
            let info = &mut self.slots[slot];
            info.pods += 1;
            for (resource, n) in &requests {
                *info.requested.entry(resource.clone()).or_default() += n;
            }
            info.used_ports.add(&ports);
            self.refit(slot);
            self.pods.insert(
                key,
                PodInfo {
                    slot,
                    requests,
                    ports,
                },
            );
        }
    }

    /// The cycle's snapshot: the nodes in the node tree's walk order.
    pub(crate) fn snapshot(&mut self) -> Snapshot<'_> {
        let (tree, slots) = (&mut self.tree, &self.slots);
        let walk = self.walk.get_or_insert_with(|| {
            let order = tree.list().to_vec();
            let mut by_name = order.clone();
            by_name.sort_unstable_by(|&a, &b| slots[a].name.cmp(&slots[b].name));
            let mut rank = vec![u32::MAX; slots.len()];
            for (r, &slot) in by_name.iter().enumerate() {
                rank[slot] = u32::try_from(r).unwrap_or(u32::MAX);
            }
            let ranked = order.iter().map(|&slot| (slot, rank[slot])).collect();
            Walk {
                order,
                rank,
                ranked,
            }
        });
        Snapshot {
            order: &walk.order,
            rank: &walk.rank,
            ranked: &walk.ranked,
            infos: &self.slots,
            fits: &self.fits,
            pods: &self.pods,
        }
    }

    /// The cache by node name, as a recompute compares it: each name's `NodeInfo` but its
    /// `UsedPorts` (see [`Self::assert_matches`]), and each pod's node and requests.
    #[cfg(any(test, debug_assertions))]
    fn by_name(&self) -> (BTreeMap<&str, Compared<'_>>, BTreeMap<&Key, Counted<'_>>) {
        let infos = self
            .slot_of
            .iter()
            .map(|(name, &slot)| {
                let i = &self.slots[slot];
                (name.as_str(), (&i.name, &i.node, i.pods, &i.requested))
            })
            .collect();
        let pods = self
            .pods
            .iter()
            .map(|(k, p)| {
                let name = self.slots[p.slot].name.as_str();
                (k, (name, p.requests.as_slice(), p.ports.as_slice()))
            })
            .collect();
        (infos, pods)
    }

    /// Panic when the cache differs from one built from the tables now: the test of its
    /// upkeep, run before every scheduling cycle in debug builds.
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn assert_matches(&self, nodes: &Table<NodeSpec>, pods: &Table<PodSpec>) {
        let mut fresh = NodeInfos::default();
        fresh.relist_nodes(nodes);
        fresh.relist_pods(pods);
        assert_eq!(
            self.by_name(),
            fresh.by_name(),
            "the scheduler's cache is stale"
        );
        // The host ports kept from events are the recompute's, less any a pod's going took
        // out while another pod held them too (`HostPortInfo.Remove`).
        for (name, &slot) in &self.slot_of {
            let fresh_ports = &fresh.slots[fresh.slot_of[name]].used_ports;
            assert!(
                self.slots[slot].used_ports.is_subset(fresh_ports),
                "the scheduler's cache holds a host port no pod on {name} holds"
            );
        }
        for &slot in self.slot_of.values() {
            assert_eq!(
                self.fits[slot],
                Fit::of(&self.slots[slot]),
                "a node's fit is kept with its NodeInfo"
            );
        }
        let in_tree = (0..self.slots.len())
            .filter(|&s| self.tree.contains(s))
            .count();
        assert_eq!(in_tree, nodes.len(), "the node tree holds every node once");
        for (slot, info) in self.slots.iter().enumerate() {
            assert_eq!(
                self.tree.contains(slot),
                info.node.is_some() && self.slot_of.get(&info.name) == Some(&slot),
                "the node tree holds exactly the known nodes' slots"
            );
        }
        if let Some(walk) = &self.walk {
            assert_eq!(
                walk.order.len(),
                nodes.len(),
                "the walk order holds every node"
            );
            assert!(
                walk.ranked
                    .iter()
                    .zip(&walk.order)
                    .all(|(&(slot, rank), &s)| slot == s && rank == walk.rank[s]),
                "the ranked walk order is the walk order"
            );
            let mut by_rank = walk.order.clone();
            by_rank.sort_unstable_by_key(|&s| walk.rank[s]);
            assert!(
                by_rank
                    .windows(2)
                    .all(|w| self.slots[w[0]].name < self.slots[w[1]].name),
                "the ranks follow the names"
            );
        }
    }
}

/// Whether a pod still holds its node's resources (not finished).
fn is_active(p: &Object<PodSpec>) -> bool {
    p.status.phase != "Failed" && p.status.phase != "Succeeded"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, Condition, Container, ResourceRequirements};
    use proptest::prelude::*;

    #[test]
    fn quantities_are_parsed_as_the_scheduler_reads_them() {
        assert_eq!(milli_cpu("4"), 4000);
        assert_eq!(milli_cpu("500m"), 500);
        assert_eq!(bytes("1Ki"), 1024);
        assert_eq!(bytes("8034468Ki"), 8_227_295_232);
        assert_eq!(bytes("2G"), 2_000_000_000);
        assert_eq!(bytes("x"), 0);
    }

    /// A write to the API the scheduler's informers see.
    #[derive(Debug, Clone)]
    enum Op {
        /// Create or replace node `n` in zone `z` (none: no zone label).
        Node(u8, Option<u8>),
        /// Cordon or uncordon node `n`.
        Cordon(u8, bool),
        /// Set node `n`'s Ready condition: True, False, Unknown.
        Ready(u8, u8),
        /// Set node `n`'s allocatable pods and extended devices.
        Allocatable(u8, u8),
        /// Delete node `n`.
        DeleteNode(u8),
        /// Create or replace pod `p` on node `n` (no node: unscheduled), asking for `d`
        /// devices.
        Pod(u8, Option<u8>, u8),
        /// Pod `p` has finished.
        Finish(u8),
        /// Delete pod `p`.
        DeletePod(u8),
        /// A scheduler pass with no pod to place: only the nodes are read.
        Pass,
        /// The scheduler looks (a cycle).
        Look,
        /// The watch log drops every event not read yet (the next look relists).
        DropEvents,
    }

    fn op() -> impl Strategy<Value = Op> {
        let n = 0..5u8;
        let p = 0..8u8;
        prop_oneof![
            (n.clone(), proptest::option::of(0..3u8)).prop_map(|(n, z)| Op::Node(n, z)),
            (n.clone(), any::<bool>()).prop_map(|(n, c)| Op::Cordon(n, c)),
            (n.clone(), 0..3u8).prop_map(|(n, r)| Op::Ready(n, r)),
            (n.clone(), 0..4u8).prop_map(|(n, a)| Op::Allocatable(n, a)),
            n.clone().prop_map(Op::DeleteNode),
            (p.clone(), proptest::option::of(n), 0..3u8).prop_map(|(p, n, d)| Op::Pod(p, n, d)),
            p.clone().prop_map(Op::Finish),
            p.prop_map(Op::DeletePod),
            Just(Op::Pass),
            Just(Op::Look),
            Just(Op::DropEvents),
        ]
    }

    const DEVICE: &str = "example.com/gpu";

    /// Apply `op` to the API (a write the API refuses changes nothing).
    fn apply(api: &mut Cluster, op: &Op) {
        let node_key = |n: u8| (no_namespace(), format!("n{n}"));
        let pod_key = |p: u8| ("default".to_string(), format!("p{p}"));
        let update_node = |api: &mut Cluster, n: u8, f: &dyn Fn(&mut Object<NodeSpec>)| {
            if let Some(mut node) = api.nodes.get(&node_key(n)).cloned() {
                f(&mut node);
                let _ = api.nodes().update(node);
            }
        };
        match *op {
            Op::Node(n, zone) => {
                let mut node = Object::new(&format!("n{n}"), "", NodeSpec::default());
                if let Some(z) = zone {
                    node.metadata
                        .labels
                        .insert("topology.kubernetes.io/zone".into(), format!("z{z}"));
                }
                let allocatable = std::sync::Arc::make_mut(&mut node.status.allocatable);
                allocatable.insert("cpu".into(), "4".into());
                allocatable.insert("memory".into(), "8034468Ki".into());
                match api.nodes.get(&node_key(n)) {
                    Some(_) => update_node(api, n, &|o| {
                        o.metadata.labels = node.metadata.labels.clone()
                    }),
                    None => {
                        let _ = api.nodes().create(node, Default::default());
                    }
                }
            }
            Op::Cordon(n, c) => update_node(api, n, &|o| o.spec.unschedulable = c),
            Op::Ready(n, r) => update_node(api, n, &|o| {
                o.status.conditions = vec![Condition {
                    condition_type: "Ready".into(),
                    status: ["True", "False", "Unknown"][usize::from(r)].into(),
                    reason: "".into(),
                    message: "".into(),
                }]
            }),
            Op::Allocatable(n, a) => update_node(api, n, &|o| {
                let allocatable = std::sync::Arc::make_mut(&mut o.status.allocatable);
                allocatable.insert("pods".into(), a.to_string());
                allocatable.insert(DEVICE.into(), (a * 2).to_string());
            }),
            Op::DeleteNode(n) => {
                let _ = api.nodes().delete("", &format!("n{n}"));
            }
            Op::Pod(p, n, d) => {
                let mut pod = Object::new(&format!("p{p}"), "default", PodSpec::default());
                pod.spec.node_name = n.map(|n| format!("n{n}")).unwrap_or_default();
                let mut resources = ResourceRequirements::default();
                if d > 0 {
                    resources.requests.insert(DEVICE.into(), d.to_string());
                }
                // One device also asks for a host port, so the ports a node's pods hold
                // change with the pods' writes.
                let ports = if d == 1 {
                    vec![crate::cluster::ContainerPort {
                        container_port: 80,
                        host_port: 8080,
                        protocol: "TCP".into(),
                    }]
                } else {
                    Vec::new()
                };
                pod.spec
                    .containers
                    .to_mut()
                    .push(Container::new("app", "busybox", ports, resources));
                match api.pods.get(&pod_key(p)).cloned() {
                    Some(mut old) => {
                        old.spec = pod.spec;
                        let _ = api.pods().update(old);
                    }
                    None => {
                        let _ = api.pods().create(pod, Default::default());
                    }
                }
            }
            Op::Finish(p) => {
                if let Some(mut pod) = api.pods.get(&pod_key(p)).cloned() {
                    pod.status.phase = "Succeeded".into();
                    let _ = api.pods().update(pod);
                }
            }
            Op::DeletePod(p) => {
                let _ = api.pods().delete("default", &format!("p{p}"));
            }
            Op::DropEvents => api.revs.events.clear(),
            Op::Pass | Op::Look => {}
        }
    }

    /// `NodeInfo.UsedPorts` is a set: a pod that goes takes its port out though another
    /// pod holds it too, and that pod's next write (`UpdatePod`: remove, then add) puts it
    /// back, even when the write comes in the same batch of events as the going.
    #[test]
    fn a_shared_host_port_goes_with_either_holder_and_comes_back_with_a_write() {
        let mut api = Cluster::default();
        let mut cache = NodeInfos::default();
        apply(&mut api, &Op::Node(0, None));
        apply(&mut api, &Op::Pod(0, Some(0), 1));
        apply(&mut api, &Op::Pod(1, Some(0), 1));
        let port =
            super::super::host_ports::wanted(&api.pods[&("default".into(), "p1".into())].spec);
        let held = |cache: &mut NodeInfos, api: &Cluster| {
            cache.refresh(&api.revs, &api.nodes, &api.pods);
            cache.assert_matches(&api.nodes, &api.pods);
            let slot = cache.slot_of["n0"];
            !cache.slots[slot].used_ports.fits(&port, &[])
        };
        assert!(held(&mut cache, &api));
        apply(&mut api, &Op::DeletePod(0));
        assert!(!held(&mut cache, &api));
        let relabel = |api: &mut Cluster, p: &str, v: &str| {
            let mut pod = api.pods[&("default".into(), p.into())].clone();
            pod.metadata.labels.insert("v".into(), v.into());
            api.pods().update(pod).expect("a pod update");
        };
        relabel(&mut api, "p1", "1");
        assert!(held(&mut cache, &api));
        // p1 written before and after p2 goes, in one batch: its last write is the last word.
        apply(&mut api, &Op::Pod(2, Some(0), 1));
        assert!(held(&mut cache, &api));
        relabel(&mut api, "p1", "2");
        apply(&mut api, &Op::DeletePod(2));
        relabel(&mut api, "p1", "3");
        assert!(held(&mut cache, &api));
        // Written only before p2 goes: the port is out.
        apply(&mut api, &Op::Pod(2, Some(0), 1));
        assert!(held(&mut cache, &api));
        relabel(&mut api, "p1", "4");
        apply(&mut api, &Op::DeletePod(2));
        assert!(!held(&mut cache, &api));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The cache kept from watch events equals one built from the tables, whatever
        /// the writes, however often the scheduler looks and whatever events the watch
        /// log drops; the walk order holds every node once.
        #[test]
        fn the_cache_kept_from_events_equals_a_recompute(ops in proptest::collection::vec(op(), 1..60)) {
            let mut api = Cluster::default();
            let mut cache = NodeInfos::default();
            for op in &ops {
                apply(&mut api, op);
                if matches!(op, Op::Pass) {
                    cache.refresh_nodes(&api.revs, &api.nodes);
                }
                if matches!(op, Op::Look) {
                    cache.refresh(&api.revs, &api.nodes, &api.pods);
                    cache.assert_matches(&api.nodes, &api.pods);
                    let snapshot = cache.snapshot();
                    let mut walked: Vec<&str> =
                        (0..snapshot.len()).map(|i| snapshot.get(i).1.name.as_str()).collect();
                    walked.sort_unstable();
                    let names: Vec<&str> = api.nodes.values().map(|n| n.name()).collect();
                    prop_assert_eq!(walked, names);
                }
            }
            cache.refresh(&api.revs, &api.nodes, &api.pods);
            cache.assert_matches(&api.nodes, &api.pods);
        }
    }
}
