//! The marker that names what belongs to a real-mode session, so that nothing the lab
//! made in the kernel outlives it: `<data dir>/real-cni/<pid>/session.json` holds the
//! session's process id, that process's start time (a reused pid is not mistaken for the
//! session) and every network namespace the session created. It is rewritten *before*
//! each namespace is created, so a crash at any point leaves a marker that covers it; the
//! next start of the lab removes what a dead session's marker names.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Every namespace real mode creates starts with this (`cnilab-<pid>-…`); nothing else is
/// ever deleted by the cleanup, whatever a marker says.
pub const PREFIX: &str = "cnilab-";

/// The marker file's name in the session directory.
pub const FILE: &str = "session.json";

/// What one session owns in the kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Marker {
    /// The session's process.
    pub pid: u32,
    /// Its start time (`/proc/PID/stat` field 22), to tell it from a later process with
    /// the same pid.
    pub start_time: u64,
    /// The network namespaces it created (or is about to create), in order.
    pub netns: Vec<String>,
}

impl Marker {
    /// Write it atomically into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::files::write_atomic(&dir.join(FILE), text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", dir.join(FILE).display()))
    }

    /// Read the marker of a session directory.
    pub fn read(dir: &Path) -> Option<Marker> {
        let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The namespace name prefix of this session (`cnilab-<pid>-`).
    pub fn prefix(pid: u32) -> String {
        format!("{PREFIX}{pid}-")
    }
}

/// The start time of a process (`/proc/PID/stat` field 22), if it runs.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 2 (comm) is in parentheses and may hold spaces: count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the session that wrote `m` still runs.
pub fn alive(m: &Marker) -> bool {
    match start_time(m.pid) {
        // A marker written without a start time: any process with that pid counts.
        Some(_) if m.start_time == 0 => true,
        Some(t) => t == m.start_time,
        None => false,
    }
}

/// The directory that holds every session's directory: `real-cni/` in the lab's data
/// directory (`directories::ProjectDirs`, so `XDG_DATA_HOME` moves it).
pub fn root_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("lab", "cni-csi-lab", "cni-csi-lab")
        .map(|d| d.data_dir().join("real-cni"))
}

/// The session directories under `root` with their pid (directory name) and marker.
pub fn sessions(root: &Path) -> Vec<(u32, PathBuf, Option<Marker>)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<(u32, PathBuf, Option<Marker>)> = entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let path = e.path();
            let marker = Marker::read(&path);
            Some((pid, path, marker))
        })
        .collect();
    out.sort_by_key(|(pid, _, _)| *pid);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_round_trips() {
        let pid = std::process::id();
        let m = Marker {
            pid,
            start_time: start_time(pid).expect("own stat"),
            netns: vec!["cnilab-1-n-node-1".into()],
        };
        assert!(alive(&m));
        let dead = Marker {
            start_time: m.start_time + 1,
            ..m.clone()
        };
        assert!(!alive(&dead));
        let dir = std::env::temp_dir().join(format!("cnilab-marker-test-{pid}"));
        m.write(&dir).unwrap();
        assert_eq!(Marker::read(&dir), Some(m));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
