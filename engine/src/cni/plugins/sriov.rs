//! The `sriov` plugin (`k8snetworkplumbingwg/sriov-cni`): hands one SR-IOV VF to the pod.
//! The VF is named by its PCI address (`deviceID`, which Multus fills from the device the
//! kubelet allocated); the plugin finds its PF and VF index (sysfs `physfn`), refuses a VF
//! another live pod holds (the marker `/var/lib/cni/sriov/pci/<pci>`), sets the VF's
//! administrative state through the PF (vlan, MAC, rates, spoofchk, trust, link state),
//! moves the VF netdev into the pod's namespace as `CNI_IFNAME`, sets its MAC and brings it
//! up, runs IPAM, and caches its config with the VF's original state for DEL in
//! `/var/lib/cni/sriov/<containerID>-<ifname>`.
//!
//! DEL reads that cache (none: success, so kubelet's retries never loop), releases the
//! IPAM lease, resets the VF through the PF, and in the pod takes the netdev down, renames
//! it back, restores its MAC and MTU and moves it back to the host; then the marker goes,
//! then the cache. CHECK does nothing. (`pkg/cnicommands/cni.go`, `pkg/config/config.go`,
//! `pkg/sriov/sriov.go`, `pkg/utils/pci_allocator.go`.) Not modelled: DPDK-bound VFs
//! (every lab VF has a netdev), the flock, GARPs.

use super::common::{self, GoConf, go_quote, netns_open_error};
use crate::cni::host::{Host, Mac, RouteDst, RouteEntry};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::sriov_nic::{VfConfig, find_vf_netdev};
use crate::cni::types::{CniError, CniResult, Interface};
use serde_json::{Value, json};

/// `config.DefaultCNIDir`: where the plugin caches its config.
pub(crate) const CNI_DIR: &str = "/var/lib/cni/sriov";

/// The marker of a VF in use: `/var/lib/cni/sriov/pci/<pci>`, holding the pod's netns.
pub(crate) fn marker_path(pci: &str) -> String {
    format!("{CNI_DIR}/pci/{pci}")
}

/// The cached config of one attachment: `/var/lib/cni/sriov/<containerID>-<ifname>`.
pub(crate) fn cache_path(container_id: &str, ifname: &str) -> String {
    format!("{CNI_DIR}/{container_id}-{ifname}")
}

/// The `sriov` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sriov;

/// The VF's state before ADD (`OrigVfState`), restored on DEL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OrigVfState {
    host_ifname: String,
    effective_mac: String,
    mtu: u32,
    admin: VfConfig,
}

/// The parsed `NetConf` (the keys the model acts on).
#[derive(Debug, Clone, PartialEq, Eq)]
struct SriovConf {
    device_id: String,
    master: String,
    vf_id: u32,
    vlan: Option<i64>,
    vlan_qos: Option<i64>,
    vlan_proto: Option<String>,
    mac: String,
    min_tx_rate: Option<i64>,
    max_tx_rate: Option<i64>,
    spoofchk: String,
    trust: String,
    link_state: String,
    ipam_type: String,
}

fn load_err(e: impl std::fmt::Display) -> CniError {
    CniError::internal(format!("SRIOV-CNI failed to load netconf: {e}"))
}

