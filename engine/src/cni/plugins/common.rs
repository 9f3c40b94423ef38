//! Helpers the modelled plugins share: the hash-derived names of `pkg/utils/utils.go`, the
//! errors of `pkg/ns`, Go-style typed reads of the JSON config, CNI_ARGS parsing, and
//! iptables rules rendered the way `iptables -t nat -S` prints them.

use crate::cni::host::{Host, RouteDst, RouteEntry};
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, Crash, GoIp, IfIndex, Route};
use ipnet::IpNet;
use serde_json::Value;
use sha2::{Digest, Sha512};

/// `maxChainLength` of `pkg/utils/utils.go`: iptables chain names are at most 28 chars.
pub(crate) const MAX_CHAIN_LENGTH: usize = 28;

/// Append the first `digits` lowercase hex digits of `bytes`.
fn push_hex(out: &mut String, bytes: &[u8], digits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in bytes.iter().enumerate() {
        if 2 * i >= digits {
            break;
        }
        out.push(HEX[usize::from(b >> 4)] as char);
        if 2 * i + 1 < digits {
            out.push(HEX[usize::from(b & 0x0f)] as char);
        }
    }
}

/// `utils.MustFormatHashWithPrefix(length, prefix, toHash)`: `prefix` + the first
/// `length - len(prefix)` hex digits of sha512(toHash).
pub(crate) fn hash_with_prefix(length: usize, prefix: &str, to_hash: &str) -> String {
    // A pure function called on every ADD and DEL with the same few inputs: memoized per
    // thread (bounded), which changes nothing but the time it takes.
    thread_local! {
        static MEMO: std::cell::RefCell<std::collections::HashMap<(usize, String, String), String>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = (length, prefix.to_string(), to_hash.to_string());
    if let Some(v) = MEMO.with(|m| m.borrow().get(&key).cloned()) {
        return v;
    }
    let v = hash_with_prefix_uncached(length, prefix, to_hash);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 4096 {
            m.clear();
        }
        m.insert(key, v.clone());
    });
    v
}

fn hash_with_prefix_uncached(length: usize, prefix: &str, to_hash: &str) -> String {
    let digest = Sha512::digest(to_hash.as_bytes());
    let n = length.saturating_sub(prefix.len()).min(digest.len() * 2);
    let mut out = String::with_capacity(prefix.len() + n);
    out.push_str(prefix);
    push_hex(&mut out, &digest, n);
    out
}

/// `utils.FormatChainName(name, id)`: `CNI-` + 24 hex digits of sha512(name + id).
pub(crate) fn format_chain_name(name: &str, id: &str) -> String {
    format_chain_name_with_prefix(name, id, "")
}

/// `utils.MustFormatChainNameWithPrefix(name, id, prefix)`: `CNI-` + prefix + hex digits of
/// sha512(name + id), 28 chars in all (`CNI-DN-` + 21 hex for portmap).
pub(crate) fn format_chain_name_with_prefix(name: &str, id: &str, prefix: &str) -> String {
    hash_with_prefix(
        MAX_CHAIN_LENGTH,
        &format!("CNI-{prefix}"),
        &format!("{name}{id}"),
    )
}

/// Go's `%q` of a string (enough for names and IDs: quotes and backslashes escaped).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    if !s.contains(['"', '\\', '\n', '\t', '\r']) {
        out.push_str(s);
        out.push('"');
        return out;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `utils.FormatComment(name, id)`: `name: "<net>" id: "<cid>"`.
pub(crate) fn format_comment(name: &str, id: &str) -> String {
    format!("name: {} id: {}", go_quote(name), go_quote(id))
}

/// The error `ns.GetNS` gives for a path that does not exist, wrapped the way bridge,
/// loopback and bandwidth wrap it: `failed to open netns "<p>": failed to Statfs "<p>": no
/// such file or directory` (checked against Debian's 1.1.1 bridge). Code 999.
pub(crate) fn netns_open_error(path: &str) -> CniError {
    CniError::internal(format!(
        "failed to open netns {}: {}",
        go_quote(path),
        statfs_missing(path)
    ))
}

/// `ns.NSPathNotExistErr`'s text for a missing path.
pub(crate) fn statfs_missing(path: &str) -> String {
    format!(
        "failed to Statfs {}: no such file or directory",
        go_quote(path)
    )
}

/// Whether the sandbox netns at `path` exists on the node.
pub(crate) fn netns_exists(host: &Host, path: &str) -> bool {
    !path.is_empty() && host.netns.contains_key(path)
}

/// The prevResult, or None.
pub fn prev_result(stdin: &crate::cni::plugin::Stdin) -> Option<CniResult> {
    stdin.prev_result.as_ref().map(|r| r.as_ref().clone())
}

