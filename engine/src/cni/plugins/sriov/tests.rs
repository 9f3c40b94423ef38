//! sriov-cni against a node with one PF and two VFs, IPAM by the real host-local model.

use super::*;
use crate::cni::host::Netns;
use crate::cni::registry::Registry;
use std::sync::Arc;

const NS: &str = "/var/run/netns/pod1";
const NS2: &str = "/var/run/netns/pod2";
const VF0: &str = "0000:03:02.0";

/// Test-only IPAM that returns no IPs.
struct EmptyIpam;

impl Plugin for EmptyIpam {
    fn type_name(&self) -> &'static str {
        "empty-ipam"
    }
    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }
    fn invoke(&self, _: &mut PluginCtx<'_>, _: &CniEnv, stdin: &Stdin) -> PluginReply {
        Ok(PluginOutput::Result(Arc::new(CniResult {
            cni_version: stdin.cni_version().into(),
            ..Default::default()
        })))
    }
}

fn host() -> Host {
    let mut h = Host::new(
        "sriov-1",
        "192.168.0.9",
        "02:00:00:00:00:09".parse().expect("a MAC"),
    );
    crate::cni::sriov_nic::install(&mut h, "ens1f0", 2);
    h.netns.insert(NS, Netns::with_loopback());
    h.netns.insert(NS2, Netns::with_loopback());
    h
}

fn registry() -> Registry {
    let mut r = Registry::standard();
    r.install(Box::new(EmptyIpam));
    r
}

fn env(cmd: CniCommand, cid: &str, netns: &str, ifname: &str) -> CniEnv {
    CniEnv {
        command: Some(cmd),
        container_id: cid.into(),
        netns: netns.into(),
        ifname: ifname.into(),
        args: String::new(),
        path: "/opt/cni/bin".into(),
    }
}

fn conf(extra: Value) -> Value {
    let mut c = json!({
        "cniVersion": "1.0.0", "name": "sriov-net", "type": "sriov", "deviceID": VF0,
        "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.56.217.0/24"}]],
                 "dataDir": "/var/lib/cni/networks"}
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut c, extra) {
        for (k, v) in e {
            if v.is_null() {
                m.remove(&k);
            } else {
                m.insert(k, v);
            }
        }
    }
    c
}

