//! Homework: what a learner hands in (`lesson submit FILE`) and a grader's verdict
//! (`cni-csi-lab grade --lesson ID SUBMISSION`).
//!
//! A submission holds the lines the learner typed in the lesson (every sitting since it
//! started or was reset; see [`super::progress::Transcript`]) with the contents of the files
//! they read, and the progress the learner's lab recorded. The grader does not trust the
//! progress: it replays the lines on a fresh lab with the same lessons, so the verdict is
//! the lab's, the same on every machine. What the submission claims is only compared with
//! the replay: a step it claims that the replay does not complete is reported (the file
//! was edited, or made by another version of the lab or of the lesson).
//!
//! A submission records the lesson's variant (see [`super::vary`]; none is variant 0), and
//! the replay plays that variant. A teacher who handed out variants names the student's
//! (`grade --variant N`): a submission of another variant (a classmate's file) fails with
//! the two numbers, and so do lines that switch to another variant on the way.
//!
//! ```json
//! { "format": "cni-csi-lab-submission", "version": 1, "lab_version": "0.1.0",
//!   "lesson": "ch2-core-ideas", "variant": 12,
//!   "lines": [ { "line": "lesson start ch2-core-ideas" },
//!              { "line": "cni conf load my.conflist", "files": { "my.conflist": "…" } } ],
//!   "claimed": { "steps": [1, 2], "quizzes": [1] } }
//! ```

use super::Desk;
use super::progress::{LessonProgress, TypedLine};
use crate::edge::Files;
use crate::engine::LabError;
use crate::render::{Line, Outcome, Role, Table};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The `format` every submission carries.
pub(crate) const FORMAT: &str = "cni-csi-lab-submission";

/// The submission format this lab writes and the newest it reads.
pub const VERSION: u64 = 1;

/// A learner's hand-in: the lines of one lesson and the progress they claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written by this lab.
    pub version: u64,
    /// The lab that wrote it.
    pub lab_version: String,
    /// The lesson's id.
    pub lesson: String,
    /// The lesson's variant the lines were typed in (0, the lesson as written, when the
    /// file has none).
    #[serde(default)]
    pub variant: u32,
    /// What the learner typed, in order, with the files it read.
    pub lines: Vec<TypedLine>,
    /// The steps and quizzes the learner's lab counted (compared, never trusted).
    pub claimed: Claimed,
}

/// The progress a submission claims.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claimed {
    /// Steps done.
    #[serde(default)]
    pub steps: BTreeSet<u32>,
    /// Quizzes answered right.
    #[serde(default)]
    pub quizzes: BTreeSet<u32>,
}

impl Submission {
    /// The submission of a lesson in progress.
    pub fn of(lesson: &str, progress: &LessonProgress) -> Submission {
        Submission {
            format: FORMAT.to_string(),
            version: VERSION,
            lab_version: env!("CARGO_PKG_VERSION").to_string(),
            lesson: lesson.to_string(),
            variant: progress.variant,
            lines: progress.transcript.lines.clone(),
            claimed: Claimed {
                steps: progress.steps.clone(),
                quizzes: progress.quizzes.clone(),
            },
        }
    }

    /// The file's text (pretty JSON, ending in a newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Read a submission, saying what is wrong with one that is not.
    pub fn parse(text: &str) -> Result<Submission, String> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("not a submission: its JSON does not parse ({e})"))?;
        match value.get("format").and_then(Value::as_str) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(format!(
                    "not a submission: its format is {other:?}, not {FORMAT:?}"
                ));
            }
            None => return Err(format!("not a submission: no \"format\": {FORMAT:?}")),
        }
        match value.get("version").and_then(Value::as_u64) {
            Some(v) if v > VERSION => {
                return Err(format!(
                    "the submission is format version {v}; this lab reads up to {VERSION}: upgrade the lab"
                ));
            }
            Some(_) => {}
            None => return Err("not a submission: no \"version\" number".to_string()),
        }
        let sub: Submission =
            serde_json::from_value(value).map_err(|e| format!("the submission is damaged: {e}"))?;
        if sub.lines.len() > super::progress::Transcript::MAX_LINES {
            return Err(format!(
                "the submission has {} lines; a lesson's transcript keeps at most {}",
                sub.lines.len(),
                super::progress::Transcript::MAX_LINES
            ));
        }
        Ok(sub)
    }

    /// The files the lines read, to replay them without a disk.
    pub fn files(&self) -> SubmittedFiles {
        let mut files = BTreeMap::new();
        for l in &self.lines {
            for (name, text) in &l.files {
                files.insert(name.clone(), text.clone());
            }
        }
        SubmittedFiles(files)
    }
}

