//! The per-endpoint policy map (`cilium_policy_<EP>`): what cilium-agent computes from the
//! NetworkPolicies that select an endpoint, and the lookup bpf_lxc does in it
//! (`pkg/k8s/network_policy.go`, `pkg/policy/mapstate.go`, `pkg/policy/resolve.go`,
//! `pkg/maps/policymap/policymap.go`, `bpf/lib/policy.h`).

use super::identity::{
    CLUSTER_LABEL, CLUSTER_NAME, ID_HOST, ID_UNKNOWN, ID_WORLD, IdentityKind, IdentityTable,
    NAMESPACE_LABELS_PREFIX, NumericIdentity, POD_NAMESPACE_LABEL,
};
use crate::cluster::selector::{LabelSelector, LabelSelectorRequirement};
use crate::net::policy::{IntOrString, NetworkPolicyPeer, NetworkPolicyPort, Protocol};
use crate::net::view::{ClusterNet, PodNet, Policy};
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// `trafficdirection.TrafficDirection`: the key's `egress` bit (0 ingress, 1 egress).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrafficDirection {
    /// Into the endpoint (bit 0).
    Ingress,
    /// Out of the endpoint (bit 1).
    Egress,
}

impl TrafficDirection {
    /// `Ingress` / `Egress`, as `cilium bpf policy get` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            TrafficDirection::Ingress => "Ingress",
            TrafficDirection::Egress => "Egress",
        }
    }
}

/// IP protocol numbers (`u8proto`): 0 is ANY.
pub(crate) fn proto_number(p: Protocol) -> u8 {
    match p {
        Protocol::Tcp => 6,
        Protocol::Udp => 17,
        Protocol::Sctp => 132,
    }
}

/// `u8proto.U8proto.String`.
pub(crate) fn proto_name(n: u8) -> &'static str {
    match n {
        0 => "ANY",
        1 => "ICMP",
        6 => "TCP",
        17 => "UDP",
        58 => "ICMPv6",
        132 => "SCTP",
        _ => "UNKNOWN",
    }
}

/// A policy map key: peer identity, direction, protocol, destination port and the LPM
/// prefix length over protocol+port (0 = any protocol and port, 8 = protocol only,
/// 24 = protocol and port, 9..23 = protocol and a port range of `2^(24-len)` ports
/// starting at `dport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolicyKey {
    /// Peer identity (0 = any peer).
    pub identity: NumericIdentity,
    /// Ingress or egress.
    pub direction: TrafficDirection,
    /// Protocol number (0 = any).
    pub proto: u8,
    /// First destination port (0 when wildcarded).
    pub dport: u16,
    /// Prefix length over protocol (8 bits) then port (16 bits).
    pub prefix_len: u8,
}

impl PolicyKey {
    /// `ANY`, `TCP`, `80/TCP` or `80-95/TCP` (`PolicyKey.PortProtoString`).
    pub(crate) fn port_proto(&self) -> String {
        let proto = proto_name(self.proto);
        match self.prefix_len {
            0 | 8 => proto.to_string(),
            24 => format!("{}/{proto}", self.dport),
            n if n > 8 && n < 24 => {
                let span = 0xffffu32 >> (n - 8);
                format!("{}-{}/{proto}", self.dport, u32::from(self.dport) + span)
            }
            n => format!("<INVALID PREFIX LENGTH: {n}>"),
        }
    }

    /// Does this key cover a packet's protocol and port (the LPM part of the match)?
    fn covers(&self, proto: u8, dport: u16) -> bool {
        match self.prefix_len {
            0 => true,
            8 => self.proto == proto,
            n => {
                let span = 1u32 << (24 - u32::from(n));
                self.proto == proto
                    && u32::from(dport) >= u32::from(self.dport)
                    && u32::from(dport) < u32::from(self.dport) + span
            }
        }
    }
}

/// A policy map value. NetworkPolicy only allows, so `deny` is false and there is no proxy
/// or auth; `derived_from` says which rules put the entry there (what `cilium policy get`
/// and the endpoint's realized policy call "derived-from").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyEntry {
    /// A deny entry (CiliumNetworkPolicy deny rules; never from a NetworkPolicy).
    pub deny: bool,
    /// The L7 proxy port, 0 for none.
    pub proxy_port: u16,
    /// Packets counted (the lab keeps 0).
    pub packets: u64,
    /// Bytes counted (the lab keeps 0).
    pub bytes: u64,
    /// What put the entry there: `default/allow-client (ingress rule 1)`, `allow-any`,
    /// `allow-localhost-ingress`.
    pub derived_from: BTreeSet<String>,
}

