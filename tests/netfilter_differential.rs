//! Differential test: the lab's iptables tables against the kernel's. A lab state after
//! dual-stack pod ADDs with portmap and ipMasq (plus flannel's filter rules and a DROP
//! policy, written through the public API) is loaded into a fresh network namespace with
//! `iptables-restore` / `ip6tables-restore`, read back with `iptables -t TABLE -S`, and the
//! kernel must print exactly the lab's lines, for both families and the nat and filter
//! tables. The kernel validates each rule too (a DNAT reachable from POSTROUTING, say, is
//! refused), so the lab writes only rules a node could hold.
//!
//! Needs root, `ip` and `iptables-restore`; otherwise it says why on stderr and passes
//! (`.ci/run` installs iptables and iproute2). The namespace is deleted on every exit
//! path (a guard's `Drop`).

use cni_csi_lab::Lab;
use cni_csi_lab::cni::netfilter::{TableKind, XtTable};
use std::io::Write;
use std::process::{Command, Stdio};

const DUAL: &str = "tests/fixtures/dual-stack.conflist";

/// A network namespace that is deleted when the guard goes.
struct Netns(String);

impl Netns {
    fn add(name: String) -> Result<Netns, String> {
        let out = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .map_err(|e| format!("ip: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "ip netns add {name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Netns(name))
    }

    /// Run `cmd args` in the namespace with `stdin`; stdout, or the failure.
    fn exec(&self, cmd: &str, args: &[&str], stdin: &str) -> Result<String, String> {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.0, cmd])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{cmd}: {e}"))?;
        if let Some(mut i) = child.stdin.take() {
            i.write_all(stdin.as_bytes())
                .map_err(|e| format!("{cmd} stdin: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("{cmd}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{cmd} {args:?} failed: {}\ninput:\n{stdin}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// Why the test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not running as root".into());
    }
    for tool in [
        "ip",
        "iptables-restore",
        "ip6tables-restore",
        "iptables",
        "ip6tables",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!("{tool} is not installed"));
        }
    }
    None
}

/// A lab with state in every table: dual-stack pods with host ports on node-1 (bridge
/// ipMasq + portmap), flannel's FORWARD rules and a DROP policy in both filter tables.
fn lab_state() -> Lab {
    let mut lab = Lab::new();
    for line in [
        format!("cni conf load {DUAL} --node node-1 --as 00-dual.conflist"),
        "pod create web --node node-1 --port 8080:80".into(),
        "pod create dns --node node-1 --port 5353:53/UDP".into(),
        "pod create api --node node-1 --port 8443:443 --port 9000:9000".into(),
    ] {
        lab.execute(&line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let Some(rt) = lab.nodes.get_mut("node-1") else {
        panic!("node-1 missing");
    };
    for (v6, cluster) in [(false, "10.244.0.0/16"), (true, "fd00:10::/48")] {
        // flanneld's filter rules (`pkg/trafficmngr/iptables/iptables.go`).
        let f = &mut rt.host.netfilter.family_mut(v6).filter;
        let c = r#"-m comment --comment "flanneld forward""#;
        f.append_unique("FORWARD", format!("{c} -j FLANNEL-FWD"));
        f.append_unique("FLANNEL-FWD", format!("-s {cluster} {c} -j ACCEPT"));
        f.append_unique("FLANNEL-FWD", format!("-d {cluster} {c} -j ACCEPT"));
        f.set_policy("FORWARD", "DROP")
            .expect("FORWARD is built in");
    }
    lab
}

fn restore_input(tables: &[&XtTable]) -> String {
    let mut s = String::new();
    for t in tables {
        for l in t.to_restore_lines() {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn the_kernel_prints_exactly_the_lab_s_tables() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipping the netfilter differential test: {why}");
        return;
    }
    let lab = lab_state();
    let ns = match Netns::add(format!("lab-nf-{}", std::process::id())) {
        Ok(ns) => ns,
        Err(e) => {
            eprintln!("skipping the netfilter differential test: {e}");
            return;
        }
    };
    let nf = &lab.nodes["node-1"].host.netfilter;
    for (v6, restore, list) in [
        (false, "iptables-restore", "iptables"),
        (true, "ip6tables-restore", "ip6tables"),
    ] {
        let tables = nf.family(v6);
        let input = restore_input(&[&tables.nat, &tables.filter]);
        ns.exec(restore, &[], &input)
            .unwrap_or_else(|e| panic!("{e}"));
        for kind in TableKind::ALL {
            let lab_lines = tables.get(kind).to_lines();
            assert!(
                lab_lines.len() > kind.builtin_chains().len(),
                "{list} -t {kind}: the lab state has no rules to compare"
            );
            let kernel = ns
                .exec(list, &["-t", kind.name(), "-S"], "")
                .unwrap_or_else(|e| panic!("{e}"));
            let kernel: Vec<&str> = kernel.lines().collect();
            assert_eq!(
                kernel, lab_lines,
                "{list} -t {kind} -S: the kernel (left) and the lab (right) differ"
            );
        }
    }
    drop(ns);
}
