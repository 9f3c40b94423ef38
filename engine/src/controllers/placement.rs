//! kube-scheduler's scheduling cycle for a pod with no node: the nodes are filtered (below
//! 100 nodes every node, above that until enough feasible ones are found: [`place`]), the
//! feasible ones found are scored, and the best one wins; when none is feasible the reasons
//! make the `FailedScheduling` message.
//!
//! **Filters** (in this order, all reasons of a node collected):
//! - NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes no new pod (`node(s)
//!   were unschedulable`);
//! - TaintToleration: the node's taints (a NotReady or Unknown node carries the
//!   `not-ready`/`unreachable` NoSchedule taint the node lifecycle controller adds);
//! - NodeAffinity: the node's labels hold every `spec.nodeSelector` pair (`node(s) didn't
//!   match Pod's node affinity/selector`);
//! - NodePorts: every host port the pod asks for is free among the node's pods' (see
//!   [`super::host_ports`]; `node(s) didn't have free ports for the requested pod ports`);
//! - NodeResourcesFit (`pkg/scheduler/framework/plugins/noderesources/fit.go`): the pod
//!   count (`Too many pods`) and each extended resource the pod requests against the node's
//!   allocatable less what the pods already bound to it request (`Insufficient <name>`);
//! - the per-node volume checks: VolumeRestrictions (a ReadWriteOncePod claim in use fails
//!   every node), then VolumeBinding (selected node, PV node affinity, the class's
//!   `allowedTopologies` for a claim to provision).
//!
//! **Message** (`FitError.Error()`): `0/<N> nodes are available: <count> <reason>, ….` with
//! the `<count> <reason>` strings sorted, then the DefaultPreemption post-filter's own
//! histogram: nodes that failed only resolvable filters (NodePorts, NodeResourcesFit,
//! VolumeRestrictions' ReadWriteOncePod conflict) give `No
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

use super::host_ports::{HostPort, HostPortInfo};
use super::node_info::{NodeFacts, NodeInfo, OwnHold, Snapshot};
use crate::cluster::{Object, PodSpec};
use std::collections::BTreeMap;

/// The scheduler's CPU request for a container that sets none (millicores).
pub(crate) const DEFAULT_MILLI_CPU: i64 = 100;
/// The scheduler's memory request for a container that sets none (bytes).
pub(crate) const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

/// What a node's pods hold of its host ports, and what of that is the pod's own (when it
/// counts on the node already).
struct Ports<'a> {
    /// The ports the node's pods hold.
    used: &'a HostPortInfo,
    /// The pod's own.
    own: &'a [HostPort],
}

/// The host ports of the node in `slot` (its `NodeInfo` is `info`) as the pod meets them:
/// `own` is what the pod holds already, if anything.
fn ports_on<'a>(own: Option<OwnHold<'a>>, slot: usize, info: &'a NodeInfo) -> Ports<'a> {
    Ports {
        used: &info.used_ports,
        own: match own {
            Some((node, _, ports)) if node == slot => ports,
            _ => &[],
        },
    }
}

/// Why one node cannot take the pod: (reason, resolvable by preemption). `bound` counts
/// the other pods on the node, `requests` are the pod's extended resource requests,
/// `used(resource)` what the other pods request of one, `ports` the host ports the pod
/// asks for and what the node's pods hold, and `volume` the volume checks' reasons.
fn node_failures(
    pod: &Object<PodSpec>,
    node: &NodeFacts,
    bound: usize,
    requests: &[(String, i64)],
    used: impl Fn(&str) -> i64,
    (want, ports): (&[HostPort], Ports<'_>),
    volume: Vec<(String, bool)>,
) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    // NodeUnschedulable runs first (`plugins/nodeunschedulable`): a cordoned node fails
    // it, and the framework stops at a node's first failing filter.
    if node.unschedulable {
        out.push(("node(s) were unschedulable".to_string(), false));
        return out;
    }
    // TaintToleration (`plugins/tainttoleration`): the node's first untolerated taint,
    // `{key: value}` (the lab's taints have no value).
    if let Some(key) = &node.untolerated_taint {
        out.push((format!("node(s) had untolerated taint {{{key}: }}"), false));
    }
    // NodeAffinity (`spec.nodeSelector`) runs before NodeResourcesFit; a node it fails has
    // no other reason (the framework stops at a node's first failing filter).
    if out.is_empty() && !pod.spec.selector_matches(&node.labels) {
        out.push((
            "node(s) didn't match Pod's node affinity/selector".to_string(),
            false,
        ));
    }
    // NodePorts runs between NodeAffinity and NodeResourcesFit; it fails as Unschedulable
    // (preemption might free the port).
    if out.is_empty() && !want.is_empty() && !ports.used.fits(want, ports.own) {
        out.push((super::host_ports::ERR_REASON.to_string(), true));
        return out;
    }
    if out.is_empty() {
        let alloc = &node.allocatable;
        if let Some(max) = alloc.pods {
            if bound + 1 > max {
                out.push(("Too many pods".to_string(), true));
            }
        }
        for (resource, requested) in requests {
            if *requested == 0 {
                continue;
            }
            let allocatable = alloc.scalar.get(resource).copied().unwrap_or(0);
            if *requested > allocatable - used(resource) {
                out.push((format!("Insufficient {resource}"), true));
            }
        }
    }
    // VolumeRestrictions' and VolumeBinding's Filters run after NodeResourcesFit: a node
    // that does not fit has no volume reason.
    if out.is_empty() {
        out = volume;
    }
    out
}

