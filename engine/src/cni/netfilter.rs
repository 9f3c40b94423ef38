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

// ---------------------------------------------------------------------------------------
// Rules: the parsed form
// ---------------------------------------------------------------------------------------

/// The transport protocol of a packet or a `-p` match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L4 {
    /// TCP (6).
    Tcp,
    /// UDP (17).
    Udp,
    /// SCTP (132).
    Sctp,
    /// ICMP (1) or ICMPv6 (58).
    Icmp,
}

impl L4 {
    /// The protocol `-p NAME` names (names as in /etc/protocols, and numbers), `None` for one
    /// the lab does not model.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "tcp" | "6" => Some(L4::Tcp),
            "udp" | "17" => Some(L4::Udp),
            "sctp" | "132" => Some(L4::Sctp),
            "icmp" | "1" | "icmpv6" | "ipv6-icmp" | "58" => Some(L4::Icmp),
            _ => None,
        }
    }

    /// Whether the protocol has ports (the `tcp`/`udp`/`sctp` and `multiport` matches).
    pub(crate) fn has_ports(self) -> bool {
        !matches!(self, L4::Icmp)
    }
}

/// `[!] -s ADDR[/MASK]` or `[!] -d …`: the address is masked to its network, as iptables
/// stores it (a bare address is a /32 or /128).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrMatch {
    /// The network.
    pub net: IpNet,
    /// `!` before the option.
    pub negated: bool,
}

impl AddrMatch {
    fn matches(&self, addr: &IpAddr) -> bool {
        self.net.contains(addr) != self.negated
    }
}

/// `[!] -i NAME` or `[!] -o NAME`; a trailing `+` matches every name with that prefix
/// (iptables(8)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfaceMatch {
    /// The name, without the `+`.
    pub name: String,
    /// The name ended in `+`.
    pub wildcard: bool,
    /// `!` before the option.
    pub negated: bool,
}

impl IfaceMatch {
    fn matches(&self, iface: Option<&str>) -> bool {
        let hit = iface.is_some_and(|i| {
            if self.wildcard {
                i.starts_with(&self.name)
            } else {
                i == self.name
            }
        });
        hit != self.negated
    }

    fn render(&self, out: &mut String, flag: &str) {
        sep(out);
        if self.negated {
            out.push_str("! ");
        }
        out.push_str(flag);
        out.push(' ');
        out.push_str(&self.name);
        if self.wildcard {
            out.push('+');
        }
    }
}

/// `[!] -p PROTO`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoMatch {
    /// The protocol.
    pub proto: L4,
    /// The name as written (`tcp`, `ipv6-icmp`), printed back as it was.
    pub name: String,
    /// `!` before the option.
    pub negated: bool,
}

/// A port or a range `LO:HI` (`--dport`, one entry of `--dports`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    /// First port.
    pub lo: u16,
    /// Last port (equal to `lo` for one port).
    pub hi: u16,
}

impl PortRange {
    fn contains(self, p: u16) -> bool {
        self.lo <= p && p <= self.hi
    }

    fn render(self, out: &mut String) {
        out.push_str(&self.lo.to_string());
        if self.hi != self.lo {
            out.push(':');
            out.push_str(&self.hi.to_string());
        }
    }
}

/// Which ports a `multiport` match looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortDir {
    /// `--sports`.
    Src,
    /// `--dports`.
    Dst,
    /// `--ports`: either.
    Either,
}

/// One dimension of `--match-set NAME src,dst`: which address of the packet it tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SetDir {
    /// `src`.
    Src,
    /// `dst`.
    Dst,
}

impl SetDir {
    fn name(self) -> &'static str {
        match self {
            SetDir::Src => "src",
            SetDir::Dst => "dst",
        }
    }
}

/// At most this many `src|dst` flags (`IPSET_DIM_MAX`; libxt_set: "Can't be more src/dst
/// options than 6.").
pub(crate) const MAX_SET_DIMS: usize = 6;

/// One `-m MODULE …` match, with the options it took, in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// `-m tcp|udp|sctp [[!] --sport P[:P]] [[!] --dport P[:P]]` (also implied by `-p tcp
    /// --dport`, which `iptables -S` prints with `-m tcp`).
    Ports {
        /// The module, which is the protocol it needs.
        proto: L4,
        /// `--sport` and whether it was negated.
        sport: Option<(PortRange, bool)>,
        /// `--dport` and whether it was negated.
        dport: Option<(PortRange, bool)>,
    },
    /// `-m multiport [!] --dports|--sports|--ports P,P:P,…` (at most 15 entries).
    Multiport {
        /// Which side; `None` until its option is read.
        dir: Option<PortDir>,
        /// The ports and ranges.
        ports: Vec<PortRange>,
        /// `!` before the option.
        negated: bool,
    },
    /// `-m comment --comment TEXT`: matches everything. The text is shared: a rule a
    /// writer programs on every node copies its parse per node (flanneld's).
    Comment(Option<Arc<str>>),
    /// `-m mark [!] --mark VALUE[/MASK]`: `(nfmark & MASK) == VALUE`.
    Mark {
        /// `(value, mask)`; `None` until `--mark` is read.
        mark: Option<(u32, u32)>,
        /// `!` before `--mark`.
        negated: bool,
    },
    /// `-m addrtype [[!] --src-type T] [[!] --dst-type T]`; only `LOCAL` is modelled (the
    /// caller says whether the destination is one of the node's addresses).
    AddrType {
        /// `--src-type`, negated.
        src: Option<(String, bool)>,
        /// `--dst-type`, negated.
        dst: Option<(String, bool)>,
    },
    /// `-m conntrack [!] --ctstate S,…` or the older `-m state [!] --state S,…`. The lab
    /// evaluates first packets only, whose state is `NEW`.
    CtState {
        /// `conntrack` or `state` (printed back as written).
        module: &'static str,
        /// The states, upper case.
        states: Vec<String>,
        /// `!` before the option.
        negated: bool,
    },
    /// `-m set [!] --match-set NAME src|dst[,src|dst…]`: the packet's address (per the
    /// first flag) is in the node's ipset `NAME`. hash:ip and hash:net have one dimension,
    /// so the kernel reads only the first flag (`ip4addrptr(skb, opt->flags &
    /// IPSET_DIM_ONE_SRC)`); further flags are kept and printed but do not change the test.
    Set {
        /// The set's name; empty until `--match-set` is read.
        name: String,
        /// The flags, in order.
        dirs: Vec<SetDir>,
        /// `!` before `--match-set`.
        negated: bool,
    },
}

impl Match {
    fn matches(&self, pkt: &Packet, sets: &IpSets) -> bool {
        match self {
            Match::Ports {
                proto,
                sport,
                dport,
            } => {
                pkt.proto == *proto
                    && sport.is_none_or(|(r, n)| r.contains(pkt.sport) != n)
                    && dport.is_none_or(|(r, n)| r.contains(pkt.dport) != n)
            }
            Match::Multiport {
                dir,
                ports,
                negated,
            } => {
                let hit = |p: u16| ports.iter().any(|r| r.contains(p));
                let inside = match dir {
                    Some(PortDir::Src) => hit(pkt.sport),
                    Some(PortDir::Dst) | None => hit(pkt.dport),
                    Some(PortDir::Either) => hit(pkt.sport) || hit(pkt.dport),
                };
                pkt.proto.has_ports() && inside != *negated
            }
            Match::Comment(_) => true,
            Match::Mark { mark, negated } => {
                let (v, m) = mark.unwrap_or((0, 0));
                ((pkt.mark & m) == v) != *negated
            }
            Match::AddrType { src, dst } => {
                // Only `--dst-type LOCAL` gets here (the rest is unmodelled).
                src.is_none() && dst.as_ref().is_none_or(|(_, n)| pkt.dst_local != *n)
            }
            Match::CtState {
                states, negated, ..
            } => states.iter().any(|s| s == "NEW") != *negated,
            Match::Set {
                name,
                dirs,
                negated,
            } => {
                // A missing set (or one of the other family) never matches, negated or not:
                // the kernel would not hold the rule (the walk notes it).
                let Some(set) = sets.get(name) else {
                    return false;
                };
                if set.family() != Family::of(&pkt.src) {
                    return false;
                }
                let addr = match dirs.first() {
                    Some(SetDir::Dst) => pkt.dst,
                    Some(SetDir::Src) | None => pkt.src,
                };
                set.contains(addr) != *negated
            }
        }
    }

    fn render(&self, out: &mut String) {
        sep(out);
        let neg = |out: &mut String, n: bool| {
            if n {
                out.push_str("! ");
            }
        };
        match self {
            Match::Ports {
                proto,
                sport,
                dport,
            } => {
                out.push_str(match proto {
                    L4::Tcp => "-m tcp",
                    L4::Udp => "-m udp",
                    L4::Sctp => "-m sctp",
                    L4::Icmp => "-m icmp",
                });
                for (flag, p) in [("--sport ", sport), ("--dport ", dport)] {
                    if let Some((r, n)) = p {
                        out.push(' ');
                        neg(out, *n);
                        out.push_str(flag);
                        r.render(out);
                    }
                }
            }
            Match::Multiport {
                dir,
                ports,
                negated,
            } => {
                out.push_str("-m multiport ");
                neg(out, *negated);
                out.push_str(match dir {
                    Some(PortDir::Src) => "--sports ",
                    Some(PortDir::Dst) | None => "--dports ",
                    Some(PortDir::Either) => "--ports ",
                });
                for (i, r) in ports.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    r.render(out);
                }
            }
            Match::Comment(c) => {
                out.push_str("-m comment --comment ");
                out.push_str(&ipt_quote(c.as_deref().unwrap_or_default()));
            }
            Match::Mark { mark, negated } => {
                out.push_str("-m mark ");
                neg(out, *negated);
                let (v, m) = mark.unwrap_or((0, 0));
                out.push_str(&format!("--mark {v:#x}"));
                if m != u32::MAX {
                    out.push_str(&format!("/{m:#x}"));
                }
            }
            Match::AddrType { src, dst } => {
                out.push_str("-m addrtype");
                for (flag, t) in [("--src-type ", src), ("--dst-type ", dst)] {
                    if let Some((t, n)) = t {
                        out.push(' ');
                        neg(out, *n);
                        out.push_str(flag);
                        out.push_str(t);
                    }
                }
            }
            Match::CtState {
                module,
                states,
                negated,
            } => {
                out.push_str("-m ");
                out.push_str(module);
                out.push(' ');
                neg(out, *negated);
                out.push_str(if *module == "state" {
                    "--state "
                } else {
                    "--ctstate "
                });
                out.push_str(&states.join(","));
            }
            Match::Set {
                name,
                dirs,
                negated,
            } => {
                out.push_str("-m set ");
                neg(out, *negated);
                out.push_str("--match-set ");
                out.push_str(name);
                for (i, d) in dirs.iter().enumerate() {
                    out.push(if i == 0 { ' ' } else { ',' });
                    out.push_str(d.name());
                }
            }
        }
    }
}

/// What a rule does when it matches (`-j TARGET [options]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Target {
    /// No `-j`: the rule only counts, and the walk goes on.
    #[default]
    None,
    /// `ACCEPT`: the table lets the packet through.
    Accept,
    /// `DROP`.
    Drop,
    /// `RETURN`: back to the calling chain (in a built-in chain: its policy).
    Return,
    /// `MASQUERADE [--random-fully]`: SNAT to the outgoing interface's address.
    Masquerade {
        /// `--random-fully`.
        random_fully: bool,
    },
    /// `SNAT --to-source IP`.
    Snat(IpAddr),
    /// `DNAT --to-destination IP[:PORT]` (`[IP6]:PORT` for IPv6).
    Dnat(IpAddr, Option<u16>),
    /// `MARK --set-xmark VALUE/MASK`: `nfmark = (nfmark & !MASK) ^ VALUE`, then go on.
    /// `--set-mark V/M` is kept in this form, as libxt_MARK stores it (mask `M|V`).
    Mark {
        /// XOR value.
        value: u32,
        /// Bits cleared first.
        mask: u32,
    },
    /// `-j CHAIN`: a user-defined chain, returning here when it ends or RETURNs.
    Jump(String),
    /// `-g CHAIN` (`--goto`): continue in a user-defined chain without returning here;
    /// when it ends or RETURNs, processing continues in the chain that jumped (`-j`) to
    /// this one, or with the policy when this is the built-in chain (iptables(8)).
    Goto(String),
    /// A target the lab does not model (`REJECT`, `LOG`, …); the rule is unmodelled.
    Other(String),
}

impl Target {
    fn from_name(name: &str) -> Target {
        match name {
            "ACCEPT" => Target::Accept,
            "DROP" => Target::Drop,
            "RETURN" => Target::Return,
            "MASQUERADE" => Target::Masquerade {
                random_fully: false,
            },
            // Options are required; filled in by the parser.
            "SNAT" => Target::Snat(IpAddr::from([0, 0, 0, 0])),
            "DNAT" => Target::Dnat(IpAddr::from([0, 0, 0, 0]), None),
            "MARK" => Target::Mark { value: 0, mask: 0 },
            "REJECT" | "LOG" | "NFLOG" | "TRACE" | "CT" | "NOTRACK" | "REDIRECT" | "NETMAP"
            | "TPROXY" | "CONNMARK" | "TCPMSS" | "QUEUE" | "NFQUEUE" | "AUDIT" | "CHECKSUM"
            | "CLASSIFY" | "DSCP" | "TOS" | "TTL" | "HL" | "SET" | "TEE" => {
                Target::Other(name.to_string())
            }
            _ => Target::Jump(name.to_string()),
        }
    }

