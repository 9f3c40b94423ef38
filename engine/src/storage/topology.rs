//! external-provisioner's `GenerateAccessibilityRequirements`
//! (`kubernetes-csi/external-provisioner: pkg/controller/topology.go`): the
//! `accessibility_requirements` of a CreateVolumeRequest, built from the nodes' CSINode
//! topology keys and their labels.
//!
//! The lab's provisioner runs as csi-driver-host-path deploys it
//! (`deploy/kubernetes-*/hostpath/csi-hostpath-plugin.yaml`: `--feature-gates=Topology=true`
//! and the flags' defaults, `--immediate-topology=true`, `--strict-topology=false`), and the
//! driver advertises VOLUME_ACCESSIBILITY_CONSTRAINTS, so every claim gets requirements:
//! - Immediate binding (no selected node): `requisite` is the topology of every node that
//!   carries all the driver's topology keys, sorted; `preferred` is the same list rotated by
//!   a hash of the claim's name (the StatefulSet spreading heuristic), so different claims
//!   land on different nodes, always the same node for the same name.
//! - WaitForFirstConsumer (a selected node): `requisite` is the same aggregate, `preferred`
//!   starts at the selected node's topology.
//! - A class with `allowedTopologies`: its terms, flattened, are the `requisite`.
//!
//! The real provisioner shuffles the CSINode list to find the topology keys (`rand.Shuffle`)
//! and caches them per claim; every node of the lab's driver reports the same keys, so the
//! lab takes the first CSINode by name that has any.
//!
//! The nodes' aggregate topology comes from the provisioner's Node and CSINode informers:
//! [`TopologyCache`] keeps it between CreateVolumes and drops it when either kind is
//! written, so a CreateVolume does not walk every node.

use super::DRIVER;
use super::work::events_from;
use crate::cluster::{ApiKind, Cluster, TopologySelectorTerm, no_namespace};
use crate::csi::types::{Topology, TopologyRequirement};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// One topology term: key/value segments ANDed, sorted by key (`topologyTerm`).
type Term = Vec<(String, String)>;

/// Why no requirement could be built. `NotFound` is the one external-provisioner answers
/// with `ProvisioningReschedule` (the selected node's CSINode or Node is gone); the others
/// are `ProvisioningNoChange` errors, prefixed `error generating accessibility
/// requirements: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyError {
    /// The selected node's CSINode does not exist.
    NotFound(String),
    /// Any other failure.
    Other(String),
}

impl TopologyError {
    /// The text of the ProvisioningFailed event after `failed to provision volume with
    /// StorageClass "…": `.
    pub fn message(&self) -> String {
        match self {
            TopologyError::NotFound(m) => m.clone(),
            TopologyError::Other(m) => format!("error generating accessibility requirements: {m}"),
        }
    }
}

/// `topologyTerm.compare`: shorter terms first, then key by key, value by value.
fn compare(a: &Term, b: &Term) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `topologyTerm.subset`: every segment of `t` is in `other` with the same value.
fn subset(t: &Term, other: &Term) -> bool {
    t.iter()
        .all(|(k, v)| other.iter().any(|(k2, v2)| k == k2 && v == v2))
}

/// Go's `%v` of a term: `[{key value} {key value}]`.
fn go_term(t: &Term) -> String {
    let segs: Vec<String> = t.iter().map(|(k, v)| format!("{{{k} {v}}}")).collect();
    format!("[{}]", segs.join(" "))
}

/// `getTopologyFromNode`: the node's values for all the keys, or None if one is missing.
fn term_from_labels(labels: &BTreeMap<String, String>, keys: &[String]) -> Option<Term> {
    let mut term: Term = keys
        .iter()
        .map(|k| labels.get(k).map(|v| (k.clone(), v.clone())))
        .collect::<Option<_>>()?;
    term.sort();
    Some(term)
}

