//! The cluster's objects as a lesson check reads them: plain, typed answers to "what is this
//! pod's phase, IP and node", "is this claim bound, to which volume, staged where", "which
//! NetworkPolicy types", "was this object watched being modified". Checks ask here (and the
//! node's kernel and disk through [`node_view`](super::node_view)) instead of reading the
//! store, so the store's shape can change without touching a lesson.
//!
//! Every key is `ns/name` or a bare `name` in `default`, as the lesson language writes it.

use super::Lab;
use crate::cluster::policy::{IntOrString, NetworkPolicyPeer, NetworkPolicyPort, Protocol};
use crate::cluster::{ApiKind, Object, PodSpec, no_namespace};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// `ns/name` or `name` (in `default`) as the store's key.
fn key(key: &str) -> (String, String) {
    match key.split_once('/') {
        Some((ns, n)) => (ns.to_string(), n.to_string()),
        None => ("default".to_string(), key.to_string()),
    }
}

/// A pod as its status and spec say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFacts<'a> {
    /// `ns/name`.
    pub key: String,
    /// `status.phase` (`Pending`, `Running`, …).
    pub phase: &'a str,
    /// The STATUS column of `get pods` (`ContainerCreating`, `Terminating`, …).
    pub status: String,
    /// `status.podIP`, when it has one.
    pub ip: Option<IpAddr>,
    /// `spec.nodeName` ("" before scheduling).
    pub node: &'a str,
    /// `metadata.namespace`.
    pub namespace: &'a str,
    /// `metadata.labels`.
    pub labels: &'a BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: &'a BTreeMap<String, String>,
    /// The containers' host port mappings: (hostPort, containerPort, protocol).
    pub host_ports: Vec<(u16, u16, &'a str)>,
    /// The claims its volumes name, in its namespace.
    pub claims: Vec<&'a str>,
    /// Those of them it mounts read-only (`persistentVolumeClaim.readOnly`).
    pub read_only_claims: Vec<&'a str>,
    /// The sandbox's network namespace path on its node, when it has a sandbox.
    pub netns: Option<&'a str>,
    /// The sandbox's container ID (what CNI calls it), when it has a sandbox.
    pub sandbox_id: Option<&'a str>,
    /// `metadata.uid`: this pod, not an earlier one of the same name.
    pub uid: crate::cluster::meta::Uid,
}

impl<'a> PodFacts<'a> {
    fn of(lab: &'a Lab, p: &'a Object<PodSpec>) -> Self {
        let sandbox = lab
            .nodes
            .get(&p.spec.node_name)
            .and_then(|n| n.sandboxes.get(&p.key()));
        PodFacts {
            key: p.key(),
            phase: &p.status.phase,
            status: super::pods::pod_status_text(p),
            ip: p.status.pod_ip,
            node: &p.spec.node_name,
            namespace: p.metadata.namespace(),
            labels: &p.metadata.labels,
            annotations: p.metadata.annotations(),
            host_ports: p
                .spec
                .containers
                .iter()
                .flat_map(|c| &c.ports)
                .map(|port| (port.host_port, port.container_port, port.protocol.as_str()))
                .collect(),
            claims: claim_names(p).collect(),
            read_only_claims: p
                .spec
                .volumes()
                .iter()
                .filter(|v| v.persistent_volume_claim.read_only)
                .map(|v| v.persistent_volume_claim.claim_name.as_str())
                .collect(),
            netns: sandbox.map(|sb| sb.netns()),
            sandbox_id: sandbox.map(|sb| sb.id()),
            uid: p.metadata.uid,
        }
    }
}

/// The pod `key`, if it exists.
pub fn pod<'a>(lab: &'a Lab, key_: &str) -> Option<PodFacts<'a>> {
    lab.cluster
        .pods
        .get(&key(key_))
        .map(|p| PodFacts::of(lab, p))
}

/// The names of every pod, in key order.
pub(crate) fn pod_names(lab: &Lab) -> impl Iterator<Item = &str> {
    lab.cluster
        .pods
        .values()
        .map(|p| p.metadata.name().as_str())
}

/// The quantity of `resource` in the Node's `status.allocatable` (`None`: no such node;
/// `Some(None)`: the node has none of it).
pub(crate) fn node_allocatable<'a>(
    lab: &'a Lab,
    node: &str,
    resource: &str,
) -> Option<Option<&'a str>> {
    let n = lab.cluster.nodes.get(&(no_namespace(), node.to_string()))?;
    Some(n.status.allocatable.get(resource).map(String::as_str))
}

