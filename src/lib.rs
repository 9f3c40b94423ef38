//! cni-csi-lab's front ends: the live dashboard (`tui`), the line REPL (`repl`), the CSI
//! driver on a real gRPC socket (`csi_serve`), real mode's plugins and namespaces
//! (`real_cni`), and what a terminal front end brings to the engine: the disk (`files`,
//! `progress_file`, `lesson_dir`), signals (`signals`), colours (`ansi`) and recordings
//! (`cast`). The lab itself — the cluster, its components, the command language, the
//! lessons — is the `lab_engine` crate, which knows no terminal, thread or file.
//! `docs/architecture.md` draws the rooms and which way the arrows between them point.

pub mod ansi;
pub mod cast;
#[cfg(unix)]
pub mod csi_serve;
pub mod files;
pub mod lesson_dir;
pub mod progress_file;
pub mod real_cni;
pub mod repl;
pub mod shell_completion;
pub mod signals;
pub mod tui;

pub use lab_engine::{Desk, Lab, LabError};
