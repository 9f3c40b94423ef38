//! The lesson player through `Desk::execute`, as a learner drives it: start, mistakes, hints
//! (cycling), skip, back, reset, quizzes, completion; and progress persistence (memory,
//! a file in a temp dir, a damaged file).

use cni_csi_lab::Desk;
use cni_csi_lab::progress_file::FileStore;
use lab_engine::lesson::catalog::EMBEDDED;
use lab_engine::lesson::{Item, MemoryStore, Progress, ProgressStore};
use std::path::PathBuf;

const ID: &str = "ch7-hands-on";

fn ok(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(o) => o.to_text(),
        Err(e) => panic!("`{line}` failed: {}\n{}", e.message, e.output.to_text()),
    }
}

fn err(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(o) => panic!("`{line}` succeeded:\n{}", o.to_text()),
        Err(e) => e.message,
    }
}

fn at(desk: &Desk) -> usize {
    desk.lessons
        .session
        .as_ref()
        .map(|s| s.at)
        .expect("a session")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cni-csi-lab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_learner_makes_a_mistake_asks_for_hints_and_finishes_a_step() {
    let mut desk = crate::common::desk();
    ok(&mut desk, "pod create stray --node node-1");
    let out = ok(&mut desk, &format!("lesson start {ID}"));
    assert!(
        out.contains("── Step 1/22 · A pod gets its address  ·  7.4 scenario 1"),
        "{out}"
    );
    assert!(
        out.contains("Task: Create a pod named `web` on `node-1`"),
        "{out}"
    );
    assert!(
        out.contains("[░░░░░░░░░░] steps 0/22 · quizzes 0/6"),
        "{out}"
    );
    assert!(
        desk.lab.cluster().pods.is_empty(),
        "the lesson starts on a fresh cluster"
    );

    // A mistake: a node that does not exist. The step stays.
    let e = err(&mut desk, "pod create web --node node-3");
    assert!(e.contains("node-3"), "{e}");
    assert_eq!(at(&desk), 0);
    let h1 = ok(&mut desk, "hint");
    assert!(
        h1.starts_with("Hint 1/4: The command is `pod create NAME --node NODE --label KEY=VALUE`."),
        "{h1}"
    );
    assert!(
        h1.contains("Not yet: `pod web phase Running` — there is no pod default/web"),
        "{h1}"
    );
    let h2 = ok(&mut desk, "hint");
    assert!(
        h2.starts_with("Hint 2/4: With `--node` you name the node yourself"),
        "{h2}"
    );
    let h3 = ok(&mut desk, "hint");
    assert!(
        h3.starts_with("Hint 3/4: web runs but without `app=web`?"),
        "{h3}"
    );
    // The last hint is worked out from the learner's cluster: here, what completes the step.
    let h4 = ok(&mut desk, "hint");
    assert!(
        h4.starts_with("Hint 4/4: from where you are, these complete the step:\n  pod create web --node node-1 --label app=web\n"),
        "{h4}"
    );
    assert!(ok(&mut desk, "hint").starts_with("Hint 1/4"), "hints cycle");

    // Another mistake: the right pod with the wrong name takes 10.244.1.2, so `web` gets .3.
    ok(&mut desk, "pod create webb --node node-1 --label app=web");
    ok(&mut desk, "pod create web --node node-1 --label app=web");
    assert_eq!(at(&desk), 0);
    let h = ok(&mut desk, "hint");
    assert!(
        h.contains("Not yet: `pod web ip 10.244.1.2` — pod default/web has ip 10.244.1.3"),
        "{h}"
    );
    assert!(h.contains("`lesson retry`"), "{h}");
    // The worked-out hint sees the cluster has moved away and says how to start over.
    let h = (0..4)
        .map(|_| ok(&mut desk, "hint"))
        .find(|h| h.starts_with("Hint 4/4"))
        .expect("the fourth hint comes round");
    assert!(
        h.starts_with("Hint 4/4: your cluster has moved away from what this step needs (`pod web ip 10.244.1.2`: pod default/web has ip 10.244.1.3).\n`lesson retry` rebuilds it as the step began; then type:\n  pod create web --node node-1 --label app=web"),
        "{h}"
    );
    let out = ok(&mut desk, "lesson retry");
    assert!(out.contains("── Step 1/22"), "{out}");
    assert!(desk.lab.cluster().pods.is_empty());

    let out = ok(&mut desk, "po create web --node node-1 --label app=web");
    assert!(out.contains("pod/web created"), "{out}");
    assert!(
        out.contains("✓ Step 1 done: A pod gets its address"),
        "{out}"
    );
    assert!(
        out.contains("── Step 2/22 · What bridge was given"),
        "{out}"
    );
    assert!(
        out.contains("[░░░░░░░░░░] steps 1/22 · quizzes 0/6"),
        "{out}"
    );
    assert_eq!(at(&desk), 1);
    assert_eq!(
        desk.lessons
            .progress()
            .of(ID)
            .steps
            .into_iter()
            .collect::<Vec<_>>(),
        vec![1]
    );
    // The hint counter restarts on the new step.
    assert!(ok(&mut desk, "hint").starts_with("Hint 1/3: `show wire --last bridge:ADD`"));
}

#[test]
fn skip_back_and_reset_rebuild_the_cluster() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    let out = ok(&mut desk, "skip");
    assert!(out.contains("The lab does step 1 for you"), "{out}");
    assert!(
        out.contains("lab> pod create web --node node-1 --label app=web"),
        "{out}"
    );
    assert!(out.contains("── Step 2/22"), "{out}");
    assert_eq!(at(&desk), 1);
    assert!(
        desk.lessons.progress().of(ID).steps.is_empty(),
        "a skipped step is not done"
    );

    ok(&mut desk, "show wire 0");
    assert_eq!(at(&desk), 2, "step 2 passed");
    ok(&mut desk, "pod create extra --node node-2");
    assert_eq!(desk.lab.cluster().pods.len(), 2);

    let out = ok(&mut desk, "back");
    assert!(out.contains("── Step 2/22"), "{out}");
    assert_eq!(at(&desk), 1);
    assert_eq!(
        desk.lab.cluster().pods.len(),
        1,
        "rebuilt: only step 1's pod"
    );
    assert!(
        desk.lab
            .cluster()
            .pods
            .contains_key(&("default".into(), "web".into()))
    );
    ok(&mut desk, "back");
    assert_eq!(at(&desk), 0);
    assert!(desk.lab.cluster().pods.is_empty());
    assert_eq!(err(&mut desk, "back"), "already at the first step");

    ok(&mut desk, "skip");
    ok(&mut desk, "show wire 0");
    assert_eq!(desk.lessons.progress().of(ID).steps.len(), 1);
    let out = ok(&mut desk, "lesson reset");
    assert!(out.contains("starts over on a fresh cluster"), "{out}");
    assert_eq!(at(&desk), 0);
    assert!(desk.lab.cluster().pods.is_empty());
    assert!(desk.lessons.progress().of(ID).steps.is_empty());
}

