//! `save FILE` / `load FILE` (issue 4): the whole lab round-trips through a save file —
//! objects, node state, logs — and a loaded lab goes on exactly as the saved one would.

use lab_engine::Lab;
use lab_engine::cluster::ApiKind;
use lab_engine::engine::journal::Start;
use lab_engine::engine::save::SaveFile;
use std::path::PathBuf;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-save-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(o) => o.to_text(),
        Err(e) => format!("{}error: {}\n", e.output.to_text(), e.message),
    }
}

/// Everything a learner can look at.
fn views(lab: &mut Lab) -> Vec<(String, String)> {
    let mut lines: Vec<String> = ApiKind::ALL
        .iter()
        .map(|k| format!("get {} -o json", lab_engine::resource::plural(*k)))
        .collect();
    lines.extend(
        [
            "show ipam",
            "show routes",
            "show wire --list",
            "show wire",
            "show events -n 100000",
            "show volumes",
            "show watch",
            "show iptables node-1",
            "show iptables node-2",
            "cni conf show --node node-1",
            "get pods -o wide",
            "describe pod web",
            "reach web db --port 3306",
        ]
        .map(String::from),
    );
    lines
        .into_iter()
        .map(|l| {
            let out = run(lab, &l);
            (l, out)
        })
        .collect()
}