/// `config.LoadConf`: types first, then the VF by PCI address, the allocation marker, the
/// VF's netdev, and the vlan and link-state rules, in upstream's order.
fn load_conf(host: &mut Host, conf: &Value) -> Result<SriovConf, CniError> {
    let g = GoConf::new(conf, "NetConf");
    let typed = |r: Result<Option<String>, String>| {
        r.map_err(|e| load_err(format!("LoadConf(): failed to load netconf: {e}")))
    };
    let typed_int = |r: Result<Option<i64>, String>| {
        r.map_err(|e| load_err(format!("LoadConf(): failed to load netconf: {e}")))
    };
    let device_id = typed(g.string("deviceID"))?.unwrap_or_default();
    let vlan = typed_int(g.int("vlan"))?;
    let vlan_qos = typed_int(g.int("vlanQoS"))?;
    let vlan_proto = typed(g.string("vlanProto"))?;
    let mac = typed(g.string("mac"))?.unwrap_or_default();
    let min_tx_rate = typed_int(g.int("min_tx_rate"))?;
    let max_tx_rate = typed_int(g.int("max_tx_rate"))?;
    let spoofchk = typed(g.string("spoofchk"))?.unwrap_or_default();
    let trust = typed(g.string("trust"))?.unwrap_or_default();
    let link_state = typed(g.string("link_state"))?.unwrap_or_default();
    let ipam_type = g
        .ipam_type()
        .map_err(|e| load_err(format!("LoadConf(): failed to load netconf: {e}")))?;
    if device_id.is_empty() {
        return Err(load_err("LoadConf(): VF pci addr is required"));
    }
    // getVfInfo: /sys/bus/pci/devices/<pci>/physfn/net/<pf>, then virtfnN.
    let Some(vf) = host.vfs.get(&device_id).cloned() else {
        return Err(load_err(format!(
            "LoadConf(): failed to get VF information: {}",
            go_quote(&format!(
                "lstat /sys/bus/pci/devices/{device_id}/physfn/net: no such file or directory"
            ))
        )));
    };
    // IsAllocated: a marker whose netns still exists means another pod holds the VF; a
    // stale one (its netns gone) is deleted.
    let marker = marker_path(&device_id);
    if let Some(ns) = host.files.get(&marker).cloned() {
        if host.netns.contains_key(&ns) {
            return Err(load_err(format!(
                "pci address {device_id} is already allocated"
            )));
        }
        host.files.remove(&marker);
    }
    // GetVFLinkName: the VF's netdev as the host's sysfs shows it (only in the host netns).
    let in_host = find_vf_netdev(host, &device_id).is_some_and(|(ns, _)| ns.is_empty());
    if !in_host {
        return Err(load_err(format!(
            "LoadConf(): the VF {device_id} does not have a interface name or a dpdk driver"
        )));
    }
    match vlan {
        None => {
            if vlan_qos.is_some() {
                return Err(load_err(
                    "LoadConf(): vlan id must be configured to set vlan QoS to a non-nil value",
                ));
            }
            if vlan_proto.is_some() {
                return Err(load_err(
                    "LoadConf(): vlan id must be configured to set vlan proto to a non-nil value",
                ));
            }
        }
        Some(id) => {
            if !(0..=4094).contains(&id) {
                return Err(load_err(format!(
                    "LoadConf(): vlan id {id} invalid: value must be in the range 0-4094"
                )));
            }
            let qos = vlan_qos.unwrap_or(0);
            if !(0..=7).contains(&qos) {
                return Err(load_err(format!(
                    "LoadConf(): vlan QoS PCP {qos} invalid: value must be in the range 0-7"
                )));
            }
            if qos != 0 && id == 0 {
                return Err(load_err(
                    "LoadConf(): non-zero vlan id must be configured to set vlan QoS to a non-zero value",
                ));
            }
            let proto = vlan_proto.clone().unwrap_or_else(|| "802.1q".into());
            let proto = proto.to_ascii_lowercase();
            if proto != "802.1q" && proto != "802.1ad" {
                return Err(load_err(format!(
                    "LoadConf(): vlan Proto {proto} invalid: value must be '802.1Q' or '802.1ad'"
                )));
            }
            if proto == "802.1ad" && id == 0 {
                return Err(load_err(
                    "LoadConf(): non-zero vlan id must be configured to set vlan proto 802.1ad",
                ));
            }
        }
    }
    if !matches!(link_state.as_str(), "" | "auto" | "enable" | "disable") {
        return Err(load_err(format!(
            "LoadConf(): invalid link_state value: {link_state}"
        )));
    }
    Ok(SriovConf {
        device_id,
        master: vf.pf.clone(),
        vf_id: vf.vf,
        vlan,
        vlan_qos: vlan.map(|_| vlan_qos.unwrap_or(0)),
        vlan_proto: vlan.map(|_| {
            vlan_proto
                .unwrap_or_else(|| "802.1q".into())
                .to_ascii_lowercase()
        }),
        mac,
        min_tx_rate,
        max_tx_rate,
        spoofchk,
        trust,
        link_state,
        ipam_type,
    })
}

