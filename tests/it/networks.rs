//! Chapter 7's three network scenarios on every network implementation the lab runs: a pod
//! gets an address, a packet crosses to the other node, and a NetworkPolicy decides — as
//! the implementation enforces it (flannel: not at all, and `reach` says so).

use lab_engine::engine::Lab;

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

const NETWORKS: [&str; 4] = ["flannel-host-gw", "flannel-vxlan", "calico-bgp", "cilium"];

#[test]
fn chapter_7_scenarios_run_on_every_network() {
    for net in NETWORKS {
        let mut lab = crate::common::lab();
        run(&mut lab, &format!("network use {net}"));
        // Scenario 1: a pod gets its address from the network's IPAM.
        run(&mut lab, "pod create web --node node-1 --label app=web");
        let pods = run(&mut lab, "get pods -o wide");
        assert!(
            pods.contains("Running") && pods.contains("10.244."),
            "{net}:\n{pods}"
        );
        // Scenario 2: a pod on node-2, and a packet between them.
        run(&mut lab, "pod create app-b --node node-2 --label app=b");
        let t = run(&mut lab, "trace web app-b");
        assert!(t.contains("delivered to default/app-b"), "{net}:\n{t}");
        assert!(t.contains("node-2 eth0 192.168.0.2"), "{net}:\n{t}");
        // Scenario 3: db and a policy that admits web on 3306/TCP only.
        run(&mut lab, "pod create db --node node-2 --label app=db");
        run(
            &mut lab,
            "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
        );
        let ok = run(&mut lab, "reach web db --port 3306");
        assert!(ok.starts_with("allowed:"), "{net}:\n{ok}");
        let no = run(&mut lab, "reach web db --port 8080");
        let t = run(&mut lab, "trace web db --port 8080");
        if net.starts_with("flannel") {
            assert!(
                no.starts_with("allowed:") && no.contains("enforces no NetworkPolicy"),
                "{net}:\n{no}"
            );
            assert!(t.contains("delivered to default/db"), "{net}:\n{t}");
        } else {
            assert!(no.starts_with("denied:"), "{net}:\n{no}");
            assert!(t.contains("dropped at hop"), "{net}:\n{t}");
            let why = if net == "cilium" {
                "Policy denied (133)"
            } else {
                "End of tier default"
            };
            assert!(t.contains(why), "{net}:\n{t}");
        }
        // db to itself is looped back inside the pod on every network.
        let own = run(&mut lab, "reach db db --port 3306");
        assert!(own.starts_with("allowed:"), "{net}:\n{own}");
        // And db's own traffic out to web is not isolated (the policy is Ingress only).
        let back = run(&mut lab, "trace db web --port 80");
        assert!(back.contains("delivered to default/web"), "{net}:\n{back}");
    }
}

/// Issue 41: containerd's CRI plugin keeps the network it loaded and reuses it for every
/// pod, loading again when `/etc/cni/net.d` changes. A learner who edits the conflist (the
/// same file written again, as a template filled in with each node's podCIDR) sees the very
/// next ADD use the new text, on every node, while what a node runs between edits stays
/// what it loaded.
#[test]
fn an_edited_conflist_is_used_by_the_next_add() {
    let dir = std::env::temp_dir().join(format!("lab-conf-edit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let conf = dir.join("00-edit.conflist");
    let text = |bridge: &str| {
        format!(
            r#"{{"cniVersion":"1.0.0","name":"edit-net","plugins":[{{"type":"bridge","bridge":"{bridge}","isGateway":true,"ipam":{{"type":"host-local","ranges":[[{{"subnet":"{{{{.PodCIDR}}}}"}}]]}}}}]}}"#
        )
    };
    let mut lab = crate::common::lab();
    // The bridge a pod's CNI result names, and the subnet host-local leased from.
    let attached = |lab: &Lab, node: &str, pod: &str| {
        let sandbox = &lab.nodes()[node].sandboxes[&format!("default/{pod}")];
        let bridge = sandbox.result.interfaces[0].name.clone();
        (bridge, sandbox.ip().to_string())
    };
    run(&mut lab, "pod create before --node node-1");
    assert_eq!(attached(&lab, "node-1", "before").0, "cni0");
    for (round, bridge) in ["br-a", "br-b"].into_iter().enumerate() {
        std::fs::write(&conf, text(bridge)).expect("write conflist");
        run(&mut lab, &format!("cni conf load {}", conf.display()));
        for node in ["node-1", "node-2"] {
            let pod = format!("p{round}-{node}");
            run(&mut lab, &format!("pod create {pod} --node {node}"));
            let (got, ip) = attached(&lab, node, &pod);
            assert_eq!(got, bridge, "{pod} on {node}");
            // Each node filled in its own podCIDR.
            let cidr = &lab.cluster().nodes[&(String::new(), node.to_string())]
                .spec
                .pod_cidr;
            let (base, len) = cidr.split_once('/').expect("podCIDR");
            let mask = u32::MAX << (32 - len.parse::<u32>().expect("prefix"));
            let v4 = |a: &str| u32::from(a.parse::<std::net::Ipv4Addr>().expect("IPv4"));
            assert_eq!(v4(&ip) & mask, v4(base) & mask, "{ip} in {cidr}");
        }
    }
    // The pod made before the edits keeps what it was attached with.
    assert_eq!(attached(&lab, "node-1", "before").0, "cni0");
    let _ = std::fs::remove_dir_all(&dir);
}
