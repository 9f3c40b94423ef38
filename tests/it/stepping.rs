//! Stepping a packet (`trace … --step`, issue 39 §1): the typed facts each hop carries (where,
//! the packet after NAT and inside VXLAN, the MTU, the entry consulted), and the desk's
//! stepping as the REPL drives it (Enter, `b`, `q`, `step …`).

use lab_engine::Desk;
use lab_engine::command::grammar::FlowArgs;
use lab_engine::net::hop::{Entry, Place};
use lab_engine::net::trace::{HopKind, Rewrite, Trace};
use std::net::IpAddr;

fn run(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("`{line}` failed: {}", e.message),
    }
}

fn fails(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(out) => panic!("`{line}` succeeded: {}", out.to_text()),
        Err(e) => e.message,
    }
}

fn walk(desk: &Desk, src: &str, dst: &str, port: Option<&str>) -> Trace {
    let args = FlowArgs {
        src: src.to_string(),
        dst: dst.to_string(),
        port: port.map(str::to_string),
        size: None,
    };
    desk.lab.walk(&args).expect("walk")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

fn two_pods(network: &str) -> Desk {
    let mut desk = crate::common::desk();
    run(&mut desk, &format!("network use {network}"));
    run(&mut desk, "pod create web --node node-1");
    run(&mut desk, "pod create db --node node-2");
    desk
}

#[test]
fn a_vxlan_hop_carries_the_outer_headers_and_the_neighbour_and_fdb_entries() {
    let desk = two_pods("flannel-vxlan");
    let t = walk(&desk, "web", "db", None);
    let tunnel = t
        .hops
        .iter()
        .find(|h| h.kind == HopKind::Tunnel)
        .expect("a tunnel hop");
    assert_eq!(tunnel.at, Place::Node("node-1".into()));
    assert_eq!(tunnel.dev.as_deref(), Some("flannel.1"));
    let Some(Entry::Vxlan {
        neighbour, fdb_dst, ..
    }) = &tunnel.entry
    else {
        panic!(
            "the tunnel hop consulted no neighbour/FDB: {:?}",
            tunnel.entry
        );
    };
    assert_eq!(
        (*neighbour, *fdb_dst),
        (ip("10.244.2.0"), ip("192.168.0.2"))
    );
    let packet = tunnel.packet.as_ref().expect("the packet");
    let outer = packet.outer.expect("outer headers while encapsulated");
    assert_eq!(
        (outer.src, outer.dst, outer.dport, outer.vni, outer.size),
        (ip("192.168.0.1"), ip("192.168.0.2"), 8472, 1, 134)
    );
    assert_eq!(
        (packet.src, packet.dst),
        (ip("10.244.1.2"), ip("10.244.2.2"))
    );
    // Unwrapped on node-2: no outer headers from there on.
    let last = t.hops.last().expect("hops");
    assert!(last.packet.as_ref().is_some_and(|p| p.outer.is_none()));
    assert_eq!(
        last.at,
        Place::Pod {
            namespace: "default".into(),
            name: "db".into(),
            node: "node-2".into()
        }
    );
    // The route on node-1 was checked against flannel.1's MTU.
    let route = t
        .hops
        .iter()
        .find(|h| h.node_route().is_some())
        .expect("a node route");
    assert_eq!(route.packet.as_ref().and_then(|p| p.mtu), Some(1450));
}

#[test]
fn a_nat_hop_carries_the_rewritten_packet_and_the_rule_by_its_number() {
    let mut desk = crate::common::desk();
    run(&mut desk, "pod create web --node node-1");
    run(&mut desk, "pod create api --node node-2 --port 8080:80");
    let t = walk(&desk, "web", "node-2", Some("8080"));
    let dnat = t
        .hops
        .iter()
        .find(|h| {
            h.kind == HopKind::Netfilter && matches!(h.rewrite, Some(Rewrite::Destination(..)))
        })
        .expect("the DNAT hop");
    let p = dnat.packet.as_ref().expect("the packet");
    assert_eq!((p.dst, p.dport), (ip("10.244.2.2"), 80));
    assert_eq!(p.sent, Some((ip("10.244.1.2"), ip("192.168.0.2"), 8080)));
    let Some(Entry::Rule {
        chain,
        number,
        rule,
        ..
    }) = &dnat.entry
    else {
        panic!("no rule: {:?}", dnat.entry);
    };
    // The rule's number is its place in its chain, as `iptables -S CHAIN` lists it.
    let listing = run(&mut desk, "show iptables node-2 -t nat");
    let in_chain: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(&format!("-A {chain} ")))
        .collect();
    assert_eq!(in_chain.get(number - 1), Some(&rule.as_str()), "{listing}");
}

