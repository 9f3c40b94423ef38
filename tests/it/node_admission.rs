//! `pod create --node N` sets `spec.nodeName` as a manifest would: the scheduler never sees
//! the pod, the node's kubelet admits it (resources, node selector) and its volume manager
//! makes the volume checks (PV node affinity, ReadWriteOncePod); a WaitForFirstConsumer claim
//! used only by such a pod is never given a node. Without `--node` the scheduler filters on
//! the same node selector.

use crate::common;

use common::{key, phase, run};

#[test]
fn a_pod_with_its_node_never_meets_the_scheduler() {
    let mut lab = crate::common::lab();
    let out = run(&mut lab, "pod create web --node node-1");
    assert!(!out.contains("default-scheduler"), "{out}");
    assert_eq!(phase(&lab, "web"), "Running");
    let d = run(&mut lab, "describe pod web");
    assert!(!d.contains("default-scheduler"), "{d}");
    assert!(d.contains("PodScheduled                True"), "{d}");
    // Without --node the scheduler binds it and says so.
    let out = run(&mut lab, "pod create api");
    assert!(
        out.contains("Successfully assigned default/api to"),
        "{out}"
    );
}

#[test]
fn kubelet_rejects_a_pinned_pod_whose_node_selector_does_not_match() {
    let mut lab = crate::common::lab();
    let out = run(
        &mut lab,
        "pod create picky --node node-1 --node-selector disktype=ssd",
    );
    let msg = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector";
    assert!(out.contains(msg), "{out}");
    assert!(!out.contains("default-scheduler"), "{out}");
    let p = &lab.cluster().pods[&key("picky")];
    assert_eq!(p.status.phase, "Failed");
    assert_eq!(p.status.reason(), "NodeAffinity");
    assert_eq!(p.status.message(), format!("Pod was rejected: {msg}"));
    assert!(p.status.conditions.is_empty());
    // Rejected is final until the pod is deleted: kubelet does not look at it again on every
    // later command (it used to stay in the lab's work set and be re-synced forever).
    assert!(!lab.dirty().contains(&key("picky")), "{:?}", lab.dirty());
    run(&mut lab, "tick 30s");
    assert_eq!(lab.cluster().pods[&key("picky")].status.phase, "Failed");
    // A matching selector is admitted.
    run(
        &mut lab,
        "pod create fine --node node-2 --node-selector kubernetes.io/hostname=node-2",
    );
    assert_eq!(phase(&lab, "fine"), "Running");
    // The scheduler filters on the same selector.
    let out = run(&mut lab, "pod create picky-2 --node-selector disktype=ssd");
    assert!(
        out.contains("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        "{out}"
    );
    let out = run(
        &mut lab,
        "pod create placed --node-selector topology.kubernetes.io/zone=zone-2",
    );
    assert!(
        out.contains("Successfully assigned default/placed to node-2"),
        "{out}"
    );
}

#[test]
fn a_bad_node_selector_changes_nothing() {
    let mut lab = crate::common::lab();
    let before = lab.cluster().pods.len();
    let e = lab
        .execute("pod create x --node-selector no-equals-sign")
        .expect_err("refused");
    assert!(e.message.contains("--node-selector"), "{}", e.message);
    assert_eq!(lab.cluster().pods.len(), before);
}

#[test]
fn wait_for_first_consumer_claims_wait_for_a_scheduled_pod() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create local --size 1Gi --class local-wffc");
    let out = run(&mut lab, "pod create early --node node-2 --pvc local");
    assert!(
        out.contains("error processing PVC default/local: PVC is not bound"),
        "{out}"
    );
    run(&mut lab, "tick 300");
    let pvc = &lab.cluster().pvcs[&key("local")];
    assert_eq!(pvc.status.phase, "Pending");
    assert!(
        !pvc.metadata
            .annotations()
            .contains_key("volume.kubernetes.io/selected-node")
    );
    let d = run(&mut lab, "describe pvc local");
    assert!(
        d.contains("waiting for first consumer to be created before binding"),
        "{d}"
    );
    assert!(!d.contains("WaitForPodScheduled"), "{d}");
    run(&mut lab, "pod delete early");
    // A pod the scheduler cannot place is named by the PV controller.
    run(
        &mut lab,
        "pod create lost --node-selector disktype=ssd --pvc local",
    );
    let d = run(&mut lab, "describe pvc local");
    assert!(d.contains("waiting for pod lost to be scheduled"), "{d}");
    run(&mut lab, "pod delete lost");
    // The scheduler's choice is written on the claim and provisioned there.
    run(
        &mut lab,
        "pod create db --node-selector kubernetes.io/hostname=node-2 --pvc local",
    );
    assert_eq!(lab.cluster().pvcs[&key("local")].status.phase, "Bound");
    assert_eq!(phase(&lab, "db"), "Running");
    assert_eq!(lab.cluster().pods[&key("db")].spec.node_name, "node-2");
}

