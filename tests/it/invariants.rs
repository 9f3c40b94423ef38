//! Property tests over random command sequences (issues 2, 3 and 8).
//!
//! A small vocabulary of lab commands (nodes, pods with and without claims, claims of every
//! access mode and both default classes, expansion, snapshots, policies, raw CNI and raw CSI
//! calls, step/auto mode, reconcile, tick, and a /30 node that runs out of addresses) is run
//! through `Lab::execute`. Errors are fine; panics are not. After EVERY command the
//! invariants below are read off the lab's state; at the end every pod and claim is deleted
//! and the cluster must converge to nothing.
//!
//! 1. IPAM: no pod IP held by two live pods, every host-local store's owner index agrees
//!    with its leases, and every Running pod's IP (and every sandbox's) is leased to its
//!    sandbox in its node's store.
//! 2. CSI lifecycle, per volume and node: published ⇒ staged (the driver has
//!    STAGE_UNSTAGE_VOLUME), staged ⇒ controller-published (CSIDriver attachRequired).
//! 3. A PV whose access modes are only RWO/RWOP is never attached (driver attachments, or
//!    VolumeAttachments with attached=true) on two different nodes.
//! 4. Every VolumeAttachment names an existing PV and node; every Bound claim's PV exists
//!    and its claimRef points back.
//! 5. A line the parser refuses changes nothing (fingerprint before == after).

use cni_csi_lab::Lab;
use lab_engine::command::{self, ParseError};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::{BTreeMap, BTreeSet};

// ---- the vocabulary ----------------------------------------------------------------------

const NODES: [&str; 4] = ["node-1", "node-2", "node-3", "tiny"];
const ACCESS: [&str; 4] = ["RWO", "RWX", "ROX", "RWOP"];
const CLASSES: [&str; 2] = ["standard", "local-wffc"];
const SIZES: [&str; 3] = ["1Gi", "2Gi", "5Gi"];
const CONTROLLERS: [&str; 8] = [
    "scheduler",
    "provisioner",
    "binder",
    "attachdetach",
    "attacher",
    "resizer",
    "snapshotter",
    "kubelet",
];
/// Raw CNI container IDs (distinct from any sandbox ID the kubelet derives).
const CONTAINERS: [&str; 3] = ["x0", "x1", "x2"];

/// Lines the parser must refuse (unknown command, missing required flag, bad value).
const GARBAGE: [&str; 10] = [
    "frobnicate",
    "pod create p0",
    "pvc create c0",
    "node add",
    "tick -5",
    "mode sideways",
    "pod create p0 --node node-1 --bogus",
    "reconcile everything",
    "pvc create c0 --size 1Gi 'unbalanced",
    "csi node-stage",
];

