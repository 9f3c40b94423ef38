//! The packet walker reads the nodes' kernels: routes flanneld programmed, the bridge the
//! plugin made, the nat rules, flannel.1's neighbour and FDB entries, MTUs.

use crate::common::{key, phase};
use lab_engine::engine::Lab;
use lab_engine::net::hop::Entry;
use lab_engine::net::trace::{Rewrite, Trace};

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

/// QA 24 §14: an unused address in node-2's podCIDR, before any pod is networked there.
/// node-2 has a default route, so its kernel forwards the packet to the gateway (a route
/// matched: no EHOSTUNREACH on the node), as it does for 8.8.8.8 from node-1.
#[test]
fn an_unused_pod_address_on_a_node_with_a_default_route_leaves_by_the_gateway() {
    use lab_engine::net::trace::Outcome;
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create web --node node-1 --label app=web");
    let t = walk(&lab, "web", "10.244.2.99", Some(80), None);
    match &t.outcome {
        Outcome::LeftCluster { via, astray, .. } => {
            assert!(
                via.starts_with("node-2's default gateway 192.168.0.254"),
                "{via}"
            );
            assert!(astray.is_some(), "a pod address going astray says so");
        }
        other => panic!("{other:?}"),
    }
    let shown = run(&mut lab, "trace web 10.244.2.99 --port 80/TCP");
    let last = shown.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("left the cluster at hop 9: node-2's default gateway 192.168.0.254"),
        "{shown}"
    );
    assert!(!shown.contains("no route to host"), "{shown}");
    // Outside the cluster it leaves the same way, with nothing astray.
    let t = walk(&lab, "web", "8.8.8.8", Some(80), None);
    assert!(
        matches!(&t.outcome, Outcome::LeftCluster { astray: None, .. }),
        "{:?}",
        t.outcome
    );
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

/// In a pod, `lo` is ifindex 1, UP and holds 127.0.0.1/8 and ::1/128 (the runtime brings it
/// up before the pod's network), so the pod's eth0 is 2 and the host's veth names that
/// index (issue 35: `lo` was listed second and DOWN).
#[test]
fn a_pod_s_lo_is_ifindex_1_and_up() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create web --node node-1");
    let pod = run(&mut lab, "show links node-1 --pod web");
    // As the kernel shows it after `ip link set lo up` (iproute2 6.1 in a fresh netns):
    // IPv4's address with its label, then IPv6's without one, before eth0.
    assert!(
        pod.contains(
            "  1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n      \
             link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n      \
             inet 127.0.0.1/8 scope host lo\n         \
             valid_lft forever preferred_lft forever\n      \
             inet6 ::1/128 scope host\n         \
             valid_lft forever preferred_lft forever\n  \
             2: eth0@if"
        ),
        "{pod}"
    );
    let host = run(&mut lab, "show links node-1");
    assert!(host.contains("1: lo: "), "{host}");
    assert!(
        host.lines()
            .any(|l| l.contains(": veth") && l.contains("@if2:")),
        "{host}"
    );
}

/// `(index, name)` of each device line of `ip -d addr` as `show links` prints it.
fn indexes(view: &str) -> Vec<(u32, String)> {
    view.lines()
        .filter_map(|l| {
            let (index, rest) = l.trim_start().split_once(": ")?;
            let name = rest.split(": ").next()?;
            Some((index.parse().ok()?, name.to_string()))
        })
        .collect()
}

