//! Tests of bridge → portmap → bandwidth on one node, against what the real 1.1.1 plugins
//! printed for the same conflist (`tests/fixtures/real`). host-local is stood in for by a
//! test IPAM plugin that returns what the real host-local returned.

use super::bandwidth::Bandwidth;
use super::bridge::Bridge;
use super::portmap::Portmap;
use crate::cni::host::{Host, Link, LinkKind, Netns};
use crate::cni::plugin::{CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin};
use crate::cni::registry::Registry;
use crate::cni::release::PluginsRelease;
use crate::cni::types::{CniError, CniResult, IpConfig, Route};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const NS: &str = "/var/run/netns/cnilabpod1";
const CID: &str = "c0ffee01";

/// Test-only IPAM: ADD returns what host-local returned in the capture; DEL/CHECK succeed.
struct FixedIpam;

impl Plugin for FixedIpam {
    fn type_name(&self) -> &'static str {
        "host-local"
    }
    fn supported_versions(&self) -> &'static [&'static str] {
        crate::cni::plugin::ALL_VERSIONS
    }
    fn invoke(&self, _: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => Ok(PluginOutput::Result(Arc::new(CniResult {
                cni_version: stdin.cni_version().into(),
                ips: vec![IpConfig {
                    address: "10.244.1.2/24".parse().unwrap(),
                    gateway: "10.244.1.1".parse().ok(),
                    interface: None,
                }]
                .into(),
                routes: vec![Route {
                    dst: "10.96.0.0/12".parse().ok(),
                    gw: None,
                }]
                .into(),
                ..Default::default()
            }))),
            _ => Ok(PluginOutput::Empty),
        }
    }
}

/// Test-only IPAM that returns no IPs.
struct EmptyIpam;

impl Plugin for EmptyIpam {
    fn type_name(&self) -> &'static str {
        "empty-ipam"
    }
    fn supported_versions(&self) -> &'static [&'static str] {
        crate::cni::plugin::ALL_VERSIONS
    }
    fn invoke(&self, _: &mut PluginCtx<'_>, _: &CniEnv, stdin: &Stdin) -> PluginReply {
        Ok(PluginOutput::Result(Arc::new(CniResult {
            cni_version: stdin.cni_version().into(),
            ..Default::default()
        })))
    }
}

fn registry() -> Registry {
    let mut r = Registry::empty();
    r.install(Box::new(FixedIpam));
    r.install(Box::new(EmptyIpam));
    r
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

fn env(cmd: CniCommand) -> CniEnv {
    CniEnv {
        command: Some(cmd),
        container_id: CID.into(),
        netns: NS.into(),
        ifname: "eth0".into(),
        args: String::new(),
        path: "/opt/cni/bin".into(),
    }
}

fn bridge_conf() -> Value {
    json!({
        "cniVersion": "1.0.0", "name": "lab-net", "type": "bridge", "bridge": "cni0",
        "isGateway": true, "isDefaultGateway": true, "ipMasq": true,
        "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.1.0/24"}]],
                 "routes": [{"dst": "10.96.0.0/12"}]}
    })
}

struct Call {
    reply: PluginReply,
    delegated: Vec<(String, CniCommand)>,
}

fn call(
    h: &mut Host,
    p: &dyn Plugin,
    e: &CniEnv,
    conf: Value,
    rc: Option<Value>,
    prev: Option<&CniResult>,
) -> Call {
    call_on(PluginsRelease::default(), h, p, e, conf, rc, prev)
}

