//! The path of one packet through the nodes' kernels, hop by hop, read from the state the
//! plugins and the network daemon wrote ([`crate::cni::host::Host`]): the routing table of
//! the namespace it is in (longest prefix; for one prefix the first route), the veth pair
//! to the other namespace, the bridge it is a port of (the pods on it by their addresses),
//! the netfilter hooks in the kernel's order (nat PREROUTING on arrival; routing; filter
//! FORWARD for a forwarded packet, OUTPUT for one the host sends; nat POSTROUTING before
//! it leaves; a `MARK` set in one hook is read by the next on that node, as portmap's
//! hairpin masquerade needs), the underlay between the nodes (the node whose uplink holds
//! the next hop), and VXLAN: the neighbour and FDB entries of the tunnel device give the
//! remote VTEP, the packet travels inside a UDP datagram to port 8472 and is unwrapped on
//! the peer's flannel.1. Every link's MTU is checked: a packet with DF set that does not
//! fit is dropped where it would be (the sender's "message too long", or a router's ICMP
//! "fragmentation needed"); the VXLAN outer datagram has no DF and is fragmented.
//!
//! NetworkPolicy is enforced by whatever the network implementation programmed, and only
//! there ([`Enforcement`]): under flannel by nothing (the trace says so; the policies'
//! verdict is still computed, as what an enforcing network would do); under Calico by
//! Felix's chains in filter FORWARD, which the hook walks like any other rule: the trace
//! names the endpoint chain, and the rule that accepted or dropped the packet; under Cilium
//! by bpf_lxc at each endpoint's `lxc…` device ([`Enforcement::Bpf`]): the pod's traffic
//! never reaches the host's netfilter or routing (BPF host routing). bpf_lxc (from-container)
//! looks the destination up in the node's ipcache and checks the source endpoint's egress
//! map, then redirects to a local endpoint (whose ingress map decides) or encapsulates to the
//! ipcache's tunnel endpoint through `cilium_vxlan` (the VNI carries the source's security
//! identity); the peer's bpf_overlay decapsulates and the destination endpoint's ingress map
//! decides. Traffic the ipcache has no tunnel for (a node's address, the world) goes on
//! through the host stack. The agent's state is read through [`super::bpf::BpfDatapath`].
//!
//! Not modelled: conntrack beyond the first packet (replies, established state), tc,
//! timing, IPv6 packets (an IPv6 destination is refused).
//!
//! The walk is here; the netfilter hooks and Felix's chains are in `hooks`, Cilium's BPF
//! programs in `cilium`, and a hop's printed line in `line`.

use super::NetError;
use super::bpf::BpfDatapath;
use super::hop::{Entry, Outer, PacketAt, Place};
use super::policy::{Flow, Protocol, Verdict, evaluate_resolved, ingress_seen};
use super::view::{ClusterNet, PodNet, Resolved};
use crate::cni::host::{Host, LinkKind, RouteEntry};
use crate::cni::netfilter::TableKind;
use std::collections::BTreeMap;
use std::net::IpAddr;

mod cilium;
mod hooks;
mod line;

use hooks::table_hook;
use line::{Detail, Hook};

/// What enforces NetworkPolicy on the nodes' data path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Nothing: the API server stores policies and no node acts on them (flannel).
    None,
    /// iptables chains in filter FORWARD (Calico's Felix: `cali-fw-…`/`cali-tw-…`).
    Iptables,
    /// eBPF programs at each endpoint's device with per-endpoint policy maps (Cilium's
    /// bpf_lxc and `cilium_policy_<id>`).
    Bpf,
}

/// What a hop is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HopKind {
    /// A pod's interface or a node's host namespace, where the packet starts or ends.
    Endpoint,
    /// A routing decision inside a pod netns.
    PodRoute,
    /// A host-side veth.
    Veth,
    /// A bridge (`cni0`).
    Bridge,
    /// A routing decision on a node.
    NodeRoute,
    /// Arrival at a node's uplink.
    Node,
    /// A NetworkPolicy check.
    Policy,
    /// A netfilter hook where a rule matched (NAT, drop).
    Netfilter,
    /// A tunnel device wrapping or unwrapping the packet (VXLAN).
    Tunnel,
    /// A macvlan, ipvlan or SR-IOV VF putting the frame straight on its lower device's
    /// wire (past the node's IP stack), or the wire delivering it.
    Underlay,
}

/// One hop of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// What kind of hop.
    pub kind: HopKind,
    /// What happened here, beyond the fields below (the line is made from both).
    detail: Detail,
    /// Where the packet is.
    pub at: Place,
    /// The device it is at, passes or leaves by.
    pub dev: Option<String>,
    /// The packet as it is here (none before the sender has an address).
    pub packet: Option<PacketAt>,
    /// The table entry this hop consulted: the route that matched, the netfilter rule, the
    /// BPF policy entry, the VXLAN neighbour and FDB entries.
    pub entry: Option<Entry>,
    /// For a node route through a gateway: the next hop address.
    pub next_hop: Option<IpAddr>,
    /// For a netfilter hop that rewrote the packet: what changed.
    pub rewrite: Option<Rewrite>,
    /// For a policy check: whether it allowed the packet.
    pub allowed: Option<bool>,
}

/// An address a netfilter rule rewrote on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The source (SNAT, MASQUERADE): from, to.
    Source(IpAddr, IpAddr),
    /// The destination (DNAT): from, to.
    Destination(IpAddr, IpAddr),
}

/// A packet dropped because it did not fit a link's MTU (DF set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooBig {
    /// Where: a node's name, or a pod's `ns/name`.
    pub at: String,
    /// The device (or `route to DST (mtu N)` for a route's own mtu).
    pub dev: String,
    /// The MTU it did not fit.
    pub mtu: u32,
    /// A router answered ICMP fragmentation needed (a forwarded packet); otherwise the
    /// sender's own "message too long".
    pub icmp: bool,
}

/// How the trace ended. `hop` is the 1-based number of the hop where it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The packet reached its destination (described).
    Delivered(String),
    /// A policy dropped it.
    Dropped {
        /// The hop of the policy check.
        hop: usize,
        /// The policy reason.
        reason: String,
    },
    /// It left the cluster through a node's default gateway (the lab models nothing beyond).
    LeftCluster {
        /// The hop where it left.
        hop: usize,
        /// Through where.
        via: String,
        /// Why it never reaches its destination, when that is a cluster address the node
        /// had no route for but the default (the kernel still forwards it: a route exists).
        astray: Option<String>,
    },
    /// No route (or no neighbour) for it.
    NoRoute {
        /// The last hop reached.
        hop: usize,
        /// Why.
        reason: String,
    },
    /// Two interfaces on the wire hold the address: both answer ARP and the packet goes to
    /// whichever reply came last (the route exists: it is not EHOSTUNREACH).
    Conflict {
        /// The last hop reached.
        hop: usize,
        /// Who holds the address.
        reason: String,
    },
}

/// A trace: the hops, the policy verdict, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The policy verdict on the flow (also computed when routing fails first).
    pub verdict: Verdict,
    /// Hops in order.
    pub hops: Vec<Hop>,
    /// The end.
    pub outcome: Outcome,
    /// What enforced NetworkPolicy on the way.
    pub enforcement: Enforcement,
    /// A drop for the MTU, if that is how it ended.
    pub too_big: Option<TooBig>,
}

impl Hop {
    /// For a routing decision on a node: the node and the route that matched.
    pub fn node_route(&self) -> Option<(&str, &RouteEntry)> {
        match (&self.kind, &self.entry) {
            (HopKind::NodeRoute, Some(Entry::Route(r))) => Some((self.at.node(), r)),
            _ => None,
        }
    }
}

impl Trace {
    /// Whether the data plane's policy let the packet through: no policy check on the
    /// path denied it (under [`Enforcement::None`] nothing checks).
    pub fn policy_allows(&self) -> bool {
        !self.hops.iter().any(|h| h.allowed == Some(false))
    }

