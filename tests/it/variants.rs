//! A variant per student (`lesson start ID --variant N`): each lesson's variants have their
//! own names, ports, addresses and nodes, so one variant's answers do not complete another;
//! the variant is kept across sittings, shown, handed in with `lesson submit` and graded.

use lab_engine::Desk;
use lab_engine::lesson::grade::{self, QuizResult, Submission};
use lab_engine::lesson::{Catalog, Lesson, QuizKind, parse, vary};
use std::process::{Command, Output};
use std::sync::Arc;

/// Every step's reference commands, in order: what a student of that variant types.
fn typed(lesson: &Lesson) -> Vec<(usize, String)> {
    (1..)
        .zip(
            lesson
                .steps
                .iter()
                .flat_map(|s| s.commands.iter().map(|c| c.text.clone())),
        )
        .collect()
}

/// The verdict on `lines` replayed at `variant` of lesson `id`.
fn graded(id: &str, variant: u32, lines: &[(usize, String)]) -> grade::Verdict {
    // The disk, as the grader has it: a step may load a file of `assets/`.
    let mut desk = crate::common::desk();
    grade::replay(&mut desk, id, (variant, None), lines, None, None).expect("graded")
}

#[test]
fn each_variant_s_own_solution_completes_it_and_another_s_does_not() {
    let parsed = Catalog::Embedded.load();
    for lesson in &parsed.lessons {
        assert!(
            lesson.vary.count() >= 30,
            "{} has {} variants: fewer than a class",
            lesson.id,
            lesson.vary.count()
        );
        // Two seeds per lesson, each played against its own lines and the other's.
        let (a, b) = (5, 12);
        let la = parsed.variant(lesson, a).expect("variant a");
        let lb = parsed.variant(lesson, b).expect("variant b");
        let steps = lesson.steps.len();
        for (mine, theirs, n) in [(&la, &lb, a), (&lb, &la, b)] {
            let own = graded(&lesson.id, n, &typed(mine));
            assert!(own.passed(), "{} variant {n}:\n{}", lesson.id, text(&own));
            assert_eq!(own.variant, n);
            let copied = graded(&lesson.id, n, &typed(theirs));
            assert!(
                !copied.passed() && copied.steps_done() < steps,
                "{} variant {n} passes on another variant's lines:\n{}",
                lesson.id,
                text(&copied)
            );
        }
    }
}

fn text(v: &grade::Verdict) -> String {
    v.render().to_text()
}

#[test]
fn variant_0_is_the_lesson_as_written_and_the_others_differ_in_what_a_student_copies() {
    let parsed = Catalog::Embedded.load();
    for lesson in &parsed.lessons {
        let zero = parsed.variant(lesson, 0).unwrap();
        assert!(Arc::ptr_eq(&zero, lesson));
        let (file, text) = parsed
            .files
            .iter()
            .find(|(f, _)| *f == lesson.file)
            .unwrap();
        assert_eq!(
            lab_engine::lesson::parse::parse_variant(file, text, 0).unwrap(),
            **lesson
        );
        let one = parsed.variant(lesson, 1).unwrap();
        assert_eq!(one.variant, 1);
        assert_eq!(one.steps.len(), lesson.steps.len());
        assert_ne!(typed(&one), typed(lesson), "{}", lesson.id);
    }
}

/// Each choice quiz of a lesson: its options (label, text) and the right label.
fn choices(lesson: &Lesson) -> Vec<(Vec<(char, String)>, char)> {
    lesson
        .quizzes
        .iter()
        .filter_map(|q| match &q.kind {
            QuizKind::Choice { options, answer } => Some((options.clone(), *answer)),
            QuizKind::Predict { .. } => None,
        })
        .collect()
}

/// The text of a choice quiz's right option.
fn right_text(options: &[(char, String)], answer: char) -> &str {
    options
        .iter()
        .find(|(label, _)| *label == answer)
        .map(|(_, text)| text.as_str())
        .expect("the answer is an option")
}

