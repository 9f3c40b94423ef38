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
