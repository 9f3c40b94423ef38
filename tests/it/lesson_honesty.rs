//! What a learner hands in and what completes a step must be what the learner did:
//! the line that completes a step is saved with it (a learner who quits then hands in the
//! lines that did it), a failure a step asks for is still a failure to a script's `!`,
//! a CSI call made by hand or the fields of two records do not stand for the call a
//! component made for the lesson's claim, and a quiz answer that is no option uses no try
//! while a wrong one is graded `wrong`.

use crate::common::desk;
use lab_engine::lesson::grade::{self, QuizResult};
use lab_engine::script::{self, RunOptions};

/// Start `lesson` and skip `n` items (the lab does each step).
fn at_item(lesson: &str, n: usize) -> lab_engine::Desk {
    let mut d = desk();
    d.execute(&format!("lesson start {lesson}"))
        .expect("starts");
    for _ in 0..n {
        d.execute("skip").expect("skips");
    }
    d
}

/// Whether `lines`, typed after `skips` items of `lesson`, complete `step` (failures allowed:
/// a decoy may fail on purpose).
fn completes(
    lesson: &str,
    skips: usize,
    lines: impl IntoIterator<Item = impl AsRef<str>>,
    step: u32,
) -> bool {
    let mut d = at_item(lesson, skips);
    for line in lines {
        let _ = d.execute(line.as_ref());
    }
    done(&d, step)
}

fn done(d: &lab_engine::Desk, step: u32) -> bool {
    d.lessons
        .session
        .as_ref()
        .is_some_and(|s| s.progress.steps.contains(&step))
}

#[test]
fn the_line_that_completes_a_step_is_saved_with_it() {
    let mut d = desk();
    d.execute("lesson start ch2-core-ideas").unwrap();
    d.execute("cni add c1 --node node-1").unwrap();
    assert!(done(&d, 1), "step 1 is done by its ADD");
    let saved = d.lessons.progress().of("ch2-core-ideas");
    assert!(saved.steps.contains(&1));
    let last = saved.transcript.lines.last().map(|l| l.line.as_str());
    assert_eq!(
        last,
        Some("cni add c1 --node node-1"),
        "the saved transcript ends with the line that did step 1"
    );
}

#[test]
fn a_failure_a_step_asks_for_is_still_a_failure_to_a_script() {
    let lines = "lesson start ch2-core-ideas\n\
        cni add c1 --node node-1\n\
        show wire --last bridge:ADD\n\
        csi get-plugin-info\n\
        csi probe\n\
        show wire\n";
    let run = |text: &str| {
        let mut d = desk();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let ok = script::run(&mut d, text, RunOptions::default(), &mut out, &mut err).unwrap();
        (ok, d, String::from_utf8_lossy(&err).into_owned())
    };
    // Step 4 asks for the second ADD to fail: written `!`, the script passes and the step
    // is done.
    let (ok, d, err) = run(&format!("{lines}! cni add c1 --node node-1\n"));
    assert!(ok, "the `!` line failed as written: {err}");
    assert!(done(&d, 4));
    // Written without `!`, the same line is a failure the script reports.
    let (ok, d, _) = run(&format!("{lines}cni add c1 --node node-1\n"));
    assert!(!ok, "a failed line fails the script, step or not");
    assert!(done(&d, 4));
}

#[test]
fn a_csi_call_made_by_hand_does_not_stand_for_the_provisioner_s() {
    // ch6 step 11: a class `fast` with type=ssd, a 10Gi claim of it, its CreateVolume.
    let mut d = at_item("ch6-source-walkthrough", 10);
    d.execute("pvc create data --size 10Gi").unwrap();
    d.execute("csi create-volume fake --size 10Gi --param type=ssd")
        .unwrap();
    assert!(!done(&d, 11), "a hand-made CreateVolume with the fields");
    // ch7 step 20: a failed hand-made restore does not stand for the claim's.
    let mut d = at_item("ch7-hands-on", 19);
    d.execute("pvc create db-restore --size 10Gi").unwrap();
    let _ = d.execute("csi create-volume q --size 1Gi --from-snapshot snap-1a2b3c4d");
    assert!(
        !done(&d, 20),
        "a failed hand-made CreateVolume from a snapshot"
    );
    // The task as written completes step 11.
    let mut d = at_item("ch6-source-walkthrough", 10);
    for line in [
        "sc create fast --param type=ssd",
        "pvc create data --size 10Gi --class fast",
        "show wire",
    ] {
        d.execute(line).unwrap();
    }
    assert!(done(&d, 11), "the task's own commands");
}

#[test]
fn one_record_must_show_all_of_a_step_s_facts_about_a_call() {
    // ch6 step 12 asks for scratch's CreateVolume: 1Gi, preferred node-2. The claim is
    // provisioned for real, but the record shown is another claim's, and the 1Gi with
    // node-2 comes from a call made by hand.
    let mut d = at_item("ch6-source-walkthrough", 11);
    for line in [
        "sc create local --binding WaitForFirstConsumer",
        "pvc create scratch --size 1Gi --class local",
        "pod create trainer --node-selector kubernetes.io/hostname=node-2 --pvc scratch",
        "show wire --last CreateVolume",
    ] {
        d.execute(line).unwrap();
    }
    assert!(done(&d, 12), "the task's own commands");

    let mut d = at_item("ch6-source-walkthrough", 11);
    for line in [
        "pvc create other --size 10Gi",
        "show wire --last CreateVolume",
        "sc create local --binding WaitForFirstConsumer",
        "pvc create scratch --size 1Gi --class local",
        "pod create trainer --node-selector kubernetes.io/hostname=node-2",
        "csi create-volume x --size 1Gi --node node-2",
    ] {
        d.execute(line).unwrap();
    }
    assert!(!done(&d, 12), "facts from two records");
}

/// QA 24 §7: `lesson answer` with no words says what the current quiz accepts (its
/// letters, or what a prediction names), as a wrong letter does, and uses no try.
#[test]
fn an_empty_answer_says_what_the_quiz_accepts_and_uses_no_try() {
    use lab_engine::lesson::{Item, QuizKind};
    let mut d = desk();
    d.execute("lesson start ch2-core-ideas").unwrap();
    let mut saw = (false, false);
    while saw != (true, true) {
        let Some(Item::Quiz(i, quiz)) = d.lessons.session.as_ref().map(|s| s.current()) else {
            if matches!(
                d.lessons.session.as_ref().map(|s| s.current()),
                Some(Item::Finished)
            ) {
                break;
            }
            d.execute("skip").unwrap();
            continue;
        };
        let predict = matches!(quiz.kind, QuizKind::Predict { .. });
        let accepted = quiz.accepted();
        let e = d.execute("lesson answer").unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "`lesson answer` needs your answer to quiz {}: {accepted}; no try is used",
                i + 1
            )
        );
        if predict {
            assert!(
                accepted.ends_with("(`lesson answer PREDICTION`)"),
                "{accepted}"
            );
            saw.1 = true;
        } else {
            assert!(accepted.starts_with("answer A, B"), "{accepted}");
            saw.0 = true;
        }
        assert_eq!(d.lessons.session.as_ref().unwrap().wrong_answers, 0);
        d.execute("skip").unwrap();
    }
    assert_eq!(saw, (true, true), "a choice quiz and a prediction were met");
}

