//! `describe` prints what kubectl v1.31's describers print (`pkg/describe/describe.go`),
//! line for line where the lab models the field: the layouts, the sections and the
//! tabwriter's alignment (padding 2, a column block running over consecutive lines with a
//! cell in it).

use crate::common::run;
use lab_engine::engine::Lab;

/// The lines of `text` from the one equal to `from` on, as many as `n`.
fn lines_from<'a>(text: &'a str, from: &str, n: usize) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == from)
        .unwrap_or_else(|| panic!("no line {from:?} in:\n{text}"));
    lines[at..(at + n).min(lines.len())].to_vec()
}

/// describeContainerBasicInfo prints `Port:` and `Host Port:` for every container
/// (`<none>` without ports, `Ports:`/`Host Ports:` for several), and describeContainerState
/// `State:`, `Ready:` and `Restart Count:` once kubelet has written the container's status;
/// the block is one tabwriter column, so the values line up after `Restart Count:`.
#[test]
fn describe_pod_prints_ports_host_ports_and_container_state() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1 --port 8080:80");
    run(&mut lab, "pod create plain --node node-1");
    let d = run(&mut lab, "describe pod web");
    let id = container_id(&mut lab, "web");
    let token = token_volume(&mut lab, "web");
    assert_eq!(
        lines_from(&d, "Containers:", 14),
        [
            "Containers:",
            "  app:",
            &format!("    Container ID:   {id}"),
            "    Image:          registry.k8s.io/nginx-slim:0.27",
            "    Port:           80/TCP",
            "    Host Port:      8080/TCP",
            "    State:          Running",
            "      Started:      Wed, 01 Jan 2025 00:00:00 +0000",
            "    Ready:          True",
            "    Restart Count:  0",
            "    Environment:    <none>",
            "    Mounts:",
            &format!("      /var/run/secrets/kubernetes.io/serviceaccount from {token} (ro)"),
            "Conditions:",
        ],
        "{d}"
    );
    let d = run(&mut lab, "describe pod plain");
    assert_eq!(
        lines_from(&d, "  app:", 7)[3..5],
        ["    Port:           <none>", "    Host Port:      <none>"],
        "{d}"
    );
    // An unscheduled pod has no container status: no container ID, image ID, State, Ready
    // or Restart Count, and no start time; its spec has the token volume and mount.
    run(&mut lab, "cordon node-1");
    run(&mut lab, "cordon node-2");
    run(&mut lab, "pod create waiting");
    let d = run(&mut lab, "describe pod waiting");
    for absent in [
        "State:",
        "Restart Count:",
        "Container ID:",
        "Image ID:",
        "Start Time:",
    ] {
        assert!(!d.contains(absent), "{absent}: {d}");
    }
    let token = token_volume(&mut lab, "waiting");
    assert!(
        d.contains(&format!(
            "    Mounts:\n      /var/run/secrets/kubernetes.io/serviceaccount from {token} (ro)\n"
        )),
        "{d}"
    );
}

