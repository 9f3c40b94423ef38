//! Lesson progress: which steps and quizzes a learner has done. Persistence sits behind
//! [`ProgressStore`]: tests and scripts use [`MemoryStore`]; the terminal front end keeps
//! `progress.json` in the user's data directory (its `progress_file::FileStore`), a
//! browser build the page's local storage.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The progress file's own format version.
pub const PROGRESS_VERSION: u32 = 1;

/// Progress in one lesson.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonProgress {
    /// Step numbers (1-based) whose check passed.
    #[serde(default)]
    pub steps: BTreeSet<u32>,
    /// Quiz numbers (1-based) answered correctly.
    #[serde(default)]
    pub quizzes: BTreeSet<u32>,
    /// Of those, the ones answered correctly only at the second try (not counted as right
    /// in the lesson's score).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub second_try: BTreeSet<u32>,
    /// Quiz numbers answered wrong at least once (at the first try; a right second try
    /// also lands in `quizzes` and `second_try`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub wrong: BTreeSet<u32>,
    /// Quiz numbers whose answer the learner saw before answering right: `skip` showed it,
    /// or the learner ran a prediction's command (or a view or experiment showing what it
    /// shows) first. Kept however the learner comes back to the quiz (`back`, `lesson
    /// retry`, a resumed lesson): a right answer after it is at the second try.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub shown: BTreeSet<u32>,
    /// Step numbers the learner skipped without doing them (a resumed lesson starts after
    /// them; they come back once everything else is done).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub skipped_steps: BTreeSet<u32>,
    /// Quiz numbers skipped without an answer.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub skipped_quizzes: BTreeSet<u32>,
    /// The lesson's variant being played (see [`super::vary`]); resuming keeps it. 0, the
    /// lesson as written, is not written down.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub variant: u32,
    /// Every line the learner typed in the lesson since it started (a `lesson reset` keeps them), with
    /// the files those lines read: what `lesson submit` hands in and a grader replays
    /// (see [`super::grade`]). Saved with the progress at each step and lesson command.
    #[serde(default, skip_serializing_if = "Transcript::is_empty")]
    pub transcript: Transcript,
}

/// The lines typed in a lesson, in order, up to [`Transcript::MAX_LINES`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// The lines, each with the files it read.
    pub lines: Vec<TypedLine>,
    /// Lines typed after the cap was reached (not kept: the transcript can no longer be
    /// handed in; `lesson reset` starts a new one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

impl Transcript {
    /// The most lines a transcript keeps (a lesson takes a few hundred).
    pub(crate) const MAX_LINES: usize = 20_000;

    /// No line typed yet.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.dropped == 0
    }

    /// Keep one more line (or count it as dropped past the cap).
    pub fn push(&mut self, line: TypedLine) {
        if self.lines.len() < Self::MAX_LINES && self.dropped == 0 {
            self.lines.push(line);
        } else {
            self.dropped += 1;
        }
    }
}

/// One line as the learner typed it, and the contents of the files it read
/// (`cni conf load my.conflist`, `apply -f pod.yaml`), so a replay reads no disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypedLine {
    /// The line (a here-document's body included).
    pub line: String,
    /// File name → contents, of what the line read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
}

impl LessonProgress {
    /// Items done (steps plus quizzes).
    pub fn done(&self) -> usize {
        self.steps.len() + self.quizzes.len()
    }

    /// The quizzes a fresh start keeps as seen (`lesson reset`, another variant): those
    /// answered wrong, right only at the second try, or whose answer was seen.
    pub(crate) fn seen_quizzes(&self) -> BTreeSet<u32> {
        self.shown
            .iter()
            .chain(&self.wrong)
            .chain(&self.second_try)
            .copied()
            .collect()
    }

    /// Quizzes answered right at the first try.
    pub(crate) fn right_first_time(&self) -> usize {
        self.quizzes.difference(&self.second_try).count()
    }

