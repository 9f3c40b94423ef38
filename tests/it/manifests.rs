//! `apply -f` / `delete -f` (issue 20): the chapters' YAML applies unchanged, what
//! `get -o yaml` prints applies back, a file with a mistake changes nothing, a
//! here-document works in scripts and survives save/load, and no text makes the reader
//! panic.

use cni_csi_lab::Lab;
use lab_engine::manifest;
use proptest::prelude::*;
use std::path::PathBuf;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lab-manifests-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn ok(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(o) => o.to_text(),
        Err(e) => panic!("`{line}` failed: {}\n{}", e.message, e.output.to_text()),
    }
}

fn fails(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(o) => panic!("`{line}` succeeded:\n{}", o.to_text()),
        Err(e) => e.message,
    }
}

/// Everything the API server holds, as `get … -o json` prints it.
fn objects(lab: &mut Lab) -> String {
    ["pods -A", "pvc -A", "pv", "sc", "netpol -A", "vs -A", "ns"]
        .iter()
        .map(|k| ok(lab, &format!("get {k} -o json")))
        .collect()
}

#[test]
fn every_shipped_manifest_applies_on_a_fresh_lab() {
    let mut files: Vec<PathBuf> = std::fs::read_dir("assets/manifests")
        .expect("assets/manifests")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    for f in &files {
        let mut lab = crate::common::lab();
        let out = ok(&mut lab, &format!("apply -f {}", f.display()));
        assert!(out.contains(" created"), "{}: {out}", f.display());
        // Applying it again changes nothing.
        let again = ok(&mut lab, &format!("apply -f {}", f.display()));
        assert!(
            !again.contains(" configured") && !again.contains(" created"),
            "{}: {again}",
            f.display()
        );
    }
}

#[test]
fn what_get_prints_applies_back_and_changes_no_spec() {
    let dir = scratch("roundtrip");
    let mut lab = crate::common::lab();
    ok(&mut lab, "apply -f assets/manifests/web-app.yaml");
    ok(&mut lab, "pvc create data --size 1Gi");
    ok(
        &mut lab,
        "pod create api --node node-2 --label app=api --pvc data",
    );
    ok(
        &mut lab,
        "policy create deny --select app=api --types Ingress",
    );
    for (what, file) in [
        ("get pod web -n shop -o yaml", "pod.yaml"),
        ("get pods -A -o yaml", "pods.yaml"),
        ("get pvc -A -o yaml", "pvcs.yaml"),
        ("get pv -o yaml", "pvs.yaml"),
        ("get sc -o yaml", "scs.yaml"),
        ("get netpol -A -o yaml", "policies.yaml"),
        ("get ns shop -o json", "ns.json"),
    ] {
        let text = ok(&mut lab, what);
        let path = dir.join(file);
        std::fs::write(&path, &text).expect("write");
        let specs = |lab: &mut Lab| {
            let mut v: serde_json::Value =
                serde_json::from_str(&ok(lab, &what.replace("-o yaml", "-o json"))).expect("json");
            strip_volatile(&mut v);
            v
        };
        let before = specs(&mut lab);
        let out = ok(&mut lab, &format!("apply -f {}", path.display()));
        assert!(!out.contains("created"), "{what}: {out}");
        let after = specs(&mut lab);
        assert_eq!(before, after, "{what} changed more than metadata:\n{out}");
    }
}

