//! The `bandwidth` plugin (`containernetworking/plugins:plugins/meta/bandwidth/{main.go,
//! ifb_creator.go}`) as Debian's 1.1.1 does it: a TBF root qdisc on the host veth shapes
//! traffic into the pod (ingress); traffic from the pod (egress) is redirected from an
//! ingress qdisc on the host veth to an ifb `bwp<hash>` that carries its own TBF.
//!
//! TBF parameters (`ifb_creator.go` createTBF), with rates in bits/s and bursts in bits:
//! - rate bytes = rate / 8, burst bytes = burst / 8;
//! - buffer (ticks) = time2tick(burst_bytes · 10⁶ / rate_bytes µs), tick = 15.625 µs (the
//!   `/proc/net/psched` of current kernels: 1000/64);
//! - limit (bytes) = rate_bytes · 25 ms + burst_bytes (latency 25 ms).
//!
//! `tc qdisc show` then prints `rate`, `burst` (= rate · tick2time(buffer)) and `lat`
//! (= limit/rate − tick2time(buffer)), which [`tbf_params`] reproduces. HEAD switched to HTB
//! with shaped/unshaped subnets; that is not modelled. Neither is the u32/mirred filter
//! (it does not show in `tc qdisc`).

use super::common::{self, GoConf, go_quote, hash_with_prefix};
use super::memo::DocMemo;
use crate::cni::host::{Host, Link, LinkKind, Mac, Qdisc};
use crate::cni::plugin::{
    CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin, VERSIONS_FROM_030,
};
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, Interface};
use crate::util::hash;
use serde_json::Value;
use std::sync::Arc;

/// `maxIfbDeviceLength`.
const MAX_IFB_LEN: usize = 15;
/// `ifbDevicePrefix`.
const IFB_PREFIX: &str = "bwp";
/// `latencyInMillis`.
const LATENCY_MS: f64 = 25.0;
/// `TIME_UNITS_PER_SEC` (µs).
const TIME_UNITS_PER_SEC: f64 = 1_000_000.0;
/// µs per tc tick on current kernels (`/proc/net/psched` = 000003e8 00000040 …).
const TICK_IN_USEC: f64 = 15.625;

/// The `bandwidth` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Bandwidth;

/// A `BandwidthEntry` (CONVENTIONS.md): rates in bits/s, bursts in bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BandwidthEntry {
    /// `ingressRate`.
    pub ingress_rate: u64,
    /// `ingressBurst`.
    pub ingress_burst: u64,
    /// `egressRate`.
    pub egress_rate: u64,
    /// `egressBurst`.
    pub egress_burst: u64,
}

impl BandwidthEntry {
    /// All four values zero.
    pub fn is_zero(&self) -> bool {
        self.ingress_rate == 0
            && self.ingress_burst == 0
            && self.egress_rate == 0
            && self.egress_burst == 0
    }
}

const KEYS: [&str; 4] = ["ingressRate", "ingressBurst", "egressRate", "egressBurst"];

fn read_entry(v: &Value, struct_name: &'static str) -> Result<BandwidthEntry, String> {
    let g = GoConf::new(v, struct_name);
    let get = |k: &str| g.uint(k).map(|x| x.unwrap_or(0));
    Ok(BandwidthEntry {
        ingress_rate: get("ingressRate")?,
        ingress_burst: get("ingressBurst")?,
        egress_rate: get("egressRate")?,
        egress_burst: get("egressBurst")?,
    })
}

/// `validateRateAndBurst`.
fn validate(rate: u64, burst: u64) -> Result<(), String> {
    if burst == 0 && rate != 0 {
        return Err("if rate is set, burst must also be set".into());
    }
    if rate == 0 && burst != 0 {
        return Err("if burst is set, rate must also be set".into());
    }
    if burst / 8 >= u64::from(u32::MAX) {
        return Err("burst cannot be more than 4GB".into());
    }
    Ok(())
}

/// What Go prints for a nil pointer dereference, before the goroutine trace (as Debian's
/// 1.1.1 bandwidth printed it).
const NIL_DEREFERENCE: &str = "runtime error: invalid memory address or nil pointer dereference\\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x536ff6]";

/// The entry of the document's own keys, when any is present (Go allocates the embedded
/// entry then), as `parseConfig` reports it.
fn static_entry(conf: &Value) -> Option<Result<BandwidthEntry, String>> {
    KEYS.iter()
        .any(|k| conf.get(*k).is_some())
        .then(|| read_entry(conf, "PluginConf").map_err(parse_error))
}

/// `parseConfig`'s wrapping of a decoding error.
fn parse_error(e: String) -> String {
    format!("failed to parse network configuration: {e}")
}

