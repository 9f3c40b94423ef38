//! Real mode (`--real-cni`): every CNI execution the model makes is also made by the real
//! plugin binary (Debian's `containernetworking-plugins` in `/usr/lib/cni`, or
//! `--cni-bin-dir DIR`) in real network namespaces, with the same environment and stdin,
//! and the two answers are compared.
//!
//! What plays what:
//! - each lab node is a network namespace `cnilab-<pid>-n-<node>`: the real plugin runs
//!   inside it (`ip netns exec`), so the bridge, the host-side veths, the routes and the
//!   iptables rules it makes live there and never on the host;
//! - each pod sandbox (the model's `CNI_NETNS=/var/run/netns/cni-…`) is a namespace
//!   `cnilab-<pid>-p<N>`, created before the ADD as containerd creates the sandbox's;
//! - host-local's `dataDir` points into the session's own directory, never the host's
//!   `/var/lib/cni/networks`;
//! - `prevResult` is the real chain's own: the real previous plugin's output on ADD, the
//!   real final result on DEL and CHECK (as libcni's cache would hold it: written only when
//!   a whole ADD chain succeeded, so a failed ADD leaves the earlier result, and dropped when
//!   a whole DEL chain succeeded).
//!
//! Those are the only changes to what the model sends; `show wire N --real` lists them.
//! The comparison ([`compare`]) normalises MACs, random veth names, namespace paths and
//! the bin dir (the real `CNI_PATH` read as the model's).
//!
//! Nothing outlives the session ([`marker`]): namespaces are deleted on `reset`, on exit,
//! on SIGINT/SIGTERM/SIGHUP, and after a crash by the next start of the lab. Deleting a
//! node's namespace takes its bridge, veths, routes and iptables rules with it.
//!
//! The session is process-wide (the kernel is); each lab given a [`Handle`] while it is on
//! has an id, and the kernel state always belongs to one lab: the first CNI call of another
//! lab clears it first. The engine sees real mode only through its
//! [`lab_engine::cni::real::RealCni`] trait, which [`Handle`] implements.

pub mod kernel;
pub mod marker;

use lab_engine::cni::plugin::{CniCommand, CniEnv};
use lab_engine::cni::real::{Beside, HostLocalFiles, RealCall, RealCni, Verdict, compare};
use marker::Marker;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where Debian installs the plugins; the default bin dir.
pub const DEBIAN_BIN_DIR: &str = "/usr/lib/cni";
/// Where upstream's release tarball goes; the bin dir when Debian's is absent.
pub const UPSTREAM_BIN_DIR: &str = "/opt/cni/bin";
/// The binaries the lab's default chain needs (bridge → portmap → bandwidth, host-local).
pub const REQUIRED: [&str; 4] = ["bridge", "host-local", "portmap", "bandwidth"];
/// The tools real mode runs.
pub const TOOLS: [&str; 2] = ["ip", "timeout"];
/// Real calls kept (as many as the engine's wire log keeps).
const CALLS_KEPT: usize = 2000;

static ENABLED: AtomicBool = AtomicBool::new(false);
static NEXT_LAB: AtomicU64 = AtomicU64::new(1);
static SESSION: Mutex<Option<Session>> = Mutex::new(None);

fn session() -> MutexGuard<'static, Option<Session>> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Real mode's settings, once the machine has what it needs ([`preflight`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The directory of real plugin binaries (also the real `CNI_PATH`).
    pub bin_dir: PathBuf,
}

/// What [`check`] needs to know about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The effective user id, if it could be read.
    pub euid: Option<u32>,
    /// Tools of [`TOOLS`] not found on `PATH`.
    pub tools_missing: Vec<String>,
    /// The bin dir chosen (the one named, or the default).
    pub bin_dir: PathBuf,
    /// Whether `--cni-bin-dir` named it.
    pub named: bool,
    /// Binaries of [`REQUIRED`] not in it.
    pub binaries_missing: Vec<String>,
}

