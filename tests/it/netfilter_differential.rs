//! Differential test: the lab's iptables tables against the kernel's. A lab state after
//! dual-stack pod ADDs with portmap and ipMasq (plus flannel's filter rules and a DROP
//! policy, written through the public API) is loaded into a fresh network namespace with
//! `iptables-restore` / `ip6tables-restore`, read back with `iptables -t TABLE -S`, and the
//! kernel must print exactly the lab's lines, for both families and the nat and filter
//! tables. The kernel validates each rule too (a DNAT reachable from POSTROUTING, say, is
//! refused), so the lab writes only rules a node could hold.
//!
//! A second case writes Calico-Felix-shaped filter rules (`-g` gotos, `-m set` matches)
//! and the ipsets they test: the kernel must accept the lab's `ipset save` through `ipset
//! restore` and print the same sets back (members in its own hash order, so compared
//! sorted), and accept and print the rules exactly.
//!
//! Needs root, `ip` and `iptables-restore` (and `ipset` for the second case); otherwise it
//! says why on stderr and passes (`.ci/run` installs iptables, ipset and iproute2). The
//! namespace is deleted on every exit path (a guard's `Drop`).

use crate::oracle;

use cni_csi_lab::Lab;
use lab_engine::cni::ipset::{DEFAULT_MAXELEM, Family, SetType};
use lab_engine::cni::netfilter::{TableKind, XtTable};
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
    oracle::missing(
        true,
        &[
            "ip",
            "iptables-restore",
            "ip6tables-restore",
            "iptables",
            "ip6tables",
        ],
        &[],
    )
}

