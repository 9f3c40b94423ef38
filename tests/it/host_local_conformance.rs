//! host-local conformance vectors (reference §B.5), taken from upstream's
//! `allocator_test.go`, `range_test.go`, `range_set_test.go`, `config_test.go` and
//! `host_local_test.go` (containernetworking/plugins).

use lab_engine::cni::host::Host;
use lab_engine::cni::ipam_store::{IpamStore, Lease};
use lab_engine::cni::plugin::{CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, Stdin};
use lab_engine::cni::plugins::host_local::HostLocal;
use lab_engine::cni::plugins::host_local::allocator::{IpAllocator, RangeIter};
use lab_engine::cni::plugins::host_local::config::load_ipam_config;
use lab_engine::cni::plugins::host_local::range::{Range, RangeConf, RangeSet};
use lab_engine::cni::registry::Registry;
use serde_json::{Value, json};
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn set(subnets: &[&str]) -> RangeSet {
    let confs: Vec<RangeConf> = subnets
        .iter()
        .map(|s| RangeConf::subnet(s).unwrap())
        .collect();
    RangeSet::canonicalize(&confs).unwrap()
}

/// The "round robin" harness: pre-reserved IPs belong to "id"; the call is Get("ID", "eth0").
fn round_robin(subnets: &[&str], reserved: &[&str], last: Option<&str>) -> Result<IpAddr, String> {
    let rs = set(subnets);
    let mut store = IpamStore::new();
    for r in reserved {
        store.insert_lease(ip(r), Lease::new(&"id".into(), "eth0"));
    }
    if let Some(l) = last {
        store.set_last_reserved(0, ip(l));
    }
    IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", None)
        .map(|a| a.ip)
}

// ---- allocator_test.go "round robin" table ----

#[test]
fn rr_1_fresh_v4_29_gives_dot2() {
    assert_eq!(round_robin(&["10.0.0.0/29"], &[], None), Ok(ip("10.0.0.2")));
}

#[test]
fn rr_2_fresh_v6_64_gives_2() {
    assert_eq!(
        round_robin(&["2001:db8:1::0/64"], &[], None),
        Ok(ip("2001:db8:1::2"))
    );
}

#[test]
fn rr_3_fresh_v4_30_gives_dot2() {
    assert_eq!(round_robin(&["10.0.0.0/30"], &[], None), Ok(ip("10.0.0.2")));
}

#[test]
fn rr_4_skips_reserved() {
    assert_eq!(
        round_robin(&["10.0.0.0/29"], &["10.0.0.2"], None),
        Ok(ip("10.0.0.3"))
    );
}

#[test]
fn rr_5_starts_after_last_reserved() {
    assert_eq!(
        round_robin(&["10.0.0.0/29"], &[], Some("10.0.0.5")),
        Ok(ip("10.0.0.6"))
    );
}

#[test]
fn rr_6_skips_reserved_after_last() {
    assert_eq!(
        round_robin(
            &["10.0.0.0/29"],
            &["10.0.0.4", "10.0.0.5"],
            Some("10.0.0.3")
        ),
        Ok(ip("10.0.0.6"))
    );
}

#[test]
fn rr_7_wraps_past_range_end_and_gateway() {
    assert_eq!(
        round_robin(&["10.0.0.0/29"], &["10.0.0.6"], Some("10.0.0.5")),
        Ok(ip("10.0.0.2"))
    );
}

#[test]
fn rr_8_last_reserved_outside_set_is_ignored() {
    assert_eq!(
        round_robin(&["10.0.0.0/29"], &["10.0.0.2"], Some("10.0.0.128")),
        Ok(ip("10.0.0.3"))
    );
}

#[test]
fn rr_9_last_reserved_itself_is_tried_last() {
    assert_eq!(
        round_robin(
            &["10.0.0.0/29"],
            &["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"],
            Some("10.0.0.3")
        ),
        Ok(ip("10.0.0.3"))
    );
}

#[test]
fn rr_10_two_ranges_fresh() {
    assert_eq!(
        round_robin(&["10.0.0.0/30", "10.0.1.0/30"], &[], None),
        Ok(ip("10.0.0.2"))
    );
}