/// Interface indexes follow creation, as the kernel hands them out, and stay: a pod deleted
/// does not renumber the others' veths (so `eth0@ifN` in a pod keeps naming its veth), and
/// its index is not given out again.
#[test]
fn interface_indexes_follow_creation_and_survive_other_pods() {
    let mut lab = crate::common::lab();
    let host_veths = |lab: &mut Lab| -> Vec<(u32, String)> {
        indexes(&run(lab, "show links node-1"))
            .into_iter()
            .filter(|(_, n)| n.starts_with("veth"))
            .collect()
    };
    let pod_eth0 = |lab: &mut Lab, pod: &str| -> String {
        let view = run(lab, &format!("show links node-1 --pod {pod}"));
        indexes(&view)
            .into_iter()
            .find(|(i, _)| *i == 2)
            .map(|(_, n)| n)
            .unwrap_or_else(|| panic!("no device 2 in {view}"))
    };
    run(&mut lab, "pod create a --node node-1");
    run(&mut lab, "pod create b --node node-1");
    let host = indexes(&run(&mut lab, "show links node-1"));
    let names: Vec<&str> = host
        .iter()
        .map(|(_, n)| n.split('@').next().unwrap_or(n))
        .collect();
    // lo and the uplink at boot, then what the first ADD made: the bridge, then a's veth.
    assert_eq!(&names[..3], ["lo", "eth0", "cni0"], "{host:?}");
    let before = host_veths(&mut lab);
    assert_eq!(before.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [4, 5]);
    let b_veth = before[1].clone();
    assert_eq!(pod_eth0(&mut lab, "b"), format!("eth0@if{}", b_veth.0));
    run(&mut lab, "pod delete a");
    run(&mut lab, "pod create d --node node-1");
    let after = host_veths(&mut lab);
    assert!(after.contains(&b_veth), "b's veth keeps 5: {after:?}");
    assert_eq!(after.len(), 2);
    assert!(
        after.iter().any(|(i, _)| *i == 6),
        "d's veth is 6, not a's 4: {after:?}"
    );
    assert_eq!(pod_eth0(&mut lab, "b"), format!("eth0@if{}", b_veth.0));
    assert_eq!(pod_eth0(&mut lab, "d"), "eth0@if6");
}

/// A bandwidth annotation is text to the API server: the pod is created, and containerd
/// refuses it when it makes the sandbox (`toCNIBandWidth`), before any plugin runs; the
/// pod waits with FailedCreatePodSandBox. `Value()` rounds up, so 999.5 is 1000 bits.
#[test]
fn a_bad_bandwidth_annotation_fails_the_sandbox_not_the_create() {
    let mut lab = crate::common::lab();
    run(
        &mut lab,
        "pod create slow --node node-1 --bandwidth-ingress 0",
    );
    assert_eq!(lab.counts().1, 1, "the API server stored the pod");
    assert_ne!(crate::common::phase(&lab, "slow"), "Running");
    let failed: Vec<String> = lab
        .calls()
        .iter()
        .filter(|(_, e)| e.reason() == Some("FailedCreatePodSandBox"))
        .map(|(_, e)| e.detail())
        .collect();
    assert!(
        failed.first().is_some_and(|m| m.ends_with(
            "get cni namespace options: reading pod bandwidth annotations: resource is unreasonably small (< 1kbit)"
        )),
        "{failed:?}"
    );
    assert_eq!(lab.wire().len(), 0, "no plugin ran");
    run(
        &mut lab,
        "pod create ok --node node-1 --bandwidth-ingress 999.5",
    );
    assert_eq!(crate::common::phase(&lab, "ok"), "Running");
}

/// The typed walk of `trace SRC DST [--port P] [--size N]`.
fn walk(lab: &Lab, src: &str, dst: &str, port: Option<u16>, size: Option<u32>) -> Trace {
    let args = lab_engine::command::grammar::FlowArgs {
        src: src.to_string(),
        dst: dst.to_string(),
        port: port.map(|p| p.to_string()),
        size,
    };
    lab.walk(&args).expect("walk")
}

/// The source a delivered packet carries: the last source rewrite, else none.
fn rewritten_source(t: &Trace) -> Option<std::net::IpAddr> {
    t.hops.iter().rev().find_map(|h| match h.rewrite {
        Some(Rewrite::Source(_, to)) => Some(to),
        _ => None,
    })
}

fn ip(s: &str) -> std::net::IpAddr {
    s.parse().expect("an address")
}

