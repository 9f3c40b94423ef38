//! Where lessons come from: the files of `lessons/` embedded in the binary, or (for authors)
//! a directory given at run time (`--lessons DIR`), read fresh so edits show at once.

use super::model::Lesson;
use super::parse::{LessonError, parse};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every file of `lessons/`, embedded. A test proves this list matches the directory.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "lessons/ch2-core-ideas.md",
        include_str!("../../lessons/ch2-core-ideas.md"),
    ),
    (
        "lessons/ch3-architecture.md",
        include_str!("../../lessons/ch3-architecture.md"),
    ),
    (
        "lessons/ch4-runtime-workflow.md",
        include_str!("../../lessons/ch4-runtime-workflow.md"),
    ),
    (
        "lessons/ch5-core-modules.md",
        include_str!("../../lessons/ch5-core-modules.md"),
    ),
    (
        "lessons/ch6-source-walkthrough.md",
        include_str!("../../lessons/ch6-source-walkthrough.md"),
    ),
    (
        "lessons/ch7-hands-on.md",
        include_str!("../../lessons/ch7-hands-on.md"),
    ),
];

/// The lesson files in use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Catalog {
    /// The lessons built into the binary.
    #[default]
    Embedded,
    /// `*.md` files of a directory (an author's working copy).
    Dir(PathBuf),
}

/// The lessons of a catalog that parsed, and the errors of those that did not.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Lessons, ordered by chapter then id.
    pub lessons: Vec<Arc<Lesson>>,
    /// Files that did not parse.
    pub errors: Vec<LessonError>,
    /// Files read (name, text), for the linter.
    pub files: Vec<(String, String)>,
}

impl Parsed {
    /// A lesson by id.
    pub fn find(&self, id: &str) -> Option<Arc<Lesson>> {
        self.lessons.iter().find(|l| l.id == id).cloned()
    }

    /// The ids, for "did you mean" messages.
    pub fn ids(&self) -> Vec<String> {
        self.lessons.iter().map(|l| l.id.clone()).collect()
    }
}

/// The `.md` files of a directory, sorted by name, that could be read (see
/// [`read_dir_reporting`] for the entries that could not). An unreadable directory is an
/// error.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, String> {
    read_dir_reporting(dir).map(|(files, _)| files)
}

/// The files of a lessons directory that were read (name, text), and the errors of the
/// entries that could not be.
pub type DirFiles = (Vec<(String, String)>, Vec<LessonError>);

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
        match crate::util::fs::read_capped(&p, "a lesson file", crate::util::fs::CONFIG_CAP) {
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

impl Catalog {
    /// Read and parse every file.
    pub fn load(&self) -> Parsed {
        let files: Vec<(String, String)> = match self {
            Catalog::Embedded => EMBEDDED
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            Catalog::Dir(dir) => match read_dir_reporting(dir) {
                Ok((files, unreadable)) => {
                    let mut parsed = parse_files(files);
                    parsed.errors.extend(unreadable);
                    return parsed;
                }
                Err(e) => {
                    return Parsed {
                        errors: vec![LessonError::new(&dir.display().to_string(), 0, e)],
                        ..Parsed::default()
                    };
                }
            },
        };
        parse_files(files)
    }
}

/// Parse named files into a [`Parsed`].
pub fn parse_files(files: Vec<(String, String)>) -> Parsed {
    let mut out = Parsed::default();
    for (name, text) in &files {
        match parse(name, text) {
            Ok(l) => out.lessons.push(Arc::new(l)),
            Err(e) => out.errors.push(e),
        }
    }
    out.lessons
        .sort_by(|a, b| (a.chapter, &a.id).cmp(&(b.chapter, &b.id)));
    out.files = files;
    out
}