/// The files a submission carries, as the replay's only disk: a line reads what the
/// learner's line read; nothing is written.
#[derive(Debug, Clone, Default)]
pub struct SubmittedFiles(BTreeMap<String, String>);

impl Files for SubmittedFiles {
    fn read(&self, path: &str, _what: &str, cap: u64) -> std::io::Result<Vec<u8>> {
        match self.0.get(path) {
            Some(text) if text.len() as u64 > cap => Err(std::io::Error::other(format!(
                "{path} is over {} in the submission",
                crate::edge::human_size(cap)
            ))),
            Some(text) => Ok(text.as_bytes().to_vec()),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{path} is not in the submission"),
            )),
        }
    }

    fn write(&self, path: &str, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{path}: a graded replay writes no file"),
        ))
    }
}

/// How one step ended in the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepResult {
    /// Its checks held after this line (its number in the submission).
    Done {
        /// The line's number.
        line: usize,
    },
    /// The learner skipped it.
    Skipped,
    /// Never done.
    Missing,
}

/// How one quiz ended in the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuizResult {
    /// Answered right at the first try, by this line.
    RightFirstTime {
        /// The line's number.
        line: usize,
    },
    /// Answered right at the second try (not counted in the score).
    RightSecondTry {
        /// The line's number.
        line: usize,
    },
    /// Answered wrong (at both tries, or at the first and then skipped), first by this
    /// line.
    Wrong {
        /// The line's number.
        line: usize,
    },
    /// Skipped without an answer.
    Skipped,
    /// Not answered.
    Unanswered,
}

/// The grader's verdict on one submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The lesson's id.
    pub lesson: String,
    /// Its title.
    pub title: String,
    /// The variant replayed.
    pub variant: u32,
    /// Why the variant is not the one expected: the submission's is not the teacher's, or
    /// the lines switched to another (a failing verdict).
    pub wrong_variant: Option<String>,
    /// The lines replayed, each with its number in the submission (in a script, its line
    /// in the file).
    pub lines: Vec<(usize, String)>,
    /// Each step's number, title and result.
    pub steps: Vec<(u32, String, StepResult)>,
    /// Each quiz's number and result.
    pub quizzes: Vec<(u32, QuizResult)>,
    /// The numbers of the lines that failed in the replay (a typo, a refused command, or
    /// a file that is not a script at all).
    pub failed_lines: Vec<usize>,
    /// Items the submission claims done that the replay did not do (`step 19`, `quiz 2`).
    pub claimed_not_replayed: Vec<String>,
    /// The lab version that wrote the submission (none for a script).
    pub written_by: Option<String>,
}

impl Verdict {
    /// Steps done.
    pub fn steps_done(&self) -> usize {
        self.steps
            .iter()
            .filter(|(_, _, r)| matches!(r, StepResult::Done { .. }))
            .count()
    }

    /// Quizzes right at the first try.
    pub(crate) fn quizzes_right(&self) -> usize {
        self.quizzes
            .iter()
            .filter(|(_, r)| matches!(r, QuizResult::RightFirstTime { .. }))
            .count()
    }

    /// The text of the line with this number.
    fn line(&self, number: usize) -> &str {
        self.lines
            .iter()
            .find(|(n, _)| *n == number)
            .map(|(_, l)| l.as_str())
            .unwrap_or("")
    }

    /// Every step done in the expected variant, and nothing claimed that the replay did
    /// not do.
    pub fn passed(&self) -> bool {
        self.steps_done() == self.steps.len()
            && self.claimed_not_replayed.is_empty()
            && self.wrong_variant.is_none()
    }

