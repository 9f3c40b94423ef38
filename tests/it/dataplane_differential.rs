//! Differential test: the real kernel as the oracle for the lab's data plane. The lab runs
//! two pods, `web` on node-1 and `db` on node-2, with flannel's host-gw or VXLAN backend
//! (`flannel-and-netfilter.md` §4, §5), with the default conflist or a bridge conflist with
//! `"ipMasq": true` (§6.4). The test then builds exactly the state the lab holds in real
//! network namespaces: one per node, one per pod, and a "wire" namespace whose bridge joins
//! the nodes' `eth0`s. It copies every link of the lab (kind, MAC, MTU, master, hairpin,
//! addresses, up), the routes that are not derived from addresses, the neighbours, the FDB
//! entries, the sysctls and the iptables tables (`iptables-restore`). Then it compares:
//! - the state, line for line, with the trailing spaces the kernel prints trimmed:
//!   `show routes NODE` against `ip route` (host and pods), `show neigh` against
//!   `ip neigh show` (its PERMANENT entries), `show fdb` against `bridge fdb show` (its
//!   `dst` entries; also `bridge fdb show dev flannel.1`, which leaves out `dev`), and
//!   `show iptables NODE` (nat and filter) against `iptables -t TABLE -S`, and `show links`
//!   (host and pods) against `ip -d addr` (each device line equal; the other lines equal
//!   or the kernel's with the `-d` fields the lab leaves out added at the end);
//! - the routing decision: node-1's `ip route get DB from WEB iif cni0` against the lab's
//!   `route on node-1:` hop (same gateway and device; §6.1);
//! - the verdicts: `ping -c1 -W1 -M do -s N` from web to db against `trace web db --size
//!   N+28` (delivered or not, and the same "message too long, mtu=M" or "fragmentation
//!   needed (mtu = M)" sent from the bridge's address; §7), and whether the packet reached
//!   node-1's filter FORWARD (its counters against the trace's hops after the route);
//! - the source on arrival: db's INPUT counters for each candidate source (web, and each
//!   address of node-1) against the source the lab's trace delivers (§6.1: pod to pod keeps
//!   its source; §6.4: the bridge's MASQUERADE takes the output device's address).
//!
//! Traffic between the two pods is routed, never bridged, so br_netfilter
//! (`bridge-nf-call-iptables`, §6.5) plays no part and is not needed.
//!
//! Needs root, `ip`, `bridge`, `iptables`, `iptables-restore`, `sysctl`, `ping` and
//! `timeout`; otherwise it says why on stderr and passes (`.ci/run` installs them). The
//! VXLAN cases say so and pass if the kernel has no vxlan. Every command runs under
//! `timeout`, and every namespace is deleted on every exit path (a guard's `Drop`).

use crate::oracle;

use lab_engine::cni::host::{Host, LinkKind, Netns as LabNetns, RouteEntry};
use lab_engine::engine::Lab;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

/// A bridge conflist whose bridge masquerades (`ipMasq: true`, §6.4), as tests/data_plane.rs.
const MASQ_CONFLIST: &str = r#"{"cniVersion":"1.0.0","name":"masq-net","plugins":[{"type":"bridge","bridge":"br-lab","isGateway":true,"isDefaultGateway":true,"ipMasq":true,"ipam":{"type":"host-local","ranges":[[{"subnet":"{{.PodCIDR}}"}]]}}]}"#;

/// What one command did.
pub(crate) struct Done {
    pub(crate) ok: bool,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Run `prog args` under `timeout` (5 s, then KILL), feeding `stdin`.
pub(crate) fn run(prog: &str, args: &[&str], stdin: &str) -> Done {
    let child = Command::new("timeout")
        .args(["-k", "1", "5", prog])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Done {
                ok: false,
                stdout: String::new(),
                stderr: format!("{prog}: {e}"),
            };
        }
    };
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.as_bytes());
    }
    match child.wait_with_output() {
        Ok(o) => Done {
            ok: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        },
        Err(e) => Done {
            ok: false,
            stdout: String::new(),
            stderr: format!("{prog}: {e}"),
        },
    }
}

/// Run a command that must succeed; its stdout.
pub(crate) fn must(prog: &str, args: &[&str]) -> String {
    must_in(prog, args, "")
}

fn must_in(prog: &str, args: &[&str], stdin: &str) -> String {
    let d = run(prog, args, stdin);
    assert!(
        d.ok,
        "{prog} {} failed: {}\n{stdin}",
        args.join(" "),
        d.stderr.trim()
    );
    d.stdout
}

