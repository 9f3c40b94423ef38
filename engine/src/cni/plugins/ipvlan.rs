//! The `ipvlan` plugin (`containernetworking/plugins:plugins/main/ipvlan/ipvlan.go`, HEAD):
//! an ipvlan on a master link of the node, made in the pod's namespace under `CNI_IFNAME`.
//! Unlike a macvlan it has the **master's MAC**; pods are told apart by address only.
//!
//! Upstream's rules: modes `""`/`l2`/`l3`/`l3s`; an empty `master` comes from a prevResult
//! holding exactly one named interface (ipvlan chained after another plugin), else from the
//! node's default route; the IPAM is skipped when it is empty and the prevResult has IPs;
//! the result's `dns` is the config's. A failing rename or IPAM leaves the new link in the
//! pod (there is no cleanup at all in ipvlan's cmdAdd). The lab's kernel has ipvlan; the
//! Debian machine the differential runs on does not (`failed to create ipvlan: operation
//! not supported`), so only the errors before link creation are compared for real.

use super::common::{self, GoConf, go_quote};
use super::macvlan::{conf_dns, decode_err, del_link_and_ipam};
use crate::cni::host::{Host, Link, LinkKind, Lower};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, Interface};
use crate::util::hash;

/// The `ipvlan` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Ipvlan;

/// `modeFromString`: `""`/`l2`, `l3`, `l3s`.
pub(crate) fn mode_from_string(s: &str) -> Result<&'static str, CniError> {
    match s {
        "" | "l2" => Ok("l2"),
        "l3" => Ok("l3"),
        "l3s" => Ok("l3s"),
        other => Err(CniError::internal(format!(
            "unknown ipvlan mode: {}",
            go_quote(other)
        ))),
    }
}

/// `loadConf` (not for CHECK): the master from the config, the prevResult's single
/// interface, or the default route, in that order.
fn resolve_master(host: &Host, stdin: &Stdin, master: String) -> Result<String, CniError> {
    if !master.is_empty() {
        return Ok(master);
    }
    match &stdin.prev_result {
        None => common::default_route_iface(&host.root)
            .ok_or_else(|| CniError::internal("no default route interface found")),
        Some(prev) if prev.interfaces.len() == 1 && !prev.interfaces[0].name.is_empty() => {
            Ok(prev.interfaces[0].name.to_string())
        }
        Some(_) => Err(CniError::internal(
            "chained master failure. PrevResult lacks a single named interface",
        )),
    }
}

fn create_ipvlan(
    host: &mut Host,
    master: &str,
    mode: &str,
    mtu: i64,
    env: &CniEnv,
) -> Result<Interface, CniError> {
    let mode = mode_from_string(mode)?;
    let Some(m) = host.root.links.get(master) else {
        return Err(CniError::internal(format!(
            "failed to lookup master {}: Link not found",
            go_quote(master)
        )));
    };
    let mac = m.mac;
    let mtu = if mtu <= 0 {
        m.mtu
    } else {
        u32::try_from(mtu).unwrap_or(m.mtu)
    };
    let kind = LinkKind::Ipvlan(Box::new(Lower {
        master: master.to_string(),
        mode: mode.to_string(),
    }));
    let ns_path = common::sandbox(host, &env.netns);
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(common::netns_open_error(&env.netns));
    };
    if ns.links.contains_key(&env.ifname) {
        // Made under a random temporary name (`ip.RandomVethName`), which stays behind.
        let tmp = format!(
            "veth{}",
            hash::hex_id(&[&env.container_id, &env.ifname, "ipvlan-tmp"], 8)
        );
        ns.links
            .insert(tmp.clone(), Link::new(&tmp, kind, mac, mtu));
        return Err(CniError::internal(format!(
            "failed to rename ipvlan to {}: file exists",
            go_quote(&env.ifname)
        )));
    }
    ns.links
        .insert(env.ifname.clone(), Link::new(&env.ifname, kind, mac, mtu));
    Ok(Interface {
        name: (&*env.ifname).into(),
        mac: mac.into(),
        mtu: 0,
        sandbox: ns_path,
    })
}

