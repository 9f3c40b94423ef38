//! What the packet walker reads of an eBPF datapath (Cilium's): the endpoints the agent on
//! each node manages, its ipcache and the per-endpoint policy maps. The walker cannot see
//! the agent (it lives in a room above); the network implementation hands it a
//! [`BpfDatapath`] over its own state, the way the tc programs read the pinned maps.

use super::policy::Protocol;
use std::net::IpAddr;

/// An endpoint as bpf_lxc knows it (`struct endpoint_info` in `cilium_lxc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BpfEndpoint {
    /// The endpoint ID (1..4095).
    pub id: u16,
    /// The host-side device (`lxc…`).
    pub ifname: String,
    /// Its security identity.
    pub identity: u32,
    /// `namespace/name` of its pod.
    pub pod: String,
}

/// An ipcache lookup (`lookup_ip4_remote_endpoint`): the longest prefix holding the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IpcacheHit {
    /// The prefix that matched (`10.244.2.3/32`, `0.0.0.0/0`).
    pub prefix: String,
    /// The security identity of the address.
    pub identity: u32,
    /// The node to tunnel to, when the entry has one.
    pub tunnel: Option<IpAddr>,
}

/// One policy-map lookup at an endpoint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PolicyQuery<'q> {
    /// The node the endpoint is on.
    pub node: &'q str,
    /// The endpoint.
    pub endpoint: u16,
    /// Ingress (to-container) or egress (from-container).
    pub ingress: bool,
    /// The peer's security identity (the ipcache's, or the VNI's after decapsulation).
    pub peer: u32,
    /// The packet's source.
    pub src: IpAddr,
    /// The packet's destination.
    pub dst: IpAddr,
    /// Its protocol.
    pub proto: Protocol,
    /// Its destination port.
    pub dport: u16,
    /// The interface index of the endpoint's device (for the drop notification).
    pub ifindex: u32,
}

/// What the map said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BpfVerdict {
    /// Allowed.
    pub allowed: bool,
    /// The map's pinned name (`cilium_policy_01234`).
    pub map: String,
    /// Why, as the trace prints it: the winning key, or the drop reason and the key that
    /// was missing.
    pub detail: String,
    /// On a drop: the `cilium monitor --type drop` line.
    pub monitor: Option<String>,
}

/// The datapath state of every node's agent.
pub(crate) trait BpfDatapath {
    /// The endpoint on `node` holding `ip`, if it is a local endpoint there.
    fn endpoint(&self, node: &str, ip: IpAddr) -> Option<BpfEndpoint>;
    /// `node`'s ipcache entry for `ip`.
    fn ipcache(&self, node: &str, ip: IpAddr) -> Option<IpcacheHit>;
    /// The policy map lookup; `None` when there is no such endpoint.
    fn policy(&self, q: &PolicyQuery<'_>) -> Option<BpfVerdict>;
    /// A reserved identity's name (`host`, `world`, `remote-node`), for the hop text.
    fn identity_name(&self, id: u32) -> Option<String>;
}