#[test]
fn a_step_meant_to_fail_passes_on_the_error_and_shows_both_in_order() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    for _ in 0..4 {
        ok(&mut desk, "skip");
    }
    assert_eq!(at(&desk), 4);
    ok(&mut desk, "cni add c1 --node node-1");
    assert_eq!(at(&desk), 4);
    let out = ok(&mut desk, "cni add c1 --node node-1");
    let err_at = out.find("error: CNI code 999 from bridge").expect(&out);
    let done_at = out
        .find("✓ Step 5 done: ADD twice is an error")
        .expect(&out);
    assert!(err_at < done_at, "{out}");
}

#[test]
fn the_whole_lesson_typed_by_a_learner_with_quizzes() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    let lesson = desk.lessons.session.as_ref().unwrap().lesson.clone();
    for step in &lesson.steps {
        assert_eq!(at(&desk), (step.number - 1) as usize);
        for c in &step.commands {
            let _ = desk.execute(&c.text);
        }
    }
    assert!(matches!(
        desk.lessons.session.as_ref().unwrap().current(),
        Item::Quiz(0, _)
    ));
    assert!(
        err(&mut desk, "lesson answer").contains("needs your answer to quiz 1: answer A, B or C")
    );
    let out = ok(&mut desk, "lesson answer a");
    assert!(out.contains("✓ Right: A."), "{out}");
    // A wrong answer gets the explanation and one more try; a second wrong one moves on.
    let out = ok(&mut desk, "lesson answer A");
    assert!(
        out.contains("✗ Not quite. Read this, then try once more"),
        "{out}"
    );
    assert!(!out.contains("the answer is C"), "{out}");
    assert!(out.contains("db's egress is not"), "the explanation: {out}");
    let out = ok(&mut desk, "lesson answer B");
    assert!(out.contains("✗ Not quite: the answer is C."), "{out}");
    let out = ok(&mut desk, "skip");
    assert!(out.contains("The answer: B."), "{out}");
    let out = ok(&mut desk, "lesson answer 10.244.1.8");
    assert!(out.contains("Your prediction: 10.244.1.8"), "{out}");
    assert!(out.contains("lab> pod create probe --node node-1"), "{out}");
    assert!(out.contains("✓ Right: 10.244.1.8."), "{out}");
    let out = ok(&mut desk, "lesson answer A");
    assert!(out.contains("✓ Right: A."), "{out}");
    let out = ok(&mut desk, "lesson answer cni del");
    assert!(out.contains("lab> pod delete ai-agent"), "{out}");
    assert!(out.contains("✓ Right: CNI DEL."), "{out}");
    assert!(out.contains("── Lesson complete"), "{out}");
    assert!(
        out.contains("Steps: 22 of 22 done. Quizzes: 4 of 6 right the first time."),
        "{out}"
    );
    assert!(out.contains("steps 22/22 · quizzes 4/6"), "{out}");
    assert_eq!(
        err(&mut desk, "skip"),
        "nothing to skip: the lesson is complete (`lesson reset` starts it over)"
    );
    let list = ok(&mut desk, "lesson list");
    assert!(
        list.contains("ch7-hands-on             7    22/22   4/6       [█████████░] ← now"),
        "{list}"
    );
}