/// The kernel's lines, without the trailing spaces iproute2 prints.
fn trimmed(s: &str) -> Vec<String> {
    s.lines().map(|l| l.trim_end().to_string()).collect()
}

/// Network namespaces that are deleted when the guard goes (also on a panic).
#[derive(Default)]
pub(crate) struct Namespaces(Vec<String>);

impl Namespaces {
    fn add(&mut self, name: &str) -> Result<(), String> {
        let d = run("ip", &["netns", "add", name], "");
        if !d.ok {
            return Err(format!("ip netns add {name}: {}", d.stderr.trim()));
        }
        self.0.push(name.to_string());
        Ok(())
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in self.0.iter().rev() {
            let _ = run("ip", &["netns", "del", n], "");
        }
    }
}

/// Why the test cannot run here, if it cannot.
pub(crate) fn missing_prerequisite() -> Option<String> {
    oracle::missing(
        true,
        &[
            "ip",
            "bridge",
            "iptables",
            "iptables-restore",
            "sysctl",
            "ping",
            "timeout",
        ],
        &[],
    )
}

/// Can this kernel make a VXLAN device (CONFIG_VXLAN)? Tried in a scratch namespace.
pub(crate) fn kernel_lacks_vxlan(prefix: &str) -> Option<String> {
    let mut guard = Namespaces::default();
    let ns = format!("{prefix}-probe");
    if let Err(e) = guard.add(&ns) {
        return Some(e);
    }
    let d = run(
        "ip",
        &[
            "-n", &ns, "link", "add", "vx0", "type", "vxlan", "id", "1", "dstport", "8472",
        ],
        "",
    );
    (!d.ok).then(|| format!("the kernel cannot make a vxlan device: {}", d.stderr.trim()))
}

/// The flavours of the lab the test drives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    HostGw,
    Vxlan,
}

/// The lab: two pods, web on node-1 and db on node-2, through the public API.
fn lab_with_two_pods(backend: Backend, ip_masq: bool, tag: &str) -> Lab {
    let mut lab = crate::common::lab();
    let mut lines: Vec<String> = Vec::new();
    if backend == Backend::Vxlan {
        lines.push("network use flannel-vxlan".into());
    }
    let dir = std::env::temp_dir().join(format!("lab-dp-{}-{tag}", std::process::id()));
    if ip_masq {
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("00-masq.conflist");
        std::fs::write(&file, MASQ_CONFLIST).expect("conflist");
        for node in ["node-1", "node-2"] {
            lines.push(format!("cni conf load {} --node {node}", file.display()));
        }
    }
    lines.push("pod create web --node node-1".into());
    lines.push("pod create db --node node-2".into());
    for line in &lines {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message));
    }
    let _ = std::fs::remove_dir_all(&dir);
    lab
}

pub(crate) fn text(lab: &mut Lab, line: &str) -> String {
    match lab.execute(line) {
        Ok(out) => out.to_text(),
        Err(e) => panic!("{line}: {}", e.message),
    }
}

/// The real namespaces mirroring the lab's nodes and pods.
pub(crate) struct Real {
    pub(crate) guard: Namespaces,
    /// node name → its namespace.
    pub(crate) node_ns: BTreeMap<String, String>,
    /// (node, lab netns path) → the pod's namespace.
    pod_ns: BTreeMap<(String, String), String>,
    /// pod name → (node, lab netns path).
    pub(crate) pods: BTreeMap<String, (String, String)>,
}

impl Real {
    pub(crate) fn pod(&self, name: &str) -> &str {
        &self.pod_ns[&self.pods[name]]
    }
}

