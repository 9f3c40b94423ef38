//! NetworkPolicy (`networking.k8s.io/v1`) as Kubernetes defines it, and the verdict on one
//! flow.
//!
//! Semantics (https://kubernetes.io/docs/concepts/services-networking/network-policies/,
//! and the API comments in k8s.io/api `networking/v1/types.go`):
//! - `policyTypes` defaults to `[Ingress]`, plus `Egress` when the spec has egress rules
//!   (`SetDefaults_NetworkPolicy` in `pkg/apis/networking/v1/defaults.go`).
//! - A pod is isolated for a direction iff some policy in its namespace selects it and has
//!   that type. Traffic is allowed iff the source's egress side allows it AND the
//!   destination's ingress side allows it; a side allows when the pod is not isolated, or
//!   when any rule of any policy isolating it matches (policies are additive).
//! - A rule with no peers matches every peer; with no ports, every port.
//! - A peer's `podSelector` alone means pods in the policy's namespace; `namespaceSelector`
//!   alone, every pod in the matching namespaces; both, matching pods in matching
//!   namespaces; `ipBlock` matches by address (pods included, as Calico does: the docs leave
//!   ipBlock on pod IPs to the implementation).
//! - Traffic between a pod and the node it runs on is always allowed (docs, "Network
//!   traffic filtering"). So is a pod's traffic to itself: it never leaves the pod's
//!   network namespace, and the upstream conformance tests expect it to follow no policy
//!   (`test/e2e/network/netpol/reachability.go`, `AllowLoopback`).
//! - Named ports match the container port of that name on the destination pod
//!   (`spec.containers[].ports[].name`); against a node or an external IP they match nothing.

#[cfg(test)]
use super::NetError;
use super::view::{ClusterNet, Endpoint, PodNet, Policy, Resolved};
pub use crate::cluster::policy::{
    IntOrString, IpBlock, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec, Protocol,
};
use std::fmt;
use std::net::IpAddr;

/// One connection attempt: from `src` to `dst` on `port`/`protocol`. `port: None` is a
/// packet without a port: rules that list ports do not match it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Who sends.
    pub src: Endpoint,
    /// Who receives.
    pub dst: Endpoint,
    /// Destination port.
    pub port: Option<u16>,
    /// Transport protocol.
    pub protocol: Protocol,
}

impl Flow {
    /// A TCP flow to a port.
    pub fn tcp(src: Endpoint, dst: Endpoint, port: u16) -> Self {
        Flow {
            src,
            dst,
            port: Some(port),
            protocol: Protocol::Tcp,
        }
    }
}

/// Which side of a flow a decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// Leaving the source pod.
    Egress,
    /// Entering the destination pod.
    Ingress,
}

impl Direction {
    /// `egress` / `ingress`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Egress => "egress",
            Direction::Ingress => "ingress",
        }
    }
}

/// A rule of a policy that allowed a flow: `rule` is the 0-based index into
/// `spec.ingress` or `spec.egress` (rendered 1-based: "ingress rule 1").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRef {
    /// `namespace/name` of the policy.
    pub policy: String,
    /// Index of the rule in the policy's list for that direction.
    pub rule: usize,
}

/// What one side of a flow decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The endpoint is a node or an outside address: NetworkPolicy does not apply to it.
    NotAPod,
    /// No policy isolates the pod in this direction: allowed.
    NotIsolated,
    /// Isolated, but the peer is the node the pod runs on: always allowed.
    OwnNode(String),
    /// The pod talks to itself: looped back inside its namespace, no policy applies.
    Loopback,
    /// Isolated and these rules allow the flow.
    AllowedBy(Vec<RuleRef>),
    /// Isolated by these policies (`namespace/name`) and no rule of theirs allows the flow.
    Denied(Vec<String>),
}

impl Decision {
    /// Does this side let the flow through?
    pub fn allows(&self) -> bool {
        !matches!(self, Decision::Denied(_))
    }
}

