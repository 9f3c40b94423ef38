//! The netfilter hooks a packet passes on a node: each table's walk ([`table_hook`])
//! handing the walker the matched rules as typed hits, Felix's endpoint
//! chains read from them (policy hops), and the hop and rewrite a hook's step makes.

use super::*;
use crate::cni::netfilter::{Decision as NfDecision, Hit, L4, Packet, Policy as NfPolicy, Target};
use crate::net::calico::{self, FelixChain};

/// What a netfilter hook did to the packet: the rule a hop shows when one decided (or a
/// nat RETURN let the packet go on untouched), and the change.
#[derive(Debug)]
pub(super) struct HookStep {
    /// The hook.
    hook: Hook,
    /// The rule the hop shows: the deciding one, or the RETURN (the last that matched).
    shown: Option<Hit>,
    /// `shown` is a nat RETURN: no NAT was done.
    no_nat: bool,
    /// The rule that decided, when one did (not the policy, not an aborted walk).
    decided: Option<Hit>,
    /// Why the packet was dropped.
    drop: Option<String>,
    snat: Option<IpAddr>,
    masquerade: bool,
    /// For a MASQUERADE: the source before and after.
    masqueraded: Option<(IpAddr, IpAddr)>,
    dnat: Option<(IpAddr, Option<u16>)>,
    /// The packet's mark after the hook (a `MARK` rule on the way changes it).
    mark: u32,
    /// Every rule that matched on the way.
    hits: Vec<Hit>,
    /// The device the hook saw the packet on (the output, else the input).
    dev: Option<String>,
}

