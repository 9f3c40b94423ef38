//! A rule's parsed form: its matches and target, how it matches a packet, and how
//! `iptables -S` prints it.

use super::*;

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
    pub(super) fn from_name(name: &str) -> Target {
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