/// One abstract command; indices pick names, so shrinking keeps sequences meaningful.
#[derive(Debug, Clone)]
enum Op {
    /// `node add node-3` (false) or the /30 node `tiny` (true).
    NodeAdd(bool),
    /// `pod create pN --node NODE [--pvc cM[:ro]]`.
    PodCreate {
        pod: u8,
        node: u8,
        pvc: Option<(u8, bool)>,
    },
    /// `pod delete pN`.
    PodDelete(u8),
    /// `pvc create cN --size S --access A --class C`.
    PvcCreate {
        claim: u8,
        access: u8,
        class: u8,
        size: u8,
    },
    /// `pvc delete cN`.
    PvcDelete(u8),
    /// `pvc expand cN SIZE`.
    PvcExpand(u8, u8),
    /// `snapshot create sN --pvc cM`.
    SnapCreate(u8, u8),
    /// `snapshot delete sN`.
    SnapDelete(u8),
    /// `policy create npN --select app=…`.
    PolicyCreate(u8),
    /// `policy delete npN`.
    PolicyDelete(u8),
    /// Raw `cni add|del|check xN --node NODE`.
    Cni(u8, u8, u8),
    /// A raw CSI RPC on an existing volume ID (kind, volume index, node).
    Csi(u8, u8, u8),
    /// `mode auto` (true) / `mode step` (false).
    Mode(bool),
    /// `reconcile [CONTROLLER]`.
    Reconcile(Option<u8>),
    /// `tick N`.
    Tick(u16),
    /// A line the parser refuses.
    Garbage(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => any::<bool>().prop_map(Op::NodeAdd),
        6 => (0u8..5, 0u8..4, proptest::option::weighted(0.5, (0u8..4, any::<bool>())))
            .prop_map(|(pod, node, pvc)| Op::PodCreate { pod, node, pvc }),
        3 => (0u8..5).prop_map(Op::PodDelete),
        4 => (0u8..4, 0u8..4, 0u8..2, 0u8..2)
            .prop_map(|(claim, access, class, size)| Op::PvcCreate { claim, access, class, size }),
        2 => (0u8..4).prop_map(Op::PvcDelete),
        1 => (0u8..4, 0u8..3).prop_map(|(c, s)| Op::PvcExpand(c, s)),
        1 => (0u8..2, 0u8..4).prop_map(|(s, c)| Op::SnapCreate(s, c)),
        1 => (0u8..2).prop_map(Op::SnapDelete),
        1 => (0u8..2).prop_map(Op::PolicyCreate),
        1 => (0u8..2).prop_map(Op::PolicyDelete),
        3 => (0u8..3, 0u8..3, 0u8..4).prop_map(|(k, c, n)| Op::Cni(k, c, n)),
        4 => (0u8..9, 0u8..4, 0u8..3).prop_map(|(k, v, n)| Op::Csi(k, v, n)),
        2 => any::<bool>().prop_map(Op::Mode),
        2 => proptest::option::weighted(0.5, 0u8..8).prop_map(Op::Reconcile),
        2 => prop_oneof![Just(1u16), Just(10), Just(60), Just(600)].prop_map(Op::Tick),
        1 => (0u8..GARBAGE.len() as u8).prop_map(Op::Garbage),
    ]
}

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

/// The line for an op, given the lab as it is now (raw CSI calls pick an existing volume).
/// `None` when the op has nothing to act on.
fn line(lab: &Lab, op: &Op) -> Option<String> {
    Some(match op {
        Op::NodeAdd(false) => {
            "node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3 --zone zone-1".into()
        }
        Op::NodeAdd(true) => "node add tiny --cidr 10.250.0.0/30 --ip 192.168.0.9".into(),
        Op::PodCreate { pod, node, pvc } => {
            let mut l = format!("pod create p{pod} --node {}", pick(&NODES, *node));
            if let Some((c, ro)) = pvc {
                l.push_str(&format!(" --pvc c{c}{}", if *ro { ":ro" } else { "" }));
            }
            l
        }
        Op::PodDelete(p) => format!("pod delete p{p}"),
        Op::PvcCreate {
            claim,
            access,
            class,
            size,
        } => format!(
            "pvc create c{claim} --size {} --access {} --class {}",
            pick(&SIZES, *size),
            pick(&ACCESS, *access),
            pick(&CLASSES, *class)
        ),
        Op::PvcDelete(c) => format!("pvc delete c{c}"),
        Op::PvcExpand(c, s) => format!("pvc expand c{c} {}", pick(&SIZES, *s)),
        Op::SnapCreate(s, c) => format!("snapshot create s{s} --pvc c{c}"),
        Op::SnapDelete(s) => format!("snapshot delete s{s}"),
        Op::PolicyCreate(p) => {
            format!("policy create np{p} --select app=a{p} --ingress-from app=b --port 80")
        }
        Op::PolicyDelete(p) => format!("policy delete np{p}"),
        Op::Cni(k, c, n) => format!(
            "cni {} {} --node {}",
            pick(&["add", "del", "check"], *k),
            pick(&CONTAINERS, *c),
            pick(&NODES, *n)
        ),
        Op::Csi(kind, v, n) => {
            let ids: Vec<String> = lab
                .driver()
                .volumes()
                .map(|v| v.volume_id.clone())
                .collect();
            if ids.is_empty() {
                return None;
            }
            let id = &ids[usize::from(*v) % ids.len()];
            let node = pick(&NODES[..3], *n);
            let target = format!("/var/lib/lab/raw/{id}/mount");
            match kind {
                0 => format!("csi controller-publish {id} --node {node}"),
                1 => format!("csi controller-unpublish {id} --node {node}"),
                2 => format!("csi node-stage {id} --node {node}"),
                3 => format!("csi node-unstage {id} --node {node}"),
                // A raw publication where the kubelet has the volume staged makes the
                // kubelet's NodeUnstage fail until it is undone; the kubelet retries
                // (`regression_kubelet_retries_a_failed_unstage`).
                4 => format!("csi node-publish {id} --node {node} --target {target}"),
                5 => format!("csi node-unpublish {id} --node {node} --target {target}"),
                // Any volume, idle ones included: external-attacher's PV finalizer keeps
                // a PV while an attachment names it
                // (`regression_pv_kept_while_a_volume_attachment_names_it`).
                6 => {
                    let busy: Vec<&str> = lab
                        .driver()
                        .volumes()
                        .map(|v| v.volume_id.as_str())
                        .collect();
                    let id = busy.get(usize::from(*v) % busy.len().max(1))?;
                    format!("csi delete-volume {id}")
                }
                // Pull a kubelet mount from under it (its target path, on its node).
                7 => match lab.cluster().mounts.published.iter().nth(usize::from(*v)) {
                    Some(((node, _, pv), target)) => {
                        let id = lab
                            .cluster()
                            .pvs
                            .get(&(String::new(), pv.clone()))
                            .map_or(String::new(), |p| p.spec.csi.volume_handle.clone());
                        format!("csi node-unpublish {id} --node {node} --target {target}")
                    }
                    None => format!("csi node-unpublish {id} --node {node} --target {target}"),
                },
                _ => format!("csi controller-get-volume {id}"),
            }
        }
        Op::Mode(true) => "mode auto".into(),
        Op::Mode(false) => "mode step".into(),
        Op::Reconcile(None) => "reconcile".into(),
        Op::Reconcile(Some(c)) => format!("reconcile {}", pick(&CONTROLLERS, *c)),
        Op::Tick(n) => format!("tick {n}"),
        Op::Garbage(g) => pick(&GARBAGE, *g).into(),
    })
}