/// `parseConfig` + `getBandwidth`: the static keys win when any of them is present (Go
/// allocates the embedded entry), else `runtimeConfig.bandwidth`; both rate/burst pairs are
/// validated. `None` when neither is given.
pub(crate) fn parse_bandwidth(stdin: &Stdin) -> Result<Option<BandwidthEntry>, String> {
    thread_local! {
        /// The document's own entry, read once per document.
        static DECODED: std::cell::RefCell<DocMemo<Option<Result<BandwidthEntry, String>>>> =
            std::cell::RefCell::new(DocMemo::default());
    }
    let static_entry = DECODED.with(|m| m.borrow_mut().get_or(&stdin.conf, static_entry));
    let bw = if let Some(entry) = static_entry.as_ref() {
        Some(entry.clone()?)
    } else {
        match stdin
            .runtime_config
            .as_ref()
            .and_then(|rc| rc.get("bandwidth"))
            .filter(|v| !v.is_null())
        {
            Some(v) => {
                Some(read_entry(v, "PluginConf.runtimeConfig.bandwidth").map_err(parse_error)?)
            }
            None => None,
        }
    };
    if let Some(b) = &bw {
        validate(b.ingress_rate, b.ingress_burst)?;
        validate(b.egress_rate, b.egress_burst)?;
    }
    Ok(bw)
}

/// `getIfbDeviceName`: `bwp` + 12 hex digits of sha512(network name + container ID).
pub(crate) fn ifb_name(net: &str, container_id: &str) -> String {
    hash_with_prefix(MAX_IFB_LEN, IFB_PREFIX, &format!("{net}{container_id}"))
}

/// The kernel values of a TBF: (rate bytes/s, limit bytes, buffer ticks).
pub(crate) fn tbf_values(rate_bits: u64, burst_bits: u64) -> (u64, u32, u32) {
    let rate = rate_bits / 8;
    let burst = (burst_bits / 8) as u32;
    if rate == 0 {
        return (0, burst, 0);
    }
    let usec = (f64::from(burst) * TIME_UNITS_PER_SEC / rate as f64) as u32;
    let buffer = (f64::from(usec) * TICK_IN_USEC) as u32;
    let latency = TIME_UNITS_PER_SEC * (LATENCY_MS / 1000.0);
    let limit = ((rate as f64 * latency / TIME_UNITS_PER_SEC) as u32).wrapping_add(burst);
    (rate, limit, buffer)
}

/// C's `%g` for the small positive values tc prints.
fn fmt_g(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    // %g keeps 6 significant digits; the values here are well inside that.
    s.to_string()
}

/// tc's `sprint_rate` (bits, SI units).
fn tc_rate(rate_bytes: u64) -> String {
    let units = ["", "K", "M", "G", "T"];
    let mut rate = rate_bytes << 3;
    let mut i = 0;
    while i < units.len() - 1 {
        if rate < 1000 || (rate % 1000 != 0 && rate < 1000 * 1000) {
            break;
        }
        rate /= 1000;
        i += 1;
    }
    format!("{rate}{}bit", units[i])
}

/// tc's `sprint_size`.
fn tc_size(sz: u32) -> String {
    let tmp = f64::from(sz);
    let mb = 1024.0 * 1024.0;
    if sz >= 1024 * 1024 && (mb * (tmp / mb).round() - tmp).abs() < 1024.0 {
        format!("{}Mb", fmt_g((tmp / mb).round()))
    } else if sz >= 1024 && (1024.0 * (tmp / 1024.0).round() - tmp).abs() < 16.0 {
        format!("{}Kb", fmt_g((tmp / 1024.0).round()))
    } else {
        format!("{sz}b")
    }
}

/// tc's `sprint_time` (µs in).
fn tc_time(t: u32) -> String {
    let tmp = f64::from(t);
    if tmp >= TIME_UNITS_PER_SEC {
        format!("{}s", fmt_g(tmp / TIME_UNITS_PER_SEC))
    } else if tmp >= TIME_UNITS_PER_SEC / 1000.0 {
        format!("{}ms", fmt_g(tmp / 1000.0))
    } else {
        format!("{t}us")
    }
}

/// The `rate … burst … lat …` part of `tc qdisc show` for a TBF made from these settings.
pub(crate) fn tbf_params(rate_bits: u64, burst_bits: u64) -> String {
    let (rate, limit, buffer) = tbf_values(rate_bits, burst_bits);
    if rate == 0 {
        return String::new();
    }
    let t2t = (f64::from(buffer) / TICK_IN_USEC) as u32;
    let burst = (rate as f64 * f64::from(t2t) / TIME_UNITS_PER_SEC) as u32;
    let lat = TIME_UNITS_PER_SEC * (f64::from(limit) / rate as f64) - f64::from(t2t);
    let mut s = format!("rate {} burst {}", tc_rate(rate), tc_size(burst));
    if lat >= 0.0 {
        s.push_str(&format!(" lat {}", tc_time(lat as u32)));
    }
    s
}

