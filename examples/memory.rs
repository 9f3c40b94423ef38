//! What a running pod and a pod create+delete cost in heap, counted exactly (dhat's
//! allocator counts every allocation and every live byte, so the figures repeat run to run).
//!
//! ```text
//! cargo run --release --example memory -- 2000
//! cargo run --release --example memory -- --k8s-limits 150000
//! cargo run --release --example memory -- --k8s-limits 150000 --profile /tmp/dhat-pods.json
//! ```
//!
//! With `--k8s-limits N`: live heap bytes over `--preset k8s-limits` (5,000 nodes) after N
//! pods pinned round-robin to its nodes (`pod create pNNNNNN --node node-NNNN`), per pod and
//! in blocks: issue 41's ≤ 2 KiB a pod at 150,000 pods. `--profile FILE` then writes dhat's
//! per-allocation-site profile (bytes at the peak by allocation stack) for `dh_view.html`.
//!
//! 40 nodes; 3,000 pods are created and deleted first, so the call and wire logs are full
//! rings before anything is counted (they stay that size). Then: allocations and bytes per
//! `pod create` + `pod delete` (network only, through `Lab::apply`), and live heap bytes per
//! running pod after N more creates. RSS-based figures (`examples/scale.rs`) add the
//! allocator's own overhead and unused pages on top of these.

use cni_csi_lab::Lab;
use lab_engine::command::parse;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() -> Result<(), String> {
    if std::env::args().nth(1).as_deref() == Some("--k8s-limits") {
        return k8s_limits();
    }
    let n: usize = match std::env::args().nth(1) {
        None => 2000,
        Some(s) => s
            .parse()
            .map_err(|_| format!("expected a number of pods, got {s:?}"))?,
    };
    let mut lab = Lab::empty();
    let run = |lab: &mut Lab, line: &str| lab.execute(line).map(|_| ()).map_err(|e| e.message);
    for i in 0..40u32 {
        run(
            &mut lab,
            &format!(
                "node add n{i} --cidr 10.1.{}.0/24 --ip 192.168.0.{}",
                i + 1,
                i + 1
            ),
        )?;
    }
    for i in 0..3000 {
        run(&mut lab, &format!("pod create warm{i} --node n{}", i % 40))?;
        run(&mut lab, &format!("pod delete warm{i}"))?;
    }
    let command = |line: String| match parse(&line) {
        Ok(Some(c)) => Ok(c),
        _ => Err(format!("does not parse: {line}")),
    };
    let mut churn = Vec::with_capacity(n);
    for i in 0..n {
        let create = command(format!("pod create churn{i} --node n{}", i % 40))?;
        let delete = command(format!("pod delete churn{i}"))?;
        churn.push((create, delete));
    }

    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    for (create, delete) in churn {
        lab.apply(create).map_err(|e| e.message)?;
        lab.apply(delete).map_err(|e| e.message)?;
    }
    let after = dhat::HeapStats::get();
    let per = |x: u64, y: u64| (x - y) as f64 / n as f64;
    println!(
        "pod create+delete: {:.0} allocations, {:.0} bytes allocated",
        per(after.total_blocks, before.total_blocks),
        per(after.total_bytes, before.total_bytes)
    );
    let live_before = dhat::HeapStats::get().curr_bytes;
    for i in 0..n {
        run(&mut lab, &format!("pod create p{i} --node n{}", i % 40))?;
    }
    let live_after = dhat::HeapStats::get().curr_bytes;
    println!(
        "{n} running pods: {:.0} live heap bytes per pod",
        (live_after - live_before) as f64 / n as f64
    );
    Ok(())
}

/// `--k8s-limits N`: N pinned pods over the 5,000-node preset, the live heap they add.
fn k8s_limits() -> Result<(), String> {
    let n: usize = match std::env::args().nth(2) {
        None => 150_000,
        Some(s) => s
            .parse()
            .map_err(|_| format!("expected a number of pods, got {s:?}"))?,
    };
    let _profiler = match std::env::args().nth(3).as_deref() {
        Some("--profile") => {
            let file = std::env::args().nth(4).ok_or("--profile needs a file")?;
            dhat::Profiler::builder().file_name(file).build()
        }
        _ => dhat::Profiler::builder().testing().build(),
    };
    let mut lab = lab_engine::presets::build("k8s-limits", Default::default())?;
    let before = dhat::HeapStats::get();
    for i in 0..n {
        let line = format!("pod create p{i:06} --node node-{:04}", i % 5000 + 1);
        lab.execute(&line).map_err(|e| e.message)?;
    }
    let after = dhat::HeapStats::get();
    let bytes = after.curr_bytes as f64 - before.curr_bytes as f64;
    let blocks = after.curr_blocks as f64 - before.curr_blocks as f64;
    println!(
        "{n} pinned pods over --preset k8s-limits: live heap {:.1} MB, {:.0} B a pod, {:.1} blocks a pod",
        bytes / 1e6,
        bytes / n as f64,
        blocks / n as f64
    );
    Ok(())
}