/// [`call`] with the plugins of `release`.
fn call_on(
    release: PluginsRelease,
    h: &mut Host,
    p: &dyn Plugin,
    e: &CniEnv,
    conf: Value,
    rc: Option<Value>,
    prev: Option<&CniResult>,
) -> Call {
    let reg = registry().with_release(release);
    let mut ctx = PluginCtx {
        host: h,
        registry: &reg,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    let mut stdin = Stdin::from_conf(conf);
    stdin.runtime_config = rc.map(Arc::new);
    stdin.prev_result = prev.map(|p| Arc::new(p.clone()));
    let reply = p.invoke(&mut ctx, e, &stdin);
    let delegated = ctx
        .delegations
        .calls
        .iter()
        .map(|(t, e, _, _)| (t.clone(), e.cmd()))
        .collect();
    Call { reply, delegated }
}

fn result(c: Call) -> CniResult {
    match c.reply {
        Ok(PluginOutput::Result(r)) => r.as_ref().clone(),
        other => panic!("expected a result, got {other:?}"),
    }
}

fn err(c: Call) -> CniError {
    match c.reply {
        Err(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 6
        && parts.iter().all(|p| {
            p.len() == 2
                && p.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        })
}

fn is_veth_name(s: &str) -> bool {
    s.len() == 12
        && s.starts_with("veth")
        && s[4..]
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// Compare a lab result with a captured one: equal except MACs (pattern-checked) and the
/// host veth name (`veth` + 8 hex).
fn assert_like_real(lab: &CniResult, real_json: &str) {
    let real: CniResult = serde_json::from_str(real_json).unwrap();
    assert_eq!(lab.cni_version, real.cni_version);
    assert_eq!(lab.interfaces.len(), real.interfaces.len());
    for (l, r) in lab.interfaces.iter().zip(&real.interfaces) {
        assert!(is_mac(&l.mac.to_string()), "bad mac {}", l.mac);
        assert_eq!(l.sandbox_path(), r.sandbox_path());
        if r.name.starts_with("veth") {
            assert!(is_veth_name(&l.name), "bad veth name {}", l.name);
        } else {
            assert_eq!(l.name, r.name);
        }
    }
    assert_eq!(lab.ips, real.ips);
    assert_eq!(lab.routes, real.routes);
    assert_eq!(lab.dns, real.dns);
}

/// `-A` lines grouped by chain, in order (what `iptables -S` shows per chain).
fn rules_by_chain(lines: impl Iterator<Item = String>) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in lines {
        if let Some(rest) = l.strip_prefix("-A ") {
            if let Some((chain, rule)) = rest.split_once(' ') {
                m.entry(chain.to_string())
                    .or_default()
                    .push(rule.to_string());
            }
        }
    }
    m
}

fn real_rules(fixture: &str) -> BTreeMap<String, Vec<String>> {
    rules_by_chain(fixture.lines().map(str::to_string))
}

fn lab_rules(h: &Host) -> BTreeMap<String, Vec<String>> {
    let mut m = rules_by_chain(h.netfilter.ip4.nat.to_lines().into_iter());
    m.retain(|_, v| !v.is_empty());
    m
}

fn bridge_add(h: &mut Host) -> CniResult {
    result(call(
        h,
        &Bridge,
        &env(CniCommand::Add),
        bridge_conf(),
        None,
        None,
    ))
}

#[test]
fn bridge_add_matches_real_result_and_rules() {
    let mut h = host();
    let r = bridge_add(&mut h);
    assert_like_real(
        &r,
        include_str!("../../../../tests/fixtures/real/bridge-add.json"),
    );
    assert_eq!(
        lab_rules(&h),
        real_rules(include_str!(
            "../../../../tests/fixtures/real/bridge-iptables-S-nat.txt"
        ))
    );
    // The node and sandbox as the real plugin left them.
    assert_eq!(
        h.root.links["cni0"].addrs,
        vec!["10.244.1.1/24".parse::<ipnet::IpNet>().unwrap()]
    );
    assert!(h.root.links["cni0"].up);
    let veth = &h.root.links[r.interfaces[1].name.as_str()];
    assert_eq!(veth.master.as_deref(), Some("cni0"));
    assert!(veth.up && !veth.hairpin());
    assert_eq!(
        h.sysctls
            .get("net.ipv4.ip_forward")
            .map(compact_str::CompactString::as_str),
        Some("1")
    );
    let routes: Vec<String> = h.netns[NS]
        .route_table()
        .iter()
        .map(|r| r.to_ip_route())
        .collect();
    assert_eq!(
        routes,
        vec![
            "default via 10.244.1.1 dev eth0",
            "10.96.0.0/12 via 10.244.1.1 dev eth0",
            "10.244.1.0/24 dev eth0 proto kernel scope link src 10.244.1.2",
        ]
    );
    // Deterministic: the same node, container and ifname give the same names and MACs.
    let mut h2 = host();
    assert_eq!(bridge_add(&mut h2), r);
}

#[test]
fn bridge_add_error_cases_use_real_messages() {
    let mut h = host();
    bridge_add(&mut h);
    let mut e2 = env(CniCommand::Add);
    e2.container_id = "c0ffee02".into();
    let e = err(call(&mut h, &Bridge, &e2, bridge_conf(), None, None));
    assert_eq!(
        (e.code, e.msg.as_str()),
        (999, "container veth name provided (eth0) already exists")
    );

    let mut e3 = env(CniCommand::Add);
    e3.netns = "/var/run/netns/nope".into();
    let e = err(call(&mut h, &Bridge, &e3, bridge_conf(), None, None));
    assert_eq!(
        e.msg,
        "failed to open netns \"/var/run/netns/nope\": failed to Statfs \"/var/run/netns/nope\": no such file or directory"
    );

    let mut c = bridge_conf();
    c["hairpinMode"] = json!(true);
    c["promiscMode"] = json!(true);
    let e = err(call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        c,
        None,
        None,
    ));
    assert_eq!(
        e.msg,
        "cannot set hairpin mode and promiscuous mode at the same time."
    );

    let mut c = bridge_conf();
    c["vlan"] = json!(5000);
    let e = err(call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        c,
        None,
        None,
    ));
    assert_eq!(e.msg, "invalid VLAN ID 5000 (must be between 0 and 4094)");

    let mut c = bridge_conf();
    c["disableContainerInterface"] = json!(true);
    let e = err(call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        c,
        None,
        None,
    ));
    assert_eq!(
        e.msg,
        "cannot use IPAM when DisableContainerInterface flag is set"
    );
    // v1.1.1 has no such key: Go's decoder skips it (even a value of another type), and the
    // ADD succeeds as the real binary's does.
    for value in [json!(true), json!("yes")] {
        let mut c = bridge_conf();
        c["disableContainerInterface"] = value;
        let reg = registry().with_release(crate::cni::release::PluginsRelease::V1_1_1);
        let mut h = host();
        let mut ctx = PluginCtx {
            host: &mut h,
            registry: &reg,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        let reply = Bridge.invoke(&mut ctx, &env(CniCommand::Add), &Stdin::from_conf(c));
        assert!(matches!(reply, Ok(PluginOutput::Result(_))), "{reply:?}");
    }

    let mut c = bridge_conf();
    c["bridge"] = json!("eth0");
    let e = err(call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        c,
        None,
        None,
    ));
    assert_eq!(
        e.msg,
        "failed to create bridge \"eth0\": \"eth0\" already exists but is not a bridge"
    );

    let mut c = bridge_conf();
    c["mtu"] = json!("big");
    let e = err(call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        c,
        None,
        None,
    ));
    assert_eq!(
        e.msg,
        "failed to load netconf: json: cannot unmarshal string into Go struct field NetConf.mtu of type int"
    );
}

