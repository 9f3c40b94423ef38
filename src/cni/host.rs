//! A node as CNI plugins see it: the host network namespace (links, addresses, routes),
//! the sandbox namespaces the runtime created, iptables' nat table, tc qdiscs, sysctls, and
//! the files host-local keeps under `/var/lib/cni/networks`.
//!
//! This is the "kernel and disk" the stateless plugins act on. Everything is ordered
//! (BTreeMap) so that views are deterministic.

use super::ipam_store::IpamStore;
use super::links::Links;
use std::collections::BTreeMap;

/// The kind of a network link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkKind {
    /// `lo`.
    Loopback,
    /// A Linux bridge (`cni0`).
    Bridge,
    /// One end of a veth pair; `peer` names the other end, `peer_netns` its namespace
    /// ("" for the host namespace).
    Veth {
        /// The other end's name.
        peer: String,
        /// The namespace path of the other end; empty for the host.
        peer_netns: String,
    },
    /// An ifb device (bandwidth's egress shaping).
    Ifb,
    /// The node's uplink (`eth0` of the node, carrying the InternalIP).
    Physical,
    /// A VXLAN device (`ip link add flannel.1 type vxlan id 1 local IP dev eth0 nolearning`):
    /// it encapsulates what it sends in UDP to the VTEP its FDB names.
    Vxlan {
        /// The VXLAN network identifier (`id`).
        vni: u32,
        /// The outer source address (`local`).
        local: String,
        /// The underlay device (`dev`).
        dev: String,
        /// The UDP destination port (`dstport`; the kernel's default is 8472).
        port: u16,
        /// Whether the device learns remote MACs (`nolearning` when false).
        learning: bool,
    },
}

/// A network interface in some namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Interface name.
    pub name: String,
    /// What it is.
    pub kind: LinkKind,
    /// Hardware address, `aa:bb:cc:dd:ee:ff`.
    pub mac: String,
    /// MTU.
    pub mtu: u32,
    /// The bridge it is enslaved to.
    pub master: Option<String>,
    /// Addresses in CIDR form (`10.244.1.1/24`).
    pub addrs: Vec<String>,
    /// Administratively up.
    pub up: bool,
    /// Hairpin mode on a bridge port.
    pub hairpin: bool,
    /// Promiscuous mode.
    pub promisc: bool,
}

impl Link {
    /// A link of a kind, down, with no addresses.
    pub fn new(name: &str, kind: LinkKind, mac: String, mtu: u32) -> Self {
        Link {
            name: name.to_string(),
            kind,
            mac,
            mtu,
            master: None,
            addrs: Vec::new(),
            up: false,
            hairpin: false,
            promisc: false,
        }
    }
}

/// One route in a routing table, kept in the fields `ip route` prints.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RouteEntry {
    /// Destination (`default` or a CIDR).
    pub dst: String,
    /// Next hop, if any.
    pub via: Option<String>,
    /// Output device.
    pub dev: String,
    /// `proto kernel` for connected routes.
    pub proto_kernel: bool,
    /// `scope link` for on-link routes.
    pub scope_link: bool,
    /// Preferred source address.
    pub src: Option<String>,
    /// `onlink`: the next hop is on the device even though no address covers it (flannel's
    /// VXLAN routes via `<peer subnet>.0 dev flannel.1`).
    pub onlink: bool,
}

impl RouteEntry {
    /// A route to `dst` via `via` (if any) on `dev`, added by a program (no proto/scope).
    pub fn static_route(dst: &str, via: Option<&str>, dev: &str) -> Self {
        RouteEntry {
            dst: dst.to_string(),
            via: via.map(str::to_string),
            dev: dev.to_string(),
            proto_kernel: false,
            scope_link: false,
            src: None,
            onlink: false,
        }
    }

    /// The destination as a network (`default` is 0.0.0.0/0).
    pub fn dst_net(&self) -> Option<ipnet::IpNet> {
        if self.dst == "default" {
            return "0.0.0.0/0".parse().ok();
        }
        self.dst.parse().ok()
    }

