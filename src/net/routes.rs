//! Route tables in the host-gw model (Flannel host-gw, Calico BGP without encapsulation):
//! every node routes each peer's podCIDR via that peer's InternalIP on the uplink, which
//! needs the nodes to share one L2 segment (the next hop must be on-link).
//!
//! Node table (`ip route` on the node):
//! - own podCIDR on the bridge, `proto kernel scope link src <bridge address>`, present once
//!   the bridge has its address (the bridge plugin with isGateway sets it on the first ADD);
//! - the uplink subnet, `proto kernel scope link src <InternalIP>`;
//! - each peer's podCIDR `via <peer InternalIP> dev eth0` (peers without a podCIDR or an
//!   InternalIP, or whose InternalIP is not on-link, get no route).
//!
//! Pod table (`ip route` inside the pod netns, as the bridge plugin leaves it with
//! isDefaultGateway): `default via <gw> dev eth0` and the connected podCIDR route.

use super::NetError;
use super::view::{ClusterNet, NodeNet, PodNet};
use crate::cni::host::RouteEntry;
use ipnet::IpNet;
use std::net::IpAddr;

/// One route, with parsed fields (for lookups) and its `ip route` rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Destination; `None` is `default`.
    pub dst: Option<IpNet>,
    /// Next hop.
    pub via: Option<IpAddr>,
    /// Output device.
    pub dev: String,
    /// A connected route (`proto kernel scope link`).
    pub connected: bool,
    /// Preferred source.
    pub src: Option<IpAddr>,
}

impl Route {
    /// As `crate::cni::host::RouteEntry`, the type the node model uses.
    pub fn to_entry(&self) -> RouteEntry {
        RouteEntry {
            dst: self
                .dst
                .map(|d| d.to_string())
                .unwrap_or_else(|| "default".to_string()),
            via: self.via.map(|v| v.to_string()),
            dev: self.dev.clone(),
            proto_kernel: self.connected,
            scope_link: self.connected,
            src: self.src.map(|s| s.to_string()),
        }
    }

    /// The line as `ip route` prints it.
    pub fn to_ip_route(&self) -> String {
        self.to_entry().to_ip_route()
    }

    /// Does the route cover `ip`?
    pub fn covers(&self, ip: IpAddr) -> bool {
        match self.dst {
            None => ip.is_ipv4(),
            Some(net) => net.contains(&ip),
        }
    }

    fn prefix_len(&self) -> u8 {
        self.dst.map(|d| d.prefix_len()).unwrap_or(0)
    }
}

/// Longest-prefix match, as the kernel's FIB lookup does.
pub fn lookup(routes: &[Route], ip: IpAddr) -> Option<&Route> {
    routes
        .iter()
        .filter(|r| r.covers(ip))
        .max_by_key(|r| r.prefix_len())
}

/// Sort like `ip route`: default first, then by destination address and prefix length.
fn sort_routes(routes: &mut [Route]) {
    routes.sort_by_key(|r| match r.dst {
        None => (0u8, 0u128, 0u8),
        Some(IpNet::V4(n)) => (1, u128::from(u32::from(n.network())), n.prefix_len()),
        Some(IpNet::V6(n)) => (2, u128::from(n.network()), n.prefix_len()),
    });
}

fn node_or_err<'a>(net: &'a ClusterNet, node: &str) -> Result<&'a NodeNet, NetError> {
    net.node(node)
        .ok_or_else(|| NetError::NodeNotFound(node.to_string()))
}

/// Why a peer node gets no route on `node` (None when it gets one).
pub fn missing_peer_route(node: &NodeNet, peer: &NodeNet) -> Option<String> {
    let Some(cidr) = peer.pod_cidr else {
        return Some(format!("{} has no podCIDR", peer.name));
    };
    let Some(gw) = peer.internal_ip else {
        return Some(format!(
            "{} has no InternalIP to route {cidr} via",
            peer.name
        ));
    };
    let Some(uplink) = node.uplink_subnet() else {
        return Some(format!(
            "{} has no InternalIP (no uplink address)",
            node.name
        ));
    };
    if !uplink.contains(&gw) {
        return Some(format!(
            "{}'s InternalIP {gw} is not on {}'s segment {uplink} (host-gw needs the nodes on one L2 network)",
            peer.name, node.name
        ));
    }
    if node.pod_cidr == Some(cidr) {
        return Some(format!("{} uses the same podCIDR {cidr}", peer.name));
    }
    None
}

