//! The node's kernel in the real tools' words: `show links` (`ip -d addr`), `show neigh`
//! (`ip neigh`), `show fdb` (`bridge fdb`), `show ipset` (`ipset save`), and `network
//! show|use`: every line renders the state the plugins and the network daemon wrote on the
//! node.

use super::{Lab, LabError};
use crate::cni::host::{Link, LinkKind, Netns};
use crate::command::grammar::NetworkCmd;
use crate::net::trace::Enforcement;
use crate::netd::IMPLEMENTATIONS;
use crate::render::{Line, Outcome, Role};
use std::collections::{BTreeMap, BTreeSet};

impl Lab {
    fn kernel_node(&self, node: &str) -> Result<&crate::node::NodeRuntime, LabError> {
        self.nodes.get(node).map(Box::as_ref).ok_or_else(|| {
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
    pub(crate) fn show_links(
        &self,
        node: &str,
        pod: Option<&str>,
    ) -> Result<(Outcome, super::seen::Seen), LabError> {
        let rt = self.kernel_node(node)?;
        let mut out = Outcome::empty();
        let mut place = super::seen::Place::Node(node.to_string());
        let (who, ns) = match pod {
            None => (format!("{node} (host)"), &rt.host.root),
            Some(p) => {
                let (pns, pname) = match p.split_once('/') {
                    Some((a, b)) => (a.to_string(), b.to_string()),
                    None => ("default".to_string(), p.to_string()),
                };
                let key = format!("{pns}/{pname}");
                let sb = rt.sandboxes.get(&key).ok_or_else(|| {
                    match self.cluster.pods.get(&(pns.clone(), pname.clone())) {
                        // As kubectl says it; `pod/web` reads as namespace `pod`.
                        None => LabError::msg(format!(
                            "pods \"{pname}\" not found in namespace \"{pns}\" (--pod takes NAME or NAMESPACE/NAME)"
                        )),
                        Some(p) => match p.spec.node_name.as_str() {
                            "" => LabError::msg(format!(
                                "pod {key} has no sandbox: it is not scheduled to a node yet"
                            )),
                            n if n != node => LabError::msg(format!(
                                "pod {key} runs on {n}, not {node}: `show links {n} --pod {key}`"
                            )),
                            _ => LabError::msg(format!(
                                "pod {key} has no sandbox on {node} yet (not started: `describe pod {key}` says why)"
                            )),
                        },
                    }
                })?;
                let ns = rt.host.netns.get(sb.netns()).ok_or_else(|| {
                    LabError::msg(format!("pod {key}'s network namespace is gone"))
                })?;
                place = super::seen::Place::Pod {
                    node: node.to_string(),
                    pod: crate::cluster::ObjectRef::new(crate::cluster::ApiKind::Pod, pns, pname),
                };
                (format!("pod {key} (netns {})", sb.netns()), ns)
            }
        };
        Self::header(&mut out, who, "ip -d addr");
        let links = link_lines(ns, &rt.host);
        for l in links.iter().flat_map(|l| &l.lines) {
            out.plain(format!("  {l}"));
        }
        let seen = super::seen::Seen::Links(vec![super::seen::LinkSet { place, links }]);
        Ok((out, seen))
    }

    /// `show neigh NODE`.
    pub(crate) fn show_neigh(&self, node: &str) -> Result<(Outcome, super::seen::Seen), LabError> {
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
        let lines: Vec<String> = entries.iter().map(|n| n.to_ip_neigh()).collect();
        for l in &lines {
            out.plain(format!("  {l}"));
        }
        let seen = super::seen::Seen::Entries {
            table: super::seen::EntryTable::Neigh,
            node: node.to_string(),
            entries: lines,
        };
        Ok((out, seen))
    }

    /// `show fdb NODE`.
    pub(crate) fn show_fdb(&self, node: &str) -> Result<(Outcome, super::seen::Seen), LabError> {
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
        let lines: Vec<String> = entries.iter().map(|f| f.to_bridge_fdb()).collect();
        for l in &lines {
            out.plain(format!("  {l}"));
        }
        let seen = super::seen::Seen::Entries {
            table: super::seen::EntryTable::Fdb,
            node: node.to_string(),
            entries: lines,
        };
        Ok((out, seen))
    }

    /// `show ipset NODE`: the node's ipsets as `ipset save` prints them.
    pub(crate) fn show_ipset(&self, node: &str) -> Result<Outcome, LabError> {
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
    pub(crate) fn network_cmd(&mut self, cmd: NetworkCmd) -> Result<Outcome, LabError> {
        match cmd {
            NetworkCmd::Show => Ok(self.network_card()),
            NetworkCmd::Compare => Ok(self.network_compare()),
            NetworkCmd::Use { name, cidr } => self.network_use(&name, cidr.as_deref()),
            NetworkCmd::Multus { state } => self.multus_cmd(&state),
        }
    }

    /// `network show`: the running network's card.
    fn network_card(&self) -> Outcome {
        let card = self.network.card(&self.network_view());
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("network {}", self.network.name()), Role::Name)
                .push(card.deployed, Role::Dim),
        );
        for (k, v) in &card.rows {
            out.plain(format!("  {k:<14} {v}"));
        }
        if let Some((node, path, text)) = card.file {
            Self::header(&mut out, format!("{node} (host)"), &format!("cat {path}"));
            for l in text.lines() {
                out.plain(format!("  {l}"));
            }
        }
        out
    }

    /// `network compare`: the implementations side by side, the running one marked.
    fn network_compare(&self) -> Outcome {
        let mut out = Outcome::empty();
        let running = self.network.name();
        let width = IMPLEMENTATIONS
            .iter()
            .map(|i| i.name.len())
            .max()
            .unwrap_or(0);
        for (row, property) in crate::netd::COMPARED.iter().enumerate() {
            out.line(Line::styled((*property).to_string(), Role::Header));
            for i in IMPLEMENTATIONS {
                let (name, cell) = (i.name, i.compare[row]);
                let mark = if name == running { "*" } else { " " };
                out.plain(format!("  {mark} {name:<width$}  {cell}"));
            }
        }
        out.line(Line::styled(
            format!(
                "(* running: {running}; `network use NAME` switches, `network show` describes it)"
            ),
            Role::Dim,
        ));
        out
    }

    fn network_use(&mut self, name: &str, cidr: Option<&str>) -> Result<Outcome, LabError> {
        let Some(implementation) = IMPLEMENTATIONS.iter().find(|i| i.name == name) else {
            let known: Vec<&str> = IMPLEMENTATIONS.iter().map(|i| i.name).collect();
            return Err(LabError::msg(format!(
                "unknown network {name:?}: the lab runs {}",
                known.join(", ")
            )));
        };
        let network: ipnet::IpNet = match cidr {
            None => self.network.cluster_cidr(),
            Some(c) => super::validate::cidr(c).map_err(LabError::msg)?,
        };
        let mut out = Outcome::empty();
        if self.network.name() == name && self.network.cluster_cidr() == network {
            out.line(Line::styled(
                format!("the cluster already runs {name}"),
                Role::Dim,
            ));
            return Ok(out);
        }
        let next = (implementation.build)(network).map_err(LabError::msg)?;
        let stranded_before = self.pods_set_up_by_another_network();
        // The old implementation's daemons are removed with what they programmed.
        self.network.stop(&mut self.nodes);
        self.network = next;
        self.network_start();
        // Multus's entrypoint regenerates 00-multus.conf[list] from the new primary config.
        self.multus_resync();
        out.line(
            Line::new()
                .push(format!("network {name} ({network})"), Role::Name)
                .push(" running", Role::Good)
                .push(format!("  {}", self.network.started()), Role::Dim),
        );
        out.extend(self.active_confs_line());
        out.extend(self.stranded_by_the_switch(&stranded_before));
        Ok(out)
    }

    /// Every node's pods whose DEL would run another network's chain than the one that
    /// set them up: `(node, pod, the network that set it up)`.
    fn pods_set_up_by_another_network(&self) -> BTreeSet<(String, String, String)> {
        self.nodes
            .iter()
            .flat_map(|(node, rt)| {
                rt.pods_set_up_by_another_network()
                    .into_iter()
                    .map(move |(pod, net)| (node.clone(), pod.to_string(), net.to_string()))
            })
            .collect()
    }

    /// After a switch, the running pods whose DEL the switch sent through the new network's
    /// chain (the leak of step 14 of chapter 3's lesson): a warning per node and old network.
    fn stranded_by_the_switch(&self, before: &BTreeSet<(String, String, String)>) -> Outcome {
        let mut by_node_net: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
        let now = self.pods_set_up_by_another_network();
        for (node, pod, net) in now.difference(before) {
            let name = pod.strip_prefix("default/").unwrap_or(pod);
            by_node_net.entry((node, net)).or_default().push(name);
        }
        let mut out = Outcome::empty();
        for ((node, net), pods) in by_node_net {
            let Some(Ok(new)) = self.nodes.get(node).map(|rt| rt.network()) else {
                continue;
            };
            let (list, verb, its) = match pods.as_slice() {
                [one] => (one.to_string(), "was", "its"),
                [a, b, c, _, ..] => (
                    format!("{a}, {b}, {c} and {} more", pods.len() - 3),
                    "were",
                    "their",
                ),
                few => (few.join(", "), "were", "their"),
            };
            out.line(Line::styled(
                format!(
                    "  {node}: {list} {verb} set up by network {net}; {its} DEL now runs {}'s chain, which never reaches {net}'s IPAM (a leak): delete pods before switching",
                    new.name
                ),
                Role::Warn,
            ));
        }
        out
    }

    /// Which file the runtime now takes on each node (the first in `/etc/cni/net.d` that
    /// parses): pods created from now on get its network, running pods keep theirs.
    fn active_confs_line(&self) -> Outcome {
        let mut by_file: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (node, rt) in &self.nodes {
            let file = match rt.confdir.active() {
                Ok((file, _)) => file,
                Err(_) => "no valid network config".to_string(),
            };
            by_file.entry(file).or_default().push(node.as_str());
        }
        let mut out = Outcome::empty();
        if by_file.is_empty() {
            return out;
        }
        let uses: Vec<String> = if by_file.len() == 1 {
            by_file
                .into_keys()
                .map(|f| format!("{f} on every node"))
                .collect()
        } else {
            by_file
                .into_iter()
                .map(|(f, nodes)| match nodes.as_slice() {
                    [_, _, _, _, _, ..] => {
                        format!("{f} on {} nodes ({}, …)", nodes.len(), nodes[0])
                    }
                    few => format!("{f} on {}", few.join(", ")),
                })
                .collect()
        };
        let whose = if uses.len() == 1 {
            "its"
        } else {
            "their node's file's"
        };
        out.line(Line::styled(
            format!(
                "  the runtime now takes {}: pods created from now on get {whose} network, running pods keep theirs",
                uses.join("; ")
            ),
            Role::Dim,
        ));
        out
    }

    /// `show bgp NODE`: `calicoctl node status` and `birdcl show route` on the node.
    pub(crate) fn show_bgp(&self, node: &str) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let Some(mesh) = self.network.bgp() else {
            return Err(LabError::msg(format!(
                "{} runs no BGP ({}); `network use calico-bgp` runs Calico's BIRD mesh",
                self.network.name(),
                self.network.routing()
            )));
        };
        let lines = mesh.status(node, Some(&rt.host)).map_err(LabError::msg)?;
        let mut out = Outcome::empty();
        Self::header(
            &mut out,
            format!("{node} (calico-node)"),
            "calicoctl node status; birdcl show route",
        );
        for l in lines.into_iter().skip(1) {
            if l.starts_with("$ ") {
                out.line(Line::styled(format!("  {l}"), Role::Dim));
            } else {
                out.plain(format!("  {l}"));
            }
        }
        Ok(out)
    }

    /// `show bpf NODE [--policy POD | --identities]`: what cilium-agent on the node holds,
    /// as its CLI prints it.
    pub(crate) fn show_bpf(
        &self,
        node: &str,
        policy: Option<&str>,
        identities: bool,
    ) -> Result<Outcome, LabError> {
        self.kernel_node(node)?;
        let view = self.network_view();
        let Some(state) = self.network.bpf(&view) else {
            return Err(LabError::msg(format!(
                "{} loads no BPF programs or maps (it {}); `network use cilium` runs Cilium's agent",
                self.network.name(),
                match self.network.enforcement() {
                    Enforcement::Iptables => {
                        "enforces NetworkPolicy with iptables: `show iptables NODE --table filter`"
                    }
                    // (An eBPF data path always has its maps: netd's tests check it.)
                    Enforcement::None | Enforcement::Bpf => "enforces no NetworkPolicy",
                }
            )));
        };
        let Some(agent) = state.agent(node) else {
            return Err(LabError::msg(format!(
                "cilium-agent on {node} is not running: the node has no podCIDR yet (IPAM mode kubernetes waits for Node.spec.podCIDR)"
            )));
        };
        let mut out = Outcome::empty();
        let block = |out: &mut Outcome, cmd: &str, text: String| {
            Self::header(out, format!("{node} (cilium-agent)"), cmd);
            for l in text.lines() {
                out.plain(format!("  {l}"));
            }
        };
        if identities {
            block(
                &mut out,
                "cilium identity list",
                crate::netd::cilium::render::identity_list(&state.identities),
            );
            return Ok(out);
        }
        if let Some(pod) = policy {
            let key = if pod.contains('/') {
                pod.to_string()
            } else {
                format!("default/{pod}")
            };
            let Some(ep) = agent.endpoints.values().find(|e| e.pod_key() == key) else {
                let elsewhere = state.endpoint_of_pod(&key).map(|e| e.node.clone());
                return Err(LabError::msg(match elsewhere {
                    Some(n) => format!(
                        "{key} is an endpoint on {n}, not {node}: `show bpf {n} --policy {pod}`"
                    ),
                    None => format!(
                        "{key} is no Cilium endpoint on {node} (no such pod there, or it has no IP, or it was networked before Cilium ran)"
                    ),
                }));
            };
            block(
                &mut out,
                &format!("cilium bpf policy get {}", ep.id),
                crate::netd::cilium::render::bpf_policy_get(&state.identities, ep, false),
            );
            return Ok(out);
        }
        block(
            &mut out,
            "cilium endpoint list",
            crate::netd::cilium::render::endpoint_list(&state.identities, agent),
        );
        block(
            &mut out,
            "cilium bpf ipcache list",
            crate::netd::cilium::render::bpf_ipcache_list(agent),
        );
        Ok(out)
    }
}

/// `ip -d addr` for a namespace: index, name (`@peer` for a veth), flags, MTU, master,
/// state, the link line, the kind's details, and the addresses.
fn link_lines(ns: &Netns, host: &crate::cni::host::Host) -> Vec<super::seen::LinkFact> {
    let links = ns.links.by_ifindex();
    let mut facts = Vec::new();
    for l in links {
        let mut out = Vec::new();
        let name = match &l.kind {
            // A peer in the same namespace prints by name (`cilium_host@cilium_net`).
            LinkKind::Veth { peer, peer_netns }
                if peer_netns.is_none() && std::ptr::eq(ns, &host.root) =>
            {
                format!("{}@{peer}", l.name)
            }
            LinkKind::Veth { peer, peer_netns } => {
                let idx = host
                    .peer_ns(peer_netns.as_deref())
                    .and_then(|o| o.links.get(peer))
                    .map_or(0, Link::ifindex);
                format!("{}@if{idx}", l.name)
            }
            // A macvlan/ipvlan names its lower device by index in the host namespace, as
            // `ip link` does from a pod (`net1@if2`).
            LinkKind::Macvlan(lower) | LinkKind::Ipvlan(lower) if !std::ptr::eq(ns, &host.root) => {
                let idx = host.root.links.get(&lower.master).map_or(0, Link::ifindex);
                format!("{}@if{idx}", l.name)
            }
            LinkKind::Macvlan(lower) | LinkKind::Ipvlan(lower) => {
                format!("{}@{}", l.name, lower.master)
            }
            _ => l.name.to_string(),
        };
        let carrier = ns.carrier(l);
        let flags = link_flags(l, carrier);
        // Operstate: a device whose driver reports none (lo, vxlan, ifb) is UNKNOWN while
        // up; a bridge that lost its carrier is DOWN.
        let state = match (&l.kind, l.up, carrier) {
            (_, false, _) | (_, true, false) => "DOWN",
            (LinkKind::Loopback | LinkKind::Vxlan(_) | LinkKind::Ifb, true, true) => "UNKNOWN",
            (_, true, true) => "UP",
        };
        let in_root = std::ptr::eq(ns, &host.root);
        // print_linkinfo: `mtu`, `qdisc`, `master`, the operstate, `group` (IFLA_GROUP, 0 is
        // `default`), then `qlen` (`ip addr` sets filter.showqueue).
        let qdisc = root_qdisc(l, in_root, host)
            .map(|q| format!(" qdisc {q}"))
            .unwrap_or_default();
        let master = l
            .master
            .as_deref()
            .map(|m| format!(" master {m}"))
            .unwrap_or_default();
        out.push(format!(
            "{}: {name}: {flags} mtu {}{qdisc}{master} state {state} group default qlen {}",
            l.ifindex(),
            l.mtu,
            tx_queue_len(&l.kind)
        ));
        let link_netns = link_netns(&l.kind, in_root);
        if l.kind == LinkKind::Loopback {
            out.push(format!("    link/loopback {} brd 00:00:00:00:00:00", l.mac));
        } else {
            out.push(format!(
                "    link/ether {} brd ff:ff:ff:ff:ff:ff{link_netns}",
                l.mac
            ));
        }
        // `-d` goes on with ` promiscuity N allmulti N minmtu N maxmtu N` on the link line
        // and `numtxqueues … gso_max_size … gro_max_size …` after the kind's details: left
        // out, as the lab keeps no promiscuity counts, driver MTU bounds or queue counts.
        match &l.kind {
            // veth has no IFLA_INFO_DATA to print: the kind alone (`veth `).
            LinkKind::Veth { .. } => out.push("    veth".to_string()),
            LinkKind::Bridge => out.push(BRIDGE_DETAILS.to_string()),
            LinkKind::Ifb => out.push("    ifb".to_string()),
            LinkKind::Vxlan(v) if v.local.is_empty() => out.push(format!(
                // External (collect_metadata) mode, as Cilium creates cilium_vxlan.
                "    vxlan external id {} srcport 0 0 dstport {} {}ttl auto ageing 300",
                v.vni,
                v.port,
                if v.learning { "" } else { "nolearning " }
            )),
            LinkKind::Vxlan(v) => out.push(format!(
                "    vxlan id {} local {} dev {} srcport 0 0 dstport {} {}ttl auto ageing 300",
                v.vni,
                v.local,
                v.dev,
                v.port,
                if v.learning { "" } else { "nolearning " }
            )),
            // `ip -d link`'s detail line for each kind.
            // iproute2 6.1 `ip -d link show` (checked in a netns here).
            LinkKind::Macvlan(lower) => out.push(format!(
                "    macvlan mode {} bcqueuelen 1000 usedbcqueuelen 1000",
                lower.mode
            )),
            LinkKind::Ipvlan(lower) => out.push(format!("    ipvlan  mode {} bridge", lower.mode)),
            LinkKind::SriovVf(v) => out.push(format!("    vf {} of {}", v.vf, v.pf)),
            LinkKind::Loopback | LinkKind::Physical => {}
        }
        // print_linktype: a port's IFLA_INFO_SLAVE_KIND on its own line after the kind's.
        if let Some(port) = bridge_slave(ns, l, carrier) {
            out.push(port);
        }
        if let Some(alias) = l.alias() {
            out.push(format!("    alias {alias}"));
        }
        if let Some(pci) = l.pci() {
            out.push(format!("    parentbus pci parentdev {pci}"));
        }
        // A PF lists its VFs' administrative state (`ip link show ens1f0`).
        if std::ptr::eq(ns, &host.root) {
            for vf in host.vfs.values().filter(|v| v.pf == l.name) {
                out.push(format!("    {}", vf.to_ip_link()));
            }
        }
        // The kernel dumps IPv4's addresses before IPv6's; iproute2 prints the label
        // (the device's name) for IPv4 only: an IPv6 address has no IFA_LABEL
        // (`inet 127.0.0.1/8 scope host lo`, then `inet6 ::1/128 scope host`).
        let scope = if l.kind == LinkKind::Loopback {
            "host"
        } else {
            "global"
        };
        let (v4, v6): (Vec<&ipnet::IpNet>, Vec<&ipnet::IpNet>) =
            l.addrs.iter().partition(|a| a.addr().is_ipv4());
        for a in v4 {
            // The plugins' netlink.AddrAdd sets the broadcast address of an IPv4 address
            // shorter than /31 (`brd 10.244.1.255`, as a bridge plugin's cni0 and eth0
            // show it); the kernel's own 127.0.0.1/8 on lo has none.
            let brd = match a {
                ipnet::IpNet::V4(n) if n.prefix_len() < 31 && l.kind != LinkKind::Loopback => {
                    format!(" brd {}", n.broadcast())
                }
                _ => String::new(),
            };
            out.push(format!("    inet {a}{brd} scope {scope} {}", l.name));
            out.push(LIFETIMES.to_string());
        }
        for a in v6 {
            out.push(format!("    inet6 {a} scope {scope}"));
            out.push(LIFETIMES.to_string());
        }
        // The link-local address after the global ones (the kernel keeps a device's IPv6
        // addresses by scope).
        if let Some(ll) = ns.link_local(l, |k| host.sysctl_in(ns, k)) {
            out.push(format!("    inet6 {ll} scope link"));
            out.push(LIFETIMES.to_string());
        }
        facts.push(super::seen::LinkFact {
            name: l.name.to_string(),
            kind: kind_name(&l.kind),
            mtu: l.mtu,
            master: l.master.as_deref().map(str::to_string),
            addrs: l.addrs.iter().map(ToString::to_string).collect(),
            up: l.up,
            lines: out,
        });
    }
    facts
}

/// print_addrinfo's IFA_CACHEINFO line: every address the lab holds was added without a
/// lifetime (by a plugin's netlink.AddrAdd, or by the kernel: lo's, the link-local), so
/// both are INFINITY_LIFE_TIME.
const LIFETIMES: &str = "       valid_lft forever preferred_lft forever";

/// A bridge's `-d` details (iplink_bridge.c bridge_print_opt) as br_dev_setup leaves them
/// and the bridge plugin keeps them (it never turns STP on or changes a timer): 15 s,
/// 2 s and 20 s in centiseconds, 300 s ageing, STP off, priority 0x8000. Left out from
/// `vlan_filtering` on: the plugin turns VLAN filtering on for a `vlan` conf, which the lab
/// does not model; `bridge_id`/`designated_root`, the timers and the multicast and
/// netfilter settings are not modelled either.
const BRIDGE_DETAILS: &str = "    bridge forward_delay 1500 hello_time 200 max_age 2000 ageing_time 30000 stp_state 0 priority 32768";

/// The root qdisc `ip addr` names (IFLA_QDISC): a qdisc a plugin added on a host device
/// (bandwidth's `tbf`; an `ingress` qdisc is no root), else the kernel's: `noqueue` for the
/// IFF_NO_QUEUE devices (lo, veth, bridge, vxlan, macvlan, ipvlan, as `ip addr` shows them,
/// up or down), `noop` for a down device that queues. `None` for an up NIC, VF or ifb
/// without one: the kernel gives it `mq` or net.core.default_qdisc by its hardware queues,
/// which the lab does not model.
fn root_qdisc<'a>(l: &Link, in_root: bool, host: &'a crate::cni::host::Host) -> Option<&'a str> {
    if in_root
        && let Some(q) = host
            .qdiscs
            .iter()
            .find(|q| q.dev == l.name && q.kind != "ingress")
    {
        return Some(&q.kind);
    }
    match l.kind {
        LinkKind::Loopback
        | LinkKind::Bridge
        | LinkKind::Veth { .. }
        | LinkKind::Vxlan(_)
        | LinkKind::Macvlan(_)
        | LinkKind::Ipvlan(_) => Some("noqueue"),
        LinkKind::Ifb | LinkKind::Physical | LinkKind::SriovVf(_) if !l.up => Some("noop"),
        LinkKind::Ifb | LinkKind::Physical | LinkKind::SriovVf(_) => None,
    }
}