    /// Did the packet arrive?
    pub fn delivered(&self) -> bool {
        matches!(self.outcome, Outcome::Delivered(_))
    }

    /// Did the packet get where it was going: delivered, or out of the cluster.
    pub(crate) fn went_through(&self) -> bool {
        matches!(
            self.outcome,
            Outcome::Delivered(_) | Outcome::LeftCluster { astray: None, .. }
        )
    }

    /// The path on one line: `web eth0 10.244.1.2 → veth… (host side) → cni0 on node-1 →
    /// route 10.244.2.0/24 via 192.168.0.2 dev eth0 → node-2 eth0 192.168.0.2 → …`.
    /// Only gateway routes appear; connected routes, pod-netns routing and policy checks
    /// are in [`Trace::lines`].
    pub fn path(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for h in &self.hops {
            match h.kind {
                HopKind::Policy | HopKind::PodRoute => {}
                HopKind::NodeRoute => {
                    if let (Some(_), Some((_, r))) = (h.next_hop, h.node_route()) {
                        parts.push(format!("route {}", r.to_ip_route()));
                    }
                }
                _ => parts.push(h.line()),
            }
        }
        parts.join(" → ")
    }

    /// The last line: `delivered …`, `dropped at hop N …`, `no route to host at hop N …`,
    /// `address conflict at hop N …`.
    pub(crate) fn result_line(&self) -> String {
        match &self.outcome {
            Outcome::Delivered(to) => format!("delivered to {to}"),
            Outcome::Dropped { hop, reason } => format!("dropped at hop {hop}: {reason}"),
            Outcome::NoRoute { hop, reason } => {
                format!("no route to host at hop {hop}: {reason}")
            }
            Outcome::Conflict { hop, reason } => {
                format!("address conflict at hop {hop}: {reason}")
            }
            Outcome::LeftCluster {
                hop,
                via,
                astray: None,
            } => format!("left the cluster at hop {hop}: {via}"),
            Outcome::LeftCluster {
                hop,
                via,
                astray: Some(why),
            } => format!("left the cluster at hop {hop}: {via}, not toward a pod: {why}"),
        }
    }

    /// The first line: `trace default/web → default/db:8080/TCP`.
    pub fn flow_line(&self) -> String {
        format!("trace {}", self.verdict.flow)
    }

    /// Every line `trace` prints: the flow, one line a hop, the result.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.flow_line()];
        let width = self.hops.len().to_string().len();
        for (i, h) in self.hops.iter().enumerate() {
            out.push(format!("  {:>width$}  {}", i + 1, h.line()));
        }
        out.push(self.result_line());
        out
    }
}

/// The nodes' kernels as the walker reads them (the lab's nodes, read in place: a walk
/// visits only the nodes it reaches).
pub trait Kernels<'a> {
    /// A node's kernel, by node name.
    fn host(&self, node: &str) -> Option<&'a Host>;
    /// Every node's kernel, in node name order.
    fn hosts(&self) -> Box<dyn Iterator<Item = &'a Host> + '_>;
    /// Whether the node is down (`fault inject node-down`): it answers nothing.
    fn is_down(&self, node: &str) -> bool;
}

/// The nodes' kernels a packet can walk through, by node name, and who holds each underlay
/// address (what ARP on the shared segment would find).
pub struct Fabric<'a> {
    /// Each node's kernel.
    kernels: Box<dyn Kernels<'a> + 'a>,
    /// Underlay addresses (on the nodes' up physical links) and the node holding each,
    /// found the first time a packet crosses the segment (see [`Fabric::holder_of`]).
    uplink_owner: std::cell::OnceCell<BTreeMap<IpAddr, &'a Host>>,
    /// The eBPF datapath's state (Cilium's agents), when the network runs one.
    bpf: Option<&'a dyn BpfDatapath>,
    /// Who holds each address on each underlay wire, found the first time a packet takes
    /// one (see [`Fabric::underlay_holder`]).
    underlay: std::cell::OnceCell<UnderlayIndex<'a>>,
}

/// Lower device name → address → the pod interfaces holding it on that wire.
type UnderlayIndex<'a> = BTreeMap<&'a str, BTreeMap<IpAddr, Vec<UnderlayEnd<'a>>>>;

/// A macvlan, ipvlan or VF holding an address on some lower device's wire.
#[derive(Debug, Clone, Copy)]
struct UnderlayEnd<'a> {
    /// The node whose pod holds it.
    host: &'a Host,
    /// The pod's namespace path.
    netns: &'a str,
    /// The interface in the pod (`net1`).
    ifname: &'a str,
    /// How it sits on the wire (`macvlan`, `ipvlan`, `vf`) and its mode.
    kind: &'a LinkKind,
}

/// The wire a pod's underlay link puts frames on: the lower device in the host namespace
/// (`master`, or the VF's PF), and what the link is. Every node's device of one name is
/// cabled to the same segment (all `eth0`s share the cluster's segment; all `ens1f0` PFs
/// the training fabric), which is how the lab's nodes are wired.
fn underlay_lower(kind: &LinkKind) -> Option<&str> {
    match kind {
        LinkKind::Macvlan(lower) | LinkKind::Ipvlan(lower) => Some(&lower.master),
        LinkKind::SriovVf(vf) => Some(&vf.pf),
        _ => None,
    }
}

/// `macvlan mode bridge on eth0` and the like.
fn underlay_text(kind: &LinkKind, lower: &str) -> String {
    match kind {
        LinkKind::Macvlan(l) => {
            format!("macvlan mode {} on {lower}", or_default(&l.mode, "bridge"))
        }
        LinkKind::Ipvlan(l) => {
            format!("ipvlan mode {} on {lower}", or_default(&l.mode, "l2"))
        }
        LinkKind::SriovVf(v) => format!("SR-IOV VF {} of {lower}", v.vf),
        _ => lower.to_string(),
    }
}

fn or_default<'s>(s: &'s str, d: &'s str) -> &'s str {
    if s.is_empty() { d } else { s }
}

impl<'a> Fabric<'a> {
    /// The fabric of these nodes. A node that is down (`fault inject node-down`) answers
    /// nothing on the segment: packets for it find no neighbour.
    pub fn new(kernels: impl Kernels<'a> + 'a) -> Self {
        Fabric {
            kernels: Box::new(kernels),
            uplink_owner: std::cell::OnceCell::new(),
            bpf: None,
            underlay: std::cell::OnceCell::new(),
        }
    }

