//! What components report beside the API objects, kept outside resourceVersions so that
//! reporting them does not change what every other object shows:
//!
//! - [`Mounts`]: each kubelet's volume manager, as the real kubelet reports it in
//!   `Node.status.volumesInUse` (the attach/detach controller reads it before a detach,
//!   `safeToDetach`); kubelet writes it, the controllers and views read it.
//! - [`VolumePods`] (`volume_pods` on [`super::Cluster`]): an index of the pods that use
//!   claims, by node and by claim, as the controllers' shared pod informer indexes them, so
//!   the attach/detach controller, external-attacher, the scheduler and the PV and
//!   pvc-protection controllers do not walk every pod.
//!
//! `engine::volume_view::node_volumes` turns them into what a Node's status reports,
//! `volumesInUse` (kubelet) and `volumesAttached` (the attach/detach controller), filled in
//! when a node is read.

use super::{Object, PodSpec};
use std::collections::{BTreeMap, BTreeSet};

/// A table key: (namespace, name).
type Key = (String, String);

/// The unique volume name kubelet and the attach/detach controller use for a CSI volume:
/// the plugin name, then `<driver>^<volume handle>` (`pkg/volume/csi/csi_plugin.go`
/// GetVolumeName).
pub(crate) fn unique_volume_name(driver: &str, handle: &str) -> String {
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
    pub(crate) fn pod_uses(&self, node: &str, pod: &str, pv: &str) -> bool {
        self.published
            .contains_key(&(node.to_string(), pod.to_string(), pv.to_string()))
    }

    /// Whether a node has a PV staged or published for any pod (`volumesInUse`).
    pub(crate) fn volume_in_use(&self, node: &str, pv: &str) -> bool {
        self.staged
            .contains_key(&(node.to_string(), pv.to_string()))
            || self.published_on(node, pv)
    }

    /// Whether a node has a PV published for any pod.
    pub(crate) fn published_on(&self, node: &str, pv: &str) -> bool {
        self.published_keys(node).any(|(_, _, p)| p == pv)
    }

    /// The published entries of one node, in order (a range of the map, not a scan).
    pub(crate) fn published_keys<'a>(
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

/// The pods that use claims: every such pod, the ones bound to each node, and the ones
/// naming each claim, in the pod table's order. A pod's claims never change (the API server
/// refuses it) and its node is set once, when it is stored or by the scheduler's binding:
/// the engine calls [`add`](Self::add) when it stores a pod, [`set_node`](Self::set_node)
/// when the scheduler binds one and [`remove`](Self::remove) when it is gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VolumePods {
    /// Each pod's node (empty until scheduled) and the claims it names.
    pods: BTreeMap<Key, (String, Vec<String>)>,
    /// Pods by node (scheduled pods only).
    by_node: BTreeMap<String, BTreeSet<Key>>,
    /// Pods by (namespace, claim).
    by_claim: BTreeMap<Key, BTreeSet<Key>>,
}

impl VolumePods {
    /// Index a pod just stored (nothing for a pod without volumes).
    pub fn add(&mut self, pod: &Object<PodSpec>) {
        if pod.spec.volumes().is_empty() {
            return;
        }
        let key: Key = (
            pod.metadata.namespace().clone(),
            pod.metadata.name().clone(),
        );
        self.remove(&key);
        let claims: Vec<String> = pod
            .spec
            .volumes()
            .iter()
            .map(|v| v.persistent_volume_claim.claim_name.clone())
            .collect();
        for c in &claims {
            self.by_claim
                .entry((key.0.clone(), c.clone()))
                .or_default()
                .insert(key.clone());
        }
        let node = pod.spec.node_name.clone();
        if !node.is_empty() {
            self.by_node
                .entry(node.clone())
                .or_default()
                .insert(key.clone());
        }
        self.pods.insert(key, (node, claims));
    }

    /// The scheduler bound an indexed pod to `node`.
    pub(crate) fn set_node(&mut self, key: &Key, node: &str) {
        let Some((old, _)) = self.pods.get_mut(key) else {
            return;
        };
        if old == node {
            return;
        }
        let old = std::mem::replace(old, node.to_string());
        remove_from(&mut self.by_node, &old, key);
        if !node.is_empty() {
            self.by_node
                .entry(node.to_string())
                .or_default()
                .insert(key.clone());
        }
    }

    /// Forget a pod that is gone.
    pub fn remove(&mut self, key: &Key) {
        let Some((node, claims)) = self.pods.remove(key) else {
            return;
        };
        remove_from(&mut self.by_node, &node, key);
        for c in claims {
            remove_from(&mut self.by_claim, &(key.0.clone(), c), key);
        }
    }

    /// Whether the pod is indexed (it exists and uses claims).
    pub fn contains(&self, key: &Key) -> bool {
        self.pods.contains_key(key)
    }

    /// Whether no pod uses a claim.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// Every pod that uses claims, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.pods.keys()
    }

    /// The pods bound to `node` that use claims, in key order.
    pub(crate) fn on_node<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Key> + 'a {
        self.by_node.get(node).into_iter().flatten()
    }

    /// The pods in `namespace` naming `claim`, in key order.
    pub(crate) fn using_claim<'a>(
        &'a self,
        namespace: &str,
        claim: &str,
    ) -> impl Iterator<Item = &'a Key> + 'a {
        self.by_claim
            .get(&(namespace.to_string(), claim.to_string()))
            .into_iter()
            .flatten()
    }
}

/// Take `key` out of the set under `at`, dropping the set when it empties.
fn remove_from<K: Ord, T: Ord>(map: &mut BTreeMap<K, BTreeSet<T>>, at: &K, key: &T) {
    if let Some(set) = map.get_mut(at) {
        set.remove(key);
        if set.is_empty() {
            map.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClaimRef, PodVolume};

    fn pod(name: &str, node: &str, claims: &[&str]) -> Object<PodSpec> {
        let mut p = Object::new(name, "default", PodSpec::default());
        p.spec.node_name = node.into();
        p.spec.set_volumes(
            claims
                .iter()
                .map(|c| PodVolume {
                    name: c.to_string(),
                    persistent_volume_claim: ClaimRef {
                        claim_name: c.to_string(),
                        read_only: false,
                    },
                })
                .collect(),
        );
        p
    }

    fn names<'a>(keys: impl Iterator<Item = &'a Key>) -> Vec<&'a str> {
        keys.map(|k| k.1.as_str()).collect()
    }

    #[test]
    fn volume_pods_follow_adds_bindings_and_removals() {
        let mut v = VolumePods::default();
        v.add(&pod("net-only", "node-1", &[]));
        assert!(v.is_empty());
        v.add(&pod("b", "node-1", &["data", "logs"]));
        v.add(&pod("a", "", &["data"]));
        assert_eq!(names(v.keys()), ["a", "b"]);
        assert_eq!(names(v.on_node("node-1")), ["b"]);
        assert_eq!(names(v.using_claim("default", "data")), ["a", "b"]);
        assert_eq!(names(v.using_claim("other", "data")), Vec::<&str>::new());
        let a = ("default".to_string(), "a".to_string());
        v.set_node(&a, "node-1");
        assert_eq!(names(v.on_node("node-1")), ["a", "b"]);
        v.remove(&("default".to_string(), "b".to_string()));
        assert_eq!(names(v.on_node("node-1")), ["a"]);
        assert_eq!(names(v.using_claim("default", "logs")), Vec::<&str>::new());
        v.remove(&a);
        assert!(v.is_empty());
        assert_eq!(v, VolumePods::default(), "no empty sets are left behind");
    }
}
