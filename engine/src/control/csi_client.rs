//! How a component calls the CSI driver: every RPC goes through [`Ctx::csi_call`], which
//! sends it to the endpoint (unless an armed fault fails it first) and records it on the
//! wire (request, response or status) and in the call log under the caller's name.

use super::Ctx;
use crate::csi::Status;
use crate::record::wire::{CsiCall, WireMessage, WireRecord};
use crate::record::{CallEvent, Level};
use std::sync::Arc;

pub use crate::csi::CsiEndpoint;

impl Ctx<'_> {
    /// Call one RPC on the driver as `caller`; `node` names the node plugin for Node RPCs.
    pub fn csi_call<Req, Resp>(
        &mut self,
        caller: &str,
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
        let subject = req.subject().unwrap_or("-").to_string();
        let request: Arc<dyn WireMessage> = Arc::new(req.clone());
        let result = match self.faults.take_rpc(node, rpc) {
            Some(injected) => Err(injected),
            None => call(&mut *self.csi, req),
        };
        let typed_summary = result.as_ref().ok().and_then(|r| r.summary());
        let reply = match &result {
            Ok(resp) => Ok(Arc::new(resp.clone()) as Arc<dyn WireMessage>),
            Err(s) => Err(s.clone()),
        };
        let mut record = CsiCall {
            caller: caller.to_string(),
            node: node.map(str::to_string),
            service,
            rpc,
            subject,
            summary: String::new(),
            request,
            reply,
        };
        record.summary = typed_summary.unwrap_or_else(|| record.summary_from_json());
        debug_assert_eq!(record.subject, record.subject_from_json(), "{rpc}");
        debug_assert_eq!(record.summary, record.summary_from_json(), "{rpc}");
        let detail_head = format!("{}: {}", record.subject, record.summary);
        let failed = record.reply.is_err();
        let seq = self.wire.push(WireRecord::Csi(record));
        let tick = self.clock;
        self.log_event(CallEvent {
            seq: 0,
            tick,
            actor: caller.to_string(),
            action: rpc.into(),
            detail: format!("#{seq} {detail_head}"),
            level: if failed {
                Level::Warning
            } else {
                Level::Normal
            },
            reason: None,
            object: None,
            wire: Some((seq, seq + 1)),
            object_uid: None,
        });
        result
    }
}
