//! The author's linter (`lesson lint`): every file parses with a known format version; ids
//! are unique and slug-safe; every step names its handbook section, has a task, reference
//! commands that parse, a check and non-empty hints; and, played on a fresh lab, every
//! step's check is false before its reference commands and true after them (on the state
//! all previous steps produced). A lesson with variants (see [`super::vary`]) is played at
//! variant 0 and at variants that give every variable each of its values
//! ([`super::vary::Vary::covering`]), each variable must be used, and each variant's
//! reference commands must differ from variant 0's. Errors name file, line and reason.

use super::catalog::Parsed;
use super::model::Lesson;
use super::parse::{LessonError, parse_error_text};
use super::play::verify_with;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The problems of a lesson's variables and of its variants other than 0, played.
fn lint_variants(parsed: &Parsed, lesson: &Arc<Lesson>, decoys: bool) -> Vec<LessonError> {
    let mut errs = Vec::new();
    let text = parsed
        .files
        .iter()
        .find(|(name, _)| *name == lesson.file)
        .map_or("", |(_, t)| t.as_str());
    for g in &lesson.vary.groups {
        for name in &g.names {
            if !text.contains(&format!("${{{name}}}")) {
                errs.push(LessonError::new(
                    &lesson.file,
                    g.line,
                    format!("the variable `{name}` is never used (write `${{{name}}}` where its value goes)"),
                ));
            }
        }
    }
    let commands = |l: &Lesson| -> Vec<String> {
        l.steps
            .iter()
            .flat_map(|s| s.commands.iter().map(|c| c.text.clone()))
            .collect()
    };
    for v in lesson.vary.covering() {
        let varied = match parsed.variant(lesson, v) {
            Ok(l) => l,
            Err(e) => {
                errs.push(LessonError::new(&lesson.file, lesson.meta_line, e));
                continue;
            }
        };
        if commands(&varied) == commands(lesson) {
            errs.push(LessonError::new(
                &lesson.file,
                lesson.meta_line,
                format!(
                    "variant {v}'s reference commands are variant 0's: no variable reaches a command, so one answer fits every variant"
                ),
            ));
        }
        errs.extend(verify_with(&varied, true, decoys).into_iter().map(|mut e| {
            e.reason = format!("variant {v}: {}", e.reason);
            e
        }));
    }
    errs
}

/// Whether an id is a slug: lower-case ASCII letters and digits in words joined by `-`.
pub(crate) fn is_slug(id: &str) -> bool {
    !id.is_empty()
        && id.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The structural problems of one lesson (no playing).
pub(crate) fn lint_structure(lesson: &Lesson) -> Vec<LessonError> {
    let mut errs = Vec::new();
    let mut err = |line: usize, r: String| errs.push(LessonError::new(&lesson.file, line, r));
    if !is_slug(&lesson.id) {
        err(
            lesson.meta_line,
            format!(
                "id {:?} is not slug-safe (lower-case letters, digits and single dashes, e.g. ch7-hands-on)",
                lesson.id
            ),
        );
    }
    if lesson.title.trim().is_empty() {
        err(lesson.meta_line, "the title is empty".into());
    }
    for s in &lesson.steps {
        let what = format!("step {}", s.number);
        if s.section.as_deref().is_none_or(|x| x.trim().is_empty()) {
            err(
                s.line,
                format!(
                    "{what} does not name the handbook section it follows (a line `Section: 7.4 scenario 1`)"
                ),
            );
        }
        if s.task.as_deref().is_none_or(|x| x.trim().is_empty()) {
            err(s.line, format!("{what} has no task (a line `**Task:** …`)"));
        }
        if s.commands.is_empty() {
            err(
                s.line,
                format!("{what} has no reference commands (a ```lab block)"),
            );
        }
        if s.checks.is_empty() {
            err(s.line, format!("{what} has no check (a ```check block)"));
        }
        if s.hints.is_empty() {
            err(s.line, format!("{what} has no hints (a ```hint block)"));
        }
        for h in &s.hints {
            if h.text.trim().is_empty() {
                err(h.line, format!("{what}: this hint is empty"));
            }
        }
        for c in &s.commands {
            match crate::command::parse(&c.text) {
                Ok(Some(cmd)) if super::is_control(&cmd) => err(
                    c.line,
                    format!(
                        "{what}: `{}` is a lesson command, not a lab command",
                        c.text
                    ),
                ),
                Ok(Some(cmd)) => {
                    if let Some(r) = super::guard::refusal(&cmd) {
                        err(c.line, format!("{what}: {r}"));
                    }
                }
                Ok(None) => err(c.line, format!("{what}: empty command")),
                Err(e) => err(
                    c.line,
                    format!(
                        "{what}: `{}` does not parse: {}",
                        c.text,
                        parse_error_text(&e)
                    ),
                ),
            }
        }
    }
    for (i, q) in lesson.quizzes.iter().enumerate() {
        if let super::QuizKind::Predict { run, .. } = &q.kind {
            if let Some(r) = super::guard::refusal_of_line(run) {
                err(q.line, format!("quiz {}: {r}", i + 1));
            }
        }
        if let super::QuizKind::Choice { options, .. } = &q.kind {
            for (c, o) in options {
                if o.trim().is_empty() {
                    err(q.line, format!("quiz {}: option {c}) is empty", i + 1));
                }
            }
        }
    }
    errs
}

/// Lint everything a catalog holds, with the decoys (see [`super::decoy`]) when asked;
/// errors sorted by file and line.
pub fn lint(parsed: &Parsed, decoys: bool) -> Vec<LessonError> {
    let mut errs: Vec<LessonError> = parsed.errors.clone();
    let mut seen: BTreeMap<&str, &Lesson> = BTreeMap::new();
    for l in &parsed.lessons {
        if let Some(first) = seen.get(l.id.as_str()) {
            errs.push(LessonError::new(
                &l.file,
                l.meta_line,
                format!("id {:?} is already used by {}", l.id, first.file),
            ));
        } else {
            seen.insert(&l.id, l);
        }
        let structure = lint_structure(l);
        // A refused file command is reported once (its refusal), not again as failing.
        let refused: Vec<usize> = structure
            .iter()
            .filter(|e| e.reason.contains(super::guard::MARK))
            .map(|e| e.line)
            .collect();
        errs.extend(structure);
        errs.extend(
            verify_with(l, true, decoys)
                .into_iter()
                .chain(lint_variants(parsed, l, decoys))
                .filter(|e| !refused.contains(&e.line)),
        );
    }
    errs.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    errs.dedup();
    errs
}