#[test]
fn bridge_releases_ip_when_a_step_after_ipam_fails() {
    let mut h = host();
    let mut br = Link::new(
        "cni0",
        LinkKind::Bridge,
        "02:00:00:00:00:02".parse().unwrap(),
        1500,
    );
    br.addrs.push("10.9.9.1/24".parse().unwrap());
    h.root.links.insert("cni0", br);
    let c = call(
        &mut h,
        &Bridge,
        &env(CniCommand::Add),
        bridge_conf(),
        None,
        None,
    );
    assert_eq!(
        c.delegated,
        vec![
            ("host-local".to_string(), CniCommand::Add),
            ("host-local".to_string(), CniCommand::Del)
        ]
    );
    assert_eq!(
        err(c).msg,
        "failed to set bridge addr: \"cni0\" already has an IP address different from 10.244.1.1/24"
    );
    // forceAddress replaces it.
    let mut h = host();
    h.root.links.insert(
        "cni0",
        Link::new(
            "cni0",
            LinkKind::Bridge,
            "02:00:00:00:00:02".parse().unwrap(),
            1500,
        ),
    );
    h.root
        .links
        .get_mut("cni0")
        .unwrap()
        .addrs
        .push("10.9.9.1/24".parse().unwrap());
    let mut conf = bridge_conf();
    conf["forceAddress"] = json!(true);
    result(call(
        &mut h,
        &Bridge,
        &env(CniCommand::Add),
        conf,
        None,
        None,
    ));
    assert_eq!(
        h.root.links["cni0"].addrs,
        vec!["10.244.1.1/24".parse::<ipnet::IpNet>().unwrap()]
    );

    let mut conf = bridge_conf();
    conf["ipam"] = json!({"type": "empty-ipam"});
    let c = call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Add),
        conf,
        None,
        None,
    );
    assert_eq!(c.delegated.len(), 2);
    assert_eq!(err(c).msg, "IPAM plugin returned missing IP config");
}