    /// Only the steps and quizzes `lesson` has. Progress is saved by lesson id and item
    /// number, so a lesson that became shorter (chapter 3's, split in two: the first half
    /// kept the id and the numbers of its first steps) must not count numbers it no longer
    /// has; the next save drops them.
    pub fn within(mut self, lesson: &super::model::Lesson) -> Self {
        let has_step = |n: &u32| lesson.steps.iter().any(|s| s.number == *n);
        let has_quiz =
            |n: &u32| usize::try_from(*n).is_ok_and(|n| (1..=lesson.quizzes.len()).contains(&n));
        self.steps.retain(has_step);
        self.skipped_steps.retain(has_step);
        self.quizzes.retain(has_quiz);
        self.second_try.retain(has_quiz);
        self.wrong.retain(has_quiz);
        self.shown.retain(has_quiz);
        self.skipped_quizzes.retain(has_quiz);
        self
    }
}

/// Everything saved: progress by lesson id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// [`PROGRESS_VERSION`].
    pub version: u32,
    /// By lesson id.
    #[serde(default)]
    pub lessons: BTreeMap<String, LessonProgress>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            version: PROGRESS_VERSION,
            lessons: BTreeMap::new(),
        }
    }
}

impl Progress {
    /// Progress in a lesson (empty if none).
    pub fn of(&self, id: &str) -> LessonProgress {
        self.lessons.get(id).cloned().unwrap_or_default()
    }

    /// Parse the saved JSON; the error says what is wrong.
    pub fn from_json(text: &str) -> Result<Progress, String> {
        let p: Progress = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if p.version != PROGRESS_VERSION {
            return Err(format!(
                "progress format version {} is not {PROGRESS_VERSION}",
                p.version
            ));
        }
        Ok(p)
    }

    /// Apply one session's change to lesson `id` — its progress went from `before` to
    /// `after` — onto this progress, which may hold what other sessions saved meanwhile:
    /// the steps and quizzes it added are added, the ones it removed (a lesson started
    /// over) are removed, and everything else (other lessons, other sessions' items) is
    /// kept. With no other session this is just `lessons[id] = after`.
    pub fn apply_change(&mut self, id: &str, before: &LessonProgress, after: &LessonProgress) {
        let lp = self.lessons.entry(id.to_string()).or_default();
        for s in before.steps.difference(&after.steps) {
            lp.steps.remove(s);
        }
        for q in before.quizzes.difference(&after.quizzes) {
            lp.quizzes.remove(q);
        }
        lp.steps.extend(after.steps.iter().copied());
        lp.quizzes.extend(after.quizzes.iter().copied());
        let sets = [
            (&before.second_try, &after.second_try, &mut lp.second_try),
            (&before.wrong, &after.wrong, &mut lp.wrong),
            (&before.shown, &after.shown, &mut lp.shown),
            (
                &before.skipped_steps,
                &after.skipped_steps,
                &mut lp.skipped_steps,
            ),
            (
                &before.skipped_quizzes,
                &after.skipped_quizzes,
                &mut lp.skipped_quizzes,
            ),
        ];
        for (b, a, into) in sets {
            for x in b.difference(a) {
                into.remove(x);
            }
            into.extend(a.iter().copied());
        }
        // The transcript and the variant are this session's: the lines that made its
        // progress, and the lesson they were typed in.
        lp.transcript = after.transcript.clone();
        lp.variant = after.variant;
        // Done is done: an item another session finished is no longer skipped.
        let (steps, quizzes) = (lp.steps.clone(), lp.quizzes.clone());
        lp.skipped_steps.retain(|s| !steps.contains(s));
        lp.skipped_quizzes.retain(|q| !quizzes.contains(q));
    }

    /// The JSON saved.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string()) + "\n"
    }
}

/// Why progress could not be loaded or saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not valid progress; it is ignored (and replaced on the next save).
    #[error(
        "progress file {path} is damaged ({reason}); starting with no progress, it will be replaced when progress is next saved"
    )]
    Damaged {
        /// Where.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing failed.
    #[error("cannot {action} progress file {path}: {reason}")]
    Io {
        /// read or write.
        action: &'static str,
        /// Where.
        path: String,
        /// The OS error.
        reason: String,
    },
}

