//! Volumes of the node-local driver carry topology whatever the binding mode:
//! external-provisioner (`--feature-gates=Topology=true`, `--immediate-topology=true`,
//! `--strict-topology=false`, as csi-driver-host-path deploys it) sends every node's
//! topology, the driver keeps the volume on the first preferred node, the PV gets that
//! node affinity, and a pod that names another node never starts.

use crate::common;

use common::{key, run};
use lab_engine::engine::Lab;

/// The node a claim's PV is pinned to (its node affinity's node key), or "" without one.
fn pv_node(lab: &Lab, claim: &str) -> String {
    let pv = &lab.cluster().pvcs[&key(claim)].spec.volume_name;
    let pv = &lab.cluster().pvs[&(String::new(), pv.clone())];
    let Some(a) = &pv.spec.node_affinity else {
        return String::new();
    };
    let nodes: Vec<String> = a
        .required
        .node_selector_terms
        .iter()
        .flat_map(|t| t.match_expressions.iter())
        .filter(|r| r.key == "topology.hostpath.csi.lab/node")
        .flat_map(|r| r.values.clone())
        .collect();
    nodes.join(",")
}

/// The `topology.hostpath.csi.lab/node` values of a JSON topology list, in order.
fn nodes_of(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["segments"]["topology.hostpath.csi.lab/node"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn last_create_volume(lab: &mut Lab) -> serde_json::Value {
    let out = run(lab, "show wire --last CreateVolume");
    let start = out.find("request:\n").unwrap() + "request:\n".len();
    let end = out.find("\nresponse:").unwrap();
    serde_json::from_str(&out[start..end]).unwrap()
}

#[test]
fn an_immediate_claim_asks_for_every_node_and_lives_on_one() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let req = last_create_volume(&mut lab);
    let r = &req["accessibility_requirements"];
    // requisite sorted; preferred turned by FNV-1 32 of "data" (odd: index 1 of 2).
    assert_eq!(nodes_of(&r["requisite"]), ["node-1", "node-2"]);
    assert_eq!(nodes_of(&r["preferred"]), ["node-2", "node-1"]);
    assert_eq!(
        r["requisite"][0]["segments"]["topology.kubernetes.io/zone"],
        "zone-1"
    );
    assert_eq!(pv_node(&lab, "data"), "node-2");
    // The same name, the same node: a claim deleted and created again lands there again.
    run(&mut lab, "pvc delete data");
    run(&mut lab, "pvc create data --size 1Gi");
    assert_eq!(pv_node(&lab, "data"), "node-2");
    // Another name may land elsewhere.
    run(&mut lab, "pvc create db-data --size 1Gi");
    assert_eq!(pv_node(&lab, "db-data"), "node-1");
}

#[test]
fn statefulset_claims_spread_over_the_nodes() {
    let mut lab = crate::common::lab();
    for i in 0..4 {
        run(&mut lab, &format!("pvc create data-web-{i} --size 1Gi"));
    }
    let nodes: Vec<String> = (0..4)
        .map(|i| pv_node(&lab, &format!("data-web-{i}")))
        .collect();
    // The ordinal is added to the hash of "web": replicas alternate.
    assert_ne!(nodes[0], nodes[1]);
    assert_eq!(nodes[0], nodes[2]);
    assert_eq!(nodes[1], nodes[3]);
}

#[test]
fn the_scheduler_follows_the_volume_and_a_pinned_pod_elsewhere_never_starts() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let out = run(&mut lab, "pod create app --pvc data");
    assert!(
        out.contains("Successfully assigned default/app to node-2"),
        "{out}"
    );
    assert_eq!(lab.cluster().pods[&key("app")].status.phase, "Running");
    run(&mut lab, "pod delete app");
    // Pinned to node-1: the attach fails with the driver's NOT_FOUND.
    let out = run(&mut lab, "pod create stray --node node-1 --pvc data");
    assert!(
        out.contains("AttachVolume.Attach failed for volume")
            && out.contains("Not matching Node ID node-1 to hostpath Node ID node-2"),
        "{out}"
    );
    assert_eq!(lab.cluster().pods[&key("stray")].status.phase, "Pending");
}

