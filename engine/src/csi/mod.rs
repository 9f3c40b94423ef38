//! CSI as the spec defines it and the lab's driver `hostpath.csi.lab` implements it.
//!
//! - `types`: csi.proto's requests, responses and enums (protojson field names);
//! - `status`: gRPC codes and the status a failed RPC returns;
//! - `protojson`: how those messages look as JSON;
//! - `access_modes`: Kubernetes PV access modes → CSI access mode (csi-lib-utils);
//! - `driver`: the driver's configuration, nodes, volume state and lifecycle query;
//! - `identity`, `controller`, `node`: one function per RPC;
//! - `dispatch`: every RPC by name, JSON in and out, for the wire log;
//! - `endpoint`: the three services as one trait, the only way clients reach the driver.
//!
//! The sidecars and kubelet that drive it live elsewhere; this module is the plugin.

pub mod access_modes;
pub mod controller;
pub mod dispatch;
pub mod driver;
pub mod endpoint;
pub mod identity;
pub mod node;
pub mod protojson;
pub mod status;
pub mod types;

pub use access_modes::{K8sAccessMode, to_csi_access_mode};
pub use dispatch::{RPCS, Service, resolve};
pub use driver::{
    AccessType, DRIVER_NAME, Driver, DriverConfig, LifecycleState, NodeInfo, TOPOLOGY_KEY_NODE,
    TOPOLOGY_KEY_ZONE, VolumeRecord,
};
pub use endpoint::CsiEndpoint;
pub use node::NodeService;
pub use status::{Code, Status};

#[cfg(test)]
mod sanity_tests;

#[cfg(test)]
mod publish_table_tests;
#[cfg(test)]
mod spec_error_tests;

#[cfg(test)]
mod prop_tests;
