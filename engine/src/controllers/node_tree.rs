//! kube-scheduler's node tree (`pkg/scheduler/backend/cache/node_tree.go`): the order in
//! which a scheduling cycle walks the nodes. Nodes are grouped by zone (the key of
//! `utilnode.GetZoneKey`: region and zone labels), zones in the order their first node
//! arrived, nodes in a zone in the order they arrived; the list takes one node from each
//! zone in turn, so a search that stops early still spreads over the zones.
//!
//! The tree is kept by the scheduler's cache ([`super::node_info`]) from the Node informer's
//! events, and holds its nodes as the cache's slots (a node number), so an event costs no
//! name lookups and no allocation, and the walk order is a list of slots. After a relist,
//! nodes still present keep their place and the new ones are added in the order the API
//! server lists them (by name).

use crate::cluster::{NodeSpec, Object};

/// The well-known zone label (`topology.kubernetes.io/zone`).
const ZONE: &str = "topology.kubernetes.io/zone";
/// The deprecated zone label the scheduler still reads when the new one is missing.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// The well-known region label.
const REGION: &str = "topology.kubernetes.io/region";
/// The deprecated region label.
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";

/// `utilnode.GetZoneKey`'s parts: (region, zone), both empty when the node has neither.
fn zone_parts(node: &Object<NodeSpec>) -> (&str, &str) {
    let labels = &node.metadata.labels;
    let zone = labels
        .get(ZONE)
        .or_else(|| labels.get(BETA_ZONE))
        .map_or("", String::as_str);
    let region = labels
        .get(REGION)
        .or_else(|| labels.get(BETA_REGION))
        .map_or("", String::as_str);
    (region, zone)
}

/// `utilnode.GetZoneKey` of those parts: empty when the node has neither a region nor a
/// zone.
fn zone_key((region, zone): (&str, &str)) -> String {
    if zone.is_empty() && region.is_empty() {
        String::new()
    } else {
        format!("{region}:\0:{zone}")
    }
}

/// Whether `key` is [`zone_key`] of `(region, zone)`, without building it.
fn is_zone_key(key: &str, (region, zone): (&str, &str)) -> bool {
    if zone.is_empty() && region.is_empty() {
        return key.is_empty();
    }
    key.strip_prefix(region)
        .and_then(|rest| rest.strip_prefix(":\0:"))
        .is_some_and(|rest| rest == zone)
}

/// The scheduler's node tree: zones with their nodes in arrival order, and the walk order
/// built from them when asked. Nodes are the cache's slots.
#[derive(Debug, Clone, Default)]
pub struct NodeTree {
    /// Each zone key with its nodes' slots, zones in the order they appeared.
    zones: Vec<(String, Vec<usize>)>,
    /// The zone key of every slot in the tree (`None`: not in the tree), by slot.
    zone_of: Vec<Option<String>>,
    /// The walk order (`nodeTree.list()`), rebuilt only after a change.
    list: Option<Vec<usize>>,
}

impl NodeTree {
    /// `addNode`/`updateNode` of `node`, the cache's slot `slot`: a node not in the tree is
    /// appended to its zone; a node whose zone changed moves to the end of its new zone;
    /// otherwise nothing changes. True when the walk order changed.
    pub(crate) fn add_or_update(&mut self, slot: usize, node: &Object<NodeSpec>) -> bool {
        let parts = zone_parts(node);
        match self.zone_of.get(slot) {
            Some(Some(z)) if is_zone_key(z, parts) => return false,
            Some(Some(_)) => {
                self.remove(slot);
            }
            _ => {}
        }
        let zone = match self.zones.iter().position(|(z, _)| is_zone_key(z, parts)) {
            Some(i) => {
                self.zones[i].1.push(slot);
                self.zones[i].0.clone()
            }
            None => {
                let key = zone_key(parts);
                self.zones.push((key.clone(), vec![slot]));
                key
            }
        };
        if self.zone_of.len() <= slot {
            self.zone_of.resize(slot + 1, None);
        }
        self.zone_of[slot] = Some(zone);
        self.list = None;
        true
    }

    /// `removeNode`: the slot's node leaves its zone, and an emptied zone leaves the tree;
    /// the others keep their order. True when the node was in the tree.
    pub(crate) fn remove(&mut self, slot: usize) -> bool {
        let Some(zone) = self.zone_of.get_mut(slot).and_then(Option::take) else {
            return false;
        };
        if let Some(i) = self.zones.iter().position(|(z, _)| *z == zone) {
            self.zones[i].1.retain(|&s| s != slot);
            if self.zones[i].1.is_empty() {
                self.zones.remove(i);
            }
        }
        self.list = None;
        true
    }

