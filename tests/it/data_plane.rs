//! The packet walker reads the nodes' kernels: routes flanneld programmed, the bridge the
//! plugin made, the nat rules, flannel.1's neighbour and FDB entries, MTUs.

use lab_engine::engine::Lab;

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

fn two_pods(lab: &mut Lab) {
    run(lab, "pod create web --node node-1 --label app=web");
    run(lab, "pod create db --node node-2 --label app=db");
    run(
        lab,
        "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
    );
}

#[test]
fn the_default_network_keeps_pod_sources_so_the_policy_matches() {
    let mut lab = crate::common::lab();
    two_pods(&mut lab);
    let reach = run(&mut lab, "reach web db --port 3306");
    assert!(reach.starts_with("allowed:"), "{reach}");
    let trace = run(&mut lab, "trace web db --port 3306");
    assert!(
        trace.contains("route on node-1: 10.244.2.0/24 via 192.168.0.2 dev eth0"),
        "{trace}"
    );
    assert!(!trace.contains("MASQUERADE"), "{trace}");
    let nat = run(&mut lab, "show iptables node-1");
    assert!(
        nat.contains("-A POSTROUTING -m comment --comment \"flanneld masq\" -j FLANNEL-POSTRTG"),
        "{nat}"
    );
}

#[test]
fn a_bridge_with_ip_masq_rewrites_the_source_and_the_policy_sees_the_node() {
    let dir = std::env::temp_dir().join(format!("lab-dp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("00-masq.conflist");
    std::fs::write(
        &file,
        r#"{"cniVersion":"1.0.0","name":"masq-net","plugins":[{"type":"bridge","bridge":"br-lab","isGateway":true,"isDefaultGateway":true,"ipMasq":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"{{.PodCIDR}}"}]]}}]}"#,
    )
    .unwrap();
    let mut lab = crate::common::lab();
    for node in ["node-1", "node-2"] {
        run(
            &mut lab,
            &format!("cni conf load {} --node {node}", file.display()),
        );
    }
    two_pods(&mut lab);
    let trace = run(&mut lab, "trace web db --port 3306");
    assert!(
        trace.contains("-j MASQUERADE (source 10.244.1.2 → 192.168.0.1)"),
        "{trace}"
    );
    assert!(trace.contains("br-lab on node-1 (10.244.1.1)"), "{trace}");
    // flannel enforces nothing: the packet arrives, and the policies' verdict (what an
    // enforcing network would do) is taken on the rewritten source, the node.
    assert!(trace.contains("delivered to default/db"), "{trace}");
    let reach = run(&mut lab, "reach web db --port 3306");
    assert!(
        reach.starts_with("allowed:")
            && reach.contains("enforces no NetworkPolicy")
            && reach.contains("from node-1"),
        "{reach}"
    );
    // The custom bridge's connected route, from its address.
    let routes = run(&mut lab, "show routes node-1");
    assert!(
        routes.contains("10.244.1.0/24 dev br-lab proto kernel scope link src 10.244.1.1"),
        "{routes}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vxlan_encapsulates_and_a_1500_byte_pod_packet_does_not_fit_flannel_1() {
    let mut lab = crate::common::lab();
    run(&mut lab, "network use flannel-vxlan");
    two_pods(&mut lab);
    let trace = run(&mut lab, "trace web db --port 3306");
    assert!(
        trace.contains("route on node-1: 10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink"),
        "{trace}"
    );
    assert!(
        trace.contains("outer 192.168.0.1 → 192.168.0.2 UDP dport 8472, 134 bytes"),
        "{trace}"
    );
    assert!(trace.contains("delivered to default/db"), "{trace}");
    let big = run(&mut lab, "trace web db --port 3306 --size 1500");
    assert!(
        big.contains("ICMP fragmentation needed (mtu = 1450)"),
        "{big}"
    );
    let neigh = run(&mut lab, "show neigh node-1");
    assert!(
        neigh.contains("10.244.2.0 dev flannel.1 lladdr") && neigh.contains("PERMANENT"),
        "{neigh}"
    );
    let fdb = run(&mut lab, "show fdb node-1");
    assert!(
        fdb.contains("dev flannel.1 dst 192.168.0.2 self permanent"),
        "{fdb}"
    );
    let links = run(&mut lab, "show links node-1");
    assert!(
        links.contains("vxlan id 1 local 192.168.0.1 dev eth0 srcport 0 0 dstport 8472 nolearning"),
        "{links}"
    );
}

#[test]
fn a_peer_on_another_segment_gets_no_host_gw_route_and_the_trace_says_why() {
    let mut lab = crate::common::lab();
    run(
        &mut lab,
        "node add far --cidr 10.244.9.0/24 --ip 192.168.9.9",
    );
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "pod create x --node far");
    let trace = run(&mut lab, "trace web x");
    assert!(trace.contains("Nexthop has invalid gateway"), "{trace}");
}

#[test]
fn kube_flannels_conflist_loads_unchanged_and_delegates_to_bridge_with_subnet_env() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/conflists/10-flannel.conflist"
    );
    let mut lab = crate::common::lab();
    run(&mut lab, "network use flannel-vxlan");
    for node in ["node-1", "node-2"] {
        run(&mut lab, &format!("cni conf load {file} --node {node}"));
    }
    let out = run(&mut lab, "pod create web --node node-1");
    assert!(
        out.contains("net=cbr0 ifname=eth0 (chain: flannel → portmap)"),
        "{out}"
    );
    run(&mut lab, "pod create db --node node-2");
    let host = &lab.nodes()["node-1"].host;
    let saved: Vec<&String> = host
        .files
        .iter()
        .filter(|(k, _)| k.starts_with("/var/lib/cni/flannel/"))
        .map(|(_, v)| v)
        .collect();
    // flannel-and-netfilter.md §2: the delegate as flannel saves it (sorted, compact).
    assert_eq!(
        saved,
        [
            r#"{"cniVersion":"0.3.1","hairpinMode":true,"ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.244.1.0/24"}]],"routes":[{"dst":"10.244.0.0/16"}],"type":"host-local"},"isDefaultGateway":true,"isGateway":true,"mtu":1450,"name":"cbr0","type":"bridge"}"#
        ]
    );
    // The pod's MTU follows FLANNEL_MTU: 1450 fits, 1451 is the sender's local error.
    assert!(run(&mut lab, "trace web db --size 1450").contains("delivered to default/db"));
    let big = run(&mut lab, "trace web db --size 1451");
    assert!(
        big.contains("local error: message too long, mtu=1450"),
        "{big}"
    );
    let routes = run(&mut lab, "show routes node-1");
    assert!(
        routes.contains("10.244.0.0/16 via 10.244.1.1 dev eth0"),
        "{routes}"
    );
    let del = run(&mut lab, "pod delete web");
    assert!(del.contains("flannel") && del.contains("DEL"), "{del}");
    assert!(
        !lab.nodes()["node-1"]
            .host
            .files
            .keys()
            .any(|k| k.starts_with("/var/lib/cni/flannel/"))
    );
}

