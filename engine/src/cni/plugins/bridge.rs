//! The `bridge` plugin (`containernetworking/plugins:plugins/main/bridge/bridge.go`): a Linux
//! bridge on the node, one veth pair per container with the host end enslaved to it, IPAM
//! delegated (host-local), optionally the gateway address on the bridge and an SNAT chain.
//!
//! Strings follow the Debian 1.1.1 binary where it was observed on this machine
//! (`tests/fixtures/real`), and HEAD for what 1.1.1 lacks (`disableContainerInterface`,
//! STATUS). Not modelled: `vlan`/`vlanTrunk` tagging (validated only), `macspoofchk`,
//! `portIsolation`, IPv6 DAD sysctls, the nftables `ipMasqBackend`.

use super::common::{
    self, GoConf, IptRule, format_chain_name, format_comment, go_quote, netns_open_error,
};
use super::memo::DocMemo;
use crate::cni::host::{Host, Link, LinkKind, Mac, RouteDst, RouteEntry};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, Dns, GoIp, Interface, Route};
use crate::util::hash;
use ipnet::IpNet;
use serde_json::Value;
use std::net::IpAddr;

/// `defaultBrName`.
pub(crate) const DEFAULT_BRIDGE: &str = "cni0";

/// The MTU the kernel gives a new link when `mtu` is 0.
const KERNEL_DEFAULT_MTU: u32 = 1500;

/// The `bridge` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Bridge;

/// The parsed `NetConf` of bridge.go (the keys the model acts on).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BridgeConf {
    /// Network name (shared: the decoded document's conf is copied on every call).
    pub name: std::sync::Arc<str>,
    /// `bridge` (default `cni0`).
    pub br_name: std::sync::Arc<str>,
    /// `isGateway` (forced on by `isDefaultGateway`).
    pub is_gw: bool,
    /// `isDefaultGateway`.
    pub is_default_gw: bool,
    /// `forceAddress`.
    pub force_address: bool,
    /// `ipMasq`.
    pub ip_masq: bool,
    /// `mtu` (0 = kernel default).
    pub mtu: i64,
    /// `hairpinMode`.
    pub hairpin: bool,
    /// `promiscMode`.
    pub promisc: bool,
    /// `vlan`.
    pub vlan: i64,
    /// `disableContainerInterface` (HEAD).
    pub disable_container_interface: bool,
    /// `ipam.type` ("" = L2 only).
    pub ipam_type: std::sync::Arc<str>,
    /// Container MAC from CNI_ARGS `MAC`, `args.cni.mac` or `runtimeConfig.mac`.
    pub mac: Option<String>,
    /// The plugin config's own `dns`, when set (`dnsConfSet`).
    pub dns: Option<Dns>,
}

fn load_err(e: String) -> CniError {
    CniError::internal(format!("failed to load netconf: {e}"))
}

/// `collectVlanTrunk`'s validation (bridge.go); the IDs themselves are not modelled.
fn check_vlan_trunk(v: &Value) -> Result<bool, String> {
    let Some(items) = v.as_array() else {
        return Ok(false);
    };
    let mut any = false;
    for item in items {
        let get = |k: &str| item.get(k).and_then(Value::as_i64);
        match (get("minID"), get("maxID")) {
            (Some(min), Some(max)) => {
                if min <= 0 || min > 4094 {
                    return Err("incorrect trunk minID parameter".into());
                }
                if max <= 0 || max > 4094 {
                    return Err("incorrect trunk maxID parameter".into());
                }
                if max < min {
                    return Err("minID is greater than maxID in trunk parameter".into());
                }
                any = true;
            }
            (None, Some(_)) => {
                return Err(
                    "minID and maxID should be configured simultaneously, minID is missing".into(),
                );
            }
            (Some(_), None) => {
                return Err(
                    "minID and maxID should be configured simultaneously, maxID is missing".into(),
                );
            }
            (None, None) => {}
        }
        if let Some(id) = get("id") {
            if id <= 0 || id > 4094 {
                return Err("incorrect trunk id parameter".into());
            }
            any = true;
        }
    }
    Ok(any)
}

