//! The random clusters the data-plane property tests share: pods with labels in two
//! namespaces, policies built from `policy create` flags, and flows between them.
#![allow(dead_code)]

use lab_engine::engine::Lab;
use proptest::prelude::*;

/// A small cluster state for the property: pods with labels in two namespaces, policies.
#[derive(Debug, Clone)]
pub struct Case {
    pub pods: Vec<(usize, usize, usize)>,
    pub policies: Vec<PolicyCase>,
    pub flows: Vec<(usize, usize, u16, bool)>,
}

#[derive(Debug, Clone)]
pub struct PolicyCase {
    pub ns: usize,
    pub select: Option<usize>,
    pub ingress_from: Vec<Peer>,
    pub egress_to: Vec<Peer>,
    pub ports: Vec<(u16, Option<u16>, bool)>,
    pub types: usize,
}

#[derive(Debug, Clone)]
pub enum Peer {
    Pods(usize),
    Ns(usize),
}

pub const NS: [&str; 2] = ["alpha", "beta"];
pub const APPS: [&str; 3] = ["web", "db", "cache"];
pub const PORTS: [u16; 3] = [80, 443, 5432];
pub const TYPES: [&str; 3] = ["Ingress", "Egress", "Ingress,Egress"];

pub fn peer() -> impl Strategy<Value = Peer> {
    prop_oneof![
        (0..3usize).prop_map(Peer::Pods),
        (0..2usize).prop_map(Peer::Ns)
    ]
}

pub fn case() -> impl Strategy<Value = Case> {
    let pods = proptest::collection::vec((0..2usize, 0..2usize, 0..3usize), 2..6);
    let policy = (
        0..2usize,
        proptest::option::of(0..3usize),
        proptest::collection::vec(peer(), 0..3),
        proptest::collection::vec(peer(), 0..3),
        proptest::collection::vec(
            (0..3usize, proptest::option::of(1..200u16), any::<bool>()),
            0..3,
        ),
        0..3usize,
    )
        .prop_map(|(ns, select, i, e, ports, types)| PolicyCase {
            ns,
            select,
            ingress_from: i,
            egress_to: e,
            ports: ports
                .into_iter()
                .map(|(p, end, udp)| (PORTS[p], end.map(|d| PORTS[p] + d), udp))
                .collect(),
            types,
        });
    (
        pods,
        proptest::collection::vec(policy, 0..4),
        proptest::collection::vec((0..8usize, 0..8usize, 0..3usize, any::<bool>()), 1..6),
    )
        .prop_map(|(pods, policies, flows)| Case {
            pods,
            policies,
            flows: flows
                .into_iter()
                .map(|(a, b, p, udp)| (a, b, PORTS[p], udp))
                .collect(),
        })
}

pub fn peer_flag(flag: &str, p: &Peer) -> String {
    match p {
        Peer::Pods(a) => format!(" --{flag} app={}", APPS[*a]),
        Peer::Ns(n) => format!(" --{flag} ns:team={}", NS[*n]),
    }
}

impl PolicyCase {
    pub fn selects(&self, pod: &(usize, usize, usize)) -> bool {
        self.ns == pod.1 && self.select.is_none_or(|a| a == pod.2)
    }

    /// Cilium difference 3 (cilium#48703): the spec has rules of a direction its
    /// policyTypes leave out. Cilium turns them into rules anyway, which isolates the pod
    /// in that direction; Kubernetes ignores them. (The lab's `policy create` keeps every
    /// `--ingress-from` / `--egress-to` whatever `--types` says.)
    pub fn stray(&self, ingress: bool) -> bool {
        let types = TYPES[self.types];
        if ingress {
            !self.ingress_from.is_empty() && !types.contains("Ingress")
        } else {
            !self.egress_to.is_empty() && !types.contains("Egress")
        }
    }
}

/// Build the case in a lab already running its network: the two namespaces, the pods
/// (`names`, as `ns/name`) and the policies `policy create` accepted (`created`).
pub fn setup(lab: &mut Lab, c: &Case) -> (Vec<String>, Vec<PolicyCase>) {
    for ns in NS {
        lab.execute(&format!("ns create {ns} --label team={ns}"))
            .expect("namespace");
    }
    let mut names = Vec::new();
    for (i, (node, ns, app)) in c.pods.iter().enumerate() {
        let name = format!("p{i}");
        lab.execute(&format!(
            "pod create {name} -n {} --node node-{} --label app={}",
            NS[*ns],
            node + 1,
            APPS[*app]
        ))
        .expect("pod");
        names.push(format!("{}/{name}", NS[*ns]));
    }
    let mut created = Vec::new();
    for (i, p) in c.policies.iter().enumerate() {
        let mut cmd = format!(
            "policy create pol{i} -n {} --select '{}'",
            NS[p.ns],
            p.select
                .map(|a| format!("app={}", APPS[a]))
                .unwrap_or_default()
        );
        for f in &p.ingress_from {
            cmd.push_str(&peer_flag("ingress-from", f));
        }
        for f in &p.egress_to {
            cmd.push_str(&peer_flag("egress-to", f));
        }
        for (port, end, udp) in &p.ports {
            let proto = if *udp { "UDP" } else { "TCP" };
            match end {
                Some(e) => cmd.push_str(&format!(" --port {port}-{e}/{proto}")),
                None => cmd.push_str(&format!(" --port {port}/{proto}")),
            }
        }
        cmd.push_str(&format!(" --types {}", TYPES[p.types]));
        if lab.execute(&cmd).is_ok() {
            created.push(p.clone());
        }
    }
    (names, created)
}

/// Trace one flow and check that the data plane's policy verdict is the policies' verdict
/// (and that a packet the policy lets through arrives). `None` when the flow is refused as
/// a command; the trace otherwise, for further checks.
pub fn check_flow(
    lab: &mut Lab,
    src: &str,
    dst: &str,
    port: u16,
    udp: bool,
) -> Result<Option<lab_engine::net::trace::Trace>, TestCaseError> {
    let proto = if udp { "UDP" } else { "TCP" };
    let line = format!("trace {src} {dst} --port {port}/{proto}");
    if lab.execute(&line).is_err() {
        return Ok(None);
    }
    let args = lab_engine::command::grammar::FlowArgs {
        src: src.to_string(),
        dst: dst.to_string(),
        port: Some(format!("{port}/{proto}")),
        size: None,
    };
    let t = lab.walk(&args).expect("walk");
    prop_assert_eq!(
        t.policy_allows(),
        t.verdict.allowed(),
        "{}: {}\n{}",
        line,
        t.verdict.text(),
        t.lines().join("\n")
    );
    prop_assert!(
        t.delivered() || !t.policy_allows(),
        "{}",
        t.lines().join("\n")
    );
    Ok(Some(t))
}
