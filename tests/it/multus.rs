//! Multus (thin) and NetworkAttachmentDefinitions through the command language: a pod with
//! a second network, the annotations Multus writes, the errors of a missing NAD and a bad
//! annotation, a failing delegate rolled back without leftovers, pod delete cleaning every
//! attachment, and save/load keeping the NADs.
//!
//! The extra networks here use `bridge` + `host-local` (a second bridge and range per NAD).
//! With the macvlan plugin installed, the same tests work with a config such as
//! `{"cniVersion":"1.0.0","type":"macvlan","master":"eth0","mode":"bridge","ipam":{…}}`.

use lab_engine::engine::Lab;

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

fn fails(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => panic!("{line} succeeded: {}", out.to_text()),
        Err(e) => e.message,
    }
}

const BLUE: &str = r#"{"cniVersion":"1.0.0","type":"bridge","bridge":"br-blue","ipam":{"type":"host-local","subnet":"10.10.0.0/24"}}"#;
/// A range with one usable address (.1 is the gateway): the second pod's ADD fails in IPAM.
const TINY: &str = r#"{"cniVersion":"1.0.0","type":"bridge","bridge":"br-tiny","ipam":{"type":"host-local","subnet":"10.30.0.0/30"}}"#;

fn multus_lab() -> Lab {
    let mut lab = crate::common::lab();
    run(&mut lab, "network multus on");
    run(&mut lab, &format!("nad create blue --config '{BLUE}'"));
    lab
}

fn status(lab: &mut Lab, pod: &str) -> String {
    run(lab, &format!("get pod {pod} -o json"))
}

fn network_status(lab: &Lab, pod: &str) -> Option<String> {
    lab.cluster()
        .pods
        .get(&("default".to_string(), pod.to_string()))?
        .metadata
        .annotations()
        .get("k8s.v1.cni.cncf.io/network-status")
        .cloned()
}

fn pod_links(lab: &Lab, pod: &str) -> Vec<String> {
    let rt = &lab.nodes()["node-1"];
    let Some(sb) = rt.sandboxes.get(&format!("default/{pod}")) else {
        return Vec::new();
    };
    rt.host.netns[sb.netns()]
        .links
        .values()
        .map(|l| l.name.to_string())
        .collect()
}

fn leases(lab: &Lab, net: &str) -> Vec<String> {
    lab.nodes()["node-1"]
        .host
        .ipam
        .get(net)
        .map(|s| {
            s.files()
                .into_iter()
                .map(|(f, _)| f)
                .filter(|f| f.starts_with("10."))
                .collect()
        })
        .unwrap_or_default()
}

fn host_veths(lab: &Lab) -> usize {
    lab.nodes()["node-1"]
        .host
        .root
        .links
        .values()
        .filter(|l| l.name.starts_with("veth"))
        .count()
}

#[test]
fn installing_writes_the_thin_config_on_every_node() {
    let mut lab = crate::common::lab();
    run(&mut lab, "network multus on");
    for rt in lab.nodes().values() {
        let text = &rt.confdir.files["00-multus.conflist"];
        assert!(text.contains("\"type\": \"multus\""));
        assert!(text.contains("\"name\": \"multus-cni-network\""));
        assert!(text.contains("\"kubeconfig\": \"/etc/cni/net.d/multus.d/multus.kubeconfig\""));
        assert!(text.contains(
            "\"delegates\": [\n            {\"cniVersion\":\"1.0.0\",\"name\":\"lab-net\""
        ));
        assert!(
            rt.host
                .files
                .contains_key("/etc/cni/net.d/multus.d/multus.kubeconfig")
        );
        assert_eq!(rt.confdir.active().unwrap().0, "00-multus.conflist");
    }
    // A node that joins gets it too; `network use` regenerates it from the new primary.
    run(&mut lab, "node add node-3");
    assert!(
        lab.nodes()["node-3"]
            .confdir
            .files
            .contains_key("00-multus.conflist")
    );
    run(&mut lab, "network use calico-bgp");
    assert!(
        lab.nodes()["node-1"].confdir.files["00-multus.conflist"]
            .contains("\"name\":\"k8s-pod-network\"")
    );
    run(&mut lab, "network multus off");
    for rt in lab.nodes().values() {
        assert!(!rt.confdir.files.keys().any(|f| f.starts_with("00-multus")));
        assert!(
            !rt.host
                .files
                .contains_key("/etc/cni/net.d/multus.d/multus.kubeconfig")
        );
    }
    assert!(run(&mut lab, "network multus off").contains("already off"));
}

