//! What `node add` checks a new node against, indexed: every node's podCIDR (by network
//! address and prefix length) and InternalIP. With them a node add costs O(log n) instead
//! of a scan of every node (`--preset dc-1000` adds 1,000 nodes at startup).
//!
//! Nodes are only ever created by `node add` (there is no node delete) and their podCIDR
//! and InternalIP never change, so [`Lab::node_add`](super::Lab::node_add) inserts each new
//! node and nothing else has to; a replaced lab (`load`, `reset`) starts a new index.
//! [`NodeIndex::build`] makes one from the store, which the tests compare against.

#[cfg(test)]
use crate::cluster::Object;
use crate::cluster::{NodeSpec, Table};
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};

/// The podCIDRs and InternalIPs of the nodes, with the names of the nodes that hold them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NodeIndex {
    /// Node names by podCIDR, keyed by (network address, prefix length).
    cidrs: BTreeMap<(IpAddr, u8), Names>,
    /// The (is IPv6, prefix length) of every podCIDR: the lengths a "which podCIDR
    /// contains this address" query has to try.
    prefixes: BTreeSet<(bool, u8)>,
    /// Node names by InternalIP (the address, not its text: the key compares as numbers,
    /// not as text that shares `192.168.` with every other node's).
    ips: BTreeMap<IpAddr, Names>,
}

/// Node names in order (almost always one: `node add` refuses a second node with the same
/// podCIDR or InternalIP; a sorted `Vec` is far smaller than a set).
type Names = Vec<String>;

/// Add a name to a sorted list of names.
fn add_name(names: &mut Names, name: &str) {
    if let Err(at) = names.binary_search_by(|n| n.as_str().cmp(name)) {
        names.insert(at, name.to_string());
    }
}

impl NodeIndex {
    #[cfg(test)]
    /// The index of every node in a store.
    pub(crate) fn build(nodes: &Table<NodeSpec>) -> Self {
        let mut index = NodeIndex::default();
        for obj in nodes.values() {
            index.insert(obj);
        }
        index
    }

    #[cfg(test)]
    /// Index a node (its podCIDR if it parses, its InternalIP if it has one).
    pub(crate) fn insert(&mut self, obj: &Object<NodeSpec>) {
        self.insert_parts(obj.name(), &obj.spec.pod_cidr, obj.status.internal_ip());
    }

    #[cfg(test)]
    /// Index a node by its name, podCIDR and InternalIP.
    pub(crate) fn insert_parts(&mut self, name: &str, pod_cidr: &str, internal_ip: Option<&str>) {
        self.insert_net(
            name,
            pod_cidr.parse::<IpNet>().ok(),
            internal_ip.and_then(|ip| ip.parse().ok()),
        );
    }

    /// [`NodeIndex::insert_parts`] with the podCIDR and InternalIP already parsed (`None`:
    /// none, or it does not parse).
    pub(crate) fn insert_net(
        &mut self,
        name: &str,
        pod_cidr: Option<IpNet>,
        internal_ip: Option<IpAddr>,
    ) {
        if let Some(net) = pod_cidr {
            add_name(self.cidrs.entry(key(&net)).or_default(), name);
            self.prefixes.insert(family_len(&net));
        }
        if let Some(ip) = internal_ip {
            add_name(self.ips.entry(ip).or_default(), name);
        }
    }

