//! The `static` IPAM plugin (`containernetworking/plugins:plugins/ipam/static/main.go`):
//! addresses, routes and DNS written in the config, handed back as they are. Nothing is
//! stored, so DEL is a no-op.
//!
//! Where the addresses come from, in the order the real `LoadIPAMConfig` applies them
//! (checked against Debian's 1.1.1 binary, `tests/underlay_differential.rs`):
//! `ipam.addresses`; CNI_ARGS `IP=a,b` **appends** and `GATEWAY=g` sets the gateway of every
//! address whose subnet holds `g`; `args.cni.ips` **replaces** them; `runtimeConfig.ips`
//! replaces them again and wins. With a 0.1.0/0.2.0 config only one address per family is
//! allowed. 1.1.1 and HEAD agree on everything modelled here.

use super::common::{self, GoConf};
use super::host_local::range::Cidr;
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Dns, IpConfig, Route};
use crate::cni::version;
use serde_json::Value;
use std::net::IpAddr;

/// The `static` IPAM plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct StaticIpam;

/// One address of the config (`main.Address`): the CIDR as parsed and its gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Address {
    cidr: Cidr,
    gateway: Option<IpAddr>,
}

/// The `IPAMConfig` static acts on, after every source of addresses is applied.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct StaticConf {
    addresses: Vec<Address>,
    routes: Vec<Route>,
    dns: Dns,
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    super::host_local::range::parse_ip(s)
}

/// `net.ParseCIDR` of one `ips` entry of `args.cni.ips` or `runtimeConfig.ips`.
fn ips_entry(v: &Value) -> Result<Address, CniError> {
    let s = v.as_str().unwrap_or_default();
    let cidr = Cidr::parse(s).map_err(|_| {
        CniError::internal(format!(
            "an entry in the 'ips' field is NOT in CIDR notation, got: '{s}'"
        ))
    })?;
    Ok(Address {
        cidr,
        gateway: None,
    })
}

/// `json.Unmarshal` of `ipam.addresses`, `ipam.routes` and `ipam.dns`.
fn decode_ipam(ipam: &Value) -> Result<StaticConf, CniError> {
    let err = CniError::internal;
    let g = GoConf::new(ipam, "IPAMConfig");
    let mut c = StaticConf::default();
    match ipam.get("addresses") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let Value::Object(o) = item else {
                    return Err(err(format!(
                        "json: cannot unmarshal {} into Go struct field IPAMConfig.ipam.addresses of type main.Address",
                        crate::cni::conf::go_json_kind(item)
                    )));
                };
                let sub = GoConf::new(item, "Address");
                let addr = sub.string("address").map_err(err)?.unwrap_or_default();
                let gateway = match o.get("gateway") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) if s.is_empty() => None,
                    Some(Value::String(s)) => {
                        Some(parse_ip(s).ok_or_else(|| err(format!("invalid IP address: {s}")))?)
                    }
                    Some(other) => {
                        return Err(err(format!(
                            "json: cannot unmarshal {} into Go struct field Address.ipam.addresses.gateway of type net.IP",
                            crate::cni::conf::go_json_kind(other)
                        )));
                    }
                };
                let cidr = Cidr::parse(&addr).map_err(|_| {
                    err(format!(
                        "the 'address' field is expected to be in CIDR notation, got: '{addr}'"
                    ))
                })?;
                c.addresses.push(Address { cidr, gateway });
            }
        }
        Some(other) => {
            return Err(err(format!(
                "json: cannot unmarshal {} into Go struct field IPAMConfig.ipam.addresses of type []main.Address",
                crate::cni::conf::go_json_kind(other)
            )));
        }
    }
    if let Some(Value::Array(items)) = ipam.get("routes") {
        for item in items {
            let dst = item.get("dst").and_then(Value::as_str).unwrap_or_default();
            let dst = Cidr::parse(dst).map_err(err)?;
            let gw = match item.get("gw").and_then(Value::as_str) {
                None | Some("") => None,
                Some(s) => {
                    Some(parse_ip(s).ok_or_else(|| err(format!("invalid IP address: {s}")))?)
                }
            };
            c.routes.push(Route {
                dst: Some(dst.net()),
                gw,
            });
        }
    }
    if let Some(d) = ipam.get("dns").filter(|d| !d.is_null()) {
        c.dns = serde_json::from_value(d.clone())
            .map_err(|e| err(format!("json: cannot unmarshal dns: {e}")))?;
    }
    // `type` must be a string if present.
    g.string("type").map_err(err)?;
    Ok(c)
}

