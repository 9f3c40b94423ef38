//! kube-scheduler's scheduling cycle for a pod with no node: the nodes are filtered (below
//! 100 nodes every node, above that until enough feasible ones are found: [`place`]), the
//! feasible ones found are scored, and the best one wins; when none is feasible the reasons
//! make the `FailedScheduling` message.
//!
//! **Filters** (in this order, all reasons of a node collected):
//! - NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes no new pod (`node(s)
//!   were unschedulable`);
//! - the node is Ready (a NotReady or Unknown node carries the `not-ready`/`unreachable`
//!   NoSchedule taint the node lifecycle controller adds: TaintToleration);
//! - NodeAffinity: the node's labels hold every `spec.nodeSelector` pair (`node(s) didn't
//!   match Pod's node affinity/selector`);
//! - NodeResourcesFit (`pkg/scheduler/framework/plugins/noderesources/fit.go`): the pod
//!   count (`Too many pods`) and each extended resource the pod requests against the node's
//!   allocatable less what the pods already bound to it request (`Insufficient <name>`);
//! - the per-node volume checks (VolumeBinding: selected node, PV node affinity).
//!
//! **Message** (`FitError.Error()`): `0/<N> nodes are available: <count> <reason>, ….` with
//! the `<count> <reason>` strings sorted, then the DefaultPreemption post-filter's own
//! histogram: nodes that failed only resolvable filters (NodeResourcesFit) give `No
//! preemption victims found for incoming pod` (every lab pod has priority 0, so there is
//! never a lower-priority victim); nodes with an unresolvable failure (taint, volume) give
//! `Preemption is not helpful for scheduling`.
//!
//! **Score** (the lab's deterministic stand-in for the default score plugins): the default
//! NodeResourcesFit strategy, LeastAllocated over `cpu` and `memory` with weight 1 each.
//! A lab pod requests neither, so each pod counts the scheduler's non-zero defaults (100m
//! CPU, 200Mi memory; `pkg/scheduler/util/pod_resources.go`), the incoming pod included:
//! the node with the most room left wins. Ties go to the node whose name sorts first (the
//! real scheduler breaks ties at random, `selectHost`).

use crate::cluster::{Cluster, Kind, Object, PodSpec, Revisions, Table};
use crate::storage::work::{event_key, events_from};
use std::collections::BTreeMap;

/// The scheduler's CPU request for a container that sets none (millicores).
pub(crate) const DEFAULT_MILLI_CPU: i64 = 100;
/// The scheduler's memory request for a container that sets none (bytes).
pub(crate) const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

/// Whether a pod still holds its node's resources (not finished).
fn is_active(p: &Object<PodSpec>) -> bool {
    p.status.phase != "Failed" && p.status.phase != "Succeeded"
}

/// A table key: (namespace, name).
type Key = (String, String);

/// The scheduler's cache of how many pods bound to each node still hold its resources
/// (its `NodeInfo`s, kept from the pod informer): every pod written since the last look is
/// looked up again in the watch log's order, so placing a pod reads one count per node
/// instead of walking every pod. The first look, and one after the watch log dropped
/// events not read yet, walks every pod.
#[derive(Debug, Clone, Default)]
pub struct BoundPods {
    /// The index of the first watch event not read yet (`None` before the first look).
    seen: Option<u64>,
    /// The node of each pod that holds one's resources.
    node_of: BTreeMap<Key, String>,
    /// How many such pods each node has.
    per_node: BTreeMap<String, usize>,
}

impl BoundPods {
    /// Bring the cache up to date with the pod table.
    pub fn refresh(&mut self, revs: &Revisions, pods: &Table<PodSpec>) {
        match self.seen.and_then(|seen| events_from(revs, seen)) {
            Some(events) => {
                for e in events.filter(|e| e.kind == PodSpec::API_KIND) {
                    let key = event_key(e).0;
                    let pod = pods.get(&key);
                    self.note(key, pod);
                }
            }
            None => {
                self.node_of.clear();
                self.per_node.clear();
                for (key, pod) in pods {
                    self.note(key.clone(), Some(pod));
                }
            }
        }
        self.seen = Some(revs.next_event);
    }

    /// Record where a pod holds resources now (`None`: the pod is gone).
    fn note(&mut self, key: Key, pod: Option<&Object<PodSpec>>) {
        let now = pod
            .filter(|p| !p.spec.node_name.is_empty() && is_active(p))
            .map(|p| p.spec.node_name.as_str());
        if self.node_of.get(&key).map(String::as_str) == now {
            return;
        }
        if let Some(old) = self.node_of.remove(&key) {
            if let Some(n) = self.per_node.get_mut(&old) {
                *n -= 1;
                if *n == 0 {
                    self.per_node.remove(&old);
                }
            }
        }
        if let Some(node) = now {
            *self.per_node.entry(node.to_string()).or_default() += 1;
            self.node_of.insert(key, node.to_string());
        }
    }

