//! The API server and the controllers as Kubernetes v1.31 and the CSI sidecars behave, where
//! a learner comparing the lab with a real cluster would notice: deleting a bound PV,
//! which kinds carry `metadata.generation`, the sources events are recorded with, the node
//! lifecycle controller's events, and the small refusals kubectl makes.

use crate::common::{key, run};
use lab_engine::Lab;

/// The PV a claim of the default namespace is bound to.
fn volume_of(lab: &Lab, claim: &str) -> String {
    let name = lab.cluster().pvcs[&key(claim)].spec.volume_name.clone();
    assert!(!name.is_empty(), "claim {claim} is not bound");
    name
}

/// A PV's finalizers, or None once it is gone.
fn pv_finalizers(lab: &Lab, pv: &str) -> Option<Vec<String>> {
    lab.cluster()
        .pvs
        .get(&(String::new(), pv.to_string()))
        .map(|pv| pv.metadata.finalizers().to_vec())
}

/// The STATUS cell of a PV in `get pv`.
fn pv_status(lab: &mut Lab, pv: &str) -> String {
    let table = run(lab, "get pv");
    let header = table.lines().next().unwrap_or_default();
    let at = header.find("STATUS").expect("a STATUS column");
    let row = table
        .lines()
        .find(|l| l.starts_with(pv))
        .unwrap_or_else(|| panic!("no row for {pv}: {table}"));
    row[at..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn deleting_a_bound_pv_leaves_it_terminating_until_its_claim_is_gone() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let pv = volume_of(&lab, "data");
    let out = run(&mut lab, &format!("delete pv {pv}"));
    assert!(
        out.starts_with(&format!("persistentvolume \"{pv}\" deleted")),
        "{out}"
    );
    // The API server only set deletionTimestamp: pv-protection holds it while Bound.
    let held = &lab.cluster().pvs[&(String::new(), pv.clone())];
    assert!(held.metadata.deletion_tick().is_some());
    assert_eq!(held.status.phase, "Bound");
    assert!(
        held.metadata
            .finalizers()
            .iter()
            .any(|f| f == "kubernetes.io/pv-protection"),
        "{:?}",
        held.metadata.finalizers()
    );
    assert_eq!(pv_status(&mut lab, &pv), "Terminating");
    let described = run(&mut lab, &format!("describe pv {pv}"));
    assert!(
        described
            .lines()
            .any(|l| l.starts_with("Status:") && l.ends_with(" Terminating (lasts 0s)")),
        "{described}"
    );
    // The claim still works: a pod mounts it.
    run(&mut lab, "pod create web --pvc data");
    assert_eq!(crate::common::phase(&lab, "web"), "Running");
    // Once the claim is gone the PV is Released, pv-protection lets go, the provisioner
    // deletes the volume (reclaim policy Delete) and the PV goes.
    run(&mut lab, "pod delete web");
    run(&mut lab, "pvc delete data");
    assert_eq!(pv_finalizers(&lab, &pv), None);
}

#[test]
fn a_retained_pv_deleted_while_bound_goes_when_its_claim_does() {
    let mut lab = crate::common::lab();
    run(&mut lab, "sc create keep --reclaim Retain");
    run(&mut lab, "pvc create data --size 1Gi --class keep");
    let pv = volume_of(&lab, "data");
    run(&mut lab, &format!("delete pv {pv}"));
    assert_eq!(pv_status(&mut lab, &pv), "Terminating");
    assert_eq!(
        pv_finalizers(&lab, &pv),
        Some(vec!["kubernetes.io/pv-protection".to_string()])
    );
    run(&mut lab, "pvc delete data");
    assert_eq!(pv_finalizers(&lab, &pv), None);
}

#[test]
fn a_provisioned_pv_has_the_provisioners_finalizer_then_pv_protection() {
    // external-provisioner builds the PV with its finalizer; the StorageObjectInUseProtection
    // admission plugin appends kubernetes.io/pv-protection when the PV is created.
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let pv = volume_of(&lab, "data");
    assert_eq!(
        pv_finalizers(&lab, &pv).unwrap(),
        [
            "external-provisioner.volume.kubernetes.io/finalizer",
            "kubernetes.io/pv-protection"
        ]
    );
    let yaml = run(&mut lab, &format!("get pv {pv} -o yaml"));
    assert!(
        yaml.contains(
            "  finalizers:\n  - external-provisioner.volume.kubernetes.io/finalizer\n  - kubernetes.io/pv-protection\n"
        ),
        "{yaml}"
    );
}

#[test]
fn an_applied_pv_gets_pv_protection_from_admission() {
    let mut lab = crate::common::lab();
    let dir = std::env::temp_dir().join(format!("lab-api-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pv.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: manual\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  csi:\n    driver: hostpath.csi.lab\n    volumeHandle: vol-manual\n",
    )
    .unwrap();
    run(&mut lab, &format!("apply -f {}", file.display()));
    assert_eq!(
        pv_finalizers(&lab, "manual").unwrap(),
        ["kubernetes.io/pv-protection"]
    );
    // Not bound: deleting it lets pv-protection drop its finalizer at once.
    let out = run(&mut lab, "delete pv manual");
    assert!(
        out.starts_with("persistentvolume \"manual\" deleted"),
        "{out}"
    );
    assert_eq!(pv_finalizers(&lab, "manual"), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `-o yaml` of one object shows `metadata.generation`, and its value.
fn generation(lab: &mut Lab, what: &str) -> Option<String> {
    let yaml = run(lab, &format!("get {what} -o yaml"));
    yaml.lines()
        .find_map(|l| l.strip_prefix("  generation: "))
        .map(str::to_string)
}

#[test]
fn only_the_kinds_whose_strategy_keeps_it_show_a_generation() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    run(
        &mut lab,
        "pod create web --node node-1 --pvc data --label app=web",
    );
    run(
        &mut lab,
        "policy create allow-web --select app=web --ingress-from app=web",
    );
    run(&mut lab, "snapshot create snap-1 --pvc data");
    let pv = volume_of(&lab, "data");
    let va = run(&mut lab, "get va -o name");
    let va = va.lines().next().expect("a VolumeAttachment");
    let va = format!("va {}", va.split_once('/').expect("KIND/NAME").1);
    // Kubernetes 1.31's Pod, PVC, PV, VolumeAttachment, Node and StorageClass strategies
    // set no generation.
    for what in [
        "pod web".to_string(),
        "pvc data".to_string(),
        format!("pv {pv}"),
        va,
        "node node-1".to_string(),
        "sc standard".to_string(),
    ] {
        assert_eq!(generation(&mut lab, &what), None, "{what}");
    }
    // NetworkPolicy's strategy and the custom resources' do.
    assert_eq!(
        generation(&mut lab, "networkpolicy allow-web").as_deref(),
        Some("1")
    );
    assert_eq!(
        generation(&mut lab, "volumesnapshot snap-1").as_deref(),
        Some("1")
    );
    // A status write or a label leaves it; the pod's writes never make one.
    run(&mut lab, "label pod web tier=front");
    assert_eq!(generation(&mut lab, "pod web"), None);
}

/// The Events rows of `describe KIND NAME` that have this reason.
fn described_events(lab: &mut Lab, what: &str, reason: &str) -> Vec<String> {
    let d = run(lab, &format!("describe {what}"));
    d.lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .filter(|l| l.split_whitespace().nth(1) == Some(reason))
        .map(str::to_string)
        .collect()
}

#[test]
fn sidecar_events_carry_the_sources_their_recorders_have() {
    let mut lab = crate::common::lab();
    let out = run(&mut lab, "pvc create data --size 1Gi");
    // The call log names the sidecar that acted.
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("external-provisioner ")
                && l.contains("ProvisioningSucceeded")),
        "{out}"
    );
    // The Event's source is the provisioner library's recorder: DRIVER_HOST_UUID.
    let rows = described_events(&mut lab, "pvc data", "ProvisioningSucceeded");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let from = rows[0].split_whitespace().nth(3).unwrap_or_default();
    assert!(
        from.starts_with("hostpath.csi.lab_csi-hostpathplugin-0_"),
        "{}",
        rows[0]
    );
    // external-resizer's recorder: `external-resizer DRIVER`.
    run(&mut lab, "pvc expand data 2Gi");
    let rows = described_events(&mut lab, "pvc data", "Resizing");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].contains("  external-resizer hostpath.csi.lab  "),
        "{}",
        rows[0]
    );
    // The events' selectable `source` field reads the same.
    let events = run(
        &mut lab,
        &format!("get events --field-selector source={from}"),
    );
    assert!(events.contains("ProvisioningSucceeded"), "{events}");
    let sidecar = lab.execute("get events --field-selector source=external-provisioner");
    let sidecar = match sidecar {
        Ok(o) => o.to_text(),
        Err(e) => e.message,
    };
    assert!(!sidecar.contains("ProvisioningSucceeded"), "{sidecar}");
}