#[test]
fn a_quiz_answer_that_is_no_option_uses_no_try_and_a_wrong_one_is_graded_wrong() {
    let mut d = desk();
    d.execute("lesson start ch2-core-ideas").unwrap();
    let mut lines = vec!["lesson start ch2-core-ideas".to_string()];
    while !matches!(
        d.lessons.session.as_ref().map(|s| s.current()),
        Some(lab_engine::lesson::Item::Quiz(..))
    ) {
        d.execute("skip").unwrap();
        lines.push("skip".into());
    }
    let e = d.execute("lesson answer D").unwrap_err();
    assert!(
        e.message.contains("not one of this quiz's options") && e.message.contains("A, B or C"),
        "{}",
        e.message
    );
    let tries = d.lessons.session.as_ref().unwrap().wrong_answers;
    assert_eq!(tries, 0, "no try used");
    // Quiz 1's answer is C: B is wrong, and the grader says so with its line.
    let out = d.execute("lesson answer B").unwrap().to_text();
    assert!(out.contains("Not quite"), "{out}");
    lines.push("lesson answer B".into());
    let (numbered, verdict) = graded_ch2(lines);
    assert_eq!(
        verdict.quizzes.first().map(|(_, r)| r),
        Some(&QuizResult::Wrong {
            line: numbered.len()
        })
    );
}

/// How many `skip`s from the start reach ch2's first predict quiz whose command `wanted`
/// holds for, and its command.
fn predict_quiz(wanted: fn(&str) -> bool) -> (usize, String) {
    let mut d = desk();
    d.execute("lesson start ch2-core-ideas").unwrap();
    for skips in 0..200 {
        if let Some(lab_engine::lesson::Item::Quiz(_, q)) =
            d.lessons.session.as_ref().map(|s| s.current())
            && let lab_engine::lesson::QuizKind::Predict { run, .. } = &q.kind
            && wanted(run)
        {
            return (skips, run.clone());
        }
        d.execute("skip").unwrap();
    }
    panic!("ch2 has a predict quiz");
}

fn no_quiz_counted(d: &lab_engine::Desk) -> bool {
    d.lessons
        .session
        .as_ref()
        .is_some_and(|s| s.progress.quizzes.is_empty())
}

#[test]
fn a_prediction_made_after_running_the_command_is_refused() {
    let (skips, run) = predict_quiz(|_| true);
    let mut d = at_item("ch2-core-ideas", skips);
    d.execute(&run).unwrap();
    let e = d.execute("lesson answer ok").unwrap_err();
    assert!(
        e.message.contains("would not be a prediction"),
        "{}",
        e.message
    );
    assert!(no_quiz_counted(&d));

    // An ADD run before the quiz began: the lab's own run of it fails (a second ADD), and
    // nothing is counted.
    let (skips, run) = predict_quiz(|run| run.starts_with("cni add"));
    let mut d = at_item("ch2-core-ideas", skips - 1);
    d.execute(&run).unwrap();
    d.execute("skip").unwrap();
    let out = d.execute("lesson answer 10.244.1.7").unwrap().to_text();
    assert!(out.contains("cannot be checked"), "{out}");
    assert!(!out.contains("Right"), "{out}");
    assert!(no_quiz_counted(&d));
}

#[test]
fn pods_deleted_after_a_network_switch_leak_and_do_not_complete_the_step() {
    // ch3-architecture step 20: delete the Calico pods while Calico's file is in use, then
    // switch back. Switching first sends their DEL through the bridge chain.
    let mut d = at_item("ch3-architecture", 19);
    let switched = d.execute("network use flannel-host-gw").unwrap().to_text();
    assert!(
        switched.contains(
            "node-1: bgp-a was set up by network k8s-pod-network; its DEL now runs lab-net's chain"
        ),
        "the switch names the pod it strands: {switched}"
    );
    d.execute("delete pod bgp-a bgp-b").unwrap();
    d.execute("show routes node-1").unwrap();
    assert!(
        !done(&d, 20),
        "calico-ipam released nothing: the step is not done"
    );
    // calico-ipam running for another pod is not the two pods' release.
    d.execute("network use calico-bgp").unwrap();
    d.execute("pod create x --node node-1").unwrap();
    d.execute("delete pod x").unwrap();
    d.execute("network use flannel-host-gw").unwrap();
    d.execute("show routes node-1").unwrap();
    assert!(!done(&d, 20), "another pod's DEL is not bgp-a's");
    // The hint's way out: the step as it began, then the right order.
    d.execute("lesson retry").unwrap();
    d.execute("delete pod bgp-a bgp-b").unwrap();
    d.execute("network use flannel-host-gw").unwrap();
    d.execute("show routes node-1").unwrap();
    assert!(
        done(&d, 20),
        "both DELs through calico-ipam, then the switch"
    );
}

#[test]
fn a_dns_allow_seen_without_the_default_deny_does_not_complete_the_fix() {
    // ch5-core-modules step 11: the allow is a fix only while `deny-egress` isolates egress.
    let mut d = at_item("ch5-core-modules", 10);
    d.execute("policy delete deny-egress").unwrap();
    d.execute("pod create coredns -n kube-system --node node-2 --label k8s-app=kube-dns")
        .unwrap();
    d.execute("reach web kube-system/coredns --port 53/UDP")
        .unwrap();
    d.execute("policy create allow-dns --select '' --egress-to ns:kubernetes.io/metadata.name=kube-system --port 53/UDP --port 53/TCP --types Egress").unwrap();
    assert!(!done(&d, 11), "without deny-egress the allow fixes nothing");
    d.execute("policy create deny-egress --select '' --types Egress")
        .unwrap();
    d.execute("reach web kube-system/coredns --port 53/UDP")
        .unwrap();
    assert!(done(&d, 11), "with both policies, the flow is allowed now");
}

