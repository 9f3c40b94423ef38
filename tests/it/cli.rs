//! Smoke tests of the binary: flags, exit codes (0 ok, 1 a command failed, 2 bad usage),
//! stdout for results and stderr for errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn lab(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .env("CNI_CSI_LAB_HISTORY", "")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the script");
    child.wait_with_output().expect("the binary finishes")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("temp file");
    p
}

#[test]
fn help_and_version() {
    let o = lab(&["--help"], "");
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for word in [
        "run",
        "repl",
        "completions",
        "--preset",
        "--conflist",
        "--color",
    ] {
        assert!(out.contains(word), "{word} missing from --help:\n{out}");
    }
    let o = lab(&["--version"], "");
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).starts_with("cni-csi-lab "));
}

#[test]
fn a_failing_script_exits_1_with_the_error_on_stderr() {
    let f = temp_file(
        "fail.lab",
        "node list\npod create web --node node-9\necho never\n",
    );
    let o = lab(&["run", f.to_str().expect("utf-8 path")], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("node-1"));
    assert!(
        !text(&o.stdout).contains("never"),
        "stops at the first failure"
    );
    assert!(text(&o.stderr).contains("error: node \"node-9\" not found"));
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(lab(&["--bogus"], "").status.code(), Some(2));
    assert_eq!(lab(&["run"], "").status.code(), Some(2));
    assert_eq!(
        lab(&["run", "/no/such/file.lab"], "").status.code(),
        Some(2)
    );
    let o = lab(&["--preset", "nine-nodes", "run", "-"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("presets are: default, empty"));
    assert_eq!(
        lab(&["--empty", "--preset", "default", "run", "-"], "")
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn completions_print_a_script() {
    let o = lab(&["completions", "bash"], "");
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("cni-csi-lab"));
    assert!(text(&o.stdout).len() > 500);
}

#[test]
fn stdin_that_is_not_a_terminal_is_a_script() {
    let o = lab(&[], "node list\nget pods\n");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("NAME     STATUS"), "{out}");
    assert!(!out.contains('\x1b'), "no colours in a pipe");
    let o = lab(&["run", "-"], "nod\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("did you mean \"node\"?"));
}

/// While a trace is stepped, Enter is the next hop and `q` ends the stepping, not the
/// session; after it `q` quits again.
#[test]
fn the_plain_repl_steps_a_trace_with_enter_and_q() {
    let o = lab(
        &["repl", "--plain"],
        "pod create web --node node-1\npod create db --node node-2\ntrace web db --step\n\nq\nnode list\nq\necho not reached\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("── hop 2/12: default/web · pod route ──"),
        "{out}"
    );
    assert!(out.contains("stepping ended at hop 2/12"), "{out}");
    assert!(out.contains("node-2"), "the session went on: {out}");
    assert!(!out.contains("not reached"), "{out}");
    // `quit` quits even while stepping.
    let o = lab(
        &["repl", "--plain"],
        "pod create web --node node-1\ntrace web node-2 --step\nquit\necho not reached\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stdout).contains("not reached"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn the_plain_repl_keeps_going_after_errors() {
    let o = lab(&["repl", "--plain"], "nod\nnode list\nquit\n");
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("lab[2 nodes · 0 pods]> "));
    assert!(text(&o.stdout).contains("node-2"));
    assert!(text(&o.stderr).contains("unknown command"));
    // --color always paints even in a pipe.
    let o = lab(&["--color", "always", "repl", "--plain"], "nod\n");
    assert!(text(&o.stderr).contains('\x1b'));
}

#[test]
fn presets_and_conflist_shape_the_starting_cluster() {
    let o = lab(&["--preset", "three-nodes", "run", "-"], "node list\n");
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("node-3"));
    let o = lab(&["--empty", "run", "-"], "node list\n");
    assert!(!text(&o.stdout).contains("node-1"));
    let conf = temp_file(
        "my.conflist",
        r#"{"cniVersion":"1.0.0","name":"mine","plugins":[{"type":"bridge","bridge":"br9","ipam":{"type":"host-local","ranges":[[{"subnet":"{{.PodCIDR}}"}]]}}]}"#,
    );
    let o = lab(
        &["--conflist", conf.to_str().expect("utf-8 path"), "run", "-"],
        "cni conf show --node node-2\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("* 00-my.conflist"), "{out}");
    assert!(out.contains("10.244.2.0/24"), "{out}");
    assert!(text(&o.stderr).contains("note: loaded as 00-my.conflist"));
    let o = lab(&["--conflist", "/no/such.conflist", "run", "-"], "");
    assert_eq!(o.status.code(), Some(2));
}

