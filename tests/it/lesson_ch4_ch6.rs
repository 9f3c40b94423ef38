//! Chapters 4 and 6 played the way issue 35's learners broke them: a step must not pass on
//! an `echo` of its words, a view of the wrong record, a policy with the wrong meaning or a
//! pod on the wrong node, and one mistyped pod must not lock a step. The lessons' texts say
//! what the lab and the real components do (kubelet's node-affinity check at mount, where a
//! too-big packet is dropped, what flannel enforces), and both pass every lint decoy.

use lab_engine::Desk;
use lab_engine::lesson::catalog::EMBEDDED;
use lab_engine::lesson::model::Lesson;
use lab_engine::lesson::{parse, play};

const CH4: &str = "ch4-runtime-workflow";
const CH6: &str = "ch6-source-walkthrough";

fn lesson(id: &str) -> Lesson {
    EMBEDDED
        .iter()
        .map(|(file, text)| parse::parse(file, text).expect("embedded lessons parse"))
        .find(|l| l.id == id)
        .expect("the lesson is embedded")
}

fn run(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(o) => o.to_text(),
        Err(e) => format!("{}error: {}", e.output.to_text(), e.message),
    }
}

/// The index of the item the learner is at (step N is N - 1).
fn at(desk: &Desk) -> usize {
    desk.lessons
        .session
        .as_ref()
        .map(|s| s.at)
        .expect("a session")
}

/// A desk at the start of step `n` of the lesson (the lab did the steps before it).
fn at_step(id: &str, n: usize) -> Desk {
    let mut desk = crate::common::desk();
    run(&mut desk, &format!("lesson start {id}"));
    for _ in 1..n {
        run(&mut desk, "skip");
    }
    assert_eq!(at(&desk), n - 1);
    desk
}

/// The prose of a step, its task left out.
fn prose(l: &Lesson, n: usize) -> String {
    l.steps[n - 1].text.join("\n")
}

