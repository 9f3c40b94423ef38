//! Where the REPL keeps its history, and saving it so that a crash mid-write cannot lose
//! it: the history is written to a temporary file in the same directory and renamed over
//! the old one (a rename within a directory is atomic on POSIX file systems).

use std::path::{Path, PathBuf};

/// Environment variable that overrides the history file (empty: keep no history).
pub const HISTORY_ENV: &str = "CNI_CSI_LAB_HISTORY";

/// The history file: `$CNI_CSI_LAB_HISTORY`, else `history.txt` in the user's data
/// directory (`directories::ProjectDirs("lab", "cni-csi-lab", "cni-csi-lab")`, e.g.
/// `~/.local/share/cni-csi-lab/history.txt` on Linux). `None`: no history.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(HISTORY_ENV) {
        return if p.is_empty() {
            None
        } else {
            Some(PathBuf::from(p))
        };
    }
    directories::ProjectDirs::from("lab", "cni-csi-lab", "cni-csi-lab")
        .map(|d| d.data_dir().join("history.txt"))
}

/// Write the history with `write` (which saves to the path it is given) atomically to
/// `target`: into a temporary file beside it (see [`crate::files::temp_path`]), flushed
/// to disk, then renamed over `target`. Creates the directory.
pub fn save_atomically(
    target: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = crate::files::temp_path(target);
    let written = write(&tmp).and_then(|()| std::fs::File::open(&tmp)?.sync_all());
    match written.and_then(|()| std::fs::rename(&tmp, target)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Save one new history entry to `target`, a file other sessions may be saving to at the
/// same time: under the lock beside it (see [`crate::files::with_lock`]), re-read the
/// file into a fresh history with `config`'s limits (size cap, duplicates, leading space),
/// add `line` after what other sessions saved, and write it atomically
/// ([`save_atomically`]). Each session thus keeps the others' lines: saving this session's
/// whole in-memory history, as before, dropped every line another session had saved since
/// this one started. Nothing is written when the history ignores the line (a repeat of the
/// last entry, a line starting with a space).
pub fn append_entry(target: &Path, line: &str, config: &rustyline::Config) -> std::io::Result<()> {
    use rustyline::history::{FileHistory, History};
    if line.len() > lab_engine::command::MAX_LINE {
        return Ok(());
    }
    crate::files::with_lock(target, || {
        let mut merged = FileHistory::with_config(config);
        match merged.load(target) {
            Ok(()) => {}
            Err(rustyline::error::ReadlineError::Io(e))
                if e.kind() == std::io::ErrorKind::NotFound => {}
            // An unreadable or damaged history is replaced, as a fresh session would.
            Err(_) => merged = FileHistory::with_config(config),
        }
        if !merged.add(line).map_err(std::io::Error::other)? {
            return Ok(());
        }
        save_atomically(target, |tmp| {
            merged.save(tmp).map_err(std::io::Error::other)
        })
    })
}

/// Drop the entries longer than the longest command (`MAX_LINE`) from a loaded history:
/// such a line is refused when typed and never saved now, but an older lab saved them
/// (after a 1 MB line entered the history each Down key took ~4.7 ms).
pub fn drop_long_entries(h: &mut rustyline::history::DefaultHistory) {
    use rustyline::history::History;
    let max = lab_engine::command::MAX_LINE;
    if h.iter().all(|e| e.len() <= max) {
        return;
    }
    let kept: Vec<String> = h.iter().filter(|e| e.len() <= max).cloned().collect();
    let _ = h.clear();
    for e in kept {
        let _ = h.add(&e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: two sessions saving history to one file keep each other's lines (they
    /// used to save their whole in-memory history, so the last writer won), in the order
    /// they were entered, capped at the history size.
    #[test]
    fn two_sessions_appending_history_keep_each_others_lines() {
        use rustyline::history::{FileHistory, History};
        let dir = std::env::temp_dir().join(format!("lab-hist-two-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let target = dir.join("history.txt");
        let config = rustyline::Config::builder()
            .history_ignore_dups(true)
            .unwrap()
            .history_ignore_space(true)
            .max_history_size(5)
            .unwrap()
            .build();
        for line in ["a1", "b1", "a2", "b2", "b2", " secret"] {
            append_entry(&target, line, &config).unwrap();
        }
        let read = |path: &Path| {
            let mut h = FileHistory::with_config(&config);
            h.load(path).unwrap();
            (0..h.len())
                .map(|i| {
                    h.get(i, rustyline::history::SearchDirection::Forward)
                        .unwrap()
                        .unwrap()
                        .entry
                        .into_owned()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(read(&target), ["a1", "b1", "a2", "b2"]);
        for line in ["a3", "b3", "a4"] {
            append_entry(&target, line, &config).unwrap();
        }
        assert_eq!(read(&target), ["a2", "b2", "a3", "b3", "a4"], "capped at 5");
        assert!(dir.join("history.txt.lock").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_keeps_the_old_history() {
        let dir = std::env::temp_dir().join(format!("lab-hist-{}", std::process::id()));
        let target = dir.join("sub/history.txt");
        save_atomically(&target, |p| std::fs::write(p, "one\n")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n");
        let err = save_atomically(&target, |p| {
            std::fs::write(p, "half")?;
            Err(std::io::Error::other("crash"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n");
        let leftovers = std::fs::read_dir(dir.join("sub")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