/// The pod as `get -o json` serves it.
fn served(lab: &mut Lab, pod: &str) -> serde_json::Value {
    let text = run(lab, &format!("get pod {pod} -o json"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The running container's `containerID` in the served pod.
fn container_id(lab: &mut Lab, pod: &str) -> String {
    let pod = served(lab, pod);
    pod["status"]["containerStatuses"][0]["containerID"]
        .as_str()
        .unwrap_or_else(|| panic!("no containerID: {pod:#}"))
        .to_string()
}

/// The name of the served pod's token volume (the ServiceAccount admission plugin's).
fn token_volume(lab: &mut Lab, pod: &str) -> String {
    let pod = served(lab, pod);
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    let name = volumes.last().expect("a volume")["name"]
        .as_str()
        .expect("a name")
        .to_string();
    // The plugin's mount comes after the container's own.
    let mounts = pod["spec"]["containers"][0]["volumeMounts"]
        .as_array()
        .expect("volumeMounts");
    assert_eq!(
        mounts.last(),
        Some(&serde_json::json!({
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": name,
            "readOnly": true,
        })),
        "{pod:#}"
    );
    name
}

/// describePod for a running pod, in kubectl v1.31's order: Priority and Service Account
/// (the admission plugins' defaults) before Node, Start Time after it (kubelet's
/// `startTime`, RFC1123Z), the container's ID (containerd's, the one `get -o yaml`
/// serves), `Started:` under State, `Environment:` and `Mounts:` (the token mount), and
/// the Volumes section with the claim and the projected token volume; the Events are the
/// kubelet's Pulled, Created and Started, in that order.
#[test]
fn describe_pod_prints_the_running_pod_as_kubectl_does() {
    let mut lab = Lab::new();
    run(&mut lab, "tick 65");
    run(
        &mut lab,
        "pod create web --node node-1 --label app=web --port 8080:80",
    );
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "pod create db --node node-2 --label app=db --pvc data",
    );
    let d = run(&mut lab, "describe pod web");
    assert_eq!(
        lines_from(&d, "Name:             web", 6),
        [
            "Name:             web",
            "Namespace:        default",
            "Priority:         0",
            "Service Account:  default",
            "Node:             node-1/192.168.0.1",
            "Start Time:       Wed, 01 Jan 2025 00:01:05 +0000",
        ],
        "{d}"
    );
    let id = container_id(&mut lab, "web");
    let hex = id.strip_prefix("containerd://").expect(&id);
    assert!(
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert!(d.contains(&format!("    Container ID:   {id}\n")), "{d}");
    assert!(
        d.contains("      Started:      Wed, 01 Jan 2025 00:01:05 +0000\n"),
        "{d}"
    );
    let token = token_volume(&mut lab, "web");
    assert_eq!(
        lines_from(&d, "Volumes:", 7),
        [
            "Volumes:",
            &format!("  {token}:"),
            "    Type:                    Projected (a volume that contains injected data from multiple sources)",
            "    TokenExpirationSeconds:  3607",
            "    ConfigMapName:           kube-root-ca.crt",
            "    ConfigMapOptional:       <nil>",
            "    DownwardAPI:             true",
        ],
        "{d}"
    );
    assert_eq!(
        lines_from(&d, "Events:", 5),
        [
            "Events:",
            "  Type    Reason   Age   From     Message",
            "  ----    ------   ----  ----     -------",
            "  Normal  Pulled   0s    kubelet  Container image \"registry.k8s.io/nginx-slim:0.27\" already present on machine",
            "  Normal  Created  0s    kubelet  Created container app",
        ],
        "{d}"
    );
    assert!(
        d.ends_with("  Normal  Started  0s    kubelet  Started container app\n")
            || d.ends_with("  Normal  Started  0s    kubelet  Started container app"),
        "{d}"
    );
    // The served pod says the same.
    let pod = served(&mut lab, "web");
    assert_eq!(pod["status"]["startTime"], "2025-01-01T00:01:05Z");
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"],
        serde_json::json!({"running": {"startedAt": "2025-01-01T00:01:05Z"}})
    );
    assert_eq!(pod["spec"]["volumes"].as_array().map(Vec::len), Some(1));

    // The pod with a claim: the claim, then the token volume; the container mounts the
    // claim (`--pvc` mounts it at /mnt/CLAIM) and the token volume, sorted by path.
    let d = run(&mut lab, "describe pod db");
    let token = token_volume(&mut lab, "db");
    assert_eq!(
        lines_from(&d, "Volumes:", 6),
        [
            "Volumes:",
            "  data:",
            "    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)",
            "    ClaimName:  data",
            "    ReadOnly:   false",
            &format!("  {token}:"),
        ],
        "{d}"
    );
    assert_eq!(
        lines_from(&d, "    Mounts:", 4),
        [
            "    Mounts:",
            "      /mnt/data from data (rw)",
            &format!("      /var/run/secrets/kubernetes.io/serviceaccount from {token} (ro)"),
            "Conditions:",
        ],
        "{d}"
    );
    let pod = served(&mut lab, "db");
    assert_eq!(
        pod["spec"]["volumes"][0],
        serde_json::json!({"name": "data", "persistentVolumeClaim": {"claimName": "data"}})
    );
    assert_eq!(pod["spec"]["volumes"][1]["name"], token.as_str());
    assert_eq!(
        pod["spec"]["containers"][0]["volumeMounts"][0],
        serde_json::json!({"mountPath": "/mnt/data", "name": "data"})
    );
}

/// The container ID and the token volume's name are derived, not random: the same
/// commands give the same ones; another pod, or a new incarnation of the name, gets its
/// own; `describe`, `get -o yaml` and a list of pods agree.
#[test]
fn pod_ids_are_deterministic_and_the_same_in_every_view() {
    let ids = |lab: &mut Lab, pod: &str| (container_id(lab, pod), token_volume(lab, pod));
    let mut a = Lab::new();
    let mut b = Lab::new();
    for lab in [&mut a, &mut b] {
        run(lab, "pod create web --node node-1");
        run(lab, "pod create db --node node-1");
    }
    let web = ids(&mut a, "web");
    assert_eq!(web, ids(&mut b, "web"));
    let db = ids(&mut a, "db");
    assert_ne!(web.0, db.0);
    assert_ne!(web.1, db.1);
    let d = run(&mut a, "describe pod web");
    assert!(
        d.contains(&format!("    Container ID:   {}\n", web.0)),
        "{d}"
    );
    assert!(d.contains(&format!("  {}:\n", web.1)), "{d}");
    let yaml = run(&mut a, "get pod web -o yaml");
    assert!(
        yaml.contains(&format!("  - containerID: {}\n", web.0)),
        "{yaml}"
    );
    assert!(yaml.contains(&format!("  - name: {}\n", web.1)), "{yaml}");
    // `get pods -o json` reads the same values for each pod.
    let list: serde_json::Value =
        serde_json::from_str(&run(&mut a, "get pods -o json")).expect("json");
    for item in list["items"].as_array().expect("items") {
        let name = item["metadata"]["name"].as_str().expect("name");
        assert_eq!(item, &served(&mut a, name), "{name}");
    }
    run(&mut a, "pod delete web");
    run(&mut a, "tick 40");
    run(&mut a, "pod create web --node node-1");
    let again = ids(&mut a, "web");
    assert_ne!(again.0, web.0);
    assert_ne!(again.1, web.1);
}

/// A container waiting in ContainerCreating has a status without an ID or image ID yet:
/// kubectl prints both lines empty (the lab trims the tabwriter's trailing padding), and `State:  Waiting` with the reason; `Start Time:`
/// is when kubelet first synced the pod (it recorded the sandbox failure then).
#[test]
fn describe_pod_of_a_container_creating_pod_prints_empty_ids() {
    let mut lab = Lab::new();
    run(&mut lab, "fault inject bridge --times 1000");
    run(&mut lab, "pod create web --node node-1");
    let d = run(&mut lab, "describe pod web");
    assert_eq!(
        lines_from(&d, "  app:", 8),
        [
            "  app:",
            "    Container ID:",
            "    Image:          registry.k8s.io/nginx-slim:0.27",
            "    Image ID:",
            "    Port:           <none>",
            "    Host Port:      <none>",
            "    State:          Waiting",
            "      Reason:       ContainerCreating",
        ],
        "{d}"
    );
    assert!(
        d.contains("Start Time:       Wed, 01 Jan 2025 00:00:00 +0000\n"),
        "{d}"
    );
    assert!(!d.contains("Started:"), "{d}");
    assert!(!d.contains("Normal  Created"), "{d}");
}

/// `get events` lists kubelet's three events of a container start, in the order recorded
/// (one API object each: a field selector picks one).
#[test]
fn get_events_lists_pulled_created_started() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    let ev = run(
        &mut lab,
        "get events --field-selector involvedObject.name=web",
    );
    let reasons: Vec<&str> = ev
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(reasons, ["Pulled", "Created", "Started"], "{ev}");
    let created = run(&mut lab, "get events --field-selector reason=Created");
    assert!(
        created.ends_with("Normal   Created   pod/web   Created container app")
            || created.contains("Normal   Created   pod/web   Created container app\n"),
        "{created}"
    );
    assert_eq!(created.lines().count(), 2, "{created}");
}

/// describePod's Conditions rows are one tabwriter column block: the values line up after
/// the longest cell, `  PodReadyToStartContainers ` (kubectl writes a space after each
/// condition's type); `Volumes:` and the volume's name have no cell and end it, and the
/// token volume's fields, `QoS Class:`, `Node-Selectors:` and `Tolerations:` are the next
/// block, lined up after `    TokenExpirationSeconds:`.
#[test]
fn describe_pod_aligns_conditions_and_the_lines_after_them_as_one_block() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    let d = run(&mut lab, "describe pod web --show-events=false");
    let token = token_volume(&mut lab, "web");
    assert_eq!(
        lines_from(&d, "Conditions:", 18),
        [
            "Conditions:",
            "  Type                        Status",
            "  PodReadyToStartContainers   True",
            "  Initialized                 True",
            "  Ready                       True",
            "  ContainersReady             True",
            "  PodScheduled                True",
            "Volumes:",
            &format!("  {token}:"),
            "    Type:                    Projected (a volume that contains injected data from multiple sources)",
            "    TokenExpirationSeconds:  3607",
            "    ConfigMapName:           kube-root-ca.crt",
            "    ConfigMapOptional:       <nil>",
            "    DownwardAPI:             true",
            "QoS Class:                   BestEffort",
            "Node-Selectors:              <none>",
            "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
            "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
        ],
        "{d}"
    );
}

