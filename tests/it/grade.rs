//! Homework: `lesson submit FILE` hands in a lesson; `cni-csi-lab grade --lesson ID FILE`
//! replays it on a fresh lab and prints each step's result (or JSON), exit 0 only when
//! every step is done and nothing is claimed that the lines do not do.

use lab_engine::Desk;
use lab_engine::lesson::model::{Lesson, QuizKind};
use std::process::{Command, Output};

const LESSON: &str = "ch7-hands-on";

fn lab(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cni-csi-lab"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env("CNI_CSI_LAB_HISTORY", "")
        .env("CNI_CSI_LAB_PROGRESS", "")
        .output()
        .expect("the binary runs")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lab-grade-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The lesson's reference commands, step by step, then each quiz's right answer (a
/// prediction worked out on a copy of the lab as it stands at the quiz).
fn solution(lesson: &Lesson, steps: usize) -> Vec<String> {
    let mut desk = Desk::new();
    let mut lines = vec![format!("lesson start {}", lesson.id)];
    for s in lesson.steps.iter().take(steps) {
        lines.extend(s.commands.iter().map(|c| c.text.clone()));
    }
    for l in &lines {
        let _ = desk.execute(l);
    }
    if steps == lesson.steps.len() {
        for q in &lesson.quizzes {
            let answer = match &q.kind {
                QuizKind::Choice { answer, .. } => answer.to_string(),
                QuizKind::Predict { run, answer } => {
                    let mut probe = desk.lab.clone();
                    let _ = probe.execute(run);
                    lab_engine::lesson::facts::answer_in(&probe, answer)
                }
            };
            let line = format!("lesson answer {answer}");
            let _ = desk.execute(&line);
            lines.push(line);
        }
    }
    lines
}

fn the_lesson() -> std::sync::Arc<Lesson> {
    Desk::new().lessons.find(LESSON).expect("the lesson exists")
}

/// A learner's session: the lines typed, then `lesson submit` in the same sitting.
fn submit(dir: &std::path::Path, lines: &[String], file: &str) -> Output {
    let mut script = lines.join("\n");
    script.push_str(&format!("\nlesson submit {file}\n"));
    std::fs::write(dir.join("session.lab"), script).unwrap();
    lab(&["run", "--keep-going", "session.lab"], dir)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_whole_lesson_handed_in_passes_with_the_line_of_each_step() {
    let dir = scratch("pass");
    let lesson = the_lesson();
    let o = submit(&dir, &solution(&lesson, lesson.steps.len()), "alice.json");
    assert!(
        text(&o.stdout).contains("Wrote alice.json"),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let o = lab(&["grade", "--lesson", LESSON, "alice.json"], &dir);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let n = lesson.steps.len();
    assert!(out.contains(&format!("Steps {n}/{n} done")), "{out}");
    assert!(!out.contains("missing"), "{out}");
    // JSON: every step done, each with the command that did it.
    let o = lab(&["grade", "--lesson", LESSON, "--json", "alice.json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["passed"], true);
    assert_eq!(v["steps_done"], n);
    let steps = v["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .all(|s| s["result"] == "done" && s["command"].is_string())
    );
    assert_eq!(v["quizzes_right_first_time"], lesson.quizzes.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_partial_lesson_fails_naming_the_missing_steps() {
    let dir = scratch("partial");
    let lesson = the_lesson();
    submit(&dir, &solution(&lesson, 3), "bob.json");
    let o = lab(&["grade", "--lesson", LESSON, "--json", "bob.json"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["passed"], false);
    assert_eq!(v["steps_done"], 3);
    assert_eq!(v["steps"][3]["result"], "missing");
    assert_eq!(v["quizzes"][0]["result"], "unanswered");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tampered_submission_is_graded_by_its_lines_not_its_claims() {
    let dir = scratch("tampered");
    let lesson = the_lesson();
    submit(&dir, &solution(&lesson, 3), "eve.json");
    // Eve claims every step and quiz.
    let path = dir.join("eve.json");
    let mut sub: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let all: Vec<u32> = (1..=lesson.steps.len() as u32).collect();
    sub["claimed"]["steps"] = serde_json::json!(all);
    std::fs::write(&path, serde_json::to_string(&sub).unwrap()).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "eve.json"], &dir);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("Steps 3/"), "{out}");
    assert!(out.contains("claims step 4, step 5"), "{out}");
    // An echo of a step's words in place of its commands completes nothing.
    let mut lines = solution(&lesson, 3);
    lines.push(format!("echo {}", lesson.steps[3].title));
    std::fs::write(dir.join("echo.lab"), lines.join("\n")).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "echo.lab"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("Steps 3/"), "{}", text(&o.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

/// QA 24 §3: handing in a draft (`lesson submit`, one that worked and one that failed)
/// is no work on the cluster: the final submission leaves those lines out, and a grader
/// replaying an older submission or a script skips them, so `lines_failed` counts only
/// typos and refused commands.
#[test]
fn a_draft_handed_in_is_not_a_failed_line_of_the_final_submission() {
    let dir = scratch("draft");
    let lesson = the_lesson();
    let mut lines = solution(&lesson, 1);
    lines.push("lesson submit draft.json".to_string());
    lines.push("lesson submit".to_string());
    lines.push("lesson submit no/such/dir/x.json".to_string());
    lines.extend(lesson.steps[1].commands.iter().map(|c| c.text.clone()));
    submit(&dir, &lines, "final.json");
    let sub: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("final.json")).unwrap()).unwrap();
    let typed: Vec<&str> = sub["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_str().unwrap())
        .collect();
    assert!(
        typed.iter().all(|l| !l.starts_with("lesson submit")),
        "{typed:?}"
    );
    let o = lab(&["grade", "--lesson", LESSON, "--json", "final.json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["steps_done"], 2, "{v}");
    assert_eq!(v["lines_failed"], 0, "{v}");
    assert_eq!(v["failed_lines"], serde_json::json!([]), "{v}");
    // A script holding the same lines (as an older submission did) is graded alike.
    std::fs::write(dir.join("hw.lab"), lines.join("\n")).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "--json", "hw.lab"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["steps_done"], 2, "{v}");
    assert_eq!(v["lines_failed"], 0, "{v}");
    assert_eq!(v["lines_replayed"], lines.len() - 3, "{v}");
    assert!(dir.join("draft.json").exists(), "the draft was written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_script_is_graded_as_typed_and_its_replay_writes_no_file() {
    let dir = scratch("script");
    let lesson = the_lesson();
    let mut lines = solution(&lesson, 2);
    lines.push("save written-by-the-grader.json".to_string());
    std::fs::write(dir.join("hw.lab"), lines.join("\n")).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "--json", "hw.lab"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["steps_done"], 2);
    // The `save` failed in the replay, and the verdict counts it.
    assert!(v["lines_failed"].as_u64() >= Some(1), "{v}");
    assert!(!dir.join("written-by-the-grader.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_be_graded_is_refused_with_exit_2() {
    let dir = scratch("refused");
    std::fs::write(
        dir.join("x.json"),
        r#"{"format":"cni-csi-lab-save","version":1}"#,
    )
    .unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "x.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not \"cni-csi-lab-submission\""),
        "{}",
        text(&o.stderr)
    );
    std::fs::write(
        dir.join("new.json"),
        r#"{"format":"cni-csi-lab-submission","version":9}"#,
    )
    .unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "new.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("upgrade the lab"),
        "{}",
        text(&o.stderr)
    );
    let o = lab(&["grade", "--lesson", "nosuch", "x.lab"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let lesson = the_lesson();
    submit(&dir, &solution(&lesson, 1), "c.json");
    let o = lab(&["grade", "--lesson", "ch2-core-ideas", "c.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("a submission for lesson ch7-hands-on"),
        "{}",
        text(&o.stderr)
    );
    // A variant the file names that the lesson does not have is the file's fault, named so
    // (it said "--variant takes 0 to 127", an option the teacher never gave).
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).unwrap()).unwrap();
    edited["variant"] = serde_json::json!(500);
    std::fs::write(dir.join("v500.json"), edited.to_string()).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "v500.json"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("v500.json names variant 500")
            && !text(&o.stderr).contains("--variant takes"),
        "{}",
        text(&o.stderr)
    );
    // An option that shapes a session's lab is refused, naming what grade takes.
    let o = lab(
        &["grade", "--lesson", LESSON, "--record", "g.cast", "c.json"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("takes no --record: it takes --lesson ID"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lesson_done_in_two_sittings_replays_to_the_same_verdict() {
    use lab_engine::lesson::grade::{self, Submission};
    let lesson = the_lesson();
    let commands = |steps: std::ops::Range<usize>| -> Vec<String> {
        lesson.steps[steps]
            .iter()
            .flat_map(|s| s.commands.iter().map(|c| c.text.clone()))
            .collect()
    };
    let mut desk = Desk::new();
    let start = format!("lesson start {}", lesson.id);
    let _ = desk.execute(&start);
    for l in commands(0..2) {
        let _ = desk.execute(&l);
    }
    // Quit for the day; something typed outside the lesson; back the next day.
    let _ = desk.execute("lesson stop");
    let _ = desk.execute("node list");
    let _ = desk.execute(&start);
    for l in commands(2..4) {
        let _ = desk.execute(&l);
    }
    let progress = &desk
        .lessons
        .session
        .as_ref()
        .expect("in the lesson")
        .progress;
    assert_eq!(progress.steps.len(), 4);
    let sub = Submission::parse(&Submission::of(&lesson.id, progress).to_json()).unwrap();
    assert!(!sub.lines.iter().any(|l| l.line == "node list"));
    assert_eq!(sub.lines.iter().filter(|l| l.line == start).count(), 2);
    let mut fresh = Desk::with_lab(lab_engine::Lab::with_edges(
        lab_engine::Lab::new,
        lab_engine::edge::Edges::files(std::sync::Arc::new(sub.files())),
    ));
    let lines: Vec<(usize, String)> = (1..)
        .zip(sub.lines.iter().map(|l| l.line.clone()))
        .collect();
    let v = grade::replay(
        &mut fresh,
        &lesson.id,
        (sub.variant, None),
        &lines,
        Some(&sub.claimed),
        None,
    )
    .unwrap();
    assert_eq!(v.steps_done(), 4, "{}", v.render().to_text());
    assert!(v.claimed_not_replayed.is_empty());
}

/// Helpers' play, stop 66: `lesson play` printed every quiz's answer and a reset wiped a
/// wrong answer, and the grader counted the right answers after either as first tries. Now
/// both are in the lines handed in, and their replay counts those quizzes as seen.
#[test]
fn answers_seen_in_a_play_or_before_a_reset_are_not_first_tries() {
    let lesson = the_lesson();
    let solved = solution(&lesson, lesson.steps.len());
    let first_time = |dir: &std::path::Path, file: &str| {
        let o = lab(&["grade", "--lesson", LESSON, "--json", file], dir);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
        assert_eq!(v["steps_done"], lesson.steps.len(), "{v}");
        v["quizzes_right_first_time"].as_u64().expect("a count")
    };
    // The whole lesson played before it is started: every quiz's answer was seen.
    let dir = scratch("play");
    let mut lines = vec![format!("lesson play {LESSON}")];
    lines.extend(solved.iter().cloned());
    submit(&dir, &lines, "carol.json");
    assert_eq!(first_time(&dir, "carol.json"), 0);
    let _ = std::fs::remove_dir_all(&dir);
    // Quiz 1 answered wrong, then `lesson reset` and the lesson done again.
    let QuizKind::Choice { answer, .. } = &lesson.quizzes[0].kind else {
        panic!("quiz 1 of {LESSON} is a choice");
    };
    let wrong = if *answer == 'A' { 'B' } else { 'A' };
    let dir = scratch("reset");
    let mut lines = vec![format!("lesson start {LESSON}")];
    lines.extend(std::iter::repeat_n("skip".to_string(), lesson.steps.len()));
    lines.push(format!("lesson answer {wrong}"));
    lines.push("lesson reset".to_string());
    lines.extend(solved.iter().skip(1).cloned());
    submit(&dir, &lines, "dave.json");
    assert_eq!(
        first_time(&dir, "dave.json"),
        u64::try_from(lesson.quizzes.len() - 1).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
    // The lesson played while it is in progress (the play leaves it; it is resumed).
    let dir = scratch("play-inside");
    let mut lines = vec![
        format!("lesson start {LESSON}"),
        format!("lesson play {LESSON}"),
    ];
    lines.extend(solved.iter().cloned());
    submit(&dir, &lines, "erin.json");
    assert_eq!(first_time(&dir, "erin.json"), 0);
    let _ = std::fs::remove_dir_all(&dir);
    // Quiz 1 answered wrong, then another variant and back: the lines before the switch
    // stay in the submission, and the wrong answer counts.
    let dir = scratch("variant");
    let mut lines = vec![format!("lesson start {LESSON}")];
    lines.extend(std::iter::repeat_n("skip".to_string(), lesson.steps.len()));
    lines.push(format!("lesson answer {wrong}"));
    lines.push(format!("lesson start {LESSON} --variant 1"));
    lines.push(format!("lesson start {LESSON} --variant 0"));
    lines.extend(solved.iter().skip(1).cloned());
    submit(&dir, &lines, "frank.json");
    let o = lab(&["grade", "--lesson", LESSON, "--json", "frank.json"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON verdict");
    assert_eq!(v["quizzes"][0]["result"], "right-second-try", "{v}");
    assert_eq!(
        v["quizzes_right_first_time"].as_u64(),
        Some(u64::try_from(lesson.quizzes.len() - 1).unwrap()),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