    /// The first node (by name) whose podCIDR overlaps `cidr` — it contains `cidr`'s
    /// network address or `cidr` contains its network address — with that podCIDR.
    pub fn overlapping<'a>(
        &self,
        nodes: &'a Table<NodeSpec>,
        cidr: &IpNet,
    ) -> Option<(&'a str, IpNet)> {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        // podCIDRs inside `cidr`: their network address lies in cidr's range.
        let (first, last) = (cidr.network(), cidr.broadcast());
        for (_, held) in self.cidrs.range((first, 0)..=(last, u8::MAX)) {
            names.extend(held.iter().map(String::as_str));
        }
        // podCIDRs that contain `cidr`'s network address: one lookup per prefix length.
        let v6 = matches!(cidr, IpNet::V6(_));
        for &(fam, len) in &self.prefixes {
            if fam != v6 {
                continue;
            }
            let Ok(outer) = IpNet::new(cidr.network(), len) else {
                continue;
            };
            if let Some(held) = self.cidrs.get(&key(&outer)) {
                names.extend(held.iter().map(String::as_str));
            }
        }
        // The candidates, checked as a scan would check them, first by name.
        names.into_iter().find_map(|name| {
            let (name, obj) =
                nodes.get_key_value(&(crate::cluster::no_namespace(), name.to_string()))?;
            let o: IpNet = obj.spec.pod_cidr.parse().ok()?;
            (o.contains(&cidr.network()) || cidr.contains(&o.network()))
                .then_some((name.1.as_str(), o))
        })
    }

    /// The first node (by name) whose InternalIP is `ip`.
    pub(crate) fn ip_owner(&self, ip: IpAddr) -> Option<&str> {
        self.ips
            .get(&ip)
            .and_then(|held| held.first())
            .map(String::as_str)
    }

    /// The smallest N ≥ 1 such that neither `10.244.N.0/24` is a node's podCIDR nor
    /// `192.168.0.N` a node's InternalIP (254 when all are taken): the default a node
    /// added without `--cidr`/`--ip` gets.
    pub(crate) fn free_default(&self, nodes: &Table<NodeSpec>) -> u32 {
        let mut n = 1u32;
        loop {
            let cidr = format!("10.244.{n}.0/24");
            let net = IpNet::new(IpAddr::V4(Ipv4Addr::new(10, 244, n as u8, 0)), 24);
            let cidr_taken = net
                .ok()
                .and_then(|net| self.cidrs.get(&key(&net)))
                .is_some_and(|held| {
                    held.iter().any(|name| {
                        nodes
                            .get(&(crate::cluster::no_namespace(), name.clone()))
                            .is_some_and(|o| o.spec.pod_cidr == cidr)
                    })
                });
            let ip = IpAddr::V4(Ipv4Addr::new(192, 168, 0, n as u8));
            let taken = cidr_taken || self.ips.contains_key(&ip);
            if !taken || n >= 254 {
                return n;
            }
            n += 1;
        }
    }
}

/// The index key of a podCIDR: its network address and prefix length.
fn key(net: &IpNet) -> (IpAddr, u8) {
    (net.network(), net.prefix_len())
}