    /// How many pods bound to `node` hold its resources.
    pub fn count(&self, node: &str) -> usize {
        self.per_node.get(node).copied().unwrap_or(0)
    }

    /// The node whose resources `pod` is counted on, if any (keys are unique, so the pod
    /// at its key is the pod).
    pub fn node_of(&self, pod: &Object<PodSpec>) -> Option<&str> {
        self.node_of
            .get(&(pod.metadata.namespace.clone(), pod.metadata.name.clone()))
            .map(String::as_str)
    }
}

/// The pods bound to each node that hold its resources, other than `pod`: a walk of every
/// pod, for a pod that requests extended resources (their use is summed per node).
fn bound_pods<'a>(
    api: &'a Cluster,
    pod: &Object<PodSpec>,
) -> BTreeMap<&'a str, Vec<&'a Object<PodSpec>>> {
    let mut bound: BTreeMap<&str, Vec<&Object<PodSpec>>> = BTreeMap::new();
    for p in api.pods.values() {
        if !p.spec.node_name.is_empty() && p.metadata.uid != pod.metadata.uid && is_active(p) {
            bound.entry(p.spec.node_name.as_str()).or_default().push(p);
        }
    }
    bound
}

/// Why one node cannot take the pod: (reason, resolvable by preemption). `bound` counts
/// the pods already on the node; `bound_pods` lists them, needed (and filled) only when
/// the pod requests extended resources.
fn node_failures(
    pod: &Object<PodSpec>,
    node: &Object<crate::cluster::NodeSpec>,
    bound: usize,
    bound_pods: &[&Object<PodSpec>],
    volume: Option<String>,
) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    // NodeUnschedulable runs first (`plugins/nodeunschedulable`): a cordoned node fails
    // it, and the framework stops at a node's first failing filter.
    if node.spec.unschedulable {
        out.push(("node(s) were unschedulable".to_string(), false));
        return out;
    }
    let ready = node
        .status
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready")
        .map(|c| &*c.status);
    match ready {
        Some("True") => {}
        Some("False") => out.push((
            "node(s) had untolerated taint {node.kubernetes.io/not-ready: }".to_string(),
            false,
        )),
        _ => out.push((
            "node(s) had untolerated taint {node.kubernetes.io/unreachable: }".to_string(),
            false,
        )),
    }
    // NodeAffinity (`spec.nodeSelector`) runs before NodeResourcesFit; a node it fails has
    // no other reason (the framework stops at a node's first failing filter).
    if out.is_empty() && !pod.spec.selector_matches(&node.metadata.labels) {
        out.push((
            "node(s) didn't match Pod's node affinity/selector".to_string(),
            false,
        ));
    }
    if out.is_empty() {
        let alloc = &node.status.allocatable;
        if let Some(max) = alloc.get("pods").and_then(|q| q.parse::<usize>().ok()) {
            if bound + 1 > max {
                out.push(("Too many pods".to_string(), true));
            }
        }
        for (resource, requested) in pod.spec.extended_requests() {
            if requested == 0 {
                continue;
            }
            let allocatable = alloc
                .get(&resource)
                .and_then(|q| q.parse::<i64>().ok())
                .unwrap_or(0);
            let used: i64 = bound_pods
                .iter()
                .map(|p| p.spec.request_count(&resource))
                .sum();
            if requested > allocatable - used {
                out.push((format!("Insufficient {resource}"), true));
            }
        }
        if let Some(v) = volume {
            out.push((v, false));
        }
    }
    out
}

/// `4` → 4000 millicores, `500m` → 500.
fn milli_cpu(q: &str) -> i64 {
    match q.strip_suffix('m') {
        Some(m) => m.parse().unwrap_or(0),
        None => q
            .parse::<i64>()
            .map(|c| c.saturating_mul(1000))
            .unwrap_or(0),
    }
}

/// `8034468Ki` → bytes (binary and decimal suffixes the lab writes).
fn bytes(q: &str) -> i64 {
    const UNITS: [(&str, i64); 6] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("k", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ];
    for (suffix, mult) in UNITS {
        if let Some(n) = q.strip_suffix(suffix) {
            return n
                .parse::<i64>()
                .map(|v| v.saturating_mul(mult))
                .unwrap_or(0);
        }
    }
    q.parse().unwrap_or(0)
}

/// LeastAllocated over cpu and memory (0–100), counting `pods` pods at the default
/// requests.
pub(crate) fn least_allocated_score(
    allocatable: &crate::cluster::ResourceList,
    pods: usize,
) -> i64 {
    let n = i64::try_from(pods).unwrap_or(i64::MAX);
    let score = |cap: i64, req: i64| {
        if cap <= 0 || req > cap {
            0
        } else {
            (cap - req) * 100 / cap
        }
    };
    let cpu = score(
        allocatable.get("cpu").map_or(0, |q| milli_cpu(q)),
        n.saturating_mul(DEFAULT_MILLI_CPU),
    );
    let mem = score(
        allocatable.get("memory").map_or(0, |q| bytes(q)),
        n.saturating_mul(DEFAULT_MEMORY),
    );
    (cpu + mem) / 2
}

