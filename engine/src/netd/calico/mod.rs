//! calico-node, as `calico.yaml` deploys it in BGP mode (`CALICO_IPV4POOL_IPIP=Never`,
//! no VXLAN): on every node its installer writes the CNI conflist and the kubeconfig the
//! plugins use, BIRD peers with every other node (the node-to-node mesh) and programs the
//! routes to their blocks, and Felix turns NetworkPolicy into iptables chains
//! (`projectcalico/calico`; summarised in `calico-and-cilium.md` Part A).
//!
//! - [`bird`]: the mesh, the routes each node advertises and learns, `calicoctl node
//!   status` and `birdcl show route`.
//! - [`felix`]: the filter-table chains (dispatch → endpoint → tier → profile) and the ipsets
//!   their rules match on, and natOutgoing.
//!
//! What the lab leaves out: IPIP and VXLAN encapsulation, route reflectors and BGPPeer
//! objects, Typha, the WorkloadEndpoint objects (Felix derives the endpoints from the pods),
//! host endpoints, the `cali:<hash>` comment on every rule, conntrack (every packet is the
//! first of its connection, so the ESTABLISHED rules never match), and the INPUT chain a
//! pod's traffic to its own node passes (`cali-wl-to-host`).

pub mod bird;
pub mod felix;

use crate::cni::datastore::{Datastore, IpPool};
use crate::cni::host::PeerTable;
use crate::net::ClusterNet;
use crate::net::trace::Enforcement;
use crate::node::{NodeRuntime, NodeRuntimes};
use ipnet::{IpNet, Ipv4Net};
use std::collections::{BTreeMap, BTreeSet};

/// The conflist calico-node's installer renders (`calico.yaml`, ConfigMap `calico-config`,
/// key `cni_network_config`, v3.33+: `cniVersion` 1.0.0, no bandwidth plugin).
pub(crate) const CONFLIST_TEMPLATE: &str =
    include_str!("../../../../assets/calico/cni_network_config.tmpl");
/// The file the installer writes it to.
pub(crate) const CONFLIST_NAME: &str = "10-calico.conflist";
/// The BGP AS number of every node (`confd/pkg/backends/calico/client.go`).
pub(crate) const AS_NUMBER: u32 = 64512;

/// One node as calico-node sees it: name, address, and whether it is running.
#[derive(Debug, Clone, Copy)]
pub struct CalicoNode<'a> {
    /// The node's name.
    pub name: &'a str,
    /// Its InternalIP (calico-node autodetects the address of the first interface).
    pub ip: Option<std::net::Ipv4Addr>,
    /// False while the node is down (`fault inject node-down`): its BIRD answers nobody.
    pub up: bool,
}

/// Calico on every node: the pool, the datastore the plugins share, and what BIRD and
/// Felix last programmed.
#[derive(Debug, Clone)]
pub struct Calico {
    /// The default IPPool (`default-ipv4-ippool`).
    pub pool: IpPool,
    /// The cluster datastore (IPAM blocks), shared with every node's plugins.
    pub datastore: Datastore,
    /// The BGP mesh as BIRD on each node sees it.
    pub mesh: bird::Mesh,
    /// The inputs the last pass programmed from (a pass with the same ones does nothing).
    seen: Option<Seen>,
    /// The node each workload endpoint Felix programmed is on (to find it when the pod goes).
    endpoint_nodes: BTreeMap<String, String>,
    /// The routes every node learned, shared (see [`PeerTable`]).
    shared: PeerTable,
}

/// What a pass depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    cluster_rv: u64,
    blocks: u64,
    nodes: Vec<(String, Option<std::net::Ipv4Addr>, bool)>,
}

/// Which nodes' Felix has something new to program: the watch events since the last pass
/// decide (a pod event concerns its node, unless policies select across nodes; a policy,
/// namespace or node event concerns every node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FelixWork {
    /// Every node.
    All,
    /// These pods changed (`namespace/name`, and the node each is on now, if it exists).
    Pods(Vec<(String, Option<String>)>),
}

