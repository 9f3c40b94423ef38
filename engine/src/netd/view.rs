//! The plain network view ([`ClusterNet`]) as the policy agents' watches and the packet
//! walker read it: the API objects (Nodes, pods, namespaces, NetworkPolicies) with what the
//! nodes' runtimes add (the address of a node's bridge or of cilium_host, a pod's network
//! namespace and the host end of its veth).

use super::View;
use crate::cluster::Object;
use crate::cluster::objects::PodSpec;
use crate::net::{ClusterNet, NodeNet, PodNet, Policy};
use std::collections::{BTreeMap, BTreeSet};

/// The nodes alone (podCIDR, InternalIP, the bridge's address): all that route tables
/// need, so they stay cheap with many pods. The Node fields come typed from the store
/// (parsed when each node was written); the bridge's address typed from the node's kernel
/// (kept with its links). Both are in node name order, read side by side.
fn node_nets(v: &View<'_>) -> ClusterNet {
    let mut net = ClusterNet::default();
    let mut runtimes = v.nodes.iter().peekable();
    for (name, fields) in v.api.fields.node_nets() {
        let mut nn = NodeNet::new(name, fields.pod_cidr, fields.internal_ip);
        while runtimes.next_if(|(n, _)| n.as_str() < name).is_some() {}
        if let Some((_, rt)) = runtimes.next_if(|(n, _)| n.as_str() == name) {
            // The bridge's address (flannel's cni0), or Cilium's router IP on cilium_host.
            nn.gateway = match rt.host.root.links.bridge_addr() {
                Some(addr) => addr,
                None => rt
                    .host
                    .root
                    .links
                    .get(super::cilium::agent::HOST_DEV)
                    .filter(|_| rt.host.cilium.is_some())
                    .and_then(|l| l.addrs.first())
                    .map(|a| a.addr()),
            };
        }
        net.nodes.push(nn);
    }
    net
}

/// The network as `crate::net` sees it: nodes (podCIDR, InternalIP, cni0's address), pods
/// (labels, IP, host veth), namespaces and policies.
pub(crate) fn cluster_net(v: &View<'_>) -> ClusterNet {
    cluster_net_where(v, v.api.pods.values())
}

/// [`cluster_net`] with only the pods `pods` yields.
pub(crate) fn cluster_net_where<'p>(
    v: &View<'_>,
    pods: impl Iterator<Item = &'p Object<PodSpec>>,
) -> ClusterNet {
    let mut net = node_nets(v);
    net.pods = pods.map(|p| pod_net(v, p)).collect();
    for ns in v.api.namespaces.values() {
        net.namespaces
            .insert(ns.name().to_string(), ns.metadata.labels.clone());
    }
    for p in v.api.policies.values() {
        net.policies.push(Policy {
            namespace: p.metadata.namespace().clone(),
            name: p.name().to_string(),
            spec: p.spec.clone(),
        });
    }
    net
}

/// The view the packet walker is handed first: the nodes, namespaces and policies, no
/// pods, noting what it asks of them ([`ClusterNet::noting`]). [`answer`] adds the pods.
pub(crate) fn walk_net(v: &View<'_>) -> ClusterNet {
    cluster_net_where(v, std::iter::empty()).noting()
}

/// Hand `net` every pod that answers a question it was asked since the last time, from
/// the store's key and field indexes (the addresses of `status.podIPs`, `spec.nodeName`),
/// keeping them in the pod table's order (a question's first answer is the cluster's
/// first). False when it already held them all: its answers were those of the whole
/// cluster.
pub(crate) fn answer(v: &View<'_>, net: &mut ClusterNet) -> bool {
    use crate::net::view::Asked;
    let held: BTreeSet<(&str, &str)> = net
        .pods
        .iter()
        .map(|p| (p.namespace.as_str(), p.name.as_str()))
        .collect();
    let mut more: BTreeSet<&(String, String)> = BTreeSet::new();
    for q in net.take_asked() {
        let keys: Vec<&(String, String)> = match &q {
            Asked::Pod(ns, name) => v
                .api
                .pods
                .get_key_value(&(ns.clone(), name.clone()))
                .map(|(k, _)| k)
                .into_iter()
                .collect(),
            Asked::Ip(ip) => v.api.fields.pods_with_ip(*ip).collect(),
            Asked::Node(node) => v.api.fields.pods_on_node(node).collect(),
        };
        more.extend(
            keys.into_iter()
                .filter(|k| !held.contains(&(k.0.as_str(), k.1.as_str()))),
        );
    }
    if more.is_empty() {
        return false;
    }
    let mut pods = std::mem::take(&mut net.pods);
    pods.extend(
        more.into_iter()
            .filter_map(|k| v.api.pods.get(k))
            .map(|p| pod_net(v, p)),
    );
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    net.pods = pods;
    true
}

/// One pod's network: its labels and IP from the object, its network namespace and the
/// host end of its veth from the node's runtime.
fn pod_net(v: &View<'_>, p: &Object<PodSpec>) -> PodNet {
    let mut pn = PodNet::new(p.metadata.namespace(), p.name(), &p.spec.node_name);
    pn.labels = p.metadata.labels.clone();
    pn.ip = p.status.pod_ip;
    pn.second_ip = p.status.second_pod_ip();
    let sandbox = v
        .nodes
        .get(&p.spec.node_name)
        .and_then(|n| n.sandboxes.get_pod(p.metadata.namespace(), p.name()));
    pn.netns = sandbox.map(|sb| sb.netns().to_string());
    let root = v.nodes.get(&p.spec.node_name).map(|n| &n.host.root);
    pn.host_veth = sandbox
        .and_then(|sb| {
            sb.result.interfaces.iter().find(|i| {
                i.sandbox_path().is_empty()
                    && root
                        .and_then(|r| r.links.get(&i.name))
                        .is_some_and(|l| matches!(l.kind, crate::cni::host::LinkKind::Veth { .. }))
            })
        })
        .map(|i| i.name.to_string())
        // A plugin that reports only the pod's interface (cilium-cni): the host end
        // of the pod's veth, its peer.
        .or_else(|| {
            let sb = sandbox?;
            let host = &v.nodes.get(&p.spec.node_name)?.host;
            match &host.netns.get(sb.netns())?.links.get(&pn.ifname)?.kind {
                crate::cni::host::LinkKind::Veth { peer, peer_netns } if peer_netns.is_none() => {
                    Some(peer.to_string())
                }
                _ => None,
            }
        });
    pn
}

/// Every pod's sandbox ID, by `namespace/name` (what the CNI plugin got as
/// `CNI_CONTAINERID`).
pub(crate) fn sandbox_ids(v: &View<'_>) -> BTreeMap<String, String> {
    v.nodes
        .values()
        .flat_map(|rt| {
            rt.sandboxes
                .iter()
                .map(|(k, sb)| (k.to_string(), sb.id().to_string()))
        })
        .collect()
}
