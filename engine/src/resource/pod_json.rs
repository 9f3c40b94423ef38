//! A pod as the API server serves it (`get pod -o json|yaml`, `get pods -w -o json`): the
//! lab's stored pod with what Kubernetes v1.31 writes around it, computed when it is shown
//! (every pod has the same, so no pod holds it): the defaults the API server's defaulting
//! (`pkg/apis/core/v1/defaults.go`) and admission plugins (Priority, ServiceAccount) set on
//! create, the QoS class the pod strategy computes, and the container statuses kubelet
//! writes beside the pod's phase.

use super::pod_runtime::{KubeletTimes, TOKEN_EXPIRATION_SECONDS, TOKEN_MOUNT_PATH};
use crate::cluster::{Container, Object, PodSpec};
use crate::engine::Lab;
use serde_json::{Map, Value, json};

/// `pod` as `get -o json` prints it (keys sorted as kubectl prints them), with the times
/// kubelet wrote (see [`super::pod_runtime::kubelet_times`]).
pub(super) fn served(lab: &Lab, pod: &Object<PodSpec>, times: Option<KubeletTimes>) -> String {
    let mut value = serde_json::to_value(pod).unwrap_or(Value::Null);
    // Set with deletionTimestamp (`BeforeDelete`): the pod's metadata, not every kind's.
    if let (Some(metadata), Some(grace)) = (
        value.get_mut("metadata").and_then(Value::as_object_mut),
        crate::cluster::pod_deletion::deletion_grace_period_seconds(pod),
    ) {
        metadata.insert("deletionGracePeriodSeconds".into(), json!(grace));
    }
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        defaulted_spec(spec);
        token_volume(
            spec,
            &super::pod_runtime::token_volume_name(pod.metadata.uid),
        );
    }
    if let Some(status) = value.get_mut("status").and_then(Value::as_object_mut) {
        kubelet_status(status, lab, pod, times);
    }
    crate::cni::types::to_go_json(&value)
}

/// The spec's defaults: `SetDefaults_PodSpec` (dnsPolicy, restartPolicy, securityContext,
/// terminationGracePeriodSeconds, schedulerName), `SetDefaults_Pod` (enableServiceLinks),
/// the Priority admission plugin without a priority class (priority 0,
/// preemptionPolicy PreemptLowerPriority), the ServiceAccount admission plugin
/// (serviceAccountName `default`, mirrored into the deprecated serviceAccount), and each
/// container's `SetDefaults_Container`. (The ServiceAccount plugin's token volume is
/// [`token_volume`]'s.) The lab keeps any of these a manifest gives out of the object (apply warns), so the defaults
/// are what the pod has.
fn defaulted_spec(spec: &mut Map<String, Value>) {
    for (key, value) in [
        ("dnsPolicy", json!("ClusterFirst")),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("priority", json!(0)),
        ("restartPolicy", json!("Always")),
        ("schedulerName", json!("default-scheduler")),
        ("securityContext", json!({})),
        ("serviceAccount", json!("default")),
        ("serviceAccountName", json!("default")),
        (
            "terminationGracePeriodSeconds",
            json!(crate::cluster::pod_deletion::TERMINATION_GRACE_PERIOD_SECONDS),
        ),
    ] {
        spec.entry(key).or_insert(value);
    }
    // nodeName is omitempty: an unscheduled pod has none.
    if spec.get("nodeName").and_then(Value::as_str) == Some("") {
        spec.remove("nodeName");
    }
    let containers = spec.get_mut("containers").and_then(Value::as_array_mut);
    for c in containers.into_iter().flatten() {
        let Some(c) = c.as_object_mut() else { continue };
        let policy =
            crate::cluster::image_pull_policy(c.get("image").and_then(Value::as_str).unwrap_or(""));
        c.entry("imagePullPolicy").or_insert(json!(policy));
        // `resources` has no omitempty: a container that asks for nothing has `{}`.
        c.entry("resources").or_insert(json!({}));
        c.entry("terminationMessagePath")
            .or_insert(json!("/dev/termination-log"));
        c.entry("terminationMessagePolicy").or_insert(json!("File"));
    }
}