#[test]
fn kubelet_checks_the_volume_node_affinity_when_nothing_attaches() {
    let mut lab = crate::common::lab();
    // A driver without attach (`attachRequired: false`): kubelet's MountVolume is the first
    // to see the pod on the wrong node.
    let mut driver =
        lab.cluster().csi_drivers[&(String::new(), "hostpath.csi.lab".to_string())].clone();
    driver.spec.attach_required = false;
    lab.cluster_mut().csi_drivers().update(driver).unwrap();
    run(&mut lab, "pvc create local --size 1Gi --class local-wffc");
    run(
        &mut lab,
        "pod create db --node-selector kubernetes.io/hostname=node-2 --pvc local",
    );
    run(&mut lab, "pod delete db");
    let pv = lab.cluster().pvcs[&key("local")].spec.volume_name.clone();
    let out = run(&mut lab, "pod create stray --node node-1 --pvc local");
    let msg = format!(
        "MountVolume.NodeAffinity check failed for volume \"{pv}\" : no matching NodeSelectorTerms"
    );
    assert!(out.contains(&msg), "{out}");
    assert!(out.contains("FailedMount"), "{out}");
    assert!(!out.contains("default-scheduler"), "{out}");
    let p = &lab.cluster().pods[&key("stray")];
    assert_eq!(p.status.phase, "Pending");
    assert_eq!(p.status.reason(), "ContainerCreating");
    // Retried after the pod worker's backoff, failing the same way.
    let out = run(&mut lab, "tick 10");
    assert!(out.contains(&msg), "{out}");
}

#[test]
fn kubelet_refuses_a_read_write_once_pod_volume_in_use_on_its_node() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create solo --size 1Gi --access RWOP");
    run(&mut lab, "pod create s-1 --node node-1 --pvc solo");
    let pv = lab.cluster().pvcs[&key("solo")].spec.volume_name.clone();
    let out = run(&mut lab, "pod create s-2 --node node-1 --pvc solo");
    assert!(
        out.contains(&format!("MountVolume.SetUp failed for volume \"{pv}\" : volume uses the ReadWriteOncePod access mode and is already in use by another pod")),
        "{out}"
    );
    assert!(!out.contains("default-scheduler"), "{out}");
    // On another node it is the attach/detach controller that refuses.
    let out = run(&mut lab, "pod create s-3 --node node-2 --pvc solo");
    assert!(out.contains("Multi-Attach error"), "{out}");
    // Once s-1 is gone, kubelet's retry mounts it for s-2.
    run(&mut lab, "pod delete s-1");
    run(&mut lab, "tick 10");
    assert_eq!(phase(&lab, "s-2"), "Running");
    // The scheduler counts pinned pods too: a scheduled pod does not get the claim.
    let out = run(&mut lab, "pod create s-4 --pvc solo");
    assert!(out.contains("ReadWriteOncePod access mode"), "{out}");
}

#[test]
fn a_lost_node_does_nothing_with_a_pod_pinned_to_it() {
    let mut lab = crate::common::lab();
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 60");
    run(&mut lab, "pod create late --node node-2");
    let p = &lab.cluster().pods[&key("late")];
    assert_eq!(p.status.phase, "Pending");
    assert!(p.status.host_ip.is_none(), "no kubelet wrote a status");
    run(&mut lab, "fault clear 1");
    assert_eq!(phase(&lab, "late"), "Running");
}

#[test]
fn a_pod_rejected_at_admission_keeps_no_attachment() {
    let mut lab = crate::common::lab();
    // `data` lives on node-2 (its PV's node affinity): only the selector is wrong.
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "pod create picky --node node-2 --node-selector disktype=ssd --pvc data",
    );
    assert_eq!(phase(&lab, "picky"), "Failed");
    // The attach/detach controller drops a terminated pod's volumes (DetermineVolumeAction).
    assert!(lab.cluster().volume_attachments.is_empty());
    assert_eq!(
        lab.cluster().pvcs[&key("data")].status.phase,
        "Bound",
        "the claim stays bound"
    );
}