/// portmap's hairpin: a pod on the hostPort's node is marked in PREROUTING
/// (`CNI-HOSTPORT-SETMARK`) and masqueraded for the mark in POSTROUTING
/// (`CNI-HOSTPORT-MASQ`), so the hostPort's pod sees the bridge's address; the pod that
/// holds the hostPort reaches itself the same way (without the rewrite its kernel would
/// drop its own address as a martian source). From the other node the DNAT alone applies.
#[test]
fn a_host_port_from_its_own_node_is_masqueraded_by_the_hairpin_mark() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "pod create db --node node-2");
    run(&mut lab, "pod create api --node node-2 --port 8080:80");
    for src in ["db", "api"] {
        let t = walk(&lab, src, "node-2", Some(8080), None);
        assert!(t.delivered(), "{}", t.lines().join("\n"));
        assert_eq!(
            rewritten_source(&t),
            Some(ip("10.244.2.1")),
            "{}",
            t.lines().join("\n")
        );
        assert!(
            t.hops.iter().any(|h| matches!(
                &h.entry,
                Some(Entry::Rule { rule, .. })
                    if rule == "-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE"
            )),
            "{}",
            t.lines().join("\n")
        );
    }
    // From node-1 the source was flannel's node-1 masquerade (to node-2's InternalIP), and
    // node-2 adds no hairpin rewrite.
    let t = walk(&lab, "web", "node-2", Some(8080), None);
    assert!(t.delivered(), "{}", t.lines().join("\n"));
    assert_eq!(rewritten_source(&t), Some(ip("192.168.0.1")));
}

/// A peer node's pod-network address (node-2's cni0, 10.244.2.1, once a pod there gave the
/// bridge its address) is routed as pod traffic: through the podCIDR route, the source kept
/// (flannel does not masquerade within the cluster network), and under VXLAN a 1500-byte
/// packet does not fit flannel.1.
#[test]
fn a_peer_node_s_bridge_address_is_routed_as_pod_traffic() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "pod create db --node node-2");
    let t = walk(&lab, "web", "10.244.2.1", None, None);
    assert!(t.delivered(), "{}", t.lines().join("\n"));
    assert_eq!(rewritten_source(&t), None, "{}", t.lines().join("\n"));
    let route = t
        .hops
        .iter()
        .find_map(|h| h.node_route())
        .expect("a node route");
    assert_eq!(
        route.1.dst.to_string(),
        "10.244.2.0/24",
        "{}",
        t.lines().join("\n")
    );

    let mut lab = crate::common::lab();
    run(&mut lab, "network use flannel-vxlan");
    run(&mut lab, "pod create web --node node-1");
    run(&mut lab, "pod create db --node node-2");
    let t = walk(&lab, "web", "10.244.2.1", None, Some(1500));
    let too_big = t.too_big.as_ref().expect("too big for flannel.1");
    assert_eq!(
        (too_big.mtu, too_big.icmp, too_big.dev.as_str()),
        (1450, true, "flannel.1")
    );
    assert!(walk(&lab, "web", "10.244.2.1", None, Some(1450)).delivered());
}

/// Under Calico a hostPort is a DNAT to its pod, whose policy Felix applies after it:
/// `reach` names that pod and denies what `trace` drops (from node-1 the source arrives
/// masqueraded to node-1's address, which the policy does not admit).
#[test]
fn reach_to_a_host_port_under_calico_judges_the_pod_behind_it() {
    let mut lab = crate::common::lab();
    run(&mut lab, "network use calico-bgp");
    run(&mut lab, "pod create web --node node-1 -l app=web");
    run(
        &mut lab,
        "pod create db --node node-2 -l app=db --port 8080:80",
    );
    run(
        &mut lab,
        "policy create db-in --select app=db --ingress-from app=web --port 80",
    );
    let t = walk(&lab, "web", "node-2", Some(8080), None);
    assert!(!t.policy_allows(), "{}", t.lines().join("\n"));
    assert!(!t.verdict.allowed(), "{}", t.verdict.text());
    assert_eq!(t.verdict.ingress.subject, "default/db");
    let reach = run(&mut lab, "reach web node-2 --port 8080");
    assert!(reach.starts_with("denied: "), "{reach}");
    // db reaching its own hostPort: Felix sees db's own address, which db-in does not admit.
    let t = walk(&lab, "db", "node-2", Some(8080), None);
    assert!(!t.policy_allows(), "{}", t.lines().join("\n"));
    assert!(!t.verdict.allowed(), "{}", t.verdict.text());
}

