//! The learner's place in a lesson: which item (step or quiz) is current, which hint comes
//! next, what was done. Pure state: the engine glue (`commands`) evaluates checks against the
//! `Lab`, rebuilds the cluster for `back`/`reset`, and saves progress.

use super::check::Observed;
use super::model::{Hint, Lesson, Quiz, Step};
use super::progress::LessonProgress;
use std::sync::Arc;

/// What the learner is on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item<'a> {
    /// A step.
    Step(&'a Step),
    /// A quiz: its 0-based index and the quiz.
    Quiz(usize, &'a Quiz),
    /// Every item is behind the learner.
    Finished,
}

/// Which hint comes next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HintAt<'a> {
    /// A hint the lesson's author wrote: its number, how many hints there are, the hint.
    Written(usize, usize, &'a Hint),
    /// The last one, worked out from the learner's cluster (its number: how many there are).
    FromHere(usize),
}

/// An interactive lesson in progress.
#[derive(Debug, Clone)]
pub struct LessonSession {
    /// The lesson.
    pub lesson: Arc<Lesson>,
    /// Current item: steps first, then quizzes; `item_count()` means finished.
    pub at: usize,
    /// Index of the next hint of the current step.
    pub next_hint: usize,
    /// What the learner ran during the current item.
    pub seen: Observed,
    /// Wrong answers given to the current quiz (a second one moves on); one on record from
    /// before the learner came back to the quiz counts.
    pub wrong_answers: u32,
    /// Whether the lab ran the current predict quiz's command for an answer, and whether it
    /// succeeded (`None`: not yet): it runs once, and `skip` does not run it again.
    pub predict_ran: Option<bool>,
    /// Steps and quizzes done (saved).
    pub progress: LessonProgress,
    /// The item the lab's events were counted for, and how many there were when it began:
    /// `rewind` does not go before them, since a step's checks read what happened during it
    /// (see [`LessonSession::rewind_floor`]).
    pub(crate) began: Option<(usize, usize)>,
}

impl LessonSession {
    /// A session at the first item not done yet.
    pub fn new(lesson: Arc<Lesson>, progress: LessonProgress) -> Self {
        let at = first_open(&lesson, &progress);
        let mut s = LessonSession {
            lesson,
            at,
            next_hint: 0,
            seen: Observed::default(),
            wrong_answers: 0,
            predict_ran: None,
            progress,
            began: None,
        };
        s.wrong_answers = s.tries_used();
        s
    }

    /// The current quiz's number (1-based), if the learner is on a quiz.
    pub fn quiz_number(&self) -> Option<u32> {
        match self.current() {
            Item::Quiz(i, _) => Some(u32::try_from(i + 1).unwrap_or(u32::MAX)),
            _ => None,
        }
    }

    /// Wrong answers the current quiz has on record from before the learner came back to
    /// it (`back`, `lesson retry`, a resumed lesson): its first try is used, so the next
    /// wrong answer is the last.
    fn tries_used(&self) -> u32 {
        self.quiz_number()
            .filter(|n| self.progress.wrong.contains(n) && !self.progress.quizzes.contains(n))
            .map_or(0, |_| 1)
    }

    /// Note that the learner saw the current quiz's answer before answering it (`skip`, or
    /// a prediction's command run first): a right answer from now on, however the learner
    /// comes back to the quiz, is at the second try. A quiz already answered keeps its
    /// score.
    pub fn answer_shown(&mut self) {
        if let Some(n) = self.quiz_number()
            && !self.progress.quizzes.contains(&n)
        {
            self.progress.shown.insert(n);
        }
    }

    /// Note a wrong answer to the current quiz (a quiz already answered right keeps its
    /// score: the first answer counts).
    pub fn answered_wrong(&mut self) {
        if let Some(n) = self.quiz_number()
            && !self.progress.quizzes.contains(&n)
        {
            self.progress.wrong.insert(n);
        }
    }

    /// The event the current item began after: `rewind` goes no further back during it.
    /// A rewind to before a step would undo the history its checks read (the watch log,
    /// events) and let a pod made by hand pass for the kubelet's retry.
    pub fn rewind_floor(&self) -> Option<usize> {
        self.began.filter(|(at, _)| *at == self.at).map(|(_, n)| n)
    }

    /// The current item.
    pub fn current(&self) -> Item<'_> {
        item(&self.lesson, self.at)
    }

    /// (done, total) items.
    pub fn counts(&self) -> (usize, usize) {
        (self.progress.done(), self.lesson.item_count())
    }

    /// The next hint of the current step: the written ones in order, then one worked out
    /// from where the learner is, then the first again; `None` on a quiz or when finished.
    pub fn hint(&mut self) -> Option<HintAt<'_>> {
        let Item::Step(step) = item(&self.lesson, self.at) else {
            return None;
        };
        let total = step.hints.len() + 1;
        let i = self.next_hint % total;
        self.next_hint = (i + 1) % total;
        Some(match step.hints.get(i) {
            Some(h) => HintAt::Written(i + 1, total, h),
            None => HintAt::FromHere(total),
        })
    }

    /// Mark the current item done and move to the next (a quiz answered after a wrong
    /// answer, or after its answer was shown, is done, and counted as right at the second
    /// try, whenever that was; a quiz answered again keeps its first score).
    pub fn complete(&mut self) {
        match self.current() {
            Item::Step(s) => {
                let n = s.number;
                self.progress.steps.insert(n);
                self.progress.skipped_steps.remove(&n);
            }
            Item::Quiz(i, _) => {
                let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
                let p = &mut self.progress;
                if p.quizzes.insert(n)
                    && (self.wrong_answers > 0 || p.wrong.contains(&n) || p.shown.contains(&n))
                {
                    p.second_try.insert(n);
                }
                p.skipped_quizzes.remove(&n);
            }
            Item::Finished => return,
        }
        self.move_to(self.at + 1);
    }

    /// Move on without marking the current item done; it is remembered as skipped, so a
    /// resumed lesson starts after it (a quiz's answer, which skipping shows, as shown).
    pub fn skip(&mut self) -> bool {
        match self.current() {
            Item::Step(s) if !self.progress.steps.contains(&s.number) => {
                let n = s.number;
                self.progress.skipped_steps.insert(n);
            }
            Item::Quiz(i, _) => {
                let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
                if !self.progress.quizzes.contains(&n) {
                    self.progress.skipped_quizzes.insert(n);
                    // Skipping shows the answer.
                    self.progress.shown.insert(n);
                }
            }
            Item::Finished => return false,
            Item::Step(_) => {}
        }
        self.move_to(self.at + 1);
        true
    }

    /// Go to the previous item; false at the first.
    pub fn back(&mut self) -> bool {
        if self.at == 0 {
            return false;
        }
        self.move_to(self.at - 1);
        true
    }

    /// Start over: first item, no progress (the same variant).
    pub fn reset(&mut self) {
        let old = std::mem::take(&mut self.progress);
        // A quiz answered wrong or whose answer was seen stays so: starting over does not
        // make a right answer after it a first try. And the lines typed before stay in
        // the transcript, so a grader's replay sees them too (unless it is past its cap:
        // then it starts anew, or nothing could be handed in).
        self.progress = LessonProgress {
            variant: old.variant,
            shown: old.seen_quizzes(),
            transcript: if old.transcript.dropped == 0 {
                old.transcript
            } else {
                Default::default()
            },
            ..LessonProgress::default()
        };
        self.move_to(0);
    }

    /// Go to an item (clamped), with fresh hints and a fresh command record.
    pub(crate) fn move_to(&mut self, at: usize) {
        self.at = at.min(self.lesson.item_count());
        self.next_hint = 0;
        self.wrong_answers = self.tries_used();
        self.predict_ran = None;
        self.seen.new_step();
    }
}

