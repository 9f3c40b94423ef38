//! Chapter 3's two lessons (`ch3-architecture`: CNI across nodes; `ch3-csi-multus`: CSI
//! deployment, Multus and SR-IOV), against the defects issue 35 found in the one lesson they
//! were: checks an `echo` or a left-out command satisfied, a task's command nothing checked,
//! a step that let a learner through to a dead end, hints pointing at text only the hidden
//! solution had, hop numbers and a quiz that contradicted the lab, two pods given one
//! address without a word, and progress saved under the old numbering.

use lab_engine::Desk;
use lab_engine::engine::seen::Seen;
use lab_engine::lesson::catalog::EMBEDDED;
use lab_engine::lesson::model::{Lesson, QuizKind};
use lab_engine::lesson::{Item, MemoryStore, Progress, ProgressStore, parse, play};
use lab_engine::net::trace::{HopKind, Rewrite};

const CNI: &str = "ch3-architecture";
const CSI: &str = "ch3-csi-multus";

fn lesson(id: &str) -> Lesson {
    EMBEDDED
        .iter()
        .map(|(file, text)| parse::parse(file, text).expect("embedded lessons parse"))
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("no lesson {id}"))
}

fn ok(desk: &mut Desk, line: &str) -> String {
    desk.execute(line)
        .unwrap_or_else(|e| panic!("{line}: {}", e.message))
        .to_text()
}

fn at(desk: &Desk) -> usize {
    desk.lessons.session.as_ref().map_or(usize::MAX, |s| s.at)
}

/// A desk at step `n` (1-based) of a lesson, the steps before done by `skip`.
fn desk_at(id: &str, n: usize) -> Desk {
    let mut desk = crate::common::desk();
    ok(&mut desk, &format!("lesson start {id}"));
    for _ in 1..n {
        ok(&mut desk, "skip");
    }
    assert_eq!(at(&desk), n - 1);
    desk
}

/// ch3-csi-multus at step 16 with its flow stepped: the claim made and the pod created
/// with `--step`, at the first call.
fn stepping_at_csi_16() -> Desk {
    let mut desk = desk_at(CSI, 16);
    ok(&mut desk, "pvc create ckpt --size 1Gi --class local-wffc");
    ok(
        &mut desk,
        "pod create trainer-ckpt --node-selector kubernetes.io/hostname=node-3 --pvc ckpt --step",
    );
    desk
}

/// Every step: its check is false before its commands and true after, and false after each
/// decoy (each command left out then an `echo` of the checks' words, every command failing,
/// a node or pod swapped for another). The one lesson ch3 was failed 17 of them: the `show
/// bgp` of old step 16 (now ch3-architecture step 19), the `get vsc` of old step 23
/// (ch3-csi-multus step 7), the `cni conf show` after `network multus on` of old step 24
/// (step 8) and the `describe pod trainer-a` of old step 25 (step 9) were asked for and
/// never checked.
#[test]
fn both_chapter3_lessons_pass_every_decoy() {
    for id in [CNI, CSI] {
        let errors = play::verify_with(&lesson(id), true, true);
        assert!(errors.is_empty(), "{id}: {errors:#?}");
    }
}

/// No step asks for more than three commands (the old lesson's steps 14–17 and 27 asked for
/// five or six), and no step's teaching text runs much over eight lines. A `step` through a
/// stepped trace is Enter in the REPL, not a command to type.
#[test]
fn chapter3_steps_are_short() {
    for id in [CNI, CSI] {
        for s in lesson(id).steps {
            let typed = s.commands.iter().filter(|c| c.text != "step").count();
            assert!(typed <= 3, "{id} step {}: {typed} commands", s.number);
            let prose = s
                .text
                .iter()
                .take_while(|l| !l.starts_with("```"))
                .filter(|l| !l.trim().is_empty() && !l.starts_with("Section:"))
                .count();
            assert!(prose <= 9, "{id} step {}: {prose} lines", s.number);
        }
    }
}

