//! The lesson commands the [`Desk`] runs beside the lab: `lesson list|start|status|answer|reset|stop|
//! play|verify|lint`, `hint`, `skip`, `back`, and the hook that feeds every other line the
//! learner types to the current step's check.
//!
//! The cluster is rebuilt, never patched: `lesson start`, `back`, `skip` and `lesson reset`
//! start from a fresh default cluster and replay the reference commands of the steps before
//! the target one, so the learner always stands where the lesson expects.

use super::Desk;
use super::check;
use super::lint;
use super::model::{Lesson, QuizKind};
use super::play::{self, PlayEvent, PlayOptions};
use super::progress::LessonProgress;
use super::session::{HintAt, Item, LessonSession};
use crate::command::Command;
use crate::command::grammar::LessonCmd;
use crate::command::shape::Shape;
use crate::engine::LabError;
use crate::engine::seen::Executed;
use crate::render::{Line, Outcome, Role, Table};
use std::sync::Arc;

const NO_LESSON: &str =
    "no lesson in progress: `lesson list` shows the lessons, `lesson start ID` starts one";

/// A text progress bar of `done` out of `total`: `[███░░░░░░░]`.
pub(crate) fn progress_bar(done: usize, total: usize) -> String {
    const WIDTH: usize = 10;
    // Rounded to the nearest cell.
    let filled = (done * WIDTH * 2 + total)
        .checked_div(total * 2)
        .unwrap_or(WIDTH)
        .min(WIDTH);
    format!("[{}{}]", "█".repeat(filled), "░".repeat(WIDTH - filled))
}

/// The progress line: the bar over every item, then steps and quizzes counted apart
/// (`[███░░░░░░░] steps 3/17 · quizzes 0/6`), then the variant when it is not the lesson
/// as written (` · variant 12`), the same words in the REPL and the dashboard.
pub(crate) fn progress_line(lesson: &Lesson, p: &super::LessonProgress) -> String {
    format!(
        "{} steps {}/{} · quizzes {}/{}{}",
        progress_bar(p.done(), lesson.item_count()),
        p.steps.len(),
        lesson.steps.len(),
        p.quizzes.len(),
        lesson.quizzes.len(),
        variant_tag(lesson.variant)
    )
}

/// ` · variant N`, or nothing for variant 0 (the lesson as written).
pub fn variant_tag(variant: u32) -> String {
    if variant == 0 {
        String::new()
    } else {
        format!(" · variant {variant}")
    }
}

/// The card for the learner's current item.
pub(crate) fn render_current(s: &LessonSession) -> Outcome {
    let mut out = Outcome::empty();
    out.plain("");
    let lesson = &s.lesson;
    match s.current() {
        Item::Step(step) => {
            let section = step
                .section
                .as_deref()
                .map(|x| format!("  ·  {x}"))
                .unwrap_or_default();
            out.line(
                Line::new()
                    .push(
                        format!(
                            "── Step {}/{} · {}",
                            step.number,
                            lesson.steps.len(),
                            step.title
                        ),
                        Role::Header,
                    )
                    .push(section, Role::Note),
            );
            for l in &step.text {
                out.line(Line::styled(l.clone(), Role::Prose));
            }
            if let Some(t) = &step.task {
                out.line(
                    Line::new()
                        .push("Task: ", Role::Header)
                        .push(t.clone(), Role::Note),
                );
            }
            out.line(Line::styled(
                "(`hint` for a hint · `skip` to let the lab do it · `back` for the previous step)",
                Role::Dim,
            ));
        }
        Item::Quiz(i, q) => {
            let kind = match q.kind {
                QuizKind::Choice { .. } => "",
                QuizKind::Predict { .. } => " · predict, then run",
            };
            out.line(Line::styled(
                format!("── Quiz {}/{}{kind}", i + 1, lesson.quizzes.len()),
                Role::Header,
            ));
            out.line(Line::styled(q.question.clone(), Role::Note));
            match &q.kind {
                QuizKind::Choice { options, .. } => {
                    for (c, o) in options {
                        out.line(Line::styled(format!("  {c}) {o}"), Role::Note));
                    }
                    out.line(Line::styled(
                        "Answer with `lesson answer LETTER` (`skip` shows the answer).",
                        Role::Dim,
                    ));
                }
                QuizKind::Predict { run, .. } => {
                    out.line(Line::styled(
                        format!(
                            "Type `lesson answer YOUR-PREDICTION`; then the lab runs `{run}` and compares."
                        ),
                        Role::Dim,
                    ));
                }
            }
        }
        Item::Finished => {
            let (done, total) = s.counts();
            out.line(Line::styled(
                format!("── Lesson complete: {}", lesson.title),
                Role::Header,
            ));
            out.line(Line::styled(
                format!(
                    "Steps: {} of {} done. Quizzes: {} of {} right the first time{}. `lesson list` shows what is next.",
                    s.progress.steps.len(),
                    lesson.steps.len(),
                    s.progress.right_first_time(),
                    lesson.quizzes.len(),
                    match s.progress.second_try.len() {
                        0 => String::new(),
                        n => format!(", {n} more at the second try"),
                    }
                ),
                if done == total { Role::Good } else { Role::Plain },
            ));
        }
    }
    out.line(Line::styled(progress_line(lesson, &s.progress), Role::Dim));
    out
}

fn error_line(e: &LabError) -> Outcome {
    let mut out = e.output.clone();
    out.line(Line::styled(e.text(), Role::Bad));
    out
}