#[test]
fn an_allow_seen_under_other_policies_does_not_stand_for_the_step_s_allow() {
    // ch5-core-modules step 7: deny-all enforced, then db-allow-web lets web in. An
    // `allowed` seen while deny-all was deleted was judged by no policy at all.
    let mut d = at_item("ch5-core-modules", 6);
    d.execute("policy delete deny-all").unwrap();
    d.execute("reach web db --port 5432").unwrap();
    d.execute("policy create deny-all --select '' --types Ingress")
        .unwrap();
    d.execute("reach web db --port 5432").unwrap();
    d.execute("policy create db-allow-web --select app=db --ingress-from app=web --port 5432/TCP")
        .unwrap();
    assert!(!done(&d, 7), "the allow seen was not db-allow-web's");
    d.execute("reach web db --port 5432").unwrap();
    assert!(done(&d, 7), "seen again, judged by db-allow-web");
}

/// A wrong prediction ends its quiz: the command's output, just shown, is the answer, so a
/// second try would copy it (a throwaway guess, then the address printed, was "Right").
#[test]
fn a_wrong_prediction_has_no_second_try_after_the_output_showed_the_answer() {
    // ch2-core-ideas quiz 8 predicts the lease of `cni add c3`: a wrong answer runs it.
    let mut d = at_item("ch2-core-ideas", 21 + 7);
    let quiz = |d: &lab_engine::Desk| d.lessons.session.as_ref().map(|s| s.at);
    let at = quiz(&d);
    let answered = d.execute("lesson answer 192.0.2.1").unwrap().to_text();
    assert!(
        answered.contains("Not quite: the answer is") && answered.contains("one try"),
        "{answered}"
    );
    assert!(!answered.contains("try once more"), "{answered}");
    assert_ne!(quiz(&d), at, "the quiz is over");
    let s = d.lessons.session.as_ref().unwrap();
    assert!(s.progress.wrong.contains(&8) && !s.progress.quizzes.contains(&8));
}

/// Run lines on a desk, failures allowed (a decoy may fail on purpose).
fn run_all(d: &mut lab_engine::Desk, lines: &[&str]) {
    for l in lines {
        let _ = d.execute(l);
    }
}

#[test]
fn a_csi_record_shown_does_not_stand_for_the_calls_a_step_asks_the_learner_to_make() {
    // ch6 step 14: hint 2's `show wire` of kubelet's NodeStage is not the learner's call.
    let mut d = at_item("ch6-source-walkthrough", 13);
    run_all(
        &mut d,
        &["hint", "hint", "show wire --last NodeStageVolume"],
    );
    assert!(!done(&d, 14), "kubelet's record shown");
    run_all(
        &mut d,
        &["csi node-stage pvc/data --node node-2 --access SINGLE_NODE_MULTI_WRITER"],
    );
    assert!(done(&d, 14), "the learner's own NodeStage");

    // ch6 step 15: a kubelet publish shown, one publish of the learner's and an unpublish
    // of another target do not make two of each on /mnt/lab/demo.
    let mut d = at_item("ch6-source-walkthrough", 14);
    let publish = "csi node-publish pvc/data --node node-2 --target /mnt/lab/demo --access SINGLE_NODE_MULTI_WRITER";
    let unpublish = "csi node-unpublish pvc/data --node node-2 --target /mnt/lab/demo";
    run_all(
        &mut d,
        &[
            "show wire --last NodePublishVolume",
            publish,
            unpublish,
            "csi node-unpublish pvc/data --node node-2 --target /mnt/lab/nothing",
        ],
    );
    assert!(
        !done(&d, 15),
        "one publish and an unpublish of another target"
    );
    run_all(&mut d, &[publish, unpublish]);
    assert!(
        !done(&d, 15),
        "two of each on the learner's target, but none repeated (QA 21 §2)"
    );
    run_all(&mut d, &[publish, publish, unpublish, unpublish]);
    assert!(done(&d, 15), "each repeated on the learner's target");
}

#[test]
fn another_failure_the_wrong_order_or_the_wrong_rule_does_not_complete_a_ch6_step() {
    // Step 8: an ADD refused for another reason (a requested IP) is not the duplicate.
    let mut d = at_item("ch6-source-walkthrough", 7);
    run_all(
        &mut d,
        &[
            "cni add c1 --node node-1",
            "cni add c2 --node node-1 --ifname net1",
            "cni add c3 --node node-1 --args 'IgnoreUnknown=1;IP=10.244.1.3'",
        ],
    );
    assert!(!done(&d, 8), "code 999 for a requested IP");
    run_all(
        &mut d,
        &["cni add c1 --node node-1 --netns /var/run/netns/c2"],
    );
    assert!(done(&d, 8), "the duplicate allocation");

    // Step 7: api created before web is deleted never meets web's freed address.
    let mut d = at_item("ch6-source-walkthrough", 6);
    run_all(&mut d, &["pod create api --node node-1", "pod delete web"]);
    assert!(!done(&d, 7), "created before the delete");
    let mut d = at_item("ch6-source-walkthrough", 6);
    run_all(&mut d, &["pod delete web", "pod create api --node node-1"]);
    assert!(done(&d, 7), "created after the delete");
    let mut d = at_item("ch6-source-walkthrough", 6);
    run_all(&mut d, &["delete pod/web", "pod create api --node node-1"]);
    assert!(done(&d, 7), "deleted as kubectl deletes");

    // Step 18: `why` of another rule of FLANNEL-POSTRTG is not the MASQUERADE rule's.
    let mut d = at_item("ch6-source-walkthrough", 17);
    run_all(&mut d, &["why rule FLANNEL-POSTRTG 1 --node node-1"]);
    assert!(!done(&d, 18), "rule 1 (a RETURN)");
    run_all(&mut d, &["why rule FLANNEL-POSTRTG 5 --node node-1"]);
    assert!(done(&d, 18), "rule 5, the MASQUERADE --random-fully");

    // Step 16: the same size in other units is the same call.
    let mut d = at_item("ch6-source-walkthrough", 15);
    run_all(
        &mut d,
        &[
            "csi create-volume vol-a --size 1024Mi",
            "csi create-volume vol-a --size 1073741824",
            "csi create-volume vol-a --size 2Gi",
        ],
    );
    assert!(done(&d, 16), "1Gi written as 1024Mi and in bytes");
}