/// A conflist that does not parse and sorts first (issue 37 §3): containerd's go-cni fails
/// the whole load (it reads only the first file), so the node's runtime has no network.
/// `cni conf load` refuses such a file, `--as-is` writes it as `cp` would; kubelet then
/// reports NetworkReady=false on the Node's Ready condition and starts no pod there (its
/// NetworkNotReady event); removing the file loads the next one and the pod starts. On the
/// old main the broken file was skipped and the pod ran.
#[test]
fn a_broken_conflist_that_sorts_first_leaves_the_node_without_a_network() {
    const NOT_READY: &str = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized";
    let dir = std::env::temp_dir().join(format!("lab-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("00-broken.conflist");
    std::fs::write(&file, r#"{"cniVersion":"1.0.0","name":"x","plugins":["#).unwrap();
    let mut lab = crate::common::lab();
    let line = format!("cni conf load {} --node node-1", file.display());
    let e = lab.execute(&line).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "{}: error parsing configuration list: unexpected end of JSON input (--as-is writes it anyway, as cp would)",
            file.display()
        )
    );
    assert!(
        !lab.nodes()["node-1"]
            .confdir
            .files
            .contains_key("00-broken.conflist")
    );
    run(&mut lab, &format!("{line} --as-is"));
    assert_eq!(
        lab.nodes()["node-1"].confdir.active().unwrap_err(),
        "cni config load failed: failed to load CNI config list file /etc/cni/net.d/00-broken.conflist: error parsing configuration list: unexpected end of JSON input: invalid cni config: failed to load cni config"
    );
    let ready = |lab: &lab_engine::Lab, node: &str| {
        let n = &lab.cluster().nodes[&(String::new(), node.to_string())];
        let c = n
            .status
            .conditions
            .iter()
            .find(|c| c.condition_type == "Ready")
            .unwrap();
        (
            c.status.to_string(),
            c.reason.to_string(),
            c.message.to_string(),
        )
    };
    assert_eq!(
        ready(&lab, "node-1"),
        ("False".into(), "KubeletNotReady".into(), NOT_READY.into())
    );
    assert_eq!(ready(&lab, "node-2").0, "True");
    run(&mut lab, "pod create web --node node-1");
    assert_eq!(phase(&lab, "web"), "Pending");
    assert!(lab.nodes()["node-1"].sandboxes.is_empty());
    let described = run(&mut lab, "describe pod web");
    assert!(
        described.lines().any(|l| l.ends_with(&format!(
            "NetworkNotReady  0s    kubelet  network is not ready: {NOT_READY}"
        ))),
        "{described}"
    );
    let node = run(&mut lab, "describe node node-1");
    assert!(
        node.lines()
            .any(|l| l
                == format!("  Ready            False   KubeletNotReady              {NOT_READY}")),
        "{node}"
    );
    // The node lifecycle controller taints the NotReady node at once (NoSchedule, then the
    // NoExecute taint of taint-based eviction), and the scheduler reads the taint.
    assert!(
        node.contains(
            "Taints:             node.kubernetes.io/not-ready:NoExecute\n                    \
             node.kubernetes.io/not-ready:NoSchedule\nUnschedulable:      false"
        ),
        "{node}"
    );
    // The scheduler keeps new pods off the NotReady node.
    run(&mut lab, "pod create api");
    assert_eq!(lab.cluster().pods[&key("api")].spec.node_name, "node-2");
    // The fix: remove the file; the runtime loads 10-lab.conflist and the pod starts.
    run(&mut lab, "cni conf remove 00-broken.conflist --node node-1");
    assert_eq!(ready(&lab, "node-1").0, "True");
    let node = run(&mut lab, "describe node node-1");
    assert!(node.contains("Taints:             <none>\n"), "{node}");
    assert_eq!(phase(&lab, "web"), "Running");
    std::fs::remove_dir_all(&dir).ok();
}

/// `show links NODE --pod POD` names what is wrong with the pod asked for: kubectl's
/// `pod/web` form reads as namespace `pod`, a pod on the other node is pointed there.
#[test]
fn show_links_of_a_pod_says_where_the_pod_is() {
    let mut lab = Lab::new();
    two_pods(&mut lab);
    let err = |lab: &mut Lab, line: &str| lab.execute(line).unwrap_err().message;
    assert_eq!(
        err(&mut lab, "show links node-1 --pod pod/web"),
        "pods \"web\" not found in namespace \"pod\" (--pod takes NAME or NAMESPACE/NAME)"
    );
    let on = lab
        .execute("get pod web -o jsonpath={.spec.nodeName}")
        .unwrap()
        .to_text();
    let other = if on.trim() == "node-1" {
        "node-2"
    } else {
        "node-1"
    };
    let msg = err(&mut lab, &format!("show links {other} --pod web"));
    assert!(
        msg.starts_with(&format!(
            "pod default/web runs on {}, not {other}",
            on.trim()
        )),
        "{msg}"
    );
}

/// A conflist written to a temporary file, loaded on node-1 where it sorts first.
fn load_conflist(lab: &mut Lab, tag: &str, text: &str) {
    let dir = std::env::temp_dir().join(format!("lab-kv-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("00-kv.conflist");
    std::fs::write(&path, text).unwrap();
    let out = run(
        lab,
        &format!("cni conf load {} --node node-1", path.display()),
    );
    assert!(out.contains("(active: 00-kv.conflist)"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines under the header that ends with `$ cmd`, up to the next header.
fn section(out: &str, cmd: &str) -> Vec<String> {
    let mut lines = out
        .lines()
        .skip_while(|l| !l.ends_with(&format!("$ {cmd}")));
    assert!(lines.next().is_some(), "no `$ {cmd}` in:\n{out}");
    lines
        .take_while(|l| !l.contains(" $ "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// A dual-stack pod: `ip route` lists IPv4's routes only and `ip -6 route` IPv6's, with the
/// kernel's link-local route, as iproute2 6.1 prints them in a netns the bridge plugin set up
/// (they were listed together under `ip route`, without fe80::/64).
#[test]
fn dual_stack_routes_print_in_two_tables() {
    let mut lab = crate::common::lab();
    load_conflist(
        &mut lab,
        "ds",
        r#"{"cniVersion":"1.0.0","name":"ds","plugins":[{"type":"bridge","bridge":"cni0",
        "isGateway":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.1.0/24"}],
        [{"subnet":"fd00:1::/120"}]],"routes":[{"dst":"0.0.0.0/0"},{"dst":"::/0"}]}}]}"#,
    );
    run(&mut lab, "pod create a --node node-1");
    let out = run(&mut lab, "show routes node-1 --pod a");
    assert_eq!(
        section(&out, "ip route"),
        [
            "default via 10.244.1.1 dev eth0",
            "10.244.1.0/24 dev eth0 proto kernel scope link src 10.244.1.2",
        ],
        "{out}"
    );
    assert_eq!(
        section(&out, "ip -6 route"),
        [
            "fd00:1::/120 dev eth0 proto kernel metric 256 pref medium",
            "fe80::/64 dev eth0 proto kernel metric 256 pref medium",
            "default via fd00:1::1 dev eth0 metric 1024 pref medium",
        ],
        "{out}"
    );
    // The node's view runs the same two commands in the pod.
    let node = run(&mut lab, "show routes node-1");
    assert!(
        node.contains(") $ ip -6 route\n    fd00:1::/120 dev eth0"),
        "{node}"
    );
    let links = run(&mut lab, "show links node-1 --pod a");
    let eth0 = section(&links, "ip -d addr");
    assert!(
        eth0.contains(&"inet 10.244.1.2/24 brd 10.244.1.255 scope global eth0".to_string())
            && eth0.contains(&"inet6 fd00:1::2/120 scope global".to_string()),
        "{links}"
    );
}

/// A bridge whose last port went has no carrier: `NO-CARRIER … state DOWN`, and its routes
/// are `linkdown`, as the kernel shows cni0 after the DEL of its last pod.
#[test]
fn a_bridge_without_ports_has_no_carrier() {
    let mut lab = crate::common::lab();
    load_conflist(
        &mut lab,
        "br",
        r#"{"cniVersion":"1.0.0","name":"br","plugins":[{"type":"bridge","bridge":"cni0",
        "isGateway":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.1.0/24"}]],
        "routes":[{"dst":"0.0.0.0/0"}]}}]}"#,
    );
    run(&mut lab, "pod create a --node node-1");
    let up = run(&mut lab, "show links node-1");
    let cni0 = |out: &str| {
        out.lines()
            .find(|l| l.contains(": cni0: "))
            .unwrap_or_else(|| panic!("no cni0 in:\n{out}"))
            .trim()
            .split_once(": ")
            .unwrap()
            .1
            .to_string()
    };
    assert_eq!(
        cni0(&up),
        "cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000",
        "{up}"
    );
    assert!(
        up.contains("inet 10.244.1.1/24 brd 10.244.1.255 scope global cni0"),
        "{up}"
    );
    run(&mut lab, "pod delete a");
    let down = run(&mut lab, "show links node-1");
    assert_eq!(
        cni0(&down),
        "cni0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state DOWN group default qlen 1000",
        "{down}"
    );
    let routes = run(&mut lab, "show routes node-1");
    assert!(
        routes.contains("10.244.1.0/24 dev cni0 proto kernel scope link src 10.244.1.1 linkdown"),
        "{routes}"
    );
}

