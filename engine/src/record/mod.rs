//! What the lab records as it runs, for the views to read: the call log (who called what,
//! in order, with Kubernetes events; typed records, see [`call`]) and the wire log (every
//! plugin execution and CSI RPC with its exact request and reply). Components write both
//! through their context (`crate::control::Ctx`); `show events`, `show wire`, `describe`,
//! the dashboard and lesson checks read them, and only the views make text of them.

pub mod call;
pub mod calls;
pub mod wire;

pub use call::{
    Actor, Agent, CallEvent, CniOp, CniPurpose, Detail, Event, EventPart, Level, Message,
    PluginRun, What, WireRange,
};
pub use calls::{CallLog, Folded, Ring, WireLog, fold_events};
pub use wire::{CsiCall, WireMessage, WireRecord};