/// The topology keys the driver registered in a node's CSINode (`getTopologyKeys`).
fn csinode_keys(api: &Cluster, node: &str) -> Option<Vec<String>> {
    let csinode = api.csi_nodes.get(&(no_namespace(), node.to_string()))?;
    Some(
        csinode
            .spec
            .drivers
            .iter()
            .find(|d| d.name == DRIVER)
            .map(|d| d.topology_keys.clone())
            .unwrap_or_default(),
    )
}

/// `flatten`: the OR of values distributed over the AND of expressions, per term.
fn flatten(allowed: &[TopologySelectorTerm]) -> Vec<Term> {
    let mut out = Vec::new();
    for selector in allowed {
        let mut old: Vec<Term> = Vec::new();
        for expr in &selector.match_label_expressions {
            let mut new = Vec::new();
            for v in &expr.values {
                if old.is_empty() {
                    new.push(vec![(expr.key.clone(), v.clone())]);
                } else {
                    for t in &old {
                        let mut t = t.clone();
                        t.push((expr.key.clone(), v.clone()));
                        new.push(t);
                    }
                }
            }
            old = new;
        }
        out.extend(old);
    }
    for t in &mut out {
        t.sort();
    }
    out
}

/// `aggregateTopologies`: the topology of every node labelled with all the keys. With no
/// selected node the keys come from the first CSINode that has the driver's.
fn aggregate(api: &Cluster, keys: Option<&[String]>) -> Result<Vec<Term>, TopologyError> {
    let keys: Vec<String> = match keys {
        Some(k) => k.to_vec(),
        None => {
            let found = api
                .csi_nodes
                .keys()
                .filter_map(|(_, n)| csinode_keys(api, n))
                .find(|k| !k.is_empty());
            match found {
                Some(k) => k,
                // klog "No topology keys found on any node": no terms.
                None => return Ok(Vec::new()),
            }
        }
    };
    let terms: Vec<Term> = api
        .nodes
        .values()
        .filter_map(|n| term_from_labels(&n.metadata.labels, &keys))
        .filter(|t| !t.is_empty())
        .collect();
    if terms.is_empty() {
        return Err(TopologyError::Other(format!(
            "topologyKeys [{}] were not found on any nodes",
            keys.join(" ")
        )));
    }
    Ok(terms)
}

/// `getPVCNameHashAndIndexOffset` (`pkg/controller/topology.go`, identical to
/// `pkg/volume/util/util.go` in-tree): FNV-1 (32 bit) of the claim name, or of the
/// StatefulSet part of `claim-statefulset-N` with N as an offset, so a StatefulSet's
/// replicas spread over the terms and one replica's claims stay together.
pub(crate) fn pvc_name_hash_and_index(pvc_name: &str) -> (u32, u32) {
    let mut index = 0u32;
    let mut hash_string = pvc_name;
    if let Some(last_dash) = pvc_name.rfind('-') {
        let id = &pvc_name[last_dash + 1..];
        // strconv.ParseUint(s, 10, 32): digits only (no sign), fits in 32 bits.
        if !id.is_empty()
            && id.bytes().all(|b| b.is_ascii_digit())
            && let Ok(n) = id.parse::<u32>()
        {
            index = n;
            hash_string = &pvc_name[..last_dash];
            if let Some(d) = hash_string.rfind('-') {
                hash_string = &hash_string[d + 1..];
            }
        }
    }
    (fnv1_32(hash_string.as_bytes()), index)
}

/// Go's `hash/fnv.New32`: FNV-1, 32 bit (multiply, then xor).
fn fnv1_32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for b in bytes {
        h = h.wrapping_mul(16_777_619);
        h ^= u32::from(*b);
    }
    h
}

fn to_csi(terms: &[Term]) -> Vec<Topology> {
    terms
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| Topology {
            segments: t.iter().cloned().collect(),
        })
        .collect()
}