fn run(h: &mut Host, e: &CniEnv, c: Value) -> PluginReply {
    let reg = registry();
    let mut ctx = PluginCtx {
        host: h,
        registry: &reg,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    Sriov.invoke(&mut ctx, e, &Stdin::from_conf(c))
}

fn err(r: PluginReply) -> String {
    match r {
        Err(e) => e.msg,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn add_moves_the_vf_and_del_restores_it() {
    let mut h = host();
    let before = h.root.links.get("ens1f0v0").unwrap().clone();
    let r = run(
        &mut h,
        &env(CniCommand::Add, "c1", NS, "net2"),
        conf(json!({"mac": "CA:FE:C0:FF:EE:01"})),
    );
    let Ok(PluginOutput::Result(res)) = r else {
        panic!("{r:?}")
    };
    assert_eq!(res.interfaces.len(), 1);
    let i = &res.interfaces[0];
    assert_eq!(
        (
            i.name.as_str(),
            i.mac.to_string().as_str(),
            i.mtu,
            i.sandbox_path()
        ),
        ("net2", "ca:fe:c0:ff:ee:01", 1500, NS)
    );
    assert_eq!(res.ips[0].address.to_string(), "10.56.217.2/24");
    assert_eq!(
        res.ips[0].interface,
        Some(crate::cni::types::IfIndex::new(0))
    );
    assert!(!h.root.links.contains_key("ens1f0v0"), "gone from the host");
    let l = h.netns[NS].links.get("net2").unwrap();
    assert!(l.up);
    assert_eq!(l.mac, "ca:fe:c0:ff:ee:01");
    assert_eq!(l.pci(), Some(VF0));
    assert_eq!(l.addrs, ["10.56.217.2/24".parse::<ipnet::IpNet>().unwrap()]);
    assert_eq!(h.vfs[VF0].admin_mac, "ca:fe:c0:ff:ee:01");
    assert_eq!(h.files[&marker_path(VF0)], NS);
    assert!(h.files.contains_key("/var/lib/cni/sriov/c1-net2"));

    // A second pod asking for the same VF is refused.
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c2", NS2, "net1"),
        conf(json!({})),
    ));
    assert_eq!(
        e,
        "SRIOV-CNI failed to load netconf: pci address 0000:03:02.0 is already allocated"
    );

    assert_eq!(
        run(
            &mut h,
            &env(CniCommand::Check, "c1", NS, "net2"),
            conf(json!({}))
        ),
        Ok(PluginOutput::Empty)
    );
    assert_eq!(
        run(
            &mut h,
            &env(CniCommand::Del, "c1", NS, "net2"),
            conf(json!({}))
        ),
        Ok(PluginOutput::Empty)
    );
    let back = h.root.links.get("ens1f0v0").unwrap();
    assert_eq!(back, &before, "name, MAC, MTU, DOWN, no addresses");
    assert!(!h.netns[NS].links.contains_key("net2"));
    assert!(!h.files.contains_key(&marker_path(VF0)));
    assert!(!h.files.contains_key("/var/lib/cni/sriov/c1-net2"));
    assert_eq!(h.vfs[VF0].admin_mac, "00:00:00:00:00:00");
    // DEL again: no cache, success.
    assert_eq!(
        run(
            &mut h,
            &env(CniCommand::Del, "c1", NS, "net2"),
            conf(json!({}))
        ),
        Ok(PluginOutput::Empty)
    );
    // host-local hands out the next address after its last reservation.
    let Ok(PluginOutput::Result(res)) = run(
        &mut h,
        &env(CniCommand::Add, "c3", NS2, "net1"),
        conf(json!({})),
    ) else {
        panic!()
    };
    assert_eq!(res.ips[0].address.to_string(), "10.56.217.3/24");
    assert_eq!(before.mac, res.interfaces[0].mac, "no mac: the VF's own");
}

#[test]
fn load_conf_errors() {
    let mut h = host();
    let add = env(CniCommand::Add, "c1", NS, "net2");
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"deviceID": null}),
            "SRIOV-CNI failed to load netconf: LoadConf(): VF pci addr is required",
        ),
        (
            json!({"deviceID": "0000:99:00.0"}),
            "SRIOV-CNI failed to load netconf: LoadConf(): failed to get VF information: \"lstat /sys/bus/pci/devices/0000:99:00.0/physfn/net: no such file or directory\"",
        ),
        (
            json!({"vlan": 5000}),
            "SRIOV-CNI failed to load netconf: LoadConf(): vlan id 5000 invalid: value must be in the range 0-4094",
        ),
        (
            json!({"vlan": 10, "vlanQoS": 9}),
            "SRIOV-CNI failed to load netconf: LoadConf(): vlan QoS PCP 9 invalid: value must be in the range 0-7",
        ),
        (
            json!({"vlanQoS": 1}),
            "SRIOV-CNI failed to load netconf: LoadConf(): vlan id must be configured to set vlan QoS to a non-nil value",
        ),
        (
            json!({"vlan": 0, "vlanQoS": 3}),
            "SRIOV-CNI failed to load netconf: LoadConf(): non-zero vlan id must be configured to set vlan QoS to a non-zero value",
        ),
        (
            json!({"vlan": 10, "vlanProto": "802.1x"}),
            "SRIOV-CNI failed to load netconf: LoadConf(): vlan Proto 802.1x invalid: value must be '802.1Q' or '802.1ad'",
        ),
        (
            json!({"link_state": "up"}),
            "SRIOV-CNI failed to load netconf: LoadConf(): invalid link_state value: up",
        ),
        (
            json!({"vlan": "10"}),
            "SRIOV-CNI failed to load netconf: LoadConf(): failed to load netconf: json: cannot unmarshal string into Go struct field NetConf.vlan of type int",
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(err(run(&mut h, &add, conf(extra.clone()))), want, "{extra}");
    }
    // Nothing changed.
    assert!(h.root.links.contains_key("ens1f0v0"));
    assert!(h.files.keys().all(|f| f == crate::cni::host::RESOLV_CONF));
}

#[test]
fn vf_config_through_the_pf_and_its_reset() {
    let mut h = host();
    let add = env(CniCommand::Add, "c1", NS, "net2");
    let c = conf(
        json!({"vlan": 100, "vlanQoS": 2, "spoofchk": "off", "trust": "on", "link_state": "enable", "min_tx_rate": 10, "max_tx_rate": 100}),
    );
    assert!(run(&mut h, &add, c.clone()).is_ok());
    let v = &h.vfs[VF0];
    assert_eq!(
        (
            v.vlan,
            v.qos,
            v.spoofchk,
            v.trust,
            v.link_state.as_str(),
            v.min_tx_rate,
            v.max_tx_rate
        ),
        (100, 2, false, true, "enable", 10, 100)
    );
    assert!(run(&mut h, &env(CniCommand::Del, "c1", NS, "net2"), c).is_ok());
    assert_eq!(
        h.vfs[VF0],
        crate::cni::sriov_nic::VfConfig::new("ens1f0", 0)
    );

    // A bad rate: the VF is reset and stays on the host.
    let e = err(run(
        &mut h,
        &add,
        conf(json!({"vlan": 7, "min_tx_rate": 200, "max_tx_rate": 100})),
    ));
    assert_eq!(
        e,
        "SRIOV-CNI failed to configure VF \"failed to set vf 0 min_tx_rate to 200 Mbps: max_tx_rate to 100 Mbps: invalid argument\""
    );
    assert_eq!(h.vfs[VF0].vlan, 0);
    assert!(h.root.links.contains_key("ens1f0v0"));
}

