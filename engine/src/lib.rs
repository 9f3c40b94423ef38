//! The lab's engine: an in-memory Kubernetes cluster that shows exactly what CNI and CSI do.
//!
//! Reading order: `command` (what you can say), `engine` (what happens and in which order),
//! `control` (what every component is handed), the components (`controllers`, `storage`,
//! `kubelet`, `netd`), then the domain models (`cluster`, `cni`, `csi`, `net`), and the
//! lessons (`lesson`) and script playback (`script`) that drive the engine like a learner,
//! and the dashboard's view models (`dash`), which any front end draws.
//!
//! This crate has no terminal, async, thread, wall-clock or file-system code: what it needs
//! from outside (the files a command names, the real CNI plugins of `--real-cni`) it asks
//! through the traits in [`edge`], which the front ends (the `cni-csi-lab` crate, a browser
//! build) implement. It builds for `wasm32-unknown-unknown`.
//! `docs/architecture.md` draws the rooms and which way the arrows between them point.

pub mod cluster;
pub mod cni;
pub mod command;
pub mod control;
pub mod controllers;
pub mod csi;
pub mod dash;
pub mod edge;
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
pub mod resource;
pub mod script;
pub mod storage;
pub mod util;

pub use engine::{Lab, LabError};
pub use lesson::Desk;