/// The policy enforcement of an endpoint per direction, as `cilium endpoint list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Enforcement {
    /// Some selecting rule covers ingress: default-deny for ingress.
    pub ingress: bool,
    /// Some selecting rule covers egress.
    pub egress: bool,
}

/// One endpoint's policy map.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyMap {
    /// Key → entry.
    pub entries: BTreeMap<PolicyKey, PolicyEntry>,
    /// Which directions are enforced.
    pub enforcement: Enforcement,
}

/// Why bpf_lxc dropped a packet (`pkg/monitor/api/drop.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// 133, `DROP_POLICY`: no entry allows it.
    PolicyDenied,
    /// 181, `DROP_POLICY_DENY`: a deny entry matched.
    PolicyDeny,
}

impl DropReason {
    /// The reason code.
    pub fn code(self) -> u8 {
        match self {
            DropReason::PolicyDenied => 133,
            DropReason::PolicyDeny => 181,
        }
    }

    /// The text `cilium monitor` and Hubble print.
    pub fn text(self) -> &'static str {
        match self {
            DropReason::PolicyDenied => "Policy denied",
            DropReason::PolicyDeny => "Policy denied by denylist",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// What the policy map says about one packet at one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapVerdict {
    /// An entry allows it; `key` is the entry that won.
    Allow {
        /// The peer's identity (from the ipcache).
        peer: NumericIdentity,
        /// The winning key.
        key: PolicyKey,
    },
    /// Dropped.
    Drop {
        /// The peer's identity (from the ipcache).
        peer: NumericIdentity,
        /// Why.
        reason: DropReason,
    },
}

impl MapVerdict {
    /// True for [`MapVerdict::Allow`].
    pub fn allowed(&self) -> bool {
        matches!(self, MapVerdict::Allow { .. })
    }
}

impl PolicyMap {
    /// The longest match among the keys for exactly this identity.
    fn lpm(
        &self,
        id: NumericIdentity,
        dir: TrafficDirection,
        proto: u8,
        dport: u16,
    ) -> Option<(&PolicyKey, &PolicyEntry)> {
        self.entries
            .iter()
            .filter(|(k, _)| k.identity == id && k.direction == dir && k.covers(proto, dport))
            .max_by_key(|(k, _)| k.prefix_len)
    }

    /// The lookup of `bpf/lib/policy.h` (`__policy_can_access`): the LPM entry for the
    /// peer's identity and the one for identity 0 (any peer); a deny wins, then the longer
    /// prefix, and on a tie the entry for the exact identity. No entry: `DROP_POLICY`.
    pub fn lookup(
        &self,
        peer: NumericIdentity,
        dir: TrafficDirection,
        proto: u8,
        dport: u16,
    ) -> MapVerdict {
        let exact = self.lpm(peer, dir, proto, dport);
        let any = if peer == ID_UNKNOWN {
            None
        } else {
            self.lpm(ID_UNKNOWN, dir, proto, dport)
        };
        let win = match (exact, any) {
            (Some(a), Some(b)) => {
                if a.1.deny != b.1.deny {
                    if a.1.deny { a } else { b }
                } else if b.0.prefix_len > a.0.prefix_len {
                    b
                } else {
                    a
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => {
                return MapVerdict::Drop {
                    peer,
                    reason: DropReason::PolicyDenied,
                };
            }
        };
        if win.1.deny {
            MapVerdict::Drop {
                peer,
                reason: DropReason::PolicyDeny,
            }
        } else {
            MapVerdict::Allow { peer, key: *win.0 }
        }
    }

    fn allow(&mut self, key: PolicyKey, why: &str) {
        self.entries
            .entry(key)
            .or_default()
            .derived_from
            .insert(why.to_string());
    }
}

// ---- Selectors: a NetworkPolicy peer as Cilium reads it ----

/// One requirement over `source:key` labels.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Req {
    key: String,
    op: String,
    values: Vec<String>,
}

impl Req {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        LabelSelectorRequirement {
            key: self.key.clone(),
            operator: self.op.clone(),
            values: self.values.clone(),
        }
        .matches(labels)
    }
}

/// A peer of a rule after `ParseNetworkPolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Peer {
    /// No `from`/`to`: `types.WildcardSelector`, key identity 0.
    Wildcard,
    /// An endpoint selector over identity labels.
    Labels(Vec<Req>),
    /// An ipBlock: `cidr:<prefix>` Exists plus `cidr:<except>` DoesNotExist
    /// (`CIDRRuleSlice.GetAsEndpointSelectors`); `None` if the CIDR does not parse.
    Cidr(Option<(IpNet, Vec<IpNet>)>),
}

