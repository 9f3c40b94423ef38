//! Security identities: the label set of a pod that counts for policy, and the numbers the
//! agent gives label sets (`pkg/identity`, `pkg/labelsfilter`, `pkg/k8s/utils/utils.go`).

use crate::net::view::{ClusterNet, PodNet, Policy};
use crate::util::hash::fnv64;
use ipnet::IpNet;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A numeric security identity (`identity.NumericIdentity`).
pub type NumericIdentity = u32;

/// Identity 0, `reserved:unknown`: never an endpoint's; the policy map's wildcard peer.
pub const ID_UNKNOWN: NumericIdentity = 0;
/// Identity 1, `reserved:host`: the local node (its addresses, `cilium_host`).
pub const ID_HOST: NumericIdentity = 1;
/// Identity 2, `reserved:world`: anything outside the cluster (`0.0.0.0/0`).
pub const ID_WORLD: NumericIdentity = 2;
/// Identity 4, `reserved:health`: the `lxc_health` endpoint.
pub const ID_HEALTH: NumericIdentity = 4;
/// Identity 6, `reserved:remote-node`: the other nodes.
pub const ID_REMOTE_NODE: NumericIdentity = 6;
/// The first cluster-local identity (`identity.MinimalAllocationIdentity`).
pub const MIN_CLUSTER_ID: NumericIdentity = 256;
/// The last cluster-local identity without ClusterMesh (`identity.MaximumAllocationIdentity`).
pub const MAX_CLUSTER_ID: NumericIdentity = 65535;
/// The first node-local (CIDR) identity, `1<<24 | 1` (`identity.LocalIdentityFlag`).
pub const CIDR_ID_BASE: NumericIdentity = (1 << 24) | 1;

/// The reserved identities `cilium identity list` shows, with their names
/// (`pkg/identity/numericidentity.go`; 3 unmanaged, 5 init, 7 kube-apiserver, 8 ingress,
/// 9/10 world-ipv4/-ipv6 exist but nothing in the lab gets them).
pub const RESERVED: &[(NumericIdentity, &str)] = &[
    (1, "host"),
    (2, "world"),
    (3, "unmanaged"),
    (4, "health"),
    (5, "init"),
    (6, "remote-node"),
    (7, "kube-apiserver"),
    (8, "ingress"),
    (9, "world-ipv4"),
    (10, "world-ipv6"),
];

/// The cluster name the agent stamps on every pod (`cluster-name`, default `default`).
pub const CLUSTER_NAME: &str = "default";
/// The service account the lab's pods run as (the lab has no ServiceAccount objects).
pub const SERVICE_ACCOUNT: &str = "default";

/// `io.kubernetes.pod.namespace` (`k8sConst.PodNamespaceLabel`).
pub const POD_NAMESPACE_LABEL: &str = "io.kubernetes.pod.namespace";
/// The prefix of the namespace's own labels (`k8sConst.PodNamespaceMetaLabels`).
pub const NAMESPACE_LABELS_PREFIX: &str = "io.cilium.k8s.namespace.labels";
/// `io.cilium.k8s.policy.cluster` (`k8sConst.PolicyLabelCluster`).
pub const CLUSTER_LABEL: &str = "io.cilium.k8s.policy.cluster";
/// `io.cilium.k8s.policy.serviceaccount` (`k8sConst.PolicyLabelServiceAccount`).
pub const SERVICE_ACCOUNT_LABEL: &str = "io.cilium.k8s.policy.serviceaccount";

/// One label with its source, as Cilium prints it: `k8s:app=web`, `reserved:host`,
/// `cidr:10.0.0.0/8` (`pkg/labels`, `Label.String`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label {
    /// `k8s`, `reserved` or `cidr`.
    pub source: String,
    /// The key (`app`, `host`, `10.0.0.0/8`).
    pub key: String,
    /// The value; empty for reserved and CIDR labels.
    pub value: String,
}