/// `loadNetConf`: defaults, the vlan checks, and the MAC sources in priority order, as the
/// release reads them.
fn load_conf(stdin: &Stdin, env: &CniEnv, release: PluginsRelease) -> Result<BridgeConf, CniError> {
    type Memo = DocMemo<Result<BridgeConf, CniError>>;
    thread_local! {
        /// One memo per release, as the releases read one document differently.
        static DECODED: std::cell::RefCell<[Memo; 2]> =
            std::cell::RefCell::new([Memo::default(), Memo::default()]);
    }
    // The document is the same on every call of a network: decoded once (and what it
    // decodes to is the same on every node: held once).
    let slot = usize::from(release == PluginsRelease::V1_1_1);
    let decoded = DECODED
        .with(|m| m.borrow_mut()[slot].get_or_equal(&stdin.conf, |conf| load_doc(conf, release)));
    let mut c = decoded.as_ref().clone()?;
    // CNI_ARGS is parsed (and its errors reported) even when a later source wins: the
    // document's `args.cni.mac` (already in `c.mac`) overrides its `MAC`.
    let args = common::load_args(&env.args, &["MAC"]).map_err(CniError::internal)?;
    if c.mac.is_none() {
        for (k, v) in args {
            if k == "MAC" && !v.is_empty() {
                c.mac = Some(v);
            }
        }
    }
    if let Some(m) = stdin
        .runtime_config
        .as_ref()
        .and_then(|rc| rc.get("mac"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
    {
        c.mac = Some(m.to_string());
    }
    Ok(c)
}

/// The part of `loadNetConf` that reads only the config document: defaults, DNS and the
/// vlan checks (all before `CNI_ARGS` is parsed, as upstream orders them).
fn load_doc(conf: &Value, release: PluginsRelease) -> Result<BridgeConf, CniError> {
    let g = GoConf::new(conf, "NetConf");
    let vlan = g.int("vlan").map_err(load_err)?.unwrap_or(0);
    let mut c = BridgeConf {
        name: conf
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .into(),
        br_name: g
            .string("bridge")
            .map_err(load_err)?
            .map_or_else(|| DEFAULT_BRIDGE.into(), Into::into),
        is_gw: g.bool("isGateway").map_err(load_err)?.unwrap_or(false),
        is_default_gw: g
            .bool("isDefaultGateway")
            .map_err(load_err)?
            .unwrap_or(false),
        force_address: g.bool("forceAddress").map_err(load_err)?.unwrap_or(false),
        ip_masq: g.bool("ipMasq").map_err(load_err)?.unwrap_or(false),
        mtu: g.int("mtu").map_err(load_err)?.unwrap_or(0),
        hairpin: g.bool("hairpinMode").map_err(load_err)?.unwrap_or(false),
        promisc: g.bool("promiscMode").map_err(load_err)?.unwrap_or(false),
        vlan,
        // v1.1.1's NetConf has no such field: Go's decoder skips the unknown key.
        disable_container_interface: match release {
            PluginsRelease::V1_1_1 => false,
            PluginsRelease::V1_9_1 => g
                .bool("disableContainerInterface")
                .map_err(load_err)?
                .unwrap_or(false),
        },
        ipam_type: g.ipam_type().map_err(load_err)?.into(),
        // `args.cni.mac`, which overrides CNI_ARGS' `MAC` (applied per call).
        mac: conf
            .get("args")
            .and_then(|a| a.get("cni"))
            .and_then(|c| c.get("mac"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string),
        dns: None,
    };
    // An empty "bridge" string is kept as given by Go (it overrides the default).
    if let Some(d) = conf.get("dns").filter(|d| !d.is_null()) {
        let dns: Dns =
            serde_json::from_value(d.clone()).map_err(|e| load_err(format!("json: {e}")))?;
        // dnsConfSet: any list present (even empty) or a domain.
        let set = ["nameservers", "search", "options"]
            .iter()
            .any(|k| d.get(*k).is_some_and(|v| !v.is_null()))
            || !dns.domain.is_empty();
        if set {
            c.dns = Some(dns);
        }
    }
    if !(0..=4094).contains(&c.vlan) {
        return Err(CniError::internal(format!(
            "invalid VLAN ID {} (must be between 0 and 4094)",
            c.vlan
        )));
    }
    let trunk = match conf.get("vlanTrunk") {
        Some(v) => check_vlan_trunk(v).map_err(CniError::internal)?,
        None => false,
    };
    if c.vlan > 0 && trunk {
        return Err(CniError::internal(
            "cannot set vlan and vlanTrunk at the same time",
        ));
    }
    Ok(c)
}

/// The host-side veth name for an attachment: `veth` + 8 lowercase hex digits. The real
/// plugin draws 4 random bytes (`pkg/ip/link_linux.go` RandomVethName); the lab derives them
/// from (node, container ID, ifname) so runs repeat, salting on the rare collision.
pub(crate) fn host_veth_name(host: &Host, container_id: &str, ifname: &str) -> String {
    let first = Attachment::hash(host, container_id, ifname).veth_name();
    veth_name_from(host, container_id, ifname, first)
}

/// [`host_veth_name`] given the unsalted name.
fn veth_name_from(host: &Host, container_id: &str, ifname: &str, first: String) -> String {
    let name = |parts: &[&str]| {
        let mut name = String::with_capacity(12);
        name.push_str("veth");
        name.push_str(&hash::hex_id(parts, 8));
        name
    };
    debug_assert_eq!(first, name(&[host.node.as_str(), container_id, ifname]));
    if !host.root.links.contains_key(&first) {
        return first;
    }
    let mut salt = 1u32;
    loop {
        let s = salt.to_string();
        let name = name(&[host.node.as_str(), container_id, ifname, s.as_str()]);
        if !host.root.links.contains_key(&name) || salt > 1000 {
            return name;
        }
        salt += 1;
    }
}

/// `hash::fnv64` of (node, container ID, ifname), the part the veth name and both of an
/// attachment's MACs share: FNV-1a runs byte by byte, so it is hashed once and each name
/// goes on from there (one pass over the 64-digit container ID, where there were three).
#[derive(Clone, Copy)]
struct Attachment(u64);

impl Attachment {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn hash(host: &Host, container_id: &str, ifname: &str) -> Self {
        let mut h = Attachment(0xcbf2_9ce4_8422_2325);
        h.bytes(&host.node);
        for part in [container_id, ifname] {
            h.separator();
            h.bytes(part);
        }
        h
    }

    fn bytes(&mut self, part: &str) {
        for b in part.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(Self::PRIME);
        }
    }

    fn separator(&mut self) {
        self.0 = (self.0 ^ 0x1f).wrapping_mul(Self::PRIME);
    }

    /// `veth` + `hash::hex_id(parts, 8)`: the hash's first 8 hex digits.
    fn veth_name(self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut name = String::with_capacity(12);
        name.push_str("veth");
        for i in 0..8 {
            name.push(char::from(HEX[((self.0 >> (60 - 4 * i)) & 0xf) as usize]));
        }
        name
    }

    /// `hash::mac_bytes(&[node, container ID, ifname, last])`.
    fn mac(mut self, last: &str) -> Mac {
        self.separator();
        self.bytes(last);
        let h = self.0.to_be_bytes();
        Mac([(h[0] & 0xfe) | 0x02, h[1], h[2], h[3], h[4], h[5]])
    }
}

fn mtu_of(conf: &BridgeConf) -> u32 {
    if conf.mtu <= 0 {
        KERNEL_DEFAULT_MTU
    } else {
        u32::try_from(conf.mtu).unwrap_or(KERNEL_DEFAULT_MTU)
    }
}

/// `setupBridge` / `ensureBridge`: create the bridge if needed, set promisc, bring it up.
fn ensure_bridge(host: &mut Host, conf: &BridgeConf) -> Result<Interface, CniError> {
    let br = conf.br_name.clone();
    let node = &host.node;
    let link = host.root.links.get_or_insert_with(&br, || {
        Link::new(
            &br,
            LinkKind::Bridge,
            Mac(hash::mac_bytes(&[node, &br])),
            mtu_of(conf),
        )
    });
    if link.kind != LinkKind::Bridge {
        return Err(CniError::internal(format!(
            "failed to create bridge {}: {} already exists but is not a bridge",
            go_quote(&br),
            go_quote(&br)
        )));
    }
    if conf.promisc {
        link.set_promisc(true);
    }
    link.up = true;
    Ok(Interface {
        name: (*br).into(),
        mac: link.mac.into(),
        ..Default::default()
    })
}

/// `setupVeth`: the pair, container end named `ifname` in the sandbox, host end enslaved.
fn setup_veth(
    host: &mut Host,
    conf: &BridgeConf,
    env: &CniEnv,
) -> Result<(Interface, Interface), CniError> {
    let exists = host
        .netns
        .get(&env.netns)
        .is_some_and(|ns| ns.links.contains_key(&env.ifname));
    if exists {
        return Err(CniError::internal(format!(
            "container veth name provided ({}) already exists",
            env.ifname
        )));
    }
    let att = Attachment::hash(host, &env.container_id, &env.ifname);
    let cont_mac = match &conf.mac {
        Some(m) => common::parse_mac(m).map_err(CniError::internal)?,
        None => att.mac("container"),
    };
    debug_assert!(
        conf.mac.is_some()
            || cont_mac.0
                == hash::mac_bytes(&[&host.node, &env.container_id, &env.ifname, "container"])
    );
    let host_name = veth_name_from(host, &env.container_id, &env.ifname, att.veth_name());
    let host_mac = att.mac("host");
    debug_assert_eq!(
        host_mac.0,
        hash::mac_bytes(&[&host.node, &env.container_id, &env.ifname, "host"])
    );
    let mtu = mtu_of(conf);
    let Some(netns) = host.netns.path(&env.netns).cloned() else {
        return Err(netns_open_error(&env.netns));
    };
    let mut cont = Link::new(
        &env.ifname,
        LinkKind::Veth {
            peer: host_name.as_str().into(),
            peer_netns: None,
        },
        cont_mac,
        mtu,
    );
    cont.up = false;
    let mut hostl = Link::new(
        &host_name,
        LinkKind::Veth {
            peer: (&*env.ifname).into(),
            peer_netns: Some(netns.clone()),
        },
        host_mac,
        mtu,
    );
    hostl.up = true;
    hostl.master = Some(conf.br_name.clone());
    hostl.set_hairpin(conf.hairpin);
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(netns_open_error(&env.netns));
    };
    ns.links.insert(env.ifname.clone(), cont);
    host.root.links.insert(host_name.clone(), hostl);
    Ok((
        Interface {
            name: host_name.into(),
            mac: host_mac.into(),
            ..Default::default()
        },
        Interface {
            name: (&*env.ifname).into(),
            mac: cont_mac.into(),
            sandbox: Some(netns),
            ..Default::default()
        },
    ))
}

/// The IPAM result of a delegated call.
fn ipam_result(reply: PluginOutput) -> CniResult {
    match reply {
        // The delegate's reply is usually this Arc's only holder: taken, not copied.
        PluginOutput::Result(r) => std::sync::Arc::unwrap_or_clone(r),
        _ => CniResult::default(),
    }
}

fn env_with(env: &CniEnv, cmd: CniCommand) -> CniEnv {
    let mut e = env.clone();
    e.command = Some(cmd);
    e
}

fn is_default_dst(dst: Option<IpNet>, v4: bool) -> bool {
    dst.is_some_and(|n| n.prefix_len() == 0 && n.addr().is_ipv4() == v4)
}

/// `calcGateways`: interface index 2, gateway = network+1 when isGateway, the default route
/// per family. Returns the (v4, v6) gateway addresses with their prefix for the bridge.
fn calc_gateways(result: &mut CniResult, conf: &BridgeConf) -> (Vec<IpNet>, Vec<IpNet>) {
    let (mut gw4, mut gw6) = (Vec::new(), Vec::new());
    let (mut def4, mut def6) = (false, false);
    for i in 0..result.ips.len() {
        let addr = result.ips[i].address;
        let v4 = addr.addr().is_ipv4();
        result.ips[i].interface = Some(crate::cni::types::IfIndex::new(2));
        if result.ips[i].gateway.is_none() && conf.is_gw {
            result.ips[i].gateway = Some(common::network_plus_one(&addr));
        }
        let found = if v4 { &mut def4 } else { &mut def6 };
        if conf.is_default_gw && !*found {
            *found = result
                .routes
                .iter()
                .any(|r| r.gw.is_some() && is_default_dst(r.dst, v4));
            if !*found {
                let any = if v4 {
                    IpNet::V4(ipnet::Ipv4Net::default())
                } else {
                    IpNet::V6(ipnet::Ipv6Net::default())
                };
                result.routes.push(Route {
                    dst: Some(any),
                    gw: result.ips[i].gateway,
                });
                *found = true;
            }
        }
        if conf.is_gw {
            // `gwn.IP = gw` with the address's mask: the gateway with its prefix length.
            let gw = result.ips[i]
                .gateway
                .and_then(|gw| IpNet::new(gw, addr.prefix_len()).ok());
            if v4 { gw4.extend(gw) } else { gw6.extend(gw) }
        }
    }
    (gw4, gw6)
}

/// `ipam.ConfigureIface`: the link up, its addresses, and the result's routes (a route
/// without `gw` goes via the first gateway of its family), each with
/// `netlink.RouteAddEcmp` (`NLM_F_CREATE`, no `NLM_F_EXCL`): the kernel refuses a route
/// that is already there with the same next hop (`fib_table_insert`: "Error if we find a
/// perfect match which uses the same scope, type, and nexthop information", EEXIST), so
/// an IPAM default route without `gw` and the default route `isDefaultGateway` appends
/// (`calcGateways` counts only a default route with a GW as found) end in `file exists`.
/// The routes from `ipam_routes` on are the ones `calcGateways` appended, whose `Dst` is
/// bridge's `defaultNet`, masked by `net.IPMask(net.IPv4zero)` (16 bytes) for IPv4.
fn configure_iface(
    host: &mut Host,
    env: &CniEnv,
    result: &CniResult,
    ipam_routes: usize,
    release: PluginsRelease,
) -> Result<(), CniError> {
    let Some(ns) = host.netns.get_mut(&env.netns) else {
        return Err(netns_open_error(&env.netns));
    };
    let Some(link) = ns.links.get_mut(&env.ifname) else {
        return Err(CniError::internal(format!(
            "failed to lookup {}: Link not found",
            go_quote(&env.ifname)
        )));
    };
    let mut gw4: Option<IpAddr> = None;
    let mut gw6: Option<IpAddr> = None;
    for ip in &result.ips {
        let addr = ip.address;
        if !link.addrs.contains(&addr) {
            // A pod's eth0 holds one or two addresses: no room reserved for more.
            link.addrs.reserve_exact(1);
            link.addrs.push(addr);
        }
        if ip.gateway.is_some() {
            let slot = if addr.addr().is_ipv4() {
                &mut gw4
            } else {
                &mut gw6
            };
            if slot.is_none() {
                *slot = ip.gateway;
            }
        }
    }
    link.up = true;
    for (i, r) in result.routes.iter().enumerate() {
        let Some(dst) = r.dst else {
            continue;
        };
        let via = match r.gw {
            Some(gw) => Some(gw),
            None if dst.addr().is_ipv4() => gw4,
            None => gw6,
        };
        let entry = RouteEntry::static_route(RouteDst::of_net(dst), via, &env.ifname);
        if ns.routes.contains(&entry) {
            let dst = common::GoIpNet {
                net: Some(dst),
                field_names: false,
                v4_mask_16: i >= ipam_routes,
            };
            let (via, ifname) = (GoIp(via), &env.ifname);
            // v1.1.1: "failed to add route '%v via %v dev %v': %v"; v1.9.1 adds
            // "metric %d (Scope: %v, Table: %d)" (Priority, Scope and Table are zero).
            let extra = match release {
                PluginsRelease::V1_1_1 => "",
                PluginsRelease::V1_9_1 => " metric 0 (Scope: universe, Table: 0)",
            };
            return Err(CniError::internal(format!(
                "failed to add route '{dst} via {via} dev {ifname}{extra}': file exists"
            )));
        }
        ns.routes.reserve_exact(1);
        ns.routes.push(entry);
    }
    Ok(())
}

/// `ensureAddr` on the bridge: a different v4 address (or an overlapping v6 one) is an
/// error unless `forceAddress`, which replaces it.
fn ensure_addr(host: &mut Host, conf: &BridgeConf, want: IpNet) -> Result<(), CniError> {
    let Some(br) = host.root.links.get(&conf.br_name) else {
        return Err(CniError::internal(format!(
            "failed to set bridge addr: could not lookup {}: Link not found",
            go_quote(&conf.br_name)
        )));
    };
    // Every pod after the first on a node: the bridge's first address is the gateway, so
    // the loop below would return at its first step (nothing changes).
    if br.addrs.first() == Some(&want) {
        return Ok(());
    }
    let Some(br) = host.root.links.get_mut(&conf.br_name) else {
        return Ok(());
    };
    let mut keep = Vec::new();
    for &have in &br.addrs {
        if have.addr().is_ipv4() != want.addr().is_ipv4() {
            keep.push(have);
            continue;
        }
        if have == want {
            return Ok(());
        }
        let clash =
            want.addr().is_ipv4() || have.contains(&want.addr()) || want.contains(&have.addr());
        if clash {
            if !conf.force_address {
                return Err(CniError::internal(format!(
                    "failed to set bridge addr: {} already has an IP address different from {}",
                    go_quote(&conf.br_name),
                    want
                )));
            }
            continue;
        }
        keep.push(have);
    }
    keep.push(want);
    br.addrs = keep;
    Ok(())
}

/// `sysctl -w key=value` on the node (`ip.EnableIP4Forward`): after a node's first pod the
/// value is already there, and nothing is built.
fn set_sysctl(host: &mut Host, key: &str, value: &str) {
    match host.sysctls.get_mut(key) {
        Some(v) if v == value => {}
        Some(v) => *v = value.into(),
        None => {
            host.sysctls.insert(key.into(), value.into());
        }
    }
}

/// `ipMasq: true` for one attachment (bridge's and ptp's cmdAdd): the chain named after the
/// network and container, one `ip.SetupIPMasq` per address.
pub(crate) fn setup_ip_masq_all(
    host: &mut Host,
    net: &str,
    container_id: &str,
    addrs: impl IntoIterator<Item = IpNet>,
) {
    let chain = format_chain_name(net, container_id);
    let comment = format_comment(net, container_id);
    for addr in addrs {
        setup_ip_masq(host, &addr, &chain, &comment);
    }
}

/// The attachment's masquerade rules removed (bridge's and ptp's cmdDel).
pub(crate) fn teardown_ip_masq_all<'a>(
    host: &mut Host,
    net: &str,
    container_id: &str,
    addrs: impl IntoIterator<Item = &'a IpNet>,
) {
    let chain = format_chain_name(net, container_id);
    let comment = format_comment(net, container_id);
    for addr in addrs {
        teardown_ip_masq(host, addr, &chain, &comment);
    }
}

