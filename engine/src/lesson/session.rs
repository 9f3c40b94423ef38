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
    /// Wrong answers given to the current quiz (a second one moves on).
    pub wrong_answers: u32,
    /// Steps and quizzes done (saved).
    pub progress: LessonProgress,
}

impl LessonSession {
    /// A session at the first item not done yet.
    pub fn new(lesson: Arc<Lesson>, progress: LessonProgress) -> Self {
        let at = first_open(&lesson, &progress);
        LessonSession {
            lesson,
            at,
            next_hint: 0,
            seen: Observed::default(),
            wrong_answers: 0,
            progress,
        }
    }

    /// The current item.
    pub fn current(&self) -> Item<'_> {
        item(&self.lesson, self.at)
    }

    /// Items done / items in the lesson, from 0.0 to 1.0 (for a progress bar).
    pub fn fraction(&self) -> f64 {
        let total = self.lesson.item_count();
        if total == 0 {
            return 1.0;
        }
        self.progress.done() as f64 / total as f64
    }

    /// (done, total) items.
    pub fn counts(&self) -> (usize, usize) {
        (self.progress.done(), self.lesson.item_count())
    }

    /// The next hint of the current step, cycling back to the first after the last;
    /// `None` on a quiz, when finished, or for a step without hints.
    pub fn hint(&mut self) -> Option<(usize, usize, &Hint)> {
        let Item::Step(step) = item(&self.lesson, self.at) else {
            return None;
        };
        let total = step.hints.len();
        if total == 0 {
            return None;
        }
        let i = self.next_hint % total;
        self.next_hint = (i + 1) % total;
        step.hints.get(i).map(|h| (i + 1, total, h))
    }

    /// Mark the current item done and move to the next.
    pub fn complete(&mut self) {
        match self.current() {
            Item::Step(s) => {
                let n = s.number;
                self.progress.steps.insert(n);
            }
            Item::Quiz(i, _) => {
                let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
                self.progress.quizzes.insert(n);
            }
            Item::Finished => return,
        }
        self.move_to(self.at + 1);
    }

    /// Move on without marking the current item done.
    pub fn skip(&mut self) -> bool {
        if self.at >= self.lesson.item_count() {
            return false;
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

    /// Start over: first item, no progress.
    pub fn reset(&mut self) {
        self.progress = LessonProgress::default();
        self.move_to(0);
    }

    /// Go to an item (clamped), with fresh hints and a fresh command record.
    pub fn move_to(&mut self, at: usize) {
        self.at = at.min(self.lesson.item_count());
        self.next_hint = 0;
        self.wrong_answers = 0;
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

/// The first item not done (finished when all are).
pub fn first_open(lesson: &Lesson, progress: &LessonProgress) -> usize {
    for (i, s) in lesson.steps.iter().enumerate() {
        if !progress.steps.contains(&s.number) {
            return i;
        }
    }
    for q in 0..lesson.quizzes.len() {
        let n = u32::try_from(q + 1).unwrap_or(u32::MAX);
        if !progress.quizzes.contains(&n) {
            return lesson.steps.len() + q;
        }
    }
    lesson.item_count()
}
