//! kubectl's views of the lab's objects as kubectl v1.31 prints them from a real API
//! server: a pod's `-o json|yaml` with the defaults the API server sets on create and the
//! status kubelet writes, the group-qualified kind words kubectl's builder reads
//! (`volumeattachment.storage.k8s.io/NAME`, which `get -o name` prints), a PV's claimRef
//! as the binder writes it, and a Terminating pod's row.

use crate::common::run;
use lab_engine::Lab;
use serde_json::{Value, json};

/// `get KIND NAME -o json`, read back.
fn json_of(lab: &mut Lab, what: &str) -> Value {
    let text = run(lab, &format!("get {what} -o json"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The error a rejected line gives.
fn fails(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => panic!("`{line}` succeeded:\n{}", out.to_text()),
        Err(e) => e.message,
    }
}

/// A pod manifest of one container with these resources, applied from a here-document.
fn apply_pod(lab: &mut Lab, name: &str, image: &str, resources: &str) {
    run(
        lab,
        &format!(
            "apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  nodeName: node-1\n  containers:\n  - name: app\n    image: {image}\n    resources: {resources}\nEOF"
        ),
    );
}

/// The API server's defaulting and admission (SetDefaults_PodSpec, SetDefaults_Pod,
/// SetDefaults_Container, Priority, ServiceAccount, DefaultTolerationSeconds) and the
/// kubelet's status: what `kubectl get pod -o json` shows of a running pod.
#[test]
fn a_running_pod_s_json_has_the_api_server_defaults_and_kubelet_s_status() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "tick 5");
    let pod = json_of(&mut lab, "pod web");
    let spec = &pod["spec"];
    for (field, want) in [
        ("dnsPolicy", json!("ClusterFirst")),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        ("priority", json!(0)),
        ("restartPolicy", json!("Always")),
        ("schedulerName", json!("default-scheduler")),
        ("securityContext", json!({})),
        ("serviceAccount", json!("default")),
        ("serviceAccountName", json!("default")),
        ("terminationGracePeriodSeconds", json!(30)),
    ] {
        assert_eq!(spec[field], want, "spec.{field}");
    }
    assert_eq!(
        spec["tolerations"],
        json!([
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ])
    );
    // The ServiceAccount plugin's token volume (`kube-api-access-` and five characters of
    // apimachinery's rand.String alphabet) and its read-only mount.
    let token = spec["volumes"][0]["name"]
        .as_str()
        .expect("a volume")
        .to_string();
    let suffix = token.strip_prefix("kube-api-access-").expect(&token);
    assert!(
        suffix.len() == 5
            && suffix
                .bytes()
                .all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)),
        "{token}"
    );
    assert_eq!(
        spec["volumes"],
        json!([{
            "name": token,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
                ],
            },
        }])
    );
    assert_eq!(
        spec["containers"],
        json!([{
            "image": "registry.k8s.io/nginx-slim:0.27",
            "imagePullPolicy": "IfNotPresent",
            "name": "app",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": token,
                "readOnly": true,
            }],
        }])
    );
    let status = &pod["status"];
    let host = status["hostIP"].as_str().expect("hostIP").to_string();
    assert_eq!(status["hostIPs"], json!([{ "ip": host }]));
    assert_eq!(status["qosClass"], "BestEffort");
    // kubelet's first sync and the container's start, before `tick 5`.
    assert_eq!(status["startTime"], "2025-01-01T00:00:00Z");
    let id = status["containerStatuses"][0]["containerID"]
        .as_str()
        .expect("containerID")
        .to_string();
    assert!(
        id.strip_prefix("containerd://")
            .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())),
        "{id}"
    );
    assert_eq!(
        status["containerStatuses"],
        json!([{
            "containerID": id,
            "image": "registry.k8s.io/nginx-slim:0.27",
            "lastState": {},
            "name": "app",
            "ready": true,
            "restartCount": 0,
            "started": true,
            "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}},
        }])
    );
    // -o yaml is the same document, its keys in kubectl's order.
    let yaml = run(&mut lab, "get pod web -o yaml");
    assert!(
        yaml.contains(
            "  dnsPolicy: ClusterFirst\n  enableServiceLinks: true\n  nodeName: node-1\n  preemptionPolicy: PreemptLowerPriority\n  priority: 0\n  restartPolicy: Always\n"
        ),
        "{yaml}"
    );
    assert!(yaml.contains("  hostIPs:\n  - ip: 192.168.0.1\n"), "{yaml}");
}