/// Start the binary with stdin held open (so it blocks reading), wait until it printed
/// `ready` on stdout, send `signal` with `kill`, and return its exit code.
fn exit_code_after_signal(args: &[&str], ready: &str, signal: &str) -> Option<i32> {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .env("CNI_CSI_LAB_HISTORY", "")
        .env("CNI_CSI_LAB_PROGRESS", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"echo ready\n").unwrap();
    stdin.flush().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 1024];
    while !seen.contains(ready) {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "{args:?} ended before {ready:?}: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    // The session is now blocked reading its next line.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let st = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(st.success());
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("{args:?} did not end on SIG{signal}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(stdin);
    status.code()
}

/// Issue 19: a session ended by SIGTERM, SIGHUP or SIGINT exits with 128 + the signal
/// (143, 129, 130) — an exit status, not death by the signal — in the plain REPL and in
/// `run -` (a script still being read), while they wait for input.
#[test]
fn signals_end_the_repl_and_run_with_128_plus_n() {
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        assert_eq!(
            exit_code_after_signal(&["repl", "--plain"], "ready", signal),
            Some(code),
            "repl --plain on SIG{signal}"
        );
    }
    // `run -` reads the whole script before running it: it is blocked in that read.
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
            .args(["run", "-"])
            .env("CNI_CSI_LAB_HISTORY", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        let stdin = child.stdin.take().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let st = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(st.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "run - on SIG{signal}");
    }
}

/// `lesson play ID --record FILE.cast` writes an asciicast v2 file a player reads: a header
/// object, then `[seconds, "o", data]` events in time order, with the lesson's pacing; the
/// same lesson gives the same file; a bad lesson leaves no file.
#[test]
fn lesson_play_records_an_asciicast() {
    let cast = temp_file("ch2.cast", "");
    let path = cast.to_string_lossy().into_owned();
    let o = lab(&["lesson", "play", "ch2-core-ideas", "--record", &path], "");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("recorded lesson ch2-core-ideas"));
    let first = std::fs::read_to_string(&cast).expect("the cast");
    let mut lines = first.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(100), Some(30))
    );
    let mut last = 0.0;
    let mut typed = String::new();
    let mut markers = Vec::new();
    for l in lines {
        let e: serde_json::Value = serde_json::from_str(l).expect("an event is JSON");
        let at = e[0].as_f64().expect("time");
        assert!(at >= last, "events go forward in time: {l}");
        last = at;
        match e[1].as_str() {
            Some("o") => typed.push_str(e[2].as_str().expect("data")),
            Some("m") => markers.push(e[2].as_str().expect("label").to_string()),
            _ => panic!("an output or a marker event: {l}"),
        }
    }
    assert!(last > 30.0, "the lesson's pacing is recorded ({last} s)");
    // A marker opens each step, so a player can jump from step to step.
    assert!(markers.len() > 10, "{markers:?}");
    assert!(
        markers.iter().any(|m| m.starts_with("Step 1/")),
        "{markers:?}"
    );
    assert!(typed.contains("lab> "), "commands are typed");
    assert!(
        !typed.replace("\r\n", "").contains('\n'),
        "newlines are CR LF"
    );
    // Deterministic: the same lesson makes the same file.
    let o = lab(&["lesson", "play", "ch2-core-ideas", "--record", &path], "");
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&cast).unwrap(), first);
    // A lesson that does not exist: an error, and no file.
    let bad = temp_file("bad.cast", "");
    std::fs::remove_file(&bad).unwrap();
    let o = lab(
        &[
            "lesson",
            "play",
            "nosuch",
            "--record",
            &bad.to_string_lossy(),
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no lesson \"nosuch\""));
    assert!(!bad.exists());
    // Only `lesson play` records.
    let o = lab(&["lesson", "list", "--record", &path], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--record records `lesson play ID`"));
}