/// A podCIDR's family and prefix length.
fn family_len(net: &IpNet) -> (bool, u8) {
    (matches!(net, IpNet::V6(_)), net.prefix_len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Lab;

    /// The checks as a scan of every node makes them (what `node add` did before the index).
    fn scan_overlap(lab: &Lab, cidr: &IpNet) -> Option<(String, IpNet)> {
        lab.cluster.nodes.iter().find_map(|(k, obj)| {
            let o: IpNet = obj.spec.pod_cidr.parse().ok()?;
            (o.contains(&cidr.network()) || cidr.contains(&o.network())).then(|| (k.1.clone(), o))
        })
    }

    fn scan_ip(lab: &Lab, ip: &str) -> Option<String> {
        lab.cluster
            .nodes
            .values()
            .find(|n| n.status.internal_ip() == Some(ip))
            .map(|n| n.metadata.name().clone())
    }

    fn scan_default(lab: &Lab) -> u32 {
        let mut n = 1u32;
        loop {
            let cidr = format!("10.244.{n}.0/24");
            let ip = format!("192.168.0.{n}");
            let taken =
                lab.cluster.nodes.values().any(|o| {
                    o.spec.pod_cidr == cidr || o.status.internal_ip() == Some(ip.as_str())
                });
            if !taken || n >= 254 {
                return n;
            }
            n += 1;
        }
    }

    /// The index answers every question as a scan would, and equals one rebuilt from the
    /// store.
    fn check(lab: &Lab) {
        let index = &lab.node_index;
        assert_eq!(
            *index,
            NodeIndex::build(&lab.cluster.nodes),
            "index is stale"
        );
        assert_eq!(index.free_default(&lab.cluster.nodes), scan_default(lab));
        let probes = [
            "10.244.0.0/16",
            "10.244.1.0/24",
            "10.244.1.128/25",
            "10.244.2.0/23",
            "10.0.0.0/8",
            "0.0.0.0/0",
            "10.245.0.0/24",
            "172.16.0.0/12",
            "fd00::/8",
            "fd00:10::/64",
            "fd00:10::/120",
            "::/0",
        ];
        for p in probes {
            let net: IpNet = p.parse().unwrap();
            let got = index
                .overlapping(&lab.cluster.nodes, &net)
                .map(|(n, o)| (n.to_string(), o));
            assert_eq!(got, scan_overlap(lab, &net), "overlap with {p}");
        }
        for ip in [
            "192.168.0.1",
            "192.168.0.2",
            "192.168.0.3",
            "10.0.0.9",
            "fd00::9",
        ] {
            assert_eq!(
                index.ip_owner(ip.parse().unwrap()).map(str::to_string),
                scan_ip(lab, ip),
                "{ip}"
            );
        }
    }

    #[test]
    fn the_index_answers_as_a_scan_of_the_nodes_would() {
        let mut lab = Lab::with_edges(Lab::empty, crate::edge::tests::disk());
        check(&lab);
        let lines = [
            "node add a",
            "node add b",
            "node add c --cidr 10.244.1.0/24",
            "node add c --cidr 10.244.0.0/16",
            "node add c --cidr 10.244.3.0/25 --ip 192.168.0.2",
            "node add c --cidr 10.244.3.0/25 --ip 192.168.0.7",
            "node add d",
            "node add e --cidr 10.244.3.128/25",
            "node add f --ip 192.168.0.5",
            "node add g",
            "node add v6 --cidr fd00:10::/64 --ip fd00::9",
            "node add v6b --cidr fd00::/8",
            "node add v6c --cidr fd00:10::/120",
            "node add z --cidr 10.0.0.0/8",
        ];
        for line in lines {
            let _ = lab.execute(line);
            check(&lab);
        }
        assert_eq!(lab.cluster.nodes.len(), 7);
        // `load` and `reset` replace the lab; the index comes with it.
        let dir = std::env::temp_dir().join(format!("node-index-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("lab.json");
        lab.execute(&format!("save {}", file.display())).unwrap();
        let mut other = Lab::with_edges(Lab::empty, crate::edge::tests::disk());
        other.execute(&format!("load {}", file.display())).unwrap();
        check(&other);
        assert_eq!(other.node_index, lab.node_index);
        std::fs::remove_dir_all(&dir).unwrap();
        lab.execute("reset").unwrap();
        check(&lab);
        assert_eq!(lab.cluster.nodes.len(), 2);
    }

    #[test]
    fn defaults_fill_the_lowest_free_index_and_stop_at_254() {
        let mut lab = Lab::empty();
        lab.execute("node add a --cidr 10.244.1.0/24 --ip 10.0.0.1")
            .unwrap();
        lab.execute("node add b --cidr 10.9.0.0/24 --ip 192.168.0.2")
            .unwrap();
        // 1 and 2 are taken (one by podCIDR, one by InternalIP): the next default is 3.
        let out = lab.execute("node add c").unwrap().to_text();
        assert!(
            out.contains("podCIDR 10.244.3.0/24 · InternalIP 192.168.0.3"),
            "{out}"
        );
        for i in 4..=260 {
            let _ = lab.execute(&format!("node add n{i}"));
            check(&lab);
        }
        // Past 254 the default is 254 again, which is taken: the overlap is reported.
        let err = lab.execute("node add last").unwrap_err().message;
        assert_eq!(
            err,
            "podCIDR 10.244.254.0/24 overlaps 10.244.254.0/24 of node n254; pick a free range, e.g. --cidr 10.244.254.0/24"
        );
    }
}
