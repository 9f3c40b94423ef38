//! Stepping a packet (`trace … --step`, issue 39 §1): the typed facts each hop carries (where,
//! the packet after NAT and inside VXLAN, the MTU, the entry consulted), and the desk's
//! stepping as the REPL drives it (Enter, `b`, `q`, `step …`).

use lab_engine::Desk;
use lab_engine::command::grammar::FlowArgs;
use lab_engine::net::hop::{Entry, Place};
use lab_engine::net::trace::{HopKind, Rewrite, Trace};
use std::net::IpAddr;

fn run(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("`{line}` failed: {}", e.message),
    }
}

fn fails(desk: &mut Desk, line: &str) -> String {
    match desk.execute(line) {
        Ok(out) => panic!("`{line}` succeeded: {}", out.to_text()),
        Err(e) => e.message,
    }
}

fn walk(desk: &Desk, src: &str, dst: &str, port: Option<&str>) -> Trace {
    let args = FlowArgs {
        src: src.to_string(),
        dst: dst.to_string(),
        port: port.map(str::to_string),
        size: None,
    };
    desk.lab.walk(&args).expect("walk")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

fn two_pods(network: &str) -> Desk {
    let mut desk = crate::common::desk();
    run(&mut desk, &format!("network use {network}"));
    run(&mut desk, "pod create web --node node-1");
    run(&mut desk, "pod create db --node node-2");
    desk
}

#[test]
fn a_vxlan_hop_carries_the_outer_headers_and_the_neighbour_and_fdb_entries() {
    let desk = two_pods("flannel-vxlan");
    let t = walk(&desk, "web", "db", None);
    let tunnel = t
        .hops
        .iter()
        .find(|h| h.kind == HopKind::Tunnel)
        .expect("a tunnel hop");
    assert_eq!(tunnel.at, Place::Node("node-1".into()));
    assert_eq!(tunnel.dev.as_deref(), Some("flannel.1"));
    let Some(Entry::Vxlan {
        neighbour, fdb_dst, ..
    }) = &tunnel.entry
    else {
        panic!(
            "the tunnel hop consulted no neighbour/FDB: {:?}",
            tunnel.entry
        );
    };
    assert_eq!(
        (*neighbour, *fdb_dst),
        (ip("10.244.2.0"), ip("192.168.0.2"))
    );
    let packet = tunnel.packet.as_ref().expect("the packet");
    let outer = packet.outer.expect("outer headers while encapsulated");
    assert_eq!(
        (outer.src, outer.dst, outer.dport, outer.vni, outer.size),
        (ip("192.168.0.1"), ip("192.168.0.2"), 8472, 1, 134)
    );
    assert_eq!(
        (packet.src, packet.dst),
        (ip("10.244.1.2"), ip("10.244.2.2"))
    );
    // Unwrapped on node-2: no outer headers from there on.
    let last = t.hops.last().expect("hops");
    assert!(last.packet.as_ref().is_some_and(|p| p.outer.is_none()));
    assert_eq!(
        last.at,
        Place::Pod {
            namespace: "default".into(),
            name: "db".into(),
            node: "node-2".into()
        }
    );
    // The route on node-1 was checked against flannel.1's MTU.
    let route = t
        .hops
        .iter()
        .find(|h| h.node_route().is_some())
        .expect("a node route");
    assert_eq!(route.packet.as_ref().and_then(|p| p.mtu), Some(1450));
}

#[test]
fn a_nat_hop_carries_the_rewritten_packet_and_the_rule_by_its_number() {
    let mut desk = crate::common::desk();
    run(&mut desk, "pod create web --node node-1");
    run(&mut desk, "pod create api --node node-2 --port 8080:80");
    let t = walk(&desk, "web", "node-2", Some("8080"));
    let dnat = t
        .hops
        .iter()
        .find(|h| {
            h.kind == HopKind::Netfilter && matches!(h.rewrite, Some(Rewrite::Destination(..)))
        })
        .expect("the DNAT hop");
    let p = dnat.packet.as_ref().expect("the packet");
    assert_eq!((p.dst, p.dport), (ip("10.244.2.2"), 80));
    assert_eq!(p.sent, Some((ip("10.244.1.2"), ip("192.168.0.2"), 8080)));
    let Some(Entry::Rule {
        chain,
        number,
        rule,
        ..
    }) = &dnat.entry
    else {
        panic!("no rule: {:?}", dnat.entry);
    };
    // The rule's number is its place in its chain, as `iptables -S CHAIN` lists it.
    let listing = run(&mut desk, "show iptables node-2 -t nat");
    let in_chain: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(&format!("-A {chain} ")))
        .collect();
    assert_eq!(in_chain.get(number - 1), Some(&rule.as_str()), "{listing}");
}