/// `ip.SetupIPMasq` (`pkg/ip/ipmasq_iptables_linux.go`): in the nat table of the address's
/// family (`iptables.NewWithProtocol(ProtocolIPv6)` and `ff00::/8` for an IPv6 address).
pub(crate) fn setup_ip_masq(host: &mut Host, addr: &IpNet, chain: &str, comment: &str) {
    let multicast = if addr.addr().is_ipv4() {
        "224.0.0.0/4"
    } else {
        "ff00::/8"
    };
    let nat = &mut host.netfilter.for_addr_mut(&addr.addr()).nat;
    nat.ensure_chain(chain);
    let mut accept = IptRule::jump("ACCEPT").comment(comment);
    accept.dst = Some(addr.to_string());
    nat.append_unique(chain, accept.render());
    let mut masq = IptRule::jump("MASQUERADE").comment(comment);
    masq.dst = Some(multicast.to_string());
    masq.dst_negated = true;
    nat.append_unique(chain, masq.render());
    let mut post = IptRule::jump(chain).comment(comment);
    post.src = Some(addr.addr().to_string());
    nat.append_unique("POSTROUTING", post.render());
}

/// `ip.TeardownIPMasq`: the POSTROUTING jump (both forms), then the chain, in the address's
/// family.
pub(crate) fn teardown_ip_masq(host: &mut Host, addr: &IpNet, chain: &str, comment: &str) {
    let nat = &mut host.netfilter.for_addr_mut(&addr.addr()).nat;
    for src in [addr.addr().to_string(), addr.to_string()] {
        let mut post = IptRule::jump(chain).comment(comment);
        post.src = Some(src);
        nat.delete_rule("POSTROUTING", &post.render());
    }
    nat.delete_chain(chain);
}