/// `GenerateAccessibilityRequirements` with `strictTopology=false`,
/// `immediateTopology=true` (the flags' defaults). `None` when there is nothing to ask for
/// (allowedTopologies whose terms are all empty).
pub(crate) fn accessibility_requirements(
    api: &Cluster,
    cache: &mut TopologyCache,
    pvc_name: &str,
    allowed: &[TopologySelectorTerm],
    selected_node: Option<&str>,
) -> Result<Option<TopologyRequirement>, TopologyError> {
    // 1. The selected node's keys and topology.
    let mut selected: Option<(Term, Vec<String>)> = None;
    if let Some(node) = selected_node {
        let keys = csinode_keys(api, node).ok_or_else(|| {
            TopologyError::NotFound(format!(
                "failed to get selected CSINode {node}: csinodes.storage.k8s.io \"{node}\" not found"
            ))
        })?;
        if keys.is_empty() {
            return Err(TopologyError::Other(format!(
                "no topology key found for node {node}"
            )));
        }
        let no_labels = BTreeMap::new();
        let labels = api
            .nodes
            .get_named("", node)
            .map_or(&no_labels, |n| &n.metadata.labels);
        let Some(term) = term_from_labels(labels, &keys) else {
            let ls: Vec<String> = labels.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            return Err(TopologyError::Other(format!(
                "topology labels from selected node map[{}] does not match topology keys from CSINode [{}]",
                ls.join(" "),
                keys.join(" ")
            )));
        };
        selected = Some((term, keys));
    }
    // 2. Requisite: the class's allowedTopologies, else every node's topology.
    let requisite: Cow<'_, Requisite> = if !allowed.is_empty() {
        Cow::Owned(Requisite::new(flatten(allowed)))
    } else {
        let keys = selected.as_ref().map(|(_, k)| k.as_slice());
        Cow::Borrowed(cache.of_nodes(api, keys)?)
    };
    if requisite.terms.is_empty() {
        return Ok(None);
    }
    // 3. Preferred: rotated by the claim name's hash, or to start at the selected node.
    let first = match &selected {
        None => {
            let (hash, index) = pvc_name_hash_and_index(pvc_name);
            (hash.wrapping_add(index) % requisite.terms.len() as u32) as usize
        }
        Some((term, _)) => {
            let Some(i) = requisite.terms.iter().position(|t| subset(t, term)) else {
                let all: Vec<String> = requisite.terms.iter().map(go_term).collect();
                return Err(TopologyError::Other(format!(
                    "topology {} from selected node {:?} is not in requisite: [{}]",
                    go_term(term),
                    selected_node.unwrap_or_default(),
                    all.join(" ")
                )));
            };
            i
        }
    };
    let topologies = &requisite.topologies;
    Ok(Some(TopologyRequirement {
        requisite: topologies.clone(),
        preferred: topologies[first..]
            .iter()
            .chain(&topologies[..first])
            .cloned()
            .collect(),
    }))
}

/// A requisite list: its terms without empty ones, sorted (`topologyTerm.compare`) and
/// deduplicated, and the same as CSI topologies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requisite {
    /// The terms.
    terms: Vec<Term>,
    /// The terms as CreateVolume sends them.
    topologies: Vec<Topology>,
}

impl Requisite {
    fn new(mut terms: Vec<Term>) -> Requisite {
        terms.retain(|t| !t.is_empty());
        terms.sort_by(compare);
        terms.dedup();
        let topologies = to_csi(&terms);
        Requisite { terms, topologies }
    }
}

/// The requisite built from every node's topology for `keys` (the selected node's, or
/// `None`: those of the first CSINode that has any).
fn requisite_of_nodes(api: &Cluster, keys: Option<&[String]>) -> Result<Requisite, TopologyError> {
    let terms = aggregate(api, keys)?;
    if terms.is_empty() {
        return Err(TopologyError::Other("no available topology found".into()));
    }
    Ok(Requisite::new(terms))
}

/// external-provisioner's Node and CSINode informers, as far as topology goes: the
/// requisite built from every node's topology, by the keys it was built for, kept until a
/// Node or a CSINode is written (its labels or its topology keys may have changed) or the
/// watch log dropped events not read yet.
#[derive(Debug, Clone, Default)]
pub(crate) struct TopologyCache {
    /// The index of the first watch event not read yet (`None` before the first look).
    seen: Option<u64>,
    /// The requisite (or why there is none) by the keys asked for; a lab's driver has one
    /// set of keys, so this holds one or two entries.
    by_keys: Vec<CachedRequisite>,
}