/// Build the lab's state in real namespaces named `<prefix>-…`.
pub(crate) fn mirror(lab: &Lab, prefix: &str) -> Result<Real, String> {
    let mut real = Real {
        guard: Namespaces::default(),
        node_ns: BTreeMap::new(),
        pod_ns: BTreeMap::new(),
        pods: BTreeMap::new(),
    };
    // The segment the nodes' eth0s share (host-gw needs L2 adjacency, §5).
    let wire = format!("{prefix}-wire");
    real.guard.add(&wire)?;
    must(
        "ip",
        &["-n", &wire, "link", "add", "wire", "type", "bridge"],
    );
    must("ip", &["-n", &wire, "link", "set", "wire", "up"]);
    for (i, (node, rt)) in lab.nodes().iter().enumerate() {
        let ns = format!("{prefix}-n{}", i + 1);
        real.guard.add(&ns)?;
        real.node_ns.insert(node.clone(), ns);
        for (key, sb) in &rt.sandboxes {
            let pod = key.name().to_string();
            let pns = format!("{prefix}-{pod}");
            real.guard.add(&pns)?;
            real.pod_ns
                .insert((node.clone(), sb.netns().to_string()), pns.clone());
            real.pods
                .insert(pod, (node.clone(), sb.netns().to_string()));
        }
    }
    for (i, (node, rt)) in lab.nodes().iter().enumerate() {
        let ns = real.node_ns[node].clone();
        let host = &rt.host;
        // The uplink first (a VXLAN device names it as its `dev`).
        if host.root.links.get("eth0").is_some() {
            let port = format!("p{}", i + 1);
            must(
                "ip",
                &[
                    "-n", &wire, "link", "add", &port, "type", "veth", "peer", "name", "eth0",
                    "netns", &ns,
                ],
            );
            must(
                "ip",
                &["-n", &wire, "link", "set", &port, "master", "wire", "up"],
            );
        }
        mirror_links(&real, node, &ns, &host.root, true)?;
        for (path, pns) in real
            .pod_ns
            .iter()
            .filter(|((n, _), _)| n == node)
            .map(|((_, p), v)| (p.clone(), v.clone()))
        {
            let lab_ns = &host.netns[&path];
            mirror_links(&real, node, &pns, lab_ns, false)?;
            add_routes(&pns, lab_ns.route_table());
        }
        add_routes(&ns, host.route_table());
        // §4: per peer the permanent neighbour, the FDB entry; the onlink route is above.
        for n in host.neighbours() {
            let state = n.state.to_lowercase();
            must(
                "ip",
                &[
                    "-n", &ns, "neigh", "add", &n.ip, "lladdr", &n.lladdr, "dev", &n.dev, "nud",
                    &state,
                ],
            );
        }
        for f in host.fdb_entries() {
            let mut args = vec![
                "-n",
                ns.as_str(),
                "fdb",
                "append",
                f.mac.as_str(),
                "dev",
                f.dev.as_str(),
            ];
            if let Some(d) = f.dst.as_deref() {
                args.extend(["dst", d]);
            }
            args.extend(f.flags.split_whitespace());
            must("bridge", &args);
        }
        let mut sysctls = host.sysctls.clone();
        // The bridge plugin (isGateway) sets it; a node that forwards needs it either way.
        sysctls.get_or_insert_with("net.ipv4.ip_forward".into(), || "1".into());
        for (k, v) in &sysctls {
            must(
                "ip",
                &["netns", "exec", &ns, "sysctl", "-qw", &format!("{k}={v}")],
            );
        }
        // Felix's rules test ipsets: the sets first (`ipset restore` takes `ipset save`).
        let sets = host.ipsets.to_save_lines();
        if !sets.is_empty() {
            must_in(
                "ip",
                &["netns", "exec", &ns, "ipset", "restore"],
                &(sets.join("\n") + "\n"),
            );
        }
        let mut restore = String::new();
        for t in [&host.netfilter.ip4.nat, &host.netfilter.ip4.filter] {
            for l in t.to_restore_lines() {
                restore.push_str(&l);
                restore.push('\n');
            }
        }
        must_in("ip", &["netns", "exec", &ns, "iptables-restore"], &restore);
    }
    Ok(real)
}

