//! A packet as the evaluator sees it and what a traversal found: the deciding rule, the
//! rules it passed, or why it stopped.

use super::*;

/// Why a rule's `-m set` cannot be evaluated against `sets`: a set the node does not hold,
/// or one of the other family (iptables refuses both: "Set NAME doesn't exist.", "The
/// protocol family of set NAME is IPv6, which is not applicable.").
pub(super) fn missing_set(spec: &RuleSpec, pkt: &Packet, sets: &IpSets) -> Option<String> {
    for name in spec.set_names() {
        match sets.get(name) {
            None => {
                return Some(format!(
                    "no ipset {name} on the node (iptables: Set {name} doesn't exist.)"
                ));
            }
            Some(s) if s.family() != Family::of(&pkt.src) => {
                return Some(format!(
                    "ipset {name} is family {}, not the packet's",
                    s.family()
                ));
            }
            Some(_) => {}
        }
    }
    None
}

/// A packet as the evaluator sees it: addresses, protocol and ports, interfaces, the
/// netfilter mark, and whether the destination is one of the node's own addresses
/// (`-m addrtype --dst-type LOCAL`; the caller knows the node's addresses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Transport protocol.
    pub proto: L4,
    /// Source port (0 for ICMP).
    pub sport: u16,
    /// Destination port (0 for ICMP).
    pub dport: u16,
    /// Input interface (PREROUTING, INPUT, FORWARD).
    pub iif: Option<String>,
    /// Output interface (FORWARD, OUTPUT, POSTROUTING).
    pub oif: Option<String>,
    /// The netfilter mark (`MARK` changes it, `-m mark` reads it).
    pub mark: u32,
    /// The destination is a local address of the node.
    pub dst_local: bool,
}

impl Packet {
    /// A packet with no interfaces, mark 0, not to a local address.
    pub fn new(src: IpAddr, dst: IpAddr, proto: L4, sport: u16, dport: u16) -> Self {
        Packet {
            src,
            dst,
            proto,
            sport,
            dport,
            iif: None,
            oif: None,
            mark: 0,
            dst_local: false,
        }
    }
}

/// How a walk through a table ended.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A rule said ACCEPT.
    Accept,
    /// A rule said DROP (or the walk was aborted, see [`Traversal::aborted`]).
    Drop,
    /// A rule said MASQUERADE: the source becomes the outgoing interface's address.
    Masquerade,
    /// A rule said SNAT to this address.
    Snat(IpAddr),
    /// A rule said DNAT to this address (and port).
    Dnat(IpAddr, Option<u16>),
    /// No rule decided: the built-in chain's policy.
    Policy(Policy),
}

/// The result of [`XtTable::traverse`]: the decision, the rule that made it, and what the
/// walk went through (for a trace).
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traversal {
    /// The verdict.
    pub decision: Decision,
    /// The deciding rule as `-A CHAIN rule`; `None` when the policy decided.
    pub decided_by: Option<String>,
    /// Every rule that matched on the way (jumps, MARK, RETURN, and the deciding one), as
    /// `-A CHAIN rule`, in order.
    pub matched: Vec<String>,
    /// Each rule of [`Traversal::matched`] as a typed value: its chain, its 1-based number
    /// in it (as `iptables -L --line-numbers` counts), and the rule (its parsed target).
    pub hits: Vec<Hit>,
    /// Rules passed over because the lab does not model them: `(-A CHAIN rule, why)`.
    pub unmodelled: Vec<(String, String)>,
    /// Why the walk stopped early (a jump loop, too many rules, an unknown hook chain).
    pub aborted: Option<String>,
}

/// A rule that matched during a [`XtTable::traverse`]: where it sits and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The chain holding it.
    pub chain: String,
    /// Its 1-based position in the chain.
    pub number: usize,
    /// The rule (its text and parsed form).
    pub rule: XtRule,
}

impl Hit {
    /// The rule's target.
    pub fn target(&self) -> &Target {
        &self.rule.spec().target
    }

    /// The rule as `iptables -S` prints it: `-A CHAIN rule`.
    pub fn line(&self) -> String {
        format!("-A {} {}", self.chain, self.rule.text())
    }
}

impl Traversal {
    pub(super) fn abort(&mut self, why: String) {
        self.decision = Decision::Drop;
        self.decided_by = None;
        self.aborted = Some(why);
    }
}
