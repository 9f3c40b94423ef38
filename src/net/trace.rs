//! The path of one packet, hop by hop: pod `eth0` → host veth → bridge → node routing →
//! peer node → bridge → veth → pod `eth0`, with the NetworkPolicy checks where a
//! policy-enforcing plugin makes them (egress on the source pod's host veth, ingress on
//! the destination pod's host veth) and the first hop where the packet stops.
//!
//! A missing route stops the trace with `no route to host` and says why (no podCIDR, no
//! InternalIP, next hop not on-link, nobody answers ARP). Masquerading (bridge `ipMasq`) is
//! not modelled: the packet keeps the pod's source address end to end.

use super::NetError;
use super::policy::{Decision, Flow, SideVerdict, Verdict, evaluate_resolved};
use super::routes::{self, Route, missing_peer_route};
use super::view::{ClusterNet, NodeNet, PodNet, Resolved};
use std::net::IpAddr;

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
}

/// One hop of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// What kind of hop.
    pub kind: HopKind,
    /// The hop as the trace prints it.
    pub text: String,
    /// For a node route through a gateway: the next hop address.
    pub next_hop: Option<IpAddr>,
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
    /// No route (or no neighbour) for it.
    NoRoute {
        /// The last hop reached.
        hop: usize,
        /// Why.
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
}

impl Trace {
    /// Did the packet arrive?
    pub fn delivered(&self) -> bool {
        matches!(self.outcome, Outcome::Delivered(_))
    }

    /// The gateways used on node routes, in order (host-gw next hops).
    pub fn next_hops(&self) -> Vec<IpAddr> {
        self.hops.iter().filter_map(|h| h.next_hop).collect()
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
                    if h.next_hop.is_some() {
                        let route = h.text.split_once(": ").map(|(_, r)| r).unwrap_or(&h.text);
                        parts.push(format!("route {route}"));
                    }
                }
                _ => parts.push(h.text.clone()),
            }
        }
        parts.join(" → ")
    }

    /// The last line: `delivered …`, `dropped at hop N …`, `no route to host at hop N …`.
    pub fn result_line(&self) -> String {
        match &self.outcome {
            Outcome::Delivered(to) => format!("delivered to {to}"),
            Outcome::Dropped { hop, reason } => format!("dropped at hop {hop}: {reason}"),
            Outcome::NoRoute { hop, reason } => {
                format!("no route to host at hop {hop}: {reason}")
            }
        }
    }

    /// Printable lines: the flow, numbered hops, then the result.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("trace {}", self.verdict.flow)];
        let width = self.hops.len().to_string().len();
        for (i, h) in self.hops.iter().enumerate() {
            out.push(format!("  {:>width$}  {}", i + 1, h.text));
        }
        out.push(self.result_line());
        out
    }
}

/// Trace a flow. Errors only for unknown names or a source that is not a pod or a node.
pub fn trace(net: &ClusterNet, flow: &Flow) -> Result<Trace, NetError> {
    let src = net.lookup(&flow.src)?;
    let dst = net.lookup(&flow.dst)?;
    if let Resolved::Ip(ip) = src {
        return Err(NetError::TraceSource(ip.to_string()));
    }
    let verdict = evaluate_resolved(net, src, dst, flow.port, flow.protocol);
    let mut w = Walker {
        net,
        verdict: &verdict,
        hops: Vec::new(),
    };
    let outcome = w.run(src, dst);
    let hops = w.hops;
    Ok(Trace {
        verdict,
        hops,
        outcome,
    })
}

struct Walker<'a> {
    net: &'a ClusterNet,
    verdict: &'a Verdict,
    hops: Vec<Hop>,
}

impl<'a> Walker<'a> {
    fn push(&mut self, kind: HopKind, text: String) {
        self.hops.push(Hop {
            kind,
            text,
            next_hop: None,
        });
    }

    fn no_route(&self, reason: String) -> Outcome {
        Outcome::NoRoute {
            hop: self.hops.len(),
            reason,
        }
    }