impl Label {
    /// A `k8s:` label.
    pub fn k8s(key: &str, value: &str) -> Self {
        Label {
            source: "k8s".into(),
            key: key.into(),
            value: value.into(),
        }
    }

    /// A `reserved:` label.
    pub fn reserved(name: &str) -> Self {
        Label {
            source: "reserved".into(),
            key: name.into(),
            value: String::new(),
        }
    }

    /// `source:key`, the key selectors match on.
    pub fn extended_key(&self) -> String {
        format!("{}:{}", self.source, self.key)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.source, self.key)
        } else {
            write!(f, "{}:{}={}", self.source, self.key, self.value)
        }
    }
}

/// What kind of identity a number is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityKind {
    /// One of the reserved identities 0–10.
    Reserved,
    /// A cluster-wide identity of a pod label set (256..65535).
    Cluster,
    /// A node-local identity of a CIDR prefix a policy names (from 16777217).
    Cidr(IpNet),
}

/// A security identity: a number and the sorted label set it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The number.
    pub id: NumericIdentity,
    /// Sorted labels (the allocator key is this sorted list, `pkg/identity/key`).
    pub labels: Vec<Label>,
    /// Reserved, cluster or CIDR.
    pub kind: IdentityKind,
}

impl Identity {
    /// The labels as `cilium` prints them, sorted (`Labels.GetPrintableModel`).
    pub fn printable(&self) -> Vec<String> {
        let mut v: Vec<String> = self.labels.iter().map(Label::to_string).collect();
        v.sort();
        v
    }

    /// The labels as `source:key` → value, what selectors are matched against.
    pub fn label_map(&self) -> BTreeMap<String, String> {
        self.labels
            .iter()
            .map(|l| (l.extended_key(), l.value.clone()))
            .collect()
    }
}

/// The name of a reserved identity (`host`, `world`), as `NumericIdentity.String` prints it.
pub fn reserved_name(id: NumericIdentity) -> Option<&'static str> {
    if id == ID_UNKNOWN {
        return Some("unknown");
    }
    RESERVED.iter().find(|(n, _)| *n == id).map(|(_, s)| *s)
}

/// The default label filter (`pkg/labelsfilter/filter.go`, `defaultLabelPrefixCfg`): is a
/// label key (of any source but `reserved`) part of the identity?
///
/// Each prefix is a regular expression that must match at the start of the key. A key is
/// kept when no ignore prefix matches it, or when the longest matching include is longer
/// than the shortest matching ignore (so `io.kubernetes.pod.namespace` survives
/// `!io.kubernetes`). No include is user-supplied, so the filter is a denylist.
pub fn keeps_label(key: &str) -> bool {
    const INCLUDE: [&str; 4] = [
        POD_NAMESPACE_LABEL,
        NAMESPACE_LABELS_PREFIX,
        "app.kubernetes.io",
        CLUSTER_LABEL,
    ];
    const IGNORE: [&str; 10] = [
        "io.kubernetes",
        "kubernetes.io",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "batch.kubernetes.io/job-completion-index",
        "k8s.io",
        "pod-template-generation",
        "pod-template-hash",
        "controller-revision-hash",
        "etcd_node",
    ];
    let included = INCLUDE
        .iter()
        .filter(|p| key.starts_with(*p))
        .map(|p| p.len())
        .max()
        .unwrap_or(0);
    let mut ignored: Vec<usize> = IGNORE
        .iter()
        .filter(|p| key.starts_with(*p))
        .map(|p| p.len())
        .collect();
    // `!.*beta\.kubernetes\.io`: greedy, so the match runs to the end of the last occurrence.
    if let Some(i) = key.rfind("beta.kubernetes.io") {
        ignored.push(i + "beta.kubernetes.io".len());
    }
    // `!annotation.*`: the whole key.
    if key.starts_with("annotation") {
        ignored.push(key.len());
    }
    match ignored.into_iter().min() {
        None => true,
        Some(ig) => included > ig,
    }
}

