//! The `portmap` plugin (`containernetworking/plugins:plugins/meta/portmap/{main.go,
//! portmap_iptables.go, chain.go, utils.go}`), iptables backend: host ports DNAT'ed to the
//! pod IP through `CNI-HOSTPORT-DNAT` → a per-container `CNI-DN-<hash>` chain, with the
//! hairpin/localhost masquerade mark (`CNI-HOSTPORT-SETMARK`, `CNI-HOSTPORT-MASQ`).
//!
//! Rule text is what `iptables -t nat -S` printed after the Debian 1.1.1 plugin ran
//! (`tests/fixtures/real/portmap-iptables-S-nat.txt`); the container's entry rules are
//! appended to CNI-HOSTPORT-DNAT in 1.1.1 and 1.9.1 alike (`chain.setup` with
//! `prependEntry` false for `genDnatChain`; only the SETMARK/MASQ chains' POSTROUTING entry
//! is prepended). Each pod address gets its rules in
//! the nat table of its family (`forwardPorts`: `iptables.NewWithProtocol(ProtocolIPv6)` for
//! an IPv6 address, in 1.1.1 and HEAD alike); DEL tears the chains down in both families
//! (`unforwardPorts`). CHECK looks only at the families the pod has in 1.9.1; 1.1.1 looks
//! for each address's chain in iptables and ip6tables both, so an IPv4-only pod fails its
//! CHECK in ip6tables (`cni plugins 1.1.1`). Not modelled: the nftables backend, conntrack
//! flushing.

use super::common::{self, IptRule, format_chain_name_with_prefix, go_quote};
use super::memo::DocMemo;
use crate::cni::host::Host;
use crate::cni::netfilter::XtTable;
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, IfIndex};
use ipnet::IpNet;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// `TopLevelDNATChainName`.
pub(crate) const TOP_DNAT_CHAIN: &str = "CNI-HOSTPORT-DNAT";
/// `SetMarkChainName`.
pub(crate) const SETMARK_CHAIN: &str = "CNI-HOSTPORT-SETMARK";
/// `MarkMasqChainName`.
pub(crate) const MASQ_CHAIN: &str = "CNI-HOSTPORT-MASQ";
/// `DefaultMarkBit`.
pub(crate) const DEFAULT_MARK_BIT: i64 = 13;

/// The `portmap` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Portmap;

/// One `portMappings` entry (CONVENTIONS.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct PortMapEntry {
    /// `hostPort`.
    #[serde(rename = "hostPort", default)]
    pub host_port: i64,
    /// `containerPort`.
    #[serde(rename = "containerPort", default)]
    pub container_port: i64,
    /// `protocol`.
    #[serde(default)]
    pub protocol: String,
    /// `hostIP`.
    #[serde(rename = "hostIP", default)]
    pub host_ip: String,
}

/// The parsed `PortMapConf`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PortMapConf {
    /// Network name (shared with the decoded document).
    pub name: std::sync::Arc<str>,
    /// `snat` (default true).
    pub snat: bool,
    /// `masqAll`.
    pub masq_all: bool,
    /// `markMasqBit` (default 13).
    pub mark_bit: i64,
    /// `externalSetMarkChain`.
    pub external_set_mark_chain: Option<String>,
    /// `conditionsV4`.
    pub conditions_v4: Vec<String>,
    /// `conditionsV6`.
    pub conditions_v6: Vec<String>,
    /// `runtimeConfig.portMappings`.
    pub port_maps: Vec<PortMapEntry>,
    /// The pod's IPv4 address from prevResult (`ContIPv4`).
    pub cont_v4: Option<IpNet>,
    /// The pod's IPv6 address from prevResult (`ContIPv6`).
    pub cont_v6: Option<IpNet>,
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// What `parseConfig` reads of the config document alone (the part every call on a network
/// shares): its keys as typed, or the first type error, wrapped as `parseConfig` words it.
#[derive(Debug)]
struct DocConf {
    /// The network name.
    name: std::sync::Arc<str>,
    /// `snat` (default true).
    snat: bool,
    /// `masqAll`.
    masq_all: bool,
    /// `markMasqBit`, checked only after `runtimeConfig` is decoded.
    mark: Option<i64>,
    /// `externalSetMarkChain`.
    ext: Option<String>,
    /// `conditionsV4`.
    conditions_v4: Vec<String>,
    /// `conditionsV6`.
    conditions_v6: Vec<String>,
}