#[test]
fn ch7_steps_hold_the_task_s_policy_sizes_and_accept_kubectl_s_kind_names() {
    // Step 9: a policy that lets every pod in is not "only app=web".
    let mut d = at_item("ch7-hands-on", 8);
    let reach = ["reach web db --port 3306", "reach web db --port 8080"];
    run_all(
        &mut d,
        &[
            "pod create db --node node-2 --label app=db",
            "policy create db-allow-web --select app=db --port 3306/TCP",
        ],
    );
    run_all(&mut d, &reach);
    assert!(!done(&d, 9), "every pod admitted on 3306");
    let mut d = at_item("ch7-hands-on", 8);
    run_all(
        &mut d,
        &[
            "pod create db --node node-2 --label app=db",
            "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
        ],
    );
    run_all(&mut d, &reach);
    assert!(done(&d, 9));

    // Step 12: `po` and `pods` are the pod.
    let mut d = at_item("ch7-hands-on", 11);
    run_all(
        &mut d,
        &[
            "label po web tier=frontend",
            "label pods web tier=backend --overwrite --resource-version 1",
        ],
    );
    assert!(done(&d, 12), "kubectl's names for the kind");

    // Step 17: a snapshot of a 1Gi claim is not scenario 5's 10Gi volume.
    let mut d = at_item("ch7-hands-on", 16);
    run_all(
        &mut d,
        &[
            "pvc create db-data --size 1Gi",
            "snapshot create snap-db-v1 --pvc db-data",
        ],
    );
    assert!(!done(&d, 17), "1Gi");
    // Step 18: an expansion to 15Gi is not to 20Gi; 20480Mi is.
    let mut d = at_item("ch7-hands-on", 17);
    run_all(&mut d, &["pvc expand db-data 15Gi", "get pvc db-data"]);
    assert!(!done(&d, 18), "15Gi");
    run_all(&mut d, &["pvc expand db-data 20480Mi", "get pvc db-data"]);
    assert!(done(&d, 18), "20Gi written in Mi");
}

/// A predict quiz whose command is a view: the same view asked more broadly during the
/// quiz (`show routes` for `show routes node-1`) showed the answer, and is refused as
/// running the command is; so does a view of the same route elsewhere.
#[test]
fn a_prediction_after_a_broader_view_of_the_same_thing_is_refused() {
    let mut d = desk();
    d.execute("lesson start ch3-architecture").unwrap();
    let mut run = None;
    for _ in 0..200 {
        if let Some(lab_engine::lesson::Item::Quiz(_, q)) =
            d.lessons.session.as_ref().map(|s| s.current())
            && let lab_engine::lesson::QuizKind::Predict { run: r, .. } = &q.kind
            && r.starts_with("show routes ")
        {
            run = Some(r.clone());
            break;
        }
        d.execute("skip").unwrap();
    }
    let run = run.expect("ch3-architecture has a predict quiz on `show routes NODE`");
    let node = run.rsplit(' ').next().unwrap().to_string();
    // Helpers' play, stop 66: every node routes to node-3's pods through the same next
    // hop, so another node's table, its neighbours or node-3's links give it away too.
    let other = if node == "node-1" { "node-2" } else { "node-1" };
    for view in [
        format!("show routes {other}"),
        format!("show neigh {other}"),
        "show links node-3".to_string(),
    ] {
        d.execute(&view).unwrap();
        let e = d.execute("lesson answer 10.244.3.0").unwrap_err();
        assert!(
            e.message.contains("would not be a prediction"),
            "{view}: {}",
            e.message
        );
    }
    let mut d = desk();
    d.execute("lesson start ch3-architecture").unwrap();
    while !matches!(
        d.lessons.session.as_ref().map(|s| s.current()),
        Some(lab_engine::lesson::Item::Quiz(_, q)) if matches!(&q.kind, lab_engine::lesson::QuizKind::Predict { run: r, .. } if *r == run)
    ) {
        d.execute("skip").unwrap();
    }
    d.execute("show routes").unwrap();
    let e = d.execute("lesson answer 10.0.0.1").unwrap_err();
    assert!(
        e.message.contains("which shows what") && e.message.contains("would not be a prediction"),
        "{}",
        e.message
    );
    assert!(no_quiz_counted(&d));
}

/// An experiment during a predict quiz gives its answer away as running the command
/// does: ADD another container before predicting c3's address, and the answer is refused;
/// the view the question points to (`show ipam NODE`) is not an experiment.
#[test]
fn a_prediction_after_an_experiment_that_made_the_plugins_act_is_refused() {
    let (skips, run) = predict_quiz(|run| run.starts_with("cni add"));
    let node = run.rsplit(' ').next().unwrap().to_string();
    let mut d = at_item("ch2-core-ideas", skips);
    d.execute(&format!("show ipam {node}")).unwrap();
    d.execute(&format!("cni add probe1 --node {node}")).unwrap();
    let e = d.execute("lesson answer 10.244.1.9").unwrap_err();
    assert!(
        e.message.contains("cni add probe1") && e.message.contains("would not be a prediction"),
        "{}",
        e.message
    );
    assert!(no_quiz_counted(&d));

    // The view alone is what the question offers: the answer is judged.
    let mut d = at_item("ch2-core-ideas", skips);
    d.execute(&format!("show ipam {node}")).unwrap();
    let out = d.execute("lesson answer 10.244.1.250").unwrap().to_text();
    assert!(out.contains("Your prediction"), "{out}");
}

#[test]
fn a_pod_the_task_says_the_scheduler_places_or_mounts_read_only_must_be_so() {
    // ch4 step 21: db-3 pinned with --node is not placed by the scheduler.
    let mut d = at_item("ch4-runtime-workflow", 20);
    run_all(
        &mut d,
        &[
            "pod delete db-2",
            "pod create db-3 --node node-1 --pvc db-data",
            "tick 2",
        ],
    );
    assert!(!done(&d, 21), "pinned with --node");
    let mut d = at_item("ch4-runtime-workflow", 20);
    run_all(
        &mut d,
        &["pod delete db-2", "pod create db-3 --pvc db-data", "tick 2"],
    );
    assert!(done(&d, 21), "placed by the scheduler");

    // ch5 step 24: infer-1 mounted read-write is not "both read-only".
    let lines = |first: &'static str| {
        [
            "pvc create weights --size 1Gi --access ROX --from-snapshot ckpt-snap",
            first,
            "pod create infer-2 --pvc weights:ro",
            "show wire --last NodePublishVolume --node node-2",
        ]
    };
    let mut d = at_item("ch5-core-modules", 23);
    run_all(&mut d, &lines("pod create infer-1 --pvc weights"));
    assert!(!done(&d, 24), "infer-1 read-write");
    let mut d = at_item("ch5-core-modules", 23);
    run_all(&mut d, &lines("pod create infer-1 --pvc weights:ro"));
    assert!(done(&d, 24), "both read-only");
}

