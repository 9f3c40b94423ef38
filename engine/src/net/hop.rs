//! What a trace's hop consulted and carried, as typed facts: where the packet is, the packet
//! as it is there (after any NAT, inside its VXLAN datagram), and the table entry that
//! decided (the route, the netfilter rule, the BPF policy entry, the neighbour and FDB
//! entries). A stepping view reads these; text is made only when shown ([`PacketAt::lines`],
//! [`Entry::lines`]).

use super::policy::Protocol;
use crate::cni::host::RouteEntry;
use crate::cni::netfilter::TableKind;
use std::net::IpAddr;

/// Where a hop is: in a pod's network namespace or a node's host namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A pod's namespace.
    Pod {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The node it runs on.
        node: String,
    },
    /// A node's host network namespace.
    Node(String),
}

impl Place {
    /// The node the hop is on.
    pub fn node(&self) -> &str {
        match self {
            Place::Pod { node, .. } | Place::Node(node) => node,
        }
    }

    /// `node-1`, or `default/web`.
    pub fn text(&self) -> String {
        match self {
            Place::Pod {
                namespace, name, ..
            } => format!("{namespace}/{name}"),
            Place::Node(node) => node.clone(),
        }
    }
}

/// The outer headers of a packet travelling inside a VXLAN datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outer {
    /// The sending VTEP's address.
    pub src: IpAddr,
    /// The receiving VTEP's address.
    pub dst: IpAddr,
    /// The UDP destination port (8472 for flannel and Cilium).
    pub dport: u16,
    /// The VXLAN network identifier (Cilium: the source's security identity).
    pub vni: u32,
    /// The outer datagram's size (the inner packet + 50 bytes).
    pub size: u32,
}

/// The packet as it is at one hop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketAt {
    /// The source address now.
    pub src: IpAddr,
    /// The destination address now.
    pub dst: IpAddr,
    /// The source, destination and port as the sender put them, when NAT changed any.
    pub sent: Option<(IpAddr, IpAddr, u16)>,
    /// The protocol.
    pub protocol: Protocol,
    /// The destination port (0: none).
    pub dport: u16,
    /// The IP packet's size in bytes.
    pub size: u32,
    /// The outer headers while the packet is encapsulated.
    pub outer: Option<Outer>,
    /// The MTU the packet was checked against here (a routing decision's output device).
    pub mtu: Option<u32>,
}

impl PacketAt {
    /// The packet's lines for a stepping view: addresses (before and after NAT), outer
    /// headers, size against the MTU.
    pub fn lines(&self) -> Vec<String> {
        let port = |p: u16| {
            if p == 0 {
                String::new()
            } else {
                format!(":{p}")
            }
        };
        let mut out = vec![format!(
            "packet {} → {}{} {}",
            self.src,
            self.dst,
            port(self.dport),
            self.protocol.as_str()
        )];
        if let Some((src, dst, dport)) = self.sent {
            out.push(format!(
                "  sent as {src} → {dst}{} (NAT rewrote it on the way)",
                port(dport)
            ));
        }
        if let Some(o) = &self.outer {
            out.push(format!(
                "  outer {} → {} UDP dport {}, VNI {}, {} bytes",
                o.src, o.dst, o.dport, o.vni, o.size
            ));
        }
        out.push(match self.mtu {
            Some(mtu) if self.size <= mtu => format!("  {} bytes, fits mtu {mtu}", self.size),
            Some(mtu) => format!("  {} bytes, does not fit mtu {mtu}", self.size),
            None => format!("  {} bytes", self.size),
        });
        out
    }
}

/// The table entry a hop consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The route that matched (longest prefix).
    Route(RouteEntry),
    /// The netfilter rule that decided (or the last one that matched), numbered as
    /// `iptables -L --line-numbers` counts in its chain.
    Rule {
        /// The table.
        table: TableKind,
        /// The chain holding the rule.
        chain: String,
        /// Its 1-based position in the chain.
        number: usize,
        /// The rule as `iptables -S` prints it (`-A CHAIN …`).
        rule: String,
    },
    /// A BPF policy-map lookup (Cilium's `cilium_policy_<id>`).
    Bpf {
        /// The map.
        map: String,
        /// The entry that answered.
        detail: String,
        /// Whether it allowed the packet.
        allowed: bool,
    },
    /// The VXLAN device's neighbour entry for the next hop and the FDB entry for its MAC.
    Vxlan {
        /// The next hop's address (the peer's tunnel address).
        neighbour: IpAddr,
        /// Its MAC (the peer VTEP's).
        lladdr: String,
        /// The FDB entry's dst: the peer VTEP's underlay address.
        fdb_dst: IpAddr,
    },
}

impl Entry {
    /// The entry's lines for a stepping view.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Entry::Route(r) => vec![format!("route {}", r.to_ip_route())],
            Entry::Rule {
                table,
                chain,
                number,
                rule,
            } => vec![format!("rule {table} {chain} #{number}: {rule}")],
            Entry::Bpf {
                map,
                detail,
                allowed,
            } => {
                let word = if *allowed { "allow" } else { "deny" };
                vec![format!("policy map {map}: {word} ({detail})")]
            }
            Entry::Vxlan {
                neighbour,
                lladdr,
                fdb_dst,
            } => vec![
                format!("neighbour {neighbour} lladdr {lladdr}"),
                format!("fdb {lladdr} dst {fdb_dst}"),
            ],
        }
    }
}