#[test]
fn rr_11_two_ranges_moves_to_next_range() {
    assert_eq!(
        round_robin(&["10.0.0.0/30", "10.0.1.0/30"], &[], Some("10.0.0.2")),
        Ok(ip("10.0.1.2"))
    );
}

#[test]
fn rr_12_three_ranges_wrap_to_first() {
    assert_eq!(
        round_robin(
            &["10.0.0.0/30", "10.0.1.0/30", "10.0.2.0/30"],
            &[],
            Some("10.0.2.2")
        ),
        Ok(ip("10.0.0.2"))
    );
}

// ---- exhaustion ----

fn assert_exhausted(r: Result<IpAddr, String>) {
    let e = r.unwrap_err();
    assert!(
        e.starts_with("no IP addresses available in range set"),
        "got {e}"
    );
}

#[test]
fn exhausted_30_with_dot2_taken() {
    assert_exhausted(round_robin(&["10.0.0.0/30"], &["10.0.0.2"], None));
}

#[test]
fn exhausted_29_full() {
    assert_exhausted(round_robin(
        &["10.0.0.0/29"],
        &["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"],
        None,
    ));
}

#[test]
fn exhausted_two_30s_full_with_exact_message() {
    let r = round_robin(
        &["10.0.0.0/30", "10.0.1.0/30"],
        &["10.0.0.2", "10.0.1.2"],
        None,
    );
    assert_eq!(
        r,
        Err("no IP addresses available in range set: 10.0.0.1-10.0.0.2,10.0.1.1-10.0.1.2".into())
    );
}

// ---- iterator on 192.168.1.0/29 ----

fn order(last: Option<&str>) -> Vec<IpAddr> {
    let rs = set(&["192.168.1.0/29"]);
    RangeIter::new(&rs, last.map(ip)).collect()
}

#[test]
fn iterator_without_cursor() {
    let want: Vec<IpAddr> = [2, 3, 4, 5, 6]
        .iter()
        .map(|n| ip(&format!("192.168.1.{n}")))
        .collect();
    assert_eq!(order(None), want);
}

#[test]
fn iterator_from_range_end_wraps() {
    let want: Vec<IpAddr> = [2, 3, 4, 5, 6]
        .iter()
        .map(|n| ip(&format!("192.168.1.{n}")))
        .collect();
    assert_eq!(order(Some("192.168.1.6")), want);
}

#[test]
fn iterator_from_middle() {
    let want: Vec<IpAddr> = [4, 5, 6, 2, 3]
        .iter()
        .map(|n| ip(&format!("192.168.1.{n}")))
        .collect();
    assert_eq!(order(Some("192.168.1.3")), want);
}

#[test]
fn iterator_multi_range_start_ip() {
    let r = |net: &str, s: &str, e: &str, gw: &str| Range {
        subnet: ip(net),
        prefix: 30,
        range_start: ip(s),
        range_end: ip(e),
        gateway: ip(gw),
    };
    let rs = RangeSet(vec![
        r("192.168.1.0", "192.168.1.0", "192.168.1.3", "192.168.1.1"),
        r("192.168.2.0", "192.168.2.0", "192.168.2.3", "192.168.2.1"),
    ]);
    let mut it = RangeIter::new(&rs, Some(ip("192.168.1.3")));
    it.next_candidate();
    assert_eq!(it.start_ip(), Some(ip("192.168.2.0")));
    let mut it = RangeIter::new(&rs, None);
    it.next_candidate();
    assert_eq!(it.start_ip(), Some(ip("192.168.1.0")));
}

// ---- other allocator cases on 192.168.1.0/29 ----

#[test]
fn allocates_dot2_to_dot6_then_fails_never_broadcast() {
    let rs = set(&["192.168.1.0/29"]);
    let mut store = IpamStore::new();
    for n in 2..=6 {
        let a = IpAllocator::new(&rs, &mut store, 0)
            .get(&format!("ID{n}").into(), "eth0", None)
            .unwrap();
        assert_eq!(a.address().to_string(), format!("192.168.1.{n}/29"));
        assert_eq!(a.gateway, ip("192.168.1.1"));
    }
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID7".into(), "eth0", None)
        .unwrap_err();
    assert_eq!(
        e,
        "no IP addresses available in range set: 192.168.1.1-192.168.1.6"
    );
}