/// Where a scheduling cycle searches: the nodes in the node tree's walk order
/// ([`super::node_tree`]) and the index the previous cycle left off at
/// (`nextStartNodeIndex`), which this cycle moves on by the nodes it looked at.
pub(crate) struct Search<'a> {
    /// The node tree's walk order, as the Node table's keys.
    pub order: &'a [(String, String)],
    /// Where this cycle starts in `order`; set to where the next one starts.
    pub next_start: &'a mut usize,
}

/// One scheduling cycle for `pod` (no node yet): the chosen node, or the FailedScheduling
/// message. `bound` holds the pods on each node (brought up to date by the caller);
/// `volume_reason(node)` is the per-node volume check.
///
/// The filters run over the nodes from where the last cycle stopped, and the search ends
/// once [`super::node_tree::feasible_nodes_to_find`] feasible nodes are found
/// (`findNodesThatPassFilters`; the real scheduler checks 16 nodes at a time, the lab one
/// after the other, so which nodes it finds is deterministic). Below 100 nodes that is
/// every node. Only the feasible nodes found are scored.
pub(crate) fn place(
    api: &Cluster,
    pod: &Object<PodSpec>,
    bound: &BoundPods,
    search: Search<'_>,
    volume_reason: impl Fn(&Object<crate::cluster::NodeSpec>) -> Option<String>,
) -> Result<String, String> {
    // The pods on a node other than this one.
    let own = bound.node_of(pod);
    let count = |node: &str| bound.count(node) - usize::from(own == Some(node));
    #[cfg(debug_assertions)]
    {
        let walk = bound_pods(api, pod);
        for node in api.nodes.values() {
            let want = walk.get(node.name()).map_or(0, Vec::len);
            assert_eq!(
                count(node.name()),
                want,
                "the scheduler's count of pods on {} is stale",
                node.name()
            );
        }
        debug_assert_eq!(
            search.order.len(),
            api.nodes.len(),
            "the node tree is stale"
        );
    }
    // The pods of each node are needed only for a pod that requests extended resources.
    let extended = pod
        .spec
        .extended_requests()
        .iter()
        .any(|(_, requested)| *requested != 0);
    let walked = if extended {
        bound_pods(api, pod)
    } else {
        BTreeMap::new()
    };
    let total = api.nodes.len();
    if total == 0 {
        // ErrNoNodesAvailable, before any filter runs.
        return Err("no nodes available to schedule pods".to_string());
    }
    let to_find = super::node_tree::feasible_nodes_to_find(total);
    let order = search.order;
    let start = *search.next_start % order.len().max(1);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut best: Option<(i64, &str)> = None;
    let (mut feasible, mut processed) = (0, 0);
    for i in 0..order.len() {
        if feasible == to_find {
            break;
        }
        let Some(node) = api.nodes.get(&order[(start + i) % order.len()]) else {
            continue;
        };
        processed += 1;
        let name = node.name();
        let count = count(name);
        let on_node = walked.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let fails = node_failures(pod, node, count, on_node, volume_reason(node));
        if fails.is_empty() {
            feasible += 1;
            let score = least_allocated_score(&node.status.allocatable, count + 1);
            // The highest score wins; ties go to the name that sorts first.
            if best.is_none_or(|(s, n)| score > s || (score == s && name < n)) {
                best = Some((score, name));
            }
            continue;
        }
        let resolvable = fails.iter().all(|(_, r)| *r);
        for (r, _) in fails {
            *reasons.entry(r).or_default() += 1;
        }
        *preemption
            .entry(if resolvable {
                "No preemption victims found for incoming pod"
            } else {
                "Preemption is not helpful for scheduling"
            })
            .or_default() += 1;
    }
    *search.next_start = (start + processed) % order.len().max(1);
    if let Some((_, name)) = best {
        return Ok(name.to_string());
    }
    let hist = |m: &mut dyn Iterator<Item = String>| {
        let mut v: Vec<String> = m.collect();
        v.sort();
        v.join(", ")
    };
    let main = hist(&mut reasons.iter().map(|(r, n)| format!("{n} {r}")));
    let pre = hist(&mut preemption.iter().map(|(r, n)| format!("{n} {r}")));
    Err(format!(
        "0/{total} nodes are available: {main}. preemption: 0/{total} nodes are available: {pre}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_prefer_emptier_nodes() {
        let mut a = crate::cluster::ResourceList::new();
        a.insert("cpu".into(), "4".into());
        a.insert("memory".into(), "8034468Ki".into());
        assert!(least_allocated_score(&a, 1) > least_allocated_score(&a, 2));
        assert_eq!(least_allocated_score(&a, 0), 100);
        assert_eq!(milli_cpu("500m"), 500);
        assert_eq!(bytes("1Ki"), 1024);
        assert_eq!(least_allocated_score(&Default::default(), 3), 0);
    }
}
