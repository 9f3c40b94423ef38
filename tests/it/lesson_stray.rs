//! Every lesson played by a learner who strays, generated from the lesson files themselves:
//!
//! - before each step, failing variants of its commands (an unknown flag, a node that does
//!   not exist) must not complete it, and must change nothing;
//! - an unrelated command, the previous step's read-only commands repeated and a `hint`
//!   must not complete a step, nor stop it from completing on its own commands;
//! - repeating the previous step's commands in full (which may change the cluster) and then
//!   taking the hint's recovery path (`lesson retry`) must still let the lesson finish;
//! - a wrong quiz answer gets one more try and does not complete the quiz.
//!
//! A lesson whose check passes on a failed command, or that strands a learner after one
//! recovered mistake, fails here with the step and the command that showed it. The last
//! test makes sure the player catches a weak check.

use cni_csi_lab::Desk;
use lab_engine::engine::save::first_difference;
use lab_engine::lesson::catalog::EMBEDDED;
use lab_engine::lesson::model::{Lesson, QuizKind, RefCommand, Step};
use lab_engine::lesson::{Item, parse};

type Played = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

fn lessons() -> Vec<Lesson> {
    EMBEDDED
        .iter()
        .map(|(file, text)| parse::parse(file, text).expect("embedded lessons parse"))
        .collect()
}

fn at(desk: &Desk) -> usize {
    desk.lessons.session.as_ref().map_or(usize::MAX, |s| s.at)
}

/// What a line printed and whether it failed (a failure a step expected comes back as
/// output with its `error:` line, so the step's completion can follow it).
fn run(desk: &mut Desk, line: &str) -> (String, bool) {
    match desk.execute(line) {
        Ok(o) => {
            let text = o.to_text();
            let failed = text.lines().any(|l| l.starts_with("error:"));
            (text, failed)
        }
        Err(e) => (format!("{}error: {}", e.output.to_text(), e.message), true),
    }
}

/// The commands a learner types only to look: they change no state.
fn read_only(line: &str) -> bool {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("show" | "get" | "describe" | "trace" | "reach" | "explain" | "help"), _) => true,
        (Some("cni"), Some("cached" | "version")) => true,
        (Some("cni"), Some("conf")) => words.next() == Some("show"),
        _ => false,
    }
}

/// Failing variants of a reference command: an unknown flag, and (when it names a node) a
/// node that does not exist.
fn failing_variants(c: &RefCommand) -> Vec<String> {
    let mut out = vec![format!("{} --no-such-flag", c.text)];
    let words: Vec<&str> = c.text.split_whitespace().collect();
    if let Some(i) = words.iter().position(|w| *w == "--node")
        && i + 1 < words.len()
    {
        let mut v: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        v[i + 1] = "node-nosuch".into();
        out.push(v.join(" "));
    }
    out
}

/// The cluster a rejected command must leave alone: the save file's state snapshot without
/// the logs (a call refused by the driver is still a call on the wire).
fn state(desk: &mut Desk) -> serde_json::Value {
    let mut s = desk.lab.state_snapshot();
    if let Some(map) = s.as_object_mut() {
        map.remove("logs");
    }
    s
}

fn step_label(lesson: &Lesson, step: &Step) -> String {
    format!("{} step {} ({})", lesson.id, step.number, step.title)
}

/// Run a step's reference commands; true when the step completed on them.
fn play_step(desk: &mut Desk, i: usize, step: &Step) -> bool {
    for c in &step.commands {
        let _ = run(desk, &c.text);
        if at(desk) > i {
            return true;
        }
    }
    at(desk) > i
}

fn start(desk: &mut Desk, lesson: &Lesson) -> Played {
    let (out, failed) = run(desk, &format!("lesson start {}", lesson.id));
    ensure!(
        !failed && at(desk) == 0,
        "{}: lesson start: {out}",
        lesson.id
    );
    Ok(())
}