#[test]
fn the_path_names_each_gateway_route_from_the_typed_route() {
    let desk = two_pods("flannel-host-gw");
    let t = walk(&desk, "web", "db", None);
    assert_eq!(
        t.path(),
        [
            "default/web eth0 10.244.1.2",
            "veth56d1da70 (host side) on node-1",
            "cni0 on node-1 (10.244.1.1)",
            "route 10.244.2.0/24 via 192.168.0.2 dev eth0",
            "nat POSTROUTING on node-1: -A FLANNEL-POSTRTG -s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment \"flanneld masq\" -j RETURN (no NAT)",
            "node-2 eth0 192.168.0.2",
            "nat POSTROUTING on node-2: -A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.2.0/24 -m comment --comment \"flanneld masq\" -j RETURN (no NAT)",
            "cni0 on node-2 (10.244.2.1)",
            "veth312e09b9 (host side) on node-2",
            "default/db eth0 10.244.2.2",
        ]
        .join(" → ")
    );
}

#[test]
fn enter_b_and_q_step_a_trace_in_the_repl() {
    let mut desk = two_pods("flannel-host-gw");
    let hops = walk(&desk, "web", "db", None).hops.len();
    let out = run(&mut desk, "trace web db --step");
    assert!(
        out.starts_with("trace default/web → default/db:80/TCP\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("── hop 1/{hops}: default/web · endpoint ──\n")),
        "{out}"
    );
    assert!(!out.contains("hop 2/"), "only the first hop: {out}");
    assert_eq!(desk.stepping().map(|s| s.at()), Some(0));
    // Enter: the next hop, with the route it consulted.
    let out = run(&mut desk, "");
    assert!(
        out.starts_with(&format!("── hop 2/{hops}: default/web · pod route ──\n")),
        "{out}"
    );
    assert!(
        out.contains("  consulted: route default via 10.244.1.1 dev eth0\n"),
        "{out}"
    );
    let out = run(&mut desk, "b");
    assert!(out.starts_with(&format!("── hop 1/{hops}:")), "{out}");
    // Back from the first hop: refused, and nothing moves.
    let e = fails(&mut desk, "back");
    assert!(e.contains("already at the first hop"), "{e}");
    assert_eq!(desk.stepping().map(|s| s.at()), Some(0));
    // q ends stepping (not the session); then a blank line is nothing again.
    assert_eq!(
        run(&mut desk, "q"),
        format!("stepping ended at hop 1/{hops}\n")
    );
    assert!(desk.stepping().is_none());
    assert_eq!(run(&mut desk, ""), "");
    let e = fails(&mut desk, "step");
    assert!(e.contains("nothing is being stepped"), "{e}");
}

#[test]
fn stepping_past_the_last_hop_prints_the_result_and_ends() {
    let mut desk = two_pods("flannel-host-gw");
    let hops = walk(&desk, "web", "db", None).hops.len();
    run(&mut desk, "trace web db --step");
    for n in 2..=hops {
        let out = run(&mut desk, "step");
        assert!(out.starts_with(&format!("── hop {n}/{hops}:")), "{out}");
    }
    assert_eq!(
        run(&mut desk, "step"),
        "delivered to default/db eth0 10.244.2.2\n"
    );
    assert!(desk.stepping().is_none());
}

#[test]
fn a_plain_trace_and_a_failed_one_start_no_stepping() {
    let mut desk = two_pods("flannel-host-gw");
    run(&mut desk, "trace web db");
    assert!(desk.stepping().is_none());
    let e = fails(&mut desk, "trace web nowhere --step");
    assert!(e.contains("nowhere"), "{e}");
    assert!(desk.stepping().is_none());
}

#[test]
fn a_script_prints_every_hop_of_a_stepped_trace_and_steps_no_further() {
    let mut desk = crate::common::desk();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ok = lab_engine::script::run(
        &mut desk,
        "pod create web --node node-1\npod create db --node node-2\ntrace web db --step\n! step\n",
        lab_engine::script::RunOptions::default(),
        &mut out,
        &mut err,
    )
    .expect("run");
    let out = String::from_utf8(out).expect("utf-8");
    assert!(ok, "{out}{}", String::from_utf8_lossy(&err));
    let hops = walk(&desk, "web", "db", None).hops.len();
    for n in 1..=hops {
        assert!(
            out.contains(&format!("── hop {n}/{hops}:")),
            "hop {n}: {out}"
        );
    }
    assert!(
        out.ends_with("delivered to default/db eth0 10.244.2.2\n"),
        "{out}"
    );
    assert!(desk.stepping().is_none());
}
