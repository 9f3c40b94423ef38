//! The packet walker on a pod's second interface: a macvlan puts the packet on its master's
//! wire past the node's stack; the mode decides between two macvlans of one master; two
//! holders of one address on a wire are a conflict the trace names. The links are written
//! into the pods' namespaces here as the macvlan plugin writes them (tests/multus.rs drives
//! the real path through Multus).

use lab_engine::cni::host::{Link, LinkKind, Lower, RouteDst, RouteEntry};
use lab_engine::engine::Lab;

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

/// Give pod `name` a `net1` macvlan on its node's eth0 with `addr`, as the plugin does.
fn macvlan(lab: &mut Lab, name: &str, addr: &str, mode: &str) {
    let key = format!("default/{name}");
    let node = lab.cluster().pods[&("default".to_string(), name.to_string())]
        .spec
        .node_name
        .clone();
    let rt = lab.nodes_mut().get_mut(&node).expect("node");
    let netns = rt.sandboxes[&key].netns().to_string();
    let ns = rt.host.netns.get_mut(&netns).expect("netns");
    let mut link = Link::new(
        "net1",
        LinkKind::Macvlan(Box::new(Lower {
            master: "eth0".into(),
            mode: mode.into(),
        })),
        "02:00:00:00:10:01".parse().unwrap(),
        1500,
    );
    link.addrs.push(addr.parse().unwrap());
    link.up = true;
    ns.links.insert("net1", link);
    let mut connected =
        RouteEntry::static_route(RouteDst::Net("10.10.0.0/24".parse().unwrap()), None, "net1");
    connected.proto_kernel = true;
    connected.scope_link = true;
    connected.set_src(Some(addr.split('/').next().unwrap().parse().unwrap()));
    ns.routes.push(connected);
}

fn three_pods() -> Lab {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create a --node node-1");
    run(&mut lab, "pod create b --node node-1");
    run(&mut lab, "pod create c --node node-2");
    lab
}

#[test]
fn a_macvlan_packet_leaves_by_the_master_wire_not_the_bridge() {
    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "bridge");
    macvlan(&mut lab, "c", "10.10.0.7/24", "bridge");
    let t = run(&mut lab, "trace a 10.10.0.7");
    assert!(
        t.contains("1  default/a net1 10.10.0.5"),
        "it leaves from net1's address: {t}"
    );
    assert!(
        t.contains("route in default/a: 10.10.0.0/24 dev net1"),
        "{t}"
    );
    assert!(
        t.contains("net1 (macvlan mode bridge on eth0): onto node-1's eth0 wire, past node-1's IP stack and iptables"),
        "{t}"
    );
    assert!(t.contains("across the eth0 wire to node-2's eth0"), "{t}");
    assert!(t.contains("default/c net1 10.10.0.7"), "{t}");
    assert!(
        !t.contains("cni0"),
        "a macvlan packet never crosses the bridge: {t}"
    );
    assert!(!t.contains("FORWARD"), "nor the node's netfilter: {t}");
    // The primary network still goes through the bridge.
    let t = run(&mut lab, "trace a c");
    assert!(t.contains("cni0"), "{t}");
}

#[test]
fn two_macvlans_of_one_master_talk_in_bridge_mode_and_not_in_private_or_vepa() {
    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "bridge");
    macvlan(&mut lab, "b", "10.10.0.6/24", "bridge");
    let t = run(&mut lab, "trace a 10.10.0.6");
    assert!(
        t.contains("switched inside node-1 between the eth0 children"),
        "{t}"
    );
    assert!(t.contains("default/b net1 10.10.0.6"), "{t}");

    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "private");
    macvlan(&mut lab, "b", "10.10.0.6/24", "private");
    let t = run(&mut lab, "trace a 10.10.0.6");
    assert!(
        t.contains("macvlan private mode: macvlans on one master (eth0) never talk to each other"),
        "{t}"
    );

    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "vepa");
    macvlan(&mut lab, "b", "10.10.0.6/24", "vepa");
    let t = run(&mut lab, "trace a 10.10.0.6");
    assert!(t.contains("reflective relay"), "{t}");
}

