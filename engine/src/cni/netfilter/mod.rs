//! A node's netfilter as state: the iptables `nat` and `filter` tables of both families
//! (`iptables` and `ip6tables`), each rule kept as the text `iptables -S` prints and in a
//! parsed form, and an evaluator that walks a packet through a hook's chains the way
//! `ipt_do_table` does (jumps, RETURN, policies, MARK) to the rule that decides.
//!
//! What writes here: the bridge plugin's ipMasq chain (`CNI-<hash>`, nat POSTROUTING),
//! portmap's `CNI-HOSTPORT-*` / `CNI-DN-<hash>` chains (nat PREROUTING/OUTPUT/POSTROUTING),
//! and flanneld's `FLANNEL-POSTRTG` (nat) and `FLANNEL-FWD` (filter). Each writes the family
//! of the address it handles, as `iptables.NewWithProtocol(ProtocolIPv6)` does upstream.
//!
//! The parser covers the rule text those writers produce (iptables(8) for `-s`/`-d`/`-i`/
//! `-o`/`-p`/`-j`, iptables-extensions(8) for the `tcp`/`udp`/`sctp`, `multiport`,
//! `comment`, `mark`, `addrtype`, `conntrack`/`state` and `set` matches, the `MASQUERADE`,
//! `SNAT`, `DNAT`, `MARK` targets, and `-g` goto). A match or target it does not model is
//! recorded in
//! [`RuleSpec::unmodelled`], and such a rule never matches: a trace says "rule not
//! modelled" instead of guessing. No input text makes it panic.
//!
//! `-m set --match-set NAME src|dst` tests the node's ipsets ([`crate::cni::ipset`]), which
//! the tables cannot see: [`XtTable::traverse_with`] takes them. A rule naming a set the node
//! does not have never matches and the walk lists it in [`Traversal::unmodelled`] (the
//! kernel refuses such a rule: `iptables: Set NAME doesn't exist.`).
//!
//! Not modelled: the raw, mangle and security tables, counters, conntrack state (every packet
//! the evaluator sees is the first of its connection, so nat is consulted, `--ctstate NEW`
//! matches), `REJECT`/`LOG` and other targets, ipset types other than `hash:ip` and
//! `hash:net`, and `--match-set`'s counter and `--return-nomatch` options.

use crate::cni::ipset::{Family, IpSets, NO_SETS};
use crate::cni::plugins::common::ipt_quote;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

mod parse;
mod rule;
mod table;
#[cfg(test)]
mod tests;
mod walk;

pub use rule::*;
pub use table::*;
pub use walk::*;

/// The iptables tables the lab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableKind {
    /// `-t nat`: address translation, consulted for the first packet of a connection.
    Nat,
    /// `-t filter` (the default table): accept or drop.
    Filter,
}

impl TableKind {
    /// Both tables, nat first.
    pub const ALL: [TableKind; 2] = [TableKind::Nat, TableKind::Filter];

    /// The name `-t` takes.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Nat => "nat",
            TableKind::Filter => "filter",
        }
    }

    /// The table named `name` (`nat`, `filter`), if the lab models it.
    pub fn from_name(name: &str) -> Option<Self> {
        TableKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The built-in chains in hook order, as `iptables -S` prints their policies
    /// (`iptable_nat.c` / `iptable_filter.c` register these hooks).
    pub fn builtin_chains(self) -> &'static [&'static str] {
        match self {
            TableKind::Nat => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
            TableKind::Filter => &["INPUT", "FORWARD", "OUTPUT"],
        }
    }

    /// Whether `chain` is one of this table's built-in chains.
    pub(crate) fn is_builtin(self, chain: &str) -> bool {
        self.builtin_chains().contains(&chain)
    }
}

impl fmt::Display for TableKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A built-in chain's policy (`-P CHAIN ACCEPT|DROP`): the verdict when no rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// `ACCEPT`, the policy every built-in chain starts with.
    #[default]
    Accept,
    /// `DROP`.
    Drop,
}

impl Policy {
    /// The word `-P` takes and `-S` prints.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Accept => "ACCEPT",
            Policy::Drop => "DROP",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tables of one family: `nat` and `filter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tables {
    /// `-t nat`.
    pub nat: XtTable,
    /// `-t filter`.
    pub filter: XtTable,
}

impl Default for Tables {
    fn default() -> Self {
        Tables {
            nat: XtTable::new(TableKind::Nat),
            filter: XtTable::new(TableKind::Filter),
        }
    }
}

impl Tables {
    /// The table of a kind.
    pub fn get(&self, kind: TableKind) -> &XtTable {
        match kind {
            TableKind::Nat => &self.nat,
            TableKind::Filter => &self.filter,
        }
    }

    /// The table of a kind, mutably.
    pub fn get_mut(&mut self, kind: TableKind) -> &mut XtTable {
        match kind {
            TableKind::Nat => &mut self.nat,
            TableKind::Filter => &mut self.filter,
        }
    }
}

/// A node's netfilter: `iptables` (IPv4) and `ip6tables` (IPv6) tables, separate as in the
/// kernel (`ip_tables` and `ip6_tables`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Netfilter {
    /// `iptables`.
    pub ip4: Tables,
    /// `ip6tables`.
    pub ip6: Tables,
}

impl Netfilter {
    /// The tables of a family.
    pub fn family(&self, v6: bool) -> &Tables {
        if v6 { &self.ip6 } else { &self.ip4 }
    }

    /// The tables of a family, mutably.
    pub fn family_mut(&mut self, v6: bool) -> &mut Tables {
        if v6 { &mut self.ip6 } else { &mut self.ip4 }
    }

    /// Whether any rule of any table (both families) has `-m set --match-set name` (the
    /// kernel then refuses `ipset destroy`).
    pub(crate) fn references_set(&self, name: &str) -> bool {
        [&self.ip4, &self.ip6].iter().any(|tables| {
            TableKind::ALL.iter().any(|k| {
                tables
                    .get(*k)
                    .chains()
                    .values()
                    .flatten()
                    .any(|r| r.spec().set_names().any(|n| n == name))
            })
        })
    }

    /// [`Netfilter::for_addr`], mutably (where a writer puts a rule about `ip`).
    pub(crate) fn for_addr_mut(&mut self, ip: &IpAddr) -> &mut Tables {
        self.family_mut(ip.is_ipv6())
    }
}