/// A pod kubelet cannot make a sandbox for yet: its container waits in
/// ContainerCreating (kubectl's STATUS comes from that reason; the pod has none of its
/// own), and an unscheduled pod has no nodeName and no container statuses.
#[test]
fn a_pod_whose_sandbox_fails_waits_in_container_creating_in_its_container_status() {
    let mut lab = Lab::new();
    run(&mut lab, "fault inject bridge --times 1000");
    run(&mut lab, "pod create web --node node-1");
    let pod = json_of(&mut lab, "pod web");
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"].get("reason"), None, "{pod:#}");
    // kubelet synced the pod (and recorded its sandbox failure) at once.
    assert_eq!(pod["status"]["startTime"], "2025-01-01T00:00:00Z");
    assert_eq!(
        pod["status"]["containerStatuses"],
        json!([{
            "image": "registry.k8s.io/nginx-slim:0.27",
            "imageID": "",
            "lastState": {},
            "name": "app",
            "ready": false,
            "restartCount": 0,
            "started": false,
            "state": {"waiting": {"reason": "ContainerCreating"}},
        }])
    );
    let get = run(&mut lab, "get pod web");
    assert!(get.contains(" ContainerCreating "), "{get}");

    let mut lab = Lab::new();
    run(&mut lab, "cordon node-1");
    run(&mut lab, "cordon node-2");
    run(&mut lab, "pod create lost");
    let pod = json_of(&mut lab, "pod lost");
    assert_eq!(pod["spec"].get("nodeName"), None, "{pod:#}");
    assert_eq!(pod["status"].get("containerStatuses"), None, "{pod:#}");
    assert_eq!(pod["status"].get("startTime"), None, "{pod:#}");
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
}

/// `v1qos.GetPodQOS` from the containers' cpu and memory requests and limits, and
/// SetDefaults_Container's imagePullPolicy from the image's tag.
#[test]
fn qos_class_and_image_pull_policy_follow_the_containers() {
    let mut lab = Lab::new();
    apply_pod(
        &mut lab,
        "g",
        "nginx:latest",
        "{limits: {cpu: 100m, memory: 64Mi}}",
    );
    apply_pod(&mut lab, "b", "nginx", "{requests: {cpu: 100m}}");
    apply_pod(&mut lab, "t", "nginx:1.27", "{}");
    run(&mut lab, "tick 5");
    let qos = |lab: &mut Lab, name: &str| {
        let pod = json_of(lab, &format!("pod {name}"));
        (
            pod["status"]["qosClass"].as_str().unwrap_or("").to_string(),
            pod["spec"]["containers"][0]["imagePullPolicy"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    assert_eq!(qos(&mut lab, "g"), ("Guaranteed".into(), "Always".into()));
    assert_eq!(qos(&mut lab, "b"), ("Burstable".into(), "Always".into()));
    assert_eq!(
        qos(&mut lab, "t"),
        ("BestEffort".into(), "IfNotPresent".into())
    );
}

/// kubectl's builder reads a kind word with dots as `RESOURCE.GROUP`,
/// `RESOURCE.VERSION.GROUP` or `Kind.GROUP` (`mappingFor`), so what `get -o name` prints
/// names the object again, in get, describe and delete alike; a kind's word with another
/// group is refused as kubectl refuses it, naming the part before the first dot.
#[test]
fn group_qualified_kind_words_resolve_and_a_wrong_group_is_refused() {
    let mut lab = Lab::new();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create web --pvc data");
    run(&mut lab, "tick 10");
    let name = run(&mut lab, "get va -o name");
    let name = name.trim();
    assert!(
        name.starts_with("volumeattachment.storage.k8s.io/csi-"),
        "{name}"
    );
    let va = name.rsplit('/').next().unwrap_or_default();
    let got = run(&mut lab, &format!("get {name}"));
    assert!(
        got.lines().nth(1).is_some_and(|l| l.starts_with(va)),
        "{got}"
    );
    let got = run(
        &mut lab,
        &format!("get volumeattachments.v1.storage.k8s.io {va}"),
    );
    assert!(
        got.lines().nth(1).is_some_and(|l| l.starts_with(va)),
        "{got}"
    );
    let got = run(&mut lab, "get StorageClass.storage.k8s.io standard -o name");
    assert_eq!(got.trim(), "storageclass.storage.k8s.io/standard");
    let described = run(
        &mut lab,
        "describe storageclasses.v1.storage.k8s.io standard",
    );
    assert!(described.starts_with("Name:"), "{described}");
    assert!(described.contains("hostpath.csi.lab"), "{described}");

    for line in [
        "get pod.storage.k8s.io web",
        "describe pod.storage.k8s.io web",
        "delete pod.storage.k8s.io/web",
    ] {
        let e = fails(&mut lab, line);
        assert_eq!(
            e.lines().next(),
            Some("the server doesn't have a resource type \"pod\""),
            "{line}: {e}"
        );
        assert!(!e.contains("did you mean"), "{line}: {e}");
    }
    assert!(lab.cluster().pods.contains_key(&crate::common::key("web")));
    let deleted = run(&mut lab, "delete pods./web");
    assert!(deleted.starts_with("pod \"web\" deleted"), "{deleted}");
}

/// printPod's READY counts the spec's containers whose status is ready and running, and
/// a pod being deleted shows STATUS Terminating with its containers' readiness as it
/// stands.
#[test]
fn ready_counts_every_container_and_a_terminating_pod_keeps_its_readiness() {
    let mut lab = Lab::new();
    run(
        &mut lab,
        "apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: two\nspec:\n  nodeName: node-2\n  containers:\n  - name: app\n    image: nginx:1.27\n  - name: side\n    image: busybox:1.36\nEOF",
    );
    run(&mut lab, "tick 5");
    let row = |lab: &mut Lab| {
        let t = run(lab, "get pod two");
        t.lines()
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row(&mut lab), "two 2/2 Running");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    run(&mut lab, "pod delete two");
    assert_eq!(row(&mut lab), "two 2/2 Terminating");
}

/// A graceful delete (`rest.BeforeDelete` with the pod strategy's `CheckGracefulDelete`):
/// a pod on a node gets `deletionGracePeriodSeconds` 30 (its defaulted
/// terminationGracePeriodSeconds) and `deletionTimestamp` = the request's time + 30 s.
/// kubectl describe prints `Terminating (lasts <HumanDuration of time.Since(deletionTimestamp)>)`,
/// `<invalid>` while that time is more than a second ahead, and the grace period.
/// (Its node is down, so kubelet cannot finish the deletion and the pod stays.)
#[test]
fn a_graceful_delete_sets_the_grace_period_and_the_end_of_it_as_deletion_timestamp() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create db --node node-2");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    run(&mut lab, "pod delete db");
    let pod = &lab.cluster().pods[&crate::common::key("db")];
    assert_eq!(
        pod.metadata.deletion_tick(),
        Some(lab_engine::util::time::Millis::secs(70))
    );
    assert_eq!(
        lab_engine::cluster::pod_deletion::deletion_grace_period_seconds(pod),
        Some(30)
    );
    let metadata = json_of(&mut lab, "pod db")["metadata"].clone();
    assert_eq!(metadata["deletionTimestamp"], json!("2025-01-01T00:01:10Z"));
    assert_eq!(metadata["deletionGracePeriodSeconds"], json!(30));
    let yaml = run(&mut lab, "get pod db -o yaml");
    assert!(
        yaml.lines()
            .any(|l| l == "  deletionGracePeriodSeconds: 30"),
        "{yaml}"
    );
    let status = |lab: &mut Lab| {
        let d = run(lab, "describe pod db");
        let lines: Vec<String> = d
            .lines()
            .filter(|l| l.starts_with("Status:") || l.starts_with("Termination Grace Period:"))
            .map(str::to_string)
            .collect();
        (lines, d)
    };
    let (lines, d) = status(&mut lab);
    assert_eq!(
        lines,
        [
            "Status:                    Terminating (lasts <invalid>)",
            "Termination Grace Period:  30s",
        ],
        "{d}"
    );
    // The value column is the tabwriter's one column for the block.
    assert!(
        d.lines().any(|l| l == "Name:                      db"),
        "{d}"
    );
    // 2 s ahead is still `<invalid>`; 1 s ahead is `0s`; then the time since.
    run(&mut lab, "tick 28");
    assert_eq!(
        status(&mut lab).0[0],
        "Status:                    Terminating (lasts <invalid>)"
    );
    run(&mut lab, "tick 1");
    assert_eq!(
        status(&mut lab).0[0],
        "Status:                    Terminating (lasts 0s)"
    );
    run(&mut lab, "tick 96");
    assert_eq!(
        status(&mut lab).0[0],
        "Status:                    Terminating (lasts 95s)"
    );
    // A second delete without a grace period changes nothing (`gracefulPending`).
    run(&mut lab, "delete pod db");
    assert_eq!(
        lab.cluster().pods[&crate::common::key("db")]
            .metadata
            .deletion_tick(),
        Some(lab_engine::util::time::Millis::secs(70))
    );
}

/// `CheckGracefulDelete` gives a pod already terminal a grace period of 0, and the API
/// server deletes it in the request: a pod kubelet rejected (Failed) goes at once though
/// its node is down and its kubelet cannot act.
#[test]
fn a_failed_pod_is_deleted_at_once_without_its_kubelet() {
    let mut lab = Lab::new();
    run(
        &mut lab,
        "pod create picky --node node-2 --node-selector disktype=ssd",
    );
    assert_eq!(crate::common::phase(&lab, "picky"), "Failed");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    let out = run(&mut lab, "pod delete picky");
    assert!(out.starts_with("pod \"picky\" deleted"), "{out}");
    assert!(
        !lab.cluster()
            .pods
            .contains_key(&crate::common::key("picky"))
    );
    assert_eq!(
        fails(&mut lab, "get pod picky"),
        "Error from server (NotFound): pods \"picky\" not found"
    );
}

/// `reference.GetReference(scheme, claim)`, as the provisioner and the PV controller's
/// binder take it: a PV's claimRef has the claim's apiVersion and its resourceVersion as
/// read then; and the PV strategy's `lastPhaseTransitionTime` is the time of each phase
/// change (Pending on create, Available, then Bound when a claim binds it).
#[test]
fn a_pv_s_claim_ref_and_last_phase_transition_time_are_the_api_server_s() {
    let mut lab = Lab::new();
    run(&mut lab, "pvc create data --size 1Gi");
    let claim_rv = lab.cluster().pvcs[&crate::common::key("data")]
        .metadata
        .resource_version;
    let pv_name = lab.cluster().pvcs[&crate::common::key("data")]
        .spec
        .volume_name
        .clone();
    let pv = json_of(&mut lab, &format!("pv {pv_name}"));
    let claim_ref = &pv["spec"]["claimRef"];
    assert_eq!(claim_ref["apiVersion"], "v1", "{pv:#}");
    assert_eq!(claim_ref["kind"], "PersistentVolumeClaim");
    let rv: u64 = claim_ref["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{pv:#}"));
    // Read by the provisioner before the binder's writes to the claim.
    assert!(rv > 0 && rv < claim_rv, "{rv} vs {claim_rv}");
    assert_eq!(
        pv["status"]["lastPhaseTransitionTime"], "2025-01-01T00:00:00Z",
        "{pv:#}"
    );

    // A volume made by hand: Available when applied, Bound 30s later.
    let mut lab = Lab::new();
    run(
        &mut lab,
        "apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: by-hand\nspec:\n  capacity: { storage: 1Gi }\n  accessModes: [ReadWriteOnce]\n  csi: { driver: hostpath.csi.lab, volumeHandle: vol-1 }\n  storageClassName: manual\nEOF",
    );
    run(&mut lab, "tick 1");
    let pv = json_of(&mut lab, "pv by-hand");
    assert_eq!(pv["status"]["phase"], "Available", "{pv:#}");
    assert_eq!(
        pv["status"]["lastPhaseTransitionTime"],
        "2025-01-01T00:00:00Z"
    );
    run(&mut lab, "tick 30");
    run(
        &mut lab,
        "apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: claim\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: { requests: { storage: 1Gi } }\n  storageClassName: manual\nEOF",
    );
    run(&mut lab, "tick 1");
    let pv = json_of(&mut lab, "pv by-hand");
    assert_eq!(pv["status"]["phase"], "Bound", "{pv:#}");
    assert_eq!(
        pv["status"]["lastPhaseTransitionTime"],
        "2025-01-01T00:00:31Z"
    );
    let claim = &lab.cluster().pvcs[&crate::common::key("claim")];
    let (uid, claim_rv) = (
        claim.metadata.uid.to_string(),
        claim.metadata.resource_version,
    );
    let claim_ref = &pv["spec"]["claimRef"];
    assert_eq!(claim_ref["apiVersion"], "v1");
    assert_eq!(claim_ref["uid"], uid.as_str());
    let rv: u64 = claim_ref["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{pv:#}"));
    assert!(rv > 0 && rv < claim_rv, "{rv} vs {claim_rv}");
}

/// snapshot-controller's `createSnapshotContent` takes its `volumeSnapshotRef` with
/// `ref.GetReference(scheme.Scheme, snapshot)`: the snapshot's apiVersion and the
/// resourceVersion it read, beside kind, namespace, name and uid (it had only the last four).
#[test]
fn a_snapshot_content_s_reference_is_the_snapshot_controller_s() {
    let mut lab = Lab::new();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "snapshot create snap --pvc data");
    run(&mut lab, "tick 5");
    let snap = json_of(&mut lab, "vs snap");
    let content_name = snap["status"]["boundVolumeSnapshotContentName"]
        .as_str()
        .unwrap_or_else(|| panic!("{snap:#}"))
        .to_string();
    let content = json_of(&mut lab, &format!("vsc {content_name}"));
    let r = &content["spec"]["volumeSnapshotRef"];
    assert_eq!(r["apiVersion"], "snapshot.storage.k8s.io/v1", "{content:#}");
    assert_eq!(r["kind"], "VolumeSnapshot");
    assert_eq!(r["name"], "snap");
    assert_eq!(r["namespace"], "default");
    assert_eq!(r["uid"], snap["metadata"]["uid"]);
    let rv: u64 = r["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{content:#}"));
    let now: u64 = snap["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap();
    // Read before the controller's later writes to the snapshot (its status, finalizers).
    assert!(rv > 0 && rv < now, "{rv} vs {now}");
}

