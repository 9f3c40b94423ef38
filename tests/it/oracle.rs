//! What the differential tests need from the machine (the oracles: Debian's real CNI plugins,
//! root for network namespaces, `ip`, `iptables`, `ipset`, `ping`, kernel features), and
//! what a test does when something is missing: on a developer's machine it is skipped with
//! one line on the terminal naming what is missing and how to get it; under `CI=true` it
//! fails, so CI never goes green without its oracles (`.ci/run` installs them).
#![allow(dead_code)]

use std::io::Write as _;
use std::process::Command;

/// The Debian package that brings a tool or file the tests use.
fn package_of(what: &str) -> &'static str {
    match what {
        "ip" | "bridge" => "iproute2",
        "iptables" | "ip6tables" | "iptables-restore" | "ip6tables-restore" => "iptables",
        "ipset" => "ipset",
        "ping" => "iputils-ping",
        "sysctl" => "procps",
        "timeout" => "coreutils",
        "script" => "bsdutils",
        p if p.starts_with("/usr/lib/cni/") => "containernetworking-plugins",
        _ => "",
    }
}

/// Whether the tests run as root (network namespaces need it).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Whether a command is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What is missing of `tools` (commands) and `files`, with root if `root`, as one sentence
/// that says how to get it; `None` when everything is there.
pub fn missing(root: bool, tools: &[&str], files: &[&str]) -> Option<String> {
    if root && !is_root() {
        return Some("it needs root for network namespaces (run the tests as root)".into());
    }
    let absent: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !have(t))
        .chain(
            files
                .iter()
                .copied()
                .filter(|f| !std::path::Path::new(f).exists()),
        )
        .collect();
    if absent.is_empty() {
        return None;
    }
    let mut packages: Vec<&str> = absent.iter().map(|a| package_of(a)).collect();
    packages.retain(|p| !p.is_empty());
    packages.sort_unstable();
    packages.dedup();
    Some(format!(
        "{} missing (install: apt-get install {})",
        absent.join(", "),
        packages.join(" ")
    ))
}

/// Whether `test` can run: `true` when nothing is `missing`. Otherwise, under `CI=true` it
/// panics (a missing oracle is a CI failure); elsewhere it prints one line straight to the
/// terminal (past the test harness's capture) and the caller returns early.
pub fn run_or_skip(test: &str, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}; CI=true, so a missing oracle is a failure (.ci/run installs it)");
    }
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
    false
}