#[test]
fn a_pod_recreated_by_hand_is_not_the_kubelet_s_retry() {
    // ch2 step 16: b deleted and created again runs at .2, but nothing converged.
    let mut d = at_item("ch2-core-ideas", 15);
    run_all(
        &mut d,
        &["pod delete a", "pod delete b", "pod create b --node tiny"],
    );
    assert!(!done(&d, 16), "b re-created by hand");
    let mut d = at_item("ch2-core-ideas", 15);
    run_all(&mut d, &["pod delete a", "tick 10"]);
    assert!(done(&d, 16), "the kubelet's retry");
}

/// `rewind` during a lesson goes back no further than the current step's start: before it,
/// the watch log and events a step's checks read would be undone, and a pod made by hand
/// would pass for the kubelet's retry (ch2 step 16 after `rewind 0`). Within the step, and
/// in ch2's rewind step, it rewinds as ever.
#[test]
fn rewind_during_a_lesson_stops_at_the_step_s_start() {
    let mut d = at_item("ch2-core-ideas", 15);
    let before = d.lab.position();
    let e = d.execute("rewind 0").unwrap_err();
    assert!(
        e.message.contains("before step 16 began") && e.message.contains("lesson retry"),
        "{}",
        e.message
    );
    assert_eq!(d.lab.position(), before, "a refused rewind changes nothing");
    run_all(
        &mut d,
        &[
            "node add tiny --cidr 10.244.9.0/30 --ip 192.168.0.9",
            "pod create b --node tiny",
        ],
    );
    assert!(!done(&d, 16));
    // Within the step, rewind works: delete a, rewind it, delete it again.
    d.execute("pod delete a").unwrap();
    d.execute("rewind -1").unwrap();
    d.execute("pod delete a").unwrap();
    d.execute("tick 10").unwrap();
    assert!(done(&d, 16));
}

/// Honest homework names no failed line: a command a step's own solution runs expecting it
/// to fail (ch2 step 10's CreateVolume the driver refuses) is not counted even when another
/// line completes the step; a typo still is.
#[test]
fn the_grader_does_not_count_a_failure_the_step_asks_for() {
    let lesson = desk().lessons.find_variant("ch2-core-ideas", 0).unwrap();
    let mut lines: Vec<String> = lesson
        .steps
        .iter()
        .flat_map(|s| &s.commands)
        .map(|c| c.text.clone())
        .collect();
    lines.push("pod craete typo".into());
    let (numbered, v) = graded_ch2(lines);
    assert_eq!(
        v.steps_done(),
        lesson.steps.len(),
        "{}",
        v.render().to_text()
    );
    assert_eq!(v.failed_lines, vec![numbered.len()], "only the typo");
}

/// A CSI call made by hand stands for the task's only on the task's claim's volume: the
/// same RPC on another claim's volume, or on a volume made by hand, is not it (ch6 steps
/// 14 and 15, ch4 step 9: `you called … for pvc data`).
#[test]
fn a_csi_call_by_hand_must_be_on_the_task_s_claim_s_volume() {
    // ch6 step 14: NodeStage of scratch's volume, not data's.
    let mut d = at_item("ch6-source-walkthrough", 13);
    run_all(
        &mut d,
        &["csi node-stage pvc/scratch --node node-2 --access SINGLE_NODE_MULTI_WRITER"],
    );
    assert!(!done(&d, 14), "another claim's volume staged");
    run_all(
        &mut d,
        &["csi node-stage pvc/data --node node-2 --access SINGLE_NODE_MULTI_WRITER"],
    );
    assert!(done(&d, 14), "data's volume staged");

    // ch6 step 15: publish and unpublish scratch's volume, twice each.
    let target = "--node node-2 --target /mnt/lab/demo";
    let twice = |claim: &str| {
        let publish =
            format!("csi node-publish pvc/{claim} {target} --access SINGLE_NODE_MULTI_WRITER");
        let unpublish = format!("csi node-unpublish pvc/{claim} {target}");
        [publish.clone(), publish, unpublish.clone(), unpublish]
    };
    assert!(
        !completes("ch6-source-walkthrough", 14, twice("scratch"), 15),
        "another claim's volume published"
    );
    assert!(
        completes("ch6-source-walkthrough", 14, twice("data"), 15),
        "data's volume published"
    );

    // ch4 step 9: a volume made by hand, published and unpublished twice on node-2.
    let mut d = at_item("ch4-runtime-workflow", 8);
    let out = d
        .execute("csi create-volume scratch --size 1Gi")
        .unwrap()
        .to_text();
    let id = out
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|w| w.starts_with("vol-"))
        .unwrap_or_else(|| panic!("a volume ID in {out}"))
        .to_string();
    let publish = format!("csi controller-publish {id} --node node-2");
    let unpublish = format!("csi controller-unpublish {id} --node node-2");
    run_all(&mut d, &[&publish, &publish, &unpublish, &unpublish]);
    assert!(!done(&d, 9), "a volume made by hand");
    let mut d = at_item("ch4-runtime-workflow", 8);
    run_all(
        &mut d,
        &[
            "csi controller-publish pvc/data --node node-2",
            "csi controller-publish pvc/data --node node-2",
            "csi controller-unpublish pvc/data --node node-2",
            "csi controller-unpublish pvc/data --node node-2",
        ],
    );
    assert!(done(&d, 9), "data's volume");
}

/// A clone or a restore of another source is not the task's: ch5 step 23 clones `state`,
/// ch7 step 20 restores `snap-db-v1` (`saw wire CreateVolume from pvc|snapshot …`).
#[test]
fn a_clone_or_restore_must_copy_the_task_s_source() {
    let lines = |source: &'static str| {
        [
            "snapshot create ckpt-snap --pvc ckpt-local",
            source,
            "show wire --last CreateVolume",
        ]
    };
    let mut d = at_item("ch5-core-modules", 22);
    run_all(
        &mut d,
        &lines("pvc create state-copy --size 1Gi --from-pvc shared"),
    );
    assert!(!done(&d, 23), "a clone of shared");
    let mut d = at_item("ch5-core-modules", 22);
    run_all(
        &mut d,
        &lines("pvc create state-copy --size 1Gi --from-pvc state"),
    );
    assert!(done(&d, 23), "a clone of state");

    // ch7 step 20: a restore from another snapshot of db-data.
    let mut d = at_item("ch7-hands-on", 19);
    run_all(
        &mut d,
        &[
            "snapshot create snap-other --pvc db-data",
            "pvc create db-restore --size 20Gi --from-snapshot snap-other",
            "show wire --last CreateVolume",
        ],
    );
    assert!(!done(&d, 20), "a restore from another snapshot");
    let mut d = at_item("ch7-hands-on", 19);
    run_all(
        &mut d,
        &[
            "pvc create db-restore --size 10Gi --from-snapshot snap-db-v1",
            "show wire",
        ],
    );
    assert!(done(&d, 20), "the restore from snap-db-v1");
}

