//! Playing a lesson without a learner: scripted playback for demos (a list of events a
//! front end renders — the REPL and dashboard animate them, `run` prints them at once) and
//! `lesson verify` (a fresh lab plays every step's reference commands and asserts every
//! check, so a lesson cannot rot).

use super::Desk;
use super::check::{self, Observed};
use super::model::{Lesson, QuizKind, RefCommand};
use super::parse::LessonError;

/// Playback options (`lesson play ID [--speed X] [--step] [--variant N]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayOptions {
    /// 1.0 is normal; 2.0 twice as fast.
    pub speed: f64,
    /// Wait for a key between steps instead of pausing.
    pub step: bool,
    /// The lesson's variant to play (see [`super::vary`]); [`plan`] takes the lesson
    /// already read at its variant.
    pub variant: u32,
}

impl Default for PlayOptions {
    fn default() -> Self {
        PlayOptions {
            speed: 1.0,
            step: false,
            variant: 0,
        }
    }
}

/// One thing a front end does during playback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayEvent {
    /// The lesson's title, before its first step.
    Title(String),
    /// An item's heading: a step's or a quiz's (a playback counts these).
    Heading(String),
    /// Teaching text (Markdown as written).
    Text(String),
    /// A step's task (shown as `Task: …`; a dashboard keeps it in view above the text).
    Task(String),
    /// Type this command visibly (one character every `millis_per_char`), then run it
    /// through `Desk::execute` and show its output. `expect_failure`: it is meant to fail.
    Type {
        /// The command.
        command: String,
        /// Meant to fail (a `!` line).
        expect_failure: bool,
        /// Typing speed.
        millis_per_char: u64,
    },
    /// Wait this long.
    Pause {
        /// Milliseconds.
        millis: u64,
    },
    /// Wait for a key (`--step`).
    WaitForKey,
}

/// A line a front end plays live (typed out and paced) rather than runs at once.
#[derive(Debug, Clone, PartialEq)]
pub enum LivePlayback {
    /// `lesson play ID …`: the lesson's reference session.
    Lesson {
        /// The lesson's ID.
        id: String,
        /// Its speed, stepping and variant.
        options: PlayOptions,
    },
    /// `play FILE …`: a script, with its captions.
    Script(crate::command::grammar::PlayArgs),
}

impl LivePlayback {
    /// What `line` asks to play live, if it is `lesson play …` or `play …` (a line that
    /// does not parse is not one: running it gives the parse error).
    pub fn of(line: &str) -> Option<LivePlayback> {
        use crate::command::{Command, grammar::LessonCmd};
        match crate::command::parse(crate::command::strip_comment(line)) {
            Ok(Some(Command::Lesson(LessonCmd::Play {
                id,
                speed,
                step,
                variant,
            }))) => Some(LivePlayback::Lesson {
                id,
                options: PlayOptions {
                    speed,
                    step,
                    variant,
                },
            }),
            Ok(Some(Command::Play(args))) => Some(LivePlayback::Script(args)),
            _ => None,
        }
    }
}

/// Base timings at speed 1.0, in milliseconds.
const CHAR_MS: f64 = 40.0;
const AFTER_COMMAND_MS: f64 = 800.0;
const BETWEEN_STEPS_MS: f64 = 2000.0;

fn scaled(ms: f64, speed: f64) -> u64 {
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    // Bounded: at most an hour, so the cast cannot overflow.
    (ms / speed).round().clamp(0.0, 3_600_000.0) as u64
}