impl Calico {
    /// Calico with the default pool on `cidr` (calico-node takes kubeadm's podSubnet),
    /// blockSize 26 and natOutgoing.
    pub fn new(cidr: IpNet) -> Result<Self, String> {
        let IpNet::V4(v4) = cidr else {
            return Err(format!("{cidr}: the lab's Calico runs an IPv4 pool only"));
        };
        if v4.prefix_len() > 26 {
            return Err(format!(
                "{cidr}: the pool must hold at least one /26 block (blockSize 26)"
            ));
        }
        let pool = IpPool {
            name: "default-ipv4-ippool".to_string(),
            cidr: v4.trunc(),
            block_size: 26,
            nat_outgoing: true,
        };
        Ok(Calico {
            datastore: Datastore::new(vec![pool.clone()]),
            pool,
            mesh: bird::Mesh::default(),
            seen: None,
            endpoint_nodes: BTreeMap::new(),
            shared: PeerTable::default(),
        })
    }

    /// The pool's CIDR.
    pub fn cidr(&self) -> Ipv4Net {
        self.pool.cidr
    }

    /// The conflist the installer writes on `node`.
    pub fn conflist(node: &str) -> String {
        CONFLIST_TEMPLATE
            .replace("__KUBERNETES_NODE_NAME__", node)
            .replace("__CNI_MTU__", "0")
            .replace(
                "__KUBECONFIG_FILEPATH__",
                crate::cni::plugins::calico::KUBECONFIG,
            )
    }

    /// calico-node starts on a node: install-cni writes the conflist (which sorts before
    /// the lab's own and so is the one the runtime loads) and the kubeconfig; Felix writes
    /// the MTU file.
    pub(crate) fn install_on(&self, rt: &mut NodeRuntime) {
        let node = rt.host.node.clone();
        rt.confdir
            .files
            .insert(CONFLIST_NAME.to_string(), Calico::conflist(&node).into());
        rt.reload_network();
        rt.host.datastore = Some(self.datastore.clone());
        rt.host.files.insert(
            crate::cni::plugins::calico::KUBECONFIG.to_string(),
            "# the kubeconfig of the calico-cni-plugin ServiceAccount\n".to_string(),
        );
        let mtu = rt
            .host
            .root
            .links
            .get("eth0")
            .map(|l| l.mtu)
            .unwrap_or(1500);
        rt.host.files.insert(
            crate::cni::plugins::calico::MTU_FILE.to_string(),
            format!("{mtu}\n"),
        );
    }

    /// calico-node is removed from every node: what it installed and programmed goes.
    pub(crate) fn uninstall(hosts: &mut NodeRuntimes) {
        for rt in hosts.values_mut() {
            if rt.confdir.files.remove(CONFLIST_NAME).is_some() {
                rt.reload_network();
            }
            let h = &mut rt.host;
            h.datastore = None;
            h.files.remove(crate::cni::plugins::calico::KUBECONFIG);
            h.files.remove(crate::cni::plugins::calico::MTU_FILE);
            h.root.routes.retain(|r| r.proto() != Some(bird::PROTO));
            h.peers = PeerTable::default();
            felix::remove(h);
        }
    }

