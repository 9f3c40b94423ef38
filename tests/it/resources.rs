//! Every API kind the lab serves is known to every verb that takes kinds (issue 34): help
//! lists it, Tab offers it and its objects' names, `get` and `get -o json` show an object of
//! it, `describe` describes it (or says the lab does not), `delete` deletes it or says why
//! not, `apply -f` reads a manifest of it exactly when `help apply` lists it, `label`
//! labels it or says it does not, and `save` keeps it. The kinds come from
//! `ApiKind::ALL` and the words from the registry, so a new kind is checked here without
//! an edit (and fails to compile in [`manifest`] until it says how one is written).

use lab_engine::Lab;
use lab_engine::cluster::ApiKind;
use lab_engine::command::complete::complete;
use lab_engine::resource::{lookup, plural};
use std::collections::BTreeSet;

fn ok(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(o) => o.to_text(),
        Err(e) => panic!("`{line}` failed: {}\n{}", e.message, e.output.to_text()),
    }
}

/// A lab with an object of every kind: node-1 and its CSINode, the default namespace and
/// StorageClass and the CSIDriver come with it; the rest are made here.
fn fixture() -> Lab {
    let mut lab = Lab::new();
    for line in [
        "ns create team-a",
        "pod create web --node node-1",
        "policy create deny-all --select '' --types Ingress",
        r#"nad create blue --config '{"cniVersion":"1.0.0","type":"bridge","bridge":"br-blue","ipam":{"type":"host-local","subnet":"10.10.0.0/24"}}'"#,
        "pvc create data --size 1Gi",
        "pod create app --node node-1 --pvc data",
        "snapshot create snap-1 --pvc data",
    ] {
        ok(&mut lab, line);
    }
    lab
}

/// The name of one object of `kind` in the default namespace (or cluster-scoped): the last
/// listed (`team-a` of the namespaces, which, unlike `default`, may be deleted).
fn one(lab: &mut Lab, kind: ApiKind) -> String {
    let names = ok(lab, &format!("get {} -o name", plural(kind)));
    let last = names.lines().last().unwrap_or_default();
    let name = last.split_once('/').map(|(_, n)| n).unwrap_or_default();
    assert!(!name.is_empty(), "no {kind} in the fixture: {names:?}");
    name.to_string()
}

/// The kinds a `Kinds:` line of `help COMMAND` lists, resolved as typed (`nodes (no)` →
/// Node; `Pod` → Pod).
fn help_kinds(lab: &mut Lab, command: &str) -> BTreeSet<ApiKind> {
    let help = ok(lab, &format!("help {command}"));
    let mut text = String::new();
    let mut lines = help.lines().skip_while(|l| !l.starts_with("Kinds:"));
    if let Some(first) = lines.next() {
        text.push_str(first.trim_start_matches("Kinds:"));
        for l in lines.take_while(|l| l.starts_with("       ")) {
            text.push_str(l);
        }
    }
    text.split(',')
        .map(|item| item.split(" (").next().unwrap_or_default().trim())
        .filter(|w| !w.is_empty())
        .map(|w| {
            lookup(w)
                .or_else(|| ApiKind::from_name(w))
                .unwrap_or_else(|| panic!("help {command} lists {w:?}, which names no kind"))
        })
        .collect()
}

/// A manifest of `kind` that `apply -f` creates, or `None` for a kind the lab does not
/// read from manifests (`apply` must then refuse it).
fn manifest(kind: ApiKind) -> Option<&'static str> {
    match kind {
        ApiKind::Namespace => Some("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: applied\n"),
        ApiKind::Pod => Some(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: applied\nspec:\n  nodeName: node-1\n  containers:\n  - name: app\n    image: busybox\n",
        ),
        ApiKind::NetworkPolicy => Some(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: applied\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n",
        ),
        ApiKind::NetworkAttachmentDefinition => Some(
            "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n  name: applied\nspec:\n  config: '{\"cniVersion\":\"1.0.0\",\"type\":\"macvlan\"}'\n",
        ),
        ApiKind::StorageClass => Some(
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: applied\nprovisioner: hostpath.csi.lab\n",
        ),
        ApiKind::PersistentVolumeClaim => Some(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: applied\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n",
        ),
        ApiKind::PersistentVolume => Some(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: applied\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  csi:\n    driver: hostpath.csi.lab\n    volumeHandle: vol-applied\n",
        ),
        ApiKind::VolumeSnapshot => Some(
            "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata:\n  name: applied\nspec:\n  source:\n    persistentVolumeClaimName: data\n",
        ),
        ApiKind::Node
        | ApiKind::VolumeAttachment
        | ApiKind::CsiDriver
        | ApiKind::CsiNode
        | ApiKind::VolumeSnapshotContent => None,
    }
}