/// cli-runtime's `mappingFor` quotes the resource part of the word as it was typed
/// (`groupResource.Resource`, no lowercasing): `the server doesn't have a resource type
/// "PDOS"`, and `"Pod"` for `Pod.v1` (a kind word with `v1` read as its group). The lab
/// lowercased it.
#[test]
fn an_unknown_resource_is_named_as_typed() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    for (line, quoted) in [
        ("get PDOS", "\"PDOS\""),
        ("get Pod.v1 web", "\"Pod\""),
        ("describe pod.storage.k8s.io web", "\"pod\""),
    ] {
        let e = fails(&mut lab, line);
        assert!(
            e.starts_with(&format!("the server doesn't have a resource type {quoted}")),
            "{line}: {e}"
        );
    }
}

/// kubelet's image manager records `Pulled` (`already present on machine`) before a
/// container's Created and Started only when it does not pull: an `IfNotPresent` image.
/// An `Always` image (`:latest`, or no tag) is pulled, and the pull's events, with its
/// duration and size, are not modelled: the pod's events are Created and Started.
#[test]
fn pulled_is_recorded_for_an_image_kubelet_does_not_pull() {
    let mut lab = Lab::new();
    apply_pod(&mut lab, "pinned", "registry.k8s.io/nginx-slim:0.28", "{}");
    apply_pod(&mut lab, "latest", "nginx", "{}");
    let reasons = |lab: &mut Lab, pod: &str| -> Vec<String> {
        let d = run(lab, &format!("describe pod {pod}"));
        let at = d.find("\nEvents:\n").unwrap_or_else(|| panic!("{d}"));
        d[at..]
            .lines()
            .skip(4)
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    };
    assert_eq!(
        reasons(&mut lab, "pinned"),
        ["Pulled", "Created", "Started"]
    );
    assert_eq!(reasons(&mut lab, "latest"), ["Created", "Started"]);
    let d = run(&mut lab, "describe pod pinned");
    assert!(
        d.contains("kubelet  Container image \"registry.k8s.io/nginx-slim:0.28\" already present on machine\n"),
        "{d}"
    );
}