/// external-attacher's syncDetach looks only at its finalizer: the attachment whose
/// ControllerPublishVolume failed is still unpublished (csiDetach calls Detach whatever
/// `status.attached` says) before the finalizer goes; the driver answers OK, as the spec
/// requires for a volume not attached to that node.
#[test]
fn a_failed_attach_is_still_unpublished_before_its_attachment_goes() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(&mut lab, "pod create db --node node-1 --pvc data");
    // The deletion is handled at once (the attach's backoff is not waited out).
    let out = run(&mut lab, "pod delete db");
    let unpublish = out
        .find("ControllerUnpublishVolume #2 vol-95328f0b: OK")
        .unwrap_or_else(|| panic!("{out}"));
    let removed = out
        .find("detached from node-1; volumeattachment removed")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(unpublish < removed, "{out}");
    let wire = run(&mut lab, "show wire --list");
    assert!(
        wire.lines()
            .any(|l| l.contains("ControllerUnpublishVolume") && l.contains("OK")),
        "{wire}"
    );
    assert!(lab.cluster().volume_attachments.is_empty());
}

#[test]
fn without_attach_kubelet_reports_the_node_affinity_check() {
    let mut lab = crate::common::lab();
    let mut driver =
        lab.cluster().csi_drivers[&(String::new(), "hostpath.csi.lab".to_string())].clone();
    driver.spec.attach_required = false;
    lab.cluster_mut().csi_drivers().update(driver).unwrap();
    run(&mut lab, "pvc create data --size 1Gi");
    let pv = lab.cluster().pvcs[&key("data")].spec.volume_name.clone();
    let out = run(&mut lab, "pod create stray --node node-1 --pvc data");
    assert!(
        out.contains(&format!(
            "MountVolume.NodeAffinity check failed for volume \"{pv}\" : no matching NodeSelectorTerms"
        )),
        "{out}"
    );
}

#[test]
fn a_delayed_claim_lists_every_node_with_the_chosen_one_first() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create local --size 1Gi --class local-wffc");
    run(
        &mut lab,
        "pod create db --node-selector kubernetes.io/hostname=node-1 --pvc local",
    );
    let req = last_create_volume(&mut lab);
    let r = &req["accessibility_requirements"];
    assert_eq!(nodes_of(&r["requisite"]), ["node-1", "node-2"]);
    assert_eq!(nodes_of(&r["preferred"]), ["node-1", "node-2"]);
    assert_eq!(pv_node(&lab, "local"), "node-1");
}

#[test]
fn a_node_without_every_topology_key_is_left_out() {
    let mut lab = crate::common::lab();
    // node-3 has no zone: it lacks one of the driver's keys (the first CSINode's).
    run(&mut lab, "node add node-3");
    run(&mut lab, "pvc create data --size 1Gi");
    let req = last_create_volume(&mut lab);
    assert_eq!(
        nodes_of(&req["accessibility_requirements"]["requisite"]),
        ["node-1", "node-2"]
    );
}

#[test]
fn no_registered_node_means_no_topology_and_a_retry() {
    let mut lab = crate::common::empty_lab();
    lab.install_storage_defaults();
    let out = run(&mut lab, "pvc create data --size 1Gi");
    assert!(
        out.contains("failed to provision volume with StorageClass \"standard\": error generating accessibility requirements: no available topology found"),
        "{out}"
    );
    assert_eq!(lab.cluster().pvcs[&key("data")].status.phase, "Pending");
    run(&mut lab, "node add node-1 --zone zone-1");
    run(&mut lab, "tick 1");
    assert_eq!(lab.cluster().pvcs[&key("data")].status.phase, "Bound");
    assert_eq!(pv_node(&lab, "data"), "node-1");
}

#[test]
fn a_clone_lives_with_its_source() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    // "copy" alone would go to node-1; its data is on node-2.
    run(&mut lab, "pvc create copy --size 1Gi --from-pvc data");
    assert_eq!(pv_node(&lab, "copy"), "node-2");
}