/// Whether real mode can run with these facts; the error says what is missing and how to
/// get it.
pub fn check(f: &Facts) -> Result<(), String> {
    if f.euid != Some(0) {
        return Err(NOT_ROOT.into());
    }
    if !f.tools_missing.is_empty() {
        return Err(format!(
            "--real-cni needs {} on PATH (install: apt-get install iproute2 coreutils)",
            f.tools_missing.join(" and ")
        ));
    }
    if !f.binaries_missing.is_empty() {
        let dir = f.bin_dir.display();
        let how = if f.named {
            format!("check --cni-bin-dir {dir}")
        } else {
            format!(
                "install them with `apt-get install containernetworking-plugins` ({DEBIAN_BIN_DIR}), or name their directory with --cni-bin-dir DIR"
            )
        };
        return Err(format!(
            "--real-cni: no real plugin binary {} in {dir}; {how}",
            f.binaries_missing.join(", ")
        ));
    }
    Ok(())
}

/// Gather the [`Facts`] of this machine and [`check`] them.
pub fn preflight(bin_dir: Option<&Path>) -> Result<Config, String> {
    let dir = match bin_dir {
        // Absolute: it is also CNI_PATH, read by plugins that run in another namespace.
        Some(d) => d.canonicalize().unwrap_or_else(|_| d.to_path_buf()),
        None if Path::new(DEBIAN_BIN_DIR).join("bridge").is_file() => DEBIAN_BIN_DIR.into(),
        None if Path::new(UPSTREAM_BIN_DIR).join("bridge").is_file() => UPSTREAM_BIN_DIR.into(),
        None => DEBIAN_BIN_DIR.into(),
    };
    let facts = Facts {
        euid: effective_uid(),
        tools_missing: TOOLS
            .iter()
            .filter(|t| !on_path(t))
            .map(|t| t.to_string())
            .collect(),
        binaries_missing: REQUIRED
            .iter()
            .filter(|b| !dir.join(b).is_file())
            .map(|b| b.to_string())
            .collect(),
        bin_dir: dir.clone(),
        named: bin_dir.is_some(),
    };
    check(&facts)?;
    Ok(Config { bin_dir: dir })
}

/// The effective uid, from `/proc/self/status` (`Uid:` real, effective, saved, fs).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
        || std::env::split_paths(kernel::STD_PATH).any(|d| d.join(tool).is_file())
}

/// Turn real mode on for this process: the session directory and its marker are made
/// (the marker before any namespace); labs built from now on take part.
pub fn enable(cfg: Config) -> Result<(), String> {
    let root = marker::root_dir()
        .ok_or("--real-cni: no data directory for the lab's files (set HOME or XDG_DATA_HOME)")?;
    let pid = std::process::id();
    let dir = root.join(pid.to_string());
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("--real-cni: cannot create {}: {e}", dir.display()))?;
    let m = Marker {
        pid,
        start_time: marker::start_time(pid).unwrap_or_default(),
        netns: Vec::new(),
    };
    m.write(&dir)?;
    *session() = Some(Session {
        bin_dir: cfg.bin_dir,
        dir,
        marker: m,
        owner: None,
        nodes: BTreeMap::new(),
        pods: BTreeMap::new(),
        next_pod: 1,
        results: BTreeMap::new(),
        chains: BTreeMap::new(),
        pending: VecDeque::new(),
        calls: BTreeMap::new(),
    });
    ENABLED.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether real mode is on in this process.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// A new lab's handle on real mode when it is on (`None` otherwise: the lab is the model
/// alone); give it to the lab with `Lab::set_real_cni`.
pub fn handle() -> Option<Arc<dyn RealCni>> {
    enabled().then(|| {
        Arc::new(Handle {
            lab: NEXT_LAB.fetch_add(1, Ordering::SeqCst),
        }) as Arc<dyn RealCni>
    })
}

/// The real bin dir, when real mode is on.
pub fn bin_dir() -> Option<PathBuf> {
    session().as_ref().map(|s| s.bin_dir.clone())
}

/// End of the session (the lab exits): everything is removed, the marker last.
pub fn shutdown() {
    let taken = session().take();
    ENABLED.store(false, Ordering::SeqCst);
    if let Some(mut s) = taken {
        s.clear();
        let _ = std::fs::remove_dir_all(&s.dir);
    }
}