    /// A policy check hop; returns the drop outcome if the side denies.
    fn policy(&mut self, side: &SideVerdict, at: &str) -> Option<Outcome> {
        if side.decision == Decision::NotAPod {
            return None;
        }
        let full = self.verdict.side_text(side);
        let prefix = format!("{}: ", side.direction.as_str());
        let reason = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
        let word = if side.decision.allows() {
            "allowed"
        } else {
            "denied"
        };
        self.push(
            HopKind::Policy,
            format!(
                "{} policy at {at}: {word} ({reason})",
                side.direction.as_str()
            ),
        );
        if side.decision.allows() {
            None
        } else {
            Some(Outcome::Dropped {
                hop: self.hops.len(),
                reason: full,
            })
        }
    }

    fn run(&mut self, src: Resolved<'a>, dst: Resolved<'a>) -> Outcome {
        match src {
            Resolved::Pod(p) => self.start_at_pod(p, dst),
            Resolved::Node(n) => {
                self.push(
                    HopKind::Endpoint,
                    format!("{} (host network namespace)", n.name),
                );
                match self.dst_ip(dst) {
                    Ok(ip) => self.forward(n, ip, dst),
                    Err(o) => o,
                }
            }
            Resolved::Ip(_) => self.no_route("a trace starts at a pod or a node".into()),
        }
    }