    /// The line as `ip route` prints it.
    pub fn to_ip_route(&self) -> String {
        let mut s = self.dst.clone();
        if let Some(via) = &self.via {
            s.push_str(" via ");
            s.push_str(via);
        }
        s.push_str(" dev ");
        s.push_str(&self.dev);
        if self.proto_kernel {
            s.push_str(" proto kernel");
        }
        if self.scope_link {
            s.push_str(" scope link");
        }
        if let Some(src) = &self.src {
            s.push_str(" src ");
            s.push_str(src);
        }
        if self.onlink {
            s.push_str(" onlink");
        }
        s
    }
}

/// One entry of a neighbour (ARP) table, as `ip neigh` prints it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Neigh {
    /// The neighbour's address.
    pub ip: String,
    /// The device it is reached on.
    pub dev: String,
    /// Its hardware address.
    pub lladdr: String,
    /// `PERMANENT` for entries a program added (flannel), `REACHABLE` for learned ones.
    pub state: String,
}

impl Neigh {
    /// The line as `ip neigh show` prints it (`10.244.2.0 dev flannel.1 lladdr … PERMANENT`).
    pub fn to_ip_neigh(&self) -> String {
        format!(
            "{} dev {} lladdr {} {}",
            self.ip, self.dev, self.lladdr, self.state
        )
    }
}

/// One bridge forwarding database entry, as `bridge fdb show` prints it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FdbEntry {
    /// The MAC address.
    pub mac: String,
    /// The device (a VXLAN device or a bridge port).
    pub dev: String,
    /// For a VXLAN device: the remote VTEP's underlay address.
    pub dst: Option<String>,
    /// The flags as printed (`self permanent`).
    pub flags: String,
}

impl FdbEntry {
    /// The line as `bridge fdb show` prints it.
    pub fn to_bridge_fdb(&self) -> String {
        let mut s = format!("{} dev {}", self.mac, self.dev);
        if let Some(d) = &self.dst {
            s.push_str(" dst ");
            s.push_str(d);
        }
        s.push(' ');
        s.push_str(&self.flags);
        s
    }
}

/// What a network daemon (flanneld) programmed on every node for the other nodes' leases:
/// one route per peer, and for VXLAN a permanent neighbour and an FDB entry per peer. Every
/// node's daemon programs the same entries from the same leases, less its own, so the nodes
/// share one copy ([`Host::peers`]) and each reads it without the entries `owner`-ed by
/// itself (a /24 per node on 1,000 nodes would otherwise be a million routes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeerEntries {
    /// Per peer node, in node order: its route, and for VXLAN its neighbour and FDB entry.
    pub peers: Vec<std::sync::Arc<PeerEntry>>,
}

/// The kernel entries a daemon programmed for one peer node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerEntry {
    /// The peer node whose lease this is.
    pub owner: String,
    /// The route to its pod subnet.
    pub route: RouteEntry,
    /// VXLAN: the permanent neighbour for its VTEP address.
    pub neigh: Option<Neigh>,
    /// VXLAN: the FDB entry sending its VTEP MAC to its underlay address.
    pub fdb: Option<FdbEntry>,
}

/// A network namespace: its links and its main routing table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Netns {
    /// Links by name.
    pub links: Links,
    /// Routes added explicitly (connected routes are derived from addresses).
    pub routes: Vec<RouteEntry>,
}

impl Netns {
    /// A namespace holding only a down `lo`, as `ip netns add` makes it.
    pub fn with_loopback() -> Self {
        let mut ns = Netns::default();
        let lo = Link::new("lo", LinkKind::Loopback, "00:00:00:00:00:00".into(), 65536);
        ns.links.insert("lo".into(), lo);
        ns
    }

    /// The routing table as `ip route` shows it: connected routes of up links first
    /// (derived from their addresses), then explicit routes, default first.
    pub fn route_table(&self) -> Vec<RouteEntry> {
        let mut table: Vec<RouteEntry> = Vec::new();
        for r in &self.routes {
            if r.dst == "default" {
                table.push(r.clone());
            }
        }
        let mut rest: Vec<RouteEntry> = Vec::new();
        for link in self.links.values() {
            if !link.up || link.kind == LinkKind::Loopback {
                continue;
            }
            for addr in &link.addrs {
                if let Ok(net) = addr.parse::<ipnet::IpNet>() {
                    // An IPv4 /32 gets only a local route (table local), no prefix route.
                    if net.addr().is_ipv6() || net.prefix_len() == 32 {
                        continue;
                    }
                    rest.push(RouteEntry {
                        dst: net.trunc().to_string(),
                        via: None,
                        dev: link.name.clone(),
                        proto_kernel: true,
                        scope_link: true,
                        src: Some(net.addr().to_string()),
                        onlink: false,
                    });
                }
            }
        }
        for r in &self.routes {
            if r.dst != "default" {
                rest.push(r.clone());
            }
        }
        rest.sort_by_key(|r| route_sort_key(&r.dst));
        table.extend(rest);
        table
    }
}

