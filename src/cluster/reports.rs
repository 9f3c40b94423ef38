//! What components report beside the API objects, kept outside resourceVersions so that
//! reporting them does not change what every other object shows:
//!
//! - [`Mounts`]: each kubelet's volume manager, as the real kubelet reports it in
//!   `Node.status.volumesInUse` (the attach/detach controller reads it before a detach,
//!   `safeToDetach`); kubelet writes it, the controllers and views read it.
//! - `pods_with_volumes` (on [`super::Cluster`]): an index of the pods that use claims, as
//!   the controllers' shared pod informer indexes them, so the attach/detach controller
//!   and external-attacher do not walk every pod.
//!
//! `engine::volume_view::node_volumes` turns them into what a Node's status reports,
//! `volumesInUse` (kubelet) and `volumesAttached` (the attach/detach controller), filled in
//! when a node is read.

use std::collections::BTreeMap;

/// The unique volume name kubelet and the attach/detach controller use for a CSI volume:
/// the plugin name, then `<driver>^<volume handle>` (`pkg/volume/csi/csi_plugin.go`
/// GetVolumeName).
pub fn unique_volume_name(driver: &str, handle: &str) -> String {
    format!("kubernetes.io/csi/{driver}^{handle}")
}

/// What every kubelet has mounted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Staged volumes: (node, PV name) → staging path.
    pub staged: BTreeMap<(String, String), String>,
    /// Published volumes: (node, pod key, PV name) → target path.
    pub published: BTreeMap<(String, String, String), String>,
}

impl Mounts {
    /// Whether a pod on a node has a PV published.
    pub fn pod_uses(&self, node: &str, pod: &str, pv: &str) -> bool {
        self.published
            .contains_key(&(node.to_string(), pod.to_string(), pv.to_string()))
    }

    /// Whether a node has a PV staged or published for any pod (`volumesInUse`).
    pub fn volume_in_use(&self, node: &str, pv: &str) -> bool {
        self.staged
            .contains_key(&(node.to_string(), pv.to_string()))
            || self.published_on(node, pv)
    }

    /// Whether a node has a PV published for any pod.
    pub fn published_on(&self, node: &str, pv: &str) -> bool {
        self.published_keys(node).any(|(_, _, p)| p == pv)
    }

    /// The published entries of one node, in order (a range of the map, not a scan).
    pub fn published_keys<'a>(
        &'a self,
        node: &'a str,
    ) -> impl Iterator<Item = &'a (String, String, String)> + 'a {
        self.published
            .range(
                (
                    node.to_string(),
                    crate::cluster::no_namespace(),
                    crate::cluster::no_namespace(),
                )..,
            )
            .map(|(k, _)| k)
            .take_while(move |(n, _, _)| n == node)
    }
}