/// The device's tx_queue_len (`qlen`): ether_setup's DEFAULT_TX_QUEUE_LEN (1000), which
/// loopback also has; ifb_setup's TX_Q_LIMIT (32).
fn tx_queue_len(kind: &LinkKind) -> u32 {
    match kind {
        LinkKind::Ifb => 32,
        _ => 1000,
    }
}

/// IFLA_LINK_NETNSID, when the other end (a veth's peer, a macvlan's or ipvlan's lower
/// device) is in another namespace: iproute2 prints ` link-netns NAME` when the namespace
/// has a name under /var/run/netns (a sandbox `cni-…`), else ` link-netnsid N`. A pod's
/// namespace has one peer namespace, the host's, which gets nsid 0 and has no name. A
/// host-side peer outside /var/run/netns (a `cni add --netns` path) is left out: its nsid
/// is the order the kernel allocated ids in, which the lab does not keep.
fn link_netns(kind: &LinkKind, in_root: bool) -> String {
    match kind {
        LinkKind::Veth {
            peer_netns: Some(path),
            ..
        } => match path
            .strip_prefix("/var/run/netns/")
            .or_else(|| path.strip_prefix("/run/netns/"))
        {
            Some(name) if !name.is_empty() && !name.contains('/') => format!(" link-netns {name}"),
            _ => String::new(),
        },
        LinkKind::Veth {
            peer_netns: None, ..
        }
        | LinkKind::Macvlan(_)
        | LinkKind::Ipvlan(_)
            if !in_root =>
        {
            " link-netnsid 0".to_string()
        }
        _ => String::new(),
    }
}