fn busy_lab() -> Lab {
    let mut lab = crate::common::lab();
    for line in [
        "pod create web --node node-1 --label app=web --port 8080:80",
        "pod create db --node node-2 --label app=db",
        "sc create keep --reclaim Retain",
        "pvc create data --size 1Gi",
        "pvc create kept --size 2Gi --class keep",
        "pod create app --node node-1 --pvc data --label app=api",
        "policy create db-allow --select app=db --ingress-from app=web --port 3306",
        "cni add c1 --node node-1",
        "pvc expand data 2Gi",
        "snapshot create snap-1 --pvc data",
        "tick 3",
        "pod delete app",
    ] {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    // A failing command that leaves traces (the call log) is part of the journal too.
    assert!(
        lab.execute("cni add c2 --node node-2 --args 'IP=10.9.9.9'")
            .is_err()
    );
    lab
}

#[test]
fn round_trip_restores_every_view_and_the_future() {
    let dir = scratch("round");
    let path = dir.join("lab.json");
    let mut saved = busy_lab();
    let out = run(&mut saved, &format!("save {}", path.display()));
    assert!(
        out.starts_with(&format!("saved {}", path.display())),
        "{out}"
    );

    let mut loaded = crate::common::empty_lab();
    let out = run(&mut loaded, &format!("load {}", path.display()));
    assert!(
        out.starts_with(&format!("loaded {}", path.display())),
        "{out}"
    );

    assert_eq!(views(&mut saved), views(&mut loaded));
    assert_eq!(saved.journal().entries, loaded.journal().entries);
    assert_eq!(saved.state_snapshot(), loaded.state_snapshot());

    // The loaded lab goes on as the saved one does.
    for line in [
        "pod create late --node node-2",
        "pod delete web",
        "pvc delete kept",
        "cni del c1 --node node-1",
        "tick 20",
    ] {
        assert_eq!(run(&mut saved, line), run(&mut loaded, line), "{line}");
    }
    assert_eq!(views(&mut saved), views(&mut loaded));

    // Saving the loaded lab writes the same file.
    let again = dir.join("again.json");
    let first = std::fs::read_to_string(&path).unwrap();
    let mut reloaded = crate::common::empty_lab();
    reloaded
        .execute(&format!("load {}", path.display()))
        .unwrap();
    reloaded
        .execute(&format!("save {}", again.display()))
        .unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), first);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_file_is_versioned_json_with_the_documented_fields() {
    let mut lab = busy_lab();
    let save = lab.to_save();
    let text = save.to_json();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "cni-csi-lab-save");
    assert_eq!(v["version"], 1);
    assert_eq!(v["lab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["start"], "default");
    assert_eq!(
        v["journal"][0]["line"],
        "pod create web --node node-1 --label app=web --port 8080:80"
    );
    let last = &v["journal"][save.journal.len() - 1];
    assert_eq!(
        last["line"],
        "cni add c2 --node node-2 --args 'IP=10.9.9.9'"
    );
    assert_eq!(last["fails"], true);
    assert_eq!(v["state"]["objects"]["pods"]["kind"], "List");
    assert_eq!(v["state"]["clock"], 3);
    assert!(v["state"]["nodes"]["node-1"]["host-local"].is_object());
    assert!(v["digest"].as_str().unwrap().starts_with("sha256:"));
    assert!(text.starts_with("{\n  \"format\": \"cni-csi-lab-save\",\n  \"version\": 1,"));
    assert_eq!(SaveFile::parse(&text).unwrap(), save);
}

#[test]
fn views_are_not_journaled_and_reset_restarts_the_journal() {
    let mut lab = crate::common::lab();
    assert_eq!(lab.journal().start, Start::Default);
    assert!(lab.journal().entries.is_empty());
    for line in [
        "get pods",
        "show ipam",
        "describe node node-1",
        "node list",
        "help pod",
        "echo hi",
        "# a comment",
        "reach node-1 node-2",
    ] {
        let _ = lab.execute(line);
    }
    assert!(
        lab.journal().entries.is_empty(),
        "{:?}",
        lab.journal().entries
    );
    lab.execute("pod create web --node node-1").unwrap();
    // Rejected (nothing changed): no entry. Failed after running a plugin: an entry.
    let _ = lab.execute("pod create web --node node-1");
    let _ = lab.execute("pod create --bogus-flag");
    let _ = lab.execute("cni add c2 --node node-1 --args IP=10.244.1.9");
    let lines: Vec<(&str, bool)> = lab
        .journal()
        .entries
        .iter()
        .map(|e| (&*e.line, e.fails))
        .collect();
    assert_eq!(
        lines,
        vec![
            ("pod create web --node node-1", false),
            ("cni add c2 --node node-1 --args IP=10.244.1.9", true)
        ]
    );
    lab.execute("reset --empty").unwrap();
    assert_eq!(lab.journal().start, Start::Empty);
    assert!(lab.journal().entries.is_empty());
    lab.execute("reset").unwrap();
    assert_eq!(lab.journal().start, Start::Default);
}

#[test]
fn presets_round_trip_from_the_empty_start() {
    let dir = scratch("preset");
    let path = dir.join("three.json");
    let mut lab = lab_engine::presets::build("three-nodes", crate::common::disk()).unwrap();
    assert_eq!(lab.journal().start, Start::Empty);
    lab.execute("pod create a --node node-3").unwrap();
    lab.execute(&format!("save {}", path.display())).unwrap();
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(views(&mut lab), views(&mut loaded));
    assert_eq!(loaded.cluster().nodes.len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_loaded_conflist_is_inlined_so_replay_never_reads_the_disk() {
    let dir = scratch("conflist");
    let conf = dir.join("my.conflist");
    let text = lab_engine::engine::DEFAULT_CONFLIST.replace("\"lab-net\"", "\"mine\"");
    assert_ne!(text, lab_engine::engine::DEFAULT_CONFLIST);
    std::fs::write(&conf, &text).unwrap();
    let mut lab = crate::common::lab();
    lab.execute(&format!(
        "cni conf load {} --as 00-my.conflist",
        conf.display()
    ))
    .unwrap();
    lab.execute("pod create web --node node-1").unwrap();
    let path = dir.join("lab.json");
    lab.execute(&format!("save {}", path.display())).unwrap();
    let entry = &lab.journal().entries[0];
    assert_eq!(
        entry.files_read().get(&conf.display().to_string()),
        Some(&text)
    );
    // The conflist is gone from disk: the save still loads, from its own copy.
    std::fs::remove_file(&conf).unwrap();
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(views(&mut lab), views(&mut loaded));
    assert!(run(&mut loaded, "show ipam").contains("/var/lib/cni/networks/mine/"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lesson_lab_saves_and_loading_leaves_the_lesson() {
    let dir = scratch("lesson");
    let path = dir.join("lesson.json");
    let mut desk = crate::common::desk();
    let id = desk
        .lessons
        .parsed()
        .ids()
        .first()
        .cloned()
        .expect("a lesson");
    desk.execute(&format!("lesson start {id}")).unwrap();
    desk.execute("skip").unwrap();
    desk.execute(&format!("save {}", path.display())).unwrap();
    // The save holds the lab (the replayed reference commands), not the lesson.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        v["journal"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| !e["line"].as_str().unwrap().starts_with("lesson"))
    );
    let out = match desk.execute(&format!("load {}", path.display())) {
        Ok(o) => o.to_text(),
        Err(e) => format!("{}error: {}\n", e.output.to_text(), e.message),
    };
    assert!(
        out.contains(&format!("Left lesson {id} (progress kept)")),
        "{out}"
    );
    assert!(desk.lessons.session.is_none());
    let mut fresh = crate::common::lab();
    fresh.execute(&format!("load {}", path.display())).unwrap();
    assert_eq!(views(&mut desk.lab), views(&mut fresh));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_is_atomic() {
    let dir = scratch("atomic");
    let path = dir.join("lab.json");
    let mut lab = busy_lab();
    lab.execute(&format!("save {}", path.display())).unwrap();
    let first = std::fs::read_to_string(&path).unwrap();
    // An existing file is replaced on success.
    lab.execute("pod create more --node node-2").unwrap();
    lab.execute(&format!("save {}", path.display())).unwrap();
    let second = std::fs::read_to_string(&path).unwrap();
    assert_ne!(first, second);
    // A save that cannot be written leaves no temporary file and keeps what was there.
    let blocked = dir.join("blocked");
    std::fs::create_dir_all(blocked.join("inside")).unwrap();
    let e = lab
        .execute(&format!("save {}", blocked.display()))
        .expect_err("a directory is in the way");
    assert!(
        e.message
            .starts_with(&format!("cannot save {}: ", blocked.display())),
        "{}",
        e.message
    );
    assert!(
        e.message
            .ends_with("nothing was written (an existing file is kept)"),
        "{}",
        e.message
    );
    let under_file = path.join("x.json");
    assert!(
        lab.execute(&format!("save {}", under_file.display()))
            .is_err()
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), second);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["blocked", "lab.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn step_mode_and_pending_work_round_trip() {
    let dir = scratch("step");
    let path = dir.join("step.json");
    let mut lab = crate::common::lab();
    for line in [
        "mode step",
        "pvc create data --size 1Gi",
        "pod create web --node node-1 --pvc data",
        "reconcile provisioner",
    ] {
        lab.execute(line).unwrap();
    }
    lab.execute(&format!("save {}", path.display())).unwrap();
    let mut loaded = crate::common::lab();
    loaded.execute(&format!("load {}", path.display())).unwrap();
    for line in [
        "reconcile binder",
        "reconcile scheduler",
        "reconcile",
        "get pods",
    ] {
        assert_eq!(run(&mut lab, line), run(&mut loaded, line), "{line}");
    }
    assert_eq!(views(&mut lab), views(&mut loaded));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_binary_starts_from_a_save_with_load() {
    let dir = scratch("cli");
    let path = dir.join("lab.json");
    let mut lab = busy_lab();
    lab.execute(&format!("save {}", path.display())).unwrap();
    let expected = run(&mut lab, "get pods -o wide");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(["--load", &path.display().to_string(), "run", "-"])
        .env("CNI_CSI_LAB_HISTORY", "")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .map(|mut i| i.write_all(b"get pods -o wide\n"));
            c.wait_with_output()
        })
        .expect("the binary runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected);
    let _ = std::fs::remove_dir_all(&dir);
}