#[test]
fn release_then_get_moves_on() {
    let rs = set(&["192.168.1.0/29"]);
    let mut store = IpamStore::new();
    let a = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", None)
        .unwrap();
    assert_eq!(a.ip, ip("192.168.1.2"));
    IpAllocator::new(&rs, &mut store, 0).release("ID", "eth0");
    let b = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", None)
        .unwrap();
    assert_eq!(b.ip, ip("192.168.1.3"));
}

#[test]
fn requested_ip_twice() {
    let rs = set(&["192.168.1.0/29"]);
    let mut store = IpamStore::new();
    let a = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", Some(ip("192.168.1.5")))
        .unwrap();
    assert_eq!(a.ip, ip("192.168.1.5"));
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID2".into(), "eth0", Some(ip("192.168.1.5")))
        .unwrap_err();
    assert_eq!(
        e,
        "requested IP address 192.168.1.5 is not available in range set 192.168.1.1-192.168.1.6"
    );
}

#[test]
fn requested_ip_beyond_range_end() {
    let conf = RangeConf {
        range_end: Some(ip("192.168.1.4")),
        ..RangeConf::subnet("192.168.1.0/29").unwrap()
    };
    let rs = RangeSet::canonicalize(&[conf]).unwrap();
    let mut store = IpamStore::new();
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", Some(ip("192.168.1.5")))
        .unwrap_err();
    assert_eq!(e, "192.168.1.5 not in range set 192.168.1.1-192.168.1.4");
}

#[test]
fn requested_ip_before_range_start() {
    let conf = RangeConf {
        range_start: Some(ip("192.168.1.3")),
        ..RangeConf::subnet("192.168.1.0/29").unwrap()
    };
    let rs = RangeSet::canonicalize(&[conf]).unwrap();
    let mut store = IpamStore::new();
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", Some(ip("192.168.1.2")))
        .unwrap_err();
    assert_eq!(e, "192.168.1.2 not in range set 192.168.1.3-192.168.1.6");
}

#[test]
fn requested_gateway_is_refused() {
    let rs = set(&["192.168.1.0/29"]);
    let mut store = IpamStore::new();
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", Some(ip("192.168.1.1")))
        .unwrap_err();
    assert_eq!(e, "requested ip 192.168.1.1 is subnet's gateway");
}

#[test]
fn duplicate_dynamic_get_is_refused() {
    let rs = set(&["192.168.1.0/29"]);
    let mut store = IpamStore::new();
    IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", None)
        .unwrap();
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth0", None)
        .unwrap_err();
    assert_eq!(
        e,
        "192.168.1.2 has been allocated to ID, duplicate allocation is not allowed"
    );
    // Same ID, another interface: fine.
    let b = IpAllocator::new(&rs, &mut store, 0)
        .get(&"ID".into(), "eth1", None)
        .unwrap();
    assert_eq!(b.ip, ip("192.168.1.3"));
}

// ---- range_test.go: defaults ----

fn canon(cidr: &str) -> Result<Range, String> {
    RangeConf::subnet(cidr).and_then(|c| c.canonicalize())
}

#[test]
fn defaults_24() {
    let r = canon("192.0.2.0/24").unwrap();
    assert_eq!(
        (r.range_start, r.range_end, r.gateway),
        (ip("192.0.2.1"), ip("192.0.2.254"), ip("192.0.2.1"))
    );
}

#[test]
fn defaults_25() {
    let r = canon("192.0.2.0/25").unwrap();
    assert_eq!(
        (r.range_start, r.range_end, r.gateway),
        (ip("192.0.2.1"), ip("192.0.2.126"), ip("192.0.2.1"))
    );
}

#[test]
fn defaults_v6_64_end_is_all_ones() {
    let r = canon("2001:db8:1::/64").unwrap();
    assert_eq!(
        (r.range_start, r.range_end, r.gateway),
        (
            ip("2001:db8:1::1"),
            ip("2001:db8:1::ffff:ffff:ffff:ffff"),
            ip("2001:db8:1::1")
        )
    );
}

// ---- range_test.go: rejections ----

#[test]
fn rejects_31() {
    assert_eq!(
        canon("192.0.2.0/31"),
        Err("Network 192.0.2.0/31 too small to allocate from".into())
    );
}