/// Only the kinds with a status in Kubernetes 1.31 print one. NetworkPolicy's (alpha in
/// 1.24, never on by default) left networking.k8s.io/v1 in 1.28; CSIDriver and CSINode
/// (storage.k8s.io/v1) never had one; StorageClass has its fields at the top level.
#[test]
fn only_kinds_with_a_status_print_one() {
    let mut lab = Lab::new();
    for line in [
        "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
        "sc create fast",
        "pvc create data --size 1Gi --class fast",
        "pod create web --node node-1 --pvc data",
        "tick 5",
    ] {
        run(&mut lab, line);
    }
    for (what, has_status) in [
        ("networkpolicy db-allow-web", false),
        ("csinode node-1", false),
        ("csidriver hostpath.csi.lab", false),
        ("storageclass fast", false),
        ("pod web", true),
        ("node node-1", true),
        ("namespace default", true),
        ("pvc data", true),
    ] {
        let obj = json_of(&mut lab, what);
        assert_eq!(obj.get("status").is_some(), has_status, "{what}: {obj}");
        let yaml = run(&mut lab, &format!("get {what} -o yaml"));
        assert_eq!(
            yaml.lines().any(|l| l.starts_with("status:")),
            has_status,
            "{what}:\n{yaml}"
        );
    }
}

