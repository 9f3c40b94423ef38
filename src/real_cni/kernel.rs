//! The few kernel tools real mode drives, each under `timeout` so that a hung tool or plugin
//! never hangs the lab: `ip netns add|del|exec|list`, `ip route`, `iptables -S`. Every
//! command runs with a cleared environment (a standard `PATH` and what the caller passes),
//! as a runtime's exec of a plugin would not leak the lab's own variables into it.

use std::io::Write as _;
use std::process::{Command, Stdio};

pub use lab_engine::cni::real::Ran;

/// The `PATH` commands and plugins get (portmap and bridge find `iptables` on it).
pub const STD_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Seconds a plugin may run before `timeout` stops it (then KILL 2 s later).
pub const PLUGIN_SECS: u32 = 20;

/// Seconds an `ip`/`iptables` command may run.
pub const TOOL_SECS: u32 = 10;

/// Run `argv` under `timeout -k 2 SECS` with only `PATH` and `env` set, feeding `stdin`.
pub fn run(argv: &[&str], env: &[(&str, &str)], stdin: &[u8], secs: u32) -> Ran {
    let child = Command::new("timeout")
        .args(["-k", "2", &secs.to_string()])
        .args(argv)
        .env_clear()
        .env("PATH", STD_PATH)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                code: None,
                stdout: String::new(),
                stderr: format!("timeout {}: {e}", argv.join(" ")),
            };
        }
    };
    if let Some(mut i) = child.stdin.take() {
        // A plugin that exits without reading its stdin closes the pipe: not an error here.
        let _ = i.write_all(stdin);
    }
    match child.wait_with_output() {
        Ok(o) => Ran {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        },
        Err(e) => Ran {
            code: None,
            stdout: String::new(),
            stderr: format!("{}: {e}", argv.join(" ")),
        },
    }
}

/// Run a tool (no stdin, no extra environment) with [`TOOL_SECS`].
pub fn tool(argv: &[&str]) -> Ran {
    run(argv, &[], b"", TOOL_SECS)
}

/// `ip netns add NAME` and bring its `lo` up.
pub fn netns_add(name: &str) -> Result<(), String> {
    let r = tool(&["ip", "netns", "add", name]);
    if !r.ok() {
        return Err(format!("ip netns add {name}: {}", r.why()));
    }
    let r = tool(&["ip", "-n", name, "link", "set", "lo", "up"]);
    if !r.ok() {
        return Err(format!("ip -n {name} link set lo up: {}", r.why()));
    }
    Ok(())
}

/// `ip netns del NAME`; deleting the namespace takes its links (and their veth peers), its
/// routes and its iptables tables with it.
pub fn netns_del(name: &str) -> Result<(), String> {
    let r = tool(&["ip", "netns", "del", name]);
    if r.ok() {
        Ok(())
    } else {
        Err(format!("ip netns del {name}: {}", r.why()))
    }
}

/// The named network namespaces (`ip netns list`, first word of each line).
pub fn netns_list() -> Vec<String> {
    tool(&["ip", "netns", "list"])
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The path a named namespace has (`ip netns` bind-mounts it there).
pub fn netns_path(name: &str) -> String {
    format!("/var/run/netns/{name}")
}