fn wrap_parse_error(e: String) -> String {
    format!("failed to parse network configuration: {e}")
}

/// The document's [`DocConf`].
fn decode_doc(conf: &Value) -> Result<DocConf, String> {
    let g = common::GoConf::new(conf, "PortMapConf");
    Ok(DocConf {
        snat: g.bool("snat").map_err(wrap_parse_error)?.unwrap_or(true),
        masq_all: g
            .bool("masqAll")
            .map_err(wrap_parse_error)?
            .unwrap_or(false),
        mark: g.int("markMasqBit").map_err(wrap_parse_error)?,
        ext: g.string("externalSetMarkChain").map_err(wrap_parse_error)?,
        name: conf
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        conditions_v4: str_list(conf.get("conditionsV4")),
        conditions_v6: str_list(conf.get("conditionsV6")),
    })
}

/// `parseConfig`: defaults, mark-bit checks, port checks, and the pod IPs from prevResult
/// (the first v4/v6 whose `interface` is CNI_IFNAME in a sandbox, or has no index). The
/// document's part is decoded once per document ([`DocMemo`]).
pub(crate) fn parse_config(stdin: &Stdin, ifname: &str) -> Result<PortMapConf, String> {
    thread_local! {
        static DECODED: std::cell::RefCell<DocMemo<Result<DocConf, String>>> =
            std::cell::RefCell::new(DocMemo::default());
    }
    let decoded = DECODED.with(|m| m.borrow_mut().get_or(&stdin.conf, decode_doc));
    let doc = decoded.as_ref().as_ref().map_err(Clone::clone)?;
    let mut port_maps = Vec::new();
    if let Some(pm) = stdin
        .runtime_config
        .as_ref()
        .and_then(|rc| rc.get("portMappings"))
        .filter(|v| !v.is_null())
    {
        port_maps = serde_json::from_value::<Vec<PortMapEntry>>(pm.clone())
            .map_err(|e| wrap_parse_error(format!("json: {e}")))?;
    }
    if doc.mark.is_some() && doc.ext.is_some() {
        return Err("Cannot specify externalSetMarkChain and markMasqBit".into());
    }
    let mark_bit = doc.mark.unwrap_or(DEFAULT_MARK_BIT);
    if !(0..=31).contains(&mark_bit) {
        return Err("MasqMarkBit must be between 0 and 31".into());
    }
    for pm in &port_maps {
        if pm.container_port <= 0 {
            return Err(format!(
                "Invalid container port number: {}",
                pm.container_port
            ));
        }
        if pm.host_port <= 0 {
            return Err(format!("Invalid host port number: {}", pm.host_port));
        }
    }
    let mut c = PortMapConf {
        name: doc.name.clone(),
        snat: doc.snat,
        masq_all: doc.masq_all,
        mark_bit,
        external_set_mark_chain: doc.ext.clone(),
        conditions_v4: doc.conditions_v4.clone(),
        conditions_v6: doc.conditions_v6.clone(),
        port_maps,
        cont_v4: None,
        cont_v6: None,
    };
    if let Some(prev) = &stdin.prev_result {
        for ip in &prev.ips {
            let addr = ip.address;
            let v4 = addr.addr().is_ipv4();
            if (v4 && c.cont_v4.is_some()) || (!v4 && c.cont_v6.is_some()) {
                continue;
            }
            if let Some(idx) = ip.interface.map(IfIndex::get) {
                if let Some(intf) = prev.interfaces.get(idx) {
                    if intf.name != ifname || intf.sandbox_path().is_empty() {
                        continue;
                    }
                }
            }
            if v4 {
                c.cont_v4 = Some(addr);
            } else {
                c.cont_v6 = Some(addr);
            }
        }
    }
    Ok(c)
}

/// One rule: the arguments the plugin passes (for CHECK's messages) and its printed form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    args: Vec<String>,
    printed: String,
}

