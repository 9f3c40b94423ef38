//! What the lab records as it runs, for the views to read: the call log (who called what,
//! in order, with Kubernetes event reasons) and the wire log (every plugin execution and
//! CSI RPC with its exact request and reply). Components write both through their context
//! (`crate::control::Ctx`); `show events`, `show wire`, `describe` and the dashboard read them.

pub mod calls;
pub mod wire;

pub use calls::{CallEvent, CallLog, Level, Ring, WireLog};
pub use wire::{CsiCall, WireMessage, WireRecord};