/// The hints of the NAD steps used to point at "the JSON above", which only the hidden
/// reference commands had: every `nad create` a step's commands run is in its text.
#[test]
fn the_nad_a_step_asks_for_is_written_in_its_text() {
    let mut seen = 0;
    for id in [CNI, CSI] {
        for s in lesson(id).steps {
            let text = s.text.join("\n");
            for c in s
                .commands
                .iter()
                .filter(|c| c.text.starts_with("nad create"))
            {
                seen += 1;
                assert!(
                    text.contains(&c.text),
                    "{id} step {}: `{}` is not in the step's text",
                    s.number,
                    c.text
                );
            }
        }
    }
    assert_eq!(seen, 2, "storage-net and rdma-net");
}

/// Step 8 names hops by number; they are the ones `trace api slow` prints (the old text was
/// one off: the route is hop 5, bridge's masquerade hop 6).
#[test]
fn the_hops_step_8_names_are_the_trace_s() {
    let l = lesson(CNI);
    let step = &l.steps[7];
    let text = step.text.join(" ");
    assert!(
        text.contains("(hop 5, `10.244.2.0/24 via 192.168.0.2 dev eth0`)"),
        "{text}"
    );
    assert!(text.contains("Hop 6 is bridge's `ipMasq` chain"), "{text}");
    let mut desk = desk_at(CNI, 8);
    let ran = desk.lab.run("trace api slow");
    let hops = ran
        .seen
        .iter()
        .find_map(|s| match s {
            Seen::Trace(t) => Some(t.hops.clone()),
            _ => None,
        })
        .expect("a trace");
    assert_eq!(hops[4].kind, HopKind::NodeRoute, "{hops:#?}");
    let (_, route) = hops[4].node_route().expect("a node route");
    assert_eq!(
        route.to_ip_route(),
        "10.244.2.0/24 via 192.168.0.2 dev eth0"
    );
    assert_eq!(hops[5].kind, HopKind::Netfilter, "{hops:#?}");
    assert_eq!(
        hops[5].rewrite,
        Some(Rewrite::Source(
            "10.244.1.2".parse().unwrap(),
            "192.168.0.1".parse().unwrap()
        ))
    );
    assert!(
        hops[5]
            .line()
            .ends_with("-j MASQUERADE (source 10.244.1.2 → 192.168.0.1)"),
        "{}",
        hops[5].line()
    );
}

/// A quiz that says which node joined last must be right about the lesson it is in (the old
/// quiz 9 said node-3; gpu-1 joined after it).
#[test]
fn a_quiz_names_the_node_that_joined_last_rightly() {
    for id in [CNI, CSI] {
        let l = lesson(id);
        let last = l
            .steps
            .iter()
            .flat_map(|s| &s.commands)
            .filter_map(|c| c.text.strip_prefix("node add "))
            .filter_map(|rest| rest.split(' ').next())
            .next_back();
        for q in &l.quizzes {
            if let Some(i) = q.question.find(" joined last") {
                let named = q.question[..i].split_whitespace().last();
                assert_eq!(named, last, "{id}: {}", q.question);
            }
        }
    }
    // The quiz that said it asks about node-3's pods, in the lesson where node-3 is added.
    assert!(
        lesson(CNI)
            .quizzes
            .iter()
            .any(|q| q.question.contains("node-3's pods"))
    );
}