/// `ApplyVFConfig`: the PF's table entry for the VF.
fn apply_vf_config(host: &mut Host, c: &SriovConf) -> Result<(), String> {
    let vf = c.vf_id;
    if !host.root.links.contains_key(&c.master) {
        return Err(format!(
            "failed to lookup master {}: Link not found",
            go_quote(&c.master)
        ));
    }
    let Some(entry) = host.vfs.get_mut(&c.device_id) else {
        return Err(format!("failed to find vf {vf}"));
    };
    if let (Some(id), Some(qos), Some(proto)) = (c.vlan, c.vlan_qos, &c.vlan_proto) {
        entry.vlan = u32::try_from(id).unwrap_or(0);
        entry.qos = u32::try_from(qos).unwrap_or(0);
        entry.vlan_proto = proto.clone();
    }
    if !c.mac.is_empty() {
        let Ok(mac) = c.mac.parse::<Mac>() else {
            return Err(format!(
                "failed to set MAC address to {}: failed to parse MAC address {}: address {}: invalid MAC address",
                c.mac, c.mac, c.mac
            ));
        };
        entry.admin_mac = mac.to_string();
    }
    if c.min_tx_rate.is_some() || c.max_tx_rate.is_some() {
        let min = c.min_tx_rate.unwrap_or(0);
        let max = c.max_tx_rate.unwrap_or(0);
        // The kernel refuses a minimum above a set maximum (and negative rates wrap to
        // huge unsigned values the driver rejects): EINVAL.
        if min < 0 || max < 0 || (max != 0 && min > max) {
            return Err(format!(
                "failed to set vf {vf} min_tx_rate to {min} Mbps: max_tx_rate to {max} Mbps: invalid argument"
            ));
        }
        entry.min_tx_rate = u32::try_from(min).unwrap_or(0);
        entry.max_tx_rate = u32::try_from(max).unwrap_or(0);
    }
    if !c.spoofchk.is_empty() {
        entry.spoofchk = c.spoofchk == "on";
    }
    if !c.trust.is_empty() {
        entry.trust = c.trust == "on";
    }
    if !c.link_state.is_empty() {
        entry.link_state = c.link_state.clone();
    }
    Ok(())
}

/// `ResetVFConfig`: the PF's table entry back to what it was before ADD.
fn reset_vf_config(host: &mut Host, pci: &str, orig: &VfConfig) {
    if let Some(e) = host.vfs.get_mut(pci) {
        *e = orig.clone();
    }
}

/// `SetupVF`: the VF netdev leaves the host for the pod as `ifname`, with `mac` (if set),
/// up. Returns its MTU.
fn setup_vf(
    host: &mut Host,
    c: &SriovConf,
    host_ifname: &str,
    env: &CniEnv,
) -> Result<u32, String> {
    if host
        .netns
        .get(&env.netns)
        .is_some_and(|ns| ns.links.contains_key(&env.ifname))
    {
        // Renamed in a temporary namespace, the move into the pod collides; the VF is
        // moved back to the host under its own name (the rollback).
        return Err(format!(
            "setupVF failed: failed to move IF {} to netns: file exists",
            env.ifname
        ));
    }
    let Some(mut link) = host.root.links.remove(host_ifname) else {
        return Err(format!(
            "error: Link not found. Failed to get VF netdevice with name {host_ifname}"
        ));
    };
    if !c.mac.is_empty() {
        if let Ok(m) = c.mac.parse::<Mac>() {
            link.mac = m;
        }
    }
    link.up = true;
    let mtu = link.mtu;
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        host.root.links.insert(host_ifname, link);
        return Err(netns_open_error(&env.netns).msg);
    };
    ns.links.insert(env.ifname.clone(), link);
    Ok(mtu)
}

/// `ReleaseVF`: in the pod, down, renamed back, MAC and MTU restored, moved to the host.
fn release_vf(host: &mut Host, env: &CniEnv, orig: &OrigVfState) -> Result<(), CniError> {
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Ok(());
    };
    let Some(mut link) = ns.links.remove(&env.ifname) else {
        return Err(CniError::internal(format!(
            "failed to get netlink device with name {}: \"Link not found\"",
            env.ifname
        )));
    };
    ns.routes.retain(|r| r.dev != env.ifname);
    link.up = false;
    link.addrs.clear();
    // The saved text came from the link's own address: it parses.
    if let Ok(m) = orig.effective_mac.parse() {
        link.mac = m;
    }
    if orig.mtu != 0 {
        link.mtu = orig.mtu;
    }
    host.root.links.insert(orig.host_ifname.clone(), link);
    Ok(())
}

/// `ipam.ConfigureIface` in the pod: the addresses on `ifname` and the result's routes (a
/// route without `gw` via the family's first gateway).
fn configure_iface(host: &mut Host, env: &CniEnv, result: &CniResult) {
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return;
    };
    let mut gw4: Option<std::net::IpAddr> = None;
    let mut gw6: Option<std::net::IpAddr> = None;
    if let Some(link) = ns.links.get_mut(&env.ifname) {
        for ip in &result.ips {
            if !link.addrs.contains(&ip.address) {
                link.addrs.push(ip.address);
            }
            if let Some(gw) = ip.gateway {
                let slot = if gw.is_ipv6() { &mut gw6 } else { &mut gw4 };
                if slot.is_none() {
                    *slot = Some(gw);
                }
            }
        }
    }
    for r in &result.routes {
        let Some(dst) = r.dst else {
            continue;
        };
        let via = match r.gw {
            Some(gw) => Some(gw),
            None if dst.addr().is_ipv4() => gw4,
            None => gw6,
        };
        let entry = RouteEntry::static_route(RouteDst::of_net(dst), via, &env.ifname);
        if !ns.routes.contains(&entry) {
            ns.routes.push(entry);
        }
    }
}

