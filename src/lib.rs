//! cni-csi-lab: an in-memory Kubernetes cluster that shows exactly what CNI and CSI do.
//!
//! Reading order: `command` (what you can say), `engine` (what happens and in which order),
//! `control` (what every component is handed), the components (`controllers`, `storage`,
//! `kubelet`), then the domain models (`cluster`, `cni`, `csi`, `net`) and the front ends
//! (`lesson`, `script`, `repl`, `tui`). `docs/architecture.md` draws the rooms and which
//! way the arrows between them point. Nothing outside the front ends touches a terminal.

pub mod cast;
pub mod cluster;
pub mod cni;
pub mod command;
pub mod control;
pub mod controllers;
pub mod csi;
#[cfg(unix)]
pub mod csi_serve;
pub mod engine;
pub mod faults;
pub mod kubelet;
pub mod lesson;
pub mod manifest;
pub mod net;
pub mod netd;
pub mod node;
pub mod presets;
pub mod record;
pub mod render;
pub mod repl;
pub mod script;
pub mod shell_completion;
pub mod storage;
pub mod tui;
pub mod util;

pub use engine::{Lab, LabError};
pub use lesson::Desk;
