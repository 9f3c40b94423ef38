//! cilium-agent's policy model, as pure functions of a [`ClusterNet`]: security identities,
//! endpoints, the ipcache of each node, each endpoint's policy map, the lookup bpf_lxc does,
//! and the CLI views (`cilium bpf policy get`, `cilium bpf ipcache list`, `cilium endpoint
//! list`, `cilium identity list`, the `cilium monitor` and `hubble observe` drop lines).
//!
//! The model follows Cilium v1.19/v1.20 defaults: tunnel routing (VXLAN), IPv4 only,
//! `enable-policy=default`, `allow-localhost=auto`, `policy-cidr-match-mode` empty,
//! `policyDefaultLocalCluster: true`. Sources are cited where each rule lives: the
//! identity rules in [`identity`], the ipcache in [`ipcache`], NetworkPolicy → map entries
//! and the lookup in [`policymap`], the output shapes in [`render`].
//!
//! Where Cilium departs from the Kubernetes semantics of [`crate::net::policy`] (the oracle)
//! the model keeps Cilium's behaviour; the property test in `prop_tests.rs` lists and
//! excludes exactly those cases.
//!
//! [`agent`] runs it on the nodes (`--network cilium`): the agent's devices, routes, IPAM
//! and conflist, and the datapath the packet walker reads.

pub mod agent;
pub mod identity;
pub mod ipcache;
pub mod policymap;
pub mod render;

#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;

pub use identity::{Identity, IdentityKind, IdentityTable, Label, NumericIdentity};
pub use ipcache::{IpCache, IpCacheEntry};
pub use policymap::{
    DropReason, Enforcement, MapVerdict, PolicyEntry, PolicyKey, PolicyMap, TrafficDirection,
};

use crate::net::policy::Protocol;
use crate::net::view::ClusterNet;
use crate::util::hash::{fnv64, id64, to_hex};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The first and last endpoint ID (`pkg/endpointmanager/idallocator`: `minID=1`,
/// `maxID=4095`).
pub(crate) const MIN_ENDPOINT_ID: u16 = 1;
/// See [`MIN_ENDPOINT_ID`].
pub(crate) const MAX_ENDPOINT_ID: u16 = 4095;

/// The host-side device of an endpoint: `lxc` + the first 12 hex digits of
/// SHA-256(container ID) (`pkg/datapath/connector`: 12 = IFNAMSIZ 16 − len("tmp") − 1).
pub(crate) fn lxc_name(container_id: &str) -> String {
    let digest = Sha256::digest(container_id.as_bytes());
    format!("lxc{}", &to_hex(&digest)[..12])
}

/// A Cilium endpoint: one pod with an IP on a node, its identity, device and policy map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiliumEndpoint {
    /// Endpoint ID, unique on its node (1..4095).
    pub id: u16,
    /// The node.
    pub node: String,
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The pod's IP.
    pub ip: IpAddr,
    /// Its security identity.
    pub identity: NumericIdentity,
    /// The container (sandbox) ID the CNI plugin was called with.
    pub container_id: String,
    /// The host-side device, `lxc…`.
    pub ifname: String,
    /// The endpoint's policy map (`cilium_policy_<id>`).
    pub policy: PolicyMap,
}

impl CiliumEndpoint {
    /// `namespace/name`.
    pub(crate) fn pod_key(&self) -> String {
        format!("{}/{}", self.namespace, self.pod)
    }
}

/// What one agent holds for its node: the ipcache and the local endpoints by ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAgent {
    /// The node name.
    pub node: String,
    /// The node's ipcache.
    pub ipcache: IpCache,
    /// Local endpoints by endpoint ID.
    pub endpoints: BTreeMap<u16, CiliumEndpoint>,
}