/// `LoadIPAMConfig`: the config's addresses with the CNI_ARGS, `args.cni.ips` and
/// `runtimeConfig.ips` applied in that order, then the 0.2.0 one-per-family rule.
fn load_ipam_config(stdin: &Stdin, env_args: &str) -> Result<StaticConf, CniError> {
    let conf = stdin.conf.as_ref();
    let Some(ipam) = conf.get("ipam").filter(|v| !v.is_null()) else {
        return Err(CniError::internal("IPAM config missing 'ipam' key"));
    };
    let mut c = decode_ipam(ipam)?;
    if !env_args.is_empty() {
        let args = common::load_args(env_args, &["IP", "GATEWAY"]).map_err(CniError::internal)?;
        let get = |k: &str| {
            args.iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let ip = get("IP");
        if !ip.is_empty() {
            for item in ip.split(',') {
                let s = item.trim();
                let cidr = Cidr::parse(s).map_err(|_| {
                    CniError::internal(format!(
                        "the 'ip' field is expected to be in CIDR notation, got: '{s}'"
                    ))
                })?;
                c.addresses.push(Address {
                    cidr,
                    gateway: None,
                });
            }
        }
        let gws = get("GATEWAY");
        if !gws.is_empty() {
            for item in gws.split(',') {
                let Some(gw) = parse_ip(item.trim()) else {
                    return Err(CniError::internal(format!(
                        "invalid gateway address: {item}"
                    )));
                };
                for a in &mut c.addresses {
                    if cidr_contains(&a.cidr, gw) {
                        a.gateway = Some(gw);
                    }
                }
            }
        }
    }
    if let Some(Value::Array(ips)) = conf.pointer("/args/cni/ips") {
        if !ips.is_empty() {
            c.addresses = ips.iter().map(ips_entry).collect::<Result<_, _>>()?;
        }
    }
    let rc_ips = stdin
        .runtime_config
        .as_deref()
        .or_else(|| conf.get("runtimeConfig"))
        .and_then(|rc| rc.get("ips"))
        .and_then(Value::as_array);
    if let Some(ips) = rc_ips.filter(|a| !a.is_empty()) {
        c.addresses = ips.iter().map(ips_entry).collect::<Result<_, _>>()?;
    }
    let v4 = c.addresses.iter().filter(|a| a.cidr.ip.is_ipv4()).count();
    let v6 = c.addresses.len() - v4;
    if v4 > 1 || v6 > 1 {
        let cni_version = stdin.cni_version();
        if !version::gte(cni_version, "0.3.0").unwrap_or(false) {
            return Err(CniError::internal(format!(
                "CNI version {cni_version} does not support more than 1 address per family"
            )));
        }
    }
    Ok(c)
}

/// `net.IPNet.Contains` of a parsed CIDR.
fn cidr_contains(c: &Cidr, ip: IpAddr) -> bool {
    let Ok(net) = ipnet::IpNet::new(c.ip, c.prefix.min(if c.ip.is_ipv4() { 32 } else { 128 }))
    else {
        return false;
    };
    net.trunc().contains(&ip)
}

impl StaticIpam {
    fn cmd_add(&self, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = load_ipam_config(stdin, &env.args)?;
        let result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: Default::default(),
            ips: c
                .addresses
                .iter()
                .map(|a| IpConfig {
                    interface: None,
                    address: a.cidr.net(),
                    gateway: a.gateway,
                })
                .collect(),
            routes: c.routes.into(),
            dns: c.dns.boxed_if_set(),
            printed_as_current: false,
        };
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_check(&self, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = load_ipam_config(stdin, &env.args)?;
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("Required prevResult missing"));
        };
        for a in &c.addresses {
            for ip in &prev.ips {
                if ip.address.addr() != a.cidr.ip {
                    continue;
                }
                let ok = match a.gateway {
                    None => true,
                    Some(g) => ip.gateway == Some(g),
                };
                if ok {
                    break;
                }
                return Err(CniError::internal(format!(
                    "static: Failed to match addr {} on interface {}",
                    ip.address.addr(),
                    env.ifname
                )));
            }
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for StaticIpam {
    fn type_name(&self) -> &'static str {
        "static"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn is_reference_plugin(&self) -> bool {
        true
    }

    fn invoke(&self, _ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(env, stdin),
            CniCommand::Check => self.cmd_check(env, stdin),
            // cmdDel returns nil without reading anything; no GC or STATUS (FIXME upstream).
            CniCommand::Del | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::host::Host;
    use crate::cni::registry::Registry;
    use serde_json::json;

    fn run(conf: Value, args: &str, rc: Option<Value>) -> PluginReply {
        let mut host = Host::new(
            "node-1",
            "192.168.0.10",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        let registry = Registry::empty();
        let mut ctx = PluginCtx {
            host: &mut host,
            registry: &registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let env = CniEnv {
            command: Some(CniCommand::Add),
            container_id: "c1".into(),
            netns: "/var/run/netns/p".into(),
            ifname: "net1".into(),
            args: args.into(),
            path: "/opt/cni/bin".into(),
        };
        let mut stdin = Stdin::from_conf(conf);
        stdin.runtime_config = rc.map(std::sync::Arc::new);
        crate::cni::skel::dispatch(&StaticIpam, &mut ctx, &env, &stdin)
    }

    fn conf(ipam: Value) -> Value {
        json!({"cniVersion": "1.0.0", "name": "n", "type": "static", "ipam": ipam})
    }

    fn stdout(r: &PluginReply) -> String {
        let s = crate::cni::skel::stdout_of(r);
        let v: Value = serde_json::from_str(&s).unwrap();
        v.to_string()
    }

    #[test]
    fn addresses_routes_and_dns_pass_through() {
        let r = run(
            conf(json!({"type": "static",
                "addresses": [{"address": "10.10.0.5/24", "gateway": "10.10.0.1"}, {"address": "fd00::5/64"}],
                "routes": [{"dst": "0.0.0.0/0"}],
                "dns": {"nameservers": ["10.10.0.53"], "domain": "example.local"}})),
            "",
            None,
        );
        assert_eq!(
            stdout(&r),
            r#"{"cniVersion":"1.0.0","dns":{"domain":"example.local","nameservers":["10.10.0.53"]},"ips":[{"address":"10.10.0.5/24","gateway":"10.10.0.1"},{"address":"fd00::5/64"}],"routes":[{"dst":"0.0.0.0/0"}]}"#
        );
    }

    #[test]
    fn sources_append_replace_and_win() {
        let base = json!({"type": "static", "addresses": [{"address": "10.10.0.5/24"}]});
        let r = run(
            conf(base.clone()),
            "IP=10.20.0.7/24;GATEWAY=10.20.0.1",
            None,
        );
        let s = stdout(&r);
        assert!(
            s.contains(
                r#"{"address":"10.10.0.5/24"},{"address":"10.20.0.7/24","gateway":"10.20.0.1"}"#
            ),
            "{s}"
        );
        let mut c = conf(base.clone());
        c["args"] = json!({"cni": {"ips": ["10.30.0.9/24"]}});
        let s = stdout(&run(c.clone(), "IP=10.20.0.7/24", None));
        assert!(s.contains(r#""ips":[{"address":"10.30.0.9/24"}]"#), "{s}");
        let s = stdout(&run(c, "", Some(json!({"ips": ["10.40.0.1/16"]}))));
        assert!(s.contains(r#""ips":[{"address":"10.40.0.1/16"}]"#), "{s}");
    }

    #[test]
    fn errors_name_the_field() {
        let e = run(
            conf(json!({"type": "static", "addresses": [{"address": "10.10.0.5"}]})),
            "",
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.msg,
            "the 'address' field is expected to be in CIDR notation, got: '10.10.0.5'"
        );
        let e = run(conf(json!({"type": "static"})), "IP=10.20.0.7", None).unwrap_err();
        assert_eq!(
            e.msg,
            "the 'ip' field is expected to be in CIDR notation, got: '10.20.0.7'"
        );
        let e = run(
            json!({"cniVersion": "1.0.0", "name": "n", "type": "static"}),
            "",
            None,
        )
        .unwrap_err();
        assert_eq!(e.msg, "IPAM config missing 'ipam' key");
        let mut c = conf(json!({"type": "static", "addresses": [
            {"address": "10.10.0.5/24"}, {"address": "10.10.0.6/24"}]}));
        c["cniVersion"] = json!("0.2.0");
        assert_eq!(
            run(c, "", None).unwrap_err().msg,
            "CNI version 0.2.0 does not support more than 1 address per family"
        );
    }

    #[test]
    fn no_addresses_is_dns_only() {
        assert_eq!(
            stdout(&run(conf(json!({"type": "static"})), "", None)),
            r#"{"cniVersion":"1.0.0","dns":{}}"#
        );
    }
}