/// The playback of a lesson as events. Deterministic: the same lesson and options give
/// the same events.
pub fn plan(lesson: &Lesson, opts: PlayOptions) -> Vec<PlayEvent> {
    let mut ev = vec![PlayEvent::Title(format!(
        "{} (chapter {})",
        lesson.title, lesson.chapter
    ))];
    let gap = |ev: &mut Vec<PlayEvent>| {
        ev.push(if opts.step {
            PlayEvent::WaitForKey
        } else {
            PlayEvent::Pause {
                millis: scaled(BETWEEN_STEPS_MS, opts.speed),
            }
        })
    };
    for s in &lesson.steps {
        let section = s
            .section
            .as_deref()
            .map(|x| format!("  ·  {x}"))
            .unwrap_or_default();
        ev.push(PlayEvent::Heading(format!(
            "Step {}/{} · {}{section}",
            s.number,
            lesson.steps.len(),
            s.title
        )));
        if !s.text.is_empty() {
            ev.push(PlayEvent::Text(s.text.join("\n")));
        }
        if let Some(t) = &s.task {
            ev.push(PlayEvent::Task(t.clone()));
        }
        for c in &s.commands {
            ev.push(PlayEvent::Type {
                command: c.text.clone(),
                expect_failure: c.expect_failure,
                millis_per_char: scaled(CHAR_MS, opts.speed),
            });
            ev.push(PlayEvent::Pause {
                millis: scaled(AFTER_COMMAND_MS, opts.speed),
            });
        }
        gap(&mut ev);
    }
    for (i, q) in lesson.quizzes.iter().enumerate() {
        ev.push(PlayEvent::Heading(format!(
            "Quiz {}/{}",
            i + 1,
            lesson.quizzes.len()
        )));
        match &q.kind {
            QuizKind::Choice { options, answer } => {
                let mut t = q.question.clone();
                for (c, o) in options {
                    t.push_str(&format!("\n  {c}) {o}"));
                }
                ev.push(PlayEvent::Text(t));
                gap(&mut ev);
                ev.push(PlayEvent::Text(format!(
                    "Answer: {answer}. {}",
                    q.explanation
                )));
            }
            QuizKind::Predict { run, answer } => {
                ev.push(PlayEvent::Text(format!("Predict: {}", q.question)));
                gap(&mut ev);
                ev.push(PlayEvent::Type {
                    command: run.clone(),
                    expect_failure: false,
                    millis_per_char: scaled(CHAR_MS, opts.speed),
                });
                ev.push(PlayEvent::Text(format!(
                    "Answer: {answer}. {}",
                    q.explanation
                )));
            }
        }
        gap(&mut ev);
    }
    ev
}

/// What a command printed (stdout, then the error as a front end shows it) and whether
/// it failed.
pub(crate) fn run_text(desk: &mut Desk, line: &str) -> (String, bool) {
    match desk.execute_lesson_code(line) {
        Ok(o) => (o.to_text(), false),
        Err(e) => (format!("{}{}\n", e.output.to_text(), e.text()), true),
    }
}

/// Run one reference command, recording it; an error if it did not end as written.
pub(crate) fn run_reference(
    desk: &mut Desk,
    seen: &mut Observed,
    lesson: &Lesson,
    what: &str,
    c: &RefCommand,
) -> Result<(), LessonError> {
    let ran = desk.run_lesson_code(&c.text);
    seen.record(&c.text, &ran);
    let failed = ran.failed();
    let out = seen
        .last
        .as_ref()
        .map(|r| r.text.clone())
        .unwrap_or_default();
    match (failed, c.expect_failure) {
        (true, false) => {
            let msg = out
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or("")
                .to_string();
            Err(LessonError::new(
                &lesson.file,
                c.line,
                format!("{what}: reference command `{}` failed: {msg}", c.text),
            ))
        }
        (false, true) => Err(LessonError::new(
            &lesson.file,
            c.line,
            format!(
                "{what}: reference command `! {}` is meant to fail but succeeded",
                c.text
            ),
        )),
        _ => Ok(()),
    }
}

/// Play the reference commands of items `0..upto` (steps, then predict quizzes) on `desk`,
/// silently: how the player rebuilds the cluster for `back`, `lesson reset` and resuming.
/// Returns the record of what ran (its last output).
pub fn replay(desk: &mut Desk, lesson: &Lesson, upto: usize) -> Observed {
    let mut seen = Observed::default();
    for s in lesson.steps.iter().take(upto) {
        for c in &s.commands {
            let _ = run_reference(desk, &mut seen, lesson, "replay", c);
        }
    }
    for q in lesson
        .quizzes
        .iter()
        .take(upto.saturating_sub(lesson.steps.len()))
    {
        if let QuizKind::Predict { run, .. } = &q.kind {
            let ran = desk.run_lesson_code(run);
            seen.record(run, &ran);
        }
    }
    seen.new_step();
    seen
}

