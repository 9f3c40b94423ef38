//! Side by side with the Python mini (issue 21's anchor): the same pod workloads through
//! `cni-csi-lab run FILE` (every line parsed by clap, every output line rendered) and
//! through the chapter 7 Python demo of the AI Infra Handbook (`cni_csi_mini`, driven
//! through its own kubelet), in one run, median of three rounds (each round starting with
//! the next contestant), pods/s and the ratio.
//!
//! ```text
//! git clone --depth 1 https://github.com/cypggs/AI_Infra_Handbook /tmp/AI_Infra_Handbook
//! cargo build --release
//! cargo run --release --example vs_mini -- /tmp/AI_Infra_Handbook
//! cargo run --release --example vs_mini -- /tmp/AI_Infra_Handbook --lab /tmp/before/cni-csi-lab
//! ```
//!
//! The path is the handbook checkout (or its `docs/02-cloud-native/cni-csi/mini-demo`
//! directory; the mini is pure standard library, Python 3.9+). Without it, or without
//! `python3`, the lab side runs alone and the comparison is skipped. `--lab PATH`
//! (repeatable) measures other builds of the lab beside `target/release/cni-csi-lab`, for
//! before/after figures in one run; `--rounds N` (default 3); `--only net|vol`; `--scripts
//! DIR` keeps the lab's scripts there (`net-10x200.lab`, …, and `setup-N.lab`) for
//! `perf` or `valgrind`.
//!
//! The workloads, the same on both sides (names, nodes, order):
//! - **net N×P**: N nodes (`node-1` … with podCIDR `10.244.i.0/24`, as the mini's
//!   `build_cluster` lays them out), P pods per node, created then deleted in waves of at most
//!   100 per node (a node runs at most 110 pods: kubelet's `maxPods`); network only,
//!   `pod create NAME --node NODE` / `pod delete NAME`.
//! - **vol N×P**: the same with a claim and a volume per pod, in waves of at most 16 per node
//!   (the driver's attach limit): `pvc create` (class `local-wffc`, 1Gi), `pod create … --pvc`
//!   placed by the scheduler with `--node-selector kubernetes.io/hostname=NODE` (the claim is
//!   provisioned on that node, attached, staged, published), then the wave's pods deleted
//!   (unpublish, unstage, detach). The claims stay until the end, so they accumulate to N×P,
//!   and are deleted last (DeleteVolume, the PV removed).
//!
//! The mini's side is a small driver written here (its code is not copied): `build_cluster`,
//! then per pod `api.create` + `Kubelet.sync_pod` (CNI ADD; with a claim, CreateVolume + PV +
//! bind, ControllerPublish, NodeStage, NodePublish), and `Kubelet.delete_pod` +
//! `api.delete`; the claims last: `ControllerServer.delete_volume` and the PV and claim
//! deleted. It times the workload only (no interpreter start, import or cluster build). The
//! lab's time is the whole `run` process minus the median of the same process running only
//! the node setup, so neither side pays for its start. Each run is checked: every pod must
//! reach Running (the lab's `phase=Running` status lines, the mini's sandboxes and
//! publications per wave).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Pods per node per wave without volumes (kubelet's maxPods is 110).
const NET_WAVE: usize = 100;
/// Pods per node per wave with volumes (the driver's attach limit, 16).
const VOL_WAVE: usize = 16;
/// Where the mini lives in the handbook.
const MINI_DIR: &str = "docs/02-cloud-native/cni-csi/mini-demo";

const HOW_TO_GET: &str = "the Python mini is the chapter 7 demo of the AI Infra Handbook:
  git clone --depth 1 https://github.com/cypggs/AI_Infra_Handbook /tmp/AI_Infra_Handbook
  cargo run --release --example vs_mini -- /tmp/AI_Infra_Handbook";