/// A bridge port's `-d` line (iplink_bridge_slave.c bridge_slave_print_opt), up to the
/// fields the lab models: the STP state (no STP: `forwarding` while the port and its bridge
/// are up with carrier, else `disabled`), new_nbp's priority 32, the cost br_port_cost
/// gives a veth's 10 Gb/s (2), hairpin, and new_nbp's flags (guard, root_block and
/// fastleave off, learning and flood on), which the bridge plugin does not change. Left
/// out from `port_id` on: the port number is the lowest free one when the port joined,
/// which the lab does not keep, and the timers, designated bridge and multicast settings
/// are not modelled. Only a veth port is known to have cost 2; another port's line stops
/// before `cost`.
fn bridge_slave(ns: &Netns, l: &Link, carrier: bool) -> Option<String> {
    let bridge = ns.links.get(l.master.as_deref()?)?;
    if bridge.kind != LinkKind::Bridge {
        return None;
    }
    let forwarding = l.up && carrier && bridge.up;
    let state = if forwarding { "forwarding" } else { "disabled" };
    let mut line = format!("    bridge_slave state {state} priority 32");
    if matches!(l.kind, LinkKind::Veth { .. }) {
        line.push_str(&format!(
            " cost 2 hairpin {} guard off root_block off fastleave off learning on flood on",
            if l.hairpin() { "on" } else { "off" }
        ));
    }
    Some(line)
}