/// Reads fields of the plugin config with the type checks of Go's `json.Unmarshal` into the
/// plugin's `NetConf` struct: a value of the wrong JSON type is an error
/// `json: cannot unmarshal <type> into Go struct field <Struct>.<key> of type <go type>`; a
/// missing key or `null` leaves the default.
pub(crate) struct GoConf<'a> {
    /// The config object.
    pub conf: &'a Value,
    /// The Go struct name used in type errors (`NetConf`, `PortMapConf`, `PluginConf`).
    pub struct_name: &'static str,
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl<'a> GoConf<'a> {
    /// A reader over `conf`.
    pub fn new(conf: &'a Value, struct_name: &'static str) -> Self {
        GoConf { conf, struct_name }
    }

    fn type_err(&self, path: &str, v: &Value, go_type: &str) -> String {
        let what = match v {
            Value::Number(n) => format!("number {n}"),
            other => json_type(other).to_string(),
        };
        format!(
            "json: cannot unmarshal {what} into Go struct field {}.{path} of type {go_type}",
            self.struct_name
        )
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        match self.conf.get(key) {
            Some(Value::Null) | None => None,
            Some(v) => Some(v),
        }
    }

    /// A `bool` field.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.type_err(key, v, "bool")),
        }
    }

    /// An `int` field (Go's int is 64-bit here).
    pub fn int(&self, key: &str) -> Result<Option<i64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v @ Value::Number(n)) => n
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.type_err(key, v, "int")),
            Some(v) => Err(self.type_err(key, v, "int")),
        }
    }

    /// A `uint64` field.
    pub(crate) fn uint(&self, key: &str) -> Result<Option<u64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v @ Value::Number(n)) => n
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.type_err(key, v, "uint64")),
            Some(v) => Err(self.type_err(key, v, "uint64")),
        }
    }

    /// A `string` field.
    pub fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.type_err(key, v, "string")),
        }
    }

    /// The `ipam.type` string (`types.NetConf.IPAM.Type`), "" when absent.
    pub(crate) fn ipam_type(&self) -> Result<String, String> {
        match self.get("ipam") {
            None => Ok(String::new()),
            Some(Value::Object(m)) => match m.get("type") {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(v) => Err(self.type_err("ipam.type", v, "string")),
            },
            Some(v) => Err(self.type_err("ipam", v, "types.IPAM")),
        }
    }
}

/// `types.LoadArgs` for the keys a plugin knows: parses `K=V;K2=V2`, returning the value of
/// each known key. Errors as the library words them: `ARGS: invalid pair "x"` and
/// `ARGS: unknown args ["A=1" "B=2"]` (unless `IgnoreUnknown` is 1/true), checked against
/// Debian's 1.1.1 macvlan and static.
pub(crate) fn load_args(args: &str, known: &[&str]) -> Result<Vec<(String, String)>, String> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    // One pass: the first invalid pair is the error whatever else the list holds (the
    // library checks every pair before it looks at a key); unknown pairs are kept as
    // written (`K=V`, the item itself) and reported only if `IgnoreUnknown` is not set.
    let mut ignore_unknown = false;
    let mut out = Vec::new();
    let mut any_unknown = false;
    let is_known = |k: &str| k == "IgnoreUnknown" || known.contains(&k);
    for (item, pair) in arg_items(args) {
        let Some((k, v)) = pair else {
            return Err(format!("ARGS: invalid pair {}", go_quote(item)));
        };
        if k == "IgnoreUnknown" {
            ignore_unknown |= v == "1" || v.eq_ignore_ascii_case("true");
        } else if known.contains(&k) {
            out.push((k.to_string(), v.to_string()));
        } else {
            any_unknown = true;
        }
    }
    if any_unknown && !ignore_unknown {
        // The library lists each unknown *pair* (`%q` of a []string); every pair is valid
        // here, so a second pass finds the same ones, listed only when they are an error.
        let quoted: Vec<String> = arg_items(args)
            .filter_map(|(item, pair)| pair.filter(|(k, _)| !is_known(k)).map(|_| item))
            .map(go_quote)
            .collect();
        return Err(format!("ARGS: unknown args [{}]", quoted.join(" ")));
    }
    Ok(out)
}

