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

/// The `.md` files of a directory, sorted by name.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read lessons directory {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
        .collect();
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let text = crate::util::fs::read_capped(&p, "a lesson file", crate::util::fs::CONFIG_CAP)
            .map_err(|e| format!("cannot read lesson file {}: {e}", p.display()))?;
        files.push((p.display().to_string(), text));
    }
    Ok(files)
}

impl Catalog {
    /// Read and parse every file.
    pub fn load(&self) -> Parsed {
        let files: Vec<(String, String)> = match self {
            Catalog::Embedded => EMBEDDED
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            Catalog::Dir(dir) => match read_dir(dir) {
                Ok(f) => f,
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