/// Each choice quiz: a wrong answer first (one more try, not completed), then the right
/// one. A prediction has one try (its command's output shows the answer): the lesson's first
/// is answered wrong and ends there, graded wrong; the others are answered right.
fn answer_quizzes(desk: &mut Desk, lesson: &Lesson) -> Played {
    let first_predict = lesson
        .quizzes
        .iter()
        .position(|q| matches!(q.kind, QuizKind::Predict { .. }));
    for (q, quiz) in lesson.quizzes.iter().enumerate() {
        let here = lesson.steps.len() + q;
        let label = format!("{} quiz {}", lesson.id, q + 1);
        ensure!(
            at(desk) == here,
            "{label}: not on it (at item {})",
            at(desk)
        );
        let (wrong, right) = match &quiz.kind {
            QuizKind::Choice { options, answer } => {
                let wrong = options.iter().map(|(k, _)| *k).find(|k| k != answer);
                let Some(wrong) = wrong else {
                    return Err(format!("{label}: a choice quiz needs a wrong option"));
                };
                (wrong.to_string(), answer.to_string())
            }
            QuizKind::Predict { answer, .. } if Some(q) == first_predict => {
                // A wrong answer of the kind asked: another of the question's options,
                // or an address no pod has.
                let options: Vec<&str> = quiz.question.split('`').skip(1).step_by(2).collect();
                let wrong = options
                    .iter()
                    .find(|o| **o != answer.as_str())
                    .filter(|_| !answer.starts_with('{'))
                    .map_or("192.0.2.1", |o| *o);
                let (out, _) = run(desk, &format!("lesson answer {wrong}"));
                ensure!(
                    at(desk) == here + 1 && out.contains("a prediction has one try"),
                    "{label}: a wrong prediction ends its quiz:\n{out}"
                );
                continue;
            }
            QuizKind::Predict { answer, .. } => {
                // An address the lab reads once the command ran (`{pod web ip}`) cannot be
                // typed before it: any address ends the quiz.
                let given = if answer.starts_with('{') {
                    "192.0.2.1"
                } else {
                    answer.as_str()
                };
                let (out, failed) = run(desk, &format!("lesson answer {given}"));
                ensure!(
                    !failed && at(desk) == here + 1,
                    "{label}: the prediction:\n{out}"
                );
                continue;
            }
        };
        let (out, _) = run(desk, &format!("lesson answer {wrong}"));
        ensure!(
            at(desk) == here,
            "{label}: a wrong answer completed it:\n{out}"
        );
        ensure!(
            out.to_lowercase().contains("try"),
            "{label}: a first wrong answer offers one more try:\n{out}"
        );
        let (out, failed) = run(desk, &format!("lesson answer {right}"));
        ensure!(
            !failed && at(desk) == here + 1,
            "{label}: the right answer:\n{out}"
        );
    }
    let finished = desk
        .lessons
        .session
        .as_ref()
        .is_some_and(|s| matches!(s.current(), Item::Finished));
    ensure!(finished, "{}: not finished after the last quiz", lesson.id);
    Ok(())
}

/// Before each command of each step, its failing variants: none completes the step or
/// changes the cluster.
fn stray_with_failing_variants(desk: &mut Desk, lesson: &Lesson) -> Played {
    start(desk, lesson)?;
    for (i, step) in lesson.steps.iter().enumerate() {
        let label = step_label(lesson, step);
        for c in &step.commands {
            for variant in failing_variants(c) {
                let before = state(desk);
                let (out, failed) = run(desk, &variant);
                // An unknown flag always fails; a node that does not exist may be a no-op the
                // component answers OK (ControllerUnpublishVolume of a volume not published
                // there, CSI spec), which must still change nothing.
                ensure!(
                    failed || !variant.ends_with("--no-such-flag"),
                    "{label}: `{variant}` was meant to fail:\n{out}"
                );
                ensure!(
                    at(desk) == i,
                    "{label}: the failing `{variant}` completed it:\n{out}"
                );
                let after = state(desk);
                ensure!(
                    before == after,
                    "{label}: the failing `{variant}` changed the cluster: {}",
                    first_difference("state", &after, &before).unwrap_or_default()
                );
            }
            // The command itself, so the next one's variants start where the learner is.
            let _ = run(desk, &c.text);
            if at(desk) > i {
                break;
            }
        }
        ensure!(
            at(desk) > i,
            "{label}: its own commands did not complete it"
        );
    }
    answer_quizzes(desk, lesson)
}

