//! The chapter 2 and chapter 7 lessons against the ways issue 35's learners passed steps
//! without doing them, or were stopped while doing them: each test starts the lesson, lets
//! the lab do the steps before (`skip`), types what a learner typed, and says whether the
//! step is done. The decoys of `lesson lint` run on both lessons too.

use lab_engine::Desk;
use lab_engine::lesson::catalog::Catalog;
use lab_engine::lesson::{Item, QuizKind, play};

const CH2: &str = "ch2-core-ideas";
const CH7: &str = "ch7-hands-on";

/// A desk in lesson `id`, at step `n` (1-based), the steps before done by the lab.
fn at_step(id: &str, n: usize) -> Desk {
    let mut desk = crate::common::desk();
    desk.execute(&format!("lesson start {id}"))
        .expect("the lesson starts");
    for _ in 1..n {
        desk.execute("skip").expect("skip");
    }
    assert_eq!(step(&desk), n, "at step {n}");
    desk
}

/// The step the learner is at (1-based).
fn step(desk: &Desk) -> usize {
    desk.lessons.session.as_ref().expect("a session").at + 1
}

/// Type lines as a learner does; whether each succeeds is not the point.
fn type_lines(desk: &mut Desk, lines: &[&str]) {
    for l in lines {
        let _ = desk.execute(l);
    }
}

