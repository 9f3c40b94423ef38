//! The lesson desk: a lab and the guided lessons beside it, the one thing every front end
//! runs lines through.
//!
//! The arrows run one way: the front ends hand each line to [`Desk::execute`]; the desk
//! handles the lesson commands (`lesson …`, `hint`, `skip`, `back`, see [`super::commands`])
//! itself and hands every other line to the engine's [`Lab::execute`], then feeds what it
//! printed to the current step's check. The engine knows nothing of lessons. The desk also
//! holds what is being stepped (`trace … --step` or `pod create … --pvc CLAIM --step`, then
//! `step`, see [`super::stepping`]).

use super::Lessons;
use super::csi_stepping::{CsiStepped, CsiStepping, Held};
use super::progress::TypedLine;
use super::stepping::{Moved, PacketStepping, Stepping};
use crate::command::grammar::StepAction;
use crate::command::{Command, ParseError};
use crate::engine::seen::Executed;
use crate::engine::watch::{Watch, WatchEnd};
use crate::engine::{Lab, LabError, is_front_end_command};
use crate::render::{Line, Outcome, Role};

/// The learner's desk: the lab being taught on and the lessons (catalog, progress store,
/// the lesson in progress) that drive it. Front ends own one and run every line through
/// [`Desk::execute`]; read-only views take `&desk.lab`.
pub struct Desk {
    /// The lab (rebuilt by the lesson commands that start a step over).
    pub lab: Lab,
    /// The lessons, their saved progress and the lesson in progress.
    pub lessons: Lessons,
    /// The `get -w` in progress: what changed since each line is printed under it.
    watch: Option<Watch>,
    /// The trace or CSI flow being stepped, if one is.
    stepping: Option<Stepping>,
    /// A script printed every step of the last stepping at once (see
    /// [`Desk::settle_stepping`]): what a step was (`hop`, `call`), so a `step` after it
    /// says so.
    stepped_at_once: Option<&'static str>,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desk")
            .field("lessons", &self.lessons)
            .finish_non_exhaustive()
    }
}

impl Default for Desk {
    fn default() -> Self {
        Desk::new()
    }
}

impl From<Lab> for Desk {
    fn from(lab: Lab) -> Self {
        Desk::with_lab(lab)
    }
}

impl Desk {
    /// The default lab (`Lab::new()`) with the embedded lessons and an in-memory progress
    /// store.
    pub fn new() -> Self {
        Desk::with_lab(Lab::new())
    }

    /// A desk on this lab, with the embedded lessons and an in-memory progress store.
    pub fn with_lab(lab: Lab) -> Self {
        Desk {
            lab,
            lessons: Lessons::default(),
            watch: None,
            stepping: None,
            stepped_at_once: None,
        }
    }

    /// The trace or CSI flow being stepped, if one is (`trace … --step`, `pod create …
    /// --step`).
    pub fn stepping(&self) -> Option<&Stepping> {
        self.stepping.as_ref()
    }

    /// Forget the trace or CSI flow being stepped, if one is, printing nothing: the cluster
    /// it walked is being rebuilt (`lesson retry`, `back`, a resume), so there is nothing
    /// left to step, and `back`, Enter and `q` are the lesson's again.
    pub(crate) fn drop_stepping(&mut self) {
        self.stepping = None;
        self.stepped_at_once = None;
    }

    /// After a script's line (`next`: the script's next command, `None` at its end): a trace
    /// being stepped stays open while the next command is a `step` (`step`, `step back`,
    /// `step end`, or the REPL's keys for them), so a script written for the REPL steps as
    /// the REPL does; otherwise the rest of the trace is printed at once and stepping ends
    /// (a script does not wait). Every hop printed counts as stepped for the lesson's check
    /// (a [`crate::engine::seen::Seen::Stepped`] each), so its feedback may follow.
    pub fn settle_stepping(&mut self, next: Option<&str>) -> Option<Outcome> {
        self.stepping.as_ref()?;
        if next.is_some_and(|line| self.is_step_command(line)) {
            return None;
        }
        let mut s = self.stepping.take()?;
        let mut rest = Outcome::empty();
        let mut seen = Vec::new();
        while s.forward() == Moved::On {
            rest.extend(s.shown());
            seen.push(s.seen());
        }
        rest.extend(s.result());
        self.stepped_at_once = Some(s.unit());
        let ran = Executed {
            command: Some(Command::Step {
                action: StepAction::Next,
            }),
            seen,
            ..Executed::nothing(Ok(rest))
        };
        self.lesson_observe("step", ran).result.ok()
    }

