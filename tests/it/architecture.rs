//! The arrows of `docs/architecture.md`, checked by reading the sources: front ends →
//! lessons → engine → components → what a component is handed → domain models → ground.
//! A `use` (or a path) that points up a floor fails here with the file and line. That the
//! engine crate (`engine/`) uses no terminal, async, thread or file-system crate is a
//! compile-time fact (its Cargo.toml does not name them); the test below checks the list.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable source dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code lines of a file (comments dropped), with their numbers, up to its unit tests
/// (`mod tests {`): a test may use any room to set up what it checks.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).expect("readable source");
    text.lines()
        .take_while(|l| !l.trim().ends_with("mod tests {"))
        .enumerate()
        .filter_map(|(i, l)| {
            let code = match l.find("//") {
                Some(at) => &l[..at],
                None => l,
            };
            (!code.trim().is_empty()).then(|| (i + 1, code.to_string()))
        })
        .collect()
}

/// The engine crate's sources (`engine/src`).
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("engine/src")
}

/// The front ends' sources (`src`).
fn front_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The files of the rooms named (folders or single files under `engine/src/`).
fn rooms(names: &[&str]) -> Vec<PathBuf> {
    rooms_in(&src(), names)
}

/// The files of the rooms named under `root`.
fn rooms_in(root: &Path, names: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for n in names {
        let p = root.join(n);
        if p.is_dir() {
            out.extend(sources(&p));
        } else {
            let file = p.with_extension("rs");
            assert!(
                file.is_file(),
                "no room {} (a folder or a .rs file)",
                p.display()
            );
            out.push(file);
        }
    }
    out
}

/// Lines in `files` that mention any of `forbidden`.
fn violations(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for f in files {
        for (n, line) in code_lines(f) {
            if let Some(word) = forbidden.iter().find(|w| line.contains(*w)) {
                bad.push(format!(
                    "{}:{n}: uses {word}: {}",
                    f.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                        .unwrap_or(f)
                        .display(),
                    line.trim()
                ));
            }
        }
    }
    bad
}

fn assert_none(what: &str, bad: Vec<String>) {
    assert!(bad.is_empty(), "{what}:\n{}", bad.join("\n"));
}

const FRONT_ENDS: &[&str] = &["crate::script", "crate::presets", "crate::dash"];
const COMPONENTS: &[&str] = &[
    "crate::controllers",
    "crate::storage",
    "crate::kubelet",
    "crate::netd",
];
const HANDED: &[&str] = &[
    "crate::control",
    "crate::record",
    "crate::faults",
    "crate::node",
];
const LOWER: &[&str] = &[
    "control", "record", "faults", "node", "cluster", "cni", "csi", "net", "command", "render",
    "util", "edge",
];

#[test]
fn only_the_engine_implements_the_lab() {
    let files = sources(&src());
    let bad: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(src().join("engine")))
        .flat_map(|f| {
            code_lines(f)
                .into_iter()
                .filter(|(_, l)| {
                    let t = l.trim_start();
                    t.starts_with("impl Lab ")
                        || t.starts_with("impl Lab{")
                        || t.starts_with("impl crate::engine::Lab")
                })
                .map(move |(n, l)| format!("{}:{n}: {}", f.display(), l.trim()))
        })
        .collect();
    assert_none("`impl Lab` outside src/engine", bad);
}

/// The crates only front ends may use: terminals, async runtimes and gRPC, the disk and
/// signals, the user's directories.
const FRONT_END_CRATES: &[&str] = &[
    "ratatui",
    "crossterm",
    "rustyline",
    "owo-colors",
    "tokio",
    "tonic",
    "prost",
    "axum",
    "signal-hook",
    "directories",
    "fs4",
    "libc",
    "rustix",
    "mimalloc",
];

#[test]
fn the_engine_crate_depends_on_no_terminal_async_or_os_crate() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("engine/Cargo.toml"))
            .expect("engine/Cargo.toml");
    let deps: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    let bad: Vec<&&str> = FRONT_END_CRATES
        .iter()
        .filter(|c| {
            deps.iter()
                .any(|d| d == *c || d.starts_with(&format!("{c}-")))
        })
        .collect();
    assert!(bad.is_empty(), "engine/Cargo.toml names {bad:?}");
}

