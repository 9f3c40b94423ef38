//! Every integration test of the lab in one test binary (one link instead of forty; see
//! `cargo test --test it`). Each module is one area: transcripts, lessons, the dashboard,
//! the differential tests against the real plugins and the kernel, …

mod architecture;
mod bad_files;
mod book;
mod calico;
mod cilium;
mod cli;
mod common;
mod completion;
mod csi_grpc;
mod csi_remote;
mod csi_volume_refs;
mod data_plane;
mod dataplane_differential;
mod host_local_conformance;
mod host_local_differential;
mod host_local_proptest;
mod invariants;
mod lesson_files;
mod lesson_guard;
mod lesson_props;
mod lesson_session;
mod lesson_stray;
mod limits;
mod manifests;
mod multus;
mod netfilter;
mod netfilter_differential;
mod networks;
mod node_admission;
mod oracle;
mod paste;
mod real_cni;
mod resources;
mod save_load;
mod sriov;
mod support;
mod terminal_escapes;
mod transcripts;
mod tui;
mod underlay_differential;
mod underlay_trace;
mod volume_backoff;
mod volume_topology;
