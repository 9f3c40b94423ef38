//! BIRD on every node, as confd configures it for the node-to-node mesh
//! (`confd/etc/calico/confd/templates/bird.cfg.template`, `bird_ipam.cfg.template`;
//! `calico-and-cilium.md` §A3–§A4): AS 64512 everywhere, one `Mesh_<peer IP>` BGP session
//! per other node, each node's affine blocks exported as a `blackhole` static route, and
//! the peers' blocks programmed into the kernel as `<block> via <peer> dev eth0 proto bird`.
//!
//! A node that is down answers no BGP: its peers' sessions to it leave Established and the
//! routes it advertised are withdrawn (BIRD's hold timer, 90 s in Calico's template, is
//! not waited for: the lab withdraws on the next pass).

use super::{AS_NUMBER, CalicoNode};
use crate::cni::host::{Host, PeerEntries, PeerEntry, RouteDst, RouteEntry, RouteProto};
use ipnet::Ipv4Net;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// The `proto` of the routes BIRD installs.
pub(crate) const PROTO: RouteProto = RouteProto::Bird;

/// One node of the mesh as its BIRD sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MeshNode {
    ip: Option<Ipv4Addr>,
    up: bool,
    /// When the node last came up or went down (the lab's clock, seconds).
    since: u64,
    /// Its affine blocks and when each was first exported.
    blocks: BTreeMap<Ipv4Net, u64>,
}

/// The node-to-node mesh.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mesh {
    nodes: BTreeMap<String, MeshNode>,
}

/// `Mesh_10_0_0_12`: the protocol name of the session to a peer.
pub(crate) fn protocol_name(ip: Ipv4Addr) -> String {
    format!("Mesh_{}", ip.to_string().replace('.', "_"))
}

/// The lab's clock as BIRD's `since` column (`HH:MM:SS`, from midnight).
fn clock_text(t: u64) -> String {
    format!("{:02}:{:02}:{:02}", (t / 3600) % 24, (t / 60) % 60, t % 60)
}

impl Mesh {
    /// Take in the nodes and their blocks as the datastore holds them now.
    pub fn update(
        &mut self,
        nodes: &[CalicoNode<'_>],
        blocks: &BTreeMap<String, Vec<Ipv4Net>>,
        clock: u64,
    ) {
        self.nodes.retain(|k, _| nodes.iter().any(|n| n.name == k));
        for n in nodes {
            let entry = self.nodes.entry(n.name.to_string()).or_insert(MeshNode {
                ip: n.ip,
                up: n.up,
                since: clock,
                blocks: BTreeMap::new(),
            });
            if entry.up != n.up || entry.ip != n.ip {
                entry.since = clock;
            }
            entry.up = n.up;
            entry.ip = n.ip;
            let mine = blocks.get(n.name).cloned().unwrap_or_default();
            entry.blocks.retain(|b, _| mine.contains(b));
            for b in mine {
                entry.blocks.entry(b).or_insert(clock);
            }
        }
    }

    /// The routes each node learned from its peers: every block of every node that is up,
    /// via that node's address (a node skips its own; see [`PeerEntries`]).
    pub(crate) fn learned_routes(&self) -> PeerEntries {
        let mut peers = Vec::new();
        for (name, n) in &self.nodes {
            let (true, Some(ip)) = (n.up, n.ip) else {
                continue;
            };
            for b in n.blocks.keys() {
                let mut route =
                    RouteEntry::static_route(RouteDst::Net((*b).into()), Some(ip.into()), "eth0");
                route.set_proto(Some(PROTO));
                peers.push(Arc::new(PeerEntry {
                    owner: name.clone(),
                    route,
                    neigh: None,
                    fdb: None,
                }));
            }
        }
        PeerEntries::new(peers)
    }

    /// A node's own blocks as BIRD's static protocol installs them: `blackhole <block>
    /// proto bird` (the pods' /32 routes are longer and win; an address of the block that
    /// no pod holds is discarded here instead of bouncing back to the network).
    pub(crate) fn program_own(&self, host: &mut Host, node: &str) {
        host.root
            .routes
            .retain(|r| !(r.blackhole && r.proto() == Some(PROTO)));
        if let Some(n) = self.nodes.get(node) {
            for b in n.blocks.keys() {
                host.root
                    .routes
                    .push(RouteEntry::blackhole(RouteDst::Net((*b).into()), PROTO));
            }
        }
    }

    /// What `calicoctl node status` and `birdcl show route` on `node` report, as data: the
    /// peers and their state, the routes BIRD holds and the blocks the node exports.
    pub fn view(&self, node: &str, host: Option<&Host>) -> Result<BgpView, String> {
        let Some(me) = self.nodes.get(node) else {
            return Err(format!("calico-node does not run on {node}"));
        };
        let mut view = BgpView {
            running: me.up,
            next_hop: me.ip,
            ..BgpView::default()
        };
        if !me.up {
            return Ok(view);
        }
        for (name, peer) in &self.nodes {
            let Some(ip) = peer.ip else { continue };
            if name == node {
                continue;
            }
            view.peers.push(BgpPeer {
                addr: ip,
                up: peer.up,
                since: peer.since.max(me.since),
            });
        }
        for (b, t) in &me.blocks {
            view.routes.push(BgpRoute {
                block: *b,
                next_hop: NextHop::Blackhole,
                since: *t,
            });
        }
        for (name, peer) in &self.nodes {
            let (true, Some(ip)) = (peer.up && name != node, peer.ip) else {
                continue;
            };
            // A route whose next hop is not on the segment is unreachable for the kernel.
            let reachable = host.is_none_or(|h| {
                h.accepts_route(&RouteEntry::static_route(
                    RouteDst::Default { v6: false },
                    Some(ip.into()),
                    "eth0",
                ))
            });
            for (b, t) in &peer.blocks {
                view.routes.push(BgpRoute {
                    block: *b,
                    next_hop: if reachable {
                        NextHop::Via(ip)
                    } else {
                        NextHop::Unreachable(ip)
                    },
                    since: (*t).max(peer.since).max(me.since),
                });
            }
        }
        view.routes.sort_by_key(|r| (r.block, r.text()));
        view.exported = me.blocks.keys().copied().collect();
        Ok(view)
    }

    /// `calicoctl node status` on `node`, then `birdcl show route`, as printed.
    pub fn status(&self, node: &str, host: Option<&Host>) -> Result<Vec<String>, String> {
        Ok(self.view(node, host)?.lines())
    }
}

/// A node's BGP as `calicoctl node status` and `birdcl show route` report it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BgpView {
    /// Whether calico-node (and its BIRD) runs on the node.
    pub running: bool,
    /// The node-to-node mesh sessions, one per other node with an address.
    pub peers: Vec<BgpPeer>,
    /// BIRD's routes: the node's own blocks and those learned from its peers, by block.
    pub routes: Vec<BgpRoute>,
    /// The blocks the node exports to every peer.
    pub exported: Vec<Ipv4Net>,
    /// The next hop it exports them with (its address).
    pub next_hop: Option<Ipv4Addr>,
}