/// The items of `CNI_ARGS` split on `;` as Go's `strings.Split` does (an empty text is one
/// empty item), each with its key and value when it holds exactly one `=` (`None`: not a
/// pair). One scan for both separators ([`next_separator`]); both are
/// ASCII, so every split is on a char boundary.
pub(crate) fn arg_items(args: &str) -> impl Iterator<Item = (&str, Option<(&str, &str)>)> {
    let mut rest = Some(args);
    std::iter::from_fn(move || {
        let s = rest?;
        let b = s.as_bytes();
        let (mut eq, mut twice, mut at) = (None, false, 0);
        let end = loop {
            match next_separator(b, at) {
                Some(i) if b[i] == b';' => break i,
                Some(i) => {
                    twice |= eq.is_some();
                    eq = eq.or(Some(i));
                    at = i + 1;
                }
                None => break b.len(),
            }
        };
        let item = &s[..end];
        rest = s.get(end + 1..);
        match eq {
            Some(i) if !twice => Some((item, Some((&item[..i], &item[i + 1..])))),
            _ => Some((item, None)),
        }
    })
}

/// The index of the first `;` or `=` in `b` at or after `from` (`CNI_ARGS` is ~200 bytes a
/// pod, read twice a call: memchr searches for both a word at a time).
fn next_separator(b: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(b';', b'=', b.get(from..)?).map(|p| from + p)
}

/// Quote an iptables string argument the way `xtables_save_string` prints it: bare when it is
/// only `[A-Za-z0-9_-]`, otherwise in double quotes with `"`, `\` and `'` escaped.
pub(crate) fn ipt_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_ipt_quoted(&mut out, s);
    out
}

/// [`ipt_quote`], appended to `out`.
pub(crate) fn push_ipt_quoted(out: &mut String, s: &str) {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        out.push_str(s);
        return;
    }
    out.push('"');
    // Copy the runs between the characters that need a backslash (all ASCII, so every
    // split is on a char boundary).
    let mut rest = s;
    while let Some(i) = rest.find(['"', '\\', '\'']) {
        out.push_str(&rest[..i]);
        out.push('\\');
        out.push_str(&rest[i..=i]);
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

/// [`ipt_addr`], appended to `out`.
fn push_ipt_addr(out: &mut String, s: &str) {
    use std::fmt::Write;
    if let Ok(net) = s.parse::<ipnet::IpNet>() {
        let _ = write!(out, "{}", net.trunc());
        return;
    }
    let _ = match s.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => write!(out, "{a}/32"),
        Ok(std::net::IpAddr::V6(a)) => write!(out, "{a}/128"),
        Err(_) => {
            out.push_str(s);
            Ok(())
        }
    };
}

/// One iptables rule, kept in parts so it renders in the order `iptables -S` prints them:
/// `[!] -s`, `[!] -d`, `[!] -i`, `[!] -o`, `-p`, the matches in the order given, then `-j`
/// and its options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IptRule {
    /// `-s` (already in printed form).
    pub src: Option<String>,
    /// `! -s` instead of `-s`.
    pub src_negated: bool,
    /// `-d` (already in printed form).
    pub dst: Option<String>,
    /// `! -d` instead of `-d`.
    pub dst_negated: bool,
    /// `[!] -i IFACE`: the interface and whether it is negated.
    pub in_iface: Option<(bool, String)>,
    /// `[!] -o IFACE`.
    pub out_iface: Option<(bool, String)>,
    /// `-p` protocol.
    pub proto: Option<String>,
    /// Match modules, each already rendered (`-m comment --comment "…"`).
    pub matches: Vec<String>,
    /// `-j TARGET [options]`.
    pub target: String,
}

impl IptRule {
    /// A rule jumping to `target` (with its options).
    pub fn jump(target: &str) -> Self {
        IptRule {
            target: target.to_string(),
            ..Default::default()
        }
    }

    /// Add `-m comment --comment <c>`.
    pub fn comment(mut self, c: &str) -> Self {
        let mut m = String::with_capacity(c.len() + 24);
        m.push_str("-m comment --comment ");
        push_ipt_quoted(&mut m, c);
        self.matches.push(m);
        self
    }

    /// Add arguments a user gave as iptables words (portmap's `conditionsV4`/`V6`):
    /// `[!] -s/-d/-i/-o VALUE` take their places in the rule, as iptables parses them;
    /// the other words are matches, appended in the order given.
    pub fn conditions(&mut self, words: &[String]) {
        let mut rest: Vec<&str> = Vec::new();
        let mut negated = false;
        let mut words = words.iter();
        while let Some(w) = words.next() {
            let slot = match w.as_str() {
                "!" => {
                    negated = true;
                    continue;
                }
                "-s" | "--source" | "--src" => Some(0),
                "-d" | "--destination" | "--dst" => Some(1),
                "-i" | "--in-interface" => Some(2),
                "-o" | "--out-interface" => Some(3),
                _ => None,
            };
            match (slot, words.as_slice().first()) {
                (Some(slot), Some(value)) => {
                    words.next();
                    let value = value.clone();
                    match slot {
                        0 => (self.src, self.src_negated) = (Some(value), negated),
                        1 => (self.dst, self.dst_negated) = (Some(value), negated),
                        2 => self.in_iface = Some((negated, value)),
                        _ => self.out_iface = Some((negated, value)),
                    }
                }
                _ => {
                    if negated {
                        rest.push("!");
                    }
                    rest.push(w);
                }
            }
            negated = false;
        }
        if negated {
            rest.push("!");
        }
        if !rest.is_empty() {
            self.matches.push(rest.join(" "));
        }
    }