/// QA 24 §2: a usage error in `lesson play ID --record FILE` (a lesson that does not
/// exist, a bad --speed) leaves an existing FILE as it was, as `run --record` does.
#[test]
fn lesson_play_record_leaves_an_existing_file_on_a_usage_error() {
    for (args, code) in [
        (["nosuch", "--speed", "1"], 1),
        (["ch7-hands-on", "--speed", "0"], 2),
        (["ch7-hands-on", "--speed", "abc"], 2),
    ] {
        let keep = temp_file("keep.cast", "important\n");
        let path = keep.to_string_lossy().into_owned();
        let mut words = vec!["lesson", "play"];
        words.extend(args);
        words.extend(["--record", &path]);
        let o = lab(&words, "");
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o.stderr));
        assert_eq!(
            std::fs::read_to_string(&keep).expect("the file is still there"),
            "important\n",
            "{args:?}"
        );
    }
}

/// QA 24 §7: every bad `lesson play --speed` is bad usage (exit 2, as scripts.md says),
/// and each message says what is accepted.
#[test]
fn every_bad_lesson_play_speed_exits_2_and_says_what_is_accepted() {
    for speed in ["abc", "0", "-1", "inf", ""] {
        let o = lab(&["lesson", "play", "ch7-hands-on", "--speed", speed], "");
        assert_eq!(o.status.code(), Some(2), "--speed {speed:?}");
        let err = text(&o.stderr);
        assert!(
            err.starts_with(&format!(
                "error: invalid value {speed:?} for --speed: expected a number above 0, e.g. 2 for twice as fast"
            )),
            "{err}"
        );
    }
    // An unknown flag is bad usage too; a lesson that fails to play is not.
    let o = lab(&["lesson", "play", "ch7-hands-on", "--bogus"], "");
    assert_eq!(o.status.code(), Some(2));
    let o = lab(&["lesson", "play", "nosuch"], "");
    assert_eq!(o.status.code(), Some(1));
}

/// Issue 38, small things: a here-document after a command that reads none was swallowed
/// (exit 0); an indented `  EOF` ended a `<<EOF` document.
#[test]
fn a_here_document_goes_only_to_a_command_that_reads_one() {
    let o = lab(
        &["run", "-"],
        "pod create web2 --node node-1 <<EOF\nx\nEOF\nget pods\n",
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "`pod create` reads no standard input, so the here-document after it would be ignored"
        ),
        "{err}"
    );
    assert!(!text(&o.stdout).contains("web2"), "nothing was run");
    // `  EOF` is a line of the document, as in bash: the document never ends.
    let o = lab(
        &["run", "-"],
        "apply -f - <<EOF\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  EOF\nget ns\n",
    );
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("never ends") && err.contains("\"  EOF\""),
        "{err}"
    );
}

