//! The reference plugins the lab models, one module each.

pub mod bandwidth;
pub mod bridge;
pub mod common;
pub mod loopback;
pub mod portmap;

#[cfg(test)]
mod chain_tests;
