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
/// `target`: into a temporary file beside it (see [`crate::util::fs::temp_path`]), flushed
/// to disk, then renamed over `target`. Creates the directory.
pub fn save_atomically(
    target: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = crate::util::fs::temp_path(target);
    let written = write(&tmp).and_then(|()| std::fs::File::open(&tmp)?.sync_all());
    match written.and_then(|()| std::fs::rename(&tmp, target)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