#[test]
fn the_path_names_each_gateway_route_from_the_typed_route() {
    let desk = two_pods("flannel-host-gw");
    let t = walk(&desk, "web", "db", None);
    assert_eq!(
        t.path(),
        [
            "default/web eth0 10.244.1.2",
            "veth56d1da70 (host side) on node-1",
            "cni0 on node-1 (10.244.1.1)",
            "route 10.244.2.0/24 via 192.168.0.2 dev eth0",
            "nat POSTROUTING on node-1: -A FLANNEL-POSTRTG -s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment \"flanneld masq\" -j RETURN (no NAT)",
            "node-2 eth0 192.168.0.2",
            "nat POSTROUTING on node-2: -A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.2.0/24 -m comment --comment \"flanneld masq\" -j RETURN (no NAT)",
            "cni0 on node-2 (10.244.2.1)",
            "veth312e09b9 (host side) on node-2",
            "default/db eth0 10.244.2.2",
        ]
        .join(" → ")
    );
}

#[test]
fn enter_b_and_q_step_a_trace_in_the_repl() {
    let mut desk = two_pods("flannel-host-gw");
    let hops = walk(&desk, "web", "db", None).hops.len();
    let out = run(&mut desk, "trace web db --step");
    assert!(
        out.starts_with("trace default/web → default/db:80/TCP\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("── hop 1/{hops}: default/web · endpoint ──\n")),
        "{out}"
    );
    assert!(!out.contains("hop 2/"), "only the first hop: {out}");
    assert_eq!(desk.stepping().map(|s| s.at()), Some(0));
    // Enter: the next hop, with the route it consulted.
    let out = run(&mut desk, "");
    assert!(
        out.starts_with(&format!("── hop 2/{hops}: default/web · pod route ──\n")),
        "{out}"
    );
    assert!(
        out.contains("  consulted: route default via 10.244.1.1 dev eth0\n"),
        "{out}"
    );
    let out = run(&mut desk, "b");
    assert!(out.starts_with(&format!("── hop 1/{hops}:")), "{out}");
    // Back from the first hop: refused, and nothing moves.
    let e = fails(&mut desk, "back");
    assert!(e.contains("already at the first hop"), "{e}");
    assert_eq!(desk.stepping().map(|s| s.at()), Some(0));
    // q ends stepping (not the session); then a blank line is nothing again.
    assert_eq!(
        run(&mut desk, "q"),
        format!("stepping ended at hop 1/{hops}\n")
    );
    assert!(desk.stepping().is_none());
    assert_eq!(run(&mut desk, ""), "");
    let e = fails(&mut desk, "step");
    assert!(e.contains("nothing is being stepped"), "{e}");
}

#[test]
fn stepping_past_the_last_hop_prints_the_result_and_ends() {
    let mut desk = two_pods("flannel-host-gw");
    let hops = walk(&desk, "web", "db", None).hops.len();
    run(&mut desk, "trace web db --step");
    for n in 2..=hops {
        let out = run(&mut desk, "step");
        assert!(out.starts_with(&format!("── hop {n}/{hops}:")), "{out}");
    }
    assert_eq!(
        run(&mut desk, "step"),
        "delivered to default/db eth0 10.244.2.2\n"
    );
    assert!(desk.stepping().is_none());
}

#[test]
fn a_plain_trace_and_a_failed_one_start_no_stepping() {
    let mut desk = two_pods("flannel-host-gw");
    run(&mut desk, "trace web db");
    assert!(desk.stepping().is_none());
    let e = fails(&mut desk, "trace web nowhere --step");
    assert!(e.contains("nowhere"), "{e}");
    assert!(desk.stepping().is_none());
}

/// Run a script as `run FILE` does: (all lines as expected, stdout, stderr).
fn script(desk: &mut Desk, text: &str) -> (bool, String, String) {
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
    (
        ok,
        String::from_utf8(out).expect("utf-8"),
        String::from_utf8(err).expect("utf-8"),
    )
}

const TWO_PODS: &str = "pod create web --node node-1\npod create db --node node-2\n";

#[test]
fn a_script_prints_every_hop_of_a_stepped_trace_at_once_when_no_step_follows() {
    let mut desk = crate::common::desk();
    let (ok, out, err) = script(
        &mut desk,
        &format!("{TWO_PODS}trace web db --step\n# no step line follows\nget pods\n! step\n"),
    );
    assert!(ok, "{out}{err}");
    let hops = walk(&desk, "web", "db", None).hops.len();
    for n in 1..=hops {
        assert_eq!(
            out.matches(&format!("── hop {n}/{hops}:")).count(),
            1,
            "hop {n}: {out}"
        );
    }
    assert!(
        out.contains("delivered to default/db eth0 10.244.2.2\nNAME"),
        "the rest before `get pods`: {out}"
    );
    // The `step` after another command says why nothing is stepped.
    assert!(
        err.contains(
            "nothing is being stepped: the script printed every hop of the trace at once; a `step` line right after `trace SRC DST --step`"
        ),
        "{err}"
    );
    assert!(desk.stepping().is_none());
    // At the end of a script too.
    let (ok, out, err) = script(&mut desk, "trace web db --step\n");
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("── hop {hops}/{hops}:")), "{out}");
    assert!(desk.stepping().is_none());
    // A new stepped trace in the REPL forgets it: the plain message again.
    run(&mut desk, "trace web db --step");
    run(&mut desk, "q");
    let e = fails(&mut desk, "step");
    assert_eq!(
        e,
        "nothing is being stepped: `trace SRC DST --step` steps a packet hop by hop; `pod create|delete NAME --step` and `pvc delete NAME --step` step a volume's CSI calls one by one"
    );
}