/// tuning's promisc and allmulti, bandwidth's ifb and the kernel's link-local addresses show
/// in `ip -d addr` as the kernel sets them (the flags were a fixed table: no PROMISC, an ifb
/// with MULTICAST and state UP).
#[test]
fn link_flags_follow_the_link() {
    let mut lab = crate::common::lab();
    load_conflist(
        &mut lab,
        "tun",
        r#"{"cniVersion":"1.0.0","name":"tun","plugins":[{"type":"ptp","ipam":{"type":"host-local",
        "ranges":[[{"subnet":"10.244.1.0/24"}]],"routes":[{"dst":"0.0.0.0/0"}]}},
        {"type":"tuning","promisc":true,"allmulti":true,"mac":"c2:11:22:33:44:55","mtu":1300},
        {"type":"bandwidth","capabilities":{"bandwidth":true}}]}"#,
    );
    run(&mut lab, "pod create a --node node-1");
    let pod = run(&mut lab, "show links node-1 --pod a");
    assert!(
        pod.contains(": eth0@if")
            && pod.contains(
                ": <BROADCAST,MULTICAST,ALLMULTI,PROMISC,UP,LOWER_UP> mtu 1300 qdisc noqueue state UP group default qlen 1000\n      \
                 link/ether c2:11:22:33:44:55 brd ff:ff:ff:ff:ff:ff link-netnsid 0"
            )
            && pod.contains("inet6 fe80::c011:22ff:fe33:4455/64 scope link"),
        "{pod}"
    );
    run(
        &mut lab,
        "pod create b --node node-1 --bandwidth-ingress 1M --bandwidth-egress 2M",
    );
    let host = run(&mut lab, "show links node-1");
    let ifb = host
        .lines()
        .find(|l| l.contains(": bwp"))
        .unwrap_or_else(|| panic!("no ifb in:\n{host}"));
    assert!(
        ifb.contains(": <BROADCAST,NOARP,UP,LOWER_UP> mtu ")
            && ifb.ends_with(" qdisc tbf state UNKNOWN group default qlen 32"),
        "{host}"
    );
}

