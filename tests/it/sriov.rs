//! SR-IOV end to end through the command language: an SR-IOV node's VFs advertised by the
//! device plugin, the scheduler placing pods that ask for `intel.com/sriov_netdevice`
//! (and refusing with the real FailedScheduling message when none is left), kubelet
//! admission rejecting a pinned pod on a full node, devices freed on delete, and sriov-cni
//! moving a VF into a container and back. Plus the invariant that the device manager never
//! hands out more VFs than the node has, nor one VF twice.

use lab_engine::engine::Lab;
use proptest::prelude::*;

const RES: &str = "intel.com/sriov_netdevice";
const FULL: &str = "0/2 nodes are available: 2 Insufficient intel.com/sriov_netdevice. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

fn fails(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => panic!("{line} should fail, printed:\n{}", out.to_text()),
        Err(e) => e.message,
    }
}

/// node-1 (no NIC) and sriov-1 (PF ens1f0, 2 VFs).
fn cluster() -> Lab {
    let mut lab = crate::common::empty_lab();
    run(
        &mut lab,
        "node add node-1 --cidr 10.244.1.0/24 --ip 192.168.0.1",
    );
    run(
        &mut lab,
        "node add sriov-1 --cidr 10.244.2.0/24 --ip 192.168.0.2 --sriov-pf ens1f0 --vfs 2",
    );
    lab
}

fn node_of(lab: &Lab, pod: &str) -> String {
    lab.cluster().pods[&("default".to_string(), pod.to_string())]
        .spec
        .node_name
        .clone()
}

fn phase(lab: &Lab, pod: &str) -> String {
    lab.cluster().pods[&("default".to_string(), pod.to_string())]
        .status
        .phase
        .to_string()
}

fn devices(lab: &Lab, pod: &str) -> Vec<String> {
    lab.kubelets()["sriov-1"]
        .pod_devices("default", pod)
        .into_iter()
        .flat_map(|d| d.device_ids)
        .collect()
}

#[test]
fn the_node_shows_its_nic_and_capacity() {
    let mut lab = cluster();
    let links = run(&mut lab, "show links sriov-1");
    for want in [
        "ens1f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP group default qlen 1000",
        "parentbus pci parentdev 0000:03:00.0",
        "vf 0     link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff, spoof checking on, link-state auto, trust off",
        "ens1f0v1: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN group default qlen 1000",
        "vf 1 of ens1f0",
        "parentbus pci parentdev 0000:03:02.1",
    ] {
        assert!(links.contains(want), "{want} missing:\n{links}");
    }
    let d = run(&mut lab, "describe node sriov-1");
    for want in [
        "Capacity:",
        "  intel.com/sriov_netdevice:  2",
        "  pods:                       110",
        "Allocatable:",
        "Allocated resources:",
        "  intel.com/sriov_netdevice  0         0",
    ] {
        assert!(d.contains(want), "{want} missing:\n{d}");
    }
    let j = run(&mut lab, "get node sriov-1 -o json");
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["status"]["capacity"][RES], "2");
    assert_eq!(v["status"]["allocatable"][RES], "2");
    assert_eq!(v["status"]["allocatable"]["cpu"], "4");
    let j = run(&mut lab, "get node node-1 -o json");
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert!(v["status"]["capacity"].get(RES).is_none());
    let files = &lab.nodes()["sriov-1"].host.files;
    assert!(files["/etc/pcidp/config.json"].contains("\"pfNames\""));
}