/// Whether a raw CSI op changes driver state when it succeeds (then the kubelet and the
/// controllers no longer own everything the driver holds, and convergence of the driver's
/// side is not theirs to reach).
fn mutates_driver(op: &Op) -> bool {
    matches!(op, Op::Csi(k, _, _) if *k < 8)
}

// ---- invariants ----------------------------------------------------------------------------

/// A cheap fingerprint of everything a command could change.
fn fingerprint(lab: &Lab) -> String {
    let c = &lab.cluster();
    let leases: usize = lab
        .nodes()
        .values()
        .flat_map(|n| n.host.ipam.values())
        .map(|s| s.len())
        .sum();
    let netns: usize = lab.nodes().values().map(|n| n.host.netns.len()).sum();
    format!(
        "rv={} created={} nodes={} pods={} pvcs={} pvs={} vas={} snaps={} pols={} calls={} wire={} \
         clock={} mode={:?} vols={} leases={leases} netns={netns} staged={} published={} dirty={}",
        c.revs.resource_version,
        c.revs.created,
        c.nodes.len(),
        c.pods.len(),
        c.pvcs.len(),
        c.pvs.len(),
        c.volume_attachments.len(),
        c.snapshots.len(),
        c.policies.len(),
        lab.calls().next_seq(),
        lab.wire().next_seq(),
        lab.clock().as_ms(),
        lab.mode(),
        lab.driver().volumes().count(),
        lab.cluster().mounts.staged.len(),
        lab.cluster().mounts.published.len(),
        lab.dirty().len(),
    )
}