#[test]
fn a_variant_shows_each_choice_quiz_s_options_in_its_own_order_and_the_right_one_stays_right() {
    let parsed = Catalog::Embedded.load();
    let (mut quizzes, mut reordered) = (0, 0);
    for lesson in &parsed.lessons {
        let (file, text) = parsed
            .files
            .iter()
            .find(|(f, _)| *f == lesson.file)
            .unwrap();
        for n in 1..=16 {
            let varied = parsed.variant(lesson, n).unwrap();
            assert_eq!(
                parsed.variant(lesson, n).unwrap(),
                varied,
                "the same each time"
            );
            // The variant's words in the order written: its values put in by hand, read as
            // variant 0 (which keeps the order).
            let values = lesson.vary.values(n).unwrap();
            let words: Vec<String> = (1..)
                .zip(text.lines())
                .map(|(i, l)| vary::substitute(file, i, l, &values).unwrap())
                .collect();
            let written = parse::parse(file, &words.join("\n")).unwrap();
            let (shown, written) = (choices(&varied), choices(&written));
            assert_eq!(shown.len(), written.len());
            for (i, ((options, answer), (as_written, right))) in
                shown.iter().zip(&written).enumerate()
            {
                let what = format!("{} variant {n} choice quiz {}", lesson.id, i + 1);
                let labels = |o: &[(char, String)]| o.iter().map(|(l, _)| *l).collect::<Vec<_>>();
                assert_eq!(
                    labels(options),
                    labels(as_written),
                    "{what}: labelled A, B, … as shown"
                );
                let texts = |o: &[(char, String)]| {
                    let mut t: Vec<String> = o.iter().map(|(_, t)| t.clone()).collect();
                    t.sort();
                    t
                };
                assert_eq!(
                    texts(options),
                    texts(as_written),
                    "{what}: the same options"
                );
                assert_eq!(
                    right_text(options, *answer),
                    right_text(as_written, *right),
                    "{what}: the right option stays right"
                );
                quizzes += 1;
                if options != as_written {
                    reordered += 1;
                }
            }
        }
    }
    // A random order of three options is the written one once in six.
    assert!(
        reordered * 4 > quizzes * 3,
        "{reordered} of {quizzes} choice quizzes shown in another order"
    );
}

#[test]
fn the_grader_reads_a_variant_s_answers_by_its_own_letters() {
    let parsed = Catalog::Embedded.load();
    let lesson = parsed.find(LESSON).unwrap();
    let written = choices(&lesson);
    // A variant in which some choice quiz's right letter is not the lesson's as written.
    let (n, varied) = (1..lesson.vary.count())
        .map(|n| (n, parsed.variant(&lesson, n).unwrap()))
        .find(|(_, v)| {
            choices(v)
                .iter()
                .zip(&written)
                .any(|((_, a), (_, b))| a != b)
        })
        .expect("a variant whose letters are not the lesson's");
    let skips = vec!["skip".to_string(); varied.steps.len()];
    let numbered = |lines: Vec<String>| -> Vec<(usize, String)> { (1..).zip(lines).collect() };
    // Every choice quiz answered with the variant's letter is right the first time.
    let mut lines = skips.clone();
    for q in &varied.quizzes {
        lines.push(match &q.kind {
            QuizKind::Choice { answer, .. } => format!("lesson answer {answer}"),
            QuizKind::Predict { .. } => "skip".to_string(),
        });
    }
    let verdict = graded(LESSON, n, &numbered(lines));
    for ((q, result), quiz) in verdict.quizzes.iter().zip(&varied.quizzes) {
        if matches!(quiz.kind, QuizKind::Choice { .. }) {
            assert!(
                matches!(result, QuizResult::RightFirstTime { .. }),
                "variant {n} quiz {q}: {result:?}"
            );
        }
    }
    // The lesson's letter as written, where the variant's differs, is wrong, and `skip`
    // there shows the variant's.
    let mut lines = skips;
    let (at, right, letter) = varied
        .quizzes
        .iter()
        .enumerate()
        .find_map(|(i, q)| {
            let (
                QuizKind::Choice { answer, .. },
                QuizKind::Choice {
                    answer: as_written, ..
                },
            ) = (&q.kind, &lesson.quizzes[i].kind)
            else {
                return None;
            };
            (answer != as_written).then_some((i, *answer, *as_written))
        })
        .unwrap();
    lines.extend(vec!["skip".to_string(); at]);
    let mut desk = crate::common::desk();
    desk.execute(&format!("lesson start {LESSON} --variant {n}"))
        .unwrap();
    for l in &lines {
        desk.execute(l).unwrap();
    }
    let shown = desk.execute("skip").unwrap().to_text();
    assert!(shown.contains(&format!("The answer: {right}.")), "{shown}");
    lines.push(format!("lesson answer {letter}"));
    let last = lines.len();
    let verdict = graded(LESSON, n, &numbered(lines));
    assert_eq!(verdict.quizzes[at].1, QuizResult::Wrong { line: last });
}

const LESSON: &str = "ch7-hands-on";

