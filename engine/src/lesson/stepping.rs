//! Stepping, as Packet Tracer's simulation mode does: a packet hop by hop (`trace …
//! --step`) or a volume's CSI flow call by call (`pod create … --pvc CLAIM --step`, see
//! [`super::csi_stepping`]). Either opens at its first hop or call; `step` moves to the next,
//! `step back` to the one before, `step end` stops. Each hop shows its line as `trace` prints
//! it, the packet as it is there (addresses before and after NAT, outer headers, size against
//! the MTU) and the entry it consulted, all made from the hop's typed facts
//! ([`crate::net::trace::Hop`]). The desk holds the one stepping in progress
//! ([`super::Desk::stepping`]); front ends draw from it.

pub use super::csi_stepping::CsiStepping;
use crate::engine::seen::Seen;
use crate::net::trace::{Hop, HopKind, Trace};
use crate::render::{Line, Outcome, Role};

/// What is being stepped: a packet's hops or a CSI flow's calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stepping {
    /// A trace, hop by hop.
    Packet(Box<PacketStepping>),
    /// A command's CSI calls, call by call.
    Csi(CsiStepping),
}

impl Stepping {
    /// The packet stepped, if this is a trace.
    pub fn packet(&self) -> Option<&PacketStepping> {
        match self {
            Stepping::Packet(p) => Some(p.as_ref()),
            Stepping::Csi(_) => None,
        }
    }

    /// The CSI flow stepped, if this is one.
    pub fn csi(&self) -> Option<&CsiStepping> {
        match self {
            Stepping::Packet(_) => None,
            Stepping::Csi(c) => Some(c),
        }
    }

    /// Where the stepping stands.
    fn cursor(&self) -> &Cursor {
        match self {
            Stepping::Packet(p) => &p.cursor,
            Stepping::Csi(c) => c.cursor(),
        }
    }

    fn cursor_mut(&mut self) -> &mut Cursor {
        match self {
            Stepping::Packet(p) => &mut p.cursor,
            Stepping::Csi(c) => c.cursor_mut(),
        }
    }

    /// The hop or call shown, 0-based.
    pub fn at(&self) -> usize {
        self.cursor().at()
    }

    /// How many hops or calls there are.
    pub fn len(&self) -> usize {
        self.cursor().len()
    }

    /// Never true: a stepping has a hop or a call to show.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What is stepped through: `hop` or `call`.
    pub fn unit(&self) -> &'static str {
        match self {
            Stepping::Packet(_) => "hop",
            Stepping::Csi(_) => "call",
        }
    }

    /// Move to the next hop or call, or past the last one.
    pub(crate) fn forward(&mut self) -> Moved {
        self.cursor_mut().forward()
    }

    /// Move to the one before; false (and no move) at the first.
    pub(crate) fn back(&mut self) -> bool {
        self.cursor_mut().back()
    }

    /// What the stepped command prints first.
    pub(crate) fn opening(&self) -> Outcome {
        match self {
            Stepping::Packet(p) => p.opening(),
            Stepping::Csi(c) => c.opening(),
        }
    }

    /// The hop or call shown.
    pub fn shown(&self) -> Outcome {
        match self {
            Stepping::Packet(p) => p.shown(),
            Stepping::Csi(c) => c.shown(),
        }
    }

    /// The hop or call shown, as what a lesson's check reads.
    pub(crate) fn seen(&self) -> Seen {
        match self {
            Stepping::Packet(p) => p.seen(),
            Stepping::Csi(c) => c.seen(),
        }
    }

    /// The last line, once past the last hop or call.
    pub(crate) fn result(&self) -> Outcome {
        match self {
            Stepping::Packet(p) => p.result(),
            Stepping::Csi(c) => c.result(),
        }
    }
}

/// Where a stepping stands among its hops or calls: the one shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// The one shown, 0-based.
    at: usize,
    /// How many there are (at least one).
    len: usize,
}

impl Cursor {
    /// At the first of `len`; `None` when there is nothing to step.
    pub(crate) fn first_of(len: usize) -> Option<Self> {
        (len > 0).then_some(Cursor { at: 0, len })
    }

    /// The one shown, 0-based.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Move to the next, or past the last one (staying at the last).
    pub(crate) fn forward(&mut self) -> Moved {
        if self.at + 1 < self.len {
            self.at += 1;
            Moved::On
        } else {
            Moved::Ended
        }
    }

    /// Move to the one before; false (and no move) at the first.
    pub(crate) fn back(&mut self) -> bool {
        match self.at.checked_sub(1) {
            Some(at) => {
                self.at = at;
                true
            }
            None => false,
        }
    }

    /// The marker's count: `2/4`.
    pub(crate) fn count(&self) -> String {
        format!("{}/{}", self.at + 1, self.len)
    }
}

/// The hint printed when stepping starts, for hops or calls.
pub(crate) fn keys(unit: &str) -> String {
    format!(
        "Enter or `step`: next {unit} · `b` or `step back`: the {unit} before · `q` or `step end`: stop"
    )
}

/// A trace being stepped, and the hop shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketStepping {
    trace: Trace,
    cursor: Cursor,
}

/// What a move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Moved {
    /// Now at the next hop.
    On,
    /// Past the last hop: the trace's result, and stepping is over.
    Ended,
}

impl PacketStepping {
    /// Stepping `trace` from its first hop; `None` when it has no hop to step.
    pub(crate) fn new(trace: Trace) -> Option<Self> {
        let cursor = Cursor::first_of(trace.hops.len())?;
        Some(PacketStepping { trace, cursor })
    }

    /// The trace stepped.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The hop shown, 0-based.
    pub fn at(&self) -> usize {
        self.cursor.at()
    }

    /// The hop shown.
    pub fn hop(&self) -> &Hop {
        &self.trace.hops[self.cursor.at()]
    }

    /// What `trace … --step` prints: the flow, the keys, the first hop.
    pub(crate) fn opening(&self) -> Outcome {
        let mut out = Outcome::empty();
        out.plain(self.trace.flow_line());
        out.line(Line::styled(keys("hop"), Role::Dim));
        out.extend(self.shown());
        out
    }

    /// The hop shown: its marker, its line, the packet there, the entry it consulted.
    pub fn shown(&self) -> Outcome {
        let h = self.hop();
        let mut out = Outcome::empty();
        out.line(Line::styled(
            format!(
                "── hop {}: {} · {} ──",
                self.cursor.count(),
                h.at.text(),
                kind_word(h.kind)
            ),
            Role::Header,
        ));
        let width = self.cursor.len().to_string().len();
        out.plain(format!("  {:>width$}  {}", self.at() + 1, h.line()));
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
            index: self.at() + 1,
            of: self.cursor.len(),
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
