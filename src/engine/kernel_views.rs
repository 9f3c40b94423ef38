//! The node's kernel in the real tools' words: `show links` (`ip -d addr`), `show neigh`
//! (`ip neigh`), `show fdb` (`bridge fdb`), `show ipset` (`ipset save`), and `network
//! show|use`: every line renders the state the plugins and the network daemon wrote on the
//! node.

use super::{Lab, LabError};
use crate::cni::host::{Link, LinkKind, Netns};
use crate::command::grammar::NetworkCmd;
use crate::netd::Backend;
use crate::render::{Line, Outcome, Role};

impl Lab {
    fn kernel_node(&self, node: &str) -> Result<&crate::node::NodeRuntime, LabError> {
        self.nodes.get(node).ok_or_else(|| {
            LabError::msg(format!(
                "node {node:?} not found; nodes are: {}",
                super::names::few(&self.nodes.keys().cloned().collect::<Vec<_>>(), "")
            ))
        })
    }

    fn header(out: &mut Outcome, who: String, cmd: &str) {
        out.line(
            Line::new()
                .push(who, Role::Name)
                .push(format!(" $ {cmd}"), Role::Dim),
        );
    }

    /// `show links NODE [--pod POD]`.
    pub fn show_links(&self, node: &str, pod: Option<&str>) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let mut out = Outcome::empty();
        let (who, ns) = match pod {
            None => (format!("{node} (host)"), &rt.host.root),
            Some(p) => {
                let (pns, pname) = match p.split_once('/') {
                    Some((a, b)) => (a.to_string(), b.to_string()),
                    None => ("default".to_string(), p.to_string()),
                };
                let key = format!("{pns}/{pname}");
                let sb = rt.sandboxes.get(&key).ok_or_else(|| {
                    LabError::msg(format!(
                        "pod {key} has no sandbox on {node} (is it on another node, or not started?)"
                    ))
                })?;
                let ns = rt.host.netns.get(&sb.netns).ok_or_else(|| {
                    LabError::msg(format!("pod {key}'s network namespace is gone"))
                })?;
                (format!("pod {key} (netns {})", sb.netns), ns)
            }
        };
        Self::header(&mut out, who, "ip -d addr");
        for l in link_lines(ns, &rt.host) {
            out.plain(format!("  {l}"));
        }
        Ok(out)
    }

    /// `show neigh NODE`.
    pub fn show_neigh(&self, node: &str) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let mut out = Outcome::empty();
        Self::header(&mut out, format!("{node} (host)"), "ip neigh show");
        let entries = rt.host.neighbours();
        if entries.is_empty() {
            out.line(Line::styled(
                "  (no entries: the lab keeps only the permanent ones a daemon adds, as flannel's VXLAN backend does)",
                Role::Dim,
            ));
        }
        for n in entries {
            out.plain(format!("  {}", n.to_ip_neigh()));
        }
        Ok(out)
    }

    /// `show fdb NODE`.
    pub fn show_fdb(&self, node: &str) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let mut out = Outcome::empty();
        Self::header(&mut out, format!("{node} (host)"), "bridge fdb show");
        let entries = rt.host.fdb_entries();
        if entries.is_empty() {
            out.line(Line::styled(
                "  (no VXLAN entries; bridge ports' learned MACs are not listed)",
                Role::Dim,
            ));
        }
        for f in entries {
            out.plain(format!("  {}", f.to_bridge_fdb()));
        }
        Ok(out)
    }

    /// `show ipset NODE`: the node's ipsets as `ipset save` prints them.
    pub fn show_ipset(&self, node: &str) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let mut out = Outcome::empty();
        Self::header(&mut out, format!("{node} (host)"), "ipset save");
        if rt.host.ipsets.is_empty() {
            out.line(Line::styled(
                "  (no sets: a policy agent such as Calico's Felix creates them for its rules' -m set matches)",
                Role::Dim,
            ));
        }
        for l in rt.host.ipsets.to_save_lines() {
            out.plain(format!("  {l}"));
        }
        Ok(out)
    }

    /// `network show` / `network use NAME`.
    pub fn network_cmd(&mut self, cmd: NetworkCmd) -> Result<Outcome, LabError> {
        match cmd {
            NetworkCmd::Show => Ok(self.network_card()),
            NetworkCmd::Use { name, cidr } => {
                let backend = match name.as_str() {
                    "flannel-host-gw" => Backend::HostGw,
                    "flannel-vxlan" => Backend::Vxlan,
                    other => {
                        return Err(LabError::msg(format!(
                            "unknown network {other:?}: the lab runs flannel-host-gw or flannel-vxlan"
                        )));
                    }
                };
                let network: ipnet::IpNet = match cidr.as_deref() {
                    None => self.network.network,
                    Some(c) => super::validate::cidr(c).map_err(LabError::msg)?,
                };
                let mut out = Outcome::empty();
                if self.network.backend == backend && self.network.network == network {
                    out.line(Line::styled(
                        format!("the cluster already runs {name}"),
                        Role::Dim,
                    ));
                    return Ok(out);
                }
                self.network.switch(backend, network, &mut self.nodes);
                self.run_network();
                out.line(
                    Line::new()
                        .push(format!("network {name} ({network})"), Role::Name)
                        .push(" running", Role::Good)
                        .push(
                            "  flanneld restarted on every node with the new backend; pods keep the MTU they were created with",
                            Role::Dim,
                        ),
                );
                Ok(out)
            }
        }
    }

    fn network_card(&self) -> Outcome {
        let f = &self.network;
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("network {}", f.name()), Role::Name)
                .push(
                    "  flannel v0.28 as kube-flannel.yml deploys it: flanneld --ip-masq --kube-subnet-mgr on every node",
                    Role::Dim,
                ),
        );
        let uplink = 1500;
        let rows: Vec<(&str, String)> = vec![
            (
                "backend",
                match f.backend {
                    Backend::HostGw => "host-gw: every node routes each peer's pod subnet via the peer's InternalIP (the nodes must share one L2 segment)".to_string(),
                    Backend::Vxlan => "vxlan: flannel.1 (VNI 1, local = InternalIP, dev eth0, UDP 8472, nolearning); per peer a permanent neighbour, an FDB entry and an onlink route".to_string(),
                },
            ),
            (
                "encapsulation",
                match f.backend {
                    Backend::HostGw => "none: pod packets cross the underlay as they are".to_string(),
                    Backend::Vxlan => "VXLAN in UDP: 50 bytes of outer IPv4, UDP, VXLAN and inner Ethernet headers".to_string(),
                },
            ),
            (
                "MTU",
                format!(
                    "{} (FLANNEL_MTU in /run/flannel/subnet.env; eth0 is {uplink}){}",
                    f.mtu(uplink),
                    if f.backend == Backend::Vxlan {
                        "; the lab's conflist sets no mtu, so pods get 1500: larger packets with DF do not fit flannel.1"
                    } else {
                        ""
                    }
                ),
            ),
            (
                "masquerade",
                format!(
                    "flanneld (--ip-masq: FLANNEL-POSTRTG in nat POSTROUTING) masquerades traffic leaving {}; pod-to-pod keeps its source. The lab's conflist gives bridge ipMasq false, as flannel's plugin does; a bridge with ipMasq true masquerades traffic to other nodes' pods too",
                    f.network
                ),
            ),
            (
                "NetworkPolicy",
                "enforced by the lab's policy agent at each pod's host veth (flannel enforces none; Canal pairs it with Calico's Felix)".to_string(),
            ),
            ("cluster CIDR", format!("{} (net-conf.json Network)", f.network)),
        ];
        for (k, v) in rows {
            out.plain(format!("  {k:<14} {v}"));
        }
        let mut leases: Vec<String> = Vec::new();
        for n in self.cluster.nodes.values() {
            let name = n.name();
            match (f.lease_of(name), f.problem(name)) {
                (Some(s), _) => leases.push(format!("{name} {s}")),
                (None, Some(p)) => leases.push(format!("{name} none ({p})")),
                (None, None) => leases.push(format!("{name} none")),
            }
        }
        let shown = if leases.len() > 6 {
            format!("{} … ({} nodes)", leases[..6].join(", "), leases.len())
        } else if leases.is_empty() {
            "none (no nodes)".to_string()
        } else {
            leases.join(", ")
        };
        out.plain(format!("  {:<14} {shown}", "leases"));
        if let Some((name, rt)) = self.nodes.iter().next() {
            if let Some(env) = rt.host.files.get(crate::netd::flannel::SUBNET_ENV) {
                Self::header(
                    &mut out,
                    format!("{name} (host)"),
                    &format!("cat {}", crate::netd::flannel::SUBNET_ENV),
                );
                for l in env.lines() {
                    out.plain(format!("  {l}"));
                }
            }
        }
        out
    }
}