/// A link's flags as iproute2's `print_link_flags` prints them: `NO-CARRIER` first for an
/// up link without carrier, then the `IFF_*` flags in its order (`LOOPBACK`, `BROADCAST`,
/// `POINTOPOINT`, `MULTICAST`, `NOARP`, `ALLMULTI`, `PROMISC`, …, `UP`, `LOWER_UP`).
fn link_flags(l: &Link, carrier: bool) -> String {
    let mut flags: Vec<&str> = Vec::new();
    if l.up && !carrier {
        flags.push("NO-CARRIER");
    }
    match l.kind {
        LinkKind::Loopback => flags.push("LOOPBACK"),
        // ifb_setup: IFF_NOARP, no IFF_MULTICAST.
        LinkKind::Ifb => flags.extend(["BROADCAST", "NOARP"]),
        _ => flags.extend(["BROADCAST", "MULTICAST"]),
    }
    if l.allmulti() {
        flags.push("ALLMULTI");
    }
    if l.promisc() {
        flags.push("PROMISC");
    }
    if l.up {
        flags.push("UP");
    }
    if carrier {
        flags.push("LOWER_UP");
    }
    format!("<{}>", flags.join(","))
}

/// A link's kind in one word (`veth`, `vxlan`, `vf`, …).
pub(super) fn kind_name(kind: &LinkKind) -> &'static str {
    match kind {
        LinkKind::Loopback => "loopback",
        LinkKind::Bridge => "bridge",
        LinkKind::Veth { .. } => "veth",
        LinkKind::Ifb => "ifb",
        LinkKind::Physical => "physical",
        LinkKind::Vxlan(_) => "vxlan",
        LinkKind::Macvlan(_) => "macvlan",
        LinkKind::Ipvlan(_) => "ipvlan",
        LinkKind::SriovVf(_) => "vf",
    }
}
