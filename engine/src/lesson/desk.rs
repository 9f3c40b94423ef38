//! The lesson desk: a lab and the guided lessons beside it, the one thing every front end
//! runs lines through.
//!
//! The arrows run one way: the front ends hand each line to [`Desk::execute`]; the desk
//! handles the lesson commands (`lesson …`, `hint`, `skip`, `back`, see [`super::commands`])
//! itself and hands every other line to the engine's [`Lab::execute`], then feeds what it
//! printed to the current step's check. The engine knows nothing of lessons. The desk also
//! holds a trace being stepped (`trace … --step`, then `step`, see [`super::stepping`]).

use super::Lessons;
use super::progress::TypedLine;
use super::stepping::{Moved, Stepping};
use crate::command::grammar::StepAction;
use crate::command::{Command, ParseError};
use crate::engine::seen::Executed;
use crate::engine::{Lab, LabError, is_front_end_command};
use crate::render::Outcome;

/// The learner's desk: the lab being taught on and the lessons (catalog, progress store,
/// the lesson in progress) that drive it. Front ends own one and run every line through
/// [`Desk::execute`]; read-only views take `&desk.lab`.
pub struct Desk {
    /// The lab (rebuilt by the lesson commands that start a step over).
    pub lab: Lab,
    /// The lessons, their saved progress and the lesson in progress.
    pub lessons: Lessons,
    /// The trace being stepped, if one is.
    stepping: Option<Stepping>,
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
            stepping: None,
        }
    }

    /// The trace being stepped, if one is (`trace … --step`).
    pub fn stepping(&self) -> Option<&Stepping> {
        self.stepping.as_ref()
    }

    /// Print the rest of the trace being stepped and end stepping: what a script does
    /// after `trace … --step` (it does not wait for the learner).
    pub fn finish_stepping(&mut self) -> Option<Outcome> {
        self.stepping.take().map(Stepping::rest)
    }

    /// While stepping, the REPL's keys as the commands they stand for: an empty line is
    /// `step`, `b` or `back` is `step back`, `q` is `step end`.
    fn stepping_key<'l>(&self, line: &'l str) -> &'l str {
        if self.stepping.is_none() {
            return line;
        }
        match line.trim() {
            "" => "step",
            "b" | "back" => "step back",
            "q" => "step end",
            _ => line,
        }
    }

    /// `step [next|back|end]`.
    fn step_cmd(&mut self, action: StepAction) -> Result<Outcome, LabError> {
        let Some(s) = self.stepping.as_mut() else {
            return Err(LabError::msg(
                "nothing is being stepped: `trace SRC DST --step` steps a packet hop by hop",
            ));
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
                "already at the first hop (1/{}): `step` goes on, `step end` stops",
                s.trace().hops.len()
            ))),
            StepAction::End => {
                let at = s.at() + 1;
                let of = s.trace().hops.len();
                self.stepping = None;
                let mut out = Outcome::empty();
                out.plain(format!("stepping ended at hop {at}/{of}"));
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
        let Some(s) = self.lab.walk(&a.flow).ok().and_then(Stepping::new) else {
            return;
        };
        *out = s.opening();
        self.stepping = Some(s);
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
        let ran = self.run_line(line);
        if let Some(s) = &mut self.lessons.session {
            // A played script's lines went in one by one as they ran.
            if !matches!(ran.command, Some(Command::Play(_))) {
                let files = self.lab.files_read_since(journaled);
                s.progress.transcript.push(TypedLine {
                    line: line.to_string(),
                    files,
                });
            }
        }
        ran
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
                Executed {
                    command: Some(Command::Step { action }),
                    ..Executed::nothing(result)
                }
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
                let mut ran = self.lab.run_command(text, cmd);
                if let Some(a) = stepped {
                    self.start_stepping(&a, &mut ran);
                }
                if replaces_lab && ran.result.is_ok() {
                    self.stepping = None;
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
}