/// `show links` prints iproute2's `ip -d addr` (ipaddress.c print_linkinfo and
/// print_addrinfo, iplink_bridge.c, iplink_bridge_slave.c): the root qdisc the node has
/// (`noqueue` for a veth or bridge, bandwidth's `tbf`), `group default` and the kernel's
/// `qlen` (1000, an ifb's 32); a veth's peer namespace by its name under /var/run/netns on
/// the host, as `link-netnsid 0` in the pod; `veth` alone on its line, a bridge port's
/// `bridge_slave` line (no `(bridge port: hairpin on)`), a bridge's `bridge` details; and
/// every address's `valid_lft forever preferred_lft forever`.
#[test]
fn show_links_prints_iproute2_s_ip_d_addr() {
    let mut lab = crate::common::lab();
    run(
        &mut lab,
        "pod create web --node node-1 --bandwidth-ingress 1M --bandwidth-egress 2M",
    );
    let host = run(&mut lab, "show links node-1");
    let lines: Vec<&str> = host.lines().map(str::trim_end).collect();
    let from = |start: &str, n: usize| -> Vec<&str> {
        let at = lines
            .iter()
            .position(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} in:\n{host}"));
        lines[at..at + n].to_vec()
    };
    assert_eq!(
        from("  1: lo:", 6),
        [
            "  1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000",
            "      link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00",
            "      inet 127.0.0.1/8 scope host lo",
            "         valid_lft forever preferred_lft forever",
            "      inet6 ::1/128 scope host",
            "         valid_lft forever preferred_lft forever",
        ],
        "{host}"
    );
    assert_eq!(
        from("  3: cni0:", 7),
        [
            "  3: cni0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000",
            "      link/ether a2:59:ba:56:f9:49 brd ff:ff:ff:ff:ff:ff",
            "      bridge forward_delay 1500 hello_time 200 max_age 2000 ageing_time 30000 stp_state 0 priority 32768",
            "      inet 10.244.1.1/24 brd 10.244.1.255 scope global cni0",
            "         valid_lft forever preferred_lft forever",
            "      inet6 fe80::a059:baff:fe56:f949/64 scope link",
            "         valid_lft forever preferred_lft forever",
        ],
        "{host}"
    );
    assert_eq!(
        from("  4: veth", 6),
        [
            "  4: veth56d1da70@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc tbf master cni0 state UP group default qlen 1000",
            "      link/ether da:b9:d3:db:3a:2e brd ff:ff:ff:ff:ff:ff link-netns cni-c68e5523-c05b-ceee-df3a-4a9d9935258d",
            "      veth",
            "      bridge_slave state forwarding priority 32 cost 2 hairpin on guard off root_block off fastleave off learning on flood on",
            "      inet6 fe80::d8b9:d3ff:fedb:3a2e/64 scope link",
            "         valid_lft forever preferred_lft forever",
        ],
        "{host}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("  5: bwp")
            && l.ends_with(": <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500 qdisc tbf state UNKNOWN group default qlen 32")),
        "{host}"
    );
    assert!(!host.contains("bridge port:"), "{host}");
    let pod = run(&mut lab, "show links node-1 --pod web");
    let eth0: Vec<&str> = pod
        .lines()
        .skip_while(|l| !l.starts_with("  2: eth0"))
        .take(3)
        .collect();
    assert_eq!(
        eth0,
        [
            "  2: eth0@if4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000",
            "      link/ether 7a:46:fb:ea:c7:61 brd ff:ff:ff:ff:ff:ff link-netnsid 0",
            "      veth",
        ],
        "{pod}"
    );
}