/// `ip route`'s order: by destination address; for one address the longer prefix first
/// (the kernel's FIB trie lists a leaf's aliases that way; checked with `ip route` on 6.x).
fn route_sort_key(dst: &str) -> (u128, u8) {
    match dst.parse::<ipnet::IpNet>() {
        Ok(ipnet::IpNet::V4(n)) => (u32::from(n.network()) as u128, 128 - n.prefix_len()),
        Ok(ipnet::IpNet::V6(n)) => (u128::from(n.network()), 128 - n.prefix_len()),
        Err(_) => (u128::MAX, 0),
    }
}

/// One iptables rule in a chain, in `iptables -S` form without the `-A CHAIN` prefix.
pub type Rule = String;

/// The nat table: chains by name, each with its rules in order.
#[derive(Debug, Clone, Default)]
pub struct NatTable {
    /// Chains by name; built-in chains are created on first use.
    chains: BTreeMap<String, Vec<Rule>>,
    /// For each chain some rule jumps to: the chains holding such rules, with how many.
    /// Deleting a chain then visits only those, instead of every rule of the table (which
    /// grows with the pods): usually none, since bridge and portmap delete their jump
    /// rules before the chain.
    referrers: BTreeMap<String, BTreeMap<String, usize>>,
}

/// Targets that are never user chains: not worth an index entry.
const STANDARD_TARGETS: [&str; 9] = [
    "ACCEPT",
    "DROP",
    "RETURN",
    "REJECT",
    "MASQUERADE",
    "DNAT",
    "SNAT",
    "MARK",
    "LOG",
];