impl NodeAgent {
    /// What bpf_lxc decides for a packet at a local endpoint: the peer's identity from the
    /// ipcache (LPM), then the policy map lookup. `dport: None` is a packet without a port
    /// (looked up as port 0, so only port-wildcard entries match). `None` when there is no
    /// such endpoint.
    pub fn verdict(
        &self,
        endpoint: u16,
        direction: TrafficDirection,
        peer_ip: IpAddr,
        proto: Protocol,
        dport: Option<u16>,
    ) -> Option<MapVerdict> {
        let ep = self.endpoints.get(&endpoint)?;
        let peer = self.ipcache.identity_of(peer_ip);
        Some(ep.policy.lookup(
            peer,
            direction,
            policymap::proto_number(proto),
            dport.unwrap_or(0),
        ))
    }
}

/// The decision at one endpoint of a flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideVerdict {
    /// The node the endpoint is on.
    pub node: String,
    /// The endpoint ID.
    pub endpoint: u16,
    /// The endpoint's own identity.
    pub identity: NumericIdentity,
    /// What its policy map said.
    pub verdict: MapVerdict,
}

/// A flow judged as bpf_lxc judges it: egress at the source endpoint, ingress at the
/// destination endpoint. A side is `None` when that end is not a Cilium endpoint (a node,
/// an outside address): nothing enforces there (no host policies in the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowVerdict {
    /// At the source endpoint.
    pub egress: Option<SideVerdict>,
    /// At the destination endpoint.
    pub ingress: Option<SideVerdict>,
}

impl FlowVerdict {
    /// Both sides let it through.
    pub fn allowed(&self) -> bool {
        self.egress.as_ref().is_none_or(|s| s.verdict.allowed())
            && self.ingress.as_ref().is_none_or(|s| s.verdict.allowed())
    }

    #[cfg(test)]
    /// The side that dropped it, egress first (a packet dropped on egress never reaches
    /// the destination).
    pub(crate) fn dropped_at(&self) -> Option<(TrafficDirection, &SideVerdict)> {
        if let Some(s) = self.egress.as_ref().filter(|s| !s.verdict.allowed()) {
            return Some((TrafficDirection::Egress, s));
        }
        self.ingress
            .as_ref()
            .filter(|s| !s.verdict.allowed())
            .map(|s| (TrafficDirection::Ingress, s))
    }
}

/// The whole cluster as the Cilium agents see it: one identity table (cluster-wide, as
/// the CiliumIdentity objects are) and one [`NodeAgent`] per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cilium {
    /// Identities.
    pub identities: IdentityTable,
    /// Agents by node name.
    pub agents: BTreeMap<String, NodeAgent>,
}

impl Cilium {
    /// Build the agents' state from scratch. `container_ids` maps `namespace/name` to the
    /// pod's sandbox ID (what the CNI plugin got as `CNI_CONTAINERID`); a pod missing from
    /// it gets an ID derived from its key.
    pub fn build(net: &ClusterNet, container_ids: &BTreeMap<String, String>) -> Self {
        Self::update(None, net, container_ids)
    }