#[test]
fn scheduler_places_admits_rejects_and_frees() {
    let mut lab = cluster();
    run(
        &mut lab,
        "pod create a --resource intel.com/sriov_netdevice=1",
    );
    run(
        &mut lab,
        "pod create b --resource intel.com/sriov_netdevice=1",
    );
    assert_eq!(node_of(&lab, "a"), "sriov-1");
    assert_eq!(node_of(&lab, "b"), "sriov-1");
    assert_eq!(phase(&lab, "a"), "Running");
    assert_eq!(devices(&lab, "a"), ["0000:03:02.0"]);
    assert_eq!(devices(&lab, "b"), ["0000:03:02.1"]);

    // The third has nowhere to go.
    let out = run(
        &mut lab,
        "pod create c --resource intel.com/sriov_netdevice=1",
    );
    assert!(out.contains(FULL), "{out}");
    assert_eq!(node_of(&lab, "c"), "");
    assert_eq!(phase(&lab, "c"), "Pending");
    let d = run(&mut lab, "describe pod c");
    assert!(d.contains("FailedScheduling"), "{d}");
    assert!(d.contains(FULL), "{d}");

    // A pod pinned to the full node gets past the scheduler; kubelet rejects it. Its
    // device manager's admit handler runs before the resource-fit predicate (NewMainKubelet
    // adds GetAllocateResourcesPodAdmitHandler first), so Allocate refuses it, not the
    // predicate's `OutOfintel.com/sriov_netdevice`.
    let out = run(
        &mut lab,
        "pod create pinned --node sriov-1 --resource intel.com/sriov_netdevice=1",
    );
    let msg = "Allocate failed due to requested number of devices unavailable for intel.com/sriov_netdevice. Requested: 1, Available: 0, which is unexpected";
    assert!(out.contains(msg), "{out}");
    assert!(!out.contains("Node didn't have enough resource"), "{out}");
    let p = &lab.cluster().pods[&("default".to_string(), "pinned".to_string())];
    assert_eq!(p.status.phase, "Failed");
    assert_eq!(p.status.reason(), "UnexpectedAdmissionError");
    assert_eq!(p.status.message(), format!("Pod was rejected: {msg}"));
    let d = run(&mut lab, "describe pod pinned");
    assert!(d.contains("Warning"), "{d}");
    // spec.nodeName from the manifest: the scheduler never saw the pod.
    assert!(!d.contains("default-scheduler"), "{d}");
    assert!(d.contains("UnexpectedAdmissionError"), "{d}");
    let pods = run(&mut lab, "get pods");
    assert!(
        pods.lines()
            .any(|l| l.starts_with("pinned") && l.contains("UnexpectedAdmissionError")),
        "{pods}"
    );

    // The device plugin's env and devinfo.
    let d = run(&mut lab, "describe pod a");
    assert!(d.contains("      intel.com/sriov_netdevice:  1"), "{d}");
    assert!(
        d.contains("PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE:  0000:03:02.0"),
        "{d}"
    );
    assert!(
        d.contains(r#"{"0000:03:02.0":{"generic":{"deviceID":"0000:03:02.0"}}}"#),
        "{d}"
    );
    assert!(lab.nodes()["sriov-1"].host.files.contains_key(
        "/var/run/k8s.cni.cncf.io/devinfo/dp/intel.com-sriov_netdevice-0000:03:02.0-device.json"
    ));
    let d = run(&mut lab, "describe node sriov-1");
    assert!(
        d.contains("  intel.com/sriov_netdevice  2         2"),
        "{d}"
    );

    // Deleting a frees its VF; the pending pod is scheduled and gets it.
    run(&mut lab, "pod delete a");
    assert!(
        !lab.cluster()
            .pods
            .contains_key(&("default".into(), "a".into()))
    );
    assert_eq!(node_of(&lab, "c"), "sriov-1");
    assert_eq!(phase(&lab, "c"), "Running");
    assert_eq!(devices(&lab, "c"), ["0000:03:02.0"]);
    let d = run(&mut lab, "describe pod c");
    assert!(
        d.contains("Successfully assigned default/c to sriov-1"),
        "{d}"
    );

    // Pinned to a node that has no such resource at all: kubelet drops the unknown
    // extended resource from its check (removeMissingExtendedResources) and runs the pod,
    // without a device.
    run(
        &mut lab,
        "pod create elsewhere --node node-1 --resource intel.com/sriov_netdevice=1",
    );
    assert_eq!(phase(&lab, "elsewhere"), "Running");
    assert!(
        lab.kubelets()["node-1"]
            .pod_devices("default", "elsewhere")
            .is_empty()
    );

    // The rejected pod holds nothing; deleting it removes it.
    run(&mut lab, "pod delete pinned");
    assert!(
        !lab.cluster()
            .pods
            .contains_key(&("default".into(), "pinned".into()))
    );
}

#[test]
fn pods_without_resources_spread_by_least_allocated() {
    let mut lab = cluster();
    run(&mut lab, "pod create p1");
    run(&mut lab, "pod create p2");
    run(&mut lab, "pod create p3");
    // Equal nodes: the first by name, then the emptier one.
    assert_eq!(node_of(&lab, "p1"), "node-1");
    assert_eq!(node_of(&lab, "p2"), "sriov-1");
    assert_eq!(node_of(&lab, "p3"), "node-1");
    assert_eq!(phase(&lab, "p2"), "Running");
}

#[test]
fn bad_input_changes_nothing() {
    let mut lab = cluster();
    for (line, want) in [
        (
            "pod create x --resource intel.com/sriov_netdevice=1.5",
            "must be an integer",
        ),
        (
            "pod create x --resource intel.com/sriov_netdevice",
            "NAME=COUNT",
        ),
        ("pod create x --resource cpu=1", "extended resources only"),
        (
            "pod create x --resource intel.com/sriov_netdevice=1 --resource intel.com/sriov_netdevice=2",
            "twice",
        ),
        ("node add n2 --sriov-pf ens1f0 --vfs 65", "1 to 64"),
        ("node add n2 --sriov-pf ens1f0 --vfs 0", "1 to 64"),
        ("node add n2 --sriov-pf eth0 --vfs 2", "already has a link"),
        ("node add n2 --sriov-pf 'a b' --vfs 2", "interface name"),
        ("node add n2 --vfs 2", "--sriov-pf"),
        ("node add n2 --sriov-pf ens1f0", "--vfs"),
    ] {
        let e = fails(&mut lab, line);
        assert!(e.contains(want), "{line}: {e}");
    }
    assert_eq!(lab.cluster().nodes.len(), 2);
    assert!(lab.cluster().pods.is_empty());
}

#[test]
fn unschedulable_without_an_sriov_node() {
    let mut lab = crate::common::lab();
    let out = run(&mut lab, "pod create x --resource example.com/gpu=1");
    assert!(
        out.contains("0/2 nodes are available: 2 Insufficient example.com/gpu."),
        "{out}"
    );
}

#[test]
fn sriov_cni_moves_the_vf_in_and_out() {
    let mut lab = cluster();
    let dir = std::env::temp_dir().join(format!("lab-sriov-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("00-sriov.conflist");
    std::fs::write(
        &f,
        r#"{"cniVersion": "1.0.0", "name": "sriov-net", "plugins": [
            {"type": "sriov", "deviceID": "0000:03:02.1", "vlan": 100,
             "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.56.217.0/24"}]]}}]}"#,
    )
    .unwrap();
    run(
        &mut lab,
        &format!("cni conf load {} --node sriov-1", f.display()),
    );
    let out = run(&mut lab, "cni add c1 --node sriov-1 --ifname net2");
    // The result JSON, then the call log.
    let end = out.find("\n}").map_or(out.len(), |i| i + 2);
    let v: serde_json::Value =
        serde_json::from_str(&out[..end]).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["interfaces"][0]["name"], "net2");
    assert_eq!(v["interfaces"][0]["mtu"], 1500);
    assert_eq!(v["interfaces"][0]["sandbox"], "/var/run/netns/c1");
    assert_eq!(v["ips"][0]["address"], "10.56.217.2/24");
    {
        let host = &lab.nodes()["sriov-1"].host;
        assert!(!host.root.links.contains_key("ens1f0v1"));
        let l = host.netns["/var/run/netns/c1"].links.get("net2").unwrap();
        assert_eq!(l.pci(), Some("0000:03:02.1"));
        assert!(l.up);
        assert_eq!(
            host.files["/var/lib/cni/sriov/pci/0000:03:02.1"],
            "/var/run/netns/c1"
        );
        assert!(host.files.contains_key("/var/lib/cni/sriov/c1-net2"));
    }
    let links = run(&mut lab, "show links sriov-1");
    assert!(links.contains("vf 1     link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff, vlan 100, spoof checking on"), "{links}");
    assert!(!links.contains("ens1f0v1:"), "{links}");

    // The same VF for another container: refused.
    let e = fails(&mut lab, "cni add c2 --node sriov-1 --ifname net2");
    assert!(
        e.contains("pci address 0000:03:02.1 is already allocated"),
        "{e}"
    );

    run(&mut lab, "cni del c1 --node sriov-1 --ifname net2");
    let host = &lab.nodes()["sriov-1"].host;
    let back = host.root.links.get("ens1f0v1").unwrap();
    assert!(!back.up);
    assert!(back.addrs.is_empty());
    assert!(
        !host
            .files
            .contains_key("/var/lib/cni/sriov/pci/0000:03:02.1")
    );
    assert!(!host.files.contains_key("/var/lib/cni/sriov/c1-net2"));
    assert_eq!(host.vfs["0000:03:02.1"].vlan, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_sriov_preset() {
    let lab = lab_engine::presets::build("sriov", crate::common::disk()).unwrap();
    let n = &lab.cluster().nodes[&(String::new(), "sriov-1".to_string())];
    assert_eq!(n.status.allocatable[RES], "4");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Whatever pods come and go, the device manager holds at most as many VFs as the node
    /// has, never one twice, and each VF netdev is in exactly one namespace.
    #[test]
    fn vfs_are_never_overcommitted(ops in proptest::collection::vec((0u8..4, 0usize..5, 0u8..3), 1..14)) {
        let mut lab = cluster();
        for (op, i, n) in ops {
            let name = format!("p{i}");
            let line = match op {
                0 | 1 => format!("pod create {name} --resource {RES}={n}"),
                2 => format!("pod create {name} --node sriov-1 --resource {RES}={n}"),
                _ => format!("pod delete {name}"),
            };
            let _ = lab.execute(&line);
            let k = &lab.kubelets()["sriov-1"];
            let all: Vec<String> = k.devices.allocated.values()
                .flat_map(|a| a.containers.values())
                .flat_map(|m| m.values())
                .flat_map(|c| c.ids.clone())
                .collect();
            let mut uniq = all.clone();
            uniq.sort();
            uniq.dedup();
            prop_assert_eq!(uniq.len(), all.len(), "a VF allocated twice: {:?}", all);
            prop_assert!(all.len() <= 2, "{:?}", all);
            let host = &lab.nodes()["sriov-1"].host;
            for pci in ["0000:03:02.0", "0000:03:02.1"] {
                let homes = std::iter::once(&host.root)
                    .chain(host.netns.values())
                    .filter(|ns| ns.links.values().any(|l| l.pci() == Some(pci)))
                    .count();
                prop_assert_eq!(homes, 1, "{}", pci);
            }
        }
    }
}

#[test]
fn a_scheduled_pod_takes_its_wait_for_first_consumer_claim_along() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi --class local-wffc");
    run(&mut lab, "pod create w --pvc data");
    let pvc = &lab.cluster().pvcs[&("default".to_string(), "data".to_string())];
    assert_eq!(
        pvc.metadata.annotations()["volume.kubernetes.io/selected-node"],
        "node-1"
    );
    assert_eq!(node_of(&lab, "w"), "node-1");
    assert_eq!(phase(&lab, "w"), "Running");
}
