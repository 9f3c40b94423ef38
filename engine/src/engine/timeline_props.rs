//! Property test of the timeline: in a random session of commands, `rewind N` makes every
//! view answer what it answered live after event N, and what a fresh lab with the first N
//! events replayed answers; `rewind --undo` brings back the present's views. (The session's
//! lab takes a snapshot every [`SNAPSHOT_WORK`] = 40 units of work, every few events, so
//! rewinding replays from snapshots as well as from the start.)

use super::Lab;
use proptest::prelude::*;

/// A line of a random session: most change the lab, some fail, some are views.
fn line() -> impl Strategy<Value = String> {
    let pod = 0..6u8;
    let node = prop_oneof![Just("node-1"), Just("node-2"), Just("node-3")];
    prop_oneof![
        (pod.clone(), node.clone()).prop_map(|(p, n)| format!("pod create p{p} --node {n}")),
        pod.clone().prop_map(|p| format!("pod delete p{p}")),
        (0..3u8).prop_map(|c| format!("pvc create c{c} --size 1Gi")),
        (pod, 0..3u8, node.clone())
            .prop_map(|(p, c, n)| format!("pod create v{p} --node {n} --pvc c{c}")),
        (0..3u8).prop_map(|c| format!("pvc delete c{c}")),
        Just("node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3".to_string()),
        (1..40u8).prop_map(|s| format!("tick {s}")),
        node.prop_map(|n| format!("cordon {n}")),
        Just("fault inject bridge --code 11 --times 1".to_string()),
        Just("get pods".to_string()),
    ]
}

/// The work between two snapshots in the session's lab: a few events.
const SNAPSHOT_WORK: u64 = 40;