impl<'a, 'n> Walker<'a, 'n> {
    /// Felix's verdicts in a filter hook the packet just went through: one policy hop per
    /// workload endpoint chain it passed (the sender's `cali-fw-…`, the receiver's
    /// `cali-tw-…`), naming the rule that accepted it or the one that dropped it. Returns
    /// the drop when one of those chains dropped the packet.
    pub(super) fn felix(&mut self, host: &Host, step: &HookStep) -> Option<Outcome> {
        let node: &str = &host.node;
        let hook = step.hook;
        // The endpoint chain the packet is in: (ingress, interface).
        let mut current: Option<(bool, &str)> = None;
        // The rule that accepted, by its index in `step.hits`.
        let mut accepted_by: Option<usize> = None;
        let mut hops: Vec<(bool, &str, usize, bool)> = Vec::new();
        fn flush<'s>(
            cur: &Option<(bool, &'s str)>,
            acc: &Option<usize>,
            hops: &mut Vec<(bool, &'s str, usize, bool)>,
        ) {
            if let (Some((ingress, iface)), Some(rule)) = (cur, acc) {
                hops.push((*ingress, iface, *rule, true));
            }
        }
        for (i, hit) in step.hits.iter().enumerate() {
            if let Some(FelixChain::Endpoint { ingress, iface }) = FelixChain::of(&hit.chain) {
                if current.is_none_or(|(_, c)| c != iface) {
                    flush(&current, &accepted_by, &mut hops);
                    current = Some((ingress, iface));
                    accepted_by = None;
                }
            } else if calico::sets_accept(hit.target()) {
                accepted_by = Some(i);
            }
        }
        // A rule in one of Felix's chains dropped it.
        let felix_drop = step.drop.is_some()
            && step
                .decided
                .as_ref()
                .is_some_and(|h| FelixChain::of(&h.chain).is_some());
        match current {
            Some((ingress, iface)) if felix_drop => {
                // The deciding rule is the last that matched.
                let last = step.hits.len().saturating_sub(1);
                hops.push((ingress, iface, last, false));
            }
            _ => flush(&current, &accepted_by, &mut hops),
        }
        for (ingress, iface, index, allowed) in hops {
            let hit = step.hits.get(index);
            let pod = self
                .net
                .pod_on_node(node, |p| p.host_veth.as_deref() == Some(iface))
                .map(|p| p.key());
            let hop = self.push_policy(
                Place::Node(node.to_string()),
                iface,
                Detail::Felix {
                    hook,
                    ingress,
                    iface: iface.to_string(),
                    pod: pod.clone(),
                },
                allowed,
            );
            hop.entry = hit.map(|h| rule_entry(TableKind::Filter, h));
            if !allowed {
                let chain = calico::endpoint_chain_name(ingress, iface);
                let pod = pod.map(|p| format!(" ({p})")).unwrap_or_default();
                let rule = hit.map(Hit::line).unwrap_or_default();
                return Some(
                    self.dropped(format!("{hook} on {node} drops it in {chain}{pod}: {rule}")),
                );
            }
        }
        None
    }

    /// Apply a hook's step: a hop line for a rule that matched, DNAT, a drop.
    pub(super) fn apply_hook(
        &mut self,
        node: &str,
        step: HookStep,
        pkt: &mut Pkt,
    ) -> Option<Outcome> {
        let hook = step.hook;
        if let Some(hit) = &step.shown {
            let hop = self.push(
                HopKind::Netfilter,
                Place::Node(node.to_string()),
                step.dev.as_deref(),
                Detail::Rule {
                    hook,
                    no_nat: step.no_nat,
                    masquerade: step.masqueraded,
                },
            );
            hop.entry = Some(rule_entry(hook.table, hit));
        }
        if let Some(why) = step.drop {
            return Some(self.dropped(format!("{hook} on {node} drops it: {why}")));
        }
        pkt.mark = step.mark;
        let mut rewrite = None;
        if let Some((ip, port)) = step.dnat {
            if ip != pkt.dst {
                rewrite = Some(Rewrite::Destination(pkt.dst, ip));
            }
            pkt.dst = ip;
            if let Some(p) = port {
                pkt.dport = p;
            }
        }
        if let Some(ip) = step.snat {
            if ip != pkt.src {
                rewrite = Some(Rewrite::Source(pkt.src, ip));
            }
            pkt.src = ip;
        }
        self.now = Some(pkt.clone());
        let packet = self.packet_at(pkt);
        if let (Some(r), Some(h)) = (rewrite, self.hops.last_mut()) {
            if h.kind == HopKind::Netfilter {
                h.rewrite = Some(r);
                h.packet = Some(packet);
            }
        }
        None
    }

    /// POSTROUTING: as [`Walker::apply_hook`], MASQUERADE taking the output's address.
    pub(super) fn apply_hook_masq(
        &mut self,
        node: &str,
        mut step: HookStep,
        pkt: &mut Pkt,
        masq_src: Option<IpAddr>,
    ) -> Option<Outcome> {
        if step.masquerade {
            if let Some(ip) = masq_src {
                step.snat = Some(ip);
                step.masqueraded = Some((pkt.src, ip));
            }
        }
        self.apply_hook(node, step, pkt)
    }
}

/// The packet as netfilter's matches see it at a hook.
fn nf_packet(host: &Host, pkt: &Pkt, iif: Option<&str>, oif: Option<&str>) -> Packet {
    let proto = match pkt.proto {
        Protocol::Tcp => L4::Tcp,
        Protocol::Udp => L4::Udp,
        Protocol::Sctp => L4::Sctp,
    };
    let mut p = Packet::new(pkt.src, pkt.dst, proto, 0, pkt.dport);
    p.iif = iif.map(str::to_string);
    p.oif = oif.map(str::to_string);
    p.dst_local = host_owns(host, pkt.dst);
    p.mark = pkt.mark;
    p
}

/// Run one table's hook chain on the packet at `chain` and say what it did (`bridged`: a
/// frame br_netfilter hands to iptables): the deciding rule (and every rule that matched
/// on the way, when one of them is a jump that returned), the rewrite, a drop. nat is
/// consulted for the first packet of a connection only; that is the packet the walker
/// follows. filter makes a hop only when a rule dropped the packet.
pub(super) fn table_hook(
    host: &Host,
    table: TableKind,
    chain: &'static str,
    bridged: bool,
    pkt: &Pkt,
    iif: Option<&str>,
    oif: Option<&str>,
) -> HookStep {
    let hook = Hook {
        table,
        chain,
        bridged,
    };
    let tables = host.netfilter.family(pkt.dst.is_ipv6());
    let mut p = nf_packet(host, pkt, iif, oif);
    let t = tables.get(table).traverse_with(chain, &mut p, &host.ipsets);
    let last = t.hits.last().cloned();
    let decided = t.decided_by.as_ref().and(last.clone());
    // Nothing decided but a rule matched (a RETURN): show the last one, it is why the
    // packet went on untouched.
    let no_nat = decided.is_none()
        && table == TableKind::Nat
        && last.as_ref().is_some_and(|h| *h.target() == Target::Return);
    let mut step = HookStep {
        hook,
        shown: if no_nat { last } else { decided.clone() },
        no_nat,
        decided,
        drop: None,
        snat: None,
        masquerade: false,
        masqueraded: None,
        dnat: None,
        mark: p.mark,
        hits: t.hits,
        dev: oif.or(iif).map(str::to_string),
    };
    match t.decision {
        NfDecision::Masquerade => step.masquerade = true,
        NfDecision::Snat(ip) => step.snat = Some(ip),
        NfDecision::Dnat(ip, port) => step.dnat = Some((ip, port)),
        NfDecision::Drop => {
            step.drop = Some(
                t.decided_by
                    .or(t.aborted)
                    .unwrap_or_else(|| format!("the {chain} policy is DROP")),
            );
        }
        NfDecision::Policy(NfPolicy::Drop) => {
            step.drop = Some(format!("no rule accepts it and the {chain} policy is DROP"));
        }
        NfDecision::Accept | NfDecision::Policy(NfPolicy::Accept) => {}
    }
    if table == TableKind::Filter && step.drop.is_none() {
        step.shown = None;
        step.no_nat = false;
    }
    step
}

/// A matched rule as a hop's entry.
fn rule_entry(table: TableKind, hit: &Hit) -> Entry {
    Entry::Rule {
        table,
        chain: hit.chain.clone(),
        number: hit.number,
        rule: hit.line(),
    }
}