/// The keys a requisite was built for (`None`: those of the first CSINode that has any),
/// and the requisite or why there is none.
type CachedRequisite = (Option<Vec<String>>, Result<Requisite, TopologyError>);

impl TopologyCache {
    /// [`requisite_of_nodes`], from the cache when no Node or CSINode was written since it
    /// was built.
    fn of_nodes(
        &mut self,
        api: &Cluster,
        keys: Option<&[String]>,
    ) -> Result<&Requisite, TopologyError> {
        let unchanged = self
            .seen
            .and_then(|seen| events_from(&api.revs, seen))
            .is_some_and(|mut events| {
                !events.any(|e| matches!(e.kind, ApiKind::Node | ApiKind::CsiNode))
            });
        if !unchanged {
            self.by_keys.clear();
        }
        self.seen = Some(api.revs.next_event);
        let at = match self.by_keys.iter().position(|(k, _)| k.as_deref() == keys) {
            Some(at) => at,
            None => {
                let built = requisite_of_nodes(api, keys);
                self.by_keys.push((keys.map(<[String]>::to_vec), built));
                self.by_keys.len() - 1
            }
        };
        let cached = &self.by_keys[at].1;
        debug_assert_eq!(
            cached,
            &requisite_of_nodes(api, keys),
            "external-provisioner's topology cache differs from the nodes"
        );
        cached.as_ref().map_err(Clone::clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_matches_go_hash_fnv_new32() {
        // Go: fnv.New32() of "" is the offset basis; of "a" is 0x050c5d7e.
        assert_eq!(fnv1_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
        assert_eq!(fnv1_32(b"foobar"), 0x31f0_b262);
    }

    #[test]
    fn statefulset_names_hash_the_set_and_offset_by_the_ordinal() {
        let (h, i) = pvc_name_hash_and_index("data-web-2");
        assert_eq!((h, i), (fnv1_32(b"web"), 2));
        let (h, i) = pvc_name_hash_and_index("web-0");
        assert_eq!((h, i), (fnv1_32(b"web"), 0));
        let (h, i) = pvc_name_hash_and_index("data");
        assert_eq!((h, i), (fnv1_32(b"data"), 0));
        // Not a number, a sign, or past 32 bits: the whole name is hashed.
        for name in ["web-x", "web-+1", "web-4294967296", "web-"] {
            assert_eq!(pvc_name_hash_and_index(name), (fnv1_32(name.as_bytes()), 0));
        }
    }

    #[test]
    fn terms_sort_shorter_first_then_by_key_and_value() {
        let t = |s: &[(&str, &str)]| -> Term {
            s.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let mut v = [
            t(&[("a", "2"), ("b", "1")]),
            t(&[("z", "1")]),
            t(&[("a", "1"), ("b", "9")]),
        ];
        v.sort_by(compare);
        assert_eq!(v[0], t(&[("z", "1")]));
        assert_eq!(v[1], t(&[("a", "1"), ("b", "9")]));
        assert!(subset(&t(&[("b", "9")]), &v[1]));
        assert!(!subset(&t(&[("b", "8")]), &v[1]));
    }

    #[test]
    fn flatten_distributes_values_over_expressions() {
        use crate::cluster::TopologyRequirement as Req;
        let term = TopologySelectorTerm {
            match_label_expressions: vec![
                Req {
                    key: "zone".into(),
                    values: vec!["z1".into(), "z2".into()],
                },
                Req {
                    key: "rack".into(),
                    values: vec!["a".into(), "b".into()],
                },
            ],
        };
        let f = flatten(&[term]);
        assert_eq!(f.len(), 4);
        assert_eq!(
            f[0],
            vec![
                ("rack".to_string(), "a".to_string()),
                ("zone".into(), "z1".into())
            ]
        );
        assert_eq!(
            f[3],
            vec![
                ("rack".to_string(), "b".to_string()),
                ("zone".into(), "z2".into())
            ]
        );
    }
}