#[test]
fn a_policy_selector_kubectl_cannot_parse_is_refused_and_creates_nothing() {
    let mut lab = crate::common::lab();
    let e = lab
        .execute(r#"policy create p --select "a=b,,""#)
        .expect_err("a=b,, is not a selector");
    assert_eq!(e.message, "found ',', expected: identifier after ','");
    assert!(lab.cluster().policies.is_empty());
}

#[test]
fn describing_an_empty_name_is_client_go_s_error() {
    let mut lab = crate::common::lab();
    let e = lab
        .execute(r#"describe pod """#)
        .expect_err("an empty name");
    assert_eq!(e.message, "resource name may not be empty");
}

/// The node lifecycle controller records through its own recorder (source
/// `node-controller`): a Normal `NodeNotReady` "Node NODE status is now: NodeNotReady" on
/// the Node (`RecordNodeStatusChange`), then a Warning `NodeNotReady` on each pod it marks
/// not ready; kubelet records `NodeReady` on the Node once it posts again. Before, the pods'
/// events came from `node-lifecycle-controller` and the Node had none.
#[test]
fn a_lost_node_s_events_come_from_node_controller() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pod create a --node node-2");
    run(&mut lab, "fault inject node-down --node node-2");
    run(&mut lab, "tick 40");
    let pod = run(&mut lab, "describe pod a");
    let row = |text: &str, reason: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("Events:"))
            .find(|l| l.split_whitespace().nth(1) == Some(reason))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    };
    assert_eq!(
        row(&pod, "NodeNotReady"),
        [
            "Warning",
            "NodeNotReady",
            "0s",
            "node-controller",
            "Node",
            "is",
            "not",
            "ready"
        ],
        "{pod}"
    );
    let node = run(&mut lab, "describe node node-2");
    assert_eq!(
        row(&node, "NodeNotReady")[..4],
        ["Normal", "NodeNotReady", "0s", "node-controller"],
        "{node}"
    );
    assert!(
        node.contains("node-controller  Node node-2 status is now: NodeNotReady"),
        "{node}"
    );
    run(&mut lab, "fault clear");
    run(&mut lab, "tick 5");
    let node = run(&mut lab, "describe node node-2");
    assert!(
        node.contains("kubelet") && node.contains("Node node-2 status is now: NodeReady"),
        "{node}"
    );
}
