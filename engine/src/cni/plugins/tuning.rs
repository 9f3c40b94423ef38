//! The `tuning` meta plugin (`containernetworking/plugins:plugins/meta/tuning/tuning.go`,
//! HEAD): chained after an interface plugin, it writes sysctls of the pod's namespace and
//! changes the interface's MAC, promiscuous mode, MTU and all-multicast flag, then hands
//! the prevResult on (with the interface's new MAC).
//!
//! - **sysctls** are dotted keys under `net.` (`IFNAME` is replaced by `CNI_IFNAME` once),
//!   written in the pod's namespace and **not restored** on DEL. A key the namespace has no
//!   file for fails with the real `open /proc/sys/…: no such file or directory`; the lab's
//!   rule for which files exist is [`sysctl_exists`].
//! - **mac/promisc/mtu/allmulti** (also from `args.cni`, and the MAC from CNI_ARGS `MAC` and
//!   `runtimeConfig.mac`) first save the interface's current values in
//!   `<dataDir>/<containerID>_<ifname>.json` (1-space indent, [`Host::files`]); DEL puts
//!   them back and removes the file, and always succeeds.
//! - `args.cni.sysctl` without a top-level `sysctl` writes into a nil Go map: the binary
//!   **panics** (exit 2) on ADD, CHECK and DEL alike ([`common::go_panic`]).
//!
//! Where 1.1.1 differs ([`crate::cni::release`], checked in `tests/underlay_differential.rs`):
//! it substitutes `IFNAME` before turning dots into slashes and quotes the dotted key when
//! refusing it (`invalid net sysctl key: "kernel.hostname"`; v1.9.1 quotes
//! `"kernel/hostname"`), and its CHECK reads the key as written, without substituting
//! `IFNAME` or refusing non-`net.` keys (so `net.ipv4.conf.IFNAME.proxy_arp` fails CHECK
//! with `open /proc/sys/net/ipv4/conf/IFNAME/proxy_arp: no such file or directory`). Not
//! modelled:
//! HEAD's `txQLen`, the `/etc/cni/tuning/allowlist.conf` allowlist, and the refusal of
//! duplicated sysctl keys (the lab's config is already a JSON object without duplicates).

use super::common::{self, go_quote};
use crate::cni::host::{Host, LinkKind};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::release::PluginsRelease;
use crate::cni::types::CniError;
use serde_json::Value;

/// The `tuning` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tuning;

/// `defaultDataDir`.
pub(crate) const DEFAULT_DATA_DIR: &str = "/run/cni/tuning";

/// The parsed `TuningConf`, after `parseConf`.
#[derive(Debug, Clone, PartialEq, Default)]
struct TuningConf {
    data_dir: String,
    /// Sorted by key (Go ranges over a map in random order; the lab picks one order).
    sysctl: Vec<(String, String)>,
    mac: String,
    promisc: bool,
    mtu: i64,
    allmulti: Option<bool>,
}

fn load_err(e: impl std::fmt::Display) -> CniError {
    CniError::internal(format!("failed to load netconf: {e}"))
}

fn type_err(what: &Value, field: &str, go: &str) -> CniError {
    load_err(format!(
        "json: cannot unmarshal {} into Go struct field {field} of type {go}",
        crate::cni::conf::go_json_kind(what)
    ))
}