    fn render(&self, out: &mut String) {
        let word = match self {
            Target::None => return,
            Target::Accept => "ACCEPT".to_string(),
            Target::Drop => "DROP".to_string(),
            Target::Return => "RETURN".to_string(),
            Target::Masquerade { random_fully } => {
                if *random_fully {
                    "MASQUERADE --random-fully".to_string()
                } else {
                    "MASQUERADE".to_string()
                }
            }
            Target::Snat(ip) => format!("SNAT --to-source {ip}"),
            Target::Dnat(ip, port) => match (ip, port) {
                (IpAddr::V6(a), Some(p)) => format!("DNAT --to-destination [{a}]:{p}"),
                (a, Some(p)) => format!("DNAT --to-destination {a}:{p}"),
                (a, None) => format!("DNAT --to-destination {a}"),
            },
            Target::Mark { value, mask } => format!("MARK --set-xmark {value:#x}/{mask:#x}"),
            Target::Goto(c) => {
                sep(out);
                out.push_str("-g ");
                out.push_str(c);
                return;
            }
            Target::Jump(c) | Target::Other(c) => c.clone(),
        };
        sep(out);
        out.push_str("-j ");
        out.push_str(&word);
    }
}

/// One rule parsed: the matches (all must hold) and the target. Built once when the rule is
/// stored, so evaluation never reads text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleSpec {
    /// `[!] -s`.
    pub src: Option<AddrMatch>,
    /// `[!] -d`.
    pub dst: Option<AddrMatch>,
    /// `[!] -i`.
    pub iif: Option<IfaceMatch>,
    /// `[!] -o`.
    pub oif: Option<IfaceMatch>,
    /// `[!] -p`.
    pub proto: Option<ProtoMatch>,
    /// `-m …` matches in order.
    pub matches: Vec<Match>,
    /// `-j …`.
    pub target: Target,
    /// Why the lab cannot evaluate this rule (the first thing it does not model), if so.
    /// Such a rule never matches.
    pub unmodelled: Option<String>,
}

/// Jumps deeper than this end the walk (the kernel refuses a table with a loop when it is
/// loaded; the lab's tables are written piecemeal, so the walk guards itself).
pub(crate) const MAX_JUMP_DEPTH: usize = 64;

/// Rules looked at in one walk before it gives up (a loop-free table can still fan out).
pub(crate) const MAX_STEPS: usize = 100_000;

impl RuleSpec {
    /// Parse the text after `-A CHAIN` (as `iptables -S` prints it, or as a writer passes
    /// it). Never fails: what is not understood lands in [`RuleSpec::unmodelled`].
    pub fn parse(text: &str) -> RuleSpec {
        let (toks, quote_err) = tokenize(text);
        let mut p = Parser {
            toks,
            i: 0,
            spec: RuleSpec::default(),
            target_args: false,
        };
        if let Some(e) = quote_err {
            p.unmodelled(e);
        }
        p.run();
        p.finish()
    }

