//! One table (`nat` or `filter`): its chains of stored rules, the writes iptables and
//! the plugins make, `iptables -S`/`iptables-save` output, and a hook's traversal.

use super::*;

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
    pub(super) referrers: Referrers,
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
pub(super) struct Referrers(Vec<(ChainName, ChainName, usize)>);

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
    pub(super) fn contains_key(&self, target: &str) -> bool {
        !self.holders(target).is_empty()
    }

    /// Whether no rule jumps anywhere.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
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