/// Play a lesson headlessly on a fresh lab and return every problem: a reference command
/// that did not end as written, a check false after its step's commands, a predict quiz
/// whose answer is not in its command's output. With `strict` (the linter), also a step
/// whose check already holds before its commands, or holds after a decoy (see
/// [`super::decoy`]).
pub fn verify_with(lesson: &Lesson, strict: bool, decoys: bool) -> Vec<LessonError> {
    let mut errors = Vec::new();
    let mut desk = Desk::new();
    let mut seen = Observed::default();
    for s in &lesson.steps {
        let what = format!("step {}", s.number);
        seen.new_step();
        if strict && !s.checks.is_empty() && check::eval_all(&s.checks, &desk.lab, &seen).is_ok() {
            errors.push(LessonError::new(
                &lesson.file,
                s.line,
                format!(
                    "{what}: its check already holds before its reference commands (the step would pass with nothing done)"
                ),
            ));
        }
        let before = (strict && decoys).then(|| desk.lab.clone());
        for c in &s.commands {
            if let Err(e) = run_reference(&mut desk, &mut seen, lesson, &what, c) {
                errors.push(e);
            }
        }
        let mut all_hold = true;
        for c in &s.checks {
            let e = c.eval(&desk.lab, &seen);
            if !e.holds {
                all_hold = false;
                errors.push(LessonError::new(
                    &lesson.file,
                    c.line,
                    format!(
                        "{what}: check `{}` is false after the reference commands ({})",
                        c.text, e.actual
                    ),
                ));
            }
        }
        if let (true, Some(before)) = (all_hold, &before) {
            if let Some(why) = super::decoy::passing_decoy(s, before) {
                errors.push(LessonError::new(
                    &lesson.file,
                    s.line,
                    format!("{what}: {why}"),
                ));
            }
        }
    }
    for (i, q) in lesson.quizzes.iter().enumerate() {
        if let QuizKind::Predict { run, answer } = &q.kind {
            let (out, failed) = run_text(&mut desk, run);
            let answer = &super::facts::answer_in(&desk.lab, answer);
            if failed {
                errors.push(LessonError::new(
                    &lesson.file,
                    q.line,
                    format!("quiz {}: `{run}` failed: {}", i + 1, out.trim_end()),
                ));
            } else if !out.contains(answer.as_str()) {
                errors.push(LessonError::new(
                    &lesson.file,
                    q.line,
                    format!(
                        "quiz {}: the answer {answer:?} does not appear in the output of `{run}`",
                        i + 1
                    ),
                ));
            }
        }
    }
    errors
}

/// `lesson verify`: [`verify_with`] without the before-check.
pub fn verify(lesson: &Lesson) -> Vec<LessonError> {
    verify_with(lesson, false, false)
}

/// Where live playback goes: a front end that shows typing and waits (the REPL, the
/// dashboard). The engine drives the lab; the sink only paces and shows.
pub trait PlaySink {
    /// A heading or teaching text to show.
    fn show(&mut self, out: &crate::render::Outcome);
    /// Type a command visibly, one character every `millis_per_char`.
    fn type_command(&mut self, command: &str, millis_per_char: u64);
    /// Pause; false to stop playback.
    fn pause(&mut self, millis: u64) -> bool;
    /// Wait for a key (Enter); false to stop playback.
    fn wait_for_key(&mut self) -> bool;
    /// A heading begins here (a lesson's step): a recording puts a marker (nothing by
    /// default).
    fn marker(&mut self, _label: &str) {}
}

/// The line a playback stops on when a command did not do what its script says: it failed,
/// or a `!` line (meant to fail) succeeded.
pub fn stopped_line(command: &str, expect_failure: bool) -> crate::render::Line {
    let what = if expect_failure {
        "succeeded, but its `!` says it is meant to fail"
    } else {
        "failed"
    };
    crate::render::Line::styled(
        format!(
            "── playback stopped: {} {what}; the lines after it were written for what it should have done",
            crate::util::clip::quoted(command)
        ),
        crate::render::Role::Warn,
    )
}

/// A playback with no one watching (`play FILE` in a script): everything it shows,
/// commands as `lab> command` lines, in order; nothing waits.
#[derive(Debug, Default)]
pub(crate) struct Printed(pub crate::render::Outcome);

impl PlaySink for Printed {
    fn show(&mut self, out: &crate::render::Outcome) {
        self.0.extend(out.clone());
    }

    fn type_command(&mut self, command: &str, _: u64) {
        use crate::render::{Line, Role};
        self.0
            .line(Line::styled(format!("lab> {command}"), Role::Actor));
    }

    fn pause(&mut self, _: u64) -> bool {
        true
    }

    fn wait_for_key(&mut self) -> bool {
        true
    }
}

