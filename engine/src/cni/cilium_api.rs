//! What `cilium-cni` reaches of cilium-agent over the agent's API socket
//! (`/var/run/cilium/cilium.sock`): the agent's configuration (`GET /v1/config`: device and
//! route MTU, the node's addressing) and its IPAM (`POST /v1/ipam`, `DELETE /v1/ipam/{ip}`).
//!
//! The agent owns IPAM; the plugin only asks. The lab keeps the agent's answer on the node
//! it runs on ([`crate::cni::host::Host::cilium`]): the agent writes it when it starts and
//! the plugin reads and allocates through it, as the socket would let it. No socket (the
//! agent is not running on the node) is the plugin's "unable to connect" error.
//!
//! IPAM mode `kubernetes` (`ipam.mode=kubernetes`, a real Cilium mode, simpler than the
//! default `cluster-pool`): the node's pool is `Node.spec.podCIDR`, which kube-controller-
//! manager allocated. Cilium's host-scope allocator (`pkg/ipam/hostscope.go`, over
//! Kubernetes' `ipallocator`) hands out a random free address, never the network or the
//! broadcast address; the lab hands them out in order, lowest free first, so that the router
//! IP (the agent's first allocation, at start) is `.1` and pods follow from `.2`.

use ipnet::Ipv4Net;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// cilium-agent's state on one node as its API serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentApi {
    /// The node's pod CIDR (`Node.spec.podCIDR`, IPAM mode kubernetes).
    pub pod_cidr: Ipv4Net,
    /// The router IP (`cilium_host`'s address; `CiliumInternalIP`), the pods' gateway.
    pub router_ip: Ipv4Addr,
    /// `DeviceMTU`: the MTU of the endpoints' devices (the underlay's, 1500).
    pub device_mtu: u32,
    /// `RouteMTU`: the MTU of the routes through the tunnel (device MTU − 50 for VXLAN).
    pub route_mtu: u32,
    /// Allocated addresses and who holds each (`router`, or the container ID).
    pub allocated: BTreeMap<Ipv4Addr, String>,
}

/// The owner the agent records for its own router IP.
pub(crate) const ROUTER_OWNER: &str = "router";

impl AgentApi {
    /// The agent on a node with `pod_cidr`: its first allocation is the router IP. `None`
    /// when the CIDR holds no usable address.
    pub fn start(pod_cidr: Ipv4Net, device_mtu: u32, route_mtu: u32) -> Option<Self> {
        let mut api = AgentApi {
            pod_cidr: pod_cidr.trunc(),
            router_ip: Ipv4Addr::UNSPECIFIED,
            device_mtu,
            route_mtu,
            allocated: BTreeMap::new(),
        };
        api.router_ip = api.allocate_next(ROUTER_OWNER).ok()?;
        Some(api)
    }

    /// `POST /v1/ipam`: the lowest free address for `owner`. The error is the agent's reply
    /// as the plugin reports it (composed: `ipallocator.ErrFull` is "range is full").
    pub(crate) fn allocate_next(&mut self, owner: &str) -> Result<Ipv4Addr, String> {
        let net = self.pod_cidr;
        let free = net
            .hosts()
            .filter(|ip| *ip != net.network() && *ip != net.broadcast())
            .find(|ip| !self.allocated.contains_key(ip));
        match free {
            Some(ip) => {
                self.allocated.insert(ip, owner.to_string());
                Ok(ip)
            }
            None => Err(format!(
                "unable to allocate IP via local cilium agent: [POST /ipam][502] postIpamFailure  range is full (pool {net})"
            )),
        }
    }

    /// `DELETE /v1/ipam/{ip}` for every address `owner` holds (a missing one is fine).
    pub(crate) fn release_owner(&mut self, owner: &str) {
        self.allocated.retain(|_, o| o != owner);
    }

    /// Addresses held by endpoints (the router IP left out).
    pub(crate) fn endpoints_in_use(&self) -> usize {
        self.allocated
            .values()
            .filter(|o| o.as_str() != ROUTER_OWNER)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_router_takes_the_first_address_and_pods_follow_without_the_broadcast() {
        let mut api = AgentApi::start("10.244.1.0/30".parse().unwrap(), 1500, 1450).unwrap();
        assert_eq!(api.router_ip.to_string(), "10.244.1.1");
        assert_eq!(api.allocate_next("c1").unwrap().to_string(), "10.244.1.2");
        assert!(
            api.allocate_next("c2")
                .unwrap_err()
                .contains("range is full")
        );
        api.release_owner("c1");
        assert_eq!(api.allocate_next("c3").unwrap().to_string(), "10.244.1.2");
        assert_eq!(api.endpoints_in_use(), 1);
    }
}