/// Whether the API has a Node object of this name.
pub(crate) fn node_exists(lab: &Lab, name: &str) -> bool {
    lab.cluster
        .nodes
        .contains_key(&(no_namespace(), name.to_string()))
}

/// The CSI drivers the node's CSINode lists (`None`: no CSINode for it yet).
pub(crate) fn csinode_drivers<'a>(lab: &'a Lab, node: &str) -> Option<Vec<&'a str>> {
    lab.cluster
        .csi_nodes
        .get(&(no_namespace(), node.to_string()))
        .map(|c| c.spec.drivers.iter().map(|d| d.name.as_str()).collect())
}

/// A PersistentVolumeClaim as `get pvc` and `describe pvc` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimFacts<'a> {
    /// `ns/name`.
    pub key: String,
    /// The STATUS column: `Pending`, `Bound`, `Lost`, or `Terminating` while deleting.
    pub phase: &'a str,
    /// `status.capacity.storage`, once bound.
    pub capacity: Option<&'a str>,
    /// `spec.resources.requests.storage`: what was asked for (a resize raises it).
    pub request: Option<&'a str>,
    /// The types of its `status.conditions` (`Resizing`, `FileSystemResizePending`).
    pub conditions: Vec<&'a str>,
}

/// The claim `key`, if it exists.
pub fn claim<'a>(lab: &'a Lab, key_: &str) -> Option<ClaimFacts<'a>> {
    let c = lab.cluster.pvcs.get(&key(key_))?;
    Some(ClaimFacts {
        key: c.key(),
        phase: if c.metadata.deletion_tick().is_some() {
            "Terminating"
        } else {
            &c.status.phase
        },
        capacity: c.status.capacity.get("storage").map(String::as_str),
        request: c.spec.resources.requests.get("storage").map(String::as_str),
        conditions: c
            .status
            .conditions
            .iter()
            .map(|c| c.condition_type.as_str())
            .collect(),
    })
}

/// The PersistentVolume made for a claim, found by its claimRef (it outlives the claim).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VolumeFacts<'a> {
    /// The PV's name.
    pub name: &'a str,
    /// `status.phase` (`Bound`, `Released`, …).
    pub phase: &'a str,
    /// `spec.csi.volumeHandle`: the driver's volume ID.
    pub handle: &'a str,
}

/// The volume made for claim `key`, if one was.
pub(crate) fn claim_volume<'a>(lab: &'a Lab, key_: &str) -> Option<VolumeFacts<'a>> {
    let (ns, name) = key(key_);
    lab.cluster
        .pvs
        .values()
        .find(|pv| {
            pv.spec
                .claim_ref
                .as_ref()
                .is_some_and(|r| r.namespace == ns && r.name == name)
        })
        .map(|pv| VolumeFacts {
            name: pv.name(),
            phase: &pv.status.phase,
            handle: &pv.spec.csi.volume_handle,
        })
}

/// The claims pod `ns`/`name`'s volumes name (`None`: no such pod).
pub(crate) fn pod_claims<'a>(lab: &'a Lab, ns: &str, name: &str) -> Option<Vec<&'a str>> {
    let pod = lab.cluster.pods.get_named(ns, name)?;
    Some(claim_names(pod).collect())
}

/// The claims a pod's volumes name, in its namespace.
fn claim_names(pod: &Object<PodSpec>) -> impl Iterator<Item = &str> {
    pod.spec
        .volumes()
        .iter()
        .map(|v| v.persistent_volume_claim.claim_name.as_str())
}

/// Whether claim `ns`/`name` exists (Terminating or not).
pub(crate) fn claim_exists(lab: &Lab, ns: &str, name: &str) -> bool {
    lab.cluster.pvcs.get_named(ns, name).is_some()
}

/// Whether `route` leads to the destination `text` names, read as `ip route` reads one
/// (`default`, a CIDR, an address); `false` for text that names none.
pub(crate) fn route_leads_to(route: &crate::cni::host::RouteEntry, text: &str) -> bool {
    text.parse::<crate::cni::host::RouteDst>()
        .is_ok_and(|want| route.dst == want)
}

