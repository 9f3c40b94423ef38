//! `diff N M`: what changed between two moments of the timeline, as typed changes rendered
//! at the edge. Each moment is the lab after that event (see [`super::timeline`]); what is
//! compared is read from it as values: the pods (phase, IP, node), host-local's lease files
//! per node, each node's main routing table, each node's iptables rules (family, table,
//! chain) and every claim's volume (claim phase, PV, and per node the driver's lifecycle
//! state, the VolumeAttachment, the staging path and the publish targets), and under
//! Cilium its BPF maps (identities, endpoints, ipcache, policy maps; see [`bpf`]). The
//! order is the section's, then the key's.

mod bpf;

use super::volume_view::{NodeVolume, VolumeRow};
use super::{Lab, LabError};
use crate::cni::host::RouteEntry;
use crate::cni::netfilter::TableKind;
use crate::command::grammar::DiffArgs;
use crate::render::{Line, Outcome, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// A pod as `diff` compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodState {
    /// `status.phase`.
    pub phase: String,
    /// `status.podIP` (empty: none yet).
    pub ip: String,
    /// `spec.nodeName` (empty: not scheduled).
    pub node: String,
}

/// An iptables rule's place: node, family (IPv6?), table, chain.
pub type RuleKey = (String, bool, TableKind, String);

/// What `diff` compares of one moment.
#[derive(Debug, Default)]
struct Moment {
    /// Pods by (namespace, name).
    pods: BTreeMap<(String, String), PodState>,
    /// host-local's lease files by (node, network, IP): the container ID each holds.
    leases: BTreeMap<(String, String, IpAddr), String>,
    /// Each node's main routing table, in `ip route`'s order.
    routes: BTreeMap<String, Vec<RouteEntry>>,
    /// Each chain's rules in order (their iptables-save text, the kernel model's own form).
    rules: BTreeMap<RuleKey, Vec<String>>,
    /// Every claim's volume, by `ns/name`.
    volumes: BTreeMap<String, VolumeRow>,
    /// Cilium's BPF maps.
    bpf: bpf::Maps,
}

impl Moment {
    fn of(lab: &Lab) -> Moment {
        let mut m = Moment::default();
        for (key, pod) in &lab.cluster.pods {
            m.pods.insert(
                key.clone(),
                PodState {
                    phase: pod.status.phase.to_string(),
                    ip: pod
                        .status
                        .pod_ip
                        .map(|ip| ip.to_string())
                        .unwrap_or_default(),
                    node: pod.spec.node_name.clone(),
                },
            );
        }
        for (node, rt) in &lab.nodes {
            for (net, store) in &rt.host.ipam {
                for (ip, lease) in store.leases() {
                    m.leases.insert(
                        (node.clone(), net.to_string(), *ip),
                        lease.container_id.to_string(),
                    );
                }
            }
            m.routes.insert(node.clone(), rt.host.route_table());
            for v6 in [false, true] {
                for kind in TableKind::ALL {
                    let table = rt.host.netfilter.family(v6).get(kind);
                    for (chain, rules) in table.chains() {
                        m.rules.insert(
                            (node.clone(), v6, kind, chain.to_string()),
                            rules.iter().map(|r| r.text().to_string()).collect(),
                        );
                    }
                }
            }
        }
        for row in super::volume_view::volume_rows(lab) {
            m.volumes.insert(row.pvc.clone(), row);
        }
        m.bpf = bpf::Maps::of(lab.network.bpf(&lab.network_view()));
        m
    }
}

/// One change between two moments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A pod appeared, went, or changed phase, IP or node.
    Pod {
        /// (namespace, name).
        key: (String, String),
        /// Before (`None`: it did not exist).
        was: Option<PodState>,
        /// After (`None`: it is gone).
        now: Option<PodState>,
    },
    /// A lease file was written or removed (or now holds another container).
    Lease {
        /// The node.
        node: String,
        /// The network's name.
        net: String,
        /// The address.
        ip: IpAddr,
        /// The container ID it held.
        was: Option<String>,
        /// The container ID it holds.
        now: Option<String>,
    },
    /// A route was added or removed.
    Route {
        /// The node.
        node: String,
        /// The route.
        route: RouteEntry,
        /// Added (else removed).
        added: bool,
    },
    /// A rule was added or removed (a chain that appeared or went: each of its rules).
    Rule {
        /// Where: node, IPv6, table, chain.
        key: RuleKey,
        /// The rule's match and target, in `iptables -S` form after `-A CHAIN`.
        rule: String,
        /// Added (else removed).
        added: bool,
    },
    /// A claim appeared, went, or its volume moved on.
    Volume {
        /// The claim, `ns/name`.
        pvc: String,
        /// Before.
        was: Option<VolumeRow>,
        /// After.
        now: Option<VolumeRow>,
    },
    /// One of Cilium's BPF maps changed.
    Bpf(bpf::MapChange),
}