/// The decision of one side, with who it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideVerdict {
    /// Egress (source side) or ingress (destination side).
    pub direction: Direction,
    /// The endpoint this side is about (`default/web`, `node-1`, `8.8.8.8`).
    pub subject: String,
    /// The peer at the other end.
    pub peer: String,
    /// What was decided and by which policies.
    pub decision: Decision,
}

/// The verdict on a flow: allowed iff both sides allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The flow as text: `default/web → default/db:3306/TCP`.
    pub flow: String,
    /// `port/PROTO` or `PROTO (no port)`, as the reasons print it.
    pub port_text: String,
    /// The source side.
    pub egress: SideVerdict,
    /// The destination side.
    pub ingress: SideVerdict,
}

impl Verdict {
    /// True when both sides allow the flow.
    pub fn allowed(&self) -> bool {
        self.egress.decision.allows() && self.ingress.decision.allows()
    }

    /// The reason of one side, as a sentence fragment.
    pub(crate) fn side_text(&self, side: &SideVerdict) -> String {
        let dir = side.direction.as_str();
        match &side.decision {
            Decision::NotAPod => format!(
                "{dir}: {} is not a pod, NetworkPolicy does not apply",
                side.subject
            ),
            Decision::NotIsolated => {
                format!("{dir}: no policy isolates {} for {dir}", side.subject)
            }
            Decision::Loopback => format!(
                "{dir}: {} to itself never leaves the pod, no policy applies",
                side.subject
            ),
            Decision::OwnNode(node) => {
                let word = match side.direction {
                    Direction::Egress => "to",
                    Direction::Ingress => "from",
                };
                format!("{dir}: traffic {word} its own node {node} is always allowed")
            }
            Decision::AllowedBy(rules) => {
                let list: Vec<String> = rules
                    .iter()
                    .map(|r| format!("{} ({dir} rule {})", r.policy, r.rule + 1))
                    .collect();
                format!("{dir}: allowed by policy {}", list.join(", "))
            }
            Decision::Denied(policies) => {
                let word = match side.direction {
                    Direction::Egress => "to",
                    Direction::Ingress => "from",
                };
                format!(
                    "{dir}: {} is isolated for {dir} by {} and no rule allows traffic {word} {} on {}",
                    side.subject,
                    policies.join(", "),
                    side.peer,
                    self.port_text
                )
            }
        }
    }