/// A node's routes, sorted as `ip route` shows them.
pub fn node_routes(net: &ClusterNet, node: &str) -> Result<Vec<Route>, NetError> {
    let n = node_or_err(net, node)?;
    let mut routes = Vec::new();
    if let (Some(cidr), Some(gw)) = (n.pod_cidr, n.gateway) {
        routes.push(Route {
            dst: Some(cidr.trunc()),
            via: None,
            dev: n.bridge.clone(),
            connected: true,
            src: Some(gw),
        });
    }
    if let (Some(uplink), Some(ip)) = (n.uplink_subnet(), n.internal_ip) {
        routes.push(Route {
            dst: Some(uplink),
            via: None,
            dev: n.uplink_dev.clone(),
            connected: true,
            src: Some(ip),
        });
    }
    let mut peers: Vec<&NodeNet> = net.nodes.iter().filter(|p| p.name != n.name).collect();
    peers.sort_by(|a, b| a.name.cmp(&b.name));
    for p in peers {
        if missing_peer_route(n, p).is_some() {
            continue;
        }
        if let (Some(cidr), Some(gw)) = (p.pod_cidr, p.internal_ip) {
            let dst = cidr.trunc();
            // The kernel refuses a second route to the same destination (File exists).
            if routes.iter().any(|r| r.dst == Some(dst)) {
                continue;
            }
            routes.push(Route {
                dst: Some(dst),
                via: Some(gw),
                dev: n.uplink_dev.clone(),
                connected: false,
                src: None,
            });
        }
    }
    sort_routes(&mut routes);
    Ok(routes)
}

/// A node's table as `ip route` lines.
pub fn node_table(net: &ClusterNet, node: &str) -> Result<Vec<String>, NetError> {
    Ok(node_routes(net, node)?
        .iter()
        .map(Route::to_ip_route)
        .collect())
}

/// The bridge address pods on this node use as gateway: the bridge's address, or the
/// first host of the podCIDR (what bridge's isGateway picks) if not set yet.
pub fn pod_gateway(node: &NodeNet) -> Option<IpAddr> {
    node.gateway.or_else(|| {
        node.pod_cidr.and_then(|c| {
            let c = c.trunc();
            c.hosts().next()
        })
    })
}

/// The routes inside a pod's netns (empty when the pod has no IP yet).
pub fn pod_routes_of(net: &ClusterNet, pod: &PodNet) -> Vec<Route> {
    let Some(ip) = pod.ip else {
        return Vec::new();
    };
    let Some(node) = net.node(&pod.node) else {
        return Vec::new();
    };
    let mut routes = Vec::new();
    if let Some(gw) = pod_gateway(node) {
        routes.push(Route {
            dst: None,
            via: Some(gw),
            dev: pod.ifname.clone(),
            connected: false,
            src: None,
        });
    }
    if let Some(cidr) = node.pod_cidr {
        routes.push(Route {
            dst: Some(cidr.trunc()),
            via: None,
            dev: pod.ifname.clone(),
            connected: true,
            src: Some(ip),
        });
    }
    sort_routes(&mut routes);
    routes
}

/// A pod's routes by namespace and name.
pub fn pod_routes(net: &ClusterNet, namespace: &str, pod: &str) -> Result<Vec<Route>, NetError> {
    let p = net
        .pod(namespace, pod)
        .ok_or_else(|| NetError::PodNotFound {
            namespace: namespace.to_string(),
            name: pod.to_string(),
        })?;
    Ok(pod_routes_of(net, p))
}