/// The changes from `a` to `b`, by section then key.
fn changes(a: &Moment, b: &Moment) -> Vec<Change> {
    let mut out = Vec::new();
    for key in keys(&a.pods, &b.pods) {
        let (was, now) = (a.pods.get(&key), b.pods.get(&key));
        if was != now {
            out.push(Change::Pod {
                key,
                was: was.cloned(),
                now: now.cloned(),
            });
        }
    }
    for key in keys(&a.leases, &b.leases) {
        let (was, now) = (a.leases.get(&key), b.leases.get(&key));
        if was != now {
            let (node, net, ip) = key;
            out.push(Change::Lease {
                node,
                net,
                ip,
                was: was.cloned(),
                now: now.cloned(),
            });
        }
    }
    for node in keys(&a.routes, &b.routes) {
        let (was, now) = (a.routes.get(&node), b.routes.get(&node));
        for (route, added) in gone_then_new(was, now) {
            out.push(Change::Route {
                node: node.clone(),
                route,
                added,
            });
        }
    }
    for key in keys(&a.rules, &b.rules) {
        let (was, now) = (a.rules.get(&key), b.rules.get(&key));
        for (rule, added) in gone_then_new(was, now) {
            out.push(Change::Rule {
                key: key.clone(),
                rule,
                added,
            });
        }
    }
    for pvc in keys(&a.volumes, &b.volumes) {
        let (was, now) = (a.volumes.get(&pvc), b.volumes.get(&pvc));
        if was != now {
            out.push(Change::Volume {
                pvc,
                was: was.cloned(),
                now: now.cloned(),
            });
        }
    }
    out.extend(bpf::changes(&a.bpf, &b.bpf).into_iter().map(Change::Bpf));
    out
}

/// The items of `was` not in `now` (false), then those of `now` not in `was` (true), each
/// list in its own order.
fn gone_then_new<T: PartialEq + Clone>(
    was: Option<&Vec<T>>,
    now: Option<&Vec<T>>,
) -> Vec<(T, bool)> {
    let (was, now) = (
        was.map_or(&[][..], Vec::as_slice),
        now.map_or(&[][..], Vec::as_slice),
    );
    let gone = was
        .iter()
        .filter(|x| !now.contains(x))
        .map(|x| (x.clone(), false));
    let new = now
        .iter()
        .filter(|x| !was.contains(x))
        .map(|x| (x.clone(), true));
    gone.chain(new).collect()
}

/// The keys of two maps, in order, once each.
fn keys<K: Ord + Clone, V>(a: &BTreeMap<K, V>, b: &BTreeMap<K, V>) -> BTreeSet<K> {
    a.keys().chain(b.keys()).cloned().collect()
}

impl Change {
    /// The section heading it is listed under.
    fn section(&self) -> &'static str {
        match self {
            Change::Pod { .. } => "pods",
            Change::Lease { .. } => "host-local leases",
            Change::Route { .. } => "routes",
            Change::Rule { .. } => "iptables",
            Change::Volume { .. } => "volumes",
            Change::Bpf(c) => c.section(),
        }
    }

    /// Its lines: `+` added, `-` removed, `~` changed.
    fn lines(&self) -> Vec<Line> {
        match self {
            Change::Pod { key, was, now } => {
                let name = format!("{}/{}", key.0, key.1);
                match (was, now) {
                    (None, Some(p)) => vec![added(format!(
                        "pod {name}  {}  ip {}  node {}",
                        p.phase,
                        or_none(&p.ip),
                        or_none(&p.node)
                    ))],
                    (Some(p), None) => vec![removed(format!(
                        "pod {name}  (was {}, ip {}, node {})",
                        p.phase,
                        or_none(&p.ip),
                        or_none(&p.node)
                    ))],
                    (Some(a), Some(b)) => {
                        let mut parts = Vec::new();
                        for (what, x, y) in [
                            ("phase", &a.phase, &b.phase),
                            ("ip", &a.ip, &b.ip),
                            ("node", &a.node, &b.node),
                        ] {
                            if x != y {
                                parts.push(format!("{what} {} → {}", or_none(x), or_none(y)));
                            }
                        }
                        vec![changed(format!("pod {name}  {}", parts.join(", ")))]
                    }
                    (None, None) => Vec::new(),
                }
            }
            Change::Lease {
                node,
                net,
                ip,
                was,
                now,
            } => {
                let at = format!("{node}  {net}  {ip}");
                match (was, now) {
                    (None, Some(c)) => vec![added(format!("{at}  container {}", short(c)))],
                    (Some(c), None) => vec![removed(format!("{at}  (was container {})", short(c)))],
                    (Some(a), Some(b)) => vec![changed(format!(
                        "{at}  container {} → {}",
                        short(a),
                        short(b)
                    ))],
                    (None, None) => Vec::new(),
                }
            }
            Change::Route { node, route, added } => {
                let text = format!("{node}  {}", route.to_ip_route());
                vec![if *added {
                    self::added(text)
                } else {
                    removed(text)
                }]
            }
            Change::Rule { key, rule, added } => {
                let (node, v6, table, chain) = key;
                let family = if *v6 { "ip6tables" } else { "iptables" };
                let text = format!("{node}  {family} -t {} -A {chain} {rule}", table.name());
                vec![if *added {
                    self::added(text)
                } else {
                    removed(text)
                }]
            }
            Change::Volume { pvc, was, now } => volume_lines(pvc, was.as_ref(), now.as_ref()),
            Change::Bpf(c) => vec![c.line()],
        }
    }
}