/// One workload: N nodes, P pods per node, with or without a volume per pod.
#[derive(Debug, Clone, Copy)]
struct Workload {
    nodes: usize,
    per_node: usize,
    volumes: bool,
}

impl Workload {
    fn pods(self) -> usize {
        self.nodes * self.per_node
    }

    fn wave(self) -> usize {
        if self.volumes { VOL_WAVE } else { NET_WAVE }
    }

    fn name(self) -> String {
        format!(
            "{} {}×{}",
            if self.volumes { "vol" } else { "net" },
            self.nodes,
            self.per_node
        )
    }

    /// The lab's script: the node setup, and with `work` the workload after it.
    fn lab_script(self, work: bool) -> String {
        let mut s = String::new();
        // The default lab has node-1 and node-2 (10.244.1.0/24, 10.244.2.0/24).
        for i in 3..=self.nodes {
            s.push_str(&format!(
                "node add node-{i} --cidr 10.244.{i}.0/24 --ip 192.168.{}.{}\n",
                i / 250,
                i % 250
            ));
        }
        if !work {
            return s;
        }
        let mut start = 0;
        while start < self.per_node {
            let end = (start + self.wave()).min(self.per_node);
            for k in start..end {
                for i in 1..=self.nodes {
                    if self.volumes {
                        s.push_str(&format!(
                            "pvc create c{i}-{k} --size 1Gi --class local-wffc\n\
                             pod create p{i}-{k} --node-selector kubernetes.io/hostname=node-{i} --pvc c{i}-{k}\n"
                        ));
                    } else {
                        s.push_str(&format!("pod create p{i}-{k} --node node-{i}\n"));
                    }
                }
            }
            for k in start..end {
                for i in 1..=self.nodes {
                    s.push_str(&format!("pod delete p{i}-{k}\n"));
                }
            }
            start = end;
        }
        if self.volumes {
            for k in 0..self.per_node {
                for i in 1..=self.nodes {
                    s.push_str(&format!("pvc delete c{i}-{k}\n"));
                }
            }
        }
        s
    }
}

/// The mini's driver (argv: nodes, pods per node, wave, volumes 0/1). Prints the seconds
/// the workload took.
const MINI_DRIVER: &str = r#"
import sys, time
from cni_csi_mini.demo import build_cluster
from cni_csi_mini import make_pod, make_pvc, volume_mount, container_mount

n, per_node, wave, vol = (int(a) for a in sys.argv[1:5])
ctx = build_cluster(num_nodes=n)
api, kubelets, ctrl = ctx["api"], ctx["kubelets"], ctx["ctrl"]
bridge = ctx["bridge"]
claims = []
t0 = time.perf_counter()
start = 0
while start < per_node:
    end = min(start + wave, per_node)
    pods = []
    for k in range(start, end):
        for i in range(1, n + 1):
            node = f"node-{i}"
            if vol:
                c = f"c{i}-{k}"
                api.create(make_pvc(c, size_gi=1))
                claims.append(c)
                pod = make_pod(f"p{i}-{k}", node_name=node,
                               volumes=[volume_mount(c, "/data")],
                               containers=[{"name": "main", "image": "busybox",
                                            "volumeMounts": [container_mount(f"vol-{c}", "/data")]}])
            else:
                pod = make_pod(f"p{i}-{k}", node_name=node)
            api.create(pod)
            kubelets[node].sync_pod(pod)
            pods.append((node, pod["metadata"]["name"]))
    running = sum(len(a) for a in bridge.attachments.values())
    if running != len(pods):
        sys.exit(f"mini: {running} of {len(pods)} pods have a network")
    if vol:
        published = sum(len(k.node_store._published) for k in kubelets.values())
        if published != len(pods):
            sys.exit(f"mini: {published} of {len(pods)} volumes are published")
    for node, name in pods:
        kubelets[node].delete_pod(api.get("Pod", "default", name))
        api.delete("Pod", "default", name)
    start = end
