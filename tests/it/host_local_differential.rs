//! Differential test: the lab's `HostLocal`, as release 1.1.1 behind skel
//! (`--cni-plugins 1.1.1`), against the REAL `/usr/lib/cni/host-local` (Debian
//! `containernetworking-plugins` 1.1.1). Each case runs the same ADD/DEL/CHECK
//! sequence through both and compares, after every step: stdout bytes, exit status (0/1),
//! and the data directory (file names and contents; `lock` ignored; "no directory" too).
//!
//! If the binary is missing the test is skipped with a line saying how to install it, and
//! fails under `CI=true` ([`oracle::run_or_skip`]).

use crate::oracle;

use lab_engine::cni::host::Host;
use lab_engine::cni::plugin::{CniCommand, CniEnv, PluginCtx, Stdin};
use lab_engine::cni::plugins::host_local::{HostLocal, store_key};
use lab_engine::cni::registry::Registry;
use lab_engine::cni::release::PluginsRelease;
use lab_engine::cni::skel;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const REAL: &str = "/usr/lib/cni/host-local";
const NETNS: &str = "/var/run/netns/difftest";

/// One case: a network config (without `dataDir`) and steps `"CMD id ifname [CNI_ARGS]"`.
struct Case {
    name: &'static str,
    conf: Value,
    steps: &'static [&'static str],
}

/// A standalone network config as libcni would send it, with this `ipam`.
fn net(ipam: Value) -> Value {
    json!({"cniVersion": "1.0.0", "name": "mynet", "type": "host-local", "ipam": ipam})
}

/// A network config with extra top-level keys (`args`, `runtimeConfig`).
fn net_with(ipam: Value, extra: Value) -> Value {
    let mut v = net(ipam);
    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
        m.extend(e);
    }
    v
}

