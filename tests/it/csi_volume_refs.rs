//! `csi …` commands take `pvc/NAME` for the volume behind a bound claim: the ID in its PV's
//! `spec.csi.volumeHandle`, where external-attacher and kubelet read it, so a lesson or a
//! script never depends on a generated volume ID.

use lab_engine::engine::Lab;

fn run(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

#[test]
fn pvc_name_stands_for_the_claims_volume_id() {
    let mut lab = crate::common::lab();
    // The volume lives on node-2 (its PV's node affinity), where the driver serves it.
    run(&mut lab, "pvc create data --size 1Gi");
    let id = lab
        .cluster()
        .pvs
        .values()
        .next()
        .expect("a PV")
        .spec
        .csi
        .volume_handle
        .clone();
    let by_ref = run(&mut lab, "csi controller-publish pvc/data --node node-2");
    let by_id = run(
        &mut lab,
        &format!("csi controller-publish {id} --node node-2"),
    );
    assert_eq!(
        by_ref.replace("#1", "#N"),
        by_id.replace("#2", "#N"),
        "the same request, the same answer"
    );
    let wire = run(&mut lab, "show wire --last ControllerPublishVolume");
    assert!(wire.contains(&format!("\"volume_id\": \"{id}\"")), "{wire}");
    // kubelet's globalmount follows the handle, so node-stage then node-publish line up.
    run(&mut lab, "csi node-stage pvc/data --node node-2");
    run(
        &mut lab,
        "csi node-publish pvc/data --node node-2 --target /mnt/x",
    );
    run(
        &mut lab,
        "csi node-unpublish pvc/data --node node-2 --target /mnt/x",
    );
}

#[test]
fn a_missing_or_unbound_claim_is_refused_and_changes_nothing() {
    let mut lab = crate::common::lab();
    let before = lab.wire().len();
    let e = lab.execute("csi delete-volume pvc/nope").unwrap_err();
    assert!(
        e.message
            .contains("persistentvolumeclaims \"nope\" not found"),
        "{}",
        e.message
    );
    run(&mut lab, "pvc create waiting --size 1Gi --class nosuch");
    let e = lab.execute("csi delete-volume pvc/waiting").unwrap_err();
    assert!(
        e.message
            .contains("claim default/waiting is not bound to a PersistentVolume yet"),
        "{}",
        e.message
    );
    assert_eq!(lab.wire().len(), before, "nothing went over the wire");
}

/// CreateSnapshot's source and CreateVolume's clone source take `pvc/NAME` as the other
/// `csi` commands do: the driver gets the claim's volume ID, not the words.
#[test]
fn snapshot_and_clone_sources_take_a_claim() {
    let mut lab = crate::common::lab();
    run(&mut lab, "pvc create data --size 1Gi");
    let id = lab
        .cluster()
        .pvs
        .values()
        .next()
        .expect("a PV")
        .spec
        .csi
        .volume_handle
        .clone();
    let json = |text: &str| -> serde_json::Value {
        let start = text.find('{').expect("a JSON reply");
        let end = text.rfind('}').expect("a JSON reply");
        serde_json::from_str(&text[start..=end]).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let snap = json(&run(&mut lab, "csi create-snapshot s1 --volume pvc/data"));
    assert_eq!(snap["snapshot"]["source_volume_id"], id.as_str(), "{snap}");
    let clone = json(&run(
        &mut lab,
        "csi create-volume c1 --size 1Gi --from-volume pvc/data",
    ));
    assert_eq!(
        clone["volume"]["content_source"]["volume"]["volume_id"],
        id.as_str(),
        "{clone}"
    );
    // A claim that does not exist is the API server's NotFound, before any call.
    let before = lab.wire().len();
    let e = lab
        .execute("csi create-snapshot s2 --volume pvc/nope")
        .unwrap_err();
    assert_eq!(
        e.message,
        "Error from server (NotFound): persistentvolumeclaims \"nope\" not found (give a volume ID, or pvc/NAME of a bound claim)"
    );
    assert_eq!(lab.wire().len(), before, "nothing went over the wire");
}