#[test]
fn the_engine_reads_no_clock_thread_process_or_file() {
    let bad: Vec<String> = sources(&src())
        .iter()
        .flat_map(|f| {
            code_lines(f)
                .into_iter()
                .filter(|(_, l)| {
                    [
                        "std::fs",
                        "std::thread",
                        "std::process",
                        "std::time::",
                        "std::env",
                    ]
                    .iter()
                    .any(|w| l.contains(w))
                })
                .map(move |(n, l)| format!("{}:{n}: {}", f.display(), l.trim()))
        })
        .collect();
    assert_none("the engine touches the OS (hand it an edge instead)", bad);
}

#[test]
fn the_engine_never_reaches_up() {
    let mut up = vec!["crate::lesson"];
    up.extend(FRONT_ENDS);
    assert_none(
        "src/engine, src/resource or src/manifest uses a lesson or front-end room",
        violations(&rooms(&["engine", "resource", "manifest"]), &up),
    );
}

#[test]
fn components_see_neither_the_engine_nor_what_is_above_it() {
    let mut up = vec!["crate::engine", "crate::resource", "crate::lesson"];
    up.extend(FRONT_ENDS);
    assert_none(
        "a component uses the engine or a room above it",
        violations(&rooms(&["controllers", "storage", "kubelet", "netd"]), &up),
    );
}

#[test]
fn what_components_are_handed_and_the_domain_models_see_no_component() {
    let mut up = vec!["crate::engine", "crate::resource", "crate::lesson"];
    up.extend(FRONT_ENDS);
    up.extend(COMPONENTS);
    assert_none(
        "a lower room uses a component, the engine or a room above it",
        violations(&rooms(LOWER), &up),
    );
}

#[test]
fn domain_models_do_not_depend_on_the_lab_s_bookkeeping() {
    assert_none(
        "a domain model uses the call log, the fault table or the component context",
        violations(
            &rooms(&["cluster", "cni", "csi", "net", "command", "render", "util"]),
            HANDED,
        ),
    );
}

#[test]
fn the_api_types_live_with_the_cluster() {
    assert_none(
        "src/cluster uses the pod network model",
        violations(&rooms(&["cluster"]), &["crate::net"]),
    );
}

#[test]
fn front_ends_read_view_models_not_cni_or_csi_internals() {
    assert_none(
        "a front end reaches into cni or csi",
        violations(
            &rooms_in(&front_src(), &["tui", "repl"]),
            &["lab_engine::cni::", "lab_engine::csi::"],
        ),
    );
}

/// The front ends (dashboard, REPL, gRPC server, CLI) see the lab through its narrow API:
/// commands in, typed outcomes and view models out (`Lab::run`, `lab_engine::dash`). The
/// hidden accessors to the cluster's stores and nodes' kernels are for tests and tools
/// that check the model itself, not for a front end to read state around the engine.
#[test]
fn front_ends_use_the_narrow_lab_api() {
    let mut files = rooms_in(&front_src(), &["tui", "repl", "csi_serve"]);
    files.push(front_src().join("main.rs"));
    assert_none(
        "a front end reads the lab's internals",
        violations(
            &files,
            &[
                ".cluster()",
                ".cluster_mut()",
                ".nodes()",
                ".nodes_mut()",
                ".driver()",
                ".journal()",
                ".kubelets()",
                "lab_engine::cni::host",
                "lab_engine::node::",
            ],
        ),
    );
}

