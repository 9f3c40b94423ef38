//! localStorage: lesson progress (a `ProgressStore`), and the session (the progress it
//! started from and every line run since), so a reload brings both back.

use lab_engine::lesson::progress::{Progress, ProgressStore, StoreError};
use serde_json::json;
use std::collections::BTreeMap;

const PROGRESS_KEY: &str = "cni-csi-lab/progress";
const SESSION_KEY: &str = "cni-csi-lab/session";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn get(key: &str) -> Option<String> {
    storage()?.get_item(key).ok().flatten()
}

fn set(key: &str, value: &str) -> Result<(), String> {
    let s = storage().ok_or("this browser keeps no localStorage")?;
    s.set_item(key, value)
        .map_err(|_| "localStorage refused the write (full, or private browsing)".to_string())
}

/// Progress in localStorage.
#[derive(Debug, Default)]
pub(crate) struct LocalStore;

impl LocalStore {
    /// The progress saved now (none yet is empty progress).
    pub(crate) fn progress() -> Progress {
        get(PROGRESS_KEY)
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }
}

impl ProgressStore for LocalStore {
    fn load(&self) -> Result<Progress, StoreError> {
        Ok(LocalStore::progress())
    }

    fn save(&mut self, progress: &Progress) -> Result<(), StoreError> {
        let text = serde_json::to_string(progress).unwrap_or_default();
        set(PROGRESS_KEY, &text).map_err(|reason| StoreError::Io {
            action: "write",
            path: self.location(),
            reason,
        })
    }

    fn location(&self) -> String {
        "this browser's localStorage".to_string()
    }
}

/// The session kept across reloads: the progress it started from and the lines run.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// Progress when the session started (a replay starts from it, so it runs as it ran).
    pub(crate) progress: Progress,
    /// Every line run, in order.
    pub(crate) lines: Vec<String>,
    /// The files uploaded, by name (the lines that read them read them again).
    pub(crate) files: BTreeMap<String, String>,
}

impl Session {
    /// The saved session, or a new one starting from the saved progress.
    pub(crate) fn load() -> Session {
        let saved =
            get(SESSION_KEY).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        match saved {
            Some(v) => Session {
                progress: serde_json::from_value(v["progress"].clone()).unwrap_or_default(),
                lines: serde_json::from_value(v["lines"].clone()).unwrap_or_default(),
                files: serde_json::from_value(v["files"].clone()).unwrap_or_default(),
            },
            None => Session {
                progress: LocalStore::progress(),
                lines: Vec::new(),
                files: BTreeMap::new(),
            },
        }
    }

    /// Write it to localStorage.
    pub(crate) fn save(&self) -> Result<(), String> {
        let v = json!({"progress": self.progress, "lines": self.lines, "files": self.files});
        set(SESSION_KEY, &v.to_string())
    }
}
