//! The node's netfilter through the lab: a dual-stack pod ADD puts its IPv6 rules in the
//! ip6tables nat table (bridge ipMasq with `ff00::/8`, portmap with `[ip6]:port`), DEL
//! removes both families' rules, every rule the lab writes is one the evaluator models,
//! and `show iptables NODE [-6] [--table nat|filter]` prints the table asked for.

use cni_csi_lab::Lab;
use lab_engine::cni::netfilter::{Decision, L4, Packet, TableKind};

const DUAL: &str = "tests/fixtures/dual-stack.conflist";

/// The default lab, node-1 switched to the dual-stack conflist, two pods with host ports.
fn dual_stack_lab() -> Lab {
    let mut lab = crate::common::lab();
    for line in [
        format!("cni conf load {DUAL} --node node-1 --as 00-dual.conflist"),
        "pod create web --node node-1 --port 8080:80".into(),
        "pod create dns --node node-1 --port 5353:53/UDP".into(),
        "pod create plain --node node-2 --port 9090:90".into(),
    ] {
        lab.execute(&line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    lab
}

fn text(lab: &mut Lab, line: &str) -> String {
    lab.execute(line)
        .unwrap_or_else(|e| panic!("{line}: {}", e.message))
        .to_text()
}

#[test]
fn a_dual_stack_add_writes_v6_rules_to_ip6tables() {
    let lab = dual_stack_lab();
    let nf = &lab.nodes()["node-1"].host.netfilter;
    let v4 = nf.ip4.nat.to_lines().join("\n");
    let v6 = nf.ip6.nat.to_lines().join("\n");
    assert!(!v4.contains("fd00") && !v4.contains("ff00::/8"), "{v4}");
    assert!(v6.contains("! -d ff00::/8"), "{v6}");
    assert!(v6.contains("-s fd00:10:1::2/128"), "{v6}");
    assert!(
        v6.contains("DNAT --to-destination [fd00:10:1::2]:80"),
        "{v6}"
    );
    assert!(
        v6.contains("DNAT --to-destination [fd00:10:1::3]:53"),
        "{v6}"
    );
    assert!(!v6.contains("10.244."), "{v6}");
    // No localhost rule for IPv6 (portmap: `!isV6 && !MasqAll`).
    assert!(!v6.contains("127.0.0.1") && v4.contains("-s 127.0.0.1/32"));
    // The filter tables are untouched by bridge and portmap: only flanneld's IPv4
    // FLANNEL-FWD is there (its Network is IPv4).
    assert!(nf.ip4.filter.to_lines().iter().all(|l| !l.contains("CNI")));
    assert_eq!(
        nf.ip6.filter.to_lines(),
        ["-P INPUT ACCEPT", "-P FORWARD ACCEPT", "-P OUTPUT ACCEPT"]
    );
    // node-2 is single-stack: nothing in ip6tables.
    let n2 = &lab.nodes()["node-2"].host.netfilter;
    assert_eq!(n2.ip6.nat.to_lines().len(), 4);
    assert!(n2.ip4.nat.to_lines().len() > 4);
}

/// A dual-stack pod's routes as `ip route` then `ip -6 route` print them, each under its
/// own command: the IPv6 connected route the kernel adds for the /64 is there with the
/// link-local one, and each IPv6 line has its metric and preference; the host's cni0 has
/// its IPv6 connected route too.
#[test]
fn a_dual_stack_pod_lists_its_ipv6_connected_route() {
    let mut lab = dual_stack_lab();
    let pod = text(&mut lab, "show routes --pod web");
    let routes: Vec<&str> = pod.lines().map(str::trim).collect();
    let netns = routes[0]
        .strip_suffix(" $ ip route")
        .unwrap_or_else(|| panic!("{pod}"));
    let v6_head = format!("{netns} $ ip -6 route");
    assert_eq!(
        routes[1..],
        [
            "default via 10.244.1.1 dev eth0",
            "10.244.1.0/24 dev eth0 proto kernel scope link src 10.244.1.2",
            &v6_head,
            "fd00:10:1::/64 dev eth0 proto kernel metric 256 pref medium",
            "fe80::/64 dev eth0 proto kernel metric 256 pref medium",
            "default via fd00:10:1::1 dev eth0 metric 1024 pref medium",
        ]
    );
    let host = text(&mut lab, "show routes node-1");
    assert!(
        host.lines()
            .any(|l| l.trim() == "fd00:10:1::/64 dev cni0 proto kernel metric 256 pref medium"),
        "{host}"
    );
}

#[test]
fn deleting_the_pods_removes_both_families_rules() {
    let mut lab = dual_stack_lab();
    text(&mut lab, "pod delete web");
    text(&mut lab, "pod delete dns");
    let nf = &lab.nodes()["node-1"].host.netfilter;
    for (fam, t) in [("v4", &nf.ip4.nat), ("v6", &nf.ip6.nat)] {
        let rules: Vec<String> = t
            .to_lines()
            .into_iter()
            .filter(|l| l.contains("CNI-DN-") || l.contains("name: "))
            .collect();
        assert!(rules.is_empty(), "{fam}: {rules:?}");
    }
}

/// Every rule the lab writes (both families, every node) is fully modelled and prints back
/// as stored, and the v6 hostport DNATs a packet to a local address to the pod.
#[test]
fn every_rule_the_lab_writes_is_modelled() {
    let lab = dual_stack_lab();
    for (node, rt) in lab.nodes() {
        for v6 in [false, true] {
            for kind in TableKind::ALL {
                let t = rt.host.netfilter.family(v6).get(kind);
                for (chain, rules) in t.chains() {
                    for r in rules {
                        let spec = r.spec();
                        assert_eq!(spec.unmodelled, None, "{node} -A {chain} {r}");
                        assert_eq!(spec.render(), r.text(), "{node} -A {chain}");
                    }
                }
            }
        }
    }
    let nat = &lab.nodes()["node-1"].host.netfilter.ip6.nat;
    let mut p = Packet::new(
        "fd00:99::9".parse().expect("v6"),
        "fd00:10:1::1".parse().expect("v6"),
        L4::Udp,
        4000,
        5353,
    );
    p.dst_local = true;
    let tr = nat.traverse("PREROUTING", &mut p);
    assert_eq!(
        tr.decision,
        Decision::Dnat("fd00:10:1::3".parse().expect("v6"), Some(53))
    );
}

#[test]
fn show_iptables_prints_the_family_and_table_asked_for() {
    let mut lab = dual_stack_lab();
    let v4 = text(&mut lab, "show iptables node-1");
    assert!(
        v4.starts_with("node-1 $ iptables -t nat -S\n  -P PREROUTING ACCEPT\n"),
        "{v4}"
    );
    assert_eq!(v4, text(&mut lab, "show iptables node-1 --table nat"));
    let v6 = text(&mut lab, "show iptables node-1 -6");
    assert!(v6.starts_with("node-1 $ ip6tables -t nat -S\n"), "{v6}");
    assert!(
        v6.contains("  -A CNI-DN-") && v6.contains("[fd00:10:1::2]:80"),
        "{v6}"
    );
    assert_eq!(v6, text(&mut lab, "show iptables node-1 --ipv6 -t nat"));
    assert_eq!(
        text(&mut lab, "show iptables node-1 --table filter"),
        "node-1 $ iptables -t filter -S\n  -P INPUT ACCEPT\n  -P FORWARD ACCEPT\n  -P OUTPUT ACCEPT\n  -N FLANNEL-FWD\n  -A FORWARD -m comment --comment \"flanneld forward\" -j FLANNEL-FWD\n  -A FLANNEL-FWD -s 10.244.0.0/16 -m comment --comment \"flanneld forward\" -j ACCEPT\n  -A FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment \"flanneld forward\" -j ACCEPT\n"
    );
    assert!(
        text(&mut lab, "show iptables node-1 -6 --table filter")
            .starts_with("node-1 $ ip6tables -t filter -S\n  -P INPUT ACCEPT\n")
    );
    let e = lab
        .execute("show iptables node-1 --table raw")
        .expect_err("raw is not modelled");
    assert!(
        e.message.starts_with(
            "invalid value \"raw\" for --table: the lab models the nat and filter tables"
        ),
        "{}",
        e.message
    );
    let e = lab
        .execute("show iptables node-9 -6")
        .expect_err("no such node");
    assert!(e.message.contains("node-9"), "{}", e.message);
    let help = text(&mut lab, "help show iptables");
    assert!(help.contains("--table") && help.contains("-6"), "{help}");
}

#[test]
fn the_table_flag_completes_its_values() {
    let lab = crate::common::lab();
    let c = lab_engine::command::complete::complete("show iptables node-1 --table ", 29, &lab);
    let words: Vec<&str> = c.candidates.iter().map(|s| s.as_str()).collect();
    assert_eq!(words, ["filter", "nat"]);
}

/// The walker tests the node's ipsets: a FORWARD rule on node-1 dropping what goes to a
/// `hash:net` set's members stops `trace` there only while the destination is in the set,
/// and a goto'd chain's rule decides. `show ipset` prints `ipset save` (a dim line when the
/// node has none; an unknown node is the views' not-found error).
#[test]
fn the_walker_evaluates_set_matches_and_gotos_and_show_ipset_prints_the_sets() {
    use lab_engine::cni::ipset::{Family, SetType};
    let mut lab = crate::common::lab();
    text(&mut lab, "pod create web --node node-1");
    text(&mut lab, "pod create db --node node-2");
    let empty = text(&mut lab, "show ipset node-1");
    assert!(
        empty.contains("$ ipset save") && empty.contains("no sets"),
        "{empty}"
    );
    let db_ip = lab
        .execute("get pods db -o wide")
        .map(|o| o.to_text())
        .unwrap_or_default();
    let db_ip = db_ip
        .split_whitespace()
        .find(|w| w.starts_with("10.244."))
        .unwrap_or_else(|| panic!("no pod IP in {db_ip}"))
        .to_string();
    let trace = text(&mut lab, "trace web db --port 3306");
    assert!(trace.contains("delivered to default/db"), "{trace}");
    {
        let host = &mut lab.nodes_mut().get_mut("node-1").expect("node-1").host;
        host.ipsets
            .create("cali40s:db", SetType::HashNet, Family::Inet, 1_048_576)
            .expect("new set");
        host.ipsets
            .replace_members("cali40s:db", [format!("{db_ip}/32")])
            .expect("members");
        let f = &mut host.netfilter.ip4.filter;
        // Felix inserts its jump at the top, before flannel's FLANNEL-FWD ACCEPT.
        f.prepend_unique("FORWARD", "-g cali-FORWARD");
        f.append_unique("cali-FORWARD", "-m set --match-set cali40s:db dst -j DROP");
    }
    let trace = text(&mut lab, "trace web db --port 3306");
    assert!(
        trace.contains("-A cali-FORWARD -m set --match-set cali40s:db dst -j DROP"),
        "{trace}"
    );
    assert!(!trace.contains("delivered to default/db"), "{trace}");
    let shown = text(&mut lab, "show ipset node-1");
    assert!(
        shown.contains("create cali40s:db hash:net family inet hashsize 1024 maxelem 1048576 bucketsize 12 initval 0x"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("add cali40s:db {db_ip}\n")),
        "{shown}"
    );
    // Out of the set: delivered again.
    lab.nodes_mut()
        .get_mut("node-1")
        .expect("node-1")
        .host
        .ipsets
        .replace_members("cali40s:db", Vec::<String>::new())
        .expect("members");
    let trace = text(&mut lab, "trace web db --port 3306");
    assert!(trace.contains("delivered to default/db"), "{trace}");
    let err = lab.execute("show ipset nope").map(|_| ()).unwrap_err();
    let ipt = lab.execute("show iptables nope").map(|_| ()).unwrap_err();
    assert_eq!(err.message, ipt.message);
}