/// A pod being deleted that has not finished: describePod's
/// `Status:  Terminating (lasts <time since deletionTimestamp>)`, that timestamp being the
/// end of the pod's 30 s grace period, and `Termination Grace Period:  30s`.
#[test]
fn describe_pod_being_deleted_says_how_long_it_has_been_terminating() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create db --node node-2");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    run(&mut lab, "pod delete db");
    run(&mut lab, "tick 125");
    let d = run(&mut lab, "describe pod db");
    assert!(
        d.lines()
            .any(|l| l == "Status:                    Terminating (lasts 95s)"),
        "{d}"
    );
    let get = run(&mut lab, "get pod db");
    assert!(get.contains("Terminating"), "{get}");
}

/// kubectl v1.31's describe prints every object with its describer's settings, whose
/// ShowEvents is true unless `--show-events=false`: `describe pods` (no name, or `-l`)
/// ends each pod with its Events section.
#[test]
fn describe_several_pods_prints_each_pod_s_events() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1 --label app=web");
    run(&mut lab, "pod create db --node node-2 --label app=web");
    for line in [
        "describe pods",
        "describe pods -l app=web",
        "describe pod web db",
    ] {
        let d = run(&mut lab, line);
        let events: Vec<&str> = d.lines().filter(|l| l.starts_with("Events:")).collect();
        assert_eq!(events, ["Events:", "Events:"], "{line}:\n{d}");
        assert_eq!(
            d.matches("  Normal  Started  0s    kubelet  Started container app")
                .count(),
            2,
            "{line}:\n{d}"
        );
    }
    let d = run(&mut lab, "describe pods --show-events=false");
    assert!(!d.contains("Events:"), "{d}");
}

