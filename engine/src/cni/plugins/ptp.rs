//! The `ptp` plugin (`containernetworking/plugins:plugins/main/ptp/ptp.go`, HEAD): a veth
//! pair per pod with no bridge. The pod reaches everything through its gateway, which is
//! the host end of the veth: the host end holds the gateway as a /32, the node routes the
//! pod's address to the host end (`10.12.0.5 dev vethX scope host`), and the pod's own
//! prefix route is replaced by two routes through that gateway.
//!
//! Upstream's order, which decides what an error leaves behind: IPAM ADD first; IP
//! forwarding on; the veth (a taken `CNI_IFNAME` is `container veth name provided (…)
//! already exists`, and the address is released); the pod side (addresses, result routes,
//! then the gateway routes: an address without a gateway fails here and **the veth stays**);
//! the host side; `ipMasq` (bridge's SNAT chain). The result lists the host veth then the
//! pod's, with every address on interface 1; the config's `dns` replaces the IPAM's only
//! when set. DEL is IPAM DEL, then the link (idempotent; an empty or missing netns is fine).

use super::bridge::{host_veth_name, setup_ip_masq_all, teardown_ip_masq_all};
use super::common::{self, GoConf, go_quote};
use crate::cni::host::{Host, Link, LinkKind, Mac, RouteDst, RouteEntry};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Dns, Interface};
use crate::util::hash;
use ipnet::IpNet;
use std::net::IpAddr;

/// The `ptp` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ptp;

/// The parsed `NetConf` of ptp.go.
#[derive(Debug, Clone, PartialEq)]
struct PtpConf {
    name: String,
    ip_masq: bool,
    mtu: i64,
    ipam_type: String,
    /// The config's `dns` when `dnsConfSet`.
    dns: Option<Dns>,
}

fn load_conf(stdin: &Stdin) -> Result<PtpConf, CniError> {
    let conf = stdin.conf.as_ref();
    let err = |e: String| CniError::internal(format!("failed to load netconf: {e}"));
    let g = GoConf::new(conf, "NetConf");
    let dns = match conf.get("dns").filter(|d| !d.is_null()) {
        None => None,
        Some(d) => {
            let dns: Dns =
                serde_json::from_value(d.clone()).map_err(|e| err(format!("json: {e}")))?;
            let set = ["nameservers", "search", "options"]
                .iter()
                .any(|k| d.get(*k).is_some_and(|v| !v.is_null()))
                || !dns.domain.is_empty();
            set.then_some(dns)
        }
    };
    Ok(PtpConf {
        name: stdin.network_name().to_string(),
        ip_masq: g.bool("ipMasq").map_err(err)?.unwrap_or(false),
        mtu: g.int("mtu").map_err(err)?.unwrap_or(0),
        ipam_type: g.ipam_type().map_err(err)?,
        dns,
    })
}

/// netlink's `Route.String()` for the failing gateway route of an address without a
/// gateway (`Dst` is the nil IP's /32, which prints `<nil>`).
fn go_route(ifindex: u32, src: IpAddr) -> String {
    format!("{{Ifindex: {ifindex} Dst: <nil> Src: {src} Gw: <nil> Flags: [] Table: 0 Realm: 0}}")
}