/// ch3-architecture step 16 asks for CNI GC: a DEL of the leaked container by hand frees
/// the same lease but is not GC (`caused bridge GC on NODE`).
#[test]
fn a_del_by_hand_is_not_cni_gc() {
    let conf = "cni conf load assets/conflists/05-lab-v110.conflist --node node-1";
    // api's old sandbox, whose lease leaked in step 15 (the lab's IDs are deterministic).
    let leaked = "83deeb0faa31b3268b3ab8bb583bd92c38e666ed2647d132e3e131eb01d2244c";
    let mut d = at_item("ch3-architecture", 15);
    run_all(
        &mut d,
        &[
            conf,
            &format!("cni del {leaked} --node node-1"),
            "trace old slow",
        ],
    );
    assert!(
        d.lab
            .execute("show ipam node-1")
            .unwrap()
            .to_text()
            .contains("0 leased"),
        "the DEL by hand freed the lease"
    );
    assert!(!done(&d, 16), "a DEL by hand");
    let mut d = at_item("ch3-architecture", 15);
    run_all(&mut d, &[conf, "cni gc --node node-1", "trace old slow"]);
    assert!(done(&d, 16), "CNI GC");
}

/// ch4 step 10: reclaimPolicy Delete is external-provisioner's DeleteVolume and the PV
/// gone; a DeleteVolume by hand and the binder's pass leave the PV (`not pvc data pv
/// exists`, `caused external-provisioner`).
#[test]
fn a_volume_deleted_by_hand_is_not_reclaim_policy_delete() {
    let mut d = at_item("ch4-runtime-workflow", 9);
    d.execute("pvc delete data").unwrap();
    let id = d
        .lab
        .execute("show volumes")
        .unwrap()
        .to_text()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|w| w.starts_with("vol-"))
        .map(String::from)
        .expect("data's volume in show volumes");
    run_all(
        &mut d,
        &[&format!("csi delete-volume {id}"), "reconcile binder"],
    );
    assert!(!done(&d, 10), "DeleteVolume by hand, the PV left");
    let mut d = at_item("ch4-runtime-workflow", 9);
    run_all(&mut d, &["pvc delete data", "reconcile"]);
    assert!(done(&d, 10), "the control loops");
}

/// ch2 step 15: b's failure is the /30's pool running out, not an injected host-local
/// fault on a roomy /24 (`pod b event FailedCreatePodSandBox "no IP addresses
/// available"`, `node tiny cidr 10.244.9.0/30`).
#[test]
fn a_faked_plugin_failure_is_not_an_empty_pool() {
    let mut d = at_item("ch2-core-ideas", 14);
    run_all(
        &mut d,
        &[
            "node add tiny --cidr 10.244.9.0/24 --ip 192.168.0.9",
            "pod create a --node tiny",
            "fault inject host-local --node tiny --code 11 --times 5",
            "pod create b --node tiny",
        ],
    );
    assert!(!done(&d, 15), "an injected fault on a /24");
    let mut d = at_item("ch2-core-ideas", 14);
    run_all(
        &mut d,
        &[
            "node add tiny --cidr 10.244.9.0/30 --ip 192.168.0.9",
            "pod create a --node tiny",
            "pod create b --node tiny",
        ],
    );
    assert!(done(&d, 15), "the /30 runs out");
}

/// ch3-csi-multus step 3: Pending because its class waits for a consumer is not Pending
/// until the provisioner runs.
#[test]
fn a_claim_waiting_for_a_consumer_is_not_waiting_for_its_provisioner() {
    let mut d = at_item("ch3-csi-multus", 2);
    run_all(
        &mut d,
        &[
            "pvc create data --size 1Gi --class local-wffc",
            "mode step",
            "get pvc",
        ],
    );
    assert!(!done(&d, 3), "WaitForFirstConsumer");
    let mut d = at_item("ch3-csi-multus", 2);
    run_all(
        &mut d,
        &["mode step", "pvc create data --size 1Gi", "get pvc"],
    );
    assert!(done(&d, 3), "step mode");
}

/// ch3-csi-multus steps 12 and 13: the task says the scheduler places the training pods;
/// pinned with `--node` they are not placed (`pod … event Scheduled`).
#[test]
fn sriov_pods_the_task_says_the_scheduler_places_must_be_so() {
    let nad = r#"nad create rdma-net --resource intel.com/sriov_netdevice --config '{"cniVersion":"1.0.0","type":"sriov","ipam":{"type":"host-local","subnet":"10.56.0.0/24"}}'"#;
    let vf = "--resource intel.com/sriov_netdevice=1";
    let step12 = |node: &str| {
        [
            nad.to_string(),
            format!("pod create train-0 {node} --networks storage-net,rdma-net {vf}"),
            "show links gpu-1 --pod train-0".to_string(),
        ]
    };
    assert!(
        !completes("ch3-csi-multus", 11, step12("--node gpu-1"), 12),
        "train-0 pinned"
    );
    assert!(
        completes("ch3-csi-multus", 11, step12(""), 12),
        "train-0 placed by the scheduler"
    );

    let step13 = |node: &str| {
        [
            format!("pod create train-1 {node} --networks rdma-net {vf}"),
            format!("pod create train-2 --networks rdma-net {vf}"),
            "describe pod train-2".to_string(),
        ]
    };
    assert!(
        !completes("ch3-csi-multus", 12, step13("--node gpu-1"), 13),
        "train-1 pinned"
    );
    assert!(
        completes("ch3-csi-multus", 12, step13(""), 13),
        "train-1 placed by the scheduler"
    );
}

/// ch5 step 14: a node with another PF or another count of VFs is not the task's
/// (`node … sriov-pf … vfs 4`, `allocatable intel.com/sriov_netdevice 4`).
#[test]
fn a_node_with_another_pf_or_vf_count_is_not_the_task_s() {
    for (line, honest) in [
        ("node add gpu-1 --sriov-pf eth9 --vfs 1", false),
        ("node add gpu-1 --sriov-pf eth9 --vfs 4", false),
        ("node add gpu-1 --sriov-pf ens1f0 --vfs 1", false),
        ("node add gpu-1 --sriov-pf ens1f0 --vfs 4", true),
    ] {
        let mut d = at_item("ch5-core-modules", 13);
        run_all(&mut d, &[line, "describe node gpu-1"]);
        assert_eq!(done(&d, 14), honest, "{line}");
    }
}

