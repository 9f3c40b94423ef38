//! Felix's iptables data plane on one node: NetworkPolicy compiled into filter-table chains
//! and the ipsets their rules match (`felix/rules/static.go`, `dispatch.go`,
//! `endpoints.go`, `policy.go`; `libcalico-go/lib/backend/k8s/conversion/conversion.go` for
//! how a Kubernetes NetworkPolicy becomes Calico rules; `calico-and-cilium.md` §A5).
//!
//! The path of a forwarded packet: `FORWARD` → `cali-FORWARD` → `cali-from-wl-dispatch`
//! (`-i cali…`, goto the sender's `cali-fw-<iface>`) and `cali-to-wl-dispatch` (`-o cali…`,
//! goto the receiver's `cali-tw-<iface>`). An endpoint chain clears the accept and pass
//! marks, then, when a policy selects the pod in that direction, runs each one's chain
//! (`cali-pi-<id>` for ingress, `cali-po-<id>` for egress) and returns as soon as one set
//! the accept mark (`0x10000`), else drops at the end of the tier; when none selects it,
//! the namespace's profile (`cali-pri-kns.<ns>` / `cali-pro-kns.<ns>`) accepts. Back in
//! `FORWARD`, the accept mark makes the packet ACCEPTed.
//!
//! A Kubernetes rule becomes one Calico rule per peer and protocol (`k8sRuleToCalico`); a
//! selector peer matches an ipset `cali40s:<id>` (hash:net) holding the addresses of the
//! pods it selects, cluster-wide; an ipBlock matches `-s`/`-d` with its `except` as a
//! negated ipset.
//!
//! Simplified, as the book says: no `cali:<hash>` comments; one flat dispatch chain per
//! direction (Felix splits them by the interface name's next character when there are
//! many); the IPinIP drop of `cali-fw` (the lab's netfilter has no `-p ipencap`); named
//! ports (Felix matches them with `hash:ip,port` sets) are not compiled, so a rule that
//! names one allows nothing here.

use crate::cni::datastore::IpPool;
use crate::cni::host::Host;
use crate::net::calico::{FROM_WORKLOAD, MARK_ACCEPT, MARK_PASS, TO_WORKLOAD, endpoint_chain_name};
use crate::net::policy::{IntOrString, NetworkPolicyPeer, NetworkPolicyPort, selects};
use crate::net::{ClusterNet, PodNet, Policy};
use base64::Engine as _;
use sha2::{Digest, Sha224, Sha256};
use std::collections::BTreeMap;

/// iptables chain names are at most 28 characters (`felix/iptables/table.go`).
const MAX_CHAIN: usize = 28;

/// The sets Felix programs: name → (type, members).
pub(crate) type IpSetSpec = BTreeMap<String, Vec<String>>;

/// A name within iptables' limit: `prefix` + `id`, or `prefix` + `_` + the first characters
/// of base64url(SHA-256(id)) when that is too long (`libcalico-go/lib/hash/unique_id.go`).
pub(crate) fn chain_name(prefix: &str, id: &str) -> String {
    if prefix.len() + id.len() <= MAX_CHAIN {
        return format!("{prefix}{id}");
    }
    let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(id));
    let keep = MAX_CHAIN - 1 - prefix.len();
    format!("{prefix}_{}", &hash[..keep])
}

/// The policy's id as Felix names its chains (v3.32+): `knp/<namespace>/<name>`.
pub(crate) fn policy_id(p: &Policy) -> String {
    format!("knp/{}/{}", p.namespace, p.name)
}

/// The ipset of a selector: `cali40s:` + the first 23 characters of base64url(SHA-224) of
/// the selector's text (ipset names are at most 31 characters).
pub(crate) fn selector_set(selector: &str) -> String {
    let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha224::digest(selector));
    format!("cali40s:{}", &hash[..23])
}

/// A label selector in Calico's selector syntax (`app == 'web' && has(tier)`).
fn calico_selector(sel: &crate::cluster::selector::LabelSelector) -> String {
    let mut parts: Vec<String> = sel
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k} == '{v}'"))
        .collect();
    for e in &sel.match_expressions {
        let values = e
            .values
            .iter()
            .map(|v| format!("'{v}'"))
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in {{ {values} }}", e.key),
            "NotIn" => format!("{} not in {{ {values} }}", e.key),
            "Exists" => format!("has({})", e.key),
            _ => format!("! has({})", e.key),
        });
    }
    if parts.is_empty() {
        "all()".to_string()
    } else {
        parts.join(" && ")
    }
}

