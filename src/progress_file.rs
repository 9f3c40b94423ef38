//! Lesson progress in a JSON file (`progress.json` in the user's data directory, or
//! `$CNI_CSI_LAB_PROGRESS`): the terminal front ends' [`ProgressStore`]. Written atomically
//! (temp file + rename) under a lock, so two sessions at once merge what each finished; a
//! damaged file is reported, not fatal.

use lab_engine::lesson::{LessonProgress, Progress, ProgressStore, StoreError};
use std::path::{Path, PathBuf};

/// Progress in a JSON file, written atomically.
#[derive(Debug, Clone)]
pub struct FileStore {
    /// The file (`…/progress.json`).
    pub path: PathBuf,
}

impl FileStore {
    /// A store at this file.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore { path: path.into() }
    }

    /// `progress.json` in the user's data directory
    /// (`directories::ProjectDirs::from("lab", "cni-csi-lab", "cni-csi-lab")`), or `None`
    /// when the system has no home directory.
    pub fn user_default() -> Option<Self> {
        directories::ProjectDirs::from("lab", "cni-csi-lab", "cni-csi-lab")
            .map(|d| FileStore::new(d.data_dir().join("progress.json")))
    }

    fn io(&self, action: &'static str, e: &std::io::Error) -> StoreError {
        StoreError::Io {
            action,
            path: self.path.display().to_string(),
            reason: e.to_string(),
        }
    }
}

/// Write `text` to `path` atomically (see [`crate::files::write_atomic`]).
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    crate::files::write_atomic(path, text.as_bytes())
}

impl ProgressStore for FileStore {
    fn load(&self) -> Result<Progress, StoreError> {
        let read =
            crate::files::read_capped(&self.path, "a progress file", crate::files::CONFIG_CAP);
        let text = match read {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Progress::default()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(StoreError::Damaged {
                    path: self.path.display().to_string(),
                    reason: "not UTF-8".into(),
                });
            }
            Err(e) => return Err(self.io("read", &e)),
        };
        Progress::from_json(&text).map_err(|reason| StoreError::Damaged {
            path: self.path.display().to_string(),
            reason,
        })
    }

    fn save(&mut self, progress: &Progress) -> Result<(), StoreError> {
        write_atomic(&self.path, &progress.to_json()).map_err(|e| self.io("write", &e))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Under the lock beside the file (see [`crate::files::with_lock`]): re-read it (a
    /// missing or damaged file counts as no progress, as on load), apply this session's
    /// change, write atomically. Another session's progress saved since ours was loaded
    /// stays.
    fn record(
        &mut self,
        id: &str,
        before: &LessonProgress,
        after: &LessonProgress,
    ) -> Result<Progress, StoreError> {
        let mut merged = None;
        crate::files::with_lock(&self.path, || {
            let mut p = self.load().unwrap_or_default();
            p.apply_change(id, before, after);
            write_atomic(&self.path, &p.to_json())?;
            merged = Some(p);
            Ok(())
        })
        .map_err(|e| self.io("write", &e))?;
        Ok(merged.unwrap_or_default())
    }
}

/// Environment variable naming the progress file every front end uses, scripts included
/// (empty: keep progress in memory). Unset: the interactive front ends keep it in the
/// user's data directory ([`FileStore::user_default`]) and scripts in memory.
pub const PROGRESS_ENV: &str = "CNI_CSI_LAB_PROGRESS";

/// The store `$CNI_CSI_LAB_PROGRESS` asks for: `None` when it is unset, `Some(None)` when it
/// is empty (memory), `Some(Some(store))` for a file.
pub fn store_from_env() -> Option<Option<FileStore>> {
    let v = std::env::var_os(PROGRESS_ENV)?;
    Some((!v.is_empty()).then(|| FileStore::new(PathBuf::from(v))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_file_stores_on_one_file_keep_both_sessions_progress() {
        let dir = std::env::temp_dir().join(format!("lab-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("progress.json");
        let mut a = FileStore::new(&path);
        let mut b = FileStore::new(&path);
        let one = LessonProgress {
            steps: [1].into(),
            ..LessonProgress::default()
        };
        let none = LessonProgress::default();
        a.record("ch2", &none, &one).unwrap();
        let seen = b.record("ch7", &none, &one).unwrap();
        assert_eq!(seen.of("ch2"), one, "b's save kept a's progress");
        let p = a.load().unwrap();
        assert_eq!((p.of("ch2"), p.of("ch7")), (one.clone(), one));
        assert!(dir.join("progress.json.lock").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