/// Drop what an apply legitimately changes: the last-applied annotation, the
/// resourceVersion and generation.
fn strip_volatile(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("resourceVersion");
            m.remove("generation");
            m.remove("kubectl.kubernetes.io/last-applied-configuration");
            if m.get("annotations")
                .is_some_and(|a| a.as_object().is_some_and(|o| o.is_empty()))
            {
                m.remove("annotations");
            }
            for x in m.values_mut() {
                strip_volatile(x);
            }
            if m.get("annotations")
                .is_some_and(|a| a.as_object().is_some_and(|o| o.is_empty()))
            {
                m.remove("annotations");
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

#[test]
fn a_file_with_a_mistake_changes_nothing() {
    let dir = scratch("mistake");
    let path = dir.join("two.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: first\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x\n    resourcez: {}\n",
    )
    .expect("write");
    let mut lab = crate::common::lab();
    let before = objects(&mut lab);
    let e = fails(&mut lab, &format!("apply -f {}", path.display()));
    assert!(
        e.contains("unknown field \"spec.containers[0].resourcez\""),
        "{e}"
    );
    assert!(e.ends_with("(line 14)"), "{e}");
    assert_eq!(before, objects(&mut lab));
}

#[test]
fn a_here_document_applies_in_a_script_and_replays_from_a_save() {
    let dir = scratch("heredoc");
    let save = dir.join("lab.json");
    let script = format!(
        "apply -f - <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: hello  # the name\nspec:\n  nodeName: node-2\n  containers:\n  - name: app\n    image: busybox\nEOF\nget pods\nsave {}\n",
        save.display()
    );
    let mut desk = crate::common::desk();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let all_ok = lab_engine::script::run(
        &mut desk,
        &script,
        lab_engine::script::RunOptions::default(),
        &mut out,
        &mut err,
    )
    .expect("run");
    let out = String::from_utf8(out).expect("utf-8");
    assert!(all_ok, "{out}{}", String::from_utf8_lossy(&err));
    assert!(
        out.contains("pod/hello created") && out.contains("hello   1/1     Running"),
        "{out}"
    );
    let mut loaded = crate::common::lab();
    ok(&mut loaded, &format!("load {}", save.display()));
    assert!(ok(&mut loaded, "get pods").contains("hello"));
    // Without its lines, `-f -` says what to type.
    let e = fails(&mut crate::common::lab(), "apply -f -");
    assert!(e.contains("<<EOF"), "{e}");
}

#[test]
fn a_static_volume_is_bound_before_anything_is_provisioned() {
    let mut lab = crate::common::lab();
    let out = ok(
        &mut lab,
        "apply -f assets/manifests/ch4-claim-and-volume.yaml",
    );
    assert!(!out.contains("ProvisioningFailed"), "{out}");
    let pvc = ok(&mut lab, "get pvc training-data -o json");
    let v: serde_json::Value = serde_json::from_str(&pvc).expect("json");
    assert_eq!(v["spec"]["volumeName"], "pvc-xxx-yyyy");
    assert_eq!(v["status"]["phase"], "Bound");
    let pv: serde_json::Value =
        serde_json::from_str(&ok(&mut lab, "get pv pvc-xxx-yyyy -o json")).expect("json");
    assert_eq!(pv["spec"]["claimRef"]["name"], "training-data");
    assert_eq!(
        pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"],
        "yes"
    );
    // A smaller volume of the same class does not fit a second, larger claim.
    let dir = scratch("static");
    let f = dir.join("more.yaml");
    std::fs::write(
        &f,
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: small}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: fast-ssd\n  csi: {driver: hostpath.csi.lab, volumeHandle: vol-small}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: big}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: fast-ssd\n  resources: {requests: {storage: 5Gi}}\n",
    )
    .expect("write");
    ok(&mut lab, &format!("apply -f {}", f.display()));
    let big: serde_json::Value =
        serde_json::from_str(&ok(&mut lab, "get pvc big -o json")).expect("json");
    assert_eq!(big["status"]["phase"], "Pending");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No text makes the manifest reader panic.
    #[test]
    fn the_reader_never_panics(text in "\\PC{0,400}") {
        let _ = manifest::parse("x.yaml", &text);
    }

    /// Nor does a valid manifest with a piece cut out or a character changed.
    #[test]
    fn a_damaged_manifest_is_refused_or_read(cut in 0usize..600, len in 0usize..40, c in any::<char>()) {
        let text = std::fs::read_to_string("assets/manifests/web-app.yaml").expect("asset");
        let mut chars: Vec<char> = text.chars().collect();
        let at = cut.min(chars.len());
        let end = (at + len).min(chars.len());
        chars.splice(at..end, [c]);
        let damaged: String = chars.into_iter().collect();
        if let Ok(docs) = manifest::parse("x.yaml", &damaged) {
            let mut lab = crate::common::lab();
            let dir = scratch("damaged");
            let f = dir.join("d.yaml");
            std::fs::write(&f, &damaged).expect("write");
            let _ = lab.execute(&format!("apply -f {}", f.display()));
            prop_assert!(!docs.is_empty());
        }
    }
}

