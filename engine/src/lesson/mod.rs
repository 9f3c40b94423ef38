//! Guided lessons: Markdown files under `lessons/` (one per handbook chapter) that the lab
//! can teach interactively, play back as a demo, and verify headlessly.
//!
//! Reading order: [`model`] (what a lesson is), [`parse`] (the file format), [`check`] (the
//! check language), [`facts`] (answers named by what they are), [`session`] (the learner's
//! place), [`progress`] (saved progress), [`play`] (playback and `lesson verify`), [`lint`]
//! (the author's linter), [`desk`] (the lab and the lessons together, what the front ends
//! run lines through), [`commands`] (the `lesson …`, `hint`, `skip`, `back` commands the
//! desk runs), [`vary`] (a variant per student).
//!
//! The lessons sit above the engine: a [`Desk`] owns the `Lab` and the [`Lessons`], and every
//! front end runs lines through `Desk::execute`, so a learner's line goes through the lab and
//! then through the current step's check, whichever front end typed it. The engine never
//! sees a lesson.

pub mod catalog;
pub mod check;
pub mod commands;
pub mod csi_stepping;
pub mod decoy;
pub mod desk;
pub mod facts;
pub mod focus;
pub mod grade;
pub mod guard;
pub mod lint;
pub mod model;
pub mod parse;
pub mod play;
pub mod progress;
pub mod saw;
pub mod session;
pub mod stepping;
pub mod vary;

pub use catalog::{Catalog, Parsed};
pub use desk::Desk;
pub use model::{Lesson, Quiz, QuizKind, RefCommand, Step};
pub use parse::LessonError;
pub use progress::{LessonProgress, MemoryStore, Progress, ProgressStore, StoreError};
pub use session::{Item, LessonSession};

use crate::command::Command;
use std::sync::Arc;

/// The lesson format this lab reads; a file with a newer `format_version` is refused with
/// an "upgrade the lab" message.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// Whether a command belongs to the lesson player (it is not fed to a step's check). `step`
/// runs in the desk too, but moves through a stepped trace: a step's check reads the hop it
/// showed.
pub fn is_control(cmd: &Command) -> bool {
    crate::engine::is_front_end_command(cmd) && !matches!(cmd, Command::Step { .. })
}

/// The lessons beside a lab: which lessons exist, where progress is kept, and the lesson in
/// progress.
pub struct Lessons {
    catalog: Catalog,
    parsed: Option<Arc<Parsed>>,
    store: Box<dyn ProgressStore>,
    progress: Option<Progress>,
    warning: Option<String>,
    /// How many times progress was saved (a line that saved while it ran is saved again
    /// once it is in the transcript: see `Desk::run`).
    saves: u64,
    /// The interactive lesson in progress, if any.
    pub session: Option<LessonSession>,
}

impl Default for Lessons {
    fn default() -> Self {
        Lessons {
            catalog: Catalog::Embedded,
            parsed: None,
            store: Box::new(MemoryStore::default()),
            progress: None,
            warning: None,
            saves: 0,
            session: None,
        }
    }
}

impl std::fmt::Debug for Lessons {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lessons")
            .field("catalog", &self.catalog)
            .field("store", &self.store.location())
            .field(
                "session",
                &self.session.as_ref().map(|s| (&s.lesson.id, s.at)),
            )
            .finish()
    }
}

impl Lessons {
    /// Keep progress in this store from now on (the binary passes its file store in the
    /// user's data directory; the library default keeps it in memory).
    pub fn set_store(&mut self, store: Box<dyn ProgressStore>) {
        self.store = store;
        self.progress = None;
    }

    /// What the store says when a lesson starts (see [`ProgressStore::notice`]).
    pub(crate) fn store_notice(&self) -> Option<String> {
        self.store.notice()
    }

    /// Where a left lesson's progress is kept, when the store keeps it only in memory
    /// (a piped REPL): `lesson start ID` resumes it in this session only.
    pub(crate) fn kept_in_memory(&self, id: &str) -> Option<String> {
        self.store.memory_only_because().map(|why| {
            format!(
                "Left lesson {id}; progress kept in memory only: `lesson start {id}` resumes it in this session, not in a new one; {why}."
            )
        })
    }

    /// Read lessons from a directory instead of the embedded ones (`--lessons DIR`, for
    /// authors). Files are re-read by every `lesson list|start|play|verify|lint`. Returns
    /// how many lessons parsed; an unreadable directory is an error and changes nothing.
    pub fn use_dir(&mut self, dir: Arc<dyn catalog::LessonDir>) -> Result<usize, String> {
        dir.read()?;
        self.catalog = Catalog::Dir(dir);
        self.parsed = None;
        Ok(self.parsed().lessons.len())
    }

    /// The catalog in use.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The lessons (parsed once for the embedded catalog, every time for a directory).
    pub fn parsed(&mut self) -> Arc<Parsed> {
        if let (Catalog::Embedded, Some(p)) = (&self.catalog, &self.parsed) {
            return Arc::clone(p);
        }
        let p = Arc::new(self.catalog.load());
        self.parsed = Some(Arc::clone(&p));
        p
    }

    /// A lesson by id, or an error naming the lessons there are.
    pub fn find(&mut self, id: &str) -> Result<Arc<Lesson>, String> {
        let parsed = self.parsed();
        parsed.find(id).ok_or_else(|| {
            let ids = parsed.ids();
            if ids.is_empty() {
                format!("no lesson {id:?}: there are no lessons")
            } else {
                format!("no lesson {id:?}; lessons are: {}", ids.join(", "))
            }
        })
    }

    /// Variant `variant` of a lesson by id (see [`vary`]), or an error naming the lessons
    /// there are or the variants the lesson has.
    pub fn find_variant(&mut self, id: &str, variant: u32) -> Result<Arc<Lesson>, String> {
        let lesson = self.find(id)?;
        self.parsed().variant(&lesson, variant)
    }

    /// Saved progress (loaded on first use; a damaged file is reported once and ignored).
    pub fn progress(&mut self) -> &Progress {
        if self.progress.is_none() {
            let p = match self.store.load() {
                Ok(p) => p,
                Err(e) => {
                    self.warning = Some(e.to_string());
                    Progress::default()
                }
            };
            self.progress = Some(p);
        }
        self.progress.get_or_insert_with(Progress::default)
    }

    /// Record a lesson's progress and save it, merged with what other sessions saved
    /// meanwhile (see [`ProgressStore::record`]); a failed save is reported once.
    pub fn save(&mut self, id: &str, lp: &LessonProgress) {
        self.saves += 1;
        let before = self.progress().of(id);
        match self.store.record(id, &before, lp) {
            // What the store holds now: ours merged with other sessions' progress.
            Ok(merged) => self.progress = Some(merged),
            Err(e) => {
                let p = self.progress.get_or_insert_with(Progress::default);
                p.lessons.insert(id.to_string(), lp.clone());
                self.warning = Some(e.to_string());
            }
        }
    }

    /// How many times progress was saved so far.
    pub(crate) fn saves(&self) -> u64 {
        self.saves
    }

    /// Save the lesson in progress, if any.
    pub(crate) fn save_session(&mut self) {
        if let Some(s) = self.session.take() {
            self.save(&s.lesson.id, &s.progress);
            self.session = Some(s);
        }
    }

    /// A problem with the progress file not yet shown to the learner.
    pub(crate) fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }
}