/// What completes the current step from where the learner is: the last hint, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moves {
    /// The cluster has moved away from what the step needs (why: the first check that
    /// fails, and what the lab has): `lesson retry` first.
    pub retry_first: Option<String>,
    /// The commands to type, in order.
    pub commands: Vec<super::RefCommand>,
}

/// Run a line visibly: `lab> line` then its output (and `error: …`).
fn run_visibly(desk: &mut Desk, line: &str) -> Outcome {
    run_visibly_ok(desk, line).0
}

/// [`run_visibly`], and whether the command succeeded.
fn run_visibly_ok(desk: &mut Desk, line: &str) -> (Outcome, bool) {
    let mut out = Outcome::empty();
    out.line(Line::styled(format!("lab> {line}"), Role::Actor));
    let ok = match desk.execute_lesson_code(line) {
        Ok(o) => {
            out.extend(o);
            true
        }
        Err(e) => {
            out.extend(error_line(&e));
            false
        }
    };
    (out, ok)
}

/// Whether two command lines are the same command as typed (spacing aside).
fn same_line(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// Whether a command the learner ran during a predict quiz already showed what the quiz's
/// `run` will: the same line, or the same view (`show`, `get`, `describe`) asked no more
/// narrowly (`show routes` shows node-1's table as `show routes node-1` does; `show routes
/// node-2` does not).
fn showed_the_answer(ran: &super::check::Ran, run: &str) -> bool {
    if same_line(&ran.line, run) {
        return true;
    }
    let (Some(have), Some(want)) = (ran.shape.as_ref(), super::check::shape_of(run)) else {
        return false;
    };
    if ran.ok() && shows_the_same_facts(&want, have) {
        return true;
    }
    let view = matches!(
        want.path.first().map(String::as_str),
        Some("show" | "get" | "describe")
    );
    ran.ok()
        && view
        && have.path == want.path
        && have
            .given
            .iter()
            .all(|(k, v)| want.given.contains(&(k.clone(), v.clone())))
}

/// Whether a view of another command shows what the view `want` shows: a node's routes
/// are also in its neighbour and FDB tables, its links (a flannel.1 address is the next
/// hop to that node), a trace's hops, `why route` and `diff`, and every node holds the
/// same route to another node's podCIDR; a flow's verdict is also in a trace and in
/// `policies`. (So a prediction of a next hop or a verdict is not read off one of them
/// first.)
fn shows_the_same_facts(want: &Shape, have: &Shape) -> bool {
    let want: Vec<&str> = want.path.iter().map(String::as_str).collect();
    let have: Vec<&str> = have.path.iter().map(String::as_str).collect();
    match want.as_slice() {
        ["show", "routes"] => matches!(
            have.as_slice(),
            ["show", "routes" | "neigh" | "fdb" | "links", ..]
                | ["trace", ..]
                | ["why", "route", ..]
                | ["diff", ..]
        ),
        ["reach", ..] => matches!(
            have.as_slice(),
            ["reach", ..] | ["trace", ..] | ["policies", ..]
        ),
        _ => false,
    }
}

/// How a command the learner ran during a predict quiz whose command is `run` gave the
/// answer away, if it did: it was `run`, a view that shows what `run` shows, or (when `run`
/// makes the components act) a command that made CNI or CSI calls itself, an experiment on
/// the cluster the question is about (`cni add probe1` before predicting the next pod's
/// address).
fn gave_the_answer(ran: &super::check::Ran, run: &str) -> Option<String> {
    if same_line(&ran.line, run) {
        return Some(format!("you ran `{run}`"));
    }
    if showed_the_answer(ran, run) {
        return Some(format!(
            "you ran `{}`, which shows what `{run}` does,",
            ran.line.trim()
        ));
    }
    let calls = ran.calls.1.saturating_sub(ran.calls.0);
    let run_is_a_view = super::check::shape_of(run).is_some_and(|want| {
        matches!(
            want.path.first().map(String::as_str),
            Some("show" | "get" | "describe" | "reach" | "trace" | "policies")
        )
    });
    (calls > 0 && !run_is_a_view).then(|| {
        format!(
            "you ran `{}`, which made the components act on the cluster this quiz asks about ({calls} CNI/CSI call(s)),",
            ran.line.trim()
        )
    })
}

impl Desk {
    /// A fresh default cluster; the lessons (catalog, progress store, session) stay.
    fn fresh_cluster(&mut self, empty: bool) {
        // Real mode: the old cluster's namespaces go with it, as on `reset`.
        self.lab.reset_cmd(empty);
    }

    /// Leave the lesson in progress, if any (its progress stays), for a command that
    /// replaces the cluster under it; the line saying so.
    pub(crate) fn leave_lesson(&mut self) -> Option<Line> {
        let s = self.lessons.session.take()?;
        self.lessons.save(&s.lesson.id, &s.progress);
        let id = &s.lesson.id;
        let text = self.lessons.kept_in_memory(id).unwrap_or_else(|| {
            format!(
                "Left lesson {id} (progress kept); `lesson start {id}` resumes it on a fresh cluster."
            )
        });
        Some(Line::styled(text, Role::Dim))
    }

    /// A fresh cluster, as `reset [--empty]` makes; a lesson in progress is left (its
    /// progress stays) and the line saying so is the output.
    pub fn reset_keeping_lessons(&mut self, empty: bool) -> Outcome {
        let mut out = Outcome::empty();
        if let Some(left) = self.leave_lesson() {
            out.line(left);
        }
        self.fresh_cluster(empty);
        out
    }

    /// Rebuild the cluster for the session's current item: fresh cluster, then the
    /// reference commands of every item before it.
    /// A trace or CSI flow stepped on the old cluster, or left open by a reference command
    /// of the replay (`pod create … --step`), is not kept: nothing is being stepped after.
    fn rebuild_for(&mut self, s: &mut LessonSession) {
        self.drop_stepping();
        self.fresh_cluster(false);
        let lesson = Arc::clone(&s.lesson);
        s.seen = play::replay(self, &lesson, s.at);
        self.drop_stepping();
    }

    /// Dispatch a lesson command (`lesson …`, `hint`, `skip`, `back`).
    pub(crate) fn lesson_control(&mut self, cmd: Command) -> Result<Outcome, LabError> {
        let result = match cmd {
            Command::Lesson(c) => self.lesson_cmd(c),
            Command::Hint => self.lesson_hint(),
            Command::Skip => self.lesson_skip(),
            Command::Back => self.lesson_back(),
            _ => Err(LabError::msg("not a lesson command")),
        };
        match self.lessons.take_warning() {
            None => result,
            Some(w) => {
                let mut warn = Outcome::empty();
                warn.line(Line::styled(format!("warning: {w}"), Role::Warn));
                match result {
                    Ok(o) => {
                        warn.extend(o);
                        Ok(warn)
                    }
                    Err(mut e) => {
                        warn.extend(e.output);
                        e.output = warn;
                        Err(e)
                    }
                }
            }
        }
    }

    fn lesson_cmd(&mut self, c: LessonCmd) -> Result<Outcome, LabError> {
        match c {
            LessonCmd::List => Ok(self.lesson_list()),
            LessonCmd::Start { id, variant } => self.lesson_start(&id, variant),
            LessonCmd::Status => {
                let s = self
                    .lessons
                    .session
                    .as_ref()
                    .ok_or_else(|| LabError::msg(NO_LESSON))?;
                Ok(render_current(s))
            }
            LessonCmd::Answer { words } => self.lesson_answer(&words.join(" ")),
            LessonCmd::Reset => {
                let mut s = self
                    .lessons
                    .session
                    .take()
                    .ok_or_else(|| LabError::msg(NO_LESSON))?;
                s.reset();
                self.lessons.save(&s.lesson.id, &s.progress);
                self.rebuild_for(&mut s);
                let mut out = Outcome::empty();
                out.line(Line::styled(
                    format!(
                        "Lesson {} starts over on a fresh cluster (its steps are cleared; a quiz answered wrong or seen stays so).",
                        s.lesson.id
                    ),
                    Role::Dim,
                ));
                out.extend(render_current(&s));
                self.lessons.session = Some(s);
                Ok(out)
            }
            LessonCmd::Retry => {
                let mut s = self
                    .lessons
                    .session
                    .take()
                    .ok_or_else(|| LabError::msg(NO_LESSON))?;
                if matches!(s.current(), Item::Finished) {
                    self.lessons.session = Some(s);
                    return Err(LabError::msg(
                        "the lesson is complete (`lesson reset` starts it over)",
                    ));
                }
                s.move_to(s.at);
                self.rebuild_for(&mut s);
                let mut out = Outcome::empty();
                let what = match s.current() {
                    Item::Step(step) => format!("step {}", step.number),
                    _ => "this quiz".to_string(),
                };
                out.line(Line::styled(
                    format!(
                        "lesson retry: the lab rebuilt the cluster this lesson expects at the start of {what} (a fresh cluster, then the lesson's own commands for everything before it); what you changed since is gone. Try {what} again."
                    ),
                    Role::Warn,
                ));
                out.extend(render_current(&s));
                self.lessons.session = Some(s);
                Ok(out)
            }
            LessonCmd::Stop => {
                let s = self
                    .lessons
                    .session
                    .take()
                    .ok_or_else(|| LabError::msg(NO_LESSON))?;
                self.lessons.save(&s.lesson.id, &s.progress);
                let mut out = Outcome::empty();
                let id = &s.lesson.id;
                out.plain(self.lessons.kept_in_memory(id).unwrap_or_else(|| {
                    format!("Left lesson {id}; progress kept. `lesson start {id}` resumes it.")
                }));
                Ok(out)
            }
            LessonCmd::Play {
                id,
                speed,
                step,
                variant,
            } => {
                if !(speed.is_finite() && speed > 0.0) {
                    return Err(LabError::msg(format!(
                        "invalid --speed {speed}: expected a number above 0, e.g. 2 for twice as fast"
                    )));
                }
                let lesson = self
                    .lessons
                    .find_variant(&id, variant)
                    .map_err(LabError::msg)?;
                self.play_shows_the_answers(&lesson, variant);
                Ok(self.lesson_play(
                    &lesson,
                    PlayOptions {
                        speed,
                        step,
                        variant,
                    },
                ))
            }
            LessonCmd::Submit { file } => self.lesson_submit(&file),
            LessonCmd::Verify { id } => self.lesson_verify(id.as_deref()),
            LessonCmd::Lint { no_decoys } => {
                let parsed = self.lessons.parsed();
                let errs = lint::lint(&parsed, !no_decoys);
                let mut out = Outcome::empty();
                for e in &errs {
                    out.line(Line::styled(e.to_string(), Role::Bad));
                }
                if errs.is_empty() {
                    out.line(Line::styled(
                        format!("lint: {} lessons, no problems", parsed.lessons.len()),
                        Role::Good,
                    ));
                    Ok(out)
                } else {
                    Err(LabError::with_output(
                        format!(
                            "lint: {} problem{}",
                            errs.len(),
                            if errs.len() == 1 { "" } else { "s" }
                        ),
                        out,
                    ))
                }
            }
        }
    }

    fn lesson_list(&mut self) -> Outcome {
        let parsed = self.lessons.parsed();
        let current = self.lessons.session.as_ref().map(|s| s.lesson.id.clone());
        let progress = self.lessons.progress().clone();
        let mut out = Outcome::empty();
        if parsed.lessons.is_empty() {
            out.plain("No lessons found");
        } else {
            // Fits 80 columns: the counts on the lesson's line, its title (cut to the width)
            // on the next.
            let mut t = Table::new(&["ID", "CH", "STEPS", "QUIZZES", "PROGRESS"]);
            let mut titles = Vec::new();
            for l in &parsed.lessons {
                let p = progress.of(&l.id).within(l);
                let mark = if current.as_deref() == Some(l.id.as_str()) {
                    " ← now"
                } else {
                    ""
                };
                let bar = progress_bar(p.done(), l.item_count());
                t.row([
                    l.id.clone(),
                    l.chapter.to_string(),
                    format!("{}/{}", p.steps.len(), l.steps.len()),
                    format!("{}/{}", p.quizzes.len(), l.quizzes.len()),
                    format!("{bar}{mark}"),
                ]);
                titles.push(crate::util::clip::fit(&l.title, 76));
            }
            let rendered = t.render();
            let mut rows = rendered.into_lines().into_iter();
            if let Some(header) = rows.next() {
                out.line(header);
            }
            for (row, title) in rows.zip(titles) {
                out.line(row);
                out.line(Line::styled(format!("  {title}"), Role::Dim));
            }
        }
        for e in &parsed.errors {
            out.line(Line::styled(format!("warning: {e}"), Role::Warn));
        }
        out
    }

    /// `lesson submit FILE`: the lesson in progress as a submission a grader replays.
    fn lesson_submit(&mut self, file: &str) -> Result<Outcome, LabError> {
        let s = self
            .lessons
            .session
            .as_ref()
            .ok_or_else(|| LabError::msg(NO_LESSON))?;
        let t = &s.progress.transcript;
        if t.dropped > 0 {
            return Err(LabError::msg(format!(
                "this lesson's transcript passed {} lines, so it can no longer be replayed whole; `lesson reset` starts the lesson and a new transcript over",
                super::progress::Transcript::MAX_LINES
            )));
        }
        let sub = super::grade::Submission::of(&s.lesson.id, &s.progress);
        let (id, steps, quizzes) = (
            s.lesson.id.clone(),
            (s.progress.steps.len(), s.lesson.steps.len()),
            (s.progress.right_first_time(), s.lesson.quizzes.len()),
        );
        let progress = s.progress.clone();
        self.lab
            .files()
            .write(file, sub.to_json().as_bytes())
            .map_err(|e| LabError::msg(format!("cannot write {file}: {e}")))?;
        self.lessons.save(&id, &progress);
        let mut out = Outcome::empty();
        out.plain(format!(
            "Wrote {file}: lesson {id}, {} lines typed, steps {}/{}, quizzes {}/{} right the first time.",
            sub.lines.len(),
            steps.0,
            steps.1,
            quizzes.0,
            quizzes.1
        ));
        // A lesson read from a directory is graded from the same directory.
        let lessons = match self.lessons.catalog() {
            super::catalog::Catalog::Dir(dir) => format!(" --lessons {}", dir.name()),
            super::catalog::Catalog::Embedded => String::new(),
        };
        out.line(Line::styled(
            format!("A teacher grades it with `cni-csi-lab grade{lessons} --lesson {id} {file}`, which replays your lines on a fresh lab."),
            Role::Dim,
        ));
        Ok(out)
    }

    fn lesson_start(&mut self, id: &str, variant: Option<u32>) -> Result<Outcome, LabError> {
        let id = self.lessons.find(id).map_err(LabError::msg)?.id.clone();
        // Resuming keeps the variant started; a variant named is read before anything
        // changes, so one the lesson does not have changes nothing.
        let resumed = match &self.lessons.session {
            Some(s) if s.lesson.id == id => s.progress.variant,
            _ => self.lessons.progress().of(&id).variant,
        };
        let lesson = self
            .lessons
            .find_variant(&id, variant.unwrap_or(resumed))
            .map_err(LabError::msg)?;
        // The lesson left behind keeps its transcript up to here; another lesson left is
        // said, as `reset` and `lesson play` say it (its cluster goes).
        let same = self
            .lessons
            .session
            .as_ref()
            .is_some_and(|s| s.lesson.id == id);
        let left = self.leave_lesson().filter(|_| !same);
        let mut saved = self.lessons.progress().of(&id);
        // Another variant has other names and addresses: the steps done in the old one do
        // not count in the new one. Its quizzes answered wrong or seen stay seen (the
        // choices are the same), and the lines typed stay, for a grader to replay.
        let switched = (saved.variant != lesson.variant).then_some(saved.variant);
        let had_progress = saved.done() > 0 || !saved.transcript.is_empty();
        if switched.is_some() {
            saved = LessonProgress {
                variant: lesson.variant,
                shown: saved.seen_quizzes(),
                transcript: std::mem::take(&mut saved.transcript),
                ..LessonProgress::default()
            };
        }
        let mut s = LessonSession::new(Arc::clone(&lesson), saved.within(&lesson));
        let mut out = Outcome::empty();
        if let Some(left) = left {
            out.line(left);
        }
        out.line(Line::styled(
            format!(
                "Lesson {} · {} (chapter {})",
                lesson.id, lesson.title, lesson.chapter
            ),
            Role::Header,
        ));
        match switched {
            Some(old) if had_progress => out.line(Line::styled(
                format!(
                    "Variant {}: other names and addresses than variant {old}, so the lesson starts over from step 1 (variant {old}'s steps are cleared; its quizzes answered wrong or seen stay so).",
                    lesson.variant
                ),
                Role::Warn,
            )),
            _ if lesson.variant != 0 => out.line(Line::styled(
                format!(
                    "Variant {} of {}: your pod names, ports, addresses and fault sites are your own; `lesson submit FILE` records the variant for the grader.",
                    lesson.variant,
                    lesson.vary.count()
                ),
                Role::Dim,
            )),
            _ => {}
        }
        if let Some(notice) = self.lessons.store_notice() {
            out.line(Line::styled(notice, Role::Warn));
        }
        if matches!(s.current(), Item::Finished) {
            s.move_to(0);
            out.plain("You finished this lesson before; here it is again from step 1 (your progress stays).");
        }
        self.rebuild_for(&mut s);
        if s.at == 0 {
            out.plain(
                "A fresh cluster: node-1 (podCIDR 10.244.1.0/24, InternalIP 192.168.0.1) and node-2 (10.244.2.0/24, 192.168.0.2).",
            );
        } else {
            out.plain(format!(
                "Resuming where you left off: the lab rebuilt the cluster and replayed the {} item(s) before this one.",
                s.at
            ));
        }
        out.extend(render_current(&s));
        // Saved at once: the variant chosen (and a switch's cleared progress) outlasts a
        // quit before the first step, so `lesson start ID` alone resumes it.
        self.lessons.save(&id, &s.progress);
        self.lessons.session = Some(s);
        Ok(out)
    }

    fn lesson_hint(&mut self) -> Result<Outcome, LabError> {
        let mut s = self
            .lessons
            .session
            .take()
            .ok_or_else(|| LabError::msg(NO_LESSON))?;
        let mut out = Outcome::empty();
        let step = match s.current() {
            Item::Step(step) => Some(step.clone()),
            _ => None,
        };
        match s.current() {
            Item::Step(_) => match s.hint() {
                Some(HintAt::Written(i, n, h)) => {
                    let mut lines = h.text.lines();
                    out.line(
                        Line::new()
                            .push(format!("Hint {i}/{n}: "), Role::Warn)
                            .push(lines.next().unwrap_or("").to_string(), Role::Note),
                    );
                    for l in lines {
                        out.line(Line::styled(l.to_string(), Role::Note));
                    }
                }
                Some(HintAt::FromHere(n)) => {
                    if let Some(step) = &step {
                        out.extend(self.hint_from_here(step, &s.seen, n));
                    }
                }
                None => out.plain("This step has no hints; `skip` lets the lab do it."),
            },
            Item::Quiz(..) => out.plain("Quizzes have no hints; `skip` shows the answer."),
            Item::Finished => out.plain("The lesson is complete; `lesson list` shows the others."),
        }
        if let Item::Step(step) = s.current() {
            if let Err((c, e)) = check::eval_all(&step.checks, &self.lab, &s.seen) {
                out.line(Line::styled(
                    format!("Not yet: `{}` — {}", c.text, e.actual),
                    Role::Dim,
                ));
                out.line(Line::styled(
                    "(gone astray? `lesson retry` rebuilds the cluster as it was when this step began)",
                    Role::Dim,
                ));
            }
        }
        self.lessons.session = Some(s);
        Ok(out)
    }

    /// What completes the current step from where the learner is (the last hint, as
    /// data): `None` outside a step.
    pub fn next_moves(&self) -> Option<Moves> {
        let s = self.lessons.session.as_ref()?;
        match s.current() {
            Item::Step(step) => Some(self.moves_from_here(step, &s.seen)),
            _ => None,
        }
    }

    /// The reference commands that, run on a copy of this cluster, complete the step; or,
    /// when the cluster has moved away from what the step needs, `lesson retry` first.
    fn moves_from_here(&self, step: &super::Step, seen: &check::Observed) -> Moves {
        let mut lab = self.lab.clone();
        lab.swap_replay_files(Some(Default::default()));
        let mut after_seen = seen.clone();
        let mut typed = Vec::new();
        for c in &step.commands {
            let ran = lab.run(&c.text);
            if ran.failed() == c.expect_failure {
                typed.push(c.clone());
            }
            after_seen.record(&c.text, &ran);
        }
        match check::eval_all(&step.checks, &lab, &after_seen) {
            Ok(()) => Moves {
                retry_first: None,
                commands: typed,
            },
            Err((c, e)) => {
                // Say what is wrong now: the first check that fails here and that the
                // step's commands leave as it is (tiny's podCIDR /29), not what the copy
                // they ran on turned into (`pod b` Running, a pod the learner never made).
                let now = step.checks.iter().find_map(|c| {
                    let after = c.eval(&lab, &after_seen);
                    let here = c.eval(&self.lab, seen);
                    (!after.holds && !here.holds && here.actual == after.actual)
                        .then(|| format!("`{}`: {}", c.text, here.actual))
                });
                Moves {
                    retry_first: Some(now.unwrap_or_else(|| {
                        format!(
                            "the step's commands, typed now, would not complete it: they would leave `{}` false ({})",
                            c.text, e.actual
                        )
                    })),
                    commands: step.commands.clone(),
                }
            }
        }
    }

    /// The last hint of a step: [`Desk::next_moves`], in words.
    fn hint_from_here(&self, step: &super::Step, seen: &check::Observed, n: usize) -> Outcome {
        let mut out = Outcome::empty();
        let head = Line::new().push(format!("Hint {n}/{n}: "), Role::Warn);
        let moves = self.moves_from_here(step, seen);
        match &moves.retry_first {
            None => {
                out.line(head.push("from where you are, these complete the step:", Role::Plain))
            }
            Some(why) => {
                out.line(head.push(
                    format!("your cluster has moved away from what this step needs ({why})."),
                    Role::Plain,
                ));
                out.plain("`lesson retry` rebuilds it as the step began; then type:");
            }
        }
        for c in &moves.commands {
            let text = if c.expect_failure && moves.retry_first.is_none() {
                format!("{} (it fails, as the step wants)", c.text)
            } else {
                c.text.clone()
            };
            out.line(Line::styled(format!("  {text}"), Role::Name));
        }
        out
    }

    fn lesson_skip(&mut self) -> Result<Outcome, LabError> {
        let mut s = self
            .lessons
            .session
            .take()
            .ok_or_else(|| LabError::msg(NO_LESSON))?;
        let mut out = Outcome::empty();
        match s.current() {
            Item::Step(step) => {
                let step = step.clone();
                self.rebuild_for(&mut s);
                out.line(Line::styled(
                    format!(
                        "The lab does step {} for you (on a rebuilt cluster, so it is exactly as the lesson expects):",
                        step.number
                    ),
                    Role::Dim,
                ));
                for c in &step.commands {
                    out.extend(run_visibly(self, &c.text));
                }
                // A walk the commands stepped (`pod create … --step`, `step`) ends with the
                // step, its rest after the calls shown, in order.
                if let Some(rest) = self.stepping_rest() {
                    out.extend(rest);
                }
                s.skip();
                self.lessons.save(&s.lesson.id, &s.progress);
            }
            Item::Quiz(_, q) => {
                match &q.kind {
                    QuizKind::Choice { answer, .. } => {
                        out.line(Line::styled(
                            format!("The answer: {answer}. {}", q.explanation),
                            Role::Note,
                        ));
                    }
                    QuizKind::Predict { run, answer } => {
                        // The command first (unless it ran already, for an answer or by
                        // the learner): an answer named as a fact is read after it.
                        let ran_by_learner = s.seen.runs.iter().any(|r| same_line(&r.line, run));
                        if s.predict_ran.is_none() && !ran_by_learner {
                            out.extend(run_visibly(self, run));
                        }
                        let answer = super::facts::answer_in(&self.lab, answer);
                        out.line(Line::styled(
                            format!("The answer: {answer}. {}", q.explanation),
                            Role::Note,
                        ));
                    }
                }
                s.skip();
                self.lessons.save(&s.lesson.id, &s.progress);
            }
            Item::Finished => {
                self.lessons.session = Some(s);
                return Err(LabError::msg(
                    "nothing to skip: the lesson is complete (`lesson reset` starts it over)",
                ));
            }
        }
        out.extend(render_current(&s));
        self.lessons.session = Some(s);
        Ok(out)
    }

    fn lesson_back(&mut self) -> Result<Outcome, LabError> {
        let mut s = self
            .lessons
            .session
            .take()
            .ok_or_else(|| LabError::msg(NO_LESSON))?;
        if !s.back() {
            self.lessons.session = Some(s);
            return Err(LabError::msg("already at the first step"));
        }
        self.rebuild_for(&mut s);
        let mut out = Outcome::empty();
        out.line(Line::styled(
            "Back one step: the cluster is rebuilt as it was when this step began.",
            Role::Dim,
        ));
        out.extend(render_current(&s));
        self.lessons.session = Some(s);
        Ok(out)
    }

    fn lesson_answer(&mut self, given: &str) -> Result<Outcome, LabError> {
        let mut s = self
            .lessons
            .session
            .take()
            .ok_or_else(|| LabError::msg(NO_LESSON))?;
        let (number, quiz) = match s.current() {
            Item::Quiz(i, q) => (u32::try_from(i + 1).unwrap_or(u32::MAX), q.clone()),
            Item::Step(step) => {
                let n = step.number;
                self.lessons.session = Some(s);
                return Err(LabError::msg(format!(
                    "step {n} is not a quiz: do its task (`hint` helps, `lesson status` shows it again)"
                )));
            }
            Item::Finished => {
                self.lessons.session = Some(s);
                return Err(LabError::msg(
                    "the lesson is complete; there is nothing to answer",
                ));
            }
        };
        if given.trim().is_empty() {
            self.lessons.session = Some(s);
            return Err(LabError::msg(format!(
                "`lesson answer` needs your answer to quiz {number}: {}; no try is used",
                quiz.accepted()
            ))
            .because(crate::engine::Reason::Usage));
        }
        if let Some(why) = quiz.refuse(given) {
            self.lessons.session = Some(s);
            return Err(LabError::msg(why));
        }
        let mut out = Outcome::empty();
        if let QuizKind::Predict { run, .. } = &quiz.kind {
            // A prediction comes before the command runs: once the learner ran it during
            // the quiz, its output is no longer predicted.
            let shown = s.seen.runs.iter().find_map(|r| gave_the_answer(r, run));
            if let (0, Some(what)) = (s.wrong_answers, shown) {
                self.lessons.session = Some(s);
                return Err(LabError::msg(format!(
                    "{what} during this quiz, so an answer now would not be a prediction; `skip` shows the answer and moves on"
                )));
            }
            out.plain(format!("Your prediction: {given}"));
            // The command runs once; an answer after a run that failed reads that it did.
            let ok = match s.predict_ran {
                Some(ok) => ok,
                None => {
                    let (ran, ok) = run_visibly_ok(self, run);
                    s.predict_ran = Some(ok);
                    out.extend(ran);
                    ok
                }
            };
            if !ok {
                // The cluster no longer gives the answer the quiz was written for (the
                // command was run before, or the cluster changed): nothing to check the
                // prediction against.
                out.line(Line::styled(
                    format!(
                        "`{run}` failed on this cluster, so the prediction cannot be checked; `skip` shows the answer and moves on"
                    ),
                    Role::Warn,
                ));
                self.lessons.session = Some(s);
                return Ok(out);
            }
        }
        // A predict answer written as a fact (`{pod probe ip}`) is what the learner's own
        // cluster gave, read after the command ran.
        let (right, answer) = match &quiz.kind {
            QuizKind::Choice { answer, .. } => (quiz.is_right(given), answer.to_string()),
            QuizKind::Predict { answer, .. } => {
                let answer = super::facts::answer_in(&self.lab, answer);
                (
                    super::model::predicted(&quiz.question, given, &answer),
                    answer,
                )
            }
        };
        if right {
            out.line(Line::styled(format!("✓ Right: {answer}."), Role::Good));
            s.complete();
            self.lessons.save(&s.lesson.id, &s.progress);
        } else if s.wrong_answers == 0 && matches!(quiz.kind, QuizKind::Choice { .. }) {
            // One more try, with the explanation to go on; the wrong answer is kept (a
            // grader shows it as `wrong` unless the second try is right). A prediction has
            // one try: its command's output, just shown, is the answer.
            s.wrong_answers += 1;
            s.answered_wrong();
            self.lessons.save(&s.lesson.id, &s.progress);
            out.line(Line::styled(
                "✗ Not quite. Read this, then try once more with `lesson answer …` (`skip` moves on):",
                Role::Bad,
            ));
            out.line(Line::styled(quiz.explanation.clone(), Role::Note));
            self.lessons.session = Some(s);
            return Ok(out);
        } else {
            let shown = if matches!(quiz.kind, QuizKind::Predict { .. }) {
                " (the output above shows it; a prediction has one try)"
            } else {
                ""
            };
            out.line(Line::styled(
                format!("✗ Not quite: the answer is {answer}{shown}."),
                Role::Bad,
            ));
            s.answered_wrong();
            s.skip();
            self.lessons.save(&s.lesson.id, &s.progress);
        }
        out.line(Line::styled(quiz.explanation.clone(), Role::Note));
        out.extend(render_current(&s));
        self.lessons.session = Some(s);
        Ok(out)
    }

    fn lesson_play(&mut self, lesson: &Lesson, opts: PlayOptions) -> Outcome {
        let mut out = self.reset_keeping_lessons(false);
        for ev in play::plan(lesson, opts) {
            match ev {
                PlayEvent::Title(h) | PlayEvent::Heading(h) => {
                    if !out.is_empty() {
                        out.plain("");
                    }
                    out.line(Line::styled(format!("── {h}"), Role::Header));
                }
                PlayEvent::Text(t) => out.block(&super::facts::fill(&self.lab, &t), Role::Plain),
                PlayEvent::Task(t) => out.block(
                    &super::facts::fill(&self.lab, &format!("Task: {t}")),
                    Role::Plain,
                ),
                PlayEvent::Type { command, .. } => out.extend(run_visibly(self, &command)),
                PlayEvent::Pause { .. } | PlayEvent::WaitForKey => {}
            }
        }
        out
    }

    fn lesson_verify(&mut self, id: Option<&str>) -> Result<Outcome, LabError> {
        let lessons: Vec<Arc<Lesson>> = match id {
            Some(id) => vec![self.lessons.find(id).map_err(LabError::msg)?],
            None => self.lessons.parsed().lessons.clone(),
        };
        let mut out = Outcome::empty();
        let mut failed = 0;
        for l in &lessons {
            let errs = play::verify(l);
            if errs.is_empty() {
                out.line(Line::styled(
                    format!(
                        "ok    {}  ({} steps, {} quizzes)",
                        l.id,
                        l.steps.len(),
                        l.quizzes.len()
                    ),
                    Role::Good,
                ));
            } else {
                failed += 1;
                out.line(Line::styled(format!("FAIL  {}", l.id), Role::Bad));
                for e in errs {
                    out.line(Line::styled(format!("  {e}"), Role::Bad));
                }
            }
        }
        if failed == 0 {
            Ok(out)
        } else {
            Err(LabError::with_output(
                format!(
                    "lesson verify: {failed} of {} lessons failed",
                    lessons.len()
                ),
                out,
            ))
        }
    }

    /// Feed a learner's line (already executed) to the current step's check. When the step
    /// passes, its progress is saved and the next item's card follows the output. A step
    /// that passes on a failing command (one the lesson meant to fail) turns the error into
    /// output, so the learner sees the error and the success in order.
    pub(crate) fn lesson_observe(&mut self, line: &str, mut ran: Executed) -> Executed {
        let Some(mut s) = self.lessons.session.take() else {
            return ran;
        };
        s.seen.record(line, &ran);
        // A prediction's command (or a view or experiment showing what it shows) run before
        // the answer gave the answer away: a right answer after it, however the learner
        // comes back to the quiz, is not a first-time prediction.
        let peeked = match s.current() {
            Item::Quiz(_, q) => match &q.kind {
                QuizKind::Predict { run, .. } => s
                    .seen
                    .runs
                    .last()
                    .is_some_and(|r| gave_the_answer(r, run).is_some()),
                QuizKind::Choice { .. } => false,
            },
            _ => false,
        };
        if peeked {
            s.answer_shown();
            self.lessons.save(&s.lesson.id, &s.progress);
        }
        let passed = match s.current() {
            Item::Step(step) => check::eval_all(&step.checks, &self.lab, &s.seen)
                .is_ok()
                .then(|| (step.number, step.title.clone())),
            _ => None,
        };
        let Some((number, title)) = passed else {
            self.lessons.session = Some(s);
            return ran;
        };
        s.complete();
        self.lessons.save(&s.lesson.id, &s.progress);
        let mut feedback = Outcome::empty();
        feedback.line(Line::styled(
            format!("✓ Step {number} done: {title}"),
            Role::Good,
        ));
        if let Some(w) = self.lessons.take_warning() {
            feedback.line(Line::styled(format!("warning: {w}"), Role::Warn));
        }
        feedback.extend(render_current(&s));
        self.lessons.session = Some(s);
        let mut out = match std::mem::replace(&mut ran.result, Ok(Outcome::empty())) {
            Ok(o) => o,
            Err(e) => {
                ran.failed_into_feedback = Some(e.reason);
                error_line(&e)
            }
        };
        // A trace or CSI flow stepped for the step ends with it: its rest comes before the
        // feedback, so the next step or quiz is the last thing printed.
        if let Some(rest) = self.stepping_rest() {
            out.extend(rest);
        }
        out.extend(feedback);
        ran.result = Ok(out);
        ran
    }
}

impl Desk {
    /// `lesson play` prints every quiz's answer: each quiz of the lesson not yet answered
    /// right counts as seen, as `skip` shows it (a right answer later is at the second
    /// try), and the line goes into the lesson's transcript, so a grader's replay of the
    /// lines handed in plays it too. (The play leaves the lesson in progress, which saves
    /// it; a lesson never started gets the variant played.)
    fn play_shows_the_answers(&mut self, lesson: &super::model::Lesson, variant: u32) {
        let quizzes = u32::try_from(lesson.quizzes.len()).unwrap_or(u32::MAX);
        let mark = |p: &mut super::progress::LessonProgress| {
            for q in 1..=quizzes {
                if !p.quizzes.contains(&q) {
                    p.shown.insert(q);
                }
            }
        };
        let line = super::progress::TypedLine {
            line: match variant {
                0 => format!("lesson play {}", lesson.id),
                v => format!("lesson play {} --variant {v}", lesson.id),
            },
            files: Default::default(),
        };
        if let Some(s) = self
            .lessons
            .session
            .as_mut()
            .filter(|s| s.lesson.id == lesson.id)
        {
            mark(&mut s.progress);
            s.progress.transcript.push(line);
            return;
        }
        if quizzes == 0 {
            return;
        }
        let mut p = self.lessons.progress().of(&lesson.id);
        if p.done() == 0 && p.transcript.is_empty() {
            p.variant = variant;
        }
        mark(&mut p);
        p.transcript.push(line);
        self.lessons.save(&lesson.id, &p);
    }
}

#[cfg(test)]
mod tests {
    use super::shows_the_same_facts;
    use crate::command::shape::Shape;

    fn path(line: &str) -> Shape {
        Shape::of(line).expect(line)
    }

    /// Helpers' play, stop 66: a next hop predicted from `show routes` was read off the
    /// neighbour table, a trace or `why route` first; a verdict from `reach`, off a trace.
    #[test]
    fn views_that_show_the_same_facts_are_the_same_view() {
        let routes = path("show routes node-2");
        for line in [
            "show neigh node-2",
            "show fdb node-2",
            "trace slow 10.244.3.5",
            "why route 10.244.3.0/24 --node node-2",
            "show routes",
            // Every node routes to node-3's pods the same way.
            "show routes node-1",
            "show neigh node-1",
            "show links node-3",
            "diff 0",
        ] {
            assert!(shows_the_same_facts(&routes, &path(line)), "{line}");
        }
        for line in ["show ipam node-2", "get pods", "show volumes"] {
            assert!(!shows_the_same_facts(&routes, &path(line)), "{line}");
        }
        let reach = path("reach db web --port 80");
        for line in ["trace db web --port 80", "reach db web --port 443"] {
            assert!(shows_the_same_facts(&reach, &path(line)), "{line}");
        }
        assert!(!shows_the_same_facts(&reach, &path("show routes node-1")));
    }
}