/// A pod's table as `ip route` lines.
pub fn pod_table(net: &ClusterNet, namespace: &str, pod: &str) -> Result<Vec<String>, NetError> {
    Ok(pod_routes(net, namespace, pod)?
        .iter()
        .map(Route::to_ip_route)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, cidr: &str, ip: &str, gw: Option<&str>) -> NodeNet {
        let mut n = NodeNet::new(name, cidr.parse().ok(), ip.parse().ok());
        n.gateway = gw.and_then(|g| g.parse().ok());
        n
    }

    fn two_nodes() -> ClusterNet {
        ClusterNet {
            nodes: vec![
                node("node-1", "10.244.1.0/24", "192.168.0.1", Some("10.244.1.1")),
                node("node-2", "10.244.2.0/24", "192.168.0.2", None),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn node_table_host_gw() {
        let net = two_nodes();
        assert_eq!(
            node_table(&net, "node-1").unwrap(),
            vec![
                "10.244.1.0/24 dev cni0 proto kernel scope link src 10.244.1.1",
                "10.244.2.0/24 via 192.168.0.2 dev eth0",
                "192.168.0.0/24 dev eth0 proto kernel scope link src 192.168.0.1",
            ]
        );
        // node-2 has no pod yet: its bridge has no address, so no cni0 route.
        assert_eq!(
            node_table(&net, "node-2").unwrap(),
            vec![
                "10.244.1.0/24 via 192.168.0.1 dev eth0",
                "192.168.0.0/24 dev eth0 proto kernel scope link src 192.168.0.2",
            ]
        );
        assert_eq!(
            node_table(&net, "node-9").unwrap_err().to_string(),
            "nodes \"node-9\" not found"
        );
    }

    #[test]
    fn peers_without_cidr_or_ip_get_no_route() {
        let mut net = two_nodes();
        net.nodes
            .push(NodeNet::new("node-3", None, "192.168.0.3".parse().ok()));
        net.nodes
            .push(NodeNet::new("node-4", "10.244.4.0/24".parse().ok(), None));
        net.nodes.push(NodeNet::new(
            "node-5",
            "10.244.5.0/24".parse().ok(),
            "10.0.0.5".parse().ok(),
        ));
        let t = node_table(&net, "node-1").unwrap();
        assert_eq!(t.len(), 3, "{t:?}");
        let n1 = net.node("node-1").unwrap();
        assert_eq!(
            missing_peer_route(n1, net.node("node-4").unwrap()).unwrap(),
            "node-4 has no InternalIP to route 10.244.4.0/24 via"
        );
        assert!(
            missing_peer_route(n1, net.node("node-5").unwrap())
                .unwrap()
                .contains("not on node-1's segment 192.168.0.0/24")
        );
    }

    #[test]
    fn pod_table_and_lookup() {
        let mut net = two_nodes();
        let mut web = PodNet::new("default", "web", "node-1");
        web.ip = "10.244.1.2".parse().ok();
        net.pods.push(web);
        net.pods.push(PodNet::new("default", "pending", "node-1"));
        assert_eq!(
            pod_table(&net, "default", "web").unwrap(),
            vec![
                "default via 10.244.1.1 dev eth0",
                "10.244.1.0/24 dev eth0 proto kernel scope link src 10.244.1.2",
            ]
        );
        assert!(pod_table(&net, "default", "pending").unwrap().is_empty());
        let routes = node_routes(&net, "node-1").unwrap();
        let r = lookup(&routes, "10.244.2.7".parse().unwrap()).unwrap();
        assert_eq!(r.via, "192.168.0.2".parse().ok());
        assert!(lookup(&routes, "8.8.8.8".parse().unwrap()).is_none());
        let proutes = pod_routes(&net, "default", "web").unwrap();
        assert_eq!(
            lookup(&proutes, "10.244.1.9".parse().unwrap()).unwrap().dst,
            "10.244.1.0/24".parse().ok()
        );
        assert_eq!(
            lookup(&proutes, "8.8.8.8".parse().unwrap()).unwrap().dst,
            None
        );
    }
}