    /// The rule text after `-A CHAIN `.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(
            48 + self.target.len() + self.matches.iter().map(|m| m.len() + 1).sum::<usize>(),
        );
        let sep = |out: &mut String| {
            if !out.is_empty() {
                out.push(' ');
            }
        };
        if let Some(s) = &self.src {
            out.push_str(if self.src_negated { "! -s " } else { "-s " });
            push_ipt_addr(&mut out, s);
        }
        if let Some(d) = &self.dst {
            sep(&mut out);
            out.push_str(if self.dst_negated { "! -d " } else { "-d " });
            push_ipt_addr(&mut out, d);
        }
        for (flag, iface) in [("-i ", &self.in_iface), ("-o ", &self.out_iface)] {
            if let Some((negated, name)) = iface {
                sep(&mut out);
                if *negated {
                    out.push_str("! ");
                }
                out.push_str(flag);
                out.push_str(name);
            }
        }
        if let Some(p) = &self.proto {
            sep(&mut out);
            out.push_str("-p ");
            out.push_str(p);
        }
        for m in &self.matches {
            sep(&mut out);
            out.push_str(m);
        }
        sep(&mut out);
        out.push_str("-j ");
        out.push_str(&self.target);
        out
    }
}

/// A result interface's `sandbox` for the netns path a plugin was given: none when empty
/// (Go omits the empty string), else the path shared with the node's namespace table.
pub(crate) fn sandbox(host: &Host, netns: &str) -> Option<std::sync::Arc<str>> {
    if netns.is_empty() {
        return None;
    }
    Some(
        host.netns
            .path(netns)
            .cloned()
            .unwrap_or_else(|| netns.into()),
    )
}

/// `ip.NextIP(network)`: the first address after the network address of `addr`
/// (bridge's `calcGatewayIP`).
pub(crate) fn network_plus_one(addr: &ipnet::IpNet) -> std::net::IpAddr {
    match addr.trunc() {
        ipnet::IpNet::V4(n) => {
            std::net::Ipv4Addr::from(u32::from(n.network()).wrapping_add(1)).into()
        }
        ipnet::IpNet::V6(n) => {
            std::net::Ipv6Addr::from(u128::from(n.network()).wrapping_add(1)).into()
        }
    }
}

/// Go's `net.ParseMAC` for a 6-byte address (`aa:bb:cc:dd:ee:ff`, `aa-bb-…`,
/// `aabb.ccdd.eeff`: [`crate::cni::host::Mac`]'s `FromStr`). The error is Go's
/// `address <m>: invalid MAC address`.
pub(crate) fn parse_mac(m: &str) -> Result<crate::cni::host::Mac, String> {
    m.parse()
        .map_err(|_| format!("address {m}: invalid MAC address"))
}

/// The interface of the first default route (v4 or v6) of a namespace, as
/// `getDefaultRouteInterfaceName` finds it (macvlan, ipvlan).
pub(crate) fn default_route_iface(ns: &crate::cni::host::Netns) -> Option<String> {
    ns.route_table()
        .into_iter()
        .find(|r| r.dst.is_default() && !r.blackhole && !r.dev.is_empty())
        .map(|r| r.dev.to_string())
}

/// `ipam.ExecAdd`/`ExecDel`/`ExecCheck` (`pkg/ipam`): delegate to the IPAM plugin with the
/// command of `cmd` and the same stdin. An empty type is `invoke`'s `no plugin name provided`.
pub(crate) fn exec_ipam(
    ctx: &mut crate::cni::plugin::PluginCtx<'_>,
    ipam_type: &str,
    cmd: crate::cni::plugin::CniCommand,
    env: &crate::cni::plugin::CniEnv,
    stdin: &crate::cni::plugin::Stdin,
) -> Result<CniResult, CniError> {
    if ipam_type.is_empty() {
        return Err(CniError::internal("no plugin name provided"));
    }
    let mut e = env.clone();
    e.command = Some(cmd);
    match ctx.delegate(ipam_type, &e, stdin)? {
        crate::cni::plugin::PluginOutput::Result(r) => Ok(r.as_ref().clone()),
        _ => Ok(CniResult::default()),
    }
}

