//! cilium-agent on every node, as the cilium DaemonSet runs it with the Helm defaults
//! `routingMode: tunnel`, `tunnelProtocol: vxlan`, and `ipam.mode: kubernetes` (the lab's
//! choice: a real mode, simpler than the default `cluster-pool`; the node's pool is its
//! `Node.spec.podCIDR`).
//!
//! On a node it starts on, the agent (and the DaemonSet's `install-cni-binaries` init
//! container, which copies `cilium-cni` to `/opt/cni/bin`):
//! - allocates its router IP from IPAM (the first allocation) and creates the veth pair
//!   `cilium_host` (holding the router IP as a /32: the pods' gateway) / `cilium_net`, and
//!   `cilium_vxlan` (VXLAN in external/metadata mode, UDP 8472: one device for every peer,
//!   the tunnel endpoint chosen per packet from the ipcache);
//! - installs the routes tunnel mode needs on the host (`pkg/datapath/linux/node.go`,
//!   `createNodeRouteSpec`): `<router IP> dev cilium_host proto kernel scope link`, its own
//!   podCIDR `via <router IP> dev cilium_host proto kernel src <router IP>` and every other
//!   node's podCIDR the same with `mtu 1450` (the route MTU: device MTU − 50 of VXLAN
//!   overhead);
//! - writes `/etc/cni/net.d/05-cilium.conflist` once it is ready
//!   (`write-cni-conf-when-ready`, `daemon/cmd/cni/config.go`, chaining mode none);
//! - serves its API on `/var/run/cilium/cilium.sock` ([`crate::cni::cilium_api`]);
//! - computes identities, the ipcache and every local endpoint's policy map
//!   ([`super::Cilium`]) and loads bpf_lxc on each endpoint's `lxc…` device. NetworkPolicy
//!   lives in those maps: the agent writes no iptables rule for it.
//!
//! Verified against real output (blog posts and issues quoting `ip route` on Cilium nodes):
//! the route texts above, `cilium_host` holding a /32, pod routes. Not confirmed: the exact
//! `ip -d link` line of `cilium_vxlan` (the lab prints `vxlan external id 0 … dstport
//! 8472`), and whether 1.20 writes `cniVersion` 1.0.0 (users report it; the template in
//! `daemon/cmd/cni/config.go` read here says 0.3.1, which the lab writes).
//!
//! Left out: `cni.exclusive` (the agent renames other configs to `*.cilium_bak`; the lab
//! leaves them, the conflist sorts first anyway), the health endpoint (`lxc_health`),
//! kube-proxy replacement, masquerading (Helm's default is iptables masquerade,
//! `enableIPv4Masquerade: true` with `bpf.masquerade: false`, for traffic leaving the
//! cluster CIDR: the lab's traces to the world see pod sources), conntrack and replies,
//! CiliumNode objects (the lab reads the Node objects).

use super::Cilium;
use super::identity::reserved_name;
use super::policymap::{MapVerdict, TrafficDirection, proto_number};
use super::render::{DropEvent, Packet};
use crate::cni::cilium_api::AgentApi;
use crate::cni::host::{Host, Link, LinkKind, Mac, RouteDst, RouteEntry, Vxlan};
use crate::net::ClusterNet;
use crate::net::bpf::{BpfDatapath, BpfEndpoint, BpfVerdict, IpcacheHit, PolicyQuery};
use crate::net::trace::Enforcement;
use crate::node::{NodeRuntime, NodeRuntimes};
use ipnet::{IpNet, Ipv4Net};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// The conflist the agent writes (`cniConfigs["none"]`, `enable-debug` false, the default
/// `cni-log-file`), byte for byte as the template renders (it starts with a newline).
pub(crate) const CONFLIST: &str = "\n{\n  \"cniVersion\": \"0.3.1\",\n  \"name\": \"cilium\",\n  \"plugins\": [\n    {\n       \"type\": \"cilium-cni\",\n       \"enable-debug\": false,\n       \"log-file\": \"/var/run/cilium/cilium-cni.log\"\n    }\n  ]\n}";
/// The file it writes it to.
pub(crate) const CONFLIST_NAME: &str = "05-cilium.conflist";
/// The host device holding the router IP.
pub(crate) const HOST_DEV: &str = "cilium_host";
/// Its veth peer.
pub(crate) const NET_DEV: &str = "cilium_net";
/// The tunnel device.
pub(crate) const VXLAN_DEV: &str = "cilium_vxlan";
/// The VXLAN port (the Linux default Cilium keeps, `tunnel-port`).
pub(crate) const VXLAN_PORT: u16 = 8472;
/// VXLAN's overhead over IPv4 (`pkg/mtu`: `TunnelOverheadIPv4`).
pub(crate) const TUNNEL_OVERHEAD: u32 = 50;
/// The source port the lab gives a traced packet in drop notifications (the first of
/// Linux's ephemeral range; the walker follows no sockets).
pub(crate) const TRACE_SPORT: u16 = 32768;