impl Ipvlan {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = stdin.conf.as_ref();
        let g = GoConf::new(conf, "NetConf");
        let master = g.string("master").map_err(decode_err)?.unwrap_or_default();
        let mode = g.string("mode").map_err(decode_err)?.unwrap_or_default();
        let mtu = g.int("mtu").map_err(decode_err)?.unwrap_or(0);
        g.bool("linkInContainer").map_err(decode_err)?;
        let ipam_type = g.ipam_type().map_err(decode_err)?;
        let dns = conf_dns(conf)?;
        let master = resolve_master(ctx.host, stdin, master)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            // ipvlan quotes the path (macvlan formats the nil netns).
            return Err(common::netns_open_error(&env.netns));
        }
        let iface = create_ipvlan(ctx.host, &master, &mode, mtu, env)?;
        let mut result = match (&stdin.prev_result, ipam_type.is_empty()) {
            (Some(prev), true) if !prev.ips.is_empty() => prev.as_ref().clone(),
            _ => {
                let r = common::exec_ipam(ctx, &ipam_type, CniCommand::Add, env, stdin)?;
                if r.ips.is_empty() {
                    return Err(CniError::internal("IPAM plugin returned missing IP config"));
                }
                r
            }
        };
        result.cni_version = stdin.cni_version().into();
        for ip in &mut result.ips {
            ip.interface = Some(crate::cni::types::IfIndex::new(0));
        }
        result.interfaces = vec![iface].into();
        for key in [
            format!("net.ipv4.conf.{}.arp_notify", env.ifname),
            format!("net.ipv6.conf.{}.ndisc_notify", env.ifname),
        ] {
            ctx.host.set_sysctl(&env.netns, &key, "1");
        }
        if let Err(e) = common::configure_iface(ctx.host, &env.netns, &env.ifname, &result) {
            if !ipam_type.is_empty() {
                let _ = common::exec_ipam(ctx, &ipam_type, CniCommand::Del, env, stdin);
            }
            return Err(e);
        }
        result.dns = dns.boxed_if_set();
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let g = GoConf::new(stdin.conf.as_ref(), "NetConf");
        let mode = g.string("mode").map_err(decode_err)?.unwrap_or_default();
        let ipam_type = g.ipam_type().map_err(decode_err)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(common::netns_open_error(&env.netns));
        }
        if !ipam_type.is_empty() {
            common::exec_ipam(ctx, &ipam_type, CniCommand::Check, env, stdin)?;
        }
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("required prevResult missing"));
        };
        let cont = super::macvlan::cont_interface(&prev, env);
        if *env.netns != *cont.sandbox_path() {
            return Err(CniError::internal(format!(
                "sandbox in prevResult {} doesn't match configured netns: {}",
                cont.sandbox_path(),
                env.netns
            )));
        }
        let Some(ns) = ctx.host.netns.get(&env.netns) else {
            return Err(common::netns_open_error(&env.netns));
        };
        let Some(link) = ns.links.get(&cont.name) else {
            return Err(CniError::internal(format!(
                "container Interface name in prevResult: {} not found",
                cont.name
            )));
        };
        let LinkKind::Ipvlan(lower) = &link.kind else {
            return Err(CniError::internal(format!(
                "error: Container interface {} not of type ipvlan",
                link.name
            )));
        };
        let have = &lower.mode;
        let want = mode_from_string(&mode)?;
        if have != want {
            return Err(CniError::internal(format!(
                "container ipvlan mode {have} does not match expected value: {want}"
            )));
        }
        common::validate_ips_and_routes(ns, &env.ifname, &prev, ctx.registry.release())?;
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Ipvlan {
    fn type_name(&self) -> &'static str {
        "ipvlan"
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
            CniCommand::Status | CniCommand::Gc => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

/// The result of a chained ipvlan when the prevResult has addresses (kept for tests).
#[cfg(test)]
fn prev_with_ips() -> crate::cni::types::CniResult {
    crate::cni::types::CniResult {
        cni_version: "1.0.0".into(),
        interfaces: vec![Interface {
            name: "eth0".into(),
            ..Default::default()
        }]
        .into(),
        ips: vec![crate::cni::types::IpConfig {
            interface: Some(crate::cni::types::IfIndex::new(0)),
            address: "10.11.0.5/24".parse().unwrap(),
            gateway: None,
        }]
        .into(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::plugins::macvlan::tests::{NS, host, result, run};
    use serde_json::json;

    #[test]
    fn l2_ipvlan_has_the_master_mac() {
        let mut h = host();
        let c = json!({"cniVersion": "1.0.0", "name": "iv", "type": "ipvlan", "mode": "l3",
            "ipam": {"type": "static", "addresses": [{"address": "10.11.0.5/24"}]}});
        let r = result(run(&mut h, CniCommand::Add, &c, ""));
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:00:01");
        let l = h.netns[NS].links.get("net1").cloned().unwrap();
        assert_eq!(
            l.kind,
            LinkKind::Ipvlan(Box::new(Lower {
                master: "eth0".into(),
                mode: "l3".into()
            }))
        );
        assert!(l.up);
        assert!(matches!(
            run(&mut h, CniCommand::Del, &c, ""),
            Ok(PluginOutput::Empty)
        ));
        assert!(h.netns[NS].links.get("net1").is_none());
    }

    #[test]
    fn errors_before_the_link() {
        let mut h = host();
        let c = json!({"cniVersion": "1.0.0", "name": "iv", "type": "ipvlan", "mode": "l4",
            "ipam": {"type": "static"}});
        assert_eq!(
            run(&mut h, CniCommand::Add, &c, "").unwrap_err().msg,
            "unknown ipvlan mode: \"l4\""
        );
        let c = json!({"cniVersion": "1.0.0", "name": "iv", "type": "ipvlan", "master": "eth9"});
        assert_eq!(
            run(&mut h, CniCommand::Add, &c, "").unwrap_err().msg,
            "failed to lookup master \"eth9\": Link not found"
        );
        let c = json!({"cniVersion": "1.0.0", "name": "iv", "type": "ipvlan"});
        assert_eq!(
            run(&mut h, CniCommand::Add, &c, "").unwrap_err().msg,
            "no plugin name provided"
        );
    }

    #[test]
    fn chained_master_comes_from_the_prev_result() {
        let mut h = host();
        let prev = prev_with_ips();
        let stdin = Stdin {
            prev_result: Some(std::sync::Arc::new(prev)),
            ..Stdin::from_conf(json!({"cniVersion": "1.0.0", "name": "iv", "type": "ipvlan"}))
        };
        assert_eq!(resolve_master(&h, &stdin, String::new()).unwrap(), "eth0");
        let mut two = prev_with_ips();
        two.interfaces.push(Interface::default());
        let stdin = Stdin {
            prev_result: Some(std::sync::Arc::new(two)),
            ..stdin
        };
        assert_eq!(
            resolve_master(&h, &stdin, String::new()).unwrap_err().msg,
            "chained master failure. PrevResult lacks a single named interface"
        );
        h.root.routes.clear();
        let bare = Stdin::from_conf(json!({}));
        assert_eq!(
            resolve_master(&h, &bare, String::new()).unwrap_err().msg,
            "no default route interface found"
        );
    }
}