/// `chain` of chain.go: a chain, its rules, and the rules in other chains that jump to it.
#[derive(Debug, Clone, Default)]
struct Chain {
    name: String,
    entry_chains: Vec<&'static str>,
    entry_rules: Vec<Rule>,
    rules: Vec<Rule>,
    prepend_entry: bool,
}

/// The targets iptables knows by their own extension: every other `-j` names a user chain.
const BUILTIN_TARGETS: [&str; 7] = [
    "ACCEPT",
    "DROP",
    "RETURN",
    "DNAT",
    "SNAT",
    "MASQUERADE",
    "MARK",
];

impl Rule {
    /// The user chain the rule jumps to (`-j CHAIN`), if any.
    fn jump_chain(&self) -> Option<&str> {
        let at = self.args.iter().position(|a| a == "-j")?;
        let target = self.args.get(at + 1)?;
        (!BUILTIN_TARGETS.contains(&target.as_str())).then_some(target.as_str())
    }
}

/// What go-iptables returns when iptables exits 2 on a `-j` to a chain the table lacks:
/// `InsertUnique` runs `-C` first, and Debian's iptables (v1.8.9, nf_tables) refuses it.
fn missing_chain_error(v6: bool, chain: &str, rule: &Rule, target: &str) -> String {
    let (bin, cmd) = if v6 {
        ("/usr/sbin/ip6tables", "ip6tables")
    } else {
        ("/usr/sbin/iptables", "iptables")
    };
    format!(
        "running [{bin} -t nat -C {chain} {} --wait]: exit status 2: {cmd} v1.8.9 (nf_tables): \
         Chain '{target}' does not exist\nTry `{cmd} -h' or '{cmd} --help' for more information.\n",
        rule.args.join(" ")
    )
}

impl Chain {
    /// `setup`: ensure the chain, append its rules, add the entry rules (unique). A rule
    /// that jumps to a chain the table lacks is refused by iptables, which ends the setup
    /// there (the chain stays, with the rules added before it).
    fn setup(&self, nat: &mut XtTable, v6: bool) -> Result<(), String> {
        nat.ensure_chain(&self.name);
        for r in &self.rules {
            if let Some(target) = r.jump_chain().filter(|t| !nat.chains().contains_key(*t)) {
                return Err(missing_chain_error(v6, &self.name, r, target));
            }
            nat.append_unique(&self.name, r.printed.clone());
        }
        for entry in &self.entry_chains {
            for r in &self.entry_rules {
                if self.prepend_entry {
                    nat.prepend_unique(entry, r.printed.clone());
                } else {
                    nat.append_unique(entry, r.printed.clone());
                }
            }
        }
        Ok(())
    }

    /// `teardown`: delete the jumps to the chain and the chain (idempotent).
    fn teardown(&self, nat: &mut XtTable) {
        nat.delete_chain(&self.name);
    }

