//! The `loopback` plugin (`containernetworking/plugins:plugins/main/loopback/loopback.go`):
//! brings `lo` up in the sandbox. It ignores CNI_IFNAME (always `lo`), and reports `lo` with
//! the addresses the kernel gives it (127.0.0.1/8, ::1/128) unless chained, in which case it
//! passes prevResult through. Errors from `ns.WithNetNSPath` are not wrapped.

use super::common::{self, netns_exists};
use crate::cni::host::{Host, LO_ADDRS};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Interface, IpConfig};
use std::sync::Arc;

/// The `loopback` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Loopback;

fn missing_netns(path: &str) -> CniError {
    CniError::internal(common::statfs_missing(path))
}

fn lo_link<'h>(
    host: &'h mut Host,
    netns: &str,
) -> Result<&'h mut crate::cni::host::Link, CniError> {
    let Some(ns) = host.netns.get_mut(netns) else {
        return Err(missing_netns(netns));
    };
    ns.links
        .get_mut("lo")
        .ok_or_else(|| CniError::internal("Link not found"))
}

impl Loopback {
    fn cmd_add(&self, host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        if !netns_exists(host, &env.netns) {
            return Err(missing_netns(&env.netns));
        }
        let lo = lo_link(host, &env.netns)?;
        lo.up = true;
        for a in LO_ADDRS {
            if !lo.addrs.contains(&a) {
                lo.addrs.push(a);
            }
        }
        let v4 = lo.addrs.iter().find(|a| a.addr().is_ipv4()).copied();
        let v6 = lo.addrs.iter().find(|a| a.addr().is_ipv6()).copied();
        if let Some(prev) = &stdin.prev_result {
            // "loopback should pass it transparently"
            return Ok(PluginOutput::Result(prev.clone()));
        }
        let mut r = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![Interface {
                name: "lo".into(),
                mac: "00:00:00:00:00:00".into(),
                sandbox: super::common::sandbox(host, &env.netns),
                ..Default::default()
            }]
            .into(),
            // loopback.go builds a current.Result with the config's cniVersion and prints
            // it as that version: nothing is converted.
            printed_as_current: true,
            ..Default::default()
        };
        for addr in [v4, v6].into_iter().flatten() {
            r.ips.push(IpConfig {
                address: addr,
                gateway: None,
                interface: Some(crate::cni::types::IfIndex::new(0)),
            });
        }
        Ok(PluginOutput::Result(Arc::new(r)))
    }

    fn cmd_del(&self, host: &mut Host, env: &CniEnv) -> PluginReply {
        if env.netns.is_empty() || !netns_exists(host, &env.netns) {
            // NSPathNotExistErr is swallowed (kubernetes#43014).
            return Ok(PluginOutput::Empty);
        }
        lo_link(host, &env.netns)?.up = false;
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(&self, host: &mut Host, env: &CniEnv) -> PluginReply {
        if !netns_exists(host, &env.netns) {
            return Err(missing_netns(&env.netns));
        }
        if !lo_link(host, &env.netns)?.up {
            return Err(CniError::internal("loopback interface is down"));
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Loopback {
    fn type_name(&self) -> &'static str {
        "loopback"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn is_reference_plugin(&self) -> bool {
        true
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx.host, env, stdin),
            CniCommand::Del => self.cmd_del(ctx.host, env),
            CniCommand::Check => self.cmd_check(ctx.host, env),
            CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::host::Netns;
    use crate::cni::registry::Registry;
    use crate::cni::types::to_go_json;

    const NS: &str = "/var/run/netns/cnilabpod1";

    fn run(host: &mut Host, cmd: CniCommand, netns: &str) -> PluginReply {
        run_as(host, cmd, netns, "1.0.0", "eth0")
    }

    fn run_as(
        host: &mut Host,
        cmd: CniCommand,
        netns: &str,
        version: &str,
        ifname: &str,
    ) -> PluginReply {
        let reg = Registry::empty();
        let mut ctx = PluginCtx {
            host,
            registry: &reg,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let env = CniEnv {
            command: Some(cmd),
            container_id: "c0ffee01".into(),
            netns: netns.into(),
            ifname: ifname.into(),
            ..Default::default()
        };
        let name = if ifname == "lo" { "lo" } else { "lab-net" };
        let stdin = Stdin::from_conf(serde_json::json!(
            {"cniVersion": version, "name": name, "type": "loopback"}
        ));
        Loopback.invoke(&mut ctx, &env, &stdin)
    }

    fn host() -> Host {
        let mut h = Host::new(
            "node-1",
            "192.168.0.2",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        h.netns.insert(NS, Netns::with_loopback());
        h
    }

    #[test]
    fn add_matches_real_loopback() {
        let mut h = host();
        let Ok(PluginOutput::Result(r)) = run(&mut h, CniCommand::Add, NS) else {
            panic!("ADD failed");
        };
        let real = include_str!("../../../../tests/fixtures/real/loopback-add.json");
        let real: serde_json::Value = serde_json::from_str(real).unwrap();
        assert_eq!(serde_json::to_value(r.as_ref()).unwrap(), real);
        assert!(h.netns[NS].links["lo"].up);
        assert!(to_go_json(r.as_ref()).contains("\"::1/128\""));
        assert!(run(&mut h, CniCommand::Check, NS).is_ok());
    }

    /// Debian's 1.1.1 loopback, run here for cniVersion 0.2.0 and 0.3.1, prints the current
    /// layout under the old label: `interfaces`, `ips` with `interface` and no `version`.
    #[test]
    fn old_versions_print_the_current_layout_as_the_real_loopback_does() {
        for version in ["0.2.0", "0.3.1"] {
            let mut h = host();
            let reply = run_as(&mut h, CniCommand::Add, NS, version, "lo");
            let printed: serde_json::Value =
                serde_json::from_str(&crate::cni::skel::stdout_of(&reply)).unwrap();
            assert_eq!(
                printed,
                serde_json::json!({
                    "cniVersion": version,
                    "interfaces": [{"name": "lo", "mac": "00:00:00:00:00:00", "sandbox": NS}],
                    "ips": [
                        {"interface": 0, "address": "127.0.0.1/8"},
                        {"interface": 0, "address": "::1/128"}
                    ],
                    "dns": {}
                }),
                "{version}"
            );
        }
    }

    #[test]
    fn del_is_idempotent_and_tolerates_missing_netns() {
        let mut h = host();
        run(&mut h, CniCommand::Add, NS).unwrap();
        assert!(run(&mut h, CniCommand::Del, NS).is_ok());
        assert!(!h.netns[NS].links["lo"].up);
        assert_eq!(
            run(&mut h, CniCommand::Check, NS).unwrap_err().msg,
            "loopback interface is down"
        );
        assert!(run(&mut h, CniCommand::Del, NS).is_ok());
        h.netns = Default::default();
        assert!(run(&mut h, CniCommand::Del, NS).is_ok());
        assert!(run(&mut h, CniCommand::Del, "").is_ok());
        let e = run(&mut h, CniCommand::Add, NS).unwrap_err();
        assert_eq!(e.code, 999);
        assert_eq!(
            e.msg,
            "failed to Statfs \"/var/run/netns/cnilabpod1\": no such file or directory"
        );
    }
}