/// The chains a rule jumps to, each once: every word that follows a `-j ` (ends at a space
/// or the end). A rule jumps to chain `C` exactly when it ends with `-j C` or contains
/// `-j C `, which is how [`NatTable::delete_chain`] finds jumps.
fn jump_targets(rule: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (i, _) in rule.match_indices("-j ") {
        let word = rule[i + 3..].split(' ').next().unwrap_or_default();
        if !word.is_empty() && !STANDARD_TARGETS.contains(&word) && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

impl PartialEq for NatTable {
    fn eq(&self, other: &Self) -> bool {
        self.chains == other.chains
    }
}

impl Eq for NatTable {}

impl NatTable {
    /// The chains by name, each with its rules in order.
    pub fn chains(&self) -> &BTreeMap<String, Vec<Rule>> {
        &self.chains
    }

    /// Ensure a chain exists.
    pub fn ensure_chain(&mut self, chain: &str) {
        if !self.chains.contains_key(chain) {
            self.chains.insert(chain.to_string(), Vec::new());
        }
    }

    /// Count `rule` (in `chain`) in or out of the jump index.
    fn index_rule(&mut self, chain: &str, rule: &str, added: bool) {
        for target in jump_targets(rule) {
            if added {
                let from = self.referrers.entry(target.to_string()).or_default();
                match from.get_mut(chain) {
                    Some(n) => *n += 1,
                    None => {
                        from.insert(chain.to_string(), 1);
                    }
                }
            } else if let Some(from) = self.referrers.get_mut(target) {
                if let Some(n) = from.get_mut(chain) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        from.remove(chain);
                    }
                }
                if from.is_empty() {
                    self.referrers.remove(target);
                }
            }
        }
    }

    /// Append a rule unless already present (`iptables -C` then `-A`).
    pub fn append_unique(&mut self, chain: &str, rule: Rule) {
        self.ensure_chain(chain);
        if self.chains.get(chain).is_some_and(|r| r.contains(&rule)) {
            return;
        }
        self.index_rule(chain, &rule, true);
        if let Some(rules) = self.chains.get_mut(chain) {
            rules.push(rule);
        }
    }

    /// Insert a rule at the top unless already present (`-I`).
    pub fn prepend_unique(&mut self, chain: &str, rule: Rule) {
        self.ensure_chain(chain);
        if self.chains.get(chain).is_some_and(|r| r.contains(&rule)) {
            return;
        }
        self.index_rule(chain, &rule, true);
        if let Some(rules) = self.chains.get_mut(chain) {
            rules.insert(0, rule);
        }
    }

    /// Delete every rule in `chain` that equals `rule`.
    pub fn delete_rule(&mut self, chain: &str, rule: &str) {
        let Some(rules) = self.chains.get_mut(chain) else {
            return;
        };
        let before = rules.len();
        rules.retain(|r| r != rule);
        for _ in rules.len()..before {
            self.index_rule(chain, rule, false);
        }
    }

    /// Flush and delete a chain, and every rule jumping to it.
    pub fn delete_chain(&mut self, chain: &str) {
        if let Some(rules) = self.chains.remove(chain) {
            for rule in &rules {
                self.index_rule(chain, rule, false);
            }
        }
        let Some(from) = self.referrers.get(chain) else {
            return;
        };
        let from: Vec<String> = from.keys().cloned().collect();
        let jump = format!("-j {chain}");
        let jump_then_more = format!("{jump} ");
        for name in from {
            let Some(rules) = self.chains.get_mut(&name) else {
                continue;
            };
            let mut removed = Vec::new();
            rules.retain(|r| {
                let keep = !r.ends_with(&jump) && !r.contains(&jump_then_more);
                if !keep {
                    removed.push(r.clone());
                }
                keep
            });
            for r in removed {
                self.index_rule(&name, &r, false);
            }
        }
    }

    /// The table as `iptables -t nat -S` prints it.
    pub fn to_lines(&self) -> Vec<String> {
        // `iptables -S` prints the built-in chains' policies first (in hook order), then the
        // user chains (sorted, as libiptc keeps them), then the rules chain by chain in the
        // same order.
        const BUILTIN: [&str; 4] = ["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"];
        let mut out: Vec<String> = BUILTIN.iter().map(|c| format!("-P {c} ACCEPT")).collect();
        let user: Vec<&String> = self
            .chains
            .keys()
            .filter(|c| !BUILTIN.contains(&c.as_str()))
            .collect();
        for name in &user {
            out.push(format!("-N {name}"));
        }
        let order = BUILTIN
            .iter()
            .copied()
            .chain(user.iter().map(|s| s.as_str()));
        for name in order {
            for r in self.chains.get(name).into_iter().flatten() {
                out.push(format!("-A {name} {r}"));
            }
        }
        out
    }
}

/// A tc qdisc on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qdisc {
    /// The device.
    pub dev: String,
    /// `tbf` or `ingress`.
    pub kind: String,
    /// Parameters as `tc qdisc show` prints them.
    pub params: String,
}

impl Qdisc {
    /// The line `tc qdisc show` prints, e.g. `qdisc tbf 1: dev veth1 root refcnt 3 rate
    /// 1Mbit burst 250000b lat 25ms`. The handle follows the kind: `ffff:` for `ingress`,
    /// `1:` otherwise (what the bandwidth plugin creates).
    pub fn to_tc_line(&self) -> String {
        let handle = if self.kind == "ingress" {
            "ffff:"
        } else {
            "1:"
        };
        format!(
            "qdisc {} {handle} dev {} {} ",
            self.kind, self.dev, self.params
        )
    }
}

/// One node's kernel and disk as the CNI plugins see them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Host {
    /// The node's name.
    pub node: String,
    /// The host network namespace.
    pub root: Netns,
    /// Sandbox namespaces by path (`/var/run/netns/cni-…`).
    pub netns: BTreeMap<String, Netns>,
    /// iptables nat table.
    pub nat: NatTable,
    /// tc qdiscs.
    pub qdiscs: Vec<Qdisc>,
    /// sysctls that plugins set (`net.ipv4.ip_forward` …).
    pub sysctls: BTreeMap<String, String>,
    /// host-local's data directories by network name (`/var/lib/cni/networks/<net>`).
    pub ipam: BTreeMap<String, IpamStore>,
    /// Routes, neighbours and FDB entries the node's network daemon programmed for the other
    /// nodes (shared between nodes: see [`PeerEntries`]; entries owned by this node skipped).
    pub peers: std::sync::Arc<PeerEntries>,
    /// Files daemons wrote on the node (`/run/flannel/subnet.env`), by path.
    pub files: BTreeMap<String, String>,
}