    /// Whether the slot's node is in the tree (the cache's check of its upkeep).
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn contains(&self, slot: usize) -> bool {
        self.zone_of.get(slot).is_some_and(Option::is_some)
    }

    /// `nodeTree.list()`, as slots: the first node of every zone, then the second of every
    /// zone that has one, and so on.
    pub(crate) fn list(&mut self) -> &[usize] {
        let zones = &self.zones;
        self.list.get_or_insert_with(|| {
            let total = zones.iter().map(|(_, n)| n.len()).sum();
            let mut out = Vec::with_capacity(total);
            let mut index = 0;
            while out.len() < total {
                for (_, slots) in zones {
                    if let Some(&s) = slots.get(index) {
                        out.push(s);
                    }
                }
                index += 1;
            }
            out
        })
    }
}

/// `numFeasibleNodesToFind` (`pkg/scheduler/schedule_one.go`) with the default
/// `percentageOfNodesToScore` (0: adaptive): every node below 100 nodes; otherwise
/// `50 − nodes/125` percent of them, at least 5 percent, and never fewer than 100.
pub(crate) fn feasible_nodes_to_find(all: usize) -> usize {
    const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
    const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;
    if all < MIN_FEASIBLE_NODES_TO_FIND {
        return all;
    }
    let percentage = 50usize
        .saturating_sub(all / 125)
        .max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    (all * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_nodes_searched_shrinks_with_the_cluster_as_kube_scheduler_s() {
        assert_eq!(feasible_nodes_to_find(3), 3);
        assert_eq!(feasible_nodes_to_find(99), 99);
        // 100 nodes: 50 − 0 = 50 % is 50, raised to the floor of 100.
        assert_eq!(feasible_nodes_to_find(100), 100);
        // 1,000 nodes: 50 − 8 = 42 %.
        assert_eq!(feasible_nodes_to_find(1000), 420);
        // 5,000 nodes: 50 − 40 = 10 %.
        assert_eq!(feasible_nodes_to_find(5000), 500);
        // 6,000 nodes and more: the 5 % floor.
        assert_eq!(feasible_nodes_to_find(6000), 300);
        assert_eq!(feasible_nodes_to_find(15000), 750);
    }

    fn node(name: &str, zone: Option<&str>) -> Object<NodeSpec> {
        let mut n = Object::new(name, "", NodeSpec::default());
        if let Some(z) = zone {
            n.metadata.labels.insert(ZONE.into(), z.into());
        }
        n
    }

    #[test]
    fn a_zone_key_is_recognised_without_being_built() {
        for parts in [("", ""), ("r", ""), ("", "z"), ("r", "z"), ("r:", "z")] {
            let key = zone_key(parts);
            assert!(is_zone_key(&key, parts), "{parts:?}");
            for other in [("", ""), ("r", ""), ("", "z"), ("r", "z"), ("r", "z:")] {
                assert_eq!(
                    is_zone_key(&key, other),
                    zone_key(other) == key,
                    "{parts:?} {other:?}"
                );
            }
        }
    }

    #[test]
    fn the_walk_takes_one_node_from_each_zone_in_turn_in_arrival_order() {
        let mut t = NodeTree::default();
        let names = ["n-b1", "n-a1", "n-b2", "n-b3", "n-a2", "plain"];
        for (slot, (name, zone)) in names
            .iter()
            .zip([Some("b"), Some("a"), Some("b"), Some("b"), Some("a"), None])
            .enumerate()
        {
            t.add_or_update(slot, &node(name, zone));
        }
        let walk = |t: &mut NodeTree| -> Vec<&str> { t.list().iter().map(|&s| names[s]).collect() };
        assert_eq!(
            walk(&mut t),
            ["n-b1", "n-a1", "plain", "n-b2", "n-a2", "n-b3"]
        );
        // An update that keeps the zone changes nothing.
        assert!(!t.add_or_update(1, &node("n-a1", Some("a"))));
        // A node that changes zone moves to the end of its new zone; zone b keeps its
        // place.
        assert!(t.add_or_update(0, &node("n-b1", Some("a"))));
        assert_eq!(
            walk(&mut t),
            ["n-b2", "n-a1", "plain", "n-b3", "n-a2", "n-b1"]
        );
        // Removing the last node of a zone removes the zone.
        assert!(t.remove(5));
        assert!(!t.remove(5));
        assert_eq!(walk(&mut t), ["n-b2", "n-a1", "n-b3", "n-a2", "n-b1"]);
    }
}