    /// One line, starting with `allowed` or `denied`, naming the deciding policies.
    pub fn text(&self) -> String {
        let head = if self.allowed() { "allowed" } else { "denied" };
        format!(
            "{head}: {}; {}; {}",
            self.flow,
            self.side_text(&self.egress),
            self.side_text(&self.ingress)
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl NetworkPolicySpec {
    /// `(ingress, egress)`: the directions this policy isolates, with the apiserver's
    /// default when `policyTypes` is empty.
    pub(crate) fn effective_types(&self) -> (bool, bool) {
        if self.policy_types.is_empty() {
            (true, !self.egress.is_empty())
        } else {
            (
                self.policy_types.iter().any(|t| t == "Ingress"),
                self.policy_types.iter().any(|t| t == "Egress"),
            )
        }
    }

    /// The spec as the apiserver stores it after defaulting: `policyTypes` filled in and
    /// every port's `protocol` set (TCP when absent).
    pub(crate) fn defaulted(&self) -> NetworkPolicySpec {
        let mut s = self.clone();
        if s.policy_types.is_empty() {
            s.policy_types.push("Ingress".into());
            if !s.egress.is_empty() {
                s.policy_types.push("Egress".into());
            }
        }
        let fill = |ports: &mut Vec<NetworkPolicyPort>| {
            for p in ports.iter_mut() {
                if p.protocol.is_none() {
                    p.protocol = Some("TCP".into());
                }
            }
        };
        for r in &mut s.ingress {
            fill(&mut r.ports);
        }
        for r in &mut s.egress {
            fill(&mut r.ports);
        }
        s
    }

    fn isolates(&self, dir: Direction) -> bool {
        let (i, e) = self.effective_types();
        match dir {
            Direction::Ingress => i,
            Direction::Egress => e,
        }
    }
}

/// Does a policy select this pod (same namespace, podSelector matches)?
pub fn selects(policy: &Policy, pod: &PodNet) -> bool {
    policy.namespace == pod.namespace && policy.spec.pod_selector.matches(&pod.labels)
}

#[cfg(test)]
/// The policies (`namespace/name`, sorted) that isolate a pod in a direction.
pub(crate) fn isolating_policies(net: &ClusterNet, pod: &PodNet, dir: Direction) -> Vec<String> {
    let mut v: Vec<String> = sorted_policies(net)
        .into_iter()
        .filter(|p| selects(p, pod) && p.spec.isolates(dir))
        .map(Policy::key)
        .collect();
    v.dedup();
    v
}

fn sorted_policies(net: &ClusterNet) -> Vec<&Policy> {
    let mut v: Vec<&Policy> = net.policies.iter().collect();
    v.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    v
}

#[cfg(test)]
/// Decide a flow: resolve both ends and apply the rules of every policy involved.
pub(crate) fn evaluate(net: &ClusterNet, flow: &Flow) -> Result<Verdict, NetError> {
    let src = net.lookup(&flow.src)?;
    let dst = net.lookup(&flow.dst)?;
    Ok(evaluate_resolved(net, src, dst, flow.port, flow.protocol))
}

pub(crate) fn evaluate_resolved(
    net: &ClusterNet,
    src: Resolved<'_>,
    dst: Resolved<'_>,
    port: Option<u16>,
    proto: Protocol,
) -> Verdict {
    let port_text = match port {
        Some(p) => format!("{p}/{proto}"),
        None => format!("{proto} (no port)"),
    };
    let flow = match port {
        Some(p) => format!("{} → {}:{p}/{proto}", src.label(), dst.label()),
        None => format!("{} → {} ({proto}, no port)", src.label(), dst.label()),
    };
    let same_pod = matches!((src, dst), (Resolved::Pod(a), Resolved::Pod(b)) if a.key() == b.key());
    let mut egress = side(net, Direction::Egress, src, dst, port, proto);
    let mut ingress = side(net, Direction::Ingress, dst, src, port, proto);
    if same_pod {
        egress.decision = Decision::Loopback;
        ingress.decision = Decision::Loopback;
    }
    Verdict {
        flow,
        port_text,
        egress,
        ingress,
    }
}

/// The ingress side of a packet as the destination's check sees it after a rewrite on the
/// way: unlike [`evaluate_resolved`], a pod reaching itself through its hostPort has left
/// the pod, so its own policies judge it.
pub(crate) fn ingress_seen(
    net: &ClusterNet,
    src: Resolved<'_>,
    dst: Resolved<'_>,
    port: Option<u16>,
    proto: Protocol,
) -> SideVerdict {
    side(net, Direction::Ingress, dst, src, port, proto)
}

/// The decision for `subject` in `dir` against `peer`. For egress the subject is the
/// source and the port belongs to the peer (the destination); for ingress the subject is
/// the destination and the port is its own.
fn side(
    net: &ClusterNet,
    dir: Direction,
    subject: Resolved<'_>,
    peer: Resolved<'_>,
    port: Option<u16>,
    proto: Protocol,
) -> SideVerdict {
    let decision = match subject {
        Resolved::Pod(pod) => decide(net, dir, pod, peer, port, proto),
        _ => Decision::NotAPod,
    };
    SideVerdict {
        direction: dir,
        subject: subject.label(),
        peer: peer.label(),
        decision,
    }
}

fn decide(
    net: &ClusterNet,
    dir: Direction,
    pod: &PodNet,
    peer: Resolved<'_>,
    port: Option<u16>,
    proto: Protocol,
) -> Decision {
    let isolating: Vec<&Policy> = sorted_policies(net)
        .into_iter()
        .filter(|p| selects(p, pod) && p.spec.isolates(dir))
        .collect();
    if isolating.is_empty() {
        return Decision::NotIsolated;
    }
    if let Resolved::Node(n) = peer {
        if n.name == pod.node {
            return Decision::OwnNode(n.name.clone());
        }
    }
    // The pod whose container ports a named port refers to: the destination.
    let port_owner: Option<&PodNet> = match dir {
        Direction::Ingress => Some(pod),
        Direction::Egress => match peer {
            Resolved::Pod(p) => Some(p),
            _ => None,
        },
    };
    let mut allowed = Vec::new();
    for p in &isolating {
        let rules: Vec<(&[NetworkPolicyPort], &[NetworkPolicyPeer])> = match dir {
            Direction::Ingress => p
                .spec
                .ingress
                .iter()
                .map(|r| (r.ports.as_slice(), r.from.as_slice()))
                .collect(),
            Direction::Egress => p
                .spec
                .egress
                .iter()
                .map(|r| (r.ports.as_slice(), r.to.as_slice()))
                .collect(),
        };
        for (i, (ports, peers)) in rules.into_iter().enumerate() {
            let peer_ok = peers.is_empty() || peers.iter().any(|x| peer_matches(net, p, x, peer));
            let port_ok = ports.is_empty()
                || ports
                    .iter()
                    .any(|x| port_matches(x, port, proto, port_owner));
            if peer_ok && port_ok {
                allowed.push(RuleRef {
                    policy: p.key(),
                    rule: i,
                });
            }
        }
    }
    if allowed.is_empty() {
        Decision::Denied(isolating.iter().map(|p| p.key()).collect())
    } else {
        Decision::AllowedBy(allowed)
    }
}

/// Does a peer entry of `policy` match the endpoint at the other end?
fn peer_matches(
    net: &ClusterNet,
    policy: &Policy,
    peer: &NetworkPolicyPeer,
    ep: Resolved<'_>,
) -> bool {
    if let Some(block) = &peer.ip_block {
        // Validation forbids ipBlock together with a selector; honour ipBlock alone.
        return ep.ip().is_some_and(|ip| ip_block_contains(block, ip));
    }
    let pod = match ep {
        Resolved::Pod(p) => p,
        _ => return false,
    };
    match (&peer.pod_selector, &peer.namespace_selector) {
        (None, None) => false,
        (Some(ps), None) => pod.namespace == policy.namespace && ps.matches(&pod.labels),
        (None, Some(ns)) => ns.matches(&net.namespace_labels(&pod.namespace)),
        (Some(ps), Some(ns)) => {
            ns.matches(&net.namespace_labels(&pod.namespace)) && ps.matches(&pod.labels)
        }
    }
}

/// Is `ip` in the block and outside every `except`? Unparsable CIDRs match nothing
/// (validation rejects them). A CIDR with host bits set is read as its network, as Go's
/// `ParseCIDR` does.
pub(crate) fn ip_block_contains(block: &IpBlock, ip: IpAddr) -> bool {
    let Ok(cidr) = block.cidr.parse::<ipnet::IpNet>() else {
        return false;
    };
    if !cidr.trunc().contains(&ip) {
        return false;
    }
    !block.except.iter().any(|e| {
        e.parse::<ipnet::IpNet>()
            .is_ok_and(|n| n.trunc().contains(&ip))
    })
}

fn port_matches(
    rule: &NetworkPolicyPort,
    port: Option<u16>,
    proto: Protocol,
    owner: Option<&PodNet>,
) -> bool {
    let rule_proto = rule.protocol.as_deref().unwrap_or("TCP");
    if rule_proto != proto.as_str() {
        return false;
    }
    match (&rule.port, port) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(IntOrString::Int(p)), Some(q)) => {
            let q = i32::from(q);
            match rule.end_port {
                Some(end) => *p <= q && q <= end,
                None => *p == q,
            }
        }
        (Some(IntOrString::Str(name)), Some(q)) => owner.is_some_and(|pod| {
            pod.ports
                .iter()
                .any(|cp| &cp.name == name && cp.protocol == proto && cp.container_port == q)
        }),
    }
}
