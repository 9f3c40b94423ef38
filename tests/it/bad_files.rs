//! Bad files (issue 8): a malformed conflist, preset, lesson or save file is refused with the
//! file, the line where it applies and the reason, and the running lab keeps its state.
//! Fixtures live in tests/fixtures/bad/; damaged save files are made from a fresh save
//! here (a committed save would go stale whenever the engine's output changes).

use lab_engine::{Desk, Lab};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BAD: &str = "tests/fixtures/bad";

fn fixture(name: &str) -> String {
    format!("{BAD}/{name}")
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-bad-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// A lab with some state, to show that a refused file leaves it as it was.
fn busy_lab() -> Lab {
    let mut lab = crate::common::lab();
    for line in [
        "pod create web --node node-1 --label app=web",
        "pod create db --node node-2 --label app=db",
        "pvc create data --size 1Gi",
    ] {
        lab.execute(line).expect(line);
    }
    lab
}

/// `line` fails with an error containing every one of `needles`, and changes nothing.
fn refused(lab: &mut Lab, line: &str, needles: &[&str]) -> String {
    let before = lab.state_snapshot();
    let journal = lab.journal().entries.len();
    let e = lab.execute(line).expect_err(line);
    for n in needles {
        assert!(e.message.contains(n), "{line}: {:?} lacks {n:?}", e.message);
    }
    assert_eq!(lab.state_snapshot(), before, "{line} changed the lab");
    assert!(lab.journal().entries.len() <= journal + 1);
    e.message
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .env("CNI_CSI_LAB_HISTORY", "")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

// ---- conflists ----

#[test]
fn a_conflist_with_a_syntax_error_names_file_line_and_column() {
    let mut lab = busy_lab();
    let f = fixture("trailing-comma.conflist");
    refused(
        &mut lab,
        &format!("cni conf load {f}"),
        &[&format!(
            "{f}: error parsing configuration list: trailing comma at line 5 column 23"
        )],
    );
    // The active config is still the lab's own.
    let out = lab
        .execute("cni conf show --node node-1")
        .unwrap()
        .to_text();
    assert!(out.contains("10-lab.conflist"), "{out}");
    assert!(!out.contains("trailing-comma"), "{out}");
}

#[test]
fn a_truncated_conflist_is_refused() {
    let mut lab = busy_lab();
    let f = fixture("truncated.conflist");
    refused(
        &mut lab,
        &format!("cni conf load {f}"),
        &[&format!(
            "{f}: error parsing configuration list: unexpected end of JSON input"
        )],
    );
}

#[test]
fn conflist_flag_refuses_a_bad_file_with_exit_2() {
    let f = fixture("trailing-comma.conflist");
    let o = cli(&["--conflist", &f, "run", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "--conflist: {f}: error parsing configuration list: trailing comma at line 5 column 23"
        )),
        "{err}"
    );
}

// ---- presets ----

#[test]
fn a_preset_file_names_the_failing_line() {
    let f = fixture("overlapping.lab");
    let e = lab_engine::presets::build(&f, crate::common::disk())
        .err()
        .expect("refused");
    assert!(e.starts_with(&format!("{f}:4: ")), "{e}");
    assert!(e.contains("overlaps"), "{e}");
    let o = cli(&["--preset", &f, "run", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("error: {f}:4: ")), "{err}");
}

// ---- lessons ----

#[test]
fn a_malformed_lesson_names_file_and_line_and_the_lab_is_kept() {
    let mut desk = Desk::with_lab(busy_lab());
    let before = desk.lab.state_snapshot();
    desk.lessons
        .use_dir(crate::common::lessons_at(fixture("lessons")))
        .expect("the directory is readable");
    let out = desk.execute("lesson list").unwrap().to_text();
    assert!(
        out.contains(
            "bad-step-heading.md:8: a step heading reads `## Step N · title`, got `## Step one`"
        ),
        "{out}"
    );
    assert!(desk.execute("lesson start heading").is_err());
    assert_eq!(desk.lab.state_snapshot(), before);
}

// ---- save files ----

fn load_refused(file: &str, needles: &[&str]) -> String {
    let mut lab = busy_lab();
    let mut all = vec!["cannot load ", "; the lab is unchanged"];
    all.extend_from_slice(needles);
    refused(&mut lab, &format!("load {file}"), &all)
}

#[test]
fn a_save_file_that_is_not_json_names_line_and_column() {
    let f = fixture("not-json.json");
    load_refused(&f, &[&format!("{f}:1:1: not valid JSON: expected value")]);
}

#[test]
fn a_newer_save_format_asks_for_an_upgrade() {
    let f = fixture("newer-version.json");
    load_refused(
        &f,
        &[&format!(
            "{f}: this save was written by a newer cni-csi-lab (format 2); upgrade the lab to load it"
        )],
    );
}

#[test]
fn other_json_is_not_a_save_file() {
    let f = fixture("wrong-format.json");
    load_refused(
        &f,
        &[&format!(
            "{f}: not a cni-csi-lab save file: \"format\" is \"kubeconfig\", expected \"cni-csi-lab-save\""
        )],
    );
}

#[test]
fn ill_typed_and_missing_fields_name_their_json_path() {
    let f = fixture("ill-typed-journal.json");
    load_refused(
        &f,
        &[&format!(
            "{f}: journal[1].line: expected a string, found a number"
        )],
    );
    let f = fixture("missing-state.json");
    load_refused(&f, &[&format!("{f}: state: missing")]);
}

#[test]
fn lesson_commands_in_a_journal_are_refused() {
    let f = fixture("lesson-in-journal.json");
    load_refused(
        &f,
        &[&format!(
            "{f}: journal[0] `lesson start ch7-hands-on`: not a command a save replays"
        )],
    );
}

/// A real save of `busy_lab` plus a CNI ADD, in a scratch directory.
fn fresh_save(tag: &str) -> (PathBuf, String) {
    let dir = scratch(tag);
    let path = dir.join("lab.json");
    let mut lab = busy_lab();
    lab.execute("cni add c1 --node node-1").unwrap();
    lab.execute(&format!("save {}", path.display())).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

#[test]
fn a_truncated_save_file_is_refused() {
    let (path, text) = fresh_save("trunc");
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let p = path.display().to_string();
    let msg = load_refused(&p, &["not valid JSON: EOF while parsing", "truncated?"]);
    assert!(msg.contains(&format!("cannot load {p}:")), "{msg}");
}

#[test]
fn a_state_edited_by_hand_does_not_match_its_digest() {
    let (path, text) = fresh_save("edit-state");
    let edited = text.replacen("\"clock\": 0", "\"clock\": 7", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    load_refused(
        &path.display().to_string(),
        &["the save file's state does not match its digest (damaged or edited by hand)"],
    );
}

#[test]
fn a_state_and_digest_edited_together_do_not_match_the_journal() {
    let (path, text) = fresh_save("edit-both");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["state"]["clock"] = serde_json::json!(7);
    v["digest"] = serde_json::json!(lab_engine::engine::save::digest(&v["state"]));
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    load_refused(
        &path.display().to_string(),
        &[
            "the save file's state does not match its journal (damaged or edited by hand): state.clock: the journal gives 0, the file says 7",
        ],
    );
}

#[test]
fn a_journal_that_fails_to_replay_is_refused() {
    let (path, text) = fresh_save("replay");
    let edited = text.replacen("cni add c1 --node node-1", "cni add c1 --node node-9", 1);
    std::fs::write(&path, edited).unwrap();
    load_refused(
        &path.display().to_string(),
        &["journal[3] `cni add c1 --node node-9` failed on replay: node \"node-9\" not found"],
    );
}

#[test]
fn an_edited_journal_that_still_replays_does_not_match_the_state() {
    let (path, text) = fresh_save("journal-edit");
    let edited = text.replacen("--label app=web", "--label app=api", 1);
    std::fs::write(&path, edited).unwrap();
    load_refused(
        &path.display().to_string(),
        &["does not match its journal (damaged or edited by hand): state.objects.pods"],
    );
}

#[test]
fn a_missing_or_binary_save_file_is_refused() {
    let dir = scratch("binary");
    let p = dir.join("bin.json");
    std::fs::write(&p, [0xff, 0xfe, 0x00]).unwrap();
    load_refused(&p.display().to_string(), &["not UTF-8 text"]);
    load_refused(
        &dir.join("nope.json").display().to_string(),
        &["No such file or directory"],
    );
}

#[test]
fn load_flag_refuses_a_bad_save_with_exit_2() {
    let f = fixture("newer-version.json");
    let o = cli(&["--load", &f, "run", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "error: cannot load {f}: this save was written by a newer"
        )),
        "{err}"
    );
}

// ---- files that are not small regular files (issue 19) ----
//
// Every file the lab reads goes through `util::fs::read_capped`: a FIFO, a device, a
// directory or a socket is refused with "not a regular file", a file over its cap (1 MiB
// for conflists, presets, lessons and progress; 16 MiB for scripts and saves) with its
// size and the cap, and nothing is journaled or changed.

/// Run the binary, failing the test (instead of hanging it) if it does not finish in time.
fn cli_in_time(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .env("CNI_CSI_LAB_HISTORY", "")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(text) = stdin {
        let mut i = child.stdin.take().unwrap();
        i.write_all(text.as_bytes()).unwrap();
    }
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A lesson of one step that lints clean.
const TINY_LESSON: &str = "# A one-step lesson

```lesson
format_version: 1
id: tiny
title: A one-step lesson
chapter: 2
```

The default cluster has two nodes.

## Step 1 · A pod

Section: 2.1

A pod gets an address from its node's range.

**Task:** Create a pod `web`.

```lab
pod create web
```

```check
pod web phase Running
```

```hint
`pod create NAME`.
```
";

fn mkfifo(dir: &std::path::Path, name: &str) -> String {
    let p = dir.join(name);
    let st = Command::new("mkfifo")
        .arg(&p)
        .status()
        .expect("mkfifo runs");
    assert!(st.success(), "mkfifo {}", p.display());
    p.display().to_string()
}

/// Paths that are not regular files: a FIFO (nobody writes to it), a directory, a device.
fn not_regular(tag: &str, name: &str) -> Vec<String> {
    let dir = scratch(tag);
    let sub = dir.join(format!("dir-{name}"));
    std::fs::create_dir_all(&sub).unwrap();
    vec![
        mkfifo(&dir, name),
        sub.display().to_string(),
        "/dev/zero".to_string(),
    ]
}

#[test]
fn run_refuses_a_fifo_a_directory_and_a_device() {
    for p in not_regular("run", "script.lab") {
        let o = cli_in_time(&["run", &p], None);
        assert_eq!(o.status.code(), Some(2), "run {p}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("error: cannot read {p}: not a regular file")),
            "run {p}: {err}"
        );
    }
}

#[test]
fn run_dash_still_reads_stdin_and_accepts_a_byte_order_mark() {
    let o = cli_in_time(&["run", "-"], Some("\u{feff}echo from-stdin\n"));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "from-stdin\n");
}

#[test]
fn run_dev_null_is_an_empty_script() {
    let o = cli_in_time(&["run", "/dev/null"], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{o:?}");
}

#[test]
fn load_refuses_a_fifo_a_directory_and_a_device() {
    for p in not_regular("load", "lab.json") {
        let mut lab = busy_lab();
        refused(&mut lab, &format!("load {p}"), &[&p, "not a regular file"]);
        let o = cli_in_time(&["--load", &p, "run", "-"], Some(""));
        assert_eq!(o.status.code(), Some(2), "--load {p}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
            "--load {p}: {o:?}"
        );
    }
}

#[test]
fn conf_load_refuses_a_fifo_a_directory_and_a_device_and_journals_nothing() {
    // Named like a built-in example: the refused file is reported, not replaced by it.
    for p in not_regular("conf", "01-minimal.conflist") {
        let mut lab = busy_lab();
        let journal = lab.journal().entries.len();
        refused(
            &mut lab,
            &format!("cni conf load {p}"),
            &[&format!("cannot read {p}: not a regular file")],
        );
        assert_eq!(
            lab.journal().entries.len(),
            journal,
            "a refused load is not journaled"
        );
        let o = cli_in_time(&["--conflist", &p, "run", "-"], Some(""));
        assert_eq!(o.status.code(), Some(2), "--conflist {p}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
            "--conflist {p}: {o:?}"
        );
    }
}

#[test]
fn preset_refuses_a_fifo_a_directory_and_a_device() {
    for p in not_regular("preset", "cluster.lab") {
        let e = lab_engine::presets::build(&p, crate::common::disk())
            .err()
            .expect("refused");
        assert!(e.contains(&format!("{p}: not a regular file")), "{e}");
        let o = cli_in_time(&["--preset", &p, "run", "-"], Some(""));
        assert_eq!(o.status.code(), Some(2), "--preset {p}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
            "--preset {p}: {o:?}"
        );
    }
}

#[test]
fn a_lesson_directory_with_a_fifo_named_md_does_not_hang() {
    let dir = scratch("lesson-fifo");
    mkfifo(&dir, "trap.md");
    let o = cli_in_time(
        &["--lessons", &dir.display().to_string(), "lesson", "list"],
        None,
    );
    assert!(o.status.code().is_some(), "{o:?}");
}

#[test]
fn files_over_their_cap_are_refused_with_size_and_cap() {
    let dir = scratch("caps");
    // Sparse files: the size is what counts, no disk is used.
    let conf = dir.join("big.conflist");
    std::fs::File::create(&conf)
        .unwrap()
        .set_len((1 << 20) + 1)
        .unwrap();
    let c = conf.display().to_string();
    let mut lab = busy_lab();
    let journal = lab.journal().entries.len();
    refused(
        &mut lab,
        &format!("cni conf load {c}"),
        &[&format!(
            "cannot read {c}: 1048577 bytes is over the 1 MiB limit for a conflist"
        )],
    );
    assert_eq!(lab.journal().entries.len(), journal);
    let e = lab_engine::presets::build(&c, crate::common::disk())
        .err()
        .expect("refused");
    assert!(
        e.contains("1048577 bytes is over the 1 MiB limit for a preset"),
        "{e}"
    );
    let script = dir.join("big.lab");
    std::fs::File::create(&script)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let s = script.display().to_string();
    let o = cli_in_time(&["run", &s], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!(
            "cannot read {s}: 16777217 bytes is over the 16 MiB limit for a script"
        )),
        "{o:?}"
    );
    refused(
        &mut lab,
        &format!("load {s}"),
        &["16777217 bytes is over the 16 MiB limit for a save file"],
    );
}

#[test]
fn a_byte_order_mark_is_accepted_in_scripts_presets_and_conflists() {
    let dir = scratch("bom");
    let script = dir.join("bom.lab");
    std::fs::write(&script, "\u{feff}echo with-bom\n").unwrap();
    let o = cli_in_time(&["run", &script.display().to_string()], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "with-bom\n");

    let preset = dir.join("bom-preset.lab");
    std::fs::write(&preset, "\u{feff}node add solo\n").unwrap();
    let lab = lab_engine::presets::build(&preset.display().to_string(), crate::common::disk())
        .expect("accepted");
    assert!(lab.nodes().contains_key("solo"));

    let conf = dir.join("bom.conflist");
    let text = lab_engine::engine::cni_cmd::EXAMPLE_CONFLISTS[0].1;
    std::fs::write(&conf, format!("\u{feff}{text}")).unwrap();
    let mut lab = busy_lab();
    let out = lab
        .execute(&format!("cni conf load {} --node node-1", conf.display()))
        .expect("accepted")
        .to_text();
    assert!(out.contains("bom.conflist written on node-1"), "{out}");
}

/// Issue 19: `lesson lint` on a `--lessons DIR` reports every `.md` entry it cannot read —
/// a FIFO, a symbolic link that loops, a dangling link, a directory named `x.md` — as an
/// error naming the entry and why, instead of skipping it and saying "no problems"; the
/// readable lesson beside them is still linted and listed.
#[test]
fn lesson_lint_reports_entries_it_cannot_read() {
    let dir = scratch("lesson-unreadable");
    // A one-step lesson beside the entries: linting it (its decoys included) takes a
    // fraction of a second, so the time limit only catches a hang, even on a loaded machine
    // (a real chapter's lint took 9-13 s of CPU there).
    std::fs::write(dir.join("tiny.md"), TINY_LESSON).unwrap();
    let fifo = mkfifo(&dir, "pipe.md");
    std::fs::create_dir_all(dir.join("folder.md")).unwrap();
    let looped = dir.join("loop.md");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let dangling = dir.join("gone.md");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    let d = dir.display().to_string();
    let o = cli_in_time(&["--lessons", &d, "lesson", "lint"], None);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "lint fails: {out}");
    for (entry, why) in [
        (fifo.as_str(), "not a regular file (a FIFO)"),
        (
            &format!("{d}/folder.md"),
            "not a regular file (a directory)",
        ),
        (&format!("{d}/loop.md"), "a symbolic link that loops"),
        (&format!("{d}/gone.md"), "a symbolic link to nothing"),
    ] {
        assert!(
            out.lines().any(|l| l.contains(entry) && l.contains(why)),
            "{entry}: {why} missing from:\n{out}"
        );
    }
    assert!(!out.contains("no problems"), "{out}");
    // The readable lesson is still there.
    let o = cli_in_time(&["--lessons", &d, "lesson", "list"], None);
    assert!(String::from_utf8_lossy(&o.stdout).contains("tiny"), "{o:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- clear errors (issue 19) ----

/// `/proc` files are regular but report a length of 0: they are read up to the cap (never
/// unbounded), and their text is refused as a script or preset naming the first line.
#[cfg(target_os = "linux")]
#[test]
fn proc_files_are_capped_and_refused_by_their_first_line() {
    use cni_csi_lab::files::{CONFIG_CAP, read_capped};
    let status = std::path::Path::new("/proc/self/status");
    let e = read_capped(status, "a preset", 16).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("bytes is over the 16 bytes limit for a preset"),
        "{e}"
    );
    assert!(read_capped(status, "a preset", CONFIG_CAP).is_ok());
    let e = lab_engine::presets::build("/proc/self/status", crate::common::disk())
        .err()
        .expect("refused");
    assert!(
        e.starts_with("/proc/self/status:1: unknown command \"Name:\""),
        "{e}"
    );
    let o = cli_in_time(&["--preset", "/proc/self/status", "run", "-"], Some(""));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("/proc/self/status:1: unknown command"),
        "{o:?}"
    );
    let o = cli_in_time(&["run", "/proc/self/status"], None);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown command \"Name:\""), "{err}");
    assert!(err.contains("(line 1: Name:"), "{err}");
}

