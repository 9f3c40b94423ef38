//! Property test: random ADD/DEL sequences over a small range, through the `HostLocal`
//! plugin. An IP is never handed out twice, never leaves the range (nor is the gateway), the
//! owner index always agrees with the leases, and each dynamic ADD picks what a naive
//! round-robin model predicts.

use lab_engine::cni::host::Host;
use lab_engine::cni::plugin::{CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, Stdin};
use lab_engine::cni::plugins::host_local::HostLocal;
use lab_engine::cni::registry::Registry;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

#[derive(Debug, Clone)]
enum Op {
    /// ADD (container, ifname, requested host number).
    Add(u8, u8, Option<u8>),
    /// DEL (container, ifname).
    Del(u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..8, 0u8..2, proptest::option::weighted(0.2, 0u8..16))
            .prop_map(|(c, i, r)| Op::Add(c, i, r)),
        2 => (0u8..8, 0u8..2).prop_map(|(c, i)| Op::Del(c, i)),
    ]
}

fn conf() -> Value {
    // 10.0.0.0/28 with rangeStart .3 and rangeEnd .12, gateway .5 (inside the range).
    json!({"cniVersion": "1.0.0", "name": "prop", "type": "host-local",
        "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.0.0.0/28",
            "rangeStart": "10.0.0.3", "rangeEnd": "10.0.0.12", "gateway": "10.0.0.5"}]]}})
}

fn v4(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
}

/// The candidates in allocation order: rangeStart..=rangeEnd without the gateway.
fn candidates() -> Vec<IpAddr> {
    (3u8..=12).filter(|n| *n != 5).map(v4).collect()
}

fn invoke(
    host: &mut Host,
    cmd: CniCommand,
    id: &str,
    ifname: &str,
    args: &str,
) -> Result<Option<IpAddr>, String> {
    let env = CniEnv {
        command: Some(cmd),
        container_id: id.into(),
        netns: "/var/run/netns/p".into(),
        ifname: ifname.into(),
        args: args.into(),
        path: "/opt/cni/bin".into(),
    };
    let registry = Registry::empty();
    let mut ctx = PluginCtx {
        host,
        registry: &registry,
        delegations: Default::default(),
        faults: None,
        kube: None,
    };
    match HostLocal.invoke(&mut ctx, &env, &Stdin::from_conf(conf())) {
        Ok(PluginOutput::Result(r)) => Ok(r.ips.first().map(|c| c.address.addr())),
        Ok(_) => Ok(None),
        Err(e) => Err(e.msg),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn leases_stay_unique_in_range_and_indexed(ops in proptest::collection::vec(op(), 1..60)) {
        let mut host = Host::new("n", "192.168.0.10", "02:00:00:00:00:01".parse().expect("a MAC"));
        let range: BTreeSet<IpAddr> = candidates().into_iter().collect();
        for op in ops {
            let before: BTreeSet<IpAddr> = host
                .ipam
                .get("prop")
                .map(|s| s.leases().keys().copied().collect())
                .unwrap_or_default();
            let last = host.ipam.get("prop").and_then(|s| s.last_reserved_ip(0));
            match op {
                Op::Add(c, i, req) => {
                    let id = format!("c{c}");
                    let ifname = format!("eth{i}");
                    let args = req.map(|n| format!("IP=10.0.0.{n}")).unwrap_or_default();
                    let held = host
                        .ipam
                        .get("prop")
                        .is_some_and(|s| !s.get_by_id(&id, &ifname).is_empty());
                    let got = invoke(&mut host, CniCommand::Add, &id, &ifname, &args);
                    if let Ok(Some(ip)) = got {
                        prop_assert!(!before.contains(&ip), "{ip} handed out twice");
                        prop_assert!(range.contains(&ip), "{ip} outside the range");
                        if req.is_none() {
                            prop_assert!(!held, "dynamic ADD for an owner that holds an IP");
                            // Naive round robin: first free candidate after the cursor.
                            let cands = candidates();
                            let start = last
                                .and_then(|l| cands.iter().position(|c| *c == l).map(|p| p + 1))
                                .unwrap_or(0);
                            let want = (0..cands.len())
                                .map(|k| cands[(start + k) % cands.len()])
                                .find(|c| !before.contains(c));
                            prop_assert_eq!(Some(ip), want);
                        }
                    } else if req.is_none() && !held {
                        // A dynamic ADD fails only when the range is full.
                        prop_assert_eq!(before.len(), range.len(), "failed with free IPs: {:?}", got);
                    }
                }
                Op::Del(c, i) => {
                    let r = invoke(&mut host, CniCommand::Del, &format!("c{c}"), &format!("eth{i}"), "");
                    prop_assert_eq!(r, Ok(None));
                    let store = &host.ipam["prop"];
                    let (id, ifname) = (format!("c{c}"), format!("eth{i}"));
                    prop_assert!(store.get_by_id(&id, &ifname).is_empty());
                }
            }
            let store = &host.ipam["prop"];
            prop_assert!(store.index_consistent(), "owner index out of sync");
            for ip in store.leases().keys() {
                prop_assert!(range.contains(ip), "lease {ip} outside the range or on the gateway");
            }
        }
    }
}