/// `refcnt` as `tc` shows it: tx queues + 1. Veths got 2 queues on the 2-CPU machine the
/// reference capture was taken on; an ifb has one.
fn refcnt(host: &Host, dev: &str) -> u32 {
    match host.root.links.get(dev).map(|l| &l.kind) {
        Some(LinkKind::Veth { .. }) => 3,
        _ => 2,
    }
}

/// `createTBF`: a root TBF on `dev`; a second root qdisc is refused like the kernel does.
fn create_tbf(host: &mut Host, dev: &str, rate: u64, burst: u64) -> Result<(), CniError> {
    if host.qdiscs.iter().any(|q| q.dev == dev && q.kind == "tbf") {
        return Err(CniError::internal("create qdisc: file exists"));
    }
    let params = format!(
        "root refcnt {} {}",
        refcnt(host, dev),
        tbf_params(rate, burst)
    );
    host.qdiscs.push(Qdisc {
        dev: dev.to_string(),
        kind: "tbf".into(),
        params,
    });
    Ok(())
}

/// `getHostInterface`: the prevResult interface (no sandbox) that is the veth peer of
/// CNI_IFNAME in the sandbox.
fn host_interface(
    host: &Host,
    interfaces: &[Interface],
    env: &CniEnv,
) -> Result<Interface, CniError> {
    if interfaces.is_empty() {
        return Err(CniError::internal("no interfaces provided"));
    }
    let link = host
        .netns
        .get(&env.netns)
        .and_then(|ns| ns.links.get(&env.ifname));
    let peer = match link.map(|l| &l.kind) {
        Some(LinkKind::Veth { peer, peer_netns }) if peer_netns.is_none() => peer.clone(),
        Some(_) => {
            return Err(CniError::internal(format!(
                "container interface {} has no veth peer: interface {} was not a veth interface",
                env.ifname,
                go_quote(&env.ifname)
            )));
        }
        None => {
            return Err(CniError::internal(format!(
                "container interface {} has no veth peer: could not look up {}: Link not found",
                env.ifname,
                go_quote(&env.ifname)
            )));
        }
    };
    interfaces
        .iter()
        .find(|i| i.sandbox_path().is_empty() && i.name == peer)
        .cloned()
        .ok_or_else(|| CniError::internal("no veth peer of container interface found in host ns"))
}

/// 1.1.1 formats the *handle* (nil) instead of the path: `failed to open netns %!q(<nil>): …`.
fn netns_err(path: &str) -> CniError {
    CniError::internal(format!(
        "failed to open netns %!q(<nil>): {}",
        common::statfs_missing(path)
    ))
}

impl Bandwidth {
    fn cmd_add(&self, host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let bw = parse_bandwidth(stdin).map_err(CniError::internal)?;
        let prev = stdin.prev_result.clone();
        let bw = match bw {
            Some(b) if !b.is_zero() => b,
            _ => {
                return Ok(match prev {
                    // Printed as it came in: the same result, shared rather than copied.
                    Some(p) if p.cni_version == stdin.cni_version() => PluginOutput::Result(p),
                    Some(p) => PluginOutput::Result(Arc::new(CniResult {
                        cni_version: stdin.cni_version().into(),
                        ..p.as_ref().clone()
                    })),
                    // Go would print a nil result (a panic); nothing useful is printed.
                    None => PluginOutput::Empty,
                });
            }
        };
        let Some(prev) = prev else {
            return Err(CniError::internal("must be called as chained plugin"));
        };
        let mut result = CniResult {
            cni_version: stdin.cni_version().into(),
            ..prev.as_ref().clone()
        };
        if !common::netns_exists(host, &env.netns) {
            return Err(netns_err(&env.netns));
        }
        let host_if = host_interface(host, &result.interfaces, env)?;
        let Some(host_link) = host.root.links.get(&host_if.name).cloned() else {
            return Err(CniError::internal(format!(
                "get host device: Link not found ({})",
                host_if.name
            )));
        };
        if bw.ingress_rate > 0 && bw.ingress_burst > 0 {
            create_tbf(host, &host_if.name, bw.ingress_rate, bw.ingress_burst)?;
        }
        if bw.egress_rate > 0 && bw.egress_burst > 0 {
            let ifb = ifb_name(stdin.network_name(), &env.container_id);
            if host.root.links.contains_key(&ifb) {
                return Err(CniError::internal("adding link: file exists"));
            }
            let mac = Mac(hash::mac_bytes(&[&host.node, &ifb]));
            let mut link = Link::new(&ifb, LinkKind::Ifb, mac, host_link.mtu);
            link.up = true;
            host.root.links.insert(ifb.clone(), link);
            result.interfaces.push(Interface {
                name: ifb.as_str().into(),
                mac: mac.into(),
                ..Default::default()
            });
            if host
                .qdiscs
                .iter()
                .any(|q| q.dev == host_if.name && q.kind == "ingress")
            {
                return Err(CniError::internal("create ingress qdisc: file exists"));
            }
            host.qdiscs.push(Qdisc {
                dev: host_if.name.to_string(),
                kind: "ingress".into(),
                params: "parent ffff:fff1 ----------------".into(),
            });
            create_tbf(host, &ifb, bw.egress_rate, bw.egress_burst)
                .map_err(|e| CniError::internal(format!("create ifb qdisc: {}", e.msg)))?;
        }
        Ok(PluginOutput::Result(Arc::new(result)))
    }