impl super::Desk {
    /// `lesson play` for a live front end: the lab is reset, then each event of the plan is
    /// shown through `sink` — commands typed visibly, run, and their output shown.
    pub fn lesson_play_live(
        &mut self,
        id: &str,
        opts: PlayOptions,
        sink: &mut dyn PlaySink,
    ) -> Result<(), crate::engine::LabError> {
        if !(opts.speed.is_finite() && opts.speed > 0.0) {
            return Err(crate::engine::LabError::msg(format!(
                "invalid --speed {}: expected a number above 0, e.g. 2 for twice as fast",
                opts.speed
            )));
        }
        let lesson = self
            .lessons
            .find_variant(id, opts.variant)
            .map_err(crate::engine::LabError::msg)?;
        let left = self.reset_keeping_lessons(false);
        if !left.is_empty() {
            sink.show(&left);
        }
        self.play_events(plan(&lesson, opts), sink, true);
        Ok(())
    }

    /// Show `events` through `sink`: headings and text shown, commands typed visibly, run
    /// (as lesson code when `lesson_code`: no file is read or written) and their output
    /// shown, pauses and waits left to the sink (which may stop the playback). A command
    /// that does not end as written (it failed, or a `!` one succeeded) stops the playback
    /// with [`stopped_line`]; the result says whether every command played ended as
    /// written.
    pub fn play_events(
        &mut self,
        events: Vec<PlayEvent>,
        sink: &mut dyn PlaySink,
        lesson_code: bool,
    ) -> bool {
        use crate::render::{Line, Outcome, Role};
        let mut events = events.into_iter().peekable();
        while let Some(ev) = events.next() {
            match ev {
                PlayEvent::Title(h) | PlayEvent::Heading(h) => {
                    let mut out = Outcome::empty();
                    out.plain("");
                    out.line(Line::styled(format!("── {h}"), Role::Header));
                    sink.marker(&h);
                    sink.show(&out);
                }
                PlayEvent::Text(t) => {
                    let mut out = Outcome::empty();
                    out.block(&super::facts::fill(&self.lab, &t), Role::Prose);
                    sink.show(&out);
                }
                PlayEvent::Task(t) => {
                    let mut out = Outcome::empty();
                    let t = format!("Task: {t}");
                    out.block(&super::facts::fill(&self.lab, &t), Role::Prose);
                    sink.show(&out);
                }
                PlayEvent::Type {
                    command,
                    millis_per_char,
                    expect_failure,
                } => {
                    sink.type_command(&command, millis_per_char);
                    let result = if lesson_code {
                        self.execute_lesson_code(&command)
                    } else {
                        self.execute(&command)
                    };
                    let unexpected = (result.is_err() != expect_failure)
                        .then(|| stopped_line(&command, expect_failure));
                    let mut out = match result {
                        Ok(o) => o,
                        Err(e) => {
                            let mut o = e.output.clone();
                            o.line(Line::styled(e.text(), Role::Bad));
                            o
                        }
                    };
                    // As a script runs: a stepped trace steps on while the next command
                    // is a `step`, else its rest is printed now.
                    let next = self.stepping().is_some().then(|| {
                        events.clone().find_map(|ev| match ev {
                            PlayEvent::Type { command, .. } => Some(command),
                            _ => None,
                        })
                    });
                    if let Some(rest) = self.settle_stepping(next.flatten().as_deref()) {
                        out.extend(rest);
                    }
                    if let Some(stopped) = unexpected {
                        // What follows was written for the state this command should have
                        // left: playing on would show a cascade of errors.
                        out.line(stopped);
                        sink.show(&out);
                        return false;
                    }
                    sink.show(&out);
                }
                PlayEvent::Pause { millis } => {
                    if !sink.pause(millis) {
                        return true;
                    }
                }
                PlayEvent::WaitForKey => {
                    if !sink.wait_for_key() {
                        return true;
                    }
                }
            }
        }
        true
    }

    /// The playback of `play FILE`: the script read from the lab's files (see
    /// [`crate::script::plan`]).
    pub fn script_plan(
        &mut self,
        a: &crate::command::grammar::PlayArgs,
    ) -> Result<Vec<PlayEvent>, crate::engine::LabError> {
        let text = crate::edge::read_text(
            self.lab.files(),
            &a.file,
            "a script",
            crate::edge::SCRIPT_CAP,
        )
        .map_err(|e| crate::engine::LabError::msg(format!("cannot play {}: {e}", a.file)))?;
        let pace = match (a.step, a.pace) {
            (true, _) => crate::script::Pace::Step,
            (false, Some(p)) => crate::script::Pace::Every(p.as_ms()),
            (false, None) => crate::script::Pace::Every(crate::script::DEFAULT_PACE_MS),
        };
        Ok(crate::script::plan(&text, pace))
    }
}