/// Issue 38: `save /missing/x/y/../z.json` created /missing/x; `save /proc/version` said
/// "No such file or directory" of a file that is there.
#[test]
fn save_creates_no_directories_and_names_the_real_reason() {
    let base = std::env::temp_dir().join(format!("lab-cli-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let missing = base.join("missing");
    let target = format!("{}/x/y/../z.json", missing.display());
    let o = lab(&["run", "-"], &format!("save {target}\n"));
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "the directory {} does not exist",
            missing.display()
        )) && err.contains("the lab creates no directories"),
        "{err}"
    );
    assert!(!missing.exists(), "no directory was created");
    // An existing directory works as before.
    let o = lab(&["run", "-"], &format!("save {}/ok.json\n", base.display()));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(base.join("ok.json").exists());
    if std::path::Path::new("/proc/version").exists() {
        let o = lab(&["run", "-"], "save /proc/version\n");
        assert_eq!(o.status.code(), Some(1));
        let err = text(&o.stderr);
        assert!(
            err.contains("the directory /proc takes no new files"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// Issue 38: `--preset FILE` holding `save X` wrote X each time the lab started with it.
#[test]
fn a_preset_writes_no_files() {
    let out = std::env::temp_dir().join(format!("lab-cli-preset-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let preset = temp_file(
        "writes.preset",
        &format!("node add node-3\nsave {}\n", out.display()),
    );
    let o = lab(
        &["--preset", preset.to_str().unwrap(), "run", "/dev/null"],
        "",
    );
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("a preset builds a cluster and writes no files"),
        "{err}"
    );
    assert!(!out.exists(), "the preset wrote {}", out.display());
    // Once the lab has started, save writes as always.
    let o = lab(&["run", "-"], &format!("save {}\n", out.display()));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.exists());
    let _ = std::fs::remove_file(&out);
}

/// Issue 38: `--version extra` printed the version and exited 0.
#[test]
fn version_takes_no_other_arguments() {
    let o = lab(&["--version", "extra"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--version takes no other arguments (given: --version extra)"),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stdout).is_empty());
    let o = lab(&["-V"], "");
    assert_eq!(o.status.code(), Some(0));
}

/// Issue 38: a REPL fed by a pipe showed `steps 1/20` and kept nothing; it says so.
#[test]
fn a_piped_repl_says_its_lesson_progress_is_not_kept() {
    let o = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(["repl"])
        .env("CNI_CSI_LAB_HISTORY", "")
        .env_remove("CNI_CSI_LAB_PROGRESS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .expect("piped")
                .write_all(b"lesson start ch2-core-ideas\nlesson stop\n")?;
            c.wait_with_output()
        })
        .expect("the binary runs");
    let out = text(&o.stdout);
    assert!(
        out.contains("Progress is kept in memory only and goes when this session ends: this REPL reads a pipe or a file"),
        "{out}"
    );
    // QA 24 §8: leaving says what is true, not "progress kept … resumes it".
    assert!(
        out.contains("Left lesson ch2-core-ideas; progress kept in memory only: `lesson start ch2-core-ideas` resumes it in this session, not in a new one; this REPL reads a pipe or a file"),
        "{out}"
    );
    assert!(!out.contains("progress kept. "), "{out}");
}

/// `run FILE --step`: a teacher paces a script of their own: captions from its comments,
/// each command typed out, Enter for the next, `q` to stop; `--pace` plays it through.
#[test]
fn a_teacher_paces_a_script_with_step_and_pace() {
    let f = temp_file(
        "paced.lab",
        "# First a pod.\npod create a --node node-1\n# Then another.\npod create b --node node-1\nget pods\n",
    );
    let path = f.to_str().unwrap();
    // Each caption, then a wait before its command (the first too).
    let o = lab(&["run", path, "--step"], "\n\nq\n");
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        out.starts_with("First a pod.\n  [Enter: next · q Enter: stop] lab> pod create a --node node-1\npod/a created\n"),
        "{out}"
    );
    assert!(
        out.contains("Then another.\n  [Enter: next · q Enter: stop] lab> pod create b --node node-1\npod/b created\n"),
        "{out}"
    );
    assert!(
        !out.contains("lab> get pods"),
        "q stopped before the third: {out}"
    );
    let o = lab(&["run", path, "--pace", "0"], "");
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.contains("lab> get pods\nNAME"), "{out}");
    // A command that does not end as written stops the playback there: exit 1.
    let bad = temp_file(
        "paced-bad.lab",
        "pod create a --node node-9\npod create b --node node-1\n",
    );
    let o = lab(&["run", bad.to_str().unwrap(), "--pace", "0"], "");
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("── playback stopped: \"pod create a --node node-9\" failed"),
        "{out}"
    );
    assert!(!out.contains("pod create b"), "{out}");
    let o = lab(&["run", path, "--step", "--echo"], "");
    assert_eq!(
        o.status.code(),
        Some(2),
        "--step and --echo do not go together"
    );
}

/// An asciicast v2 file as a player reads it: the header (version 2, a size), then events
/// `[seconds, "o"|"m", text]` in time order; returns the header, the output and the markers.
fn read_cast(path: &std::path::Path) -> (serde_json::Value, String, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("the recording exists");
    let mut lines = text.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().expect("a header")).expect("the header is JSON");
    assert_eq!(header["version"], 2, "{header}");
    assert!(header["width"].as_u64().is_some_and(|w| w > 0), "{header}");
    assert!(header["height"].as_u64().is_some_and(|h| h > 0), "{header}");
    let (mut out, mut markers, mut last) = (String::new(), Vec::new(), 0.0);
    for l in lines {
        let e: serde_json::Value = serde_json::from_str(l).expect("an event is JSON");
        let ev = e.as_array().expect("an event is an array");
        assert_eq!(ev.len(), 3, "{l}");
        let at = ev[0].as_f64().expect("a time");
        assert!(at >= last, "events go forward in time: {l}");
        last = at;
        let data = ev[2].as_str().expect("text").to_string();
        match ev[1].as_str() {
            Some("o") => out.push_str(&data),
            Some("m") => markers.push(data),
            _ => panic!("an output or a marker event: {l}"),
        }
    }
    (header, out, markers)
}