/// [`shutdown`] from the signal thread: waits (up to 30 s, longer than a plugin's
/// timeout) for a running plugin to finish, so no namespace is created behind the cleanup.
pub fn shutdown_for_signal() {
    for _ in 0..300 {
        match SESSION.try_lock() {
            Ok(mut g) => {
                if let Some(mut s) = g.take() {
                    s.clear();
                    let _ = std::fs::remove_dir_all(&s.dir);
                }
                ENABLED.store(false, Ordering::SeqCst);
                // Held until the process exits: nothing runs a plugin after this.
                std::mem::forget(g);
                return;
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                let mut g = p.into_inner();
                if let Some(mut s) = g.take() {
                    s.clear();
                    let _ = std::fs::remove_dir_all(&s.dir);
                }
                std::mem::forget(g);
                return;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

/// One line about what a dead session left, for stderr at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// Done: what was removed (printed as a `note:`).
    Removed(String),
    /// Left in place, and why (printed as a `warning:`: cleaning needs root, or a removal
    /// failed).
    Left(String),
}

impl std::fmt::Display for Cleanup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cleanup::Removed(s) => write!(f, "note: {s}"),
            Cleanup::Left(s) => write!(f, "warning: {s}"),
        }
    }
}

/// At start: remove what dead sessions left (their marker's namespaces, any namespace
/// with their pid's prefix, their directory). Returns one line per session cleaned or
/// left (cleaning needs root). Live sessions (another lab running) are not touched; a
/// session killed but not yet reaped (a zombie) is dead.
pub fn clean_stale() -> Vec<Cleanup> {
    let Some(root) = marker::root_dir() else {
        return Vec::new();
    };
    clean_stale_in(&root)
}