/// The selector text and the pods a peer selects (for the policy in `ns`).
fn peer_selector(
    net: &ClusterNet,
    policy: &Policy,
    peer: &NetworkPolicyPeer,
) -> (String, Vec<String>) {
    let pods = |f: &dyn Fn(&PodNet) -> bool| -> Vec<String> {
        let mut v: Vec<String> = net
            .pods
            .iter()
            .filter(|p| f(p))
            .filter_map(|p| p.ip.map(|ip| ip.to_string()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let pod_sel = peer.pod_selector.as_ref();
    match (&peer.namespace_selector, pod_sel) {
        (None, Some(ps)) => (
            format!(
                "(projectcalico.org/orchestrator == 'k8s' && {}) && projectcalico.org/namespace == '{}'",
                calico_selector(ps),
                policy.namespace
            ),
            pods(&|p| p.namespace == policy.namespace && ps.matches(&p.labels)),
        ),
        (Some(ns), ps) => (
            format!(
                "(projectcalico.org/orchestrator == 'k8s' && {}) && ({})",
                ps.map(calico_selector).unwrap_or_else(|| "all()".into()),
                calico_selector(ns).replace("has(", "has(pcns.")
            ),
            pods(&|p| {
                ns.matches(&net.namespace_labels(&p.namespace))
                    && ps.is_none_or(|s| s.matches(&p.labels))
            }),
        ),
        (None, None) => ("all()".into(), Vec::new()),
    }
}

/// One direction of a Kubernetes rule as Felix renders it: the iptables rules of its chain.
fn render_rule(
    net: &ClusterNet,
    policy: &Policy,
    ingress: bool,
    ports: &[NetworkPolicyPort],
    peers: &[NetworkPolicyPeer],
    sets: &mut IpSetSpec,
) -> Vec<String> {
    let dir = if ingress { "src" } else { "dst" };
    let addr_flag = if ingress { "-s" } else { "-d" };
    let comment = format!(
        "-m comment --comment \"KubernetesNetworkPolicy {}/{} {}\"",
        policy.namespace,
        policy.name,
        if ingress { "ingress" } else { "egress" }
    );
    // Per protocol, in the order the ports name them: None = every port of it.
    let mut protos: Vec<(String, Option<Vec<String>>)> = Vec::new();
    for p in ports {
        let proto = p
            .protocol
            .clone()
            .unwrap_or_else(|| "TCP".into())
            .to_lowercase();
        let item = match (&p.port, p.end_port) {
            (None, _) => None,
            (Some(IntOrString::Int(n)), Some(end)) => Some(Some(format!("{n}:{end}"))),
            (Some(IntOrString::Int(n)), None) => Some(Some(n.to_string())),
            // Named ports are not compiled (module doc).
            (Some(IntOrString::Str(_)), _) => Some(None),
        };
        let slot = match protos.iter().position(|(n, _)| *n == proto) {
            Some(i) => i,
            None => {
                protos.push((proto, Some(Vec::new())));
                protos.len() - 1
            }
        };
        match item {
            None => protos[slot].1 = None,
            Some(Some(port)) => {
                if let Some(list) = protos[slot].1.as_mut() {
                    list.push(port);
                }
            }
            Some(None) => {}
        }
    }
    let proto_parts: Vec<String> = if ports.is_empty() {
        vec![String::new()]
    } else {
        protos
            .iter()
            .flat_map(|(proto, list)| match list {
                None => vec![format!("-p {proto}")],
                Some(l) if l.is_empty() => Vec::new(),
                // multiport takes 15 ports, a range counting two.
                Some(l) => {
                    let mut chunks: Vec<Vec<&String>> = vec![Vec::new()];
                    let mut weight = 0;
                    for p in l {
                        let w = if p.contains(':') { 2 } else { 1 };
                        if weight + w > 15 {
                            chunks.push(Vec::new());
                            weight = 0;
                        }
                        weight += w;
                        if let Some(c) = chunks.last_mut() {
                            c.push(p);
                        }
                    }
                    chunks
                        .into_iter()
                        .map(|c| {
                            let list: Vec<&str> = c.iter().map(|s| s.as_str()).collect();
                            format!("-p {proto} PORTS-m multiport --dports {}", list.join(","))
                        })
                        .collect()
                }
            })
            .collect()
    };
    // Per peer: the address match before -p, the set matches after the comment.
    let mut peer_parts: Vec<(String, String)> = Vec::new();
    if peers.is_empty() {
        peer_parts.push((String::new(), String::new()));
    }
    for peer in peers {
        if let Some(block) = &peer.ip_block {
            let cidr = block
                .cidr
                .parse::<ipnet::IpNet>()
                .map(|n| n.trunc().to_string())
                .unwrap_or_else(|_| block.cidr.clone());
            let mut after = String::new();
            if !block.except.is_empty() {
                let mut nets: Vec<String> = block
                    .except
                    .iter()
                    .map(|e| {
                        e.parse::<ipnet::IpNet>()
                            .map(|n| n.trunc().to_string())
                            .unwrap_or_else(|_| e.clone())
                    })
                    .collect();
                nets.sort();
                let name = selector_set(&format!("nets: {}", nets.join(",")));
                after = format!(" -m set ! --match-set {name} {dir}");
                sets.insert(name, nets);
            }
            peer_parts.push((format!("{addr_flag} {cidr} "), after));
            continue;
        }
        let (text, members) = peer_selector(net, policy, peer);
        let name = selector_set(&text);
        sets.insert(name.clone(), members);
        peer_parts.push((String::new(), format!(" -m set --match-set {name} {dir}")));
    }
    let mut out = Vec::new();
    for proto in &proto_parts {
        for (before, after) in &peer_parts {
            let (p, ports) = match proto.split_once("PORTS") {
                Some((p, ports)) => (p.to_string(), format!(" {ports}")),
                None if proto.is_empty() => (String::new(), String::new()),
                None => (format!("{proto} "), String::new()),
            };
            out.push(format!(
                "{before}{p}{comment}{after}{ports} -j MARK --set-xmark {MARK_ACCEPT:#x}/{MARK_ACCEPT:#x}"
            ));
            out.push(format!(
                "-m mark --mark {MARK_ACCEPT:#x}/{MARK_ACCEPT:#x} -j RETURN"
            ));
        }
    }
    out
}

/// A policy's chain for one direction: its rules in order, the trailing RETURN stripped.
fn policy_chain(net: &ClusterNet, p: &Policy, ingress: bool, sets: &mut IpSetSpec) -> Vec<String> {
    let mut rules = Vec::new();
    if ingress {
        for r in &p.spec.ingress {
            rules.extend(render_rule(net, p, true, &r.ports, &r.from, sets));
        }
    } else {
        for r in &p.spec.egress {
            rules.extend(render_rule(net, p, false, &r.ports, &r.to, sets));
        }
    }
    if rules.last().is_some_and(|r| r.ends_with("-j RETURN")) {
        rules.pop();
    }
    rules
}

/// A namespace's profile chains (`kns.<ns>` accepts both ways; `ksa.<ns>.default`, the
/// service account's, only carries labels and is empty), by chain name.
fn profile_chains(ns: &str) -> Vec<(String, Vec<String>)> {
    let [kns, ksa] = profile_ids(ns);
    let mut out = Vec::new();
    for (prefix, dir) in [("cali-pri-", "ingress"), ("cali-pro-", "egress")] {
        out.push((
            chain_name(prefix, &kns),
            vec![format!(
                "-m comment --comment \"Profile {kns} {dir}\" -j MARK --set-xmark {MARK_ACCEPT:#x}/{MARK_ACCEPT:#x}"
            )],
        ));
        out.push((chain_name(prefix, &ksa), Vec::new()));
    }
    out
}

/// The ids of a namespace's profiles: its own (`kns.<ns>`) and its default service
/// account's (`ksa.<ns>.default`); their chains are `cali-pri-`/`cali-pro-` + the id.
pub(crate) fn profile_ids(ns: &str) -> [String; 2] {
    [format!("kns.{ns}"), format!("ksa.{ns}.default")]
}

/// The endpoint chain of one direction (`cali-tw-<iface>` or `cali-fw-<iface>`).
fn endpoint_chain(ingress: bool, policies: &[String], ns: &str) -> Vec<String> {
    let mask = MARK_ACCEPT | MARK_PASS;
    let mut rules = vec![
        "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT".to_string(),
        "-m conntrack --ctstate INVALID -j DROP".to_string(),
        format!("-j MARK --set-xmark 0x0/{mask:#x}"),
    ];
    if !ingress {
        rules.push(
            "-p udp -m comment --comment \"Drop VXLAN encapped packets originating in workloads\" -m multiport --dports 4789 -j DROP"
                .to_string(),
        );
    }
    let accepted = format!("-m mark --mark {MARK_ACCEPT:#x}/{MARK_ACCEPT:#x} -j RETURN");
    if !policies.is_empty() {
        rules.push(format!(
            "-m comment --comment \"Start of tier default\" -j MARK --set-xmark 0x0/{MARK_PASS:#x}"
        ));
        for chain in policies {
            rules.push(format!("-m mark --mark 0x0/{MARK_PASS:#x} -j {chain}"));
            rules.push(format!(
                "-m comment --comment \"Return if policy accepted\" {accepted}"
            ));
        }
        rules.push(format!(
            "-m comment --comment \"End of tier default. Drop if no policies passed packet\" -m mark --mark 0x0/{MARK_PASS:#x} -j DROP"
        ));
    }
    let (pi, po) = ("cali-pri-", "cali-pro-");
    let prefix = if ingress { pi } else { po };
    for profile in [format!("kns.{ns}"), format!("ksa.{ns}.default")] {
        rules.push(format!("-j {}", chain_name(prefix, &profile)));
        rules.push(format!(
            "-m comment --comment \"Return if profile accepted\" {accepted}"
        ));
    }
    rules.push("-m comment --comment \"Drop if no profiles matched\" -j DROP".to_string());
    rules
}

/// Felix's chains and sets for `node` now (`(table chains, sets)`): chain → rules.
pub fn render(
    local: &[&PodNet],
    net: &ClusterNet,
    pool: &IpPool,
) -> (BTreeMap<String, Vec<String>>, IpSetSpec) {
    let mut chains: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut sets = IpSetSpec::new();
    let mut policies: Vec<&Policy> = net.policies.iter().collect();
    policies.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    // The node's workload endpoints: its pods on a Calico veth.
    let mut endpoints: Vec<(&PodNet, &str)> = local
        .iter()
        .copied()
        .filter(|p| p.ip.is_some())
        .filter_map(|p| {
            p.host_veth
                .as_deref()
                .filter(|v| v.starts_with("cali"))
                .map(|v| (p, v))
        })
        .collect();
    endpoints.sort_by_key(|(_, v)| *v);
    let mut from_dispatch = Vec::new();
    let mut to_dispatch = Vec::new();
    for (pod, iface) in &endpoints {
        let mut pick = |ingress: bool| -> Vec<String> {
            policies
                .iter()
                .filter(|p| selects(p, pod))
                .filter(|p| {
                    let (i, e) = p.spec.effective_types();
                    if ingress { i } else { e }
                })
                .map(|p| {
                    let prefix = if ingress { "cali-pi-" } else { "cali-po-" };
                    let name = chain_name(prefix, &policy_id(p));
                    if !chains.contains_key(&name) {
                        let rules = policy_chain(net, p, ingress, &mut sets);
                        chains.insert(name.clone(), rules);
                    }
                    name
                })
                .collect()
        };
        let ingress = pick(true);
        let egress = pick(false);
        chains.insert(
            endpoint_chain_name(true, iface),
            endpoint_chain(true, &ingress, &pod.namespace),
        );
        chains.insert(
            endpoint_chain_name(false, iface),
            endpoint_chain(false, &egress, &pod.namespace),
        );
        for (name, rules) in profile_chains(&pod.namespace) {
            chains.entry(name).or_insert(rules);
        }
        from_dispatch.push(format!(
            "-i {iface} -g {}",
            endpoint_chain_name(false, iface)
        ));
        to_dispatch.push(format!(
            "-o {iface} -g {}",
            endpoint_chain_name(true, iface)
        ));
    }
    from_dispatch.push("-m comment --comment \"Unknown interface\" -j DROP".to_string());
    to_dispatch.push("-m comment --comment \"Unknown interface\" -j DROP".to_string());
    chains.insert("cali-from-wl-dispatch".into(), from_dispatch);
    chains.insert("cali-to-wl-dispatch".into(), to_dispatch);
    chains.insert(
        "cali-FORWARD".into(),
        vec![
            "-j MARK --set-xmark 0x0/0x1a0000".to_string(),
            "-i cali+ -j cali-from-wl-dispatch".to_string(),
            "-o cali+ -j cali-to-wl-dispatch".to_string(),
        ],
    );
    if pool.nat_outgoing {
        sets.insert("cali40masq-ipam-pools".into(), vec![pool.cidr.to_string()]);
    }
    sets.insert("cali40all-ipam-pools".into(), vec![pool.cidr.to_string()]);
    (chains, sets)
}

/// The jumps from the built-in chains into Felix's (filter), in the order they sit at the
/// top of `FORWARD`.
const FORWARD_RULES: [&str; 2] = [
    "-j cali-FORWARD",
    "-m comment --comment \"Policy explicitly accepted packet.\" -m mark --mark 0x10000/0x10000 -j ACCEPT",
];
/// natOutgoing: pool addresses leaving the pools are masqueraded.
const NAT_OUTGOING: &str = "-m set --match-set cali40masq-ipam-pools src -m set ! --match-set cali40all-ipam-pools dst -j MASQUERADE --random-fully";

/// Program Felix's chains and sets on a node whose workload endpoints are `local`, as
/// Felix's iptables and ipsets syncers do: only the chains and sets that differ from what
/// the node holds are rewritten, the ones no longer wanted go.
pub fn program(host: &mut Host, local: &[&PodNet], net: &ClusterNet, pool: &IpPool) {
    let (chains, sets) = render(local, net, pool);
    let wanted = normalised(&sets);
    {
        let have = current_sets(host);
        for (name, members) in &wanted {
            if have.get(name) != Some(members) {
                replace_sets(host, &BTreeMap::from([(name.clone(), members.clone())]));
            }
        }
    }
    let filter = &mut host.netfilter.ip4.filter;
    let stale: Vec<String> = filter
        .chains()
        .keys()
        .filter(|c| c.starts_with("cali-") && !chains.contains_key(c.as_ref()))
        .map(|c| c.to_string())
        .collect();
    for c in chains.keys() {
        filter.ensure_chain(c);
    }
    for (c, rules) in &chains {
        let same = filter.chains().get(c.as_str()).is_some_and(|have| {
            have.len() == rules.len() && have.iter().zip(rules).all(|(h, r)| h.text() == r)
        });
        if !same {
            filter.flush_chain(c);
            for r in rules {
                filter.append(c, r.clone());
            }
        }
    }
    for c in &stale {
        filter.delete_chain(c);
    }
    for r in FORWARD_RULES.iter().rev() {
        filter.prepend_unique("FORWARD", *r);
    }
    if pool.nat_outgoing {
        let nat = &mut host.netfilter.ip4.nat;
        nat.ensure_chain("cali-POSTROUTING");
        nat.ensure_chain("cali-nat-outgoing");
        nat.append_unique("cali-nat-outgoing", NAT_OUTGOING);
        nat.append_unique("cali-POSTROUTING", "-j cali-nat-outgoing");
        nat.prepend_unique("POSTROUTING", "-j cali-POSTROUTING");
    }
    let gone: Vec<String> = current_sets(host)
        .into_keys()
        .filter(|n| !wanted.contains_key(n))
        .collect();
    for n in gone {
        let _ = host.ipsets.destroy(&n, &host.netfilter);
    }
}

/// Felix's update for a few workload endpoints of a node, when no policy exists (so no
/// ipset or policy chain depends on them): each pod in `now` gets its `cali-tw-`/`cali-fw-`
/// chains rewritten and its dispatch entries inserted in order; each interface in `gone`
/// loses its chains (and with them the dispatch entries). The node must have been
/// programmed whole before (its `cali-FORWARD` exists).
pub(crate) fn update_endpoints(
    host: &mut Host,
    now: &[&PodNet],
    gone: &[String],
    local: &[&PodNet],
    net: &ClusterNet,
    pool: &IpPool,
) {
    if !net.policies.is_empty() {
        program(host, local, net, pool);
        return;
    }
    let filter = &mut host.netfilter.ip4.filter;
    for iface in gone {
        filter.delete_chain(&endpoint_chain_name(true, iface));
        filter.delete_chain(&endpoint_chain_name(false, iface));
    }
    for pod in now {
        let Some(iface) = pod.host_veth.as_deref().filter(|v| v.starts_with("cali")) else {
            continue;
        };
        if pod.ip.is_none() {
            continue;
        }
        for (name, rules) in profile_chains(&pod.namespace) {
            if !filter.chains().contains_key(name.as_str()) {
                filter.ensure_chain(&name);
                for r in rules {
                    filter.append(&name, r);
                }
            }
        }
        for (ingress, chain) in [
            (true, endpoint_chain_name(true, iface)),
            (false, endpoint_chain_name(false, iface)),
        ] {
            let rules = endpoint_chain(ingress, &[], &pod.namespace);
            let same = filter.chains().get(chain.as_str()).is_some_and(|have| {
                have.len() == rules.len() && have.iter().zip(&rules).all(|(h, r)| h.text() == r)
            });
            if !same {
                filter.flush_chain(&chain);
                for r in rules {
                    filter.append(&chain, r);
                }
            }
        }
        for (dispatch, flag, target) in [
            ("cali-from-wl-dispatch", "-i", FROM_WORKLOAD),
            ("cali-to-wl-dispatch", "-o", TO_WORKLOAD),
        ] {
            let rule = format!("{flag} {iface} -g {target}{iface}");
            if filter.has_rule(dispatch, &rule) {
                continue;
            }
            // Sorted by interface, before the final "Unknown interface" DROP.
            let rules = filter.rules(dispatch);
            let at = rules
                .iter()
                .position(|r| {
                    let other = r.text().split_whitespace().nth(1).unwrap_or_default();
                    !r.text().starts_with(flag) || other > iface
                })
                .unwrap_or(rules.len());
            filter.insert_at(dispatch, at, rule);
        }
    }
}

/// Remove everything Felix programmed on a node (deleting a chain drops the jumps to it).
pub fn remove(host: &mut Host) {
    for table in [&mut host.netfilter.ip4.filter, &mut host.netfilter.ip4.nat] {
        let mine: Vec<String> = table
            .chains()
            .keys()
            .filter(|c| c.starts_with("cali-"))
            .map(|c| c.to_string())
            .collect();
        for c in &mine {
            table.delete_chain(c);
        }
    }
    host.netfilter
        .ip4
        .filter
        .delete_rule("FORWARD", FORWARD_RULES[1]);
    remove_sets(host, "cali");
}

/// A member as the set holds it (`10.244.1.5` → `10.244.1.5/32`).
fn normal(member: &str) -> String {
    member
        .parse::<ipnet::IpNet>()
        .or_else(|_| member.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map(|n| n.to_string())
        .unwrap_or_else(|_| member.to_string())
}

/// The node's ipsets Felix owns, as (name → members).
fn current_sets(host: &Host) -> IpSetSpec {
    host.ipsets
        .iter()
        .filter(|(name, _)| name.starts_with("cali"))
        .map(|(name, set)| {
            let mut m: Vec<String> = set.members().map(|n| n.to_string()).collect();
            m.sort();
            (name.to_string(), m)
        })
        .collect()
}

/// Felix's sets in the form [`current_sets`] reads them back.
fn normalised(sets: &IpSetSpec) -> IpSetSpec {
    sets.iter()
        .map(|(k, v)| {
            let mut m: Vec<String> = v.iter().map(|x| normal(x)).collect();
            m.sort();
            m.dedup();
            (k.clone(), m)
        })
        .collect()
}

/// Replace the node's Felix ipsets with these (hash:net, `maxelem` 1048576 as Felix's
/// `MaxIPSetSize`).
fn replace_sets(host: &mut Host, sets: &IpSetSpec) {
    use crate::cni::ipset::{Family, SetType};
    for (name, members) in sets {
        if host
            .ipsets
            .create(name, SetType::HashNet, Family::Inet, 1_048_576)
            .is_ok()
        {
            let _ = host.ipsets.replace_members(name, members);
        }
    }
}

/// Destroy the node's ipsets whose names start with `prefix` (once no rule uses them).
fn remove_sets(host: &mut Host, prefix: &str) {
    let names: Vec<String> = host
        .ipsets
        .iter()
        .map(|(n, _)| n.to_string())
        .filter(|n| n.starts_with(prefix))
        .collect();
    for n in names {
        let _ = host.ipsets.destroy(&n, &host.netfilter);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_policy_ids_are_hashed_as_felix_does() {
        // felix/rules/policy_test.go and the reference's computed vectors.
        assert_eq!(
            chain_name("cali-pi-", "gnp/long-policy-name-that-gets-hashed"),
            "cali-pi-_PymyFHQQg3808jiz1OJ"
        );
        assert_eq!(
            chain_name("cali-pi-", "knp/default/allow-client"),
            "cali-pi-_xkkHayCrFy5osyT5E7F"
        );
        assert_eq!(
            chain_name("cali-pi-", "gnp/deny-all"),
            "cali-pi-gnp/deny-all"
        );
    }
}
