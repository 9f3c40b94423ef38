//! Small helpers the scenario tests share: run a line and get its text, and read a pod of
//! the default namespace back.
#![allow(dead_code)] // each test crate uses its own subset

use lab_engine::engine::Lab;

/// Run one command line; its output as text (a rejected line fails the test, naming it).
pub fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

/// The store key of an object in the default namespace.
pub fn key(name: &str) -> (String, String) {
    ("default".to_string(), name.to_string())
}

/// A pod's phase.
pub fn phase(lab: &Lab, pod: &str) -> String {
    lab.cluster().pods[&key(pod)].status.phase.to_string()
}

/// What the terminal front ends give a lab: the disk (and no real mode).
pub fn disk() -> lab_engine::edge::Edges {
    lab_engine::edge::Edges::files(std::sync::Arc::new(cni_csi_lab::files::Disk))
}

/// A lessons directory on disk, as `--lessons DIR` gives it.
pub fn lessons_at(
    dir: impl AsRef<std::path::Path>,
) -> std::sync::Arc<dyn lab_engine::lesson::catalog::LessonDir> {
    std::sync::Arc::new(cni_csi_lab::lesson_dir::Dir(dir.as_ref().to_path_buf()))
}

/// The default lab as a terminal front end builds it (with the disk).
pub fn lab() -> lab_engine::Lab {
    lab_engine::Lab::with_edges(lab_engine::Lab::new, disk())
}

/// An empty lab as a terminal front end builds it (with the disk).
pub fn empty_lab() -> lab_engine::Lab {
    lab_engine::Lab::with_edges(lab_engine::Lab::empty, disk())
}

/// The default desk as a terminal front end builds it (with the disk).
pub fn desk() -> lab_engine::Desk {
    lab_engine::Desk::with_lab(lab())
}