/// Where progress lives.
pub trait ProgressStore: Send {
    /// Load saved progress (no file yet is empty progress, not an error).
    fn load(&self) -> Result<Progress, StoreError>;
    /// Save progress.
    fn save(&mut self, progress: &Progress) -> Result<(), StoreError>;
    /// Where it is kept, for messages.
    fn location(&self) -> String;

    /// What a learner should know when a lesson starts, if anything: a store that keeps
    /// nothing past the session says so (a pipe-fed REPL showed `steps 1/20` and wrote
    /// nothing).
    fn notice(&self) -> Option<String> {
        None
    }

    /// Why progress lasts only as long as the session, when a front end that usually keeps
    /// it on disk keeps it in memory this time (said when a lesson is left).
    fn memory_only_because(&self) -> Option<&str> {
        None
    }

    /// Record that lesson `id`'s progress went from `before` to `after` and save, merged
    /// with whatever else the store holds now (see [`Progress::apply_change`]); returns the
    /// progress saved. A store another session may write too ([`FileStore`]) re-reads and
    /// merges under a lock; this default loads, applies and saves.
    fn record(
        &mut self,
        id: &str,
        before: &LessonProgress,
        after: &LessonProgress,
    ) -> Result<Progress, StoreError> {
        let mut p = self.load().unwrap_or_default();
        p.apply_change(id, before, after);
        self.save(&p)?;
        Ok(p)
    }
}

/// Progress kept in memory only (tests, and the library's default).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    /// What was saved last.
    pub saved: Option<Progress>,
    /// Why a front end that usually keeps progress on disk keeps it in memory this time,
    /// said when a lesson starts (`None`: nothing to say, as in tests).
    pub why: Option<String>,
}

impl MemoryStore {
    /// An empty store whose sessions are told why their progress is not kept.
    pub fn because(why: impl Into<String>) -> Self {
        MemoryStore {
            saved: None,
            why: Some(why.into()),
        }
    }
}

impl ProgressStore for MemoryStore {
    fn load(&self) -> Result<Progress, StoreError> {
        Ok(self.saved.clone().unwrap_or_default())
    }

    fn save(&mut self, progress: &Progress) -> Result<(), StoreError> {
        self.saved = Some(progress.clone());
        Ok(())
    }

    fn location(&self) -> String {
        "memory (not saved to disk)".to_string()
    }

    fn memory_only_because(&self) -> Option<&str> {
        self.why.as_deref()
    }

    fn notice(&self) -> Option<String> {
        self.why.as_ref().map(|why| {
            format!("Progress is kept in memory only and goes when this session ends: {why}.")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_version() {
        let mut p = Progress::default();
        p.lessons.entry("ch7".into()).or_default().steps.insert(2);
        assert_eq!(Progress::from_json(&p.to_json()), Ok(p));
        assert!(Progress::from_json(r#"{"version": 9, "lessons": {}}"#).is_err());
        assert!(Progress::from_json("{").is_err());
    }

    #[test]
    fn apply_change_keeps_other_sessions_items_and_drops_only_ours() {
        let lp = |steps: &[u32], quizzes: &[u32]| LessonProgress {
            steps: steps.iter().copied().collect(),
            quizzes: quizzes.iter().copied().collect(),
            ..LessonProgress::default()
        };
        // On disk: another session finished ch2 step 1 and ch7 steps 1, 3.
        let mut disk = Progress::default();
        disk.lessons.insert("ch2".into(), lp(&[1], &[]));
        disk.lessons.insert("ch7".into(), lp(&[1, 3], &[]));
        // We had ch7 step 1 and now finished step 2 and quiz 1.
        disk.apply_change("ch7", &lp(&[1], &[]), &lp(&[1, 2], &[1]));
        assert_eq!(disk.of("ch7"), lp(&[1, 2, 3], &[1]));
        assert_eq!(disk.of("ch2"), lp(&[1], &[]));
        // Starting ch7 over clears what we had, not what we never saw.
        disk.apply_change("ch7", &lp(&[1, 2], &[1]), &lp(&[], &[]));
        assert_eq!(disk.of("ch7"), lp(&[3], &[]));
    }
}