/// The old lesson's own path gave `db` and `slow` the same address on node-2 (the v110
/// conflist loaded on every node, its store there empty) and never said so. Played to the
/// end, neither lesson leaves two pods with one address; the one pair it shows on purpose
/// (`old` and `api`, step 3) is gone by step 14.
#[test]
fn no_two_pods_share_an_address_when_a_chapter3_lesson_ends() {
    for id in [CNI, CSI] {
        let l = lesson(id);
        let mut desk = desk_at(id, 1);
        while !matches!(
            desk.lessons.session.as_ref().map(|s| s.current()),
            Some(Item::Finished) | None
        ) {
            ok(&mut desk, "skip");
        }
        assert!(
            l.quizzes
                .iter()
                .any(|q| matches!(q.kind, QuizKind::Predict { .. }))
        );
        let mut ips: Vec<(String, String)> = desk
            .lab
            .cluster()
            .pods
            .values()
            .filter_map(|p| Some((p.status.pod_ip?.to_string(), p.key())))
            .collect();
        ips.sort();
        for w in ips.windows(2) {
            assert_ne!(w[0].0, w[1].0, "{id}: {} and {}", w[0].1, w[1].1);
        }
    }
}

/// The old step 28's task left out `--networks rdma-net` and its check did not need it;
/// step 29's did, so only `lesson retry` got a learner out. Now step 13 checks the network,
/// a hint says what is missing, and deleting and recreating the pod completes it.
#[test]
fn a_pending_pod_without_its_network_is_caught_in_its_own_step() {
    let mut desk = desk_at(CSI, 13);
    ok(
        &mut desk,
        "pod create train-1 --networks rdma-net --resource intel.com/sriov_netdevice=1",
    );
    ok(
        &mut desk,
        "pod create train-2 --resource intel.com/sriov_netdevice=1",
    );
    let out = ok(&mut desk, "describe pod train-2");
    assert_eq!(at(&desk), 12, "{out}");
    let out = ok(&mut desk, "hint");
    assert!(
        out.contains("k8s.v1.cni.cncf.io/networks") && out.contains("train-2 has no annotation"),
        "{out}"
    );
    ok(&mut desk, "pod delete train-2");
    ok(
        &mut desk,
        "pod create train-2 --networks rdma-net --resource intel.com/sriov_netdevice=1",
    );
    ok(&mut desk, "describe pod train-2");
    assert_eq!(at(&desk), 13, "step 13 is done");
    // Steps 14 and 15 complete on their own commands.
    for line in [
        "pod create pinned --node gpu-1 --resource intel.com/sriov_netdevice=1",
        "describe pod pinned",
        "pod delete train-0",
        "get pods -o wide",
    ] {
        ok(&mut desk, line);
    }
    assert_eq!(at(&desk), 15, "steps 14 and 15 are done");
}

/// The first half kept the id `ch3-architecture` and the numbers of its first 13 steps, so a
/// learner's saved progress keeps its meaning; numbers the shorter lesson no longer has
/// (the old 29 steps and 9 quizzes) are not counted.
#[test]
fn progress_saved_for_the_whole_old_chapter3_counts_only_what_the_first_half_has() {
    let mut store = MemoryStore::default();
    let mut p = Progress::default();
    let lp = p.lessons.entry(CNI.to_string()).or_default();
    lp.steps.extend(1..=29);
    lp.quizzes.extend(1..=9);
    store.save(&p).unwrap();
    let mut desk = crate::common::desk();
    desk.lessons.set_store(Box::new(store));
    let l = lesson(CNI);
    let (steps, quizzes) = (l.steps.len(), l.quizzes.len());
    let list = ok(&mut desk, "lesson list");
    assert!(
        list.contains(&format!("{steps}/{steps}"))
            && list.contains(&format!("{quizzes}/{quizzes}")),
        "{list}"
    );
    assert!(list.contains(&format!("{CSI}  ")), "{list}");
    let out = ok(&mut desk, &format!("lesson start {CNI}"));
    assert!(out.contains("You finished this lesson before"), "{out}");
}

