//! Differential test: the real kernel as the oracle for the packet walker's answers on the
//! probes beyond pod to pod (issue 37 §1). Each scenario builds a lab through its commands,
//! replays its state into real network namespaces exactly as `dataplane_differential` does
//! (links, routes, neighbours, FDB, sysctls, ipsets, the nat and filter tables; the state is
//! compared line for line first), then sends real packets and compares, probe by probe:
//! - the verdict: did the packet reach the namespace the lab delivers it to (counted by
//!   count-only rules at the head of that namespace's filter INPUT), against `trace`;
//! - the source seen on arrival: which of the lab's addresses those rules counted, against
//!   the source the trace delivers (after portmap's hairpin SNAT, a bridge's ipMasq);
//! - the MTU answer: `ping -M do`'s "Frag needed and DF set (mtu = M)" or "message too
//!   long, mtu=M" against the trace's drop for the MTU;
//! - under Calico, `reach`'s verdict against the kernel's (Felix's chains decide).
//!
//! The probes: a peer node's pod-network address (node-2's bridge address) from a pod on
//! node-1 under host-gw and VXLAN (routed as pod traffic, the source kept; VXLAN's 1450
//! MTU); a hostPort reached from a pod on the same node (the hairpin masquerade mark), by
//! the pod that holds it, and from the other node; a bridge with ipMasq; and Calico with a
//! NetworkPolicy and a hostPort.
//!
//! Needs what `dataplane_differential` needs, and `ipset` and `bash` (its `/dev/tcp` opens a
//! TCP connection: the SYN is what is counted); otherwise it says why and passes. The
//! namespaces are named `lab-wd-<pid>-<scenario>-…`, and only those are deleted.

use crate::dataplane_differential::{self as dp, Backend};
use crate::oracle;

use lab_engine::command::grammar::FlowArgs;
use lab_engine::engine::Lab;
use lab_engine::net::trace::{Rewrite, Trace};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// A bridge conflist whose bridge masquerades (`ipMasq: true`).
const MASQ_CONFLIST: &str = r#"{"cniVersion":"1.0.0","name":"masq-net","plugins":[{"type":"bridge","bridge":"br-lab","isGateway":true,"isDefaultGateway":true,"ipMasq":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"{{.PodCIDR}}"}]]}}]}"#;

/// What a probe sends.
#[derive(Clone, Copy)]
enum Send {
    /// `ping -M do -s N` (the IP packet is N + 28 bytes).
    Ping(u32),
    /// A TCP connection's SYN to the port.
    Tcp(u16),
}

/// One probe: from a pod to a destination the lab resolves (a pod, a node, an address),
/// arriving (if it does) in the namespace of `at` (a pod or a node).
struct Probe {
    src: &'static str,
    dst: &'static str,
    send: Send,
    at: &'static str,
}

const fn ping(src: &'static str, dst: &'static str, size: u32, at: &'static str) -> Probe {
    Probe {
        src,
        dst,
        send: Send::Ping(size),
        at,
    }
}

const fn tcp(src: &'static str, dst: &'static str, port: u16, at: &'static str) -> Probe {
    Probe {
        src,
        dst,
        send: Send::Tcp(port),
        at,
    }
}

/// Why the test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    dp::missing_prerequisite().or_else(|| oracle::missing(true, &["ipset", "bash"], &[]))
}

/// The lab after `lines` (a conflist file is written for `{MASQ}`).
fn lab_after(lines: &[&str], tag: &str) -> Lab {
    let mut lab = crate::common::lab();
    let dir = std::env::temp_dir().join(format!("lab-wd-{}-{tag}", std::process::id()));
    for line in lines {
        let line = if line.contains("{MASQ}") {
            std::fs::create_dir_all(&dir).expect("temp dir");
            let file = dir.join("00-masq.conflist");
            std::fs::write(&file, MASQ_CONFLIST).expect("conflist");
            line.replace("{MASQ}", &file.display().to_string())
        } else {
            line.to_string()
        };
        lab.execute(&line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let _ = std::fs::remove_dir_all(&dir);
    lab
}

/// Every address the lab's nodes and pods hold (the sources the kernel may show).
fn candidates(lab: &Lab) -> BTreeSet<IpAddr> {
    let mut out = BTreeSet::new();
    for rt in lab.nodes().values() {
        let host = &rt.host;
        for ns in std::iter::once(&host.root).chain(host.netns.values()) {
            for l in ns.links.values() {
                for a in &l.addrs {
                    let ip = Some(a.addr());
                    if let Some(ip) = ip.filter(|ip| ip.is_ipv4() && !ip.is_loopback()) {
                        out.insert(ip);
                    }
                }
            }
        }
    }
    out
}

/// The namespace of a pod or a node of the lab.
fn namespace_of<'r>(real: &'r dp::Real, name: &str) -> &'r str {
    match real.node_ns.get(name) {
        Some(ns) => ns,
        None => real.pod(name),
    }
}