    /// Whether `line`, run now, is a `step` command (as parsed, after the REPL's keys).
    fn is_step_command(&self, line: &str) -> bool {
        let line = self.stepping_key(line);
        matches!(
            crate::command::parse(crate::command::strip_comment(line)),
            Ok(Some(Command::Step { .. }))
        )
    }

    /// While stepping, the REPL's keys as the commands they stand for: an empty line is
    /// `step`, `b` (or `back`, outside a lesson) is `step back`, `q` is `step end`. During
    /// a lesson `back` stays the lesson's, as its footer says: back one step.
    fn stepping_key<'l>(&self, line: &'l str) -> &'l str {
        if self.stepping.is_none() {
            return line;
        }
        match line.trim() {
            "" => "step",
            "b" => "step back",
            "back" if self.lessons.session.is_none() => "step back",
            "q" => "step end",
            _ => line,
        }
    }

    /// `step [next|back|end]`.
    fn step_cmd(&mut self, action: StepAction) -> Result<Outcome, LabError> {
        let Some(s) = self.stepping.as_mut() else {
            return Err(LabError::msg(match self.stepped_at_once {
                Some("call") => {
                    "nothing is being stepped: the script printed every call of the CSI flow at once; a `step` line right after `pod create|delete NAME --step` or `pvc delete NAME --step` (or after another `step`) steps it call by call"
                }
                Some(_) => {
                    "nothing is being stepped: the script printed every hop of the trace at once; a `step` line right after `trace SRC DST --step` (or after another `step`) steps it hop by hop"
                }
                None => {
                    "nothing is being stepped: `trace SRC DST --step` steps a packet hop by hop; `pod create|delete NAME --step` and `pvc delete NAME --step` step a volume's CSI calls one by one"
                }
            }));
        };
        match action {
            StepAction::Next => match s.forward() {
                Moved::On => Ok(s.shown()),
                Moved::Ended => {
                    let out = s.result();
                    self.stepping = None;
                    Ok(out)
                }
            },
            StepAction::Back if s.back() => Ok(s.shown()),
            StepAction::Back => Err(LabError::msg(format!(
                "already at the first {} (1/{}): `step` goes on, `step end` stops",
                s.unit(),
                s.len()
            ))),
            StepAction::End => {
                let (unit, at, of) = (s.unit(), s.at() + 1, s.len());
                self.stepping = None;
                let mut out = Outcome::empty();
                out.plain(format!("stepping ended at {unit} {at}/{of}"));
                Ok(out)
            }
        }
    }

    /// A `trace … --step` that ran: stepping starts at its first hop, and what it printed
    /// becomes the opening (the flow and hop 1). A trace with no hop prints whole.
    fn start_stepping(&mut self, a: &crate::command::grammar::TraceArgs, ran: &mut Executed) {
        let Ok(out) = &mut ran.result else {
            return;
        };
        let Some(s) = self.lab.walk(&a.flow).ok().and_then(PacketStepping::new) else {
            return;
        };
        let s = Stepping::Packet(Box::new(s));
        *out = s.opening();
        ran.seen.push(s.seen());
        self.stepping = Some(s);
        self.stepped_at_once = None;
    }

    /// A `pod create|delete … --step` or `pvc delete … --step` that ran: stepping starts at
    /// the first CSI call it made (`held`: what the driver held before), printed after the
    /// command's own output. A command that made no CSI call says why and opens nothing;
    /// one that failed opens nothing.
    fn start_csi_stepping(&mut self, stepped: &CsiStepped, held: Held, ran: &mut Executed) {
        let Ok(out) = &mut ran.result else {
            return;
        };
        match CsiStepping::new(&self.lab, stepped.what(), ran.wire, held) {
            Some(s) => {
                let s = Stepping::Csi(s);
                out.extend(s.opening());
                ran.seen.push(s.seen());
                self.stepping = Some(s);
                self.stepped_at_once = None;
            }
            None => {
                let why = stepped.no_call(&self.lab);
                out.line(Line::styled(format!("no CSI call: {why}"), Role::Dim));
            }
        }
    }

    /// Parse and run one line, as the learner typed it. Lesson commands run here; any other
    /// line runs in the lab and then goes to the current step's check. `reset` and a
    /// successful `load` replace the lab, so they leave the lesson in progress (its progress
    /// stays).
    pub fn execute(&mut self, line: &str) -> Result<Outcome, LabError> {
        self.run(line).result
    }

    /// [`Desk::execute`], saying what the line did as data (see [`Executed`]). A line
    /// typed while a lesson is in progress goes into its transcript (see
    /// [`super::progress::Transcript`]), with the files it read.
    pub fn run(&mut self, line: &str) -> Executed {
        let journaled = self.lab.journal_mark();
        let saves = self.lessons.saves();
        let place = self.lesson_place();
        let mut ran = self.run_line(line);
        if self.lesson_place() != place {
            self.end_stepping_with_the_step(&mut ran);
        }
        self.follow_watch(&mut ran);
        if let Some(s) = &mut self.lessons.session {
            // Where the current item began, in the lab's events: after the line that moved
            // to it (or a rebuild under it that left fewer events than that).
            let events = self.lab.position();
            if s.rewind_floor().is_none_or(|floor| floor > events.of) {
                s.began = Some((s.at, events.at));
            }
            // A played script's lines went in one by one as they ran. Handing the lesson in
            // (`lesson submit`, a draft or an attempt that failed) is no work on the
            // cluster: a grader replaying the transcript would count it a failed line.
            if !matches!(ran.command, Some(Command::Play(_)))
                && !crate::command::is_lesson_submit(line)
            {
                let files = self.lab.files_read_since(journaled);
                s.progress.transcript.push(TypedLine {
                    line: line.to_string(),
                    files,
                });
                // The line saved progress as it ran (it completed a step, answered a
                // quiz): save again with the line itself in the transcript, so a learner
                // who quits now hands in the lines that did the step.
                if self.lessons.saves() != saves {
                    self.lessons.save_session();
                }
            }
        }
        ran
    }

    /// Which lesson is in progress and at which item, if one is.
    fn lesson_place(&self) -> Option<(String, usize)> {
        let s = self.lessons.session.as_ref()?;
        Some((s.lesson.id.clone(), s.at))
    }

    /// The lesson moved (`skip`, `back`, `next`, another lesson): a trace or CSI flow being
    /// stepped ends with the step it was stepped for, so `back`, Enter and `q` are the
    /// lesson's again and the dashboard's stepping panel closes. Its rest is printed at once
    /// before what the lesson command printed, so the next step or quiz comes last. (A step
    /// a command completed ends the stepping itself, before its feedback: see
    /// [`Desk::stepping_rest`].)
    fn end_stepping_with_the_step(&mut self, ran: &mut Executed) {
        let Some(rest) = self.stepping_rest() else {
            return;
        };
        let Ok(out) = &mut ran.result else {
            return;
        };
        let mut first = rest;
        first.extend(std::mem::take(out));
        *out = first;
    }

    /// The stepping in progress ended because its step is over: the hops or calls not yet
    /// shown and its result, printed at once, and a line saying so; `None` when nothing is
    /// being stepped.
    pub(crate) fn stepping_rest(&mut self) -> Option<Outcome> {
        let mut s = self.stepping.take()?;
        self.stepped_at_once = None;
        let mut out = Outcome::empty();
        let (unit, at, of) = (s.unit(), s.at() + 1, s.len());
        while s.forward() == Moved::On {
            out.extend(s.shown());
        }
        out.extend(s.result());
        out.line(Line::styled(
            format!(
                "(stepping ended at {unit} {at}/{of} with the step it was for, the rest printed at once: `back` goes to the step before)"
            ),
            Role::Dim,
        ));
        Some(out)
    }

    /// Why a `rewind N` is refused during a lesson: it goes to before the current item
    /// began (see [`super::session::LessonSession::rewind_floor`]).
    fn rewind_past_the_item(&self, cmd: &Command) -> Option<LabError> {
        let Command::Rewind(a) = cmd else {
            return None;
        };
        let s = self.lessons.session.as_ref()?;
        let floor = s.rewind_floor()?;
        let target = self.lab.event_at(a.event?).ok()?;
        let item = match s.current() {
            super::Item::Step(step) => format!("step {}", step.number),
            _ => "this quiz".to_string(),
        };
        (target < floor).then(|| {
            LabError::msg(format!(
                "this rewind (to event {target}) would take the lab to before {item} began (after event {floor}): during a lesson, rewind goes back no further than the current step's start, whose checks read what happens from there; `lesson retry` starts the step over, `back` goes to the one before"
            ))
        })
    }

    fn run_line(&mut self, line: &str) -> Executed {
        let line = self.stepping_key(line);
        let (text, parsed) = match self.lab.read_line(line) {
            Ok(read) => read,
            Err(e) => return Executed::nothing(Err(e)),
        };
        match parsed {
            Ok(Some(Command::Play(a))) => {
                // `play FILE` in a script: the commands run one after another with their
                // captions (a live front end plays it paced, see `script_plan`).
                let result = self.script_plan(&a).map(|events| {
                    let mut sink = super::play::Printed::default();
                    self.play_events(events, &mut sink, false);
                    sink.0
                });
                Executed {
                    command: Some(Command::Play(a)),
                    ..Executed::nothing(result)
                }
            }
            Ok(Some(Command::Step { action })) => {
                let result = self.step_cmd(action);
                // The hop it moved to is what the step's check reads (none once ended).
                let seen = match (&result, action, &self.stepping) {
                    (Ok(_), StepAction::Next | StepAction::Back, Some(s)) => vec![s.seen()],
                    _ => Vec::new(),
                };
                let ran = Executed {
                    command: Some(Command::Step { action }),
                    seen,
                    ..Executed::nothing(result)
                };
                self.lesson_observe(text, ran)
            }
            Ok(Some(cmd)) if is_front_end_command(&cmd) => {
                let result = self.lesson_control(cmd.clone());
                Executed {
                    command: Some(cmd),
                    ..Executed::nothing(result)
                }
            }
            Ok(Some(cmd)) => {
                let replaces_lab = matches!(cmd, Command::Reset(_) | Command::Load(_));
                let stepped = match &cmd {
                    Command::Trace(a) if a.step => Some(a.clone()),
                    _ => None,
                };
                if let Some(refused) = self.rewind_past_the_item(&cmd) {
                    let ran = Executed {
                        command: Some(cmd),
                        ..Executed::nothing(Err(refused))
                    };
                    return self.lesson_observe(text, ran);
                }
                let csi_stepped = CsiStepped::of(&cmd, &self.lab).map(|c| (c, Held::of(&self.lab)));
                let mut ran = self.lab.run_command(text, cmd);
                if let Some(a) = stepped {
                    self.start_stepping(&a, &mut ran);
                }
                if let Some((c, held)) = csi_stepped {
                    self.start_csi_stepping(&c, held, &mut ran);
                }
                if replaces_lab && ran.result.is_ok() {
                    self.stepping = None;
                    self.stepped_at_once = None;
                }
                if replaces_lab {
                    if let Ok(out) = &mut ran.result {
                        if let Some(left) = self.leave_lesson() {
                            let mut first = Outcome::empty();
                            first.line(left);
                            first.extend(std::mem::take(out));
                            *out = first;
                        }
                    }
                }
                self.lesson_observe(text, ran)
            }
            // A blank line or a request for help is nothing the step's check reads.
            parsed @ (Ok(None) | Err(ParseError::Help(_))) => self.lab.run_parsed(text, parsed),
            parsed @ Err(ParseError::Invalid(_)) => {
                let ran = self.lab.run_parsed(text, parsed);
                self.lesson_observe(text, ran)
            }
        }
    }

    /// The kind the `get -w` in progress watches (`pods`), if one is.
    pub fn watching(&self) -> Option<&'static str> {
        self.watch.as_ref().map(Watch::resource)
    }

    /// End the `get -w` in progress (Ctrl-C in the REPL, Esc in the dashboard); the kind
    /// it watched, if one was.
    pub fn stop_watch(&mut self) -> Option<&'static str> {
        let w = self.watch.take()?;
        self.lab.watch_stop();
        Some(w.resource())
    }

    /// After a line: keep the watch it started (saying which one it replaces), or print
    /// under it what the watch in progress saw change; end the watch when the lab it
    /// watched was replaced or went back in time.
    fn follow_watch(&mut self, ran: &mut Executed) {
        if let Some(new) = ran.started_watch.take() {
            if let (Some(old), Ok(out)) = (self.watch.replace(new), &mut ran.result) {
                let mut first = Outcome::empty();
                first.line(Line::styled(
                    format!(
                        "(the watch of {} ends here: one watch at a time, and this one replaces it)",
                        old.resource()
                    ),
                    Role::Dim,
                ));
                first.extend(std::mem::take(out));
                *out = first;
            }
            return;
        }
        let Some(w) = &mut self.watch else {
            return;
        };
        let replaced = match (&ran.command, &ran.result) {
            (Some(Command::Reset(_)), Ok(_)) => Some("`reset` started a new lab"),
            (Some(Command::Load(_)), Ok(_)) => Some("`load` replaced the lab"),
            (Some(Command::Rewind(_)), Ok(_)) => Some("the lab moved to another moment"),
            _ => None,
        };
        let changes = match replaced {
            Some(why) => Err(why),
            None => self.lab.watch_changes(w).map_err(|end| match end {
                WatchEnd::Replaced => "the lab it watched was replaced",
                WatchEnd::FellBehind => {
                    "more changes came in one command than it keeps (kubectl's watch would end with \"too old resource version\")"
                }
            }),
        };
        let printed = match changes {
            Ok(out) => out,
            Err(why) => {
                let mut out = Outcome::empty();
                out.line(Line::styled(
                    format!(
                        "(the watch of {} ended: {why}; `get {} -w` watches again)",
                        w.resource(),
                        w.resource()
                    ),
                    Role::Dim,
                ));
                self.watch = None;
                self.lab.watch_stop();
                out
            }
        };
        match &mut ran.result {
            Ok(out) => out.extend(printed),
            Err(e) => e.output.extend(printed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(desk: &mut Desk, line: &str) -> String {
        desk.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
            .to_text()
    }

    #[test]
    fn rewind_and_load_end_the_watch_and_save_leaves_it_out() {
        let mut desk = Desk::new();
        ok(&mut desk, "pod create a");
        let before = desk.lab.state_snapshot();
        ok(&mut desk, "get pods -w");
        assert_eq!(desk.watching(), Some("pods"));
        // Not lab state: a save file is the same with a watch running.
        assert_eq!(desk.lab.state_snapshot(), before);
        let out = ok(&mut desk, "pod create b");
        assert!(out.contains("\nb      0/1     Pending"), "{out}");
        let out = ok(&mut desk, "rewind 1");
        assert!(
            out.ends_with(
                "(the watch of pods ended: the lab moved to another moment; `get pods -w` watches again)\n"
            ),
            "{out}"
        );
        assert_eq!(desk.watching(), None);
        // A failed rewind changes nothing: the watch goes on.
        ok(&mut desk, "get pods -w");
        assert!(desk.execute("rewind 99").is_err());
        assert_eq!(desk.watching(), Some("pods"));
        let out = ok(&mut desk, "label pod a x=y");
        assert!(
            out.ends_with("a      1/1     Running   0          0s\n"),
            "{out}"
        );
    }

    #[test]
    fn a_lab_replaced_under_the_desk_ends_the_watch() {
        let mut desk = Desk::new();
        ok(&mut desk, "get nodes -w");
        desk.lab = Lab::new();
        let out = ok(&mut desk, "pod create a");
        assert!(
            out.ends_with(
                "(the watch of nodes ended: the lab it watched was replaced; `get nodes -w` watches again)\n"
            ),
            "{out}"
        );
        assert_eq!(desk.stop_watch(), None);
    }

    #[test]
    fn stop_watch_ends_it_and_nothing_streams_after() {
        let mut desk = Desk::new();
        ok(&mut desk, "pod create a");
        ok(&mut desk, "get pods --watch-only");
        assert_eq!(desk.stop_watch(), Some("pods"));
        assert_eq!(ok(&mut desk, "label pod a x=y"), "pod/a labeled\n");
    }
}