fn env_with(env: &CniEnv, cmd: CniCommand) -> CniEnv {
    let mut e = env.clone();
    e.command = Some(cmd);
    e
}

/// The cache document (`SaveNetConf`): the config as given plus what ADD learned.
fn cache_doc(stdin: &Stdin, c: &SriovConf, orig: &OrigVfState, mtu: u32) -> Value {
    let mut doc = stdin.conf.as_ref().clone();
    if let Value::Object(m) = &mut doc {
        m.insert("Master".into(), json!(c.master));
        m.insert("VFID".into(), json!(c.vf_id));
        m.insert("MAC".into(), json!(c.mac));
        m.insert("MTU".into(), json!(mtu));
        m.insert(
            "OrigVfState".into(),
            json!({
                "HostIFName": orig.host_ifname,
                "SpoofChk": orig.admin.spoofchk,
                "Trust": orig.admin.trust,
                "AdminMAC": orig.admin.admin_mac,
                "EffectiveMAC": orig.effective_mac,
                "Vlan": orig.admin.vlan,
                "VlanQoS": orig.admin.qos,
                "VlanProto": if orig.admin.vlan_proto == "802.1ad" { 0x88a8 } else { 0x8100 },
                "MinTxRate": orig.admin.min_tx_rate,
                "MaxTxRate": orig.admin.max_tx_rate,
                "LinkState": match orig.admin.link_state.as_str() { "enable" => 1, "disable" => 2, _ => 0 },
                "MTU": orig.mtu,
            }),
        );
    }
    doc
}

/// The original state back from a cache document.
fn orig_from_cache(doc: &Value, pf: &str, vf: u32) -> OrigVfState {
    let o = doc.get("OrigVfState").cloned().unwrap_or(Value::Null);
    let s = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let n = |k: &str| {
        o.get(k)
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0)
    };
    let b = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut admin = VfConfig::new(pf, vf);
    admin.admin_mac = s("AdminMAC");
    admin.spoofchk = b("SpoofChk");
    admin.trust = b("Trust");
    admin.vlan = n("Vlan");
    admin.qos = n("VlanQoS");
    admin.vlan_proto = if n("VlanProto") == 0x88a8 {
        "802.1ad"
    } else {
        "802.1q"
    }
    .into();
    admin.min_tx_rate = n("MinTxRate");
    admin.max_tx_rate = n("MaxTxRate");
    admin.link_state = match n("LinkState") {
        1 => "enable",
        2 => "disable",
        _ => "auto",
    }
    .into();
    OrigVfState {
        host_ifname: s("HostIFName"),
        effective_mac: s("EffectiveMAC"),
        mtu: n("MTU"),
        admin,
    }
}

