//! What a pod's served object shows beyond its stored fields, made when the pod is shown
//! (so `describe pod` and `get pod -o yaml` read the same values): the ServiceAccount admission plugin's token volume and its mount,
//! the container ID containerd gives the pod's container in its sandbox; and the times
//! kubelet wrote into the status, as the served object spells them.

use crate::cluster::{Object, PodSpec, Uid};
use crate::engine::Lab;
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
    /// `status.startTime`: kubelet's first status write for the pod.
    pub(super) start_time: Millis,
    /// `startedAt` of the running container: when kubelet last started it.
    pub(super) started_at: Option<Millis>,
}

/// The times kubelet wrote in the pod's status (`None` before its first status write).
pub(super) fn kubelet_times(pod: &Object<PodSpec>) -> Option<KubeletTimes> {
    Some(KubeletTimes {
        start_time: Millis::secs(pod.status.start_secs()?),
        started_at: pod.status.started_secs().map(Millis::secs),
    })
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
