//! cni-csi-lab: an in-memory Kubernetes cluster that shows exactly what CNI and CSI do.
//!
//! Reading order: `command` (what you can say), `engine` (what happens), then the domain
//! modules (`cluster`, `cni`, `net`, `csi`, `kubelet`), then the front ends.
//! Nothing outside the front ends touches a terminal.

pub mod cni;
pub mod csi;
pub mod util;
