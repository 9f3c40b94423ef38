//! Small helpers shared by the engine: stable hashing for deterministic names, and atomic
//! file writes.

pub mod fs;
pub mod hash;
pub mod quantity;
pub mod signals;