/// An empty listing of one namespace says which (kubectl's `get` without `-A`); of every
/// namespace (the `list` commands without `-n`, `policy list`), it does not.
#[test]
fn an_empty_listing_names_its_namespace_when_it_has_one() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create p --node node-1 --ns kube-system");
    for (line, want) in [
        (
            "pod list -n default",
            "No resources found in default namespace.",
        ),
        (
            "nad list -n default",
            "No resources found in default namespace.",
        ),
        ("get pods", "No resources found in default namespace."),
        ("policy list", "No resources found"),
        ("nad list", "No resources found"),
        ("get networkpolicies -A", "No resources found"),
    ] {
        assert_eq!(run(&mut lab, line).trim_end(), want, "{line}");
    }
}

/// The `show` views print text; `-o` on one says where the JSON is instead of only that
/// the flag is unknown (DESIGN.md's `-o json` is `get`'s).
#[test]
fn show_with_an_output_flag_says_where_the_json_is() {
    let mut lab = Lab::new();
    for line in ["show ipam -o json", "show wire 0 --output=json"] {
        let first = fails(&mut lab, line)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let here = if line.starts_with("show ipam") {
            "show ipam"
        } else {
            "show wire"
        };
        let flag = if line.contains("--output") {
            "--output"
        } else {
            "-o"
        };
        assert_eq!(
            first,
            format!(
                "unknown flag \"{flag}\" for \"{here}\": the show views print text only; JSON is in `get KIND [NAME] -o json|yaml` (the API objects) and `show wire N` (a call's request and response)"
            ),
            "{line}"
        );
    }
}

