//! Lesson progress in a JSON file (`progress.json` in the user's data directory, or
//! `$CNI_CSI_LAB_PROGRESS`): the terminal front ends' [`ProgressStore`]. Written atomically
//! (temp file + rename) under a lock, so two sessions at once merge what each finished; a
//! damaged file is reported, not fatal.
//!
//! Nothing the lab cannot read is lost: a file written by a newer cni-csi-lab (a `version`
//! above [`PROGRESS_VERSION`]) is never written over (as `load` refuses a newer save: the
//! session keeps its progress in memory and says to upgrade), and a damaged one (truncated,
//! not JSON, not UTF-8, over the size cap) is kept beside it as `progress.json.bak` (or
//! `progress.json.2.bak`, … when that name is taken) before a new one replaces it.

use lab_engine::lesson::progress::PROGRESS_VERSION;
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

/// What the progress file holds, as this lab reads it.
#[derive(Debug)]
enum OnDisk {
    /// No file yet.
    Missing,
    /// Progress in this lab's format.
    Progress(Progress),
    /// A file a newer cni-csi-lab wrote: its format version.
    Newer(u64),
    /// Something this lab cannot read as progress (truncated, not JSON, not UTF-8, over the
    /// size cap): why.
    Damaged(String),
    /// A file that could not be read (not a regular file, no permission, an I/O error).
    Unreadable(std::io::Error),
}

/// At most this many backups of damaged progress files are kept beside it
/// (`progress.json.bak`, `progress.json.2.bak` … `progress.json.99.bak`); with all taken,
/// the damaged file is not replaced.
const MAX_BACKUPS: u32 = 99;

impl FileStore {
    /// Read the file without judging it.
    fn read(&self) -> OnDisk {
        use std::io::ErrorKind;
        let read =
            crate::files::read_capped(&self.path, "a progress file", crate::files::CONFIG_CAP);
        let text = match read {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return OnDisk::Missing,
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                return OnDisk::Damaged("not UTF-8".into());
            }
            // Over the size cap (the only error of kind `Other` the read makes).
            Err(e) if e.kind() == ErrorKind::Other => return OnDisk::Damaged(e.to_string()),
            Err(e) => return OnDisk::Unreadable(e),
        };
        // The version first: a newer format may not parse as this one at all.
        let version = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("version").and_then(serde_json::Value::as_u64));
        match version {
            Some(v) if v > u64::from(PROGRESS_VERSION) => OnDisk::Newer(v),
            _ => match Progress::from_json(&text) {
                Ok(p) => OnDisk::Progress(p),
                Err(reason) => OnDisk::Damaged(reason),
            },
        }
    }

    /// The refusal of a file a newer cni-csi-lab wrote (`action`: read or write).
    fn newer(&self, action: &'static str, version: u64) -> StoreError {
        StoreError::Io {
            action,
            path: self.path.display().to_string(),
            reason: format!(
                "it was written by a newer cni-csi-lab (progress format {version}; this one knows {PROGRESS_VERSION}): upgrade cni-csi-lab; the file is left as it is, and this session's progress is kept in memory only"
            ),
        }
    }

    /// The first free backup name beside the file: `progress.json.bak`, then
    /// `progress.json.2.bak` … (`None`: [`MAX_BACKUPS`] are there already).
    pub fn backup_path(&self) -> Option<PathBuf> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "progress.json".into());
        (1..=MAX_BACKUPS)
            .map(|n| match n {
                1 => self.path.with_file_name(format!("{name}.bak")),
                n => self.path.with_file_name(format!("{name}.{n}.bak")),
            })
            .find(|p| std::fs::symlink_metadata(p).is_err())
    }

    /// Keep the file as it is under [`FileStore::backup_path`] (a hard link, so even a
    /// file this user cannot read is kept; a copy where links are not supported).
    fn back_up(&self) -> std::io::Result<PathBuf> {
        let bak = self.backup_path().ok_or_else(|| {
            std::io::Error::other(format!(
                "{MAX_BACKUPS} backups of damaged progress files are there already; move them away"
            ))
        })?;
        std::fs::hard_link(&self.path, &bak)
            .or_else(|_| std::fs::copy(&self.path, &bak).map(|_| ()))
            .map_err(|e| {
                std::io::Error::other(format!(
                    "cannot keep the damaged file as {}: {e}; it is left as it is",
                    bak.display()
                ))
            })?;
        Ok(bak)
    }

    /// Under the lock beside the file (see [`crate::files::with_lock`]): re-read it, make
    /// the new progress from what it holds (`change`), and write it atomically. A file a
    /// newer cni-csi-lab wrote is refused and left; a damaged one is backed up first.
    fn replace(&self, change: impl FnOnce(Progress) -> Progress) -> Result<Progress, StoreError> {
        let mut outcome = None;
        crate::files::with_lock(&self.path, || {
            let before = match self.read() {
                OnDisk::Missing => Progress::default(),
                OnDisk::Progress(p) => p,
                OnDisk::Newer(v) => {
                    outcome = Some(Err(self.newer("write", v)));
                    return Ok(());
                }
                OnDisk::Damaged(_) | OnDisk::Unreadable(_) => {
                    self.back_up()?;
                    Progress::default()
                }
            };
            let after = change(before);
            write_atomic(&self.path, &after.to_json())?;
            outcome = Some(Ok(after));
            Ok(())
        })
        .map_err(|e| self.io("write", &e))?;
        outcome.unwrap_or_else(|| Ok(Progress::default()))
    }
}

