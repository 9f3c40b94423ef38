//! Kubernetes' published scale envelope on `--preset k8s-limits` (5,000 nodes): how long
//! the preset takes to build, how fast pods are created pinned to a node (`pod create
//! NAME --node N`) and placed by the scheduler (`pod create NAME`), and what a running pod
//! costs in memory. Every line goes through `Lab::execute`, the path a learner's command
//! takes.
//!
//! ```text
//! cargo run --release --example envelope -- --pinned 150000 --scheduled 0
//! cargo run --release --example envelope -- --pinned 0 --scheduled 20000
//! cargo run --release --example envelope -- --pinned 150000 --scheduled 0 --interactive 9
//! ```
//!
//! `--over N` pins the pods over the first N nodes only (all 5,000 by default): at 500,
//! 15,000 pods fill their nodes as 150,000 fill 5,000, for a profile of a full node at a
//! tenth of the run.
//!
//! `--interactive N` then times single commands a learner would type at that size (each
//! run N times, the median wall time; the N pods created are deleted in the next row).
//! For `get pods -l app=x` it first creates 100 pods labelled `app=x` (on nodes 1 to 100).
//!
//! Times are wall and CPU (user + system, from /proc/self/stat) so a shared machine's load
//! shows as the gap between them; memory is VmRSS after the preset and after the pods run.

use lab_engine::engine::Lab;
use std::time::{Duration, Instant};

// The same allocator the binary uses (`src/main.rs`), so the figures are what a learner
// running `cni-csi-lab --preset k8s-limits` gets.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// User + system CPU time of this process, from /proc/self/stat (clock ticks of 10 ms).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

#[path = "support/rss.rs"]
mod rss;
use rss::rss_kib;

/// Run `lines` through the lab; wall and CPU time.
fn timed(lab: &mut Lab, lines: impl Iterator<Item = String>) -> (Duration, Duration) {
    let (wall, cpu0) = (Instant::now(), cpu());
    for line in lines {
        if let Err(e) = lab.execute(&line) {
            eprintln!("{line}: {}", e.message);
            std::process::exit(1);
        }
    }
    (wall.elapsed(), cpu() - cpu0)
}

fn main() {
    let mut pinned = 10_000u32;
    let mut scheduled = 2_000u32;
    let mut repeats = 0u32;
    let mut over = 5_000u32;
    let usage = "usage: envelope [--pinned N (10000)] [--scheduled N (2000)] [--over NODES (5000)] \
                 [--interactive N (0)]";
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let target = match a.as_str() {
            "--pinned" => &mut pinned,
            "--scheduled" => &mut scheduled,
            "--interactive" => &mut repeats,
            "--over" => &mut over,
            _ => {
                eprintln!("envelope: unknown argument {a:?}\n{usage}");
                std::process::exit(2);
            }
        };
        let value = args.next();
        match value.as_deref().map(|v| v.replace('_', "").parse::<u32>()) {
            Some(Ok(n)) => *target = n,
            Some(Err(_)) => {
                eprintln!(
                    "envelope: {a} takes a whole number (0 to {}), not {:?}\n{usage}",
                    u32::MAX,
                    value.unwrap_or_default()
                );
                std::process::exit(2);
            }
            None => {
                eprintln!("envelope: {a} needs a whole number\n{usage}");
                std::process::exit(2);
            }
        }
    }
    if !(1..=5_000).contains(&over) {
        eprintln!("envelope: --over takes a number of nodes from 1 to 5000, not {over}\n{usage}");
        std::process::exit(2);
    }
    let (wall, cpu0) = (Instant::now(), cpu());
    let mut lab =
        lab_engine::presets::build("k8s-limits", Default::default()).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    let (preset_wall, preset_cpu) = (wall.elapsed(), cpu() - cpu0);
    let rss_nodes = rss_kib();
    println!(
        "preset k8s-limits: 5000 nodes in {:.3} s wall, {:.3} s CPU; VmRSS {} MiB",
        preset_wall.as_secs_f64(),
        preset_cpu.as_secs_f64(),
        rss_nodes / 1024
    );
    // The CPU clock counts in scheduler ticks: a run shorter than ~50 ms gives no rate
    // worth printing.
    let rate = |n: u32, d: Duration| {
        if d < Duration::from_millis(50) {
            "too short to rate".to_string()
        } else {
            format!("{:.0} pods/s of CPU", f64::from(n) / d.as_secs_f64())
        }
    };
    if pinned > 0 {
        let lines =
            (0..pinned).map(|i| format!("pod create p{i:06} --node node-{:04}", i % over + 1));
        let (w, c) = timed(&mut lab, lines);
        println!(
            "{pinned} pinned pods: {:.2} s wall, {:.2} s CPU ({})",
            w.as_secs_f64(),
            c.as_secs_f64(),
            rate(pinned, c)
        );
    }
    if scheduled > 0 {
        let lines = (0..scheduled).map(|i| format!("pod create s{i:06}"));
        let (w, c) = timed(&mut lab, lines);
        println!(
            "{scheduled} scheduled pods: {:.2} s wall, {:.2} s CPU ({})",
            w.as_secs_f64(),
            c.as_secs_f64(),
            rate(scheduled, c)
        );
    }
    let pods = u64::from(pinned + scheduled);
    if pods > 0 {
        let rss = rss_kib();
        println!(
            "VmRSS {} MiB with {pods} pods running: {:.0} bytes per pod over the nodes' {} MiB",
            rss / 1024,
            (rss.saturating_sub(rss_nodes) * 1024) as f64 / pods as f64,
            rss_nodes / 1024
        );
    }
    if repeats > 0 && pods >= 2 {
        interactive(&mut lab, repeats, pinned > 0);
    }
}

/// Time single commands on the loaded lab: the median wall time of `repeats` runs each.
fn interactive(lab: &mut Lab, repeats: u32, pinned: bool) {
    let (a, b) = if pinned {
        ("p000000", "p000001")
    } else {
        ("s000000", "s000001")
    };
    for i in 0..100 {
        let line = format!("pod create x{i:03} --node node-{:04} -l app=x", i + 1);
        if let Err(e) = lab.execute(&line) {
            eprintln!("{line}: {}", e.message);
            std::process::exit(1);
        }
    }
    let commands = [
        "pod create i{k}".to_string(),
        "pod delete i{k}".to_string(),
        format!("get pod {a}"),
        "get pods -l app=x".to_string(),
        "show routes node-0001".to_string(),
        format!("trace {a} {b}"),
        format!("reach {a} {b}"),
        "describe node node-0001".to_string(),
    ];
    for command in commands {
        let mut times: Vec<Duration> = (0..repeats)
            .map(|k| {
                // `pod delete i{k}` deletes the pods `pod create i{k}` made in the row before.
                let line = command.replace("{k}", &k.to_string());
                let t = Instant::now();
                if let Err(e) = lab.execute(&line) {
                    eprintln!("{line}: {}", e.message);
                    std::process::exit(1);
                }
                t.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{command}: median {:.2} ms wall over {repeats} runs",
            times[times.len() / 2].as_secs_f64() * 1000.0
        );
    }
}
