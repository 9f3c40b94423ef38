//! The `macvlan` plugin (`containernetworking/plugins:plugins/main/macvlan/macvlan.go`): a
//! macvlan on a master link of the node (`ip link add … link eth0 type macvlan mode
//! bridge`), made in the pod's namespace under `CNI_IFNAME`, with its own MAC on the
//! master's wire, addressed by the delegated IPAM.
//!
//! The model follows HEAD (the release the lab's VERSION answers), checked against Debian's
//! 1.1.1 binary by `tests/underlay_differential.rs`; the differences from 1.1.1 are listed
//! there. Rules worth knowing, each as upstream has it:
//! - `master` defaults to the interface of the node's default route; it is looked up for
//!   its MTU first, so a missing master is the bare `Link not found`.
//! - modes `""`/`bridge`/`private`/`vepa`/`passthru` (there is no `source`); `mtu` 0
//!   inherits the master's, more than the master's is refused.
//! - MAC: `runtimeConfig.mac` > CNI_ARGS `MAC` > `mac`; the kernel draws a random one
//!   otherwise, the lab derives one from (node, container, ifname). `passthru` takes the
//!   master's MAC (even with a `mac` set), and a master in passthru takes no second
//!   macvlan (`invalid argument`).
//! - the result's `dns` is the config's, replacing the IPAM's.
//! - **the leak:** when the IPAM fails (or returns no IP) the macvlan stays in the pod,
//!   DOWN: cmdAdd's cleanup `defer` tests an `err` the IPAM block shadowed.
//! - DEL: IPAM DEL first, then the link; an empty or vanished netns is success.
//!
//! Differences in 1.1.1 (`cni plugins 1.1.1`, checked in the differential): its CHECK errors start upper-case
//! (`Container macvlan mode bridge does not match expected value: vepa`, `Sandbox in
//! prevResult …`); 1.1.1 ignores `linkInContainer` and `bcqueuelen`, which the lab parses
//! but does not model (the master is always a link of the node's namespace).

use super::common::{self, GoConf, go_quote};
use crate::cni::host::{Host, Link, LinkKind, Lower, Mac};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Dns, Interface};
use crate::util::hash;
use serde_json::Value;

/// The `macvlan` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Macvlan;

/// The parsed `NetConf` of macvlan.go, after `loadConf` (master resolved, MAC chosen).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MacvlanConf {
    /// `master` (the default-route interface when empty).
    pub master: String,
    /// `mode` as written ("" = bridge).
    pub mode: String,
    /// `mtu` (0 = the master's).
    pub mtu: i64,
    /// The MAC to set, from `runtimeConfig.mac`, CNI_ARGS `MAC` or `mac`.
    pub mac: String,
    /// `ipam.type` ("" = L2 only).
    pub ipam_type: String,
    /// The config's `dns` (always copied into the result).
    pub dns: Dns,
}

/// The JSON decode shared by macvlan and ipvlan: `failed to load netconf: <json error>`.
pub(crate) fn decode_err(e: String) -> CniError {
    CniError::internal(format!("failed to load netconf: {e}"))
}

/// The config's `dns` (`types.DNS`), empty when absent.
pub(crate) fn conf_dns(conf: &Value) -> Result<Dns, CniError> {
    match conf.get("dns").filter(|d| !d.is_null()) {
        None => Ok(Dns::default()),
        Some(d) => serde_json::from_value(d.clone()).map_err(|e| decode_err(format!("json: {e}"))),
    }
}

/// `modeFromString`: the kernel's name of a mode as written.
pub(crate) fn mode_from_string(s: &str) -> Result<&'static str, CniError> {
    match s {
        "" | "bridge" => Ok("bridge"),
        "private" => Ok("private"),
        "vepa" => Ok("vepa"),
        "passthru" => Ok("passthru"),
        other => Err(CniError::internal(format!(
            "unknown macvlan mode: {}",
            go_quote(other)
        ))),
    }
}