/// LeastAllocated over cpu and memory (0–100) on a node with this much allocatable
/// (millicores, bytes), counting `pods` pods at the default requests.
pub(crate) fn least_allocated_score(milli_cpu: i64, memory: i64, pods: usize) -> i64 {
    let n = i64::try_from(pods).unwrap_or(i64::MAX);
    let score = |cap: i64, req: i64| {
        if cap <= 0 || req > cap {
            0
        } else {
            (cap - req) * 100 / cap
        }
    };
    let cpu = score(milli_cpu, n.saturating_mul(DEFAULT_MILLI_CPU));
    let mem = score(memory, n.saturating_mul(DEFAULT_MEMORY));
    (cpu + mem) / 2
}

/// A feasible node's score (0–100) and rank in name order as one number that orders nodes
/// as a cycle prefers them: the higher score, then the lower rank (a name that sorts
/// first). A walked node's rank is below `u32::MAX`, so the number is never 0.
fn best_key_of(score: i64, rank: u32) -> u64 {
    (u64::try_from(score).unwrap_or(0) << 32) | u64::from(u32::MAX - rank)
}

/// Where a scheduling cycle searches: the scheduler cache's snapshot, the nodes in the
/// node tree's walk order ([`super::node_tree`]), and the index the previous cycle left
/// off at (`nextStartNodeIndex`), which this cycle moves on by the nodes it looked at.
pub(crate) struct Search<'a> {
    /// The nodes in walk order, with their pods.
    pub nodes: Snapshot<'a>,
    /// Where this cycle starts in that order; set to where the next one starts.
    pub next_start: &'a mut usize,
}

