//! What a pod with a volume costs as the cluster fills: with more pods that use volumes
//! running, and with more claims (and their volumes) in the cluster (issue 21: no O(V) work
//! per CSI call or controller pass, so the cost stays flat).
//!
//! ```text
//! cargo run --release --example volume_scale -- 0 100 400 1000
//! cargo run --release --example volume_scale -- --claims 1000 10000 100000
//! ```
//!
//! Both on 100 nodes `n0` … `n99` with the default StorageClasses. Each timed round is the
//! whole life of one pod with its own volume: `pvc create` (class `local-wffc`, 1Gi),
//! `pod create … --pvc` placed by the scheduler on a node picked with `--node-selector` (the
//! claim is provisioned there: CreateVolume, attach, stage, publish), `pod delete`
//! (unpublish, unstage, detach) and `pvc delete` (DeleteVolume); 500 rounds (`--rounds N`
//! first to change it), µs per round.
//!
//! - Running pods (the counts given, default 0 100 400 1000): R pods with their own
//!   `local-wffc` claims run, R/100 per node (at most 15, leaving the timed pod room under
//!   the driver's attach limit of 16), each count in a fresh lab.
//! - `--claims` (counts in increasing order): claims of the default (Immediate) class
//!   accumulate in one lab, each provisioned and bound (a volume in the driver, a PV) but not
//!   used; at each count the rounds are timed. The time per `pvc create` while they
//!   accumulate is printed too (provisioning V volumes one by one).

use cni_csi_lab::Lab;
use std::time::Instant;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const NODES: usize = 100;
/// Timed rounds per count (`--rounds N` before the counts).
const ROUNDS: usize = 500;

fn run(lab: &mut Lab, line: &str) -> Result<(), String> {
    lab.execute(line)
        .map(|_| ())
        .map_err(|e| format!("{line}: {}", e.message))
}

/// An empty lab with `NODES` nodes and the default StorageClasses.
fn cluster() -> Result<Lab, String> {
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
    Ok(lab)
}

/// The pods in phase Running.
fn running(lab: &Lab) -> usize {
    lab.cluster()
        .pods
        .values()
        .filter(|p| p.status.phase == "Running")
        .count()
}

/// Nanoseconds this process has run on a CPU (Linux's schedstat), so that other
/// processes sharing the machine do not count; `None` elsewhere.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Wall and CPU µs per unit between two points.
struct Per {
    wall: f64,
    cpu: Option<f64>,
}

impl Per {
    fn since(t: Instant, cpu: Option<u64>, units: usize) -> Per {
        let units = units.max(1) as f64;
        Per {
            wall: t.elapsed().as_secs_f64() * 1e6 / units,
            cpu: cpu
                .zip(cpu_ns())
                .map(|(a, b)| b.saturating_sub(a) as f64 / 1e3 / units),
        }
    }
}

impl std::fmt::Display for Per {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cpu {
            Some(cpu) => write!(f, "{:>9.1} {:>9.1}", self.wall, cpu),
            None => write!(f, "{:>9.1} {:>9}", self.wall, "-"),
        }
    }
}

/// `n` lives of a pod with its own volume; µs per round. Checks that each pod ran.
fn rounds(lab: &mut Lab, tag: &str, n: usize) -> Result<Per, String> {
    let (t, cpu) = (Instant::now(), cpu_ns());
    for j in 0..n {
        let node = j % NODES;
        run(
            lab,
            &format!("pvc create {tag}c{j} --size 1Gi --class local-wffc"),
        )?;
        run(
            lab,
            &format!(
                "pod create {tag}p{j} --node-selector kubernetes.io/hostname=n{node} --pvc {tag}c{j}"
            ),
        )?;
        let key = ("default".to_string(), format!("{tag}p{j}"));
        if lab
            .cluster()
            .pods
            .get(&key)
            .is_none_or(|p| p.status.phase != "Running")
        {
            return Err(format!(
                "pod {tag}p{j} did not start (`describe pod {tag}p{j}` says why)"
            ));
        }
        run(lab, &format!("pod delete {tag}p{j}"))?;
        run(lab, &format!("pvc delete {tag}c{j}"))?;
    }
    Ok(Per::since(t, cpu, n))
}

fn parse_counts(args: &[String]) -> Result<Vec<usize>, String> {
    args.iter()
        .map(|a| {
            a.replace('_', "")
                .parse()
                .map_err(|_| format!("expected a count, got {a:?}"))
        })
        .collect()
}

fn with_running(counts: Vec<usize>, n: usize) -> Result<(), String> {
    println!("µs per pod with a volume (wall, and CPU time of this process)");
    println!("{:>8} {:>9} {:>9}", "running", "wall", "cpu");
    for r in counts {
        if r > NODES * 15 {
            return Err(format!(
                "with {r} running pods a node has no room left under the driver's attach limit \
                 (16) for the timed pod; at most {}",
                NODES * 15
            ));
        }
        let mut lab = cluster()?;
        for i in 0..r {
            run(
                &mut lab,
                &format!("pvc create d{i} --size 1Gi --class local-wffc"),
            )?;
            run(
                &mut lab,
                &format!(
                    "pod create r{i} --node-selector kubernetes.io/hostname=n{} --pvc d{i}",
                    i % NODES
                ),
            )?;
        }
        let up = running(&lab);
        if up != r {
            return Err(format!("only {up} of {r} pods are Running"));
        }
        let per = rounds(&mut lab, "x", n)?;
        println!("{r:>8} {per}");
    }
    Ok(())
}

fn with_claims(counts: Vec<usize>, n: usize) -> Result<(), String> {
    println!(
        "µs per pod with a volume, and per `pvc create` on the way to that many claims (wall, and CPU time of this process)"
    );
    println!(
        "{:>8} {:>9} {:>9} {:>9} {:>9}",
        "claims", "pod wall", "pod cpu", "pvc wall", "pvc cpu"
    );
    let mut lab = cluster()?;
    let mut have = 0;
    for (i, c) in counts.into_iter().enumerate() {
        if c < have {
            return Err("--claims counts must increase".into());
        }
        let (t, cpu) = (Instant::now(), cpu_ns());
        for i in have..c {
            run(&mut lab, &format!("pvc create d{i} --size 1Gi"))?;
        }
        let per_claim = Per::since(t, cpu, c - have);
        have = c;
        let bound = lab
            .cluster()
            .pvcs
            .values()
            .filter(|p| p.status.phase == "Bound")
            .count();
        if bound != c {
            return Err(format!("only {bound} of {c} claims are Bound"));
        }
        let per = rounds(&mut lab, &format!("x{i}"), n)?;
        println!("{c:>8} {per} {per_claim}");
    }
    Ok(())
}

fn main() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut n = ROUNDS;
    if args.first().map(String::as_str) == Some("--rounds") {
        n = args
            .get(1)
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .ok_or("--rounds needs a positive number")?;
        args.drain(..2);
    }
    match args.first().map(String::as_str) {
        Some("--claims") => {
            let counts = parse_counts(&args[1..])?;
            with_claims(if counts.is_empty() {
                vec![1_000, 10_000, 100_000]
            } else {
                counts
            }, n)
        }
        Some("-h" | "--help") => Err(
            "usage: volume_scale [--rounds N] [RUNNING...] | volume_scale [--rounds N] --claims [CLAIMS...]"
                .to_string(),
        ),
        _ => {
            let counts = parse_counts(&args)?;
            with_running(if counts.is_empty() {
                vec![0, 100, 400, 1000]
            } else {
                counts
            }, n)
        }
    }
}