#[test]
fn failures_after_the_move_roll_back() {
    let mut h = host();
    // The pod already has net2.
    let mut taken = h.root.links.get("eth0").unwrap().clone();
    taken.name = "net2".into();
    h.netns.get_mut(NS).unwrap().links.insert("net2", taken);
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c1", NS, "net2"),
        conf(json!({})),
    ));
    assert_eq!(
        e,
        "failed to set up pod interface \"net2\" from the device \"ens1f0\": setupVF failed: failed to move IF net2 to netns: file exists"
    );
    assert!(h.root.links.contains_key("ens1f0v0"));

    // IPAM without addresses: the VF comes back.
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c1", NS2, "net1"),
        conf(json!({"ipam": {"type": "empty-ipam"}})),
    ));
    assert_eq!(e, "IPAM plugin returned missing IP config");
    let l = h.root.links.get("ens1f0v0").unwrap();
    assert!(!l.up);
    assert!(!h.files.contains_key(&marker_path(VF0)));

    // A missing IPAM binary.
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c1", NS2, "net1"),
        conf(json!({"ipam": {"type": "nosuch"}})),
    ));
    assert!(e.starts_with("failed to set up IPAM plugin type \"nosuch\" from the device \"ens1f0\": failed to find plugin"), "{e}");
    assert!(h.root.links.contains_key("ens1f0v0"));

    // A missing netns.
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c1", "/var/run/netns/nope", "net1"),
        conf(json!({})),
    ));
    assert!(
        e.starts_with("failed to open netns \"/var/run/netns/nope\""),
        "{e}"
    );
}

#[test]
fn stale_markers_and_l2_only() {
    let mut h = host();
    // A marker whose netns is gone is stale: deleted, the VF is free.
    h.files
        .insert(marker_path(VF0), "/var/run/netns/gone".into());
    let c = conf(json!({"ipam": null}));
    let Ok(PluginOutput::Result(res)) =
        run(&mut h, &env(CniCommand::Add, "c1", NS, "net1"), c.clone())
    else {
        panic!()
    };
    assert!(res.ips.is_empty(), "L2 only");
    assert_eq!(h.files[&marker_path(VF0)], NS);
    // The VF is in a pod now: a second ADD with a fresh marker-less view still fails,
    // because the host no longer shows a netdev for it.
    h.files.remove(&marker_path(VF0));
    let e = err(run(
        &mut h,
        &env(CniCommand::Add, "c2", NS2, "net1"),
        c.clone(),
    ));
    assert_eq!(
        e,
        "SRIOV-CNI failed to load netconf: LoadConf(): the VF 0000:03:02.0 does not have a interface name or a dpdk driver"
    );
    // DEL with an empty netns: IPAM only, the cache goes, the VF stays where it is.
    assert!(run(&mut h, &env(CniCommand::Del, "c1", "", "net1"), c).is_ok());
    assert!(!h.files.contains_key("/var/lib/cni/sriov/c1-net1"));
    assert!(h.netns[NS].links.contains_key("net1"));
}

#[test]
fn mac_precedence() {
    let mut h = host();
    let mut e = env(CniCommand::Add, "c1", NS, "net1");
    e.args = "IgnoreUnknown=1;MAC=02:00:00:00:00:aa".into();
    let reg = registry();
    let mut ctx = PluginCtx {
        host: &mut h,
        registry: &reg,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    let mut stdin = Stdin::from_conf(conf(json!({"mac": "02:00:00:00:00:bb"})));
    stdin.runtime_config = Some(Arc::new(json!({"mac": "02:00:00:00:00:CC"})));
    let Ok(PluginOutput::Result(res)) = Sriov.invoke(&mut ctx, &e, &stdin) else {
        panic!()
    };
    assert_eq!(res.interfaces[0].mac, "02:00:00:00:00:cc");
}