/// describeNode: Roles, Annotations and CreationTimestamp in the first block, the four
/// conditions kubelet posts, `System Info:` from `status.nodeInfo`, PodCIDR and PodCIDRs
/// in the column block of System Info (no line without a tab between them), then
/// describeNodeResource's `Non-terminated Pods:` table with its header (an empty column
/// after Name) and the Events section.
#[test]
fn describe_node_prints_kubectl_s_sections() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "tick 65");
    let d = run(&mut lab, "describe node node-1");
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(
        lines[..2],
        ["Name:               node-1", "Roles:              <none>"],
        "{d}"
    );
    assert!(
        lines.contains(&"CreationTimestamp:  Wed, 01 Jan 2025 00:00:00 +0000"),
        "{d}"
    );
    assert_eq!(
        lines_from(&d, "Conditions:", 7),
        [
            "Conditions:",
            "  Type             Status  Reason                       Message",
            "  ----             ------  ------                       -------",
            "  MemoryPressure   False   KubeletHasSufficientMemory   kubelet has sufficient memory available",
            "  DiskPressure     False   KubeletHasNoDiskPressure     kubelet has no disk pressure",
            "  PIDPressure      False   KubeletHasSufficientPID      kubelet has sufficient PID available",
            "  Ready            True    KubeletReady                 kubelet is posting ready status",
        ],
        "{d}"
    );
    assert_eq!(
        lines_from(&d, "System Info:", 18),
        [
            "System Info:",
            "  Machine ID:                 267112d7ff5d4fb181e501a9e9553077",
            "  System UUID:                0a345523-438a-42b7-8b70-890a44b006a4",
            "  Boot ID:                    a8967fd4-5381-4de4-85e9-b7f59198994b",
            "  Kernel Version:             6.1.0-25-amd64",
            "  OS Image:                   Debian GNU/Linux 12 (bookworm)",
            "  Operating System:           linux",
            "  Architecture:               amd64",
            "  Container Runtime Version:  containerd://1.7.22",
            "  Kubelet Version:            v1.31.0-lab",
            "  Kube-Proxy Version:",
            "PodCIDR:                      10.244.1.0/24",
            "PodCIDRs:                     10.244.1.0/24",
            "Non-terminated Pods:          (1 in total)",
            "  Namespace                   Name    CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age",
            "  ---------                   ----    ------------  ----------  ---------------  -------------  ---",
            "  default                     web     0 (0%)        0 (0%)      0 (0%)           0 (0%)         65s",
            "Allocated resources:",
        ],
        "{d}"
    );
    assert_eq!(lines.last(), Some(&"Events:              <none>"), "{d}");
}

