//! What a pod with a volume costs as the cluster fills with running pods that use volumes:
//! the attach/detach controller works out its desired state from every such pod on each
//! pass, so one create+delete costs time in proportion to them (see BENCHMARKS.md).
//!
//! ```text
//! cargo run --release --example volume_scale -- 0 100 400 1000
//! ```
//!
//! For each count R: 100 nodes (so the driver's per-node attach limit is never reached),
//! the default StorageClasses, R+1 claims, R running pods each mounting its own claim; then
//! 500 times `pod create` + `pod delete` of one more pod mounting the last claim, timed.

use cni_csi_lab::Lab;
use std::time::Instant;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: usize = 100;
const ROUNDS: usize = 500;

fn run(lab: &mut Lab, line: &str) -> Result<(), String> {
    lab.execute(line)
        .map(|_| ())
        .map_err(|e| format!("{line}: {}", e.message))
}

fn main() -> Result<(), String> {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .map_err(|_| format!("expected counts of running pods, got {a:?}"))
        })
        .collect::<Result<_, _>>()?;
    let counts = if counts.is_empty() {
        vec![0, 100, 400, 1000]
    } else {
        counts
    };
    println!("{:>8} {:>22}", "running", "µs per create+delete");
    for running in counts {
        let mut lab = Lab::empty();
        for i in 0..NODES {
            run(
                &mut lab,
                &format!(
                    "node add n{i} --cidr 10.{}.{}.0/24 --ip 192.168.{}.{}",
                    1 + i / 200,
                    i % 200,
                    i / 200,
                    i % 200 + 1
                ),
            )?;
        }
        lab.install_storage_defaults();
        for i in 0..=running {
            run(&mut lab, &format!("pvc create d{i} --size 1Gi"))?;
        }
        for i in 0..running {
            run(
                &mut lab,
                &format!("pod create r{i} --node n{} --pvc d{i}", i % NODES),
            )?;
        }
        let up = lab
            .cluster
            .pods
            .values()
            .filter(|p| p.status.phase == "Running")
            .count();
        if up != running {
            return Err(format!(
                "only {up} of {running} pods are Running: the CSI driver attaches a limited \
                 number of volumes per node ({NODES} nodes here; `describe pod` on a waiting \
                 pod says why); try a smaller count"
            ));
        }
        let t = Instant::now();
        for j in 0..ROUNDS {
            run(
                &mut lab,
                &format!("pod create x{j} --node n{} --pvc d{running}", j % NODES),
            )?;
            run(&mut lab, &format!("pod delete x{j}"))?;
        }
        let per = t.elapsed().as_secs_f64() * 1e6 / ROUNDS as f64;
        println!("{running:>8} {per:>22.1}");
    }
    Ok(())
}