/// ch3-architecture step 21: another node with node-3's podCIDR and address writes the
/// same route, but the task adds node-3 (`node node-3 cidr 10.244.3.0/24`).
#[test]
fn another_node_with_node_3_s_cidr_is_not_node_3() {
    let lines = |node: &str| {
        [
            format!("node add {node} --cidr 10.244.3.0/24 --ip 192.168.0.3"),
            "show routes node-1".to_string(),
        ]
    };
    assert!(
        !completes("ch3-architecture", 20, lines("node-9"), 21),
        "node-9"
    );
    assert!(
        completes("ch3-architecture", 20, lines("node-3"), 21),
        "node-3"
    );
}

/// ch6 step 12: the task creates a class `local`; the built-in `local-wffc`, or a class
/// `local` made but not used, is not it (`sc local binding …`, `pvc scratch class local`).
#[test]
fn the_built_in_class_is_not_the_class_the_task_creates() {
    let rest = [
        "pod create trainer --node-selector kubernetes.io/hostname=node-2 --pvc scratch",
        "show wire --last CreateVolume",
    ];
    let mut d = at_item("ch6-source-walkthrough", 11);
    run_all(
        &mut d,
        &["pvc create scratch --size 1Gi --class local-wffc"],
    );
    run_all(&mut d, &rest);
    assert!(!done(&d, 12), "the built-in class");
    let mut d = at_item("ch6-source-walkthrough", 11);
    run_all(
        &mut d,
        &[
            "sc create local --binding WaitForFirstConsumer",
            "pvc create scratch --size 1Gi --class local-wffc",
        ],
    );
    run_all(&mut d, &rest);
    assert!(!done(&d, 12), "local made, local-wffc used");
    let mut d = at_item("ch6-source-walkthrough", 11);
    run_all(
        &mut d,
        &[
            "sc create local --binding WaitForFirstConsumer",
            "pvc create scratch --size 1Gi --class local",
        ],
    );
    run_all(&mut d, &rest);
    assert!(done(&d, 12), "the class local");
}

/// kubectl writes a switch as `--overwrite=true` too: ch7 step 12 takes it, and
/// `--overwrite=false` is the switch left out (no overwrite: the Conflict is then another
/// error). A value that is no boolean is refused, naming what a switch takes.
#[test]
fn kubectl_s_true_and_false_spellings_of_a_switch_are_the_switch() {
    let mut d = at_item("ch7-hands-on", 11);
    run_all(
        &mut d,
        &[
            "label pod web tier=frontend",
            "label pod web tier=backend --overwrite=true --resource-version=1",
        ],
    );
    assert!(done(&d, 12), "--overwrite=true");

    let mut d = at_item("ch7-hands-on", 11);
    run_all(
        &mut d,
        &[
            "label pod web tier=frontend",
            "label pod web tier=backend --overwrite=false --resource-version=1",
        ],
    );
    assert!(!done(&d, 12), "--overwrite=false is no --overwrite");

    let e = d
        .execute("label pod web tier=backend --overwrite=maybe")
        .unwrap_err();
    assert!(
        e.message
            .contains("invalid value \"maybe\" for --overwrite")
            && e.message.contains("--overwrite=false")
            && e.message.contains("usage: label"),
        "{}",
        e.message
    );
}

/// ch7's last predict quiz asks which runs first, `CNI DEL` or `NodeUnpublishVolume`:
/// `DEL` names the first.
#[test]
fn a_prediction_may_name_a_cni_command_without_cni() {
    let mut d = desk();
    d.execute("lesson start ch7-hands-on").unwrap();
    for _ in 0..200 {
        if let Some(lab_engine::lesson::Item::Quiz(_, q)) =
            d.lessons.session.as_ref().map(|s| s.current())
            && let lab_engine::lesson::QuizKind::Predict { answer, .. } = &q.kind
            && answer == "CNI DEL"
        {
            break;
        }
        d.execute("skip").unwrap();
    }
    let out = d.execute("lesson answer DEL").unwrap().to_text();
    assert!(out.contains("Right"), "{out}");
}

/// ch3-architecture step 7: bandwidth's ADD record of a pod deleted and made again without
/// a limit is not the pod the task asks for; the record shown must be the pod that exists
/// now (its UID), and that pod must carry the limit.
#[test]
fn a_deleted_pod_s_bandwidth_record_is_not_the_pod_made_again() {
    let ch3 = |last: &str| {
        [
            "pod create slow --node node-1 --bandwidth-ingress 10M".to_string(),
            "show wire".to_string(),
            "pod delete slow".to_string(),
            last.to_string(),
        ]
    };
    assert!(
        !completes(
            "ch3-architecture",
            6,
            ch3("pod create slow --node node-2"),
            7
        ),
        "ch3: the decoy"
    );
    assert!(
        completes(
            "ch3-architecture",
            6,
            [
                "pod create slow --node node-2 --bandwidth-ingress 10M",
                "show wire"
            ],
            7
        ),
        "ch3: the task"
    );
}

/// ch5-core-modules step 1: the same hole as ch3's step 7, with bandwidth's egress limit.
#[test]
fn a_deleted_pod_s_egress_limit_is_not_the_pod_made_again() {
    let ch5 = |last: &str| {
        [
            "pod create loader --node node-2 --bandwidth-egress 500M".to_string(),
            "show wire --last bandwidth:ADD".to_string(),
            "pod delete loader".to_string(),
            last.to_string(),
        ]
    };
    assert!(
        !completes(
            "ch5-core-modules",
            0,
            ch5("pod create loader --node node-1"),
            1
        ),
        "ch5: the decoy"
    );
    // Made again with the limit but its own record not shown: the old record is not it.
    assert!(
        !completes(
            "ch5-core-modules",
            0,
            ch5("pod create loader --node node-1 --bandwidth-egress 500M"),
            1
        ),
        "ch5: the old pod's record"
    );
    assert!(
        completes(
            "ch5-core-modules",
            0,
            [
                "pod create loader --node node-1 --bandwidth-egress 500M",
                "show wire --last bandwidth:ADD"
            ],
            1
        ),
        "ch5: the task"
    );
}

/// ch3-architecture's last predict quiz asks for a next hop: `via 10.244.3.0`, as a route
/// writes it, names the address; a wrong address after `via` is still wrong.
#[test]
fn a_next_hop_may_be_predicted_as_a_route_writes_it() {
    let at_quiz = || {
        let mut d = desk();
        d.execute("lesson start ch3-architecture").unwrap();
        for _ in 0..200 {
            if let Some(lab_engine::lesson::Item::Quiz(_, q)) =
                d.lessons.session.as_ref().map(|s| s.current())
                && let lab_engine::lesson::QuizKind::Predict { answer, .. } = &q.kind
                && answer == "10.244.3.0"
            {
                return d;
            }
            d.execute("skip").unwrap();
        }
        panic!("no predict quiz answers 10.244.3.0");
    };
    let mut d = at_quiz();
    let out = d.execute("lesson answer via 10.244.3.0").unwrap().to_text();
    assert!(out.contains("Right"), "{out}");
    let mut d = at_quiz();
    let out = d
        .execute("lesson answer via 192.168.0.3")
        .unwrap()
        .to_text();
    assert!(!out.contains("Right"), "{out}");
}