/// describeNodeLease: after `Unschedulable:` the node's Lease, its own tabwriter block:
/// kubelet holds it under the node's name, never sets AcquireTime, and renews it every
/// 10 s from when the node joined (at 65 s the last renewal was at 60 s).
#[test]
fn describe_node_prints_the_kubelet_s_lease() {
    let mut lab = Lab::new();
    run(&mut lab, "tick 65");
    let d = run(&mut lab, "describe node node-1");
    assert_eq!(
        lines_from(&d, "Unschedulable:      false", 6),
        [
            "Unschedulable:      false",
            "Lease:",
            "  HolderIdentity:  node-1",
            "  AcquireTime:     <unset>",
            "  RenewTime:       Wed, 01 Jan 2025 00:01:00 +0000",
            "Conditions:",
        ],
        "{d}"
    );
}

/// A lost node's kubelet renews its Lease no more: RenewTime stays at the last renewal
/// before the fault, while the other node's goes on.
#[test]
fn a_lost_node_s_lease_is_not_renewed() {
    let mut lab = Lab::new();
    run(&mut lab, "tick 25");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 60");
    let renew = |lab: &mut Lab, node: &str| {
        let d = run(lab, &format!("describe node {node}"));
        lines_from(&d, "Lease:", 4)[3].to_string()
    };
    assert_eq!(
        renew(&mut lab, "node-2"),
        "  RenewTime:       Wed, 01 Jan 2025 00:00:20 +0000"
    );
    assert_eq!(
        renew(&mut lab, "node-1"),
        "  RenewTime:       Wed, 01 Jan 2025 00:01:20 +0000"
    );
}

/// The machine, system and boot ids are each node's own (kubelet reads them from the
/// machine), the same on every run, and a node's `-o yaml` carries them in `nodeInfo`.
#[test]
fn each_node_reports_its_own_machine_ids() {
    let mut lab = Lab::new();
    let info = |lab: &mut Lab, node: &str| -> Vec<String> {
        let d = run(lab, &format!("describe node {node}"));
        lines_from(&d, "System Info:", 4)[1..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    };
    let (one, two) = (info(&mut lab, "node-1"), info(&mut lab, "node-2"));
    for (a, b) in one.iter().zip(&two) {
        let (ka, va) = a.split_once(':').expect("a field");
        let (kb, vb) = b.split_once(':').expect("a field");
        assert_eq!(ka, kb);
        assert_ne!(va, vb, "{ka}: node-1 and node-2 have the same");
    }
    assert_eq!(info(&mut Lab::new(), "node-2"), two);
    let yaml = run(&mut lab, "get node node-1 -o yaml");
    for l in [
        "    bootID: a8967fd4-5381-4de4-85e9-b7f59198994b",
        "    kubeProxyVersion: \"\"",
        "    machineID: 267112d7ff5d4fb181e501a9e9553077",
        "    systemUUID: 0a345523-438a-42b7-8b70-890a44b006a4",
    ] {
        assert!(yaml.lines().any(|y| y == l), "no {l:?} in:\n{yaml}");
    }
}

/// A node whose kubelet went silent: the node lifecycle controller sets every condition
/// kubelet posts to Unknown (tryUpdateNodeHealth), reason NodeStatusUnknown.
#[test]
fn describe_lost_node_shows_every_condition_unknown() {
    let mut lab = Lab::new();
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    let d = run(&mut lab, "describe node node-2");
    let rows = lines_from(&d, "Conditions:", 7);
    assert_eq!(rows.len(), 7, "{d}");
    for (row, kind) in
        rows[3..]
            .iter()
            .zip(["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"])
    {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[..3], [kind, "Unknown", "NodeStatusUnknown"], "{d}");
    }
}