#[test]
fn a_pod_gets_a_second_interface_and_network_status() {
    let mut lab = multus_lab();
    let out = run(&mut lab, "pod create p1 --node node-1 --networks blue");
    assert!(
        out.contains("AddedInterface  Add net1 [10.10.0.2/24] from default/blue"),
        "{out}"
    );
    let mut links = pod_links(&lab, "p1");
    links.sort();
    assert_eq!(links, vec!["eth0", "lo", "net1"]);
    let s = network_status(&lab, "p1").expect("network-status");
    assert!(
        s.starts_with("[{\n    \"name\": \"lab-net\",\n    \"interface\": \"eth0\""),
        "{s}"
    );
    assert!(s.contains("},{\n    \"name\": \"default/blue\",\n    \"interface\": \"net1\",\n    \"ips\": [\n        \"10.10.0.2\"\n    ]"), "{s}");
    // The learner sees it in describe (readable) and -o json (exact).
    let d = run(&mut lab, "describe pod p1");
    assert!(d.contains("k8s.v1.cni.cncf.io/networks: blue"));
    assert!(d.contains("net1        default/blue   10.10.0.2"), "{d}");
    assert!(status(&mut lab, "p1").contains("k8s.v1.cni.cncf.io/network-status"));
    let y = run(&mut lab, "get pod p1 -o yaml");
    assert!(
        y.contains(
            "    k8s.v1.cni.cncf.io/network-status: |-\n      [{\n          \"name\": \"lab-net\","
        ),
        "{y}"
    );
    assert!(y.contains("    k8s.v1.cni.cncf.io/networks: blue\n"), "{y}");
    // The wire log nests each delegate's call under Multus's.
    let w = run(&mut lab, "show wire --list");
    assert!(w.contains("multus         ADD"), "{w}");
    assert!(w.contains("└ bridge       ADD"), "{w}");
    // The status is still Running with the cluster network's IP.
    assert!(status(&mut lab, "p1").contains("\"podIP\": \"10.244.1.2\""));
}

#[test]
fn pod_delete_removes_every_attachment() {
    let mut lab = multus_lab();
    run(
        &mut lab,
        "pod create p1 --node node-1 --networks blue@blue0,blue",
    );
    assert_eq!(leases(&lab, "blue").len(), 2);
    assert_eq!(host_veths(&lab), 3);
    let out = run(&mut lab, "pod delete p1");
    assert!(out.contains("pod/p1 removed"), "{out}");
    assert!(leases(&lab, "blue").is_empty());
    assert!(leases(&lab, "lab-net").is_empty());
    assert_eq!(host_veths(&lab), 0);
    let files: Vec<&String> = lab.nodes()["node-1"]
        .host
        .files
        .keys()
        .filter(|f| f.starts_with("/var/lib/cni/multus"))
        .collect();
    assert!(files.is_empty(), "{files:?}");
}

#[test]
fn a_missing_nad_fails_the_sandbox_with_multus_message_and_an_event() {
    let mut lab = multus_lab();
    run(&mut lab, "pod create p2 --node node-1 --networks nope");
    let d = run(&mut lab, "describe pod p2");
    assert!(d.contains("NoNetworkFound"), "{d}");
    assert!(d.contains("ContainerCreating"), "{d}");
    let ev = run(&mut lab, "show events -n 40");
    assert!(ev.contains("Multus: [default/p2/"));
    assert!(ev.contains("getKubernetesDelegate: cannot find a network-attachment-definition (nope) in namespace (default): network-attachment-definitions.k8s.cni.cncf.io \"nope\" not found"), "{ev}");
    assert!(ev.contains("failed to setup network for sandbox"), "{ev}");
    // Nothing leaks: the cluster network's address was released by the teardown.
    assert!(leases(&lab, "lab-net").is_empty());
    // Once the NAD exists, the retry succeeds.
    run(&mut lab, &format!("nad create nope --config '{BLUE}'"));
    run(&mut lab, "tick 10");
    assert!(status(&mut lab, "p2").contains("\"phase\": \"Running\""));
}

#[test]
fn a_bad_annotation_is_accepted_by_the_api_server_and_refused_by_multus() {
    let mut lab = multus_lab();
    run(&mut lab, "pod create p3 --node node-1 --networks Blue");
    assert!(network_status(&lab, "p3").is_none());
    let ev = run(&mut lab, "show events -n 40");
    assert!(ev.contains("parsePodNetworkAnnotation: parsePodNetworkObjectName: Failed to parse: one or more items did not match comma-delimited format (must consist of lower case alphanumeric characters). Must start and end with an alphanumeric character), mismatch @ 'Blue'"), "{ev}");
    run(
        &mut lab,
        "pod create p4 --node node-1 --networks '[{\"name\":\"blue\",\"mac\":\"zz\"}]'",
    );
    let ev = run(&mut lab, "show events -n 40");
    assert!(
        ev.contains("parsePodNetworkAnnotation: failed to mac: address zz: invalid MAC address"),
        "{ev}"
    );
}

