//! The API server's Events fold a repeat into one with a count (client-go's
//! `EventCorrelator`): `describe` prints `LAST (xN over FIRST)` in its Age column and
//! `get events` one row whose LAST SEEN is the latest; the call log keeps every occurrence.

use crate::common::{lab, run};
use lab_engine::cluster::{ApiKind, ObjectRef};
use lab_engine::record::fold_events;

/// The Events section's rows with this reason.
fn rows<'a>(described: &'a str, reason: &str) -> Vec<&'a str> {
    described
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .filter(|l| l.split_whitespace().nth(1) == Some(reason))
        .collect()
}

/// kubelet repeats FailedMount on each retry of a failing NodeStageVolume: one Event.
#[test]
fn kubelet_s_repeated_failed_mount_is_one_event_with_a_count() {
    let mut lab = lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "fault inject NodeStageVolume --code INTERNAL --times 100",
    );
    run(&mut lab, "pod create web --pvc data");
    run(&mut lab, "tick 125");
    // The call log keeps every occurrence.
    let web = ObjectRef::new(ApiKind::Pod, "default", "web");
    let recorded = lab
        .calls()
        .events(&web, None)
        .filter(|(_, e)| e.reason == "FailedMount")
        .count();
    assert_eq!(recorded, 8);
    // The API server keeps one Event with the count, first and last times.
    let folded: Vec<_> = fold_events(lab.calls().events(&web, None))
        .into_iter()
        .filter(|f| f.event.reason == "FailedMount")
        .collect();
    assert_eq!(folded.len(), 1);
    assert_eq!(folded[0].count, 8);
    assert_eq!(folded[0].first.tick().whole_secs(), 0);
    assert_eq!(folded[0].last.whole_secs(), 63);
    let d = run(&mut lab, "describe pod web");
    let failed = rows(&d, "FailedMount");
    assert_eq!(failed.len(), 1, "{d}");
    let words = failed[0].split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.starts_with(
            "Warning FailedMount 61s (x8 over 2m5s) kubelet MountVolume.MountDevice failed"
        ),
        "{d}"
    );
    let got = run(&mut lab, "get events");
    let failed: Vec<&str> = got.lines().filter(|l| l.contains("FailedMount")).collect();
    assert_eq!(failed.len(), 1, "{got}");
    assert!(failed[0].starts_with("61s "), "{got}");
}

/// The external-provisioner repeats Provisioning and ProvisioningFailed on each retry of a
/// failing CreateVolume: each is one Event with its count and last time.
#[test]
fn the_provisioner_s_repeated_events_are_counted_not_dropped() {
    let mut lab = lab();
    run(
        &mut lab,
        "fault inject CreateVolume --code UNAVAILABLE --times 4",
    );
    run(&mut lab, "pvc create data --size 1Gi");
    for t in ["tick 1", "tick 2", "tick 4", "tick 8"] {
        run(&mut lab, t);
    }
    let d = run(&mut lab, "describe pvc data");
    let provisioning = rows(&d, "Provisioning");
    let failed = rows(&d, "ProvisioningFailed");
    assert_eq!((provisioning.len(), failed.len()), (1, 1), "{d}");
    assert!(provisioning[0].contains(" (x5 over 15s) "), "{d}");
    assert!(failed[0].contains(" (x4 over 15s) "), "{d}");
}

/// snapshot-controller records SnapshotDeletePending when it syncs a snapshot whose restore
/// is under way and returns without requeueing it: one event while the snapshot does not
/// change, not one per retry of the restore's CreateVolume. Before, the lab recorded it on
/// every pass (`x13 over 60s` here).
#[test]
fn a_pending_snapshot_deletion_is_recorded_once_per_sync() {
    let mut lab = lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "snapshot create s1 --pvc data");
    run(
        &mut lab,
        "fault inject CreateVolume --code INTERNAL --times 100",
    );
    run(&mut lab, "pvc create r --size 1Gi --from-snapshot s1");
    run(&mut lab, "snapshot delete s1");
    let out = run(&mut lab, "tick 60");
    assert!(out.contains("CreateVolume"), "the restore retries: {out}");
    let described = run(&mut lab, "describe vs s1");
    let pending = rows(&described, "SnapshotDeletePending");
    assert_eq!(pending.len(), 1, "{described}");
    assert!(!pending[0].contains("(x"), "{described}");
    // The restore done, the deletion goes on.
    run(&mut lab, "fault clear");
    run(&mut lab, "tick 300");
    assert!(lab.cluster().snapshots.is_empty());
}
