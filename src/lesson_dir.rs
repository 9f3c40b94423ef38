//! A lessons directory on disk (`--lessons DIR`, for authors): the engine's
//! [`LessonDir`], read afresh each time the catalog loads.

use lab_engine::lesson::catalog::{DirFiles, LessonDir};
use lab_engine::lesson::parse::LessonError;
use std::path::{Path, PathBuf};

/// A directory of lesson files (`*.md`).
#[derive(Debug, Clone)]
pub struct Dir(pub PathBuf);

impl LessonDir for Dir {
    fn name(&self) -> String {
        self.0.display().to_string()
    }

    fn read(&self) -> Result<DirFiles, String> {
        read_dir_reporting(&self.0)
    }
}

/// The `.md` files of a directory, sorted by name, that could be read (see
/// [`read_dir_reporting`] for the entries that could not). An unreadable directory is an
/// error.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, String> {
    read_dir_reporting(dir).map(|(files, _)| files)
}

/// The `.md` entries of a directory, sorted by name: the files read (name, text), and an
/// error for each entry that could not be read, naming it and why — a FIFO, socket or
/// device ("not a regular file (a FIFO)"), a directory named `x.md`, a symbolic link that
/// loops or dangles, a file over the size cap or not UTF-8, or one the user may not read.
/// Such entries used to be skipped silently (or end the whole catalog); `lesson lint`
/// reports them. An unreadable directory is an error.
pub fn read_dir_reporting(dir: &Path) -> Result<DirFiles, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read lessons directory {}: {e}", dir.display()))?;
    let mut errors = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(e) => {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "md") {
                    paths.push(p);
                }
            }
            Err(e) => errors.push(LessonError::new(
                &dir.display().to_string(),
                0,
                format!("cannot read an entry of the lessons directory: {e}"),
            )),
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let name = p.display().to_string();
        match crate::files::read_capped(&p, "a lesson file", crate::files::CONFIG_CAP) {
            Ok(text) => files.push((name, text)),
            Err(e) => errors.push(LessonError::new(
                &name,
                0,
                format!("cannot read this lesson file: {}", entry_problem(&p, &e)),
            )),
        }
    }
    Ok((files, errors))
}

/// Why an entry could not be read, in words: the read error, with what the entry is when
/// that explains it (a symbolic link that loops or points nowhere).
fn entry_problem(p: &Path, e: &std::io::Error) -> String {
    let is_link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        if e.raw_os_error() == Some(libc_eloop()) {
            return format!("a symbolic link that loops ({e})");
        }
        if e.kind() == std::io::ErrorKind::NotFound {
            return format!("a symbolic link to nothing ({e})");
        }
    }
    if e.kind() == std::io::ErrorKind::InvalidData {
        return "not UTF-8 text".to_string();
    }
    e.to_string()
}

/// `ELOOP`, the error of opening a symbolic link that loops.
fn libc_eloop() -> i32 {
    #[cfg(unix)]
    {
        libc::ELOOP
    }
    #[cfg(not(unix))]
    {
        -1
    }
}