impl ProgressStore for FileStore {
    fn load(&self) -> Result<Progress, StoreError> {
        match self.read() {
            OnDisk::Missing => Ok(Progress::default()),
            OnDisk::Progress(p) => Ok(p),
            OnDisk::Newer(v) => Err(self.newer("read", v)),
            OnDisk::Damaged(reason) => Err(StoreError::Damaged {
                path: self.path.display().to_string(),
                reason: format!("{reason}; it is kept as a .bak file beside it when replaced"),
            }),
            OnDisk::Unreadable(e) => Err(self.io("read", &e)),
        }
    }

    /// Write `progress` over the file (see [`FileStore::replace`]: never over a newer
    /// format, a damaged file backed up first).
    fn save(&mut self, progress: &Progress) -> Result<(), StoreError> {
        self.replace(|_| progress.clone()).map(|_| ())
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Under the lock beside the file: re-read it (a missing file counts as no progress, a
    /// damaged one too once it is backed up), apply this session's change, write
    /// atomically. Another session's progress saved since ours was loaded stays; a file a
    /// newer cni-csi-lab wrote is left as it is and the error says to upgrade.
    fn record(
        &mut self,
        id: &str,
        before: &LessonProgress,
        after: &LessonProgress,
    ) -> Result<Progress, StoreError> {
        self.replace(|mut p| {
            p.apply_change(id, before, after);
            p
        })
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

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lab-progress-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn one_step() -> LessonProgress {
        LessonProgress {
            steps: [1].into(),
            ..LessonProgress::default()
        }
    }

    /// Issue 38: a progress file a newer cni-csi-lab wrote was called damaged and written
    /// over. It is refused on load and on save, with the words `load` uses for a newer
    /// save, and left byte for byte.
    #[test]
    fn a_newer_format_is_refused_and_never_written_over() {
        let dir = scratch("newer");
        let path = dir.join("progress.json");
        let newer = r#"{"version": 2, "lessons": {"ch2": {"steps": [1, 2]}}, "badges": []}"#;
        std::fs::write(&path, newer).unwrap();
        let mut store = FileStore::new(&path);
        let e = store.load().unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot read progress file {}: it was written by a newer cni-csi-lab (progress format 2; this one knows 1): upgrade cni-csi-lab", path.display())),
            "{e}"
        );
        assert!(!e.contains("damaged"), "{e}");
        let none = LessonProgress::default();
        let e = store
            .record("ch7", &none, &one_step())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot write progress file")
                && e.contains("newer cni-csi-lab")
                && e.contains("left as it is"),
            "{e}"
        );
        let e = store.save(&Progress::default()).unwrap_err().to_string();
        assert!(e.contains("newer cni-csi-lab"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
        assert!(store.backup_path() == Some(dir.join("progress.json.bak")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue 38: a truncated (or otherwise damaged) file was replaced without a backup.
    /// Each replaced file is kept under the first free `.bak` name, byte for byte.
    #[test]
    fn a_damaged_file_is_kept_as_a_backup_before_it_is_replaced() {
        let dir = scratch("bak");
        let path = dir.join("progress.json");
        let mut store = FileStore::new(&path);
        let none = LessonProgress::default();
        let truncated = "{\n  \"version\": 1,\n  \"lessons\": {\n    \"ch2\": {\"steps\": [1,";
        std::fs::write(&path, truncated).unwrap();
        let e = store.load().unwrap_err().to_string();
        assert!(e.contains("is damaged") && e.contains(".bak"), "{e}");
        let saved = store.record("ch7", &none, &one_step()).unwrap();
        assert_eq!(saved.of("ch7"), one_step());
        assert_eq!(
            std::fs::read_to_string(dir.join("progress.json.bak")).unwrap(),
            truncated
        );
        assert_eq!(store.load().unwrap(), saved);
        // A second damaged file does not overwrite the first backup.
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        store.save(&Progress::default()).unwrap();
        assert_eq!(
            std::fs::read(dir.join("progress.json.2.bak")).unwrap(),
            [0xff, 0xfe]
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("progress.json.bak")).unwrap(),
            truncated
        );
        // A valid file is merged, not backed up.
        store.record("ch2", &none, &one_step()).unwrap();
        assert!(!dir.join("progress.json.3.bak").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