/// A claim's volume: what appeared, went or moved on.
fn volume_lines(pvc: &str, was: Option<&VolumeRow>, now: Option<&VolumeRow>) -> Vec<Line> {
    let pv = |r: &VolumeRow| r.pv.clone().unwrap_or_else(|| "<none>".into());
    match (was, now) {
        (None, Some(r)) => {
            let mut v = vec![added(format!("pvc {pvc}  {}  pv {}", r.pvc_phase, pv(r)))];
            v.extend(
                r.nodes
                    .iter()
                    .map(|n| added(format!("pvc {pvc}  {} {}", n.node, on_node(n)))),
            );
            v
        }
        (Some(r), None) => vec![removed(format!(
            "pvc {pvc}  (was {}, pv {})",
            r.pvc_phase,
            pv(r)
        ))],
        (Some(a), Some(b)) => {
            let mut v = Vec::new();
            if a.pvc_phase != b.pvc_phase || a.pv != b.pv {
                v.push(changed(format!(
                    "pvc {pvc}  {} → {}  pv {} → {}",
                    a.pvc_phase,
                    b.pvc_phase,
                    pv(a),
                    pv(b)
                )));
            }
            let before: BTreeMap<&str, &NodeVolume> =
                a.nodes.iter().map(|n| (n.node.as_str(), n)).collect();
            let after: BTreeMap<&str, &NodeVolume> =
                b.nodes.iter().map(|n| (n.node.as_str(), n)).collect();
            for node in keys(&before, &after) {
                match (before.get(node), after.get(node)) {
                    (None, Some(n)) => {
                        v.push(added(format!("pvc {pvc}  {node} {}", on_node(n))));
                    }
                    (Some(n), None) => {
                        v.push(removed(format!("pvc {pvc}  {node} {}", on_node(n))));
                    }
                    (Some(x), Some(y)) if x != y => v.push(changed(format!(
                        "pvc {pvc}  {node} {} → {}",
                        on_node(x),
                        on_node(y)
                    ))),
                    _ => {}
                }
            }
            if v.is_empty() {
                // The size or the volume ID alone moved.
                v.push(changed(format!("pvc {pvc}  size {} → {}", a.size, b.size)));
            }
            v
        }
        (None, None) => Vec::new(),
    }
}

/// A volume's state on one node, as one phrase.
fn on_node(n: &NodeVolume) -> String {
    let mut s = n.state.clone();
    if let Some(va) = &n.attachment {
        s.push_str(&format!(
            " va {va} ({})",
            if n.attached {
                "attached"
            } else {
                "not attached"
            }
        ));
    }
    if n.staging.is_some() {
        s.push_str(" staged");
    }
    if !n.targets.is_empty() {
        s.push_str(&format!(" published ×{}", n.targets.len()));
    }
    s
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}

/// A container ID's first 12 characters, as `crictl` shows them.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

fn added(text: String) -> Line {
    Line::new().push("  + ", Role::Good).push(text, Role::Plain)
}

fn removed(text: String) -> Line {
    Line::new().push("  - ", Role::Bad).push(text, Role::Plain)
}

fn changed(text: String) -> Line {
    Line::new().push("  ~ ", Role::Warn).push(text, Role::Plain)
}

impl Lab {
    /// `diff N M`: the changes from the lab after event N to the lab after event M, printed
    /// and as they were shown.
    pub(crate) fn diff_cmd(&self, a: &DiffArgs) -> Result<(Outcome, super::seen::Seen), LabError> {
        let n = self.event_at(a.from)?;
        let m = match a.to {
            Some(m) => self.event_at(m)?,
            None => self.position().at,
        };
        let (before, after) = (self.lab_at(n), self.lab_at(m));
        let (a, b) = (Moment::of(&before), Moment::of(&after));
        let list = changes(&a, &b);
        let mut out = Outcome::empty();
        out.line(Line::styled(
            format!(
                "diff {n} {m}: {} (t={}) → {} (t={})",
                moment_name(n),
                before.clock.secs_text(),
                moment_name(m),
                after.clock.secs_text()
            ),
            Role::Header,
        ));
        if list.is_empty() {
            out.line(Line::styled(
                if a.bpf.running || b.bpf.running {
                    "  nothing changed in pods, leases, routes, iptables, volumes or BPF maps"
                } else {
                    "  nothing changed in pods, leases, routes, iptables or volumes"
                },
                Role::Dim,
            ));
        }
        let mut section = "";
        for c in &list {
            if c.section() != section {
                section = c.section();
                out.line(Line::styled(section, Role::Header));
            }
            for l in c.lines() {
                out.line(l);
            }
        }
        let seen = super::seen::Seen::Diff {
            from: n,
            to: m,
            changes: list,
        };
        Ok((out, seen))
    }
}

/// "after event N", or "the start" for 0.
fn moment_name(n: usize) -> String {
    if n == 0 {
        "the start".into()
    } else {
        format!("after event {n}")
    }
}