/// `ip -d addr` for a namespace: index, name (`@peer` for a veth), flags, MTU, master,
/// state, the link line, the kind's details, and the addresses.
fn link_lines(ns: &Netns, host: &crate::cni::host::Host) -> Vec<String> {
    let links: Vec<&Link> = ns.links.values().collect();
    let mut out = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let name = match &l.kind {
            LinkKind::Veth { peer, peer_netns } => {
                let idx = host
                    .ns(peer_netns)
                    .and_then(|o| o.links.values().position(|x| &x.name == peer))
                    .map(|p| p + 1)
                    .unwrap_or(0);
                format!("{}@if{idx}", l.name)
            }
            _ => l.name.clone(),
        };
        let flags = match (&l.kind, l.up) {
            (LinkKind::Loopback, true) => "<LOOPBACK,UP,LOWER_UP>",
            (LinkKind::Loopback, false) => "<LOOPBACK>",
            (_, true) => "<BROADCAST,MULTICAST,UP,LOWER_UP>",
            (_, false) => "<BROADCAST,MULTICAST>",
        };
        let state = match (&l.kind, l.up) {
            (_, false) => "DOWN",
            (LinkKind::Loopback | LinkKind::Vxlan { .. }, true) => "UNKNOWN",
            (_, true) => "UP",
        };
        let master = l
            .master
            .as_deref()
            .map(|m| format!(" master {m}"))
            .unwrap_or_default();
        out.push(format!(
            "{}: {name}: {flags} mtu {}{master} state {state}",
            i + 1,
            l.mtu
        ));
        if l.kind == LinkKind::Loopback {
            out.push(format!("    link/loopback {} brd 00:00:00:00:00:00", l.mac));
        } else {
            out.push(format!("    link/ether {} brd ff:ff:ff:ff:ff:ff", l.mac));
        }
        match &l.kind {
            LinkKind::Veth { .. } => out.push(format!(
                "    veth{}",
                if l.hairpin { " (bridge port: hairpin on)" } else { "" }
            )),
            LinkKind::Bridge => out.push("    bridge".to_string()),
            LinkKind::Ifb => out.push("    ifb".to_string()),
            LinkKind::Vxlan {
                vni,
                local,
                dev,
                port,
                learning,
            } => out.push(format!(
                "    vxlan id {vni} local {local} dev {dev} srcport 0 0 dstport {port} {}ttl auto ageing 300",
                if *learning { "" } else { "nolearning " }
            )),
            LinkKind::Loopback | LinkKind::Physical => {}
        }
        for a in &l.addrs {
            let fam = if a.contains(':') { "inet6" } else { "inet" };
            let scope = if l.kind == LinkKind::Loopback {
                "host"
            } else {
                "global"
            };
            out.push(format!("    {fam} {a} scope {scope} {}", l.name));
        }
    }
    out
}