/// csi-driver-host-path provisions every access mode (issue 37 §3): an RWX claim with a
/// filesystem is Bound on one node, a pod pinned to another fails its attach with the
/// driver's NOT_FOUND (the wire record, the attach/detach controller's event on the pod),
/// and a pod left to the scheduler follows the PV to the volume's node. On the old main the
/// claim stayed Pending (CreateVolume's INVALID_ARGUMENT) and an RWX block volume was
/// published to both nodes.
#[test]
fn an_rwx_volume_lives_on_one_node_and_another_node_is_not_found() {
    use lab_engine::record::WireRecord;
    for mode in ["", " --mode Block"] {
        let mut lab = crate::common::lab();
        run(
            &mut lab,
            &format!("pvc create shared --size 1Gi --access RWX{mode}"),
        );
        assert_eq!(lab.cluster().pvcs[&key("shared")].status.phase, "Bound");
        assert_eq!(pv_node(&lab, "shared"), "node-1");
        run(&mut lab, "pod create r1 --node node-1 --pvc shared");
        run(&mut lab, "pod create r2 --node node-2 --pvc shared");
        assert_eq!(lab.cluster().pods[&key("r1")].status.phase, "Running");
        assert_eq!(lab.cluster().pods[&key("r2")].status.phase, "Pending");
        let publish = lab
            .wire()
            .iter()
            .filter_map(|(_, r)| match r {
                WireRecord::Csi(c) if c.rpc == "ControllerPublishVolume" => Some(c.clone()),
                _ => None,
            })
            .next_back()
            .expect("a ControllerPublishVolume record");
        let status = publish.reply.as_ref().expect_err("refused");
        assert_eq!(
            (status.code.name(), status.message.as_str()),
            (
                "NOT_FOUND",
                "Not matching Node ID node-2 to hostpath Node ID node-1"
            )
        );
        let described = run(&mut lab, "describe pod r2");
        let pv = lab.cluster().pvcs[&key("shared")].spec.volume_name.clone();
        let line = described
            .lines()
            .find(|l| l.contains("FailedAttachVolume"))
            .unwrap_or_else(|| panic!("{described}"));
        assert!(
            line.ends_with(&format!(
                "AttachVolume.Attach failed for volume \"{pv}\" : rpc error: code = NotFound desc = Not matching Node ID node-2 to hostpath Node ID node-1"
            )),
            "{line}"
        );
        run(&mut lab, "pod create r3 --pvc shared");
        assert_eq!(lab.cluster().pods[&key("r3")].spec.node_name, "node-1");
        assert_eq!(lab.cluster().pods[&key("r3")].status.phase, "Running");
    }
}

#[test]
fn describe_pv_prints_the_node_affinity_as_kubectl_does() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let pv = lab.cluster().pvcs[&key("data")].spec.volume_name.clone();
    let d = run(&mut lab, &format!("describe pv {pv}"));
    let want = "\
Capacity:          1Gi
Node Affinity:     
  Required Terms:  
    Term 0:        topology.hostpath.csi.lab/node in [node-2]
                   topology.kubernetes.io/zone in [zone-2]
Message:           
Source:";
    assert!(d.contains(want), "{d}");
    assert!(d.starts_with(&format!("Name:              {pv}\n")), "{d}");
    let y = run(&mut lab, &format!("get pv {pv} -o yaml"));
    assert!(
        y.contains("  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"),
        "{y}"
    );
}

