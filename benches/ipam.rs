//! host-local allocation cost, straight through the plugin (`skel::dispatch` → `HostLocal`,
//! cniVersion 1.0.0, one network on one node), on a /16: 65,533 leases (65,534 hosts minus
//! the gateway, which host-local never hands out).
//!
//! - `ipam_fill_16`: one iteration fills the whole /16 from empty (65,533 ADDs).
//! - `ipam_add_del_sequential/<fill>`: the range filled in order to 0%, 50%, 90%, 99%, then
//!   one more ADD and its DEL per iteration (the steady state at that fill level; the
//!   round-robin cursor walks the free space and wraps over the leased part, as upstream).
//! - `ipam_add_del_after_churn/<fill>`: the same pair after 200,000 seeded random ADD/DELs
//!   held around that fill level, so the free addresses are scattered over the range.
//!
//! Run: `cargo bench --bench ipam -- --warm-up-time 1 --measurement-time 3`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lab_engine::cni::host::Host;
use lab_engine::cni::plugin::{CniCommand, CniEnv, PluginCtx, PluginOutput, Stdin};
use lab_engine::cni::plugins::host_local::HostLocal;
use lab_engine::cni::registry::Registry;
use lab_engine::cni::skel;
use serde_json::json;
use std::hint::black_box;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Usable leases in 10.10.0.0/16: .0.1 is the gateway, .255.255 the broadcast address.
const CAPACITY: usize = 65_533;

/// The IPAM world of one node: its host, an empty registry, the config, two envs.
struct Ipam {
    host: Host,
    registry: Registry,
    stdin: Stdin,
    add: CniEnv,
    del: CniEnv,
}

impl Ipam {
    fn new() -> Self {
        let conf = json!({
            "cniVersion": "1.0.0",
            "name": "bench",
            "type": "host-local",
            "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.10.0.0/16"}]]}
        });
        let env = |cmd| CniEnv {
            command: Some(cmd),
            container_id: Default::default(),
            netns: "/var/run/netns/bench".into(),
            ifname: "eth0".into(),
            args: String::new(),
            path: "/opt/cni/bin".into(),
        };
        Ipam {
            host: Host::new(
                "node-1",
                "192.168.0.10",
                "02:00:00:00:00:01".parse().expect("a MAC"),
            ),
            registry: Registry::empty(),
            stdin: Stdin::from_conf(conf),
            add: env(CniCommand::Add),
            del: env(CniCommand::Del),
        }
    }

    fn call(&mut self, add: bool, id: &str) -> bool {
        let env = if add { &mut self.add } else { &mut self.del };
        env.container_id = id.into();
        let mut ctx = PluginCtx {
            host: &mut self.host,
            registry: &self.registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let reply = skel::dispatch(&HostLocal, &mut ctx, env, &self.stdin);
        let ok = matches!(reply, Ok(PluginOutput::Result(_)) | Ok(PluginOutput::Empty));
        black_box(reply).is_ok() && ok
    }

    fn add(&mut self, id: &str) {
        assert!(self.call(true, id), "ADD {id} failed");
    }

    fn del(&mut self, id: &str) {
        assert!(self.call(false, id), "DEL {id} failed");
    }
}

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("c{i:08x}")).collect()
}

/// splitmix64: a seeded, dependency-free generator (the churn must be reproducible).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn bench_fill(c: &mut Criterion) {
    let mut group = c.benchmark_group("ipam_fill_16");
    group.sample_size(10);
    group.throughput(Throughput::Elements(CAPACITY as u64));
    let names = ids(CAPACITY);
    group.bench_function("65533_adds", |b| {
        b.iter_batched(
            Ipam::new,
            |mut ipam| {
                for id in &names {
                    ipam.add(id);
                }
                // The range is full now: one more ADD must fail.
                assert!(!ipam.call(true, "one-too-many"));
                ipam
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The steady state at a fill level: ADD one more, DEL it again.
fn pair_bench(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: String,
    mut ipam: Ipam,
) {
    group.bench_function(label, |b| {
        b.iter(|| {
            ipam.add("probe");
            ipam.del("probe");
        })
    });
}

fn bench_sequential(c: &mut Criterion) {
    let mut group = c.benchmark_group("ipam_add_del_sequential");
    group.throughput(Throughput::Elements(1));
    let names = ids(CAPACITY);
    for pct in [0usize, 50, 90, 99] {
        let mut ipam = Ipam::new();
        for id in names.iter().take(CAPACITY * pct / 100) {
            ipam.add(id);
        }
        pair_bench(&mut group, format!("{pct}pct"), ipam);
    }
    group.finish();
}

fn bench_churn(c: &mut Criterion) {
    let mut group = c.benchmark_group("ipam_add_del_after_churn");
    group.throughput(Throughput::Elements(1));
    for pct in [50usize, 99] {
        let target = CAPACITY * pct / 100;
        let mut ipam = Ipam::new();
        let mut rng = Rng(0x1ab_5eed ^ pct as u64);
        let mut live: Vec<String> = Vec::with_capacity(CAPACITY);
        let mut next_id = 0u64;
        let mut add = |ipam: &mut Ipam, live: &mut Vec<String>| {
            next_id += 1;
            let id = format!("k{next_id:010x}");
            ipam.add(&id);
            live.push(id);
        };
        while live.len() < target {
            add(&mut ipam, &mut live);
        }
        // 200,000 operations: a DEL of a random lease or an ADD, keeping near the target.
        for _ in 0..200_000 {
            let del = live.len() >= CAPACITY || (live.len() >= target && rng.below(2) == 0);
            if del && !live.is_empty() {
                let id = live.swap_remove(rng.below(live.len()));
                ipam.del(&id);
            } else {
                add(&mut ipam, &mut live);
            }
        }
        while live.len() > target {
            let id = live.swap_remove(rng.below(live.len()));
            ipam.del(&id);
        }
        pair_bench(&mut group, format!("{pct}pct"), ipam);
    }
    group.finish();
}

criterion_group!(benches, bench_fill, bench_sequential, bench_churn);
criterion_main!(benches);