/// Each PV's driver volume ID and name (`spec.csi.volumeHandle`, `metadata.name`).
pub(crate) fn pv_handles(lab: &Lab) -> impl Iterator<Item = (&str, &str)> {
    lab.cluster
        .pvs
        .values()
        .map(|pv| (pv.spec.csi.volume_handle.as_str(), pv.name()))
}

/// The driver's state of volume `handle` on `node` (`CREATED`, `NODE_READY`, `PUBLISHED`, …),
/// `None` when the driver no longer has it.
pub(crate) fn volume_state_on(lab: &Lab, handle: &str, node: &str) -> Option<&'static str> {
    lab.driver.lifecycle(handle, node).map(|s| s.name())
}

/// Every volume the driver holds, by ID, with where it is attached, staged and published.
pub(crate) fn driver_volumes(lab: &Lab) -> impl Iterator<Item = &crate::csi::VolumeRecord> {
    lab.driver.volumes()
}

/// How many NodePublish targets the driver holds for volume `handle` on `node`.
pub(crate) fn volume_targets_on(lab: &Lab, handle: &str, node: &str) -> usize {
    lab.driver
        .volume(handle)
        .map_or(0, |v| v.targets_on(node).len())
}

/// How many volumes the driver holds.
pub(crate) fn driver_volume_count(lab: &Lab) -> usize {
    lab.driver.volumes().count()
}

/// Whether a VolumeAttachment of PV `pv` to `node` says `attached: true`.
pub fn attached(lab: &Lab, pv: &str, node: &str) -> bool {
    lab.cluster.volume_attachments.values().any(|va| {
        va.spec.source.persistent_volume_name == pv
            && va.spec.node_name == node
            && va.status.attached
    })
}

/// Whether wire record `seq` (still kept) is host-local's ADD.
pub(crate) fn is_host_local_add(lab: &Lab, seq: u64) -> bool {
    matches!(lab.wire.get(seq), Some(crate::record::WireRecord::Cni(c))
        if c.plugin_type == "host-local"
            && c.env.command == Some(crate::cni::plugin::CniCommand::Add))
}

/// How many VolumeAttachments exist.
pub(crate) fn attachment_count(lab: &Lab) -> usize {
    lab.cluster.volume_attachments.len()
}

/// A VolumeSnapshot's `status.readyToUse` (`None`: no such snapshot).
pub(crate) fn snapshot_ready(lab: &Lab, key_: &str) -> Option<bool> {
    lab.cluster
        .snapshots
        .get(&key(key_))
        .map(|s| s.status.ready_to_use)
}

/// Whether the pod `key` has an event with this reason: the pod of that name that exists now
/// (its UID, as `describe` tells incarnations apart), or any of that name when none does.
pub(crate) fn pod_has_event(lab: &Lab, key_: &str, reason: &str) -> bool {
    let k = key(key_);
    let object = crate::cluster::ObjectRef::new(ApiKind::Pod, &k.0, &k.1);
    let uid = lab.cluster.pods.get(&k).map(|p| p.metadata.uid);
    lab.calls()
        .events(&object, uid)
        .any(|(_, e)| e.reason == reason)
}

/// The claim a VolumeSnapshot was taken of (`spec.source.persistentVolumeClaimName`).
pub(crate) fn snapshot_source<'a>(lab: &'a Lab, key_: &str) -> Option<&'a str> {
    lab.cluster
        .snapshots
        .get(&key(key_))
        .map(|s| s.spec.source.persistent_volume_claim_name.as_str())
}

/// The driver's ID of the snapshot `key` (its bound content's `status.snapshotHandle`), once
/// it has one.
pub(crate) fn snapshot_handle<'a>(lab: &'a Lab, key_: &str) -> Option<&'a str> {
    let snapshot = lab.cluster.snapshots.get(&key(key_))?;
    let content = lab.cluster.snapshot_contents.get(&(
        no_namespace(),
        snapshot.status.bound_volume_snapshot_content_name.clone(),
    ))?;
    Some(content.status.snapshot_handle.as_str()).filter(|h| !h.is_empty())
}

/// A StorageClass's `volumeBindingMode` (`None`: no such class).
pub(crate) fn storage_class_binding<'a>(lab: &'a Lab, name: &str) -> Option<&'a str> {
    lab.cluster
        .storage_classes
        .get(&(no_namespace(), name.to_string()))
        .map(|c| c.spec.volume_binding_mode.as_str())
}

