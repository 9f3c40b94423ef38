//! Small helpers shared by the engine: stable hashing for deterministic names, and atomic
//! file writes.

pub mod clip;
pub mod fs;
pub mod hash;
pub mod quantity;
pub mod signals;
pub mod text;
pub mod time;