#[test]
fn the_variant_is_kept_across_sittings_shown_and_reset_keeps_it() {
    let mut desk = crate::common::desk();
    let out = desk
        .execute(&format!("lesson start {LESSON} --variant 7"))
        .unwrap()
        .to_text();
    assert!(out.contains("Variant 7 of "), "{out}");
    let lesson = desk.lessons.find_variant(LESSON, 7).unwrap();
    for c in &lesson.steps[0].commands {
        desk.execute(&c.text).unwrap();
    }
    let status = desk.execute("lesson status").unwrap().to_text();
    assert!(
        status.contains("steps 1/") && status.contains(" · variant 7"),
        "{status}"
    );
    let view = lab_engine::dash::lesson_view(&desk.lab, &desk.lessons, None).unwrap();
    assert!(view.position.ends_with(" · variant 7"), "{}", view.position);
    // Quit and come back without naming it: the same variant, the same progress.
    desk.execute("lesson stop").unwrap();
    desk.execute(&format!("lesson start {LESSON}")).unwrap();
    let s = desk.lessons.session.as_ref().unwrap();
    assert_eq!((s.lesson.variant, s.progress.steps.len()), (7, 1));
    assert_eq!(s.lesson.steps[0].commands, lesson.steps[0].commands);
    desk.execute("lesson reset").unwrap();
    assert_eq!(desk.lessons.session.as_ref().unwrap().lesson.variant, 7);
    assert_eq!(desk.lessons.progress().of(LESSON).variant, 7);
    // Another variant is another lesson: it starts over, and says so.
    for c in &lesson.steps[0].commands {
        desk.execute(&c.text).unwrap();
    }
    let out = desk
        .execute(&format!("lesson start {LESSON} --variant 8"))
        .unwrap()
        .to_text();
    assert!(
        out.contains(
            "Variant 8: other names and addresses than variant 7, so the lesson starts over"
        ),
        "{out}"
    );
    let s = desk.lessons.session.as_ref().unwrap();
    assert_eq!((s.lesson.variant, s.progress.steps.len()), (8, 0));
    // Variant 0 says nothing about variants.
    let out = desk
        .execute(&format!("lesson start {LESSON} --variant 0"))
        .unwrap()
        .to_text();
    assert!(!out.contains("Variant 0 of"), "{out}");
    let status = desk.execute("lesson status").unwrap().to_text();
    assert!(!status.contains("variant"), "{status}");
}

#[test]
fn a_bad_variant_is_refused_naming_what_is_accepted_and_changes_nothing() {
    let mut desk = crate::common::desk();
    desk.execute(&format!("lesson start {LESSON} --variant 3"))
        .unwrap();
    let count = desk.lessons.find(LESSON).unwrap().vary.count();
    for (line, says) in [
        (
            format!("lesson start {LESSON} --variant {count}"),
            format!(
                "lesson {LESSON} has no variant {count}: this lesson has {count} variants, so --variant takes 0 to {}",
                count - 1
            ),
        ),
        (
            format!("lesson start {LESSON} --variant -1"),
            "must be ≥ 0".to_string(),
        ),
        (
            format!("lesson start {LESSON} --variant seven"),
            "\"seven\" for --variant: not a whole number: digits only (0, 1, 2, …)".to_string(),
        ),
        (
            format!("lesson start {LESSON} --variant 99999999999"),
            "too large; the largest is 4294967295".to_string(),
        ),
        (
            format!("lesson play {LESSON} --variant {count}"),
            format!("has no variant {count}"),
        ),
    ] {
        let e = desk.execute(&line).unwrap_err();
        assert!(e.message.contains(&says), "{line}: {}", e.message);
        let s = desk.lessons.session.as_ref().expect("still in the lesson");
        assert_eq!(
            (s.lesson.variant, s.at),
            (3, 0),
            "{line} changed the session"
        );
    }
}

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

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