    /// The table a teacher reads.
    pub fn render(&self) -> Outcome {
        let mut out = Outcome::empty();
        out.line(Line::styled(
            format!(
                "Lesson {}{} · {} — graded by replaying {} line{} on a fresh lab",
                self.lesson,
                match self.variant {
                    0 => String::new(),
                    n => format!(" variant {n}"),
                },
                self.title,
                self.lines.len(),
                if self.lines.len() == 1 { "" } else { "s" }
            ),
            Role::Header,
        ));
        let mut t = Table::new(&["ITEM", "RESULT", "BY LINE"]);
        let by = |line: usize| {
            let text = self.line(line);
            let first = text.lines().next().unwrap_or("");
            format!("{line}: {}", crate::util::clip::fit(first, 48))
        };
        for (n, title, r) in &self.steps {
            let item = format!("step {n} · {}", crate::util::clip::fit(title, 28));
            let (result, line) = match r {
                StepResult::Done { line } => ("done", by(*line)),
                StepResult::Skipped => ("skipped", String::new()),
                StepResult::Missing => ("missing", String::new()),
            };
            t.row([item, result.to_string(), line]);
        }
        for (n, r) in &self.quizzes {
            let (result, line) = match r {
                QuizResult::RightFirstTime { line } => ("right", by(*line)),
                QuizResult::RightSecondTry { line } => ("right at 2nd try", by(*line)),
                QuizResult::Wrong { line } => ("wrong", by(*line)),
                QuizResult::Skipped => ("skipped", String::new()),
                QuizResult::Unanswered => ("unanswered", String::new()),
            };
            t.row([format!("quiz {n}"), result.to_string(), line]);
        }
        out.extend(t.render());
        out.line(Line::styled(
            format!(
                "Steps {}/{} done · quizzes {}/{} right the first time",
                self.steps_done(),
                self.steps.len(),
                self.quizzes_right(),
                self.quizzes.len()
            ),
            if self.steps_done() == self.steps.len() {
                Role::Good
            } else {
                Role::Bad
            },
        ));
        if let Some(why) = &self.wrong_variant {
            out.line(Line::styled(why.clone(), Role::Bad));
        }
        if !self.failed_lines.is_empty() {
            let numbers: Vec<String> = self.failed_lines.iter().map(usize::to_string).collect();
            out.line(Line::styled(
                format!(
                    "{} of the {} lines failed in the replay ({} {}: typos, refused commands, or a file that is not a lab script)",
                    self.failed_lines.len(),
                    self.lines.len(),
                    if numbers.len() == 1 { "line" } else { "lines" },
                    numbers.join(", ")
                ),
                Role::Dim,
            ));
        }
        if !self.claimed_not_replayed.is_empty() {
            out.line(Line::styled(
                format!(
                    "The submission claims {} done, but its lines do not do {}: it was edited, or made by another version of the lab or the lesson{}.",
                    self.claimed_not_replayed.join(", "),
                    if self.claimed_not_replayed.len() == 1 { "it" } else { "them" },
                    match &self.written_by {
                        Some(v) if v != env!("CARGO_PKG_VERSION") => format!(" (it says lab {v}; this is {})", env!("CARGO_PKG_VERSION")),
                        _ => String::new(),
                    }
                ),
                Role::Bad,
            ));
        }
        out
    }

    /// The verdict as JSON, for a grading script.
    pub fn to_json(&self) -> Value {
        let line_of = |line: usize| self.line(line).to_string();
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|(n, title, r)| match r {
                StepResult::Done { line } => json!({"step": n, "title": title, "result": "done", "line": line, "command": line_of(*line)}),
                StepResult::Skipped => json!({"step": n, "title": title, "result": "skipped"}),
                StepResult::Missing => json!({"step": n, "title": title, "result": "missing"}),
            })
            .collect();
        let quizzes: Vec<Value> = self
            .quizzes
            .iter()
            .map(|(n, r)| match r {
                QuizResult::RightFirstTime { line } => {
                    json!({"quiz": n, "result": "right", "line": line})
                }
                QuizResult::RightSecondTry { line } => {
                    json!({"quiz": n, "result": "right-second-try", "line": line})
                }
                QuizResult::Wrong { line } => json!({"quiz": n, "result": "wrong", "line": line}),
                QuizResult::Skipped => json!({"quiz": n, "result": "skipped"}),
                QuizResult::Unanswered => json!({"quiz": n, "result": "unanswered"}),
            })
            .collect();
        json!({
            "lesson": self.lesson,
            "title": self.title,
            "variant": self.variant,
            "wrong_variant": self.wrong_variant,
            "passed": self.passed(),
            "steps_done": self.steps_done(),
            "steps_total": self.steps.len(),
            "quizzes_right_first_time": self.quizzes_right(),
            "quizzes_total": self.quizzes.len(),
            "lines_replayed": self.lines.len(),
            "lines_failed": self.failed_lines.len(),
            "failed_lines": self.failed_lines,
            "claimed_not_replayed": self.claimed_not_replayed,
            "written_by": self.written_by,
            "graded_by": env!("CARGO_PKG_VERSION"),
            "steps": steps,
            "quizzes": quizzes,
        })
    }
}