/// Before each step: an unrelated look, the previous step's looks again, a hint.
fn stray_by_looking_around(desk: &mut Desk, lesson: &Lesson) -> Played {
    start(desk, lesson)?;
    for (i, step) in lesson.steps.iter().enumerate() {
        let label = step_label(lesson, step);
        let _ = run(desk, "get nodes");
        if i > 0 {
            for c in &lesson.steps[i - 1].commands {
                if read_only(&c.text) {
                    let _ = run(desk, &c.text);
                }
            }
        }
        ensure!(at(desk) == i, "{label}: looking around completed it");
        let (hint, _) = run(desk, "hint");
        ensure!(at(desk) == i, "{label}: `hint` completed it:\n{hint}");
        ensure!(
            play_step(desk, i, step),
            "{label}: did not complete on its own commands after the learner looked around"
        );
    }
    answer_quizzes(desk, lesson)
}

/// Before each step, the previous step's commands again in full; when that strands the
/// learner, the hint names `lesson retry` and the retried step completes.
fn stray_by_repeating(desk: &mut Desk, lesson: &Lesson) -> Played {
    start(desk, lesson)?;
    for (i, step) in lesson.steps.iter().enumerate() {
        let label = step_label(lesson, step);
        if i > 0 {
            for c in &lesson.steps[i - 1].commands {
                let _ = run(desk, &c.text);
            }
        }
        // Repeating may do this step's work (a step that asks to do it again).
        if at(desk) > i || play_step(desk, i, step) {
            continue;
        }
        let (hint, _) = run(desk, "hint");
        ensure!(
            hint.contains("lesson retry"),
            "{label}: stranded after a repeated step, and the hint does not say how to \
             recover:\n{hint}"
        );
        let (out, failed) = run(desk, "lesson retry");
        ensure!(!failed && at(desk) == i, "{label}: lesson retry: {out}");
        ensure!(
            play_step(desk, i, step),
            "{label}: did not complete after `lesson retry`"
        );
    }
    answer_quizzes(desk, lesson)
}

fn every_lesson(player: fn(&mut Desk, &Lesson) -> Played) {
    let failures: Vec<String> = lessons()
        .iter()
        .filter_map(|l| player(&mut crate::common::desk(), l).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn failing_variants_complete_no_step_and_change_nothing() {
    every_lesson(stray_with_failing_variants);
}

#[test]
fn looking_around_between_steps_strands_no_one() {
    every_lesson(stray_by_looking_around);
}

#[test]
fn repeating_a_step_then_retrying_always_finishes() {
    every_lesson(stray_by_repeating);
}

/// The players catch the defects they exist for: a `!` step checked only by "it failed", and
/// a step checked by "the command ran" that a failed run satisfies.
#[test]
fn the_stray_learner_catches_weak_checks() {
    const WEAK: &str = r#"# Weak

```lesson
format_version: 1
id: weak
title: Weak checks
chapter: 7
```

## Step 1 · A pod

**Task:** Create web.

```lab
pod create web --node node-1
```

```check
pod web exists
```

## Step 2 · Fail

**Task:** Create it again.

```lab
! pod create web --node node-1
```

```check
last command failed
```
"#;
    let dir = std::env::temp_dir().join(format!("cni-csi-lab-stray-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("weak.md"), WEAK).unwrap();
    let lesson = parse::parse("weak.md", WEAK).unwrap();
    let mut desk = crate::common::desk();
    desk.lessons
        .use_dir(crate::common::lessons_at(&dir))
        .unwrap();
    let e = stray_with_failing_variants(&mut desk, &lesson).unwrap_err();
    assert!(
        e.contains("weak step 2 (Fail): the failing `pod create web --node node-1 --no-such-flag` completed it"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