    /// `check`: the chain, then its rules and entry rules (last first), chain.go's messages.
    fn check(&self, nat: &XtTable) -> Result<(), String> {
        let Some(rules) = nat.chains().get(self.name.as_str()) else {
            return Err(format!(
                "chain {} not found in iptables table nat",
                self.name
            ));
        };
        for r in self.rules.iter().rev() {
            if !rules.iter().any(|have| *have == r.printed) {
                return Err(format!(
                    "rule {} in chain {} not found in table nat",
                    go_rules(&self.rules),
                    self.name
                ));
            }
        }
        for entry in &self.entry_chains {
            for r in self.entry_rules.iter().rev() {
                if !nat.has_rule(entry, &r.printed) {
                    return Err(format!(
                        "rule {} in chain {} not found in table nat",
                        go_rules(&self.entry_rules),
                        entry
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Go's `%s` of a `[][]string`.
fn go_rules(rules: &[Rule]) -> String {
    let inner: Vec<String> = rules
        .iter()
        .map(|r| format!("[{}]", r.args.join(" ")))
        .collect();
    format!("[{}]", inner.join(" "))
}

fn mark_def(bit: i64) -> String {
    let v: u64 = 1u64 << bit.clamp(0, 31);
    format!("{v:#x}/{v:#x}")
}

/// `genSetMarkChain`.
fn set_mark_chain(bit: i64) -> Chain {
    let md = mark_def(bit);
    let r = IptRule::jump(&format!("MARK --set-xmark {md}")).comment("CNI portfwd masquerade mark");
    Chain {
        name: SETMARK_CHAIN.into(),
        rules: vec![Rule {
            args: vec![
                "-m".into(),
                "comment".into(),
                "--comment".into(),
                "CNI portfwd masquerade mark".into(),
                "-j".into(),
                "MARK".into(),
                "--set-xmark".into(),
                md,
            ],
            printed: r.render(),
        }],
        ..Default::default()
    }
}

/// `genMarkMasqChain`: entered from POSTROUTING, prepended.
fn mark_masq_chain(bit: i64) -> Chain {
    let md = mark_def(bit);
    let mut rule = IptRule::jump("MASQUERADE");
    rule.matches.push(format!("-m mark --mark {md}"));
    let entry = IptRule::jump(MASQ_CHAIN).comment("CNI portfwd requiring masquerade");
    Chain {
        name: MASQ_CHAIN.into(),
        entry_chains: vec!["POSTROUTING"],
        prepend_entry: true,
        entry_rules: vec![Rule {
            args: vec![
                "-m".into(),
                "comment".into(),
                "--comment".into(),
                "CNI portfwd requiring masquerade".into(),
            ],
            printed: entry.render(),
        }],
        rules: vec![Rule {
            args: vec![
                "-m".into(),
                "mark".into(),
                "--mark".into(),
                md,
                "-j".into(),
                "MASQUERADE".into(),
            ],
            printed: rule.render(),
        }],
    }
}

/// `genToplevelDnatChain`: entered from PREROUTING and OUTPUT for local destinations.
fn toplevel_dnat_chain() -> Chain {
    let mut entry = IptRule::jump(TOP_DNAT_CHAIN);
    entry.matches.push("-m addrtype --dst-type LOCAL".into());
    Chain {
        name: TOP_DNAT_CHAIN.into(),
        entry_chains: vec!["PREROUTING", "OUTPUT"],
        entry_rules: vec![Rule {
            args: vec![
                "-m".into(),
                "addrtype".into(),
                "--dst-type".into(),
                "LOCAL".into(),
            ],
            printed: entry.render(),
        }],
        ..Default::default()
    }
}

/// The per-container chain name: `CNI-DN-` + 21 hex digits of sha512(net + container ID).
pub(crate) fn dnat_chain_name(net: &str, container_id: &str) -> String {
    format_chain_name_with_prefix(net, container_id, "DN-")
}

/// `splitPortList`: multiport takes at most 15 ports per rule.
fn split_port_list(ports: &[i64]) -> Vec<String> {
    ports
        .chunks(15)
        .map(|c| c.iter().map(i64::to_string).collect::<Vec<_>>().join(","))
        .collect()
}

/// `genDnatChain` + `fillDnatRules` for one pod address.
fn dnat_chain(conf: &PortMapConf, container_id: &str, cont: &IpNet) -> Chain {
    let v6 = cont.addr().is_ipv6();
    let comment = {
        let c = format!(
            "dnat name: {} id: {}",
            go_quote(&conf.name),
            go_quote(container_id)
        );
        if c.len() <= 255 {
            c
        } else {
            let mut cut = 253;
            while !c.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}...", &c[..cut])
        }
    };
    let name = dnat_chain_name(&conf.name, container_id);
    let setmark = conf
        .external_set_mark_chain
        .clone()
        .unwrap_or_else(|| SETMARK_CHAIN.to_string());
    let conditions = if v6 {
        &conf.conditions_v6
    } else {
        &conf.conditions_v4
    };

    // Entry rules, grouped by protocol in sorted order.
    let mut by_proto: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in &conf.port_maps {
        by_proto
            .entry(e.protocol.clone())
            .or_default()
            .push(e.host_port);
    }
    let mut entry_rules = Vec::new();
    for (proto, ports) in &by_proto {
        for spec in split_port_list(ports) {
            let mut args: Vec<String> = [
                "-m",
                "comment",
                "--comment",
                comment.as_str(),
                "-m",
                "multiport",
                "-p",
                proto.as_str(),
                "--destination-ports",
                spec.as_str(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let mut r = IptRule::jump(&name).comment(&comment);
            r.proto = Some(proto.to_ascii_lowercase());
            r.matches.push(format!("-m multiport --dports {spec}"));
            args.extend(conditions.iter().cloned());
            r.conditions(conditions);
            entry_rules.push(Rule {
                args,
                printed: r.render(),
            });
        }
    }

    let mut rules = Vec::new();
    for e in &conf.port_maps {
        let mut dst = None;
        if !e.host_ip.is_empty() {
            let hip = e.host_ip.parse::<IpAddr>().ok();
            let host_v6 = !hip.is_some_and(|a| a.is_ipv4());
            if v6 != host_v6 {
                continue;
            }
            if !hip.is_some_and(|a| a.is_unspecified()) {
                dst = Some(e.host_ip.clone());
            }
        }
        let proto = e.protocol.to_ascii_lowercase();
        let mut base_args = vec![
            "-p".to_string(),
            e.protocol.clone(),
            "--dport".to_string(),
            e.host_port.to_string(),
        ];
        if let Some(d) = &dst {
            base_args.push("-d".into());
            base_args.push(d.clone());
        }
        let base = |target: &str| {
            let mut r = IptRule::jump(target);
            r.proto = Some(proto.clone());
            r.dst = dst.clone();
            r.matches
                .push(format!("-m {proto} --dport {}", e.host_port));
            r
        };
        if conf.snat {
            let masq_cidr = if conf.masq_all {
                if v6 { "::/0" } else { "0.0.0.0/0" }.to_string()
            } else {
                cont.to_string()
            };
            let mut hp = base(&setmark);
            // iptables does not print a 0.0.0.0/0 (::/0) source.
            if !conf.masq_all {
                hp.src = Some(masq_cidr.clone());
            }
            let mut args = base_args.clone();
            args.extend(["-s".into(), masq_cidr, "-j".into(), setmark.clone()]);
            rules.push(Rule {
                args,
                printed: hp.render(),
            });
            if !v6 && !conf.masq_all {
                let mut lo = base(&setmark);
                lo.src = Some("127.0.0.1".into());
                let mut args = base_args.clone();
                args.extend([
                    "-s".into(),
                    "127.0.0.1".into(),
                    "-j".into(),
                    setmark.clone(),
                ]);
                rules.push(Rule {
                    args,
                    printed: lo.render(),
                });
            }
        }
        let to = if v6 {
            format!("[{}]:{}", cont.addr(), e.container_port)
        } else {
            format!("{}:{}", cont.addr(), e.container_port)
        };
        let d = base(&format!("DNAT --to-destination {to}"));
        let mut args = base_args.clone();
        args.extend([
            "-j".into(),
            "DNAT".into(),
            "--to-destination".into(),
            to.clone(),
        ]);
        rules.push(Rule {
            args,
            printed: d.render(),
        });
    }
    Chain {
        name,
        entry_chains: vec![TOP_DNAT_CHAIN],
        entry_rules,
        rules,
        prepend_entry: false,
    }
}

/// `getRoutableHostIF`: the host link whose connected subnet holds the pod IP (the bridge).
fn routable_host_if(host: &Host, ip: &IpAddr) -> Option<String> {
    host.root
        .links
        .values()
        .find(|l| l.addrs.iter().any(|n| n.contains(ip)))
        .map(|l| l.name.to_string())
}

/// `forwardPorts` for one pod address, in the nat table of its family.
fn forward_ports(
    host: &mut Host,
    conf: &PortMapConf,
    container_id: &str,
    cont: &IpNet,
) -> Result<(), CniError> {
    let v6 = cont.addr().is_ipv6();
    let setup = |chain: Chain, nat: &mut XtTable| chain.setup(nat, v6);
    if conf.snat && cont.addr().is_ipv4() {
        if let Some(ifname) = routable_host_if(host, &cont.addr()) {
            host.sysctls.insert(
                format!("net.ipv4.conf.{ifname}.route_localnet").into(),
                "1".into(),
            );
        }
    }
    let nat = &mut host.netfilter.for_addr_mut(&cont.addr()).nat;
    // These chains' rules jump to no user chain (MARK, MASQUERADE, and their own chain
    // from the entry rules), so their setup cannot fail.
    if conf.snat && conf.external_set_mark_chain.is_none() {
        let _ = setup(set_mark_chain(conf.mark_bit), nat);
        let _ = setup(mark_masq_chain(conf.mark_bit), nat);
    }
    let _ = setup(toplevel_dnat_chain(), nat);
    let chain = dnat_chain(conf, container_id, cont);
    // "First, idempotently tear down this chain in case there was some sort of collision".
    chain.teardown(nat);
    // Its hairpin rules jump to `externalSetMarkChain` when one is given.
    setup(chain, nat).map_err(|e| CniError::internal(format!("unable to setup DNAT: {e}")))
}

impl Portmap {
    fn cmd_add(&self, host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = parse_config(stdin, &env.ifname)
            .map_err(|e| CniError::internal(format!("failed to parse config: {e}")))?;
        let Some(prev) = &stdin.prev_result else {
            return Err(CniError::internal("must be called as chained plugin"));
        };
        if !conf.port_maps.is_empty() {
            for cont in [conf.cont_v4, conf.cont_v6].iter().flatten() {
                forward_ports(host, &conf, &env.container_id, cont)?;
            }
        }
        // portmap prints prevResult unchanged (converted to the config's version).
        if prev.cni_version == stdin.cni_version() {
            return Ok(PluginOutput::Result(prev.clone()));
        }
        let out = CniResult {
            cni_version: stdin.cni_version().into(),
            ..prev.as_ref().clone()
        };
        Ok(PluginOutput::Result(std::sync::Arc::new(out)))
    }

    fn cmd_del(&self, host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = parse_config(stdin, &env.ifname)
            .map_err(|e| CniError::internal(format!("failed to parse config: {e}")))?;
        if conf.port_maps.is_empty() {
            return Ok(PluginOutput::Empty);
        }
        // `unforwardPorts`: both families, whatever addresses the pod had.
        for v6 in [false, true] {
            let nat = &mut host.netfilter.family_mut(v6).nat;
            nat.delete_chain(&dnat_chain_name(&conf.name, &env.container_id));
            // The SNAT chain older versions made is torn down too.
            nat.delete_chain(&format_chain_name_with_prefix(
                &conf.name,
                &env.container_id,
                "SN-",
            ));
        }
        Ok(PluginOutput::Empty)
    }

    fn cmd_check(
        &self,
        host: &mut Host,
        env: &CniEnv,
        stdin: &Stdin,
        release: PluginsRelease,
    ) -> PluginReply {
        let conf = parse_config(stdin, &env.ifname).map_err(CniError::internal)?;
        if stdin.prev_result.is_none() {
            return Err(CniError::internal("Required prevResult missing"));
        }
        if conf.port_maps.is_empty() {
            return Ok(PluginOutput::Empty);
        }
        for cont in [conf.cont_v4, conf.cont_v6].iter().flatten() {
            let chain = dnat_chain(&conf, &env.container_id, cont);
            let check = |v6: bool| {
                let fam = if v6 { "ipv6" } else { "ipv4" };
                chain
                    .check(&host.netfilter.family(v6).nat)
                    .map_err(|e| CniError::internal(format!("could not check {fam} dnat: {e}")))
            };
            match release {
                // v1.1.1's checkPorts looks for the address's chain in iptables and in
                // ip6tables alike, so an IPv4-only pod fails in ip6tables (portmap.go at
                // v1.1.1; Debian's binary: "could not check ipv6 dnat: chain CNI-DN-… not
                // found in iptables table nat"). The lab's nodes have both.
                PluginsRelease::V1_1_1 => {
                    check(false)?;
                    check(true)?;
                }
                PluginsRelease::V1_9_1 => check(cont.addr().is_ipv6())?,
            }
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Portmap {
    fn type_name(&self) -> &'static str {
        "portmap"
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
            CniCommand::Del => self.cmd_del(ctx.host, env, stdin),
            CniCommand::Check => self.cmd_check(ctx.host, env, stdin, ctx.registry.release()),
            // "FIXME GC" / no STATUS.
            CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}