    fn inputs(&self, nodes: &[CalicoNode<'_>], cluster_rv: u64) -> Seen {
        Seen {
            cluster_rv,
            blocks: self.datastore.read(|d| d.blocks_generation),
            nodes: nodes
                .iter()
                .map(|n| (n.name.to_string(), n.ip, n.up))
                .collect(),
        }
    }

    /// Whether the last pass ran on these inputs (`cluster_rv`: the API server's
    /// resourceVersion), so a new one would change nothing.
    pub(crate) fn up_to_date(&self, nodes: &[CalicoNode<'_>], cluster_rv: u64) -> bool {
        self.seen.as_ref() == Some(&self.inputs(nodes, cluster_rv))
    }

    /// The resourceVersion the last pass saw (the engine reads the watch events after it),
    /// or `None` before the first pass.
    pub(crate) fn seen_rv(&self) -> Option<u64> {
        self.seen.as_ref().map(|s| s.cluster_rv)
    }

    /// Whether the nodes (names, addresses, up) differ from the last pass's.
    pub(crate) fn nodes_changed(&self, nodes: &[CalicoNode<'_>]) -> bool {
        self.seen.as_ref().is_none_or(|s| {
            s.nodes.len() != nodes.len()
                || s.nodes
                    .iter()
                    .zip(nodes)
                    .any(|(a, b)| a.0 != b.name || a.1 != b.ip || a.2 != b.up)
        })
    }

    /// One pass of every node's calico-node: the installer's files on nodes new to it,
    /// BIRD's routes when blocks or nodes changed, and Felix's chains on the nodes `work`
    /// names, from the cluster (`net`: every pod for [`FelixWork::All`], just the changed
    /// pods for [`FelixWork::Pods`]). True when anything changed. After a pass that needs
    /// a full resync (a node Felix has not programmed), [`Calico::seen_rv`] is `None`.
    pub fn reconcile(
        &mut self,
        nodes: &[CalicoNode<'_>],
        cluster_rv: u64,
        clock: u64,
        net: &ClusterNet,
        work: &FelixWork,
        hosts: &mut NodeRuntimes,
    ) -> bool {
        let seen = self.inputs(nodes, cluster_rv);
        if self.seen.as_ref() == Some(&seen) {
            return false;
        }
        for n in nodes {
            if let Some(rt) = hosts.get_mut(n.name) {
                if rt.host.datastore.is_none() {
                    self.install_on(rt);
                }
            }
        }
        let routes_changed = self
            .seen
            .as_ref()
            .is_none_or(|s| s.blocks != seen.blocks || s.nodes != seen.nodes);
        if routes_changed {
            let blocks: BTreeMap<String, Vec<Ipv4Net>> = self.datastore.read(|d| {
                let mut by_node: BTreeMap<String, Vec<Ipv4Net>> = BTreeMap::new();
                for b in d.blocks.values() {
                    if let Some(node) = b.affinity.as_deref().and_then(|a| a.strip_prefix("host:"))
                    {
                        by_node.entry(node.to_string()).or_default().push(b.cidr);
                    }
                }
                by_node
            });
            self.mesh.update(nodes, &blocks, clock);
            self.shared = PeerTable::new(self.mesh.learned_routes());
            for n in nodes {
                if let Some(rt) = hosts.get_mut(n.name) {
                    self.mesh.program_own(&mut rt.host, n.name);
                    rt.host.peers = self.shared.share();
                }
            }
        }
        // The workload endpoints by node, once.
        let mut local: BTreeMap<&str, Vec<&crate::net::PodNet>> = BTreeMap::new();
        for p in &net.pods {
            local.entry(p.node.as_str()).or_default().push(p);
        }
        let targets: Vec<&str> = match work {
            FelixWork::All => nodes.iter().map(|n| n.name).collect(),
            FelixWork::Pods(changed) => {
                let mut t: Vec<&str> = Vec::new();
                for (key, now) in changed {
                    for node in [
                        now.as_deref(),
                        self.endpoint_nodes.get(key).map(String::as_str),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        if let Some(n) = nodes.iter().find(|n| n.name == node) {
                            t.push(n.name);
                        }
                    }
                }
                t.sort_unstable();
                t.dedup();
                t
            }
        };
        if matches!(work, FelixWork::All) {
            self.endpoint_nodes.clear();
        }
        if let FelixWork::Pods(changed) = work {
            for (key, _) in changed {
                self.endpoint_nodes.remove(key);
            }
        }
        if matches!(work, FelixWork::Pods(_))
            && targets.iter().any(|n| {
                hosts.get(*n).is_some_and(|rt| {
                    !rt.host
                        .netfilter
                        .ip4
                        .filter
                        .chains()
                        .contains_key("cali-FORWARD")
                })
            })
        {
            // A node Felix never programmed: the caller resyncs every node from scratch.
            self.seen = None;
            return true;
        }
        for node in targets {
            let pods = local.get(node).map(Vec::as_slice).unwrap_or_default();
            for p in pods {
                self.endpoint_nodes.insert(p.key(), node.to_string());
            }
            let Some(rt) = hosts.get_mut(node) else {
                continue;
            };
            match work {
                FelixWork::All => felix::program(&mut rt.host, pods, net, &self.pool),
                FelixWork::Pods(changed) => {
                    // `net` holds just the changed pods here.
                    let keys: Vec<&str> = changed.iter().map(|(k, _)| k.as_str()).collect();
                    let now: Vec<&crate::net::PodNet> = pods.to_vec();
                    let gone: Vec<String> = keys
                        .iter()
                        .filter(|k| !now.iter().any(|p| p.key() == **k))
                        .filter_map(|k| k.split_once('/'))
                        .map(|(ns, name)| crate::cni::plugins::calico::host_veth_name(ns, name))
                        .collect();
                    felix::update_endpoints(&mut rt.host, &now, &gone, pods, net, &self.pool);
                }
            }
        }
        self.seen = Some(Seen {
            blocks: self.datastore.read(|d| d.blocks_generation),
            ..seen
        });
        true
    }
}

/// Calico, BGP mode: calico-ipam /26 blocks per node, BIRD's node-to-node mesh,
/// NetworkPolicy as Felix's iptables chains.
pub(crate) const IMPLEMENTATION: super::Implementation = super::Implementation {
    name: "calico-bgp",
    compare: [
        "none (ipipMode, vxlanMode Never)",
        "BIRD's BGP mesh: <peer block> via <peer> dev eth0 proto bird; own blocks blackhole",
        "1500 (/var/lib/calico/mtu, no overhead)",
        "calico-ipam: /26 blocks of the IPPool claimed per node; a /32 per pod",
        "Felix natOutgoing: cali-nat-outgoing with the pool ipsets",
        "Felix: iptables chains in filter FORWARD (cali-fw-/cali-tw-, cali-pi-/cali-po-), ipsets",
        "show bgp, show iptables --table filter, show ipset",
    ],
    build: |cidr| Ok(Box::new(Calico::new(cidr)?)),
};

/// What calico-node's watches saw change (see [`changes_since`]).
#[derive(Debug, Default)]
struct Changes {
    /// Pods added, changed or deleted (`namespace/name`).
    pods: BTreeSet<String>,
    /// A policy, namespace or node changed.
    others: bool,
}

/// The API writes after resourceVersion `since`, as a watcher of pods, policies,
/// namespaces and nodes sees them: the pods' keys, and whether anything else changed.
/// `None` when the watch window no longer reaches back that far (a relist).
fn changes_since(api: &crate::cluster::Cluster, since: u64) -> Option<Changes> {
    use crate::cluster::ApiKind;
    let revs = &api.revs;
    let mut c = Changes::default();
    let mut oldest = u64::MAX;
    for e in revs.events.iter().rev() {
        if e.resource_version <= since {
            break;
        }
        oldest = e.resource_version;
        match e.kind {
            ApiKind::Pod => {
                c.pods.insert(e.key.clone());
            }
            ApiKind::NetworkPolicy | ApiKind::Namespace | ApiKind::Node => c.others = true,
            _ => {}
        }
    }
    // Every write bumps the resourceVersion once and records one event: a gap means
    // the window dropped some.
    if revs.resource_version > since && oldest != since + 1 {
        return None;
    }
    Some(c)
}

impl Calico {
    /// Every node's calico-node takes in what changed since its last pass: nodes, pods,
    /// policies, namespaces, the IPAM blocks. Cheap when nothing did (the API server's
    /// resourceVersion and the datastore's generation say so).
    fn watch(&mut self, cx: &mut super::Ctx<'_>) {
        let api = cx.api;
        let ips: Vec<(&str, Option<std::net::Ipv4Addr>, bool)> = api
            .nodes
            .values()
            .map(|n| {
                (
                    n.name(),
                    n.status.internal_ip().and_then(|i| i.parse().ok()),
                    !cx.faults.node_down(n.name()),
                )
            })
            .collect();
        let nodes: Vec<CalicoNode<'_>> = ips
            .iter()
            .map(|(name, ip, up)| CalicoNode {
                name,
                ip: *ip,
                up: *up,
            })
            .collect();
        let rv = api.revs.resource_version;
        if self.up_to_date(&nodes, rv) {
            return;
        }
        // What Felix must look at again, from the watch events since the last pass.
        let changes = self.seen_rv().and_then(|since| changes_since(api, since));
        let work = match changes {
            Some(c)
                if !c.others
                    && !self.nodes_changed(&nodes)
                    && (c.pods.is_empty() || api.policies.is_empty()) =>
            {
                FelixWork::Pods(
                    c.pods
                        .into_iter()
                        .map(|key| {
                            let (ns, name) = key.split_once('/').unwrap_or(("", key.as_str()));
                            let now = api
                                .pods
                                .get(&(ns.to_string(), name.to_string()))
                                .map(|p| p.spec.node_name.clone())
                                .filter(|n| !n.is_empty());
                            (key, now)
                        })
                        .collect(),
                )
            }
            _ => FelixWork::All,
        };
        let net = match &work {
            FelixWork::All => super::view::cluster_net(&cx.view()),
            FelixWork::Pods(changed) => super::view::cluster_net_where(
                &cx.view(),
                changed.iter().filter_map(|(key, _)| {
                    let (ns, name) = key.split_once('/')?;
                    api.pods.get(&(ns.to_string(), name.to_string()))
                }),
            ),
        };
        // BIRD's `since` column shows whole seconds.
        let clock = cx.clock.whole_secs();
        self.reconcile(&nodes, rv, clock, &net, &work, cx.nodes);
        if self.seen_rv().is_none() {
            // A node needs a full resync.
            let net = super::view::cluster_net(&cx.view());
            self.reconcile(&nodes, rv, clock, &net, &FelixWork::All, cx.nodes);
        }
    }
}

impl super::Network for Calico {
    fn name(&self) -> &'static str {
        IMPLEMENTATION.name
    }

    fn cluster_cidr(&self) -> IpNet {
        IpNet::V4(self.cidr())
    }

    fn enforcement(&self) -> Enforcement {
        Enforcement::Iptables
    }

    fn start(&mut self, cx: &mut super::Ctx<'_>) {
        self.watch(cx);
    }

    fn node_added(&mut self, cx: &mut super::Ctx<'_>, _node: &str) {
        self.watch(cx);
    }

    fn sync(&mut self, cx: &mut super::Ctx<'_>) {
        self.watch(cx);
    }

    fn stop(&mut self, nodes: &mut NodeRuntimes) {
        Calico::uninstall(nodes);
    }

    fn started(&self) -> &'static str {
        "calico-node started on every node and wrote 10-calico.conflist to /etc/cni/net.d (the calico plugin, which delegates addressing to calico-ipam, then portmap)"
    }

    fn routing(&self) -> &'static str {
        "BIRD routes by BGP"
    }

    fn card(&self, view: &super::View<'_>) -> super::Card {
        let blocks: Vec<String> = self.datastore.read(|d| {
            view.api
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
        let pool = &self.pool;
        let rows: Vec<(&'static str, String)> = vec![
            ("routing", format!("BGP: BIRD on every node peers with every other (node-to-node mesh, AS {AS_NUMBER}) and programs `<block> via <peer> dev eth0 proto bird` for each peer's blocks; its own blocks are `blackhole … proto bird`. Needs the nodes on one L2 segment, or routers that peer too (`show bgp NODE`)")),
            ("encapsulation", "none (ipipMode and vxlanMode Never): pod packets cross the underlay as they are".to_string()),
            ("MTU", "1500: /var/lib/calico/mtu (no encapsulation overhead); the conflist's \"mtu\": 0 reads it".to_string()),
            ("IPAM", format!("calico-ipam: IPPool {} {} with blockSize {}; each node claims /{} blocks as it needs them (not its podCIDR), a pod gets a /32 on eth0 with default via 169.254.1.1, which the host's cali… veth answers by proxy ARP", pool.name, pool.cidr, pool.block_size, pool.block_size)),
            ("masquerade", format!("Felix (natOutgoing): cali-nat-outgoing in nat POSTROUTING masquerades traffic from {} to outside it", pool.cidr)),
            ("NetworkPolicy", "enforced by Felix in filter FORWARD: cali-FORWARD → cali-from-wl-dispatch / cali-to-wl-dispatch → cali-fw-<iface> / cali-tw-<iface> → cali-po-… / cali-pi-… per policy; `show iptables NODE --table filter`, `show ipset NODE`".to_string()),
            ("cluster CIDR", format!("{} (the pool's CIDR)", pool.cidr)),
            ("blocks", super::per_node(blocks)),
        ];
        super::Card {
            deployed: "  Calico as calico.yaml deploys it with CALICO_IPV4POOL_IPIP=Never: calico-node (BIRD, Felix) on every node",
            rows,
            file: None,
        }
    }

    fn bgp(&self) -> Option<&bird::Mesh> {
        Some(&self.mesh)
    }

    /// A datastore and a routes table of the copy's own, handed to the nodes that had the
    /// original's.
    fn relink(&mut self, nodes: &mut NodeRuntimes) {
        self.datastore = self.datastore.copy();
        for rt in nodes.values_mut() {
            if rt.host.datastore.is_some() {
                rt.host.datastore = Some(self.datastore.clone());
                rt.host.peers = self.shared.share();
            }
        }
    }

    fn boxed(&self) -> Box<dyn super::Network> {
        Box::new(self.clone())
    }
}