/// The views compared at every moment.
fn views(lab: &mut Lab) -> Vec<String> {
    let mut out = Vec::new();
    for line in [
        "get pods -o wide",
        "get pvc",
        "show volumes",
        "show ipam node-1",
        "show routes node-1",
        "show iptables node-1",
        "show iptables node-2 -t filter",
        "show wire --list",
        "show events -n 5",
    ] {
        out.push(match lab.execute(line) {
            Ok(o) => o.to_text(),
            Err(e) => format!("error: {}", e.message),
        });
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn rewind_n_answers_as_the_first_n_events_replayed(
        lines in proptest::collection::vec(line(), 1..24),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let mut lab = Lab::new();
        lab.history.snapshot_work = SNAPSHOT_WORK;
        lab.history.work_per_weight = 0;
        let mut live = vec![views(&mut lab)];
        for l in &lines {
            let before = lab.journal.entries.len();
            let _ = lab.execute(l);
            if lab.journal.entries.len() > before {
                live.push(views(&mut lab));
            }
        }
        let events: Vec<_> = lab.journal.entries.iter().cloned().collect();
        prop_assert_eq!(live.len(), events.len() + 1);
        let work = (events.len() as u64 + lab.calls.next_seq() + lab.wire.next_seq()) / SNAPSHOT_WORK;
        prop_assert!(
            work == 0 || lab.history.snapshots_len() > 0,
            "{} units of work took no snapshot", work * SNAPSHOT_WORK
        );
        let present = views(&mut lab);
        for pick in picks {
            let n = pick.index(events.len() + 1);
            lab.execute(&format!("rewind {n}")).expect("rewind to an event");
            let rewound = views(&mut lab);
            // The timeline still lists every event of the present, and marks N.
            prop_assert_eq!(lab.position().at, n);
            prop_assert_eq!(lab.events().len(), events.len());
            prop_assert_eq!(&rewound, &live[n], "rewind {} differs from the live views", n);
            let mut fresh = Lab::new();
            for e in &events[..n] {
                fresh.journal.replay_files(Some(e.files_read()));
                let _ = fresh.execute(&e.line);
                fresh.journal.replay_files(None);
            }
            prop_assert_eq!(&rewound, &views(&mut fresh), "rewind {} differs from a fresh replay", n);
        }
        if lab.position().rewound() {
            lab.execute("rewind --undo").expect("undo");
        }
        prop_assert_eq!(views(&mut lab), present);
    }
}

/// A long session keeps a bounded number of snapshots (thinned to every other one when
/// there are too many), and rewinding through the thinned ones still answers as the live
/// lab did.
#[test]
fn a_long_session_keeps_a_bounded_number_of_snapshots() {
    let mut lab = Lab::new();
    lab.history.snapshot_work = 1;
    lab.history.work_per_weight = 0;
    let mut live = vec![views(&mut lab)];
    for i in 0..150 {
        let line = if i % 2 == 0 {
            format!("pod create p{} --node node-{}", i / 2, i % 4 / 2 + 1)
        } else {
            format!("pod delete p{}", i / 2)
        };
        lab.execute(&line).expect("a pod command");
        live.push(views(&mut lab));
        assert!(
            lab.history.snapshots_len() <= super::timeline::MAX_SNAPSHOTS,
            "{} snapshots after {} events",
            lab.history.snapshots_len(),
            i + 1
        );
    }
    assert!(lab.history.snapshot_work > 1, "never thinned");
    for n in [0, 1, 37, 100, 149, 150] {
        lab.execute(&format!("rewind {n}")).expect("rewind");
        assert_eq!(views(&mut lab), live[n], "rewind {n}");
    }
}

/// A lab that only grows (pods created, none deleted) is snapshotted as it grows: each
/// snapshot once the work since the one before reaches 16 times the lab's weight then (so
/// the copies are a bounded fraction of the replay work), and a rewind between two answers
/// as the live lab did. Weighed by the lab's size now, it took none after the start.
#[test]
fn a_growing_lab_is_snapshotted_in_proportion_to_its_size() {
    use super::timeline::WORK_PER_WEIGHT;
    let mut lab = Lab::new();
    lab.history.snapshot_work = 1;
    let mut live = vec![views(&mut lab)];
    for i in 0..120 {
        lab.execute(&format!("pod create p{i} --node node-{}", i % 2 + 1))
            .expect("a pod create");
        live.push(views(&mut lab));
    }
    let marks = lab.history.snapshot_marks();
    assert!(marks.len() >= 3, "{marks:?}");
    for w in marks.windows(2) {
        let ((work_a, weight_a), (work_b, weight_b)) = (w[0], w[1]);
        let interval = WORK_PER_WEIGHT * weight_a;
        // Taken at the first event past the interval (a pod create is under 30 units).
        assert!(
            (interval..interval + 30).contains(&(work_b - work_a)),
            "{marks:?}"
        );
        assert!(weight_b > weight_a, "{marks:?}");
    }
    for n in [30, 75, 120] {
        lab.execute(&format!("rewind {n}")).expect("rewind");
        assert_eq!(views(&mut lab), live[n], "rewind {n}");
    }
}

/// The copies of a growing lab hold a bounded weight together: once another would take
/// them past the budget none is taken, and rewinding past the last copy replays from it.
#[test]
fn a_growing_lab_stops_being_copied_at_the_snapshot_budget() {
    let mut lab = Lab::new();
    lab.history.snapshot_work = 1;
    lab.history.snapshot_budget = 60;
    let mut live = vec![views(&mut lab)];
    for i in 0..120 {
        lab.execute(&format!("pod create p{i} --node node-{}", i % 2 + 1))
            .expect("a pod create");
        live.push(views(&mut lab));
    }
    let marks = lab.history.snapshot_marks();
    assert!(!marks.is_empty(), "{marks:?}");
    let held: u64 = marks.iter().map(|(_, weight)| weight).sum();
    assert!(held <= 60, "{marks:?}");
    // The last copy is of a lab far smaller than the 120 pods now.
    assert!(marks.last().is_some_and(|(_, w)| *w < 60), "{marks:?}");
    for n in [30, 75, 120] {
        lab.execute(&format!("rewind {n}")).expect("rewind");
        assert_eq!(views(&mut lab), live[n], "rewind {n}");
    }
}