#[test]
fn a_failing_delegate_is_rolled_back_without_leftovers() {
    let mut lab = multus_lab();
    run(&mut lab, &format!("nad create tiny --config '{TINY}'"));
    run(&mut lab, "pod create a --node node-1 --networks tiny");
    assert!(status(&mut lab, "a").contains("\"phase\": \"Running\""));
    let veths = host_veths(&lab);
    // The second pod: eth0 and net1 (blue) are added, net2 (tiny) runs out of addresses.
    run(&mut lab, "pod create b --node node-1 --networks blue,tiny");
    let ev = run(&mut lab, "show events -n 60");
    assert!(
        ev.contains(":tiny]: error adding container to network \"tiny\": "),
        "{ev}"
    );
    assert!(status(&mut lab, "b").contains("ContainerCreating"));
    // Rollback and teardown left nothing of b: no veths, no leases, no pod netns.
    assert_eq!(host_veths(&lab), veths);
    assert!(leases(&lab, "blue").is_empty());
    assert_eq!(leases(&lab, "lab-net").len(), 1);
    assert_eq!(leases(&lab, "tiny").len(), 1);
    assert!(pod_links(&lab, "b").is_empty());
}

#[test]
fn nad_commands_validate_as_the_api_server_does() {
    let mut lab = crate::common::lab();
    let e = fails(&mut lab, "nad create Bad_Name --config '{}'");
    assert!(e.starts_with("The NetworkAttachmentDefinition \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"), "{e}");
    assert!(fails(&mut lab, "nad create x -n nope").contains("namespaces \"nope\" not found"));
    assert!(
        fails(&mut lab, "nad create x --file /nonexistent/x.json")
            .starts_with("cannot read /nonexistent/x.json: ")
    );
    assert!(
        fails(&mut lab, "nad create x --config a --file b").contains("cannot be used together")
    );
    // Any string is a valid spec.config; Multus parses it later.
    run(
        &mut lab,
        "nad create x --config 'not json' --resource intel.com/sriov_netdevice",
    );
    assert!(fails(&mut lab, "nad create x").contains("already exists"));
    let d = run(&mut lab, "describe net-attach-def x");
    assert!(
        d.contains("Annotations:  k8s.v1.cni.cncf.io/resourceName: intel.com/sriov_netdevice"),
        "{d}"
    );
    assert!(run(&mut lab, "get network-attachment-definitions").contains("x "));
    assert!(run(&mut lab, "get net-attach-def/x -o json").contains("\"config\": \"not json\""));
    run(&mut lab, "nad delete x");
    assert!(
        fails(&mut lab, "nad delete x")
            .contains("network-attachment-definitions.k8s.cni.cncf.io \"x\" not found")
    );
}

#[test]
fn a_nad_file_is_read_within_the_limits_and_saves_keep_nads() {
    let dir = std::env::temp_dir().join(format!("lab-multus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("blue.json");
    std::fs::write(&file, BLUE).unwrap();
    let mut lab = crate::common::lab();
    run(&mut lab, "network multus on");
    run(
        &mut lab,
        &format!("nad create blue --file {}", file.display()),
    );
    run(&mut lab, "pod create p1 --node node-1 --networks blue");
    let e = fails(&mut lab, &format!("nad create d --file {}", dir.display()));
    assert!(e.contains("not a regular file"), "{e}");
    let save = dir.join("lab.json");
    run(&mut lab, &format!("save {}", save.display()));
    std::fs::remove_file(&file).unwrap();
    let mut loaded = crate::common::lab();
    run(&mut loaded, &format!("load {}", save.display()));
    assert_eq!(run(&mut loaded, "nad list"), run(&mut lab, "nad list"));
    assert_eq!(network_status(&loaded, "p1"), network_status(&lab, "p1"));
    assert!(loaded.multus_on());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without Multus the annotation is kept and read by nothing (as in a real cluster); the
/// create says so and how to turn Multus on, and the pod has only eth0.
#[test]
fn networks_without_multus_say_that_nothing_reads_them() {
    let mut lab = crate::common::lab();
    run(&mut lab, &format!("nad create blue --config '{BLUE}'"));
    let out = run(&mut lab, "pod create p --node node-1 --networks blue");
    assert_eq!(
        out.lines().take(2).collect::<Vec<_>>(),
        [
            "pod/p created",
            "  note: Multus is not running, so nothing reads k8s.v1.cni.cncf.io/networks: the pod gets only its flannel-host-gw interface (turn it on with `network multus on`, then create the pod again)",
        ]
    );
    // With Multus on, the same create says nothing more.
    run(&mut lab, "network multus on");
    let out = run(&mut lab, "pod create q --node node-1 --networks blue");
    assert_eq!(out.lines().next(), Some("pod/q created"));
    assert!(!out.contains("note: Multus"), "{out}");
}