/// Create and configure the links of one lab namespace in `ns`. A veth is created from
/// its host end (`peer_netns` set), with the pod end placed in the pod's namespace.
fn mirror_links(
    real: &Real,
    node: &str,
    ns: &str,
    lab_ns: &LabNetns,
    is_host: bool,
) -> Result<(), String> {
    let mut links: Vec<_> = lab_ns.links.values().collect();
    // A VXLAN device needs its underlay device: create it last.
    links.sort_by_key(|l| matches!(l.kind, LinkKind::Vxlan(_)));
    for l in &links {
        match &l.kind {
            LinkKind::Loopback => {}
            LinkKind::Macvlan(_) | LinkKind::Ipvlan(_) | LinkKind::SriovVf(_) => {
                return Err(format!(
                    "{}: the scenarios here make no underlay links (the underlay differential covers them)",
                    l.name
                ));
            }
            LinkKind::Physical => {
                if !is_host {
                    return Err(format!("a physical link {} in a pod", l.name));
                }
            }
            LinkKind::Bridge => {
                must("ip", &["-n", ns, "link", "add", &l.name, "type", "bridge"]);
            }
            LinkKind::Ifb => {
                must("ip", &["-n", ns, "link", "add", &l.name, "type", "ifb"]);
            }
            LinkKind::Veth { peer, peer_netns } => {
                let peer_netns = peer_netns.as_deref().unwrap_or_default();
                if peer_netns.is_empty() && !is_host {
                    continue; // made with its host end
                }
                let Some(pns) = real.pod_ns.get(&(node.to_string(), peer_netns.to_string())) else {
                    return Err(format!(
                        "{}'s peer namespace {peer_netns} is unknown",
                        l.name
                    ));
                };
                must(
                    "ip",
                    &[
                        "-n", ns, "link", "add", &l.name, "type", "veth", "peer", "name", peer,
                        "netns", pns,
                    ],
                );
            }
            LinkKind::Vxlan(vxlan) => {
                let (vni, port) = (vxlan.vni.to_string(), vxlan.port.to_string());
                let mut args = vec![
                    "-n",
                    ns,
                    "link",
                    "add",
                    l.name.as_str(),
                    "type",
                    "vxlan",
                    "id",
                    vni.as_str(),
                    "local",
                    vxlan.local.as_str(),
                    "dev",
                    vxlan.dev.as_str(),
                    "dstport",
                    port.as_str(),
                ];
                if !vxlan.learning {
                    args.push("nolearning");
                }
                must("ip", &args);
            }
        }
    }
    for l in &links {
        let mtu = l.mtu.to_string();
        let mac = l.mac.to_string();
        if l.kind != LinkKind::Loopback {
            must(
                "ip",
                &[
                    "-n", ns, "link", "set", "dev", &l.name, "address", &mac, "mtu", &mtu,
                ],
            );
        }
        if let Some(m) = &l.master {
            must(
                "ip",
                &["-n", ns, "link", "set", "dev", &l.name, "master", m],
            );
        }
        if l.hairpin() {
            must(
                "ip",
                &[
                    "-n",
                    ns,
                    "link",
                    "set",
                    "dev",
                    &l.name,
                    "type",
                    "bridge_slave",
                    "hairpin",
                    "on",
                ],
            );
        }
        if l.promisc() {
            must(
                "ip",
                &["-n", ns, "link", "set", "dev", &l.name, "promisc", "on"],
            );
        }
        for a in &l.addrs {
            // netlink.AddrAdd (the plugins') sets an IPv4 address's broadcast when the
            // prefix is shorter than /31; `ip addr add` sets none unless asked (`brd +`).
            let brd = a.addr().is_ipv4() && a.prefix_len() < 31 && l.kind != LinkKind::Loopback;
            let a = a.to_string();
            let mut args = vec!["-n", ns, "addr", "add", a.as_str()];
            if brd {
                args.extend(["brd", "+"]);
            }
            args.extend(["dev", l.name.as_str()]);
            must("ip", &args);
        }
    }
    for l in &links {
        if l.up {
            must("ip", &["-n", ns, "link", "set", "dev", &l.name, "up"]);
        }
    }
    Ok(())
}

/// Add the routes the lab holds that the kernel does not derive from an address: each
/// one's `ip route` line as the lab prints it is `ip route add`'s argument list
/// (`blackhole … proto bird`, `… via … dev eth0 proto bird`, `… onlink`, `… mtu 1450`).
/// Routes through a gateway come last: the gateway must be reachable when they are added
/// (Calico's `default via 169.254.1.1` needs `169.254.1.1 dev eth0 scope link` first).
fn add_routes(ns: &str, mut table: Vec<RouteEntry>) {
    table.retain(|r| !r.proto_kernel);
    table.sort_by_key(|r| r.via.is_some() && !r.onlink);
    for r in &table {
        let line = r.to_ip_route();
        let mut args = vec!["-n", ns, "route", "add"];
        args.extend(line.split_whitespace());
        must("ip", &args);
    }
}

/// `show routes NODE`: the host's lines, and each pod's (by pod name).
fn lab_routes(out: &str) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
    let mut host = Vec::new();
    let mut pods: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut pod: Option<String> = None;
    for l in out.lines().skip(1) {
        if let Some(rest) = l.strip_prefix("  pod ") {
            let key = rest.split_whitespace().next().unwrap_or("");
            pod = Some(key.rsplit('/').next().unwrap_or(key).to_string());
        } else if let Some(r) = l.strip_prefix("    ") {
            let p = pod.clone().expect("a pod route line under a pod header");
            pods.entry(p).or_default().push(r.to_string());
        } else if let Some(r) = l.strip_prefix("  ") {
            host.push(r.to_string());
        }
    }
    (host, pods)
}

/// The entry lines of `show neigh` / `show fdb` (not the "(no entries …)" note).
fn lab_entries(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with('('))
        .map(str::to_string)
        .collect()
}