/// Every invariant, as a list of violations (empty = all hold).
fn violations(lab: &Lab) -> Vec<String> {
    let mut bad = Vec::new();
    let c = &lab.cluster();

    // (1) IPAM.
    let mut ips: BTreeMap<String, String> = BTreeMap::new();
    for ((ns, name), pod) in &c.pods {
        let Some(ip) = pod.status.pod_ip else {
            continue;
        };
        if let Some(other) = ips.insert(ip.to_string(), format!("{ns}/{name}")) {
            bad.push(format!("(1) IP {ip} held by {other} and {ns}/{name}"));
        }
        if pod.status.phase == "Running" {
            let node = &pod.spec.node_name;
            let key = format!("{ns}/{name}");
            let Some(rt) = lab.nodes().get(node) else {
                bad.push(format!("(1) running pod {key} on unknown node {node}"));
                continue;
            };
            let Some(sb) = rt.sandboxes.get(&key) else {
                bad.push(format!("(1) running pod {key} has no sandbox on {node}"));
                continue;
            };
            let leased = rt
                .host
                .ipam
                .values()
                .any(|s| s.lease(&ip).is_some_and(|l| *l.container_id == *sb.id()));
            if !leased {
                bad.push(format!(
                    "(1) running pod {key} IP {ip} is not leased to its sandbox {} on {node}",
                    sb.id()
                ));
            }
        }
    }
    for (node, rt) in lab.nodes() {
        for (net, store) in &rt.host.ipam {
            if !store.index_consistent() {
                bad.push(format!(
                    "(1) {node} store {net}: owner index disagrees with leases"
                ));
            }
        }
        for (key, sb) in &rt.sandboxes {
            if sb.ip().is_empty() {
                continue;
            }
            let leased = sb.ip().parse().ok().is_some_and(|addr| {
                rt.host
                    .ipam
                    .values()
                    .any(|s| s.lease(&addr).is_some_and(|l| *l.container_id == *sb.id()))
            });
            if !leased {
                bad.push(format!(
                    "(1) sandbox {key} ({}) IP {} is not leased to it on {node}",
                    sb.id(),
                    sb.ip()
                ));
            }
        }
    }

    // (2) CSI lifecycle.
    let attach_required = c
        .csi_drivers
        .values()
        .any(|d| d.metadata.name() == "hostpath.csi.lab" && d.spec.attach_required);
    let stages = lab
        .driver()
        .config
        .node_capabilities
        .contains(&lab_engine::csi::types::NodeRpcType::StageUnstageVolume);
    for v in lab.driver().volumes() {
        for (node, targets) in &v.published {
            if !targets.is_empty() && stages && !v.staged.contains_key(node) {
                bad.push(format!(
                    "(2) {} published on {node} but not staged there",
                    v.volume_id
                ));
            }
        }
        for node in v.staged.keys() {
            if attach_required && !v.attachments.contains_key(node) {
                bad.push(format!(
                    "(2) {} staged on {node} but not controller-published there",
                    v.volume_id
                ));
            }
        }
    }

    // (3) single-node access modes are attached on one node at most.
    for pv in c.pvs.values() {
        let single = !pv.spec.access_modes.is_empty()
            && pv
                .spec
                .access_modes
                .iter()
                .all(|m| m == "ReadWriteOnce" || m == "ReadWriteOncePod");
        if !single {
            continue;
        }
        let va_nodes: BTreeSet<&str> = c
            .volume_attachments
            .values()
            .filter(|va| {
                va.status.attached && va.spec.source.persistent_volume_name == *pv.metadata.name()
            })
            .map(|va| va.spec.node_name.as_str())
            .collect();
        if va_nodes.len() > 1 {
            bad.push(format!(
                "(3) PV {} ({:?}) attached (VolumeAttachment) on {va_nodes:?}",
                pv.metadata.name(),
                pv.spec.access_modes
            ));
        }
        if let Some(v) = lab.driver().volume(&pv.spec.csi.volume_handle) {
            if v.attachments.len() > 1 {
                bad.push(format!(
                    "(3) PV {} ({:?}) attached (driver) on {:?}",
                    pv.metadata.name(),
                    pv.spec.access_modes,
                    v.attachments.keys().collect::<Vec<_>>()
                ));
            }
        }
    }

    // (4) references.
    for va in c.volume_attachments.values() {
        let pv = &va.spec.source.persistent_volume_name;
        if !c.pvs.contains_key(&(String::new(), pv.clone())) {
            bad.push(format!(
                "(4) VolumeAttachment {} names missing PV {pv}",
                va.metadata.name()
            ));
        }
        if !c
            .nodes
            .contains_key(&(String::new(), va.spec.node_name.clone()))
        {
            bad.push(format!(
                "(4) VolumeAttachment {} names missing node {}",
                va.metadata.name(),
                va.spec.node_name
            ));
        }
    }
    for ((ns, name), pvc) in &c.pvcs {
        if pvc.status.phase != "Bound" {
            continue;
        }
        match c.pvs.get(&(String::new(), pvc.spec.volume_name.clone())) {
            None => bad.push(format!(
                "(4) Bound claim {ns}/{name} names missing PV {:?}",
                pvc.spec.volume_name
            )),
            Some(pv) => {
                let back = pv.spec.claim_ref.as_ref().is_some_and(|r| {
                    r.namespace == *ns
                        && r.name == *name
                        && (r.uid.is_empty() || r.uid == pvc.metadata.uid)
                });
                if !back {
                    bad.push(format!(
                        "(4) Bound claim {ns}/{name}: PV {} claimRef {:?} does not point back",
                        pv.metadata.name(),
                        pv.spec.claim_ref
                    ));
                }
            }
        }
    }
    bad
}