#[test]
fn a_lesson_typed_with_kubectl_before_every_command_passes_its_steps() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("kubectl lesson start {ID}"));
    let lesson = desk.lessons.session.as_ref().unwrap().lesson.clone();
    for step in &lesson.steps {
        assert_eq!(
            at(&desk),
            (step.number - 1) as usize,
            "step {}",
            step.number
        );
        for c in &step.commands {
            let _ = desk.execute(&format!("kubectl {}", c.text));
        }
    }
    assert!(matches!(
        desk.lessons.session.as_ref().unwrap().current(),
        Item::Quiz(0, _)
    ));
}

#[test]
fn a_quiz_right_only_at_the_second_try_is_not_counted_right() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    let lesson = desk.lessons.session.as_ref().unwrap().lesson.clone();
    for _ in &lesson.steps {
        ok(&mut desk, "skip");
    }
    ok(&mut desk, "lesson answer B");
    let out = ok(&mut desk, "lesson answer A");
    assert!(out.contains("✓ Right: A."), "{out}");
    for _ in 1..lesson.quizzes.len() {
        ok(&mut desk, "skip");
    }
    let out = ok(&mut desk, "lesson status");
    assert!(
        out.contains("Quizzes: 0 of 6 right the first time, 1 more at the second try."),
        "{out}"
    );
    let p = desk.lessons.progress().of(ID);
    assert_eq!(p.quizzes.into_iter().collect::<Vec<_>>(), vec![1]);
    assert_eq!(p.second_try.into_iter().collect::<Vec<_>>(), vec![1]);
}