/// One BGP session of the mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BgpPeer {
    /// The peer's address.
    pub addr: Ipv4Addr,
    /// Established (`up`), or the peer is down (`start`, connection refused).
    pub up: bool,
    /// When the session last changed (the lab's clock, seconds).
    pub since: u64,
}

/// One route BIRD holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BgpRoute {
    /// The block.
    pub block: Ipv4Net,
    /// Where it goes.
    pub next_hop: NextHop,
    /// When BIRD learned or made it (the lab's clock, seconds).
    pub since: u64,
}

/// Where a BIRD route goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextHop {
    /// The node's own block, a static blackhole.
    Blackhole,
    /// Learned from this peer, reachable on eth0.
    Via(Ipv4Addr),
    /// Learned from this peer, whose address is not on the node's segment.
    Unreachable(Ipv4Addr),
}

impl BgpRoute {
    /// The route as `birdcl show route` prints it.
    fn text(&self) -> String {
        match self.next_hop {
            NextHop::Blackhole => format!(
                "{:<18} blackhole [static1 {}] * (200)",
                self.block.to_string(),
                clock_text(self.since)
            ),
            NextHop::Via(ip) | NextHop::Unreachable(ip) => format!(
                "{:<18} {} [{} {}] * (100/0) [i]",
                self.block.to_string(),
                match self.next_hop {
                    NextHop::Via(_) => format!("via {ip} on eth0"),
                    _ => "unreachable".to_string(),
                },
                protocol_name(ip),
                clock_text(self.since)
            ),
        }
    }
}