/// The identity labels of a pod: its own labels (minus any `io.cilium.k8s*` a user set),
/// the namespace's labels under `io.cilium.k8s.namespace.labels.`, the namespace, the
/// service account and the cluster (`SanitizePodLabels` in `pkg/k8s/utils/utils.go`), all
/// with source `k8s`, then the label filter. The namespace's labels include
/// `kubernetes.io/metadata.name`, which the apiserver sets on every namespace.
pub fn pod_labels(net: &ClusterNet, pod: &PodNet) -> Vec<Label> {
    let mut all: BTreeMap<String, String> = pod
        .labels
        .iter()
        .filter(|(k, _)| !k.starts_with("io.cilium.k8s"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in net.namespace_labels(&pod.namespace) {
        all.insert(format!("{NAMESPACE_LABELS_PREFIX}.{k}"), v);
    }
    all.insert(POD_NAMESPACE_LABEL.into(), pod.namespace.clone());
    all.insert(SERVICE_ACCOUNT_LABEL.into(), SERVICE_ACCOUNT.into());
    all.insert(CLUSTER_LABEL.into(), CLUSTER_NAME.into());
    all.into_iter()
        .filter(|(k, _)| keeps_label(k))
        .map(|(k, v)| Label::k8s(&k, &v))
        .collect()
}

/// The labels of a CIDR identity: `cidr:<prefix>` and `reserved:world` (non-dual-stack;
/// `labels.GetCIDRLabels` since v1.15 no longer adds every enclosing prefix).
pub fn cidr_labels(prefix: IpNet) -> Vec<Label> {
    vec![
        Label {
            source: "cidr".into(),
            key: prefix.to_string(),
            value: String::new(),
        },
        Label::reserved("world"),
    ]
}

/// Every identity the agent knows: the reserved ones, one per distinct pod label set, one
/// per CIDR prefix the policies name.
///
/// Numbering is deterministic, where Cilium's is random (`pkg/idpool`: "LeaseAvailableID
/// returns an available ID at random"): a label set's number is
/// `256 + FNV-64(sorted labels joined by ';') mod 65280`, probing upward (wrapping inside
/// 256..65535) when taken. Label sets are numbered in sorted order, after the ones
/// [`IdentityTable::update`] carries over, so a number stays put while its label set
/// lives. CIDR identities are node-local in Cilium; here every node numbers them alike,
/// from 16777217 in prefix order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdentityTable {
    by_id: BTreeMap<NumericIdentity, Identity>,
    by_labels: BTreeMap<Vec<Label>, NumericIdentity>,
    by_pod: BTreeMap<String, NumericIdentity>,
    by_cidr: BTreeMap<IpNet, NumericIdentity>,
}

impl IdentityTable {
    /// Allocate identities for a cluster from scratch.
    pub fn build(net: &ClusterNet) -> Self {
        Self::update(&IdentityTable::default(), net)
    }

    /// Allocate identities for a cluster, keeping the numbers `previous` gave label sets
    /// that still exist (what the real allocator's leases do).
    pub fn update(previous: &IdentityTable, net: &ClusterNet) -> Self {
        let mut t = IdentityTable::default();
        t.insert(Identity {
            id: ID_UNKNOWN,
            labels: vec![Label::reserved("unknown")],
            kind: IdentityKind::Reserved,
        });
        for (id, name) in RESERVED {
            t.insert(Identity {
                id: *id,
                labels: vec![Label::reserved(name)],
                kind: IdentityKind::Reserved,
            });
        }
        // Pod label sets.
        let mut sets: BTreeMap<Vec<Label>, Vec<String>> = BTreeMap::new();
        for pod in &net.pods {
            sets.entry(pod_labels(net, pod))
                .or_default()
                .push(pod.key());
        }
        let mut fresh = Vec::new();
        for (labels, pods) in &sets {
            match previous.by_labels.get(labels) {
                Some(id) if (MIN_CLUSTER_ID..=MAX_CLUSTER_ID).contains(id) => {
                    t.insert_cluster(*id, labels.clone(), pods);
                }
                _ => fresh.push((labels, pods)),
            }
        }
        for (labels, pods) in fresh {
            let key: Vec<String> = labels.iter().map(Label::to_string).collect();
            let span = u64::from(MAX_CLUSTER_ID - MIN_CLUSTER_ID + 1);
            let start = fnv64(&[&key.join(";")]) % span;
            let free = (0..span)
                .map(|i| MIN_CLUSTER_ID + ((start + i) % span) as NumericIdentity)
                .find(|id| !t.by_id.contains_key(id));
            // All 65280 taken: Cilium fails the allocation and the pod waits for an identity.
            if let Some(id) = free {
                t.insert_cluster(id, labels.clone(), pods);
            }
        }
        // CIDR prefixes named by ipBlocks (the block and its excepts); 0.0.0.0/0 is world.
        for (next, prefix) in (CIDR_ID_BASE..).zip(policy_prefixes(net)) {
            t.by_cidr.insert(prefix, next);
            t.insert(Identity {
                id: next,
                labels: cidr_labels(prefix),
                kind: IdentityKind::Cidr(prefix),
            });
        }
        t
    }

    fn insert(&mut self, ident: Identity) {
        self.by_labels.insert(ident.labels.clone(), ident.id);
        self.by_id.insert(ident.id, ident);
    }

    fn insert_cluster(&mut self, id: NumericIdentity, labels: Vec<Label>, pods: &[String]) {
        for p in pods {
            self.by_pod.insert(p.clone(), id);
        }
        self.insert(Identity {
            id,
            labels,
            kind: IdentityKind::Cluster,
        });
    }

    /// The identity with this number.
    pub fn get(&self, id: NumericIdentity) -> Option<&Identity> {
        self.by_id.get(&id)
    }

    /// The identity of a pod (`namespace/name`).
    pub fn of_pod(&self, key: &str) -> Option<NumericIdentity> {
        self.by_pod.get(key).copied()
    }

    /// The identity of a CIDR prefix a policy names.
    pub fn of_cidr(&self, prefix: &IpNet) -> Option<NumericIdentity> {
        self.by_cidr.get(prefix).copied()
    }

    /// The CIDR prefixes with an identity, in order.
    pub fn cidrs(&self) -> impl Iterator<Item = (&IpNet, NumericIdentity)> {
        self.by_cidr.iter().map(|(p, id)| (p, *id))
    }

    /// Every identity, by number (0 included).
    pub fn all(&self) -> impl Iterator<Item = &Identity> {
        self.by_id.values()
    }
}

/// The prefixes the policies' ipBlocks name (cidr and except), truncated to their network,
/// without `0.0.0.0/0` / `::/0` (those are `reserved:world`). Unparsable ones are skipped
/// (validation rejects them).
pub fn policy_prefixes(net: &ClusterNet) -> BTreeSet<IpNet> {
    net.policies.iter().flat_map(prefixes_of).collect()
}

/// The prefixes one policy's ipBlocks name, as [`policy_prefixes`] counts them.
pub fn prefixes_of(p: &Policy) -> BTreeSet<IpNet> {
    let mut out = BTreeSet::new();
    let mut add = |s: &str| {
        if let Ok(n) = s.parse::<IpNet>() {
            let n = n.trunc();
            if n.prefix_len() > 0 {
                out.insert(n);
            }
        }
    };
    let peers = p
        .spec
        .ingress
        .iter()
        .flat_map(|r| r.from.iter())
        .chain(p.spec.egress.iter().flat_map(|r| r.to.iter()));
    for peer in peers {
        if let Some(b) = &peer.ip_block {
            add(&b.cidr);
            for e in &b.except {
                add(e);
            }
        }
    }
    out
}