/// printAnnotationsMultiline leaves kubectl's last-applied-configuration annotation out:
/// an object made by `apply -f` describes with `Annotations:  <none>`.
#[test]
fn describe_leaves_out_the_last_applied_annotation() {
    let dir = std::env::temp_dir().join(format!("fixdsc-last-applied-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("pod.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: applied\nspec:\n  nodeName: node-1\n  containers:\n  - name: app\n    image: busybox\n",
    )
    .expect("write manifest");
    let mut lab = crate::common::lab();
    run(&mut lab, &format!("apply -f {}", file.display()));
    let json = run(&mut lab, "get pod applied -o json");
    assert!(json.contains("last-applied-configuration"), "{json}");
    let d = run(&mut lab, "describe pod applied");
    assert!(d.lines().any(|l| l == "Annotations:      <none>"), "{d}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// describeNetworkPolicySpec, as the networking lessons read it: the pod selector after
/// `PodSelector: ` at PrefixWriter level 2 (five spaces), each rule's ports and peers under
/// `Allowing ingress traffic:`, the direction a policy does not name as not affected, and
/// the policy types. kubectl's NetworkPolicy describer prints no Events section.
#[test]
fn describe_networkpolicy_prints_kubectl_s_spec() {
    let mut lab = Lab::new();
    run(
        &mut lab,
        "policy create db-allow-web --select app=db --ingress-from app=web --port 3306",
    );
    run(
        &mut lab,
        "policy create deny-all --select '' --types Ingress",
    );
    run(&mut lab, "tick 5");
    let d = run(&mut lab, "describe netpol db-allow-web");
    assert_eq!(
        d.lines().collect::<Vec<_>>(),
        [
            "Name:         db-allow-web",
            "Namespace:    default",
            "Created on:   2025-01-01 00:00:00 +0000 UTC",
            "Labels:       <none>",
            "Annotations:  <none>",
            "Spec:",
            "  PodSelector:     app=db",
            "  Allowing ingress traffic:",
            "    To Port: 3306/TCP",
            "    From:",
            "      PodSelector: app=web",
            "  Not affecting egress traffic",
            "  Policy Types: Ingress",
        ],
        "{d}"
    );
    let d = run(&mut lab, "describe networkpolicy deny-all");
    assert_eq!(
        lines_from(&d, "Spec:", 6),
        [
            "Spec:",
            "  PodSelector:     <none> (Allowing the specific traffic to all pods in this namespace)",
            "  Allowing ingress traffic:",
            "    <none> (Selected pods are isolated for ingress connectivity)",
            "  Not affecting egress traffic",
            "  Policy Types: Ingress",
        ],
        "{d}"
    );
}

/// describeStorageClass: IsDefaultClass from the default-class annotation, annotations and
/// parameters as `labels.FormatLabels` prints them, `<unset>` for an unset
/// allowVolumeExpansion, and the Events section.
#[test]
fn describe_storageclass_prints_kubectl_s_fields() {
    let mut lab = Lab::new();
    let d = run(&mut lab, "describe sc standard");
    assert_eq!(
        d.lines().collect::<Vec<_>>(),
        [
            "Name:                  standard",
            "IsDefaultClass:        Yes",
            "Annotations:           storageclass.kubernetes.io/is-default-class=true",
            "Provisioner:           hostpath.csi.lab",
            "Parameters:            <none>",
            "AllowVolumeExpansion:  True",
            "MountOptions:          <none>",
            "ReclaimPolicy:         Delete",
            "VolumeBindingMode:     Immediate",
            "Events:                <none>",
        ],
        "{d}"
    );
    let d = run(&mut lab, "describe storageclass local-wffc");
    assert!(d.lines().any(|l| l == "IsDefaultClass:        No"), "{d}");
}

/// describeNamespace: the phase, then (each after a blank line) what kubectl says of a
/// namespace without ResourceQuotas or LimitRanges; no Events section.
#[test]
fn describe_namespace_prints_kubectl_s_quota_and_limit_lines() {
    let mut lab = Lab::new();
    let d = run(&mut lab, "describe ns default");
    assert_eq!(
        d.lines().collect::<Vec<_>>(),
        [
            "Name:         default",
            "Labels:       kubernetes.io/metadata.name=default",
            "Annotations:  <none>",
            "Status:       Active",
            "",
            "No resource quota.",
            "",
            "No LimitRange resource.",
        ],
        "{d}"
    );
}

/// describeCSINode: each driver's node ID, attach limit and topology keys (Go's `%s` of a
/// slice); VolumeAttachment and CSIDriver, which kubectl has no describer of its own for,
/// through its generic describer.
#[test]
fn describe_csinode_volumeattachment_and_csidriver() {
    let mut lab = Lab::new();
    let d = run(&mut lab, "describe csinode node-1");
    assert_eq!(
        lines_from(&d, "Spec:", 8),
        [
            "Spec:",
            "  Drivers:",
            "    hostpath.csi.lab:",
            "      Node ID:  node-1",
            "      Allocatables:",
            "        Count:        16",
            "      Topology Keys:  [topology.hostpath.csi.lab/node topology.kubernetes.io/zone]",
            "Events:               <none>",
        ],
        "{d}"
    );
    let d = run(&mut lab, "describe csidriver hostpath.csi.lab");
    assert!(
        d.lines().any(|l| l == "Kind:         CSIDriver")
            && d.lines().any(|l| l == "  Attach Required:     true"),
        "{d}"
    );
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create db --node node-2 --pvc data");
    let names = run(&mut lab, "get va -o name");
    let va = names
        .lines()
        .next()
        .and_then(|l| l.split_once('/'))
        .map(|(_, name)| name)
        .unwrap_or_default();
    let d = run(&mut lab, &format!("describe va {va}"));
    assert!(
        d.lines().any(|l| l == "Kind:         VolumeAttachment")
            && d.lines().any(|l| l == "  Attached:  true"),
        "{d}"
    );
}

/// `status.startTime` and a container's `startedAt` are what kubelet wrote in the status:
/// they stay however long the session runs (the call log keeps only its last entries), and
/// a pod waiting for its sandbox has a start time but no started container.
#[test]
fn kubelet_s_times_stay_in_the_status_of_a_pod_of_a_long_session() {
    let mut lab = Lab::new();
    run(&mut lab, "tick 7");
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "tick 3");
    // Enough pods come and go for the call log to drop every entry about web.
    for i in 0..700 {
        run(&mut lab, &format!("pod create x{i} --node node-2"));
        run(&mut lab, &format!("pod delete x{i}"));
    }
    let web = served(&mut lab, "web");
    assert_eq!(web["status"]["startTime"], "2025-01-01T00:00:07Z", "{web}");
    assert_eq!(
        web["status"]["containerStatuses"][0]["state"]["running"]["startedAt"],
        "2025-01-01T00:00:07Z",
        "{web}"
    );
    let d = run(&mut lab, "describe pod web");
    assert!(
        d.contains("Start Time:       Wed, 01 Jan 2025 00:00:07 +0000"),
        "{d}"
    );
    assert!(
        d.contains("      Started:      Wed, 01 Jan 2025 00:00:07 +0000"),
        "{d}"
    );
    // Never scheduled: kubelet wrote nothing, so no start time.
    run(&mut lab, "cordon node-1");
    run(&mut lab, "cordon node-2");
    run(&mut lab, "pod create waiting");
    let waiting = served(&mut lab, "waiting");
    assert!(waiting["status"].get("startTime").is_none(), "{waiting}");
}