    fn cmd_del(&self, host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        parse_bandwidth(stdin).map_err(CniError::internal)?;
        let ifb = ifb_name(stdin.network_name(), &env.container_id);
        // TeardownIfb: a missing link is fine; the ifb's qdiscs go with it.
        host.root.links.remove(&ifb);
        host.qdiscs.retain(|q| q.dev != ifb);
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(
        &self,
        host: &mut Host,
        env: &CniEnv,
        stdin: &Stdin,
        release: PluginsRelease,
    ) -> PluginReply {
        let bw = parse_bandwidth(stdin).map_err(CniError::internal)?;
        let Some(prev) = &stdin.prev_result else {
            return Err(CniError::internal("must be called as a chained plugin"));
        };
        if !common::netns_exists(host, &env.netns) {
            return Err(netns_err(&env.netns));
        }
        let host_if = host_interface(host, &prev.interfaces, env)?;
        // No limits at all: v1.1.1 reads `bandwidth.IngressRate` through a nil pointer and
        // panics (main.go:301; Debian's binary exits 2 with this trace). v1.9.1 returns
        // early instead (8c4a6b3b "bandwidth: handle nil bandwidth in CHECK", issue #1221).
        let Some(bw) = bw else {
            return match release {
                PluginsRelease::V1_1_1 => Err(common::go_panic(NIL_DEREFERENCE)),
                PluginsRelease::V1_9_1 => Ok(PluginOutput::Empty),
            };
        };
        let check = |dev: &str, rate: u64, burst: u64| -> Result<(), CniError> {
            let qs: Vec<&Qdisc> = host.qdiscs.iter().filter(|q| q.dev == dev).collect();
            if qs.is_empty() {
                return Err(CniError::internal("Failed to find qdisc"));
            }
            let want = tbf_params(rate, burst);
            for q in qs {
                if q.kind != "tbf" {
                    break;
                }
                let have = q.params.as_str();
                let field = |s: &str, k: &str| {
                    s.split(' ')
                        .skip_while(|w| *w != k)
                        .nth(1)
                        .map(str::to_string)
                };
                if field(have, "rate") != field(&want, "rate") {
                    return Err(CniError::internal("Rate doesn't match"));
                }
                if field(have, "lat") != field(&want, "lat") {
                    return Err(CniError::internal("Limit doesn't match"));
                }
                if field(have, "burst") != field(&want, "burst") {
                    return Err(CniError::internal("Buffer doesn't match"));
                }
            }
            Ok(())
        };
        if bw.ingress_rate > 0 && bw.ingress_burst > 0 {
            check(&host_if.name, bw.ingress_rate, bw.ingress_burst)?;
        }
        if bw.egress_rate > 0 && bw.egress_burst > 0 {
            let ifb = ifb_name(stdin.network_name(), &env.container_id);
            if !host.root.links.contains_key(&ifb) {
                return Err(CniError::internal("get ifb device: Link not found"));
            }
            check(&ifb, bw.egress_rate, bw.egress_burst)?;
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Bandwidth {
    fn type_name(&self) -> &'static str {
        "bandwidth"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        VERSIONS_FROM_030
    }

    fn is_reference_plugin(&self) -> bool {
        true
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx.host, env, stdin),
            CniCommand::Del => self.cmd_del(ctx.host, env, stdin),
            CniCommand::Check => self.cmd_check(ctx.host, env, stdin, ctx.registry.release()),
            // "FIXME GC" / "FIXME Status".
            CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(VERSIONS_FROM_030),
        }
    }
}
