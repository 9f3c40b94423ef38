//! Lesson files: the fixtures under tests/fixtures/lessons/{valid,invalid}/ (each invalid
//! file's `.err` holds the exact errors `lesson lint` reports; `BLESS=1` rewrites them), and
//! every real lesson under lessons/: embedded, lint-clean, verified.

use lab_engine::lesson::catalog::{self, EMBEDDED};
use lab_engine::lesson::{Catalog, QuizKind, lint, parse, play};
use std::path::{Path, PathBuf};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lessons")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v
}

/// Lint one file, naming it by its file name only (so `.err` files are stable).
fn lint_file(path: &Path) -> Vec<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    let text = std::fs::read_to_string(path).expect("read fixture");
    let parsed = catalog::parse_files(vec![(name, text)]);
    lint::lint(&parsed, true)
        .iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn valid_fixtures_parse_and_lint_clean() {
    let files = fixtures("valid");
    assert!(files.len() >= 2);
    for f in files {
        let errs = lint_file(&f);
        assert!(errs.is_empty(), "{}: {errs:#?}", f.display());
    }
}

#[test]
fn valid_fixture_has_the_expected_shape() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lessons/valid/minimal.md");
    let text = std::fs::read_to_string(path).unwrap();
    let l = parse::parse("minimal.md", &text).unwrap();
    assert_eq!(
        (l.id.as_str(), l.chapter, l.format_version),
        ("mini-one", 2, 1)
    );
    assert_eq!(l.steps.len(), 2);
    let s1 = &l.steps[0];
    assert_eq!(s1.section.as_deref(), Some("2.1 the pod network"));
    assert_eq!(s1.task.as_deref(), Some("Create pod `web` on node-1."));
    assert_eq!(s1.commands.len(), 1, "the comment line is not a command");
    assert_eq!(s1.commands[0].line, 22);
    assert_eq!(s1.checks.len(), 2);
    assert_eq!(s1.hints.len(), 2);
    let s2 = &l.steps[1];
    assert!(s2.commands[1].expect_failure);
    assert!(s2.text.iter().any(|t| t.contains("not a lab block")));
    assert_eq!(l.quizzes.len(), 2);
    assert_eq!(l.quizzes[0].question, "Which is the gateway on node-1?");
    assert!(l.quizzes[0].is_right("a") && l.quizzes[0].is_right(" A) "));
    assert!(!l.quizzes[0].is_right("B"));
    assert!(l.quizzes[1].is_right("10.244.1.4"));
}