impl Bridge {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let mut conf = load_conf(stdin, env, ctx.registry.release())?;
        let layer3 = !conf.ipam_type.is_empty();
        if layer3 && conf.disable_container_interface {
            return Err(CniError::internal(
                "cannot use IPAM when DisableContainerInterface flag is set",
            ));
        }
        if conf.is_default_gw {
            conf.is_gw = true;
        }
        if conf.hairpin && conf.promisc {
            // 1.1.1 ends the sentence with a period (HEAD dropped it).
            return Err(CniError::internal(
                "cannot set hairpin mode and promiscuous mode at the same time.",
            ));
        }
        let br_iface = ensure_bridge(ctx.host, &conf)?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(netns_open_error(&env.netns));
        }
        let (host_iface, cont_iface) = setup_veth(ctx.host, &conf, env)?;
        let mut result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![br_iface, host_iface, cont_iface].into(),
            ..Default::default()
        };

        if layer3 {
            let ipam = ipam_result(ctx.delegate(&conf.ipam_type, env, stdin)?);
            let release = ctx.registry.release();
            if let Err(e) = self.after_ipam(ctx.host, &conf, env, &mut result, ipam, release) {
                // "release IP in case of failure"; the DEL's own error is ignored.
                let _ = ctx.delegate(&conf.ipam_type, &env_with(env, CniCommand::Del), stdin);
                return Err(e);
            }
        } else if !conf.disable_container_interface {
            if let Some(l) = ctx
                .host
                .netns
                .get_mut(&env.netns)
                .and_then(|ns| ns.links.get_mut(&env.ifname))
            {
                l.up = true;
            }
        }
        if let Some(dns) = &conf.dns {
            result.dns = dns.clone().boxed_if_set();
        }
        Ok(PluginOutput::Result(std::sync::Arc::new(result)))
    }

    /// Everything after a successful IPAM ADD; an error here triggers IPAM DEL.
    fn after_ipam(
        &self,
        host: &mut Host,
        conf: &BridgeConf,
        env: &CniEnv,
        result: &mut CniResult,
        ipam: CniResult,
        release: PluginsRelease,
    ) -> Result<(), CniError> {
        result.ips = ipam.ips;
        result.routes = ipam.routes;
        result.dns = ipam.dns;
        if result.ips.is_empty() {
            return Err(CniError::internal("IPAM plugin returned missing IP config"));
        }
        let ipam_routes = result.routes.len();
        let (gw4, gw6) = calc_gateways(result, conf);
        configure_iface(host, env, result, ipam_routes, release)?;
        if conf.is_gw {
            for &gw in &gw4 {
                ensure_addr(host, conf, gw)?;
            }
            if !gw4.is_empty() {
                set_sysctl(host, "net.ipv4.ip_forward", "1");
            }
            for &gw in &gw6 {
                ensure_addr(host, conf, gw)?;
            }
            if !gw6.is_empty() {
                set_sysctl(host, "net.ipv6.conf.all.forwarding", "1");
            }
        }
        if conf.ip_masq {
            let addrs = result.ips.iter().map(|ip| ip.address);
            setup_ip_masq_all(host, &conf.name, &env.container_id, addrs);
        }
        Ok(())
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(stdin, env, ctx.registry.release())?;
        let layer3 = !conf.ipam_type.is_empty();
        let ipam_del = |ctx: &mut PluginCtx<'_>| -> Result<(), CniError> {
            if layer3 {
                ctx.delegate(&conf.ipam_type, env, stdin)?;
            }
            Ok(())
        };
        // No netns, or the netns is gone (NSPathNotExistErr): release the IP only.
        if !common::netns_exists(ctx.host, &env.netns) {
            ipam_del(ctx)?;
            return Ok(PluginOutput::Empty);
        }
        // ip.DelLinkByNameAddr: delete the link (the kernel removes the veth peer too),
        // remembering its addresses; a missing link is fine.
        // The kernel drops the deleted devices' routes and qdiscs (bandwidth's TBF/ingress).
        let addrs: Vec<IpNet> = common::del_link(ctx.host, &env.netns, &env.ifname)
            .map(|link| link.addrs)
            .unwrap_or_default();
        ipam_del(ctx)?;
        if layer3 && conf.ip_masq {
            teardown_ip_masq_all(ctx.host, &conf.name, &env.container_id, &addrs);
        }
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = load_conf(stdin, env, ctx.registry.release())?;
        if !common::netns_exists(ctx.host, &env.netns) {
            return Err(netns_open_error(&env.netns));
        }
        // cmdCheck runs `ipam.ExecCheck(n.IPAM.Type, …)` whether or not the network has IPAM
        // (bridge.go, 1.1.1 and upstream alike): with none, libcni's FindInPath fails on the
        // empty name, so CHECK of a bridge without IPAM always fails.
        if conf.ipam_type.is_empty() {
            return Err(CniError::internal("no plugin name provided"));
        }
        ctx.delegate(&conf.ipam_type, env, stdin)?;
        let Some(prev) = common::prev_result(stdin) else {
            return Err(CniError::internal("Required prevResult missing"));
        };
        check_prev(ctx.host, &conf, env, &prev, ctx.registry.release())
            .map_err(CniError::internal)?;
        Ok(PluginOutput::Empty)
    }
}