#[test]
fn bridge_del_twice_and_without_netns() {
    let mut h = host();
    let r = bridge_add(&mut h);
    let veth = r.interfaces[1].name.clone();
    for _ in 0..2 {
        let c = call(
            &mut h,
            &Bridge,
            &env(CniCommand::Del),
            bridge_conf(),
            None,
            Some(&r),
        );
        assert_eq!(
            c.delegated,
            vec![("host-local".to_string(), CniCommand::Del)]
        );
        assert_eq!(c.reply, Ok(PluginOutput::Empty));
    }
    assert!(!h.root.links.contains_key(&veth));
    assert!(!h.netns[NS].links.contains_key("eth0"));
    assert!(
        !h.netfilter
            .ip4
            .nat
            .chains()
            .contains_key("CNI-20afed91d8ddf530016083b5")
    );
    assert!(
        h.netfilter
            .ip4
            .nat
            .chains()
            .get("POSTROUTING")
            .is_none_or(|r| r.is_empty())
    );
    // Netns gone, or not given: IPAM DEL only.
    h.netns = Default::default();
    let c = call(
        &mut h,
        &Bridge,
        &env(CniCommand::Del),
        bridge_conf(),
        None,
        None,
    );
    assert_eq!(c.reply, Ok(PluginOutput::Empty));
    assert_eq!(c.delegated.len(), 1);
    let mut e = env(CniCommand::Del);
    e.netns = std::sync::Arc::default();
    let c = call(&mut h, &Bridge, &e, bridge_conf(), None, None);
    assert_eq!(c.reply, Ok(PluginOutput::Empty));
}

#[test]
fn bridge_check() {
    let mut h = host();
    let r = bridge_add(&mut h);
    // IPAM CHECK is delegated before prevResult is looked at.
    let c = call(
        &mut h,
        &Bridge,
        &env(CniCommand::Check),
        bridge_conf(),
        None,
        None,
    );
    assert_eq!(
        c.delegated,
        vec![("host-local".to_string(), CniCommand::Check)]
    );
    assert_eq!(err(c).msg, "Required prevResult missing");
    // An IPAM route without gw is installed via the gateway. The real 1.1.1 plugin looks
    // for it with RT_FILTER_DST | RT_FILTER_GW and a nil gateway, and does not find it;
    // 1.9.1 filters by gateway only when the route has one, and finds it.
    let check_on = |h: &mut Host, release, prev: &CniResult| {
        call_on(
            release,
            h,
            &Bridge,
            &env(CniCommand::Check),
            bridge_conf(),
            None,
            Some(prev),
        )
        .reply
    };
    assert_eq!(
        check_on(&mut h, PluginsRelease::V1_1_1, &r)
            .unwrap_err()
            .msg,
        "Expected Route {Dst:{IP:10.96.0.0 Mask:fff00000} GW:<nil>} not found in routing table"
    );
    assert_eq!(
        check_on(&mut h, PluginsRelease::V1_9_1, &r),
        Ok(PluginOutput::Empty)
    );
    // A default route without gw (01-minimal.conflist's `"routes": [{"dst": "0.0.0.0/0"}]`)
    // is looked up by destination alone in both releases: found.
    let mut no_gw = r.clone();
    no_gw.routes.retain(|x| x.dst == "0.0.0.0/0".parse().ok());
    no_gw.routes[0].gw = None;
    for release in PluginsRelease::ALL {
        assert_eq!(
            check_on(&mut h, release, &no_gw),
            Ok(PluginOutput::Empty),
            "{release:?}"
        );
    }
    // A route whose gw is not the table's is missing in both; each release prints the
    // route as its CNI library's `types.Route` String does.
    let mut wrong_gw = r.clone();
    wrong_gw.routes[0].gw = "10.244.1.99".parse().ok();
    assert_eq!(
        check_on(&mut h, PluginsRelease::V1_9_1, &wrong_gw)
            .unwrap_err()
            .msg,
        "Expected Route {Dst:{IP:10.96.0.0 Mask:fff00000} GW:10.244.1.99 MTU:0 AdvMSS:0 Priority:0 Table:<nil> Scope:<nil>} not found in routing table"
    );
    assert_eq!(
        check_on(&mut h, PluginsRelease::V1_1_1, &wrong_gw)
            .unwrap_err()
            .msg,
        "Expected Route {Dst:{IP:10.96.0.0 Mask:fff00000} GW:10.244.1.99} not found in routing table"
    );
    // Without IPAM routes CHECK passes, and a missing container link is reported.
    let mut conf = bridge_conf();
    conf["ipam"]["routes"] = json!([]);
    let mut r2 = r.clone();
    r2.routes.retain(|x| x.dst == "0.0.0.0/0".parse().ok());
    assert_eq!(
        call(
            &mut h,
            &Bridge,
            &env(CniCommand::Check),
            conf.clone(),
            None,
            Some(&r2)
        )
        .reply,
        Ok(PluginOutput::Empty)
    );
    let mut bad = r2.clone();
    bad.interfaces[0].mac = "02:00:00:00:00:99".into();
    assert_eq!(
        err(call(
            &mut h,
            &Bridge,
            &env(CniCommand::Check),
            conf.clone(),
            None,
            Some(&bad)
        ))
        .msg,
        "Bridge interface cni0 Mac doesn't match: 02:00:00:00:00:99"
    );
    h.netns.get_mut(NS).unwrap().links.remove("eth0");
    assert_eq!(
        err(call(
            &mut h,
            &Bridge,
            &env(CniCommand::Check),
            conf,
            None,
            Some(&r2)
        ))
        .msg,
        "Interface name eth0 not found"
    );
}