/// The `k8s:` requirements of a label selector, keys under `prefix`.
fn reqs_of(sel: &LabelSelector, prefix: &str) -> Vec<Req> {
    let key = |k: &str| {
        if prefix.is_empty() {
            format!("k8s:{k}")
        } else {
            format!("k8s:{prefix}.{k}")
        }
    };
    let mut out: Vec<Req> = sel
        .match_labels
        .iter()
        .map(|(k, v)| Req {
            key: key(k),
            op: "In".into(),
            values: vec![v.clone()],
        })
        .collect();
    out.extend(sel.match_expressions.iter().map(|r| Req {
        key: key(&r.key),
        op: r.operator.clone(),
        values: r.values.clone(),
    }));
    out
}

fn eq(key: &str, value: &str) -> Req {
    Req {
        key: format!("k8s:{key}"),
        op: "In".into(),
        values: vec![value.into()],
    }
}

/// `parseNetworkPolicyPeer` (`pkg/k8s/network_policy.go`, v1.19+ with the chart's
/// `policyDefaultLocalCluster: true`): the pod selector gets the local cluster label; a pod
/// selector alone is restricted to the policy's namespace; a namespace selector's keys move
/// under `io.cilium.k8s.namespace.labels.`, and an empty one means "any namespace"
/// (`io.kubernetes.pod.namespace` Exists). A peer with only an ipBlock gets no label
/// selector (the fix of cilium#46305).
fn parse_peer(policy_ns: &str, peer: &NetworkPolicyPeer) -> Vec<Peer> {
    let mut out = Vec::new();
    if peer.pod_selector.is_some() || peer.namespace_selector.is_some() {
        let pod = peer.pod_selector.clone().unwrap_or_default();
        let mut reqs = reqs_of(&pod, "");
        reqs.push(eq(CLUSTER_LABEL, CLUSTER_NAME));
        match &peer.namespace_selector {
            Some(ns) => {
                let ns_reqs = reqs_of(ns, NAMESPACE_LABELS_PREFIX);
                if ns_reqs.is_empty() {
                    reqs.push(Req {
                        key: format!("k8s:{POD_NAMESPACE_LABEL}"),
                        op: "Exists".into(),
                        values: vec![],
                    });
                } else {
                    reqs.extend(ns_reqs);
                }
            }
            None => reqs.push(eq(POD_NAMESPACE_LABEL, policy_ns)),
        }
        out.push(Peer::Labels(reqs));
    }
    if let Some(block) = &peer.ip_block {
        let parsed = block.cidr.parse::<IpNet>().ok().map(|c| {
            let except = block
                .except
                .iter()
                .filter_map(|e| e.parse::<IpNet>().ok().map(|n| n.trunc()))
                .collect();
            (c.trunc(), except)
        });
        out.push(Peer::Cidr(parsed));
    }
    out
}

/// The identities a peer selects (the selector cache's answer).
fn select(peer: &Peer, ids: &IdentityTable) -> Vec<NumericIdentity> {
    match peer {
        Peer::Wildcard => vec![ID_UNKNOWN],
        Peer::Labels(reqs) => ids
            .all()
            .filter(|i| i.id != ID_UNKNOWN)
            .filter(|i| {
                let m = i.label_map();
                reqs.iter().all(|r| r.matches(&m))
            })
            .map(|i| i.id)
            .collect(),
        Peer::Cidr(None) => vec![],
        Peer::Cidr(Some((cidr, except))) => {
            let inside = |p: &IpNet, outer: &IpNet| outer.contains(p);
            let mut v = Vec::new();
            // `0.0.0.0/0` is `reserved:world`, a label every CIDR identity carries too.
            if cidr.prefix_len() == 0 && !except.iter().any(|e| e.prefix_len() == 0) {
                v.push(ID_WORLD);
            }
            for i in ids.all() {
                if let IdentityKind::Cidr(p) = &i.kind {
                    if inside(p, cidr) && !except.iter().any(|e| inside(p, e)) {
                        v.push(i.id);
                    }
                }
            }
            v
        }
    }
}

/// `PortRangeToMaskedPorts`: the fewest aligned power-of-two blocks covering
/// `start..=end`, as (first port, port prefix length 0..=16).
pub(crate) fn masked_ports(start: u16, end: u16) -> Vec<(u16, u8)> {
    let mut out = Vec::new();
    let (mut s, e) = (u32::from(start), u32::from(end));
    while s <= e {
        let mut bits = 0u32;
        while bits < 16 {
            let size = 1u32 << (bits + 1);
            if s % size != 0 || s + size - 1 > e {
                break;
            }
            bits += 1;
        }
        out.push((s as u16, (16 - bits) as u8));
        s += 1 << bits;
    }
    out
}