/// `ipam.ConfigureIface` (`pkg/ipam/ipam_linux.go`, HEAD): every `ips` entry whose
/// `interface` names `ifname` goes on the link, the link comes up, then each result route
/// is added on it; a route without `gw` goes via the first gateway of its family. A route
/// the table already holds is the kernel's `file exists`.
pub(crate) fn configure_iface(
    host: &mut Host,
    netns: &str,
    ifname: &str,
    result: &CniResult,
) -> Result<(), CniError> {
    use std::net::IpAddr;
    if result.interfaces.is_empty() {
        return Err(CniError::internal("no interfaces to configure"));
    }
    let Some(ns) = host.ns_mut(netns) else {
        return Err(netns_open_error(netns));
    };
    let Some(link) = ns.links.get_mut(ifname) else {
        return Err(CniError::internal(format!(
            "failed to lookup {}: Link not found",
            go_quote(ifname)
        )));
    };
    let (mut gw4, mut gw6): (Option<IpAddr>, Option<IpAddr>) = (None, None);
    for ip in &result.ips {
        let Some(idx) = ip.interface.map(IfIndex::get) else {
            continue;
        };
        if result.interfaces.get(idx).map(|i| i.name.as_str()) != Some(ifname) {
            return Err(CniError::internal(format!(
                "failed to add IP addr {} to {}: invalid interface index",
                go_ipconfig(ip),
                go_quote(ifname)
            )));
        }
        let addr = ip.address;
        if link.addrs.contains(&addr) {
            return Err(CniError::internal(format!(
                "failed to add IP addr {} to {}: file exists",
                go_ipconfig(ip),
                go_quote(ifname)
            )));
        }
        link.addrs.push(addr);
        if let Some(gw) = ip.gateway {
            let slot = if gw.is_ipv4() { &mut gw4 } else { &mut gw6 };
            if slot.is_none() {
                *slot = Some(gw);
            }
        }
    }
    link.up = true;
    for r in &result.routes {
        let Some(dst) = r.dst else {
            continue;
        };
        let via = match r.gw {
            Some(gw) => Some(gw),
            None if dst.addr().is_ipv4() => gw4,
            None => gw6,
        };
        let entry = RouteEntry::static_route(RouteDst::of_net(dst), via, ifname);
        // The kernel refuses a second route to the same prefix (same table and metric),
        // whatever its device: EEXIST.
        let clash = ns.route_table().iter().any(|e| e.dst == entry.dst);
        if clash {
            let via = GoIp(via);
            return Err(CniError::internal(format!(
                "failed to add route '{dst} via {via} dev {ifname} metric 0 (Scope: universe, Table: 0)': file exists"
            )));
        }
        ns.routes.push(entry);
    }
    Ok(())
}

/// Go's `%v` of a `*current.IPConfig` (`{Interface:0xc… Address:{IP:… Mask:…} Gateway:…}`
/// prints a pointer; the lab prints the address and gateway only).
fn go_ipconfig(ip: &crate::cni::types::IpConfig) -> String {
    format!("{{Address:{} Gateway:{}}}", ip.address, GoIp(ip.gateway))
}

/// Delete a link of a namespace with the routes through it (`ip.DelLinkByName`); its
/// addresses are returned. A veth takes its peer with it ([`Host::delete_link`]).
pub(crate) fn del_link(
    host: &mut Host,
    netns: &str,
    ifname: &str,
) -> Option<crate::cni::host::Link> {
    host.delete_link(netns, ifname)
}

/// The model of a Go plugin that panics: the binary exits 2 with the panic on stderr and
/// nothing on stdout ([`Crash`]), which libcni reports as `netplugin failed: "<stderr>"`
/// with code 0 (`pkg/invoke/raw_exec.go` pluginErr). `msg` is the panic as Go's `%q`
/// quotes it (`\n` for a newline). The goroutine trace that follows the panic line is not
/// reproduced.
pub(crate) fn go_panic(msg: &str) -> CniError {
    let mut e = CniError::new(
        0,
        format!("netplugin failed: \"panic: {msg}\\n\\ngoroutine 1 [running]:\\n…\""),
    );
    e.crash = Some(Box::new(Crash {
        exit_status: 2,
        stderr: format!(
            "panic: {}\n\ngoroutine 1 [running]:\n…\n",
            msg.replace("\\n", "\n")
        ),
    }));
    e
}