/// The `validateInterface` part shared by the three checks: name present, link present,
/// sandbox as expected.
fn validate_interface<'h>(
    host: &'h Host,
    ns_path: &str,
    intf: &Interface,
    expect_in_sb: bool,
) -> Result<&'h Link, String> {
    if intf.name.is_empty() {
        return Err("Interface name missing ".into());
    }
    let Some(link) = host.ns(ns_path).and_then(|ns| ns.links.get(&intf.name)) else {
        return Err(format!("Interface name {} not found", intf.name));
    };
    if expect_in_sb && intf.sandbox_path().is_empty() {
        return Err(format!(
            "Interface {} is expected to be in a sandbox",
            intf.name
        ));
    }
    if !expect_in_sb && !intf.sandbox_path().is_empty() {
        return Err(format!("Interface {} should not be in sandbox", intf.name));
    }
    Ok(link)
}

/// `cmdCheck` after prevResult is known: bridge, container veth, host veth, addresses,
/// routes, with bridge.go's messages.
fn check_prev(
    host: &Host,
    conf: &BridgeConf,
    env: &CniEnv,
    prev: &CniResult,
    release: PluginsRelease,
) -> Result<(), String> {
    let mut br_map = Interface::default();
    let mut cont_map = Interface::default();
    for intf in &prev.interfaces {
        if *intf.name == *conf.br_name {
            br_map = intf.clone();
        } else if intf.name == env.ifname && intf.sandbox_path() == &*env.netns {
            cont_map = intf.clone();
        }
    }
    // validateCniBrInterface
    let br = validate_interface(host, "", &br_map, false)?;
    if br.kind != LinkKind::Bridge {
        return Err(format!(
            "Interface {} does not have link type of bridge",
            br_map.name
        ));
    }
    if !br_map.mac.is_empty() && br_map.mac != br.mac {
        return Err(format!(
            "Bridge interface {} Mac doesn't match: {}",
            br_map.name, br_map.mac
        ));
    }
    if br.promisc() != conf.promisc {
        return Err(format!(
            "Bridge interface {} configured Promisc Mode {} doesn't match current state: {} ",
            br_map.name,
            conf.promisc,
            br.promisc()
        ));
    }
    if *env.netns != *cont_map.sandbox_path() {
        return Err(format!(
            "Sandbox in prevResult {} doesn't match configured netns: {}",
            cont_map.sandbox_path(),
            env.netns
        ));
    }
    // validateCniContainerInterface
    let cont = validate_interface(host, &env.netns, &cont_map, true)?;
    let LinkKind::Veth {
        peer: cont_peer, ..
    } = &cont.kind
    else {
        return Err(format!(
            "Error: Container interface {} not of type veth",
            cont.name
        ));
    };
    if !cont_map.mac.is_empty() && cont_map.mac != cont.mac {
        return Err(format!(
            "Interface {} Mac {} doesn't match container Mac: {}",
            cont_map.name, cont_map.mac, cont.mac
        ));
    }
    // validateCniVethInterface over the remaining interfaces
    let mut veth_found = false;
    for intf in &prev.interfaces {
        if intf.name == br_map.name || intf.name == cont_map.name {
            continue;
        }
        let link = validate_interface(host, "", intf, false)?;
        let LinkKind::Veth { peer, peer_netns } = &link.kind else {
            continue;
        };
        if link.name != cont_peer
            || *peer != *env.ifname
            || peer_netns.as_deref() != Some(&*env.netns)
            || link.master.as_deref() != Some(&*conf.br_name)
        {
            continue;
        }
        if !intf.mac.is_empty() && intf.mac != link.mac {
            return Err(format!(
                "Interface {} Mac doesn't match: {} not found",
                intf.name, intf.mac
            ));
        }
        veth_found = true;
        break;
    }
    if !veth_found {
        return Err(format!(
            "CNI veth created for bridge {} was not found",
            conf.br_name
        ));
    }
    // ip.ValidateExpectedInterfaceIPs
    let Some(ns) = host.netns.get(&env.netns) else {
        return Err(statfs_err(&env.netns));
    };
    let table = ns.route_table();
    for ip in &prev.ips {
        let Some(link) = ns.links.get(&env.ifname) else {
            return Err(format!("Cannot find container link {}", env.ifname));
        };
        let addr = ip.address;
        if !link.addrs.contains(&addr) {
            return Err(format!(
                "Failed to match addr {addr} on interface {}",
                env.ifname
            ));
        }
        let prefix = RouteDst::Net(addr.trunc());
        let has_route = addr.addr().is_ipv6() && link.up || table.iter().any(|r| r.dst == prefix);
        if !has_route {
            return Err(format!(
                "Failed to find Gateway {} for interface {}",
                GoIp(ip.gateway),
                env.ifname
            ));
        }
    }
    common::validate_expected_route(&table, &prev.routes, release)
}

