//! Network daemons: the node agents a network implementation runs beside the CNI plugins.
//! The plugins set up one pod's interface when the runtime asks; a daemon programs what is
//! not about one pod: the routes to the other nodes' pod subnets, tunnel devices, their
//! neighbour and FDB entries, the node's own masquerade and forward rules, and the files the
//! plugins read (`/run/flannel/subnet.env`).
//!
//! The cluster runs one implementation at a time (`--network` / `network use`): flannel
//! with its host-gw or VXLAN backend ([`flannel`]), Calico in BGP mode ([`calico`]), or
//! Cilium in tunnel mode ([`cilium`], [`cilium::agent`]). Each is a [`Network`]: its
//! daemons on every node, which the engine drives through that trait alone (a Node event, the
//! pass after each command, `network use`, the `network show` card, who enforces
//! NetworkPolicy, the capabilities views and the packet walker read). [`IMPLEMENTATIONS`] is
//! the one list of them, by name.

use crate::cluster::Cluster;
use crate::faults::Faults;
use crate::net::trace::Enforcement;
use crate::node::NodeRuntimes;
use crate::record::CallLog;
use crate::util::time::Millis;
/// What a node's BGP speaker reports (`show bgp`), as data.
pub use calico::bird::{BgpPeer, BgpRoute, BgpView, NextHop};

pub mod calico;
pub mod cilium;
pub mod flannel;
pub mod multus;
pub mod sriov_dp;
pub(crate) mod view;

pub use calico::Calico;
pub use flannel::{Backend, Flannel};

/// A network implementation's daemons on every node, as the engine drives them. Like a
/// controller ([`crate::control::Component`]) it keeps its own state and sees only what it
/// is handed ([`Ctx`]); unlike one it is handed the nodes' kernels, which its daemons
/// program, and it is told of Node events rather than polled in the reconcile loop.
///
/// One value stands for the daemon on every node: what the real daemons each derive alike
/// (flannel's peers' entries, BIRD's learned routes, Calico's datastore, Cilium's
/// identities) is worked out once and shared (see [`crate::cni::host::PeerTable`]), which
/// is what keeps a 1,000-node cluster cheap; each node's kernel still gets only what its
/// own daemon would program.
pub(crate) trait Network: std::fmt::Debug + Send + Sync {
    /// The `--network` name (`flannel-vxlan`).
    fn name(&self) -> &'static str;

    /// The cluster's pod network (flannel's `Network`, Calico's pool, Cilium's cluster
    /// CIDR).
    fn cluster_cidr(&self) -> ipnet::IpNet;

    /// What enforces NetworkPolicy on the nodes.
    fn enforcement(&self) -> Enforcement;

    /// The network's DaemonSet rolls out (`network use`): the daemon on every node lists
    /// what it watches and programs its node.
    fn start(&mut self, cx: &mut Ctx<'_>);

    /// A Node was added (`node add`): the DaemonSet starts a daemon on it, and every
    /// node's daemon learns of the Node.
    fn node_added(&mut self, cx: &mut Ctx<'_>, node: &str);

    /// The pass after every command (in step mode too: daemons are not the learner's
    /// hops): a daemon that watches more than Nodes takes in every change.
    fn sync(&mut self, cx: &mut Ctx<'_>);

    /// The network's DaemonSet is deleted (`network use` another): its daemons are removed
    /// with what they programmed on the nodes.
    fn stop(&mut self, nodes: &mut NodeRuntimes);

    /// What starting it did, in a line (`network use`).
    fn started(&self) -> &'static str;

    /// How pod packets reach the other nodes, in a phrase with its subject (`flannel
    /// routes by VXLAN tunnels`): what `show bgp` says a network without BGP does.
    fn routing(&self) -> &'static str;

    /// What `network show` says of it.
    fn card(&self, view: &View<'_>) -> Card;

    /// BIRD's mesh, when the network routes by BGP (`show bgp`).
    fn bgp(&self) -> Option<&calico::bird::Mesh> {
        None
    }

    /// The agents' BPF maps, when the data path is eBPF (`show bpf`, and the packet walker
    /// through [`crate::net::bpf::BpfDatapath`]).
    fn bpf(&self, _view: &View<'_>) -> Option<&cilium::Cilium> {
        None
    }

    /// After the lab was copied: the copy's daemons and nodes share their tables and
    /// datastore with each other, not with the original's (a copied handle still points at
    /// the original's).
    fn relink(&mut self, nodes: &mut NodeRuntimes);

    /// A copy of it, boxed (see [`Clone`] for `Box<dyn Network>`).
    fn boxed(&self) -> Box<dyn Network>;
}

impl Clone for Box<dyn Network> {
    fn clone(&self) -> Self {
        self.boxed()
    }
}

/// The network the lab starts with: flannel, host-gw backend.
pub(crate) fn default_network() -> Box<dyn Network> {
    Box::new(Flannel::default())
}

/// What a network's daemons are handed when the engine drives them, and nothing more: the
/// API objects they watch, the fault table (a node that is down answers nobody), the clock
/// and the call log for their log lines, and every node's runtime (its kernel, which the
/// node's own daemon programs).
pub(crate) struct Ctx<'a> {
    /// The API server's store, read as the daemons' informers do (flanneld: Nodes;
    /// calico-node and cilium-agent also pods, namespaces and NetworkPolicies).
    pub(crate) api: &'a Cluster,
    /// Armed faults: which nodes are down.
    pub(crate) faults: &'a Faults,
    /// The logical clock.
    pub(crate) clock: Millis,
    /// Where the daemons' log lines go.
    pub(crate) calls: &'a mut CallLog,
    /// Every node's runtime, by node name.
    pub(crate) nodes: &'a mut NodeRuntimes,
}

impl Ctx<'_> {
    /// The read-only part, for a view.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            api: self.api,
            nodes: self.nodes,
        }
    }
}