for c in claims:
    pv = api.get("PersistentVolume", "", f"pv-{c}")
    ctrl.delete_volume(pv["spec"]["csi"]["volumeHandle"])
    api.delete("PersistentVolume", "", f"pv-{c}")
    api.delete("PersistentVolumeClaim", "default", c)
elapsed = time.perf_counter() - t0
if any(len(a) for a in bridge.attachments.values()) or ctrl.store._volumes:
    sys.exit("mini: something was left behind")
print(elapsed)
"#;

struct Opts {
    mini: Option<PathBuf>,
    labs: Vec<PathBuf>,
    rounds: usize,
    only: Option<bool>,
    scripts: Option<PathBuf>,
}

fn parse_opts() -> Result<Opts, String> {
    let default_lab = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/cni-csi-lab");
    let mut o = Opts {
        mini: None,
        labs: Vec::new(),
        rounds: 3,
        only: None,
        scripts: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--lab" => o.labs.push(args.next().ok_or("--lab needs a path")?.into()),
            "--rounds" => {
                o.rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--rounds needs a positive number")?;
            }
            "--scripts" => {
                o.scripts = Some(args.next().ok_or("--scripts needs a directory")?.into())
            }
            "--only" => {
                o.only = match args.next().as_deref() {
                    Some("net") => Some(false),
                    Some("vol") => Some(true),
                    _ => return Err("--only takes net or vol".into()),
                }
            }
            "-h" | "--help" => {
                return Err(format!(
                    "usage: vs_mini [HANDBOOK_CHECKOUT] [--lab PATH]... [--rounds N] [--only net|vol] [--scripts DIR]\n{HOW_TO_GET}"
                ));
            }
            p if !p.starts_with('-') && o.mini.is_none() => o.mini = Some(p.into()),
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    o.labs.insert(0, default_lab);
    Ok(o)
}

/// The mini's package directory under a checkout (or the directory itself).
fn find_mini(path: &Path) -> Option<PathBuf> {
    [path.join(MINI_DIR), path.to_path_buf()]
        .into_iter()
        .find(|d| d.join("cni_csi_mini/kubelet.py").is_file())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One `run FILE` of a lab binary: its wall time; the output is checked for `pods`
/// `phase=Running` status lines when `pods` is given.
fn lab_run(lab: &Path, script: &Path, pods: Option<usize>) -> Result<f64, String> {
    let out_path = std::env::temp_dir().join("vs_mini.out");
    let out = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let status = Command::new(lab)
        .arg("run")
        .arg(script)
        .stdout(out)
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("{}: {e}", lab.display()))?;
    let secs = t.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!(
            "{} run {}: {status}",
            lab.display(),
            script.display()
        ));
    }
    if let Some(pods) = pods {
        let text = std::fs::read_to_string(&out_path).map_err(|e| e.to_string())?;
        let running = text.matches(" phase=Running").count();
        if running != pods {
            return Err(format!(
                "{}: {running} of {pods} pods reached Running (output in {})",
                lab.display(),
                out_path.display()
            ));
        }
    }
    Ok(secs)
}

/// One run of the mini's driver: the seconds its workload took.
fn mini_run(dir: &Path, w: Workload) -> Result<f64, String> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(MINI_DRIVER)
        .args([
            w.nodes.to_string(),
            w.per_node.to_string(),
            w.wave().to_string(),
            u8::from(w.volumes).to_string(),
        ])
        .env("PYTHONPATH", dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the mini failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| "the mini's driver printed no time".to_string())
}