#[test]
fn one_address_on_two_nodes_is_a_conflict_the_trace_names() {
    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "bridge");
    macvlan(&mut lab, "b", "10.10.0.9/24", "bridge");
    macvlan(&mut lab, "c", "10.10.0.9/24", "bridge");
    let t = run(&mut lab, "trace a 10.10.0.9");
    assert!(t.contains("address conflict at hop "), "{t}");
    assert!(
        t.contains("10.10.0.9 is held by") && t.contains("on the eth0 wire"),
        "{t}"
    );
    assert!(t.contains("default/b net1 on node-1"), "{t}");
    assert!(t.contains("default/c net1 on node-2"), "{t}");
}

#[test]
fn nothing_on_the_wire_holds_the_address() {
    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "bridge");
    let t = run(&mut lab, "trace a 10.10.0.200");
    assert!(
        t.contains("nothing on the eth0 wire answers ARP for 10.10.0.200"),
        "{t}"
    );
}

#[test]
fn a_pods_own_second_address_is_looped_back() {
    let mut lab = three_pods();
    macvlan(&mut lab, "a", "10.10.0.5/24", "bridge");
    macvlan(&mut lab, "c", "10.10.0.5/24", "bridge");
    let t = run(&mut lab, "trace a 10.10.0.5");
    assert!(t.contains("local 10.10.0.5 dev net1 table local"), "{t}");
    assert!(
        t.contains("delivered to default/a net1 10.10.0.5 (itself)"),
        "{t}"
    );
    // QA 21 §10: the packet leaves from net1's address (the local route's preferred
    // source), not from eth0's.
    let first = t
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or("");
    assert_eq!(first.trim(), "1  default/a net1 10.10.0.5", "{t}");
}

/// The real path: Multus runs the macvlan NAD for net1 and sriov-cni for a VF; the walker
/// follows what those plugins wrote.
#[test]
fn through_multus_macvlan_and_a_vf_the_trace_follows_what_the_plugins_wrote() {
    let mut lab = crate::common::lab();
    run(&mut lab, "network multus on");
    run(
        &mut lab,
        r#"nad create storage --config '{"cniVersion":"1.0.0","type":"macvlan","master":"eth0","mode":"bridge","ipam":{"type":"host-local","subnet":"10.10.0.0/24","rangeStart":"10.10.0.10"}}'"#,
    );
    run(
        &mut lab,
        "node add gpu-1 --cidr 10.244.4.0/24 --ip 192.168.0.4 --sriov-pf ens1f0 --vfs 2",
    );
    run(
        &mut lab,
        r#"nad create rdma --resource intel.com/sriov_netdevice --config '{"cniVersion":"1.0.0","type":"sriov","ipam":{"type":"host-local","subnet":"10.56.0.0/24"}}'"#,
    );
    run(&mut lab, "pod create a --node node-1 --networks storage");
    run(
        &mut lab,
        "pod create g0 --networks storage,rdma --resource intel.com/sriov_netdevice=1",
    );
    run(
        &mut lab,
        "pod create g1 --networks storage,rdma --resource intel.com/sriov_netdevice=1",
    );
    // a (node-1, 10.10.0.10) to g0 (gpu-1): node-1's host-local and gpu-1's both start at
    // .10, so the storage network has a conflict at .10; g1 holds .11 on gpu-1.
    let t = run(&mut lab, "trace a 10.10.0.11");
    assert!(
        t.contains("net1 (macvlan mode bridge on eth0): onto node-1's eth0 wire"),
        "{t}"
    );
    assert!(t.contains("across the eth0 wire to gpu-1's eth0"), "{t}");
    assert!(t.contains("delivered to default/g1 net1 10.10.0.11"), "{t}");
    assert!(!t.contains("cni0"), "{t}");
    let t = run(&mut lab, "trace a 10.10.0.10");
    assert!(t.contains("10.10.0.10 (itself)"), "a's own address: {t}");
    let t = run(&mut lab, "trace g0 10.10.0.10");
    assert!(
        t.contains("local 10.10.0.10 dev net1"),
        "g0's own net1: {t}"
    );
    // The VFs: net2 of both, switched by the PF's embedded switch.
    let t = run(&mut lab, "trace g0 10.56.0.3");
    assert!(t.contains("net2 (SR-IOV VF"), "{t}");
    assert!(t.contains("embedded switch (VEB) on gpu-1"), "{t}");
    assert!(t.contains("delivered to default/g1 net2 10.56.0.3"), "{t}");
    // The cluster network is untouched: eth0 to eth0 through the bridges and routes.
    let t = run(&mut lab, "trace a g0");
    assert!(t.contains("cni0"), "{t}");
    assert!(t.contains("delivered to default/g0 eth0"), "{t}");
}
