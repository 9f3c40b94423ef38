//! The `host-device` plugin (`containernetworking/plugins:plugins/main/host-device/
//! host-device.go`): moves an existing link of the node (a NIC, an SR-IOV VF, a veth) into
//! the pod under `CNI_IFNAME`, keeping its node name as the link's alias, and brings it up.
//! DEL moves it back under that name, DOWN (moving a link between namespaces downs it).
//!
//! The device is chosen by `device` (name), `hwaddr`, `kernelpath` (a `/sys/devices/…`
//! path, which the lab resolves by its last component being the device's PCI address),
//! `pciBusID` or `runtimeConfig.deviceID` (the link whose [`crate::cni::host::Link::pci`]
//! is that address; Multus injects both keys for an SR-IOV VF).
//!
//! **Releases** ([`crate::cni::release`]): v1.9.1 by default; with `cni plugins 1.1.1`,
//! Debian's build, whose differences are these (each one checked against the real binary
//! in `tests/underlay_differential.rs`, which runs the lab as 1.1.1):
//! - a taken `CNI_IFNAME`: HEAD renames in a temporary netns, fails the move with
//!   `failed to move link failed to move "net1" (host: "hd0") to container NS: file exists`
//!   and rolls back (the device is back on the node as it was); 1.1.1 fails the rename with
//!   `failed to move link failed to rename device "hd0" to "net1": file exists` and leaves
//!   the device in the pod, DOWN, under its node name;
//! - DEL of a device that is not there: HEAD `failed to find "net1" in containerNS: Link
//!   not found`, 1.1.1 `failed to find "net1": Link not found` (not idempotent in either);
//! - DEL clears the alias at HEAD; 1.1.1 leaves it set on the node's link;
//! - `runtimeConfig.deviceID` that is no PCI device: HEAD `runtime config DeviceID <id> not
//!   found or unsupported`; 1.1.1 treats it as `pciBusID` (not modelled: the lab answers as
//!   HEAD in both releases);
//! - `kernelpath` without a `net` directory: HEAD `failed to read directory <p>/net: "open
//!   <p>/net: no such file or directory"`, 1.1.1 `failed to find network devices at "<p>/net"`;
//!   a `net` directory without a link: HEAD `failed to find network device in path <p>/net`,
//!   1.1.1 falls through to `failed to find physical interface`; a `pciBusID` without a
//!   net device: 1.1.1 `no net directory under pci device <addr>`.
//!
//! Not modelled: DPDK-bound devices (a device the lab knows always has a kernel driver) and
//! auxiliary-bus devices.

use super::common::{self, GoConf, go_quote};
use crate::cni::host::Host;
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, Dns, Interface};
use serde_json::Value;

/// The `host-device` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct HostDevice;

/// `/sys/bus/pci/devices`.
const SYS_BUS_PCI: &str = "/sys/bus/pci/devices";

/// The parsed `NetConf` of host-device.go, after `loadConf`.
#[derive(Debug, Clone, PartialEq)]
struct HostDeviceConf {
    device: String,
    hwaddr: String,
    kernelpath: String,
    pci_addr: String,
    ipam_type: String,
    dns: Dns,
}

/// Whether a PCI device of this address exists on the node (the link that has it may be in
/// any namespace: the PCI device stays on the node's bus).
fn pci_exists(host: &Host, pci: &str) -> bool {
    std::iter::once(&host.root)
        .chain(host.netns.values())
        .flat_map(|ns| ns.links.values())
        .any(|l| l.pci() == Some(pci))
}