#[test]
fn rejects_host_bits_24() {
    assert_eq!(
        canon("192.0.2.12/24"),
        Err("Network has host bits set. For a subnet mask of length 24 the network address is 192.0.2.0".into())
    );
}

#[test]
fn rejects_host_bits_23() {
    assert_eq!(
        canon("192.168.127.0/23"),
        Err("Network has host bits set. For a subnet mask of length 23 the network address is 192.168.126.0".into())
    );
}

#[test]
fn rejects_host_bits_v6_63() {
    assert_eq!(
        canon("2001:db8:24:19ff::/63"),
        Err("Network has host bits set. For a subnet mask of length 63 the network address is 2001:db8:24:19fe::".into())
    );
}

#[test]
fn rejects_range_start_outside_and_end_before_start() {
    let c = RangeConf {
        range_start: Some(ip("192.0.3.1")),
        ..RangeConf::subnet("192.0.2.0/24").unwrap()
    };
    assert_eq!(
        c.canonicalize(),
        Err("RangeStart 192.0.3.1 not in network 192.0.2.0/24".into())
    );
    let c = RangeConf {
        range_start: Some(ip("192.0.2.50")),
        range_end: Some(ip("192.0.2.40")),
        ..RangeConf::subnet("192.0.2.0/24").unwrap()
    };
    assert_eq!(
        c.canonicalize(),
        Err("RangeStart 192.0.2.50 not in network 192.0.2.0/24".into())
    );
    let c = RangeConf {
        range_end: Some(ip("192.0.3.1")),
        ..RangeConf::subnet("192.0.2.0/24").unwrap()
    };
    assert_eq!(
        c.canonicalize(),
        Err("RangeEnd 192.0.3.1 not in network 192.0.2.0/24".into())
    );
}

#[test]
fn gateway_is_not_validated() {
    let c = RangeConf {
        gateway: Some(ip("10.9.9.9")),
        ..RangeConf::subnet("192.0.2.0/24").unwrap()
    };
    assert_eq!(c.canonicalize().unwrap().gateway, ip("10.9.9.9"));
}

// ---- range_test.go / range_set_test.go: overlap ----

fn overlap(a: &str, b: &str) -> bool {
    canon(a).unwrap().overlaps(&canon(b).unwrap())
}

fn span(subnet: &str, start: &str, end: &str) -> Range {
    RangeConf {
        range_start: Some(ip(start)),
        range_end: Some(ip(end)),
        ..RangeConf::subnet(subnet).unwrap()
    }
    .canonicalize()
    .unwrap()
}

#[test]
fn overlap_adjacent_24s_no() {
    assert!(!overlap("10.0.0.0/24", "10.0.1.0/24"));
}

#[test]
fn overlap_identical_yes() {
    assert!(overlap("10.0.0.0/24", "10.0.0.0/24"));
}

#[test]
fn overlap_20_containing_24_yes() {
    assert!(overlap("10.0.0.0/20", "10.0.1.0/24"));
}

#[test]
fn overlap_end_127_start_128_no() {
    let a = span("10.0.0.0/24", "10.0.0.1", "10.0.0.127");
    let b = span("10.0.0.0/24", "10.0.0.128", "10.0.0.254");
    assert!(!a.overlaps(&b));
}

#[test]
fn overlap_end_127_start_127_yes() {
    let a = span("10.0.0.0/24", "10.0.0.1", "10.0.0.127");
    let b = span("10.0.0.0/24", "10.0.0.127", "10.0.0.254");
    assert!(a.overlaps(&b));
}

#[test]
fn overlap_v4_v6_no() {
    assert!(!overlap("10.0.0.0/24", "2001:db8::/64"));
}

#[test]
fn range_set_errors() {
    assert_eq!(RangeSet::canonicalize(&[]), Err("empty range set".into()));
    let mixed = [
        RangeConf::subnet("10.0.0.0/24").unwrap(),
        RangeConf::subnet("2001:db8::/64").unwrap(),
    ];
    assert_eq!(
        RangeSet::canonicalize(&mixed),
        Err("mixed address families".into())
    );
    let over = [
        RangeConf::subnet("10.0.0.0/20").unwrap(),
        RangeConf::subnet("10.0.1.0/24").unwrap(),
    ];
    assert_eq!(
        RangeSet::canonicalize(&over),
        Err("subnets 10.0.0.1-10.0.15.254 and 10.0.1.1-10.0.1.254 overlap".into())
    );
}