/// `map[string]string` from JSON.
fn string_map(v: &Value, field: &str) -> Result<Option<Vec<(String, String)>>, CniError> {
    match v {
        Value::Null => Ok(None),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(type_err(other, field, "string")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        other => Err(type_err(other, field, "map[string]string")),
    }
}

/// `parseConf`.
fn parse_conf(stdin: &Stdin, env_args: &str) -> Result<TuningConf, CniError> {
    let conf = stdin.conf.as_ref();
    let g = common::GoConf::new(conf, "TuningConf");
    let mut c = TuningConf {
        data_dir: g.string("dataDir").map_err(load_err)?.unwrap_or_default(),
        mac: g.string("mac").map_err(load_err)?.unwrap_or_default(),
        promisc: g.bool("promisc").map_err(load_err)?.unwrap_or(false),
        mtu: g.int("mtu").map_err(load_err)?.unwrap_or(0),
        allmulti: g.bool("allmulti").map_err(load_err)?,
        sysctl: Vec::new(),
    };
    let sysctl = string_map(
        conf.get("sysctl").unwrap_or(&Value::Null),
        "TuningConf.sysctl",
    )?;
    if c.data_dir.is_empty() {
        c.data_dir = DEFAULT_DATA_DIR.to_string();
    }
    for (k, v) in common::load_args(env_args, &["MAC"]).map_err(CniError::internal)? {
        if k == "MAC" && !v.is_empty() {
            c.mac = v;
        }
    }
    if let Some(m) = super::macvlan::runtime_mac(stdin) {
        c.mac = m;
    }
    let mut sysctl_map = sysctl;
    if let Some(a) = conf.pointer("/args/cni").filter(|a| a.is_object()) {
        let ag = common::GoConf::new(a, "IPAMArgs");
        if let Some(extra) = string_map(
            a.get("sysctl").unwrap_or(&Value::Null),
            "IPAMArgs.args.cni.sysctl",
        )? {
            match &mut sysctl_map {
                // `conf.SysCtl[k] = v` into the nil map of an absent `sysctl`.
                None if !extra.is_empty() => {
                    return Err(common::go_panic("assignment to entry in nil map"));
                }
                None => {}
                Some(m) => {
                    for (k, v) in extra {
                        m.retain(|(key, _)| key != &k);
                        m.push((k, v));
                    }
                }
            }
        }
        if let Some(m) = ag.string("mac").map_err(load_err)? {
            c.mac = m;
        }
        if let Some(p) = ag.bool("promisc").map_err(load_err)? {
            c.promisc = p;
        }
        if let Some(m) = ag.int("mtu").map_err(load_err)? {
            c.mtu = m;
        }
        if let Some(a) = ag.bool("allmulti").map_err(load_err)? {
            c.allmulti = Some(a);
        }
    }
    c.sysctl = sysctl_map.unwrap_or_default();
    c.sysctl.sort();
    Ok(c)
}

/// `getSysctlFilename`: the `/proc/sys` path of a key, refused outside `/proc/sys/net/`.
/// v1.1.1 did this inline in cmdAdd, substituting `IFNAME` first and quoting the dotted key.
fn sysctl_filename(key: &str, ifname: &str, release: PluginsRelease) -> Result<String, CniError> {
    if release == PluginsRelease::V1_1_1 {
        let key = key.replacen("IFNAME", ifname, 1);
        let file = clean_join("/proc/sys", &key.replace('.', "/"));
        if !file.starts_with("/proc/sys/net/") {
            return Err(CniError::internal(format!(
                "invalid net sysctl key: {}",
                go_quote(&key)
            )));
        }
        return Ok(file);
    }
    let key = key.replace('.', "/").replacen("IFNAME", ifname, 1);
    let file = clean_join("/proc/sys", &key);
    if !file.starts_with("/proc/sys/net/") {
        return Err(CniError::internal(format!(
            "invalid net sysctl key: {}",
            go_quote(&key)
        )));
    }
    Ok(file)
}

/// `filepath.Join(base, rel)`: `..` and `.` resolved, slashes collapsed.
fn clean_join(base: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in base.split('/').chain(rel.split('/')) {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Per-interface IPv4 knobs (`/proc/sys/net/ipv4/conf/<dev>/`, Linux 6.1).
const IPV4_CONF: &[&str] = &[
    "accept_local",
    "accept_redirects",
    "accept_source_route",
    "arp_accept",
    "arp_announce",
    "arp_evict_nocarrier",
    "arp_filter",
    "arp_ignore",
    "arp_notify",
    "bc_forwarding",
    "bootp_relay",
    "disable_policy",
    "disable_xfrm",
    "drop_gratuitous_arp",
    "drop_unicast_in_l2_multicast",
    "force_igmp_version",
    "forwarding",
    "igmpv2_unsolicited_report_interval",
    "igmpv3_unsolicited_report_interval",
    "ignore_routes_with_linkdown",
    "log_martians",
    "mc_forwarding",
    "medium_id",
    "promote_secondaries",
    "proxy_arp",
    "proxy_arp_pvlan",
    "route_localnet",
    "rp_filter",
    "secure_redirects",
    "send_redirects",
    "shared_media",
    "src_valid_mark",
    "tag",
];

/// Per-interface IPv6 knobs (`/proc/sys/net/ipv6/conf/<dev>/`, Linux 6.1).
const IPV6_CONF: &[&str] = &[
    "accept_dad",
    "accept_ra",
    "accept_ra_defrtr",
    "accept_ra_from_local",
    "accept_ra_min_hop_limit",
    "accept_ra_mtu",
    "accept_ra_pinfo",
    "accept_ra_rt_info_max_plen",
    "accept_ra_rt_info_min_plen",
    "accept_ra_rtr_pref",
    "accept_redirects",
    "accept_source_route",
    "addr_gen_mode",
    "autoconf",
    "dad_transmits",
    "disable_ipv6",
    "disable_policy",
    "drop_unicast_in_l2_multicast",
    "drop_unsolicited_na",
    "enhanced_dad",
    "force_mld_version",
    "force_tllao",
    "forwarding",
    "hop_limit",
    "ignore_routes_with_linkdown",
    "keep_addr_on_down",
    "max_addresses",
    "max_desync_factor",
    "mc_forwarding",
    "mldv1_unsolicited_report_interval",
    "mldv2_unsolicited_report_interval",
    "mtu",
    "ndisc_notify",
    "ndisc_tclass",
    "proxy_ndp",
    "regen_max_retry",
    "router_probe_interval",
    "router_solicitation_delay",
    "router_solicitation_interval",
    "router_solicitation_max_interval",
    "router_solicitations",
    "seg6_enabled",
    "suppress_frag_ndisc",
    "temp_prefered_lft",
    "temp_valid_lft",
    "use_oif_addrs_only",
    "use_tempaddr",
];

/// Per-interface neighbour knobs (`/proc/sys/net/ipv{4,6}/neigh/<dev>/`).
const NEIGH: &[&str] = &[
    "anycast_delay",
    "app_solicit",
    "base_reachable_time",
    "base_reachable_time_ms",
    "delay_first_probe_time",
    "gc_stale_time",
    "interval_probe_time_ms",
    "locktime",
    "mcast_resolicit",
    "mcast_solicit",
    "proxy_delay",
    "proxy_qlen",
    "retrans_time",
    "retrans_time_ms",
    "ucast_solicit",
    "unres_qlen",
    "unres_qlen_bytes",
];

/// Namespace-wide knobs a pod's network namespace has (`/proc/sys/net/…`).
const GLOBAL: &[&str] = &[
    "core.somaxconn",
    "ipv4.icmp_echo_ignore_all",
    "ipv4.icmp_echo_ignore_broadcasts",
    "ipv4.icmp_ratelimit",
    "ipv4.ip_default_ttl",
    "ipv4.ip_forward",
    "ipv4.ip_local_port_range",
    "ipv4.ip_local_reserved_ports",
    "ipv4.ip_no_pmtu_disc",
    "ipv4.ip_nonlocal_bind",
    "ipv4.ip_unprivileged_port_start",
    "ipv4.ping_group_range",
    "ipv4.tcp_ecn",
    "ipv4.tcp_fin_timeout",
    "ipv4.tcp_keepalive_intvl",
    "ipv4.tcp_keepalive_probes",
    "ipv4.tcp_keepalive_time",
    "ipv4.tcp_max_syn_backlog",
    "ipv4.tcp_mtu_probing",
    "ipv4.tcp_rmem",
    "ipv4.tcp_sack",
    "ipv4.tcp_syncookies",
    "ipv4.tcp_timestamps",
    "ipv4.tcp_tw_reuse",
    "ipv4.tcp_window_scaling",
    "ipv4.tcp_wmem",
    "ipv4.udp_rmem_min",
    "ipv4.udp_wmem_min",
    "ipv6.ip_nonlocal_bind",
    "unix.max_dgram_qlen",
];

/// Whether `/proc/sys/<name with dots as slashes>` exists in the namespace at `netns`: a
/// per-interface knob (`net.ipv4.conf.<dev>.<knob>`, `net.ipv6.conf…`, `net.ipv{4,6}.neigh…`)
/// exists for `all` (not for neigh), `default` and each link of the namespace; otherwise
/// the key must be one of the namespace-wide knobs above. The lists are Linux 6.1's.
pub fn sysctl_exists(host: &Host, netns: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix("net.") else {
        return false;
    };
    let parts: Vec<&str> = rest.splitn(4, '.').collect();
    if let [
        fam @ ("ipv4" | "ipv6"),
        table @ ("conf" | "neigh"),
        dev,
        knob,
    ] = parts.as_slice()
    {
        let dev_ok = match (*dev, *table) {
            ("default", _) | ("all", "conf") => true,
            (d, _) => host.ns(netns).is_some_and(|ns| ns.links.contains_key(d)),
        };
        let knobs = match (*fam, *table) {
            ("ipv4", "conf") => IPV4_CONF,
            ("ipv6", "conf") => IPV6_CONF,
            _ => NEIGH,
        };
        return dev_ok && knobs.contains(knob);
    }
    GLOBAL.contains(&rest)
}

/// The link of the pod, for the `failed to get` errors.
fn pod_link<'h>(
    host: &'h mut Host,
    env: &CniEnv,
) -> Result<&'h mut crate::cni::host::Link, CniError> {
    host.netns
        .get_mut(&env.netns)
        .and_then(|ns| ns.links.get_mut(&env.ifname))
        .ok_or_else(|| {
            CniError::internal(format!(
                "failed to get {}: Link not found",
                go_quote(&env.ifname)
            ))
        })
}

/// The largest MTU the kernel takes for a link: a macvlan's or ipvlan's master's, else
/// 65535 (veth's `max_mtu`).
fn max_mtu(host: &Host, kind: &LinkKind) -> u32 {
    match kind {
        LinkKind::Macvlan(lower) | LinkKind::Ipvlan(lower) => {
            host.root.links.get(&lower.master).map_or(65535, |m| m.mtu)
        }
        _ => 65535,
    }
}

/// `createBackup`'s bytes: `json.MarshalIndent(configToRestore, "", " ")`.
fn backup_json(
    mac: Option<&str>,
    promisc: Option<bool>,
    mtu: u32,
    allmulti: Option<bool>,
) -> String {
    let mut fields = Vec::new();
    if let Some(m) = mac {
        fields.push(format!(" \"mac\": {}", go_quote(m)));
    }
    if let Some(p) = promisc {
        fields.push(format!(" \"promisc\": {p}"));
    }
    if mtu != 0 {
        fields.push(format!(" \"mtu\": {mtu}"));
    }
    if let Some(a) = allmulti {
        fields.push(format!(" \"allmulti\": {a}"));
    }
    if fields.is_empty() {
        return "{}".into();
    }
    format!("{{\n{}\n}}", fields.join(",\n"))
}

fn backup_path(data_dir: &str, env: &CniEnv) -> String {
    clean_join(
        data_dir,
        &format!("{}_{}.json", env.container_id, env.ifname),
    )
}

impl Tuning {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = parse_conf(stdin, &env.args)?;
        if env.ifname.contains('/') {
            return Err(CniError::internal(format!(
                "Interface name ({}) contains an invalid character /",
                env.ifname
            )));
        }
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("Required prevResult missing"));
        };
        let release = ctx.registry.release();
        let host = &mut *ctx.host;
        if !common::netns_exists(host, &env.netns) {
            return Err(CniError::internal(common::statfs_missing(&env.netns)));
        }
        for (key, value) in &c.sysctl {
            let file = sysctl_filename(key, &env.ifname, release)?;
            let name = file.trim_start_matches("/proc/sys/").replace('/', ".");
            if !sysctl_exists(host, &env.netns, &name) {
                return Err(CniError::internal(format!(
                    "open {file}: no such file or directory"
                )));
            }
            host.set_sysctl(&env.netns, &name, value);
        }
        let mut result = prev;
        result.cni_version = stdin.cni_version().into();
        if !c.mac.is_empty() || c.mtu != 0 || c.promisc || c.allmulti.is_some() {
            let link = pod_link(host, env)?;
            let mac = (!c.mac.is_empty()).then(|| link.mac.to_string());
            let bytes = backup_json(
                mac.as_deref(),
                c.promisc.then_some(link.promisc()),
                if c.mtu != 0 { link.mtu } else { 0 },
                c.allmulti.map(|_| link.allmulti()),
            );
            host.files.insert(backup_path(&c.data_dir, env), bytes);
        }
        if !c.mac.is_empty() {
            let mac = common::parse_mac(&c.mac).map_err(|e| {
                CniError::internal(format!("invalid args {} for MAC addr: {e}", c.mac))
            })?;
            pod_link(host, env)?.mac = mac;
            for i in &mut result.interfaces {
                if i.name == env.ifname {
                    i.mac = c.mac.as_str().into();
                }
            }
        }
        if c.promisc {
            pod_link(host, env)?.set_promisc(true);
        }
        if c.mtu != 0 {
            let kind = pod_link(host, env)?.kind.clone();
            let max = max_mtu(host, &kind);
            let link = pod_link(host, env)?;
            match u32::try_from(c.mtu) {
                Ok(m) if (68..=max).contains(&m) => link.mtu = m,
                _ => return Err(CniError::internal("invalid argument")),
            }
        }
        if let Some(a) = c.allmulti {
            pod_link(host, env)?.set_allmulti(a);
        }
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = parse_conf(stdin, &env.args)?;
        let host = &mut *ctx.host;
        let path = backup_path(&c.data_dir, env);
        // restoreBackup: every error is swallowed by cmdDel, which always succeeds.
        let Some(text) = host.files.get(&path).cloned() else {
            return Ok(PluginOutput::Empty);
        };
        let Ok(saved) = serde_json::from_str::<Value>(&text) else {
            return Ok(PluginOutput::Empty);
        };
        let Ok(link) = pod_link(host, env) else {
            return Ok(PluginOutput::Empty);
        };
        if let Some(m) = saved.get("mtu").and_then(Value::as_u64) {
            link.mtu = u32::try_from(m).unwrap_or(link.mtu);
        }
        if let Some(m) = saved.get("mac").and_then(Value::as_str) {
            if let Ok(m) = common::parse_mac(m) {
                link.mac = m;
            }
        }
        if let Some(p) = saved.get("promisc").and_then(Value::as_bool) {
            link.set_promisc(p);
        }
        if let Some(a) = saved.get("allmulti").and_then(Value::as_bool) {
            link.set_allmulti(a);
        }
        host.files.remove(&path);
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = parse_conf(stdin, &env.args)?;
        if common::prev_result(stdin).is_none() {
            return Err(CniError::internal("Required prevResult missing"));
        }
        let release = ctx.registry.release();
        let host = &*ctx.host;
        if !common::netns_exists(host, &env.netns) {
            return Err(CniError::internal(common::statfs_missing(&env.netns)));
        }
        for (key, want) in &c.sysctl {
            let file = match release {
                // v1.1.1's cmdCheck: the key as written, no IFNAME, no `net.` check.
                PluginsRelease::V1_1_1 => clean_join("/proc/sys", &key.replace('.', "/")),
                PluginsRelease::V1_9_1 => sysctl_filename(key, &env.ifname, release)?,
            };
            let name = file.trim_start_matches("/proc/sys/").replace('/', ".");
            if !sysctl_exists(host, &env.netns, &name) {
                return Err(CniError::internal(format!(
                    "open {file}: no such file or directory"
                )));
            }
            let have = host.sysctl(&env.netns, &name).unwrap_or("0");
            if want != have {
                return Err(CniError::internal(format!(
                    "Error: Tuning configured value of {file} is {want}, current value is {have}"
                )));
            }
        }
        let Some(link) = host
            .netns
            .get(&env.netns)
            .and_then(|ns| ns.links.get(&env.ifname))
        else {
            return Err(CniError::internal(format!(
                "Cannot find container link {}",
                env.ifname
            )));
        };
        if !c.mac.is_empty() && link.mac != c.mac {
            return Err(CniError::internal(format!(
                "Error: Tuning configured Ethernet of {} is {}, current value is {}",
                env.ifname, c.mac, link.mac
            )));
        }
        if c.promisc != link.promisc() {
            return Err(CniError::internal(format!(
                "Error: Tuning link {} configured promisc is {}, current value is {}",
                env.ifname,
                c.promisc,
                u8::from(link.promisc())
            )));
        }
        if c.mtu != 0 && c.mtu != i64::from(link.mtu) {
            return Err(CniError::internal(format!(
                "Error: Tuning configured MTU of {} is {}, current value is {}",
                env.ifname, c.mtu, link.mtu
            )));
        }
        if let Some(a) = c.allmulti {
            if a != link.allmulti() {
                return Err(CniError::internal(format!(
                    "Error: Tuning configured all-multicast mode of {} is {a}, current value is {}",
                    env.ifname,
                    link.allmulti()
                )));
            }
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Tuning {
    fn type_name(&self) -> &'static str {
        "tuning"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn is_reference_plugin(&self) -> bool {
        true
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx, env, stdin),
            CniCommand::Del => self.cmd_del(ctx, env, stdin),
            CniCommand::Check => self.cmd_check(ctx, env, stdin),
            CniCommand::Status | CniCommand::Gc => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

/// The result a tuning test chains after: a macvlan `net1` made by the lab's macvlan.
#[cfg(test)]
fn chained(h: &mut Host) -> crate::cni::types::CniResult {
    use crate::cni::plugins::macvlan::tests::{result, run};
    let mv = serde_json::json!({"cniVersion": "1.0.0", "name": "mv", "type": "macvlan"});
    result(run(h, CniCommand::Add, &mv, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::plugins::macvlan::tests::{NS, host};
    use crate::cni::registry::Registry;
    use crate::cni::types::CniResult;
    use serde_json::json;

    /// 1.1.1 substitutes IFNAME before the dots become slashes and quotes the dotted key
    /// (Debian's binary: `invalid net sysctl key: "kernel.hostname"`).
    #[test]
    fn sysctl_keys_by_release() {
        let old = PluginsRelease::V1_1_1;
        let new = PluginsRelease::V1_9_1;
        assert_eq!(
            sysctl_filename("net.ipv4.conf.IFNAME.proxy_arp", "net1", old).unwrap(),
            "/proc/sys/net/ipv4/conf/net1/proxy_arp"
        );
        assert_eq!(
            sysctl_filename("kernel.hostname", "net1", old)
                .unwrap_err()
                .msg,
            "invalid net sysctl key: \"kernel.hostname\""
        );
        assert_eq!(
            sysctl_filename("kernel.hostname", "net1", new)
                .unwrap_err()
                .msg,
            "invalid net sysctl key: \"kernel/hostname\""
        );
        // An ifname with a dot: 1.1.1 turns it into a path separator too.
        assert_eq!(
            sysctl_filename("net.ipv4.conf.IFNAME.rp_filter", "eth0.5", old).unwrap(),
            "/proc/sys/net/ipv4/conf/eth0/5/rp_filter"
        );
        assert_eq!(
            sysctl_filename("net.ipv4.conf.IFNAME.rp_filter", "eth0.5", new).unwrap(),
            "/proc/sys/net/ipv4/conf/eth0.5/rp_filter"
        );
    }

    fn invoke(h: &mut Host, cmd: CniCommand, conf: Value, prev: Option<CniResult>) -> PluginReply {
        let registry = Registry::standard();
        let mut ctx = PluginCtx {
            host: h,
            registry: &registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let env = CniEnv {
            command: Some(cmd),
            container_id: "c1".into(),
            netns: NS.into(),
            ifname: "net1".into(),
            args: String::new(),
            path: "/opt/cni/bin".into(),
        };
        let mut stdin = Stdin::from_conf(conf);
        stdin.prev_result = prev.map(std::sync::Arc::new);
        crate::cni::skel::dispatch(&Tuning, &mut ctx, &env, &stdin)
    }

    fn conf(extra: Value) -> Value {
        let mut c = json!({"cniVersion": "1.0.0", "name": "mv", "type": "tuning"});
        if let (Value::Object(m), Value::Object(e)) = (&mut c, extra) {
            m.extend(e);
        }
        c
    }

    #[test]
    fn backup_then_restore_and_sysctls_stay() {
        let mut h = host();
        let prev = chained(&mut h);
        let old_mac = prev.interfaces[0].mac.to_string();
        let c = conf(
            json!({"mac": "02:00:00:00:aa:01", "promisc": true, "mtu": 1400,
            "allmulti": true, "sysctl": {"net.ipv4.conf.IFNAME.proxy_arp": "1"}}),
        );
        let r = match invoke(&mut h, CniCommand::Add, c.clone(), Some(prev.clone())) {
            Ok(PluginOutput::Result(r)) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:aa:01");
        let backup = &h.files["/run/cni/tuning/c1_net1.json"];
        assert_eq!(
            backup,
            &format!(
                "{{\n \"mac\": \"{old_mac}\",\n \"promisc\": false,\n \"mtu\": 1500,\n \"allmulti\": false\n}}"
            )
        );
        let key = "net.ipv4.conf.net1.proxy_arp";
        assert_eq!(h.sysctl(NS, key), Some("1"));
        assert!(invoke(&mut h, CniCommand::Check, c.clone(), Some((*r).clone())).is_ok());
        invoke(&mut h, CniCommand::Del, c, Some((*r).clone())).unwrap();
        let l = h.netns[NS].links.get("net1").cloned().unwrap();
        assert_eq!(
            (l.mac.to_string().as_str(), l.promisc(), l.mtu, l.allmulti()),
            (old_mac.as_str(), false, 1500, false)
        );
        assert!(!h.files.contains_key("/run/cni/tuning/c1_net1.json"));
        assert_eq!(h.sysctl(NS, key), Some("1"));
    }

    #[test]
    fn errors_as_the_real_plugin() {
        let mut h = host();
        let prev = chained(&mut h);
        let err = |h: &mut Host, extra: Value, p: Option<CniResult>| {
            invoke(h, CniCommand::Add, conf(extra), p).unwrap_err().msg
        };
        assert_eq!(err(&mut h, json!({}), None), "Required prevResult missing");
        assert_eq!(
            err(
                &mut h,
                json!({"sysctl": {"kernel.hostname": "x"}}),
                Some(prev.clone())
            ),
            "invalid net sysctl key: \"kernel/hostname\""
        );
        assert_eq!(
            err(
                &mut h,
                json!({"sysctl": {"net.ipv4.conf.IFNAME.nosuch": "1"}}),
                Some(prev.clone())
            ),
            "open /proc/sys/net/ipv4/conf/net1/nosuch: no such file or directory"
        );
        assert_eq!(
            err(&mut h, json!({"mac": "nope"}), Some(prev.clone())),
            "invalid args nope for MAC addr: address nope: invalid MAC address"
        );
        assert_eq!(
            err(&mut h, json!({"mtu": 9000}), Some(prev.clone())),
            "invalid argument"
        );
    }

    #[test]
    fn args_sysctl_without_sysctl_panics_on_add_and_del() {
        let mut h = host();
        let prev = chained(&mut h);
        let c = conf(json!({"args": {"cni": {"sysctl": {"net.ipv4.conf.IFNAME.proxy_arp": "1"}}}}));
        for cmd in [CniCommand::Add, CniCommand::Del] {
            let e = invoke(&mut h, cmd, c.clone(), Some(prev.clone())).unwrap_err();
            assert!(common::is_go_panic(&e), "{e:?}");
            assert!(e.msg.contains("assignment to entry in nil map"));
        }
    }

    #[test]
    fn which_sysctls_exist() {
        let h = host();
        assert!(sysctl_exists(&h, NS, "net.ipv4.conf.lo.rp_filter"));
        assert!(sysctl_exists(&h, NS, "net.ipv4.conf.all.forwarding"));
        assert!(!sysctl_exists(&h, NS, "net.ipv4.conf.net9.rp_filter"));
        assert!(!sysctl_exists(&h, NS, "net.ipv4.neigh.all.proxy_delay"));
        assert!(sysctl_exists(&h, NS, "net.core.somaxconn"));
        assert!(!sysctl_exists(&h, NS, "net.core.nosuch"));
    }
}