/// One node as the agents see it.
#[derive(Debug, Clone, Copy)]
pub struct CiliumNode<'a> {
    /// The node's name.
    pub name: &'a str,
    /// `spec.podCIDR` (IPAM mode kubernetes waits for it).
    pub pod_cidr: Option<Ipv4Net>,
    /// Its InternalIP.
    pub ip: Option<Ipv4Addr>,
}

/// Cilium on every node: the cluster CIDR it was started with, and the agents' policy
/// state (identities, ipcaches, endpoints and their maps).
#[derive(Debug, Clone)]
pub struct CiliumNetwork {
    /// The cluster's pod CIDR (what kube-controller-manager cut the podCIDRs from).
    pub cidr: IpNet,
    /// The agents' state, built from the cluster the first time something reads it after
    /// a change (see [`CiliumNetwork::state`]).
    cache: std::sync::OnceLock<Cilium>,
    /// The state built last, which keeps identity numbers and endpoint IDs stable.
    prev: Option<Cilium>,
    /// Every agent's router IP (`cilium_host`), as the CiliumNode objects publish them.
    routers: BTreeMap<String, Ipv4Addr>,
    /// What the last pass ran on.
    seen: Option<Seen>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    cluster_rv: u64,
    nodes: Vec<(String, Option<Ipv4Net>, Option<Ipv4Addr>)>,
}

impl CiliumNetwork {
    /// Cilium on the cluster CIDR `cidr`.
    pub fn new(cidr: IpNet) -> Result<Self, String> {
        if !matches!(cidr, IpNet::V4(_)) {
            return Err(format!("{cidr}: the lab's Cilium runs IPv4 only"));
        }
        Ok(CiliumNetwork {
            cidr,
            cache: std::sync::OnceLock::new(),
            prev: None,
            routers: BTreeMap::new(),
            seen: None,
        })
    }

    /// The agent starts on a node with a podCIDR: IPAM, the router IP, the devices, then
    /// the conflist (written when ready).
    pub(crate) fn install_on(rt: &mut NodeRuntime, pod_cidr: Ipv4Net) {
        let uplink = rt
            .host
            .root
            .links
            .get("eth0")
            .map(|l| l.mtu)
            .unwrap_or(1500);
        let Some(api) = AgentApi::start(pod_cidr, uplink, uplink - TUNNEL_OVERHEAD) else {
            return;
        };
        let h = &mut rt.host;
        let router = api.router_ip;
        let node = h.node.clone();
        let mut host_dev = Link::new(
            HOST_DEV,
            LinkKind::Veth {
                peer: NET_DEV.into(),
                peer_netns: None,
            },
            Mac(crate::util::hash::mac_bytes(&[&node, HOST_DEV])),
            uplink,
        );
        host_dev.up = true;
        host_dev.addrs.extend(ipnet::IpNet::new(router.into(), 32));
        let mut net_dev = Link::new(
            NET_DEV,
            LinkKind::Veth {
                peer: HOST_DEV.into(),
                peer_netns: None,
            },
            Mac(crate::util::hash::mac_bytes(&[&node, NET_DEV])),
            uplink,
        );
        net_dev.up = true;
        // External (collect_metadata) mode: no fixed VNI or remote; `local` and `dev` stay
        // empty, bpf_overlay sets the tunnel key per packet.
        let mut vxlan = Link::new(
            VXLAN_DEV,
            LinkKind::Vxlan(Box::new(Vxlan {
                vni: 0,
                local: String::new(),
                dev: String::new(),
                port: VXLAN_PORT,
                learning: false,
            })),
            Mac(crate::util::hash::mac_bytes(&[&node, VXLAN_DEV])),
            uplink,
        );
        vxlan.up = true;
        for l in [host_dev, net_dev, vxlan] {
            h.root.links.insert(l.name.clone(), l);
        }
        h.cilium = Some(api);
        rt.confdir
            .files
            .insert(CONFLIST_NAME.to_string(), CONFLIST.to_string().into());
        rt.reload_network();
    }