/// `loadConf`: decode, `handleDeviceID`, the one-selector rule, and the driver check of a
/// PCI address (`hasDpdkDriver`, whose lstat fails for an address that is not on the bus).
fn load_conf(host: &Host, stdin: &Stdin) -> Result<HostDeviceConf, CniError> {
    let conf = stdin.conf.as_ref();
    let err = |e: String| CniError::internal(format!("failed to load netconf: {e}"));
    let g = GoConf::new(conf, "NetConf");
    let mut c = HostDeviceConf {
        device: g.string("device").map_err(err)?.unwrap_or_default(),
        hwaddr: g.string("hwaddr").map_err(err)?.unwrap_or_default(),
        kernelpath: g.string("kernelpath").map_err(err)?.unwrap_or_default(),
        pci_addr: g.string("pciBusID").map_err(err)?.unwrap_or_default(),
        ipam_type: g.ipam_type().map_err(err)?,
        dns: super::macvlan::conf_dns(conf)?,
    };
    let device_id = stdin
        .runtime_config
        .as_deref()
        .or_else(|| conf.get("runtimeConfig"))
        .and_then(|rc| rc.get("deviceID"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !device_id.is_empty() {
        if !pci_exists(host, device_id) {
            return Err(CniError::internal(format!(
                "runtime config DeviceID {device_id} not found or unsupported"
            )));
        }
        c.pci_addr = device_id.to_string();
    }
    if c.device.is_empty()
        && c.hwaddr.is_empty()
        && c.kernelpath.is_empty()
        && c.pci_addr.is_empty()
    {
        return Err(CniError::internal(
            "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\"",
        ));
    }
    if !c.pci_addr.is_empty() && !pci_exists(host, &c.pci_addr) {
        return Err(CniError::internal(format!(
            "error with host device: lstat {SYS_BUS_PCI}/{}: no such file or directory",
            c.pci_addr
        )));
    }
    Ok(c)
}

/// `getLink`: the node's link the selectors name, or the error (without the `failed to find
/// host device: ` prefix).
fn get_link(host: &Host, c: &HostDeviceConf, release: PluginsRelease) -> Result<String, String> {
    let old = release == PluginsRelease::V1_1_1;
    let links = &host.root.links;
    if !c.device.is_empty() {
        return links
            .get(&c.device)
            .map(|l| l.name.to_string())
            .ok_or_else(|| "Link not found".to_string());
    }
    if !c.hwaddr.is_empty() {
        let want = common::parse_mac(&c.hwaddr)
            .map_err(|e| format!("failed to parse MAC address {}: {e}", go_quote(&c.hwaddr)))?;
        if let Some(l) = links.values().find(|l| l.mac == want) {
            return Ok(l.name.to_string());
        }
    } else if !c.kernelpath.is_empty() {
        let kp = &c.kernelpath;
        if !kp.starts_with("/sys/devices/") {
            return Err(format!(
                "kernel device path {} must be absolute and begin with /sys/devices/",
                go_quote(kp)
            ));
        }
        let kp = kp.trim_end_matches('/');
        let last = kp.rsplit('/').next().unwrap_or_default();
        let net_dir = format!("{kp}/net");
        if !pci_exists(host, last) {
            return Err(if old {
                format!("failed to find network devices at {}", go_quote(&net_dir))
            } else {
                format!(
                    "failed to read directory {net_dir}: \"open {net_dir}: no such file or directory\""
                )
            });
        }
        return links
            .values()
            .find(|l| l.pci() == Some(last))
            .map(|l| l.name.to_string())
            .ok_or_else(|| {
                if old {
                    "failed to find physical interface".to_string()
                } else {
                    format!("failed to find network device in path {net_dir}")
                }
            });
    } else if !c.pci_addr.is_empty() {
        return links
            .values()
            .find(|l| l.pci() == Some(c.pci_addr.as_str()))
            .map(|l| l.name.to_string())
            .ok_or_else(|| {
                if old {
                    format!("no net directory under pci device {}", c.pci_addr)
                } else {
                    format!(
                        "failed to find network device in path {SYS_BUS_PCI}/{}/net",
                        c.pci_addr
                    )
                }
            });
    }
    Err("failed to find physical interface".to_string())
}

/// `moveLinkIn`. v1.9.1: rename and alias in a temporary netns, then into the pod and up; a
/// name already taken in the pod fails the move and everything is rolled back. v1.1.1:
/// into the pod first, then down, alias and rename there; a taken name fails the rename
/// and leaves the device in the pod, DOWN, under its node name, with the alias set.
fn move_link_in(
    host: &mut Host,
    dev: &str,
    env: &CniEnv,
    release: PluginsRelease,
) -> Result<Interface, String> {
    let taken = host
        .netns
        .get(&env.netns)
        .is_some_and(|ns| ns.links.contains_key(&env.ifname));
    if taken && release == PluginsRelease::V1_1_1 {
        if let Some(mut link) = host.root.links.remove(dev) {
            host.root.routes.retain(|r| r.dev != dev);
            link.set_alias(Some(dev.to_string()));
            link.up = false;
            link.addrs.clear();
            if let Some(ns) = host.netns.get_mut(&env.netns) {
                ns.links.insert(dev, link);
            }
        }
        return Err(format!(
            "failed to rename device {} to {}: file exists",
            go_quote(dev),
            go_quote(&env.ifname)
        ));
    }
    if taken {
        return Err(format!(
            "failed to move {} (host: {}) to container NS: file exists",
            go_quote(&env.ifname),
            go_quote(dev)
        ));
    }
    let Some(mut link) = host.root.links.remove(dev) else {
        return Err(format!(
            "failed to move {} to tempNS: Link not found",
            go_quote(dev)
        ));
    };
    host.root.routes.retain(|r| r.dev != dev);
    link.set_alias(Some(dev.to_string()));
    link.up = true;
    // Addresses do not follow a link into another namespace.
    link.addrs.clear();
    let mac = link.mac.into();
    if let Some(ns) = host.netns.get_mut(&env.netns) {
        ns.links.insert(env.ifname.clone(), link);
    }
    Ok(Interface {
        name: (&*env.ifname).into(),
        mac,
        mtu: 0,
        sandbox: common::sandbox(host, &env.netns),
    })
}

/// `moveLinkOut`: back to the node under its alias, DOWN; v1.9.1 clears the alias, v1.1.1
/// leaves it set.
fn move_link_out(host: &mut Host, env: &CniEnv, release: PluginsRelease) -> Result<(), CniError> {
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(common::netns_open_error(&env.netns));
    };
    let Some(link) = ns.links.get(&env.ifname) else {
        let where_ = match release {
            PluginsRelease::V1_1_1 => "",
            PluginsRelease::V1_9_1 => " in containerNS",
        };
        return Err(CniError::internal(format!(
            "failed to find {}{where_}: Link not found",
            go_quote(&env.ifname)
        )));
    };
    let Some(alias) = link.alias().filter(|a| !a.is_empty()).map(str::to_string) else {
        return Err(CniError::internal(format!(
            "failed to find original ifname for {} (alias is not set)",
            go_quote(&env.ifname)
        )));
    };
    if host.root.links.contains_key(&alias) {
        return Err(CniError::internal(format!(
            "failed to rename device {} to {}: file exists",
            go_quote(&env.ifname),
            go_quote(&alias)
        )));
    }
    // Moved, not deleted: a veth's peer stays where it is.
    let Some(mut link) = host.netns.get_mut(&env.netns).and_then(|ns| {
        ns.forget_link_state(&env.ifname);
        ns.links.remove(&env.ifname)
    }) else {
        return Ok(());
    };
    if release != PluginsRelease::V1_1_1 {
        link.set_alias(None);
    }
    link.up = false;
    link.addrs.clear();
    host.root.links.insert(alias, link);
    Ok(())
}

impl HostDevice {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = load_conf(ctx.host, stdin)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(common::netns_open_error(&env.netns));
        }
        let release = ctx.registry.release();
        let dev = get_link(ctx.host, &c, release)
            .map_err(|e| CniError::internal(format!("failed to find host device: {e}")))?;
        let iface = move_link_in(ctx.host, &dev, env, release)
            .map_err(|e| CniError::internal(format!("failed to move link {e}")))?;
        let mut result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![iface].into(),
            ..Default::default()
        };
        if c.ipam_type.is_empty() {
            return Ok(PluginOutput::Result(std::sync::Arc::new(result)));
        }
        // From here a failure leaves the device in the pod (there is no move back).
        let ipam = common::exec_ipam(ctx, &c.ipam_type, CniCommand::Add, env, stdin)?;
        if ipam.ips.is_empty() {
            return Err(CniError::internal("IPAM plugin returned missing IP config"));
        }
        result.ips = ipam.ips;
        result.routes = ipam.routes;
        for ip in &mut result.ips {
            ip.interface = Some(crate::cni::types::IfIndex::new(0));
        }
        if let Err(e) = common::configure_iface(ctx.host, &env.netns, &env.ifname, &result) {
            let _ = common::exec_ipam(ctx, &c.ipam_type, CniCommand::Del, env, stdin);
            return Err(e);
        }
        result.dns = c.dns.boxed_if_set();
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = load_conf(ctx.host, stdin)?;
        if env.netns.is_empty() {
            return Ok(PluginOutput::Empty);
        }
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(common::netns_open_error(&env.netns));
        }
        if !c.ipam_type.is_empty() {
            common::exec_ipam(ctx, &c.ipam_type, CniCommand::Del, env, stdin)?;
        }
        move_link_out(ctx.host, env, ctx.registry.release())?;
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let c = load_conf(ctx.host, stdin)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(common::netns_open_error(&env.netns));
        }
        if !c.ipam_type.is_empty() {
            common::exec_ipam(ctx, &c.ipam_type, CniCommand::Check, env, stdin)?;
        }
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("Required prevResult missing"));
        };
        let cont = super::macvlan::cont_interface(&prev, env);
        if *env.netns != *cont.sandbox_path() {
            return Err(CniError::internal(format!(
                "Sandbox in prevResult {} doesn't match configured netns: {}",
                cont.sandbox_path(),
                env.netns
            )));
        }
        let Some(ns) = ctx.host.netns.get(&env.netns) else {
            return Err(common::netns_open_error(&env.netns));
        };
        if !ns.links.contains_key(&cont.name) {
            return Err(CniError::internal(format!(
                "Container Interface name in prevResult: {} not found",
                cont.name
            )));
        }
        common::validate_ips_and_routes(ns, &env.ifname, &prev, ctx.registry.release())?;
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for HostDevice {
    fn type_name(&self) -> &'static str {
        "host-device"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::host::{Link, LinkKind};
    use crate::cni::plugins::macvlan::tests::{NS, host, result, run_in};
    use serde_json::json;

    fn node() -> Host {
        let mut h = host();
        let mut hd0 = Link::new(
            "hd0",
            LinkKind::Physical,
            "02:00:00:00:00:20".parse().unwrap(),
            1500,
        );
        hd0.up = true;
        h.root.links.insert("hd0", hd0);
        let mut vf = Link::new(
            "ens1f0v1",
            LinkKind::SriovVf(Box::new(crate::cni::host::SriovVf {
                pf: "ens1f0".into(),
                vf: 1,
            })),
            "02:00:00:00:00:31".parse().unwrap(),
            1500,
        );
        vf.set_pci(Some("0000:03:02.1".into()));
        h.root.links.insert("ens1f0v1", vf);
        h
    }

    fn conf(extra: Value) -> Value {
        let mut c = json!({"cniVersion": "1.0.0", "name": "hd", "type": "host-device"});
        if let (Value::Object(m), Value::Object(e)) = (&mut c, extra) {
            m.extend(e);
        }
        c
    }

    #[test]
    fn add_moves_renames_and_aliases_del_returns_it_down() {
        let mut h = node();
        let c = conf(json!({"device": "hd0",
            "ipam": {"type": "static", "addresses": [{"address": "10.14.0.5/24"}]}}));
        let r = result(run_in(&mut h, CniCommand::Add, &c, "", NS, "eth1"));
        assert_eq!(r.interfaces[0].name, "eth1");
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:00:20");
        assert_eq!(r.ips[0].interface, Some(crate::cni::types::IfIndex::new(0)));
        let l = h.netns[NS].links.get("eth1").cloned().unwrap();
        assert_eq!(l.alias(), Some("hd0"));
        assert!(l.up);
        assert!(h.root.links.get("hd0").is_none());
        run_in(&mut h, CniCommand::Del, &c, "", NS, "eth1").unwrap();
        let back = h.root.links.get("hd0").cloned().unwrap();
        assert!(!back.up);
        assert_eq!(back.alias(), None);
        assert_eq!(
            run_in(&mut h, CniCommand::Del, &c, "", NS, "eth1")
                .unwrap_err()
                .msg,
            "failed to find \"eth1\" in containerNS: Link not found"
        );
    }

    #[test]
    fn pci_selectors_find_a_vf() {
        let mut h = node();
        let c = conf(json!({"pciBusID": "0000:03:02.1"}));
        let r = result(run_in(&mut h, CniCommand::Add, &c, "", NS, "net2"));
        assert_eq!(r.interfaces[0].mac, "02:00:00:00:00:31");
        run_in(&mut h, CniCommand::Del, &c, "", NS, "net2").unwrap();
        let c = conf(json!({"runtimeConfig": {"deviceID": "0000:03:02.1"}}));
        result(run_in(&mut h, CniCommand::Add, &c, "", NS, "net2"));
        // The VF is in the pod now: its PCI device is on the bus, its netdev is not here.
        let again = conf(json!({"pciBusID": "0000:03:02.1"}));
        assert_eq!(
            run_in(&mut h, CniCommand::Add, &again, "", NS, "net3")
                .unwrap_err()
                .msg,
            "failed to find host device: failed to find network device in path /sys/bus/pci/devices/0000:03:02.1/net"
        );
    }

    #[test]
    fn errors_name_the_selector() {
        let mut h = node();
        let err = |h: &mut Host, extra: Value| {
            run_in(h, CniCommand::Add, &conf(extra), "", NS, "net1")
                .unwrap_err()
                .msg
        };
        assert_eq!(
            err(&mut h, json!({})),
            "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\""
        );
        assert_eq!(
            err(&mut h, json!({"device": "nope"})),
            "failed to find host device: Link not found"
        );
        assert_eq!(
            err(&mut h, json!({"hwaddr": "02:00:00:00:99:99"})),
            "failed to find host device: failed to find physical interface"
        );
        assert_eq!(
            err(&mut h, json!({"kernelpath": "/tmp/x"})),
            "failed to find host device: kernel device path \"/tmp/x\" must be absolute and begin with /sys/devices/"
        );
        assert_eq!(
            err(&mut h, json!({"pciBusID": "0000:99:00.0"})),
            "error with host device: lstat /sys/bus/pci/devices/0000:99:00.0: no such file or directory"
        );
        assert_eq!(
            err(
                &mut h,
                json!({"runtimeConfig": {"deviceID": "0000:99:00.0"}})
            ),
            "runtime config DeviceID 0000:99:00.0 not found or unsupported"
        );
    }

    #[test]
    fn a_taken_ifname_rolls_back() {
        let mut h = node();
        let c = conf(json!({"device": "hd0"}));
        let mut lo2 = Link::new(
            "net1",
            LinkKind::Ifb,
            "02:00:00:00:00:99".parse().unwrap(),
            1500,
        );
        lo2.up = true;
        h.netns.get_mut(NS).unwrap().links.insert("net1", lo2);
        assert_eq!(
            run_in(&mut h, CniCommand::Add, &c, "", NS, "net1")
                .unwrap_err()
                .msg,
            "failed to move link failed to move \"net1\" (host: \"hd0\") to container NS: file exists"
        );
        let l = h.root.links.get("hd0").cloned().unwrap();
        assert!(l.up);
        assert_eq!(l.alias(), None);
    }
}
