//! A node as CNI plugins see it: the host network namespace (links, addresses, routes),
//! the sandbox namespaces the runtime created, netfilter (iptables and ip6tables, nat and
//! filter: [`super::netfilter`]), tc qdiscs, sysctls, and
//! the files host-local keeps under `/var/lib/cni/networks`.
//!
//! This is the "kernel and disk" the stateless plugins act on. Everything is ordered
//! (BTreeMap) so that views are deterministic.

use super::ipam_store::IpamStore;
use super::links::Links;
use super::netfilter::Netfilter;
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
}

impl RouteEntry {
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
        s
    }
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
                    if net.addr().is_ipv6() {
                        continue;
                    }
                    rest.push(RouteEntry {
                        dst: net.trunc().to_string(),
                        via: None,
                        dev: link.name.clone(),
                        proto_kernel: true,
                        scope_link: true,
                        src: Some(net.addr().to_string()),
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

fn route_sort_key(dst: &str) -> (u128, u8) {
    match dst.parse::<ipnet::IpNet>() {
        Ok(ipnet::IpNet::V4(n)) => (u32::from(n.network()) as u128, n.prefix_len()),
        Ok(ipnet::IpNet::V6(n)) => (u128::from(n.network()), n.prefix_len()),
        Err(_) => (u128::MAX, 0),
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
    /// iptables and ip6tables: the nat and filter tables of each family.
    pub netfilter: Netfilter,
    /// tc qdiscs.
    pub qdiscs: Vec<Qdisc>,
    /// sysctls that plugins set (`net.ipv4.ip_forward` …).
    pub sysctls: BTreeMap<String, String>,
    /// host-local's data directories by network name (`/var/lib/cni/networks/<net>`).
    pub ipam: BTreeMap<String, IpamStore>,
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
