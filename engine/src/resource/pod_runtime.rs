//! What a pod's served object holds that the lab keeps in no field of its own, derived
//! when the pod is shown (so `describe pod` and `get pod -o yaml` read the same values and
//! no pod stores them): the ServiceAccount admission plugin's token volume and its mount,
//! the container ID containerd gives the pod's container in its sandbox, and the times
//! kubelet writes into the status, read from the events it recorded.

use crate::cluster::{Object, PodSpec, Uid};
use crate::engine::Lab;
use crate::record::{Actor, Agent, CallEvent, Event};
use crate::util::time::Millis;

/// Where the ServiceAccount admission plugin mounts the token volume in every container
/// (`DefaultAPITokenMountPath`).
pub(super) const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The token's `expirationSeconds` in the plugin's projected volume (an hour and seven
/// seconds: `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`).
pub(super) const TOKEN_EXPIRATION_SECONDS: u64 = 3607;

/// The ConfigMap the plugin's projected volume takes the cluster's CA from.
pub(super) const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";

/// The name of the token volume the ServiceAccount admission plugin adds to a pod:
/// `kube-api-access-` and five characters of apimachinery's `rand.String` alphabet (random
/// in a real cluster; here derived from the pod's UID, so the same commands give the same
/// name and each incarnation of a pod's name gets its own).
pub(super) fn token_volume_name(uid: Uid) -> String {
    // k8s.io/apimachinery/pkg/util/rand's `alphanums`: no vowels, no 0, 1 or 3.
    const ALPHANUMS: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut h = crate::util::hash::fnv64(&[&uid.text(), "kube-api-access"]);
    let mut name = String::from("kube-api-access-");
    for _ in 0..5 {
        name.push(char::from(ALPHANUMS[(h % 27) as usize]));
        h /= 27;
    }
    name
}

/// The ID containerd gives container `name` of the pod (`containerd://` and 64 hex
/// digits, as kubelet writes `containerID`): derived from the pod's sandbox, so it exists
/// while the sandbox does (`None` when the pod's node holds none).
pub(super) fn container_id(lab: &Lab, pod: &Object<PodSpec>, name: &str) -> Option<String> {
    let sandbox = lab
        .nodes
        .get(&pod.spec.node_name)
        .and_then(|n| n.sandboxes.get(&pod.key()))?;
    Some(format!(
        "containerd://{}",
        crate::util::hash::id64(&[sandbox.id(), "container", name])
    ))
}

/// When kubelet ran the pod, as its status says: `startTime` (written on kubelet's first
/// sync of the pod) and the container's `state.running.startedAt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KubeletTimes {
    /// `status.startTime`: the first event kubelet recorded about this incarnation of
    /// the pod (its first sync records one: a failure, or the container's start).
    pub(super) start_time: Millis,
    /// `startedAt` of the running container: the tick of kubelet's latest `Started`
    /// event about it.
    pub(super) started_at: Option<Millis>,
}

impl KubeletTimes {
    /// The times these events of kubelet about one pod say (`None` without any).
    fn read<'a>(events: impl Iterator<Item = (&'a CallEvent, &'a Event)>) -> Option<Self> {
        let mut times: Option<KubeletTimes> = None;
        for (e, ev) in events.filter(|(e, _)| is_kubelet(e)) {
            let t = times.get_or_insert(KubeletTimes {
                start_time: e.tick(),
                started_at: None,
            });
            if ev.reason == "Started" {
                t.started_at = Some(e.tick());
            }
        }
        times
    }
}

/// Whether kubelet recorded the entry.
fn is_kubelet(e: &CallEvent) -> bool {
    matches!(e.actor(), Actor::Agent(Agent::Kubelet, _))
}

/// The times of one pod, from the events about it the call log still holds (`None` once
/// the log has dropped them: the lab keeps no other record of them).
pub(super) fn kubelet_times(lab: &Lab, pod: &Object<PodSpec>) -> Option<KubeletTimes> {
    let object = crate::cluster::ObjectRef::to(pod);
    KubeletTimes::read(
        lab.calls()
            .events(&object, Some(pod.metadata.uid))
            .filter(|(_, ev)| ev.uid == Some(pod.metadata.uid)),
    )
}

/// The times of every pod kubelet recorded events about, by UID: one walk of the call log
/// for a list of pods.
pub(super) fn all_kubelet_times(lab: &Lab) -> rustc_hash::FxHashMap<Uid, KubeletTimes> {
    let mut by_uid: rustc_hash::FxHashMap<Uid, Vec<(&CallEvent, &Event)>> = Default::default();
    for (e, ev) in lab.calls().all_events() {
        if let (Some(uid), crate::cluster::ApiKind::Pod) = (ev.uid, ev.object.kind) {
            by_uid.entry(uid).or_default().push((e, ev));
        }
    }
    by_uid
        .into_iter()
        .filter_map(|(uid, events)| KubeletTimes::read(events.into_iter()).map(|t| (uid, t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_volume_names_use_apimachinery_s_alphabet() {
        let a = token_volume_name(crate::util::hash::uid(&["a"]));
        let b = token_volume_name(crate::util::hash::uid(&["b"]));
        assert_ne!(a, b);
        for name in [&a, &b] {
            let suffix = name.strip_prefix("kube-api-access-").expect(name);
            assert_eq!(suffix.len(), 5, "{name}");
            assert!(
                suffix
                    .bytes()
                    .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)),
                "{name}"
            );
        }
        assert_eq!(a, token_volume_name(crate::util::hash::uid(&["a"])));
    }
}
