//! The plain network view ([`ClusterNet`]) as the policy agents' watches and the packet
//! walker read it: the API objects (Nodes, pods, namespaces, NetworkPolicies) with what the
//! nodes' runtimes add (the address of a node's bridge or of cilium_host, a pod's network
//! namespace and the host end of its veth).

use super::View;
use crate::cluster::Object;
use crate::cluster::objects::PodSpec;
use crate::net::{ClusterNet, NodeNet, PodNet, Policy};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The nodes alone (podCIDR, InternalIP, the bridge's address): all that route tables
/// need, so they stay cheap with many pods.
fn node_nets(v: &View<'_>) -> ClusterNet {
    let mut net = ClusterNet::default();
    for n in v.api.nodes.values() {
        let mut nn = NodeNet::new(
            n.name(),
            n.spec.pod_cidr.parse().ok(),
            n.status.internal_ip().and_then(|ip| ip.parse().ok()),
        );
        if let Some(rt) = v.nodes.get(n.name()) {
            // The bridge's address (flannel's cni0), or Cilium's router IP on cilium_host.
            nn.gateway = rt
                .host
                .root
                .links
                .values()
                .find(|l| l.kind == crate::cni::host::LinkKind::Bridge && !l.addrs.is_empty())
                .or_else(|| {
                    rt.host
                        .root
                        .links
                        .get(super::cilium::agent::HOST_DEV)
                        .filter(|_| rt.host.cilium.is_some())
                })
                .and_then(|l| l.addrs.first())
                .and_then(|a| a.split('/').next())
                .and_then(|a| a.parse::<IpAddr>().ok());
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
    for p in pods {
        let mut pn = PodNet::new(&p.metadata.namespace, p.name(), &p.spec.node_name);
        pn.labels = p.metadata.labels.clone();
        pn.ip = p.status.pod_ip.parse().ok();
        let sandbox = v
            .nodes
            .get(&p.spec.node_name)
            .and_then(|n| n.sandboxes.get(&p.key()));
        pn.netns = sandbox.map(|sb| sb.netns.clone());
        let root = v.nodes.get(&p.spec.node_name).map(|n| &n.host.root);
        pn.host_veth = sandbox
            .and_then(|sb| {
                sb.result.interfaces.iter().find(|i| {
                    i.sandbox.is_empty()
                        && root.and_then(|r| r.links.get(&i.name)).is_some_and(|l| {
                            matches!(l.kind, crate::cni::host::LinkKind::Veth { .. })
                        })
                })
            })
            .map(|i| i.name.clone())
            // A plugin that reports only the pod's interface (cilium-cni): the host end
            // of the pod's veth, its peer.
            .or_else(|| {
                let sb = sandbox?;
                let host = &v.nodes.get(&p.spec.node_name)?.host;
                match &host.netns.get(&sb.netns)?.links.get(&pn.ifname)?.kind {
                    crate::cni::host::LinkKind::Veth { peer, peer_netns }
                        if peer_netns.is_empty() =>
                    {
                        Some(peer.clone())
                    }
                    _ => None,
                }
            });
        net.pods.push(pn);
    }
    for ns in v.api.namespaces.values() {
        net.namespaces
            .insert(ns.name().to_string(), ns.metadata.labels.clone());
    }
    for p in v.api.policies.values() {
        net.policies.push(Policy {
            namespace: p.metadata.namespace.clone(),
            name: p.name().to_string(),
            spec: p.spec.clone(),
        });
    }
    net
}

/// Every pod's sandbox ID, by `namespace/name` (what the CNI plugin got as
/// `CNI_CONTAINERID`).
pub(crate) fn sandbox_ids(v: &View<'_>) -> BTreeMap<String, String> {
    v.nodes
        .values()
        .flat_map(|rt| {
            rt.sandboxes
                .iter()
                .map(|(k, sb)| (k.clone(), sb.id.clone()))
        })
        .collect()
}