/// A script written for the REPL steps as the REPL does: `trace --step` then `step`,
/// `step back`, `b` and `step end` lines print exactly what they print typed one by one.
#[test]
fn a_script_steps_a_trace_line_by_line_while_step_lines_follow() {
    let steps = "trace web db --step\nstep\n\n# a comment between\nstep\nstep back\nb\n! b\nstep\nstep end\n! step\n";
    let mut typed = two_pods("flannel-host-gw");
    let mut repl = String::new();
    for line in lab_engine::script::commands(steps) {
        repl.push_str(&match typed.execute(&line.1) {
            Ok(out) => out.to_text(),
            Err(e) => format!("error: {}\n", e.message),
        });
    }
    let mut desk = crate::common::desk();
    let (ok, out, err) = script(
        &mut desk,
        &format!("network use flannel-host-gw\n{TWO_PODS}{steps}"),
    );
    assert!(ok, "{out}{err}");
    let hops = walk(&desk, "web", "db", None).hops.len();
    let stepped = out
        .split_once("trace default/web")
        .map(|(_, s)| s)
        .unwrap_or("");
    let repl_out: String = repl
        .lines()
        .filter(|l| !l.starts_with("error: "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(format!("trace default/web{stepped}"), repl_out);
    assert!(
        out.ends_with(&format!("stepping ended at hop 2/{hops}\n")),
        "{out}"
    );
    assert!(!out.contains(&format!("hop {hops}/{hops}")), "{out}");
    assert!(err.contains("already at the first hop"), "{err}");
    assert!(
        err.contains("nothing is being stepped: `trace SRC DST --step`"),
        "{err}"
    );
}

/// `play FILE` steps as a script runs: `step` lines step, and the rest of a trace no `step`
/// follows is printed before the next command.
#[test]
fn play_steps_a_trace_as_a_script_runs() {
    let dir = std::env::temp_dir().join(format!("lab-play-step-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join("step.lab");
    std::fs::write(
        &f,
        format!("{TWO_PODS}# Step it:\ntrace web db --step\nstep\n# Then all at once:\ntrace web db --step\n"),
    )
    .expect("write");
    let mut desk = crate::common::desk();
    let out = run(&mut desk, &format!("play {}", f.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let hops = walk(&desk, "web", "db", None).hops.len();
    let (first, second) = out.split_once("Then all at once:").expect("both traces");
    assert!(first.contains("lab> step\n── hop 2/"), "{first}");
    assert!(first.contains(&format!("── hop {hops}/{hops}:")), "{first}");
    assert!(
        second.contains(&format!("── hop {hops}/{hops}:")),
        "{second}"
    );
    assert!(desk.stepping().is_none());
}

// ---- Stepping a CSI flow (`pod create … --pvc CLAIM --step`) ----

use lab_engine::csi::{Code, LifecycleState};
use lab_engine::lesson::csi_stepping::Changed;

/// A desk with a WaitForFirstConsumer claim: the pod that uses it makes all four calls.
fn wffc_claim() -> Desk {
    let mut desk = crate::common::desk();
    run(&mut desk, "pvc create data --size 1Gi --class local-wffc");
    desk
}

#[test]
fn a_pod_with_a_new_claim_steps_the_four_calls_in_the_real_order_with_each_state() {
    let mut desk = wffc_claim();
    let out = run(&mut desk, "pod create web --pvc data --step");
    assert!(
        out.starts_with("pod/web created\n"),
        "the command ran as usual: {out}"
    );
    assert!(
        out.contains("pod/web made 4 CSI calls: CreateVolume → ControllerPublishVolume → NodeStageVolume → NodePublishVolume\n"),
        "{out}"
    );
    assert!(
        out.contains("── call 1/4: CreateVolume · external-provisioner ──\n"),
        "{out}"
    );
    assert!(!out.contains("call 2/4"), "only the first call: {out}");
    let c = desk
        .stepping()
        .and_then(|s| s.csi())
        .expect("a CSI stepping")
        .clone();
    let steps = c.steps();
    let rpcs: Vec<&str> = steps.iter().map(|s| s.call.rpc).collect();
    assert_eq!(
        rpcs,
        [
            "CreateVolume",
            "ControllerPublishVolume",
            "NodeStageVolume",
            "NodePublishVolume"
        ]
    );
    assert!(steps.iter().all(|s| s.call.code() == Code::Ok));
    let states: Vec<_> = steps
        .iter()
        .map(|s| {
            let c = s.change.as_ref().expect("a change");
            (c.before, c.after)
        })
        .collect();
    use LifecycleState::*;
    assert_eq!(
        states,
        [
            (None, Some(Created)),
            (Some(Created), Some(NodeReady)),
            (Some(NodeReady), Some(VolReady)),
            (Some(VolReady), Some(Published)),
        ]
    );
    // The objects: the PV the provisioner names after the request, the VolumeAttachment the
    // attach/detach controller made, the staging path and the target path the kubelet sent.
    let pv = run(&mut desk, "get pv -o name");
    let Some(Changed::Volume { pv: Some(name) }) = steps[0].change.as_ref().map(|c| &c.object)
    else {
        panic!("{:?}", steps[0].change);
    };
    assert_eq!(pv.trim(), format!("persistentvolume/{name}"));
    let va = run(&mut desk, "get va -o name");
    let Some(Changed::Attachment { name }) = steps[1].change.as_ref().map(|c| &c.object) else {
        panic!("{:?}", steps[1].change);
    };
    assert_eq!(va.trim(), format!("volumeattachment.storage.k8s.io/{name}"));
    let stage = steps[2].call.request.staging_path().expect("staging path");
    assert!(stage.ends_with("/globalmount"), "{stage}");
    assert_eq!(
        steps[2].change.as_ref().map(|c| &c.object),
        Some(&Changed::Staging {
            path: stage.to_string()
        })
    );
    let target = steps[3].call.request.target_path().expect("target path");
    assert_eq!(steps[3].call.request.staging_path(), Some(stage));
    assert!(target.ends_with("/mount"), "{target}");
    // The last state is the driver's own.
    let volumes = run(&mut desk, "show volumes");
    assert!(volumes.contains("node-1  PUBLISHED"), "{volumes}");
    assert!(
        volumes.contains(&format!("published {target}")),
        "{volumes}"
    );
}

#[test]
fn enter_b_and_q_step_a_csi_flow_and_the_end_says_where_the_volume_is() {
    let mut desk = wffc_claim();
    run(&mut desk, "pod create web --pvc data --step");
    let e = fails(&mut desk, "b");
    assert!(e.contains("already at the first call (1/4)"), "{e}");
    let out = run(&mut desk, "");
    assert!(
        out.starts_with("── call 2/4: ControllerPublishVolume · external-attacher ──\n"),
        "{out}"
    );
    assert!(out.contains("  node_id   node-1\n"), "{out}");
    assert!(
        out.contains("  state     CREATED → NODE_READY (vol-95328f0b on node-1)\n"),
        "{out}"
    );
    let out = run(&mut desk, "b");
    assert!(out.starts_with("── call 1/4: CreateVolume"), "{out}");
    for _ in 0..3 {
        run(&mut desk, "step");
    }
    assert_eq!(
        run(&mut desk, "step"),
        "end of pod/web's CSI calls: 4 calls · vol-95328f0b PUBLISHED on node-1\n"
    );
    assert!(desk.stepping().is_none());
    run(&mut desk, "pod create web2 --pvc data --step");
    assert_eq!(run(&mut desk, "q"), "stepping ended at call 1/1\n");
}

#[test]
fn a_volume_already_staged_steps_only_its_publish_and_says_why() {
    let mut desk = wffc_claim();
    run(&mut desk, "pod create web --pvc data");
    let out = run(&mut desk, "pod create web2 --pvc data --step");
    assert!(
        out.contains("pod/web2 made 1 CSI call: NodePublishVolume\n"),
        "{out}"
    );
    assert!(
        out.contains("vol-95328f0b was already PUBLISHED on node-1 before this command"),
        "{out}"
    );
    assert_eq!(desk.stepping().map(|s| s.len()), Some(1));
}

#[test]
fn no_claim_step_mode_or_a_failed_command_opens_no_stepping() {
    let mut desk = wffc_claim();
    let out = run(&mut desk, "pod create plain --step");
    assert!(
        out.ends_with("no CSI call: pod/plain mounts no claim (`--pvc CLAIM` mounts one)\n"),
        "{out}"
    );
    assert!(desk.stepping().is_none());
    fails(&mut desk, "pod create plain --pvc data --step");
    assert!(desk.stepping().is_none());
    run(&mut desk, "mode step");
    let out = run(&mut desk, "pod create w --pvc data --step");
    assert!(
        out.ends_with("no CSI call: in step mode nothing acts until `reconcile`\n"),
        "{out}"
    );
    assert!(desk.stepping().is_none());
}

#[test]
fn a_failed_call_is_stepped_with_its_status_and_changes_nothing() {
    let mut desk = wffc_claim();
    run(&mut desk, "fault inject NodeStageVolume --code INTERNAL");
    run(&mut desk, "pod create web --pvc data --step");
    let c = desk
        .stepping()
        .and_then(|s| s.csi())
        .expect("a CSI stepping");
    let stage = c
        .steps()
        .iter()
        .find(|s| s.call.rpc == "NodeStageVolume")
        .expect("NodeStageVolume");
    assert_eq!(stage.call.code(), Code::Internal);
    assert!(stage.change.is_none());
}

#[test]
fn a_script_prints_every_call_of_a_stepped_pod_create() {
    let mut desk = crate::common::desk();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ok = lab_engine::script::run(
        &mut desk,
        "pvc create data --size 1Gi --class local-wffc\npod create web --pvc data --step\nget pods\n! step\n",
        lab_engine::script::RunOptions::default(),
        &mut out,
        &mut err,
    )
    .expect("run");
    let out = String::from_utf8(out).expect("utf-8");
    assert!(ok, "{out}{}", String::from_utf8_lossy(&err));
    for n in 1..=4 {
        assert!(out.contains(&format!("── call {n}/4:")), "call {n}: {out}");
    }
    assert!(
        out.contains(
            "end of pod/web's CSI calls: 4 calls · vol-95328f0b PUBLISHED on node-1\nNAME"
        ),
        "the rest before `get pods`: {out}"
    );
    assert!(desk.stepping().is_none());
    let err = String::from_utf8(err).expect("utf-8");
    assert!(
        err.contains(
            "nothing is being stepped: the script printed every call of the CSI flow at once"
        ),
        "{err}"
    );
}

/// `delete pod web` is `pod delete web` (`help delete`), `--step` included: kubectl's verb
/// order, its `pod/web` form and a leading `kubectl` step the same teardown, and so does
/// `delete pvc NAME --step`; a delete `--step` cannot apply to names the form that works.
#[test]
fn delete_pod_step_is_pod_delete_step() {
    let teardown = |line: &str| {
        let mut desk = wffc_claim();
        run(&mut desk, "pod create web --pvc data");
        let out = run(&mut desk, line);
        let calls: Vec<String> = desk
            .stepping()
            .and_then(|s| s.csi())
            .map(|c| c.steps().iter().map(|s| s.call.rpc.to_string()).collect())
            .unwrap_or_default();
        (out, calls)
    };
    let (own, calls) = teardown("pod delete web --step");
    assert!(!calls.is_empty(), "{own}");
    for line in [
        "delete pod web --step",
        "delete pod/web --step",
        "delete po web --step",
        "kubectl delete pod web --step",
    ] {
        assert_eq!(teardown(line), (own.clone(), calls.clone()), "{line}");
    }
    // `delete pvc NAME --step` steps external-provisioner's DeleteVolume.
    let mut desk = wffc_claim();
    run(&mut desk, "pod create web --pvc data");
    run(&mut desk, "pod delete web");
    let out = run(&mut desk, "delete pvc data --step");
    assert!(out.contains("DeleteVolume"), "{out}");
    // A kind or a form `--step` cannot step says which does.
    let mut desk = wffc_claim();
    run(&mut desk, "pod create web --pvc data");
    for line in [
        "delete sc local-wffc --step",
        "delete pods --all --step",
        "delete pod web web2 --step",
    ] {
        let e = fails(&mut desk, line);
        assert!(
            e.contains("`delete pod NAME --step`") && e.contains("`pvc delete NAME --step`"),
            "{line}: {e}"
        );
    }
}