/// [`clean_stale`] for the session directories under `root`.
pub fn clean_stale_in(root: &Path) -> Vec<Cleanup> {
    let own = std::process::id();
    let mut out = Vec::new();
    let sessions = marker::sessions(root);
    if sessions.is_empty() {
        return out;
    }
    let root_user = effective_uid() == Some(0);
    let listed = if root_user {
        kernel::netns_list()
    } else {
        Vec::new()
    };
    for (pid, dir, m) in sessions {
        let running = match &m {
            Some(m) => marker::alive(m),
            // No marker yet: a session starting right now (it writes one before any
            // namespace), or one that died before it made anything.
            None => marker::running(pid),
        };
        if pid == own || running {
            continue;
        }
        let prefix = Marker::prefix(pid);
        let mut names: Vec<String> = m.map(|m| m.netns).unwrap_or_default();
        for n in &listed {
            if n.starts_with(&prefix) && !names.contains(n) {
                names.push(n.clone());
            }
        }
        names.retain(|n| n.starts_with(&prefix));
        if !root_user {
            if !names.is_empty() {
                out.push(Cleanup::Left(format!(
                    "real-cni: a crashed session (pid {pid}) left network namespaces {}; run the lab as root once to remove them",
                    names.join(" ")
                )));
            }
            continue;
        }
        let present: Vec<&String> = names.iter().filter(|n| listed.contains(n)).collect();
        let mut failed = Vec::new();
        for n in names.iter().rev().filter(|n| listed.contains(n)) {
            if let Err(e) = kernel::netns_del(n) {
                failed.push(e);
            }
        }
        if failed.is_empty() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        if !present.is_empty() && failed.is_empty() {
            out.push(Cleanup::Removed(format!(
                "real-cni: removed what a crashed session (pid {pid}) left: {}",
                present
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        } else if !failed.is_empty() {
            out.push(Cleanup::Left(format!(
                "real-cni: could not remove all that a crashed session (pid {pid}) left ({}): {}; its marker stays, the next start tries again",
                present
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                failed.join("; ")
            )));
        }
    }
    out
}

/// The kernel side of one real-mode session (see the module doc).
struct Session {
    bin_dir: PathBuf,
    /// `<data dir>/real-cni/<pid>`: the marker and host-local's data dirs.
    dir: PathBuf,
    marker: Marker,
    /// The lab the kernel state belongs to.
    owner: Option<u64>,
    /// Lab node → its namespace.
    nodes: BTreeMap<String, String>,
    /// (node, the model's netns path) → the pod's namespace.
    pods: BTreeMap<(String, String), String>,
    next_pod: u64,
    /// Per attachment, the real side of libcni's result cache: the final result of the
    /// last real ADD chain that succeeded whole (what DEL and CHECK get as prevResult).
    results: BTreeMap<Attachment, Value>,
    /// Per attachment, the ADD or DEL chain last run, until it is settled into `results`
    /// ([`Session::settle`]: when the next chain or CHECK on that attachment starts, or
    /// when the operation's calls are paired).
    chains: BTreeMap<Attachment, Chain>,
    /// Real calls not yet paired with their wire record.
    pending: VecDeque<RealCall>,
    /// Real calls by the wire record they go with.
    calls: BTreeMap<u64, RealCall>,
}

/// libcni's cache key: (node, network, container ID, ifname).
type Attachment = (String, String, String, String);

/// One ADD or DEL chain of the real plugins, as far as it ran.
#[derive(Debug)]
struct Chain {
    command: CniCommand,
    /// ADD: the output of the last real plugin that succeeded (the next one's prevResult).
    out: Option<Value>,
    /// Every real plugin of the chain ran and succeeded, and so did the model's.
    ok: bool,
}

impl Session {
    /// libcni's cache after the chain last run on `key`: an ADD chain that succeeded whole
    /// caches its final result (`cacheAdd` comes after the last plugin); a DEL chain that
    /// succeeded whole drops it (`cacheDel`); a failed chain leaves the cache as it was.
    fn settle(&mut self, key: &Attachment) {
        let Some(chain) = self.chains.remove(key) else {
            return;
        };
        match (chain.command, chain.ok, chain.out) {
            (CniCommand::Add, true, Some(out)) => {
                self.results.insert(key.clone(), out);
            }
            (CniCommand::Del, true, _) => {
                self.results.remove(key);
            }
            _ => {}
        }
    }

    fn settle_all(&mut self) {
        let keys: Vec<Attachment> = self.chains.keys().cloned().collect();
        for k in keys {
            self.settle(&k);
        }
    }

    fn adopt(&mut self, lab: u64) {
        if self.owner != Some(lab) {
            self.clear();
            self.owner = Some(lab);
        }
    }

    /// Delete every namespace (pods first), host-local's files and the records.
    fn clear(&mut self) {
        let names: Vec<String> = self
            .pods
            .values()
            .chain(self.nodes.values())
            .cloned()
            .collect();
        let listed = kernel::netns_list();
        for n in names.iter().chain(self.marker.netns.iter()) {
            if listed.contains(n) {
                let _ = kernel::netns_del(n);
            }
        }
        let still = kernel::netns_list();
        self.marker.netns.retain(|n| still.contains(n));
        let _ = self.marker.write(&self.dir);
        let _ = std::fs::remove_dir_all(self.dir.join("host-local"));
        self.pods.clear();
        self.nodes.clear();
        self.results.clear();
        self.chains.clear();
        self.pending.clear();
        self.calls.clear();
    }

    /// Record `name` in the marker, then create it.
    fn create_netns(&mut self, name: &str) -> Result<(), String> {
        if !self.marker.netns.iter().any(|n| n == name) {
            self.marker.netns.push(name.to_string());
        }
        self.marker.write(&self.dir)?;
        kernel::netns_add(name)
    }

    fn node_ns(&mut self, node: &str) -> Result<String, String> {
        if let Some(ns) = self.nodes.get(node) {
            return Ok(ns.clone());
        }
        let ns = format!("{}n-{}", Marker::prefix(self.marker.pid), safe(node));
        self.create_netns(&ns)?;
        self.nodes.insert(node.to_string(), ns.clone());
        Ok(ns)
    }

    fn pod_ns(&mut self, node: &str, model_path: &str) -> Result<String, String> {
        let key = (node.to_string(), model_path.to_string());
        if let Some(ns) = self.pods.get(&key) {
            return Ok(ns.clone());
        }
        let ns = format!("{}p{}", Marker::prefix(self.marker.pid), self.next_pod);
        self.next_pod += 1;
        self.create_netns(&ns)?;
        self.pods.insert(key, ns.clone());
        Ok(ns)
    }

    fn host_local_dir(&self, node: &str) -> PathBuf {
        self.dir.join("host-local").join(safe(node))
    }

    /// Run the real plugin for one execution the model made and compare, keeping the real
    /// chain's results as libcni would (see [`Session::settle`]).
    fn execute(&mut self, x: &Beside<'_>) -> RealCall {
        let cmd = x.env.cmd();
        let key: Attachment = (
            x.node.to_string(),
            x.stdin.network_name().to_string(),
            x.env.container_id.to_string(),
            x.env.ifname.to_string(),
        );
        // A chain starts with an ADD without prevResult (its first plugin), or with a DEL
        // or CHECK after anything else: the chain before it is over.
        let continues = self.chains.get(&key).is_some_and(|c| {
            c.command == cmd && (cmd != CniCommand::Add || x.stdin.prev_result.is_some())
        });
        if !continues {
            self.settle(&key);
            if matches!(cmd, CniCommand::Add | CniCommand::Del) {
                self.chains.insert(
                    key.clone(),
                    Chain {
                        command: cmd,
                        out: None,
                        ok: true,
                    },
                );
            }
        }
        let call = self.run(x, &key);
        if let Some(chain) = self.chains.get_mut(&key) {
            let real_ok = call.exit == Some(0) && !matches!(call.verdict, Verdict::NotRun(_));
            let out = (cmd == CniCommand::Add && real_ok)
                .then(|| serde_json::from_str::<Value>(&call.stdout).ok())
                .flatten();
            chain.ok &= real_ok && !x.model.is_err() && (cmd != CniCommand::Add || out.is_some());
            chain.out = out;
        }
        call
    }

    /// Run the real plugin for one execution the model made and compare.
    fn run(&mut self, x: &Beside<'_>, key: &Attachment) -> RealCall {
        let cmd = x.env.cmd();
        let mut call = RealCall {
            node: x.node.to_string(),
            node_netns: String::new(),
            plugin_type: x.plugin_type.to_string(),
            command: cmd,
            binary: self.bin_dir.join(x.plugin_type).display().to_string(),
            env: Vec::new(),
            stdin: String::new(),
            changes: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            exit: None,
            paths: Vec::new(),
            model_stdout: lab_engine::cni::skel::stdout_of(x.model),
            verdict: Verdict::NotRun(String::new()),
        };
        if x.injected {
            call.verdict = Verdict::NotRun(
                "a fault (`fault inject`) answered in the model; the real plugin was not run"
                    .into(),
            );
            return call;
        }
        if !Path::new(&call.binary).is_file() {
            call.verdict = Verdict::NotRun(format!(
                "no real binary for {} in {} (real mode covers only the plugins in that directory)",
                x.plugin_type,
                self.bin_dir.display()
            ));
            return call;
        }
        let node_ns = match self.node_ns(x.node) {
            Ok(n) => n,
            Err(e) => {
                call.verdict = Verdict::NotRun(format!("cannot create the node's namespace: {e}"));
                return call;
            }
        };
        call.node_netns = node_ns.clone();
        // CNI_NETNS: a path of the model's becomes the pod's real namespace.
        let model_netns = x.env.netns.to_string();
        let real_netns = if model_netns.starts_with('/') {
            let key = (x.node.to_string(), model_netns.clone());
            let ns = match (self.pods.get(&key), cmd) {
                (Some(ns), _) => Some(ns.clone()),
                (None, CniCommand::Add) => match self.pod_ns(x.node, &model_netns) {
                    Ok(ns) => Some(ns),
                    Err(e) => {
                        call.verdict =
                            Verdict::NotRun(format!("cannot create the pod's namespace: {e}"));
                        return call;
                    }
                },
                (None, _) => None,
            };
            let path = match ns {
                Some(ns) => kernel::netns_path(&ns),
                // A namespace the real side never had: a path that does not exist, never
                // the model's (it could name a real runtime's namespace on this host).
                None => kernel::netns_path(&format!("{}gone", Marker::prefix(self.marker.pid))),
            };
            call.changes.push(format!(
                "CNI_NETNS={path} (the model's {model_netns}: the pod's real namespace)"
            ));
            call.paths.push((path.clone(), model_netns.clone()));
            path
        } else {
            model_netns.clone()
        };
        let model_path: &str = &x.env.path;
        let bin_dir = if model_path == lab_engine::cni::runtime::CNI_PATH {
            self.bin_dir.display().to_string()
        } else {
            // VERSION's placeholder (`dummy`) and the empty path of GC/STATUS stay as they are.
            model_path.to_string()
        };
        if model_path != bin_dir {
            call.changes.push(format!(
                "CNI_PATH={bin_dir} (the model's {}: where the real binaries are)",
                x.env.path
            ));
            // A plugin that names its CNI_PATH (`failed to find plugin "x" in path
            // [/usr/lib/cni]` for a missing IPAM) says the model's path when compared.
            call.paths.push((bin_dir.clone(), model_path.to_string()));
        }
        let real_env = CniEnv {
            netns: real_netns.into(),
            path: bin_dir.into(),
            ..x.env.clone()
        };
        call.env = real_env
            .vars()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        // Stdin: the model's, with the real chain's prevResult and the lab's dataDir.
        let mut doc = x.stdin.to_json();
        if x.stdin.prev_result.is_some() {
            let prev = match cmd {
                CniCommand::Add => self.chains.get(key).and_then(|c| c.out.as_ref()),
                _ => self.results.get(key),
            };
            match (prev, cmd) {
                (Some(prev), _) => {
                    if let Value::Object(m) = &mut doc {
                        m.insert("prevResult".into(), prev.clone());
                    }
                    call.changes.push(
                        "prevResult: the real chain's own (the real plugin before it on ADD, the real final result on DEL and CHECK)"
                            .into(),
                    );
                }
                (None, CniCommand::Add) => {
                    call.verdict = Verdict::NotRun(
                        "the real chain has no result from the plugin before this one".into(),
                    );
                    return call;
                }
                (None, _) => call.changes.push(
                    "prevResult: the model's (the real chain has no result for this attachment)"
                        .into(),
                ),
            }
        }
        let host_local = doc
            .get("ipam")
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
            == Some("host-local");
        if let (true, Some(ipam)) = (
            host_local,
            doc.get_mut("ipam").and_then(Value::as_object_mut),
        ) {
            let data = self.host_local_dir(x.node);
            let _ = std::fs::create_dir_all(&data);
            ipam.insert("dataDir".into(), Value::String(data.display().to_string()));
            call.changes.push(format!(
                "ipam.dataDir={} (the lab's own directory, never the host's /var/lib/cni/networks)",
                data.display()
            ));
        }
        call.stdin = serde_json::to_string(&doc).unwrap_or_default();
        let binary = call.binary.clone();
        let env: Vec<(&str, &str)> = call
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let ran = kernel::run(
            &["ip", "netns", "exec", &node_ns, &binary],
            &env,
            call.stdin.as_bytes(),
            kernel::PLUGIN_SECS,
        );
        call.stdout = ran.stdout.clone();
        call.stderr = ran.stderr.clone();
        call.exit = ran.code;
        if ran.timed_out() {
            call.stderr.push_str(&format!(
                "\n(stopped by the lab after {} s: timeout)",
                kernel::PLUGIN_SECS
            ));
        }
        let (real_view, _) = compare::libcni_view(&ran.stdout, &ran.stderr, ran.code);
        let d = compare::differences(
            &call.model_stdout,
            x.model.is_err(),
            &real_view,
            ran.code,
            &call.paths,
        );
        call.verdict = if d.is_empty() {
            Verdict::Same
        } else {
            Verdict::Differs(d)
        };
        call
    }
}

/// A node name as part of a namespace or directory name.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect()
}

/// One lab's handle on the process's real-mode session (see the module doc): what the
/// engine calls through [`RealCni`].
#[derive(Debug)]
pub struct Handle {
    lab: u64,
}

impl Handle {
    /// The session, if real mode is on and its kernel state belongs to this lab.
    fn owned(&self) -> Option<MutexGuard<'static, Option<Session>>> {
        let g = session();
        let mine = g.as_ref().is_some_and(|s| s.owner == Some(self.lab));
        mine.then_some(g)
    }
}

impl RealCni for Handle {
    fn exec(&self, model: &Beside<'_>) {
        let mut g = session();
        if let Some(s) = g.as_mut() {
            s.adopt(self.lab);
            let call = s.execute(model);
            s.pending.push_back(call);
        }
    }

    fn pair(&self, records: &[(u64, &str, CniCommand)]) -> Vec<(u64, String, bool)> {
        let Some(mut g) = self.owned() else {
            return Vec::new();
        };
        let Some(s) = g.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &(seq, plugin_type, command) in records {
            // Calls left from an operation that was never paired are skipped.
            while s
                .pending
                .front()
                .is_some_and(|c| c.plugin_type != plugin_type || c.command != command)
            {
                s.pending.pop_front();
            }
            let Some(call) = s.pending.pop_front() else {
                break;
            };
            let (text, differs) = call.event(seq);
            out.push((seq, text, differs));
            s.calls.insert(seq, call);
        }
        s.pending.clear();
        // The operation is over: its chains are settled.
        s.settle_all();
        while s.calls.len() > CALLS_KEPT {
            s.calls.pop_first();
        }
        out
    }

    fn netns_removed(&self, node: &str, model_path: &str) {
        let Some(mut g) = self.owned() else { return };
        let Some(s) = g.as_mut() else { return };
        if let Some(ns) = s.pods.remove(&(node.to_string(), model_path.to_string())) {
            let _ = kernel::netns_del(&ns);
            s.marker.netns.retain(|n| n != &ns);
            let _ = s.marker.write(&s.dir);
        }
    }

    fn reset(&self) {
        if let Some(s) = session().as_mut() {
            s.clear();
            s.owner = Some(self.lab);
        }
    }

    fn call(&self, seq: u64) -> Option<RealCall> {
        let g = self.owned()?;
        g.as_ref()?.calls.get(&seq).cloned()
    }

    fn namespace(&self, node: &str, pod_netns: Option<&str>) -> Option<String> {
        let g = self.owned()?;
        let s = g.as_ref()?;
        match pod_netns {
            None => s.nodes.get(node).cloned(),
            Some(p) => s.pods.get(&(node.to_string(), p.to_string())).cloned(),
        }
    }

    fn tool(&self, argv: &[&str]) -> lab_engine::cni::real::Ran {
        kernel::tool(argv)
    }

    fn host_local(&self, node: &str) -> Option<HostLocalFiles> {
        let g = self.owned()?;
        let s = g.as_ref()?;
        if !s.nodes.contains_key(node) {
            return None;
        }
        let dir = s.host_local_dir(node);
        let networks = sorted_entries(&dir)
            .into_iter()
            .map(|net| {
                let files = sorted_entries(&net)
                    .into_iter()
                    .map(|f| {
                        let name = f
                            .file_name()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        (name, std::fs::read(&f).unwrap_or_default())
                    })
                    .collect();
                (net.display().to_string(), files)
            })
            .collect();
        Some(HostLocalFiles {
            dir: dir.display().to_string(),
            networks,
        })
    }
}

/// The entries of a directory, sorted by name in byte order as `ls` lists them with
/// LC_COLLATE=C (none if it cannot be read).
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    v
}