fn cases() -> Vec<Case> {
    let v4_29 = || net(json!({"type": "host-local", "subnet": "10.10.0.0/29"}));
    vec![
        Case {
            name: "plain_allocation_and_release",
            conf: net(json!({"type": "host-local", "ranges": [[{"subnet": "10.10.0.0/24"}]]})),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "DEL c1 eth0",
                "DEL c2 eth0",
                "DEL c2 eth0",
            ],
        },
        Case {
            name: "release_then_allocate_round_robin",
            conf: v4_29(),
            steps: &["ADD c1 eth0", "DEL c1 eth0", "ADD c2 eth0", "ADD c3 eth0"],
        },
        Case {
            name: "exhaustion_of_a_29",
            conf: v4_29(),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0",
                "ADD c4 eth0",
                "ADD c5 eth0",
                "ADD c6 eth0",
            ],
        },
        Case {
            name: "wrap_around",
            conf: v4_29(),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0",
                "ADD c4 eth0",
                "DEL c2 eth0",
                "ADD c5 eth0",
                "ADD c6 eth0",
                "DEL c1 eth0",
                "ADD c7 eth0",
                "ADD c8 eth0",
            ],
        },
        Case {
            name: "duplicate_add_same_id_and_ifname",
            conf: v4_29(),
            steps: &["ADD c1 eth0", "ADD c1 eth0", "CHECK c1 eth0"],
        },
        Case {
            name: "same_id_different_ifname",
            conf: v4_29(),
            steps: &[
                "ADD c1 eth0",
                "ADD c1 eth1",
                "DEL c1 eth0",
                "CHECK c1 eth0",
                "CHECK c1 eth1",
            ],
        },
        Case {
            name: "requested_ip_via_cni_args",
            conf: v4_29(),
            steps: &[
                "ADD c1 eth0 IP=10.10.0.5",
                "ADD c2 eth0 IP=10.10.0.5",
                "ADD c3 eth0 IP=10.10.0.1",
                "ADD c4 eth0 IP=10.10.1.9",
                "ADD c5 eth0 IP=10.10.0.7",
                "ADD c6 eth0 IP=10.10.0.3/24",
                "ADD c7 eth0",
                "ADD c1 eth0",
            ],
        },
        Case {
            name: "cni_args_errors",
            conf: v4_29(),
            steps: &[
                "ADD c1 eth0 IP=foo",
                "ADD c1 eth0 K8S_POD_NAME=web",
                "ADD c1 eth0 K8S_POD_NAME=web;IgnoreUnknown=1",
                "DEL c1 eth0 a=b=c",
                "CHECK c1 eth0 IgnoreUnknown=maybe",
                "ADD c2 eth0 IP=",
            ],
        },
        Case {
            name: "several_ranges_in_one_set",
            conf: net(json!({"type": "host-local", "ranges": [[
                {"subnet": "10.0.0.0/30"}, {"subnet": "10.0.1.0/30"}
            ]]})),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0",
                "DEL c1 eth0",
                "ADD c4 eth0",
            ],
        },
        Case {
            name: "two_range_sets_v4_v6_with_rollback",
            conf: net(json!({"type": "host-local", "ranges": [
                [{"subnet": "10.1.2.0/24"}, {"subnet": "10.2.2.0/24"}],
                [{"subnet": "2001:db8:1::/126"}]
            ]})),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0",
                "DEL c1 eth0",
                "ADD c3 eth0",
            ],
        },
        Case {
            name: "range_start_and_end",
            conf: net(json!({"type": "host-local", "subnet": "10.3.0.0/24",
                "rangeStart": "10.3.0.100", "rangeEnd": "10.3.0.102", "gateway": "10.3.0.254",
                "routes": [{"dst": "0.0.0.0/0"}, {"dst": "10.9.0.0/16", "gw": "10.3.0.254"}]})),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0",
                "ADD c4 eth0",
                "ADD c5 eth0 IP=10.3.0.99",
            ],
        },
        Case {
            name: "del_unknown_and_check_lifecycle",
            conf: v4_29(),
            steps: &[
                "DEL ghost eth0",
                "CHECK c1 eth0",
                "ADD c1 eth0",
                "CHECK c1 eth0",
                "DEL c1 eth0",
                "CHECK c1 eth0",
            ],
        },
        // Only one requested IP per range set: with several, Go picks one in (random) map
        // order, so the real plugin's answer is not reproducible.
        Case {
            name: "requested_via_args_cni_ips",
            conf: net_with(
                json!({"type": "host-local", "subnet": "10.10.0.0/24"}),
                json!({"args": {"cni": {"ips": ["10.10.0.88"]}}}),
            ),
            steps: &[
                "ADD c1 eth0",
                "ADD c2 eth0",
                "ADD c3 eth0 IgnoreUnknown=1;X=y",
            ],
        },
        Case {
            name: "requested_via_runtime_config_ips",
            conf: net_with(
                json!({"type": "host-local", "ranges": [[{"subnet": "10.10.0.0/24"}], [{"subnet": "fd00::/120"}]]}),
                json!({"runtimeConfig": {"ips": ["10.10.0.77/24", "fd00::77"]}}),
            ),
            steps: &["ADD c1 eth0", "ADD c2 eth0", "DEL c1 eth0", "ADD c2 eth0"],
        },
        Case {
            name: "runtime_ip_ranges_prepended",
            conf: net_with(
                json!({"type": "host-local", "subnet": "10.10.0.0/24"}),
                json!({"runtimeConfig": {"ipRanges": [[{"subnet": "10.50.0.0/24"}]]}}),
            ),
            steps: &["ADD c1 eth0", "DEL c1 eth0"],
        },
        Case {
            name: "bad_config_no_ranges",
            conf: net(json!({"type": "host-local"})),
            steps: &["ADD c1 eth0", "DEL c1 eth0", "CHECK c1 eth0"],
        },
        Case {
            name: "bad_config_slash_31",
            conf: net(json!({"type": "host-local", "subnet": "10.10.0.0/31"})),
            steps: &["ADD c1 eth0"],
        },
        Case {
            name: "bad_config_host_bits_set",
            conf: net(json!({"type": "host-local", "ranges": [[{"subnet": "10.10.0.5/24"}]]})),
            steps: &["ADD c1 eth0"],
        },
        Case {
            name: "bad_config_overlap_and_range_errors",
            conf: net(json!({"type": "host-local", "ranges": [
                [{"subnet": "10.0.0.0/24"}], [{"subnet": "10.0.0.0/20"}]
            ]})),
            steps: &["ADD c1 eth0"],
        },
        Case {
            name: "bad_config_range_start_outside",
            conf: net(
                json!({"type": "host-local", "subnet": "10.0.0.0/24", "rangeStart": "10.0.1.5"}),
            ),
            steps: &["ADD c1 eth0"],
        },
        Case {
            name: "bad_config_missing_subnet_in_range",
            conf: net(json!({"type": "host-local", "ranges": [[{"gateway": "10.0.0.1"}]]})),
            steps: &["ADD c1 eth0"],
        },
        Case {
            name: "bad_config_json_types",
            conf: net(
                json!({"type": "host-local", "ranges": [[{"subnet": "10.0.0.0/24", "rangeEnd": 7}]]}),
            ),
            steps: &["ADD c1 eth0", "DEL c1 eth0"],
        },
        Case {
            name: "missing_ipam",
            conf: json!({"cniVersion": "1.0.0", "name": "mynet", "type": "host-local"}),
            steps: &["ADD c1 eth0"],
        },
        // What the release decides (skel of the CNI library v1.0.1): VERSION's lists, no GC
        // or STATUS, the container ID and ifname checks, and which config versions pass.
        Case {
            name: "version_gc_and_status_of_the_release",
            conf: v4_29(),
            steps: &[
                "VERSION - -",
                "GC - -",
                "STATUS - -",
                "GC c1 -",
                "GC c1 eth0",
                "STATUS c1 eth0",
                "ADD c1 eth0",
                "CHECK c1 eth0",
                "GC c1 eth0",
                "DEL c1 eth0",
            ],
        },
        Case {
            name: "config_version_newer_than_the_release",
            conf: json!({"cniVersion": "1.1.0", "name": "mynet", "type": "host-local",
                         "ipam": {"type": "host-local", "subnet": "10.10.0.0/29"}}),
            steps: &["VERSION - -", "ADD c1 eth0", "CHECK c1 eth0", "DEL c1 eth0"],
        },
        Case {
            name: "config_version_too_old_for_check",
            conf: json!({"cniVersion": "0.3.1", "name": "mynet", "type": "host-local",
                         "ipam": {"type": "host-local", "subnet": "10.10.0.0/29"}}),
            steps: &["ADD c1 eth0", "CHECK c1 eth0", "DEL c1 eth0"],
        },
        Case {
            name: "no_config_version_is_0_1_0",
            conf: json!({"name": "mynet", "type": "host-local",
                         "ipam": {"type": "host-local", "subnet": "10.10.0.0/29"}}),
            steps: &["ADD c1 eth0", "CHECK c1 eth0", "DEL c1 eth0"],
        },
        Case {
            name: "bad_container_id_and_ifname",
            conf: v4_29(),
            steps: &[
                "ADD -bad eth0",
                "ADD c1 a-very-long-ifname",
                "ADD c1 a:b",
                "DEL c1 ..",
            ],
        },
        Case {
            name: "routes_printed_like_go",
            conf: net(
                json!({"type": "host-local", "subnet": "10.4.0.0/24", "routes": [
                    {"dst": "10.9.9.9/8"}, {"dst": "2001:DB8::/64"}, {"gw": "10.4.0.1"}
                ]}),
            ),
            steps: &["ADD c1 eth0"],
        },
    ]
}