/// What a view of the network reads: the API objects and the nodes' runtimes.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    /// The API server's store.
    pub(crate) api: &'a Cluster,
    /// Every node's runtime, by node name.
    pub(crate) nodes: &'a NodeRuntimes,
}

/// What `network show` prints of the running network, as data: one line about how it is
/// deployed, one row per property (the last one per node), and a file its daemon wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Card {
    /// How it is deployed, after the name (starts with two spaces).
    pub(crate) deployed: &'static str,
    /// Property and value, in order; the last row is the per-node one (leases, blocks,
    /// pools).
    pub(crate) rows: Vec<(&'static str, String)>,
    /// A file on the first node, shown as `cat` prints it: node, path, contents.
    pub(crate) file: Option<(String, &'static str, String)>,
}

/// Per-node entries in one cell: the first six, then how many there are.
pub(crate) fn per_node(entries: Vec<String>) -> String {
    if entries.len() > 6 {
        format!("{} … ({} nodes)", entries[..6].join(", "), entries.len())
    } else if entries.is_empty() {
        "none (no nodes)".to_string()
    } else {
        entries.join(", ")
    }
}

/// One network the lab runs: its name, its column in `network compare`, and how it is
/// configured.
pub(crate) struct Implementation {
    /// The `--network` name.
    pub(crate) name: &'static str,
    /// Its cells in `network compare`, one per [`COMPARED`] row: what its model does.
    pub(crate) compare: [&'static str; COMPARED.len()],
    /// Its daemons, configured for a cluster CIDR, not yet started on any node (or why
    /// the CIDR will not do).
    pub(crate) build: fn(ipnet::IpNet) -> Result<Box<dyn Network>, String>,
}

/// The names `--network` and `network use` accept, in `network compare`'s order.
pub(crate) const IMPLEMENTATIONS: &[Implementation] = &[
    flannel::HOST_GW,
    flannel::VXLAN,
    calico::IMPLEMENTATION,
    cilium::agent::IMPLEMENTATION,
];

/// The properties `network compare` sets the implementations side by side on.
pub(crate) const COMPARED: [&str; 7] = [
    "encapsulation",
    "routing",
    "MTU",
    "IPAM",
    "masquerade",
    "NetworkPolicy",
    "look at it",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each implementation builds under its own name, and `network use` takes exactly the
    /// names of [`IMPLEMENTATIONS`] (the grammar keeps its own list for completion).
    #[test]
    fn every_implementation_is_built_by_its_name() {
        let cidr: ipnet::IpNet = "10.244.0.0/16".parse().unwrap();
        for i in IMPLEMENTATIONS {
            let network = (i.build)(cidr).unwrap();
            assert_eq!(network.name(), i.name);
            assert_eq!(network.cluster_cidr(), cidr);
            assert_eq!(network.boxed().name(), i.name);
            let line = format!("network use {}", i.name);
            assert!(
                matches!(crate::command::parse(&line), Ok(Some(_))),
                "{line}"
            );
        }
        assert!(crate::command::parse("network use weave").is_err());
    }

    /// Who enforces NetworkPolicy goes with the capabilities views read: the eBPF data
    /// path has the agents' maps, BGP has BIRD's mesh.
    #[test]
    fn capabilities_follow_the_implementation() {
        let api = Cluster::default();
        let nodes = NodeRuntimes::new();
        let view = View {
            api: &api,
            nodes: &nodes,
        };
        let cidr: ipnet::IpNet = "10.244.0.0/16".parse().unwrap();
        for i in IMPLEMENTATIONS {
            let network = (i.build)(cidr).unwrap();
            assert_eq!(
                network.bpf(&view).is_some(),
                network.enforcement() == Enforcement::Bpf,
                "{}",
                i.name
            );
            assert_eq!(
                network.bgp().is_some(),
                i.name == "calico-bgp",
                "{}",
                i.name
            );
        }
    }
}
