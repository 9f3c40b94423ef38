//! What the storage controllers look up in the API store between their own objects, as
//! their informers' listers answer it: the class a claim names, the PV a claim is bound to,
//! whether the CSIDriver asks for attach, the node ID a CSINode reports, the pods on a node
//! using a volume.

use super::DRIVER;
use crate::cluster::{Cluster, Object, PvSpec, PvcSpec, StorageClassSpec};

/// The class a claim names, if it exists.
pub(crate) fn class_of<'a>(
    api: &'a Cluster,
    pvc: &Object<PvcSpec>,
) -> Option<&'a Object<StorageClassSpec>> {
    api.storage_classes
        .get_named("", &pvc.spec.storage_class_name)
}

/// Whether `driver`'s CSIDriver object asks for attach: a driver without one (a driver the
/// lab does not run) needs attaching (`pkg/volume/csi/csi_plugin.go` skipAttach).
pub fn attach_required(api: &Cluster, driver: &str) -> bool {
    api.csi_drivers
        .get_named("", driver)
        .is_none_or(|d| d.spec.attach_required)
}

/// The PV a pod's claim is bound to, if any.
pub(crate) fn pv_for_claim<'a>(
    api: &'a Cluster,
    ns: &str,
    claim: &str,
) -> Option<&'a Object<PvSpec>> {
    let pvc = api.pvcs.get_named(ns, claim)?;
    if pvc.spec.volume_name.is_empty() {
        return None;
    }
    api.pvs.get_named("", &pvc.spec.volume_name)
}

/// The node ID the driver reported for a node (CSINode), or the node name.
pub(crate) fn csi_node_id(api: &Cluster, node: &str) -> String {
    api.csi_nodes
        .get_named("", node)
        .and_then(|c| c.spec.drivers.iter().find(|d| d.name == DRIVER))
        .map(|d| d.node_id.clone())
        .unwrap_or_else(|| node.to_string())
}

/// The pods on a node that use a PV, in the order of the pod table: only the pods on that
/// node that use claims are looked at (the `volume_pods` index by node), not every pod.
pub(crate) fn pods_on_node_using(
    api: &Cluster,
    node: &str,
    pv: &str,
) -> Vec<crate::cluster::ObjectRef> {
    let uses = |p: &&Object<crate::cluster::PodSpec>| {
        p.spec.node_name == node
            && p.spec.volumes().iter().any(|v| {
                pv_for_claim(
                    api,
                    p.metadata.namespace(),
                    &v.persistent_volume_claim.claim_name,
                )
                .is_some_and(|x| x.name() == pv)
            })
    };
    let found: Vec<_> = api
        .volume_pods
        .on_node(node)
        .filter_map(|k| api.pods.get(k))
        .filter(uses)
        .map(crate::cluster::ObjectRef::to)
        .collect();
    debug_assert_eq!(
        found,
        api.pods
            .values()
            .filter(uses)
            .map(crate::cluster::ObjectRef::to)
            .collect::<Vec<_>>(),
        "the volume_pods index by node is stale"
    );
    found
}

/// The pods in `namespace` that name `claim`, in the order of the pod table (the
/// `volume_pods` index by claim, not a walk of every pod).
pub(crate) fn pods_using<'a>(
    api: &'a Cluster,
    namespace: &str,
    claim: &str,
) -> Vec<&'a Object<crate::cluster::PodSpec>> {
    let found: Vec<&Object<crate::cluster::PodSpec>> = api
        .volume_pods
        .using_claim(namespace, claim)
        .filter_map(|k| api.pods.get(k))
        .collect();
    debug_assert_eq!(
        found.iter().map(|p| p.key()).collect::<Vec<_>>(),
        api.pods
            .values()
            .filter(|p| p.metadata.namespace() == namespace
                && p.spec
                    .volumes()
                    .iter()
                    .any(|v| v.persistent_volume_claim.claim_name == claim))
            .map(|p| p.key())
            .collect::<Vec<_>>(),
        "the volume_pods index by claim is stale"
    );
    found
}