// ---- config_test.go ----

fn load(conf: Value, args: &str) -> Result<Vec<String>, String> {
    load_ipam_config(&conf, args).map(|c| c.ranges.iter().map(|r| r.to_string()).collect())
}

#[test]
fn config_no_ranges() {
    let c = json!({"cniVersion": "1.0.0", "name": "mynet", "ipam": {"type": "host-local"}});
    assert_eq!(load(c, ""), Err("no IP ranges specified".into()));
}

#[test]
fn config_missing_ipam() {
    let c = json!({"cniVersion": "1.0.0", "name": "mynet"});
    assert_eq!(load(c, ""), Err("IPAM config missing 'ipam' key".into()));
}

#[test]
fn config_order_runtime_then_legacy_then_ranges() {
    let c = json!({
        "cniVersion": "1.0.0", "name": "mynet",
        "runtimeConfig": {"ipRanges": [[{"subnet": "10.5.0.0/24"}]]},
        "ipam": {"subnet": "10.1.0.0/24", "ranges": [[{"subnet": "10.2.0.0/24"}]]}
    });
    assert_eq!(
        load(c, ""),
        Ok(vec![
            "10.5.0.1-10.5.0.254".into(),
            "10.1.0.1-10.1.0.254".into(),
            "10.2.0.1-10.2.0.254".into()
        ])
    );
}

#[test]
fn config_invalid_range_set_prefix() {
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": {"ranges": [[{"subnet": "10.0.0.0/31"}]]}});
    assert_eq!(
        load(c, ""),
        Err("invalid range set 0: Network 10.0.0.0/31 too small to allocate from".into())
    );
}

#[test]
fn config_overlapping_sets() {
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": {"ranges": [
        [{"subnet": "10.0.0.0/24"}], [{"subnet": "10.1.0.0/24"}], [{"subnet": "10.0.0.0/20"}]
    ]}});
    assert_eq!(load(c, ""), Err("range set 0 overlaps with 2".into()));
}

#[test]
fn config_two_v4_sets_need_030() {
    let c = json!({"cniVersion": "0.2.0", "name": "n", "ipam": {"ranges": [
        [{"subnet": "10.0.0.0/24"}], [{"subnet": "10.1.0.0/24"}]
    ]}});
    assert_eq!(
        load(c, ""),
        Err("CNI version 0.2.0 does not support more than 1 address per family".into())
    );
}

#[test]
fn config_requested_ips_in_order() {
    let c = json!({
        "cniVersion": "1.0.0", "name": "n",
        "args": {"cni": {"ips": ["10.1.2.88"]}},
        "runtimeConfig": {"ips": ["10.1.2.77/24"]},
        "ipam": {"subnet": "10.1.2.0/24"}
    });
    let conf = load_ipam_config(&c, "IP=10.1.2.10").unwrap();
    assert_eq!(
        conf.ip_args,
        vec![ip("10.1.2.10"), ip("10.1.2.88"), ip("10.1.2.77")]
    );
}

#[test]
fn config_bad_requested_ip() {
    let c = json!({"cniVersion": "1.0.0", "name": "n",
        "args": {"cni": {"ips": [""]}}, "ipam": {"subnet": "10.1.2.0/24"}});
    assert_eq!(
        load(c, ""),
        Err("cannot understand ip: IP <nil> not v4 nor v6".into())
    );
}

#[test]
fn config_go_json_type_errors() {
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": "x"});
    assert_eq!(
        load(c, ""),
        Err("json: cannot unmarshal string into Go struct field Net.ipam of type allocator.IPAMConfig".into())
    );
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": {"ranges": [[{"subnet": 5}]]}});
    assert_eq!(
        load(c, ""),
        Err("json: cannot unmarshal number into Go struct field Range.ipam.ranges.subnet of type string".into())
    );
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": {"subnet": "10.1.2.0/33"}});
    assert_eq!(load(c, ""), Err("invalid CIDR address: 10.1.2.0/33".into()));
    // Keys match case-insensitively, as in Go.
    let c = json!({"cniVersion": "1.0.0", "name": "n", "ipam": {"Subnet": "10.1.2.0/24"}});
    assert_eq!(load(c, ""), Ok(vec!["10.1.2.1-10.1.2.254".into()]));
}