/// `setupContainerVeth`: the pair, the pod side configured, the pod's routes rewritten.
fn setup_container_veth(
    host: &mut Host,
    conf: &PtpConf,
    env: &CniEnv,
    result: &mut CniResult,
) -> Result<(), CniError> {
    let Some(ns) = host.netns.get(&env.netns) else {
        return Err(common::netns_open_error(&env.netns));
    };
    if ns.links.contains_key(&env.ifname) {
        return Err(CniError::internal(format!(
            "container veth name provided ({}) already exists",
            env.ifname
        )));
    }
    let host_name = host_veth_name(host, &env.container_id, &env.ifname);
    let cont_mac = Mac(hash::mac_bytes(&[
        &host.node,
        &env.container_id,
        &env.ifname,
        "container",
    ]));
    let host_mac = Mac(hash::mac_bytes(&[
        &host.node,
        &env.container_id,
        &env.ifname,
        "host",
    ]));
    let mtu = u32::try_from(conf.mtu)
        .ok()
        .filter(|m| *m > 0)
        .unwrap_or(1500);
    let cont = Link::new(
        &env.ifname,
        LinkKind::Veth {
            peer: host_name.as_str().into(),
            peer_netns: None,
        },
        cont_mac,
        mtu,
    );
    let mut hostl = Link::new(
        &host_name,
        LinkKind::Veth {
            peer: (&*env.ifname).into(),
            peer_netns: host.netns.path(&env.netns).cloned(),
        },
        host_mac,
        mtu,
    );
    hostl.up = true;
    host.root.links.insert(host_name.clone(), hostl);
    if let Some(ns) = host.netns.get_mut(&env.netns) {
        ns.links.insert(env.ifname.clone(), cont);
    }
    for ip in &mut result.ips {
        ip.interface = Some(crate::cni::types::IfIndex::new(1));
    }
    result.interfaces = vec![
        Interface {
            name: host_name.into(),
            mac: host_mac.into(),
            ..Default::default()
        },
        Interface {
            name: (&*env.ifname).into(),
            mac: cont_mac.into(),
            mtu: 0,
            sandbox: common::sandbox(host, &env.netns),
        },
    ]
    .into();
    common::configure_iface(host, &env.netns, &env.ifname, result)?;
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(common::netns_open_error(&env.netns));
    };
    let ifindex = ns.links.get(&env.ifname).map_or(0, |l| l.ifindex());
    for ip in &result.ips {
        let addr = ip.address;
        let prefix = addr.trunc();
        ns.delete_connected(&env.ifname, prefix);
        let src = addr.addr();
        let Some(gateway) = ip.gateway else {
            // The nil gateway's /32 is a default route to the kernel.
            if ns.route_table().iter().any(|r| r.dst.is_default()) {
                return Err(CniError::internal(format!(
                    "failed to add route {}: file exists",
                    go_route(ifindex, src)
                )));
            }
            let mut r = RouteEntry::static_route(
                RouteDst::Default { v6: src.is_ipv6() },
                None,
                &env.ifname,
            );
            r.scope_link = true;
            r.set_src(Some(src));
            ns.routes.push(r);
            let mut r = RouteEntry::static_route(RouteDst::of_net(prefix), None, &env.ifname);
            r.set_src(Some(src));
            ns.routes.push(r);
            continue;
        };
        let mut gw_route = RouteEntry::static_route(RouteDst::Host(gateway), None, &env.ifname);
        gw_route.scope_link = true;
        gw_route.set_src(Some(src));
        ns.routes.push(gw_route);
        let mut net_route =
            RouteEntry::static_route(RouteDst::of_net(prefix), Some(gateway), &env.ifname);
        net_route.set_src(Some(src));
        ns.routes.push(net_route);
    }
    Ok(())
}

/// `setupHostVeth`: the gateway as a /32 on the host end and a host route to the pod.
fn setup_host_veth(host: &mut Host, veth: &str, result: &CniResult) -> Result<(), CniError> {
    let Some(link) = host.root.links.get_mut(veth) else {
        return Err(CniError::internal(format!(
            "failed to lookup {}: Link not found",
            go_quote(veth)
        )));
    };
    let mut routes = Vec::new();
    for ip in &result.ips {
        let addr = ip.address;
        let bits = if addr.addr().is_ipv4() { 32 } else { 128 };
        let Some(gateway) = ip.gateway else {
            // netlink sends the nil gateway's /32 with no address bytes: ERANGE (checked
            // against Debian's 1.1.1 ptp).
            return Err(CniError::internal(format!(
                "failed to add IP addr (&net.IPNet{{IP:net.IP(nil), Mask:net.IPMask{{{}}}}}) to veth: numerical result out of range",
                vec!["0xff"; bits / 8].join(", ")
            )));
        };
        let gw = IpNet::new(gateway, bits as u8).ok();
        if let Some(gw) = gw.filter(|g| !link.addrs.contains(g)) {
            link.addrs.push(gw);
        }
        let mut r = RouteEntry::static_route(RouteDst::Host(addr.addr()), None, veth);
        r.scope_host = true;
        routes.push(r);
    }
    for r in routes {
        if !host.root.routes.contains(&r) {
            host.root.routes.push(r);
        }
    }
    Ok(())
}