    /// Parse a rule given as words (a command line split as a shell splits it): each word
    /// that needs it quoted again, then [`RuleSpec::parse`], so `--comment "flanneld masq"`
    /// typed reads as the rule stored.
    pub fn parse_words(words: &[String]) -> RuleSpec {
        let text = words
            .iter()
            .map(|w| {
                if !w.is_empty()
                    && !w.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\')
                {
                    w.clone()
                } else {
                    let mut q = String::from('"');
                    for c in w.chars() {
                        if c == '"' || c == '\\' {
                            q.push('\\');
                        }
                        q.push(c);
                    }
                    q.push('"');
                    q
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        RuleSpec::parse(&text)
    }

    /// The user chain this rule jumps or goes to (`-j CHAIN` or `-g CHAIN`), if any: both
    /// reference the chain (deleting it deletes the rule, see [`XtTable::delete_chain`]).
    pub(crate) fn jump_chain(&self) -> Option<&str> {
        match &self.target {
            Target::Jump(c) | Target::Goto(c) => Some(c),
            _ => None,
        }
    }

    /// The ipsets this rule's `-m set` matches name.
    pub(crate) fn set_names(&self) -> impl Iterator<Item = &str> {
        self.matches.iter().filter_map(|m| match m {
            Match::Set { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }

    /// Whether every match holds for `pkt` (false for an unmodelled rule), with no ipsets:
    /// a `-m set` match never holds. [`RuleSpec::matches_with`] takes the node's sets.
    pub fn matches(&self, pkt: &Packet) -> bool {
        self.matches_with(pkt, &NO_SETS)
    }

    /// Whether every match holds for `pkt`, `-m set` testing `sets`.
    pub(crate) fn matches_with(&self, pkt: &Packet, sets: &IpSets) -> bool {
        if self.unmodelled.is_some() {
            return false;
        }
        self.src.as_ref().is_none_or(|m| m.matches(&pkt.src))
            && self.dst.as_ref().is_none_or(|m| m.matches(&pkt.dst))
            && self
                .iif
                .as_ref()
                .is_none_or(|m| m.matches(pkt.iif.as_deref()))
            && self
                .oif
                .as_ref()
                .is_none_or(|m| m.matches(pkt.oif.as_deref()))
            && self
                .proto
                .as_ref()
                .is_none_or(|m| (m.proto == pkt.proto) != m.negated)
            && self.matches.iter().all(|m| m.matches(pkt, sets))
    }

    /// The rule in `iptables -S` form (without `-A CHAIN`): `-s`, `-d`, `-i`, `-o`, `-p`,
    /// the matches in order, then `-j`. For the text the lab writes this is the text it
    /// was parsed from.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (flag, a) in [("-s ", &self.src), ("-d ", &self.dst)] {
            if let Some(a) = a {
                sep(&mut out);
                if a.negated {
                    out.push_str("! ");
                }
                out.push_str(flag);
                out.push_str(&a.net.to_string());
            }
        }
        if let Some(i) = &self.iif {
            i.render(&mut out, "-i");
        }
        if let Some(o) = &self.oif {
            o.render(&mut out, "-o");
        }
        if let Some(p) = &self.proto {
            sep(&mut out);
            if p.negated {
                out.push_str("! ");
            }
            out.push_str("-p ");
            out.push_str(&p.name);
        }
        for m in &self.matches {
            m.render(&mut out);
        }
        self.target.render(&mut out);
        out
    }
}

fn sep(out: &mut String) {
    if !out.is_empty() {
        out.push(' ');
    }
}

/// Split rule text into words as a shell would for iptables: spaces separate, a double
/// quote runs to the next unescaped one, `\x` is `x` (how `xtables_save_string` escapes `"`
/// and `\`). An unterminated quote runs to the end and is reported.
fn tokenize(text: &str) -> (Vec<Word>, Option<String>) {
    let mut toks = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                in_word = true;
                was_quoted = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '"' => {
                in_word = true;
                was_quoted = true;
                quoted = !quoted;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    toks.push(Word {
                        text: std::mem::take(&mut cur),
                        quoted: std::mem::take(&mut was_quoted),
                    });
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        toks.push(Word {
            text: cur,
            quoted: was_quoted,
        });
    }
    let err = quoted.then(|| "an unterminated quote".to_string());
    (toks, err)
}

/// One word of rule text; a quoted (or escaped) word is always a value, never `!` or an
/// option (`--comment "!"`).
struct Word {
    text: String,
    quoted: bool,
}

impl Word {
    /// The word is this option or `!` (unquoted).
    fn is(&self, word: &str) -> bool {
        !self.quoted && self.text == word
    }

    /// The word is an option or `!` (unquoted, starting with `-`).
    fn is_option(&self) -> bool {
        !self.quoted && (self.text.starts_with('-') || self.text == "!")
    }
}

struct Parser {
    toks: Vec<Word>,
    i: usize,
    spec: RuleSpec,
    /// The target's required option was read.
    target_args: bool,
}

impl Parser {
    fn unmodelled(&mut self, why: impl Into<String>) {
        if self.spec.unmodelled.is_none() {
            self.spec.unmodelled = Some(why.into());
        }
    }

    fn next(&mut self) -> Option<(String, bool)> {
        let t = self.toks.get(self.i).map(|w| (w.text.clone(), w.quoted));
        if t.is_some() {
            self.i += 1;
        }
        t
    }

    /// The value of option `opt`, or a note that it is missing.
    fn value(&mut self, opt: &str) -> Option<String> {
        match self.toks.get(self.i) {
            // An empty word (`""`, a lone `\`) is no value: iptables refuses it too.
            Some(v) if !v.is("!") && !v.text.is_empty() => {
                let v = v.text.clone();
                self.i += 1;
                // Only a comment's text may hold spaces; addresses, names, ports, marks
                // and chain names never do, and `iptables -S` would not quote them.
                if opt != "--comment" && v.chars().any(char::is_whitespace) {
                    self.unmodelled(format!("{opt} {v:?}: a value with spaces"));
                    return None;
                }
                Some(v)
            }
            _ => {
                self.unmodelled(format!("{opt} without a value"));
                None
            }
        }
    }

    /// Skip the values of an option the parser does not know.
    fn skip_values(&mut self) {
        while let Some(t) = self.toks.get(self.i) {
            if t.is_option() {
                break;
            }
            self.i += 1;
        }
    }

    /// The most recent match the option `opt` can belong to (`pick` says which), or a note.
    fn last_match(&mut self, opt: &str, pick: fn(&Match) -> bool) -> Option<usize> {
        let found = self.spec.matches.iter().rposition(pick);
        if found.is_none() {
            self.unmodelled(format!("{opt} without the match module it belongs to"));
        }
        found
    }

    fn run(&mut self) {
        let mut neg = false;
        while let Some((tok, quoted)) = self.next() {
            if quoted {
                self.unmodelled(format!("the word {tok:?}"));
                continue;
            }
            if tok == "!" {
                if neg {
                    self.unmodelled("a doubled `!`");
                }
                neg = true;
                continue;
            }
            let n = std::mem::take(&mut neg);
            self.option(&tok, n);
        }
        if neg {
            self.unmodelled("a `!` before nothing");
        }
    }

    fn option(&mut self, tok: &str, neg: bool) {
        match tok {
            "-s" | "--source" | "--src" | "-d" | "--destination" | "--dst" => {
                let Some(v) = self.value(tok) else { return };
                let is_src = tok.starts_with("-s") || tok == "--source" || tok == "--src";
                let slot_taken = if is_src {
                    self.spec.src.is_some()
                } else {
                    self.spec.dst.is_some()
                };
                if slot_taken {
                    self.unmodelled(format!("{tok} given twice"));
                    return;
                }
                match parse_addr(&v) {
                    Some(net) => {
                        let m = Some(AddrMatch { net, negated: neg });
                        if is_src {
                            self.spec.src = m;
                        } else {
                            self.spec.dst = m;
                        }
                    }
                    None => self.unmodelled(format!("the address {v:?}")),
                }
            }
            "-i" | "--in-interface" | "-o" | "--out-interface" => {
                let Some(v) = self.value(tok) else { return };
                // An interface name has no whitespace (the kernel's dev_valid_name).
                if v.chars().any(char::is_whitespace) {
                    self.unmodelled(format!("{tok} {v:?} is not an interface name"));
                    return;
                }
                let (name, wildcard) = match v.strip_suffix('+') {
                    Some(n) => (n.to_string(), true),
                    None => (v.clone(), false),
                };
                let m = Some(IfaceMatch {
                    name,
                    wildcard,
                    negated: neg,
                });
                if tok.starts_with("-i") || tok == "--in-interface" {
                    self.spec.iif = m;
                } else {
                    self.spec.oif = m;
                }
            }
            "-p" | "--protocol" => {
                let Some(v) = self.value(tok) else { return };
                if v.eq_ignore_ascii_case("all") || v == "0" {
                    return;
                }
                match L4::from_name(&v) {
                    Some(proto) => {
                        self.spec.proto = Some(ProtoMatch {
                            proto,
                            name: v,
                            negated: neg,
                        })
                    }
                    None => self.unmodelled(format!("the protocol {v:?}")),
                }
            }
            "-m" | "--match" => {
                if neg {
                    self.unmodelled("`!` before -m");
                }
                let Some(v) = self.value(tok) else { return };
                let m = match v.as_str() {
                    "tcp" => Match::Ports {
                        proto: L4::Tcp,
                        sport: None,
                        dport: None,
                    },
                    "udp" => Match::Ports {
                        proto: L4::Udp,
                        sport: None,
                        dport: None,
                    },
                    "sctp" => Match::Ports {
                        proto: L4::Sctp,
                        sport: None,
                        dport: None,
                    },
                    "multiport" => Match::Multiport {
                        dir: None,
                        ports: Vec::new(),
                        negated: false,
                    },
                    "comment" => Match::Comment(None),
                    "mark" => Match::Mark {
                        mark: None,
                        negated: false,
                    },
                    "addrtype" => Match::AddrType {
                        src: None,
                        dst: None,
                    },
                    "conntrack" | "state" => Match::CtState {
                        module: if v == "state" { "state" } else { "conntrack" },
                        states: Vec::new(),
                        negated: false,
                    },
                    "set" => Match::Set {
                        name: String::new(),
                        dirs: Vec::new(),
                        negated: false,
                    },
                    other => {
                        self.unmodelled(format!("the match -m {other}"));
                        // Its options follow; skip them up to the next known option.
                        self.skip_unknown_module_options();
                        return;
                    }
                };
                self.spec.matches.push(m);
            }
            "-j" | "--jump" | "-g" | "--goto" => {
                if neg {
                    self.unmodelled(format!("`!` before {tok}"));
                }
                let Some(v) = self.value(tok) else { return };
                if self.spec.target != Target::None {
                    self.unmodelled("two targets");
                    return;
                }
                let mut t = Target::from_name(&v);
                if tok == "-g" || tok == "--goto" {
                    match t {
                        Target::Jump(c) => t = Target::Goto(c),
                        // iptables: "Chain 'ACCEPT' does not exist".
                        _ => self.unmodelled(format!("{tok} {v}: not a chain")),
                    }
                } else if let Target::Other(name) = &t {
                    self.unmodelled(format!("the target {name}"));
                }
                self.spec.target = t;
            }
            "--sport" | "--source-port" | "--dport" | "--destination-port" => {
                let Some(v) = self.value(tok) else { return };
                let Some(range) = parse_port_range(&v) else {
                    self.unmodelled(format!("the port {v:?}"));
                    return;
                };
                let src = tok == "--sport" || tok == "--source-port";
                let idx = match self
                    .spec
                    .matches
                    .iter()
                    .rposition(|m| matches!(m, Match::Ports { .. }))
                {
                    Some(i) => i,
                    // `-p tcp --dport 80` loads the tcp match implicitly (iptables(8)).
                    None => match self.spec.proto.as_ref().map(|p| p.proto) {
                        Some(proto) if proto.has_ports() => {
                            self.spec.matches.push(Match::Ports {
                                proto,
                                sport: None,
                                dport: None,
                            });
                            self.spec.matches.len() - 1
                        }
                        _ => {
                            self.unmodelled(format!("{tok} without -p tcp, udp or sctp"));
                            return;
                        }
                    },
                };
                if let Some(Match::Ports { sport, dport, .. }) = self.spec.matches.get_mut(idx) {
                    let slot = if src { sport } else { dport };
                    if slot.is_some() {
                        self.spec
                            .unmodelled
                            .get_or_insert(format!("{tok} given twice"));
                    } else {
                        *slot = Some((range, neg));
                    }
                }
            }
            "--dports" | "--destination-ports" | "--sports" | "--source-ports" | "--ports" => {
                let Some(v) = self.value(tok) else { return };
                let Some(i) = self.last_match(tok, |m| matches!(m, Match::Multiport { .. })) else {
                    return;
                };
                let list: Option<Vec<PortRange>> = v.split(',').map(parse_port_range).collect();
                let Some(list) = list.filter(|l| !l.is_empty() && l.len() <= 15) else {
                    self.unmodelled(format!("the port list {v:?}"));
                    return;
                };
                let d = match tok {
                    "--dports" | "--destination-ports" => PortDir::Dst,
                    "--sports" | "--source-ports" => PortDir::Src,
                    _ => PortDir::Either,
                };
                if !self
                    .spec
                    .proto
                    .as_ref()
                    .is_some_and(|p| p.proto.has_ports())
                {
                    self.unmodelled("multiport without -p tcp, udp or sctp");
                }
                if let Some(Match::Multiport {
                    dir,
                    ports,
                    negated,
                }) = self.spec.matches.get_mut(i)
                {
                    if dir.is_some() {
                        self.spec
                            .unmodelled
                            .get_or_insert("two multiport options".into());
                    } else {
                        *dir = Some(d);
                        *ports = list;
                        *negated = neg;
                    }
                }
            }
            "--comment" => {
                let Some(v) = self.value(tok) else { return };
                let Some(i) = self.last_match(tok, |m| matches!(m, Match::Comment(_))) else {
                    return;
                };
                if neg {
                    self.unmodelled("`!` before --comment");
                }
                if let Some(Match::Comment(c)) = self.spec.matches.get_mut(i) {
                    *c = Some(v.into());
                }
            }
            "--mark" => {
                let Some(v) = self.value(tok) else { return };
                let Some(i) = self.last_match(tok, |m| matches!(m, Match::Mark { .. })) else {
                    return;
                };
                let Some(vm) = parse_value_mask(&v) else {
                    self.unmodelled(format!("the mark {v:?}"));
                    return;
                };
                if let Some(Match::Mark { mark, negated }) = self.spec.matches.get_mut(i) {
                    *mark = Some(vm);
                    *negated = neg;
                }
            }
            "--src-type" | "--dst-type" => {
                let Some(v) = self.value(tok) else { return };
                let Some(i) = self.last_match(tok, |m| matches!(m, Match::AddrType { .. })) else {
                    return;
                };
                if tok == "--src-type" || v != "LOCAL" {
                    self.unmodelled(format!("-m addrtype {tok} {v}"));
                }
                if let Some(Match::AddrType { src, dst }) = self.spec.matches.get_mut(i) {
                    let slot = if tok == "--src-type" { src } else { dst };
                    *slot = Some((v, neg));
                }
            }
            "--ctstate" | "--state" => {
                let Some(v) = self.value(tok) else { return };
                let want = if tok == "--state" {
                    "state"
                } else {
                    "conntrack"
                };
                let Some(i) = self.last_match(
                    tok,
                    if want == "state" {
                        |m| {
                            matches!(
                                m,
                                Match::CtState {
                                    module: "state",
                                    ..
                                }
                            )
                        }
                    } else {
                        |m| {
                            matches!(
                                m,
                                Match::CtState {
                                    module: "conntrack",
                                    ..
                                }
                            )
                        }
                    },
                ) else {
                    return;
                };
                const KNOWN: [&str; 7] = [
                    "INVALID",
                    "NEW",
                    "ESTABLISHED",
                    "RELATED",
                    "UNTRACKED",
                    "SNAT",
                    "DNAT",
                ];
                let list: Vec<String> = v.split(',').map(str::to_ascii_uppercase).collect();
                if list.iter().any(|s| !KNOWN.contains(&s.as_str())) {
                    self.unmodelled(format!("the state list {v:?}"));
                }
                if let Some(Match::CtState {
                    states, negated, ..
                }) = self.spec.matches.get_mut(i)
                {
                    *states = list;
                    *negated = neg;
                }
            }
            "--match-set" => self.match_set(tok, neg),
            "--random-fully" | "--to-source" | "--to-destination" | "--set-xmark"
            | "--set-mark" => self.target_option(tok, neg),
            other if other.starts_with('-') => {
                self.unmodelled(format!("the option {other}"));
                self.skip_values();
            }
            other => self.unmodelled(format!("the word {other:?}")),
        }
    }

    /// `[!] --match-set NAME src|dst[,…]` of the latest `-m set` (libxt_set's checks).
    fn match_set(&mut self, tok: &str, neg: bool) {
        let Some(set_name) = self.value(tok) else {
            return;
        };
        let Some(flags) = self.value(tok) else { return };
        let Some(i) = self.last_match(tok, |m| matches!(m, Match::Set { .. })) else {
            return;
        };
        if set_name.len() > crate::cni::ipset::MAX_NAME_LEN {
            self.unmodelled(format!(
                "setname `{set_name}' too long, max {} characters",
                crate::cni::ipset::MAX_NAME_LEN
            ));
            return;
        }
        let list: Option<Vec<SetDir>> = flags
            .split(',')
            .map(|f| match f {
                "src" => Some(SetDir::Src),
                "dst" => Some(SetDir::Dst),
                _ => None,
            })
            .collect();
        let Some(list) = list else {
            self.unmodelled(format!(
                "--match-set flags {flags:?} (src or dst, comma separated)"
            ));
            return;
        };
        if list.len() > MAX_SET_DIMS {
            self.unmodelled(format!(
                "Can't be more src/dst options than {MAX_SET_DIMS}."
            ));
            return;
        }
        if let Some(Match::Set {
            name,
            dirs,
            negated,
        }) = self.spec.matches.get_mut(i)
        {
            if !name.is_empty() {
                self.spec
                    .unmodelled
                    .get_or_insert("--match-set can be specified only once".into());
            } else {
                *name = set_name;
                *dirs = list;
                *negated = neg;
            }
        }
    }

    /// After an unknown `-m X`: skip its options, stopping at an option this parser knows
    /// belongs elsewhere (`-j`, `-m`, …) so the target is still found.
    fn skip_unknown_module_options(&mut self) {
        while let Some(t) = self.toks.get(self.i) {
            if !t.quoted
                && matches!(
                    t.text.as_str(),
                    "-j" | "--jump"
                        | "-g"
                        | "--goto"
                        | "-m"
                        | "--match"
                        | "-s"
                        | "-d"
                        | "-i"
                        | "-o"
                        | "-p"
                )
            {
                break;
            }
            self.i += 1;
        }
    }

    fn target_option(&mut self, tok: &str, neg: bool) {
        if neg {
            self.unmodelled(format!("`!` before {tok}"));
        }
        let value = if tok == "--random-fully" {
            String::new()
        } else {
            match self.value(tok) {
                Some(v) => v,
                None => return,
            }
        };
        let target = std::mem::take(&mut self.spec.target);
        let set = match (&target, tok) {
            (Target::Masquerade { .. }, "--random-fully") => {
                Some(Target::Masquerade { random_fully: true })
            }
            (Target::Snat(_), "--to-source") => value.parse::<IpAddr>().ok().map(Target::Snat),
            (Target::Dnat(..), "--to-destination") => {
                parse_ip_port(&value).map(|(a, p)| Target::Dnat(a, p))
            }
            (Target::Mark { .. }, "--set-xmark" | "--set-mark") => {
                parse_value_mask(&value).map(|(v, m)| Target::Mark {
                    value: v,
                    // libxt_MARK: --set-mark V/M is stored as xmark V/(M|V).
                    mask: if tok == "--set-mark" { m | v } else { m },
                })
            }
            _ => {
                self.spec.target = target;
                self.unmodelled(format!("{tok} for this target"));
                return;
            }
        };
        match set {
            Some(t) => {
                self.spec.target = t;
                self.target_args = true;
            }
            None => {
                self.spec.target = target;
                self.unmodelled(format!("{tok} {value}"));
            }
        }
    }

    fn finish(mut self) -> RuleSpec {
        // Targets that need an option, and matches that need one, without it.
        let missing = match &self.spec.target {
            Target::Snat(_) if !self.target_args => Some("SNAT without --to-source"),
            Target::Dnat(..) if !self.target_args => Some("DNAT without --to-destination"),
            Target::Mark { .. } if !self.target_args => Some("MARK without --set-xmark"),
            _ => None,
        };
        if let Some(m) = missing {
            self.unmodelled(m);
        }
        let incomplete = self.spec.matches.iter().find_map(|m| match m {
            Match::Ports {
                sport: None,
                dport: None,
                ..
            } => None, // `-m tcp` alone: any port
            Match::Multiport { dir: None, .. } => Some("-m multiport without ports"),
            Match::Comment(None) => Some("-m comment without --comment"),
            Match::Mark { mark: None, .. } => Some("-m mark without --mark"),
            Match::AddrType {
                src: None,
                dst: None,
            } => Some("-m addrtype without a type"),
            Match::CtState { states, .. } if states.is_empty() => {
                Some("a state match without states")
            }
            Match::Set { name, .. } if name.is_empty() => Some("-m set without --match-set"),
            _ => None,
        });
        if let Some(m) = incomplete {
            self.unmodelled(m);
        }
        // A tcp/udp/sctp match needs the same -p (iptables: "unknown option --dport").
        let proto = self.spec.proto.as_ref().map(|p| p.proto);
        if self
            .spec
            .matches
            .iter()
            .any(|m| matches!(m, Match::Ports { proto: mp, .. } if Some(*mp) != proto))
        {
            self.unmodelled("a port match whose protocol -p does not name");
        }
        self.spec
    }
}

/// `ADDR[/PREFIX]` masked to its network; a bare address is a host route.
fn parse_addr(s: &str) -> Option<IpNet> {
    if let Ok(n) = s.parse::<IpNet>() {
        return Some(n.trunc());
    }
    s.parse::<IpAddr>().ok().map(IpNet::from)
}

/// `P` or `LO:HI` (an empty side is 0 or 65535, as libxtables reads it).
fn parse_port_range(s: &str) -> Option<PortRange> {
    let num = |t: &str, dflt: u16| -> Option<u16> {
        if t.is_empty() {
            Some(dflt)
        } else if t.bytes().all(|b| b.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (lo, hi) = match s.split_once(':') {
        Some((a, b)) => (num(a, 0)?, num(b, u16::MAX)?),
        None if !s.is_empty() => {
            let p = num(s, 0)?;
            (p, p)
        }
        None => return None,
    };
    (lo <= hi).then_some(PortRange { lo, hi })
}

/// A mark number, hex (`0x…`) or decimal.
fn parse_u32(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) if !h.is_empty() => u32::from_str_radix(h, 16).ok(),
        Some(_) => None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// `VALUE[/MASK]`; the mask defaults to all ones.
fn parse_value_mask(s: &str) -> Option<(u32, u32)> {
    match s.split_once('/') {
        Some((v, m)) => Some((parse_u32(v)?, parse_u32(m)?)),
        None => Some((parse_u32(s)?, u32::MAX)),
    }
}

/// `IP`, `IP:PORT`, `IP6`, `[IP6]` or `[IP6]:PORT` (`--to-destination`; ranges are not
/// modelled).
fn parse_ip_port(s: &str) -> Option<(IpAddr, Option<u16>)> {
    let port = |p: &str| -> Option<u16> {
        if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse().ok()
        } else {
            None
        }
    };
    if let Some(rest) = s.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let a: IpAddr = addr.parse().ok()?;
        return match after.strip_prefix(':') {
            Some(p) => Some((a, Some(port(p)?))),
            None if after.is_empty() => Some((a, None)),
            None => None,
        };
    }
    if let Ok(a) = s.parse::<IpAddr>() {
        return Some((a, None));
    }
    let (addr, p) = s.rsplit_once(':')?;
    let a: std::net::Ipv4Addr = addr.parse().ok()?;
    Some((IpAddr::V4(a), Some(port(p)?)))
}

// ---------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------

/// One stored rule: the text (after `-A CHAIN`) exactly as written, and its parsed form.
/// Both are shared: a writer that programs the same rule on many nodes (flanneld's
/// FLANNEL-FWD rules on every node) stores one copy of each (cloning is two reference
/// counts).
#[derive(Debug, Clone)]
pub struct XtRule {
    text: Arc<str>,
    spec: Arc<RuleSpec>,
}

impl XtRule {
    /// Parse `text` once.
    pub fn new(text: impl Into<String>) -> Self {
        let text: String = text.into();
        let spec = RuleSpec::parse(&text);
        XtRule {
            text: Arc::from(text),
            spec: Arc::new(spec),
        }
    }

    /// A rule whose parsed form the writer already has: `spec` must be what
    /// [`RuleSpec::parse`] gives for `text` (checked in debug builds, so every test that
    /// writes such a rule checks it). For a writer that programs one rule shape many times
    /// and derives each spec from one parse (see `crate::netd::flannel`).
    pub(crate) fn with_spec(text: &str, spec: RuleSpec) -> Self {
        debug_assert_eq!(
            RuleSpec::parse(text),
            spec,
            "the spec given for {text:?} is not its parse"
        );
        XtRule {
            text: Arc::from(text),
            spec: Arc::new(spec),
        }
    }

    /// The rule text after `-A CHAIN`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parsed form.
    pub fn spec(&self) -> &RuleSpec {
        &self.spec
    }
}

impl PartialEq for XtRule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for XtRule {}

impl PartialEq<str> for XtRule {
    fn eq(&self, other: &str) -> bool {
        &*self.text == other
    }
}

impl PartialEq<&str> for XtRule {
    fn eq(&self, other: &&str) -> bool {
        &*self.text == *other
    }
}

impl PartialEq<String> for XtRule {
    fn eq(&self, other: &String) -> bool {
        *self.text == **other
    }
}

impl fmt::Display for XtRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One iptables table of one family (`iptables -t nat`, `ip6tables -t filter`, …): the
/// built-in chains with their policies, user chains, and the rules of each in order.
#[derive(Debug, Clone)]
pub struct XtTable {
    kind: TableKind,
    /// Policies of the built-in chains, in [`TableKind::builtin_chains`] order (the slots
    /// past a table's built-ins stay ACCEPT and are never read).
    policies: [Policy; MAX_BUILTINS],
    /// Chains by name; the built-in ones always exist (named by their `&'static str`, so
    /// an empty table, which every node has four of, allocates no names). Shared until
    /// written ([`XtTable::chains_mut`]): every table starts as a handle on one empty table
    /// of its kind, and a node's ip6tables under an IPv4 network stay that handle.
    chains: Arc<BTreeMap<ChainName, Vec<XtRule>>>,
    /// For each chain some rule jumps to: the chains holding such rules, with how many.
    /// Deleting a chain then visits only those, instead of every rule of the table (which
    /// grows with the pods): usually none, since bridge and portmap delete their jump
    /// rules before the chain.
    referrers: Referrers,
}

/// A chain's name in an [`XtTable`]: a built-in's (or another fixed name's) borrowed, a
/// user chain's owned.
pub type ChainName = std::borrow::Cow<'static, str>;

/// The most built-in chains a table has (nat's four; filter has three).
const MAX_BUILTINS: usize = 4;

/// The jump index of an [`XtTable`]: (target chain, chain holding a rule that jumps or
/// goes to it, how many such rules), sorted by target then holder. A table holds few
/// jumps: flanneld's one, a few dozen under Calico, and at most one per pod for bridge's
/// ipMasq and portmap's per-pod chains (a node's podCIDR bounds its pods: a /24 holds 254),
/// so a sorted vector, whose insert moves at most a few kilobytes. The two levels of maps
/// it replaces took about 900 bytes per table for a single jump, on every node.
///
/// The names are the chains' own keys where the table holds those chains (a built-in's or
/// a fixed name's is borrowed: flanneld's jump costs no allocation on each node).
#[derive(Debug, Clone, Default)]
struct Referrers(Vec<(ChainName, ChainName, usize)>);

impl Referrers {
    fn find(&self, target: &str, from: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(t, f, _)| (t.as_ref(), f.as_ref()).cmp(&(target, from)))
    }

    /// One more rule in `from` jumps to `target`; `name` gives a chain's name as the table
    /// keeps it (its key when the chain exists).
    fn add(&mut self, target: &str, from: &str, name: impl Fn(&str) -> ChainName) {
        match self.find(target, from) {
            Ok(i) => self.0[i].2 += 1,
            Err(i) => self.0.insert(i, (name(target), name(from), 1)),
        }
    }

    /// One rule fewer in `from` jumps to `target`.
    fn remove(&mut self, target: &str, from: &str) {
        if let Ok(i) = self.find(target, from) {
            let n = &mut self.0[i].2;
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.0.remove(i);
            }
        }
    }

    /// The chains holding a rule that jumps to `target`, sorted.
    fn holders(&self, target: &str) -> Vec<ChainName> {
        let start = self.0.partition_point(|(t, ..)| t.as_ref() < target);
        self.0[start..]
            .iter()
            .take_while(|(t, ..)| t == target)
            .map(|(_, f, _)| f.clone())
            .collect()
    }

    /// Whether some rule jumps to `target`.
    #[cfg(test)]
    fn contains_key(&self, target: &str) -> bool {
        !self.holders(target).is_empty()
    }

    /// Whether no rule jumps anywhere.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for XtTable {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.policies == other.policies && self.chains == other.chains
    }
}

impl Eq for XtTable {}

impl XtTable {
    /// An empty table: its built-in chains, policy ACCEPT, no rules. A handle on one made
    /// once per kind: every node has four, and the chains are copied only when the first
    /// rule or chain is written (see [`XtTable::chains_mut`]).
    pub fn new(kind: TableKind) -> Self {
        static EMPTY: [std::sync::OnceLock<XtTable>; 2] =
            [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
        let at = match kind {
            TableKind::Nat => 0,
            TableKind::Filter => 1,
        };
        let table = EMPTY[at].get_or_init(|| XtTable::build_empty(kind)).clone();
        debug_assert!(
            table.chains == XtTable::build_empty(kind).chains,
            "a copied empty table is an empty table"
        );
        table
    }

    /// An empty table, built chain by chain ([`XtTable::new`] copies one).
    fn build_empty(kind: TableKind) -> Self {
        let mut chains = BTreeMap::new();
        for c in kind.builtin_chains() {
            chains.insert(ChainName::Borrowed(*c), Vec::new());
        }
        debug_assert!(kind.builtin_chains().len() <= MAX_BUILTINS);
        XtTable {
            kind,
            policies: [Policy::Accept; MAX_BUILTINS],
            chains: Arc::new(chains),
            referrers: Referrers::default(),
        }
    }

    /// The chains, to write: this table's own copy, made now if the table still shares
    /// them (with the empty table it started as, or with the table it was cloned from).
    fn chains_mut(&mut self) -> &mut BTreeMap<ChainName, Vec<XtRule>> {
        Arc::make_mut(&mut self.chains)
    }

    /// Whether the table is as [`XtTable::new`] makes it: its built-in chains only,
    /// none holding a rule, every policy ACCEPT.
    pub(crate) fn is_pristine(&self) -> bool {
        self.chains.len() == self.kind.builtin_chains().len()
            && self.chains.values().all(Vec::is_empty)
            && self.policies.iter().all(|p| *p == Policy::Accept)
    }

    /// Which table this is.
    pub fn kind(&self) -> TableKind {
        self.kind
    }

    /// The chains by name, each with its rules in order.
    pub fn chains(&self) -> &BTreeMap<ChainName, Vec<XtRule>> {
        &self.chains
    }

    /// The rules of `chain` (none if it does not exist).
    pub fn rules(&self, chain: &str) -> &[XtRule] {
        self.chains
            .get(chain)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Whether `chain` holds a rule with exactly this text (`iptables -C`).
    pub(crate) fn has_rule(&self, chain: &str, rule: &str) -> bool {
        self.rules(chain).iter().any(|r| &*r.text == rule)
    }

    /// The policy of a built-in chain.
    pub fn policy(&self, chain: &str) -> Option<Policy> {
        let i = self
            .kind
            .builtin_chains()
            .iter()
            .position(|c| *c == chain)?;
        self.policies.get(i).copied()
    }

    /// `iptables -P CHAIN POLICY`, with iptables' messages for a chain that is not built in
    /// and a policy other than ACCEPT or DROP.
    pub fn set_policy(&mut self, chain: &str, policy: &str) -> Result<(), String> {
        let Some(i) = self.kind.builtin_chains().iter().position(|c| *c == chain) else {
            return Err(format!(
                "iptables: Bad built-in chain name: {chain:?} is not a built-in chain of the {} table",
                self.kind
            ));
        };
        let p = match policy {
            "ACCEPT" => Policy::Accept,
            "DROP" => Policy::Drop,
            other => {
                return Err(format!(
                    "iptables: Bad policy name: {other:?} (a built-in chain's policy is ACCEPT or DROP)"
                ));
            }
        };
        if let Some(slot) = self.policies.get_mut(i) {
            *slot = p;
        }
        Ok(())
    }

    /// Ensure a chain exists (`iptables -N`, without the error when it does).
    pub fn ensure_chain(&mut self, chain: &str) {
        if !self.chains.contains_key(chain) {
            self.chains_mut()
                .insert(ChainName::Owned(chain.to_string()), Vec::new());
        }
    }

    /// [`XtTable::ensure_chain`] for a fixed name (a daemon's own chain): the table keeps
    /// the name borrowed.
    pub(crate) fn ensure_fixed_chain(&mut self, chain: &'static str) {
        if !self.chains.contains_key(chain) {
            self.chains_mut()
                .insert(ChainName::Borrowed(chain), Vec::new());
        }
    }

    /// Count `rule` (in `chain`) in or out of the jump index.
    fn index_rule(&mut self, chain: &str, rule: &XtRule, added: bool) {
        let Some(target) = rule.spec.jump_chain() else {
            return;
        };
        if added {
            let chains = &self.chains;
            self.referrers.add(target, chain, |name| {
                chains
                    .get_key_value(name)
                    .map_or_else(|| ChainName::Owned(name.to_string()), |(k, _)| k.clone())
            });
        } else {
            self.referrers.remove(target, chain);
        }
    }

    fn insert_unique(&mut self, chain: &str, rule: String, at_top: bool) {
        self.ensure_chain(chain);
        if self.has_rule(chain, &rule) {
            return;
        }
        self.insert_new(chain, XtRule::new(rule), at_top);
    }

    /// [`XtTable::append_unique`] for each of `rules` in turn, rules already parsed
    /// ([`XtRule::with_spec`], or clones of ones kept by their writer: no text is parsed),
    /// into the chain `chain` (created if missing, keeping its fixed name). What a daemon
    /// writing its own chain does (`iptables -N`, then `-C` and `-A` per rule).
    pub(crate) fn append_rules_unique(
        &mut self,
        chain: &'static str,
        rules: impl IntoIterator<Item = XtRule>,
    ) {
        self.ensure_fixed_chain(chain);
        let rules = rules.into_iter();
        if let Some(have) = self.chains_mut().get_mut(chain) {
            have.reserve(rules.size_hint().0);
        }
        for rule in rules {
            let held = self.chains.get(chain).is_some_and(|have| {
                have.iter()
                    .any(|r| Arc::ptr_eq(&r.text, &rule.text) || r.text == rule.text)
            });
            if !held {
                self.insert_new(chain, rule, false);
            }
        }
    }

    /// [`XtTable::append_rules_unique`] into a chain that holds no rules yet (a daemon's
    /// own chain, just created): the chain then holds `rules` in order, a rule whose text
    /// came earlier in `rules` left out, stored with one lookup of the chain instead of two
    /// per rule. A chain that holds rules gets [`XtTable::append_rules_unique`].
    pub(crate) fn fill_fixed_chain(
        &mut self,
        chain: &'static str,
        rules: impl IntoIterator<Item = XtRule>,
    ) {
        self.ensure_fixed_chain(chain);
        if !self.rules(chain).is_empty() {
            self.append_rules_unique(chain, rules);
            return;
        }
        let rules = rules.into_iter();
        let mut held: Vec<XtRule> = Vec::with_capacity(rules.size_hint().0);
        for rule in rules {
            if !held.iter().any(|r| r.text == rule.text) {
                self.index_rule(chain, &rule, true);
                held.push(rule);
            }
        }
        if let Some(slot) = self.chains_mut().get_mut(chain) {
            *slot = held;
        }
    }

    /// Store a rule the chain does not hold yet (the chain exists).
    fn insert_new(&mut self, chain: &str, rule: XtRule, at_top: bool) {
        self.index_rule(chain, &rule, true);
        if let Some(rules) = self.chains_mut().get_mut(chain) {
            if at_top {
                rules.insert(0, rule);
            } else {
                rules.push(rule);
            }
        }
    }

    /// Append a rule unless already present (`iptables -C` then `-A`).
    pub fn append_unique(&mut self, chain: &str, rule: impl Into<String>) {
        self.insert_unique(chain, rule.into(), false);
    }

    /// Append a rule even if the chain holds the same text already (`iptables -A`, or a
    /// chain written whole by `iptables-restore`: Felix repeats its "Return if profile
    /// accepted" rule after each profile).
    pub fn append(&mut self, chain: &str, rule: impl Into<String>) {
        self.ensure_chain(chain);
        let rule = XtRule::new(rule.into());
        self.index_rule(chain, &rule, true);
        if let Some(rules) = self.chains_mut().get_mut(chain) {
            rules.push(rule);
        }
    }

    /// Insert a rule at the top unless already present (`-I`).
    pub fn prepend_unique(&mut self, chain: &str, rule: impl Into<String>) {
        self.insert_unique(chain, rule.into(), true);
    }

    /// Delete every rule in `chain` whose text is `rule`.
    pub(crate) fn delete_rule(&mut self, chain: &str, rule: &str) {
        // Nothing to delete leaves shared chains shared.
        if !self.has_rule(chain, rule) {
            return;
        }
        let Some(rules) = self.chains_mut().get_mut(chain) else {
            return;
        };
        let mut removed = Vec::new();
        rules.retain(|r| {
            let keep = &*r.text != rule;
            if !keep {
                removed.push(r.clone());
            }
            keep
        });
        for r in removed {
            self.index_rule(chain, &r, false);
        }
    }

    /// Insert a rule at a position (`iptables -I CHAIN N`, 0-based here; past the end
    /// appends).
    pub(crate) fn insert_at(&mut self, chain: &str, index: usize, rule: impl Into<String>) {
        self.ensure_chain(chain);
        let rule = XtRule::new(rule.into());
        self.index_rule(chain, &rule, true);
        if let Some(rules) = self.chains_mut().get_mut(chain) {
            let at = index.min(rules.len());
            rules.insert(at, rule);
        }
    }

    /// Empty a chain, keeping it and the rules that jump to it (`iptables -F CHAIN`).
    pub(crate) fn flush_chain(&mut self, chain: &str) {
        if self.rules(chain).is_empty() {
            return;
        }
        let Some(rules) = self.chains_mut().get_mut(chain) else {
            return;
        };
        let rules = std::mem::take(rules);
        for rule in &rules {
            self.index_rule(chain, rule, false);
        }
    }

    /// Flush and delete a user chain, and every rule jumping to it. A built-in chain is
    /// only flushed (iptables refuses `-X` on one).
    pub(crate) fn delete_chain(&mut self, chain: &str) {
        self.flush_chain(chain);
        if self.kind.is_builtin(chain) {
            return;
        }
        // A chain that is not there, with no rule jumping to it, leaves shared chains
        // shared.
        if self.chains.contains_key(chain) {
            self.chains_mut().remove(chain);
        }
        for name in self.referrers.holders(chain) {
            let Some(rules) = self.chains_mut().get_mut(name.as_ref()) else {
                continue;
            };
            let mut removed = Vec::new();
            rules.retain(|r| {
                let keep = r.spec.jump_chain() != Some(chain);
                if !keep {
                    removed.push(r.clone());
                }
                keep
            });
            for r in removed {
                self.index_rule(&name, &r, false);
            }
        }
    }

    /// The user chains, sorted (as libiptc keeps them).
    fn user_chains(&self) -> impl Iterator<Item = &str> {
        self.chains
            .keys()
            .map(|c| c.as_ref())
            .filter(|c| !self.kind.is_builtin(c))
    }

    /// The chains in `iptables -S` order: built-ins in hook order, then user chains.
    fn chain_order(&self) -> impl Iterator<Item = &str> {
        self.kind
            .builtin_chains()
            .iter()
            .copied()
            .chain(self.user_chains())
    }

    /// The table as `iptables -t TABLE -S` prints it: the built-in chains' policies (in
    /// hook order), the user chains (sorted), then the rules chain by chain in that order.
    pub fn to_lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .kind
            .builtin_chains()
            .iter()
            .zip(&self.policies)
            .map(|(c, p)| format!("-P {c} {p}"))
            .collect();
        for name in self.user_chains() {
            out.push(format!("-N {name}"));
        }
        for name in self.chain_order() {
            for r in self.rules(name) {
                out.push(format!("-A {name} {}", r.text));
            }
        }
        out
    }

    /// The table as `iptables-restore` input (what `iptables-save` prints, counters zero):
    /// `*TABLE`, one `:CHAIN POLICY [0:0]` per chain (`-` for user chains), the rules,
    /// `COMMIT`.
    pub fn to_restore_lines(&self) -> Vec<String> {
        let mut out = vec![format!("*{}", self.kind)];
        for (c, p) in self.kind.builtin_chains().iter().zip(&self.policies) {
            out.push(format!(":{c} {p} [0:0]"));
        }
        for c in self.user_chains() {
            out.push(format!(":{c} - [0:0]"));
        }
        for name in self.chain_order() {
            for r in self.rules(name) {
                out.push(format!("-A {name} {}", r.text));
            }
        }
        out.push("COMMIT".into());
        out
    }

    /// Walk `pkt` through the table from the built-in chain `hook_chain`, as the kernel's
    /// `ipt_do_table` does (iptables(8) "TARGETS"): rules in order; a matching rule's target
    /// decides (ACCEPT, DROP, MASQUERADE, SNAT, DNAT), jumps to a user chain (a call stack),
    /// goes to one (`-g`: the current frame is replaced, so its end returns to the chain
    /// that jumped here), returns (RETURN, or the end of a user chain), or changes the mark
    /// and goes on (MARK). The end of the built-in chain, or a return to it, applies its
    /// policy.
    ///
    /// Rules the parser does not model are passed over (listed in
    /// [`Traversal::unmodelled`]). Jumps and gotos chained deeper than [`MAX_JUMP_DEPTH`] (a
    /// loop) or more than [`MAX_STEPS`] rules end the walk with DROP and
    /// [`Traversal::aborted`] saying why.
    ///
    /// No ipsets: a `-m set` rule is passed over as naming a missing set. The walker uses
    /// [`XtTable::traverse_with`] and the node's sets.
    pub fn traverse(&self, hook_chain: &str, pkt: &mut Packet) -> Traversal {
        self.traverse_with(hook_chain, pkt, &NO_SETS)
    }

    /// [`XtTable::traverse`], with `-m set` testing `sets` (the node's ipsets). A rule
    /// naming a set not in `sets`, or a set of the other family, never matches and is listed
    /// in [`Traversal::unmodelled`].
    pub(crate) fn traverse_with(
        &self,
        hook_chain: &str,
        pkt: &mut Packet,
        sets: &IpSets,
    ) -> Traversal {
        let mut t = Traversal {
            decision: Decision::Policy(Policy::Accept),
            decided_by: None,
            matched: Vec::new(),
            hits: Vec::new(),
            unmodelled: Vec::new(),
            aborted: None,
        };
        let (Some(policy), Some((hook, _))) = (
            self.policy(hook_chain),
            self.chains.get_key_value(hook_chain),
        ) else {
            t.aborted = Some(format!(
                "{hook_chain:?} is not a built-in chain of the {} table",
                self.kind
            ));
            return t;
        };
        t.decision = Decision::Policy(policy);
        // (chain, next rule, how many jumps and gotos led here). A goto replaces the top
        // frame, so the stack holds only what a RETURN comes back to, but the depth still
        // grows: a goto loop ends like a jump loop.
        let mut stack: Vec<(&str, usize, usize)> = vec![(hook.as_ref(), 0, 1)];
        let mut steps = 0usize;
        while let Some(frame) = stack.last_mut() {
            let chain = frame.0;
            let depth = frame.2;
            let Some(rule) = self.rules(chain).get(frame.1) else {
                // The end of a user chain returns; the end of the built-in one: policy.
                stack.pop();
                continue;
            };
            frame.1 += 1;
            steps += 1;
            if steps > MAX_STEPS {
                t.abort(format!(
                    "gave up after {MAX_STEPS} rules (the chains fan out too far)"
                ));
                return t;
            }
            let line = || format!("-A {chain} {}", rule.text);
            if let Some(why) = &rule.spec.unmodelled {
                t.unmodelled.push((line(), why.clone()));
                continue;
            }
            if let Some(why) = missing_set(&rule.spec, pkt, sets) {
                t.unmodelled.push((line(), why));
                continue;
            }
            if !rule.spec.matches_with(pkt, sets) {
                continue;
            }
            t.matched.push(line());
            t.hits.push(Hit {
                chain: chain.to_string(),
                number: frame.1,
                rule: rule.clone(),
            });
            let decided = match &rule.spec.target {
                Target::None | Target::Other(_) => None,
                Target::Accept => Some(Decision::Accept),
                Target::Drop => Some(Decision::Drop),
                Target::Masquerade { .. } => Some(Decision::Masquerade),
                Target::Snat(ip) => Some(Decision::Snat(*ip)),
                Target::Dnat(ip, port) => Some(Decision::Dnat(*ip, *port)),
                Target::Return => {
                    stack.pop();
                    None
                }
                Target::Mark { value, mask } => {
                    pkt.mark = (pkt.mark & !mask) ^ value;
                    None
                }
                Target::Jump(c) | Target::Goto(c) => {
                    let goto = matches!(rule.spec.target, Target::Goto(_));
                    match self.chains.get_key_value(c.as_str()) {
                        None => t.unmodelled.push((
                            line(),
                            format!("no chain {c} to {}", if goto { "go" } else { "jump" }),
                        )),
                        Some(_) if depth >= MAX_JUMP_DEPTH => {
                            t.abort(format!(
                                "jumps and gotos nested deeper than {MAX_JUMP_DEPTH} at {c} (a jump loop; the kernel refuses such a table: \"Too many levels of symbolic links\")"
                            ));
                            return t;
                        }
                        Some((name, _)) => {
                            if goto {
                                stack.pop();
                            }
                            stack.push((name.as_ref(), 0, depth + 1));
                        }
                    }
                    None
                }
            };
            if let Some(d) = decided {
                t.decision = d;
                t.decided_by = t.matched.last().cloned();
                return t;
            }
        }
        t
    }
}

/// Why a rule's `-m set` cannot be evaluated against `sets`: a set the node does not hold,
/// or one of the other family (iptables refuses both: "Set NAME doesn't exist.", "The
/// protocol family of set NAME is IPv6, which is not applicable.").
fn missing_set(spec: &RuleSpec, pkt: &Packet, sets: &IpSets) -> Option<String> {
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
    fn abort(&mut self, why: String) {
        self.decision = Decision::Drop;
        self.decided_by = None;
        self.aborted = Some(why);
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
                    .chains
                    .values()
                    .flatten()
                    .any(|r| r.spec.set_names().any(|n| n == name))
            })
        })
    }

    /// [`Netfilter::for_addr`], mutably (where a writer puts a rule about `ip`).
    pub(crate) fn for_addr_mut(&mut self, ip: &IpAddr) -> &mut Tables {
        self.family_mut(ip.is_ipv6())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORTMAP_S: &str = include_str!("../../../tests/fixtures/real/portmap-iptables-S-nat.txt");
    const BRIDGE_S: &str = include_str!("../../../tests/fixtures/real/bridge-iptables-S-nat.txt");

    /// flanneld's rules (`pkg/trafficmngr/iptables/iptables.go`, the e2e golden output),
    /// nat then filter, as `iptables -S` printed them.
    const FLANNEL_NAT: &str = r#"-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.1.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.1.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully"#;
    const FLANNEL_FILTER: &str = r#"-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A FLANNEL-FWD -s 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT"#;
    /// What bridge and portmap write for an IPv6 pod address, and portmap's masqAll and
    /// hostIP forms (`chain_tests.rs` checks these against the plugins).
    const MORE: &str = r#"-A POSTROUTING -s fd00:10:1::2/128 -m comment --comment "name: \"lab-net\" id: \"c0ffee01\"" -j CNI-20afed91d8ddf530016083b5
-A CNI-20afed91d8ddf530016083b5 -d fd00:10:1::/64 -m comment --comment "name: \"lab-net\" id: \"c0ffee01\"" -j ACCEPT
-A CNI-20afed91d8ddf530016083b5 ! -d ff00::/8 -m comment --comment "name: \"lab-net\" id: \"c0ffee01\"" -j MASQUERADE
-A CNI-DN-20afed91d8ddf53001608 -s fd00:10:1::/64 -p tcp -m tcp --dport 8080 -j CNI-HOSTPORT-SETMARK
-A CNI-DN-20afed91d8ddf53001608 -p tcp -m tcp --dport 8080 -j DNAT --to-destination [fd00:10:1::2]:80
-A CNI-DN-20afed91d8ddf53001608 -p tcp -m tcp --dport 80 -j CNI-HOSTPORT-SETMARK
-A CNI-DN-20afed91d8ddf53001608 -p sctp -m sctp --dport 9 -j DNAT --to-destination 10.244.1.2:9
-A CNI-HOSTPORT-DNAT -p udp -m comment --comment "dnat name: \"lab-net\" id: \"c0ffee01\"" -m multiport --dports 53,5353,6000:6010 -j CNI-DN-20afed91d8ddf53001608
-A X -i cni0 ! -o eth+ -p icmp -m conntrack --ctstate NEW,ESTABLISHED -j SNAT --to-source 192.168.0.2
-A X -m mark ! --mark 0x1 -m addrtype ! --dst-type LOCAL -j DROP
-A X -s 10.0.0.0/8 -j MARK --set-xmark 0x1/0xffffffff"#;

    /// `(chain, rule)` of every `-A` line.
    fn a_lines(text: &str) -> Vec<(String, String)> {
        text.lines()
            .filter_map(|l| l.strip_prefix("-A "))
            .filter_map(|l| l.split_once(' '))
            .map(|(c, r)| (c.to_string(), r.to_string()))
            .collect()
    }

    fn table_from(kind: TableKind, text: &str) -> XtTable {
        let mut t = XtTable::new(kind);
        for l in text.lines() {
            if let Some(c) = l.strip_prefix("-N ") {
                t.ensure_chain(c);
            }
        }
        for (c, r) in a_lines(text) {
            t.append_unique(&c, r);
        }
        t
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("test address")
    }

    fn tcp(src: &str, dst: &str, dport: u16) -> Packet {
        Packet::new(ip(src), ip(dst), L4::Tcp, 40000, dport)
    }

    #[test]
    fn a_daemon_s_own_chain_written_whole_goes_with_its_jumps_when_deleted() {
        let mut nat = XtTable::new(TableKind::Nat);
        nat.ensure_fixed_chain("OWN");
        nat.append_rules_unique("POSTROUTING", [XtRule::new("-j OWN")]);
        // A rule already held is not written again (`iptables -C` first).
        nat.append_rules_unique(
            "OWN",
            [
                "-s 10.0.0.0/8 -j RETURN",
                "-j MASQUERADE",
                "-s 10.0.0.0/8 -j RETURN",
            ]
            .map(XtRule::new),
        );
        assert_eq!(
            nat.to_lines(),
            [
                "-P PREROUTING ACCEPT",
                "-P INPUT ACCEPT",
                "-P OUTPUT ACCEPT",
                "-P POSTROUTING ACCEPT",
                "-N OWN",
                "-A POSTROUTING -j OWN",
                "-A OWN -s 10.0.0.0/8 -j RETURN",
                "-A OWN -j MASQUERADE",
            ]
        );
        nat.delete_chain("OWN");
        assert_eq!(nat, XtTable::new(TableKind::Nat));
        assert!(nat.referrers.is_empty());
    }

    /// Every rule text the lab writes (the real plugins' output, flannel's rules, the v6
    /// and option variants) parses with nothing unmodelled and prints back byte for byte;
    /// a table built from the fixture prints the fixture.
    #[test]
    fn every_rule_the_lab_writes_round_trips() {
        for text in [PORTMAP_S, BRIDGE_S, FLANNEL_NAT, FLANNEL_FILTER, MORE] {
            for (chain, rule) in a_lines(text) {
                let spec = RuleSpec::parse(&rule);
                assert_eq!(spec.unmodelled, None, "-A {chain} {rule}");
                assert_eq!(spec.render(), rule, "-A {chain} {rule}");
            }
        }
        let t = table_from(TableKind::Nat, PORTMAP_S);
        assert_eq!(t.to_lines().join("\n"), PORTMAP_S.trim_end());
        let spec = RuleSpec::parse(&a_lines(BRIDGE_S)[0].1);
        assert_eq!(
            spec.matches,
            vec![Match::Comment(Some(
                "name: \"lab-net\" id: \"c0ffee01\"".into()
            ))]
        );
        assert_eq!(
            RuleSpec::parse("-p tcp -m tcp --dport 8080 -j DNAT --to-destination [fd00::2]:80")
                .target,
            Target::Dnat(ip("fd00::2"), Some(80))
        );
        // The implicit tcp match prints the way iptables -S prints it.
        assert_eq!(
            RuleSpec::parse("-p tcp --dport 80 -j ACCEPT").render(),
            "-p tcp -m tcp --dport 80 -j ACCEPT"
        );
        // --set-mark V/M is stored as xmark V/(M|V) (libxt_MARK).
        assert_eq!(
            RuleSpec::parse("-j MARK --set-mark 0x4000/0x4000").target,
            Target::Mark {
                value: 0x4000,
                mask: 0x4000
            }
        );
    }

    #[test]
    fn what_the_parser_does_not_model_is_recorded_and_never_matches() {
        let cases = [
            ("-m recent --rcheck -j DROP", "the match -m recent"),
            ("-p gre -j ACCEPT", "the protocol \"gre\""),
            (
                "-j REJECT --reject-with icmp-port-unreachable",
                "the target REJECT",
            ),
            ("-s example.com -j ACCEPT", "the address \"example.com\""),
            (
                "--dport 80 -j ACCEPT",
                "--dport without -p tcp, udp or sctp",
            ),
            (
                "-m comment --comment \"open -j ACCEPT",
                "an unterminated quote",
            ),
            ("-j DNAT", "DNAT without --to-destination"),
            (
                "-m addrtype --dst-type UNICAST -j ACCEPT",
                "-m addrtype --dst-type UNICAST",
            ),
            ("-g ACCEPT", "-g ACCEPT: not a chain"),
            (
                "-m set --match-set s foo -j DROP",
                "--match-set flags \"foo\" (src or dst, comma separated)",
            ),
            ("-m set -j DROP", "-m set without --match-set"),
            (
                "--match-set s src -j DROP",
                "--match-set without the match module it belongs to",
            ),
            (
                "-m set --match-set s src,dst,src,dst,src,dst,src -j DROP",
                "Can't be more src/dst options than 6.",
            ),
            (
                "-m set --match-set s src --match-set t dst -j DROP",
                "--match-set can be specified only once",
            ),
            (
                "-m set --match-set s src --return-nomatch -j DROP",
                "the option --return-nomatch",
            ),
            ("-j", "-j without a value"),
            ("! ! -s 10.0.0.1 -j ACCEPT", "a doubled `!`"),
        ];
        let any = Packet::new(ip("10.0.0.1"), ip("10.0.0.2"), L4::Tcp, 1, 80);
        for (text, why) in cases {
            let spec = RuleSpec::parse(text);
            assert_eq!(spec.unmodelled.as_deref(), Some(why), "{text}");
            assert!(!spec.matches(&any), "{text}");
        }
        // A quoted word is a value, even `!` or one that looks like an option.
        for c in ["!", "-j X", "\"\\"] {
            let text = format!("-m comment --comment {} -j ACCEPT", ipt_quote(c));
            let spec = RuleSpec::parse(&text);
            assert_eq!(spec.unmodelled, None, "{text}");
            assert_eq!(spec.matches, vec![Match::Comment(Some(c.into()))]);
            assert_eq!(spec.render(), text);
        }
        // The target is still found after an unknown match, so the jump index sees it.
        assert_eq!(
            RuleSpec::parse("-m recent --rcheck --seconds 60 -j CNI-X").jump_chain(),
            Some("CNI-X")
        );
        let mut t = XtTable::new(TableKind::Filter);
        t.append_unique("INPUT", "-m recent --rcheck -j DROP");
        t.append_unique("INPUT", "-p tcp -m tcp --dport 80 -j ACCEPT");
        let mut pkt = any.clone();
        let tr = t.traverse("INPUT", &mut pkt);
        assert_eq!(tr.decision, Decision::Accept);
        assert_eq!(
            tr.unmodelled,
            vec![(
                "-A INPUT -m recent --rcheck -j DROP".to_string(),
                "the match -m recent".to_string()
            )]
        );
    }

    /// The bridge plugin's ipMasq chain (`pkg/ip/ipmasq_iptables_linux.go`): to a remote pod
    /// subnet the pod is masqueraded by `! -d 224.0.0.0/4`, to its own subnet accepted by
    /// `-d 10.244.1.0/24`, to multicast neither (the policy).
    #[test]
    fn bridge_ip_masq_chain_masquerades_off_subnet_and_accepts_on_it() {
        let t = table_from(TableKind::Nat, BRIDGE_S);
        let chain = "CNI-20afed91d8ddf530016083b5";
        let comment = r#"-m comment --comment "name: \"lab-net\" id: \"c0ffee01\"""#;
        let mut p = tcp("10.244.1.2", "10.244.2.5", 80);
        let tr = t.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Masquerade);
        assert_eq!(
            tr.decided_by.as_deref(),
            Some(format!("-A {chain} ! -d 224.0.0.0/4 {comment} -j MASQUERADE").as_str())
        );
        assert_eq!(
            tr.matched,
            vec![
                format!("-A POSTROUTING -s 10.244.1.2/32 {comment} -j {chain}"),
                format!("-A {chain} ! -d 224.0.0.0/4 {comment} -j MASQUERADE"),
            ]
        );
        let mut p = tcp("10.244.1.2", "10.244.1.7", 80);
        let tr = t.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Accept);
        assert_eq!(
            tr.decided_by,
            Some(format!("-A {chain} -d 10.244.1.0/24 {comment} -j ACCEPT"))
        );
        let mut p = tcp("10.244.1.2", "224.0.0.251", 5353);
        let tr = t.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Accept));
        assert_eq!(tr.decided_by, None);
        // Another pod's packets do not enter the chain.
        let mut p = tcp("10.244.1.3", "10.244.2.5", 80);
        let tr = t.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Accept));
        assert!(tr.matched.is_empty());
    }

    /// portmap: a packet to a LOCAL address on the host port is DNATed to the pod through
    /// CNI-HOSTPORT-DNAT and the CNI-DN chain; from the pod's own subnet (hairpin) it is
    /// marked first, and the mark is masqueraded in POSTROUTING.
    #[test]
    fn portmap_dnats_a_local_host_port_to_the_pod() {
        let t = table_from(TableKind::Nat, PORTMAP_S);
        let dn = "CNI-DN-20afed91d8ddf53001608";
        let mut p = tcp("192.168.0.9", "192.168.0.2", 8080);
        p.dst_local = true;
        p.iif = Some("eth0".into());
        let tr = t.traverse("PREROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Dnat(ip("10.244.1.2"), Some(80)));
        assert_eq!(
            tr.matched,
            vec![
                "-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT".to_string(),
                format!(
                    r#"-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \"lab-net\" id: \"c0ffee01\"" -m multiport --dports 8080 -j {dn}"#
                ),
                format!(
                    "-A {dn} -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.244.1.2:80"
                ),
            ]
        );
        assert_eq!(p.mark, 0);
        // The same rules as typed hits: chain, number in it, and the parsed target.
        let hits: Vec<(&str, usize, &Target)> = tr
            .hits
            .iter()
            .map(|h| (h.chain.as_str(), h.number, h.target()))
            .collect();
        assert_eq!(
            hits,
            vec![
                ("PREROUTING", 1, &Target::Jump("CNI-HOSTPORT-DNAT".into())),
                ("CNI-HOSTPORT-DNAT", 1, &Target::Jump(dn.into())),
                (dn, 3, &Target::Dnat(ip("10.244.1.2"), Some(80))),
            ]
        );
        let lines: Vec<String> = tr.hits.iter().map(Hit::line).collect();
        assert_eq!(lines, tr.matched);
        // Not a local address: no DNAT.
        let mut p = tcp("192.168.0.9", "192.168.0.7", 8080);
        let tr = t.traverse("PREROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Accept));
        // The wrong port, or udp to the tcp port: no DNAT either.
        let mut p = tcp("192.168.0.9", "192.168.0.2", 8081);
        p.dst_local = true;
        assert_eq!(
            t.traverse("PREROUTING", &mut p).decision,
            Decision::Policy(Policy::Accept)
        );
        // The udp mapping has a hostIP: only that address.
        let mut p = Packet::new(ip("192.168.0.9"), ip("192.168.0.2"), L4::Udp, 1, 5353);
        p.dst_local = true;
        assert_eq!(
            t.traverse("OUTPUT", &mut p).decision,
            Decision::Dnat(ip("10.244.1.2"), Some(53))
        );
        // Hairpin: marked by SETMARK, DNATed, then the mark is masqueraded.
        let mut p = tcp("10.244.1.3", "192.168.0.2", 8080);
        p.dst_local = true;
        let tr = t.traverse("PREROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Dnat(ip("10.244.1.2"), Some(80)));
        assert_eq!(p.mark, 0x2000);
        assert!(tr.matched.contains(&
            r#"-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark 0x2000/0x2000"#
                .to_string()
        ));
        p.dst = ip("10.244.1.2");
        p.dport = 80;
        let tr = t.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Masquerade);
        assert_eq!(
            tr.decided_by.as_deref(),
            Some("-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE")
        );
    }

    /// MARK changes the mark and goes on, RETURN goes back to the caller, and the end of
    /// the built-in chain applies its policy (DROP here).
    #[test]
    fn mark_then_return_then_policy() {
        let mut t = XtTable::new(TableKind::Filter);
        t.set_policy("FORWARD", "DROP").expect("a built-in chain");
        t.append_unique("FORWARD", "-j X");
        t.append_unique("X", "-j MARK --set-xmark 0x1/0xffffffff");
        t.append_unique("X", "-m mark --mark 0x1 -j RETURN");
        t.append_unique("X", "-j ACCEPT");
        t.append_unique("FORWARD", "-m mark --mark 0x2 -j ACCEPT");
        let mut p = tcp("10.0.0.1", "10.0.0.2", 80);
        let tr = t.traverse("FORWARD", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        assert_eq!(tr.decided_by, None);
        assert_eq!(p.mark, 1);
        assert_eq!(
            tr.matched,
            [
                "-A FORWARD -j X",
                "-A X -j MARK --set-xmark 0x1/0xffffffff",
                "-A X -m mark --mark 0x1 -j RETURN"
            ]
        );
        assert_eq!(
            t.to_lines()[..3],
            ["-P INPUT ACCEPT", "-P FORWARD DROP", "-P OUTPUT ACCEPT"]
        );
        // RETURN in a built-in chain: the policy.
        let mut t = XtTable::new(TableKind::Filter);
        t.set_policy("INPUT", "DROP").expect("a built-in chain");
        t.append_unique("INPUT", "-j RETURN");
        t.append_unique("INPUT", "-j ACCEPT");
        let tr = t.traverse("INPUT", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        // flannel: the kube-proxy mark RETURNs from FLANNEL-POSTRTG without masquerading.
        let nat = table_from(TableKind::Nat, FLANNEL_NAT);
        let mut p = tcp("10.244.1.2", "8.8.8.8", 53);
        p.mark = 0x4000;
        assert_eq!(
            nat.traverse("POSTROUTING", &mut p).decision,
            Decision::Policy(Policy::Accept)
        );
        p.mark = 0;
        let tr = nat.traverse("POSTROUTING", &mut p);
        assert_eq!(tr.decision, Decision::Masquerade);
        assert!(
            tr.decided_by
                .is_some_and(|r| r.contains("! -d 224.0.0.0/4"))
        );
        let filter = table_from(TableKind::Filter, FLANNEL_FILTER);
        let tr = filter.traverse("FORWARD", &mut p);
        assert_eq!(tr.decision, Decision::Accept);
    }

    /// `-g` and `-m set` print back as `iptables -S` printed them (iptables v1.8.9 with
    /// ipset v7.17: the `!` sits between `-m set` and `--match-set`).
    #[test]
    fn goto_and_set_matches_round_trip() {
        for text in [
            "-m set --match-set t src -g GT",
            "-m set ! --match-set t dst,src -j ACCEPT",
            "-m set ! --match-set t src,dst,src -j DROP",
            "-s 10.0.0.0/8 -m set --match-set cali40s:abc dst -m comment --comment x -g cali-po-x",
            "-i cali+ -g cali-from-wl-dispatch",
        ] {
            let spec = RuleSpec::parse(text);
            assert_eq!(spec.unmodelled, None, "{text}");
            assert_eq!(spec.render(), text);
        }
        assert_eq!(RuleSpec::parse("--goto X").target, Target::Goto("X".into()));
        assert_eq!(RuleSpec::parse("--goto X").render(), "-g X");
        assert_eq!(RuleSpec::parse("-g X").jump_chain(), Some("X"));
        assert_eq!(
            RuleSpec::parse("-m set ! --match-set s dst,src -j DROP").matches,
            vec![Match::Set {
                name: "s".into(),
                dirs: vec![SetDir::Dst, SetDir::Src],
                negated: true
            }]
        );
    }

    /// iptables(8): a goto'd chain's end (or RETURN in it) continues in the chain that
    /// jumped to the chain holding the goto; from a built-in chain, its policy.
    #[test]
    fn goto_returns_to_the_jumper_s_caller() {
        let mut t = XtTable::new(TableKind::Filter);
        t.set_policy("FORWARD", "DROP").expect("built in");
        t.append_unique("FORWARD", "-j A");
        t.append_unique("FORWARD", "-m mark --mark 0x1 -j ACCEPT");
        t.append_unique("A", "-g B");
        t.append_unique("A", "-j DROP");
        t.append_unique("B", "-j MARK --set-xmark 0x1/0xffffffff");
        let mut p = tcp("10.0.0.1", "10.0.0.2", 80);
        let tr = t.traverse("FORWARD", &mut p);
        // B ends: back in FORWARD after `-j A`, not in A (whose DROP is never reached).
        assert_eq!(tr.decision, Decision::Accept);
        assert_eq!(
            tr.matched,
            [
                "-A FORWARD -j A",
                "-A A -g B",
                "-A B -j MARK --set-xmark 0x1/0xffffffff",
                "-A FORWARD -m mark --mark 0x1 -j ACCEPT"
            ]
        );
        // The same with -j: B returns into A, whose DROP decides.
        let mut j = XtTable::new(TableKind::Filter);
        j.append_unique("FORWARD", "-j A");
        j.append_unique("A", "-j B");
        j.append_unique("A", "-j DROP");
        j.ensure_chain("B");
        assert_eq!(
            j.traverse("FORWARD", &mut tcp("10.0.0.1", "10.0.0.2", 80))
                .decision,
            Decision::Drop
        );
        // RETURN inside the goto'd chain: the same place.
        t.prepend_unique("B", "-j RETURN");
        let mut p = tcp("10.0.0.1", "10.0.0.2", 80);
        let tr = t.traverse("FORWARD", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        assert_eq!(p.mark, 0);
        assert_eq!(
            tr.matched,
            ["-A FORWARD -j A", "-A A -g B", "-A B -j RETURN"]
        );
        // A goto from the built-in chain: the goto'd chain's end applies the policy, and
        // the rest of the built-in chain is never seen.
        let mut t = XtTable::new(TableKind::Filter);
        t.set_policy("INPUT", "DROP").expect("built in");
        t.append_unique("INPUT", "-g C");
        t.append_unique("INPUT", "-j ACCEPT");
        t.ensure_chain("C");
        let tr = t.traverse("INPUT", &mut tcp("10.0.0.1", "10.0.0.2", 80));
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        assert_eq!(tr.matched, ["-A INPUT -g C"]);
        // A goto deeper in: the stack does not grow, two gotos in a row return to FORWARD.
        let mut t = XtTable::new(TableKind::Filter);
        t.append_unique("FORWARD", "-j A");
        t.append_unique("FORWARD", "-j ACCEPT");
        t.append_unique("A", "-g B");
        t.append_unique("B", "-g C");
        t.append_unique("B", "-j DROP");
        t.ensure_chain("C");
        let tr = t.traverse("FORWARD", &mut tcp("10.0.0.1", "10.0.0.2", 80));
        assert_eq!(tr.decision, Decision::Accept);
        // A goto to a missing chain is passed over, as a jump is.
        let mut t = XtTable::new(TableKind::Filter);
        t.append_unique("INPUT", "-g NOPE");
        t.append_unique("INPUT", "-j DROP");
        let tr = t.traverse("INPUT", &mut tcp("10.0.0.1", "10.0.0.2", 80));
        assert_eq!(tr.decision, Decision::Drop);
        assert_eq!(tr.unmodelled[0].1, "no chain NOPE to go");
    }

    /// A goto loop (A → B → A by -g, a chain going to itself, a -j/-g mix) ends like a jump
    /// loop: DROP and the reason, no hang (the stack never grows, the depth does).
    #[test]
    fn a_goto_loop_ends_cleanly() {
        for rules in [
            &[("INPUT", "-g A"), ("A", "-g B"), ("B", "-g A")][..],
            &[("INPUT", "-j SELF"), ("SELF", "-g SELF")][..],
            &[("INPUT", "-j A"), ("A", "-g B"), ("B", "-j A")][..],
        ] {
            let mut t = XtTable::new(TableKind::Filter);
            for (c, r) in rules {
                t.append_unique(c, *r);
            }
            let tr = t.traverse("INPUT", &mut tcp("10.0.0.1", "10.0.0.2", 1));
            assert_eq!(tr.decision, Decision::Drop, "{rules:?}");
            assert!(
                tr.aborted
                    .as_deref()
                    .is_some_and(|a| a.contains("jump loop")),
                "{rules:?}: {:?}",
                tr.aborted
            );
            assert!(tr.matched.len() <= MAX_JUMP_DEPTH, "{rules:?}");
        }
    }

    /// Deleting a chain also deletes the rules that go to it (`-g`), and the index forgets them.
    #[test]
    fn delete_chain_removes_gotos_too() {
        let mut t = XtTable::new(TableKind::Filter);
        t.append_unique("FORWARD", "-i cali+ -g cali-from-wl");
        t.append_unique("FORWARD", "-j ACCEPT");
        t.ensure_chain("cali-from-wl");
        assert!(t.referrers.contains_key("cali-from-wl"));
        t.delete_chain("cali-from-wl");
        assert_eq!(t.chains()["FORWARD"], vec!["-j ACCEPT"]);
        assert!(t.referrers.is_empty());
    }

    /// `-m set` tests the node's sets: src or dst by the first flag, negation, hash:net
    /// containment; a missing set (or the other family's) never matches and is noted.
    #[test]
    fn set_matches_test_the_node_s_ipsets() {
        use crate::cni::ipset::{DEFAULT_MAXELEM, Family, SetType};
        let mut sets = IpSets::new();
        sets.create("cali40s:pods", SetType::HashNet, Family::Inet, 1_048_576)
            .expect("new");
        sets.replace_members("cali40s:pods", ["10.244.1.0/24", "10.244.9.9"])
            .expect("members");
        sets.create("v6", SetType::HashIp, Family::Inet6, DEFAULT_MAXELEM)
            .expect("new");
        let mut t = XtTable::new(TableKind::Filter);
        t.set_policy("FORWARD", "DROP").expect("built in");
        t.append_unique("FORWARD", "-m set --match-set nosuch src -j DROP");
        t.append_unique("FORWARD", "-m set ! --match-set v6 src -j DROP");
        t.append_unique(
            "FORWARD",
            "-m set --match-set cali40s:pods src,dst -j ACCEPT",
        );
        t.append_unique(
            "FORWARD",
            "-m set ! --match-set cali40s:pods dst -j MARK --set-xmark 0x8/0x8",
        );
        let walk = |t: &XtTable, src: &str, dst: &str| {
            let mut p = tcp(src, dst, 80);
            let tr = t.traverse_with("FORWARD", &mut p, &sets);
            (tr, p.mark)
        };
        // From a member network (src is the first flag; dst is not looked at).
        let (tr, _) = walk(&t, "10.244.1.7", "8.8.8.8");
        assert_eq!(tr.decision, Decision::Accept);
        assert_eq!(
            tr.unmodelled,
            [
                (
                    "-A FORWARD -m set --match-set nosuch src -j DROP".to_string(),
                    "no ipset nosuch on the node (iptables: Set nosuch doesn't exist.)".to_string()
                ),
                (
                    "-A FORWARD -m set ! --match-set v6 src -j DROP".to_string(),
                    "ipset v6 is family inet6, not the packet's".to_string()
                )
            ]
        );
        let (tr, _) = walk(&t, "10.244.9.9", "8.8.8.8");
        assert_eq!(tr.decision, Decision::Accept);
        // Not in it: the negated dst match marks, then the policy.
        let (tr, mark) = walk(&t, "10.244.2.1", "8.8.8.8");
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        assert_eq!(mark, 0x8);
        // To a member: the negated match does not hold.
        let (_, mark) = walk(&t, "10.244.2.1", "10.244.1.3");
        assert_eq!(mark, 0);
        // Without the sets (plain traverse), no set rule matches, negated or not.
        let mut p = tcp("10.244.1.7", "8.8.8.8", 80);
        let tr = t.traverse("FORWARD", &mut p);
        assert_eq!(tr.decision, Decision::Policy(Policy::Drop));
        assert_eq!(tr.unmodelled.len(), 4);
        assert!(!RuleSpec::parse("-m set ! --match-set x src -j DROP").matches(&p));
        // Referenced sets.
        let mut nf = Netfilter::default();
        nf.ip6.filter = t.clone();
        assert!(nf.references_set("cali40s:pods"));
        assert!(!nf.references_set("cali40s:other"));
    }

    #[test]
    fn policy_errors_name_what_is_accepted() {
        let mut t = XtTable::new(TableKind::Nat);
        assert!(
            t.set_policy("FORWARD", "DROP")
                .is_err_and(|e| e.contains("built-in"))
        );
        assert!(
            t.set_policy("INPUT", "REJECT")
                .is_err_and(|e| e.contains("ACCEPT or DROP"))
        );
        assert_eq!(t.policy("INPUT"), Some(Policy::Accept));
        let tr = t.traverse("FORWARD", &mut tcp("10.0.0.1", "10.0.0.2", 1));
        assert!(
            tr.aborted
                .is_some_and(|a| a.contains("not a built-in chain"))
        );
    }

    /// A jump loop (A → B → A, and a chain jumping to itself) ends the walk with DROP and
    /// a reason, never a panic or a hang; so does a chain fan-out.
    #[test]
    fn a_jump_loop_ends_cleanly() {
        let mut t = XtTable::new(TableKind::Nat);
        t.append_unique("PREROUTING", "-j A");
        t.append_unique("A", "-j B");
        t.append_unique("B", "-j A");
        let tr = t.traverse("PREROUTING", &mut tcp("10.0.0.1", "10.0.0.2", 1));
        assert_eq!(tr.decision, Decision::Drop);
        assert!(tr.aborted.is_some_and(|a| a.contains("jump loop")));
        let mut t = XtTable::new(TableKind::Nat);
        t.append_unique("OUTPUT", "-j SELF");
        t.append_unique("SELF", "-j SELF");
        let tr = t.traverse("OUTPUT", &mut tcp("10.0.0.1", "10.0.0.2", 1));
        assert_eq!(tr.decision, Decision::Drop);
        // 2^30 paths without a loop: the step cap ends it.
        let mut t = XtTable::new(TableKind::Filter);
        t.append_unique("INPUT", "-j C0");
        for i in 0..30 {
            t.append_unique(&format!("C{i}"), format!("-j C{}", i + 1));
            t.append_unique(&format!("C{i}"), format!("-s 10.0.0.0/8 -j C{}", i + 1));
        }
        t.ensure_chain("C30");
        let tr = t.traverse("INPUT", &mut tcp("10.0.0.1", "10.0.0.2", 1));
        assert!(tr.aborted.is_some_and(|a| a.contains("gave up")));
    }

    #[test]
    fn families_and_tables_are_separate() {
        let mut nf = Netfilter::default();
        nf.for_addr_mut(&ip("fd00::2"))
            .nat
            .append_unique("POSTROUTING", "! -d ff00::/8 -j MASQUERADE");
        nf.for_addr_mut(&ip("10.0.0.2"))
            .filter
            .append_unique("FORWARD", "-s 10.0.0.0/8 -j ACCEPT");
        assert_eq!(nf.ip6.nat.rules("POSTROUTING").len(), 1);
        assert!(nf.ip4.nat.rules("POSTROUTING").is_empty());
        assert_eq!(
            nf.family(false)
                .get(TableKind::Filter)
                .rules("FORWARD")
                .len(),
            1
        );
        assert_eq!(
            nf.ip4.filter.to_lines(),
            [
                "-P INPUT ACCEPT",
                "-P FORWARD ACCEPT",
                "-P OUTPUT ACCEPT",
                "-A FORWARD -s 10.0.0.0/8 -j ACCEPT"
            ]
        );
        let mut t = table_from(TableKind::Nat, BRIDGE_S);
        t.set_policy("OUTPUT", "DROP").expect("built-in");
        assert_eq!(
            t.to_restore_lines()[..7],
            [
                "*nat",
                ":PREROUTING ACCEPT [0:0]",
                ":INPUT ACCEPT [0:0]",
                ":OUTPUT DROP [0:0]",
                ":POSTROUTING ACCEPT [0:0]",
                ":CNI-20afed91d8ddf530016083b5 - [0:0]",
                r#"-A POSTROUTING -s 10.244.1.2/32 -m comment --comment "name: \"lab-net\" id: \"c0ffee01\"" -j CNI-20afed91d8ddf530016083b5"#,
            ]
        );
        assert_eq!(
            t.to_restore_lines().last().map(String::as_str),
            Some("COMMIT")
        );
    }

    /// The jump index must find every rule jumping to a deleted chain, wherever it is, and
    /// forget the deleted chain's own jumps (or churn would grow it without bound).
    #[test]
    fn delete_chain_removes_every_jump_and_leaves_no_index_behind() {
        let mut nat = XtTable::new(TableKind::Nat);
        for i in 0..50 {
            let chain = format!("CNI-{i:04}");
            nat.ensure_chain(&chain);
            nat.append_unique(&chain, "-d 10.0.0.0/24 -j ACCEPT");
            nat.append_unique(&chain, format!("-j CNI-SHARED --mark {i}"));
            nat.append_unique("POSTROUTING", format!("-s 10.0.0.{i}/32 -j {chain}"));
            nat.prepend_unique(
                "PREROUTING",
                format!("-m comment --comment x{i} -j {chain}"),
            );
        }
        nat.ensure_chain("CNI-SHARED");
        for i in 0..50 {
            nat.delete_chain(&format!("CNI-{i:04}"));
        }
        let mut expected = XtTable::new(TableKind::Nat);
        expected.ensure_chain("CNI-SHARED");
        assert_eq!(nat, expected);
        assert_eq!(nat.to_lines(), expected.to_lines());
        assert!(
            nat.referrers.is_empty(),
            "index left behind: {:?}",
            nat.referrers
        );
        // A jump with options after the target is found too, and only the named chain's;
        // a chain name inside a comment is not a jump.
        nat.append_unique("OUTPUT", "-p tcp -j CNI-HOSTPORT-DNAT --dport 80");
        nat.append_unique("OUTPUT", "-p tcp -j CNI-HOSTPORT-DNATX");
        nat.append_unique(
            "OUTPUT",
            "-m comment --comment \"-j CNI-HOSTPORT-DNAT\" -j ACCEPT",
        );
        nat.ensure_chain("CNI-HOSTPORT-DNAT");
        nat.delete_chain("CNI-HOSTPORT-DNAT");
        assert_eq!(
            nat.chains()["OUTPUT"],
            vec![
                "-p tcp -j CNI-HOSTPORT-DNATX",
                "-m comment --comment \"-j CNI-HOSTPORT-DNAT\" -j ACCEPT"
            ]
        );
        // A built-in chain is flushed, not deleted.
        nat.delete_chain("OUTPUT");
        assert!(nat.chains()["OUTPUT"].is_empty());
        assert_eq!(nat.to_lines()[..4], expected.to_lines()[..4]);
    }

    /// The table before the jump index: every rule of every chain is looked at.
    #[derive(Default)]
    struct Naive(BTreeMap<String, Vec<String>>);

    impl Naive {
        fn new() -> Self {
            let mut n = Naive::default();
            for c in TableKind::Nat.builtin_chains() {
                n.0.insert(c.to_string(), Vec::new());
            }
            n
        }
        fn append(&mut self, c: &str, r: &str) {
            let rules = self.0.entry(c.into()).or_default();
            if !rules.iter().any(|x| x == r) {
                rules.push(r.into());
            }
        }
        fn prepend(&mut self, c: &str, r: &str) {
            let rules = self.0.entry(c.into()).or_default();
            if !rules.iter().any(|x| x == r) {
                rules.insert(0, r.into());
            }
        }
        fn delete_rule(&mut self, c: &str, r: &str) {
            if let Some(rules) = self.0.get_mut(c) {
                rules.retain(|x| x != r);
            }
        }
        fn delete_chain(&mut self, c: &str) {
            if TableKind::Nat.is_builtin(c) {
                if let Some(rules) = self.0.get_mut(c) {
                    rules.clear();
                }
                return;
            }
            self.0.remove(c);
            for rules in self.0.values_mut() {
                rules.retain(|x| RuleSpec::parse(x).jump_chain() != Some(c));
            }
        }
    }

    /// 20,000 random operations on a few chains: the indexed table always equals the naive
    /// one, so the index never misses a jump.
    #[test]
    fn indexed_table_matches_the_naive_one_under_random_operations() {
        let chains = ["POSTROUTING", "OUTPUT", "CNI-A", "CNI-B", "CNI-DN-C", "X"];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut nat, mut naive) = (XtTable::new(TableKind::Nat), Naive::new());
        for step in 0..20_000 {
            let c = chains[next(chains.len())];
            let t = chains[next(chains.len())];
            let rule = match next(5) {
                0 => format!("-s 10.0.0.{}/32 -j {t}", next(3)),
                1 => format!("-p tcp -j {t} --to-destination 10.0.0.{}:80", next(3)),
                2 => format!("-m comment --comment \"x -j {t}\" -j ACCEPT"),
                3 => format!("-j {t}X"),
                _ => "-d 10.0.0.0/8 -j MASQUERADE".to_string(),
            };
            match next(5) {
                0 | 1 => {
                    nat.append_unique(c, rule.clone());
                    naive.append(c, &rule);
                }
                2 => {
                    nat.prepend_unique(c, rule.clone());
                    naive.prepend(c, &rule);
                }
                3 => {
                    nat.delete_rule(c, &rule);
                    naive.delete_rule(c, &rule);
                }
                _ => {
                    nat.delete_chain(t);
                    naive.delete_chain(t);
                }
            }
            let texts: BTreeMap<String, Vec<String>> = nat
                .chains()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        v.iter().map(|r| r.text().to_string()).collect(),
                    )
                })
                .collect();
            assert_eq!(texts, naive.0, "after step {step}");
        }
    }

    mod hostile {
        use super::*;
        use proptest::prelude::*;

        /// Words rule text is made of, so random rules reach deep into the parser.
        const WORDS: &[&str] = &[
            "!",
            "-s",
            "-d",
            "-i",
            "-o",
            "-p",
            "-m",
            "-j",
            "-g",
            "--goto",
            "set",
            "--match-set",
            "src",
            "dst",
            "src,dst",
            "dst,src,dst",
            "cali40s:abc",
            "tcp",
            "udp",
            "icmp",
            "sctp",
            "all",
            "multiport",
            "comment",
            "mark",
            "addrtype",
            "conntrack",
            "state",
            "--dport",
            "--sport",
            "--dports",
            "--ports",
            "--comment",
            "--mark",
            "--dst-type",
            "--src-type",
            "--ctstate",
            "--state",
            "LOCAL",
            "NEW",
            "ACCEPT",
            "DROP",
            "RETURN",
            "MASQUERADE",
            "SNAT",
            "DNAT",
            "MARK",
            "REJECT",
            "--to-source",
            "--to-destination",
            "--set-xmark",
            "--set-mark",
            "--random-fully",
            "A",
            "B",
            "10.0.0.1",
            "10.0.0.0/8",
            "fd00::/8",
            "[fd00::1]:80",
            "10.0.0.1:65535",
            "0x1/0x1",
            "0xffffffff",
            "80",
            "1:2",
            "65536",
            "2:1",
            ",",
            "1,2,3",
            "\"",
            "\\",
            "\"a b\"",
            "cni0+",
            "+",
            "",
        ];

        fn soup() -> impl Strategy<Value = String> {
            proptest::collection::vec(proptest::sample::select(WORDS), 0..14)
                .prop_map(|w| w.join(" "))
        }

        /// Well-formed rules in `iptables -S` form with `-m set` matches and a `-g` or `-j`
        /// target, so the round trip is tested on the new forms, not only reached by chance.
        fn goto_and_set_rule() -> impl Strategy<Value = String> {
            let dirs = proptest::collection::vec(prop_oneof![Just("src"), Just("dst")], 1..=6)
                .prop_map(|d| d.join(","));
            let set = (any::<bool>(), "[a-z][a-z0-9:_-]{0,30}", dirs).prop_map(|(n, name, d)| {
                format!("-m set {}--match-set {name} {d}", if n { "! " } else { "" })
            });
            let target = prop_oneof![
                "cali-[A-Za-z0-9_-]{0,20}".prop_map(|c| format!("-g {c}")),
                "[a-z][a-z0-9_-]{0,20}".prop_map(|c| format!("-j {c}")),
                Just("-j ACCEPT".to_string()),
                Just("-j DROP".to_string()),
            ];
            (
                proptest::option::of(Just("-s 10.0.0.0/8")),
                proptest::option::of(Just("-i cali+")),
                proptest::collection::vec(set, 0..3),
                target,
            )
                .prop_map(|(s, i, sets, t)| {
                    let mut parts: Vec<String> = Vec::new();
                    parts.extend(s.map(str::to_string));
                    parts.extend(i.map(str::to_string));
                    parts.extend(sets);
                    parts.push(t);
                    parts.join(" ")
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Every generated goto/set rule parses with nothing unmodelled and prints back
            /// byte for byte; walking it with and without sets never panics.
            #[test]
            fn goto_and_set_rules_round_trip(text in goto_and_set_rule()) {
                let spec = RuleSpec::parse(&text);
                prop_assert_eq!(&spec.unmodelled, &None);
                prop_assert_eq!(spec.render(), text.clone());
                let mut t = XtTable::new(TableKind::Filter);
                t.append_unique("INPUT", text.clone());
                if let Some(c) = spec.jump_chain() {
                    t.append_unique(c, text.clone());
                }
                let mut sets = IpSets::new();
                for name in spec.set_names() {
                    let _ = sets.create(name, crate::cni::ipset::SetType::HashNet, Family::Inet, 8);
                    let _ = sets.add(name, "10.0.0.0/8", false);
                }
                let mut p = tcp("10.0.0.1", "10.0.0.2", 80);
                p.iif = Some("cali1".into());
                let _ = t.traverse_with("INPUT", &mut p, &sets);
            }

            /// Any text: parsing, printing and evaluating never panic, and a rule that
            /// parses with nothing unmodelled prints back to text that parses the same.
            #[test]
            fn any_text_never_panics(text in prop_oneof![soup(), any::<String>()]) {
                let spec = RuleSpec::parse(&text);
                let printed = spec.render();
                if spec.unmodelled.is_none() {
                    prop_assert_eq!(RuleSpec::parse(&printed), spec.clone());
                }
                let mut t = XtTable::new(TableKind::Nat);
                t.append_unique("PREROUTING", text.clone());
                t.append_unique("PREROUTING", "-j A");
                t.append_unique("A", text.clone());
                t.append_unique("B", text.clone());
                let mut sets = IpSets::new();
                let _ = sets.create("cali40s:abc", crate::cni::ipset::SetType::HashNet,
                    Family::Inet, 16);
                let _ = sets.add("cali40s:abc", "10.0.0.0/8", false);
                for (src, dst) in [("10.0.0.1", "10.0.0.2"), ("fd00::1", "fd00::2")] {
                    let mut p = tcp(src, dst, 80);
                    p.iif = Some("cni0".into());
                    p.dst_local = true;
                    let _ = t.traverse("PREROUTING", &mut p.clone());
                    let _ = t.traverse_with("PREROUTING", &mut p, &sets);
                }
                let _ = t.to_lines();
                t.delete_chain("A");
                t.delete_chain("B");
                t.delete_rule("PREROUTING", &text);
            }
        }
    }
}
