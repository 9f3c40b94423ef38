//! Rule text to [`RuleSpec`]: words split as a shell would, then iptables(8)'s and
//! iptables-extensions(8)'s options.

use super::*;

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