impl Host {
    /// A node whose host namespace has `lo` and an uplink `eth0` with the InternalIP.
    pub fn new(node: &str, internal_ip: &str, mac: String) -> Self {
        let mut root = Netns::with_loopback();
        if let Some(lo) = root.links.get_mut("lo") {
            lo.up = true;
        }
        let mut eth0 = Link::new("eth0", LinkKind::Physical, mac, 1500);
        eth0.up = true;
        if !internal_ip.is_empty() {
            eth0.addrs.push(format!("{internal_ip}/24"));
        }
        root.links.insert("eth0".into(), eth0);
        Host {
            node: node.to_string(),
            root,
            ..Default::default()
        }
    }

    /// The peer entries this node's kernel holds: every one not owned by the node itself,
    /// less the routes the kernel refuses here: a gateway that no connected route of the
    /// device covers, without `onlink` (`Error: Nexthop has invalid gateway.`, ENETUNREACH;
    /// host-gw peers on another segment). The node's addresses do not change once made, so
    /// deciding this when reading is deciding it when the route was added.
    pub fn peer_entries(&self) -> impl Iterator<Item = &PeerEntry> {
        self.peers
            .peers
            .iter()
            .map(|p| p.as_ref())
            .filter(|p| p.owner != self.node && self.accepts_route(&p.route))
    }

    /// Would the kernel take this route on the host (its gateway on-link)?
    pub fn accepts_route(&self, route: &RouteEntry) -> bool {
        let Some(via) = route.via.as_deref() else {
            return true;
        };
        if route.onlink {
            return self.root.links.contains_key(&route.dev);
        }
        let Ok(gw) = via.parse::<std::net::IpAddr>() else {
            return false;
        };
        self.root.links.get(&route.dev).is_some_and(|l| {
            l.up && l
                .addrs
                .iter()
                .filter_map(|a| a.parse::<ipnet::IpNet>().ok())
                .any(|n| n.trunc().contains(&gw))
        })
    }

    /// The host's main routing table as `ip route` shows it: the namespace's own routes
    /// and the daemon's peer routes, default first, then by destination.
    pub fn route_table(&self) -> Vec<RouteEntry> {
        let mut table = self.root.route_table();
        if self.peers.peers.is_empty() {
            return table;
        }
        table.extend(self.peer_entries().map(|p| p.route.clone()));
        table.sort_by_key(|r| (r.dst != "default", route_sort_key(&r.dst)));
        table
    }

    /// The host's neighbour table (`ip neigh show`): the daemon's permanent entries.
    pub fn neighbours(&self) -> Vec<Neigh> {
        self.peer_entries()
            .filter_map(|p| p.neigh.clone())
            .collect()
    }

    /// The host's FDB entries on non-bridge devices (`bridge fdb show`, VXLAN part).
    pub fn fdb_entries(&self) -> Vec<FdbEntry> {
        self.peer_entries().filter_map(|p| p.fdb.clone()).collect()
    }

    /// The namespace at a path, host (`""`) included.
    pub fn ns(&self, path: &str) -> Option<&Netns> {
        if path.is_empty() {
            Some(&self.root)
        } else {
            self.netns.get(path)
        }
    }