/// An L4 entry of a rule, resolved: (protocol, first port, prefix length).
type L4 = (u8, u16, u8);

/// Everything the policy map builder needs to know about the cluster.
pub(crate) struct Ctx<'a> {
    pub net: &'a ClusterNet,
    pub ids: &'a IdentityTable,
}

impl Ctx<'_> {
    /// The named ports of the pods whose identity is in `selected` (all pods for the
    /// wildcard), for egress named-port resolution.
    fn peer_named_ports(&self, selected: &[NumericIdentity], name: &str, proto: u8) -> Vec<u16> {
        let wildcard = selected.contains(&ID_UNKNOWN);
        let mut ports: BTreeSet<u16> = BTreeSet::new();
        for p in &self.net.pods {
            let Some(id) = self.ids.of_pod(&p.key()) else {
                continue;
            };
            if !wildcard && !selected.contains(&id) {
                continue;
            }
            for cp in &p.ports {
                if cp.name == name && proto_number(cp.protocol) == proto {
                    ports.insert(cp.container_port);
                }
            }
        }
        ports.into_iter().collect()
    }
}

/// Resolve one K8s port entry (`parsePorts`, then `ToMapState`'s named-port resolution).
/// Ingress named ports resolve against the endpoint's own container ports; egress ones
/// against the selected peers' (`NamedPortMultiMap.GetNamedPort`): one port number if they
/// agree, nothing if the name is unknown, has another protocol, or names several numbers
/// (`ErrDuplicateNamedPorts`).
fn l4_of(
    ctx: &Ctx<'_>,
    port: &NetworkPolicyPort,
    dir: TrafficDirection,
    subject: &PodNet,
    selected: &[NumericIdentity],
) -> Vec<L4> {
    let proto = match port.protocol.as_deref().unwrap_or("TCP") {
        "UDP" => 17,
        "SCTP" => 132,
        _ => 6,
    };
    match &port.port {
        None => vec![(proto, 0, 8)],
        Some(IntOrString::Int(p)) => {
            let Ok(start) = u16::try_from(*p) else {
                return vec![];
            };
            if start == 0 {
                return vec![(proto, 0, 8)];
            }
            let end = port
                .end_port
                .and_then(|e| u16::try_from(e).ok())
                .filter(|e| *e > start)
                .unwrap_or(start);
            masked_ports(start, end)
                .into_iter()
                .map(|(s, plen)| (proto, s, 8 + plen))
                .collect()
        }
        Some(IntOrString::Str(name)) => {
            let ports: Vec<u16> = match dir {
                TrafficDirection::Ingress => subject
                    .ports
                    .iter()
                    .filter(|cp| &cp.name == name && proto_number(cp.protocol) == proto)
                    .map(|cp| cp.container_port)
                    .collect(),
                TrafficDirection::Egress => ctx.peer_named_ports(selected, name, proto),
            };
            match ports.as_slice() {
                [one] => vec![(proto, *one, 24)],
                _ => vec![],
            }
        }
    }
}

/// One rule after `ParseNetworkPolicy`: a direction, its peers (empty = the default-deny
/// marker rule with no L3) and its ports (empty = all).
struct Rule<'a> {
    dir: TrafficDirection,
    peers: Vec<Peer>,
    ports: &'a [NetworkPolicyPort],
    origin: String,
}

/// `ParseNetworkPolicy` (`pkg/k8s/network_policy.go`). Note what it does with
/// `policyTypes`: every `spec.ingress` and `spec.egress` rule becomes a rule whatever the
/// types say (cilium#48703, open); the types only add an empty default-deny rule for a
/// direction that has no rules (`len(ingresses) == 0 && (Ingress in types || Egress not in
/// types)`, `len(egresses) == 0 && Egress in types`). The spec is read as the apiserver
/// stores it (defaulted).
fn parse_policy(p: &Policy) -> Vec<Rule<'_>> {
    let spec = p.spec.defaulted();
    let has = |t: &str| spec.policy_types.iter().any(|x| x == t);
    let mut out = Vec::new();
    for (i, r) in p.spec.ingress.iter().enumerate() {
        let peers = if r.from.is_empty() {
            vec![Peer::Wildcard]
        } else {
            r.from
                .iter()
                .flat_map(|x| parse_peer(&p.namespace, x))
                .collect()
        };
        out.push(Rule {
            dir: TrafficDirection::Ingress,
            peers,
            ports: &r.ports,
            origin: format!("{} (ingress rule {})", p.key(), i + 1),
        });
    }
    if p.spec.ingress.is_empty() && (has("Ingress") || !has("Egress")) {
        out.push(Rule {
            dir: TrafficDirection::Ingress,
            peers: vec![],
            ports: &[],
            origin: format!("{} (ingress default deny)", p.key()),
        });
    }
    for (i, r) in p.spec.egress.iter().enumerate() {
        let peers = if r.to.is_empty() {
            vec![Peer::Wildcard]
        } else {
            r.to.iter()
                .flat_map(|x| parse_peer(&p.namespace, x))
                .collect()
        };
        out.push(Rule {
            dir: TrafficDirection::Egress,
            peers,
            ports: &r.ports,
            origin: format!("{} (egress rule {})", p.key(), i + 1),
        });
    }
    if p.spec.egress.is_empty() && has("Egress") {
        out.push(Rule {
            dir: TrafficDirection::Egress,
            peers: vec![],
            ports: &[],
            origin: format!("{} (egress default deny)", p.key()),
        });
    }
    out
}