// ---- runner ----

struct Outcome {
    stdout: String,
    status: i32,
}

/// The environment libcni sets for `cmd`; `-` stands for an empty value. GC and STATUS
/// carry no netns, as libcni sends them.
fn env_for(cmd: CniCommand, id: &str, ifname: &str, args: &str) -> CniEnv {
    let or_empty = |s: &str| {
        if s == "-" {
            String::new()
        } else {
            s.to_string()
        }
    };
    let netns = match cmd {
        CniCommand::Gc | CniCommand::Status | CniCommand::Version => String::new(),
        _ => NETNS.to_string(),
    };
    CniEnv {
        command: Some(cmd),
        container_id: or_empty(id).into(),
        netns: netns.into(),
        ifname: or_empty(ifname).into(),
        args: args.to_string(),
        path: "/usr/lib/cni".into(),
    }
}

fn run_real(env: &CniEnv, stdin: &str) -> Outcome {
    let mut child = Command::new(REAL)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn host-local");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait host-local");
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        status: out.status.code().unwrap_or(-1),
    }
}

/// The lab's host-local as the 1.1.1 release, through skel like the binary.
fn run_lab(host: &mut Host, env: &CniEnv, conf: &Value) -> Outcome {
    let registry = Registry::empty().with_release(PluginsRelease::V1_1_1);
    let mut ctx = PluginCtx {
        host,
        registry: &registry,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    let reply = skel::dispatch(&HostLocal, &mut ctx, env, &Stdin::from_conf(conf.clone()));
    Outcome {
        status: if reply.is_ok() { 0 } else { 1 },
        stdout: skel::stdout_of(&reply),
    }
}

/// The real directory's files (minus `lock`), or `None` when it does not exist.
fn real_files(dir: &Path) -> Option<Vec<(String, String)>> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut files: Vec<(String, String)> = rd
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let content = std::fs::read_to_string(e.path()).unwrap_or_default();
            (name, content)
        })
        .filter(|(n, _)| n != "lock")
        .collect();
    files.sort();
    Some(files)
}