/// The ServiceAccount admission plugin's token volume, named `name`, appended to the
/// pod's volumes (a projected volume of the token, the cluster's CA and the namespace,
/// `defaultMode` 0644 as the API server defaults it), and its read-only mount in each
/// container (`volumeMounts`, after the container's own).
fn token_volume(spec: &mut Map<String, Value>, name: &str) {
    let volume = json!({
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {
                    "serviceAccountToken": {
                        "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                        "path": "token",
                    }
                },
                {
                    "configMap": {
                        "items": [{ "key": "ca.crt", "path": "ca.crt" }],
                        "name": super::pod_runtime::ROOT_CA_CONFIG_MAP,
                    }
                },
                {
                    "downwardAPI": {
                        "items": [{
                            "fieldRef": { "apiVersion": "v1", "fieldPath": "metadata.namespace" },
                            "path": "namespace",
                        }]
                    }
                }
            ]
        }
    });
    match spec.get_mut("volumes").and_then(Value::as_array_mut) {
        Some(volumes) => volumes.push(volume),
        None => {
            spec.insert("volumes".into(), json!([volume]));
        }
    }
    let mount = json!({ "mountPath": TOKEN_MOUNT_PATH, "name": name, "readOnly": true });
    let containers = spec.get_mut("containers").and_then(Value::as_array_mut);
    for c in containers.into_iter().flatten() {
        // After the container's own mounts, as the plugin appends it.
        let mounts = c
            .as_object_mut()
            .map(|c| c.entry("volumeMounts").or_insert_with(|| json!([])));
        if let Some(mounts) = mounts.and_then(Value::as_array_mut) {
            mounts.push(mount.clone());
        }
    }
}

/// The status kubelet and the API server write beside what the lab keeps: `hostIPs` (its
/// one entry, `hostIP`), `qosClass` (set on create by the pod strategy, kept by kubelet,
/// also on a pod it rejects), and `containerStatuses` once kubelet has written the pod's
/// containers (sorted by name, as kubelet sorts them): a Running pod's containers
/// running, started and ready as the ContainersReady condition says; a pod whose sandbox
/// is being made waiting in ContainerCreating (a reason of its container, not of the pod:
/// the pod's own `reason` is left out). a running container's `containerID` is derived
/// ([`super::pod_runtime`]); `startTime` and `startedAt` are what kubelet wrote. A running container's `imageID` is left out: the lab has no image
/// digests.
fn kubelet_status(
    status: &mut Map<String, Value>,
    lab: &Lab,
    pod: &Object<PodSpec>,
    times: Option<KubeletTimes>,
) {
    if let Some(t) = times.filter(|_| !pod.status.phase.is_empty()) {
        status.insert(
            "startTime".into(),
            json!(crate::cluster::meta::timestamp(t.start_time.whole_secs())),
        );
    }
    if let Some(ip) = status.get("hostIP").cloned() {
        status.insert("hostIPs".into(), json!([{ "ip": ip }]));
    }
    status.insert(
        "qosClass".into(),
        json!(crate::engine::views::qos_class(&pod.spec)),
    );
    let Some(state) = super::pods::container_state(pod) else {
        return;
    };
    let ready = super::pods::containers_ready(pod);
    let mut containers: Vec<&Container> = pod.spec.containers.iter().collect();
    containers.sort_by(|a, b| a.name.cmp(&b.name));
    let statuses: Vec<Value> = containers
        .into_iter()
        .map(|c| {
            let mut s = json!({
                "image": c.image,
                "lastState": {},
                "name": c.name,
                "restartCount": 0,
            });
            let fields = s.as_object_mut().expect("an object");
            match &state {
                super::pods::ContainerState::Running => {
                    if let Some(id) = super::pod_runtime::container_id(lab, pod, &c.name) {
                        fields.insert("containerID".into(), json!(id));
                    }
                    fields.insert("ready".into(), json!(ready));
                    fields.insert("started".into(), json!(true));
                    let running = match times.and_then(|t| t.started_at) {
                        Some(at) => json!({
                            "startedAt": crate::cluster::meta::timestamp(at.whole_secs())
                        }),
                        None => json!({}),
                    };
                    fields.insert("state".into(), json!({ "running": running }));
                }
                super::pods::ContainerState::Waiting(reason) => {
                    fields.insert("imageID".into(), json!(""));
                    fields.insert("ready".into(), json!(false));
                    fields.insert("started".into(), json!(false));
                    fields.insert("state".into(), json!({ "waiting": { "reason": reason } }));
                }
            }
            s
        })
        .collect();
    status.insert("containerStatuses".into(), Value::Array(statuses));
    if matches!(state, super::pods::ContainerState::Waiting(_)) {
        status.remove("reason");
    }
}