/// A `pvc expand` to the size the claim already requests (however it is spelled) changes
/// nothing, as a kubectl patch that changes nothing: it says so with the request the claim
/// holds, and the API server writes nothing (the resourceVersion stays, no resizer runs).
#[test]
fn an_expand_to_the_same_size_changes_nothing() {
    let mut lab = Lab::new();
    run(&mut lab, "sc create fast");
    run(&mut lab, "pvc create db-data --size 1Gi --class fast");
    let before = json_of(&mut lab, "pvc db-data");
    for same in ["1Gi", "1024Mi"] {
        let out = run(&mut lab, &format!("pvc expand db-data {same}"));
        assert!(
            out.contains("persistentvolumeclaim/db-data requests 1Gi (no change)"),
            "{out}"
        );
        assert!(!out.contains("external-resizer"), "{out}");
        assert_eq!(json_of(&mut lab, "pvc db-data"), before);
    }
    let out = run(&mut lab, "pvc expand db-data 2Gi");
    assert!(
        !out.contains("(no change)") && out.contains("requests 2Gi"),
        "{out}"
    );
    assert_ne!(
        json_of(&mut lab, "pvc db-data")["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
}

/// A claim waiting for kubelet to grow its filesystem, as a default Kubernetes 1.31 cluster
/// shows it (RecoverVolumeExpansionFailure alpha and off: the API server drops
/// `allocatedResources` and `allocatedResourceStatuses`, external-resizer v1.12 takes its
/// legacy path): the old capacity and FileSystemResizePending, which replaced Resizing.
#[test]
fn a_claim_waiting_for_a_node_resize_shows_what_1_31_shows() {
    let mut lab = Lab::new();
    run(&mut lab, "sc create fast");
    run(&mut lab, "pvc create db-data --size 10Gi --class fast");
    run(&mut lab, "pvc expand db-data 20Gi");
    let pvc = json_of(&mut lab, "pvc db-data");
    let status = &pvc["status"];
    let keys: Vec<&str> = status
        .as_object()
        .expect("a status")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["accessModes", "capacity", "conditions", "phase"],
        "{pvc}"
    );
    assert_eq!(status["capacity"]["storage"], "10Gi");
    let types: Vec<&str> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(types, ["FileSystemResizePending"], "{pvc}");
    let yaml = run(&mut lab, "get pvc db-data -o yaml");
    assert!(!yaml.contains("allocatedResource"), "{yaml}");
}
