//! Pod create+delete throughput through the engine (network only), with the call log and
//! wire log on, on 1 node and on 1,000 nodes with /24 podCIDRs.
//!
//! Run: `cargo bench --bench pods`. Each iteration creates one pod (kubelet → containerd →
//! bridge → host-local → portmap → bandwidth) and deletes it again (CNI DEL in reverse).

use cni_csi_lab::Lab;
use cni_csi_lab::command::Command;
use cni_csi_lab::command::grammar::{PodCmd, PodCreateArgs};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
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

fn create(name: &str, node: &str) -> Command {
    Command::Pod(PodCmd::Create(PodCreateArgs {
        name: name.to_string(),
        node: node.to_string(),
        labels: vec!["app=bench".into()],
        ports: Vec::new(),
        bandwidth_ingress: None,
        bandwidth_egress: None,
        pvcs: Vec::new(),
        ns: "default".into(),
    }))
}

fn delete(name: &str) -> Command {
    Command::Pod(PodCmd::Delete {
        name: name.to_string(),
        ns: "default".into(),
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

criterion_group!(benches, bench_pods);
criterion_main!(benches);
