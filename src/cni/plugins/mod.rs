//! The reference plugins the lab models, one module each.

pub mod host_local;