/// Whether a lab error is the model of a Go panic ([`go_panic`]): exit status 2.
pub fn is_go_panic(e: &CniError) -> bool {
    e.crash.as_ref().is_some_and(|c| c.exit_status == 2)
}

/// `ip.ValidateExpectedInterfaceIPs` and `ip.ValidateExpectedRoute` (`pkg/ip/utils_linux.go`)
/// for CHECK: each result address on `ifname` with a route to its prefix, and each result
/// route in the table as `release` looks for it ([`validate_expected_route`]).
pub(crate) fn validate_ips_and_routes(
    ns: &crate::cni::host::Netns,
    ifname: &str,
    result: &CniResult,
    release: PluginsRelease,
) -> Result<(), CniError> {
    let table = ns.route_table();
    for ip in &result.ips {
        let Some(link) = ns.links.get(ifname) else {
            return Err(CniError::internal(format!(
                "Cannot find container link {ifname}"
            )));
        };
        if !link.addrs.contains(&ip.address) {
            return Err(CniError::internal(format!(
                "Failed to match addr {} on interface {ifname}",
                ip.address
            )));
        }
        let prefix = RouteDst::Net(ip.address.trunc());
        if !table.iter().any(|r| r.dst == prefix) {
            return Err(CniError::internal(format!(
                "Failed to find Gateway {} for interface {ifname}",
                GoIp(ip.gateway)
            )));
        }
    }
    validate_expected_route(&table, &result.routes, release).map_err(CniError::internal)
}

/// `ip.ValidateExpectedRoute` (`pkg/ip/utils_linux.go`): every result route must be in the
/// container's main table, looked up as `netlink.RouteListFiltered(family, find, filter)`
/// does. A default route is looked up by destination alone, whatever its gateway:
///
/// ```go
/// if route.Dst.String() == "0.0.0.0/0" {          // "::/0" for IPv6
///     find = &netlink.Route{Dst: nil, Gw: route.GW}
///     routeFilter = netlink.RT_FILTER_DST
/// }
/// ```
///
/// and netlink's `RT_FILTER_DST` case matches the kernel's default route to a nil `Dst`
/// (`ipNetEqual(nil, nil)` in the netlink of 1.1.1; 1.9.1's netlink v1.3.1 reads the
/// default route as 0.0.0.0/0 and `genZeroIPNet` turns the nil filter into 0.0.0.0/0, the
/// same answer). Any other route is looked up by destination and gateway, and there the
/// releases differ: 1.1.1 always sets `RT_FILTER_DST | RT_FILTER_GW`, so a route without a
/// gateway (which `ipam.ConfigureIface` installed via the IP's gateway) matches only a
/// table entry without a next hop (`route.Gw.Equal(nil)`); 1.9.1 adds the gateway filter
/// only `if route.GW != nil`. A route without a destination (Go's zero `IPNet`) is
/// `Invalid static route found`.
pub(crate) fn validate_expected_route(
    table: &[RouteEntry],
    routes: &[Route],
    release: PluginsRelease,
) -> Result<(), String> {
    for r in routes {
        let Some(dst) = r.dst else {
            return Err(format!(
                "Invalid static route found {}",
                GoRoute(r, release)
            ));
        };
        let want = RouteDst::of_net(dst);
        let gw_filter = match release {
            PluginsRelease::V1_1_1 => true,
            PluginsRelease::V1_9_1 => r.gw.is_some(),
        };
        let found = table.iter().any(|e| {
            if want.is_default() {
                e.dst == want
            } else {
                e.dst == want && (!gw_filter || e.via == r.gw)
            }
        });
        if !found {
            return Err(format!(
                "Expected Route {} not found in routing table",
                GoRoute(r, release)
            ));
        }
    }
    Ok(())
}

/// Go's `%v` of a `*types.Route`, its `String()` in the CNI library of `release`: 1.1.1's
/// (CNI v1.0.1) is `fmt.Sprintf("%+v", *r)` of `{Dst, GW}`, `{Dst:{IP:10.96.0.0
/// Mask:fff00000} GW:<nil>}`; 1.9.1's (CNI v1.3.0) adds the fields the lab's routes do not
/// carry, at their zero values: `{Dst:%+v GW:%v MTU:%d AdvMSS:%d Priority:%d Table:%s
/// Scope:%s}`.
pub(crate) struct GoRoute<'a>(pub &'a Route, pub PluginsRelease);

impl std::fmt::Display for GoRoute<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let GoRoute(r, release) = *self;
        write!(
            f,
            "{{Dst:{} GW:{}",
            GoIpNet {
                net: r.dst,
                field_names: true,
                v4_mask_16: false
            },
            GoIp(r.gw)
        )?;
        if release == PluginsRelease::V1_9_1 {
            f.write_str(" MTU:0 AdvMSS:0 Priority:0 Table:<nil> Scope:<nil>")?;
        }
        f.write_str("}")
    }
}