    /// The agents are removed from every node with what they programmed (the endpoints'
    /// `lxc…` devices stay with their pods, as they do when the DaemonSet is deleted).
    pub(crate) fn uninstall(hosts: &mut NodeRuntimes) {
        for rt in hosts.values_mut() {
            if rt.confdir.files.remove(CONFLIST_NAME).is_some() {
                rt.reload_network();
            }
            let h = &mut rt.host;
            h.cilium = None;
            for d in [HOST_DEV, NET_DEV, VXLAN_DEV] {
                h.root.links.remove(d);
            }
            h.root.routes.retain(|r| r.dev != HOST_DEV);
        }
    }

    fn inputs(nodes: &[CiliumNode<'_>], cluster_rv: u64) -> Seen {
        Seen {
            cluster_rv,
            nodes: nodes
                .iter()
                .map(|n| (n.name.to_string(), n.pod_cidr, n.ip))
                .collect(),
        }
    }

    /// Whether the last pass ran on these inputs.
    pub(crate) fn up_to_date(&self, nodes: &[CiliumNode<'_>], cluster_rv: u64) -> bool {
        self.seen.as_ref() == Some(&Self::inputs(nodes, cluster_rv))
    }

    /// One pass of every node's agent: start where it is not running and program the
    /// tunnel routes (when the nodes changed); the identities, ipcaches and policy maps are
    /// rebuilt from the cluster when next read ([`CiliumNetwork::state`]), as the agents'
    /// watches would have caught up by then. True when anything changed.
    pub fn reconcile(
        &mut self,
        nodes: &[CiliumNode<'_>],
        cluster_rv: u64,
        hosts: &mut NodeRuntimes,
    ) -> bool {
        let seen = Self::inputs(nodes, cluster_rv);
        if self.seen.as_ref() == Some(&seen) {
            return false;
        }
        let nodes_changed = self.seen.as_ref().is_none_or(|s| s.nodes != seen.nodes);
        if nodes_changed {
            for n in nodes {
                let (Some(rt), Some(cidr)) = (hosts.get_mut(n.name), n.pod_cidr) else {
                    continue;
                };
                if rt.host.cilium.is_none() {
                    Self::install_on(rt, cidr);
                }
            }
            self.routers = hosts
                .iter()
                .filter_map(|(n, rt)| rt.host.cilium.as_ref().map(|a| (n.clone(), a.router_ip)))
                .collect();
            for n in nodes {
                let Some(rt) = hosts.get_mut(n.name) else {
                    continue;
                };
                program_routes(&mut rt.host, n.name, nodes);
            }
        }
        if let Some(built) = self.cache.take() {
            self.prev = Some(built);
        }
        self.seen = Some(seen);
        true
    }

    /// The agents' state now: built from the cluster (`inputs()`: the network view and
    /// the pods' sandbox IDs, `namespace/name` → ID) on the first read after a change.
    pub fn state(
        &self,
        inputs: impl FnOnce() -> (ClusterNet, BTreeMap<String, String>),
    ) -> &Cilium {
        self.cache.get_or_init(|| {
            let (mut net, container_ids) = inputs();
            // The ipcache holds every node's router IP (`cilium_host`): the agents learn
            // them from the CiliumNode objects, which the lab reads off the hosts.
            for nn in &mut net.nodes {
                if let Some(r) = self.routers.get(&nn.name) {
                    nn.gateway = Some(IpAddr::V4(*r));
                }
            }
            Cilium::update(self.prev.as_ref(), &net, &container_ids)
        })
    }
}

/// Cilium, tunnel mode: VXLAN between nodes, identities and per-endpoint BPF policy maps.
pub(crate) const IMPLEMENTATION: crate::netd::Implementation = crate::netd::Implementation {
    name: "cilium",
    compare: [
        "VXLAN: cilium_vxlan, UDP 8472, the VNI carries the sender's security identity",
        "<podCIDR> via <router IP> dev cilium_host; bpf_lxc redirects by the ipcache's tunnel endpoint",
        "1500 on devices, mtu 1450 on the tunnel routes and the pods' default route",
        "the agent (ipam kubernetes): the node's podCIDR, router IP first; a /32 per pod",
        "the agent's iptables masquerade (not modelled)",
        "eBPF: bpf_lxc at each lxc device, per-endpoint policy maps keyed by identity",
        "show bpf, show bpf --policy POD, show bpf --identities",
    ],
    build: |cidr| Ok(Box::new(CiliumNetwork::new(cidr)?)),
};

impl CiliumNetwork {
    /// Every node's cilium-agent takes in what changed: nodes (podCIDR, InternalIP), pods,
    /// policies, namespaces, and the pods' sandbox IDs (the endpoints' container IDs, as
    /// the CNI plugin passed them). Cheap when nothing did.
    fn watch(&mut self, cx: &mut crate::netd::Ctx<'_>) {
        let nodes: Vec<CiliumNode<'_>> = cx
            .api
            .nodes
            .values()
            .map(|n| CiliumNode {
                name: n.name(),
                pod_cidr: n.spec.pod_cidr.parse().ok(),
                ip: n.status.internal_ip().and_then(|i| i.parse().ok()),
            })
            .collect();
        let rv = cx.api.revs.resource_version;
        if self.up_to_date(&nodes, rv) {
            return;
        }
        self.reconcile(&nodes, rv, cx.nodes);
    }
}

impl crate::netd::Network for CiliumNetwork {
    fn name(&self) -> &'static str {
        IMPLEMENTATION.name
    }

    fn cluster_cidr(&self) -> IpNet {
        self.cidr
    }

    fn enforcement(&self) -> Enforcement {
        Enforcement::Bpf
    }

    fn start(&mut self, cx: &mut crate::netd::Ctx<'_>) {
        self.watch(cx);
    }

    fn node_added(&mut self, cx: &mut crate::netd::Ctx<'_>, _node: &str) {
        self.watch(cx);
    }

    fn sync(&mut self, cx: &mut crate::netd::Ctx<'_>) {
        self.watch(cx);
    }

    fn stop(&mut self, nodes: &mut NodeRuntimes) {
        CiliumNetwork::uninstall(nodes);
    }

    fn started(&self) -> &'static str {
        "cilium-agent started on every node with a podCIDR: cilium_host, cilium_net, cilium_vxlan and the tunnel routes; it wrote 05-cilium.conflist (cilium-cni) to /etc/cni/net.d"
    }

    fn routing(&self) -> &'static str {
        "Cilium tunnels by VXLAN to the node the ipcache names"
    }