/// One scheduling cycle for `pod` (no node yet): the chosen node, or the FailedScheduling
/// message. `volume_reason(node, labels)` is the per-node volume checks' reasons, each
/// with whether preemption could resolve it (none: the node passes them).
///
/// The filters run over the nodes from where the last cycle stopped, and the search ends
/// once [`super::node_tree::feasible_nodes_to_find`] feasible nodes are found
/// (`findNodesThatPassFilters`; the real scheduler checks 16 nodes at a time, the lab one
/// after the other, so which nodes it finds is deterministic). Below 100 nodes that is
/// every node. Only the feasible nodes found are scored.
pub(crate) fn place(
    pod: &Object<PodSpec>,
    search: Search<'_>,
    volume_reason: impl Fn(&str, &BTreeMap<String, String>) -> Vec<(String, bool)>,
) -> Result<String, String> {
    let nodes = search.nodes;
    // What the pod itself counts for on its node, if anything: the other pods are what
    // the filters weigh.
    let own = nodes.pod_node(pod);
    let others = |slot: usize, info: &NodeInfo| match own {
        Some((node, _, _)) if node == slot => info.pods - 1,
        _ => info.pods,
    };
    let used = |slot: usize, info: &NodeInfo, resource: &str| {
        let total = info.requested.get(resource).copied().unwrap_or(0);
        let mine = match own {
            Some((node, requests, _)) if node == slot => requests
                .iter()
                .filter(|(r, _)| r == resource)
                .map(|(_, n)| n)
                .sum(),
            _ => 0,
        };
        total - mine
    };
    let ports = |slot: usize, info| ports_on(own, slot, info);
    // The pod's requirements, read once per cycle rather than once per node.
    let requests = if pod.spec.has_extended_requests() {
        pod.spec.extended_requests()
    } else {
        Vec::new()
    };
    let want = super::host_ports::wanted(&pod.spec);
    // A pod that asks a node for nothing but room (no node selector, no extended resource,
    // no host port, no volume) fails a node only on the node's own state:
    // NodeUnschedulable, TaintToleration and the pod count. Such a node is checked on
    // those three facts; any other, or one that fails, goes through every filter for its
    // reasons.
    let plain = pod.spec.node_selector().is_empty()
        && requests.iter().all(|(_, n)| *n == 0)
        && want.is_empty()
        && pod.spec.volumes().is_empty();
    let total = nodes.len();
    if total == 0 {
        // ErrNoNodesAvailable, before any filter runs.
        return Err("no nodes available to schedule pods".to_string());
    }
    let to_find = super::node_tree::feasible_nodes_to_find(total);
    let start = *search.next_start % total;
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&'static str, usize> = BTreeMap::new();
    // The best so far: its slot, and its score and rank in name order as one number (see
    // `best_key`); 0 while there is none.
    let (mut best, mut best_key) = (None, 0);
    let (mut feasible, mut processed) = (0, 0);
    // The node the pod already counts on (if any) weighs it differently: the full checks.
    let own_slot = own.map(|(slot, _, _)| slot);
    for step in 0..total {
        if feasible == to_find {
            break;
        }
        let i = if start + step < total {
            start + step
        } else {
            start + step - total
        };
        processed += 1;
        // A plain pod on a node its cache entry says is open: the filters all pass (the
        // entry's fit is its facts' and pod count's, kept with them), and the score is
        // the one the entry keeps.
        if plain {
            let (slot, rank) = nodes.ranked(i);
            let fit = nodes.fit(slot);
            if fit.open && own_slot != Some(slot) {
                #[cfg(debug_assertions)]
                {
                    let (_, info, facts) = nodes.get(i);
                    let all = node_failures(
                        pod,
                        facts,
                        info.pods,
                        &requests,
                        |resource| used(slot, info, resource),
                        (&want, ports(slot, info)),
                        volume_reason(&info.name, &facts.labels),
                    );
                    assert!(all.is_empty(), "a plain pod's fit differs: {all:?}");
                    let alloc = &facts.allocatable;
                    assert_eq!(
                        fit.score,
                        least_allocated_score(alloc.milli_cpu, alloc.memory, info.pods + 1)
                    );
                }
                feasible += 1;
                let key = best_key_of(fit.score, rank);
                if key > best_key {
                    (best, best_key) = (Some(slot), key);
                }
                continue;
            }
        }
        let (slot, info, facts) = nodes.get(i);
        let count = others(slot, info);
        let open = plain
            && !facts.unschedulable
            && facts.untolerated_taint.is_none()
            && facts.allocatable.pods.is_none_or(|max| count < max);
        let fails = if open {
            Vec::new()
        } else {
            node_failures(
                pod,
                facts,
                count,
                &requests,
                |resource| used(slot, info, resource),
                (&want, ports(slot, info)),
                volume_reason(&info.name, &facts.labels),
            )
        };
        #[cfg(debug_assertions)]
        if open {
            let all = node_failures(
                pod,
                facts,
                count,
                &requests,
                |resource| used(slot, info, resource),
                (&want, ports(slot, info)),
                volume_reason(&info.name, &facts.labels),
            );
            assert!(all.is_empty(), "a plain pod's fit differs: {all:?}");
        }
        if fails.is_empty() {
            feasible += 1;
            let alloc = &facts.allocatable;
            let score = least_allocated_score(alloc.milli_cpu, alloc.memory, count + 1);
            // The highest score wins; ties go to the name that sorts first (the lower
            // rank).
            let key = best_key_of(score, nodes.rank(slot));
            if key > best_key {
                (best, best_key) = (Some(slot), key);
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
    *search.next_start = (start + processed) % total;
    if let Some(slot) = best {
        return Ok(nodes.name(slot).to_string());
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
        // 4 CPUs, 8034468Ki of memory.
        let (cpu, memory) = (4000, 8_227_295_232);
        assert!(least_allocated_score(cpu, memory, 1) > least_allocated_score(cpu, memory, 2));
        assert_eq!(least_allocated_score(cpu, memory, 0), 100);
        assert_eq!(least_allocated_score(0, 0, 3), 0);
    }

    #[test]
    fn the_best_key_prefers_the_score_then_the_name_that_sorts_first() {
        assert!(best_key_of(51, 9) > best_key_of(50, 0));
        assert!(best_key_of(50, 0) > best_key_of(50, 1));
        assert!(best_key_of(0, u32::MAX - 1) > 0);
        assert!(best_key_of(100, 0) > best_key_of(99, 0));
    }
}