fn lab_files(host: &Host, key: &str) -> Option<Vec<(String, String)>> {
    host.ipam
        .get(key)
        .map(|s| s.files().into_iter().filter(|(n, _)| n != "lock").collect())
}

fn temp_dir_for(case: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    std::env::temp_dir().join(format!("cni-lab-hl-diff-{}-{n}-{case}", std::process::id()))
}

fn parse_step(step: &str) -> (CniCommand, &str, &str, &str) {
    let mut parts = step.splitn(4, ' ');
    let cmd = match parts.next() {
        Some("ADD") => CniCommand::Add,
        Some("DEL") => CniCommand::Del,
        Some("CHECK") => CniCommand::Check,
        Some("GC") => CniCommand::Gc,
        Some("STATUS") => CniCommand::Status,
        Some("VERSION") => CniCommand::Version,
        other => panic!("bad step command {other:?} in {step:?}"),
    };
    let id = parts.next().expect("step needs an id");
    let ifname = parts.next().expect("step needs an ifname");
    (cmd, id, ifname, parts.next().unwrap_or(""))
}

/// Run one case through both plugins; returns a list of mismatch descriptions.
fn run_case(case: &Case) -> Vec<String> {
    let dir = temp_dir_for(case.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let data_dir = dir.to_string_lossy().into_owned();

    let mut conf = case.conf.clone();
    if let Some(ipam) = conf.get_mut("ipam").and_then(Value::as_object_mut) {
        ipam.insert("dataDir".into(), Value::String(data_dir.clone()));
    }
    // Keys sorted, as libcni marshals the config from a Go map.
    let stdin = serde_json::to_string(&conf).expect("serialize conf");
    let name = conf.get("name").and_then(Value::as_str).unwrap_or("");
    let real_dir = dir.join(name);
    let key = store_key(&data_dir, name);

    let mut host = Host::new(
        "node-1",
        "192.168.0.10",
        "02:00:00:00:00:01".parse().expect("a MAC"),
    );
    let mut mismatches = Vec::new();
    for (i, step) in case.steps.iter().enumerate() {
        let (cmd, id, ifname, args) = parse_step(step);
        let env = env_for(cmd, id, ifname, args);
        let real = run_real(&env, &stdin);
        let lab = run_lab(&mut host, &env, &conf);
        let at = format!("{} step {i} `{step}`", case.name);
        if real.stdout != lab.stdout {
            mismatches.push(format!(
                "{at}: stdout differs\n--- real ---\n{}\n--- lab ---\n{}",
                real.stdout, lab.stdout
            ));
        }
        if real.status != lab.status {
            mismatches.push(format!(
                "{at}: exit status real {} lab {}",
                real.status, lab.status
            ));
        }
        let (rf, lf) = (real_files(&real_dir), lab_files(&host, &key));
        if rf != lf {
            mismatches.push(format!("{at}: files differ\n real {rf:?}\n lab  {lf:?}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    mismatches
}

fn real_plugin_available() -> bool {
    oracle::run_or_skip(
        "the host-local differential test",
        oracle::missing(false, &[], &[REAL]),
    )
}

#[test]
fn host_local_matches_the_real_plugin() {
    if !real_plugin_available() {
        return;
    }
    let mut all = Vec::new();
    for case in cases() {
        all.extend(run_case(&case));
    }
    assert!(
        all.is_empty(),
        "{} mismatch(es):\n\n{}",
        all.len(),
        all.join("\n\n")
    );
}