/// The variant a script of lab commands plays: the one its first `lesson start LESSON` line
/// names (`--variant N`, else 0), read from the parsed command; `None` when no line starts
/// that lesson (the grader starts it, as variant 0).
pub fn script_variant(lesson: &str, lines: &[(usize, String)]) -> Option<u32> {
    use crate::command::{Command, grammar::LessonCmd, parse};
    lines.iter().find_map(|(_, line)| match parse(line) {
        Ok(Some(Command::Lesson(LessonCmd::Start { id, variant }))) if id == lesson => {
            Some(variant.unwrap_or(0))
        }
        _ => None,
    })
}

/// The variant to grade: the one the teacher handed out (`expected`) when named, else the
/// submission's (`recorded`: a script's is [`script_variant`], else 0); and, when both are known and differ, why the
/// verdict fails.
pub fn variant_to_grade(expected: Option<u32>, recorded: Option<u32>) -> (u32, Option<String>) {
    match (expected, recorded) {
        (Some(e), Some(r)) if e != r => (
            e,
            Some(format!(
                "The submission is variant {r}, not variant {e} (the one named with --variant): it was made for another student's variant, or edited; it is graded as variant {e}."
            )),
        ),
        (Some(e), _) => (e, None),
        (None, r) => (r.unwrap_or(0), None),
    }
}

/// Whether `line` is a command the current step's own commands run expecting it to fail
/// (ch2's second ADD, its CreateVolume of a size the driver refuses): its failure is the
/// step's point, not the student's mistake, though it does not complete the step itself.
fn asked_to_fail(desk: &Desk, line: &str) -> bool {
    let Some(super::Item::Step(step)) = desk.lessons.session.as_ref().map(|s| s.current()) else {
        return false;
    };
    let line = line.trim_start();
    let Some(have) = super::check::shape_of(line.strip_prefix('!').unwrap_or(line)) else {
        return false;
    };
    step.commands
        .iter()
        .any(|c| c.expect_failure && super::check::shape_of(&c.text).as_ref() == Some(&have))
}