/// A trace's hop texts and its result line.
fn lab_trace(out: &str) -> (Vec<String>, String) {
    let lines: Vec<&str> = out.lines().collect();
    let hops = lines[1..lines.len() - 1]
        .iter()
        .filter_map(|l| l.trim_start().split_once("  ").map(|(_, t)| t.to_string()))
        .collect();
    (hops, lines[lines.len() - 1].to_string())
}

/// The word after `key` in a line (`via X`, `dev X`).
pub(crate) fn word_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut it = line.split_whitespace();
    it.find(|w| *w == key)?;
    it.next()
}

/// The packets counted by a chain's rules (`iptables -L CHAIN -v -x -n`), by source.
pub(crate) fn counters(ns: &str, table: &str, chain: &str) -> Vec<(String, u64)> {
    let out = must(
        "ip",
        &[
            "netns", "exec", ns, "iptables", "-t", table, "-L", chain, "-v", "-x", "-n",
        ],
    );
    out.lines()
        .skip(2)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.get(7)?.to_string(), w.first()?.parse().ok()?))
        })
        .collect()
}

fn forward_packets(ns: &str) -> u64 {
    counters(ns, "filter", "FORWARD").iter().map(|c| c.1).sum()
}

/// One ping from a namespace: (received a reply, its output).
pub(crate) fn ping(ns: &str, size: u32, dst: &str) -> (bool, String) {
    let size = size.to_string();
    let d = run(
        "ip",
        &[
            "netns", "exec", ns, "ping", "-n", "-c1", "-W1", "-M", "do", "-s", &size, dst,
        ],
        "",
    );
    (d.ok, format!("{}{}", d.stdout, d.stderr))
}

/// Compare the state views of every node, line for line.
pub(crate) fn compare_state(lab: &mut Lab, real: &Real, backend: Backend) {
    let nodes: Vec<String> = lab.nodes().keys().cloned().collect();
    for node in &nodes {
        let ns = &real.node_ns[node];
        // §4, §5: the routes flanneld and the bridge made.
        let (host, pods) = lab_routes(&text(lab, &format!("show routes {node}")));
        let kernel = trimmed(&must("ip", &["-n", ns, "route"]));
        assert_eq!(
            kernel, host,
            "ip route on {node}: the kernel (left) and the lab (right) differ"
        );
        for (pod, lines) in &pods {
            let kernel = trimmed(&must("ip", &["-n", real.pod(pod), "route"]));
            assert_eq!(
                &kernel, lines,
                "ip route in pod {pod}: the kernel (left) and the lab (right) differ"
            );
        }
        // §4: the permanent neighbours.
        let lab_neigh = lab_entries(&text(lab, &format!("show neigh {node}")));
        let kernel: Vec<String> = trimmed(&must("ip", &["-n", ns, "neigh", "show"]))
            .into_iter()
            .filter(|l| l.ends_with(" PERMANENT"))
            .collect();
        assert_eq!(
            kernel, lab_neigh,
            "ip neigh show on {node}: the kernel (left) and the lab (right) differ"
        );
        // §4: the FDB entries that send a VTEP MAC to a node.
        let lab_fdb = lab_entries(&text(lab, &format!("show fdb {node}")));
        let kernel: Vec<String> = trimmed(&must("bridge", &["-n", ns, "fdb", "show"]))
            .into_iter()
            .filter(|l| l.contains(" dst "))
            .collect();
        assert_eq!(
            kernel, lab_fdb,
            "bridge fdb show on {node}: the kernel (left) and the lab (right) differ"
        );
        assert_eq!(
            backend == Backend::Vxlan,
            !lab_neigh.is_empty() && !lab_fdb.is_empty(),
            "{node}: VXLAN, and only VXLAN, has a neighbour and an FDB entry per peer"
        );
        let devs: std::collections::BTreeSet<&str> = lab_fdb
            .iter()
            .filter_map(|l| word_after(l, "dev"))
            .collect();
        for dev in devs {
            let kernel: Vec<String> =
                trimmed(&must("bridge", &["-n", ns, "fdb", "show", "dev", dev]))
                    .into_iter()
                    .filter(|l| l.contains(" dst "))
                    .collect();
            let lab_dev: Vec<String> = lab_fdb
                .iter()
                .filter(|l| word_after(l, "dev") == Some(dev))
                .map(|l| l.replacen(&format!(" dev {dev}"), "", 1))
                .collect();
            assert_eq!(
                kernel, lab_dev,
                "bridge fdb show dev {dev} on {node}: the kernel (left) and the lab (right) differ"
            );
        }
        compare_links(lab, real, node);
        // §3, §6.4: the nat and filter tables.
        for table in ["nat", "filter"] {
            let lab_lines =
                lab_entries(&text(lab, &format!("show iptables {node} --table {table}")));
            let kernel = trimmed(&must(
                "ip",
                &["netns", "exec", ns, "iptables", "-t", table, "-S"],
            ));
            assert_eq!(
                kernel, lab_lines,
                "iptables -t {table} -S on {node}: the kernel (left) and the lab (right) differ"
            );
        }
    }
}