/// Does a NetworkPolicy select this pod as Cilium sees it? The subject selector is the
/// podSelector plus `io.kubernetes.pod.namespace=<ns>`, matched against the pod's
/// *identity* labels: a podSelector on a label the label filter drops
/// (`pod-template-hash`, `statefulset.kubernetes.io/pod-name`, …) selects nothing.
fn subject_selects(p: &Policy, pod: &PodNet, pod_labels: &BTreeMap<String, String>) -> bool {
    if p.namespace != pod.namespace {
        return false;
    }
    let reqs = reqs_of(&p.spec.pod_selector, "");
    reqs.iter().all(|r| r.matches(pod_labels))
}

/// The policy map of one pod's endpoint.
///
/// - Rules from every selecting NetworkPolicy, in both directions as [`parse_policy`]
///   yields them; a direction with at least one rule is enforced (default deny) and holds
///   only the rule entries; a direction with none gets the wildcard `{0, ANY}` allow
///   (`allowAllIdentities`, "allow-any").
/// - Each rule's key set: (each identity its peers select, or 0 for no peers) × (each
///   resolved port entry, or ANY when the rule lists no ports). Port ranges expand into
///   LPM blocks.
/// - `allow-localhost`: an ingress allow for identity 1 on every endpoint
///   (`determineAllowLocalhostIngress` in `pkg/policy/mapstate.go`, when
///   `AlwaysAllowLocalhost()`; the lab reads the default `auto` that way, which the
///   reference's B4 note on v1.20/cilium#48444 may refine). Egress to the host gets
///   nothing.
pub(crate) fn compute(ctx: &Ctx<'_>, pod: &PodNet) -> PolicyMap {
    let mut map = PolicyMap::default();
    let own_labels = ctx
        .ids
        .of_pod(&pod.key())
        .and_then(|id| ctx.ids.get(id))
        .map(|i| i.label_map())
        .unwrap_or_default();
    let mut policies: Vec<&Policy> = ctx
        .net
        .policies
        .iter()
        .filter(|p| subject_selects(p, pod, &own_labels))
        .collect();
    policies.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    for p in policies {
        for rule in parse_policy(p) {
            match rule.dir {
                TrafficDirection::Ingress => map.enforcement.ingress = true,
                TrafficDirection::Egress => map.enforcement.egress = true,
            }
            let mut selected: Vec<NumericIdentity> =
                rule.peers.iter().flat_map(|x| select(x, ctx.ids)).collect();
            selected.sort_unstable();
            selected.dedup();
            let l4: Vec<L4> = if rule.ports.is_empty() {
                vec![(0, 0, 0)]
            } else {
                rule.ports
                    .iter()
                    .flat_map(|port| l4_of(ctx, port, rule.dir, pod, &selected))
                    .collect()
            };
            for id in &selected {
                for (proto, dport, prefix_len) in &l4 {
                    map.allow(
                        PolicyKey {
                            identity: *id,
                            direction: rule.dir,
                            proto: *proto,
                            dport: *dport,
                            prefix_len: *prefix_len,
                        },
                        &rule.origin,
                    );
                }
            }
        }
    }
    let any = |direction| PolicyKey {
        identity: ID_UNKNOWN,
        direction,
        proto: 0,
        dport: 0,
        prefix_len: 0,
    };
    if !map.enforcement.ingress {
        map.allow(any(TrafficDirection::Ingress), "allow-any");
    }
    if !map.enforcement.egress {
        map.allow(any(TrafficDirection::Egress), "allow-any");
    }
    map.allow(
        PolicyKey {
            identity: ID_HOST,
            ..any(TrafficDirection::Ingress)
        },
        "allow-localhost-ingress",
    );
    map
}