/// A lab with state in every table: dual-stack pods with host ports on node-1 (bridge
/// ipMasq + portmap), flannel's FORWARD rules and a DROP policy in both filter tables.
fn lab_state() -> Lab {
    let mut lab = crate::common::lab();
    for line in [
        format!("cni conf load {DUAL} --node node-1 --as 00-dual.conflist"),
        "pod create web --node node-1 --port 8080:80".into(),
        "pod create dns --node node-1 --port 5353:53/UDP".into(),
        "pod create api --node node-1 --port 8443:443 --port 9000:9000".into(),
    ] {
        lab.execute(&line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let Some(rt) = lab.nodes_mut().get_mut("node-1") else {
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
    if !oracle::run_or_skip("the netfilter differential test", missing_prerequisite()) {
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
    let nf = &lab.nodes()["node-1"].host.netfilter;
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

/// Felix-shaped filter rules and the sets they test, in both families: a dispatch chain
/// that `-g`s per interface, policy chains that `-g` on, `-m set` (negated, two flags) on
/// `hash:net` and `hash:ip` sets.
fn felix_state() -> Lab {
    let mut lab = lab_state();
    let Some(rt) = lab.nodes_mut().get_mut("node-1") else {
        panic!("node-1 missing");
    };
    let sets = &mut rt.host.ipsets;
    let ok = |r: Result<(), String>| r.unwrap_or_else(|e| panic!("{e}"));
    ok(sets.create("cali40s:web", SetType::HashNet, Family::Inet, 1_048_576));
    ok(sets.replace_members("cali40s:web", ["10.244.1.0/24", "10.244.7.9", "10.0.0.0/8"]));
    ok(sets.create(
        "cali40all-hosts",
        SetType::HashIp,
        Family::Inet,
        DEFAULT_MAXELEM,
    ));
    ok(sets.replace_members("cali40all-hosts", ["192.168.0.2", "192.168.0.3"]));
    ok(sets.create("cali60s:web", SetType::HashNet, Family::Inet6, 1_048_576));
    ok(sets.replace_members("cali60s:web", ["fd00:10:1::/64", "fd00:10:2::5"]));
    ok(sets.create(
        "cali40empty",
        SetType::HashNet,
        Family::Inet,
        DEFAULT_MAXELEM,
    ));
    for (v6, ver) in [(false, "4"), (true, "6")] {
        let f = &mut rt.host.netfilter.family_mut(v6).filter;
        let c = r#"-m comment --comment "cali:dispatch""#;
        f.append_unique("FORWARD", format!("{c} -j cali-FORWARD"));
        f.append_unique("cali-FORWARD", "-i cali+ -g cali-from-wl-dispatch");
        f.append_unique("cali-FORWARD", "-o cali+ -g cali-to-wl-dispatch");
        f.append_unique("cali-from-wl-dispatch", "-i cali1234 -g cali-fw-cali1234");
        f.append_unique("cali-from-wl-dispatch", "-j DROP");
        f.ensure_chain("cali-to-wl-dispatch");
        f.append_unique(
            "cali-fw-cali1234",
            format!("-m set --match-set cali{ver}0s:web dst -j ACCEPT"),
        );
        f.append_unique(
            "cali-fw-cali1234",
            format!("-m set ! --match-set cali{ver}0s:web src,dst -g cali-po-deny"),
        );
        if !v6 {
            f.append_unique(
                "cali-fw-cali1234",
                "-p tcp -m set --match-set cali40all-hosts dst -m tcp --dport 10250 -j ACCEPT",
            );
        }
        f.append_unique("cali-po-deny", "-j MARK --set-xmark 0x10000/0x10000");
        f.append_unique("cali-po-deny", "-j RETURN");
    }
    lab
}

#[test]
fn the_kernel_takes_the_lab_s_gotos_and_ipsets() {
    let missing = missing_prerequisite().or_else(|| oracle::missing(false, &["ipset"], &[]));
    if !oracle::run_or_skip("the goto/ipset differential test", missing) {
        return;
    }
    let lab = felix_state();
    let ns = match Netns::add(format!("lab-nfset-{}", std::process::id())) {
        Ok(ns) => ns,
        Err(e) => {
            eprintln!("skipping the goto/ipset differential test: {e}");
            return;
        }
    };
    let host = &lab.nodes()["node-1"].host;
    let save = host.ipsets.to_save_lines();
    ns.exec("ipset", &["restore"], &(save.join("\n") + "\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let kernel = ns
        .exec("ipset", &["save"], "")
        .unwrap_or_else(|e| panic!("{e}"));
    // The kernel prints a set's members in hash order: compare each set's lines sorted
    // (the create line sorts first), and the sets in the lab's (name) order.
    let by_set = |lines: Vec<String>| {
        let mut sets: Vec<Vec<String>> = Vec::new();
        for l in lines {
            if l.starts_with("create ") || sets.is_empty() {
                sets.push(Vec::new());
            }
            if let Some(s) = sets.last_mut() {
                s.push(l);
            }
        }
        for s in &mut sets {
            s.sort();
        }
        sets.sort();
        sets
    };
    assert_eq!(
        by_set(kernel.lines().map(str::to_string).collect()),
        by_set(save.clone()),
        "ipset save: the kernel (left) and the lab (right) differ"
    );
    assert!(
        save.iter().any(|l| l.starts_with("create cali40s:web hash:net family inet hashsize 1024 maxelem 1048576 bucketsize 12 initval 0x")),
        "{save:?}"
    );
    let nf = &host.netfilter;
    for (v6, restore, list) in [
        (false, "iptables-restore", "iptables"),
        (true, "ip6tables-restore", "ip6tables"),
    ] {
        let filter = &nf.family(v6).filter;
        ns.exec(restore, &[], &restore_input(&[filter]))
            .unwrap_or_else(|e| panic!("{e}"));
        let kernel = ns
            .exec(list, &["-t", "filter", "-S"], "")
            .unwrap_or_else(|e| panic!("{e}"));
        let kernel: Vec<&str> = kernel.lines().collect();
        assert!(kernel.iter().any(|l| l.contains(" -g ")), "{kernel:?}");
        assert!(
            kernel.iter().any(|l| l.contains("! --match-set")),
            "{kernel:?}"
        );
        assert_eq!(
            kernel,
            filter.to_lines(),
            "{list} -t filter -S: the kernel (left) and the lab (right) differ"
        );
    }
    // The kernel refuses to destroy a set a rule uses, as the lab does.
    let err = ns
        .exec("ipset", &["destroy", "cali40s:web"], "")
        .expect_err("the set is in use");
    assert!(
        err.contains("Set cannot be destroyed: it is in use by a kernel component"),
        "{err}"
    );
    let mut sets = host.ipsets.clone();
    assert_eq!(
        sets.destroy("cali40s:web", nf),
        Err("Set cannot be destroyed: it is in use by a kernel component".into())
    );
    assert_eq!(sets.destroy("cali40empty", nf), Ok(()));
    ns.exec("ipset", &["destroy", "cali40empty"], "")
        .unwrap_or_else(|e| panic!("{e}"));
    drop(ns);
}