#[test]
fn both_lessons_pass_every_decoy() {
    // Issue 35: ch2 steps 2, 3, 11, 12, 14, 19, 20 and ch7 steps 2, 4, 8–11, 15, 18, 20
    // passed on an echo of the words they looked for, without a command the task asked
    // for, or with the wrong node or pod.
    for l in Catalog::Embedded.load().lessons {
        if l.id != CH2 && l.id != CH7 {
            continue;
        }
        let errs = play::verify_with(&l, true, true);
        assert!(
            errs.is_empty(),
            "{}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn ch2_step_2_and_ch7_step_9_do_not_pass_on_an_echo() {
    let mut desk = at_step(CH2, 2);
    type_lines(
        &mut desk,
        &[
            "show wire --list",
            "echo 'bridge on node-1  ADD' CNI_CONTAINERID=c1 stdout:",
        ],
    );
    assert_eq!(step(&desk), 2, "a list and an echo show no record");
    type_lines(&mut desk, &["show wire --last bridge:ADD"]);
    assert_eq!(step(&desk), 3);

    let mut desk = at_step(CH7, 9);
    type_lines(
        &mut desk,
        &[
            "pod create db --node node-2 --label app=db",
            "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
            "reach web db --port 80",
            "echo enforces no NetworkPolicy",
        ],
    );
    assert_eq!(step(&desk), 9, "any reach and an echo");
    // The chapter's main result is asked for and shown, not only checked.
    type_lines(&mut desk, &["reach web db --port 8080"]);
    assert_eq!(step(&desk), 9, "web → db:3306 has not been asked");
    type_lines(&mut desk, &["reach web db --port 3306/tcp"]);
    assert_eq!(step(&desk), 10);
}

#[test]
fn ch2_step_7_repeats_the_del_on_the_same_node() {
    let mut desk = at_step(CH2, 7);
    type_lines(
        &mut desk,
        &["cni del c1 --node node-1", "cni del c1 --node node-2"],
    );
    assert_eq!(step(&desk), 7, "a DEL on node-2 is another attachment");
    type_lines(&mut desk, &["cni del c1 --node node-1"]);
    assert_eq!(step(&desk), 8);
}

#[test]
fn ch2_step_10_needs_the_repeated_create() {
    let mut desk = at_step(CH2, 10);
    type_lines(
        &mut desk,
        &[
            "csi create-volume v1 --size 1Gi",
            "csi create-volume v1 --size 2Gi",
            "csi delete-volume vol-missing",
        ],
    );
    assert_eq!(step(&desk), 10, "the same request twice was never sent");
    type_lines(&mut desk, &["csi create-volume v1 --size 1Gi"]);
    assert_eq!(step(&desk), 11);
}

#[test]
fn ch2_step_11_wants_web_on_node_1_and_the_next_step_works() {
    let mut desk = at_step(CH2, 11);
    type_lines(
        &mut desk,
        &[
            "pod create web --node node-2 --label app=web",
            "describe pod web",
        ],
    );
    assert_eq!(step(&desk), 11, "web on node-2 would strand step 12");
    // The authored hint says how to get back.
    let hints: String = (0..3)
        .map(|_| desk.execute("hint").unwrap().to_text())
        .collect();
    assert!(hints.contains("`pod delete web`"), "{hints}");
    type_lines(
        &mut desk,
        &[
            "pod delete web",
            "pod create web --node node-1 --label app=web",
            "describe pod web",
        ],
    );
    assert_eq!(step(&desk), 12);
    type_lines(
        &mut desk,
        &["show links node-1 --pod web", "show links node-1"],
    );
    assert_eq!(step(&desk), 13);
}

#[test]
fn ch2_step_15_adds_a_node_flanneld_accepts() {
    // Issue 35: `--cidr 10.9.0.0/30` is outside the flannel network 10.244.0.0/16, and
    // flanneld printed an error the step never explained.
    let desk = at_step(CH2, 16);
    let flanneld_error = desk
        .lab
        .calls()
        .iter()
        .any(|(_, e)| e.detail().contains("flannel net config doesn't contain"));
    assert!(!flanneld_error, "flanneld refused the node's podCIDR");
    assert!(desk.lab.nodes().contains_key("tiny"));
}

#[test]
fn ch2_step_19_wants_the_policy_the_task_describes() {
    let mut desk = at_step(CH2, 19);
    type_lines(
        &mut desk,
        &[
            "pod create db --node node-2 --label app=db",
            // Lets web in: the policies' verdict on web → db is not denied.
            "policy create db-allow-api --select app=db --ingress-from app=web --port 5432/TCP",
            "reach web db --port 5432",
        ],
    );
    assert_eq!(step(&desk), 19, "a policy that admits web");
    type_lines(
        &mut desk,
        &[
            "policy delete db-allow-api",
            // Denies web, but does not admit app=api either.
            "policy create db-allow-api --select app=db --ingress-from app=apu --port 5432/TCP",
            "reach web db --port 5432",
        ],
    );
    assert_eq!(step(&desk), 19, "a policy that admits the wrong pods");
    for (select, from, port) in [
        ("''", "app=api", " --port 5432/TCP"),
        ("app=db", "''", " --port 5432/TCP"),
        // Another namespace's pods let in too, or every port.
        (
            "app=db",
            "app=api --ingress-from ns:kubernetes.io/metadata.name=kube-system",
            " --port 5432/TCP",
        ),
        ("app=db", "app=api", ""),
    ] {
        type_lines(
            &mut desk,
            &[
                "policy delete db-allow-api",
                // Selects every pod, lets more in, or on every port: web → db is still
                // denied.
                &format!(
                    "policy create db-allow-api --select {select} --ingress-from {from}{port}"
                ),
                "reach web db --port 5432",
            ],
        );
        assert_eq!(
            step(&desk),
            19,
            "--select {select} --ingress-from {from}{port}"
        );
    }
    type_lines(
        &mut desk,
        &[
            "policy delete db-allow-api",
            "policy create db-allow-api --select app=db --ingress-from app=api --port 5432/TCP",
            "reach web db --port 5432",
        ],
    );
    assert_eq!(step(&desk), 20);
}

#[test]
fn ch2_quiz_3_says_what_node_unstage_of_an_unknown_volume_answers() {
    // The lab answers as the spec and csi-driver-host-path do: NOT_FOUND.
    let mut lab = crate::common::lab();
    let e = lab
        .execute("csi node-unstage vol-missing --node node-1")
        .expect_err("an unknown volume");
    assert_eq!(
        e.reason,
        lab_engine::engine::Reason::Csi(lab_engine::csi::Code::NotFound)
    );
    let e = lab
        .execute("csi node-unpublish vol-missing --node node-1 --target /t")
        .expect_err("an unknown volume");
    assert_eq!(
        e.reason,
        lab_engine::engine::Reason::Csi(lab_engine::csi::Code::NotFound)
    );
    // And the lesson says so.
    let parsed = Catalog::Embedded.load();
    let l = parsed.find(CH2).expect("ch2");
    let about_unstage: Vec<&str> = l
        .quizzes
        .iter()
        .filter(|q| matches!(q.kind, QuizKind::Choice { .. }))
        .map(|q| q.explanation.as_str())
        .filter(|e| e.contains("NodeUnstage"))
        .collect();
    assert!(!about_unstage.is_empty());
    for e in about_unstage {
        assert!(e.contains("NOT_FOUND"), "{e}");
    }
}

#[test]
fn ch7_step_8_takes_the_pod_by_namespace() {
    let mut desk = at_step(CH7, 8);
    type_lines(
        &mut desk,
        &["show routes node-1", "trace node-1 default/app-b"],
    );
    assert_eq!(step(&desk), 9);
}

#[test]
fn ch7_step_18_wants_the_capacity_looked_at() {
    let mut desk = at_step(CH7, 18);
    type_lines(&mut desk, &["pvc expand db-data 20Gi"]);
    assert_eq!(step(&desk), 18, "the task asks to look at the capacity");
    type_lines(&mut desk, &["get pvc db-data"]);
    assert_eq!(step(&desk), 19);
}

#[test]
fn ch7_states_resource_versions_watches_and_the_grpc_socket_as_they_are() {
    let parsed = Catalog::Embedded.load();
    let l = parsed.find(CH7).expect("ch7");
    let text: String = l
        .steps
        .iter()
        .flat_map(|s| s.text.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    // resourceVersion is opaque to clients; a watch resumes from one.
    assert!(!text.contains("cluster-wide\ncounter") && !text.contains("cluster-wide counter"));
    assert!(text.contains("opaque"), "{text}");
    assert!(!text.contains("resumes from the\nlast index") && !text.contains("last index"));
    assert!(text.contains("after the last resourceVersion it saw"));
    let file = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons/ch7-hands-on.md"),
    )
    .unwrap();
    assert!(!file.contains("no gRPC socket"));
    assert!(file.contains("`csi serve`"));
}

#[test]
fn ch7_keeps_the_chapter_s_names_and_sizes() {
    // The mini's scenario 4 claims 5Gi `data` for pod `app`; scenario 6 runs `ai-agent`
    // with a 2Gi `shared`.
    let mut desk = at_step(CH7, 1);
    let lesson = desk.lessons.session.as_ref().unwrap().lesson.clone();
    for s in &lesson.steps {
        type_lines(
            &mut desk,
            &s.commands
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>(),
        );
        if s.number == 15 {
            assert_eq!(crate::common::phase(&desk.lab, "app"), "Running");
        }
    }
    assert!(matches!(
        desk.lessons.session.as_ref().unwrap().current(),
        Item::Quiz(0, _)
    ));
    let pvc = |name: &str| {
        desk.lab.cluster().pvcs[&crate::common::key(name)]
            .status
            .capacity
            .get("storage")
            .cloned()
    };
    assert_eq!(pvc("data").as_deref(), Some("5Gi"));
    assert_eq!(pvc("shared").as_deref(), Some("2Gi"));
    assert_eq!(crate::common::phase(&desk.lab, "ai-agent"), "Running");
}

/// Issue 39 §4: ch2 step 21 teaches that the same ADD from the same state gives the same
/// address by rewinding to before `pod create again` and repeating it. Deleting the pod and
/// creating it again is not the same (host-local has moved on: the next address), and the
/// step wants the rewind (`Seen::Rewound`), the repeat and a `diff` listing the pod appearing
/// with the address it has, on the right node.
#[test]
fn ch2_step_21_rewinds_and_repeats_the_add() {
    let ip = |desk: &Desk| {
        lab_engine::engine::query::pod(&desk.lab, "again")
            .and_then(|p| p.ip)
            .expect("again has an address")
    };
    // Without a rewind: a DEL, then the ADD again, gets the next address.
    let mut desk = at_step(CH2, 21);
    type_lines(&mut desk, &["pod create again --node node-1"]);
    let first = ip(&desk);
    type_lines(
        &mut desk,
        &[
            "pod delete again",
            "pod create again --node node-1",
            "diff -1",
            "echo rewind past pod create again --node node-1 diff pod again added",
        ],
    );
    assert_ne!(ip(&desk), first, "host-local moved on");
    assert_eq!(step(&desk), 21, "a delete and a create are not a rewind");

    // The wrong node after the rewind.
    let mut desk = at_step(CH2, 21);
    type_lines(
        &mut desk,
        &[
            "pod create again --node node-1",
            "rewind -1",
            "pod create again --node node-2",
            "diff -1",
        ],
    );
    assert_eq!(step(&desk), 21, "again on node-2");

    // The rewind and the repeat, a diff of two moments without the pod, then the right one.
    let mut desk = at_step(CH2, 21);
    type_lines(
        &mut desk,
        &[
            "pod create again --node node-1",
            "timeline",
            "rewind -1",
            "pod create again --node node-1",
            "diff -2 -1",
        ],
    );
    assert_eq!(ip(&desk), first, "the same state gives the same address");
    assert_eq!(step(&desk), 21, "a diff that does not list again");
    type_lines(&mut desk, &["diff -1"]);
    assert_eq!(step(&desk), 22);
}

/// Issue 39 §4: ch7 step 22 asks `why` of app-b's lease; the check reads the chain
/// (`Seen::Why`): an echo of the words, db's lease on the same node, or app-b's address
/// asked on the wrong node (an error) is not it; app-b's leads to host-local's ADD, its
/// sandbox and `pod create app-b`.
#[test]
fn ch7_step_22_reads_why_of_the_right_lease() {
    let mut desk = at_step(CH7, 22);
    type_lines(
        &mut desk,
        &[
            "echo saw why lease of app-b",
            "why lease 10.244.2.3 --node node-2",
            "why lease 10.244.2.2 --node node-1",
        ],
    );
    assert_eq!(step(&desk), 22, "not app-b's lease");
    let out = desk
        .execute("why lease 10.244.2.2 --node node-2")
        .expect("why lease")
        .to_text();
    assert!(out.contains("written by host-local on ADD"), "{out}");
    assert!(
        out.contains("pod default/app-b's sandbox on node-2"),
        "{out}"
    );
    assert!(out.contains("`pod create app-b --node node-2`"), "{out}");
    assert_eq!(step(&desk), 23);
}

/// ch2 step 14 asks for a claim `data` of 1Gi: a 5Gi one is not it (the check held the
/// claim's phase, not its size); the asked-for claim still passes.
#[test]
fn ch2_step_14_holds_the_claim_s_size() {
    let mut desk = at_step(CH2, 14);
    type_lines(
        &mut desk,
        &["get sc", "pvc create data --size 5Gi", "get pvc"],
    );
    assert_eq!(step(&desk), 14, "a 5Gi claim passed");
    type_lines(
        &mut desk,
        &[
            "pvc delete data",
            "pvc create data --size 1Gi",
            "get pvc",
            "get pv",
        ],
    );
    assert_eq!(step(&desk), 15);
}

/// ch7 step 17 asks for a snapshot of `db-data`: one of another claim (`data`, left by the
/// steps before) is not it, nor does it let steps 18–20 restore the wrong data; a snapshot
/// of db-data is.
#[test]
fn ch7_step_17_needs_the_snapshot_of_db_data() {
    let mut desk = at_step(CH7, 17);
    type_lines(
        &mut desk,
        &[
            "pvc create db-data --size 10Gi",
            "snapshot create snap-db-v1 --pvc data",
        ],
    );
    assert_eq!(step(&desk), 17, "a snapshot of the wrong claim passed");
    type_lines(
        &mut desk,
        &[
            "snapshot delete snap-db-v1",
            "snapshot create snap-db-v1 --pvc db-data",
        ],
    );
    assert_eq!(step(&desk), 18);
}

/// QA 22 §4: three tasks asked for a view in words ("list the pods with their nodes",
/// "look at its capacity", "list claims and volumes") that another view met as well (`pod
/// list`, `describe pvc`, `show volumes`), while the check takes only the `get` it names:
/// an honest learner was stuck. Each task now names the command, and the other view still
/// does not complete the step (its check reads what `get` listed, typed).
#[test]
fn a_task_whose_check_wants_a_get_names_it() {
    for (id, n, command, other) in [
        ("ch3-csi-multus", 15, "`get pods -o wide`", "pod list"),
        (CH7, 18, "`get pvc db-data`", "describe pvc db-data"),
        (CH2, 14, "`get pv`", "show volumes"),
    ] {
        let mut desk = at_step(id, n);
        let lesson = std::sync::Arc::clone(&desk.lessons.session.as_ref().unwrap().lesson);
        let task = lesson.steps[n - 1].task.clone().unwrap_or_default();
        assert!(task.contains(command), "{id} step {n}: {task}");
        let commands: Vec<String> = lesson.steps[n - 1]
            .commands
            .iter()
            .map(|c| c.text.clone())
            .filter(|c| !c.starts_with("get "))
            .collect();
        for c in &commands {
            let _ = desk.execute(c);
        }
        let _ = desk.execute(other);
        assert_eq!(step(&desk), n, "{id} step {n} done by `{other}`");
    }
}

/// QA 25 §2: ch7 steps 15, 19 and 21 ask for pod X with claim C, and passed with an X that
/// mounts nothing, as long as another pod mounted C. X must use the claim; the task as
/// written still passes.
#[test]
fn ch7_steps_15_19_and_21_want_the_named_pod_to_use_the_claim() {
    for (n, decoy, task) in [
        (
            15,
            &[
                "pod create app --node node-2",
                "pod create x --node node-2 --pvc data",
                "show volumes",
            ][..],
            &["pod create app --node node-2 --pvc data", "show volumes"][..],
        ),
        (
            19,
            &[
                "pod create db-0 --node node-1",
                "pod create y --node node-1 --pvc db-data",
            ][..],
            &["pod create db-0 --node node-1 --pvc db-data"][..],
        ),
        (
            21,
            &[
                "pvc create shared --size 2Gi",
                "pod create z --node node-1 --pvc shared",
                "pod create ai-agent --node node-1 --label app=ai-agent",
            ][..],
            &[
                "pvc create shared --size 2Gi",
                "pod create ai-agent --node node-1 --label app=ai-agent --pvc shared",
            ][..],
        ),
    ] {
        let mut desk = at_step(CH7, n);
        type_lines(&mut desk, decoy);
        assert_eq!(step(&desk), n, "step {n} passed with {decoy:?}");
        let mut desk = at_step(CH7, n);
        type_lines(&mut desk, task);
        assert_eq!(step(&desk), n + 1, "step {n} with {task:?}");
    }
}

/// QA 25 §5: ch2 step 15 asks for InternalIP 192.168.0.9 and passed with the lab's next
/// address; §4: its worked-out hint said `pod default/b is Running` of a pod the learner
/// never made (what the step's commands would make of the cluster). It says what is wrong
/// now: tiny's podCIDR.
#[test]
fn ch2_step_15_wants_tiny_s_address_and_its_hint_says_what_is_wrong_now() {
    let mut desk = at_step(CH2, 15);
    type_lines(
        &mut desk,
        &[
            "node add tiny --cidr 10.244.9.0/30",
            "pod create a --node tiny",
            "pod create b --node tiny",
        ],
    );
    assert_eq!(step(&desk), 15, "tiny without --ip passed");
    let mut hint = String::new();
    for _ in 0..3 {
        hint = desk.execute("hint").unwrap().to_text();
    }
    assert!(
        hint.contains("(`node tiny ip 192.168.0.9`: node tiny has InternalIP 192.168.0.3)"),
        "{hint}"
    );

    let mut desk = at_step(CH2, 15);
    type_lines(
        &mut desk,
        &["node add tiny --cidr 10.244.9.0/29 --ip 192.168.0.9"],
    );
    let mut hint = String::new();
    for _ in 0..3 {
        hint = desk.execute("hint").unwrap().to_text();
    }
    assert!(
        hint.contains(
            "Hint 3/3: your cluster has moved away from what this step needs (`node tiny cidr 10.244.9.0/30`: node tiny has podCIDR 10.244.9.0/29)."
        ),
        "{hint}"
    );
    assert!(!hint.contains("pod default/b"), "{hint}");

    let mut desk = at_step(CH2, 15);
    type_lines(
        &mut desk,
        &[
            "node add tiny --cidr 10.244.9.0/30 --ip 192.168.0.9",
            "pod create a --node tiny",
            "pod create b --node tiny",
        ],
    );
    assert_eq!(step(&desk), 16);
}

/// QA 25 §12: ch7 step 15's second hint promised a Multi-Attach wait after `pod delete app`
/// that the lab never makes: the attach to the wrong node failed, so deleting the pod
/// releases the VolumeAttachment at once. The hint says what the lab does, and it does it.
#[test]
fn ch7_step_15_s_hint_says_the_new_pod_starts_right_away() {
    let mut desk = at_step(CH7, 15);
    type_lines(&mut desk, &["pod create app --node node-1 --pvc data"]);
    desk.execute("hint").unwrap();
    let hint = desk.execute("hint").unwrap().to_text();
    let words = hint.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("Hint 2/"), "{hint}");
    assert!(!words.contains("Multi-Attach"), "{hint}");
    assert!(
        words.contains("`pod delete app` releases its VolumeAttachment at once")
            && words.contains("a new `app` on node-2 starts right away"),
        "{hint}"
    );
    type_lines(
        &mut desk,
        &["pod delete app", "pod create app --node node-2 --pvc data"],
    );
    let multi_attach = desk
        .lab
        .calls()
        .iter()
        .any(|(_, e)| e.detail().contains("Multi-Attach"));
    assert!(!multi_attach, "a Multi-Attach error after all");
    assert_eq!(
        desk.lab.cluster().pods[&("default".into(), "app".into())]
            .status
            .phase
            .to_string(),
        "Running"
    );
}

/// QA 25 §13: ch7 step 7 asks for app-a on node-1 and app-b on node-2, and wanted app-b at
/// exactly 10.244.2.2: a learner who first put app-a on node-2 by mistake and deleted it
/// got .3 (round robin, as step 4 taught) and could not pass. The address app-b really got
/// on node-2 passes; app-b on node-1 does not.
#[test]
fn ch7_step_7_takes_the_address_app_b_really_got() {
    let mut desk = at_step(CH7, 7);
    type_lines(
        &mut desk,
        &[
            "pod create app-a --node node-2",
            "pod delete app-a",
            "pod create app-a --node node-1",
            "pod create app-b --node node-1",
        ],
    );
    assert_eq!(step(&desk), 7, "app-b on node-1 passed");
    type_lines(
        &mut desk,
        &["pod delete app-b", "pod create app-b --node node-2"],
    );
    assert_eq!(step(&desk), 8);
    let ip = desk.lab.cluster().pods[&("default".into(), "app-b".into())]
        .status
        .pod_ip;
    assert_eq!(ip, "10.244.2.3".parse().ok(), "round robin went on");
}

/// ch7 step 9 asks for a policy selecting `app=db` that lets `app=web` in: one that selects
/// every pod (and so isolates web and app-a too), or lets every pod in, is not it, though
/// the verdicts on the flows it asks about are the same.
#[test]
fn ch7_step_9_wants_the_policy_the_task_describes() {
    for (select, from) in [("''", "app=web"), ("app=db", "''")] {
        let mut desk = at_step(CH7, 9);
        type_lines(
            &mut desk,
            &[
                "pod create db --node node-2 --label app=db",
                &format!(
                    "policy create db-allow-web --select {select} --ingress-from {from} --port 3306/TCP"
                ),
                "reach web db --port 3306",
                "reach web db --port 8080",
            ],
        );
        assert_eq!(step(&desk), 9, "--select {select} --ingress-from {from}");
        type_lines(
            &mut desk,
            &[
                "policy delete db-allow-web",
                "policy create db-allow-web --select app=db --ingress-from app=web --port 3306/TCP",
                "reach web db --port 3306",
                "reach web db --port 8080",
            ],
        );
        assert_eq!(step(&desk), 10);
    }
}