#[test]
fn chapters_4_and_6_pass_every_decoy() {
    for id in [CH4, CH6] {
        let errs = play::verify_with(&lesson(id), true, true);
        assert!(
            errs.is_empty(),
            "{id}:\n{}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn ch4_step_1_survives_a_mistyped_pod() {
    let mut desk = at_step(CH4, 1);
    // The typo takes 10.244.1.2; web gets .3, and the step is done all the same.
    run(&mut desk, "pod create wbe --node node-1 --label app=web");
    assert_eq!(at(&desk), 0);
    run(&mut desk, "pod create web --node node-1 --label app=web");
    assert_eq!(at(&desk), 1, "web on node-1 with app=web completes step 1");
    // Its authored hints teach instead of repeating the command.
    let l = lesson(CH4);
    assert!(
        l.steps[0]
            .hints
            .iter()
            .all(|h| !h.text.contains("pod create web --node node-1")),
        "{:?}",
        l.steps[0].hints
    );
}

#[test]
fn ch6_step_1_survives_a_mistyped_pod() {
    let mut desk = at_step(CH6, 1);
    run(&mut desk, "pod create wbe --node node-1");
    assert_eq!(at(&desk), 0);
    // web gets 10.244.1.3, not the 10.244.1.2 the step used to pin.
    run(&mut desk, "pod create web --node node-1");
    assert_eq!(at(&desk), 1, "web on node-1 completes step 1");
}

#[test]
fn ch4_step_2_needs_the_bridge_add_record() {
    let mut desk = at_step(CH4, 2);
    // The latest record is bandwidth's ADD: not the one the step is about.
    run(&mut desk, "show wire");
    run(
        &mut desk,
        "echo 'CNI_CONTAINERID= K8S_POD_INFRA_CONTAINER_ID= \"interface\": 2'",
    );
    assert_eq!(at(&desk), 1);
    run(&mut desk, "show wire --last bridge:ADD");
    assert_eq!(at(&desk), 2);
}

#[test]
fn ch4_step_5_refuses_the_wrong_node() {
    let mut desk = at_step(CH4, 5);
    run(&mut desk, "pod create app --node node-1 --pvc data");
    run(&mut desk, "get pods");
    assert_eq!(at(&desk), 4, "app on node-1 could never start (step 6)");
    // The way back the hint gives.
    run(&mut desk, "lesson retry");
    run(&mut desk, "pod create app --node node-2 --pvc data");
    run(&mut desk, "get pods");
    assert_eq!(at(&desk), 5);
}

#[test]
fn ch4_step_13_needs_the_vxlan_drop_not_its_words() {
    let mut desk = at_step(CH4, 13);
    run(&mut desk, "pod create db --node node-2 --label app=db");
    // On host-gw 1500 bytes fit: the trace is delivered.
    let out = run(&mut desk, "trace web db --size 1500");
    assert!(out.contains("delivered to default/db"), "{out}");
    run(
        &mut desk,
        "echo \"does not fit node-1's flannel.1 (mtu 1450) ICMP fragmentation needed (mtu = 1450)\"",
    );
    assert_eq!(
        at(&desk),
        12,
        "an echo after a delivered trace is no MTU drop"
    );
    run(&mut desk, "network use flannel-vxlan");
    run(&mut desk, "trace web db --size 1500");
    assert_eq!(at(&desk), 13);
}

#[test]
fn ch4_step_16_refuses_a_policy_that_denies_web() {
    let mut desk = at_step(CH4, 16);
    // A policy that lets in app=db only: web is denied by the policies (flannel lets it
    // through all the same, which is all the old check asked).
    run(
        &mut desk,
        "policy create db-allow-web --select app=db --ingress-from app=db --port 5432/TCP",
    );
    let out = run(&mut desk, "reach web db --port 5432");
    assert!(out.starts_with("allowed:"), "{out}");
    assert_eq!(at(&desk), 15);
    run(&mut desk, "policy delete db-allow-web");
    run(
        &mut desk,
        "policy create db-allow-web --select app=db --ingress-from app=web --port 5432/TCP",
    );
    run(&mut desk, "reach web db --port 5432");
    assert_eq!(at(&desk), 16);
}

#[test]
fn ch4_steps_16_and_17_say_what_flannel_enforces() {
    let l = lesson(CH4);
    let s16 = prose(&l, 16);
    assert!(
        s16.contains("Flannel enforces no NetworkPolicy"),
        "step 16: {s16}"
    );
    assert!(!s16.contains("The lab's policy agent works the same way"));
    let s17 = prose(&l, 17);
    assert!(
        s17.contains("a network that enforces policy would deny it"),
        "step 17: {s17}"
    );
    assert!(!s17.contains("so the policy denies it"), "step 17: {s17}");
    let q = l
        .quizzes
        .iter()
        .find(|q| q.question.contains("web-3"))
        .expect("the masquerade quiz");
    assert!(
        q.question
            .contains("On a network that enforces NetworkPolicy"),
        "{}",
        q.question
    );
    // The step is done on the policies' verdict while flannel's data plane allows the flow.
    let mut desk = at_step(CH4, 17);
    for c in &l.steps[16].commands {
        run(&mut desk, &c.text);
    }
    assert_eq!(at(&desk), 17);
    let out = run(&mut desk, "reach web-3 db --port 5432");
    assert!(out.starts_with("allowed:"), "{out}");
    assert!(
        out.contains(
            "the policies' verdict, which a network that enforces them would apply: denied"
        ),
        "{out}"
    );
}

#[test]
fn ch4_says_what_checks_a_volume_s_node() {
    let l = lesson(CH4);
    for n in [5, 21] {
        let text = prose(&l, n);
        assert!(
            !text.contains("Nothing checks the volume's node")
                && !text.contains("nothing checked that the volume can"),
            "step {n}: {text}"
        );
        assert!(
            text.contains("MountVolume.NodeAffinity check"),
            "step {n} names kubelet's check at mount: {text}"
        );
    }
}

#[test]
fn ch4_step_15_says_which_traces_met_flanneld_s_rules() {
    let text = prose(&lesson(CH4), 15);
    assert!(
        !text.contains("The traces in the last two steps matched rule 2"),
        "{text}"
    );
    assert!(text.contains("Step 13's never reached"), "{text}");
    // The lab agrees: the 1500-byte trace ends before POSTROUTING, the 1450-byte one
    // meets rule 2 on node-1.
    let mut desk = at_step(CH4, 15);
    let dropped = run(&mut desk, "trace web db --size 1500");
    assert!(!dropped.contains("POSTROUTING"), "{dropped}");
    let fits = run(&mut desk, "trace web db --size 1450");
    assert!(
        fits.contains(
            "nat POSTROUTING on node-1: -A FLANNEL-POSTRTG -s 10.244.1.0/24 -d 10.244.0.0/16"
        ),
        "{fits}"
    );
}

#[test]
fn ch6_step_3_needs_the_host_local_record() {
    let mut desk = at_step(CH6, 3);
    run(
        &mut desk,
        "echo 'delegated IPAM call \"type\": \"bridge\" CNI_IFNAME=eth0'",
    );
    assert_eq!(at(&desk), 2, "an echo shows nothing");
    run(&mut desk, "show wire --last bridge:ADD");
    assert_eq!(at(&desk), 2, "bridge's record is not host-local's");
    run(&mut desk, "show wire --last host-local:ADD");
    assert_eq!(at(&desk), 3);
}

#[test]
fn ch6_step_6_says_the_ipam_view_shows_the_whole_id() {
    let text = prose(&lesson(CH6), 6);
    assert!(!text.contains("the view shortens"), "{text}");
    let mut desk = at_step(CH6, 6);
    let id = desk.lab.nodes()["node-1"].sandboxes["default/web"]
        .id()
        .to_string();
    assert_eq!(id.len(), 64);
    let out = run(&mut desk, "show ipam node-1");
    assert!(out.contains(&format!("{id}\\r\\neth0")), "{out}");
}

#[test]
fn ch4_and_ch6_steps_keep_to_about_eight_lines_of_prose() {
    for id in [CH4, CH6] {
        for s in &lesson(id).steps {
            // Tables and lists are reference, not prose.
            let lines = s
                .text
                .iter()
                .flat_map(|t| t.lines())
                .filter(|l| {
                    !l.trim().is_empty()
                        && !l.starts_with([' ', '|'])
                        && !l.starts_with("- ")
                        && l.split_once(". ")
                            .is_none_or(|(n, _)| n.parse::<u32>().is_err())
                })
                .count();
            assert!(lines <= 9, "{id} step {}: {lines} lines of prose", s.number);
        }
    }
}

/// Issue 39 §4: ch4 step 25 asks `why pv` and `why va` of claim `scratch`; the checks read
/// the chains (`Seen::Why`): CreateVolume for the PV, ControllerPublishVolume for the
/// attachment to node-2. `why pv` of another claim's PV is not it.
#[test]
fn ch4_step_25_reads_why_of_scratch_s_volume() {
    const PV: &str = "pvc-2fbe9576-d8c6-dfea-2453-7869fae57bfb";
    let mut desk = at_step(CH4, 25);
    let pvs = run(&mut desk, "get pv -o name");
    let other = pvs
        .lines()
        .filter_map(|l| l.strip_prefix("persistentvolume/"))
        .find(|n| *n != PV)
        .expect("another PV")
        .to_string();
    run(&mut desk, &format!("why pv {other}"));
    let out = run(&mut desk, "why va csi-26f38b4cea46");
    assert!(
        out.contains("external-attacher set status.attached when ControllerPublishVolume answered"),
        "{out}"
    );
    assert_eq!(at(&desk), 24, "the PV of another claim");
    let out = run(&mut desk, &format!("why pv {PV}"));
    assert!(
        out.contains("made by external-provisioner CreateVolume"),
        "{out}"
    );
    assert_eq!(at(&desk), 25);
}

/// Issue 39 §1/§4: ch4 step 26 steps a new claim's CSI flow call by call up to
/// NodePublishVolume (`Seen::SteppedCall`). An echo of the words, the pod create failing,
/// or stepping only to NodeStageVolume is not it.
#[test]
fn ch4_step_26_steps_the_csi_calls_to_node_publish() {
    let mut desk = at_step(CH4, 26);
    run(&mut desk, "pvc create logs --size 1Gi --class local-wffc");
    for line in [
        "echo saw step csi NodePublishVolume",
        "pod create w1 --pvc logs --step",
        "pod create w9 --pvc nothing-here --step",
    ] {
        run(&mut desk, line);
        assert_eq!(at(&desk), 25, "step 26 done after `{line}`");
    }
    assert!(
        desk.stepping().is_none(),
        "a failed or waiting command opens nothing"
    );
    let out = run(
        &mut desk,
        "pod create w3 --node-selector kubernetes.io/hostname=node-1 --pvc logs --step",
    );
    assert!(
        out.contains(
            "made 4 CSI calls: CreateVolume → ControllerPublishVolume → NodeStageVolume → NodePublishVolume"
        ),
        "{out}"
    );
    run(&mut desk, "step");
    let out = run(&mut desk, "step");
    assert!(out.contains("── call 3/4: NodeStageVolume"), "{out}");
    assert!(out.contains("NODE_READY → VOL_READY"), "{out}");
    assert_eq!(at(&desk), 25, "NodeStageVolume is not NodePublishVolume");
    let out = run(&mut desk, "step");
    assert!(
        out.contains("── call 4/4: NodePublishVolume · kubelet(node-1) ──"),
        "{out}"
    );
    assert!(out.contains("VOL_READY → PUBLISHED"), "{out}");
    assert_eq!(at(&desk), 26);
}

/// ch6 step 18 asks `why rule` of flanneld's masquerade rule; the check reads the chain's
/// typed writer (`Link::Chain`): an echo of the words, a rule number the chain does not
/// have (an error), the same rule on the other node, and flanneld's other chain are not it.
#[test]
fn ch6_step_18_reads_who_writes_the_masquerade_chain() {
    let mut desk = at_step(CH6, 18);
    run(
        &mut desk,
        "echo saw why rule node-1 FLANNEL-POSTRTG by flanneld",
    );
    let out = run(&mut desk, "why rule FLANNEL-POSTRTG 99 --node node-1");
    assert!(out.contains("error: FLANNEL-POSTRTG"), "{out}");
    run(&mut desk, "why rule FLANNEL-POSTRTG 5 --node node-2");
    run(&mut desk, "why rule FLANNEL-FWD 1 -t filter --node node-1");
    assert_eq!(at(&desk), 17, "none of those is node-1's FLANNEL-POSTRTG");
    let out = run(&mut desk, "why rule FLANNEL-POSTRTG 5 --node node-1");
    assert!(
        out.contains("FLANNEL-POSTRTG is flanneld's masquerade chain (--ip-masq)"),
        "{out}"
    );
    assert!(
        out.contains("flanneld on node-1 wrote it from node-1's lease"),
        "{out}"
    );
    assert_eq!(at(&desk), 18);
}

/// ch6 step 18 asks for the rule that masquerades pod traffic leaving the cluster (rule 5,
/// `-s 10.244.0.0/16 ! -d 224.0.0.0/4`). Rule 6 (`! -s 10.244.0.0/16 -d 10.244.0.0/16`) has
/// the same `-j MASQUERADE --random-fully` and passed a check on those words; the check now
/// reads the rule's typed match.
#[test]
fn ch6_step_18_needs_the_rule_for_traffic_leaving_the_cluster() {
    let mut desk = at_step(CH6, 18);
    let out = run(&mut desk, "why rule FLANNEL-POSTRTG 6 --node node-1");
    assert!(out.contains("! -s 10.244.0.0/16 -d 10.244.0.0/16"), "{out}");
    assert_eq!(at(&desk), 17, "rule 6 passed");
    let out = run(&mut desk, "why rule FLANNEL-POSTRTG 4 --node node-1");
    assert!(!out.contains("error"), "{out}");
    assert_eq!(at(&desk), 17, "rule 4 (a RETURN) passed");
    run(&mut desk, "why rule FLANNEL-POSTRTG 5 --node node-1");
    assert_eq!(at(&desk), 18);
}

/// ch6 step 16 asks for ALREADY_EXISTS from `vol-a` asked again at 2Gi: a conflict on
/// another volume (`zzz` at 1Gi, then 5Gi) after the two 1Gi calls is not it.
#[test]
fn ch6_step_16_needs_the_conflict_on_vol_a() {
    let mut desk = at_step(CH6, 16);
    for l in [
        "csi create-volume vol-a --size 1Gi",
        "csi create-volume vol-a --size 1Gi",
        "csi create-volume zzz --size 1Gi",
        "csi create-volume zzz --size 5Gi",
    ] {
        run(&mut desk, l);
    }
    assert_eq!(at(&desk), 15, "a conflict on zzz passed");
    let out = run(&mut desk, "csi create-volume vol-a --size 2Gi");
    assert!(out.contains("ALREADY_EXISTS"), "{out}");
    assert_eq!(at(&desk), 16);
}

/// ch6 step 17 asks for a snapshot `logs-snap` of claim `logs`: one of another claim
/// (`scratch`, left by chapter 6's steps before) is not it.
#[test]
fn ch6_step_17_needs_the_snapshot_of_logs() {
    let mut desk = at_step(CH6, 17);
    for l in [
        "pvc create logs --size 1Gi",
        "pod create logger --pvc logs",
        "pvc expand logs 2Gi",
        "snapshot create logs-snap --pvc scratch",
    ] {
        run(&mut desk, l);
    }
    assert_eq!(at(&desk), 16, "a snapshot of scratch passed");
    run(&mut desk, "snapshot delete logs-snap");
    run(&mut desk, "snapshot create logs-snap --pvc logs");
    assert_eq!(at(&desk), 17);
}

/// QA 21 §2: ch4 step 9 ("What a repeat does") counted two publishes and two unpublishes,
/// so publish, unpublish, publish, unpublish passed without a single repeat. The step now
/// needs each call made twice in a row with the same request; ch6 step 15 likewise.
#[test]
fn ch4_step_9_and_ch6_step_15_need_a_call_repeated() {
    let publish = "csi controller-publish pvc/data --node node-2";
    let unpublish = "csi controller-unpublish pvc/data --node node-2";
    let mut desk = at_step(CH4, 9);
    for line in [publish, unpublish, publish, unpublish] {
        run(&mut desk, line);
    }
    assert_eq!(at(&desk), 8, "step 9 done without a repeat");
    let hints = run(&mut desk, "hint") + &run(&mut desk, "hint") + &run(&mut desk, "hint");
    assert!(hints.contains("A repeat is the same call again"), "{hints}");
    // An echo of the words is not the call.
    run(
        &mut desk,
        "echo ControllerPublishVolume ControllerPublishVolume node-2 data",
    );
    assert_eq!(at(&desk), 8);
    // Publish twice in a row, then unpublish twice in a row.
    for line in [publish, publish, unpublish, unpublish] {
        run(&mut desk, line);
    }
    assert_eq!(at(&desk), 9, "step 9 done by the repeats");

    // A repeat to another node is no repeat of the task's call (node-1: NOT_FOUND).
    let mut desk = at_step(CH4, 9);
    for line in [
        publish,
        "csi controller-publish pvc/data --node node-1",
        unpublish,
        "csi controller-unpublish pvc/data --node node-1",
    ] {
        run(&mut desk, line);
    }
    assert_eq!(at(&desk), 8, "step 9 done with the second calls failing");

    // ch6 step 15: NodePublish, NodeUnpublish alternated is not it either.
    let l = lesson(CH6);
    let step = &l.steps[14];
    let lines: Vec<String> = step
        .commands
        .iter()
        .map(|c| c.text.replace("${mnt}", "demo"))
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let mut desk = at_step(CH6, 15);
    for i in [0, 2, 1, 3] {
        run(&mut desk, &lines[i]);
    }
    assert_eq!(at(&desk), 14, "ch6 step 15 done without a repeat");
    for line in &lines {
        run(&mut desk, line);
    }
    assert_eq!(at(&desk), 15, "ch6 step 15 done by the repeats");
}

/// QA 25 §2: ch6 step 13 asks for reader-a and reader-b on node-2, both using claim data,
/// and passed with no reader-a at all (a hand-made NodePublish made up the second target)
/// or a reader-a that mounts nothing. Both readers must use the claim.
#[test]
fn ch6_step_13_wants_both_readers_using_the_claim() {
    for decoy in [
        &[
            "csi node-publish pvc/data --node node-2 --target /mnt/x --access SINGLE_NODE_MULTI_WRITER",
            "pod create reader-b --node node-2 --pvc data",
            "show wire --last NodePublishVolume",
        ][..],
        &[
            "pod create reader-a --node node-2",
            "csi node-publish pvc/data --node node-2 --target /mnt/x --access SINGLE_NODE_MULTI_WRITER",
            "pod create reader-b --node node-2 --pvc data",
            "show wire --last NodePublishVolume",
        ][..],
        &[
            "pod create reader-c --node node-2 --pvc data",
            "pod create reader-a --node node-2",
            "pod create reader-b --node node-2 --pvc data",
            "show wire --last NodePublishVolume",
        ][..],
    ] {
        let mut desk = at_step(CH6, 13);
        for l in decoy {
            run(&mut desk, l);
        }
        assert_eq!(at(&desk), 12, "step 13 passed with {decoy:?}");
    }
    let mut desk = at_step(CH6, 13);
    for l in [
        "pod create reader-a --node node-2 --pvc data",
        "pod create reader-b --node node-2 --pvc data",
        "show wire --last NodePublishVolume",
    ] {
        run(&mut desk, l);
    }
    assert_eq!(at(&desk), 13);
}

/// QA 25 §13: ch6 steps 2 and 3 ask for the latest bridge and host-local ADD, `web`'s, and
/// took the record of a `web` deleted since (on the other node, `show wire 0` and `show wire
/// 1`). The record must be the call for the pod as it is now.
#[test]
fn ch6_steps_2_and_3_want_the_add_of_the_pod_as_it_is_now() {
    let mut desk = at_step(CH6, 1);
    for l in [
        "pod create web --node node-2",
        "pod delete web",
        "pod create web --node node-1",
    ] {
        run(&mut desk, l);
    }
    assert_eq!(at(&desk), 1, "step 1 done");
    run(&mut desk, "show wire 0");
    assert_eq!(at(&desk), 1, "step 2 passed on the deleted web's ADD");
    run(&mut desk, "show wire --last bridge:ADD");
    assert_eq!(at(&desk), 2);
    run(&mut desk, "show wire 1");
    assert_eq!(at(&desk), 2, "step 3 passed on the deleted web's IPAM ADD");
    run(&mut desk, "show wire --last host-local:ADD");
    assert_eq!(at(&desk), 3);
}