/// Issue 39 §4: ch3-architecture step 22 asks `why route` of node-1's route to node-3's
/// podCIDR; the check reads the chain (`Seen::Why`): another route, the same CIDR asked on
/// another node, or an echo of the words is not it.
#[test]
fn ch3_step_22_reads_why_route_of_the_right_route() {
    let mut desk = desk_at(CNI, 22);
    for line in [
        "why route 10.244.2.0/24 --node node-1",
        "why route 10.244.3.0/24 --node node-2",
        "echo why route node-1 10.244.3.0/24 lease node-3",
    ] {
        let _ = desk.execute(line);
        assert_eq!(at(&desk), 21, "step 22 done after `{line}`");
    }
    let out = ok(&mut desk, "why route 10.244.3.0/24 --node node-1");
    assert!(
        out.contains("flanneld on node-1 wrote it from node-3's lease"),
        "{out}"
    );
    assert_eq!(at(&desk), 22);
}

/// Issue 39 §4: ch3-architecture step 23 switches back to VXLAN and steps a packet from
/// `old` to `slow` up to the hop where flannel.1 on node-1 wraps it. The check reads the hop
/// stepped to (`Seen::Stepped`): hop 1, the trace printed whole, node-2 wrapping a packet
/// the other way, node-1's flannel.1 unwrapping it, or an echo of the words is not it.
#[test]
fn ch3_step_23_steps_to_the_vxlan_hop_of_the_right_node() {
    let mut desk = desk_at(CNI, 23);
    ok(&mut desk, "network use flannel-vxlan");
    // From slow to old, node-2 wraps (hop 7) and node-1 unwraps (hop 9).
    ok(&mut desk, "trace slow old --step");
    let mut shown = Vec::new();
    for _ in 0..8 {
        shown.push(ok(&mut desk, "step"));
    }
    assert!(
        shown[5].contains("── hop 7/14: node-2 · tunnel ──"),
        "{}",
        shown[5]
    );
    assert!(
        shown[7].contains("── hop 9/14: node-1 · tunnel ──"),
        "{}",
        shown[7]
    );
    assert!(shown[7].contains("decapsulated"), "{}", shown[7]);
    assert_eq!(at(&desk), 22, "step 23 done by node-1 unwrapping");
    for line in [
        "echo saw step tunnel on node-1",
        "trace old slow",
        "trace old slow --step",
    ] {
        let _ = desk.execute(line);
        assert_eq!(at(&desk), 22, "step 23 done after `{line}`");
    }
    for _ in 0..5 {
        ok(&mut desk, "step");
        assert_eq!(at(&desk), 22, "step 23 done before the tunnel hop");
    }
    let out = ok(&mut desk, "step");
    assert!(out.contains("── hop 7/14: node-1 · tunnel ──"), "{out}");
    assert!(
        out.contains("outer 192.168.0.1 → 192.168.0.2 UDP dport 8472, VNI 1, 134 bytes"),
        "{out}"
    );
    assert_eq!(at(&desk), 23);
}

/// Step 23's commands (`trace old slow --step` and six `step` lines) as a script: what a
/// script prints and whether the step is done.
fn step_23_by_script(desk: &mut Desk, text: &str) -> String {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ok = lab_engine::script::run(
        desk,
        text,
        lab_engine::script::RunOptions::default(),
        &mut out,
        &mut err,
    )
    .expect("run");
    let out = String::from_utf8(out).expect("utf-8");
    assert!(ok, "{out}{}", String::from_utf8_lossy(&err));
    out
}

