//! Lesson code cannot touch the learner's files (issue 19): a lesson whose code blocks
//! `save`, `load` or `cni conf load` a file of the learner's is reported by `lesson lint`,
//! and `lesson verify`, `lesson play`, `skip`, a predict quiz's answer and the replay of
//! `back` refuse those lines: no file is written. The learner's own lines still may.

use cni_csi_lab::Desk;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The files the fixture's code blocks name.
const WRITTEN: &[&str] = &[
    "/tmp/cni-csi-lab-lesson-guard-step.json",
    "/tmp/cni-csi-lab-lesson-guard-quiz.json",
];
const MARK: &str = "lessons may not read or write files";

/// A directory holding only the fixture lesson.
fn lesson_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-guard-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lessons/invalid/file-commands.md");
    std::fs::copy(src, d.join("file-commands.md")).unwrap();
    d
}

fn nothing_written() {
    for f in WRITTEN {
        assert!(!Path::new(f).exists(), "{f} was written by lesson code");
    }
}

fn lab_with(tag: &str) -> Desk {
    for f in WRITTEN {
        let _ = std::fs::remove_file(f);
    }
    let mut lab = crate::common::desk();
    lab.lessons
        .use_dir(crate::common::lessons_at(lesson_dir(tag)))
        .expect("readable");
    lab
}

#[test]
fn lint_reports_every_file_command_with_file_and_line() {
    let mut lab = lab_with("lint");
    let out = lab.execute("lesson lint").map(|o| o.to_text());
    let text = match out {
        Ok(t) => t,
        Err(e) => format!("{}{}", e.output.to_text(), e.message),
    };
    for (line, cmd) in [
        (16, "`save` refused"),
        (35, "`load` refused"),
        (36, "`cni conf load` refused"),
        (50, "`save` refused"),
    ] {
        assert!(
            text.contains(&format!("file-commands.md:{line}: "))
                && text
                    .lines()
                    .any(|l| l.contains(&format!(":{line}: ")) && l.contains(cmd)),
            "line {line} {cmd}: {text}"
        );
    }
    assert!(!text.contains("no problems"), "{text}");
    nothing_written();
}

#[test]
fn verify_refuses_and_writes_nothing() {
    let mut lab = lab_with("verify");
    let r = lab.execute("lesson verify file-commands");
    let text = match r {
        Ok(o) => o.to_text(),
        Err(e) => format!("{}{}", e.output.to_text(), e.message),
    };
    assert!(text.contains(MARK), "{text}");
    nothing_written();
}

#[test]
fn play_refuses_and_writes_nothing() {
    let mut lab = lab_with("play");
    let out = lab.execute("lesson play file-commands").unwrap().to_text();
    assert!(
        out.contains("lab> save /tmp/cni-csi-lab-lesson-guard-step.json"),
        "{out}"
    );
    assert!(
        out.contains(&format!("error: `save` refused: {MARK}")),
        "{out}"
    );
    assert!(out.contains("error: `cni conf load` refused"), "{out}");
    // The built-in example still loads.
    assert!(
        out.contains("/etc/cni/net.d/05-lab-v110.conflist written on node-1"),
        "{out}"
    );
    nothing_written();
}

#[test]
fn skip_answer_and_back_refuse_and_write_nothing() {
    let mut lab = lab_with("skip");
    lab.execute("lesson start file-commands").unwrap();
    let out = lab.execute("skip").unwrap().to_text();
    assert!(out.contains(&format!("`save` refused: {MARK}")), "{out}");
    let out = lab.execute("skip").unwrap().to_text();
    assert!(out.contains(&format!("`load` refused: {MARK}")), "{out}");
    // Back and forth: the replay of the steps before refuses too.
    lab.execute("back").unwrap();
    lab.execute("skip").unwrap();
    // The predict quiz: answering runs its `run:` command.
    let out = match lab.execute("lesson answer saved") {
        Ok(o) => o.to_text(),
        Err(e) => format!("{}{}", e.output.to_text(), e.message),
    };
    assert!(out.contains(MARK), "{out}");
    nothing_written();
    // What the learner types is not lesson code: save works at the prompt.
    let mine = std::env::temp_dir().join(format!("lab-guard-mine-{}.json", std::process::id()));
    lab.execute(&format!("save {}", mine.display()))
        .expect("the learner may save");
    assert!(mine.exists());
    let _ = std::fs::remove_file(mine);
}

#[test]
fn the_binary_refuses_too() {
    for f in WRITTEN {
        let _ = std::fs::remove_file(f);
    }
    let dir = lesson_dir("cli");
    for args in [
        ["lesson", "verify", "file-commands"],
        ["lesson", "play", "file-commands"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
            .arg("--lessons")
            .arg(&dir)
            .args(args)
            .env("CNI_CSI_LAB_HISTORY", "")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(all.contains(MARK), "{args:?}: {all}");
    }
    nothing_written();
}