/// Lesson code (the player, its checks, decoys and grading: `engine/src/lesson/`) asks the
/// lab through its queries (`engine::query`, `engine::node_view`, the typed records and what
/// a command showed): it reads no `Lab` field, and names neither the cluster store's object
/// types nor the node's kernel model, so the store can change without touching a check.
#[test]
fn lessons_read_queries_not_the_lab_s_store() {
    const FIELDS: &[&str] = &[
        "cluster", "nodes", "calls", "wire", "driver", "journal", "kubelets", "edges", "mode",
        "faults", "network", "clock",
    ];
    let mut bad = violations(
        &rooms(&["lesson"]),
        &[
            "cni::host",
            "crate::node::",
            "cluster::Object<",
            "cluster::Object,",
            "cluster::Object}",
            " Object<",
            "cluster::Cluster",
            "PodSpec",
            "PvcSpec",
            "PvSpec",
            ".cluster()",
            ".nodes()",
            ".driver()",
            ".journal()",
            ".kubelets()",
        ],
    );
    for f in rooms(&["lesson"]) {
        // `lab\n    .cluster` is the same read as `lab.cluster`.
        let code: Vec<String> = code_lines(&f).into_iter().map(|(_, l)| l).collect();
        let joined = code.join("\n");
        let mut flat = String::with_capacity(joined.len());
        let mut rest = joined.as_str();
        while let Some(at) = rest.find("lab\n") {
            flat.push_str(&rest[..at + 3]);
            rest = rest[at + 4..].trim_start();
        }
        flat.push_str(rest);
        for field in FIELDS {
            let read = format!("lab.{field}");
            let mut from = 0;
            while let Some(at) = flat[from..].find(&read) {
                let end = from + at + read.len();
                let next = flat[end..].chars().next().unwrap_or(' ');
                if !(next.is_alphanumeric() || next == '_' || next == '(') {
                    bad.push(format!(
                        "{}: reads the lab's field `{field}`",
                        f.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                            .unwrap_or(&f)
                            .display()
                    ));
                }
                from = end;
            }
        }
    }
    assert_none(
        "lesson code reads the lab's store instead of its queries",
        bad,
    );
}

/// Code outside the resource registry (`engine/src/resource/`) and the kinds' own
/// definitions (`cluster/`) never matches or compares a kind by its name: it resolves a
/// typed word through the registry once (`resource::lookup`) and works on the
/// `cluster::ApiKind`. The command language's words (`pod create`, `--node`) are commands,
/// not kinds, and are not looked at.
#[test]
fn kinds_are_matched_by_name_only_in_the_registry() {
    use lab_engine::cluster::ApiKind;
    let words: Vec<String> = ApiKind::ALL
        .iter()
        .flat_map(|k| [k.name(), lab_engine::resource::plural(*k)])
        .map(|w| format!("\"{w}\""))
        .collect();
    let mut files: Vec<PathBuf> = sources(&src())
        .into_iter()
        .filter(|f| !f.starts_with(src().join("resource")))
        .filter(|f| !f.starts_with(src().join("cluster")))
        .filter(|f| !f.starts_with(src().join("command")))
        .collect();
    files.extend(sources(&front_src()));
    let mut bad = Vec::new();
    for f in &files {
        for (n, line) in code_lines(f) {
            let code = line.trim();
            let matched = words.iter().any(|w| {
                code.starts_with(&format!("{w} =>"))
                    || code.starts_with(&format!("{w} |"))
                    || code.contains(&format!("| {w}"))
                    || (code.starts_with(&format!("({w},")) && code.ends_with("=> {"))
                    || code.contains(&format!("== {w}"))
                    || code.contains(&format!("!= {w}"))
            });
            if matched {
                bad.push(format!("{}:{n}: {code}", f.display()));
            }
        }
    }
    assert_none("a kind matched by its name outside the registry", bad);
}

/// The engine drives the network's daemons through `netd::Network` alone: it names no
/// implementation (`network use` finds one by name in `netd::IMPLEMENTATIONS`).
#[test]
fn the_engine_names_no_network_implementation() {
    assert_none(
        "src/engine names a network implementation (drive it through netd::Network)",
        violations(
            &rooms(&["engine"]),
            &[
                "netd::flannel",
                "netd::Flannel",
                "netd::calico",
                "netd::Calico",
                "netd::cilium::agent",
                "CiliumNetwork",
                "Network::Flannel",
                "Network::Calico",
                "Network::Cilium",
            ],
        ),
    );
}