// ---- running a sequence ----------------------------------------------------------------------

/// What a run found: the first violation (with the lines that led to it).
fn run(ops: &[Op]) -> Result<(), String> {
    let mut lab = crate::common::lab();
    let mut lines: Vec<String> = Vec::new();
    let mut raw_csi = false;
    let fail = |lines: &[String], what: String| -> String {
        format!("{what}\nafter:\n  {}", lines.join("\n  "))
    };
    for op in ops {
        let Some(l) = line(&lab, op) else { continue };
        lines.push(l.clone());
        let refused_by_parser = matches!(command::parse(&l), Err(ParseError::Invalid(_)));
        let before = fingerprint(&lab);
        let result = lab.execute(&l);
        if std::env::var_os("LAB_PROPTEST_VERBOSE").is_some() {
            match &result {
                Ok(_) => eprintln!("ok   {l}"),
                Err(e) => eprintln!("err  {l}: {}", e.message.lines().next().unwrap_or("")),
            }
        }
        if refused_by_parser {
            if result.is_ok() {
                return Err(fail(
                    &lines,
                    "(5) a line the parser refuses succeeded".into(),
                ));
            }
            let after = fingerprint(&lab);
            if before != after {
                return Err(fail(
                    &lines,
                    format!("(5) a refused line changed state:\n  {before}\n  {after}"),
                ));
            }
        }
        if mutates_driver(op) && result.is_ok() {
            raw_csi = true;
        }
        let v = violations(&lab);
        if !v.is_empty() {
            return Err(fail(&lines, v.join("\n")));
        }
    }
    converge(&mut lab, &mut lines, raw_csi)
}

