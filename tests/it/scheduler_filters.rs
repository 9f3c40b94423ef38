//! kube-scheduler's filters the lab's pods meet beyond room and node selectors, checked
//! against v1.31's plugins and the FailedScheduling text `describe pod` shows:
//! - NodePorts: a host port taken on a node (same protocol, `0.0.0.0` taking every IP)
//!   fails the node, as Unschedulable; kubelet's admission makes the same check for a pod
//!   that names its node;
//! - VolumeRestrictions: a ReadWriteOncePod claim in use fails every node (its PreFilter
//!   counts the claim's users cluster-wide), as Unschedulable;
//! - VolumeBinding: a WaitForFirstConsumer claim to provision fails every node its class's
//!   `allowedTopologies` leave out (`checkVolumeProvisions`), as unresolvable; so does one
//!   whose `selected-node` names another node (the same `ErrReasonBindConflict`); its
//!   PreFilter reports a claim being deleted before an unbound Immediate one.

use crate::common;

use common::{key, phase, run};
use lab_engine::engine::Lab;

/// The node a pod is bound to ("" while Pending).
fn node_of(lab: &Lab, pod: &str) -> String {
    lab.cluster().pods[&key(pod)].spec.node_name.to_string()
}

/// The message of a pod's `PodScheduled=False` condition.
fn unschedulable(lab: &Lab, pod: &str) -> String {
    let p = &lab.cluster().pods[&key(pod)];
    let c = p
        .status
        .conditions
        .iter()
        .find(|c| c.condition_type == "PodScheduled")
        .unwrap_or_else(|| panic!("{pod} has no PodScheduled condition"));
    assert_eq!((&*c.status, &*c.reason), ("False", "Unschedulable"));
    c.message.to_string()
}

