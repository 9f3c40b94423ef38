//! CNI as libcni and containernetworking/plugins do it: wire types, the plugin interface,
//! the node model plugins act on, the plugins themselves and the runtime that chains them.

pub mod cilium_api;
pub mod conf;
pub mod datastore;
pub mod exec;
pub mod go_json;
pub mod host;
pub mod ipam_store;
pub mod ipset;
pub mod kube_api;
pub mod links;
pub mod netfilter;
pub mod plugin;
pub mod plugins;
pub mod real;
pub mod registry;
pub mod release;
pub mod result_cache;
pub mod runtime;
pub mod skel;
pub mod sriov_nic;
pub mod types;
pub mod version;