/// ch4-runtime-workflow step 27 asks for `pod delete w3 --step`; `delete pod w3 --step`
/// is the same command (`help delete`), so it completes the step too; another pod's
/// teardown does not.
#[test]
fn kubectl_s_verb_order_steps_the_same_teardown() {
    let at_step_27 = || {
        let mut d = desk();
        d.execute("lesson start ch4-runtime-workflow").unwrap();
        for _ in 0..200 {
            if let Some(lab_engine::lesson::Item::Step(s)) =
                d.lessons.session.as_ref().map(|s| s.current())
                && s.number == 27
            {
                return d;
            }
            d.execute("skip").unwrap();
        }
        panic!("no step 27");
    };
    for (line, honest) in [
        ("pod delete w3 --step", true),
        ("delete pod w3 --step", true),
        ("delete pod/w3 --step", true),
        ("kubectl delete pod w3 --step", true),
        ("delete pod w3", false),
    ] {
        let mut d = at_step_27();
        let _ = d.execute(line);
        for _ in 0..8 {
            let _ = d.execute("step");
        }
        assert_eq!(done(&d, 27), honest, "{line}");
    }
}

/// `grade` of `lines` (a submission of ch2-core-ideas at variant 0): the lines numbered
/// as the file holds them, and the verdict.
fn graded_ch2(lines: Vec<String>) -> (Vec<(usize, String)>, grade::Verdict) {
    let numbered: Vec<(usize, String)> = (1..).zip(lines).collect();
    let verdict = grade::replay(
        &mut desk(),
        "ch2-core-ideas",
        (0, None),
        &numbered,
        None,
        None,
    )
    .unwrap();
    (numbered, verdict)
}

/// The desk at `lesson`'s predict quiz whose answer is `answer`, and the lines that got
/// there (from `lesson start`).
fn at_predict_quiz(lesson: &str, answer: &str) -> (lab_engine::Desk, Vec<String>) {
    let mut d = desk();
    let mut lines = vec![format!("lesson start {lesson}")];
    d.execute(&lines[0]).unwrap();
    for _ in 0..200 {
        if let Some(lab_engine::lesson::Item::Quiz(_, q)) =
            d.lessons.session.as_ref().map(|s| s.current())
            && let lab_engine::lesson::QuizKind::Predict { answer: a, .. } = &q.kind
            && a == answer
        {
            return (d, lines);
        }
        d.execute("skip").unwrap();
        lines.push("skip".into());
    }
    panic!("{lesson} has no predict quiz answering {answer}");
}

/// QA 22 §1: a prediction that negates or hedges (`not ok`, `maybe ok`) or names two of the
/// question's options (`ok error`) stated no single answer; it was scored by the option
/// named first, so a hedge got the one try's credit, in the lesson and in `grade`. It is
/// refused as a choice answer that is no option is: no try used, nothing counted, and the
/// grader sees no answer. A plain sentence naming one option (`it is ok`) still counts.
#[test]
fn a_prediction_that_negates_hedges_or_names_two_options_uses_no_try() {
    for (lesson, answer, refused, right) in [
        (
            "ch2-core-ideas",
            "ok",
            &[
                "not ok",
                "ok error",
                "error ok",
                "ok/error",
                "it is not an error, ok",
                "maybe ok",
                "ok, probably",
                "never an error: ok",
            ][..],
            "it is ok",
        ),
        (
            "ch7-hands-on",
            "CNI DEL",
            &[
                "not CNI DEL",
                "not del",
                "CNI DEL NodeUnpublishVolume",
                "NodeUnpublishVolume, CNI DEL",
                "neither",
            ][..],
            "CNI DEL then NodeUnpublishVolume",
        ),
        // ch5's questions name their options in backticks too, so a sentence naming one
        // counts there as well (it was marked wrong: the options were plain words).
        (
            "ch5-core-modules",
            "Running",
            &["Pending or Running", "Running Pending", "not Pending"][..],
            "s3 is Running",
        ),
        // QA 23 §1: ch4's and ch6's questions offered no options, so a right answer with
        // a reason was marked wrong; they name them now.
        (
            "ch4-runtime-workflow",
            "bandwidth",
            &["bandwidth or bridge", "bridge bandwidth", "not bridge"][..],
            "bandwidth, since DEL runs the chain in reverse",
        ),
        (
            "ch6-source-walkthrough",
            "NodeUnpublishVolume",
            &[
                "NodeUnstageVolume NodeUnpublishVolume",
                "maybe NodeUnpublishVolume",
            ][..],
            "/csi.v1.Node/NodeUnpublishVolume",
        ),
        (
            "ch5-core-modules",
            "denied",
            &["allowed denied", "not allowed", "maybe denied"][..],
            "it is denied",
        ),
    ] {
        let (mut d, _) = at_predict_quiz(lesson, answer);
        for given in refused {
            let e = d
                .execute(&format!("lesson answer {given}"))
                .expect_err(given);
            assert!(
                e.message.contains("this try is not used")
                    && (e.message.contains("negates or hedges")
                        || e.message.contains("more than one of this quiz's options")),
                "{given}: {}",
                e.message
            );
            let s = d.lessons.session.as_ref().unwrap();
            assert_eq!(s.wrong_answers, 0, "{given}: no try used");
            assert!(no_quiz_counted(&d), "{given}: nothing counted");
            assert!(s.progress.wrong.is_empty(), "{given}: not marked wrong");
        }
        let out = d
            .execute(&format!("lesson answer {right}"))
            .unwrap()
            .to_text();
        assert!(out.contains("✓ Right"), "{right}: {out}");
    }

    // The grader replays the same lines: the hedge answers nothing, so quiz 7 is not right.
    let (mut d, mut lines) = at_predict_quiz("ch2-core-ideas", "ok");
    let quiz = d
        .lessons
        .session
        .as_ref()
        .map(|s| s.at - s.lesson.steps.len())
        .unwrap();
    let _ = d.execute("lesson answer ok error");
    lines.push("lesson answer ok error".into());
    let (_, verdict) = graded_ch2(lines);
    let result = verdict.quizzes.get(quiz).map(|(_, r)| r);
    assert_eq!(
        result,
        Some(&QuizResult::Unanswered),
        "{:?}",
        verdict.quizzes
    );
}