fn main() -> Result<(), String> {
    let o = parse_opts()?;
    for lab in &o.labs {
        if !lab.is_file() {
            return Err(format!(
                "{} does not exist: build it first (`cargo build --release`)",
                lab.display()
            ));
        }
    }
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mini = match (&o.mini, python) {
        (None, _) => {
            println!(
                "no mini checkout given: the lab runs alone, the comparison is skipped\n{HOW_TO_GET}\n"
            );
            None
        }
        (Some(p), false) => {
            println!(
                "python3 not found: the comparison with {} is skipped\n",
                p.display()
            );
            None
        }
        (Some(p), true) => match find_mini(p) {
            Some(d) => Some(d),
            None => {
                println!(
                    "{} holds no mini ({MINI_DIR}/cni_csi_mini): the comparison is skipped\n{HOW_TO_GET}\n",
                    p.display()
                );
                None
            }
        },
    };
    let all = [
        Workload {
            nodes: 10,
            per_node: 200,
            volumes: false,
        },
        Workload {
            nodes: 100,
            per_node: 100,
            volumes: false,
        },
        Workload {
            nodes: 10,
            per_node: 200,
            volumes: true,
        },
        Workload {
            nodes: 100,
            per_node: 100,
            volumes: true,
        },
    ];
    let workloads: Vec<Workload> = all
        .into_iter()
        .filter(|w| o.only.is_none_or(|v| v == w.volumes))
        .collect();
    let dir = o
        .scripts
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("vs_mini-{}", std::process::id())));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let names: Vec<String> = o.labs.iter().map(|p| p.display().to_string()).collect();
    println!(
        "median of {} rounds; lab = `run FILE` wall minus its node setup; mini = its workload only",
        o.rounds
    );
    for (i, n) in names.iter().enumerate() {
        println!(
            "  lab{} = {n}",
            if i == 0 {
                String::new()
            } else {
                format!("#{i}")
            }
        );
    }
    println!();
    print!("{:<14}{:>8}", "workload", "pods");
    for i in 0..o.labs.len() {
        let name = if i == 0 {
            "lab".to_string()
        } else {
            format!("lab#{i}")
        };
        print!("{:>14}", format!("{name} pods/s"));
    }
    if mini.is_some() {
        print!("{:>14}{:>10}", "mini pods/s", "lab/mini");
    }
    println!();
    for w in workloads {
        let setup = dir.join(format!("setup-{}.lab", w.nodes));
        let full = dir.join(format!(
            "{}-{}x{}.lab",
            if w.volumes { "vol" } else { "net" },
            w.nodes,
            w.per_node
        ));
        std::fs::write(&setup, w.lab_script(false)).map_err(|e| e.to_string())?;
        std::fs::write(&full, w.lab_script(true)).map_err(|e| e.to_string())?;
        let mut lab_times: Vec<Vec<f64>> = vec![Vec::new(); o.labs.len()];
        let mut mini_times = Vec::new();
        // Each round starts with the next contestant: whoever runs first in a round (after
        // the previous workload) measured ~10 % slower on the benchmark machine.
        let contestants = o.labs.len() + usize::from(mini.is_some());
        for round in 0..o.rounds {
            for c in (0..contestants).map(|k| (k + round) % contestants) {
                match o.labs.get(c) {
                    Some(lab) => {
                        let base = median(
                            (0..3)
                                .map(|_| lab_run(lab, &setup, None))
                                .collect::<Result<_, _>>()?,
                        );
                        let t = lab_run(lab, &full, Some(w.pods()))?;
                        lab_times[c].push((t - base).max(1e-9));
                    }
                    None => {
                        if let Some(d) = &mini {
                            mini_times.push(mini_run(d, w)?);
                        }
                    }
                }
            }
        }
        let rate = |t: f64| w.pods() as f64 / t;
        print!("{:<14}{:>8}", w.name(), w.pods());
        let lab_rates: Vec<f64> = lab_times.into_iter().map(|t| rate(median(t))).collect();
        for r in &lab_rates {
            print!("{r:>14.0}");
        }
        if !mini_times.is_empty() {
            let m = rate(median(mini_times));
            print!("{m:>14.0}{:>9.1}×", lab_rates[0] / m);
        }
        println!();
    }
    if o.scripts.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