    fn card(&self, view: &crate::netd::View<'_>) -> crate::netd::Card {
        let pools: Vec<String> = view
            .api
            .nodes
            .values()
            .map(|n| {
                match view
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
        let rows: Vec<(&'static str, String)> = vec![
            ("routing", "tunnel: every node routes each podCIDR `via <router IP> dev cilium_host` (its own without, the others' with mtu 1450); bpf_lxc at each pod's lxc… device looks the destination up in the ipcache and redirects to a local endpoint or encapsulates to the ipcache's tunnel endpoint (`show bpf NODE`)".to_string()),
            ("encapsulation", format!("VXLAN on cilium_vxlan (external mode, UDP {VXLAN_PORT}): the tunnel endpoint comes from the ipcache per packet, the VNI carries the source's security identity; 50 bytes of overhead")),
            ("MTU", "devices 1500 (eth0's); the tunnel routes and the pods' default route say mtu 1450 (route MTU = device MTU − 50)".to_string()),
            ("IPAM", "kubernetes: each node's agent hands out addresses from its Node.spec.podCIDR (the first one is its router IP on cilium_host); a pod gets a /32 on eth0 with `default via <router IP> dev eth0 mtu 1450` and `<router IP> dev eth0 scope link`".to_string()),
            ("masquerade", format!("Helm's default is iptables masquerading (enableIPv4Masquerade true, bpf.masquerade false) of traffic from the pods to outside {}; not modelled: traces keep the pod source", self.cidr)),
            ("NetworkPolicy", "enforced by bpf_lxc at each endpoint's lxc device with per-endpoint policy maps (cilium_policy_<id>, keyed by the peer's security identity); `show bpf NODE --policy POD`, `show bpf NODE --identities`".to_string()),
            ("cluster CIDR", format!("{} (the podCIDRs kube-controller-manager allocated)", self.cidr)),
            ("pools", crate::netd::per_node(pools)),
        ];
        crate::netd::Card {
            deployed: "  Cilium as its Helm chart deploys it (routingMode tunnel, tunnelProtocol vxlan) with ipam.mode kubernetes: cilium-agent on every node",
            rows,
            file: None,
        }
    }

    /// Built from the cluster on the first read after a change (see
    /// [`CiliumNetwork::state`]).
    fn bpf(&self, view: &crate::netd::View<'_>) -> Option<&Cilium> {
        Some(self.state(|| {
            (
                crate::netd::view::cluster_net(view),
                crate::netd::view::sandbox_ids(view),
            )
        }))
    }

    /// Nothing to hand out again: the agents share no table or datastore with the nodes
    /// (each node's agent API is copied with its host).
    fn relink(&mut self, _nodes: &mut NodeRuntimes) {}

    fn boxed(&self) -> Box<dyn crate::netd::Network> {
        Box::new(self.clone())
    }
}

/// The host routes of tunnel mode on `node`: its router IP, its own podCIDR, and every
/// other agent's podCIDR with the route MTU. Replaced whole on each pass.
fn program_routes(host: &mut Host, node: &str, nodes: &[CiliumNode<'_>]) {
    let Some(api) = host.cilium.as_ref() else {
        return;
    };
    let router = std::net::IpAddr::from(api.router_ip);
    let route_mtu = api.route_mtu;
    let mut to_router = RouteEntry::static_route(RouteDst::Host(router), None, HOST_DEV);
    to_router.proto_kernel = true;
    to_router.scope_link = true;
    let mut routes = vec![to_router];
    for n in nodes {
        let Some(cidr) = n.pod_cidr else { continue };
        let dst = RouteDst::Net(cidr.trunc().into());
        let mut route = RouteEntry::static_route(dst, Some(router), HOST_DEV)
            .with_src(Some(router))
            .with_mtu((n.name != node).then_some(route_mtu));
        route.proto_kernel = true;
        routes.push(route);
    }
    host.root.routes.retain(|r| r.dev != HOST_DEV);
    host.root.routes.extend(routes);
}

/// The agents' maps, as the walker reads them.
impl BpfDatapath for Cilium {
    fn endpoint(&self, node: &str, ip: IpAddr) -> Option<BpfEndpoint> {
        let agent = self.agent(node)?;
        agent
            .endpoints
            .values()
            .find(|e| e.ip == ip)
            .map(|e| BpfEndpoint {
                id: e.id,
                ifname: e.ifname.clone(),
                identity: e.identity,
                pod: e.pod_key(),
            })
    }

    fn ipcache(&self, node: &str, ip: IpAddr) -> Option<IpcacheHit> {
        let e = self.agent(node)?.ipcache.lookup(ip)?;
        Some(IpcacheHit {
            prefix: e.prefix.to_string(),
            identity: e.identity,
            tunnel: e.has_tunnel.then_some(e.tunnel_endpoint),
        })
    }

    fn policy(&self, q: &PolicyQuery<'_>) -> Option<BpfVerdict> {
        let ep = self.agent(q.node)?.endpoints.get(&q.endpoint)?;
        let dir = if q.ingress {
            TrafficDirection::Ingress
        } else {
            TrafficDirection::Egress
        };
        let proto = proto_number(q.proto);
        let v = ep.policy.lookup(q.peer, dir, proto, q.dport);
        let map = format!("cilium_policy_{:05}", ep.id);
        let name = |id: u32| match reserved_name(id) {
            Some(n) => format!("{id} (reserved:{n})"),
            None => id.to_string(),
        };
        let (src_id, dst_id) = if q.ingress {
            (q.peer, ep.identity)
        } else {
            (ep.identity, q.peer)
        };
        let proto_name = super::policymap::proto_name(proto);
        Some(match v {
            MapVerdict::Allow { key, .. } => BpfVerdict {
                allowed: true,
                map,
                detail: format!(
                    "identity {} → {}, key: identity {} {} {}",
                    name(src_id),
                    name(dst_id),
                    name(key.identity),
                    dir.as_str(),
                    key.port_proto()
                ),
                monitor: None,
            },
            MapVerdict::Drop { reason, .. } => {
                let event = DropEvent {
                    direction: dir,
                    reason,
                    src_identity: src_id,
                    dst_identity: dst_id,
                    dst_endpoint: if q.ingress { ep.id } else { 0 },
                    ifindex: q.ifindex,
                    packet: Packet {
                        src: q.src,
                        sport: TRACE_SPORT,
                        dst: q.dst,
                        dport: q.dport,
                        proto: q.proto,
                    },
                    src_pod: self.endpoint_by_ip(q.src).map(|e| e.pod_key()),
                    dst_pod: self.endpoint_by_ip(q.dst).map(|e| e.pod_key()),
                };
                let missing = if reason == super::DropReason::PolicyDenied {
                    format!(
                        "no entry for identity {} or 0 {} {}/{proto_name}",
                        q.peer,
                        dir.as_str(),
                        q.dport
                    )
                } else {
                    "a deny entry matches".to_string()
                };
                BpfVerdict {
                    allowed: false,
                    map,
                    detail: format!(
                        "{} ({}): identity {} → {}, {missing}",
                        reason.text(),
                        reason.code(),
                        name(src_id),
                        name(dst_id)
                    ),
                    monitor: Some(event.monitor_line()),
                }
            }
        })
    }

    fn identity_name(&self, id: u32) -> Option<String> {
        reserved_name(id)
            .filter(|_| id != 0)
            .map(|n| format!("reserved:{n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_and_the_agent_name_the_endpoint_device_alike() {
        for id in ["abc", "0123456789abcdef", ""] {
            assert_eq!(
                crate::cni::plugins::cilium::lxc_name(id),
                super::super::lxc_name(id)
            );
        }
    }

    #[test]
    fn the_conflist_is_the_template_rendered() {
        let v: serde_json::Value = serde_json::from_str(CONFLIST).unwrap();
        assert_eq!(v["cniVersion"], "0.3.1");
        assert_eq!(v["plugins"][0]["type"], "cilium-cni");
        assert_eq!(
            v["plugins"][0]["log-file"],
            "/var/run/cilium/cilium-cni.log"
        );
    }
}