/// Issue 36: every front end that takes `--record` writes a valid asciicast v2 file — `run
/// FILE`, `run FILE --pace`, `repl --plain` (a marker at each lesson step) — and the ones
/// with nothing to record refuse the flag.
#[test]
fn every_record_flag_writes_an_asciicast_or_is_refused() {
    let script = temp_file(
        "rec.lab",
        "# A pod.\npod create a --node node-1\nget pods\n",
    );
    let cast = temp_file("run.cast", "");
    std::fs::remove_file(&cast).unwrap();
    let o = lab(
        &[
            "run",
            script.to_str().unwrap(),
            "--record",
            cast.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (header, out, _) = read_cast(&cast);
    assert!(
        header["title"].as_str().unwrap().contains("rec.lab"),
        "{header}"
    );
    assert!(out.contains("pod/a created\r\n"), "{out}");
    assert_eq!(
        out.replace("\r\n", "\n"),
        text(&o.stdout),
        "the cast holds what was printed"
    );

    let paced = temp_file("paced.cast", "");
    let o = lab(
        &[
            "run",
            script.to_str().unwrap(),
            "--pace",
            "10ms",
            "--record",
            paced.to_str().unwrap(),
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (_, out, _) = read_cast(&paced);
    assert!(out.contains("A pod."), "the caption: {out}");
    assert!(out.contains("lab> pod create a --node node-1"), "{out}");

    let plain = temp_file("plain.cast", "");
    let o = lab(
        &["repl", "--plain", "--record", plain.to_str().unwrap()],
        "node list\nlesson start ch2-core-ideas\nskip\nbogus\n",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (_, out, markers) = read_cast(&plain);
    assert!(
        out.contains("]> node list\r\n"),
        "the prompt and the line read: {out}"
    );
    assert!(out.contains("node-1"), "{out}");
    assert!(
        out.contains("error: unknown command \"bogus\""),
        "stderr too: {out}"
    );
    assert_eq!(markers.len(), 2, "a marker per step reached: {markers:?}");
    assert!(markers[0].starts_with("Step 1 · "), "{markers:?}");
    assert!(markers[1].starts_with("Step 2 · "), "{markers:?}");

    // `lesson play` in the plain REPL: one marker per step (and per quiz, after the
    // lesson's title), each before its heading in the output.
    let played = temp_file("played.cast", "");
    let o = lab(
        &["repl", "--plain", "--record", played.to_str().unwrap()],
        "lesson play ch2-core-ideas --speed 1000\n",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (_, out, markers) = read_cast(&played);
    let steps: Vec<&String> = markers.iter().filter(|m| m.starts_with("Step ")).collect();
    assert_eq!(steps.len(), 21, "{markers:?}");
    for (i, m) in steps.iter().enumerate() {
        assert!(
            m.starts_with(&format!("Step {}/21 · ", i + 1)),
            "{markers:?}"
        );
        assert!(out.contains(&format!("── {m}")), "{m} is shown too");
    }
    assert!(markers[0].starts_with("Chapter 2"), "{markers:?}");
    assert_eq!(
        markers.iter().filter(|m| m.starts_with("Quiz ")).count(),
        8,
        "{markers:?}"
    );
    assert!(out.contains("lab> cni add c1 --node node-1"), "{out}");

    // Nothing to record: refused, no file.
    let none = temp_file("none.cast", "");
    std::fs::remove_file(&none).unwrap();
    for args in [
        vec!["completions", "bash"],
        vec!["csi", "serve", "--socket", "/tmp/never.sock"],
    ] {
        let mut args = args.clone();
        args.extend(["--record", none.to_str().unwrap()]);
        let o = lab(&args, "");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains("--record records"),
            "{}",
            text(&o.stderr)
        );
        assert!(!none.exists());
    }
    // A file that cannot be written: an error before anything runs.
    let o = lab(
        &[
            "run",
            script.to_str().unwrap(),
            "--record",
            "/nonexistent/dir/x.cast",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot record to /nonexistent/dir/x.cast"));
    assert!(text(&o.stdout).is_empty(), "nothing ran");
}

/// Issue 36: `cni-csi-lab lesson verify nosuch` says what is wrong without the script
/// runner's `(line 1: …)`.
#[test]
fn a_lesson_command_from_the_shell_fails_cleanly() {
    let o = lab(&["lesson", "verify", "nosuch"], "");
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: no lesson \"nosuch\"; lessons are: ch2-core-ideas"),
        "{err}"
    );
    assert!(!err.contains("line 1"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Issue 36: with stdin not a terminal and no command, the lab runs what stdin holds as a
/// script (documented: `echo 'node list' | cni-csi-lab`), and says so when it held none
/// instead of printing nothing at all.
#[test]
fn stdin_not_a_terminal_is_a_script_and_an_empty_one_is_said() {
    let o = lab(&[], "node list\n");
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("node-1"));
    assert!(text(&o.stderr).is_empty(), "{}", text(&o.stderr));
    let o = lab(&[], "");
    assert!(o.status.success());
    assert!(text(&o.stdout).is_empty());
    let err = text(&o.stderr);
    assert!(err.contains("no commands on stdin"), "{err}");
    assert!(err.contains("cni-csi-lab repl"), "{err}");
}

/// The README's sample session is what the lab prints: its commands replayed, each line
/// compared (a line ending in `…` matches what starts like it; a line `…` alone stands for
/// the lines left out).
#[test]
fn the_readme_sample_session_is_what_the_lab_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split("## What a session looks like")
        .nth(1)
        .expect("the README has a sample session");
    let block = section
        .split("```")
        .nth(1)
        .expect("the sample is a code block")
        .trim_start_matches(|c| c != '\n')
        .trim_start_matches('\n');
    let expected: Vec<&str> = block.lines().collect();
    let commands: String = expected
        .iter()
        .filter_map(|l| l.strip_prefix("lab> "))
        .map(|c| format!("{c}\n"))
        .collect();
    assert!(!commands.is_empty(), "{block}");
    let o = lab(&["run", "--echo", "-"], &commands);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let actual = text(&o.stdout);
    let actual: Vec<&str> = actual.lines().collect();
    let mut at = 0;
    let mut skipping = false;
    for want in expected {
        if want.trim() == "…" {
            skipping = true;
            continue;
        }
        let matches = |have: &str| match want.strip_suffix('…') {
            Some(head) => have.starts_with(head),
            None => have == want,
        };
        loop {
            let have = actual.get(at).unwrap_or_else(|| {
                panic!(
                    "README line {want:?} is not printed by the lab:\n{}",
                    actual.join("\n")
                )
            });
            at += 1;
            if matches(have) {
                break;
            }
            assert!(
                skipping,
                "README shows {want:?} where the lab prints {have:?}:\n{}",
                actual.join("\n")
            );
        }
        skipping = false;
    }
}

/// API errors read as kubectl 1.31's `checkErr` prints them: a status through
/// `StandardErrorMessage` (`Error from server (Forbidden): …`), an Invalid status from its
/// details (`The Pod "Web" is invalid: …`, one cause on the line, several as `* ` lines),
/// neither with `error: `; anything else with `error: `. A claim's resize meets the API
/// server's update validation (RecoverVolumeExpansionFailure off, 1.31's default) before
/// the PersistentVolumeClaimResize admission plugin.
#[test]
fn api_errors_print_as_kubectl_prints_them() {
    let o = lab(
        &["repl", "--plain"],
        "pvc expand nope 5Gi\n\
         pod create Web --node node-1\n\
         pvc create z --size 1Gi --class nope\n\
         pvc expand z 5Gi\n\
         pvc expand z 500Mi\n\
         sc create fixed --no-expansion\n\
         pvc create b --size 1Gi --class fixed\n\
         pvc expand b 2Gi\n\
         pvc expand b 500Mi\n\
         nod\n",
    );
    let err = text(&o.stderr);
    let immutable = "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
    let shrink =
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value";
    let want = [
        "Error from server (NotFound): persistentvolumeclaims \"nope\" not found".to_string(),
        "The Pod \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string(),
        format!("The PersistentVolumeClaim \"z\" is invalid: {immutable}"),
        "The PersistentVolumeClaim \"z\" is invalid: ".to_string(),
        format!("* {immutable}"),
        format!("* {shrink}"),
        "Error from server (Forbidden): persistentvolumeclaims \"b\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize".to_string(),
        format!("The PersistentVolumeClaim \"b\" is invalid: {shrink}"),
        "error: unknown command \"nod\"; did you mean \"node\"?".to_string(),
    ];
    let got: Vec<&str> = err.lines().filter(|l| !l.starts_with("usage")).collect();
    assert_eq!(
        got[..want.len()],
        want.iter().map(String::as_str).collect::<Vec<_>>()[..],
        "{err}"
    );
}
