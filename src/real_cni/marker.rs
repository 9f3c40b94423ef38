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

/// What `/proc/PID/stat` says of a process: its state (field 3: `R`, `S`, `D`, `Z`, …)
/// and its start time (field 22, in clock ticks since boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The state letter.
    pub state: char,
    /// The start time.
    pub start_time: u64,
}

impl Stat {
    /// Whether the process has ended: a zombie (`Z`, killed or exited but not yet reaped
    /// by its parent) or dead (`X`). Its pid is still taken, but it runs nothing and
    /// will create nothing again.
    pub fn ended(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// `/proc/PID/stat` of a process, if there is one with that pid (a zombie included).
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Read the state and start time out of a `/proc/PID/stat` line.
fn parse_stat(stat: &str) -> Option<Stat> {
    // Field 2 (comm) is in parentheses and may hold spaces and parentheses: count from
    // the last ')'. After it: field 3 (state), then field 22 is the 20th.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let start_time = rest.nth(18)?.parse().ok()?;
    Some(Stat { state, start_time })
}

/// The start time of a process (`/proc/PID/stat` field 22), if there is one with that pid.
pub fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|s| s.start_time)
}

/// Whether the session that wrote `m` still runs: a process with its pid exists, has not
/// ended (a zombie, killed but not yet reaped by its parent, is dead: it will never clean
/// up), and started when the marker says (a reused pid is another process).
pub fn alive(m: &Marker) -> bool {
    match stat(m.pid) {
        Some(s) if s.ended() => false,
        // A marker written without a start time: any process with that pid counts.
        Some(_) if m.start_time == 0 => true,
        Some(s) => s.start_time == m.start_time,
        None => false,
    }
}

/// Whether a process with this pid runs (exists and has not ended).
pub fn running(pid: u32) -> bool {
    stat(pid).is_some_and(|s| !s.ended())
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
        assert!(running(pid));
        let dir = std::env::temp_dir().join(format!("cnilab-marker-test-{pid}"));
        m.write(&dir).unwrap();
        assert_eq!(Marker::read(&dir), Some(m));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stat_lines_parse_with_any_command_name() {
        let line = "4242 (a) b (c)) Z 1 4242 4242 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'Z',
                start_time: 987654
            })
        );
        assert_eq!(parse_stat("4242 (x) S 1"), None);
    }

    /// Issue 38: a session killed but not yet reaped by its parent (state Z) was taken for
    /// a live one, so its namespaces stayed until a later start. A zombie is dead.
    #[test]
    fn a_killed_but_unreaped_process_is_not_alive() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let m = Marker {
            pid,
            start_time: start_time(pid).expect("its stat"),
            netns: Vec::new(),
        };
        assert!(alive(&m) && running(pid));
        child.kill().expect("SIGKILL");
        // Not waited for: it stays a zombie until `wait`. Its stat turns Z shortly after
        // the signal is delivered.
        let start = std::time::Instant::now();
        while stat(pid).is_some_and(|s| s.state != 'Z') {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "never Z"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(
            stat(pid).map(|s| s.state),
            Some('Z'),
            "a zombie is still listed"
        );
        assert!(!alive(&m), "a zombie is not a live session");
        assert!(
            !alive(&Marker { start_time: 0, ..m }),
            "not even without a start time"
        );
        assert!(!running(pid));
        let _ = child.wait();
    }
}