#[test]
fn a_directory_given_as_a_preset_or_script_is_refused() {
    let dir = scratch("dir-preset");
    let d = dir.display().to_string();
    let e = lab_engine::presets::build(&d, crate::common::disk())
        .err()
        .expect("refused");
    assert_eq!(
        e,
        format!("cannot read preset {d}: not a regular file (a directory)")
    );
    let o = cli_in_time(&["--preset", &d, "run", "-"], Some(""));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a regular file (a directory)"),
        "{o:?}"
    );
}

#[test]
fn an_empty_file_name_is_refused_before_any_file_is_touched() {
    let mut lab = busy_lab();
    for line in ["save ''", "load ''", "cni conf load ''"] {
        refused(
            &mut lab,
            line,
            &["invalid value \"\" for FILE: the file name is empty"],
        );
    }
}

#[test]
fn quit_in_a_script_is_explained() {
    let o = cli_in_time(&["run", "-"], Some("node list\nquit\n"));
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: \"quit\" ends an interactive session (the REPL or the dashboard); a script (`run FILE`, a preset) stops after its last command"),
        "{err}"
    );
    assert!(err.contains("(line 2: quit)"), "{err}");
}

#[test]
fn a_huge_bad_word_is_cut_in_the_error_and_the_line_echo() {
    let word = "x".repeat(10 << 20);
    let o = cli_in_time(&["run", "-"], Some(&format!("{word}\n")));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.len() < 1000, "{} bytes of stderr", err.len());
    // Longer than any command (MAX_LINE): refused whole, saying how long it is.
    assert!(
        err.contains(&format!(
            "{} characters: longer than any command",
            word.len()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "(line 1: {}… ({} bytes))",
            "x".repeat(60),
            word.len()
        )),
        "{err}"
    );
    // A long word in a line the lab reads is cut in the error.
    let word = "x".repeat(4000);
    let o = cli_in_time(&["run", "-"], Some(&format!("{word}\n")));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "unknown command \"{}… ({} bytes)\"",
            "x".repeat(60),
            word.len()
        )),
        "{err}"
    );
}

/// Issue 19: a negative `--max-entries` reaches the driver, which refuses it as csi.proto
/// says (INVALID_ARGUMENT), and a negative `--speed` gets playback's own message: neither is
/// taken for an unknown flag `-1`.
#[test]
fn negative_max_entries_and_speed_are_values_not_flags() {
    let mut desk = crate::common::desk();
    let e = desk
        .execute("csi list-volumes --max-entries -1")
        .expect_err("refused by the driver");
    assert!(
        e.message
            .contains("INVALID_ARGUMENT (3) from ListVolumes: max_entries must not be negative"),
        "{}",
        e.message
    );
    let e = desk
        .execute("lesson play ch2-core-ideas --speed -1")
        .expect_err("refused as the line parses");
    assert!(
        e.message
            .contains("invalid value \"-1\" for --speed: expected a number above 0"),
        "{}",
        e.message
    );
}