/// Where a claim's volume went is said where it is decided (issue 37 §5): CreateVolume's
/// line names the node of its accessible_topology, and a pod pinned with --node to another
/// node is told where the volume is and why it cannot reach it, beside the attach's
/// NOT_FOUND. On the old main neither line said node-2.
#[test]
fn the_volume_node_is_said_where_it_is_decided() {
    let mut lab = crate::common::lab();
    let out = run(&mut lab, "pvc create x --size 1Gi");
    let created = out
        .lines()
        .find(|l| l.contains("CreateVolume"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        created.ends_with(": volume vol-e7e2ec4b 1Gi on node-2"),
        "{created}"
    );
    assert_eq!(pv_node(&lab, "x"), "node-2");
    let out = run(&mut lab, "pod create y --node node-1 --pvc x");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "pod/y created");
    assert_eq!(
        lines[1],
        "  note: claim x's volume is on node-2 (its PV's node affinity), not node-1: --node skips the scheduler, which would have placed the pod there, so the volume cannot reach it (leave out --node, or use a claim on node-1)"
    );
    // A pod pinned where the volume is gets no note.
    let out = run(&mut lab, "pod create w --node node-2 --pvc x");
    assert!(!out.contains("note:"), "{out}");
}

/// An attachment's deletion is an update external-attacher's informer queues at once
/// (`shouldEnqueueVAChange`): the detach does not wait out the failed attach's backoff.
/// Before, ControllerUnpublishVolume waited for the attach's retry time (t=63s here).
#[test]
fn a_deleted_attachment_is_detached_without_waiting_out_the_attach_backoff() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "fault inject ControllerPublishVolume --code INTERNAL --times 100",
    );
    run(&mut lab, "pod create db --node node-1 --pvc data");
    let out = run(&mut lab, "tick 40");
    assert!(
        out.contains("failure 6 in a row, retry at t=63s"),
        "the attach waits in the rate limiter: {out}"
    );
    let out = run(&mut lab, "pod delete db");
    assert!(
        out.contains("ControllerUnpublishVolume #7 vol-95328f0b: OK")
            && out.contains("detached from node-1; volumeattachment removed"),
        "{out}"
    );
    assert!(lab.cluster().volume_attachments.is_empty());
}

/// The attach/detach controller's FailedAttachVolume events for a ReadWriteOnce volume
/// wanted on a second node (`reportMultiAttachError`): each waiting pod's message lists
/// every pod in its namespace that uses the volume on the node it is attached to, and
/// once none does, says only that it is attached elsewhere.
#[test]
fn a_multi_attach_error_lists_every_pod_using_the_volume_on_its_node() {
    let multi_attach = |lab: &Lab, pod: &str| -> Vec<String> {
        lab.calls()
            .iter()
            .filter_map(|(_, c)| c.event())
            .filter(|e| e.reason == "FailedAttachVolume" && e.object.name == pod)
            .map(|e| {
                let mut m = String::new();
                e.message.write(&e.object, &mut m);
                m
            })
            .collect()
    };
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let home = pv_node(&lab, "data");
    let away = if home == "node-1" { "node-2" } else { "node-1" };
    let pv = lab.cluster().pvcs[&key("data")].spec.volume_name.clone();
    run(&mut lab, &format!("pod create a --pvc data --node {home}"));
    run(&mut lab, &format!("pod create c --pvc data --node {home}"));
    run(&mut lab, &format!("pod create b --pvc data --node {away}"));
    assert_eq!(
        multi_attach(&lab, "b"),
        [format!(
            "Multi-Attach error for volume \"{pv}\" Volume is already used by pod(s) a, c"
        )]
    );
    // Reported once per volume and node: a pod that comes to the same node later gets
    // none (`MultiAttachErrorReported`).
    run(&mut lab, &format!("pod create d --pvc data --node {away}"));
    assert!(multi_attach(&lab, "d").is_empty());
    // The users go but the attachment stays a while: a pod wanting it elsewhere is told
    // it is attached, with no pod to name.
    run(&mut lab, "mode step");
    for p in ["a", "c", "b", "d"] {
        run(&mut lab, &format!("pod delete {p}"));
    }
    run(&mut lab, &format!("reconcile kubelet --node {home}"));
    run(&mut lab, &format!("reconcile kubelet --node {away}"));
    run(&mut lab, &format!("pod create e --pvc data --node {away}"));
    run(&mut lab, "reconcile attachdetach");
    assert_eq!(
        multi_attach(&lab, "e"),
        [format!(
            "Multi-Attach error for volume \"{pv}\" Volume is already exclusively attached to one node and can't be attached to another"
        )]
    );
}