    fn dst_ip(&self, dst: Resolved<'_>) -> Result<IpAddr, Outcome> {
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

    fn start_at_pod(&mut self, pod: &'a PodNet, dst: Resolved<'a>) -> Outcome {
        let Some(src_ip) = pod.ip else {
            self.push(
                HopKind::Endpoint,
                format!("{} {} (no address)", pod.key(), pod.ifname),
            );
            return self.no_route(format!(
                "{} has no IP address (its sandbox network is not set up)",
                pod.key()
            ));
        };
        self.push(
            HopKind::Endpoint,
            format!("{} {} {src_ip}", pod.key(), pod.ifname),
        );
        let dst_ip = match self.dst_ip(dst) {
            Ok(ip) => ip,
            Err(o) => return o,
        };
        let Some(node) = self.net.node(&pod.node) else {
            return self.no_route(format!("{}'s node {} is unknown", pod.key(), pod.node));
        };
        let veth = pod.host_veth.clone().unwrap_or_else(|| "veth?".to_string());
        if dst_ip == src_ip {
            self.push(
                HopKind::PodRoute,
                format!(
                    "route in {}: local {src_ip} dev {} table local proto kernel scope host src {src_ip} (its own address: looped back inside the pod)",
                    pod.key(),
                    pod.ifname
                ),
            );
            let at = format!("{} (to itself)", pod.key());
            if let Some(o) = self.policy(&self.verdict.egress.clone(), &at) {
                return o;
            }
            if let Some(o) = self.policy(&self.verdict.ingress.clone(), &at) {
                return o;
            }
            return Outcome::Delivered(format!("{} {} {src_ip} (itself)", pod.key(), pod.ifname));
        }
        let proutes = routes::pod_routes_of(self.net, pod);
        let Some(r) = routes::lookup(&proutes, dst_ip).cloned() else {
            return self.no_route(format!("{} has no route to {dst_ip}", pod.key()));
        };
        self.push(
            HopKind::PodRoute,
            format!("route in {}: {}", pod.key(), r.to_ip_route()),
        );
        self.push(
            HopKind::Veth,
            format!("{veth} (host side) on {}", node.name),
        );
        if let Some(o) = self.policy(&self.verdict.egress.clone(), &veth) {
            return o;
        }
        self.push(HopKind::Bridge, bridge_text(node));
        if r.via.is_none() {
            // On-link in the pod subnet: bridged at L2, no routing on the node.
            if node.owns(dst_ip) {
                return Outcome::Delivered(format!("{} ({} {dst_ip})", node.name, node.bridge));
            }
            return self.deliver_on_bridge(node, dst_ip, dst);
        }
        self.forward(node, dst_ip, dst)
    }

    /// Route on `node` (the packet is in its host namespace) until delivery or failure.
    fn forward(&mut self, start: &'a NodeNet, dst_ip: IpAddr, dst: Resolved<'a>) -> Outcome {
        let mut node = start;
        let mut visited: Vec<&str> = Vec::new();
        loop {
            if node.owns(dst_ip) {
                return Outcome::Delivered(format!("{} (local address {dst_ip})", node.name));
            }
            if visited.contains(&node.name.as_str()) {
                return self.no_route(format!("routing loop through {}", node.name));
            }
            visited.push(&node.name);
            let table = routes::node_routes(self.net, &node.name).unwrap_or_default();
            let Some(r) = routes::lookup(&table, dst_ip).cloned() else {
                return self.no_route(self.why_no_route(node, dst_ip));
            };
            self.hops.push(Hop {
                kind: HopKind::NodeRoute,
                text: format!("route on {}: {}", node.name, r.to_ip_route()),
                next_hop: r.via,
            });
            if r.dev == node.bridge && r.via.is_none() {
                self.push(HopKind::Bridge, bridge_text(node));
                return self.deliver_on_bridge(node, dst_ip, dst);
            }
            let target = r.via.unwrap_or(dst_ip);
            let next = self
                .net
                .nodes
                .iter()
                .find(|n| n.internal_ip == Some(target));
            let Some(next) = next else {
                return self.no_route(match r.via {
                    Some(gw) => format!("next hop {gw} does not answer ARP on {}", r.dev),
                    None => format!(
                        "nothing on {}'s {} answers ARP for {dst_ip}",
                        node.name, r.dev
                    ),
                });
            };
            self.push(HopKind::Node, uplink_text(next, &r));
            node = next;
        }
    }

    fn why_no_route(&self, node: &NodeNet, dst_ip: IpAddr) -> String {
        let owner = self
            .net
            .nodes
            .iter()
            .find(|n| n.pod_cidr.is_some_and(|c| c.trunc().contains(&dst_ip)));
        match owner {
            Some(o) if o.name == node.name => format!(
                "{} has no route to {dst_ip}: its {} has no address yet (no pod networked on it)",
                node.name, node.bridge
            ),
            Some(o) => {
                let why = missing_peer_route(node, o)
                    .unwrap_or_else(|| "the route is missing".to_string());
                format!(
                    "{} has no route to {dst_ip} ({} is {}'s podCIDR, but {why})",
                    node.name,
                    o.pod_cidr
                        .map(|c| c.trunc().to_string())
                        .unwrap_or_default(),
                    o.name
                )
            }
            None => format!("{} has no route to {dst_ip}", node.name),
        }
    }

    /// Across the bridge to a pod on `node` with address `dst_ip`, through its veth.
    fn deliver_on_bridge(&mut self, node: &NodeNet, dst_ip: IpAddr, dst: Resolved<'a>) -> Outcome {
        let pod = self
            .net
            .pods
            .iter()
            .find(|p| p.node == node.name && p.ip == Some(dst_ip));
        let Some(pod) = pod else {
            return self.no_route(format!(
                "nothing on {} of {} answers ARP for {dst_ip}",
                node.bridge, node.name
            ));
        };
        let veth = pod.host_veth.clone().unwrap_or_else(|| "veth?".to_string());
        self.push(
            HopKind::Veth,
            format!("{veth} (host side) on {}", node.name),
        );
        if matches!(dst, Resolved::Pod(_)) {
            if let Some(o) = self.policy(&self.verdict.ingress.clone(), &veth) {
                return o;
            }
        }
        let text = format!("{} {} {dst_ip}", pod.key(), pod.ifname);
        self.push(HopKind::Endpoint, text.clone());
        Outcome::Delivered(text)
    }
}

fn bridge_text(node: &NodeNet) -> String {
    match node.gateway {
        Some(gw) => format!("{} on {} ({gw})", node.bridge, node.name),
        None => format!("{} on {}", node.bridge, node.name),
    }
}

fn uplink_text(node: &NodeNet, r: &Route) -> String {
    match node.internal_ip {
        Some(ip) => format!("{} {} {ip}", node.name, r.dev),
        None => format!("{} {}", node.name, r.dev),
    }
}