// ---- host_local_test.go, through the plugin ----

struct Node {
    host: Host,
    registry: Registry,
}

impl Node {
    fn new() -> Self {
        Node {
            host: Host::new(
                "node-1",
                "192.168.0.10",
                "02:00:00:00:00:01".parse().expect("a MAC"),
            ),
            registry: Registry::empty(),
        }
    }

    fn run(
        &mut self,
        cmd: CniCommand,
        id: &str,
        ifname: &str,
        args: &str,
        conf: &Value,
    ) -> Result<String, String> {
        let env = CniEnv {
            command: Some(cmd),
            container_id: id.into(),
            netns: "/var/run/netns/x".into(),
            ifname: ifname.into(),
            args: args.into(),
            path: "/opt/cni/bin".into(),
        };
        let mut ctx = PluginCtx {
            host: &mut self.host,
            registry: &self.registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        match HostLocal.invoke(&mut ctx, &env, &Stdin::from_conf(conf.clone())) {
            Ok(PluginOutput::Result(r)) => Ok(r.to_stdout()),
            Ok(_) => Ok(String::new()),
            Err(e) => Err(e.msg),
        }
    }

    fn add(&mut self, id: &str, conf: &Value) -> Result<String, String> {
        self.run(CniCommand::Add, id, "eth0", "", conf)
    }
}

fn dual_stack() -> Value {
    json!({
        "cniVersion": "1.0.0", "name": "mynet", "type": "host-local",
        "ipam": {"type": "host-local", "ranges": [
            [{"subnet": "10.1.2.0/24"}, {"subnet": "10.2.2.0/24"}],
            [{"subnet": "2001:db8:1::/64"}]
        ]}
    })
}

#[test]
fn dual_stack_add_result_and_files() {
    let mut n = Node::new();
    let out = n
        .run(CniCommand::Add, "dummy", "eth0", "", &dual_stack())
        .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["ips"],
        json!([
            {"address": "10.1.2.2/24", "gateway": "10.1.2.1"},
            {"address": "2001:db8:1::2/64", "gateway": "2001:db8:1::1"}
        ])
    );
    assert_eq!(v["dns"], json!({}));
    assert!(v.get("interfaces").is_none());
    let files = n.host.ipam["mynet"].files();
    assert!(files.contains(&("10.1.2.2".into(), "dummy\r\neth0".into())));
    assert!(files.contains(&("last_reserved_ip.0".into(), "10.1.2.2".into())));
    assert!(files.contains(&("last_reserved_ip.1".into(), "2001:db8:1::2".into())));
}

#[test]
fn same_container_twice_then_another() {
    let mut n = Node::new();
    n.add("dummy", &dual_stack()).unwrap();
    assert_eq!(
        n.add("dummy", &dual_stack()),
        Err("failed to allocate for range 0: 10.1.2.2 has been allocated to dummy, duplicate allocation is not allowed".into())
    );
    let out = n.add("other", &dual_stack()).unwrap();
    assert!(out.contains("\"10.1.2.3/24\""), "{out}");
}

#[test]
fn args_cni_ips_requests_ip() {
    let mut n = Node::new();
    let mut c = dual_stack();
    c["args"] = json!({"cni": {"ips": ["10.1.2.88"]}});
    let out = n.add("dummy", &c).unwrap();
    assert!(out.contains("\"10.1.2.88/24\""), "{out}");
}

#[test]
fn cni_args_ip_with_prefix() {
    let mut n = Node::new();
    let out = n
        .run(
            CniCommand::Add,
            "dummy",
            "eth0",
            "IP=10.1.2.11/24",
            &dual_stack(),
        )
        .unwrap();
    assert!(out.contains("\"10.1.2.11/24\""), "{out}");
}

