//! kube-scheduler's node tree (`pkg/scheduler/backend/cache/node_tree.go`): the order in
//! which a scheduling cycle walks the nodes. Nodes are grouped by zone (the key of
//! `utilnode.GetZoneKey`: region and zone labels), zones in the order their first node
//! arrived, nodes in a zone in the order they arrived; the list takes one node from each
//! zone in turn, so a search that stops early still spreads over the zones.
//!
//! The tree is kept by the scheduler's cache ([`super::node_info`]) from the Node informer's
//! events. After a relist, nodes still present keep their place and the new ones are added
//! in the order the API server lists them (by name).

use crate::cluster::{NodeSpec, Object, Table};
use std::collections::BTreeMap;

/// The well-known zone label (`topology.kubernetes.io/zone`).
const ZONE: &str = "topology.kubernetes.io/zone";
/// The deprecated zone label the scheduler still reads when the new one is missing.
const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// The well-known region label.
const REGION: &str = "topology.kubernetes.io/region";
/// The deprecated region label.
const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";

/// `utilnode.GetZoneKey`: empty when the node has neither a region nor a zone.
fn zone_key(node: &Object<NodeSpec>) -> String {
    let labels = &node.metadata.labels;
    let zone = labels
        .get(ZONE)
        .or_else(|| labels.get(BETA_ZONE))
        .map_or("", String::as_str);
    let region = labels
        .get(REGION)
        .or_else(|| labels.get(BETA_REGION))
        .map_or("", String::as_str);
    if zone.is_empty() && region.is_empty() {
        String::new()
    } else {
        format!("{region}:\0:{zone}")
    }
}

/// The scheduler's node tree: zones with their nodes in arrival order, and the walk order
/// built from them when asked.
#[derive(Debug, Clone, Default)]
pub struct NodeTree {
    /// Each zone key with its nodes' names, zones in the order they appeared.
    zones: Vec<(String, Vec<String>)>,
    /// The zone key of every node in the tree.
    zone_of: BTreeMap<String, String>,
    /// The walk order (`nodeTree.list()`), rebuilt only after a change.
    list: Option<Vec<String>>,
}

impl NodeTree {
    /// Apply a relist: drop the nodes that are gone, move the ones whose zone changed, add
    /// the new ones in list (name) order.
    pub(crate) fn relist(&mut self, nodes: &Table<NodeSpec>) {
        let gone: Vec<String> = self
            .zone_of
            .keys()
            .filter(|name| !nodes.contains_key(&(crate::cluster::no_namespace(), (*name).clone())))
            .cloned()
            .collect();
        for name in gone {
            self.remove(&name);
        }
        for node in nodes.values() {
            self.add_or_update(node);
        }
    }

    /// `addNode`/`updateNode`: a node not in the tree is appended to its zone; a node whose
    /// zone changed moves to the end of its new zone; otherwise nothing changes. True when
    /// the walk order changed.
    pub(crate) fn add_or_update(&mut self, node: &Object<NodeSpec>) -> bool {
        let zone = zone_key(node);
        let name = node.name();
        match self.zone_of.get(name) {
            Some(z) if *z == zone => return false,
            Some(_) => {
                self.remove(name);
            }
            None => {}
        }
        match self.zones.iter_mut().find(|(z, _)| *z == zone) {
            Some((_, names)) => names.push(name.to_string()),
            None => self.zones.push((zone.clone(), vec![name.to_string()])),
        }
        self.zone_of.insert(name.to_string(), zone);
        self.list = None;
        true
    }

    /// `removeNode`: the node leaves its zone, and an emptied zone leaves the tree; the
    /// others keep their order. True when the node was in the tree.
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        let Some(zone) = self.zone_of.remove(name) else {
            return false;
        };
        if let Some(i) = self.zones.iter().position(|(z, _)| *z == zone) {
            self.zones[i].1.retain(|n| n != name);
            if self.zones[i].1.is_empty() {
                self.zones.remove(i);
            }
        }
        self.list = None;
        true
    }

    /// `nodeTree.list()`: the first node of every zone, then the second of every zone that
    /// has one, and so on.
    pub(crate) fn list(&mut self) -> &[String] {
        let zones = &self.zones;
        self.list.get_or_insert_with(|| {
            let total = zones.iter().map(|(_, n)| n.len()).sum();
            let mut out = Vec::with_capacity(total);
            let mut index = 0;
            while out.len() < total {
                for (_, names) in zones {
                    if let Some(n) = names.get(index) {
                        out.push(n.clone());
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
    fn the_walk_takes_one_node_from_each_zone_in_turn_in_arrival_order() {
        let mut t = NodeTree::default();
        for (name, zone) in [
            ("n-b1", "b"),
            ("n-a1", "a"),
            ("n-b2", "b"),
            ("n-b3", "b"),
            ("n-a2", "a"),
        ] {
            t.add_or_update(&node(name, Some(zone)));
        }
        t.add_or_update(&node("plain", None));
        let names = |t: &mut NodeTree| -> Vec<String> { t.list().to_vec() };
        assert_eq!(
            names(&mut t),
            ["n-b1", "n-a1", "plain", "n-b2", "n-a2", "n-b3"]
        );
        // A node that changes zone moves to the end of its new zone; zone b keeps its
        // place.
        t.add_or_update(&node("n-b1", Some("a")));
        assert_eq!(
            names(&mut t),
            ["n-b2", "n-a1", "plain", "n-b3", "n-a2", "n-b1"]
        );
        // Removing the last node of a zone removes the zone.
        t.remove("plain");
        assert_eq!(names(&mut t), ["n-b2", "n-a1", "n-b3", "n-a2", "n-b1"]);
    }
}