/// The address a probe's destination word stands for in the kernel: an address, a node's
/// InternalIP, a pod's IP.
fn address_of(lab: &Lab, word: &str) -> String {
    if word.parse::<IpAddr>().is_ok() {
        return word.to_string();
    }
    if let Some(rt) = lab.nodes().get(word) {
        let eth0 = &rt.host.root.links["eth0"];
        return eth0.addrs[0].addr().to_string();
    }
    let ip = lab
        .pod_ip(&("default".to_string(), word.to_string()))
        .flatten()
        .unwrap_or_else(|| panic!("{word} has no IP"));
    ip.to_string()
}

/// The count-only rules at the head of `ns`'s filter INPUT: one per candidate source and
/// one for anything of the protocol (added once per namespace and protocol).
/// TCP counts only SYNs: a pod reaching its own hostPort also receives the un-NATed answer.
fn count_rules(ns: &str, proto: &str, sources: &BTreeSet<IpAddr>) {
    let count = |source: Option<IpAddr>| {
        let mut args = vec!["netns", "exec", ns, "iptables", "-I", "INPUT", "1"];
        let s = source.map(|s| s.to_string());
        if let Some(s) = &s {
            args.extend(["-s", s.as_str()]);
        }
        args.extend(["-p", proto]);
        if proto == "tcp" {
            args.push("--syn");
        }
        let comment = match &s {
            Some(s) => format!("probe-src-{proto}-{s}"),
            None => format!("probe-any-{proto}"),
        };
        args.extend(["-m", "comment", "--comment", &comment]);
        dp::must("ip", &args);
    };
    count(None);
    for s in sources {
        count(Some(*s));
    }
}

/// The packets each count-only rule of `proto` counted: (sources counted, all counted).
fn counted(ns: &str, proto: &str) -> (Vec<IpAddr>, u64) {
    let out = dp::must(
        "ip",
        &["netns", "exec", ns, "iptables", "-S", "INPUT", "-v"],
    );
    let mut seen = Vec::new();
    let mut any = 0;
    for l in out.lines() {
        let words: Vec<&str> = l.split_whitespace().collect();
        let Some(pkts) = words
            .iter()
            .position(|w| *w == "-c")
            .and_then(|i| words.get(i + 1))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let Some(comment) = dp::word_after(l, "--comment").map(|c| c.trim_matches('"')) else {
            continue;
        };
        if comment == format!("probe-any-{proto}") {
            any = pkts;
        } else if let Some(ip) = comment.strip_prefix(&format!("probe-src-{proto}-")) {
            if pkts > 0 {
                seen.push(ip.parse().expect("an address in the comment"));
            }
        }
    }
    (seen, any)
}

/// What the kernel did with one probe.
struct KernelSaw {
    /// The probe reached `at`'s INPUT.
    arrived: bool,
    /// The sources `at` counted.
    sources: Vec<IpAddr>,
    /// The MTU of a "Frag needed" (`true`) or "message too long" (`false`) answer.
    mtu_error: Option<(u32, bool)>,
    /// ping's or bash's words, for the failure message.
    said: String,
}