#[test]
fn help_lists_every_kind_once_per_verb_that_takes_it() {
    let mut lab = fixture();
    let all: BTreeSet<ApiKind> = ApiKind::ALL.into_iter().collect();
    assert_eq!(help_kinds(&mut lab, "get"), all, "help get");
    // `help delete`'s list is checked against what delete does, below.
    let applies = help_kinds(&mut lab, "apply");
    for kind in ApiKind::ALL {
        assert_eq!(
            applies.contains(&kind),
            manifest(kind).is_some(),
            "help apply and apply -f disagree on {kind}"
        );
    }
    // The refusal of an unknown kind lists every kind too.
    let e = lab.execute("get widgets").unwrap_err().message;
    for kind in ApiKind::ALL {
        let listed = e
            .split("kinds are: ")
            .nth(1)
            .unwrap_or_default()
            .split(", ")
            .filter_map(|w| lookup(w.split(" (").next().unwrap_or_default()))
            .any(|k| k == kind);
        assert!(listed, "the unknown-kind error lacks {kind}: {e}");
    }
}

#[test]
fn tab_offers_every_kind_and_each_kind_s_names() {
    let mut lab = fixture();
    let offered: BTreeSet<ApiKind> = complete("get ", 4, &lab)
        .candidates
        .iter()
        .map(|w| lookup(w).unwrap_or_else(|| panic!("get <Tab> offers {w:?}, no kind")))
        .collect();
    let all: BTreeSet<ApiKind> = ApiKind::ALL.into_iter().collect();
    assert_eq!(offered, all);
    for kind in ApiKind::ALL {
        let name = one(&mut lab, kind);
        for verb in ["get", "describe", "delete"] {
            let line = format!("{verb} {} ", plural(kind));
            let c = complete(&line, line.len(), &lab).candidates;
            assert!(c.contains(&name), "`{line}<Tab>` lacks {name}: {c:?}");
        }
    }
}

#[test]
fn get_describe_and_label_know_every_kind() {
    let mut lab = fixture();
    for kind in ApiKind::ALL {
        let word = plural(kind);
        let name = one(&mut lab, kind);
        let table = ok(&mut lab, &format!("get {word}"));
        assert!(table.starts_with("NAME"), "get {word}:\n{table}");
        assert!(table.contains(&name), "get {word}:\n{table}");
        let json = ok(&mut lab, &format!("get {word} {name} -o json"));
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(v["kind"], kind.name(), "get {word} {name} -o json");
        assert_eq!(v["metadata"]["name"], name.as_str());
        let yaml = ok(&mut lab, &format!("get {word}/{name} -o yaml"));
        assert!(yaml.contains(&format!("kind: {}", kind.name())), "{yaml}");
        match lab.execute(&format!("describe {word} {name}")) {
            Ok(o) => {
                let text = o.to_text();
                assert!(text.starts_with("Name:"), "describe {word}:\n{text}");
                assert!(text.contains(&name), "describe {word}:\n{text}");
            }
            Err(e) => assert!(
                e.message
                    .starts_with(&format!("describe does not know \"{word}\"")),
                "describe {word}: {}",
                e.message
            ),
        }
        match lab.execute(&format!("label {word} {name} registry=yes")) {
            Ok(o) => {
                assert!(o.to_text().contains(" labeled"), "label {word}");
                let json = ok(&mut lab, &format!("get {word} {name} -o json"));
                assert!(
                    json.contains("\"registry\": \"yes\""),
                    "label {word}: {json}"
                );
            }
            Err(e) => assert_eq!(
                e.message,
                format!("label works on pods, nodes and namespaces here, not {word}")
            ),
        }
    }
}

#[test]
fn delete_deletes_every_kind_help_lists_and_says_why_not_for_the_others() {
    let deletes = help_kinds(&mut fixture(), "delete");
    for kind in ApiKind::ALL {
        let mut lab = fixture();
        let word = plural(kind);
        let mut name = one(&mut lab, kind);
        if kind == ApiKind::PersistentVolume {
            // A provisioned volume goes with its claim (reclaim policy Delete): delete a
            // static one no claim holds.
            ok(
                &mut lab,
                "apply -f - <<EOF\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: static\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  csi:\n    driver: hostpath.csi.lab\n    volumeHandle: vol-static\nEOF",
            );
            name = "static".to_string();
        }
        let line = format!("delete {word} {name}");
        match lab.execute(&line) {
            Ok(o) => {
                assert!(
                    deletes.contains(&kind),
                    "{line} works but help delete lacks it"
                );
                assert!(o.to_text().contains("deleted"), "{line}: {}", o.to_text());
            }
            Err(e) => {
                assert!(
                    !deletes.contains(&kind),
                    "{line} failed but help delete lists it: {}",
                    e.message
                );
                assert!(
                    e.message.contains("delete") && !e.message.contains("resource type"),
                    "{line}: {}",
                    e.message
                );
            }
        }
    }
}

