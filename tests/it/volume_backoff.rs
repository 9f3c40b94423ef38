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
    // Two FailedMount events, one Event with a count, and no pod worker backoff on the way.
    let d = run(&mut lab, "describe pod web");
    assert_eq!(d.matches("FailedMount").count(), 1, "{d}");
    assert!(
        d.contains("  FailedMount             1s (x2 over 1s)  kubelet"),
        "{d}"
    );
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

/// When each event of `reason` was recorded, in order.
fn event_times(lab: &lab_engine::Lab, reason: &str) -> Vec<Millis> {
    lab.calls()
        .iter()
        .filter(|(_, e)| e.reason() == Some(reason))
        .map(|(_, e)| e.tick())
        .collect()
}

/// The clock is a discrete-event simulation: one long tick fires every retry at its own
/// due time (issue 37 §2). A NodeStageVolume that fails twice (ABORTED) is retried at 0.5 s
/// and 1.5 s inside `tick 10`, and the pod has been Running since t=1.5s.
#[test]
fn one_long_tick_fires_each_mount_retry_at_its_time() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "fault inject NodeStageVolume --times 2 --code 10");
    run(&mut lab, "pod create app --pvc data");
    run(&mut lab, "tick 10");
    assert_eq!(phase(&lab, "app"), "Running");
    assert_eq!(
        event_times(&lab, "FailedMount"),
        [Millis::ZERO, Millis::ms(500)]
    );
    assert_eq!(event_times(&lab, "Started"), [Millis::ms(1500)]);
    assert_eq!(lab.clock(), Millis::secs(10));
}

/// The pod worker's 10 s retry after a failed sandbox fires every 10 s inside a tick of an
/// hour (360 retries, not one at the end), and the attach timeout of a driver no
/// external-attacher serves is reported at its time, 2 min after the attach began, and the
/// next one 2 min after the 500 ms backoff (a repeat: the API server folds it into the
/// first Event, `x2`).
#[test]
fn a_tick_of_an_hour_fires_every_retry_and_timeout_at_its_time() {
    let mut lab = crate::common::lab();
    run(&mut lab, "fault inject bridge --times 1000");
    run(&mut lab, "pod create a --node node-1");
    run(&mut lab, "tick 1h");
    let failed = event_times(&lab, "FailedCreatePodSandBox");
    assert_eq!(failed.len(), 361, "one at t=0, then one every 10 s");
    assert!(
        failed
            .iter()
            .enumerate()
            .all(|(i, t)| *t == Millis::secs(10 * i as u64))
    );

    let mut lab = crate::common::lab();
    run(
        &mut lab,
        "apply -f tests/fixtures/manifests/foreign-driver-pv.yaml",
    );
    run(&mut lab, "pod create app --node node-1 --pvc ebs-claim");
    run(&mut lab, "tick 250");
    assert_eq!(
        event_times(&lab, "FailedAttachVolume"),
        [Millis::secs(120), Millis::ms(240_500)]
    );
    let d = run(&mut lab, "describe pod app");
    assert_eq!(d.matches("FailedAttachVolume").count(), 1, "{d}");
    assert!(d.contains("FailedAttachVolume  9s (x2 over 2m10s)"), "{d}");
}

/// The work of one tick is bounded: past `MAX_TIMERS_PER_TICK` stops the rest of the span
/// is jumped, the tick says so, and it returns.
#[test]
fn a_tick_past_the_timer_cap_jumps_the_rest_and_says_so() {
    let mut lab = crate::common::lab();
    run(&mut lab, "fault inject bridge --times 100000");
    run(&mut lab, "pod create a --node node-1");
    let out = run(&mut lab, "tick 1000h");
    assert!(
        out.contains("(the first 10000 timers due in this tick fired at their times; the clock jumped over the rest of the span"),
        "{}",
        out.lines().take(3).collect::<Vec<_>>().join("\n")
    );
    assert_eq!(lab.clock(), Millis::secs(3_600_000));
    let attempts = lab
        .pod_workers()
        .find(|(k, _)| **k == key("a"))
        .map(|(_, w)| w.attempts);
    assert_eq!(attempts, Some(10_002), "t=0, 10,000 stops, and the end");
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
        .skip(3)
        .collect();
    assert_eq!(events.len(), 1, "{described}");
    assert!(events[0].contains("FailedAttachVolume"), "{described}");
    assert_eq!(phase(&lab, "web-2"), "Pending");
}