/// A lost node carries the node lifecycle controller's `unreachable` taints once its Ready
/// condition is Unknown (NoSchedule and NoExecute, each with `timeAdded`): `describe node`
/// and `get node -o yaml` show them, the scheduler names the taint as before, and they go
/// when the node is Ready again.
#[test]
fn a_lost_node_carries_the_unreachable_taints_until_it_is_back() {
    let mut lab = common::lab();
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 30");
    let before = run(&mut lab, "describe node node-2");
    assert!(
        before.contains("Taints:             <none>\n"),
        "still in its grace period: {before}"
    );
    run(&mut lab, "tick 30");
    let described = run(&mut lab, "describe node node-2");
    assert!(
        described.contains(
            "Taints:             node.kubernetes.io/unreachable:NoExecute\n                    \
             node.kubernetes.io/unreachable:NoSchedule\nUnschedulable:      false"
        ),
        "{described}"
    );
    let yaml = run(&mut lab, "get node node-2 -o yaml");
    for effect in ["NoSchedule", "NoExecute"] {
        assert!(
            yaml.contains(&format!(
                "  - effect: {effect}\n    key: node.kubernetes.io/unreachable\n    timeAdded: \"2025-01-01T00:00:40Z\"\n"
            )),
            "{yaml}"
        );
    }
    assert!(
        run(&mut lab, "describe node node-1").contains("Taints:             <none>\n"),
        "node-1 is Ready"
    );
    run(
        &mut lab,
        "pod create picky --node-selector kubernetes.io/hostname=node-2",
    );
    let events = run(&mut lab, "show events -n 20");
    assert!(
        events.contains("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }."),
        "{events}"
    );
    run(&mut lab, "fault clear 1");
    let back = run(&mut lab, "describe node node-2");
    assert!(back.contains("Taints:             <none>\n"), "{back}");
    assert!(!run(&mut lab, "get node node-2 -o yaml").contains("taints:"));
    assert_eq!(lab.cluster().pods[&key("picky")].spec.node_name, "node-2");
}

/// The device manager's admit handler runs before the resource fit and the node selector
/// (NewMainKubelet's order), so it allocates first; a pod refused after that (its selector
/// does not match) gives its VF back: the next pod pinned there gets the device it freed.
#[test]
fn a_pod_refused_after_its_allocation_gives_the_device_back() {
    let mut lab = crate::common::lab();
    run(
        &mut lab,
        "node add gpu-1 --cidr 10.244.4.0/24 --ip 192.168.0.4 --sriov-pf ens1f0 --vfs 1",
    );
    let out = run(
        &mut lab,
        "pod create picky --node gpu-1 --node-selector disktype=ssd --resource intel.com/sriov_netdevice=1",
    );
    assert!(out.contains("Predicate NodeAffinity failed"), "{out}");
    assert_eq!(
        lab.cluster().pods[&key("picky")].status.reason(),
        "NodeAffinity"
    );
    run(
        &mut lab,
        "pod create vf --node gpu-1 --resource intel.com/sriov_netdevice=1",
    );
    assert_eq!(phase(&lab, "vf"), "Running");
    // The only VF is taken now: Allocate refuses the next one.
    let out = run(
        &mut lab,
        "pod create more --node gpu-1 --resource intel.com/sriov_netdevice=1",
    );
    assert!(
        out.contains("Allocate failed due to requested number of devices unavailable for intel.com/sriov_netdevice. Requested: 1, Available: 0, which is unexpected"),
        "{out}"
    );
    assert_eq!(
        lab.cluster().pods[&key("more")].status.reason(),
        "UnexpectedAdmissionError"
    );
}

/// The FailedMount message of a pod whose claims kubelet's desired state of world populator
/// could not process is `WaitForAttachAndMount`'s (kubelet v1.31): the unmounted, the
/// unattached and the unprocessed volumes, then the populator's errors, sorted and joined.
#[test]
fn failed_mount_names_unmounted_unattached_and_unprocessed_volumes() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create local --size 1Gi --class local-wffc");
    run(&mut lab, "pod create early --node node-2 --pvc local");
    run(&mut lab, "pod create w --node node-1 --pvc nope --pvc gone");
    // A processed claim whose volume cannot attach to node-1 (it lives on node-2).
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create x --node node-1 --pvc data --pvc nope");
    let events = run(&mut lab, "get events");
    let message = |object: &str| -> String {
        let row = events
            .lines()
            .find(|l| l.contains(" FailedMount ") && l.contains(&format!(" {object} ")))
            .unwrap_or_else(|| panic!("no FailedMount for {object}:\n{events}"));
        let at = row.find(" Unable").expect("the message column");
        row[at + 1..].to_string()
    };
    assert_eq!(
        message("pod/early"),
        "Unable to attach or mount volumes: unmounted volumes=[local], unattached volumes=[], failed to process volumes=[local]: error processing PVC default/local: PVC is not bound"
    );
    assert_eq!(
        message("pod/w"),
        "Unable to attach or mount volumes: unmounted volumes=[gone nope], unattached volumes=[], failed to process volumes=[gone nope]: error processing PVC default/gone: failed to fetch PVC from API server: persistentvolumeclaims \"gone\" not found; error processing PVC default/nope: failed to fetch PVC from API server: persistentvolumeclaims \"nope\" not found"
    );
    assert_eq!(
        message("pod/x"),
        "Unable to attach or mount volumes: unmounted volumes=[data nope], unattached volumes=[data], failed to process volumes=[nope]: error processing PVC default/nope: failed to fetch PVC from API server: persistentvolumeclaims \"nope\" not found"
    );
}
