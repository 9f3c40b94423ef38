//! `cilium_ipcache`: the LPM map from prefix to security identity and tunnel endpoint that
//! bpf_lxc consults for the peer of every packet (`pkg/maps/ipcache/ipcache.go`).

use super::identity::{ID_HOST, ID_REMOTE_NODE, ID_WORLD, IdentityTable, NumericIdentity};
use crate::net::view::ClusterNet;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// One ipcache value (`RemoteEndpointInfo`): identity, encryption key, tunnel endpoint and
/// flags. The lab does no IPsec, so `encrypt_key` stays 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpCacheEntry {
    /// The prefix (a `/32` for pods and node addresses).
    pub prefix: IpNet,
    /// The security identity of whoever holds addresses in the prefix.
    pub identity: NumericIdentity,
    /// IPsec key index (always 0 here).
    pub encrypt_key: u8,
    /// The node to tunnel to for this prefix, `0.0.0.0` when local or not tunnelled.
    pub tunnel_endpoint: IpAddr,
    /// `hastunnel` when `tunnel_endpoint` is set (the other flags, `skiptunnel`,
    /// `ipv6tunnel`, `remotecluster`, do not arise in the lab).
    pub has_tunnel: bool,
}

impl IpCacheEntry {
    /// `<none>` or the flag names, as `cilium bpf ipcache list` prints them.
    pub(crate) fn flags_text(&self) -> &'static str {
        if self.has_tunnel {
            "hastunnel"
        } else {
            "<none>"
        }
    }
}

/// One node's ipcache. Every node holds every prefix; what differs is the identity of the
/// nodes' own addresses (host on its own node, remote-node elsewhere) and the tunnel
/// endpoint (none for what is local).
///
/// Entries (default tunnel mode, VXLAN):
/// - `0.0.0.0/0` → 2 (world);
/// - the node's own InternalIP and `cilium_host` address (the lab's gateway) → 1 (host);
/// - another node's InternalIP → 6 (remote-node), reached on the underlay (no tunnel);
///   its `cilium_host` address → 6 via the tunnel to that node;
/// - each pod with an IP → its identity, tunnel endpoint its node's InternalIP when the pod
///   is remote, `0.0.0.0` when local (the reference's caveat: local pods are not
///   tunnelled, so nothing else can sit there);
/// - each CIDR prefix the policies name → its CIDR identity, unless a pod or node owns
///   that exact prefix (the endpoint's own entry takes precedence in the ipcache metadata).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpCache {
    /// The node whose view this is.
    pub node: String,
    /// Entries by prefix.
    pub entries: BTreeMap<IpNet, IpCacheEntry>,
}

const UNSPECIFIED: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

impl IpCache {
    /// The ipcache the agent on `node` programs.
    pub fn build(net: &ClusterNet, ids: &IdentityTable, node: &str) -> Self {
        let mut entries = BTreeMap::new();
        let mut put = |prefix: IpNet, identity, tunnel: Option<IpAddr>| {
            entries.insert(
                prefix,
                IpCacheEntry {
                    prefix,
                    identity,
                    encrypt_key: 0,
                    tunnel_endpoint: tunnel.unwrap_or(UNSPECIFIED),
                    has_tunnel: tunnel.is_some(),
                },
            );
        };
        let world = IpNet::V4(ipnet::Ipv4Net::default());
        put(world, ID_WORLD, None);
        for (prefix, id) in ids.cidrs() {
            put(*prefix, id, None);
        }
        for n in &net.nodes {
            let local = n.name == node;
            let id = if local { ID_HOST } else { ID_REMOTE_NODE };
            if let Some(ip) = n.internal_ip {
                put(IpNet::from(ip), id, None);
            }
            if let Some(gw) = n.gateway {
                let tunnel = if local { None } else { n.internal_ip };
                put(IpNet::from(gw), id, tunnel);
            }
        }
        for p in &net.pods {
            let (Some(ip), Some(id)) = (p.ip, ids.of_pod(&p.key())) else {
                continue;
            };
            let tunnel = if p.node == node {
                None
            } else {
                net.node(&p.node).and_then(|n| n.internal_ip)
            };
            put(IpNet::from(ip), id, tunnel);
        }
        IpCache {
            node: node.to_string(),
            entries,
        }
    }

    /// The longest-prefix match for an address: what bpf_lxc's `lookup_ip4_remote_endpoint`
    /// returns. `None` only for an address family without a `/0` entry (IPv6 in the lab).
    pub fn lookup(&self, ip: IpAddr) -> Option<&IpCacheEntry> {
        self.entries
            .values()
            .filter(|e| e.prefix.contains(&ip))
            .max_by_key(|e| e.prefix.prefix_len())
    }

    /// The identity of an address, world (2) when nothing more specific matches.
    pub(crate) fn identity_of(&self, ip: IpAddr) -> NumericIdentity {
        self.lookup(ip).map_or(ID_WORLD, |e| e.identity)
    }
}
