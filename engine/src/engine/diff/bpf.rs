//! Cilium's BPF maps as `diff` compares them: the identities (cluster-wide), and per node
//! the endpoints, the ipcache and each endpoint's policy map, read as values from the
//! agents' state and rendered only when listed.

use super::{added, changed, removed};
use crate::netd::cilium::{Cilium, IpCacheEntry, Label, NumericIdentity, PolicyEntry, PolicyKey};
use crate::render::Line;
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// An endpoint as `diff` compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointState {
    id: u16,
    ip: IpAddr,
    identity: NumericIdentity,
}

/// The maps of one moment (all empty when Cilium does not run).
#[derive(Debug, Default)]
pub(super) struct Maps {
    /// Whether Cilium runs (its agents hold maps).
    pub(super) running: bool,
    /// Identities by number: their labels.
    identities: BTreeMap<NumericIdentity, Vec<Label>>,
    /// Endpoints by (node, `namespace/name`).
    endpoints: BTreeMap<(String, String), EndpointState>,
    /// ipcache entries by (node, prefix).
    ipcache: BTreeMap<(String, IpNet), IpCacheEntry>,
    /// Policy map entries by (node, `namespace/name`, key).
    policy: BTreeMap<(String, String, PolicyKey), PolicyEntry>,
}

impl Maps {
    /// What the agents hold.
    pub(super) fn of(state: Option<&Cilium>) -> Maps {
        let Some(state) = state else {
            return Maps::default();
        };
        let mut m = Maps {
            running: true,
            ..Maps::default()
        };
        for i in state.identities.all() {
            m.identities.insert(i.id, i.labels.clone());
        }
        for (node, agent) in &state.agents {
            for (prefix, e) in &agent.ipcache.entries {
                m.ipcache.insert((node.clone(), *prefix), e.clone());
            }
            for ep in agent.endpoints.values() {
                let pod = ep.pod_key();
                m.endpoints.insert(
                    (node.clone(), pod.clone()),
                    EndpointState {
                        id: ep.id,
                        ip: ep.ip,
                        identity: ep.identity,
                    },
                );
                for (k, e) in &ep.policy.entries {
                    m.policy.insert((node.clone(), pod.clone(), *k), e.clone());
                }
            }
        }
        m
    }
}

/// One change of the maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapChange {
    /// An identity was allocated or released (or stands for other labels).
    Identity {
        id: NumericIdentity,
        was: Option<Vec<Label>>,
        now: Option<Vec<Label>>,
    },
    /// An endpoint appeared, went or changed.
    Endpoint {
        node: String,
        pod: String,
        was: Option<EndpointState>,
        now: Option<EndpointState>,
    },
    /// An ipcache entry appeared, went or changed.
    IpCache {
        node: String,
        prefix: IpNet,
        was: Option<IpCacheEntry>,
        now: Option<IpCacheEntry>,
    },
    /// A policy map entry appeared, went or changed.
    Policy {
        node: String,
        pod: String,
        key: PolicyKey,
        was: Option<PolicyEntry>,
        now: Option<PolicyEntry>,
    },
}

/// Every key of two maps whose values differ, in order.
fn differing<'a, K: Ord + Clone, V: PartialEq + Clone>(
    a: &'a BTreeMap<K, V>,
    b: &'a BTreeMap<K, V>,
) -> impl Iterator<Item = (K, Option<V>, Option<V>)> + 'a {
    let keys: BTreeSet<&K> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter_map(|k| {
        let (x, y) = (a.get(k), b.get(k));
        (x != y).then(|| (k.clone(), x.cloned(), y.cloned()))
    })
}

/// The changes from `a` to `b`: identities, endpoints, ipcache, policy maps, each by key.
pub(super) fn changes(a: &Maps, b: &Maps) -> Vec<MapChange> {
    let mut out: Vec<MapChange> = differing(&a.identities, &b.identities)
        .map(|(id, was, now)| MapChange::Identity { id, was, now })
        .collect();
    out.extend(
        differing(&a.endpoints, &b.endpoints).map(|((node, pod), was, now)| MapChange::Endpoint {
            node,
            pod,
            was,
            now,
        }),
    );
    out.extend(
        differing(&a.ipcache, &b.ipcache).map(|((node, prefix), was, now)| MapChange::IpCache {
            node,
            prefix,
            was,
            now,
        }),
    );
    out.extend(
        differing(&a.policy, &b.policy).map(|((node, pod, key), was, now)| MapChange::Policy {
            node,
            pod,
            key,
            was,
            now,
        }),
    );
    out
}

/// `+`, `-` or `~` before the text, as the two sides say.
fn line<T>(was: &Option<T>, now: &Option<T>, text: String) -> Line {
    match (was, now) {
        (None, _) => added(text),
        (_, None) => removed(text),
        _ => changed(text),
    }
}

/// The fields of a side as (name, value); a change lists the ones that differ as
/// `name a → b`, an addition or removal all of them.
fn fields<T>(
    was: &Option<T>,
    now: &Option<T>,
    of: impl Fn(&T) -> Vec<(&'static str, String)>,
) -> String {
    let pair = |(k, v): &(&str, String)| format!("{k} {v}");
    match (was, now) {
        (Some(a), Some(b)) => of(a)
            .iter()
            .zip(of(b))
            .filter(|(x, y)| x.1 != y.1)
            .map(|((k, x), (_, y))| format!("{k} {x} → {y}"))
            .collect::<Vec<_>>()
            .join(", "),
        (Some(x), None) | (None, Some(x)) => of(x).iter().map(pair).collect::<Vec<_>>().join(" "),
        (None, None) => String::new(),
    }
}

impl MapChange {
    /// The section heading it is listed under.
    pub(super) fn section(&self) -> &'static str {
        match self {
            MapChange::Identity { .. } => "cilium identities",
            MapChange::Endpoint { .. } => "cilium endpoints",
            MapChange::IpCache { .. } => "cilium ipcache",
            MapChange::Policy { .. } => "cilium policy maps",
        }
    }

    /// Its line.
    pub(super) fn line(&self) -> Line {
        match self {
            MapChange::Identity { id, was, now } => line(
                was,
                now,
                format!(
                    "{id}  {}",
                    fields(was, now, |l| vec![(
                        "labels",
                        l.iter().map(Label::to_string).collect::<Vec<_>>().join(" ")
                    )])
                ),
            ),
            MapChange::Endpoint {
                node,
                pod,
                was,
                now,
            } => line(
                was,
                now,
                format!(
                    "{node}  {pod}  {}",
                    fields(was, now, |e| vec![
                        ("endpoint", e.id.to_string()),
                        ("ip", e.ip.to_string()),
                        ("identity", e.identity.to_string()),
                    ])
                ),
            ),
            MapChange::IpCache {
                node,
                prefix,
                was,
                now,
            } => line(
                was,
                now,
                format!(
                    "{node}  {prefix}  {}",
                    fields(was, now, |e| vec![
                        ("identity", e.identity.to_string()),
                        ("tunnelendpoint", e.tunnel_endpoint.to_string()),
                        ("flags", e.flags_text().to_string()),
                    ])
                ),
            ),
            MapChange::Policy {
                node,
                pod,
                key,
                was,
                now,
            } => line(
                was,
                now,
                format!(
                    "{node}  {pod}  {} identity {} {}  {}",
                    key.direction.as_str(),
                    key.identity,
                    key.port_proto(),
                    fields(was, now, |e| vec![
                        ("policy", if e.deny { "Deny" } else { "Allow" }.to_string()),
                        (
                            "from",
                            e.derived_from
                                .iter()
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ]),
                ),
            ),
        }
    }
}