/// A pod's volumeMounts and volumeDevices are kept (web-app.yaml's mount no longer warns),
/// checked as the API server checks them, shown by `describe` and `-o yaml`, and kubelet
/// mounts only the volumes a container uses ("Skipping unused volume"): an unused claim
/// is attached but never staged or published, and a block claim in volumeMounts fails.
#[test]
fn volume_mounts_are_kept_checked_and_decide_what_kubelet_mounts() {
    let dir = scratch("mounts");
    let mut lab = crate::common::lab();
    let out = ok(&mut lab, "apply -f assets/manifests/web-app.yaml");
    assert!(!out.contains("volumeMounts"), "{out}");
    let d = ok(&mut lab, "describe pod web -n shop");
    assert!(
        d.contains("      /usr/share/nginx/html from data (rw)\n"),
        "{d}"
    );
    let y = ok(&mut lab, "get pod web -n shop -o yaml");
    assert!(
        y.contains("    - mountPath: /usr/share/nginx/html\n      name: data\n"),
        "{y}"
    );
    // Each mistake named, nothing created.
    let pod = |containers: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: app\n    image: busybox\n{containers}  volumes:\n  - name: data\n    persistentVolumeClaim:\n      claimName: c\n  - name: scratch\n    emptyDir: {{}}\n"
        )
    };
    for (containers, cause) in [
        (
            "    volumeMounts:\n    - name: nope\n      mountPath: /d\n",
            "spec.containers[0].volumeMounts[0].name: Not found: \"nope\"",
        ),
        (
            "    volumeMounts:\n    - name: data\n",
            "spec.containers[0].volumeMounts[0].mountPath: Required value",
        ),
        (
            "    volumeMounts:\n    - name: data\n      mountPath: /d\n    - name: scratch\n      mountPath: /d\n",
            "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be unique",
        ),
        (
            "    volumeMounts:\n    - name: data\n      mountPath: /d\n    volumeDevices:\n    - name: data\n      devicePath: /dev/d\n",
            "spec.containers[0].volumeDevices[0].name: Invalid value: \"data\": must not already exist in volumeMounts",
        ),
        (
            "    volumeDevices:\n    - name: scratch\n      devicePath: /dev/s\n",
            "spec.containers[0].volumeDevices[0].name: Invalid value: \"scratch\": can only use volume source type of PersistentVolumeClaim for block mode",
        ),
    ] {
        let file = dir.join("bad.yaml");
        std::fs::write(&file, pod(containers)).unwrap();
        let e = fails(&mut lab, &format!("apply -f {}", file.display()));
        assert!(e.contains(cause), "{containers}: {e}");
        assert!(!ok(&mut lab, "get pods").contains("bad"), "{e}");
    }
    // A claim no container uses: attached, never mounted; the pod runs.
    let file = dir.join("unused.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: d2\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: nm\nspec:\n  containers:\n  - name: app\n    image: busybox\n  volumes:\n  - name: data\n    persistentVolumeClaim:\n      claimName: d2\n",
    )
    .unwrap();
    let out = ok(&mut lab, &format!("apply -f {}", file.display()));
    assert!(out.contains("ControllerPublishVolume"), "{out}");
    assert!(
        !out.contains("NodeStageVolume") && !out.contains("NodePublishVolume"),
        "{out}"
    );
    assert!(out.contains("pod/nm podIP="), "{out}");
    // `pod create --pvc`: a filesystem claim at /mnt/CLAIM, a block claim as /dev/CLAIM.
    ok(&mut lab, "pvc create blk --size 1Gi --mode Block");
    ok(&mut lab, "pvc create fs --size 1Gi");
    ok(&mut lab, "pod create both --pvc blk --pvc fs:ro");
    let d = ok(&mut lab, "describe pod both");
    assert!(
        d.contains("    Mounts:\n      /mnt/fs from fs (ro)\n")
            && d.contains("    Devices:\n      /dev/blk from blk\n"),
        "{d}"
    );
    assert!(d.contains("Status:           Running"), "{d}");
    // A block claim named in volumeMounts: kubelet's volume manager refuses it.
    let file = dir.join("mismatch.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: mm\nspec:\n  containers:\n  - name: app\n    image: busybox\n    volumeMounts:\n    - name: b\n      mountPath: /b\n  volumes:\n  - name: b\n    persistentVolumeClaim:\n      claimName: blk2\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: blk2\nspec:\n  accessModes: [ReadWriteOnce]\n  volumeMode: Block\n  resources:\n    requests:\n      storage: 1Gi\n",
    )
    .unwrap();
    ok(&mut lab, &format!("apply -f {}", file.display()));
    let d = ok(&mut lab, "describe pod mm");
    assert!(
        d.contains("volume b has volumeMode Block, but is specified in volumeMounts"),
        "{d}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
