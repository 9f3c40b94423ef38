//! cni-csi-lab: an in-memory Kubernetes cluster that shows exactly what CNI and CSI do.
//!
//! Reading order: `command` (what you can say), `engine` (what happens), then the domain
//! modules (`cluster`, `cni`, `kubelet`), then the front ends (`script`, `repl`).
//! Nothing outside the front ends touches a terminal.

pub mod cluster;
pub mod cni;
pub mod command;
pub mod control;
pub mod controllers;
pub mod csi;
pub mod engine;
pub mod faults;
pub mod kubelet;
pub mod lesson;
pub mod net;
pub mod node;
pub mod presets;
pub mod record;
pub mod render;
pub mod repl;
pub mod script;
pub mod storage;
pub mod tui;
pub mod util;

pub use engine::{Lab, LabError};
pub use lesson::Desk;