#[test]
fn bridge_status_forwards_to_ipam() {
    // STATUS exists from 1.1.0 on; skel refuses it for older configs.
    let mut conf = bridge_conf();
    conf["cniVersion"] = json!("1.1.0");
    let c = call(
        &mut host(),
        &Bridge,
        &env(CniCommand::Status),
        conf,
        None,
        None,
    );
    assert_eq!(
        c.delegated,
        vec![("host-local".to_string(), CniCommand::Status)]
    );
    assert_eq!(c.reply, Ok(PluginOutput::Empty));
}

fn portmap_conf() -> Value {
    json!({"cniVersion": "1.0.0", "name": "lab-net", "type": "portmap", "snat": true})
}

fn port_mappings() -> Value {
    json!({"portMappings": [
        {"hostPort": 8080, "containerPort": 80, "protocol": "tcp"},
        {"hostPort": 5353, "containerPort": 53, "protocol": "udp", "hostIP": "192.168.0.2"}
    ]})
}

/// conditionsV4 words take their places as iptables parses them: Debian's portmap 1.1.1
/// with `["!", "-d", "192.0.2.0/24", "-m", "addrtype", "--dst-type", "LOCAL", "-i",
/// "eth0"]` left this entry rule (`iptables -t nat -S`, container ID "abc").
#[test]
fn portmap_conditions_print_in_iptables_order() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let mut conf = portmap_conf();
    conf["conditionsV4"] = json!([
        "!",
        "-d",
        "192.0.2.0/24",
        "-m",
        "addrtype",
        "--dst-type",
        "LOCAL",
        "-i",
        "eth0"
    ]);
    let mappings = json!({"portMappings": [
        {"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}
    ]});
    result(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        conf,
        Some(mappings),
        Some(&br),
    ));
    let chain = super::portmap::dnat_chain_name("lab-net", CID);
    let entry = lab_rules(&h)["CNI-HOSTPORT-DNAT"].clone();
    assert_eq!(
        entry,
        [format!(
            "! -d 192.0.2.0/24 -i eth0 -p tcp -m comment --comment \
             \"dnat name: \\\"lab-net\\\" id: \\\"{CID}\\\"\" -m multiport --dports 8080 \
             -m addrtype --dst-type LOCAL -j {chain}"
        )]
    );
}

/// `externalSetMarkChain` names a chain the node's nat table must have: without it
/// iptables refuses the jump and the ADD fails (Debian's portmap 1.1.1, observed).
#[test]
fn portmap_refuses_an_external_set_mark_chain_the_table_lacks() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let mut conf = portmap_conf();
    conf["externalSetMarkChain"] = json!("KUBE-MARK-MASQ");
    let mappings = json!({"portMappings": [
        {"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}
    ]});
    let add = |h: &mut Host| {
        call(
            h,
            &Portmap,
            &env(CniCommand::Add),
            conf.clone(),
            Some(mappings.clone()),
            Some(&br),
        )
    };
    let e = err(add(&mut h));
    let chain = super::portmap::dnat_chain_name("lab-net", CID);
    assert_eq!(e.code, 999);
    assert_eq!(
        e.msg,
        format!(
            "unable to setup DNAT: running [/usr/sbin/iptables -t nat -C {chain} -p tcp \
             --dport 8080 -s 10.244.1.2/24 -j KUBE-MARK-MASQ --wait]: exit status 2: iptables \
             v1.8.9 (nf_tables): Chain 'KUBE-MARK-MASQ' does not exist\nTry `iptables -h' or \
             'iptables --help' for more information.\n"
        )
    );
    let rules = lab_rules(&h);
    assert!(
        !rules
            .values()
            .flatten()
            .any(|r| r.contains("KUBE-MARK-MASQ")),
        "{rules:?}"
    );
    // Once kube-proxy's chain is there, the same ADD succeeds and jumps to it.
    h.netfilter.ip4.nat.ensure_chain("KUBE-MARK-MASQ");
    result(add(&mut h));
    assert!(lab_rules(&h)[&chain][0].ends_with("-j KUBE-MARK-MASQ"));
}