impl Ptp {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(stdin)?;
        let mut result = common::exec_ipam(ctx, &conf.ipam_type, CniCommand::Add, env, stdin)?;
        if result.ips.is_empty() {
            return Err(CniError::internal("IPAM plugin returned missing IP config"));
        }
        result.cni_version = stdin.cni_version().into();
        if let Err(e) = self.after_ipam(ctx.host, &conf, env, &mut result) {
            let _ = common::exec_ipam(ctx, &conf.ipam_type, CniCommand::Del, env, stdin);
            return Err(e);
        }
        if let Some(dns) = conf.dns {
            result.dns = dns.boxed_if_set();
        }
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    /// Everything after a successful IPAM ADD; an error here releases the address.
    fn after_ipam(
        &self,
        host: &mut Host,
        conf: &PtpConf,
        env: &CniEnv,
        result: &mut CniResult,
    ) -> Result<(), CniError> {
        // ip.EnableForward
        if result.ips.iter().any(|i| i.address.addr().is_ipv4()) {
            host.sysctls
                .insert("net.ipv4.ip_forward".into(), "1".into());
        }
        if result.ips.iter().any(|i| i.address.addr().is_ipv6()) {
            host.sysctls
                .insert("net.ipv6.conf.all.forwarding".into(), "1".into());
        }
        if !common::netns_exists(host, &env.netns) {
            return Err(common::netns_open_error(&env.netns));
        }
        setup_container_veth(host, conf, env, result)?;
        let veth = result.interfaces[0].name.clone();
        setup_host_veth(host, &veth, result)?;
        if conf.ip_masq {
            let addrs = result.ips.iter().map(|ip| ip.address);
            setup_ip_masq_all(host, &conf.name, &env.container_id, addrs);
        }
        Ok(())
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(stdin)?;
        common::exec_ipam(ctx, &conf.ipam_type, CniCommand::Del, env, stdin)?;
        if env.netns.is_empty() || !common::netns_exists(ctx.host, &env.netns) {
            return Ok(PluginOutput::Empty);
        }
        let Some(link) = common::del_link(ctx.host, &env.netns, &env.ifname) else {
            return Ok(PluginOutput::Empty);
        };
        if let LinkKind::Veth { peer, .. } = &link.kind {
            ctx.host.root.routes.retain(|r| r.dev != peer);
        }
        if conf.ip_masq {
            teardown_ip_masq_all(ctx.host, &conf.name, &env.container_id, &link.addrs);
        }
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(stdin)?;
        common::exec_ipam(ctx, &conf.ipam_type, CniCommand::Check, env, stdin)?;
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("Required prevResult missing"));
        };
        let Some(ns) = ctx.host.netns.get(&env.netns) else {
            return Err(CniError::internal(format!(
                "failed to open netns {}: {}",
                go_quote(&env.netns),
                common::statfs_missing(&env.netns)
            )));
        };
        if !ns.links.contains_key(&env.ifname) {
            return Err(CniError::internal(format!(
                "Interface name {} not found",
                env.ifname
            )));
        }
        common::validate_ips_and_routes(ns, &env.ifname, &prev, ctx.registry.release())?;
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Ptp {
    fn type_name(&self) -> &'static str {
        "ptp"
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
            CniCommand::Status => {
                let g = GoConf::new(stdin.conf.as_ref(), "NetConf");
                let ipam = g
                    .ipam_type()
                    .map_err(|e| CniError::internal(format!("failed to load netconf: {e}")))?;
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

/// The config's `ipMasq` rule text, for tests.
#[cfg(test)]
fn masq_rules(host: &Host) -> Vec<String> {
    host.netfilter
        .ip4
        .nat
        .chains()
        .keys()
        .map(|c| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::plugins::macvlan::tests::{NS, host, result, run_in};
    use serde_json::{Value, json};

    fn conf(addr: Value) -> Value {
        json!({"cniVersion": "1.0.0", "name": "pt", "type": "ptp", "mtu": 1400,
            "dns": {"nameservers": ["10.12.0.53"]},
            "ipam": {"type": "static", "addresses": [addr], "routes": [{"dst": "0.0.0.0/0"}]}})
    }

    #[test]
    fn add_routes_through_the_host_end() {
        let mut h = host();
        let c = conf(json!({"address": "10.12.0.5/24", "gateway": "10.12.0.1"}));
        let r = result(run_in(&mut h, CniCommand::Add, &c, "", NS, "net6"));
        assert_eq!(r.interfaces.len(), 2);
        assert_eq!(r.ips[0].interface, Some(crate::cni::types::IfIndex::new(1)));
        assert_eq!(r.dns().nameservers, vec!["10.12.0.53".to_string()]);
        let veth = &r.interfaces[0].name;
        assert_eq!(
            h.root.links.get(veth).unwrap().addrs,
            vec!["10.12.0.1/32".parse::<ipnet::IpNet>().unwrap()]
        );
        let host_routes: Vec<String> = h.route_table().iter().map(|r| r.to_ip_route()).collect();
        assert!(
            host_routes.contains(&format!("10.12.0.5 dev {veth} scope host")),
            "{host_routes:?}"
        );
        let pod: Vec<String> = h.netns[NS]
            .route_table()
            .iter()
            .map(|r| r.to_ip_route())
            .collect();
        assert_eq!(
            pod,
            vec![
                "default via 10.12.0.1 dev net6",
                "10.12.0.0/24 via 10.12.0.1 dev net6 src 10.12.0.5",
                "10.12.0.1 dev net6 scope link src 10.12.0.5",
            ]
        );
        assert_eq!(
            h.sysctls
                .get("net.ipv4.ip_forward")
                .map(compact_str::CompactString::as_str),
            Some("1")
        );
        for _ in 0..2 {
            assert!(matches!(
                run_in(&mut h, CniCommand::Del, &c, "", NS, "net6"),
                Ok(PluginOutput::Empty)
            ));
        }
        assert!(h.root.links.get(veth).is_none());
        assert!(!h.route_table().iter().any(|r| r.dev == veth));
    }

    #[test]
    fn errors_and_the_veth_leak() {
        let mut h = host();
        let c = conf(json!({"address": "10.13.0.5/24"}));
        let e = run_in(&mut h, CniCommand::Add, &c, "", NS, "net6").unwrap_err();
        assert!(
            e.msg.starts_with("failed to add route {Ifindex: "),
            "{}",
            e.msg
        );
        assert!(
            e.msg
                .ends_with("Src: 10.13.0.5 Gw: <nil> Flags: [] Table: 0 Realm: 0}: file exists")
        );
        assert!(h.netns[NS].links.get("net6").is_some());
        let e = run_in(&mut h, CniCommand::Add, &c, "", NS, "net6").unwrap_err();
        assert_eq!(e.msg, "container veth name provided (net6) already exists");
        let bare = json!({"cniVersion": "1.0.0", "name": "pt", "type": "ptp"});
        assert_eq!(
            run_in(&mut h, CniCommand::Add, &bare, "", NS, "net7")
                .unwrap_err()
                .msg,
            "no plugin name provided"
        );
    }

    #[test]
    fn ip_masq_adds_the_snat_chain() {
        let mut h = host();
        let mut c = conf(json!({"address": "10.12.0.5/24", "gateway": "10.12.0.1"}));
        c["ipMasq"] = json!(true);
        result(run_in(&mut h, CniCommand::Add, &c, "", NS, "net6"));
        let chain = common::format_chain_name("pt", "c1");
        assert!(masq_rules(&h).iter().any(|l| l.contains(&chain)));
        run_in(&mut h, CniCommand::Del, &c, "", NS, "net6").unwrap();
        assert!(!masq_rules(&h).iter().any(|l| l.contains(&chain)));
    }
}