/// Item `at` of a lesson.
pub fn item(lesson: &Lesson, at: usize) -> Item<'_> {
    if let Some(s) = lesson.steps.get(at) {
        return Item::Step(s);
    }
    match at
        .checked_sub(lesson.steps.len())
        .and_then(|q| lesson.quizzes.get(q).map(|quiz| (q, quiz)))
    {
        Some((q, quiz)) => Item::Quiz(q, quiz),
        None => Item::Finished,
    }
}

/// Where a lesson resumes: the first item neither done nor skipped; once only skipped
/// items are left, the first of those; finished when all are done.
pub fn first_open(lesson: &Lesson, progress: &LessonProgress) -> usize {
    let open = |skipped: bool| {
        let steps = lesson.steps.iter().enumerate().find_map(|(i, s)| {
            let done = progress.steps.contains(&s.number);
            let skip = progress.skipped_steps.contains(&s.number);
            (!done && skip == skipped).then_some(i)
        });
        steps.or_else(|| {
            (0..lesson.quizzes.len()).find_map(|q| {
                let n = u32::try_from(q + 1).unwrap_or(u32::MAX);
                let done = progress.quizzes.contains(&n);
                let skip = progress.skipped_quizzes.contains(&n);
                (!done && skip == skipped).then_some(lesson.steps.len() + q)
            })
        })
    };
    open(false)
        .or_else(|| open(true))
        .unwrap_or(lesson.item_count())
}
