//! Network daemons: the node agents a network implementation runs beside the CNI plugins.
//! The plugins set up one pod's interface when the runtime asks; a daemon programs what is
//! not about one pod: the routes to the other nodes' pod subnets, tunnel devices, their
//! neighbour and FDB entries, the node's own masquerade and forward rules, and the files the
//! plugins read (`/run/flannel/subnet.env`).
//!
//! The cluster runs one implementation at a time ([`Network`], `--network` / `network use`);
//! today that is flannel with its host-gw or VXLAN backend ([`flannel`]).

pub mod cilium;
pub mod flannel;

pub use flannel::{Backend, Flannel};

/// The network implementation the cluster runs: what `network show` describes.
pub type Network = Flannel;

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
];
