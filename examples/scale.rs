//! A scale run a teacher can start: how pod creation time grows with the number of pods
//! (10³, 10⁴, 10⁵: it should be linear), what a running pod costs in memory, and how long
//! deleting them takes. Pods are created through `Lab::execute`, the path a learner's
//! `pod create` takes, on nodes laid out like `--preset dc-1000` (`presets::dc_script`).
//!
//! ```text
//! cargo run --release --example scale -- --pods 100000 --nodes 400
//! ```
//!
//! Memory: VmRSS (from /proc/self/status) after the nodes exist and after the largest run's
//! pods are all running; the difference divided by the pods is KiB per running pod (the
//! call and wire logs are rings of fixed size, so they do not grow with the run).
//! Each size runs in a process of its own (the example starts itself with `--one N`), so
//! every run starts from the same empty heap: in one process the later runs would reuse
//! pages the first one already faulted in and look cheaper than they are.

use cni_csi_lab::Lab;
use indicatif::{ProgressBar, ProgressStyle};
use lab_engine::presets::dc_script;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Command-line options: `--pods N` (largest run), `--nodes N` (at most 1,024), and
/// `--one N` (run only that size, in this process, and print its figures as one line).
struct Opts {
    pods: u32,
    nodes: u32,
    one: Option<u32>,
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        pods: 100_000,
        nodes: 400,
        one: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> Result<u32, String> {
            args.next()
                .and_then(|v| v.replace('_', "").parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match a.as_str() {
            "--pods" => o.pods = num("--pods")?,
            "--nodes" => o.nodes = num("--nodes")?,
            "--one" => o.one = Some(num("--one")?),
            "-h" | "--help" => {
                return Err("usage: scale [--pods N (100000)] [--nodes N (400, max 1024)]".into());
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if o.nodes == 0 || o.nodes > 1024 {
        return Err("--nodes must be between 1 and 1024".into());
    }
    if let Some(one) = o.one {
        o.pods = one;
    }
    if o.pods as u64 > o.nodes as u64 * 253 {
        return Err(format!(
            "{} pods do not fit on {} nodes with /24s (253 each)",
            o.pods, o.nodes
        ));
    }
    Ok(o)
}

/// VmRSS in KiB, if /proc says.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn lab_with_nodes(nodes: u32) -> Lab {
    let mut lab = Lab::empty();
    for line in dc_script(nodes).lines() {
        if let Err(e) = lab.execute(line) {
            eprintln!("{line}: {}", e.message);
            std::process::exit(1);
        }
    }
    lab
}

fn bar(len: u64, label: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos:>7}/{len} {per_sec:>12} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(label.to_string());
    pb
}

/// One run's figures.
struct Run {
    pods: u32,
    create: Duration,
    delete: Duration,
    rss_before: Option<u64>,
    rss_running: Option<u64>,
}

fn run(pods: u32, nodes: u32) -> Run {
    let mut lab = lab_with_nodes(nodes);
    let rss_before = rss_kib();
    let names: Vec<String> = (0..pods).map(|p| format!("p{p:06}")).collect();
    let lines: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(p, n)| format!("pod create {n} --node node-{:04}", p as u32 % nodes + 1))
        .collect();
    let step = (pods / 200).max(1) as usize;
    let pb = bar(pods as u64, &format!("create {pods}"));
    let t = Instant::now();
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = lab.execute(line) {
            pb.abandon();
            eprintln!("{line}: {}", e.message);
            std::process::exit(1);
        }
        if i % step == 0 {
            pb.set_position(i as u64);
        }
    }
    let create = t.elapsed();
    pb.finish_and_clear();
    let running = lab
        .cluster()
        .pods
        .values()
        .filter(|p| p.status.phase == "Running")
        .count();
    if running != pods as usize {
        eprintln!("only {running} of {pods} pods are Running");
        std::process::exit(1);
    }
    let rss_running = rss_kib();
    let pb = bar(pods as u64, &format!("delete {pods}"));
    let t = Instant::now();
    for (i, n) in names.iter().enumerate() {
        if let Err(e) = lab.execute(&format!("pod delete {n}")) {
            pb.abandon();
            eprintln!("pod delete {n}: {}", e.message);
            std::process::exit(1);
        }
        if i % step == 0 {
            pb.set_position(i as u64);
        }
    }
    let delete = t.elapsed();
    pb.finish_and_clear();
    Run {
        pods,
        create,
        delete,
        rss_before,
        rss_running,
    }
}

/// Run one size in a fresh copy of this example (`--one N`); `None` if that cannot be done.
fn in_own_process(pods: u32, nodes: u32) -> Option<Run> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .args(["--one", &pods.to_string(), "--nodes", &nodes.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("RESULT "))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    let nanos = |s: &str| s.parse::<u64>().ok().map(Duration::from_nanos);
    Some(Run {
        pods: f.first()?.parse().ok()?,
        create: nanos(f.get(1)?)?,
        delete: nanos(f.get(2)?)?,
        rss_before: f.get(3)?.parse().ok(),
        rss_running: f.get(4)?.parse().ok(),
    })
}

fn main() {
    let opts = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Some(one) = opts.one {
        let r = run(one, opts.nodes);
        let kib = |v: Option<u64>| v.map_or("-".to_string(), |k| k.to_string());
        println!(
            "RESULT {} {} {} {} {}",
            r.pods,
            r.create.as_nanos(),
            r.delete.as_nanos(),
            kib(r.rss_before),
            kib(r.rss_running)
        );
        return;
    }
    let mut sizes = vec![opts.pods];
    for s in [10_000, 1_000] {
        if s < opts.pods {
            sizes.push(s);
        }
    }
    println!(
        "scale: pod create then delete through Lab::execute on {} nodes (/24 podCIDRs)",
        opts.nodes
    );
    let runs: Vec<Run> = sizes
        .iter()
        .map(|&p| in_own_process(p, opts.nodes).unwrap_or_else(|| run(p, opts.nodes)))
        .collect();
    let base = runs.last().map(|r| r.create.as_secs_f64() / r.pods as f64);
    println!(
        "{:>8} {:>11} {:>10} {:>10} {:>11} {:>10} {:>9}",
        "pods", "create", "µs/pod", "pods/s", "delete", "µs/pod", "vs 10³"
    );
    for r in runs.iter().rev() {
        let c = r.create.as_secs_f64() / r.pods as f64;
        let d = r.delete.as_secs_f64() / r.pods as f64;
        println!(
            "{:>8} {:>10.3}s {:>10.2} {:>10.0} {:>10.3}s {:>10.2} {:>8.2}x",
            r.pods,
            r.create.as_secs_f64(),
            c * 1e6,
            1.0 / c,
            r.delete.as_secs_f64(),
            d * 1e6,
            base.map(|b| c / b).unwrap_or(1.0)
        );
    }
    if let Some(r) = runs.first() {
        match (r.rss_before, r.rss_running) {
            (Some(a), Some(b)) => println!(
                "memory: VmRSS {a} KiB with {} nodes, {b} KiB with {} pods running: {:.2} KiB per running pod",
                opts.nodes,
                r.pods,
                b.saturating_sub(a) as f64 / r.pods as f64
            ),
            _ => println!("memory: /proc/self/status not readable here"),
        }
    }
}