/// `ip -d addr`'s devices: each device's lines by its name (without `@peer`), the device
/// line without its index and `@peer` (indexes follow creation, which the mirror does in
/// its own order), every line trimmed.
fn devices(lines: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for l in lines {
        let head = l
            .split_once(": ")
            .filter(|(i, _)| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
        if let Some((_, rest)) = head {
            let (name, tail) = rest.split_once(": ").expect("NAME: FLAGS");
            let name = name.split('@').next().unwrap_or(name).to_string();
            out.insert(name.clone(), vec![format!("{name}: {tail}")]);
            current = Some(name);
        } else if let Some(c) = &current {
            out.get_mut(c)
                .expect("the device")
                .push(l.trim_end().to_string());
        }
    }
    out
}

/// `text` with each `link-netns NAME` replaced by `with`.
fn rename_netns(text: &str, name: &str, with: &str) -> String {
    let from = format!("link-netns {name}");
    text.lines()
        .map(|l| {
            let words: Vec<&str> = l.split(' ').collect();
            match words
                .windows(2)
                .position(|w| w[0] == "link-netns" && w[1] == name)
            {
                Some(i) => {
                    let mut out: Vec<&str> = words[..i].to_vec();
                    out.push(with);
                    out.extend(&words[i + 2..]);
                    out.join(" ")
                }
                None => l.to_string(),
            }
        })
        .inspect(|l| debug_assert!(!l.contains(&from)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lab's `show links` lines (after its header, without the view's indent).
fn lab_links(out: &str) -> Vec<String> {
    out.lines()
        .skip(1)
        .filter_map(|l| l.strip_prefix("  "))
        .map(str::to_string)
        .collect()
}

/// `show links NODE` and `show links NODE --pod POD` against `ip -d addr` in the mirror:
/// every device the lab shows (not the node's eth0, a veth to the wire in the mirror), its
/// device line equal (flags, mtu, qdisc, master, state, group, qlen), and each other line
/// equal or the kernel's with words added at the end: `-d`'s fields the lab leaves out
/// (promiscuity, queue counts, a bridge's and a port's settings past those it models, the
/// DAD flag `tentative` of a fresh address). The mirror's namespaces have names of their
/// own: a host veth's `link-netns` names the lab's `cni-…`, and a pod's peer namespace (a
/// real node's unnamed root namespace) is `link-netnsid 0`.
fn compare_links(lab: &mut Lab, real: &Real, node: &str) {
    let ns = &real.node_ns[node];
    let mut kernel_host = trimmed(&must("ip", &["-n", ns, "-d", "addr"])).join("\n");
    let mut views = Vec::new();
    for ((n, path), pns) in &real.pod_ns {
        if n != node {
            continue;
        }
        let lab_name = path.rsplit('/').next().unwrap_or(path);
        kernel_host = rename_netns(&kernel_host, pns, &format!("link-netns {lab_name}"));
        let pod = real
            .pods
            .iter()
            .find(|(_, v)| v.0 == *node && v.1 == *path)
            .map(|(k, _)| k.clone())
            .expect("the pod of a namespace");
        let kernel = rename_netns(
            &trimmed(&must("ip", &["-n", pns, "-d", "addr"])).join("\n"),
            ns,
            "link-netnsid 0",
        );
        views.push((
            format!("pod {pod}"),
            kernel,
            text(lab, &format!("show links {node} --pod {pod}")),
        ));
    }
    views.push((
        format!("{node} (host)"),
        kernel_host,
        text(lab, &format!("show links {node}")),
    ));
    for (who, kernel, lab_out) in views {
        let kernel = devices(&kernel.lines().map(str::to_string).collect::<Vec<_>>());
        let lab_devs = devices(&lab_links(&lab_out));
        for (name, lines) in &lab_devs {
            if name == "eth0" && !who.starts_with("pod ") {
                continue;
            }
            let k = kernel
                .get(name)
                .unwrap_or_else(|| panic!("{who}: the kernel has no {name}:\n{kernel:?}"));
            assert_eq!(
                k.len(),
                lines.len(),
                "ip -d addr, {who}, {name}: the kernel (left) and the lab (right) differ:\n{k:#?}\n{lines:#?}"
            );
            assert_eq!(
                k[0], lines[0],
                "ip -d addr, {who}: the device line: the kernel (left) and the lab (right) differ"
            );
            for (kl, ll) in k.iter().zip(lines).skip(1) {
                assert!(
                    kl == ll || kl.starts_with(&format!("{ll} ")),
                    "ip -d addr, {who}, {name}: the kernel's\n{kl:?}\nis not the lab's\n{ll:?}\nwith fields added at its end"
                );
            }
        }
    }
}

/// The addresses of the lab's pods and of node-1.
struct Addrs {
    web: String,
    db: String,
    /// The bridge web is a port of, and its address.
    bridge: (String, String),
    /// Every address of node-1's host namespace (MASQUERADE candidates).
    node1: Vec<String>,
}

fn addrs(lab: &Lab) -> Addrs {
    let ip = |node: &str, key: &str| lab.nodes()[node].sandboxes[key].ip().to_string();
    let (web, db) = (ip("node-1", "default/web"), ip("node-2", "default/db"));
    let strip = |a: &str| a.split('/').next().unwrap_or(a).to_string();
    let host: &Host = &lab.nodes()["node-1"].host;
    let sb = &lab.nodes()["node-1"].sandboxes["default/web"];
    let peer = host.netns[sb.netns()]
        .links
        .values()
        .find_map(|l| match &l.kind {
            LinkKind::Veth { peer, .. } => Some(peer.clone()),
            _ => None,
        })
        .expect("web's veth");
    let br = host.root.links[peer.as_str()]
        .master
        .as_deref()
        .map(str::to_string)
        .expect("a bridge port");
    let br_addr = host.root.links[&br].addrs[0].addr().to_string();
    let node1 = host
        .root
        .links
        .values()
        .filter(|l| l.kind != LinkKind::Loopback)
        .flat_map(|l| l.addrs.iter().map(|a| a.addr().to_string()))
        .collect();
    Addrs {
        web: strip(&web),
        db: strip(&db),
        bridge: (br, br_addr),
        node1,
    }
}

/// node-1's routing decision for web → db, kernel against lab (§6.1).
fn compare_route_get(lab: &mut Lab, real: &Real, a: &Addrs) {
    let (hops, _) = lab_trace(&text(lab, "trace web db"));
    let lab_route = hops
        .iter()
        .find_map(|h| h.strip_prefix("route on node-1: "))
        .expect("the trace routes on node-1")
        .to_string();
    let kernel = must(
        "ip",
        &[
            "-n",
            &real.node_ns["node-1"],
            "route",
            "get",
            &a.db,
            "from",
            &a.web,
            "iif",
            &a.bridge.0,
        ],
    );
    let first = kernel.lines().next().unwrap_or("");
    for key in ["via", "dev"] {
        assert_eq!(
            word_after(first, key),
            word_after(&lab_route, key),
            "`{key}` of node-1's route to db: the kernel said {first:?}, the lab {lab_route:?}"
        );
    }
}

/// The source db sees, kernel (INPUT counters per candidate) against the lab's trace.
fn compare_source_on_arrival(lab: &mut Lab, real: &Real, a: &Addrs) {
    let db = real.pod("db");
    let mut candidates = vec![a.web.clone()];
    candidates.extend(a.node1.iter().cloned());
    for c in &candidates {
        must(
            "ip",
            &[
                "netns", "exec", db, "iptables", "-A", "INPUT", "-s", c, "-j", "ACCEPT",
            ],
        );
    }
    let (ok, out) = ping(real.pod("web"), 56, &a.db);
    assert!(ok, "web cannot ping db:\n{out}");
    let seen: Vec<String> = counters(db, "filter", "INPUT")
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, _)| s)
        .collect();
    let (hops, result) = lab_trace(&text(lab, "trace web db"));
    assert!(result.starts_with("delivered"), "{result}");
    let last = hops.last().expect("hops");
    let lab_src = match last.split_once(" (from ") {
        Some((_, rest)) => rest.split([',', ')']).next().unwrap_or("").to_string(),
        None => a.web.clone(),
    };
    assert_eq!(
        seen,
        std::slice::from_ref(&lab_src),
        "the source db sees: the kernel counted {seen:?}, the lab's trace delivers from {lab_src}"
    );
}

/// `ping -M do -s N` against `trace --size N+28` (§7), and whether node-1 forwarded it.
fn compare_verdicts(lab: &mut Lab, real: &Real, a: &Addrs, sizes: &[u32]) {
    let (web, n1) = (real.pod("web"), &real.node_ns["node-1"]);
    for &n in sizes {
        let before = forward_packets(n1);
        let (delivered, out) = ping(web, n, &a.db);
        let forwarded = forward_packets(n1) > before;
        let trace = text(lab, &format!("trace web db --size {}", n + 28));
        let (hops, result) = lab_trace(&trace);
        assert_eq!(
            delivered,
            result.starts_with("delivered"),
            "ping -s {n}: the kernel said\n{out}\nthe lab\n{trace}"
        );
        // The kernel checks the MTU in ip_forward before the FORWARD hook: a packet
        // that gets "fragmentation needed" never reaches FORWARD.
        let route_at = hops.iter().position(|h| h.starts_with("route on node-1:"));
        let lab_forwarded = route_at.is_some_and(|i| i + 1 < hops.len());
        assert_eq!(
            forwarded,
            lab_forwarded,
            "ping -s {n}: node-1's FORWARD {} the packet, but the lab's trace says otherwise:\n{trace}",
            if forwarded { "saw" } else { "never saw" }
        );
        assert!(
            delivered
                || out.contains("message too long, mtu=")
                || out.contains("Frag needed and DF set (mtu = "),
            "ping -s {n} failed for a reason the test does not compare:\n{out}"
        );
        if let Some(i) = out.find("message too long, mtu=") {
            let what: String = out[i..].chars().take_while(|c| *c != '\n').collect();
            assert!(
                result.contains(what.trim_end()),
                "ping -s {n}: the kernel said {what:?}, the lab {result:?}"
            );
        }
        if let Some(i) = out.find("Frag needed and DF set (mtu = ") {
            let mtu: String = out[i + 30..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let from = word_after(&out, "From").unwrap_or("");
            assert!(
                result.contains(&format!("fragmentation needed (mtu = {mtu})")),
                "ping -s {n}: the kernel said {out:?}, the lab {result:?}"
            );
            assert_eq!(
                from, a.bridge.1,
                "ping -s {n}: the ICMP error comes from {from}, not the lab's {} address",
                a.bridge.0
            );
        }
    }
}

fn scenario(backend: Backend, ip_masq: bool, tag: &str, sizes: &[u32]) {
    let test = format!("the data plane differential test ({tag})");
    if !oracle::run_or_skip(&test, missing_prerequisite()) {
        return;
    }
    let prefix = format!("lab-dp-{}-{tag}", std::process::id());
    if backend == Backend::Vxlan && !oracle::run_or_skip(&test, kernel_lacks_vxlan(&prefix)) {
        return;
    }
    let mut lab = lab_with_two_pods(backend, ip_masq, tag);
    let real = match mirror(&lab, &prefix) {
        Ok(r) => r,
        Err(e) => panic!("building the lab's state in the kernel: {e}"),
    };
    let a = addrs(&lab);
    compare_state(&mut lab, &real, backend);
    compare_route_get(&mut lab, &real, &a);
    compare_source_on_arrival(&mut lab, &real, &a);
    compare_verdicts(&mut lab, &real, &a, sizes);
    drop(real.guard);
}

/// host-gw (§5): eth0 is 1500 everywhere; 1472 + 28 fits, 1473 + 28 is the pod's own
/// "message too long, mtu=1500".
#[test]
fn host_gw_the_kernel_agrees_with_the_lab() {
    scenario(Backend::HostGw, false, "hostgw", &[56, 1472, 1473]);
}

/// VXLAN (§4, §7): flannel.1 is 1450 and the pods' eth0 1500, so 1422 + 28 fits and
/// 1472 + 28 gets node-1's "Frag needed" from the bridge's address.
#[test]
fn vxlan_the_kernel_agrees_with_the_lab() {
    scenario(Backend::Vxlan, false, "vxlan", &[56, 1422, 1472]);
}

/// A bridge with ipMasq (§6.4) over host-gw: db sees node-1's eth0 address.
#[test]
fn host_gw_with_bridge_ip_masq_the_kernel_agrees_with_the_lab() {
    scenario(Backend::HostGw, true, "hgmasq", &[56]);
}

/// A bridge with ipMasq over VXLAN: MASQUERADE takes flannel.1's address.
#[test]
fn vxlan_with_bridge_ip_masq_the_kernel_agrees_with_the_lab() {
    scenario(Backend::Vxlan, true, "vxmasq", &[56]);
}