#[test]
fn a_resumed_lesson_starts_after_the_steps_skipped() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    let lesson = desk.lessons.session.as_ref().unwrap().lesson.clone();
    for c in &lesson.steps[0].commands {
        ok(&mut desk, &c.text);
    }
    ok(&mut desk, "skip");
    ok(&mut desk, "skip");
    assert_eq!(at(&desk), 3);
    // Quit (the reset leaves the lesson; the progress stays) and come back.
    ok(&mut desk, "reset");
    let out = ok(&mut desk, &format!("lesson start {ID}"));
    assert_eq!(
        at(&desk),
        3,
        "resumed at step 4, not at the skipped step 2:\n{out}"
    );
    assert!(out.contains("── Step 4/22"), "{out}");
    let p = desk.lessons.progress().of(ID);
    assert_eq!(p.skipped_steps.into_iter().collect::<Vec<_>>(), vec![2, 3]);
    // Once everything else is done, the skipped steps come back.
    let fresh = lab_engine::lesson::LessonProgress {
        steps: (1..=22).filter(|n| *n != 2 && *n != 3).collect(),
        quizzes: (1..=6).collect(),
        skipped_steps: [2, 3].into(),
        ..Default::default()
    };
    assert_eq!(lab_engine::lesson::session::first_open(&lesson, &fresh), 1);
}

#[test]
fn lesson_commands_without_a_lesson_say_what_to_do() {
    let mut desk = crate::common::desk();
    for c in [
        "hint",
        "skip",
        "back",
        "lesson status",
        "lesson reset",
        "lesson answer A",
    ] {
        assert!(
            err(&mut desk, c).starts_with("no lesson in progress"),
            "{c}"
        );
    }
    // Every embedded lesson is listed, by id (other lessons are added over time).
    let e = err(&mut desk, "lesson start nope");
    assert!(
        e.starts_with("no lesson \"nope\"; lessons are: ") && e.contains("ch7-hands-on"),
        "{e}"
    );
    ok(&mut desk, &format!("lesson start {ID}"));
    assert!(err(&mut desk, "lesson answer B").starts_with("step 1 is not a quiz"));
    let out = ok(&mut desk, "reset");
    assert!(out.contains("Left lesson ch7-hands-on"), "{out}");
    assert!(desk.lessons.session.is_none());
    assert!(
        err(&mut desk, "lesson play ch7-hands-on --speed 0")
            .starts_with("invalid value \"0\" for --speed: expected a number above 0")
    );
}

#[test]
fn play_is_deterministic_and_leaves_the_final_state() {
    let run = || {
        let mut desk = crate::common::desk();
        ok(&mut desk, &format!("lesson start {ID}"));
        let out = ok(&mut desk, &format!("lesson play {ID} --speed 4 --step"));
        (out, desk)
    };
    let (a, desk) = run();
    let (b, _) = run();
    assert_eq!(a, b);
    assert!(a.starts_with("Left lesson ch7-hands-on"), "{a}");
    assert!(a.contains("lab> policy create db-allow-web"), "{a}");
    assert!(a.contains("── Quiz 6/6"), "{a}");
    assert!(desk.lessons.session.is_none());
    assert!(
        desk.lab
            .cluster()
            .pods
            .contains_key(&("default".into(), "probe".into()))
    );
    let events = lab_engine::lesson::play::plan(
        &desk
            .lessons
            .session
            .as_ref()
            .map(|s| s.lesson.clone())
            .unwrap_or_else(|| {
                lab_engine::lesson::Catalog::Embedded
                    .load()
                    .find(ID)
                    .unwrap()
            }),
        lab_engine::lesson::play::PlayOptions {
            speed: 2.0,
            step: false,
            variant: 0,
        },
    );
    assert!(events.contains(&lab_engine::lesson::play::PlayEvent::Pause { millis: 1000 }));
}