/// Replay `lines` (numbered as the teacher should see them) on `desk` (a fresh desk with
/// the lessons to grade against, whose files are what the lines may read) after `lesson
/// start LESSON --variant VARIANT`, and say which line did each step and quiz. `claimed`
/// (a submission's) is compared with what the replay did; `wrong_variant` (see
/// [`variant_to_grade`]) fails the verdict, and so do lines that leave the variant.
pub fn replay(
    desk: &mut Desk,
    lesson: &str,
    (variant, wrong_variant): (u32, Option<String>),
    lines: &[(usize, String)],
    claimed: Option<&Claimed>,
    written_by: Option<&str>,
) -> Result<Verdict, LabError> {
    let found = desk
        .lessons
        .find_variant(lesson, variant)
        .map_err(LabError::msg)?;
    desk.run(&format!("lesson start {lesson} --variant {variant}"))
        .result
        .map_err(|e| LabError::msg(format!("lesson start {lesson}: {}", e.message)))?;
    let mut step_by: BTreeMap<u32, usize> = BTreeMap::new();
    let mut quiz_by: BTreeMap<u32, usize> = BTreeMap::new();
    let mut wrong_by: BTreeMap<u32, usize> = BTreeMap::new();
    let mut failed_lines = Vec::new();
    // `lesson submit` hands the lesson in: no work on the cluster, and not replayed (a
    // submission written before transcripts left it out, a script, may hold one).
    let lines: Vec<(usize, String)> = lines
        .iter()
        .filter(|(_, l)| !crate::command::is_lesson_submit(l))
        .cloned()
        .collect();
    for (number, line) in &lines {
        let asked = asked_to_fail(desk, line);
        if desk.run(line).result.is_err() && !asked {
            failed_lines.push(*number);
        }
        let now = progress_of(desk, lesson);
        // `lesson reset` clears what was done: a step done again is done by its new line.
        step_by.retain(|s, _| now.steps.contains(s));
        quiz_by.retain(|q, _| now.quizzes.contains(q));
        wrong_by.retain(|q, _| now.wrong.contains(q));
        for s in now.steps {
            step_by.entry(s).or_insert(*number);
        }
        for q in now.quizzes {
            quiz_by.entry(q).or_insert(*number);
        }
        for q in now.wrong {
            wrong_by.entry(q).or_insert(*number);
        }
    }
    let mut end = progress_of(desk, lesson);
    // Lines that start another variant did that variant's steps, none of this one's.
    let switched = end.variant != variant;
    let switch = format!(
        "The lines switch from variant {variant} to variant {} (`lesson start {lesson} --variant {}`): only variant {variant}'s steps count, and they are not done.",
        end.variant, end.variant
    );
    let wrong_variant = match wrong_variant {
        // Named with --variant, and the lines then started their own: say both.
        Some(named) if switched => Some(format!("{named} {switch}")),
        Some(named) => Some(named),
        None => switched.then_some(switch),
    };
    if switched {
        end = LessonProgress::default();
    }
    let steps = found
        .steps
        .iter()
        .map(|s| {
            let r = match step_by.get(&s.number) {
                Some(&line) if end.steps.contains(&s.number) => StepResult::Done { line },
                _ if end.skipped_steps.contains(&s.number) => StepResult::Skipped,
                _ => StepResult::Missing,
            };
            (s.number, s.title.clone(), r)
        })
        .collect();
    let quizzes = (1..=found.quizzes.len() as u32)
        .map(|q| {
            let r = match quiz_by.get(&q) {
                Some(&line) if end.second_try.contains(&q) => QuizResult::RightSecondTry { line },
                Some(&line) if end.quizzes.contains(&q) => QuizResult::RightFirstTime { line },
                _ if end.wrong.contains(&q) && wrong_by.contains_key(&q) => {
                    QuizResult::Wrong { line: wrong_by[&q] }
                }
                _ if end.skipped_quizzes.contains(&q) => QuizResult::Skipped,
                _ => QuizResult::Unanswered,
            };
            (q, r)
        })
        .collect();
    let mut claimed_not_replayed = Vec::new();
    if let Some(c) = claimed.filter(|_| !switched) {
        claimed_not_replayed.extend(c.steps.difference(&end.steps).map(|s| format!("step {s}")));
        claimed_not_replayed.extend(
            c.quizzes
                .difference(&end.quizzes)
                .map(|q| format!("quiz {q}")),
        );
    }
    Ok(Verdict {
        lesson: found.id.clone(),
        title: found.title.clone(),
        variant,
        wrong_variant,
        lines: lines.to_vec(),
        steps,
        quizzes,
        failed_lines,
        claimed_not_replayed,
        written_by: written_by.map(str::to_string),
    })
}

/// The steps and quizzes of a lesson as they stand (the session's if it is in progress),
/// without its transcript.
fn progress_of(desk: &mut Desk, lesson: &str) -> LessonProgress {
    let stored;
    let p = match &desk.lessons.session {
        Some(s) if s.lesson.id == lesson => &s.progress,
        _ => {
            stored = desk.lessons.progress().of(lesson);
            &stored
        }
    };
    LessonProgress {
        transcript: Default::default(),
        variant: p.variant,
        steps: p.steps.clone(),
        quizzes: p.quizzes.clone(),
        second_try: p.second_try.clone(),
        wrong: p.wrong.clone(),
        shown: p.shown.clone(),
        skipped_steps: p.skipped_steps.clone(),
        skipped_quizzes: p.skipped_quizzes.clone(),
    }
}