/// A claim's `spec.storageClassName` (`None`: no such claim).
pub(crate) fn claim_class<'a>(lab: &'a Lab, key_: &str) -> Option<&'a str> {
    lab.cluster
        .pvcs
        .get(&key(key_))
        .map(|c| c.spec.storage_class_name.as_str())
}

/// A Node's `spec.podCIDR` (`None`: no such node; empty: none assigned).
pub(crate) fn node_pod_cidr<'a>(lab: &'a Lab, node: &str) -> Option<&'a str> {
    lab.cluster
        .nodes
        .get(&(no_namespace(), node.to_string()))
        .map(|n| n.spec.pod_cidr.as_str())
}

/// A node's InternalIP (its `status.addresses` entry), if the node exists: `Some(None)`
/// when it has none.
pub(crate) fn node_internal_ip<'a>(lab: &'a Lab, node: &str) -> Option<Option<&'a str>> {
    lab.cluster
        .nodes
        .get(&(no_namespace(), node.to_string()))
        .map(|n| n.status.internal_ip())
}

/// The messages of the pod's events with this reason (the pod of that name that exists
/// now, as [`pod_has_event`] reads them).
pub(crate) fn pod_event_messages(lab: &Lab, key_: &str, reason: &str) -> Vec<String> {
    let k = key(key_);
    let object = crate::cluster::ObjectRef::new(ApiKind::Pod, &k.0, &k.1);
    let uid = lab.cluster.pods.get(&k).map(|p| p.metadata.uid);
    lab.calls()
        .events(&object, uid)
        .filter(|(_, e)| e.reason == reason)
        .map(|(_, e)| {
            let mut text = String::new();
            e.message.write(&object, &mut text);
            text
        })
        .collect()
}

/// Whether the StorageClass exists.
pub(crate) fn storage_class_exists(lab: &Lab, name: &str) -> bool {
    lab.cluster
        .storage_classes
        .contains_key(&(no_namespace(), name.to_string()))
}

/// A NetworkPolicy's `spec.policyTypes` (`None`: no such policy).
pub(crate) fn policy_types<'a>(lab: &'a Lab, key_: &str) -> Option<&'a [String]> {
    lab.cluster
        .policies
        .get(&key(key_))
        .map(|p| p.spec.policy_types.as_slice())
}

/// Whether the NetworkPolicy `key`'s podSelector takes the pods labelled `key=value` and
/// no others ([`crate::cluster::LabelSelector::is_exactly`]: matchLabels or `In` alike).
/// `None`: no such policy.
pub(crate) fn policy_selects(lab: &Lab, key_: &str, label: (&str, &str)) -> Option<bool> {
    let policy = lab.cluster.policies.get(&key(key_))?;
    Some(policy.spec.pod_selector.is_exactly(label.0, label.1))
}

/// Whether every rule of the NetworkPolicy `key` in one direction (ingress, or egress with
/// `egress`) lets through only pods of its namespace labelled `label` (each peer a pod
/// selector that is exactly that label: no namespace selector, no ipBlock, no empty
/// `from`/`to`) and only on this one port (each rule's `ports` that port alone), and there
/// is such a rule. `None`: no such policy.
pub(crate) fn policy_only(
    lab: &Lab,
    key_: &str,
    label: (&str, &str),
    (port, proto): (u16, Protocol),
    egress: bool,
) -> Option<bool> {
    let p = lab.cluster.policies.get(&key(key_))?;
    let port_is = |q: &NetworkPolicyPort| {
        q.protocol
            .as_deref()
            .and_then(Protocol::parse_loose)
            .unwrap_or_default()
            == proto
            && q.port == Some(IntOrString::Int(i32::from(port)))
            && q.end_port.is_none_or(|e| e == i32::from(port))
    };
    let peer_is = |peer: &NetworkPolicyPeer| {
        peer.namespace_selector.is_none()
            && peer.ip_block.is_none()
            && peer
                .pod_selector
                .as_ref()
                .is_some_and(|s| s.is_exactly(label.0, label.1))
    };
    let rule_is = |ports: &[NetworkPolicyPort], peers: &[NetworkPolicyPeer]| {
        !ports.is_empty()
            && ports.iter().all(port_is)
            && !peers.is_empty()
            && peers.iter().all(peer_is)
    };
    let rules: Vec<bool> = if egress {
        p.spec
            .egress
            .iter()
            .map(|r| rule_is(&r.ports, &r.to))
            .collect()
    } else {
        p.spec
            .ingress
            .iter()
            .map(|r| rule_is(&r.ports, &r.from))
            .collect()
    };
    Some(!rules.is_empty() && rules.iter().all(|ok| *ok))
}