fn statfs_err(path: &str) -> String {
    common::statfs_missing(path)
}

impl Plugin for Bridge {
    fn type_name(&self) -> &'static str {
        "bridge"
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
                // cmdStatus (HEAD): forward to IPAM.
                let g = GoConf::new(stdin.conf.as_ref(), "NetConf");
                let ipam = g.ipam_type().map_err(load_err)?;
                if !ipam.is_empty() {
                    ctx.delegate(&ipam, env, stdin)?;
                }
                Ok(PluginOutput::Empty)
            }
            // "FIXME GC": no GC in bridge.
            CniCommand::Gc => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// `loadNetConf`'s MAC sources: `runtimeConfig.mac` over `args.cni.mac` over CNI_ARGS'
    /// `MAC`; CNI_ARGS is parsed, and its error reported, whichever source wins.
    #[test]
    fn mac_sources_in_priority_order() {
        let mac = |doc_mac: Option<&str>, args: &str, rc_mac: Option<&str>| {
            let mut doc = json!({"cniVersion": "1.0.0", "name": "n", "type": "bridge"});
            if let Some(m) = doc_mac {
                doc["args"] = json!({"cni": {"mac": m}});
            }
            let mut stdin = Stdin::from_conf(doc);
            stdin.runtime_config = rc_mac.map(|m| Arc::new(json!({ "mac": m })));
            let env = CniEnv {
                args: args.into(),
                ..Default::default()
            };
            load_conf(&stdin, &env, PluginsRelease::default()).map(|c| c.mac)
        };
        let (a, b, c) = (
            "02:00:00:00:00:0a",
            "02:00:00:00:00:0b",
            "02:00:00:00:00:0c",
        );
        assert_eq!(mac(None, "", None).unwrap(), None);
        let args = format!("IgnoreUnknown=1;K8S_POD_NAME=p;MAC={a}");
        assert_eq!(mac(None, &args, None).unwrap().as_deref(), Some(a));
        assert_eq!(mac(Some(b), &args, None).unwrap().as_deref(), Some(b));
        assert_eq!(mac(Some(""), &args, None).unwrap().as_deref(), Some(a));
        assert_eq!(mac(Some(b), &args, Some(c)).unwrap().as_deref(), Some(c));
        assert_eq!(mac(None, "", Some(c)).unwrap().as_deref(), Some(c));
        let e = mac(Some(b), "FOO", Some(c)).unwrap_err();
        assert_eq!(e.msg, "ARGS: invalid pair \"FOO\"");
    }
}