    /// A node's kernel.
    fn host(&self, node: &str) -> Option<&'a Host> {
        self.kernels.host(node)
    }

    /// Who answers ARP for each address on the segment: every up node's up physical links'
    /// addresses (each node's own, kept typed with its links), read once per walk.
    fn uplink_owners(&self) -> &BTreeMap<IpAddr, &'a Host> {
        self.uplink_owner.get_or_init(|| {
            let mut owners = BTreeMap::new();
            for h in self.kernels.hosts() {
                if self.kernels.is_down(&h.node) {
                    continue;
                }
                for a in h.root.links.uplink_addrs() {
                    owners.insert(*a, h);
                }
            }
            owners
        })
    }

    /// The fabric with an eBPF datapath's maps to read (used under [`Enforcement::Bpf`]).
    pub(crate) fn with_bpf(mut self, bpf: &'a dyn BpfDatapath) -> Self {
        self.bpf = Some(bpf);
        self
    }

    /// The node whose uplink holds `ip` (who answers ARP for it on the segment).
    fn holder_of(&self, ip: IpAddr) -> Option<&'a Host> {
        self.uplink_owners().get(&ip).copied()
    }

    /// The pod interfaces (macvlan, ipvlan, VF) holding `ip` on the wire of the devices
    /// called `lower` (more than one is an address conflict: both answer ARP): the pods'
    /// namespaces are read once, the first time it is asked.
    fn underlay_holders(&self, lower: &str, ip: IpAddr) -> &[UnderlayEnd<'a>] {
        let index = self.underlay.get_or_init(|| {
            let mut index: UnderlayIndex<'a> = BTreeMap::new();
            let owners = self.uplink_owners();
            for host in self.kernels.hosts() {
                if !owners.values().any(|h| h.node == host.node) {
                    continue; // a node that is down answers nothing
                }
                for (path, ns) in host.netns.iter() {
                    for l in ns.links.values() {
                        let Some(lower) = underlay_lower(&l.kind) else {
                            continue;
                        };
                        if !l.up {
                            continue;
                        }
                        for n in &l.addrs {
                            index
                                .entry(lower)
                                .or_default()
                                .entry(n.addr())
                                .or_default()
                                .push(UnderlayEnd {
                                    host,
                                    netns: path,
                                    ifname: l.name.as_str(),
                                    kind: &l.kind,
                                });
                        }
                    }
                }
            }
            index
        });
        index
            .get(lower)
            .and_then(|by_ip| by_ip.get(&ip))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// The packet as it is now (addresses change under NAT).
#[derive(Debug, Clone)]
struct Pkt {
    src: IpAddr,
    dst: IpAddr,
    proto: Protocol,
    dport: u16,
    /// IP packet size in bytes.
    size: u32,
    /// The netfilter mark (`skb->mark`): set by a `MARK` rule, read by `-m mark` in a later
    /// hook of the same node (portmap's hairpin masquerade mark), and cleared whenever the
    /// packet enters another namespace (a veth, a tunnel, the wire).
    mark: u32,
}

impl Pkt {
    /// The packet as its sender makes it: no mark yet.
    fn new(src: IpAddr, dst: IpAddr, proto: Protocol, dport: u16, size: u32) -> Self {
        Pkt {
            src,
            dst,
            proto,
            dport,
            size,
            mark: 0,
        }
    }
}

/// Trace a flow: one packet of `size` bytes (IP header included) with DF set, sent to `to`
/// when the destination was named by an address (a node's bridge address is routed as the
/// pod-network address it is, not as the node's InternalIP), else to the destination's own
/// address. Errors only for unknown names, a source that is not a pod or a node, or an
/// IPv6 destination.
pub fn trace(
    net: &ClusterNet,
    fabric: &Fabric<'_>,
    flow: &Flow,
    to: Option<IpAddr>,
    size: u32,
    enforcement: Enforcement,
) -> Result<Trace, NetError> {
    let src = net.lookup(&flow.src)?;
    let dst = net.lookup(&flow.dst)?;
    if let Resolved::Ip(ip) = src {
        return Err(NetError::TraceSource(ip.to_string()));
    }
    let verdict = evaluate_resolved(net, src, dst, flow.port, flow.protocol);
    let mut w = Walker {
        net,
        fabric,
        enforcement,
        hops: Vec::new(),
        to,
        orig_src: src.ip(),
        too_big: None,
        sent: None,
        at_ingress: None,
        now: None,
        outer: None,
    };
    let outcome = w.run(src, dst, flow, size);
    let mut verdict = verdict.clone();
    if let Some(p) = w.at_ingress.take() {
        // The destination judges the flow the packet became: a DNAT to a hostPort's pod
        // makes that pod the subject, a masqueraded source the peer.
        let (seen_src, seen_dst) = (net.resolve_ip(p.src), net.resolve_ip(p.dst));
        let seen_dst = match (seen_dst, dst) {
            (Resolved::Node(_), Resolved::Pod(_)) | (Resolved::Ip(_), _) => dst,
            _ => seen_dst,
        };
        verdict.ingress = ingress_seen(net, seen_src, seen_dst, Some(p.dport), p.proto);
    }
    let hops = w.hops;
    Ok(Trace {
        verdict,
        hops,
        outcome,
        enforcement,
        too_big: w.too_big,
    })
}

/// Cilium's host device, holding the router IP.
const CILIUM_HOST: &str = "cilium_host";
/// Cilium's tunnel device.
const CILIUM_VXLAN: &str = "cilium_vxlan";

/// The default packet size of `trace`: `ping`'s 56 data bytes + ICMP 8 + IPv4 20.
pub(crate) const DEFAULT_SIZE: u32 = 84;

/// Walks cap: more hops than this is a loop.
const MAX_HOPS: usize = 64;

struct Walker<'a, 'n> {
    net: &'a ClusterNet,
    fabric: &'a Fabric<'n>,
    enforcement: Enforcement,
    hops: Vec<Hop>,
    /// The address the packet is sent to, when the destination was named by one.
    to: Option<IpAddr>,
    orig_src: Option<IpAddr>,
    too_big: Option<TooBig>,
    /// The packet as it left its sender.
    sent: Option<Pkt>,
    /// The packet as the destination's ingress check saw it, when a rewrite on the way
    /// (DNAT to a hostPort's pod, a masqueraded source) made it another flow.
    at_ingress: Option<Pkt>,
    /// The packet as it is now (after any NAT so far), once it has been sent.
    now: Option<Pkt>,
    /// The outer headers while the packet is inside a VXLAN datagram.
    outer: Option<Outer>,
}

/// Where a pod's hops are.
fn pod_place(pod: &PodNet) -> Place {
    Place::Pod {
        namespace: pod.namespace.clone(),
        name: pod.name.clone(),
        node: pod.node.clone(),
    }
}

impl<'a, 'n> Walker<'a, 'n> {
    /// A hop at `at` (by `dev`), carrying the packet as it is now.
    fn push(&mut self, kind: HopKind, at: Place, dev: Option<&str>, detail: Detail) -> &mut Hop {
        let packet = self.now.as_ref().map(|p| self.packet_at(p));
        self.hops.push(Hop {
            kind,
            detail,
            at,
            dev: dev.map(str::to_string),
            packet,
            entry: None,
            next_hop: None,
            rewrite: None,
            allowed: None,
        });
        let last = self.hops.len() - 1;
        &mut self.hops[last]
    }

    /// The typed packet of `pkt` as a hop carries it.
    fn packet_at(&self, pkt: &Pkt) -> PacketAt {
        let sent = self
            .sent
            .as_ref()
            .filter(|s| s.src != pkt.src || s.dst != pkt.dst || s.dport != pkt.dport)
            .map(|s| (s.src, s.dst, s.dport));
        PacketAt {
            src: pkt.src,
            dst: pkt.dst,
            sent,
            protocol: pkt.proto,
            dport: pkt.dport,
            size: pkt.size,
            outer: self.outer,
            mtu: None,
        }
    }

    /// The packet as its sender makes it: the hops so far (all at the sender) carry it too,
    /// each keeping the MTU it checked.
    fn send(&mut self, pkt: &Pkt) {
        self.sent = Some(pkt.clone());
        self.now = Some(pkt.clone());
        let packet = self.packet_at(pkt);
        for h in &mut self.hops {
            let mtu = h.packet.as_ref().and_then(|p| p.mtu);
            h.packet = Some(PacketAt {
                mtu,
                ..packet.clone()
            });
        }
    }

    /// A policy check's hop, with its verdict.
    fn push_policy(&mut self, at: Place, dev: &str, detail: Detail, allowed: bool) -> &mut Hop {
        let h = self.push(HopKind::Policy, at, Some(dev), detail);
        h.allowed = Some(allowed);
        h
    }

    /// A drop for the MTU: the outcome, remembering where and which MTU.
    fn too_big(&mut self, text: String, at: &str, dev: &str, mtu: u32, icmp: bool) -> Outcome {
        self.too_big = Some(TooBig {
            at: at.to_string(),
            dev: dev.to_string(),
            mtu,
            icmp,
        });
        self.dropped(text)
    }

    /// A packet its sender addresses to a broadcast address: the kernel's local table routes
    /// it as broadcast (`ip route get` says `broadcast … <local,brd>`), and the socket
    /// refuses before anything is sent (TCP's `tcp_v4_connect`, UDP's `udp_sendmsg` without
    /// `SO_BROADCAST`), or (SCTP) the INIT goes out to the whole link and every receiver
    /// drops it, as `sctp_rcv` takes only packets addressed to its host.
    fn to_broadcast(&self, sender: &str, bcast: &Broadcast<'_>, proto: Protocol) -> Outcome {
        let what = bcast.describe(sender);
        match proto {
            Protocol::Tcp => self.no_route(format!(
                "{what}: TCP does not connect to a broadcast address (connect: Network is unreachable)"
            )),
            Protocol::Udp => self.dropped(format!(
                "{what}: a UDP socket without SO_BROADCAST may not send to it (sendto: Permission denied)"
            )),
            Protocol::Sctp => self.dropped(format!(
                "{what}: the INIT leaves {} as a link-layer broadcast, and SCTP drops a packet not addressed to its host alone, so no association forms",
                bcast.dev
            )),
        }
    }

    fn no_route(&self, reason: String) -> Outcome {
        Outcome::NoRoute {
            hop: self.hops.len(),
            reason,
        }
    }

    fn dropped(&self, reason: String) -> Outcome {
        Outcome::Dropped {
            hop: self.hops.len(),
            reason,
        }
    }

    fn dst_ip(&self, dst: Resolved<'_>) -> Result<IpAddr, Outcome> {
        if let Some(ip) = self.to {
            return Ok(ip);
        }
        match dst {
            Resolved::Pod(p) => p.ip.ok_or_else(|| {
                self.no_route(format!(
                    "{} has no IP address (its sandbox network is not set up)",
                    p.key()
                ))
            }),
            Resolved::Node(n) => n
                .internal_ip
                .ok_or_else(|| self.no_route(format!("{} has no InternalIP", n.name))),
            Resolved::Ip(ip) => Ok(ip),
        }
    }

    fn run(&mut self, src: Resolved<'a>, dst: Resolved<'a>, flow: &Flow, size: u32) -> Outcome {
        let dst_ip = match self.dst_ip(dst) {
            Ok(ip) => ip,
            Err(o) => {
                if let Resolved::Pod(p) = src {
                    let detail = Detail::Sender { addr: None };
                    self.push(HopKind::Endpoint, pod_place(p), Some(&p.ifname), detail);
                }
                return o;
            }
        };
        let proto = flow.protocol;
        let dport = flow.port.unwrap_or(0);
        match src {
            Resolved::Pod(p) => self.start_at_pod(p, dst_ip, proto, dport, size),
            Resolved::Node(n) => {
                self.push(
                    HopKind::Endpoint,
                    Place::Node(n.name.clone()),
                    None,
                    Detail::HostSender,
                );
                let Some(host) = self.fabric.host(&n.name) else {
                    return self.no_route(format!("{} has no kernel in the lab", n.name));
                };
                if let Some(bcast) = Broadcast::of(&host.root, dst_ip) {
                    return self.to_broadcast(&n.name, &bcast, proto);
                }
                // The source of a packet the host sends is the route's preferred source,
                // or the output device's first address.
                let Some(r) = host_lookup(host, dst_ip) else {
                    return self.no_route(self.why_no_route(host, dst_ip));
                };
                let src_ip = preferred_src(host, &r).unwrap_or(dst_ip);
                self.orig_src = Some(src_ip);
                let pkt = Pkt::new(src_ip, dst_ip, proto, dport, size);
                self.send(&pkt);
                self.host_stack(host, pkt, None)
            }
            Resolved::Ip(_) => self.no_route("a trace starts at a pod or a node".into()),
        }
    }

    fn start_at_pod(
        &mut self,
        pod: &'a PodNet,
        dst_ip: IpAddr,
        proto: Protocol,
        dport: u16,
        size: u32,
    ) -> Outcome {
        let Some(src_ip) = pod.ip else {
            self.push(
                HopKind::Endpoint,
                pod_place(pod),
                Some(&pod.ifname),
                Detail::SenderNoAddress,
            );
            return self.no_route(format!(
                "{} has no IP address (its sandbox network is not set up)",
                pod.key()
            ));
        };
        let host = self.fabric.host(&pod.node);
        let ns = host.and_then(|h| pod.netns.as_deref().and_then(|p| h.netns.get(p)));
        // To an address of another of its own interfaces (net1's), the local route's
        // preferred source is that address itself (`ip route get` says `local A dev lo src
        // A`): the packet leaves from there, not from eth0.
        let own = ns.filter(|_| dst_ip != src_ip).and_then(|ns| {
            ns.links
                .values()
                .find(|l| l.addrs.iter().any(|a| a.addr() == dst_ip))
        });
        let (from_dev, src_ip) = match own {
            Some(l) => (l.name.as_str(), dst_ip),
            None => (pod.ifname.as_str(), src_ip),
        };
        self.push(
            HopKind::Endpoint,
            pod_place(pod),
            Some(from_dev),
            Detail::Sender { addr: Some(src_ip) },
        );
        let pkt = Pkt::new(src_ip, dst_ip, proto, dport, size);
        self.send(&pkt);
        let (Some(host), Some(ns)) = (host, ns) else {
            return self.no_route(format!(
                "{}'s network namespace is gone (no sandbox on {})",
                pod.key(),
                pod.node
            ));
        };
        // Any address of the pod's own interfaces (eth0's, or net1's) is in its local table.
        if dst_ip == src_ip {
            let dev = from_dev;
            self.push(
                HopKind::PodRoute,
                pod_place(pod),
                Some(dev),
                Detail::LocalLoop { addr: dst_ip },
            );
            // Looped back inside the pod: no host hook (nor Felix) sees it.
            return Outcome::Delivered(format!("{} {dev} {dst_ip} (itself)", pod.key()));
        }
        if dst_ip.is_ipv6() {
            return self.no_route("the walker follows IPv4 packets only".to_string());
        }
        if let Some(bcast) = Broadcast::of(ns, dst_ip) {
            return self.to_broadcast(&pod.key(), &bcast, proto);
        }
        let table = ns.route_table();
        let Some(r) = lookup(&table, dst_ip).cloned() else {
            return self.no_route(format!(
                "{} has no route to {dst_ip} (connect: Network is unreachable)",
                pod.key()
            ));
        };
        let hop = self.push(
            HopKind::PodRoute,
            pod_place(pod),
            Some(&r.dev),
            Detail::Routed,
        );
        hop.entry = Some(Entry::Route(r.clone()));
        let Some(link) = ns.links.get(&r.dev) else {
            return self.no_route(format!("{} has no device {}", pod.key(), r.dev));
        };
        let mtu = r.mtu().map_or(link.mtu, |m| m.min(link.mtu));
        if let Some(p) = hop_packet(&mut self.hops) {
            p.mtu = Some(mtu);
        }
        if size > link.mtu {
            let text = format!(
                "{size}-byte packet with DF set does not fit {}'s {} (local error: message too long, mtu={})",
                pod.key(),
                r.dev,
                link.mtu
            );
            return self.too_big(text, &pod.key(), &r.dev, link.mtu, false);
        }
        if let Some(m) = r.mtu().filter(|m| size > *m) {
            self.too_big = Some(TooBig {
                at: pod.key(),
                dev: format!("route to {} (mtu {m})", r.dst),
                mtu: m,
                icmp: false,
            });
            return self.dropped(format!(
                "{size}-byte packet with DF set does not fit the route's mtu {m} in {} (local error: message too long, mtu={m})",
                pod.key()
            ));
        }
        let next: IpAddr = r.via.unwrap_or(dst_ip);
        if let Some(lower) = underlay_lower(&link.kind) {
            // The packet leaves by that interface, from its address (the route's `src`).
            let src_ip = r
                .src()
                .or_else(|| link.addrs.first().map(|n| n.addr()))
                .unwrap_or(src_ip);
            if let Some(first) = self.hops.first_mut() {
                first.detail = Detail::Sender { addr: Some(src_ip) };
                first.dev = Some(r.dev.to_string());
            }
            self.orig_src = Some(src_ip);
            let pkt = Pkt::new(src_ip, dst_ip, proto, dport, size);
            self.send(&pkt);
            return self.underlay_out(host, pod, &r.dev, &link.kind, lower, pkt, next);
        }
        let LinkKind::Veth { peer, peer_netns } = &link.kind else {
            return self.no_route(format!("{}'s {} is not a veth", pod.key(), r.dev));
        };
        let Some(hveth) = host
            .peer_ns(peer_netns.as_deref())
            .and_then(|n| n.links.get(peer))
        else {
            return self.no_route(format!(
                "the other end of {}'s {} ({peer}) is gone",
                pod.key(),
                r.dev
            ));
        };
        let node = pod.node.as_str();
        let proxy_arp = host
            .sysctls
            .get(format!("net.ipv4.conf.{peer}.proxy_arp").as_str())
            .is_some_and(|v| v == "1");
        let arp_for = r.via.filter(|gw| proxy_arp && !host_owns(host, *gw));
        let detail = Detail::HostVeth {
            proxy_arp_for: arp_for.map(|gw| gw.to_string()),
        };
        self.push(
            HopKind::Veth,
            Place::Node(node.to_string()),
            Some(peer),
            detail,
        );
        if self.enforcement == Enforcement::Bpf {
            if let Some(bpf) = self.fabric.bpf {
                if let Some(o) = self.bpf_from_container(bpf, host, peer, pkt.clone()) {
                    return o;
                }
            }
        }
        match hveth.master.as_deref() {
            Some(br) => {
                let at = Place::Node(node.to_string());
                self.push(HopKind::Bridge, at, Some(br), bridge_detail(host, br));
                if host_owns_on(host, br, next) {
                    self.host_stack(host, pkt, Some(br.to_string()))
                } else {
                    self.bridged(host, br, pkt, next)
                }
            }
            None => self.host_stack(host, pkt, Some(peer.to_string())),
        }
    }

    /// The packet in a node's host network stack, arrived on `iif` (None: the host sends it).
    fn host_stack(&mut self, host: &'a Host, mut pkt: Pkt, iif: Option<String>) -> Outcome {
        let node: &str = &host.node;
        let forwarded = iif.is_some();
        // A packet entering this namespace carries no mark (`skb_scrub_packet`).
        pkt.mark = 0;
        if self.hops.len() > MAX_HOPS {
            return self.no_route(format!("routing loop through {node}"));
        }
        if forwarded {
            let step = table_hook(
                host,
                TableKind::Nat,
                "PREROUTING",
                false,
                &pkt,
                iif.as_deref(),
                None,
            );
            if let Some(o) = self.apply_hook(node, step, &mut pkt) {
                return o;
            }
        }
        if host_owns(host, pkt.dst) {
            if forwarded {
                let step = table_hook(
                    host,
                    TableKind::Filter,
                    "INPUT",
                    false,
                    &pkt,
                    iif.as_deref(),
                    None,
                );
                if let Some(o) = self.apply_hook(node, step, &mut pkt) {
                    return o;
                }
            }
            return Outcome::Delivered(format!("{node} (local address {})", pkt.dst));
        }
        let Some(r) = host_lookup(host, pkt.dst) else {
            return self.no_route(self.why_no_route(host, pkt.dst));
        };
        let via: Option<IpAddr> = r.via;
        let hop = self.push(
            HopKind::NodeRoute,
            Place::Node(node.to_string()),
            Some(&r.dev),
            Detail::Routed,
        );
        hop.next_hop = via;
        hop.entry = Some(Entry::Route(r.clone()));
        if r.blackhole {
            // A forwarded packet is discarded silently; a local sender gets EINVAL.
            return self.no_route(if forwarded {
                format!(
                    "{node}'s blackhole route {} discards it: no pod of the block holds {}",
                    r.dst, pkt.dst
                )
            } else {
                format!(
                    "{node}'s blackhole route {} refuses it (connect: Invalid argument)",
                    r.dst
                )
            });
        }
        // The MTU is checked right after routing, before any hook: ip_forward() answers
        // "fragmentation needed" before the FORWARD hook, and a local sender gets "message
        // too long" from the socket before OUTPUT (checked with FORWARD counters on a real
        // kernel, tests/dataplane_differential.rs; flannel-and-netfilter.md §7).
        let Some(out) = host.root.links.get(&r.dev) else {
            return self.no_route(format!("{node} has no device {}", r.dev));
        };
        let (mtu, what) = match r.mtu() {
            Some(m) if m < out.mtu => (m, format!("route to {} (mtu {m})", r.dst)),
            _ => (out.mtu, r.dev.to_string()),
        };
        if let Some(p) = hop_packet(&mut self.hops) {
            p.mtu = Some(mtu);
        }
        if pkt.size > mtu {
            self.too_big = Some(TooBig {
                at: node.to_string(),
                dev: what.clone(),
                mtu,
                icmp: forwarded,
            });
            return self.dropped(if forwarded {
                format!(
                    "{}-byte packet with DF set does not fit {node}'s {what} (mtu {mtu}): {node} answers ICMP fragmentation needed (mtu = {mtu})",
                    pkt.size
                )
            } else {
                format!(
                    "{}-byte packet with DF set does not fit {node}'s {what} (local error: message too long, mtu={mtu})",
                    pkt.size
                )
            });
        }
        let chain = if forwarded { "FORWARD" } else { "OUTPUT" };
        let step = table_hook(
            host,
            TableKind::Filter,
            chain,
            false,
            &pkt,
            iif.as_deref(),
            Some(&r.dev),
        );
        if self.enforcement == Enforcement::Iptables {
            // Felix's ingress chain sees the packet here, after PREROUTING's DNAT.
            self.note_ingress(&pkt);
            if let Some(o) = self.felix(host, &step) {
                return o;
            }
        }
        if let Some(o) = self.apply_hook(node, step, &mut pkt) {
            return o;
        }
        let step = table_hook(
            host,
            TableKind::Nat,
            "POSTROUTING",
            false,
            &pkt,
            iif.as_deref(),
            Some(&r.dev),
        );
        let masq_src = preferred_src(host, &r);
        if let Some(o) = self.apply_hook_masq(node, step, &mut pkt, masq_src) {
            return o;
        }
        let next = via.unwrap_or(pkt.dst);
        match &out.kind {
            LinkKind::Bridge => {
                let detail = bridge_detail(host, &r.dev);
                self.push(
                    HopKind::Bridge,
                    Place::Node(node.to_string()),
                    Some(&r.dev),
                    detail,
                );
                self.bridge_deliver(host, node, &r.dev, pkt, next)
            }
            LinkKind::Physical => {
                if self.fabric.holder_of(next).is_none() {
                    // Pods' macvlans on other nodes' devices of this segment answer ARP.
                    let others: Vec<UnderlayEnd<'_>> = self
                        .fabric
                        .underlay_holders(&r.dev, next)
                        .iter()
                        .filter(|e| e.host.node != node)
                        .copied()
                        .collect();
                    match others.as_slice() {
                        [] => {}
                        [end] => return self.underlay_deliver(*end, &r.dev, pkt),
                        many => return self.conflict(&r.dev, next, many),
                    }
                }
                let Some(peer) = self.fabric.holder_of(next) else {
                    let in_cluster = self.net.pod_with_ip(pkt.dst).is_some()
                        || self
                            .net
                            .nodes
                            .iter()
                            .any(|n| n.pod_cidr.is_some_and(|c| c.trunc().contains(&pkt.dst)));
                    if r.dst.is_default() {
                        // A route matched (the default), so the kernel forwards the packet
                        // to the gateway, as for any address outside the cluster: no
                        // EHOSTUNREACH on the node. A cluster address goes astray there.
                        let astray = in_cluster.then(|| {
                            format!(
                                "{}, and the gateway knows no pod routes",
                                self.why_only_default(host, pkt.dst)
                            )
                        });
                        return Outcome::LeftCluster {
                            hop: self.hops.len(),
                            via: format!(
                                "{node}'s default gateway {next} (the lab models nothing beyond the nodes)"
                            ),
                            astray,
                        };
                    }
                    return self.no_route(format!(
                        "nothing on {node}'s {} segment answers ARP for {next}",
                        r.dev
                    ));
                };
                let at = Place::Node(peer.node.clone());
                let detail = Detail::Arrived { addr: next };
                self.push(HopKind::Node, at, Some("eth0"), detail);
                self.host_stack(peer, pkt, Some("eth0".to_string()))
            }
            LinkKind::Vxlan(v) => self.vxlan(host, &r.dev, v.vni, &v.local, v.port, pkt, next),
            LinkKind::Veth { .. }
                if self.enforcement == Enforcement::Bpf && r.dev == CILIUM_HOST =>
            {
                match self.fabric.bpf {
                    Some(bpf) => self.bpf_from_host(bpf, host, pkt),
                    None => self.no_route(format!("nothing behind {node}'s {}", r.dev)),
                }
            }
            LinkKind::Veth { .. } => {
                let pod = self
                    .net
                    .pod_on_node(node, |p| p.host_veth.as_deref() == Some(r.dev.as_str()));
                match pod {
                    Some(p) => self.deliver_to_pod(p, &r.dev, pkt),
                    None => self.no_route(format!("nothing behind {node}'s {}", r.dev)),
                }
            }
            LinkKind::Loopback | LinkKind::Ifb => {
                self.no_route(format!("{node}'s {} does not lead anywhere", r.dev))
            }
            // The host namespace routes nothing out of these (they live in pods).
            LinkKind::Macvlan(_) | LinkKind::Ipvlan(_) | LinkKind::SriovVf(_) => {
                self.no_route(format!("{node}'s {} is not a routed device", r.dev))
            }
        }
    }

    /// Out of a VXLAN device: neighbour, FDB, the outer datagram across the underlay, and
    /// the peer's device unwrapping it.
    #[allow(clippy::too_many_arguments)]
    fn vxlan(
        &mut self,
        host: &'a Host,
        dev: &str,
        vni: u32,
        local: &str,
        port: u16,
        pkt: Pkt,
        next: IpAddr,
    ) -> Outcome {
        let node: &str = &host.node;
        let next_text = next.to_string();
        let Some(neigh) = host
            .neighbours()
            .into_iter()
            .find(|n| n.dev == dev && n.ip == next_text)
        else {
            return self.dropped(format!(
                "{node} has no neighbour entry for {next} on {dev} (INCOMPLETE, then FAILED)"
            ));
        };
        let Some(fdb) = host
            .fdb_entries()
            .into_iter()
            .find(|f| f.dev == dev && f.mac == neigh.lladdr)
        else {
            return self.dropped(format!(
                "{node}'s {dev} has no FDB entry for {}: the frame is dropped on transmit",
                neigh.lladdr
            ));
        };
        let Some(remote) = fdb.dst.as_deref().and_then(|d| d.parse::<IpAddr>().ok()) else {
            return self.dropped(format!(
                "{node}'s FDB entry for {} has no dst",
                neigh.lladdr
            ));
        };
        let (outer, uplink_mtu) = vxlan_outer(host, &pkt);
        self.outer = local.parse().ok().map(|src| Outer {
            src,
            dst: remote,
            dport: port,
            vni,
            size: outer,
        });
        let hop = self.push(
            HopKind::Tunnel,
            Place::Node(node.to_string()),
            Some(dev),
            Detail::VxlanOut {
                vni,
                local: local.to_string(),
                port,
                outer,
                uplink_mtu,
            },
        );
        hop.entry = Some(Entry::Vxlan {
            neighbour: next,
            lladdr: neigh.lladdr.clone(),
            fdb_dst: remote,
        });
        let Some(peer) = self.fabric.holder_of(remote) else {
            return self.no_route(format!(
                "nothing on {node}'s eth0 segment answers ARP for the VTEP {remote}"
            ));
        };
        self.push(
            HopKind::Node,
            Place::Node(peer.node.clone()),
            Some("eth0"),
            Detail::Arrived { addr: remote },
        );
        let peer_dev = peer
            .root
            .links
            .values()
            .find(|l| matches!(&l.kind, LinkKind::Vxlan(v) if v.vni == vni && v.port == port));
        let Some(peer_dev) = peer_dev else {
            return self.dropped(format!(
                "{} has no VXLAN device for VNI {vni} on UDP {port}: the datagram is dropped",
                peer.node
            ));
        };
        let name = peer_dev.name.to_string();
        self.outer = None;
        self.push(
            HopKind::Tunnel,
            Place::Node(peer.node.clone()),
            Some(&name),
            Detail::VxlanIn {
                src: pkt.src,
                dst: pkt.dst,
            },
        );
        self.host_stack(peer, pkt, Some(name))
    }

    /// A frame the bridge forwards between two of its ports. With br_netfilter loaded and
    /// `net.bridge.bridge-nf-call-iptables=1` (what Kubernetes requires of bridge plugins,
    /// and the default once the module is loaded) the IP packet inside still passes nat
    /// PREROUTING, filter FORWARD and nat POSTROUTING (`flannel-and-netfilter.md` §6.5).
    /// Out of a pod's macvlan, ipvlan or SR-IOV VF (`dev`, on the lower device `lower`):
    /// the frame goes onto the lower device's wire without passing the node's IP stack,
    /// routing or netfilter (so no iptables rule, Felix chain or NetworkPolicy sees it), and
    /// whoever holds `next` on that wire answers ARP. Between two macvlans of one master the
    /// mode decides (`drivers/net/macvlan.c`): bridge switches the frame inside the node,
    /// private drops it, VEPA sends it to the switch port, which must reflect it (the lab's
    /// switch does not). A macvlan never reaches its own master's addresses. VFs of one PF
    /// are switched by the NIC's embedded switch.
    #[allow(clippy::too_many_arguments)]
    fn underlay_out(
        &mut self,
        host: &'a Host,
        pod: &'a PodNet,
        dev: &str,
        kind: &LinkKind,
        lower: &str,
        pkt: Pkt,
        next: IpAddr,
    ) -> Outcome {
        let node: &str = &host.node;
        self.push(
            HopKind::Underlay,
            pod_place(pod),
            Some(dev),
            Detail::UnderlayOut {
                link: kind.clone(),
                lower: lower.to_string(),
                secondary: dev != pod.ifname,
            },
        );
        let holders = self.fabric.underlay_holders(lower, next);
        if holders.len() > 1 {
            return self.conflict(lower, next, holders);
        }
        if let Some(&end) = holders.first() {
            if end.host.node == node {
                match (kind, end.kind) {
                    (LinkKind::Macvlan(l), _) if l.mode == "private" => {
                        return self.dropped(format!(
                            "macvlan private mode: macvlans on one master ({lower}) never talk to each other"
                        ));
                    }
                    (LinkKind::Macvlan(l), _) if l.mode == "vepa" => {
                        return self.dropped(format!(
                            "macvlan VEPA mode sends the frame out of {lower} to the switch port, which must send it back (reflective relay, hairpin); the lab's switch does not"
                        ));
                    }
                    (_, LinkKind::Macvlan(l)) if l.mode == "private" || l.mode == "vepa" => {
                        return self.dropped(format!(
                            "the receiving macvlan is in {} mode: it takes no frame switched inside {node}",
                            l.mode
                        ));
                    }
                    (LinkKind::SriovVf(_), _) => {
                        self.push(
                            HopKind::Underlay,
                            Place::Node(node.to_string()),
                            Some(lower),
                            Detail::EmbeddedSwitch,
                        );
                    }
                    _ => {
                        self.push(
                            HopKind::Underlay,
                            Place::Node(node.to_string()),
                            Some(lower),
                            Detail::SwitchedInside,
                        );
                    }
                }
                return self.underlay_arrive(end, pkt);
            }
            return self.underlay_deliver(end, lower, pkt);
        }
        if let Some(peer) = self.fabric.holder_of(next) {
            let peer_lower = peer.root.links.get(lower);
            if peer.node == node {
                return self.dropped(format!(
                    "{next} is {node}'s own address on {lower}: a {} child never reaches its lower device's addresses (the kernel passes frames between them neither way)",
                    underlay_text(kind, lower)
                ));
            }
            if peer_lower.is_some_and(|l| l.addrs.iter().any(|a| a.addr() == next)) {
                self.push(
                    HopKind::Node,
                    Place::Node(peer.node.clone()),
                    Some(lower),
                    Detail::Arrived { addr: next },
                );
                return self.host_stack(peer, pkt, Some(lower.to_string()));
            }
        }
        self.no_route(format!(
            "nothing on the {lower} wire answers ARP for {next}"
        ))
    }

    /// Two interfaces on one wire hold the address: both answer ARP, and which one the
    /// sender's neighbour entry ends up with depends on timing (the lab does not pick). The
    /// usual cause: host-local, which keeps its leases per node, on a NAD shared by nodes.
    fn conflict(&self, lower: &str, ip: IpAddr, holders: &[UnderlayEnd<'_>]) -> Outcome {
        let who: Vec<String> = holders
            .iter()
            .map(|e| {
                let pod = self
                    .net
                    .pod_on_node(&e.host.node, |p| p.netns.as_deref() == Some(e.netns))
                    .map(|p| p.key())
                    .unwrap_or_else(|| format!("netns {}", e.netns));
                format!("{pod} {} on {}", e.ifname, e.host.node)
            })
            .collect();
        Outcome::Conflict {
            hop: self.hops.len(),
            reason: format!(
                "{ip} is held by {} on the {lower} wire — both answer ARP, so where the packet goes depends on whose reply came last (host-local keeps leases per node: give each node its own range, or use a cluster-wide IPAM such as whereabouts)",
                who.join(" and ")
            ),
        }
    }

    /// Across the wire of `lower` to another node's pod interface.
    fn underlay_deliver(&mut self, end: UnderlayEnd<'a>, lower: &str, pkt: Pkt) -> Outcome {
        self.push(
            HopKind::Underlay,
            Place::Node(end.host.node.clone()),
            Some(lower),
            Detail::Across,
        );
        self.underlay_arrive(end, pkt)
    }

    /// Into the pod interface that holds the destination.
    fn underlay_arrive(&mut self, end: UnderlayEnd<'a>, pkt: Pkt) -> Outcome {
        let lower = underlay_lower(end.kind).unwrap_or_default();
        let pod = self
            .net
            .pod_on_node(&end.host.node, |p| p.netns.as_deref() == Some(end.netns));
        let who = pod
            .map(|p| p.key())
            .unwrap_or_else(|| format!("netns {}", end.netns));
        let at = pod.map_or_else(|| Place::Node(end.host.node.clone()), pod_place);
        self.push(
            HopKind::Underlay,
            at.clone(),
            Some(end.ifname),
            Detail::UnderlayIn {
                link: end.kind.clone(),
                lower: lower.to_string(),
            },
        );
        let detail = Detail::Received {
            addr: pkt.dst,
            from: None,
            netns: pod.is_none().then(|| end.netns.to_string()),
        };
        self.push(HopKind::Endpoint, at, Some(end.ifname), detail);
        Outcome::Delivered(format!("{who} {} {}", end.ifname, pkt.dst))
    }

    fn bridged(&mut self, host: &'a Host, br: &str, mut pkt: Pkt, next: IpAddr) -> Outcome {
        let node: &str = &host.node;
        let calls = host
            .sysctls
            .get("net.bridge.bridge-nf-call-iptables")
            .is_none_or(|v| v == "1");
        if calls {
            let step = table_hook(
                host,
                TableKind::Nat,
                "PREROUTING",
                true,
                &pkt,
                Some(br),
                None,
            );
            if let Some(o) = self.apply_hook(node, step, &mut pkt) {
                return o;
            }
            let step = table_hook(
                host,
                TableKind::Filter,
                "FORWARD",
                true,
                &pkt,
                Some(br),
                Some(br),
            );
            if let Some(o) = self.apply_hook(node, step, &mut pkt) {
                return o;
            }
            let step = table_hook(
                host,
                TableKind::Nat,
                "POSTROUTING",
                true,
                &pkt,
                Some(br),
                Some(br),
            );
            let masq = host
                .root
                .links
                .get(br)
                .and_then(|l| l.addrs.first())
                .map(|n| n.addr());
            if let Some(o) = self.apply_hook_masq(node, step, &mut pkt, masq) {
                return o;
            }
        }
        self.bridge_deliver(host, node, br, pkt, next)
    }

    /// Across bridge `br` to the port whose pod holds `next`.
    fn bridge_deliver(
        &mut self,
        host: &'a Host,
        node: &str,
        br: &str,
        pkt: Pkt,
        next: IpAddr,
    ) -> Outcome {
        let pod = self.net.pod_on_node(node, |p| {
            p.ip == Some(next)
                && p.host_veth
                    .as_deref()
                    .and_then(|v| host.root.links.get(v))
                    .is_some_and(|l| l.master.as_deref() == Some(br))
        });
        let Some(pod) = pod else {
            return self.no_route(format!("nothing on {br} of {node} answers ARP for {next}"));
        };
        let veth = pod.host_veth.clone().unwrap_or_default();
        self.deliver_to_pod(pod, &veth, pkt)
    }

    /// Out of the host veth `veth` into `pod`. The policies' ingress verdict is taken on
    /// the packet as it is now (a source masqueraded on the way is what an enforcing data
    /// plane judges).
    fn deliver_to_pod(&mut self, pod: &'a PodNet, veth: &str, pkt: Pkt) -> Outcome {
        self.push(
            HopKind::Veth,
            Place::Node(pod.node.clone()),
            Some(veth),
            Detail::HostVeth {
                proxy_arp_for: None,
            },
        );
        if self.enforcement != Enforcement::Iptables {
            self.note_ingress(&pkt);
        }
        if Some(pkt.src) == pod.ip {
            // Its own address arriving on eth0: ip_route_input's source check finds a
            // local address and drops it (accept_local is 0), so the connection times out.
            return self.dropped(format!(
                "{} receives a packet from its own address {} on {}: its kernel drops it as a martian source (nothing rewrote the source on the way)",
                pod.key(),
                pkt.src,
                pod.ifname
            ));
        }
        let detail = Detail::Received {
            addr: pkt.dst,
            from: (Some(pkt.src) != self.orig_src).then_some(pkt.src),
            netns: None,
        };
        self.push(HopKind::Endpoint, pod_place(pod), Some(&pod.ifname), detail);
        Outcome::Delivered(format!("{} {} {}", pod.key(), pod.ifname, pkt.dst))
    }

    /// Remember the packet as the destination's ingress check sees it, when a rewrite on
    /// the way made it another flow than the one sent (see [`trace`]).
    fn note_ingress(&mut self, pkt: &Pkt) {
        let sent = self.sent.as_ref();
        let rewritten =
            sent.is_some_and(|s| s.src != pkt.src || s.dst != pkt.dst || s.dport != pkt.dport);
        self.at_ingress = rewritten.then(|| pkt.clone());
    }

    fn why_no_route(&self, host: &Host, dst_ip: IpAddr) -> String {
        let node = &host.node;
        match self.route_gap(host, dst_ip) {
            Some(Gap::OwnNode(why)) => format!("{node} has no route to {dst_ip}: {why}"),
            Some(Gap::Peer(why)) => format!("{node} has no route to {dst_ip} ({why})"),
            None => format!("{node} has no route to {dst_ip} (Network is unreachable)"),
        }
    }

    /// Why the node's only route to a cluster address is its default route.
    fn why_only_default(&self, host: &Host, dst_ip: IpAddr) -> String {
        let node = &host.node;
        let lead = format!("{node} has no route to {dst_ip} but its default route");
        match self.route_gap(host, dst_ip) {
            Some(Gap::OwnNode(why)) => format!("{lead}: {why}"),
            Some(Gap::Peer(why)) => format!("{lead} ({why})"),
            None => match self.net.pod_with_ip(dst_ip) {
                Some(p) => format!("{lead} ({dst_ip} is {}/{}'s address)", p.namespace, p.name),
                None => lead,
            },
        }
    }

    /// Why a node lacks the route to an address in a node's podCIDR (None: in no podCIDR).
    fn route_gap(&self, host: &Host, dst_ip: IpAddr) -> Option<Gap> {
        let node = &host.node;
        let owner = self
            .net
            .nodes
            .iter()
            .find(|n| n.pod_cidr.is_some_and(|c| c.trunc().contains(&dst_ip)))?;
        if &owner.name == node {
            return Some(Gap::OwnNode(
                "no pod has been networked on it yet (its bridge has no address)".to_string(),
            ));
        }
        let cidr = owner
            .pod_cidr
            .map(|c| c.trunc().to_string())
            .unwrap_or_default();
        let refused = host.peer_entry_of(&owner.name);
        let why = match refused {
            Some(p) if !host.accepts_route(&p.route) => format!(
                "the kernel refused `{}`: Nexthop has invalid gateway (host-gw needs the nodes on one L2 segment)",
                p.route.to_ip_route()
            ),
            Some(_) => "the route is missing".to_string(),
            None => format!("the network daemon programmed no route for {}", owner.name),
        };
        Some(Gap::Peer(format!(
            "{cidr} is {}'s podCIDR, but {why}",
            owner.name
        )))
    }
}

/// Why a node lacks a route to an address in a podCIDR, as [`Walker::route_gap`] says.
enum Gap {
    /// The podCIDR is the node's own.
    OwnNode(String),
    /// The podCIDR is another node's.
    Peer(String),
}

/// The VXLAN datagram carrying `pkt` (50 bytes more) and the uplink's MTU it is
/// fragmented to when it does not fit (the outer packet has no DF).
fn vxlan_outer(host: &Host, pkt: &Pkt) -> (u32, u32) {
    let outer = pkt.size + 50;
    let uplink_mtu = host.root.links.get("eth0").map(|l| l.mtu).unwrap_or(1500);
    (outer, uplink_mtu)
}

/// The packet of the last hop, to note what was checked against it.
fn hop_packet(hops: &mut [Hop]) -> Option<&mut PacketAt> {
    hops.last_mut().and_then(|h| h.packet.as_mut())
}

/// Longest-prefix match over a table in `ip route` order (for one prefix, the first).
fn lookup(table: &[RouteEntry], ip: IpAddr) -> Option<&RouteEntry> {
    let mut best: Option<(&RouteEntry, u8)> = None;
    for r in table {
        let net = r.dst.net();
        if net.addr().is_ipv4() != ip.is_ipv4() || !net.contains(&ip) {
            continue;
        }
        if best.is_none_or(|(_, len)| net.prefix_len() > len) {
            best = Some((r, net.prefix_len()));
        }
    }
    best.map(|(r, _)| r)
}

/// The route the host's kernel takes for `ip` (see `host_lookup`), for tests.
#[cfg(test)]
pub(crate) fn host_route(host: &Host, ip: IpAddr) -> Option<RouteEntry> {
    host_lookup(host, ip)
}

/// The host's FIB lookup: longest prefix over its own routes and the daemon's peer routes,
/// read in place (no table is built or sorted per packet).
/// A broadcast address a sender's kernel routes as such: the limited broadcast
/// `255.255.255.255`, or the network broadcast of an address on one of its links whose
/// prefix is shorter than /31 (the kernel adds a `broadcast` route to the local table for
/// each, `fib_add_ifaddr`).
struct Broadcast<'a> {
    /// The link whose network it is (for the limited broadcast, the first link up with an
    /// IPv4 address other than `lo`).
    dev: &'a str,
    /// The network, or `None` for the limited broadcast.
    net: Option<ipnet::IpNet>,
}

impl<'a> Broadcast<'a> {
    fn of(ns: &'a crate::cni::host::Netns, dst: IpAddr) -> Option<Self> {
        let IpAddr::V4(v4) = dst else { return None };
        let mut links = ns.links.values().filter(|l| l.up);
        if v4.is_broadcast() {
            let dev = links.find(|l| {
                !matches!(l.kind, LinkKind::Loopback) && l.addrs.iter().any(|a| a.addr().is_ipv4())
            })?;
            return Some(Broadcast {
                dev: &dev.name,
                net: None,
            });
        }
        links.find_map(|l| {
            l.addrs
                .iter()
                .find(|a| a.prefix_len() < 31 && a.broadcast() == dst && a.addr().is_ipv4())
                .map(|a| Broadcast {
                    dev: &l.name,
                    net: Some(a.trunc()),
                })
        })
    }

    /// `10.244.1.255 is the broadcast address of web's eth0 (10.244.1.0/24)`.
    fn describe(&self, sender: &str) -> String {
        match self.net {
            Some(net) => format!(
                "{} is the broadcast address of {sender}'s {} ({net}), which the kernel routes as broadcast",
                net.broadcast(),
                self.dev
            ),
            None => format!(
                "255.255.255.255 is the limited broadcast address, which {sender}'s kernel routes as broadcast out of {}",
                self.dev
            ),
        }
    }
}

fn host_lookup(host: &Host, ip: IpAddr) -> Option<RouteEntry> {
    let own = host.root.route_table();
    let best: Option<(&RouteEntry, u8)> = lookup(&own, ip).map(|r| (r, r.dst.net().prefix_len()));
    let peers = host.peers.read();
    // A peer's route wins only with a longer prefix. Whether the kernel took an entry is
    // asked only of those covering `ip`, longest first.
    let peer = peers.longest_match(ip, best.map(|(_, len)| len), |p| host.holds_peer_entry(p));
    match peer {
        Some((p, _)) => Some(p.route.clone()),
        None => best.map(|(r, _)| r.clone()),
    }
}

/// The source address the host puts on a packet it sends by `r` (and MASQUERADE uses):
/// the route's `src`, else the first address of the output device, else (a device with no
/// address, such as Calico's `cali…` veths) what `inet_select_addr` finds on the others in
/// ifindex order (the kernel's device list), where the uplink comes first (made with the
/// node) and loopback's host-scope address never qualifies.
fn preferred_src(host: &Host, r: &RouteEntry) -> Option<IpAddr> {
    if let Some(s) = r.src() {
        return Some(s);
    }
    let first = |l: &crate::cni::host::Link| {
        l.addrs
            .iter()
            .map(|n| n.addr())
            .find(|a| a.is_ipv4() && !a.is_loopback())
    };
    let out = host.root.links.get(&r.dev).and_then(first);
    out.or_else(|| host.root.links.by_ifindex().into_iter().find_map(first))
}

/// Is `ip` one of the host namespace's addresses?
fn host_owns(host: &Host, ip: IpAddr) -> bool {
    host.root
        .links
        .values()
        .any(|l| l.addrs.iter().any(|n| n.addr() == ip))
}

/// Is `ip` an address of the host's device `dev`?
fn host_owns_on(host: &Host, dev: &str, ip: IpAddr) -> bool {
    host.root
        .links
        .get(dev)
        .is_some_and(|l| l.addrs.iter().any(|n| n.addr() == ip))
}

/// A bridge hop: the bridge's first address.
fn bridge_detail(host: &Host, br: &str) -> Detail {
    let addr = host
        .root
        .links
        .get(br)
        .and_then(|l| l.addrs.first())
        .map(|a| a.addr());
    Detail::Bridge { addr }
}