    /// The namespace at a path, mutably.
    pub fn ns_mut(&mut self, path: &str) -> Option<&mut Netns> {
        if path.is_empty() {
            Some(&mut self.root)
        } else {
            self.netns.get_mut(path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jump index must find every rule jumping to a deleted chain, wherever it is, and
    /// forget the deleted chain's own jumps (or churn would grow it without bound).
    #[test]
    fn delete_chain_removes_every_jump_and_leaves_no_index_behind() {
        let mut nat = NatTable::default();
        for i in 0..50 {
            let chain = format!("CNI-{i:04}");
            nat.ensure_chain(&chain);
            nat.append_unique(&chain, "-d 10.0.0.0/24 -j ACCEPT".into());
            nat.append_unique(&chain, format!("-j CNI-SHARED --mark {i}"));
            nat.append_unique("POSTROUTING", format!("-s 10.0.0.{i}/32 -j {chain}"));
            nat.prepend_unique(
                "PREROUTING",
                format!("-m comment --comment x{i} -j {chain}"),
            );
        }
        nat.ensure_chain("CNI-SHARED");
        for i in 0..50 {
            nat.delete_chain(&format!("CNI-{i:04}"));
        }
        let mut expected = NatTable::default();
        expected.ensure_chain("POSTROUTING");
        expected.ensure_chain("PREROUTING");
        expected.ensure_chain("CNI-SHARED");
        assert_eq!(nat, expected);
        assert_eq!(nat.to_lines(), expected.to_lines());
        assert!(
            nat.referrers.is_empty(),
            "index left behind: {:?}",
            nat.referrers
        );
        // A jump with options after the target is found too, and only the named chain's.
        nat.append_unique("OUTPUT", "-p tcp -j CNI-HOSTPORT-DNAT --dport 80".into());
        nat.append_unique("OUTPUT", "-p tcp -j CNI-HOSTPORT-DNATX".into());
        nat.ensure_chain("CNI-HOSTPORT-DNAT");
        nat.delete_chain("CNI-HOSTPORT-DNAT");
        assert_eq!(
            nat.chains()["OUTPUT"],
            vec!["-p tcp -j CNI-HOSTPORT-DNATX".to_string()]
        );
    }

    /// The table before the jump index: every rule of every chain is looked at.
    #[derive(Default)]
    struct Naive(BTreeMap<String, Vec<String>>);

    impl Naive {
        fn append(&mut self, c: &str, r: &str) {
            let rules = self.0.entry(c.into()).or_default();
            if !rules.iter().any(|x| x == r) {
                rules.push(r.into());
            }
        }
        fn prepend(&mut self, c: &str, r: &str) {
            let rules = self.0.entry(c.into()).or_default();
            if !rules.iter().any(|x| x == r) {
                rules.insert(0, r.into());
            }
        }
        fn delete_rule(&mut self, c: &str, r: &str) {
            if let Some(rules) = self.0.get_mut(c) {
                rules.retain(|x| x != r);
            }
        }
        fn delete_chain(&mut self, c: &str) {
            self.0.remove(c);
            let (jump, more) = (format!("-j {c}"), format!("-j {c} "));
            for rules in self.0.values_mut() {
                rules.retain(|x| !x.ends_with(&jump) && !x.contains(&more));
            }
        }
    }

    /// 20,000 random operations on a few chains: the indexed table always equals the naive
    /// one, so the index never misses a jump.
    #[test]
    fn indexed_table_matches_the_naive_one_under_random_operations() {
        let chains = ["POSTROUTING", "OUTPUT", "CNI-A", "CNI-B", "CNI-DN-C", "X"];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut nat, mut naive) = (NatTable::default(), Naive::default());
        for step in 0..20_000 {
            let c = chains[next(chains.len())];
            let t = chains[next(chains.len())];
            let rule = match next(5) {
                0 => format!("-s 10.0.0.{}/32 -j {t}", next(3)),
                1 => format!("-p tcp -j {t} --to-destination 10.0.0.{}:80", next(3)),
                2 => format!("-m comment --comment \"x -j {t}\" -j ACCEPT"),
                3 => format!("-j {t}X"),
                _ => "-d 10.0.0.0/8 -j MASQUERADE".to_string(),
            };
            match next(5) {
                0 | 1 => {
                    nat.append_unique(c, rule.clone());
                    naive.append(c, &rule);
                }
                2 => {
                    nat.prepend_unique(c, rule.clone());
                    naive.prepend(c, &rule);
                }
                3 => {
                    nat.delete_rule(c, &rule);
                    naive.delete_rule(c, &rule);
                }
                _ => {
                    nat.delete_chain(t);
                    naive.delete_chain(t);
                }
            }
            assert_eq!(nat.chains(), &naive.0, "after step {step}");
        }
    }
}