#[test]
fn invalid_fixtures_report_exact_errors() {
    let bless = std::env::var_os("BLESS").is_some();
    let files = fixtures("invalid");
    assert!(files.len() >= 20);
    let mut failures = Vec::new();
    for f in files {
        let got = lint_file(&f).join("\n") + "\n";
        let err_path = f.with_extension("err");
        if bless {
            std::fs::write(&err_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&err_path).unwrap_or_default();
        if got.trim().is_empty() {
            failures.push(format!("{}: no error at all", f.display()));
        } else if got != want {
            failures.push(format!("{}:\n  want: {want}  got:  {got}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_newer_format_is_refused_with_upgrade_the_lab() {
    let text = "```lesson\nformat_version: 99\nid: x\ntitle: T\nchapter: 7\n```\n";
    let e = parse::parse("x.md", text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.md:2: format_version 99 is newer than this lab understands (1): upgrade the lab to play this lesson"
    );
}

#[test]
fn duplicate_ids_are_reported() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lessons/valid/minimal.md");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = catalog::parse_files(vec![("a.md".into(), text.clone()), ("b.md".into(), text)]);
    let errs: Vec<String> = lint::lint(&parsed, false)
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errs,
        vec!["b.md:3: id \"mini-one\" is already used by a.md".to_string()]
    );
}

fn lessons_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons")
}

#[test]
fn every_lesson_file_is_embedded() {
    let on_disk = cni_csi_lab::lesson_dir::read_dir(&lessons_dir()).unwrap();
    let names: Vec<String> = on_disk
        .iter()
        .map(|(p, _)| {
            format!(
                "lessons/{}",
                Path::new(p).file_name().unwrap().to_str().unwrap()
            )
        })
        .collect();
    let embedded: Vec<String> = EMBEDDED.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        names, embedded,
        "add new lessons/*.md files to catalog::EMBEDDED"
    );
    for ((_, disk), (_, emb)) in on_disk.iter().zip(EMBEDDED) {
        assert_eq!(disk, emb);
    }
}

#[test]
fn every_real_lesson_lints_clean() {
    let parsed = Catalog::Embedded.load();
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    assert!(!parsed.lessons.is_empty());
    let errs = lint::lint(&parsed, false);
    assert!(
        errs.is_empty(),
        "{}",
        errs.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The most right answers one letter has among `answers`.
fn most_of_one_letter(answers: &[char]) -> usize {
    answers
        .iter()
        .map(|a| answers.iter().filter(|b| *b == a).count())
        .max()
        .unwrap_or(0)
}

/// "Always B" passes no lesson: in each real lesson, and in all of them, no letter is the
/// right answer of more than 40 % of the choice quizzes (rounded up), and none is three
/// times in a row.
#[test]
fn the_real_lessons_right_answers_are_spread_over_the_letters() {
    let parsed = Catalog::Embedded.load();
    let mut all = Vec::new();
    for lesson in &parsed.lessons {
        let answers: Vec<char> = lesson
            .quizzes
            .iter()
            .filter_map(|q| match q.kind {
                QuizKind::Choice { answer, .. } => Some(answer),
                QuizKind::Predict { .. } => None,
            })
            .collect();
        let most = most_of_one_letter(&answers);
        assert!(
            most <= (answers.len() * 2).div_ceil(5),
            "{}: one letter answers {most} of its {} choice quizzes ({answers:?})",
            lesson.id,
            answers.len()
        );
        assert!(
            !answers.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]),
            "{}: one letter three times in a row ({answers:?})",
            lesson.id
        );
        all.extend(answers);
    }
    let most = most_of_one_letter(&all);
    assert!(
        most * 5 <= all.len() * 2,
        "one letter answers {most} of the {} choice quizzes",
        all.len()
    );
}

#[test]
fn every_real_lesson_verifies() {
    for l in Catalog::Embedded.load().lessons {
        let errs = play::verify(&l);
        assert!(errs.is_empty(), "{}: {errs:#?}", l.id);
        assert!(
            (8..=40).contains(&l.steps.len()),
            "{} has {} steps",
            l.id,
            l.steps.len()
        );
        for s in &l.steps {
            assert!(s.section.is_some(), "{} step {}", l.id, s.number);
        }
    }
}

#[test]
fn chapter7_lesson_uses_the_chapter_values() {
    let parsed = Catalog::Embedded.load();
    let l = parsed.find("ch7-hands-on").expect("ch7-hands-on");
    let checks: Vec<&str> = l
        .steps
        .iter()
        .flat_map(|s| s.checks.iter().map(|c| c.text.as_str()))
        .collect();
    for want in [
        "pod web ip 10.244.1.2",
        // QA 25 §13: app-b's address is the one it really got on node-2 (10.244.2.2 as the
        // chapter says, unless a pod made there by mistake took it first).
        "pod app-b ip in 10.244.2.0/24",
        "policies web db port 3306/TCP allowed",
        "policies web db port 8080/TCP denied",
        // The chapter's pod runs on node-1; the lab's node-local driver put `data` on
        // node-2 (external-provisioner's preferred topology for that name), so the lesson
        // pins the pod there.
        "pvc data on node-2 state PUBLISHED",
        // The chapter's names and sizes: 5Gi `data` for pod `app`, `ai-agent` with a 2Gi
        // `shared`.
        "pvc data capacity 5Gi",
        "pod app phase Running",
        "attachments 0",
        "pvc db-data capacity 20Gi",
        "pvc db-restore capacity 10Gi",
        "pvc shared phase Bound",
        "pvc shared capacity 2Gi",
        "pod ai-agent phase Running",
    ] {
        assert!(checks.contains(&want), "missing check {want}");
    }
    let sections: Vec<&str> = l
        .steps
        .iter()
        .filter_map(|s| s.section.as_deref())
        .collect();
    for want in [
        "7.4 scenario 1",
        "7.4 scenario 2",
        "7.4 scenario 3",
        "7.4 scenario 4",
        "7.4 scenario 5",
        "7.4 scenario 6",
    ] {
        assert!(
            sections.iter().any(|s| s.starts_with(want)),
            "no step follows {want}"
        );
    }
}

#[test]
fn the_lessons_dir_override_reads_files_fresh() {
    let dir = std::env::temp_dir().join(format!("cni-csi-lab-lessons-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lessons/valid/minimal.md");
    std::fs::copy(&src, dir.join("minimal.md")).unwrap();
    let mut desk = crate::common::desk();
    assert_eq!(desk.lessons.use_dir(crate::common::lessons_at(&dir)), Ok(1));
    let out = desk.execute("lesson list").unwrap().to_text();
    assert!(
        out.contains("mini-one") && !out.contains("ch7-hands-on"),
        "{out}"
    );
    // An author edits the file: the next command sees it.
    std::fs::write(dir.join("broken.md"), "# nothing\n").unwrap();
    let out = desk.execute("lesson list").unwrap().to_text();
    assert!(out.contains("warning: "), "{out}");
    assert!(out.contains("broken.md:1: no ```lesson block"), "{out}");
    let e = desk.execute("lesson lint").unwrap_err();
    assert_eq!(e.message, "lint: 1 problem");
    assert!(
        desk.lessons
            .use_dir(crate::common::lessons_at(dir.join("missing")))
            .is_err()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
