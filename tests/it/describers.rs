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
    assert_eq!(
        lines_from(&d, "Containers:", 8),
        [
            "Containers:",
            "  app:",
            "    Image:          registry.k8s.io/nginx-slim:0.27",
            "    Port:           80/TCP",
            "    Host Port:      8080/TCP",
            "    State:          Running",
            "    Ready:          True",
            "    Restart Count:  0",
        ],
        "{d}"
    );
    let d = run(&mut lab, "describe pod plain");
    assert_eq!(
        lines_from(&d, "  app:", 7)[2..4],
        ["    Port:           <none>", "    Host Port:      <none>"],
        "{d}"
    );
    // An unscheduled pod has no container status: no State, Ready or Restart Count.
    run(&mut lab, "cordon node-1");
    run(&mut lab, "cordon node-2");
    run(&mut lab, "pod create waiting");
    let d = run(&mut lab, "describe pod waiting");
    assert!(
        !d.contains("State:") && !d.contains("Restart Count:"),
        "{d}"
    );
}

/// describePod's Conditions rows, `Volumes:`, `QoS Class:`, `Node-Selectors:`,
/// `Tolerations:` and `Events:  <none>` are one tabwriter column block: the values line up
/// after the longest cell, `  PodReadyToStartContainers ` (kubectl writes a space after
/// each condition's type).
#[test]
fn describe_pod_aligns_conditions_and_the_lines_after_them_as_one_block() {
    let mut lab = Lab::new();
    run(&mut lab, "pod create web --node node-1");
    let d = run(&mut lab, "describe pod web --show-events=false");
    assert_eq!(
        lines_from(&d, "Conditions:", 12),
        [
            "Conditions:",
            "  Type                        Status",
            "  PodReadyToStartContainers   True",
            "  Initialized                 True",
            "  Ready                       True",
            "  ContainersReady             True",
            "  PodScheduled                True",
            "Volumes:                      <none>",
            "QoS Class:                    BestEffort",
            "Node-Selectors:               <none>",
            "Tolerations:                  node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
            "                              node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
        ],
        "{d}"
    );
}

/// A pod being deleted that has not finished: describePod's
/// `Status:  Terminating (lasts <age of deletionTimestamp>)`.
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
            .any(|l| l == "Status:       Terminating (lasts 2m5s)"),
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
        lines_from(&d, "System Info:", 14),
        [
            "System Info:",
            "  Kernel Version:             6.1.0-25-amd64",
            "  OS Image:                   Debian GNU/Linux 12 (bookworm)",
            "  Operating System:           linux",
            "  Architecture:               amd64",
            "  Container Runtime Version:  containerd://1.7.22",
            "  Kubelet Version:            v1.31.0-lab",
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
    assert!(d.lines().any(|l| l == "Annotations:  <none>"), "{d}");
    let _ = std::fs::remove_dir_all(&dir);
}