/// Delete everything, let the loops run, and check nothing is left.
fn converge(lab: &mut Lab, lines: &mut Vec<String>, raw_csi: bool) -> Result<(), String> {
    let mut exec = |lab: &mut Lab, l: String| {
        let _ = lab.execute(&l);
        lines.push(l);
    };
    exec(lab, "mode auto".into());
    let pods: Vec<_> = lab.cluster().pods.keys().cloned().collect();
    for (ns, name) in pods {
        exec(lab, format!("pod delete {name} -n {ns}"));
    }
    let snaps: Vec<_> = lab.cluster().snapshots.keys().cloned().collect();
    for (ns, name) in snaps {
        exec(lab, format!("snapshot delete {name} -n {ns}"));
    }
    let claims: Vec<_> = lab.cluster().pvcs.keys().cloned().collect();
    for (ns, name) in claims {
        exec(lab, format!("pvc delete {name} -n {ns}"));
    }
    let nodes: Vec<String> = lab.nodes().keys().cloned().collect();
    for node in &nodes {
        for c in CONTAINERS {
            exec(lab, format!("cni del {c} --node {node}"));
        }
    }
    for _ in 0..3 {
        exec(lab, "tick 600".into());
    }
    if raw_csi {
        // Undo what the learner did by hand (the kubelet and the controllers only undo what
        // they did): raw targets, stagings and attachments, in the spec's order.
        let vols: Vec<String> = lab
            .driver()
            .volumes()
            .map(|v| v.volume_id.clone())
            .collect();
        for id in &vols {
            for node in &NODES[..3] {
                let target = format!("/var/lib/lab/raw/{id}/mount");
                exec(
                    lab,
                    format!("csi node-unpublish {id} --node {node} --target {target}"),
                );
                exec(lab, format!("csi node-unstage {id} --node {node}"));
                exec(lab, format!("csi controller-unpublish {id} --node {node}"));
            }
        }
        for _ in 0..3 {
            exec(lab, "tick 600".into());
        }
    }
    exec(lab, "reconcile".into());

    let c = &lab.cluster();
    let mut bad = violations(lab);
    if !c.pods.is_empty() {
        bad.push(format!(
            "pods left: {:?}",
            c.pods.keys().collect::<Vec<_>>()
        ));
    }
    if !c.pvcs.is_empty() {
        bad.push(format!(
            "claims left: {:?}",
            c.pvcs.keys().collect::<Vec<_>>()
        ));
    }
    if !c.volume_attachments.is_empty() {
        bad.push(format!(
            "VolumeAttachments left: {:?}",
            c.volume_attachments.keys().collect::<Vec<_>>()
        ));
    }
    for (node, rt) in lab.nodes() {
        for (net, store) in &rt.host.ipam {
            if !store.is_empty() {
                bad.push(format!(
                    "{node} store {net} still leases {:?}",
                    store.leases().keys().collect::<Vec<_>>()
                ));
            }
        }
        if !rt.host.netns.is_empty() {
            bad.push(format!(
                "{node} netns left: {:?}",
                rt.host.netns.keys().collect::<Vec<_>>()
            ));
        }
        if !rt.sandboxes.is_empty() {
            bad.push(format!(
                "{node} sandboxes left: {:?}",
                rt.sandboxes.keys().collect::<Vec<_>>()
            ));
        }
    }
    if !lab.cluster().mounts.staged.is_empty() || !lab.cluster().mounts.published.is_empty() {
        bad.push(format!(
            "kubelet mounts left: staged {:?} published {:?}",
            lab.cluster().mounts.staged,
            lab.cluster().mounts.published
        ));
    }
    {
        // The default classes reclaim with Delete: no PV and no volume may be left.
        let retained: BTreeSet<&str> = c
            .pvs
            .values()
            .filter(|pv| pv.spec.persistent_volume_reclaim_policy == "Retain")
            .map(|pv| pv.spec.csi.volume_handle.as_str())
            .collect();
        let leaked: Vec<&str> = lab
            .driver()
            .volumes()
            .map(|v| v.volume_id.as_str())
            .filter(|id| !retained.contains(id))
            .collect();
        if !leaked.is_empty() {
            bad.push(format!("driver volumes leaked: {leaked:?}"));
        }
        let pvs: Vec<_> = c
            .pvs
            .values()
            .filter(|pv| pv.spec.persistent_volume_reclaim_policy != "Retain")
            .map(|pv| pv.metadata.name().clone())
            .collect();
        if !pvs.is_empty() {
            bad.push(format!("PVs left: {pvs:?}"));
        }
        for v in lab.driver().volumes() {
            if v.in_use() {
                bad.push(format!(
                    "volume {} still attached/staged/published",
                    v.volume_id
                ));
            }
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "did not converge:\n{}\nafter:\n  {}",
            bad.join("\n"),
            lines.join("\n  ")
        ))
    }
}

// ---- the properties --------------------------------------------------------------------------

/// Cases and sequence length: moderate, so the test stays well under a minute in debug.
const CASES: u32 = 48;
const MAX_OPS: usize = 40;