/// Issue 39 leftovers: step 23 can be done from `run FILE` as typed in the REPL (the `step`
/// lines step, the sixth reaches node-1's tunnel hop) and by a script that prints the
/// trace at once (every hop printed counts as stepped), and from `play FILE`.
#[test]
fn ch3_step_23_is_done_by_a_script_and_by_play() {
    let reference: String = lesson(CNI).steps[22]
        .commands
        .iter()
        .map(|c| format!("{}\n", c.text))
        .collect();
    assert!(
        reference.contains("trace old slow --step\nstep\n"),
        "{reference}"
    );
    let mut desk = desk_at(CNI, 23);
    let out = step_23_by_script(&mut desk, &reference);
    assert_eq!(at(&desk), 23, "{out}");
    // Done at the sixth `step`, the tunnel hop; the hops after it come before the feedback
    // (QA 21 §4), and the quiz last.
    let (before, after) = out.split_once("✓ Step 23 done").expect("done");
    assert!(
        before.contains("── hop 7/14: node-1 · tunnel ──"),
        "{before}"
    );
    assert!(before.contains("(stepping ended at hop 7/14"), "{before}");
    assert!(before.contains("── hop 14/14:"), "{before}");
    assert!(!after.contains("── hop "), "{after}");
    assert!(after.contains("── Quiz 1/6"), "{after}");

    // The trace printed at once: every hop counts as stepped.
    let mut desk = desk_at(CNI, 23);
    let out = step_23_by_script(
        &mut desk,
        "network use flannel-vxlan\ntrace old slow --step\n",
    );
    assert_eq!(at(&desk), 23, "{out}");
    let (before, _) = out.split_once("✓ Step 23 done").expect("done");
    assert!(before.contains("── hop 14/14:"), "{before}");
    // Printed whole without --step, it is not stepped.
    let mut desk = desk_at(CNI, 23);
    let out = step_23_by_script(&mut desk, "network use flannel-vxlan\ntrace old slow\n");
    assert_eq!(at(&desk), 22, "{out}");

    // `play FILE` with the lesson in progress.
    let dir = std::env::temp_dir().join(format!("lab-ch3-play-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join("step23.lab");
    std::fs::write(&f, &reference).expect("write");
    let mut desk = desk_at(CNI, 23);
    let out = ok(&mut desk, &format!("play {}", f.display()));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.contains("✓ Step 23 done"), "{out}");
    assert_eq!(at(&desk), 23);
}

/// Issue 39 §4: ch3-csi-multus step 16 steps the CSI calls of a new `local-wffc` claim's
/// first pod to ControllerPublishVolume, external-attacher's answer to the VolumeAttachment
/// of step 5. The check reads the call stepped to (`Seen::SteppedCall`): an echo of the
/// words, or the first call shown (external-provisioner's CreateVolume) is not it.
#[test]
fn csi_step_16_steps_to_the_attach() {
    let mut desk = desk_at(CSI, 16);
    let _ = desk.execute("echo saw step csi ControllerPublishVolume");
    assert_eq!(at(&desk), 15, "step 16 done after an echo");
    ok(&mut desk, "pvc create ckpt --size 1Gi --class local-wffc");
    let out = ok(
        &mut desk,
        "pod create trainer-ckpt --node-selector kubernetes.io/hostname=node-3 --pvc ckpt --step",
    );
    assert!(
        out.contains("── call 1/4: CreateVolume · external-provisioner ──"),
        "{out}"
    );
    assert_eq!(at(&desk), 15, "step 16 done at CreateVolume");
    let out = ok(&mut desk, "step");
    assert!(
        out.contains("── call 2/4: ControllerPublishVolume · external-attacher ──"),
        "{out}"
    );
    assert!(out.contains("node_id   node-3"), "{out}");
    assert_eq!(at(&desk), 16);
}

/// ch3-csi-multus step 3 took a claim that never binds (`--class local-wffc`: it waits for
/// a pod, and step mode writes no WaitForFirstConsumer event before a reconcile; `--class
/// nope`: no such class), and step 4 (`pvc data phase Bound`) then could never pass. The
/// check holds the claim's class to the default `standard` and its size; step 4's hint
/// names the way out.
#[test]
fn csi_step_3_needs_a_claim_of_the_default_class() {
    for class in ["local-wffc", "nope"] {
        let mut desk = desk_at(CSI, 3);
        ok(&mut desk, "mode step");
        ok(
            &mut desk,
            &format!("pvc create data --size 1Gi --class {class}"),
        );
        ok(&mut desk, "get pvc");
        assert_eq!(at(&desk), 2, "a {class} claim passed step 3");
        // The way out step 3's hint gives.
        ok(&mut desk, "lesson retry");
        ok(&mut desk, "mode step");
        ok(&mut desk, "pvc create data --size 1Gi");
        ok(&mut desk, "get pvc");
        assert_eq!(
            at(&desk),
            3,
            "{class}: the default claim after the wrong one"
        );
        ok(&mut desk, "reconcile");
        assert_eq!(at(&desk), 4, "{class}: step 4 binds it");
    }
    let mut desk = desk_at(CSI, 3);
    ok(&mut desk, "mode step");
    ok(&mut desk, "pvc create data --size 2Gi");
    ok(&mut desk, "get pvc");
    assert_eq!(at(&desk), 2, "a 2Gi claim passed step 3");
    // At step 4 with a claim that never binds (made again with a class there): step 4's
    // hint names `back`, which rebuilds the cluster as step 3 began.
    let mut desk = desk_at(CSI, 4);
    ok(&mut desk, "pvc delete data");
    ok(&mut desk, "reconcile");
    ok(&mut desk, "pvc create data --size 1Gi --class local-wffc");
    ok(&mut desk, "reconcile");
    assert_eq!(at(&desk), 3, "a local-wffc claim bound at step 4");
    ok(&mut desk, "back");
    assert_eq!(at(&desk), 2);
    assert!(
        !ok(&mut desk, "get pvc").contains("data"),
        "back undid the claim"
    );
    let hints: Vec<String> = lesson(CSI).steps[3]
        .hints
        .iter()
        .map(|h| h.text.clone())
        .collect();
    let hints = hints.join("\n");
    assert!(
        hints.contains("`back`") && hints.contains("standard"),
        "{hints}"
    );
}

/// ch3-csi-multus step 14: a pod pinned to a node with no free VF is refused by the
/// kubelet's device manager, whose admit handler runs before the resource-fit predicate:
/// `UnexpectedAdmissionError`, not `OutOfintel.com/sriov_netdevice`.
#[test]
fn csi_step_14_teaches_the_device_manager_s_refusal() {
    let mut desk = desk_at(CSI, 14);
    ok(
        &mut desk,
        "pod create pinned --node gpu-1 --resource intel.com/sriov_netdevice=1",
    );
    let out = ok(&mut desk, "describe pod pinned");
    assert!(
        out.contains("Allocate failed due to requested number of devices unavailable for intel.com/sriov_netdevice. Requested: 1, Available: 0, which is unexpected"),
        "{out}"
    );
    assert!(!out.contains("OutOfintel.com"), "{out}");
    assert_eq!(at(&desk), 14);
    let text = lesson(CSI).steps[13].text.join("\n");
    assert!(text.contains("UnexpectedAdmissionError"), "{text}");
}

/// After step 16 is done by stepping to its ControllerPublishVolume (or skipped while a
/// flow is stepped), `back` went on moving the CSI call viewer ("── call 1/4") instead of
/// going back to step 16. Stepping ends with the step it was for.
#[test]
fn back_after_csi_step_16_goes_back_to_the_step() {
    let mut desk = stepping_at_csi_16();
    let out = ok(&mut desk, "step");
    assert_eq!(at(&desk), 16);
    assert!(out.contains("stepping ended at call 2/4"), "{out}");
    assert!(
        out.contains("── call 4/4"),
        "the rest printed at once: {out}"
    );
    assert!(desk.stepping().is_none());
    let out = ok(&mut desk, "back");
    assert!(!out.contains("── call"), "{out}");
    assert_eq!(at(&desk), 15, "back goes to step 16");

    // Skipped while a flow is stepped: the same.
    let mut desk = stepping_at_csi_16();
    assert!(desk.stepping().is_some());
    ok(&mut desk, "skip");
    assert!(desk.stepping().is_none());
    let out = ok(&mut desk, "back");
    assert!(!out.contains("── call"), "{out}");
    assert_eq!(at(&desk), 15);
}

/// QA 21 §1: step 2's `saw conf … active 05-lab-v110.conflist` was met by a view shown
/// before the file was removed again, so the step passed with node-1 back on `10-lab` and
/// step 3 could not be done. The step now also checks the runtime's file at the end.
#[test]
fn ch3_step_2_needs_the_new_file_still_active() {
    let mut desk = desk_at(CNI, 2);
    for line in [
        "cni conf load assets/conflists/05-lab-v110.conflist --node node-1",
        "cni conf show --node node-1",
        "cni conf remove 05-lab-v110.conflist --node node-1",
        "pod create old --node node-1",
    ] {
        ok(&mut desk, line);
    }
    assert_eq!(at(&desk), 1, "step 2 done with 10-lab.conflist active");
    let out = ok(&mut desk, "hint");
    let out = out + &ok(&mut desk, "hint") + &ok(&mut desk, "hint");
    assert!(out.contains("Load it once more"), "{out}");
    ok(
        &mut desk,
        "cni conf load assets/conflists/05-lab-v110.conflist --node node-1",
    );
    ok(&mut desk, "cni conf show --node node-1");
    assert_eq!(at(&desk), 2, "step 2 done once the file is back");
}

/// QA 21 §3: step 7 compared the ingress annotation as text, so `--bandwidth-ingress
/// 10000000`, the rate the wire shows, was "not yet". It compares quantities now; `10Mi`
/// (10485760) is another rate.
#[test]
fn ch3_step_7_takes_the_rate_written_another_way() {
    let mut desk = desk_at(CNI, 7);
    ok(
        &mut desk,
        "pod create slow --node node-2 --bandwidth-ingress 10Mi",
    );
    ok(&mut desk, "show wire");
    assert_eq!(at(&desk), 6, "step 7 done with 10Mi");
    ok(&mut desk, "pod delete slow");
    ok(
        &mut desk,
        "pod create slow --node node-2 --bandwidth-ingress 10000000",
    );
    assert_eq!(at(&desk), 6);
    ok(&mut desk, "show wire");
    assert_eq!(at(&desk), 7, "step 7 done with 10000000");
}

/// QA 21 §4: the `step` that completed step 23 printed the first quiz and then the trace's
/// remaining hops, so the question scrolled away above them. The stepping's rest is now
/// printed first and the quiz last; a `skip` during a stepping does the same.
#[test]
fn the_quiz_after_a_stepped_step_comes_after_the_rest_of_the_trace() {
    let mut desk = desk_at(CNI, 23);
    ok(&mut desk, "network use flannel-vxlan");
    ok(&mut desk, "trace old slow --step");
    let mut out = String::new();
    for _ in 0..6 {
        out = ok(&mut desk, "step");
    }
    assert_eq!(at(&desk), 23, "{out}");
    let pos = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in\n{out}"))
    };
    let (hop7, last, ended) = (pos("hop 7/14"), pos("hop 14/14"), pos("(stepping ended"));
    let (done, quiz) = (pos("✓ Step 23 done"), pos("── Quiz 1/6"));
    assert!(
        hop7 < last && last < ended && ended < done && done < quiz,
        "{out}"
    );
    assert!(desk.stepping().is_none());

    // `skip` while stepping: the trace's rest, then the quiz.
    let mut desk = desk_at(CNI, 23);
    ok(&mut desk, "network use flannel-vxlan");
    ok(&mut desk, "trace old slow --step");
    let out = ok(&mut desk, "skip");
    let ended = out.find("(stepping ended").expect("stepping ended");
    let quiz = out.find("── Quiz 1/6").expect("the quiz");
    assert!(ended < quiz, "{out}");
}

