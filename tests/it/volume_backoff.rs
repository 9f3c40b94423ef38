//! kubelet's volume manager retries a failed volume operation after its own backoff (500 ms
//! doubling to 2 min 2 s, `nestedpendingoperations`), apart from the pod worker's 10 s; the
//! clock steps in milliseconds for it (`tick 500ms`).

use crate::common;

use common::{key, phase, run};
use lab_engine::util::time::Millis;

#[test]
fn a_node_stage_failing_twice_converges_in_a_second_and_a_half() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "fault inject NodeStageVolume --code UNAVAILABLE --times 2",
    );
    let out = run(&mut lab, "pod create web --pvc data");
    assert!(out.contains("(durationBeforeRetry 500ms)"), "{out}");
    assert!(
        out.contains("No retries permitted until 2025-01-01 00:00:00.5 +0000 UTC"),
        "{out}"
    );
    assert_eq!(phase(&lab, "web"), "Pending");
    // Not before its time.
    let out = run(&mut lab, "tick 499ms");
    assert!(!out.contains("NodeStageVolume"), "{out}");
    let out = run(&mut lab, "tick 1ms");
    assert!(out.starts_with("t=0.5s"), "{out}");
    assert!(out.contains("(durationBeforeRetry 1s)"), "{out}");
    let out = run(&mut lab, "tick 1s");
    assert!(out.contains("NodeStageVolume #"), "{out}");
    assert_eq!(phase(&lab, "web"), "Running");
    assert_eq!(lab.clock(), Millis::ms(1500));
    // Two FailedMount events, and no pod worker backoff on the way.
    let d = run(&mut lab, "describe pod web");
    assert_eq!(d.matches("FailedMount").count(), 2, "{d}");
    assert!(!d.contains("retries its mounts"), "{d}");
}

#[test]
fn a_failed_unmount_is_logged_and_retried_without_an_event() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create web --pvc data");
    run(
        &mut lab,
        "fault inject NodeUnstageVolume --code INTERNAL --times 2",
    );
    let out = run(&mut lab, "pod delete web");
    assert!(
        out.contains("UnmountDevice failed for volume \"pvc-")
            && out.contains("on node \"node-2\" : kubernetes.io/csi: attacher.UnmountDevice failed: rpc error: code = Internal"),
        "{out}"
    );
    assert!(!out.contains("FailedKillPod"), "{out}");
    assert!(
        lab.cluster().pods.contains_key(&key("web")),
        "still Terminating"
    );
    run(&mut lab, "tick 500ms");
    assert!(lab.cluster().pods.contains_key(&key("web")), "failed again");
    let out = run(&mut lab, "tick 1s");
    assert!(out.contains("NodeUnstageVolume #"), "{out}");
    assert!(!lab.cluster().pods.contains_key(&key("web")));
}

#[test]
fn the_pod_worker_keeps_its_own_ten_seconds() {
    let mut lab = crate::common::lab();
    run(&mut lab, "fault inject bridge --times 1");
    let out = run(&mut lab, "pod create web --node node-1");
    assert!(out.contains("retry at t=10s (`tick 10`)"), "{out}");
    run(&mut lab, "tick 9500ms");
    assert_eq!(phase(&lab, "web"), "Pending");
    run(&mut lab, "tick 500ms");
    assert_eq!(phase(&lab, "web"), "Running");
}

#[test]
fn a_restarted_kubelet_forgets_its_volume_backoffs() {
    let mut lab = crate::common::lab();
    // Both claims live on node-2.
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pvc create db --size 1Gi");
    run(
        &mut lab,
        "fault inject NodeStageVolume --code INTERNAL --times 1",
    );
    run(&mut lab, "pod create web --pvc data");
    assert!(!lab.kubelets()["node-2"].volume_ops.is_empty());
    // kubelet dies after staging db: the backoffs were in the process that died.
    run(&mut lab, "fault inject kubelet-after-stage --node node-2");
    let out = run(&mut lab, "pod create api --pvc db");
    assert!(out.contains("kubelet died"), "{out}");
    assert!(lab.kubelets()["node-2"].volume_ops.is_empty());
    run(&mut lab, "tick 10");
    assert_eq!(phase(&lab, "web"), "Running");
    assert_eq!(phase(&lab, "api"), "Running");
}

#[test]
fn sub_second_clock_prints_naturally_and_timestamps_keep_whole_seconds() {
    let mut lab = crate::common::lab();
    assert_eq!(run(&mut lab, "tick 1500ms").trim(), "t=1.5s");
    run(&mut lab, "pod create web --node node-1");
    let y = run(&mut lab, "get pod web -o yaml");
    assert!(
        y.contains("creationTimestamp: \"2025-01-01T00:00:01Z\""),
        "{y}"
    );
    assert_eq!(run(&mut lab, "tick 500ms").trim(), "t=2s");
    assert_eq!(run(&mut lab, "tick 1m").trim(), "t=62s");
    let e = lab.execute("tick 1.5").unwrap_err();
    assert!(e.message.contains("has no unit"), "{}", e.message);
    assert!(e.message.contains("500ms"), "{}", e.message);
}

#[test]
fn a_save_with_sub_second_times_loads_back() {
    let dir = std::env::temp_dir().join(format!("lab-backoff-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lab.json");
    let mut lab = crate::common::lab();
    for l in [
        "pvc create data --size 1Gi",
        "fault inject NodeStageVolume --code UNAVAILABLE --times 2",
        "pod create web --pvc data",
        "tick 500ms",
    ] {
        run(&mut lab, l);
    }
    run(&mut lab, &format!("save {}", path.display()));
    let mut loaded = crate::common::empty_lab();
    let out = run(&mut loaded, &format!("load {}", path.display()));
    assert!(out.contains("t=0.5s"), "{out}");
    assert_eq!(loaded.state_snapshot(), lab.state_snapshot());
    assert_eq!(run(&mut lab, "tick 1s"), run(&mut loaded, "tick 1s"));
    assert_eq!(phase(&loaded, "web"), "Running");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_volume_is_an_operation_of_its_own() {
    let mut lab = crate::common::lab();
    // Both claims live on node-2; the first NodeStageVolume (data's) fails.
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pvc create db --size 1Gi");
    run(
        &mut lab,
        "fault inject NodeStageVolume --code INTERNAL --times 1",
    );
    let out = run(&mut lab, "pod create web --pvc data --pvc db");
    assert_eq!(out.matches("NodeStageVolume #").count(), 2, "{out}");
    assert_eq!(out.matches("NodePublishVolume #").count(), 1, "{out}");
    assert_eq!(phase(&lab, "web"), "Pending");
    let out = run(&mut lab, "tick 500ms");
    assert_eq!(out.matches("NodeStageVolume #").count(), 1, "{out}");
    assert_eq!(phase(&lab, "web"), "Running");
}

/// kubelet v1.32 reports no event while a volume waits for its attach: the wait's timeout
/// is not a FailedMount (`wait.Interrupted`); the attach/detach controller's event says why.
#[test]
fn a_volume_waiting_for_its_attach_gets_no_kubelet_event() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create web-1 --node node-2 --pvc data");
    let out = run(&mut lab, "pod create web-2 --node node-1 --pvc data");
    assert!(out.contains("Multi-Attach error"), "{out}");
    assert!(!out.contains("FailedMount"), "{out}");
    let described = run(&mut lab, "describe pod web-2");
    let events: Vec<&str> = described
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .skip(2)
        .collect();
    assert_eq!(events.len(), 1, "{described}");
    assert!(events[0].contains("FailedAttachVolume"), "{described}");
    assert_eq!(phase(&lab, "web-2"), "Pending");
}