    /// Rebuild after a change, keeping the identity numbers and endpoint IDs of what
    /// still exists (Cilium keeps both for the object's life).
    pub fn update(
        previous: Option<&Cilium>,
        net: &ClusterNet,
        container_ids: &BTreeMap<String, String>,
    ) -> Self {
        let identities = match previous {
            Some(p) => IdentityTable::update(&p.identities, net),
            None => IdentityTable::build(net),
        };
        let ctx = policymap::Ctx {
            net,
            ids: &identities,
        };
        let mut agents = BTreeMap::new();
        for n in &net.nodes {
            let ipcache = IpCache::build(net, &identities, &n.name);
            let mut pods: Vec<_> = net
                .pods
                .iter()
                .filter(|p| p.node == n.name && p.ip.is_some())
                .collect();
            pods.sort_by_key(|p| p.key());
            let old = previous.and_then(|c| c.agents.get(&n.name));
            let keep = |key: &str| {
                old.and_then(|a| a.endpoints.values().find(|e| e.pod_key() == key))
                    .map(|e| e.id)
            };
            let mut endpoints: BTreeMap<u16, CiliumEndpoint> = BTreeMap::new();
            // Endpoints that keep their ID first, then the new ones, in pod order.
            let (mut order, new): (Vec<_>, Vec<_>) = pods
                .iter()
                .map(|p| (keep(&p.key()), *p))
                .partition(|(kept, _)| kept.is_some());
            order.extend(new);
            for (kept, p) in order {
                let key = p.key();
                let id = match kept.filter(|id| !endpoints.contains_key(id)) {
                    Some(id) => id,
                    None => free_endpoint_id(&endpoints, &n.name, &key),
                };
                let container_id = container_ids
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| id64(&["cilium-endpoint", &key]));
                let Some(ip) = p.ip else { continue };
                endpoints.insert(
                    id,
                    CiliumEndpoint {
                        id,
                        node: n.name.clone(),
                        namespace: p.namespace.clone(),
                        pod: p.name.clone(),
                        ip,
                        identity: identities.of_pod(&key).unwrap_or(identity::ID_UNKNOWN),
                        ifname: lxc_name(&container_id),
                        container_id,
                        policy: policymap::compute(&ctx, p),
                    },
                );
            }
            agents.insert(
                n.name.clone(),
                NodeAgent {
                    node: n.name.clone(),
                    ipcache,
                    endpoints,
                },
            );
        }
        Cilium { identities, agents }
    }

    /// The agent of a node.
    pub fn agent(&self, node: &str) -> Option<&NodeAgent> {
        self.agents.get(node)
    }

    /// The endpoint of a pod (`namespace/name`).
    pub(crate) fn endpoint_of_pod(&self, key: &str) -> Option<&CiliumEndpoint> {
        self.agents
            .values()
            .flat_map(|a| a.endpoints.values())
            .find(|e| e.pod_key() == key)
    }

    /// The endpoint holding an address.
    pub(crate) fn endpoint_by_ip(&self, ip: IpAddr) -> Option<&CiliumEndpoint> {
        self.agents
            .values()
            .flat_map(|a| a.endpoints.values())
            .find(|e| e.ip == ip)
    }

    /// Judge a packet from `src` to `dst`: egress at the source's endpoint (peer looked up
    /// in the source node's ipcache), ingress at the destination's endpoint (peer looked up
    /// in the destination node's ipcache; in tunnel mode the identity also rides in the
    /// VXLAN header, which carries the same number).
    pub fn flow(
        &self,
        src: IpAddr,
        dst: IpAddr,
        proto: Protocol,
        dport: Option<u16>,
    ) -> FlowVerdict {
        let side = |ep: &CiliumEndpoint, dir, peer| {
            let agent = self.agents.get(&ep.node)?;
            Some(SideVerdict {
                node: ep.node.clone(),
                endpoint: ep.id,
                identity: ep.identity,
                verdict: agent.verdict(ep.id, dir, peer, proto, dport)?,
            })
        };
        FlowVerdict {
            egress: self
                .endpoint_by_ip(src)
                .and_then(|ep| side(ep, TrafficDirection::Egress, dst)),
            ingress: self
                .endpoint_by_ip(dst)
                .and_then(|ep| side(ep, TrafficDirection::Ingress, src)),
        }
    }
}

/// A free endpoint ID on a node: FNV-64 of (node, pod) into 1..4095, probing upward
/// (Cilium's allocator picks at random; this one is deterministic). 0 when all 4095 are
/// taken (Cilium refuses the endpoint then).
fn free_endpoint_id(taken: &BTreeMap<u16, CiliumEndpoint>, node: &str, key: &str) -> u16 {
    let span = u64::from(MAX_ENDPOINT_ID - MIN_ENDPOINT_ID + 1);
    let start = fnv64(&["endpoint", node, key]) % span;
    (0..span)
        .map(|i| MIN_ENDPOINT_ID + ((start + i) % span) as u16)
        .find(|id| !taken.contains_key(id))
        .unwrap_or(0)
}
