//! Side by side: the same N ADD then N DEL calls through the REAL `/usr/lib/cni/host-local`
//! (a process start, a JSON decode, a file lock and a few files per call, data directory in a
//! temp dir) and through the lab's in-process host-local (`skel::dispatch` → `HostLocal`,
//! stdin decoded from the same bytes and the result printed to the same JSON text), with the
//! same config (cniVersion 1.0.0, a /16, that `dataDir`). Prints per-call times and the ratio.
//!
//! Run: `cargo bench --bench host_local_vs_real` (`HL_CALLS=N`, default 1000, for N).
//! Skips with a message when the binary is missing (`.ci/run` installs it:
//! `containernetworking-plugins`). Not a criterion bench: one process start dominates the
//! real side, so a plain timed loop over N calls is the honest measure.

use lab_engine::cni::host::Host;
use lab_engine::cni::plugin::{CniCommand, CniEnv, PluginCtx, PluginOutput, Stdin};
use lab_engine::cni::plugins::host_local::HostLocal;
use lab_engine::cni::registry::Registry;
use lab_engine::cni::skel;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REAL: &str = "/usr/lib/cni/host-local";

fn env(cmd: CniCommand, id: &str) -> CniEnv {
    CniEnv {
        command: Some(cmd),
        container_id: id.into(),
        netns: "/var/run/netns/bench".into(),
        ifname: "eth0".into(),
        args: String::new(),
        path: "/usr/lib/cni".into(),
    }
}

/// One call through the real binary; true when it exits 0.
fn real_call(env: &CniEnv, stdin: &[u8]) -> bool {
    let Ok(mut child) = Command::new(REAL)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return false;
    };
    if let Some(mut w) = child.stdin.take() {
        if w.write_all(stdin).is_err() {
            return false;
        }
    }
    child
        .wait_with_output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// One call through the lab's plugin: decode stdin, dispatch, print the reply. True on success.
fn lab_call(host: &mut Host, registry: &Registry, env: &CniEnv, stdin: &[u8]) -> bool {
    let Ok(conf) = serde_json::from_slice::<Value>(stdin) else {
        return false;
    };
    let mut ctx = PluginCtx {
        host,
        registry,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    let reply = skel::dispatch(&HostLocal, &mut ctx, env, &Stdin::from_conf(conf));
    let printed = match &reply {
        Ok(PluginOutput::Result(r)) => r.to_stdout(),
        Ok(_) => String::new(),
        Err(e) => e.to_stdout(),
    };
    std::hint::black_box(printed);
    reply.is_ok()
}

fn per_call(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

fn main() {
    // `cargo bench` passes criterion's flags to every bench binary; this one takes none.
    if !Path::new(REAL).exists() {
        println!(
            "host_local_vs_real: skipped, {REAL} is missing (install containernetworking-plugins)"
        );
        return;
    }
    let n: usize = std::env::var("HL_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = std::env::temp_dir().join(format!("hl-vs-real-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        println!(
            "host_local_vs_real: skipped, cannot create {}: {e}",
            dir.display()
        );
        return;
    }
    let conf = format!(
        r#"{{"cniVersion":"1.0.0","name":"bench","type":"host-local","ipam":{{"type":"host-local","dataDir":"{}","ranges":[[{{"subnet":"10.10.0.0/16"}}]]}}}}"#,
        dir.display()
    );
    let stdin = conf.as_bytes();
    let ids: Vec<String> = (0..n).map(|i| format!("c{i:08x}")).collect();

    // The real plugin: N ADD, then N DEL.
    let t = Instant::now();
    for id in &ids {
        assert!(real_call(&env(CniCommand::Add, id), stdin), "real ADD {id}");
    }
    let real_add = t.elapsed();
    let leases = std::fs::read_dir(dir.join("bench"))
        .map(|d| d.count())
        .unwrap_or(0);
    let t = Instant::now();
    for id in &ids {
        assert!(real_call(&env(CniCommand::Del, id), stdin), "real DEL {id}");
    }
    let real_del = t.elapsed();
    let _ = std::fs::remove_dir_all(&dir);

    // The lab: the same calls, same bytes. Repeated so the timed part is long enough.
    let registry = Registry::empty();
    let rounds = 20;
    let (mut lab_add, mut lab_del) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let mut host = Host::new(
            "node-1",
            "192.168.0.10",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        let t = Instant::now();
        for id in &ids {
            assert!(
                lab_call(&mut host, &registry, &env(CniCommand::Add, id), stdin),
                "lab ADD {id}"
            );
        }
        lab_add += t.elapsed();
        let t = Instant::now();
        for id in &ids {
            assert!(
                lab_call(&mut host, &registry, &env(CniCommand::Del, id), stdin),
                "lab DEL {id}"
            );
        }
        lab_del += t.elapsed();
    }
    let lab_n = n * rounds;

    let (ra, rd) = (per_call(real_add, n), per_call(real_del, n));
    let (la, ld) = (per_call(lab_add, lab_n), per_call(lab_del, lab_n));
    println!(
        "host-local, {n} ADD then {n} DEL (cniVersion 1.0.0, 10.10.0.0/16, dataDir in a temp dir)"
    );
    println!(
        "  real plugin data dir after the ADDs: {leases} files (leases + last_reserved_ip.0 + lock)"
    );
    println!("                     ADD µs/call   DEL µs/call   calls/s (ADD+DEL)");
    println!(
        "  real {REAL:<14} {ra:>10.1}   {rd:>11.1}   {:>12.0}",
        2e6 / (ra + rd)
    );
    println!(
        "  lab in-process       {la:>10.2}   {ld:>11.2}   {:>12.0}",
        2e6 / (la + ld)
    );
    println!(
        "  ratio real/lab       {:>10.0}x  {:>11.0}x  {:>12.0}x",
        ra / la,
        rd / ld,
        (ra + rd) / (la + ld)
    );
}
