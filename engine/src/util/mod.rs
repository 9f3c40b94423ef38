//! Small helpers shared by the engine: stable hashing for deterministic names, addresses
//! as text.

pub(crate) mod addr;
pub mod chunked;
pub mod clip;
pub mod hash;
pub mod quantity;
pub mod text;
pub mod time;
pub mod vec_map;
