//! Pod create+delete throughput through the engine, with the call log and wire log on, on
//! 1 node and on 1,000 nodes with /24 podCIDRs:
//!
//! - `pod_create_delete_network_only`: each iteration creates one pod (kubelet → containerd
//!   → bridge → host-local → portmap → bandwidth) and deletes it again (CNI DEL in reverse).
//! - `pod_create_delete_with_volume`: the same with one volume: every node has its own
//!   PVC, created and bound (CreateVolume) before the measurement; each iteration's pod
//!   mounts its node's claim, so create runs attach (VolumeAttachment +
//!   ControllerPublishVolume), NodeStageVolume and NodePublishVolume before the sandbox, and
//!   delete runs NodeUnpublish, NodeUnstage and ControllerUnpublishVolume after CNI DEL.
//!
//! Run: `cargo bench --bench pods -- --warm-up-time 1 --measurement-time 3`.

use cni_csi_lab::Lab;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lab_engine::command::Command;
use lab_engine::command::grammar::{PodCmd, PodCreateArgs};
use std::hint::black_box;

// The same allocator the binary uses.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn lab_with_nodes(n: u32) -> Lab {
    let mut lab = Lab::empty();
    for i in 0..n {
        let (a, b) = (i / 250, i % 250 + 1);
        lab.execute(&format!(
            "node add n{i} --cidr 10.{}.{}.0/24 --ip 192.{}.{}.{}",
            a + 1,
            b,
            168 + a,
            b / 250,
            b
        ))
        .expect("node add");
    }
    lab
}

/// `lab_with_nodes` plus the default StorageClasses and one bound claim `d<i>` per node.
fn lab_with_claims(n: u32) -> Lab {
    let mut lab = lab_with_nodes(n);
    lab.install_storage_defaults();
    for i in 0..n {
        lab.execute(&format!("pvc create d{i} --size 1Gi"))
            .expect("pvc create");
    }
    let bound = lab
        .cluster()
        .pvcs
        .values()
        .filter(|c| c.status.phase == "Bound")
        .count();
    assert_eq!(bound, n as usize, "every claim is bound before measuring");
    lab
}

fn create(name: &str, node: &str) -> Command {
    create_with(name, node, Vec::new())
}

fn create_with(name: &str, node: &str, pvcs: Vec<String>) -> Command {
    Command::Pod(PodCmd::Create(Box::new(PodCreateArgs {
        name: name.to_string(),
        node: Some(node.to_string()),
        node_selector: Vec::new(),
        resources: Vec::new(),
        labels: vec!["app=bench".into()],
        ports: Vec::new(),
        bandwidth_ingress: None,
        bandwidth_egress: None,
        pvcs,
        networks: None,
        ns: "default".into(),
        step: false,
    })))
}

fn delete(name: &str) -> Command {
    Command::Pod(PodCmd::Delete {
        name: name.to_string(),
        ns: "default".into(),
        step: false,
    })
}

fn bench_pods(c: &mut Criterion) {
    let mut group = c.benchmark_group("pod_create_delete_network_only");
    group.throughput(Throughput::Elements(1));
    for nodes in [1u32, 1000] {
        group.bench_function(format!("{nodes}_nodes"), |b| {
            // Built inside the closure so a filtered-out size costs nothing.
            let mut lab = lab_with_nodes(nodes);
            let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
            let mut i = 0usize;
            b.iter_batched(
                || {
                    i += 1;
                    (format!("p{i}"), names[i % names.len()].clone())
                },
                |(pod, node)| {
                    let out = lab.apply(create(&pod, &node)).expect("create");
                    black_box(out);
                    let out = lab.apply(delete(&pod)).expect("delete");
                    black_box(out);
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn bench_pods_with_volume(c: &mut Criterion) {
    let mut group = c.benchmark_group("pod_create_delete_with_volume");
    group.throughput(Throughput::Elements(1));
    for nodes in [1u32, 1000] {
        group.bench_function(format!("{nodes}_nodes"), |b| {
            let mut lab = lab_with_claims(nodes);
            let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
            let mut i = 0usize;
            b.iter_batched(
                || {
                    i += 1;
                    let n = i % names.len();
                    (format!("p{i}"), names[n].clone(), format!("d{n}"))
                },
                |(pod, node, claim)| {
                    let out = lab
                        .apply(create_with(&pod, &node, vec![claim]))
                        .expect("create");
                    black_box(out);
                    let out = lab.apply(delete(&pod)).expect("delete");
                    black_box(out);
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_pods, bench_pods_with_volume);
criterion_main!(benches);