impl BgpView {
    /// The lines `show bgp` prints: `calicoctl node status`, then `birdcl show route`.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec!["$ calicoctl node status".to_string()];
        if !self.running {
            out.push("Calico process is not running.".to_string());
            return out;
        }
        out.push("Calico process is running.".to_string());
        out.push(String::new());
        out.push("IPv4 BGP status".to_string());
        let rows: Vec<[String; 5]> = self
            .peers
            .iter()
            .map(|p| {
                let (state, info) = if p.up {
                    ("up", "Established")
                } else {
                    ("start", "Active Socket: Connection refused")
                };
                [
                    p.addr.to_string(),
                    "node-to-node mesh".into(),
                    state.into(),
                    clock_text(p.since),
                    info.into(),
                ]
            })
            .collect();
        if rows.is_empty() {
            out.push("No IPv4 peers found.".to_string());
        } else {
            out.extend(table(
                &["PEER ADDRESS", "PEER TYPE", "STATE", "SINCE", "INFO"],
                &rows,
            ));
        }
        out.push(String::new());
        out.push("IPv6 BGP status".to_string());
        out.push("No IPv6 peers found.".to_string());
        out.push(String::new());
        out.push("$ birdcl show route".to_string());
        out.extend(self.routes.iter().map(BgpRoute::text));
        out.push(String::new());
        let export: Vec<String> = self.exported.iter().map(|b| b.to_string()).collect();
        out.push(format!(
            "exported to every peer (AS {AS_NUMBER}, next hop {}): {}",
            self.next_hop.map(|i| i.to_string()).unwrap_or_default(),
            if export.is_empty() {
                "nothing yet (a block is claimed with the node's first pod)".to_string()
            } else {
                export.join(", ")
            }
        ));
        out
    }
}

/// An ASCII table as calicoctl's tablewriter draws it (≤v3.32): `+---+` rules, headers
/// centred, cells left-aligned, one space of padding.
fn table(headers: &[&str], rows: &[[String; 5]]) -> Vec<String> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.len());
        }
    }
    let rule = {
        let mut s = String::from("+");
        for w in &widths {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
        }
        s
    };
    let mut out = vec![rule.clone()];
    let mut head = String::from("|");
    for (h, w) in headers.iter().zip(&widths) {
        let left = (w - h.len()) / 2;
        let right = w - h.len() - left;
        head.push_str(&format!(" {}{h}{} |", " ".repeat(left), " ".repeat(right)));
    }
    out.push(head);
    out.push(rule.clone());
    for r in rows {
        let mut line = String::from("|");
        for (c, w) in r.iter().zip(&widths) {
            line.push_str(&format!(" {c:<w$} |"));
        }
        out.push(line);
    }
    out.push(rule);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_table_is_tablewriter_s() {
        let rows = [[
            "172.17.8.102".to_string(),
            "node-to-node mesh".into(),
            "up".into(),
            "23:30:04".into(),
            "Established".into(),
        ]];
        // calico-and-cilium.md §A4, the docs' sample.
        assert_eq!(
            table(
                &["PEER ADDRESS", "PEER TYPE", "STATE", "SINCE", "INFO"],
                &rows
            ),
            [
                "+--------------+-------------------+-------+----------+-------------+",
                "| PEER ADDRESS |     PEER TYPE     | STATE |  SINCE   |    INFO     |",
                "+--------------+-------------------+-------+----------+-------------+",
                "| 172.17.8.102 | node-to-node mesh | up    | 23:30:04 | Established |",
                "+--------------+-------------------+-------+----------+-------------+",
            ]
        );
    }

    #[test]
    fn a_node_that_goes_down_has_its_blocks_withdrawn() {
        let b1: Ipv4Net = "10.244.1.0/26".parse().unwrap();
        let b2: Ipv4Net = "10.244.2.0/26".parse().unwrap();
        let blocks = BTreeMap::from([
            ("node-1".to_string(), vec![b1]),
            ("node-2".to_string(), vec![b2]),
        ]);
        let mut nodes = vec![
            CalicoNode {
                name: "node-1",
                ip: Some(Ipv4Addr::new(192, 168, 0, 1)),
                up: true,
            },
            CalicoNode {
                name: "node-2",
                ip: Some(Ipv4Addr::new(192, 168, 0, 2)),
                up: true,
            },
        ];
        let mut m = Mesh::default();
        m.update(&nodes, &blocks, 5);
        let routes: Vec<String> = m
            .learned_routes()
            .entries()
            .iter()
            .map(|p| p.route.to_ip_route())
            .collect();
        assert_eq!(
            routes,
            [
                "10.244.1.0/26 via 192.168.0.1 dev eth0 proto bird",
                "10.244.2.0/26 via 192.168.0.2 dev eth0 proto bird"
            ]
        );
        nodes[1].up = false;
        m.update(&nodes, &blocks, 9);
        assert_eq!(m.learned_routes().entries().len(), 1);
        let status = m.status("node-1", None).unwrap().join("\n");
        assert!(
            status.contains("| 192.168.0.2  | node-to-node mesh | start | 00:00:09 |"),
            "{status}"
        );
    }
}
