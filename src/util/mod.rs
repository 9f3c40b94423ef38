//! Small helpers shared by the engine: stable hashing for deterministic names.

pub mod hash;