#[test]
fn portmap_rules_match_real_iptables() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let pm = result(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        Some(port_mappings()),
        Some(&br),
    ));
    assert_eq!(pm, br, "portmap passes prevResult through");
    assert_like_real(
        &pm,
        include_str!("../../../../tests/fixtures/real/portmap-add.json"),
    );
    assert_eq!(
        lab_rules(&h),
        real_rules(include_str!(
            "../../../../tests/fixtures/real/portmap-iptables-S-nat.txt"
        ))
    );
    assert_eq!(
        h.sysctls
            .get("net.ipv4.conf.cni0.route_localnet")
            .map(compact_str::CompactString::as_str),
        Some("1")
    );
    // CHECK finds the chain; after DEL (twice) it is gone and CHECK says so.
    let check = |h: &mut Host| {
        call(
            h,
            &Portmap,
            &env(CniCommand::Check),
            portmap_conf(),
            Some(port_mappings()),
            Some(&br),
        )
        .reply
    };
    assert_eq!(check(&mut h), Ok(PluginOutput::Empty));
    for _ in 0..2 {
        let c = call(
            &mut h,
            &Portmap,
            &env(CniCommand::Del),
            portmap_conf(),
            Some(port_mappings()),
            Some(&br),
        );
        assert_eq!(c.reply, Ok(PluginOutput::Empty));
    }
    assert_eq!(
        check(&mut h).unwrap_err().msg,
        "could not check ipv4 dnat: chain CNI-DN-20afed91d8ddf53001608 not found in iptables table nat"
    );
    // Bridge DEL too: what is left is what the real plugins left.
    call(
        &mut h,
        &Bridge,
        &env(CniCommand::Del),
        bridge_conf(),
        None,
        Some(&br),
    );
    assert_eq!(
        lab_rules(&h),
        real_rules(include_str!(
            "../../../../tests/fixtures/real/iptables-save-nat-after-del.txt"
        ))
    );
}

/// Debian's 1.1.1 checks an IPv4 pod's chain in ip6tables too and fails there (run against
/// the real binary in `tests/underlay_differential.rs`, case `portmap_after_bridge`).
#[test]
fn portmap_check_of_release_1_1_1_fails_in_ip6tables() {
    let mut h = host();
    let br = bridge_add(&mut h);
    call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        Some(port_mappings()),
        Some(&br),
    );
    let reg = registry().with_release(crate::cni::release::PluginsRelease::V1_1_1);
    let mut ctx = PluginCtx {
        host: &mut h,
        registry: &reg,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    let mut stdin = Stdin::from_conf(portmap_conf());
    stdin.runtime_config = Some(Arc::new(port_mappings()));
    stdin.prev_result = Some(Arc::new(br.clone()));
    let e = Portmap
        .invoke(&mut ctx, &env(CniCommand::Check), &stdin)
        .unwrap_err();
    assert_eq!(
        e.msg,
        "could not check ipv6 dnat: chain CNI-DN-20afed91d8ddf53001608 not found in iptables table nat"
    );
}

#[test]
fn portmap_errors_and_pass_through() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let e = err(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        Some(port_mappings()),
        None,
    ));
    assert_eq!(e.msg, "must be called as chained plugin");
    let e = err(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Check),
        portmap_conf(),
        Some(port_mappings()),
        None,
    ));
    assert_eq!(e.msg, "Required prevResult missing");
    let mut pm = port_mappings();
    pm["portMappings"][0]["containerPort"] = json!(0);
    let e = err(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        Some(pm),
        Some(&br),
    ));
    assert_eq!(
        e.msg,
        "failed to parse config: Invalid container port number: 0"
    );
    let mut pm = port_mappings();
    pm["portMappings"][0]["hostPort"] = json!(-1);
    let e = err(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        Some(pm),
        Some(&br),
    ));
    assert_eq!(
        e.msg,
        "failed to parse config: Invalid host port number: -1"
    );
    let mut c = portmap_conf();
    c["markMasqBit"] = json!(40);
    let e = err(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        c,
        Some(port_mappings()),
        Some(&br),
    ));
    assert_eq!(
        e.msg,
        "failed to parse config: MasqMarkBit must be between 0 and 31"
    );
    // No mappings: prevResult out, nothing written.
    let before = h.netfilter.ip4.nat.clone();
    let r = result(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        portmap_conf(),
        None,
        Some(&br),
    ));
    assert_eq!(r, br);
    assert_eq!(h.netfilter.ip4.nat, before);
}

