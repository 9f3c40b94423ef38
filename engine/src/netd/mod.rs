//! Network daemons: the node agents a network implementation runs beside the CNI plugins.
//! The plugins set up one pod's interface when the runtime asks; a daemon programs what is
//! not about one pod: the routes to the other nodes' pod subnets, tunnel devices, their
//! neighbour and FDB entries, the node's own masquerade and forward rules, and the files the
//! plugins read (`/run/flannel/subnet.env`).
//!
//! The cluster runs one implementation at a time ([`Network`], `--network` / `network use`):
//! flannel with its host-gw or VXLAN backend ([`flannel`]), Calico in BGP mode
//! ([`calico`]), or Cilium in tunnel mode ([`cilium`], [`cilium::agent`]).

use std::collections::BTreeMap;
pub mod calico;
pub mod cilium;
pub mod flannel;
pub mod multus;
pub mod sriov_dp;

pub use calico::Calico;
pub use flannel::{Backend, Flannel};

/// The network implementation the cluster runs: what `network show` describes.
#[derive(Debug, Clone)]
pub enum Network {
    /// flanneld on every node (it enforces no NetworkPolicy).
    Flannel(Flannel),
    /// calico-node on every node: calico-ipam, BIRD, Felix.
    Calico(Box<Calico>),
    /// cilium-agent on every node: VXLAN tunnel, identities, BPF policy maps.
    Cilium(Box<cilium::agent::CiliumNetwork>),
}

impl Default for Network {
    fn default() -> Self {
        Network::Flannel(Flannel::default())
    }
}

impl Network {
    /// After the lab was copied: the copy's daemons and nodes share their tables and
    /// datastore with each other, not with the original's (a copied handle still points at
    /// the original's).
    pub fn relink(&mut self, hosts: &mut BTreeMap<String, crate::node::NodeRuntime>) {
        match self {
            Network::Flannel(f) => f.relink(hosts),
            Network::Calico(c) => c.relink(hosts),
            Network::Cilium(_) => {}
        }
    }

    /// The `--network` name.
    pub fn name(&self) -> &'static str {
        match self {
            Network::Flannel(f) => f.name(),
            Network::Calico(c) => c.name(),
            Network::Cilium(c) => c.name(),
        }
    }

    /// The cluster's pod network (flannel's `Network`, Calico's pool).
    pub fn cluster_cidr(&self) -> ipnet::IpNet {
        match self {
            Network::Flannel(f) => f.network,
            Network::Calico(c) => ipnet::IpNet::V4(c.cidr()),
            Network::Cilium(c) => c.cidr,
        }
    }

    /// What enforces NetworkPolicy on the nodes.
    pub fn enforcement(&self) -> crate::net::trace::Enforcement {
        match self {
            Network::Flannel(_) => crate::net::trace::Enforcement::None,
            Network::Calico(_) => crate::net::trace::Enforcement::Iptables,
            Network::Cilium(_) => crate::net::trace::Enforcement::Bpf,
        }
    }
}

/// The names `--network` and `network use` accept, with one line each.
pub const NETWORKS: &[(&str, &str)] = &[
    (
        "flannel-host-gw",
        "flannel, host-gw backend: routes to each peer's pod subnet via its InternalIP (the default)",
    ),
    (
        "flannel-vxlan",
        "flannel, VXLAN backend: flannel.1 (VNI 1, UDP 8472, MTU 1450) tunnels to each peer",
    ),
    (
        "calico-bgp",
        "Calico, BGP mode: calico-ipam /26 blocks per node, BIRD's node-to-node mesh, NetworkPolicy as Felix's iptables chains",
    ),
    (
        "cilium",
        "Cilium, tunnel mode: VXLAN between nodes, identities and per-endpoint BPF policy maps",
    ),
];

/// The implementations side by side, one row per property, in [`NETWORKS`]' order
/// (`network compare`); each cell is what that implementation's model does.
pub const COMPARISON: &[(&str, [&str; 4])] = &[
    (
        "encapsulation",
        [
            "none",
            "VXLAN: flannel.1, VNI 1, UDP 8472",
            "none (ipipMode, vxlanMode Never)",
            "VXLAN: cilium_vxlan, UDP 8472, the VNI carries the sender's security identity",
        ],
    ),
    (
        "routing",
        [
            "flanneld: <peer podCIDR> via <peer InternalIP> dev eth0 (one L2 segment)",
            "flanneld: <peer podCIDR> via <peer>.0 dev flannel.1 onlink, a neighbour and an FDB entry per peer",
            "BIRD's BGP mesh: <peer block> via <peer> dev eth0 proto bird; own blocks blackhole",
            "<podCIDR> via <router IP> dev cilium_host; bpf_lxc redirects by the ipcache's tunnel endpoint",
        ],
    ),
    (
        "MTU",
        [
            "1500",
            "1450 on flannel.1 (FLANNEL_MTU); the lab's conflist leaves pods at 1500",
            "1500 (/var/lib/calico/mtu, no overhead)",
            "1500 on devices, mtu 1450 on the tunnel routes and the pods' default route",
        ],
    ),
    (
        "IPAM",
        [
            "host-local on the node's podCIDR (the lab's conflist)",
            "host-local on the node's podCIDR (the lab's conflist)",
            "calico-ipam: /26 blocks of the IPPool claimed per node; a /32 per pod",
            "the agent (ipam kubernetes): the node's podCIDR, router IP first; a /32 per pod",
        ],
    ),
    (
        "masquerade",
        [
            "flanneld --ip-masq: FLANNEL-POSTRTG in nat POSTROUTING",
            "flanneld --ip-masq: FLANNEL-POSTRTG in nat POSTROUTING",
            "Felix natOutgoing: cali-nat-outgoing with the pool ipsets",
            "the agent's iptables masquerade (not modelled)",
        ],
    ),
    (
        "NetworkPolicy",
        [
            "not enforced: stored by the API server, ignored by the nodes",
            "not enforced: stored by the API server, ignored by the nodes",
            "Felix: iptables chains in filter FORWARD (cali-fw-/cali-tw-, cali-pi-/cali-po-), ipsets",
            "eBPF: bpf_lxc at each lxc device, per-endpoint policy maps keyed by identity",
        ],
    ),
    (
        "look at it",
        [
            "show routes, show iptables",
            "show links, show neigh, show fdb",
            "show bgp, show iptables --table filter, show ipset",
            "show bpf, show bpf --policy POD, show bpf --identities",
        ],
    ),
];
