//! The stray learner, at random: every lesson is played from start to end by a learner who,
//! at every step, first makes a few plausible mistakes drawn by a seeded generator — a typo,
//! the wrong node, the wrong pod, the previous step's commands again, `skip` then `back`,
//! quitting and resuming, `lesson retry`, asking for a hint — and then follows the last
//! hint (what the lab works out completes the step from where the learner is: `lesson
//! retry` first when the cluster has moved away). The step must then be done; a lesson that
//! strands the learner fails with the seed, the step and the mistakes that led there.
//!
//! Seeded and bounded (two walks per lesson, at most three mistakes a step): the same
//! failure every run.

use lab_engine::Desk;
use lab_engine::lesson::catalog::EMBEDDED;
use lab_engine::lesson::model::{Lesson, Step};
use lab_engine::lesson::{Item, parse};

/// xorshift64*: a few deterministic draws, no dependency.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn at(desk: &Desk) -> usize {
    desk.lessons.session.as_ref().map_or(usize::MAX, |s| s.at)
}

/// `line` with `from` swapped for `to` as a whole word.
fn swap(line: &str, from: &str, to: &str) -> String {
    line.split(' ')
        .map(|w| if w == from { to } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One mistake a learner makes on `step`, as the lines they type; its name for the report.
fn mistake(d: &mut Draws, lesson: &Lesson, i: usize, desk: &Desk) -> (&'static str, Vec<String>) {
    let step = &lesson.steps[i];
    let cmd = step
        .commands
        .get(d.below(step.commands.len()))
        .map(|c| c.text.clone())
        .unwrap_or_else(|| "show routes".into());
    match d.below(8) {
        0 => {
            // A typo in the verb.
            let mut words: Vec<String> = cmd.split(' ').map(String::from).collect();
            if let Some(w) = words.first_mut() {
                w.push('x');
            }
            ("typo", vec![words.join(" ")])
        }
        1 => (
            "wrong node",
            vec![
                swap(&swap(&cmd, "node-1", "node-X"), "node-2", "node-1")
                    .replace("node-X", "node-2"),
            ],
        ),
        2 => {
            let other = desk
                .lab
                .cluster()
                .pods
                .values()
                .map(|p| p.metadata.name().clone())
                .find(|n| !cmd.split(' ').any(|w| w == n));
            let pod = desk
                .lab
                .cluster()
                .pods
                .values()
                .map(|p| p.metadata.name().clone())
                .find(|n| cmd.split(' ').any(|w| w == n));
            match (pod, other) {
                (Some(p), Some(o)) => ("wrong pod", vec![swap(&cmd, &p, &o)]),
                _ => ("hint", vec!["hint".into()]),
            }
        }
        3 if i > 0 => (
            "repeat the previous step",
            lesson.steps[i - 1]
                .commands
                .iter()
                .map(|c| c.text.clone())
                .collect(),
        ),
        4 if i > 0 => ("skip then back", vec!["skip".into(), "back".into()]),
        5 => (
            "quit and resume",
            vec!["reset".into(), format!("lesson start {}", lesson.id)],
        ),
        6 => ("retry", vec!["lesson retry".into()]),
        _ => ("hint", vec!["hint".into()]),
    }
}

/// Follow the last hint until the step is done (at most twice: a retry, then the commands).
fn follow_hints(desk: &mut Desk, i: usize) -> Result<(), String> {
    for _ in 0..2 {
        if at(desk) != i {
            return Ok(());
        }
        let Some(moves) = desk.next_moves() else {
            return Ok(());
        };
        if moves.retry_first.is_some() {
            let _ = desk.execute("lesson retry");
        }
        for c in &moves.commands {
            let _ = desk.execute(&c.text);
        }
    }
    if at(desk) == i {
        let why = desk
            .next_moves()
            .and_then(|m| m.retry_first)
            .unwrap_or_default();
        return Err(format!("following the hints did not complete it ({why})"));
    }
    Ok(())
}

fn walk(lesson: &Lesson, seed: u64) -> Result<(), String> {
    let mut d = Draws(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut desk = crate::common::desk();
    desk.execute(&format!("lesson start {}", lesson.id))
        .map_err(|e| e.message)?;
    let steps: &[Step] = &lesson.steps;
    while at(&desk) < steps.len() {
        let i = at(&desk);
        let mut made = Vec::new();
        for _ in 0..d.below(4) {
            let (what, lines) = mistake(&mut d, lesson, i, &desk);
            made.push(what);
            for l in lines {
                let _ = desk.execute(&l);
            }
            if at(&desk) != i {
                break;
            }
        }
        if at(&desk) < i {
            return Err(format!(
                "step {}: the walk went back ({made:?})",
                steps[i].number
            ));
        }
        if at(&desk) == i {
            follow_hints(&mut desk, i)
                .map_err(|e| format!("step {} after {made:?}: {e}", steps[i].number))?;
        }
    }
    while matches!(
        desk.lessons.session.as_ref().map(|s| s.current()),
        Some(Item::Quiz(..))
    ) {
        desk.execute("skip").map_err(|e| e.message)?;
    }
    Ok(())
}

#[test]
fn a_learner_who_strays_at_random_and_follows_the_hints_finishes_every_lesson() {
    let mut failures = Vec::new();
    for (file, text) in EMBEDDED {
        let lesson = parse::parse(file, text).expect("embedded lessons parse");
        for seed in [1, 2] {
            if let Err(e) = walk(&lesson, seed) {
                failures.push(format!("{} (seed {seed}): {e}", lesson.id));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