#[test]
fn portmap_masq_all_and_no_snat() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let mut c = portmap_conf();
    c["masqAll"] = json!(true);
    let pm = json!({"portMappings": [{"hostPort": 80, "containerPort": 8080, "protocol": "tcp", "hostIP": "0.0.0.0"}]});
    result(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        c,
        Some(pm.clone()),
        Some(&br),
    ));
    assert_eq!(
        h.netfilter.ip4.nat.chains()["CNI-DN-20afed91d8ddf53001608"],
        vec![
            "-p tcp -m tcp --dport 80 -j CNI-HOSTPORT-SETMARK",
            "-p tcp -m tcp --dport 80 -j DNAT --to-destination 10.244.1.2:8080",
        ]
    );
    let mut h = host();
    let br = bridge_add(&mut h);
    let mut c = portmap_conf();
    c["snat"] = json!(false);
    result(call(
        &mut h,
        &Portmap,
        &env(CniCommand::Add),
        c,
        Some(pm),
        Some(&br),
    ));
    assert!(
        !h.netfilter
            .ip4
            .nat
            .chains()
            .contains_key("CNI-HOSTPORT-SETMARK")
    );
    assert_eq!(
        h.netfilter.ip4.nat.chains()["CNI-DN-20afed91d8ddf53001608"].len(),
        1
    );
}

fn bw_conf() -> Value {
    json!({"cniVersion": "1.0.0", "name": "lab-net", "type": "bandwidth"})
}

fn bw_rc() -> Value {
    json!({"bandwidth": {"ingressRate": 1000000, "ingressBurst": 2000000,
                         "egressRate": 8000000, "egressBurst": 16000000}})
}

#[test]
fn bandwidth_matches_real_result_and_tc() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let bw = result(call(
        &mut h,
        &Bandwidth,
        &env(CniCommand::Add),
        bw_conf(),
        Some(bw_rc()),
        Some(&br),
    ));
    assert_like_real(
        &bw,
        include_str!("../../../../tests/fixtures/real/bandwidth-add.json"),
    );
    assert_eq!(bw.interfaces[3].name, "bwp20afed91d8dd");
    let veth = &br.interfaces[1].name;
    let real: Vec<String> = include_str!("../../../../tests/fixtures/real/bandwidth-tc-qdisc.txt")
        .lines()
        .filter(|l| !l.starts_with("qdisc noqueue"))
        .map(|l| l.replace("veth7c24555a", veth))
        .collect();
    let lab: Vec<String> = h.qdiscs.iter().map(|q| q.to_tc_line()).collect();
    assert_eq!(lab, real);
    let check = |h: &mut Host, rc: Value| {
        call(
            h,
            &Bandwidth,
            &env(CniCommand::Check),
            bw_conf(),
            Some(rc),
            Some(&bw),
        )
        .reply
    };
    assert_eq!(check(&mut h, bw_rc()), Ok(PluginOutput::Empty));
    let mut other = bw_rc();
    other["bandwidth"]["ingressRate"] = json!(2000000);
    assert_eq!(check(&mut h, other).unwrap_err().msg, "Rate doesn't match");
    // DEL twice: the ifb goes; the veth's qdiscs go with the veth (bridge DEL).
    for _ in 0..2 {
        let c = call(
            &mut h,
            &Bandwidth,
            &env(CniCommand::Del),
            bw_conf(),
            Some(bw_rc()),
            Some(&bw),
        );
        assert_eq!(c.reply, Ok(PluginOutput::Empty));
    }
    assert!(!h.root.links.contains_key("bwp20afed91d8dd"));
    assert_eq!(h.qdiscs.len(), 2);
    call(
        &mut h,
        &Bandwidth,
        &env(CniCommand::Del),
        bridge_conf(),
        None,
        Some(&bw),
    );
    call(
        &mut h,
        &Bridge,
        &env(CniCommand::Del),
        bridge_conf(),
        None,
        Some(&bw),
    );
    assert!(h.qdiscs.is_empty());
}