impl Sriov {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let mut c = load_conf(ctx.host, &stdin.conf)?;
        let args = common::load_args(&env.args, &["MAC"])
            .map_err(|e| CniError::internal(format!("SRIOV-CNI failed to parse args: {e}")))?;
        for (k, v) in args {
            if k == "MAC" && !v.is_empty() {
                c.mac = v;
            }
        }
        if let Some(m) = stdin
            .runtime_config
            .as_ref()
            .and_then(|rc| rc.get("mac"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            c.mac = m.to_string();
        }
        c.mac = c.mac.to_ascii_lowercase();
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(netns_open_error(&env.netns));
        }
        // FillOriginalVfInfo.
        let Some((_, vf_link)) = find_vf_netdev(ctx.host, &c.device_id) else {
            return Err(CniError::internal(format!(
                "failed to get original vf information: failed to find vf {}",
                c.vf_id
            )));
        };
        let Some(admin) = ctx.host.vfs.get(&c.device_id).cloned() else {
            return Err(CniError::internal(format!(
                "failed to get original vf information: failed to find vf {}",
                c.vf_id
            )));
        };
        let orig = OrigVfState {
            host_ifname: vf_link.name.to_string(),
            effective_mac: vf_link.mac.to_string(),
            mtu: vf_link.mtu,
            admin,
        };
        if let Err(e) = apply_vf_config(ctx.host, &c) {
            reset_vf_config(ctx.host, &c.device_id, &orig.admin);
            return Err(CniError::internal(format!(
                "SRIOV-CNI failed to configure VF {}",
                go_quote(&e)
            )));
        }
        let mtu = match setup_vf(ctx.host, &c, &orig.host_ifname, env) {
            Ok(m) => m,
            Err(e) => {
                reset_vf_config(ctx.host, &c.device_id, &orig.admin);
                return Err(CniError::internal(format!(
                    "failed to set up pod interface {} from the device {}: {e}",
                    go_quote(&env.ifname),
                    go_quote(&c.master)
                )));
            }
        };
        let rollback = |host: &mut Host| {
            let _ = release_vf(host, env, &orig);
            reset_vf_config(host, &c.device_id, &orig.admin);
        };
        let mut result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![Interface {
                name: (&*env.ifname).into(),
                mac: if c.mac.is_empty() {
                    orig.effective_mac.as_str().into()
                } else {
                    c.mac.as_str().into()
                },
                mtu,
                sandbox: super::common::sandbox(ctx.host, &env.netns),
            }]
            .into(),
            ..Default::default()
        };
        if !c.ipam_type.is_empty() {
            let ipam = match ctx.delegate(&c.ipam_type, env, stdin) {
                Ok(PluginOutput::Result(r)) => r.as_ref().clone(),
                Ok(_) => CniResult::default(),
                Err(e) => {
                    rollback(ctx.host);
                    return Err(CniError::internal(format!(
                        "failed to set up IPAM plugin type {} from the device {}: {}",
                        go_quote(&c.ipam_type),
                        go_quote(&c.master),
                        e
                    )));
                }
            };
            if ipam.ips.is_empty() {
                let _ = ctx.delegate(&c.ipam_type, &env_with(env, CniCommand::Del), stdin);
                rollback(ctx.host);
                return Err(CniError::internal("IPAM plugin returned missing IP config"));
            }
            let mut r = ipam;
            r.cni_version = result.cni_version.clone();
            r.interfaces = result.interfaces.clone();
            for ip in &mut r.ips {
                ip.interface = Some(crate::cni::types::IfIndex::new(0)); // every address is on the VF
            }
            configure_iface(ctx.host, env, &r);
            result = r;
        }
        let doc = cache_doc(stdin, &c, &orig, mtu);
        ctx.host
            .files
            .insert(cache_path(&env.container_id, &env.ifname), doc.to_string());
        ctx.host
            .files
            .insert(marker_path(&c.device_id), env.netns.to_string());
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let cache = cache_path(&env.container_id, &env.ifname);
        // No cache: nothing this plugin set up (or DEL already ran): success.
        let Some(text) = ctx.host.files.get(&cache).cloned() else {
            return Ok(PluginOutput::Empty);
        };
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            CniError::internal(format!(
                "failed to parse NetConf: {}",
                go_quote(&e.to_string())
            ))
        })?;
        let device_id = doc
            .get("deviceID")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let master = doc
            .get("Master")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let ipam_type = doc
            .pointer("/ipam/type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !ipam_type.is_empty() {
            ctx.delegate(&ipam_type, env, stdin)?;
        }
        let done = |host: &mut Host| {
            host.files.remove(&cache);
        };
        if env.netns.is_empty() {
            done(ctx.host);
            return Ok(PluginOutput::Empty);
        }
        let Some(vf) = ctx
            .host
            .vfs
            .get(&device_id)
            .cloned()
            .filter(|v| v.pf == master)
        else {
            return Err(CniError::internal(format!(
                "cmdDel() error obtaining VF ID: {}",
                go_quote(&format!(
                    "unable to get VF ID with PF: {master} and VF pci address {device_id}"
                ))
            )));
        };
        let orig = orig_from_cache(&doc, &master, vf.vf);
        reset_vf_config(ctx.host, &device_id, &orig.admin);
        if !common::netns_exists(ctx.host, &env.netns) {
            // The namespace is gone (the node restarted): success after IPAM.
            done(ctx.host);
            return Ok(PluginOutput::Empty);
        }
        release_vf(ctx.host, env, &orig)?;
        ctx.host.files.remove(&marker_path(&device_id));
        done(ctx.host);
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Sriov {
    fn type_name(&self) -> &'static str {
        "sriov"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx, env, stdin),
            CniCommand::Del => self.cmd_del(ctx, env, stdin),
            CniCommand::Check | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests;