#[test]
fn two_requested_in_one_set_fails_and_rolls_back() {
    let mut n = Node::new();
    let mut c = dual_stack();
    c["args"] = json!({"cni": {"ips": ["10.1.2.88", "10.1.2.99"]}});
    assert_eq!(
        n.add("dummy", &c),
        Err("failed to allocate all requested IPs: 10.1.2.99".into())
    );
    assert!(n.host.ipam["mynet"].is_empty());
}

#[test]
fn del_unknown_is_ok_and_check_fails_before_add() {
    let mut n = Node::new();
    assert_eq!(
        n.run(CniCommand::Del, "nope", "eth0", "", &dual_stack()),
        Ok(String::new())
    );
    assert_eq!(
        n.run(CniCommand::Check, "nope", "eth0", "", &dual_stack()),
        Err("host-local: Failed to find address added by container nope".into())
    );
    n.add("nope", &dual_stack()).unwrap();
    assert_eq!(
        n.run(CniCommand::Check, "nope", "eth0", "", &dual_stack()),
        Ok(String::new())
    );
}

#[test]
fn gc_and_status_succeed_silently() {
    let mut n = Node::new();
    assert_eq!(
        n.run(CniCommand::Gc, "", "", "", &dual_stack()),
        Ok(String::new())
    );
    assert_eq!(
        n.run(CniCommand::Status, "", "", "", &dual_stack()),
        Ok(String::new())
    );
}

#[test]
fn resolv_conf_fills_dns_from_the_nodes_file_and_a_missing_file_fails() {
    let mut n = Node::new();
    let mut c = dual_stack();
    c["ipam"]["resolvConf"] = json!("/etc/no-such-resolv.conf");
    assert_eq!(
        n.add("dummy", &c),
        Err("open /etc/no-such-resolv.conf: no such file or directory".into())
    );
    assert!(
        n.host.ipam.is_empty(),
        "no directory before the file is read"
    );
    // The node's own file (Host::new writes it): nameserver and search as host-local's
    // parseResolvConf reads them.
    n.host.files.insert(
        "/etc/resolv.conf".into(),
        "nameserver 10.0.0.2\nsearch ec2.internal\noptions ndots:2\n".into(),
    );
    c["ipam"]["resolvConf"] = json!("/etc/resolv.conf");
    let out: serde_json::Value = serde_json::from_str(&n.add("dummy", &c).unwrap()).unwrap();
    assert_eq!(
        out["dns"],
        json!({"nameservers": ["10.0.0.2"], "search": ["ec2.internal"], "options": ["ndots:2"]})
    );
}

#[test]
fn full_slash_16_allocates_fast() {
    let rs = set(&["10.20.0.0/16"]);
    let mut store = IpamStore::new();
    let t = std::time::Instant::now();
    for i in 0..65_533u32 {
        IpAllocator::new(&rs, &mut store, 0)
            .get(&format!("c{i}").into(), "eth0", None)
            .unwrap();
    }
    let e = IpAllocator::new(&rs, &mut store, 0)
        .get(&"last".into(), "eth0", None)
        .unwrap_err();
    assert!(e.starts_with("no IP addresses available"), "{e}");
    assert_eq!(store.len(), 65_533);
    assert!(store.index_consistent());
    assert!(t.elapsed().as_secs() < 20, "too slow: {:?}", t.elapsed());
}

/// `show ipam` lists host-local's directory as `ls` does (byte order, LC_COLLATE=C): a lease
/// file `10.244.1.10` before `10.244.1.3`, then `last_reserved_ip.0`, then `lock`, as the
/// `--real` listing of the real directory is ordered.
#[test]
fn show_ipam_lists_the_files_in_ls_order() {
    let mut lab = crate::common::lab();
    for i in 1..=10 {
        lab.execute(&format!("cni add c{i} --node node-1"))
            .unwrap_or_else(|e| panic!("c{i}: {}", e.message));
    }
    let out = lab
        .execute("show ipam node-1")
        .unwrap_or_else(|e| panic!("{}", e.message))
        .to_text();
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with("range"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    assert_eq!(names, sorted, "{out}");
    assert_eq!(
        &names[..3],
        ["10.244.1.10", "10.244.1.11", "10.244.1.2"],
        "{out}"
    );
    assert_eq!(
        &names[names.len() - 2..],
        ["last_reserved_ip.0", "lock"],
        "{out}"
    );
}