/// The error when real mode is asked for without root.
pub const NOT_ROOT: &str = "--real-cni needs root: it creates network namespaces, veth pairs, bridges and iptables rules (in namespaces of its own; the host's are never touched). Run it as root, e.g. `sudo cni-csi-lab --real-cni`";

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            euid: Some(0),
            tools_missing: Vec::new(),
            bin_dir: DEBIAN_BIN_DIR.into(),
            named: false,
            binaries_missing: Vec::new(),
        }
    }

    #[test]
    fn preflight_names_what_is_missing() {
        assert_eq!(check(&facts()), Ok(()));
        let e = check(&Facts {
            euid: Some(1000),
            ..facts()
        })
        .unwrap_err();
        assert!(e.starts_with("--real-cni needs root"), "{e}");
        let e = check(&Facts {
            tools_missing: vec!["ip".into()],
            ..facts()
        })
        .unwrap_err();
        assert!(
            e.contains("needs ip on PATH") && e.contains("iproute2"),
            "{e}"
        );
        let e = check(&Facts {
            binaries_missing: vec!["bridge".into(), "portmap".into()],
            ..facts()
        })
        .unwrap_err();
        assert!(
            e.contains("bridge, portmap in /usr/lib/cni")
                && e.contains("containernetworking-plugins"),
            "{e}"
        );
        let e = check(&Facts {
            binaries_missing: vec!["bridge".into()],
            bin_dir: "/tmp/x".into(),
            named: true,
            ..facts()
        })
        .unwrap_err();
        assert!(e.contains("check --cni-bin-dir /tmp/x"), "{e}");
    }

    #[test]
    fn node_names_become_safe_namespace_names() {
        assert_eq!(safe("node-1"), "node-1");
        assert_eq!(safe("a/b c"), "a_b_c");
    }
}
