//! Nothing from outside reaches the terminal raw (issue 19): OSC (`\x1b]0;pwned\x07`,
//! retitles the window) and CSI (`\x1b[2J`, clears the screen) sequences fed through
//! names, script lines, error echoes, lesson titles, conflists and save journals come out
//! escaped (`\u{1b}`) on every output path of the binary: `run FILE`, `run -`, `repl
//! --plain`, `lesson list`, `load`, startup errors, and the colour painter.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const OSC: &str = "\x1b]0;pwned\x07";
const CSI: &str = "\x1b[2J";

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-esc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lab(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .env("CNI_CSI_LAB_HISTORY", "")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// No ESC byte at all (and no other C0/C1 control but tab and newline) in either stream.
fn clean(what: &str, o: &Output) {
    for (name, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{what}: raw control character on {name}:\n{text}"
        );
    }
}

fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Lines that echo outside text: a bad pod name, an echo, an unknown command, NotFound
/// errors, a conflist name given with --as, a lesson-free `lesson start` of a bad id.
fn hostile_script() -> String {
    [
        format!("pod create web{OSC} --node node-1"),
        format!("echo title{OSC}clear{CSI}"),
        format!("cni conf load assets/conflists/01-minimal.conflist --as 'z{CSI}.conflist'"),
        "cni conf show --node node-1".to_string(),
        format!("get pod nope{CSI}"),
        format!("pod delete gone{OSC}"),
        format!("describe pod x{CSI}"),
        format!("lesson start no{OSC}such"),
        format!("frobnicate{CSI}"),
        format!("cni add c1 --node node-{CSI}"),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn a_script_run_from_a_file_from_stdin_and_in_the_plain_repl_prints_no_raw_escape() {
    let dir = scratch("script");
    let f = dir.join("hostile.lab");
    std::fs::write(&f, hostile_script()).unwrap();
    let file = f.display().to_string();
    let o = lab(&["run", "--keep-going", "--echo", &file], "");
    clean("run FILE", &o);
    let out = both(&o);
    assert!(
        out.contains("title\\u{1b}]0;pwned\\u{7}clear\\u{1b}[2J"),
        "{out}"
    );
    assert!(out.contains("(line 9: frobnicate\\u{1b}[2J)"), "{out}");
    assert!(out.contains("z\\u{1b}[2J.conflist"), "{out}");
    clean(
        "run -",
        &lab(&["run", "--keep-going", "-"], &hostile_script()),
    );
    // Without --keep-going the first error's `(line N: …)` echo.
    let o = lab(&["run", "-"], &format!("echo ok\nnode add n{CSI}\n"));
    clean("run - stops", &o);
    assert!(
        both(&o).contains("(line 2: node add n\\u{1b}[2J)"),
        "{}",
        both(&o)
    );
    clean(
        "repl --plain",
        &lab(&["repl", "--plain"], &hostile_script()),
    );
}

#[test]
fn the_colour_painter_escapes_outside_text_too() {
    let o = lab(&["--color", "always", "repl", "--plain"], &hostile_script());
    let out = both(&o);
    // The painter's own styles are escape sequences; the hostile ones are not there.
    assert!(!out.contains(OSC) && !out.contains(CSI), "{out:?}");
    assert!(!out.contains("\x1b]"), "{out:?}");
}

#[test]
fn a_lesson_title_and_a_broken_lesson_file_name_are_escaped_in_lesson_list() {
    let dir = scratch("lessons");
    let good = format!(
        "```lesson\nformat_version: 1\nid: evil\ntitle: Evil{OSC} title{CSI}\nchapter: 7\n```\n\n## Step 1 · Step{CSI}\n\nSection: 7.4{OSC}\n\nText{CSI}.\n\n**Task:** Do{OSC}.\n\n```lab\necho hi{CSI}\n```\n\n```check\ncommand ran \"echo\"\n```\n\n```hint\nhint{OSC}\n```\n"
    );
    std::fs::write(dir.join("evil.md"), good).unwrap();
    std::fs::write(
        dir.join(format!("broken{CSI}.md")),
        format!("# no lesson block{OSC}\n"),
    )
    .unwrap();
    let d = dir.display().to_string();
    for args in [
        vec!["--lessons", &d, "lesson", "list"],
        vec!["--lessons", &d, "lesson", "lint"],
        vec!["--lessons", &d, "lesson", "play", "evil"],
        vec!["--lessons", &d, "lesson", "verify", "evil"],
    ] {
        let o = lab(&args, "");
        clean(&format!("{args:?}"), &o);
    }
    let o = lab(&["--lessons", &d, "lesson", "list"], "");
    assert!(
        both(&o).contains("Evil\\u{1b}]0;pwned\\u{7} title"),
        "{}",
        both(&o)
    );
    let o = lab(
        &["--lessons", &d, "repl", "--plain"],
        "lesson start evil\nhint\nskip\n",
    );
    clean("lesson session", &o);
}

#[test]
fn a_conflist_with_escapes_in_its_name_and_content_is_escaped() {
    let dir = scratch("conflist");
    // A JSON string may carry an ESC as \u001b: the parsed network name holds a raw ESC.
    let conf = r#"{
  "cniVersion": "1.0.0",
  "name": "net\u001b]0;pwned\u0007\u001b[2J",
  "plugins": [
    { "type": "bridge", "bridge": "cni0", "isGateway": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.244.1.0/24" }]] } }
  ]
}"#;
    let f = dir.join(format!("00-evil{CSI}.conflist"));
    std::fs::write(&f, conf).unwrap();
    let bad = dir.join(format!("bad{OSC}.conflist"));
    std::fs::write(&bad, format!("{{ \"name\": \"x{CSI}\" ,, }}")).unwrap();
    let script = format!(
        "cni conf load '{}' --node node-1\ncni conf show --node node-1\ncni add c1 --node node-1\nshow ipam --node node-1\nshow wire 0\nshow events\ncni conf load '{}'\n",
        f.display(),
        bad.display()
    );
    let o = lab(&["run", "--keep-going", "--echo", "-"], &script);
    clean("cni conf load", &o);
    let o = lab(
        &["--conflist", &f.display().to_string(), "run", "-"],
        "node list\n",
    );
    clean("--conflist", &o);
    let o = lab(
        &["--conflist", &bad.display().to_string(), "run", "-"],
        "node list\n",
    );
    clean("--conflist bad", &o);
}

#[test]
fn a_save_journal_with_escapes_is_escaped_when_loaded() {
    let dir = scratch("save");
    let save = dir.join("lab.json");
    let s = save.display().to_string();
    let o = lab(
        &["run", "-"],
        &format!(
            "cni conf load assets/conflists/01-minimal.conflist --as 'z{CSI}.conflist'\nsave {s}\n"
        ),
    );
    clean("save", &o);
    assert!(o.status.success(), "{}", both(&o));
    let o = lab(&["run", "-"], &format!("load {s}\ncni conf show\n"));
    clean("load", &o);
    let o = lab(&["--load", &s, "run", "-"], "cni conf show\n");
    clean("--load", &o);
    // A journal line edited to fail on replay is echoed in the refusal.
    let text = std::fs::read_to_string(&save).unwrap();
    let edited = text.replacen(
        "--as",
        &format!("--node node-9{} --as", "\\u001b]0;pwned\\u0007"),
        1,
    );
    assert_ne!(edited, text);
    let bad = dir.join(format!("bad{OSC}.json"));
    std::fs::write(&bad, edited).unwrap();
    let b = bad.display().to_string();
    let o = lab(&["run", "-"], &format!("load '{b}'\n"));
    clean("load edited", &o);
    assert!(both(&o).contains("failed on replay"), "{}", both(&o));
    let o = lab(&["--load", &b, "run", "-"], "");
    clean("--load edited", &o);
    assert_eq!(o.status.code(), Some(2));
}
