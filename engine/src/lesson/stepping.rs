//! Stepping a packet hop by hop, as Packet Tracer's simulation mode does: `trace … --step`
//! opens it at the first hop, `step` moves to the next, `step back` to the one before, `step
//! end` stops. Each hop shows its line as `trace` prints it, the packet as it is there
//! (addresses before and after NAT, outer headers, size against the MTU) and the entry it
//! consulted, all made from the hop's typed facts ([`crate::net::trace::Hop`]). The desk
//! holds the one stepping in progress ([`super::Desk::stepping`]); front ends draw from it.

use crate::engine::seen::Seen;
use crate::net::trace::{Hop, HopKind, Trace};
use crate::render::{Line, Outcome, Role};

/// A trace being stepped, and the hop shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stepping {
    trace: Trace,
    /// The hop shown, 0-based.
    at: usize,
}

/// What a move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Moved {
    /// Now at the next hop.
    On,
    /// Past the last hop: the trace's result, and stepping is over.
    Ended,
}

/// The hint printed when stepping starts.
const KEYS: &str =
    "Enter or `step`: next hop · `b` or `step back`: the hop before · `q` or `step end`: stop";

impl Stepping {
    /// Stepping `trace` from its first hop; `None` when it has no hop to step.
    pub(crate) fn new(trace: Trace) -> Option<Self> {
        (!trace.hops.is_empty()).then_some(Stepping { trace, at: 0 })
    }

    /// The trace stepped.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The hop shown, 0-based.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The hop shown.
    pub fn hop(&self) -> &Hop {
        &self.trace.hops[self.at]
    }

    /// Move to the next hop, or past the last one.
    pub(crate) fn forward(&mut self) -> Moved {
        if self.at + 1 < self.trace.hops.len() {
            self.at += 1;
            Moved::On
        } else {
            Moved::Ended
        }
    }

    /// Move to the hop before; false (and no move) at the first.
    pub(crate) fn back(&mut self) -> bool {
        match self.at.checked_sub(1) {
            Some(at) => {
                self.at = at;
                true
            }
            None => false,
        }
    }

    /// What `trace … --step` prints: the flow, the keys, the first hop.
    pub(crate) fn opening(&self) -> Outcome {
        let mut out = Outcome::empty();
        if let Some(flow) = self.trace.lines().into_iter().next() {
            out.plain(flow);
        }
        out.line(Line::styled(KEYS, Role::Dim));
        out.extend(self.shown());
        out
    }

    /// The hop shown: its marker, its line, the packet there, the entry it consulted.
    pub fn shown(&self) -> Outcome {
        let hops = self.trace.hops.len();
        let h = self.hop();
        let mut out = Outcome::empty();
        out.line(Line::styled(
            format!(
                "── hop {}/{hops}: {} · {} ──",
                self.at + 1,
                h.at.text(),
                kind_word(h.kind)
            ),
            Role::Header,
        ));
        let width = hops.to_string().len();
        out.plain(format!("  {:>width$}  {}", self.at + 1, h.line()));
        for l in self.packet_lines() {
            out.line(Line::styled(format!("  {l}"), Role::Dim));
        }
        for l in self.entry_lines() {
            out.line(Line::styled(format!("  consulted: {l}"), Role::Dim));
        }
        out
    }

    /// The hop shown, as what a lesson's check reads.
    pub(crate) fn seen(&self) -> Seen {
        Seen::Stepped {
            hop: Box::new(self.hop().clone()),
            index: self.at + 1,
            of: self.trace.hops.len(),
        }
    }

    /// The packet at the hop shown, as lines (none before it has an address).
    pub fn packet_lines(&self) -> Vec<String> {
        self.hop()
            .packet
            .as_ref()
            .map(|p| p.lines())
            .unwrap_or_default()
    }

    /// The entry the hop shown consulted, as lines.
    pub fn entry_lines(&self) -> Vec<String> {
        self.hop()
            .entry
            .as_ref()
            .map(|e| e.lines())
            .unwrap_or_default()
    }

    /// The trace's last line, `delivered …`, `dropped at hop N …`.
    pub(crate) fn result(&self) -> Outcome {
        let mut out = Outcome::empty();
        let role = if self.trace.went_through() {
            Role::Good
        } else {
            Role::Bad
        };
        out.line(Line::styled(self.trace.result_line(), role));
        out
    }

    /// Every hop from the one after the shown one, then the result: what a script prints
    /// (it does not wait).
    pub(crate) fn rest(mut self) -> Outcome {
        let mut out = Outcome::empty();
        while self.forward() == Moved::On {
            out.extend(self.shown());
        }
        out.extend(self.result());
        out
    }
}

/// What a hop is, for its marker.
fn kind_word(k: HopKind) -> &'static str {
    match k {
        HopKind::Endpoint => "endpoint",
        HopKind::PodRoute => "pod route",
        HopKind::Veth => "veth",
        HopKind::Bridge => "bridge",
        HopKind::NodeRoute => "route",
        HopKind::Node => "node",
        HopKind::Policy => "policy",
        HopKind::Netfilter => "netfilter",
        HopKind::Tunnel => "tunnel",
        HopKind::Underlay => "underlay",
    }
}