/// Go's `%v` (or `%+v` with `field_names`) of a `net.IPNet` value: its `String` has a
/// pointer receiver, so fmt prints the struct, `{10.96.0.0 fff00000}` (`{IP:10.96.0.0
/// Mask:fff00000}`), the mask as hex bytes. `net.ParseCIDR` gives an IPv4 network a 4-byte
/// mask; `v4_mask_16` is a mask made of a 16-byte IPv4 address (bridge's `defaultNet.Mask =
/// net.IPMask(net.IPv4zero)`, `00000000000000000000ffff00000000`). No network is Go's zero
/// `IPNet`, `{<nil> <nil>}`.
pub(crate) struct GoIpNet {
    pub net: Option<IpNet>,
    pub field_names: bool,
    pub v4_mask_16: bool,
}

impl std::fmt::Display for GoIpNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ip, mask) = match self.net {
            Some(IpNet::V4(n)) => {
                let prefix = if self.v4_mask_16 {
                    "00000000000000000000ffff"
                } else {
                    ""
                };
                (
                    n.network().to_string(),
                    format!("{prefix}{:08x}", u32::from(n.netmask())),
                )
            }
            Some(IpNet::V6(n)) => (
                n.network().to_string(),
                format!("{:032x}", u128::from(n.netmask())),
            ),
            None => ("<nil>".to_string(), "<nil>".to_string()),
        };
        if self.field_names {
            write!(f, "{{IP:{ip} Mask:{mask}}}")
        } else {
            write!(f, "{{{ip} {mask}}}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_routes_are_looked_up_as_each_release_filters() {
        // The container's table after ipam.ConfigureIface: every route via the gateway.
        let net = |s: &str| s.parse::<IpNet>().expect("a CIDR");
        let ip = |s: &str| s.parse::<std::net::IpAddr>().ok();
        let table: Vec<RouteEntry> = [
            ("0.0.0.0/0", "10.0.0.1"),
            ("10.96.0.0/12", "10.0.0.1"),
            ("::/0", "fd00::1"),
        ]
        .iter()
        .map(|&(dst, via)| RouteEntry::static_route(RouteDst::of_net(net(dst)), ip(via), "eth0"))
        .collect();
        let route = |dst: &str, gw: &str| Route {
            dst: Some(net(dst)),
            gw: ip(gw),
        };
        use PluginsRelease::{V1_1_1, V1_9_1};
        // (route, found by 1.1.1, found by 1.9.1)
        let cases = [
            // A default route: RT_FILTER_DST alone, whatever the gateway.
            (route("0.0.0.0/0", ""), true, true),
            (route("0.0.0.0/0", "10.0.0.9"), true, true),
            (route("::/0", ""), true, true),
            // Another route: 1.1.1 always filters by gateway (nil matches no next hop).
            (route("10.96.0.0/12", ""), false, true),
            (route("10.96.0.0/12", "10.0.0.1"), true, true),
            (route("10.96.0.0/12", "10.0.0.9"), false, false),
            (route("10.97.0.0/16", ""), false, false),
        ];
        for (r, v111, v191) in cases {
            for (release, want) in [(V1_1_1, v111), (V1_9_1, v191)] {
                let got = validate_expected_route(&table, std::slice::from_ref(&r), release);
                assert_eq!(got.is_ok(), want, "{r:?} on {release:?}: {got:?}");
            }
        }
        assert_eq!(
            validate_expected_route(&[], &[route("::/0", "")], V1_9_1).unwrap_err(),
            "Expected Route {Dst:{IP::: Mask:00000000000000000000000000000000} GW:<nil> MTU:0 AdvMSS:0 Priority:0 Table:<nil> Scope:<nil>} not found in routing table"
        );
        let no_dst = Route {
            dst: None,
            gw: None,
        };
        assert_eq!(
            validate_expected_route(&table, &[no_dst], V1_1_1).unwrap_err(),
            "Invalid static route found {Dst:{IP:<nil> Mask:<nil>} GW:<nil>}"
        );
    }

    #[test]
    fn arg_items_split_as_strings_split_does() {
        // The byte-by-byte reading, for texts whose separators fall on every position of
        // an eight-byte word.
        fn naive(args: &str) -> Vec<(&str, Option<(&str, &str)>)> {
            args.split(';')
                .map(|item| match item.split_once('=') {
                    Some((_, v)) if v.contains('=') => (item, None),
                    kv => (item, kv),
                })
                .collect()
        }
        let mut texts = vec![
            String::new(),
            ";".into(),
            "=".into(),
            "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p000001;K8S_POD_INFRA_CONTAINER_ID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef;K8S_POD_UID=1b4e28ba-2fa1-11d2-883f-0016d3cca427".into(),
            "a==b;;c=é=;ü=1;".into(),
        ];
        for n in 0..20 {
            for sep in [";", "=", "==", "=;", ";="] {
                texts.push(format!("{}{sep}{}", "k".repeat(n), "v".repeat(19 - n)));
            }
        }
        for t in &texts {
            assert_eq!(arg_items(t).collect::<Vec<_>>(), naive(t), "{t:?}");
        }
    }

    #[test]
    fn chain_names_match_upstream_vectors() {
        // pkg/utils/utils_test.go
        assert_eq!(
            format_chain_name("test", "1234"),
            "CNI-2bbe0c48b91a7d1b8a6753a8"
        );
        assert_eq!(
            format_chain_name("testalongnamethatdoesnotmakesense", "1234"),
            "CNI-374f33fe84ab0ed84dcdebe3"
        );
        assert_eq!(
            format_chain_name_with_prefix("test", "1234", "PREFIX-"),
            "CNI-PREFIX-2bbe0c48b91a7d1b8"
        );
        // Seen on the real 1.1.1 plugins (tests/fixtures/real).
        assert_eq!(
            format_chain_name("lab-net", "c0ffee01"),
            "CNI-20afed91d8ddf530016083b5"
        );
        assert_eq!(
            format_chain_name_with_prefix("lab-net", "c0ffee01", "DN-"),
            "CNI-DN-20afed91d8ddf53001608"
        );
        assert_eq!(
            hash_with_prefix(15, "bwp", "lab-netc0ffee01"),
            "bwp20afed91d8dd"
        );
    }

    #[test]
    fn comment_and_quoting() {
        let c = format_comment("lab-net", "c0ffee01");
        assert_eq!(c, "name: \"lab-net\" id: \"c0ffee01\"");
        assert_eq!(
            ipt_quote(&c),
            "\"name: \\\"lab-net\\\" id: \\\"c0ffee01\\\"\""
        );
        assert_eq!(ipt_quote("CNI-HOSTPORT-DNAT"), "CNI-HOSTPORT-DNAT");
    }

    #[test]
    fn go_type_errors() {
        let v = serde_json::json!({"mtu": "x", "isGateway": 1});
        let c = GoConf::new(&v, "NetConf");
        assert_eq!(
            c.int("mtu").unwrap_err(),
            "json: cannot unmarshal string into Go struct field NetConf.mtu of type int"
        );
        assert_eq!(
            c.bool("isGateway").unwrap_err(),
            "json: cannot unmarshal number 1 into Go struct field NetConf.isGateway of type bool"
        );
    }

    #[test]
    fn args_parsing() {
        assert_eq!(
            load_args("IgnoreUnknown=1;K8S_POD_NAME=x;MAC=aa", &["MAC"]).unwrap(),
            vec![("MAC".to_string(), "aa".to_string())]
        );
        assert_eq!(
            load_args("FOO=1", &["MAC"]).unwrap_err(),
            "ARGS: unknown args [\"FOO=1\"]"
        );
        assert_eq!(
            load_args("FOO", &["MAC"]).unwrap_err(),
            "ARGS: invalid pair \"FOO\""
        );
        // An invalid pair anywhere wins over unknown keys before it; IgnoreUnknown anywhere
        // silences them; an empty item (a trailing `;`) is not a pair.
        assert_eq!(
            load_args("FOO=1;MAC=a=b", &["MAC"]).unwrap_err(),
            "ARGS: invalid pair \"MAC=a=b\""
        );
        assert_eq!(
            load_args("FOO=1;MAC=aa;IgnoreUnknown=TRUE", &["MAC"]).unwrap(),
            vec![("MAC".to_string(), "aa".to_string())]
        );
        assert_eq!(
            load_args("MAC=aa;", &["MAC"]).unwrap_err(),
            "ARGS: invalid pair \"\""
        );
        assert_eq!(
            load_args("A=1;B=;C=x", &["MAC"]).unwrap_err(),
            "ARGS: unknown args [\"A=1\" \"B=\" \"C=x\"]"
        );
        let items: Vec<_> = arg_items("a=1;;b==;c").collect();
        assert_eq!(
            items,
            vec![
                ("a=1", Some(("a", "1"))),
                ("", None),
                ("b==", None),
                ("c", None)
            ]
        );
    }
}