fn send(real: &dp::Real, lab: &Lab, p: &Probe) -> KernelSaw {
    let from = real.pod(p.src);
    let at = namespace_of(real, p.at);
    let proto = match p.send {
        Send::Ping(_) => "icmp",
        Send::Tcp(_) => "tcp",
    };
    dp::must("ip", &["netns", "exec", at, "iptables", "-Z", "INPUT"]);
    let dst = address_of(lab, p.dst);
    let said = match p.send {
        Send::Ping(size) => dp::ping(from, size, &dst).1,
        Send::Tcp(port) => {
            let d = dp::run(
                "ip",
                &[
                    "netns",
                    "exec",
                    from,
                    "timeout",
                    "1.5",
                    "bash",
                    "-c",
                    &format!("exec 3<>/dev/tcp/{dst}/{port}"),
                ],
                "",
            );
            format!("{}{}", d.stdout, d.stderr)
        }
    };
    let (sources, any) = counted(at, proto);
    let mtu = |key: &str, icmp: bool| {
        said.find(key).map(|i| {
            let n: String = said[i + key.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            (n.parse().expect("an MTU"), icmp)
        })
    };
    KernelSaw {
        arrived: any > 0,
        sources,
        mtu_error: mtu("Frag needed and DF set (mtu = ", true)
            .or_else(|| mtu("message too long, mtu=", false)),
        said,
    }
}

/// The lab's walk of a probe.
fn walk(lab: &Lab, p: &Probe) -> Trace {
    let (port, size) = match p.send {
        Send::Ping(n) => (None, Some(n + 28)),
        Send::Tcp(port) => (Some(port.to_string()), None),
    };
    let args = FlowArgs {
        src: p.src.to_string(),
        dst: p.dst.to_string(),
        port,
        size,
    };
    lab.walk(&args)
        .unwrap_or_else(|e| panic!("trace {} {}: {}", p.src, p.dst, e.message))
}

/// The source the packet carries when the trace delivers it.
fn lab_source(lab: &Lab, p: &Probe, t: &Trace) -> IpAddr {
    let rewritten = t.hops.iter().rev().find_map(|h| match h.rewrite {
        Some(Rewrite::Source(_, to)) => Some(to),
        _ => None,
    });
    rewritten.unwrap_or_else(|| address_of(lab, p.src).parse().expect("an address"))
}

/// Whether a delivered trace ends at `at` (a pod's `ns/name …` or a node's `node …`).
fn delivered_at(t: &Trace, at: &str) -> bool {
    match &t.outcome {
        lab_engine::net::trace::Outcome::Delivered(to) => {
            to.starts_with(&format!("default/{at} ")) || to.starts_with(&format!("{at} "))
        }
        _ => false,
    }
}

/// Run a scenario: the lab after `lines`, mirrored, its state compared, then every probe.
fn scenario(tag: &str, backend: Backend, lines: &[&str], probes: &[Probe], reach: bool) {
    let test = format!("the walker differential test ({tag})");
    if !oracle::run_or_skip(&test, missing_prerequisite()) {
        return;
    }
    let prefix = format!("lab-wd-{}-{tag}", std::process::id());
    if backend == Backend::Vxlan && !oracle::run_or_skip(&test, dp::kernel_lacks_vxlan(&prefix)) {
        return;
    }
    let mut lab = lab_after(lines, tag);
    let real = dp::mirror(&lab, &prefix)
        .unwrap_or_else(|e| panic!("building the lab's state in the kernel: {e}"));
    dp::compare_state(&mut lab, &real, backend);
    let sources = candidates(&lab);
    let mut counting: BTreeMap<(String, &str), ()> = BTreeMap::new();
    let mut failures = Vec::new();
    for p in probes {
        let proto = match p.send {
            Send::Ping(_) => "icmp",
            Send::Tcp(_) => "tcp",
        };
        let at = namespace_of(&real, p.at).to_string();
        if counting.insert((at.clone(), proto), ()).is_none() {
            count_rules(&at, proto, &sources);
        }
        let saw = send(&real, &lab, p);
        let t = walk(&lab, p);
        let what = match p.send {
            Send::Ping(n) => format!("ping -M do -s {n} from {} to {}", p.src, p.dst),
            Send::Tcp(port) => format!("TCP from {} to {}:{port}", p.src, p.dst),
        };
        let trace = t.lines().join("\n");
        let lab_arrived = delivered_at(&t, p.at);
        if saw.arrived != lab_arrived {
            failures.push(format!(
                "{what}: the kernel {} it at {}, the lab's trace {}:\n{trace}\nthe kernel's tools said: {}",
                if saw.arrived { "delivered" } else { "did not deliver" },
                p.at,
                if lab_arrived { "delivers it there" } else { "does not" },
                saw.said.trim()
            ));
            continue;
        }
        if saw.arrived {
            let lab_src = lab_source(&lab, p, &t);
            if saw.sources != [lab_src] {
                failures.push(format!(
                    "{what}: {} saw the source {:?}, the lab's trace delivers it from {lab_src}:\n{trace}",
                    p.at, saw.sources
                ));
            }
        }
        // A connect the sender's kernel refuses (a broadcast address: ENETUNREACH) is
        // refused in the lab's trace with the same words.
        let unreachable = |s: &str| s.contains("Network is unreachable");
        if unreachable(&saw.said) != unreachable(&trace) {
            failures.push(format!(
                "{what}: the kernel's tools said {:?}, the lab's trace:\n{trace}",
                saw.said.trim()
            ));
        }
        let lab_mtu = t.too_big.as_ref().map(|b| (b.mtu, b.icmp));
        if saw.mtu_error != lab_mtu {
            failures.push(format!(
                "{what}: the kernel's MTU answer {:?}, the lab's {lab_mtu:?} (mtu, ICMP from a router):\n{trace}\nthe kernel's tools said: {}",
                saw.mtu_error,
                saw.said.trim()
            ));
        }
        if reach {
            if let Send::Tcp(port) = p.send {
                let line = format!("reach {} {} --port {port}", p.src, p.dst);
                let out = dp::text(&mut lab, &line);
                let head = out.split(':').next().unwrap_or("");
                let kernel = if saw.arrived { "allowed" } else { "denied" };
                if head != kernel {
                    failures.push(format!(
                        "{line}: the kernel's verdict is {kernel}, the lab says\n{out}"
                    ));
                }
            }
        }
    }
    drop(real.guard);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The pods of the flannel scenarios: web on node-1; db and api (hostPort 8080 → 80) on
/// node-2.
const FLANNEL_PODS: [&str; 3] = [
    "pod create web --node node-1",
    "pod create db --node node-2",
    "pod create api --node node-2 --port 8080:80",
];

/// host-gw: node-2's bridge address from node-1 is pod traffic (the source kept, 1500
/// fits); a hostPort from a pod on its node is masqueraded to the bridge's address (the
/// hairpin mark), so is the pod that holds it reaching its own hostPort, and a pod on
/// another node keeps its source.
#[test]
fn host_gw_probes_the_kernel_agrees_with_the_walker() {
    let probes = [
        ping("web", "10.244.2.1", 56, "node-2"),
        ping("web", "10.244.2.1", 1472, "node-2"),
        ping("web", "10.244.2.1", 1473, "node-2"),
        tcp("db", "node-2", 8080, "api"),
        tcp("api", "node-2", 8080, "api"),
        tcp("web", "node-2", 8080, "api"),
        tcp("web", "db", 80, "db"),
        // web's own subnet's broadcast: the connect fails in web (ENETUNREACH), nothing
        // reaches the bridge.
        tcp("web", "10.244.1.255", 80, "node-1"),
    ];
    scenario("hostgw", Backend::HostGw, &FLANNEL_PODS, &probes, false);
}

/// VXLAN: node-2's bridge address goes through flannel.1 (mtu 1450): 1422 + 28 fits,
/// 1472 + 28 gets node-1's "Frag needed (mtu = 1450)"; the hostPort hairpin as under
/// host-gw.
#[test]
fn vxlan_probes_the_kernel_agrees_with_the_walker() {
    let mut lines = vec!["network use flannel-vxlan"];
    lines.extend(FLANNEL_PODS);
    let probes = [
        ping("web", "10.244.2.1", 56, "node-2"),
        ping("web", "10.244.2.1", 1422, "node-2"),
        ping("web", "10.244.2.1", 1472, "node-2"),
        tcp("db", "node-2", 8080, "api"),
        tcp("web", "node-2", 8080, "api"),
    ];
    scenario("vxlan", Backend::Vxlan, &lines, &probes, false);
}

/// A bridge with ipMasq: node-2's bridge address and node-2's InternalIP are outside the
/// bridge's subnet, so both see node-1's eth0 address; db keeps web's source only under
/// the default conflist (here it is masqueraded too).
#[test]
fn ip_masq_probes_the_kernel_agrees_with_the_walker() {
    let lines = [
        "cni conf load {MASQ} --node node-1",
        "cni conf load {MASQ} --node node-2",
        "pod create web --node node-1",
        "pod create db --node node-2",
    ];
    let probes = [
        ping("web", "node-2", 56, "node-2"),
        ping("web", "db", 56, "db"),
        tcp("web", "db", 80, "db"),
    ];
    scenario("masq", Backend::HostGw, &lines, &probes, false);
}

/// Calico (BGP, Felix's chains and ipsets): db on node-2 admits app=web on port 80 only,
/// and holds hostPort 8080. `reach` must say what the kernel does, for the pod and for its
/// hostPort on node-2 (from node-1 the source is masqueraded to node-1's address by
/// `cali-nat-outgoing`, so the policy no longer sees app=web); db reaching its own hostPort
/// is judged by its own policy (Felix sees db's address before the hairpin masquerade).
#[test]
fn calico_policy_probes_the_kernel_agrees_with_the_walker() {
    let lines = [
        "network use calico-bgp",
        "pod create web --node node-1 -l app=web",
        "pod create other --node node-1 -l app=other",
        "pod create db --node node-2 -l app=db --port 8080:80",
        "policy create db-in --select app=db --ingress-from app=web --port 80",
    ];
    let probes = [
        tcp("web", "db", 80, "db"),
        tcp("other", "db", 80, "db"),
        tcp("web", "node-2", 8080, "db"),
        tcp("other", "node-2", 8080, "db"),
        tcp("db", "node-2", 8080, "db"),
        tcp("db", "web", 80, "web"),
    ];
    scenario("calico", Backend::HostGw, &lines, &probes, true);
}