/// `loadConf`: decode, resolve the master (default route), bound the MTU by the master's,
/// then the MAC sources in priority order.
pub(crate) fn load_conf(host: &Host, stdin: &Stdin, env: &CniEnv) -> Result<MacvlanConf, CniError> {
    let conf = stdin.conf.as_ref();
    let g = GoConf::new(conf, "NetConf");
    let mut master = g.string("master").map_err(decode_err)?.unwrap_or_default();
    let mode = g.string("mode").map_err(decode_err)?.unwrap_or_default();
    let mtu = g.int("mtu").map_err(decode_err)?.unwrap_or(0);
    let mut mac = g.string("mac").map_err(decode_err)?.unwrap_or_default();
    g.bool("linkInContainer").map_err(decode_err)?;
    g.uint("bcqueuelen").map_err(decode_err)?;
    let ipam_type = g.ipam_type().map_err(decode_err)?;
    let dns = conf_dns(conf)?;
    if master.is_empty() {
        master = common::default_route_iface(&host.root)
            .ok_or_else(|| CniError::internal("no default route interface found"))?;
    }
    // getMTUByName: netlink's bare error.
    let Some(m) = host.root.links.get(&master) else {
        return Err(CniError::internal("Link not found"));
    };
    if mtu < 0 || mtu > i64::from(m.mtu) {
        return Err(CniError::internal(format!(
            "invalid MTU {mtu}, must be [0, master MTU({})]",
            m.mtu
        )));
    }
    for (k, v) in common::load_args(&env.args, &["MAC"]).map_err(CniError::internal)? {
        if k == "MAC" && !v.is_empty() {
            mac = v;
        }
    }
    if let Some(m) = runtime_mac(stdin) {
        mac = m;
    }
    Ok(MacvlanConf {
        master,
        mode,
        mtu,
        mac,
        ipam_type,
        dns,
    })
}