/// The FailedScheduling line of `describe pod`'s events.
fn failed_scheduling_event(lab: &mut Lab, pod: &str) -> String {
    let d = run(lab, &format!("describe pod {pod}"));
    let line = d
        .lines()
        .find(|l| l.contains("FailedScheduling"))
        .unwrap_or_else(|| panic!("no FailedScheduling event: {d}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        words[..4],
        ["Warning", "FailedScheduling", "0s", "default-scheduler"],
        "{line}"
    );
    words[4..].join(" ")
}

const NO_FREE_PORTS: &str = "node(s) didn't have free ports for the requested pod ports";

#[test]
fn a_host_port_taken_on_a_node_keeps_the_next_pod_off_it() {
    let mut lab = common::lab();
    // node-2 holds more pods, so LeastAllocated prefers node-1 for a pod that fits both.
    run(&mut lab, "pod create x --node node-2");
    run(&mut lab, "pod create y --node node-2");
    run(&mut lab, "pod create a --port 8080:80 --node node-1");
    run(&mut lab, "pod create b --port 8080:80");
    assert_eq!(node_of(&lab, "b"), "node-2");
    assert_eq!(phase(&lab, "b"), "Running");
    // Both nodes hold TCP 8080 now: Pending, preemption might free it.
    let out = run(&mut lab, "pod create c --port 8080:80");
    let want = format!(
        "0/2 nodes are available: 2 {NO_FREE_PORTS}. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    );
    assert!(out.contains(&want), "{out}");
    assert_eq!(node_of(&lab, "c"), "");
    assert_eq!(unschedulable(&lab, "c"), want);
    assert_eq!(failed_scheduling_event(&mut lab, "c"), want);
    // Each node's first failing filter is its one reason: NodeAffinity before NodePorts.
    let out = run(
        &mut lab,
        "pod create d --port 8080:80 --node-selector kubernetes.io/hostname=node-1",
    );
    let want = format!(
        "0/2 nodes are available: 1 {NO_FREE_PORTS}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    );
    assert!(out.contains(&want), "{out}");
    // Another protocol or another port is free.
    run(&mut lab, "pod create u --port 8080:80/udp");
    assert_eq!(phase(&lab, "u"), "Running");
    run(&mut lab, "pod create v --port 8081:80");
    assert_eq!(phase(&lab, "v"), "Running");
    // A pod that names its node skips the scheduler; kubelet's admission checks the ports
    // (`AdmissionCheck`: `nodeports.Fits`) and rejects it.
    let out = run(&mut lab, "pod create e --port 8080:80 --node node-1");
    let msg = format!("Predicate NodePorts failed: {NO_FREE_PORTS}");
    assert!(out.contains(&msg), "{out}");
    assert!(
        !out.contains("pod/e →") && !out.contains("default/e"),
        "{out}"
    );
    let e = &lab.cluster().pods[&key("e")];
    assert_eq!(e.status.phase, "Failed");
    assert_eq!(e.status.reason(), "NodePorts");
    assert_eq!(e.status.message(), format!("Pod was rejected: {msg}"));
    // A Failed pod leaves the scheduler's cache (its pod informer watches only
    // non-terminal pods, `newPodInformer`), and `RemovePod` takes e's TCP 8080 out of
    // node-1's `UsedPorts` though a still holds it: the waiting pods are bound to node-1
    // one after the other, and kubelet rejects each.
    let bound = |p: &str| format!("Successfully assigned default/{p} to node-1");
    assert!(
        out.contains(&bound("c")) && out.contains(&bound("d")),
        "{out}"
    );
    for p in ["c", "d"] {
        let pod = &lab.cluster().pods[&key(p)];
        assert_eq!(pod.spec.node_name, "node-1");
        assert_eq!(pod.status.phase, "Failed");
        assert_eq!(pod.status.message(), format!("Pod was rejected: {msg}"));
    }
    assert_eq!(phase(&lab, "a"), "Running");
    // The port's holder goes: the next pod asking for it runs on node-1.
    run(&mut lab, "pod delete a");
    run(
        &mut lab,
        "pod create f --port 8080:80 --node-selector kubernetes.io/hostname=node-1",
    );
    assert_eq!(node_of(&lab, "f"), "node-1");
    assert_eq!(phase(&lab, "f"), "Running");
}

const RWOP_IN_USE: &str =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

#[test]
fn a_read_write_once_pod_claim_in_use_fails_every_node() {
    let mut lab = common::lab();
    run(
        &mut lab,
        "node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3",
    );
    run(&mut lab, "pvc create solo --size 1Gi --access RWOP");
    run(&mut lab, "pod create s-1 --pvc solo");
    assert_eq!(phase(&lab, "s-1"), "Running");
    let home = node_of(&lab, "s-1");
    // VolumeRestrictions runs before VolumeBinding: the PV's node affinity is never the
    // reason, and every node gets the same one.
    let out = run(&mut lab, "pod create s-2 --pvc solo");
    let want = format!(
        "0/3 nodes are available: 3 {RWOP_IN_USE}. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    );
    assert!(out.contains(&want), "{out}");
    assert_eq!(unschedulable(&lab, "s-2"), want);
    assert_eq!(failed_scheduling_event(&mut lab, "s-2"), want);
    // A node failing an earlier filter keeps its own reason.
    run(&mut lab, "cordon node-3");
    let out = run(&mut lab, "pod create s-3 --pvc solo");
    let want = format!(
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 {RWOP_IN_USE}. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    );
    assert!(out.contains(&want), "{out}");
    assert_eq!(failed_scheduling_event(&mut lab, "s-3"), want);
    // The claim's user goes: one waiting pod gets the claim, on the volume's node.
    run(&mut lab, "pod delete s-3");
    run(&mut lab, "pod delete s-1");
    run(&mut lab, "tick 1s");
    assert_eq!(node_of(&lab, "s-2"), home);
    assert_eq!(phase(&lab, "s-2"), "Running");
}

const BIND_CONFLICT: &str = "node(s) didn't find available persistent volumes to bind";

#[test]
fn a_wait_for_first_consumer_claim_keeps_its_pod_in_the_class_topology() {
    let mut lab = common::lab();
    // node-1 is in zone-1, node-2 in zone-2; LeastAllocated alone picks node-1.
    run(
        &mut lab,
        "sc create zonal --binding WaitForFirstConsumer --zones zone-2",
    );
    run(&mut lab, "pvc create z --size 1Gi --class zonal");
    let out = run(&mut lab, "pod create p --pvc z");
    assert!(!out.contains("ProvisioningFailed"), "{out}");
    assert_eq!(node_of(&lab, "p"), "node-2");
    assert_eq!(phase(&lab, "p"), "Running");
    let z = &lab.cluster().pvcs[&key("z")];
    assert_eq!(
        z.metadata
            .annotations()
            .get("volume.kubernetes.io/selected-node")
            .map(String::as_str),
        Some("node-2")
    );
    assert!(!z.spec.volume_name.is_empty());
    // A class no node is in: Pending, the claim never gets a node.
    run(
        &mut lab,
        "sc create nowhere --binding WaitForFirstConsumer --zones zone-9",
    );
    run(&mut lab, "pvc create y --size 1Gi --class nowhere");
    let out = run(&mut lab, "pod create q --pvc y");
    let want = format!(
        "0/2 nodes are available: 2 {BIND_CONFLICT}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert!(out.contains(&want), "{out}");
    assert!(!out.contains("Provisioning"), "{out}");
    assert_eq!(unschedulable(&lab, "q"), want);
    assert_eq!(failed_scheduling_event(&mut lab, "q"), want);
    assert!(
        !lab.cluster().pvcs[&key("y")]
            .metadata
            .annotations()
            .contains_key("volume.kubernetes.io/selected-node")
    );
    // The allowed node failing another filter: each node its own reason.
    run(&mut lab, "pvc create w --size 1Gi --class zonal");
    let out = run(
        &mut lab,
        "pod create r --pvc w --node-selector kubernetes.io/hostname=node-1",
    );
    let want = format!(
        "0/2 nodes are available: 1 {BIND_CONFLICT}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert!(out.contains(&want), "{out}");
}

/// Upstream's `NodeInfo.UsedPorts` is a set (`HostPortInfo`): `RemovePod` takes a pod's
/// host ports out of it whoever else holds them (`updateUsedPorts`). Two pods pinned to
/// one node (no scheduler, no check until kubelet admits them) can both hold a port; when
/// one goes and the other is not written again, the scheduler sees the port free, binds a
/// pod that asks for it there, and the node's kubelet rejects that pod.
#[test]
fn a_host_port_two_pinned_pods_hold_is_free_to_the_scheduler_once_either_goes() {
    let mut lab = common::lab();
    run(&mut lab, "mode step");
    run(&mut lab, "pod create b --port 8080:80 --node node-1");
    run(&mut lab, "reconcile kubelet --node node-1");
    assert_eq!(phase(&lab, "b"), "Running");
    // a is pinned too, and not admitted yet: both hold TCP 8080 on node-1.
    run(&mut lab, "pod create a --port 8080:80 --node node-1");
    run(
        &mut lab,
        "pod create c --port 8080:80 --node-selector kubernetes.io/hostname=node-1",
    );
    run(&mut lab, "reconcile scheduler");
    let want = format!(
        "0/2 nodes are available: 1 {NO_FREE_PORTS}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    );
    assert_eq!(unschedulable(&lab, "c"), want);
    // a goes; b is not written again.
    run(&mut lab, "pod delete a");
    run(&mut lab, "reconcile kubelet --node node-1");
    assert!(!lab.cluster().pods.contains_key(&key("a")));
    run(&mut lab, "tick 1s");
    run(&mut lab, "reconcile scheduler");
    assert_eq!(node_of(&lab, "c"), "node-1");
    // kubelet's admission counts b's port (`nodeports.Fits` over the node's active pods).
    run(&mut lab, "reconcile kubelet --node node-1");
    let c = &lab.cluster().pods[&key("c")];
    assert_eq!(c.status.phase, "Failed");
    assert_eq!(c.status.reason(), "NodePorts");
    assert_eq!(
        c.status.message(),
        format!("Pod was rejected: Predicate NodePorts failed: {NO_FREE_PORTS}")
    );
    assert_eq!(phase(&lab, "b"), "Running");
}

/// A claim to bind whose `volume.kubernetes.io/selected-node` names another node fails the
/// node in VolumeBinding's Filter with `ErrReasonBindConflict`: `FindPodVolumes` takes the
/// "Fast path, skip unmatched node" (`unboundVolumesSatisfied = false`), and no reason
/// names the claim or the node.
#[test]
fn a_claim_selected_for_another_node_fails_the_node_as_a_bind_conflict() {
    let mut lab = common::lab();
    run(&mut lab, "mode step");
    run(&mut lab, "sc create late --binding WaitForFirstConsumer");
    run(&mut lab, "pvc create w --size 1Gi --class late");
    run(&mut lab, "pod create p --pvc w");
    run(&mut lab, "reconcile scheduler");
    let w = &lab.cluster().pvcs[&key("w")];
    assert_eq!(
        w.metadata
            .annotations()
            .get("volume.kubernetes.io/selected-node")
            .map(String::as_str),
        Some("node-1")
    );
    // q shares the claim but may only go to node-2.
    run(
        &mut lab,
        "pod create q --pvc w --node-selector kubernetes.io/hostname=node-2",
    );
    let out = run(&mut lab, "reconcile scheduler");
    let want = format!(
        "0/2 nodes are available: 1 {BIND_CONFLICT}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert!(out.contains(&want), "{out}");
    assert_eq!(unschedulable(&lab, "q"), want);
    assert_eq!(failed_scheduling_event(&mut lab, "q"), want);
}

/// VolumeBinding's PreFilter: `podHasPVCs` walks every claim of the pod before
/// `GetPodVolumeClaims` sorts them, so a claim being deleted fails the pod even when an
/// unbound Immediate claim comes first in its volumes.
#[test]
fn a_claim_being_deleted_wins_over_an_unbound_immediate_claim_listed_first() {
    let mut lab = common::lab();
    run(&mut lab, "mode step");
    run(&mut lab, "sc create now --binding Immediate");
    run(&mut lab, "pvc create i --size 1Gi --class now");
    run(&mut lab, "pvc create d --size 1Gi --class now");
    run(&mut lab, "pvc delete d");
    let preemption =
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    let deleted = format!(
        "0/2 nodes are available: persistentvolumeclaim \"d\" is being deleted. {preemption}"
    );
    for (pod, volumes) in [("p", "--pvc i --pvc d"), ("q", "--pvc d --pvc i")] {
        run(&mut lab, &format!("pod create {pod} {volumes}"));
        let out = run(&mut lab, "reconcile scheduler");
        assert!(out.contains(&deleted), "{out}");
        assert_eq!(unschedulable(&lab, pod), deleted);
    }
    // With no claim being deleted, the unbound Immediate claim is the reason.
    run(&mut lab, "pod create r --pvc i");
    run(&mut lab, "reconcile scheduler");
    assert_eq!(
        unschedulable(&lab, "r"),
        format!(
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. {preemption}"
        )
    );
}