#[test]
fn verify_and_lint_as_commands() {
    let mut desk = crate::common::desk();
    // Every embedded lesson verifies; the line for ch7 is exact.
    let out = ok(&mut desk, "lesson verify");
    // One `ok` line per embedded lesson, ch7's among them.
    assert!(
        out.contains("ok    ch7-hands-on  (22 steps, 6 quizzes)\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), EMBEDDED.len(), "{out}");
    assert!(out.lines().all(|l| l.starts_with("ok    ")), "{out}");
    assert_eq!(
        ok(&mut desk, "lesson lint"),
        format!("lint: {} lessons, no problems\n", EMBEDDED.len())
    );
    assert!(
        desk.lab.cluster().pods.is_empty(),
        "verify plays on its own lab"
    );
}

/// QA 24 §1: the variant is saved as the lesson starts, so a learner who quits before
/// finishing step 1 resumes their variant with `lesson start ID` (grading.md).
#[test]
fn a_variant_started_and_quit_before_any_step_resumes() {
    let dir = temp_dir("progress-variant");
    let path = dir.join("progress.json");
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    ok(&mut desk, &format!("lesson start {ID} --variant 12"));
    drop(desk);
    let saved = Progress::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved.of(ID).variant, 12);
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    let out = ok(&mut desk, &format!("lesson start {ID}"));
    assert!(out.contains("Variant 12 of 128"), "{out}");
    assert_eq!(desk.lessons.session.as_ref().unwrap().lesson.variant, 12);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn progress_round_trips_through_a_file_and_resumes() {
    let dir = temp_dir("progress");
    let path = dir.join("sub/progress.json");
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    ok(&mut desk, &format!("lesson start {ID}"));
    ok(&mut desk, "pod create web --node node-1 --label app=web");
    ok(&mut desk, "show wire 0");
    let saved = Progress::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        saved.of(ID).steps.into_iter().collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert!(
        !dir.join("sub/progress.json.tmp").exists(),
        "the temp file was renamed"
    );

    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    let list = ok(&mut desk, "lesson list");
    assert!(
        list.contains("ch7-hands-on             7    2/22    0/6 "),
        "{list}"
    );
    let out = ok(&mut desk, &format!("lesson start {ID}"));
    assert!(out.contains("Resuming where you left off"), "{out}");
    assert!(out.contains("── Step 3/22"), "{out}");
    assert!(
        desk.lab
            .cluster()
            .pods
            .contains_key(&("default".into(), "web".into()))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_progress_file_is_reported_and_replaced() {
    let dir = temp_dir("damaged");
    let path = dir.join("progress.json");
    std::fs::write(&path, "{ this is not json").unwrap();
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    let out = ok(&mut desk, "lesson list");
    assert!(
        out.starts_with(&format!(
            "warning: progress file {} is damaged (",
            path.display()
        )),
        "{out}"
    );
    assert!(out.contains("0/22    0/6"), "{out}");
    // Reported once.
    assert!(!ok(&mut desk, "lesson list").contains("warning"));
    ok(&mut desk, &format!("lesson start {ID}"));
    ok(&mut desk, "pod create web --node node-1 --label app=web");
    let saved = Progress::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved.of(ID).steps.len(), 1);
    // Issue 38: what was replaced is kept beside it.
    assert_eq!(
        std::fs::read_to_string(dir.join("progress.json.bak")).unwrap(),
        "{ this is not json"
    );

    // Not UTF-8 at all: also damaged, never a crash.
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    assert!(matches!(
        FileStore::new(&path).load(),
        Err(lab_engine::lesson::StoreError::Damaged { .. })
    ));
    // A newer progress version is not damaged: it is refused, as `load` refuses a newer save.
    std::fs::write(&path, r#"{"version": 7, "lessons": {}}"#).unwrap();
    let e = FileStore::new(&path).load().unwrap_err().to_string();
    assert!(
        e.contains("written by a newer cni-csi-lab (progress format 7; this one knows 1): upgrade"),
        "{e}"
    );
    // A missing file is empty progress, not an error.
    assert_eq!(
        FileStore::new(dir.join("none.json")).load(),
        Ok(Progress::default())
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_save_is_a_warning_not_a_failure() {
    let dir = temp_dir("unwritable");
    // The "file" is a directory: the rename over it fails.
    let path = dir.join("progress.json");
    std::fs::create_dir_all(path.join("x")).unwrap();
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    ok(&mut desk, &format!("lesson start {ID}"));
    let out = ok(&mut desk, "pod create web --node node-1 --label app=web");
    assert!(out.contains("✓ Step 1 done"), "{out}");
    assert!(out.contains("warning: cannot "), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_store_round_trip() {
    let mut s = MemoryStore::default();
    assert_eq!(s.load(), Ok(Progress::default()));
    let mut p = Progress::default();
    p.lessons.entry("x".into()).or_default().quizzes.insert(1);
    s.save(&p).unwrap();
    assert_eq!(s.load(), Ok(p));
}

/// One `repl --plain` process, driven line by line: each line is sent only after the
/// previous one's prompt came back, so two sessions interleave exactly as written.
struct Session {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::sync::mpsc::Receiver<Vec<u8>>,
    seen: String,
    prompts: usize,
}

impl Session {
    fn start(lessons: &std::path::Path, home: &std::path::Path) -> Session {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let mut child = Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
            .args([
                "--lessons",
                &lessons.display().to_string(),
                "repl",
                "--plain",
            ])
            .env("HOME", home)
            .env("XDG_DATA_HOME", home)
            .env("CNI_CSI_LAB_HISTORY", "")
            .env(
                cni_csi_lab::progress_file::PROGRESS_ENV,
                home.join("progress.json"),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary runs");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut s = Session {
            stdin: child.stdin.take(),
            child,
            out: rx,
            seen: String::new(),
            prompts: 0,
        };
        s.wait_prompt();
        s
    }

    /// Wait for one more prompt than seen so far.
    fn wait_prompt(&mut self) {
        let want = self.prompts + 1;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.seen.matches("]> ").count() < want {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.out.recv_timeout(left) {
                Ok(b) => self.seen.push_str(&String::from_utf8_lossy(&b)),
                Err(_) => panic!("no prompt came back; output so far:\n{}", self.seen),
            }
        }
        self.prompts = want;
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        self.wait_prompt();
    }

    fn quit(mut self) -> String {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success());
        while let Ok(b) = self.out.recv_timeout(std::time::Duration::from_secs(5)) {
            self.seen.push_str(&String::from_utf8_lossy(&b));
        }
        self.seen
    }
}

/// Issue 19: two sessions recording progress in one file at the same time (two REPL
/// processes sharing a data directory, steps of different lessons interleaved) keep each
/// other's progress: each save re-reads the file and merges under a lock. Before, the last
/// writer won and the other lesson's progress disappeared.
#[test]
fn two_repl_processes_interleaving_lessons_keep_both_progress() {
    let home = temp_dir("two-sessions-home");
    let lessons = temp_dir("two-sessions-lessons");
    let minimal = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/lessons/valid/minimal.md"),
    )
    .unwrap();
    std::fs::write(lessons.join("one.md"), &minimal).unwrap();
    std::fs::write(
        lessons.join("two.md"),
        minimal.replace("id: mini-one", "id: mini-two"),
    )
    .unwrap();
    let mut a = Session::start(&lessons, &home);
    let mut b = Session::start(&lessons, &home);
    a.send("lesson start mini-one");
    b.send("lesson start mini-two");
    for line in [
        "pod create web --node node-1 --label app=web",
        "cni add c1 --node node-1",
        "cni add c1 --node node-1",
    ] {
        a.send(line);
        b.send(line);
    }
    let (out_a, out_b) = (a.quit(), b.quit());
    let text = std::fs::read_to_string(home.join("progress.json")).expect("progress saved");
    let p = Progress::from_json(&text).unwrap();
    let both: std::collections::BTreeSet<u32> = [1, 2].into();
    assert_eq!(
        p.of("mini-one").steps,
        both,
        "session A's progress survived B's saves: {text}\nA:\n{out_a}"
    );
    assert_eq!(
        p.of("mini-two").steps,
        both,
        "session B's progress: {text}\nB:\n{out_b}"
    );
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&lessons);
}

/// QA 22 §5: `lesson hint` answered `did you mean "lint"?`, steering a learner to the
/// linter; `lesson skip` and `lesson back` only listed `lesson`'s subcommands. The lesson's
/// own commands are top-level, and the error says so.
#[test]
fn lesson_hint_skip_and_back_point_to_the_top_level_commands() {
    let mut desk = crate::common::desk();
    ok(&mut desk, "lesson start ch7-hands-on");
    for word in ["hint", "skip", "back"] {
        let e = err(&mut desk, &format!("lesson {word}"));
        assert!(
            e.contains(&format!(
                "`{word}` is a command of its own during a lesson: type `{word}`"
            )),
            "{e}"
        );
        assert!(!e.contains("lint"), "{e}");
    }
    assert!(err(&mut desk, "lesson lsit").contains("did you mean \"list\"?"));
    // Helpers' play, stop 66: `lesson help` (and `pod help`) point to `help lesson`.
    for (line, help) in [("lesson help", "help lesson"), ("pod help", "help pod")] {
        let e = err(&mut desk, line);
        assert!(e.contains(&format!("help comes first: `{help}`")), "{e}");
    }
}

/// QA 22 §5: ch7 step 1's third hint spoke only of the label, while the check that failed
/// was web's address (another pod, created first, took .2). It names the address too.
#[test]
fn ch7_step_1_s_third_hint_names_the_address() {
    let mut desk = crate::common::desk();
    ok(&mut desk, "lesson start ch7-hands-on");
    ok(&mut desk, "pod create wbe --node node-1 --label app=web");
    ok(&mut desk, "pod create web --node node-1");
    let mut third = String::new();
    for _ in 0..3 {
        third = ok(&mut desk, "hint");
    }
    assert!(third.contains("Hint 3/"), "{third}");
    let words = third.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("another address than 10.244.1.2") && words.contains("lesson retry"),
        "{third}"
    );
}

/// `lines` typed after `lesson start LESSON` and `skips` skips, on a fresh desk: the live
/// lab's score of quiz `quiz` (right first time, at the second try, or not right), and the
/// grader's verdict on the same lines.
fn quiz_scored(
    lesson: &str,
    skips: usize,
    lines: &[&str],
    quiz: u32,
) -> (Option<bool>, lab_engine::lesson::grade::QuizResult) {
    let mut typed = vec![format!("lesson start {lesson}")];
    typed.extend(std::iter::repeat_n("skip".to_string(), skips));
    typed.extend(lines.iter().map(|l| l.to_string()));
    let mut desk = crate::common::desk();
    for l in &typed {
        let _ = desk.execute(l);
    }
    let p = desk.lessons.progress().of(lesson);
    let live = p
        .quizzes
        .contains(&quiz)
        .then(|| !p.second_try.contains(&quiz));
    let numbered: Vec<(usize, String)> = (1..).zip(typed).collect();
    let verdict = lab_engine::lesson::grade::replay(
        &mut crate::common::desk(),
        lesson,
        (0, None),
        &numbered,
        None,
        None,
    )
    .unwrap();
    let graded = verdict.quizzes[quiz as usize - 1].1.clone();
    (live, graded)
}

/// QA 25 §1: a quiz's wrong answer, a peek at a prediction's output, or a `skip` that
/// showed the answer was forgotten once the learner left the quiz: `back`, `lesson retry`
/// or `lesson stop` + `lesson start` and the answer now known scored "right the first
/// time", in the lab and in `grade`. The quiz keeps its first try however the learner moves.
#[test]
fn a_quiz_keeps_its_first_try_however_the_learner_moves() {
    use lab_engine::lesson::grade::QuizResult::{RightFirstTime, RightSecondTry, Wrong};
    let ch6 = "ch6-source-walkthrough";
    for (lesson, skips, lines, quiz, live, graded) in [
        // `skip` showed the answer; back, and type it.
        (
            ID,
            22,
            &["skip", "back", "lesson answer A"][..],
            1,
            Some(false),
            RightSecondTry { line: 26 },
        ),
        // A wrong letter, then the quiz again by every way back to it.
        (
            ID,
            22,
            &["lesson answer B", "lesson retry", "lesson answer A"][..],
            1,
            Some(false),
            RightSecondTry { line: 26 },
        ),
        (
            ID,
            22,
            &[
                "lesson answer B",
                "lesson stop",
                &format!("lesson start {ID}"),
                "lesson answer A",
            ][..],
            1,
            Some(false),
            RightSecondTry { line: 27 },
        ),
        (
            ID,
            22,
            &["lesson answer B", "back", "skip", "lesson answer A"][..],
            1,
            Some(false),
            RightSecondTry { line: 27 },
        ),
        // The first try is used: a second wrong letter after the retry is the last.
        (
            ID,
            22,
            &[
                "lesson answer B",
                "lesson retry",
                "lesson answer C",
                "lesson answer A",
            ][..],
            1,
            None,
            Wrong { line: 24 },
        ),
        // A prediction answered wrong (its output printed the answer), then back.
        (
            ch6,
            22,
            &[
                "lesson answer NodeUnstageVolume",
                "back",
                "lesson answer NodeUnpublishVolume",
            ][..],
            5,
            Some(false),
            RightSecondTry { line: 26 },
        ),
        // A peek at the next address, then a retry to clear the guard.
        (
            ch6,
            23,
            &[
                "pod create probe --node node-1",
                "lesson retry",
                "lesson answer 10.244.1.7",
            ][..],
            6,
            Some(false),
            RightSecondTry { line: 27 },
        ),
        (
            ch6,
            23,
            &[
                "pod create probe --node node-1",
                "lesson stop",
                &format!("lesson start {ch6}"),
                "lesson answer 10.244.1.7",
            ][..],
            6,
            Some(false),
            RightSecondTry { line: 28 },
        ),
        // Right at once stays right, answered again wrong or not.
        (
            ID,
            22,
            &["lesson answer A", "back", "lesson answer B"][..],
            1,
            Some(true),
            RightFirstTime { line: 24 },
        ),
        // `lesson reset` starts the steps over, but the wrong answer stays on record (and
        // in the transcript the grader replays).
        (
            ID,
            22,
            &["lesson answer B", "lesson reset"]
                .iter()
                .copied()
                .chain(std::iter::repeat_n("skip", 22))
                .chain(["lesson answer A"])
                .collect::<Vec<_>>()[..],
            1,
            Some(false),
            RightSecondTry { line: 48 },
        ),
    ] {
        let (l, g) = quiz_scored(lesson, skips, lines, quiz);
        assert_eq!((l, g), (live, graded), "{lesson} quiz {quiz}: {lines:?}");
    }
}

/// QA 25 §1: the wrong answer is in the progress file, so a lesson resumed in a new
/// session keeps it.
#[test]
fn a_wrong_answer_outlasts_a_new_session_through_the_progress_file() {
    let dir = temp_dir("wrong-kept");
    let path = dir.join("progress.json");
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    ok(&mut desk, &format!("lesson start {ID}"));
    for _ in 0..22 {
        ok(&mut desk, "skip");
    }
    ok(&mut desk, "lesson answer B");
    drop(desk);
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(FileStore::new(&path)));
    ok(&mut desk, &format!("lesson start {ID}"));
    let out = ok(&mut desk, "lesson answer A");
    assert!(out.contains("✓ Right: A."), "{out}");
    let p = desk.lessons.progress().of(ID);
    assert_eq!(p.second_try.into_iter().collect::<Vec<_>>(), vec![1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// QA 25 §13: starting another lesson during one rebuilt the cluster and left the first
/// without a word; `reset` and `lesson play` say "Left lesson …". So does `lesson start`;
/// starting the same lesson again (a resume) says nothing of leaving.
#[test]
fn starting_another_lesson_says_the_first_is_left() {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {ID}"));
    let out = ok(&mut desk, "lesson start ch6-source-walkthrough");
    assert!(
        out.starts_with(&format!(
            "Left lesson {ID} (progress kept); `lesson start {ID}` resumes it on a fresh cluster.\nLesson ch6-source-walkthrough"
        )),
        "{out}"
    );
    let out = ok(&mut desk, "lesson start ch6-source-walkthrough");
    assert!(!out.contains("Left lesson"), "{out}");
}