/// `runtimeConfig.mac`, when set and non-empty.
pub(crate) fn runtime_mac(stdin: &Stdin) -> Option<String> {
    stdin
        .runtime_config
        .as_deref()
        .or_else(|| stdin.conf.get("runtimeConfig"))
        .and_then(|rc| rc.get("mac"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
}

/// The macvlans (in any namespace) whose lower device is the host link `master`, with
/// their modes.
fn macvlans_on(host: &Host, master: &str) -> Vec<String> {
    std::iter::once(&host.root)
        .chain(host.netns.values())
        .flat_map(|ns| ns.links.values())
        .filter_map(|l| match &l.kind {
            LinkKind::Macvlan(lower) if lower.master == master => Some(lower.mode.clone()),
            _ => None,
        })
        .collect()
}

/// `createMacvlan`: the link, made DOWN in the pod's namespace and renamed to `ifname`
/// (a name already taken there is `file exists`, and the new link is deleted again).
fn create_macvlan(
    host: &mut Host,
    conf: &MacvlanConf,
    env: &CniEnv,
) -> Result<Interface, CniError> {
    let mode = mode_from_string(&conf.mode)?;
    let Some(master) = host.root.links.get(&conf.master) else {
        return Err(CniError::internal(format!(
            "failed to lookup master {}: Link not found",
            go_quote(&conf.master)
        )));
    };
    let mut mac = if conf.mac.is_empty() {
        Mac(hash::mac_bytes(&[
            &host.node,
            &env.container_id,
            &env.ifname,
            "macvlan",
        ]))
    } else {
        common::parse_mac(&conf.mac).map_err(|e| {
            CniError::internal(format!("invalid args {} for MAC addr: {e}", conf.mac))
        })?
    };
    // The kernel (drivers/net/macvlan.c macvlan_common_newlink): a port in passthru mode
    // takes no second macvlan, and passthru needs a port with none yet.
    let existing = macvlans_on(host, &conf.master);
    if existing.iter().any(|m| m == "passthru") || (mode == "passthru" && !existing.is_empty()) {
        return Err(CniError::internal(
            "failed to create macvlan: invalid argument",
        ));
    }
    if mode == "passthru" {
        // The kernel gives a passthru macvlan its lower device's address, even when one
        // was asked for (checked against Debian's 1.1.1 on 6.1).
        mac = master.mac;
    }
    let mtu = if conf.mtu == 0 {
        master.mtu
    } else {
        u32::try_from(conf.mtu).unwrap_or(master.mtu)
    };
    let ns_path = common::sandbox(host, &env.netns);
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(common::netns_open_error(&env.netns));
    };
    if ns.links.contains_key(&env.ifname) {
        return Err(CniError::internal(format!(
            "failed to rename macvlan to {}: file exists",
            go_quote(&env.ifname)
        )));
    }
    let link = Link::new(
        &env.ifname,
        LinkKind::Macvlan(Box::new(Lower {
            master: conf.master.clone(),
            mode: mode.to_string(),
        })),
        mac,
        mtu,
    );
    ns.links.insert(env.ifname.clone(), link);
    Ok(Interface {
        name: (&*env.ifname).into(),
        mac: mac.into(),
        mtu: 0,
        sandbox: ns_path,
    })
}

/// The error of `ns.GetNS` in macvlan's and ipvlan's cmdAdd, which format the (nil) netns
/// object with `%q`: `failed to open netns %!q(<nil>): …`.
pub(crate) fn add_netns_error(path: &str) -> CniError {
    CniError::internal(format!(
        "failed to open netns %!q(<nil>): {}",
        common::statfs_missing(path)
    ))
}

/// The layer-3 half of macvlan's and ipvlan's cmdAdd: IPAM ADD, the addresses on the
/// link (interface 0) and its routes. On failure the link is left where it is (the
/// upstream leak); a failure after IPAM succeeded releases the address.
pub(crate) fn add_layer3(
    ctx: &mut PluginCtx<'_>,
    ipam_type: &str,
    env: &CniEnv,
    stdin: &Stdin,
    result: &mut CniResult,
) -> Result<(), CniError> {
    let ipam = common::exec_ipam(ctx, ipam_type, CniCommand::Add, env, stdin)?;
    if ipam.ips.is_empty() {
        // The shadowed `err` is nil here: neither the IPAM DEL nor the link cleanup runs.
        return Err(CniError::internal("IPAM plugin returned missing IP config"));
    }
    result.ips = ipam.ips;
    result.routes = ipam.routes;
    for ip in &mut result.ips {
        ip.interface = Some(crate::cni::types::IfIndex::new(0));
    }
    for fam in ["net.ipv4.conf", "net.ipv6.conf"] {
        let leaf = if fam.contains("ipv4") {
            "arp_notify"
        } else {
            "ndisc_notify"
        };
        let key = format!("{fam}.{}.{leaf}", env.ifname);
        ctx.host.set_sysctl(&env.netns, &key, "1");
    }
    if let Err(e) = common::configure_iface(ctx.host, &env.netns, &env.ifname, result) {
        let _ = common::exec_ipam(ctx, ipam_type, CniCommand::Del, env, stdin);
        return Err(e);
    }
    Ok(())
}

/// Bring a link of the pod up (the L2-only path).
pub(crate) fn set_up(host: &mut Host, env: &CniEnv) -> Result<(), CniError> {
    match host
        .netns
        .get_mut(&env.netns)
        .and_then(|ns| ns.links.get_mut(&env.ifname))
    {
        Some(l) => {
            l.up = true;
            Ok(())
        }
        None => Err(CniError::internal(format!(
            "failed to find interface name {}: Link not found",
            go_quote(&env.ifname)
        ))),
    }
}

/// macvlan's and ipvlan's cmdDel: IPAM DEL, then the link; an empty or missing netns and
/// a missing link are success.
pub(crate) fn del_link_and_ipam(
    ctx: &mut PluginCtx<'_>,
    env: &CniEnv,
    stdin: &Stdin,
) -> PluginReply {
    let g = GoConf::new(stdin.conf.as_ref(), "NetConf");
    let ipam_type = g
        .ipam_type()
        .map_err(|e| CniError::internal(format!("failed to load netConf: {e}")))?;
    if !ipam_type.is_empty() {
        common::exec_ipam(ctx, &ipam_type, CniCommand::Del, env, stdin)?;
    }
    if env.netns.is_empty() || !common::netns_exists(ctx.host, &env.netns) {
        return Ok(PluginOutput::Empty);
    }
    common::del_link(ctx.host, &env.netns, &env.ifname);
    Ok(PluginOutput::Empty)
}

/// The prevResult's interface that is `ifname` in `netns`, for CHECK.
pub(crate) fn cont_interface(prev: &CniResult, env: &CniEnv) -> Interface {
    prev.interfaces
        .iter()
        .find(|i| i.name == env.ifname && i.sandbox_path() == &*env.netns)
        .cloned()
        .unwrap_or_default()
}

impl Macvlan {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(ctx.host, stdin, env)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(add_netns_error(&env.netns));
        }
        let iface = create_macvlan(ctx.host, &conf, env)?;
        let mut result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![iface].into(),
            ..Default::default()
        };
        if conf.ipam_type.is_empty() {
            set_up(ctx.host, env)?;
        } else {
            add_layer3(ctx, &conf.ipam_type, env, stdin, &mut result)?;
        }
        result.dns = conf.dns.boxed_if_set();
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(ctx.host, stdin, env)?;
        // v1.1.1 starts these messages upper-case (`git diff v1.1.1 v1.9.1 --
        // plugins/main/macvlan/macvlan.go`).
        let release = ctx.registry.release();
        let err = |msg: String| CniError::internal(release.capitalised_in_1_1_1(msg));
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(CniError::internal(format!(
                "failed to open netns {}: {}",
                go_quote(&env.netns),
                common::statfs_missing(&env.netns)
            )));
        }
        if !conf.ipam_type.is_empty() {
            common::exec_ipam(ctx, &conf.ipam_type, CniCommand::Check, env, stdin)?;
        }
        let Some(prev) = common::prev_result(stdin) else {
            return Err(err("required prevResult missing".into()));
        };
        let cont = cont_interface(&prev, env);
        if *env.netns != *cont.sandbox_path() {
            return Err(err(format!(
                "sandbox in prevResult {} doesn't match configured netns: {}",
                cont.sandbox_path(),
                env.netns
            )));
        }
        if !ctx.host.root.links.contains_key(&conf.master) {
            return Err(CniError::internal(format!(
                "failed to lookup master {}: Link not found",
                go_quote(&conf.master)
            )));
        }
        let Some(ns) = ctx.host.netns.get(&env.netns) else {
            return Err(common::netns_open_error(&env.netns));
        };
        let Some(link) = ns.links.get(&cont.name) else {
            return Err(err(format!(
                "container Interface name in prevResult: {} not found",
                cont.name
            )));
        };
        let LinkKind::Macvlan(lower) = &link.kind else {
            return Err(err(format!(
                "error: Container interface {} not of type macvlan",
                link.name
            )));
        };
        let mode = &lower.mode;
        let want = mode_from_string(&conf.mode)?;
        if mode != want {
            return Err(err(format!(
                "container macvlan mode {mode} does not match expected value: {want}"
            )));
        }
        if !cont.mac.is_empty() && cont.mac != link.mac {
            return Err(err(format!(
                "interface {} Mac {} doesn't match container Mac: {}",
                cont.name, cont.mac, link.mac
            )));
        }
        common::validate_ips_and_routes(ns, &env.ifname, &prev, ctx.registry.release())?;
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Macvlan {
    fn type_name(&self) -> &'static str {
        "macvlan"
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
            CniCommand::Del => del_link_and_ipam(ctx, env, stdin),
            CniCommand::Check => self.cmd_check(ctx, env, stdin),
            CniCommand::Status => {
                // cmdStatus: forward to IPAM ("TODO: Check if master interface exists").
                let g = GoConf::new(stdin.conf.as_ref(), "NetConf");
                let ipam = g.ipam_type().map_err(decode_err)?;
                if !ipam.is_empty() {
                    common::exec_ipam(ctx, &ipam, CniCommand::Status, env, stdin)?;
                }
                Ok(PluginOutput::Empty)
            }
            CniCommand::Gc => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cni::host::Netns;
    use crate::cni::registry::Registry;
    use serde_json::json;

    pub const NS: &str = "/var/run/netns/pod1";

    /// A node with `eth0` (default route) and a pod namespace.
    pub fn host() -> Host {
        let mut h = Host::new(
            "node-1",
            "192.168.0.10",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        h.netns.insert(NS, Netns::with_loopback());
        h
    }

    pub fn run(host: &mut Host, cmd: CniCommand, conf: &Value, args: &str) -> PluginReply {
        run_in(host, cmd, conf, args, NS, "net1")
    }

    pub(crate) fn run_in(
        host: &mut Host,
        cmd: CniCommand,
        conf: &Value,
        args: &str,
        netns: &str,
        ifname: &str,
    ) -> PluginReply {
        let registry = Registry::standard();
        let mut ctx = PluginCtx {
            host,
            registry: &registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let env = CniEnv {
            command: Some(cmd),
            container_id: "c1".into(),
            netns: netns.into(),
            ifname: ifname.into(),
            args: args.into(),
            path: "/opt/cni/bin".into(),
        };
        let ty = conf["type"].as_str().unwrap_or_default().to_string();
        let Some(p) = registry.find(&ty) else {
            panic!("no plugin {ty}");
        };
        crate::cni::skel::dispatch(p, &mut ctx, &env, &Stdin::from_conf(conf.clone()))
    }

    pub fn result(r: PluginReply) -> CniResult {
        match r {
            Ok(PluginOutput::Result(r)) => r.as_ref().clone(),
            other => panic!("expected a result, got {other:?}"),
        }
    }

    fn conf(extra: Value) -> Value {
        let mut c = json!({"cniVersion": "1.0.0", "name": "mv", "type": "macvlan",
            "ipam": {"type": "static", "addresses": [{"address": "10.10.0.5/24", "gateway": "10.10.0.1"}],
                "routes": [{"dst": "0.0.0.0/0"}, {"dst": "192.168.100.0/24", "gw": "10.10.0.254"}],
                "dns": {"nameservers": ["1.1.1.1"]}}});
        if let (Value::Object(m), Value::Object(e)) = (&mut c, extra) {
            m.extend(e);
        }
        c
    }

    #[test]
    fn add_makes_a_macvlan_on_the_default_route_interface() {
        let mut h = host();
        let r = result(run(&mut h, CniCommand::Add, &conf(json!({})), ""));
        assert_eq!(r.interfaces.len(), 1);
        assert_eq!(r.interfaces[0].sandbox_path(), NS);
        assert_eq!(r.ips[0].interface, Some(crate::cni::types::IfIndex::new(0)));
        assert_eq!(r.routes.len(), 2);
        // The config's (empty) dns replaces static's.
        assert!(r.dns().is_empty());
        let l = &h.netns[NS].links.get("net1").cloned().unwrap();
        assert_eq!(
            l.kind,
            LinkKind::Macvlan(Box::new(Lower {
                master: "eth0".into(),
                mode: "bridge".into()
            }))
        );
        assert!(l.up);
        assert_eq!(
            l.addrs,
            vec!["10.10.0.5/24".parse::<ipnet::IpNet>().unwrap()]
        );
        let routes: Vec<String> = h.netns[NS]
            .route_table()
            .iter()
            .map(|r| r.to_ip_route())
            .collect();
        assert_eq!(
            routes,
            vec![
                "default via 10.10.0.1 dev net1",
                "10.10.0.0/24 dev net1 proto kernel scope link src 10.10.0.5",
                "192.168.100.0/24 via 10.10.0.254 dev net1",
            ]
        );
        assert_eq!(h.sysctl(NS, "net.ipv4.conf.net1.arp_notify"), Some("1"));
        run(&mut h, CniCommand::Del, &conf(json!({})), "").unwrap();
        // The link's knobs go with it.
        assert_eq!(h.sysctl(NS, "net.ipv4.conf.net1.arp_notify"), None);
        assert!(h.netns[NS].route_table().is_empty());
    }

    #[test]
    fn config_errors_are_upstreams() {
        let mut h = host();
        let err =
            |h: &mut Host, extra: Value| run(h, CniCommand::Add, &conf(extra), "").unwrap_err().msg;
        assert_eq!(err(&mut h, json!({"master": "eth9"})), "Link not found");
        assert_eq!(
            err(&mut h, json!({"mode": "source"})),
            "unknown macvlan mode: \"source\""
        );
        assert_eq!(
            err(&mut h, json!({"mtu": 9000})),
            "invalid MTU 9000, must be [0, master MTU(1500)]"
        );
        assert_eq!(
            err(&mut h, json!({"mac": "zz:11"})),
            "invalid args zz:11 for MAC addr: address zz:11: invalid MAC address"
        );
        assert!(h.netns[NS].links.get("net1").is_none());
    }

    #[test]
    fn mac_precedence_runtime_then_args_then_conf() {
        let mut h = host();
        let c = conf(json!({"mac": "02:00:00:00:00:0c",
            "runtimeConfig": {"mac": "02:00:00:00:00:0r"}}));
        // An invalid runtime MAC shows which one won.
        assert!(
            run(
                &mut h,
                CniCommand::Add,
                &c,
                "IgnoreUnknown=1;MAC=02:00:00:00:00:0a"
            )
            .unwrap_err()
            .msg
            .contains("02:00:00:00:00:0r")
        );
        let c = conf(json!({"mac": "02:00:00:00:00:0c"}));
        // static rejects an unknown MAC= without IgnoreUnknown, as the real one does.
        let r = result(run(
            &mut h,
            CniCommand::Add,
            &c,
            "IgnoreUnknown=1;MAC=02:00:00:00:00:0A",
        ));
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:00:0a");
    }

    #[test]
    fn ipam_failure_leaks_the_link_down_and_del_is_idempotent() {
        let mut h = host();
        let c = conf(json!({"ipam": {"type": "static"}}));
        assert_eq!(
            run(&mut h, CniCommand::Add, &c, "").unwrap_err().msg,
            "IPAM plugin returned missing IP config"
        );
        let l = h.netns[NS].links.get("net1").cloned().unwrap();
        assert!(!l.up);
        for _ in 0..2 {
            assert!(matches!(
                run(&mut h, CniCommand::Del, &c, ""),
                Ok(PluginOutput::Empty)
            ));
        }
        assert!(h.netns[NS].links.get("net1").is_none());
        assert!(matches!(
            run_in(
                &mut h,
                CniCommand::Del,
                &c,
                "",
                "/var/run/netns/gone",
                "net1"
            ),
            Ok(PluginOutput::Empty)
        ));
    }

    #[test]
    fn passthru_takes_the_master_mac_and_refuses_a_second() {
        let mut h = host();
        let c = json!({"cniVersion": "1.0.0", "name": "mv", "type": "macvlan", "mode": "passthru"});
        let r = result(run(&mut h, CniCommand::Add, &c, ""));
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:00:01");
        assert_eq!(
            run_in(&mut h, CniCommand::Add, &c, "", NS, "net2")
                .unwrap_err()
                .msg,
            "failed to create macvlan: invalid argument"
        );
    }

    #[test]
    fn duplicate_ifname_and_check() {
        let mut h = host();
        let c = conf(json!({}));
        let r = result(run(&mut h, CniCommand::Add, &c, ""));
        assert_eq!(
            run(&mut h, CniCommand::Add, &c, "").unwrap_err().msg,
            "failed to rename macvlan to \"net1\": file exists"
        );
        let mut chk = c.clone();
        chk["prevResult"] = serde_json::to_value(&r).unwrap();
        let mut stdin = Stdin::from_conf(chk.clone());
        stdin.prev_result = Some(std::sync::Arc::new(r.clone()));
        let registry = Registry::standard();
        let mut ctx = PluginCtx {
            host: &mut h,
            registry: &registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let env = CniEnv {
            command: Some(CniCommand::Check),
            container_id: "c1".into(),
            netns: NS.into(),
            ifname: "net1".into(),
            args: String::new(),
            path: "/opt/cni/bin".into(),
        };
        assert!(Macvlan.invoke(&mut ctx, &env, &stdin).is_ok());
        let mut vepa = chk;
        vepa["mode"] = json!("vepa");
        let mut stdin2 = Stdin::from_conf(vepa);
        stdin2.prev_result = Some(std::sync::Arc::new(r));
        assert_eq!(
            Macvlan.invoke(&mut ctx, &env, &stdin2).unwrap_err().msg,
            "container macvlan mode bridge does not match expected value: vepa"
        );
    }
}
