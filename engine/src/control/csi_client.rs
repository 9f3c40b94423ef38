//! How a component calls the CSI driver: every RPC goes through [`Ctx::csi_call`], which
//! sends it to the endpoint (unless an armed fault fails it first) and records it on the
//! wire (request, response or status) and in the call log under the caller's name.

use super::Ctx;
use crate::csi::Status;
use crate::record::wire::{CsiCall, WireMessage, WireRecord, WireReply, WireRequest};
use crate::record::{Actor, CallEvent, Level, What};
use std::sync::Arc;

pub use crate::csi::CsiEndpoint;

impl Ctx<'_> {
    /// Call one RPC on the driver as `caller`; `node` names the node plugin for Node RPCs.
    pub(crate) fn csi_call<Req, Resp>(
        &mut self,
        caller: impl Into<Actor>,
        node: Option<&str>,
        rpc: &'static str,
        req: Req,
        call: impl FnOnce(&mut dyn CsiEndpoint, Req) -> Result<Resp, Status>,
    ) -> Result<Resp, Status>
    where
        Req: WireMessage + crate::csi::types::CsiRequest + Clone + 'static,
        Resp: WireMessage + crate::csi::types::CsiResponse + Clone + 'static,
    {
        let service = crate::csi::resolve(rpc)
            .map(|(s, _)| s)
            .unwrap_or(crate::csi::Service::Controller);
        let request: Arc<dyn WireRequest> = Arc::new(req.clone());
        let result = match self.faults.take_rpc(node, rpc) {
            Some(injected) => Err(injected),
            None => call(&mut *self.csi, req),
        };
        let reply = match &result {
            Ok(resp) => Ok(Arc::new(resp.clone()) as Arc<dyn WireReply>),
            Err(s) => Err(s.clone()),
        };
        let caller = caller.into();
        let record = Arc::new(CsiCall {
            caller: caller.clone(),
            node: node.map(str::to_string),
            service,
            rpc,
            request,
            reply,
        });
        // The typed rules agree with the JSON ones (the line is made from the typed ones
        // when a view renders it).
        debug_assert_eq!(record.subject(), record.subject_from_json(), "{rpc}");
        debug_assert_eq!(record.summary(), record.summary_from_json(), "{rpc}");
        let level = if record.reply.is_err() {
            Level::Warning
        } else {
            Level::Normal
        };
        let wire = self.wire.push(WireRecord::Csi(Arc::clone(&record)));
        let e = CallEvent::new(self.clock, caller, What::Csi { wire, call: record }, level);
        self.calls.push(e);
        result
    }
}