#[test]
fn apply_reads_the_kinds_it_lists_and_refuses_the_others() {
    for kind in ApiKind::ALL {
        let mut lab = fixture();
        let word = plural(kind);
        let name = one(&mut lab, kind);
        match manifest(kind) {
            Some(yaml) => {
                let out = ok(&mut lab, &format!("apply -f - <<EOF\n{yaml}EOF"));
                assert!(out.contains("/applied created"), "apply {kind}: {out}");
                let got = ok(&mut lab, &format!("get {word} applied -o json"));
                assert!(got.contains("\"name\": \"applied\""), "{got}");
            }
            None => {
                let v: serde_json::Value =
                    serde_json::from_str(&ok(&mut lab, &format!("get {word} {name} -o json")))
                        .expect("JSON");
                let yaml = format!(
                    "apiVersion: {}\nkind: {}\nmetadata:\n  name: applied\n",
                    v["apiVersion"].as_str().unwrap_or_default(),
                    kind.name()
                );
                let e = lab
                    .execute(&format!("apply -f - <<EOF\n{yaml}EOF"))
                    .expect_err("refused");
                assert!(
                    e.message
                        .contains(&format!("no matches for kind \"{}\"", kind.name())),
                    "apply {kind}: {}",
                    e.message
                );
            }
        }
    }
}

#[test]
fn save_keeps_every_kind() {
    let mut lab = fixture();
    let save = lab.to_save();
    for kind in ApiKind::ALL {
        let name = one(&mut lab, kind);
        let items = &save.state["objects"][plural(kind)]["items"];
        let names: Vec<&str> = items
            .as_array()
            .unwrap_or_else(|| panic!("the save has no {kind} list"))
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        assert!(names.contains(&name.as_str()), "{kind}: {names:?}");
    }
    let mut loaded = Lab::from_save(&save).expect("the save loads");
    for kind in ApiKind::ALL {
        let word = plural(kind);
        let name = one(&mut lab, kind);
        assert_eq!(
            ok(&mut loaded, &format!("get {word} {name} -o json")),
            ok(&mut lab, &format!("get {word} {name} -o json")),
            "{kind} after load"
        );
    }
}

/// The snapshot kinds print the CRDs' `additionalPrinterColumns` (external-snapshotter
/// v8): a VolumeSnapshot's source content and creation time, a content's class and the
/// snapshot's namespace.
#[test]
fn snapshots_print_the_crds_columns() {
    let mut lab = crate::common::lab();
    for line in [
        "pvc create data --size 1Gi",
        "pod create db --pvc data",
        "snapshot create s1 --pvc data",
        "tick 5",
    ] {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let vs = lab
        .execute("get vs")
        .map(|o| o.to_text())
        .unwrap_or_default();
    let header: Vec<&str> = vs.lines().next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "READYTOUSE",
            "SOURCEPVC",
            "SOURCESNAPSHOTCONTENT",
            "RESTORESIZE",
            "SNAPSHOTCLASS",
            "SNAPSHOTCONTENT",
            "CREATIONTIME",
            "AGE"
        ]
    );
    let vsc = lab
        .execute("get vsc")
        .map(|o| o.to_text())
        .unwrap_or_default();
    let mut lines = vsc.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "READYTOUSE",
            "RESTORESIZE",
            "DELETIONPOLICY",
            "DRIVER",
            "VOLUMESNAPSHOTCLASS",
            "VOLUMESNAPSHOT",
            "VOLUMESNAPSHOTNAMESPACE",
            "AGE"
        ]
    );
    let row: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        row[5..8],
        ["csi-hostpath-snapclass", "s1", "default"],
        "{vsc}"
    );
}

/// describe pvc's Conditions table is describePersistentVolumeClaim's: six columns with a
/// dashed row, times in RFC1123Z, the never-set probe time as Go's zero time.
#[test]
fn describe_pvc_prints_conditions_as_kubectl_does() {
    let mut lab = crate::common::lab();
    for line in [
        "pvc create data --size 1Gi",
        "tick 3",
        "pvc expand data 2Gi",
        "tick 2",
    ] {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let d = lab
        .execute("describe pvc data")
        .map(|o| o.to_text())
        .unwrap_or_default();
    let at = d.find("Conditions:").unwrap_or_else(|| panic!("{d}"));
    let table: Vec<&str> = d[at..].lines().skip(1).take(3).collect();
    let cells = |l: &str| {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        cells(table[0]),
        [
            "Type",
            "Status",
            "LastProbeTime",
            "LastTransitionTime",
            "Reason",
            "Message"
        ]
    );
    assert!(table[1].trim_start().starts_with("----  "), "{d}");
    // Kubernetes 1.31's external-resizer: FileSystemResizePending replaced Resizing.
    let row = cells(table[2]);
    assert_eq!(row[0], "FileSystemResizePending", "{d}");
    assert_eq!(row[2], "Mon, 01 Jan 0001 00:00:00 +0000");
    assert!(row[3].starts_with("Wed, 01 Jan 2025 00:00:0"), "{d}");
}