#[test]
fn random_command_sequences_keep_every_invariant_and_converge() {
    // A fixed seed: the same sequences every run (the lab itself is deterministic).
    // `LAB_PROPTEST_SEED=N` explores other sequences (for a local hunt, not for CI).
    let seed = std::env::var("LAB_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse::<u8>().ok())
        .unwrap_or(7);
    let cases = std::env::var("LAB_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&proptest::collection::vec(op(), 1..MAX_OPS), |ops| {
        run(&ops).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---- bugs the property test found (shrunk), fixed since -----------------------------------------------

/// ENGINE BUG (found by the property test, reported, not fixed here): a PV whose volume was
/// deleted behind Kubernetes' back is deleted while a VolumeAttachment still names it.
/// Real external-attacher puts its finalizer (`external-attacher/<driver>`) on the PV as
/// well as on the VolumeAttachment before ControllerPublish (csi_handler.go `addPVFinalizer`),
/// so the PV stays Terminating until the attachment is gone; the lab only finalizes the
/// VolumeAttachment, and the provisioner deletes the PV as soon as DeleteVolume says OK
/// (NOT_FOUND is OK). Invariant (4) breaks after the last line below.
#[test]
fn regression_pv_kept_while_a_volume_attachment_names_it() {
    let mut lab = crate::common::lab();
    lab.execute("pvc create c0 --size 1Gi --access RWO --class standard")
        .expect("pvc create");
    let id = lab
        .driver()
        .volumes()
        .next()
        .map(|v| v.volume_id.clone())
        .expect("provisioned");
    lab.execute(&format!("csi delete-volume {id}"))
        .expect("an idle volume may be deleted");
    let _ = lab.execute("pod create p2 --node node-1 --pvc c0"); // attach fails: NOT_FOUND
    let _ = lab.execute("pvc delete c0");
    let _ = lab.execute("pod delete p2");
    assert_eq!(violations(&lab), Vec::<String>::new());
}

/// ENGINE BUG (found by the property test, reported, not fixed here): once a pod is gone,
/// the kubelet never retries a NodeUnstageVolume that failed during its teardown, so its
/// staging record (`lab.cluster.mounts.staged`) stays forever, the node keeps reporting the volume
/// in use, and the VolumeAttachment is never deleted. Real kubelet's volume manager keeps
/// the device in its actual state of world and retries UnmountDevice (NodeUnstage) on every
/// reconciler pass until it succeeds (pkg/kubelet/volumemanager/reconciler). Here the
/// unstage fails because a raw NodePublish holds the staging; after that is undone, nothing
/// retries.
#[test]
fn regression_kubelet_retries_a_failed_unstage() {
    let mut lab = crate::common::lab();
    lab.execute("pvc create c3 --size 1Gi --access RWO --class standard")
        .expect("pvc create");
    // c3 lives on node-2 (its PV's node affinity).
    lab.execute("pod create p0 --node node-2 --pvc c3")
        .expect("pod create");
    let id = lab
        .driver()
        .volumes()
        .next()
        .map(|v| v.volume_id.clone())
        .expect("provisioned");
    let raw = format!("/var/lib/lab/raw/{id}/mount");
    // Pull the kubelet's own publication, then publish at another target.
    let (_, kubelet_target) = lab
        .cluster()
        .mounts
        .published
        .iter()
        .next()
        .map(|(k, t)| (k.clone(), t.clone()))
        .expect("the kubelet published the volume");
    lab.execute(&format!(
        "csi node-unpublish {id} --node node-2 --target {kubelet_target}"
    ))
    .expect("node-unpublish");
    lab.execute(&format!(
        "csi node-publish {id} --node node-2 --target {raw}"
    ))
    .expect("a second publication on the staged node");
    let _ = lab.execute("pod delete p0"); // NodeUnstage fails: still published at `raw`
    lab.execute(&format!(
        "csi node-unpublish {id} --node node-2 --target {raw}"
    ))
    .expect("undo the raw publication");
    for _ in 0..3 {
        let _ = lab.execute("tick 600");
    }
    assert!(
        lab.cluster().mounts.staged.is_empty(),
        "{:?}",
        lab.cluster().mounts.staged
    );
    assert!(lab.cluster().volume_attachments.is_empty());
}
