//! The timeline across the front ends' edges (issue 39): what `save` writes after a rewind
//! and after a fork, a file a command read replayed from the journal (not the disk), a
//! script run (`run FILE`) that rewinds, and the desk every front end runs lines through.

use crate::common::{desk, lab, run};
use lab_engine::script::{RunOptions, run as run_script};

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lab-timeline-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn save_after_a_rewind_writes_the_first_n_events_and_after_a_fork_the_fork() {
    let dir = scratch("save");
    let mut lab = lab();
    for line in [
        "pod create a --node node-1",
        "pod create b --node node-2",
        "pod create c --node node-1",
    ] {
        lab.execute(line).unwrap();
    }
    lab.execute("rewind 1").unwrap();
    let path = dir.join("rewound.json");
    let out = run(&mut lab, &format!("save {}", path.display()));
    assert!(out.starts_with("saved "), "{out}");
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(run(&mut loaded, "get pods"), run(&mut lab, "get pods"));
    assert_eq!(loaded.journal().entries.len(), 1);
    // Saving was a view: the present is still there to return to.
    lab.execute("rewind --undo").unwrap();
    assert_eq!(lab.counts().1, 3);
    // After a fork the save holds the first event and the fork's.
    lab.execute("rewind 1").unwrap();
    lab.execute("pod create d --node node-2").unwrap();
    let path = dir.join("forked.json");
    lab.execute(&format!("save {}", path.display())).unwrap();
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    let lines: Vec<&str> = loaded.journal().entries.iter().map(|e| &*e.line).collect();
    assert_eq!(
        lines,
        ["pod create a --node node-1", "pod create d --node node-2"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_rewind_replays_a_file_from_the_journal_not_from_the_disk() {
    let dir = scratch("file");
    let manifest = dir.join("web.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  nodeName: node-1\n  containers:\n  - name: app\n    image: nginx\n",
    )
    .unwrap();
    let mut lab = lab();
    lab.execute(&format!("apply -f {}", manifest.display()))
        .unwrap();
    lab.execute("pod create b --node node-2").unwrap();
    std::fs::remove_file(&manifest).unwrap();
    lab.execute("rewind 1").unwrap();
    assert_eq!(lab.counts().1, 1, "{}", run(&mut lab, "get pods"));
    assert!(run(&mut lab, "get pods").contains("web"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A manifest a command read (here an inline one, `apply -f - <<EOF`) stays in the journal
/// when the lab forks after a rewind: the rewound past was replayed, and each replayed entry
/// keeps the text it read, so `rewind`, `diff` and `save` after the fork still see it.
#[test]
fn a_fork_after_a_rewind_keeps_the_manifests_the_past_read() {
    let dir = scratch("fork-heredoc");
    let mut lab = lab();
    lab.execute(
        "apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {nodeName: node-1, containers: [{name: app, image: nginx}]}\nEOF",
    )
    .unwrap();
    lab.execute("pod create again --node node-1").unwrap();
    lab.execute("rewind -1").unwrap();
    lab.execute("pod create again --node node-1").unwrap();
    let entries: Vec<Option<String>> = lab
        .journal()
        .entries
        .iter()
        .map(|e| e.files_read().get("-").cloned())
        .collect();
    assert!(
        entries[0]
            .as_deref()
            .is_some_and(|m| m.contains("name: web")),
        "the fork's first entry keeps its manifest: {entries:?}"
    );
    // The past rebuilt from the journal holds web.
    lab.execute("rewind 1").unwrap();
    assert_eq!(lab.counts().1, 1, "{}", run(&mut lab, "get pods"));
    lab.execute("rewind --undo").unwrap();
    assert_eq!(lab.counts().1, 2);
    // And a save replays.
    let path = dir.join("forked.json");
    let out = run(&mut lab, &format!("save {}", path.display()));
    assert!(out.starts_with("saved "), "{out}");
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(
        run(&mut loaded, "get pods -o wide"),
        run(&mut lab, "get pods -o wide")
    );
    // Loaded, the journal still holds the manifest: saving again writes it.
    let again = dir.join("again.json");
    let out = run(&mut loaded, &format!("save {}", again.display()));
    assert!(out.starts_with("saved "), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_script_rewinds_diffs_and_asks_why() {
    let mut desk = desk();
    let script = "pod create web --node node-1\npod create db --node node-2\nrewind 1\nget pods\nrewind --undo\ndiff 1 2\nwhy lease 10.244.2.2 --node node-2\ntimeline\n";
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ok = run_script(
        &mut desk,
        script,
        RunOptions {
            keep_going: false,
            echo: false,
        },
        &mut out,
        &mut err,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(ok, "{out}{}", String::from_utf8_lossy(&err));
    assert_eq!(desk.lab.position().at, 2);
    assert_eq!(desk.lab.counts().1, 2);
}

#[test]
fn the_desk_every_front_end_runs_lines_through_rewinds_and_returns() {
    let mut desk = desk();
    desk.execute("pod create web --node node-1").unwrap();
    desk.execute("rewind 0").unwrap();
    assert_eq!(desk.lab.counts().1, 0);
    assert!(desk.lab.position().rewound());
    desk.execute("rewind --undo").unwrap();
    assert_eq!(desk.lab.counts().1, 1);
}

/// `Lab::event(n)` (what the dashboard's timeline bar reads) is the present's event n,
/// while rewound too, and nothing outside 1..=of.
#[test]
fn one_event_is_the_presents_event_while_rewound_too() {
    let mut lab = lab();
    for line in ["pod create a --node node-1", "pod create b --node node-2"] {
        lab.execute(line).unwrap();
    }
    lab.execute("rewind 1").unwrap();
    let all = lab.events();
    assert_eq!(all.len(), 2);
    for e in &all {
        assert_eq!(lab.event(e.number).as_ref(), Some(e));
    }
    assert_eq!(lab.event(0), None);
    assert_eq!(lab.event(3), None);
}

/// A rejected command (it fails and changes nothing) is no event: the next event keeps the
/// number it would have had, and `timeline` and `rewind` know nothing of it.
#[test]
fn a_rejected_command_takes_no_event_number() {
    let mut lab = lab();
    lab.execute("pod create a --node node-1").unwrap();
    assert_eq!(lab.position().at, 1);
    let e = lab.execute("pod delete nosuch").unwrap_err();
    assert!(e.message.contains("nosuch"), "{}", e.message);
    assert_eq!(lab.position().at, 1, "the rejected delete took no number");
    assert!(lab.execute("cordon node-9").is_err());
    assert_eq!(lab.position().at, 1);
    lab.execute("pod create b --node node-2").unwrap();
    assert_eq!(lab.position().at, 2, "the next event is 2");
    let timeline = run(&mut lab, "timeline");
    assert!(!timeline.contains("nosuch"), "{timeline}");
    assert!(!timeline.contains("failed"), "{timeline}");
    assert!(
        timeline.contains("pod create b --node node-2"),
        "{timeline}"
    );
    let lines: Vec<String> = lab.events().iter().map(|e| e.line.clone()).collect();
    assert_eq!(
        lines,
        ["pod create a --node node-1", "pod create b --node node-2"]
    );
    // Rewinding to 1 is the lab after `pod create a`; the present has two events.
    lab.execute("rewind 1").unwrap();
    assert_eq!((lab.position().at, lab.position().of), (1, 2));
    assert_eq!(lab.counts().1, 1);
    // A rejected command while rewound does not fork the session away from the present.
    assert!(lab.execute("pod delete nosuch").is_err());
    assert_eq!((lab.position().at, lab.position().of), (1, 2));
    lab.execute("rewind --undo").unwrap();
    assert_eq!(lab.counts().1, 2);
}

/// A command that fails after changing the lab keeps its number: a raw CNI ADD the plugin
/// refused still ran the plugin (a call on the wire), and fails the same on replay.
#[test]
fn a_command_that_failed_after_changing_the_lab_is_an_event() {
    let mut lab = lab();
    let wire = lab.wire().next_seq();
    let failed = lab.execute("cni add c2 --node node-1 --args IP=10.244.1.9");
    assert!(failed.is_err());
    assert!(lab.wire().next_seq() > wire, "the plugin ran");
    assert_eq!(lab.position().at, 1);
    let timeline = run(&mut lab, "timeline");
    assert!(
        timeline.contains("cni add c2 --node node-1 --args IP=10.244.1.9   (failed)"),
        "{timeline}"
    );
}

/// Every command that only reads the lab is a view, not an event (`help timeline`): it
/// takes no timeline number, so `rewind -1` goes back past the last command that changed
/// the lab. A read-only CSI or CNI call made by hand still leaves its wire record (the
/// lesson checks read it), and a save still replays it.
#[test]
fn every_read_only_command_is_a_view_and_adds_no_event() {
    let mut lab = lab();
    for line in [
        "pvc create data --size 1Gi",
        "pod create web --node node-1 --pvc data --label app=web",
        "pod create db --node node-2",
        "snapshot create snap --pvc data",
    ] {
        lab.execute(line).unwrap();
    }
    let views = [
        "get pods",
        "get pods -o wide",
        "get pvc data -o yaml",
        "describe pod web",
        "show ipam node-1",
        "show routes node-1",
        "show links node-1",
        "show events",
        "show wire",
        "show wire --list",
        "show volumes",
        "show iptables node-1",
        "reach web db",
        "trace web db",
        "timeline",
        "diff -1",
        "why route 10.244.2.0/24 --node node-1",
        "node list",
        "ns list",
        "pod list",
        "sc list",
        "pvc list",
        "snapshot list",
        "policy list",
        "nad list",
        "network show",
        "fault list",
        "cni plugins",
        "cni conf show --node node-1",
        "cni status --node node-1",
        "cni version --node node-1",
        "csi get-plugin-info",
        "csi get-plugin-capabilities",
        "csi probe",
        "csi controller-get-capabilities",
        "csi list-volumes",
        "csi controller-get-volume pvc/data",
        "csi validate-volume-capabilities pvc/data",
        "csi get-capacity",
        "csi list-snapshots",
        "csi node-get-info --node node-1",
        "csi node-get-capabilities --node node-1",
        "csi call ListVolumes",
        "csi call /csi.v1.Identity/Probe",
        "echo hello",
        "help timeline",
    ];
    let events = lab.position().of;
    assert_eq!(events, 4);
    for line in views {
        let wire = lab.wire().next_seq();
        let result = lab.execute(line);
        assert!(
            result.is_ok(),
            "{line}: {:?}",
            result.err().map(|e| e.message)
        );
        assert_eq!(lab.position().of, events, "`{line}` became an event");
        if line.starts_with("csi ") {
            assert!(lab.wire().next_seq() > wire, "`{line}` left no wire record");
        }
    }
    // `rewind -1` undoes the last change, not a view.
    let out = run(&mut lab, "rewind -1");
    assert!(out.contains("after event 3 of 4: pod create db"), "{out}");
    lab.execute("rewind --undo").unwrap();
    // The views that left a wire record are journaled (a save replays the same logs) but
    // are no events: `timeline` lists the four changes alone.
    let timeline = run(&mut lab, "timeline");
    assert!(
        !timeline.contains("csi ") && !timeline.contains("cni "),
        "{timeline}"
    );
    let dir = scratch("views");
    let path = dir.join("views.json");
    let out = run(&mut lab, &format!("save {}", path.display()));
    assert!(out.starts_with("saved "), "{out}");
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(loaded.position().of, 4);
    assert_eq!(loaded.wire().next_seq(), lab.wire().next_seq());
    let _ = std::fs::remove_dir_all(&dir);
}

/// ch2-core-ideas step 21 as a tester typed it: a view after `pod create again` does not
/// stand between `rewind -1` and the create.
#[test]
fn a_view_after_a_change_does_not_take_its_place_in_rewind() {
    let mut d = desk();
    d.execute("lesson start ch2-core-ideas").unwrap();
    for _ in 0..20 {
        d.execute("skip").unwrap();
    }
    d.execute("pod create again --node node-1").unwrap();
    d.execute("cni conf show --node node-1").unwrap();
    let out = d.execute("rewind -1").unwrap().to_text();
    assert!(!out.contains(": pod create again"), "{out}");
    d.execute("pod create again --node node-1")
        .expect("again is gone after the rewind");
}