/// QA 21 §9: quiz 6's next hop with a remark, `10.244.3.0 (onlink via flannel.1)`, was
/// refused while `the bandwidth plugin` and `10.244.1.3/24` were taken. An address with
/// words that name no other address is taken; a hedge is not (QA 22 §1: it is refused,
/// using no try).
#[test]
fn ch3_quiz_takes_the_next_hop_with_a_remark() {
    let mut desk = desk_at(CNI, 29);
    let e = desk
        .execute("lesson answer 10.244.3.0 or 10.244.2.0")
        .unwrap_err();
    assert!(
        e.message.contains("negates or hedges (\"or\")"),
        "{}",
        e.message
    );
    let out = ok(&mut desk, "lesson answer 10.244.3.0 (onlink via flannel.1)");
    assert!(out.contains("✓ Right"), "{out}");
}

/// QA 22 §2: `lesson retry` on the quiz after step 16 rebuilt the cluster by replaying step
/// 16's commands, which end inside `pod create … --step`, and left that stepping open:
/// `back` then stepped the CSI calls instead of going back a step, and the next `skip`
/// first printed the rest of the flow. No rebuild (retry, back, a resume) leaves a stepping
/// open.
#[test]
fn a_rebuilt_cluster_leaves_nothing_stepped() {
    let mut desk = desk_at(CSI, 17);
    assert!(desk.stepping().is_none());
    ok(&mut desk, "lesson retry");
    assert!(desk.stepping().is_none(), "after lesson retry");
    let out = ok(&mut desk, "back");
    assert!(!out.contains("── call"), "{out}");
    assert_eq!(at(&desk), 15, "back goes to step 16");

    // Back from quiz 2 to quiz 1 replays step 16 too.
    let mut desk = desk_at(CSI, 17);
    ok(&mut desk, "skip");
    ok(&mut desk, "back");
    assert_eq!(at(&desk), 16);
    assert!(desk.stepping().is_none(), "after back");
    let out = ok(&mut desk, "skip");
    assert!(!out.contains("stepping ended"), "{out}");

    // `skip` of step 16 runs its commands, which step the flow: its calls come in order,
    // the rest after the calls shown (the rest came first, calls 3 and 4 before 1 and 2).
    let mut desk = desk_at(CSI, 16);
    let out = ok(&mut desk, "skip");
    let pos = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in\n{out}"))
    };
    let calls = [pos("── call 1/4"), pos("── call 2/4"), pos("── call 3/4")];
    let (ended, quiz) = (pos("(stepping ended"), pos("── Quiz 1/3"));
    assert!(
        calls[0] < calls[1] && calls[1] < calls[2] && calls[2] < ended && ended < quiz,
        "{out}"
    );
    assert!(desk.stepping().is_none());

    // A stepping of the learner's own is not kept by a retry of its step either.
    let mut desk = stepping_at_csi_16();
    assert!(desk.stepping().is_some());
    ok(&mut desk, "lesson retry");
    assert!(desk.stepping().is_none(), "after retrying step 16");
    assert_eq!(at(&desk), 15);
}

/// QA 22 §3: while a flow was stepped for step 16, the lesson's `back` (its footer: "`back`
/// for the previous step") went to the stepping ("already at the first call (1/4)"). During
/// a lesson `back` is the lesson's; `b` is the stepping's key. Step 16's hint no longer
/// offers `step back`, which cannot help: showing the attach completes the step.
#[test]
fn back_during_a_stepped_step_goes_back_a_step() {
    let mut desk = stepping_at_csi_16();
    let out = ok(&mut desk, "back");
    assert!(out.contains("Back one step"), "{out}");
    assert_eq!(at(&desk), 14, "back goes to step 15");
    assert!(desk.stepping().is_none());

    // `b` still steps back (here: already at the first call).
    let mut desk = stepping_at_csi_16();
    let e = desk.execute("b").unwrap_err();
    assert!(
        e.message.contains("already at the first call"),
        "{}",
        e.message
    );
    assert_eq!(at(&desk), 15);

    let step = lesson(CSI)
        .steps
        .into_iter()
        .find(|s| s.number == 16)
        .unwrap();
    assert!(
        step.hints.iter().all(|h| !h.text.contains("step back")),
        "{:?}",
        step.hints
    );
}
