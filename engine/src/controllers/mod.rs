//! The control-plane controllers outside storage: kube-scheduler and kube-controller-manager's
//! node lifecycle, taint eviction and namespace controllers. Each is a [`crate::control::Component`] with its own state;
//! the storage controllers and sidecars live in `crate::storage`, kubelet in `crate::kubelet`.

pub(crate) mod host_ports;
pub mod namespace;
pub mod node_info;
pub mod node_lifecycle;
pub(crate) mod node_tree;
pub mod placement;
pub mod scheduler;
pub(crate) mod taint_eviction;

pub use namespace::NamespaceController;
pub use node_lifecycle::NodeLifecycle;
pub use scheduler::Scheduler;