#[test]
fn without_subnet_env_the_flannel_plugin_says_to_check_flanneld() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/conflists/10-flannel.conflist"
    );
    let mut lab = crate::common::lab();
    // A node whose podCIDR is outside flannel's Network: its flanneld has no lease.
    run(&mut lab, "node add odd --cidr 10.9.0.0/24 --ip 192.168.0.9");
    run(&mut lab, &format!("cni conf load {file} --node odd"));
    let out = run(&mut lab, "pod create x --node odd");
    assert!(
        out.contains("failed to load flannel 'subnet.env' file: open /run/flannel/subnet.env: no such file or directory. Check the flannel pod log for this node."),
        "{out}"
    );
    let events = run(&mut lab, "show events -n 200");
    assert!(
        events.contains("doesn't contain \"10.9.0.0/24\" PodCIDR of the \"odd\" node"),
        "{events}"
    );
}

/// In a pod, `lo` is ifindex 1 and UP (the runtime brings it up before the pod's network),
/// so the pod's eth0 is 2 and the host's veth names that index (issue 35: `lo` was listed
/// second and DOWN).
#[test]
fn a_pod_s_lo_is_ifindex_1_and_up() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create web --node node-1");
    let pod = run(&mut lab, "show links node-1 --pod web");
    assert!(
        pod.contains("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN"),
        "{pod}"
    );
    assert!(pod.contains("2: eth0@if"), "{pod}");
    let host = run(&mut lab, "show links node-1");
    assert!(host.contains("1: lo: "), "{host}");
    assert!(
        host.lines()
            .any(|l| l.contains(": veth") && l.contains("@if2:")),
        "{host}"
    );
}