#[test]
fn bandwidth_config_rules() {
    let mut h = host();
    let br = bridge_add(&mut h);
    let run = |h: &mut Host, conf: Value, rc: Option<Value>, prev: Option<&CniResult>| {
        call(h, &Bandwidth, &env(CniCommand::Add), conf, rc, prev).reply
    };
    let mut rc = bw_rc();
    rc["bandwidth"]["ingressBurst"] = json!(0);
    assert_eq!(
        run(&mut h, bw_conf(), Some(rc), Some(&br)).unwrap_err().msg,
        "if rate is set, burst must also be set"
    );
    let mut rc = bw_rc();
    rc["bandwidth"]["ingressRate"] = json!(0);
    assert_eq!(
        run(&mut h, bw_conf(), Some(rc), Some(&br)).unwrap_err().msg,
        "if burst is set, rate must also be set"
    );
    let mut rc = bw_rc();
    rc["bandwidth"]["egressBurst"] = json!(40_000_000_000u64);
    assert_eq!(
        run(&mut h, bw_conf(), Some(rc), Some(&br)).unwrap_err().msg,
        "burst cannot be more than 4GB"
    );
    assert_eq!(
        run(&mut h, bw_conf(), Some(bw_rc()), None).unwrap_err().msg,
        "must be called as chained plugin"
    );
    assert_eq!(
        call(
            &mut h,
            &Bandwidth,
            &env(CniCommand::Check),
            bw_conf(),
            Some(bw_rc()),
            None
        )
        .reply
        .unwrap_err()
        .msg,
        "must be called as a chained plugin"
    );
    // All zero: prevResult passes through untouched.
    let zero = json!({"bandwidth": {}});
    assert_eq!(
        run(&mut h, bw_conf(), Some(zero), Some(&br)),
        Ok(PluginOutput::Result(Arc::new(br.clone())))
    );
    // Static keys win over runtimeConfig (here: zero static = pass through).
    let mut c = bw_conf();
    c["ingressRate"] = json!(0);
    assert_eq!(
        run(&mut h, c, Some(bw_rc()), Some(&br)),
        Ok(PluginOutput::Result(Arc::new(br.clone())))
    );
    assert!(h.qdiscs.is_empty());
    // The netns bug of 1.1.1: the nil handle is printed instead of the path.
    let mut e = env(CniCommand::Add);
    e.netns = "/var/run/netns/nope".into();
    let c = call(&mut h, &Bandwidth, &e, bw_conf(), Some(bw_rc()), Some(&br));
    assert_eq!(
        err(c).msg,
        "failed to open netns %!q(<nil>): failed to Statfs \"/var/run/netns/nope\": no such file or directory"
    );
}

#[test]
fn cilium_cni_needs_the_agent_and_asks_it_for_the_address() {
    use crate::cni::cilium_api::AgentApi;
    use crate::cni::plugins::cilium::{CiliumCni, NO_AGENT, lxc_name};
    let conf = json!({"cniVersion": "0.3.1", "name": "cilium", "type": "cilium-cni"});
    let mut h = host();
    let e = err(call(
        &mut h,
        &CiliumCni,
        &env(CniCommand::Add),
        conf.clone(),
        None,
        None,
    ));
    assert_eq!(e.msg, NO_AGENT);
    assert!(
        e.msg.starts_with("unable to connect to Cilium agent: "),
        "{}",
        e.msg
    );
    h.cilium = AgentApi::start("10.244.1.0/24".parse().unwrap(), 1500, 1450);
    let r = result(call(
        &mut h,
        &CiliumCni,
        &env(CniCommand::Add),
        conf.clone(),
        None,
        None,
    ));
    assert_eq!(r.interfaces.len(), 1);
    assert_eq!(r.interfaces[0].name, "eth0");
    assert_eq!(r.ips[0].address.to_string(), "10.244.1.2/32");
    assert_eq!(r.ips[0].gateway, "10.244.1.1".parse().ok());
    assert_eq!(r.ips[0].interface, Some(crate::cni::types::IfIndex::new(0)));
    let lxc = lxc_name(CID);
    assert!(h.root.links.contains_key(&lxc), "{lxc}");
    let routes: Vec<String> = h.netns[NS]
        .route_table()
        .iter()
        .map(|r| r.to_ip_route())
        .collect();
    assert_eq!(
        routes,
        [
            "default via 10.244.1.1 dev eth0 mtu 1450",
            "10.244.1.1 dev eth0 scope link"
        ]
    );
    // DEL releases the address; without the agent it still succeeds (the deletion
    // queue), removing the interface.
    call(
        &mut h,
        &CiliumCni,
        &env(CniCommand::Del),
        conf.clone(),
        None,
        None,
    )
    .reply
    .unwrap();
    assert_eq!(h.cilium.as_ref().unwrap().endpoints_in_use(), 0);
    assert!(!h.root.links.contains_key(&lxc));
    h.cilium = None;
    call(&mut h, &CiliumCni, &env(CniCommand::Del), conf, None, None)
        .reply
        .unwrap();
}

#[test]
fn the_lxc_name_is_sha256_of_the_container_id() {
    // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223…
    assert_eq!(
        crate::cni::plugins::cilium::lxc_name("abc"),
        "lxcba7816bf8f01"
    );
}