/// Whether an ingress rule of the NetworkPolicy `key` lets in pods of its namespace carrying
/// `labels` on this port (its `from` has a podSelector that matches them, or is empty; its
/// `ports` hold the port, or are empty): what the policy says, whatever the network
/// enforces. `None`: no such policy.
pub(crate) fn policy_admits(
    lab: &Lab,
    key_: &str,
    labels: &BTreeMap<String, String>,
    (port, proto): (u16, Protocol),
) -> Option<bool> {
    let p = lab.cluster.policies.get(&key(key_))?;
    let port_ok = |q: &NetworkPolicyPort| {
        let qp = q
            .protocol
            .as_deref()
            .and_then(Protocol::parse_loose)
            .unwrap_or_default();
        qp == proto
            && match &q.port {
                None => true,
                Some(IntOrString::Int(n)) => {
                    let last = q.end_port.unwrap_or(*n);
                    (*n..=last).contains(&i32::from(port))
                }
                Some(IntOrString::Str(_)) => false,
            }
    };
    let lets = |ports: &[NetworkPolicyPort], peers: &[NetworkPolicyPeer]| {
        (ports.is_empty() || ports.iter().any(port_ok))
            && (peers.is_empty()
                || peers.iter().any(|peer| {
                    peer.namespace_selector.is_none()
                        && peer.ip_block.is_none()
                        && peer
                            .pod_selector
                            .as_ref()
                            .is_some_and(|s| s.matches(labels))
                }))
    };
    Some(p.spec.ingress.iter().any(|r| lets(&r.ports, &r.from)))
}

/// Whether a watch from the beginning would have delivered an event of this type
/// (`ADDED`, `MODIFIED`, `DELETED`, any case) for this kind and key (`ns/name` or name).
pub(crate) fn watched(lab: &Lab, event_type: &str, kind: ApiKind, key: &str) -> bool {
    watched_at(lab, event_type, kind, key).is_some()
}

/// The API server's watch log position of the first event of this type for this object
/// (`key`: `ns/name` or a name; a namespaced kind's bare name is in `default`), and of the
/// last: `(first, last)`.
pub(crate) fn watched_at(
    lab: &Lab,
    event_type: &str,
    kind: ApiKind,
    key: &str,
) -> Option<(u64, u64)> {
    let key = if crate::resource::of(kind).namespaced() && !key.contains('/') {
        format!("default/{key}")
    } else {
        key.to_string()
    };
    let mut at = None;
    for e in lab.cluster.revs.events_since(0) {
        if e.kind == kind && e.key == key && e.event_type.name().eq_ignore_ascii_case(event_type) {
            let first = at.map_or(e.index, |(f, _)| f);
            at = Some((first, e.index));
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_and_its_claim_answer_as_get_and_describe_show_them() {
        let mut lab = Lab::new();
        lab.execute("pvc create data --size 1Gi").unwrap();
        lab.execute("pod create web --node node-2 --pvc data --label app=web")
            .unwrap();
        lab.execute("tick 10").unwrap();
        let p = pod(&lab, "web").expect("pod");
        assert_eq!(
            (p.key.as_str(), p.phase, p.node),
            ("default/web", "Running", "node-2")
        );
        assert_eq!(p.ip, Some("10.244.2.2".parse().unwrap()));
        assert_eq!(p.labels.get("app").map(String::as_str), Some("web"));
        assert!(p.netns.is_some());
        assert!(pod(&lab, "kube-system/web").is_none());
        let c = claim(&lab, "default/data").expect("claim");
        assert_eq!((c.phase, c.capacity), ("Bound", Some("1Gi")));
        let v = claim_volume(&lab, "data").expect("volume");
        assert_eq!(volume_state_on(&lab, v.handle, "node-2"), Some("PUBLISHED"));
        assert_eq!(volume_targets_on(&lab, v.handle, "node-2"), 1);
        assert!(watched(&lab, "modified", ApiKind::Pod, "default/web"));
        assert!(!watched(&lab, "deleted", ApiKind::Pod, "default/web"));
    }
}
