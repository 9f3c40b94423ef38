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
    pub fn show_links(
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
                    LabError::msg(format!(
                        "pod {key} has no sandbox on {node} (is it on another node, or not started?)"
                    ))
                })?;
                let ns = rt.host.netns.get(&sb.netns).ok_or_else(|| {
                    LabError::msg(format!("pod {key}'s network namespace is gone"))
                })?;
                place = super::seen::Place::Pod {
                    node: node.to_string(),
                    pod: crate::cluster::ObjectRef::new(crate::cluster::ApiKind::Pod, pns, pname),
                };
                (format!("pod {key} (netns {})", sb.netns), ns)
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
    pub fn show_neigh(&self, node: &str) -> Result<(Outcome, super::seen::Seen), LabError> {
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
    pub fn show_fdb(&self, node: &str) -> Result<(Outcome, super::seen::Seen), LabError> {
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
            NetworkCmd::Show => Ok(match &self.network {
                crate::netd::Network::Flannel(f) => self.flannel_card(f),
                crate::netd::Network::Calico(c) => self.calico_card(c),
                crate::netd::Network::Cilium(c) => self.cilium_card(c),
            }),
            NetworkCmd::Compare => Ok(self.network_compare()),
            NetworkCmd::Use { name, cidr } => self.network_use(&name, cidr.as_deref()),
            NetworkCmd::Multus { state } => self.multus_cmd(&state),
        }
    }

    /// `network compare`: the implementations side by side, the running one marked.
    fn network_compare(&self) -> Outcome {
        let mut out = Outcome::empty();
        let running = self.network.name();
        let width = crate::netd::NETWORKS
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(0);
        for (row, cells) in crate::netd::COMPARISON {
            out.line(Line::styled((*row).to_string(), Role::Header));
            for ((name, _), cell) in crate::netd::NETWORKS.iter().zip(cells.iter()) {
                let mark = if *name == running { "*" } else { " " };
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
        let known: Vec<&str> = crate::netd::NETWORKS.iter().map(|(n, _)| *n).collect();
        if !known.contains(&name) {
            return Err(LabError::msg(format!(
                "unknown network {name:?}: the lab runs {}",
                known.join(", ")
            )));
        }
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
        let next = match name {
            "calico-bgp" => crate::netd::Network::Calico(Box::new(
                crate::netd::Calico::new(network).map_err(LabError::msg)?,
            )),
            "cilium" => crate::netd::Network::Cilium(Box::new(
                crate::netd::cilium::agent::CiliumNetwork::new(network).map_err(LabError::msg)?,
            )),
            other => {
                let backend = if other == "flannel-vxlan" {
                    Backend::Vxlan
                } else {
                    Backend::HostGw
                };
                crate::netd::Network::Flannel(crate::netd::Flannel::new(backend))
            }
        };
        // The old implementation's daemons are removed with what they programmed.
        match &mut self.network {
            crate::netd::Network::Flannel(f) => {
                let backend = f.backend;
                f.switch(backend, network, &mut self.nodes);
            }
            crate::netd::Network::Calico(_) => crate::netd::Calico::uninstall(&mut self.nodes),
            crate::netd::Network::Cilium(_) => {
                crate::netd::cilium::agent::CiliumNetwork::uninstall(&mut self.nodes)
            }
        }
        self.network = next;
        let note = match &mut self.network {
            crate::netd::Network::Flannel(f) => {
                let backend = f.backend;
                f.switch(backend, network, &mut self.nodes);
                "flanneld restarted on every node with the new backend; pods keep the network they were created with"
            }
            crate::netd::Network::Calico(_) => {
                "calico-node started on every node: 10-calico.conflist (calico, calico-ipam, portmap) now sorts first in /etc/cni/net.d; pods created from now on get Calico's network, running ones keep theirs"
            }
            crate::netd::Network::Cilium(_) => {
                "cilium-agent started on every node with a podCIDR: cilium_host, cilium_net, cilium_vxlan and the tunnel routes; 05-cilium.conflist (cilium-cni) now sorts first in /etc/cni/net.d; pods created from now on are Cilium endpoints, running ones keep their network"
            }
        };
        self.run_network();
        // Multus's entrypoint regenerates 00-multus.conf[list] from the new primary config.
        self.multus_resync();
        out.line(
            Line::new()
                .push(format!("network {name} ({network})"), Role::Name)
                .push(" running", Role::Good)
                .push(format!("  {note}"), Role::Dim),
        );
        Ok(out)
    }

    /// `show bgp NODE`: `calicoctl node status` and `birdcl show route` on the node.
    pub fn show_bgp(&self, node: &str) -> Result<Outcome, LabError> {
        let rt = self.kernel_node(node)?;
        let crate::netd::Network::Calico(c) = &self.network else {
            return Err(LabError::msg(format!(
                "{} runs no BGP (flannel routes by {}); `network use calico-bgp` runs Calico's BIRD mesh",
                self.network.name(),
                if self.network.name() == "flannel-vxlan" {
                    "VXLAN tunnels"
                } else {
                    "static routes via the peers' addresses"
                }
            )));
        };
        let lines = c.mesh.status(node, Some(&rt.host)).map_err(LabError::msg)?;
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
    pub fn show_bpf(
        &self,
        node: &str,
        policy: Option<&str>,
        identities: bool,
    ) -> Result<Outcome, LabError> {
        self.kernel_node(node)?;
        let Some(state) = self.cilium_state() else {
            return Err(LabError::msg(format!(
                "{} loads no BPF programs or maps (it {}); `network use cilium` runs Cilium's agent",
                self.network.name(),
                if self.network.name() == "calico-bgp" {
                    "enforces NetworkPolicy with iptables: `show iptables NODE --table filter`"
                } else {
                    "enforces no NetworkPolicy"
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

    fn cilium_card(&self, c: &crate::netd::cilium::agent::CiliumNetwork) -> Outcome {
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("network {}", c.name()), Role::Name)
                .push(
                    "  Cilium as its Helm chart deploys it (routingMode tunnel, tunnelProtocol vxlan) with ipam.mode kubernetes: cilium-agent on every node",
                    Role::Dim,
                ),
        );
        let pools: Vec<String> = self
            .cluster
            .nodes
            .values()
            .map(|n| {
                match self
                    .nodes
                    .get(n.name())
                    .and_then(|rt| rt.host.cilium.as_ref())
                {
                    Some(a) => format!(
                        "{} {} (router {}, {} in use)",
                        n.name(),
                        a.pod_cidr,
                        a.router_ip,
                        a.endpoints_in_use()
                    ),
                    None => format!("{} none (no podCIDR: the agent waits)", n.name()),
                }
            })
            .collect();
        let shown = if pools.len() > 6 {
            format!("{} … ({} nodes)", pools[..6].join(", "), pools.len())
        } else if pools.is_empty() {
            "none (no nodes)".to_string()
        } else {
            pools.join(", ")
        };
        let rows: Vec<(&str, String)> = vec![
            ("routing", "tunnel: every node routes each podCIDR `via <router IP> dev cilium_host` (its own without, the others' with mtu 1450); bpf_lxc at each pod's lxc… device looks the destination up in the ipcache and redirects to a local endpoint or encapsulates to the ipcache's tunnel endpoint (`show bpf NODE`)".to_string()),
            ("encapsulation", format!("VXLAN on cilium_vxlan (external mode, UDP {}): the tunnel endpoint comes from the ipcache per packet, the VNI carries the source's security identity; 50 bytes of overhead", crate::netd::cilium::agent::VXLAN_PORT)),
            ("MTU", "devices 1500 (eth0's); the tunnel routes and the pods' default route say mtu 1450 (route MTU = device MTU − 50)".to_string()),
            ("IPAM", "kubernetes: each node's agent hands out addresses from its Node.spec.podCIDR (the first one is its router IP on cilium_host); a pod gets a /32 on eth0 with `default via <router IP> dev eth0 mtu 1450` and `<router IP> dev eth0 scope link`".to_string()),
            ("masquerade", format!("Helm's default is iptables masquerading (enableIPv4Masquerade true, bpf.masquerade false) of traffic from the pods to outside {}; not modelled: traces keep the pod source", c.cidr)),
            ("NetworkPolicy", "enforced by bpf_lxc at each endpoint's lxc device with per-endpoint policy maps (cilium_policy_<id>, keyed by the peer's security identity); `show bpf NODE --policy POD`, `show bpf NODE --identities`".to_string()),
            ("cluster CIDR", format!("{} (the podCIDRs kube-controller-manager allocated)", c.cidr)),
        ];
        card_rows(&mut out, &rows, ("pools", &shown));
        out
    }

    fn calico_card(&self, c: &crate::netd::Calico) -> Outcome {
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("network {}", c.name()), Role::Name)
                .push(
                    "  Calico as calico.yaml deploys it with CALICO_IPV4POOL_IPIP=Never: calico-node (BIRD, Felix) on every node",
                    Role::Dim,
                ),
        );
        let blocks: Vec<String> = c.datastore.read(|d| {
            self.cluster
                .nodes
                .values()
                .map(|n| {
                    let mine: Vec<String> = d
                        .blocks_of(n.name())
                        .iter()
                        .map(|b| format!("{} ({} in use)", b.cidr, b.in_use()))
                        .collect();
                    if mine.is_empty() {
                        format!("{} none yet", n.name())
                    } else {
                        format!("{} {}", n.name(), mine.join(" "))
                    }
                })
                .collect()
        });
        let shown = if blocks.len() > 6 {
            format!("{} … ({} nodes)", blocks[..6].join(", "), blocks.len())
        } else if blocks.is_empty() {
            "none (no nodes)".to_string()
        } else {
            blocks.join(", ")
        };
        let rows: Vec<(&str, String)> = vec![
            ("routing", format!("BGP: BIRD on every node peers with every other (node-to-node mesh, AS {}) and programs `<block> via <peer> dev eth0 proto bird` for each peer's blocks; its own blocks are `blackhole … proto bird`. Needs the nodes on one L2 segment, or routers that peer too (`show bgp NODE`)", crate::netd::calico::AS_NUMBER)),
            ("encapsulation", "none (ipipMode and vxlanMode Never): pod packets cross the underlay as they are".to_string()),
            ("MTU", "1500: /var/lib/calico/mtu (no encapsulation overhead); the conflist's \"mtu\": 0 reads it".to_string()),
            ("IPAM", format!("calico-ipam: IPPool {} {} with blockSize {}; each node claims /{} blocks as it needs them (not its podCIDR), a pod gets a /32 on eth0 with default via 169.254.1.1, which the host's cali… veth answers by proxy ARP", c.pool.name, c.pool.cidr, c.pool.block_size, c.pool.block_size)),
            ("masquerade", format!("Felix (natOutgoing): cali-nat-outgoing in nat POSTROUTING masquerades traffic from {} to outside it", c.pool.cidr)),
            ("NetworkPolicy", "enforced by Felix in filter FORWARD: cali-FORWARD → cali-from-wl-dispatch / cali-to-wl-dispatch → cali-fw-<iface> / cali-tw-<iface> → cali-po-… / cali-pi-… per policy; `show iptables NODE --table filter`, `show ipset NODE`".to_string()),
            ("cluster CIDR", format!("{} (the pool's CIDR)", c.pool.cidr)),
        ];
        card_rows(&mut out, &rows, ("blocks", &shown));
        out
    }

    fn flannel_card(&self, f: &crate::netd::Flannel) -> Outcome {
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
                "not enforced: flannel programs no policy, so the API server stores NetworkPolicies and nothing on the nodes acts on them (Canal pairs flannel with Calico's Felix for that; `network use calico-bgp` enforces them)".to_string(),
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

/// A network card's rows, then the per-node line (leases, blocks, pools).
fn card_rows(out: &mut Outcome, rows: &[(&str, String)], last: (&str, &str)) {
    for (k, v) in rows {
        out.plain(format!("  {k:<14} {v}"));
    }
    out.plain(format!("  {:<14} {}", last.0, last.1));
}

/// `ip -d addr` for a namespace: index, name (`@peer` for a veth), flags, MTU, master,
/// state, the link line, the kind's details, and the addresses.
fn link_lines(ns: &Netns, host: &crate::cni::host::Host) -> Vec<super::seen::LinkFact> {
    let links: Vec<&Link> = ns.links.values().collect();
    let mut facts = Vec::new();
    for (i, l) in links.iter().enumerate() {
        let mut out = Vec::new();
        let name = match &l.kind {
            // A peer in the same namespace prints by name (`cilium_host@cilium_net`).
            LinkKind::Veth { peer, peer_netns }
                if peer_netns.is_empty() && std::ptr::eq(ns, &host.root) =>
            {
                format!("{}@{peer}", l.name)
            }
            LinkKind::Veth { peer, peer_netns } => {
                let idx = host
                    .ns(peer_netns)
                    .and_then(|o| o.links.values().position(|x| &x.name == peer))
                    .map(|p| p + 1)
                    .unwrap_or(0);
                format!("{}@if{idx}", l.name)
            }
            // A macvlan/ipvlan names its lower device by index in the host namespace, as
            // `ip link` does from a pod (`net1@if2`).
            LinkKind::Macvlan { master, .. } | LinkKind::Ipvlan { master, .. }
                if !std::ptr::eq(ns, &host.root) =>
            {
                let idx = host
                    .root
                    .links
                    .values()
                    .position(|x| &x.name == master)
                    .map(|p| p + 1)
                    .unwrap_or(0);
                format!("{}@if{idx}", l.name)
            }
            LinkKind::Macvlan { master, .. } | LinkKind::Ipvlan { master, .. } => {
                format!("{}@{master}", l.name)
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
            } if local.is_empty() => out.push(format!(
                // External (collect_metadata) mode, as Cilium creates cilium_vxlan.
                "    vxlan external id {vni} srcport 0 0 dstport {port} {}ttl auto ageing 300",
                if *learning { "" } else { "nolearning " }
            )),
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
            // `ip -d link`'s detail line for each kind.
            // iproute2 6.1 `ip -d link show` (checked in a netns here).
            LinkKind::Macvlan { mode, .. } => out.push(format!(
                "    macvlan mode {mode} bcqueuelen 1000 usedbcqueuelen 1000"
            )),
            LinkKind::Ipvlan { mode, .. } => out.push(format!("    ipvlan  mode {mode} bridge")),
            LinkKind::SriovVf { pf, vf } => out.push(format!("    vf {vf} of {pf}")),
            LinkKind::Loopback | LinkKind::Physical => {}
        }
        if let Some(alias) = &l.alias {
            out.push(format!("    alias {alias}"));
        }
        if let Some(pci) = &l.pci {
            out.push(format!("    parentbus pci parentdev {pci}"));
        }
        // A PF lists its VFs' administrative state (`ip link show ens1f0`).
        if std::ptr::eq(ns, &host.root) {
            for vf in host.vfs.values().filter(|v| v.pf == l.name) {
                out.push(format!("    {}", vf.to_ip_link()));
            }
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
        facts.push(super::seen::LinkFact {
            name: l.name.clone(),
            kind: kind_name(&l.kind),
            mtu: l.mtu,
            master: l.master.clone(),
            addrs: l.addrs.clone(),
            up: l.up,
            lines: out,
        });
    }
    facts
}

/// A link's kind in one word (`veth`, `vxlan`, `vf`, …).
pub(super) fn kind_name(kind: &LinkKind) -> &'static str {
    match kind {
        LinkKind::Loopback => "loopback",
        LinkKind::Bridge => "bridge",
        LinkKind::Veth { .. } => "veth",
        LinkKind::Ifb => "ifb",
        LinkKind::Physical => "physical",
        LinkKind::Vxlan { .. } => "vxlan",
        LinkKind::Macvlan { .. } => "macvlan",
        LinkKind::Ipvlan { .. } => "ipvlan",
        LinkKind::SriovVf { .. } => "vf",
    }
}