#[test]
fn a_submission_records_its_variant_and_the_grader_holds_it_to_the_one_handed_out() {
    let dir = std::env::temp_dir().join(format!("lab-variants-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lesson = Desk::new().lessons.find_variant(LESSON, 9).unwrap();
    let mut script = format!("lesson start {LESSON} --variant 9\n");
    // The lesson's own commands, a failure it asks for written `!` as a script writes it
    // (the failing line completes its step and is still a failure).
    for c in lesson.steps.iter().flat_map(|s| &s.commands) {
        if c.expect_failure {
            script.push_str("! ");
        }
        script.push_str(&c.text);
        script.push('\n');
    }
    script.push_str("lesson submit ann.json\n");
    std::fs::write(dir.join("session.lab"), script).unwrap();
    let o = lab(&["run", "--keep-going", "session.lab"], &dir);
    assert!(o.status.success(), "{}", out(&o));
    let sub = Submission::parse(&std::fs::read_to_string(dir.join("ann.json")).unwrap()).unwrap();
    assert_eq!(sub.variant, 9);

    // The grader reads the variant from the submission, and from a script handed in as
    // homework, its `lesson start` line; named as the one handed out, either passes, and
    // named as another variant (a classmate's file), either fails.
    for file in ["ann.json", "session.lab"] {
        let o = lab(&["grade", "--lesson", LESSON, file], &dir);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", out(&o));
        assert!(
            out(&o).starts_with(&format!("Lesson {LESSON} variant 9 · ")),
            "{file}: {}",
            out(&o)
        );
        let o = lab(&["grade", "--lesson", LESSON, "--variant", "9", file], &dir);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", out(&o));
        let o = lab(&["grade", "--lesson", LESSON, "--variant", "4", file], &dir);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", out(&o));
        assert!(
            out(&o).contains("The submission is variant 9, not variant 4"),
            "{file}: {}",
            out(&o)
        );
    }
    let o = lab(
        &[
            "grade",
            "--lesson",
            LESSON,
            "--variant",
            "4",
            "--json",
            "ann.json",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["variant"], 4);
    assert!(
        v["wrong_variant"]
            .as_str()
            .unwrap()
            .starts_with("The submission is variant 9, not variant 4"),
        "{v}"
    );
    assert!(v["steps_done"].as_u64() < v["steps_total"].as_u64(), "{v}");

    // A student who edits the variant in the file (to a friend's, say) is caught by their
    // own first line, which started variant 9: only the variant graded counts.
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ann.json")).unwrap()).unwrap();
    edited["variant"] = serde_json::json!(2);
    std::fs::write(dir.join("edited.json"), edited.to_string()).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "edited.json"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        out(&o).contains("The lines switch from variant 2 to variant 9"),
        "{}",
        out(&o)
    );
    // With that line taken out too, the lines are replayed on variant 2: they do not do
    // its steps, and the steps claimed give the edit away.
    edited["lines"].as_array_mut().unwrap().remove(0);
    std::fs::write(dir.join("edited.json"), edited.to_string()).unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "edited.json"], &dir);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(
        out(&o).contains("The submission claims step "),
        "{}",
        out(&o)
    );
    assert!(!out(&o).contains("switch"), "{}", out(&o));
    // A submission without a variant is variant 0.
    let mut plain: serde_json::Value = edited.clone();
    plain.as_object_mut().unwrap().remove("variant");
    let sub: Submission = serde_json::from_value(plain).unwrap();
    assert_eq!(sub.variant, 0);
    // A bad --variant for the grader is refused before anything is read.
    let o = lab(
        &["grade", "--lesson", LESSON, "--variant", "-3", "ann.json"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(out(&o).contains("must be ≥ 0"), "{}", out(&o));

    // A script that starts another lesson's variant plays this one as written.
    std::fs::write(
        dir.join("other.lab"),
        "lesson start ch2-core-ideas --variant 5\nget nodes\n",
    )
    .unwrap();
    let o = lab(&["grade", "--lesson", LESSON, "--json", "other.lab"], &dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["variant"], 0, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lint_names_unknown_and_unused_variables_and_plays_each_value() {
    let head =
        "```lesson\nformat_version: 1\nid: v\ntitle: T\nchapter: 7\nvary: pod = a | b\n```\n";
    let step = |body: &str| {
        format!(
            "{head}## Step 1 · One\nSection: 7.4\n**Task:** t.\n```lab\n{body}\n```\n```check\npod ${{pod}} phase Running\n```\n```hint\nh\n```\n"
        )
    };
    let e = lab_engine::lesson::parse::parse("v.md", &step("pod create ${pdo} --node node-1"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "v.md:12: `${pdo}` names no variable; the lesson declares pod"
    );
    // A value that breaks the lab is found by playing it: `B` is not a DNS label.
    let text = step("pod create ${pod} --node node-1").replace("a | b", "a | B");
    let parsed = lab_engine::lesson::catalog::parse_files(vec![("v.md".into(), text)]);
    let errs: Vec<String> = lab_engine::lesson::lint::lint(&parsed, false)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(
        errs.iter()
            .any(|e| e.starts_with("v.md:") && e.contains("variant 1: step 1:")),
        "{errs:#?}"
    );
    let text = step("pod create a --node node-1").replace("${pod}", "a");
    let parsed = lab_engine::lesson::catalog::parse_files(vec![("v.md".into(), text)]);
    let errs: Vec<String> = lab_engine::lesson::lint::lint(&parsed, false)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(
        errs.contains(
            &"v.md:6: the variable `pod` is never used (write `${pod}` where its value goes)"
                .to_string()
        ),
        "{errs:#?}"
    );
}

/// No variant puts every choice quiz's answer on one letter: "always C" passes no lesson's
/// quizzes whole (a shuffle can land there; the last quiz is then rotated).
#[test]
fn no_variant_has_every_choice_answer_on_one_letter() {
    let parsed = Catalog::Embedded.load();
    for lesson in &parsed.lessons {
        let count = lesson.vary.count().min(200);
        for n in 1..count {
            let varied = parsed.variant(lesson, n).unwrap();
            let answers: Vec<char> = choices(&varied).iter().map(|(_, a)| *a).collect();
            assert!(
                answers.len() < 2 || answers.iter().any(|a| *a != answers[0]),
                "{} variant {n}: every answer is {}",
                lesson.id,
                answers[0]
            );
        }
    }
}
