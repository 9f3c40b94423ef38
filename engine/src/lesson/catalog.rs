//! Where lessons come from: the files of `lessons/` embedded in the binary, or (for authors)
//! a directory given at run time (`--lessons DIR`, a [`LessonDir`]), read fresh so edits
//! show at once.

use super::model::Lesson;
use super::parse::{LessonError, parse};
use std::sync::Arc;

/// Every file of `lessons/`, embedded. A test proves this list matches the directory.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "lessons/ch2-core-ideas.md",
        include_str!("../../../lessons/ch2-core-ideas.md"),
    ),
    (
        "lessons/ch3-architecture.md",
        include_str!("../../../lessons/ch3-architecture.md"),
    ),
    (
        "lessons/ch3-csi-multus.md",
        include_str!("../../../lessons/ch3-csi-multus.md"),
    ),
    (
        "lessons/ch4-runtime-workflow.md",
        include_str!("../../../lessons/ch4-runtime-workflow.md"),
    ),
    (
        "lessons/ch5-core-modules.md",
        include_str!("../../../lessons/ch5-core-modules.md"),
    ),
    (
        "lessons/ch6-source-walkthrough.md",
        include_str!("../../../lessons/ch6-source-walkthrough.md"),
    ),
    (
        "lessons/ch7-hands-on.md",
        include_str!("../../../lessons/ch7-hands-on.md"),
    ),
];

/// The lesson files in use.
#[derive(Debug, Clone, Default)]
pub enum Catalog {
    /// The lessons built into the binary.
    #[default]
    Embedded,
    /// `*.md` files of a directory (an author's working copy).
    Dir(Arc<dyn LessonDir>),
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

    /// Variant `variant` of one of these lessons (0: the lesson as parsed), read again
    /// from its file with the variant's values; the error says which variants there are.
    pub fn variant(&self, lesson: &Arc<Lesson>, variant: u32) -> Result<Arc<Lesson>, String> {
        if variant == 0 {
            return Ok(Arc::clone(lesson));
        }
        let id = &lesson.id;
        lesson
            .vary
            .rows(variant)
            .map_err(|e| format!("lesson {id} has no variant {variant}: {e}"))?;
        let text = self
            .files
            .iter()
            .find(|(name, _)| *name == lesson.file)
            .map(|(_, t)| t.as_str())
            .ok_or_else(|| format!("lesson {id}: its file {} is gone", lesson.file))?;
        super::parse::parse_variant(&lesson.file, text, variant)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }

    /// The ids, for "did you mean" messages.
    pub fn ids(&self) -> Vec<String> {
        self.lessons.iter().map(|l| l.id.clone()).collect()
    }
}

/// The files of a lessons directory that were read (name, text), and the errors of the
/// entries that could not be.
pub type DirFiles = (Vec<(String, String)>, Vec<LessonError>);

/// A lessons directory an author works in (`--lessons DIR`), read afresh each time the
/// catalog loads so edits show at once. The front end that has a file system implements
/// it (the `cni-csi-lab` crate's `lesson_dir`).
pub trait LessonDir: Send + Sync + std::fmt::Debug {
    /// The directory, as the learner named it (for messages).
    fn name(&self) -> String;
    /// The `.md` entries, sorted by name: the files read (name, text), and an error for
    /// each entry that could not be read. An unreadable directory is an error.
    fn read(&self) -> Result<DirFiles, String>;
}

impl Catalog {
    /// Read and parse every file.
    pub fn load(&self) -> Parsed {
        let files: Vec<(String, String)> = match self {
            Catalog::Embedded => EMBEDDED
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            Catalog::Dir(dir) => match dir.read() {
                Ok((files, unreadable)) => {
                    let mut parsed = parse_files(files);
                    parsed.errors.extend(unreadable);
                    return parsed;
                }
                Err(e) => {
                    return Parsed {
                        errors: vec![LessonError::new(&dir.name(), 0, e)],
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
