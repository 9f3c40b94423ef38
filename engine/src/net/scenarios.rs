//! Chapter 7's scenarios and the NetworkPolicy semantics, as a learner would check them.

use super::policy::{
    IntOrString, IpBlock, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use super::*;
use crate::cluster::selector::{LabelSelector, LabelSelectorRequirement};
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn node(name: &str, cidr: &str, addr: &str) -> NodeNet {
    let mut n = NodeNet::new(name, cidr.parse().ok(), addr.parse().ok());
    n.gateway = cidr
        .parse::<ipnet::IpNet>()
        .ok()
        .and_then(|c| c.hosts().next());
    n
}

fn pod(ns: &str, name: &str, node: &str, addr: &str, labels: &[(&str, &str)]) -> PodNet {
    let mut p = PodNet::new(ns, name, node);
    p.ip = addr.parse().ok();
    p.labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p.host_veth = Some(format!("veth{}", crate::util::hash::hex_id(&[ns, name], 8)));
    p
}

/// node-1 (10.244.1.0/24, 192.168.0.1) and node-2 (10.244.2.0/24, 192.168.0.2).
fn two_nodes() -> ClusterNet {
    ClusterNet {
        nodes: vec![
            node("node-1", "10.244.1.0/24", "192.168.0.1"),
            node("node-2", "10.244.2.0/24", "192.168.0.2"),
        ],
        ..Default::default()
    }
}

fn policy(ns: &str, name: &str, spec: NetworkPolicySpec) -> Policy {
    Policy {
        namespace: ns.into(),
        name: name.into(),
        spec,
    }
}

fn from_json(ns: &str, name: &str, json: &str) -> Policy {
    let spec: NetworkPolicySpec = serde_json::from_str(json).unwrap();
    crate::net::validate::validate_policy(ns, name, &spec).unwrap();
    policy(ns, name, spec)
}

fn flow(src: &str, dst: &str, port: u16, proto: Protocol) -> Flow {
    Flow {
        src: Endpoint::pod("default", src),
        dst: Endpoint::pod("default", dst),
        port: Some(port),
        protocol: proto,
    }
}

fn allowed(net: &ClusterNet, src: &str, dst: &str, port: u16) -> bool {
    policy::evaluate(net, &flow(src, dst, port, Protocol::Tcp))
        .unwrap()
        .allowed()
}

// Scenario 2 and the packet walks of scenario 3 drive the lab's kernels: tests/data_plane.rs.

// ---- Scenario 3: NetworkPolicy, as Kubernetes defines it ----

fn scenario_3() -> ClusterNet {
    let mut net = two_nodes();
    net.pods.push(pod(
        "default",
        "web",
        "node-1",
        "10.244.1.2",
        &[("app", "web")],
    ));
    net.pods.push(pod(
        "default",
        "db",
        "node-2",
        "10.244.2.2",
        &[("app", "db")],
    ));
    net.policies.push(from_json(
        "default",
        "db-allow-web",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"policyTypes":["Ingress"],
            "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"web"}}}],
                        "ports":[{"protocol":"TCP","port":3306}]}]}"#,
    ));
    net
}

#[test]
fn scenario_3_policy() {
    let net = scenario_3();
    let v = policy::evaluate(&net, &flow("web", "db", 3306, Protocol::Tcp)).unwrap();
    assert_eq!(
        v.text(),
        "allowed: default/web → default/db:3306/TCP; egress: no policy isolates default/web for egress; ingress: allowed by policy default/db-allow-web (ingress rule 1)"
    );
    let v = policy::evaluate(&net, &flow("web", "db", 8080, Protocol::Tcp)).unwrap();
    assert_eq!(
        v.text(),
        "denied: default/web → default/db:8080/TCP; egress: no policy isolates default/web for egress; ingress: default/db is isolated for ingress by default/db-allow-web and no rule allows traffic from default/web on 8080/TCP"
    );
    // db -> db: looped back inside the pod, no policy applies (the chapter says denied).
    let v = policy::evaluate(&net, &flow("db", "db", 3306, Protocol::Tcp)).unwrap();
    assert!(v.allowed());
    assert_eq!(v.ingress.decision, Decision::Loopback);
    // 3306/UDP is not 3306/TCP.
    assert!(
        !policy::evaluate(&net, &flow("web", "db", 3306, Protocol::Udp))
            .unwrap()
            .allowed()
    );
}

#[test]
fn default_allow_without_policies() {
    let net = scenario_3_without_policies();
    for (s, d) in [("web", "db"), ("db", "web"), ("db", "db")] {
        for port in [1, 80, 3306, 65535] {
            assert!(allowed(&net, s, d, port));
        }
    }
}

fn scenario_3_without_policies() -> ClusterNet {
    let mut net = scenario_3();
    net.policies.clear();
    net
}

#[test]
fn default_deny_all_ingress() {
    let mut net = scenario_3_without_policies();
    net.policies.push(from_json(
        "default",
        "default-deny-ingress",
        r#"{"podSelector":{},"policyTypes":["Ingress"]}"#,
    ));
    assert!(!allowed(&net, "web", "db", 3306));
    assert!(!allowed(&net, "db", "web", 80));
    let v = policy::evaluate(&net, &flow("web", "db", 80, Protocol::Tcp)).unwrap();
    assert_eq!(v.egress.decision, Decision::NotIsolated);
    // Pods in other namespaces are not isolated by it.
    net.pods
        .push(pod("other", "x", "node-1", "10.244.1.9", &[("app", "db")]));
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::pod("default", "web"),
            Endpoint::pod("other", "x"),
            80,
        ),
    )
    .unwrap();
    assert!(v.allowed());
    // The pod's own node may always reach it.
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::Node("node-2".into()),
            Endpoint::pod("default", "db"),
            8080,
        ),
    )
    .unwrap();
    assert!(v.allowed());
    assert!(
        v.text()
            .contains("ingress: traffic from its own node node-2 is always allowed")
    );
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::Node("node-1".into()),
            Endpoint::pod("default", "db"),
            8080,
        ),
    )
    .unwrap();
    assert!(!v.allowed());
    assert!(v.text().starts_with("denied: node-1 → default/db:8080/TCP; egress: node-1 is not a pod, NetworkPolicy does not apply; ingress: default/db is isolated"));
}

#[test]
fn egress_isolation_and_default_policy_types() {
    let mut net = scenario_3_without_policies();
    // No policyTypes, but egress rules: isolates for Ingress AND Egress.
    net.policies.push(from_json(
        "default",
        "web-egress",
        r#"{"podSelector":{"matchLabels":{"app":"web"}},
            "egress":[{"to":[{"podSelector":{"matchLabels":{"app":"db"}}}],"ports":[{"port":3306}]}]}"#,
    ));
    assert!(allowed(&net, "web", "db", 3306));
    let v = policy::evaluate(&net, &flow("web", "db", 5432, Protocol::Tcp)).unwrap();
    assert_eq!(
        v.text(),
        "denied: default/web → default/db:5432/TCP; egress: default/web is isolated for egress by default/web-egress and no rule allows traffic to default/db on 5432/TCP; ingress: no policy isolates default/db for ingress"
    );
    // Ingress is isolated too (defaulted policyTypes) with no ingress rule: db cannot reach web.
    assert!(!allowed(&net, "db", "web", 80));
    assert_eq!(
        net.policies[0].spec.defaulted().policy_types,
        vec!["Ingress", "Egress"]
    );
}

#[test]
fn egress_only_policy_leaves_ingress_open() {
    let mut net = scenario_3_without_policies();
    net.policies.push(from_json(
        "default",
        "deny-egress",
        r#"{"podSelector":{},"policyTypes":["Egress"]}"#,
    ));
    let v = policy::evaluate(&net, &flow("web", "db", 80, Protocol::Tcp)).unwrap();
    assert!(!v.allowed());
    assert_eq!(v.ingress.decision, Decision::NotIsolated);
    // Traffic from a pod to its own node is always allowed.
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::pod("default", "web"),
            Endpoint::Node("node-1".into()),
            10250,
        ),
    )
    .unwrap();
    assert!(v.allowed(), "{v}");
}

#[test]
fn namespace_selector_peers() {
    let mut net = scenario_3_without_policies();
    net.namespaces
        .insert("monitoring".into(), [("team".into(), "ops".into())].into());
    net.pods.push(pod(
        "monitoring",
        "prom",
        "node-1",
        "10.244.1.5",
        &[("app", "prom")],
    ));
    net.pods.push(pod(
        "dev",
        "prom",
        "node-1",
        "10.244.1.6",
        &[("app", "prom")],
    ));
    net.policies.push(from_json(
        "default",
        "from-ops",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"ingress":[{"from":[
            {"namespaceSelector":{"matchLabels":{"team":"ops"}}}]}]}"#,
    ));
    let to_db = |ns: &str, name: &str| {
        policy::evaluate(
            &net,
            &Flow::tcp(
                Endpoint::pod(ns, name),
                Endpoint::pod("default", "db"),
                9090,
            ),
        )
        .unwrap()
        .allowed()
    };
    assert!(to_db("monitoring", "prom"));
    assert!(!to_db("dev", "prom"));
    // namespaceSelector alone does not select the policy's own namespace unless it matches.
    assert!(!to_db("default", "web"));

    // podSelector + namespaceSelector in ONE peer: both must hold.
    net.policies[0] = from_json(
        "default",
        "from-ops",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"ingress":[{"from":[
            {"namespaceSelector":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["dev","default"]}]},
             "podSelector":{"matchLabels":{"app":"prom"}}}]}]}"#,
    );
    let to_db = |ns: &str, name: &str| {
        policy::evaluate(
            &net,
            &Flow::tcp(
                Endpoint::pod(ns, name),
                Endpoint::pod("default", "db"),
                9090,
            ),
        )
        .unwrap()
        .allowed()
    };
    assert!(to_db("dev", "prom"));
    assert!(!to_db("monitoring", "prom"));
    assert!(!to_db("default", "web"));

    // podSelector alone: only pods of the policy's own namespace.
    net.policies[0] = from_json(
        "default",
        "from-ops",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"ingress":[{"from":[
            {"podSelector":{"matchLabels":{"app":"prom"}}}]}]}"#,
    );
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::pod("dev", "prom"),
            Endpoint::pod("default", "db"),
            9090,
        ),
    )
    .unwrap();
    assert!(!v.allowed());
}

#[test]
fn ip_block_with_except() {
    let mut net = scenario_3_without_policies();
    net.policies.push(from_json(
        "default",
        "db-from-block",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"ingress":[{"from":[
            {"ipBlock":{"cidr":"10.244.0.0/16","except":["10.244.1.0/24"]}}]}]}"#,
    ));
    net.pods
        .push(pod("default", "n2", "node-2", "10.244.2.7", &[]));
    assert!(!allowed(&net, "web", "db", 3306)); // 10.244.1.2 is in the except
    assert!(allowed(&net, "n2", "db", 3306));
    // An outside address, and a node address outside the block.
    let ext = |addr: &str| {
        policy::evaluate(
            &net,
            &Flow::tcp(Endpoint::Ip(ip(addr)), Endpoint::pod("default", "db"), 3306),
        )
        .unwrap()
        .allowed()
    };
    assert!(ext("10.244.9.9"));
    assert!(!ext("10.244.1.200"));
    assert!(!ext("8.8.8.8"));
    // Egress to an outside block.
    net.policies.push(from_json(
        "default",
        "web-dns",
        r#"{"podSelector":{"matchLabels":{"app":"web"}},"policyTypes":["Egress"],
            "egress":[{"to":[{"ipBlock":{"cidr":"8.8.8.0/24"}}],"ports":[{"protocol":"UDP","port":53}]}]}"#,
    ));
    let dns = |addr: &str, proto: Protocol| {
        policy::evaluate(
            &net,
            &Flow {
                src: Endpoint::pod("default", "web"),
                dst: Endpoint::Ip(ip(addr)),
                port: Some(53),
                protocol: proto,
            },
        )
        .unwrap()
        .allowed()
    };
    assert!(dns("8.8.8.8", Protocol::Udp));
    // A pod's address given as an IP is that pod: labels and namespace apply.
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::Ip(ip("10.244.2.7")),
            Endpoint::pod("default", "db"),
            3306,
        ),
    )
    .unwrap();
    assert!(v.flow.starts_with("default/n2 → default/db"), "{v}");
    assert!(!dns("8.8.8.8", Protocol::Tcp));
    assert!(!dns("1.1.1.1", Protocol::Udp));
}

#[test]
fn union_of_two_policies() {
    let mut net = scenario_3();
    net.pods.push(pod(
        "default",
        "admin",
        "node-1",
        "10.244.1.3",
        &[("role", "admin")],
    ));
    assert!(!allowed(&net, "admin", "db", 3306));
    net.policies.push(from_json(
        "default",
        "db-allow-admin",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},
            "ingress":[{"from":[{"podSelector":{"matchLabels":{"role":"admin"}}}]}]}"#,
    ));
    assert!(allowed(&net, "admin", "db", 3306));
    assert!(allowed(&net, "admin", "db", 22));
    assert!(allowed(&net, "web", "db", 3306));
    assert!(!allowed(&net, "web", "db", 22));
    let v = policy::evaluate(&net, &flow("web", "db", 22, Protocol::Tcp)).unwrap();
    assert!(v.text().ends_with(
        "ingress: default/db is isolated for ingress by default/db-allow-admin, default/db-allow-web and no rule allows traffic from default/web on 22/TCP"
    ));
    // Both policies allow admin → db:3306? Only admin's rule; web's rule needs app=web.
    let v = policy::evaluate(&net, &flow("admin", "db", 3306, Protocol::Tcp)).unwrap();
    assert!(
        v.text()
            .ends_with("ingress: allowed by policy default/db-allow-admin (ingress rule 1)")
    );
}

#[test]
fn ports_protocols_and_ranges() {
    let mut net = scenario_3_without_policies();
    net.policies.push(policy(
        "default",
        "db-ports",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "db")]),
            policy_types: vec!["Ingress".into()],
            ingress: vec![
                NetworkPolicyIngressRule {
                    ports: vec![NetworkPolicyPort {
                        protocol: Some("UDP".into()),
                        port: Some(IntOrString::Int(53)),
                        end_port: None,
                    }],
                    from: vec![],
                },
                NetworkPolicyIngressRule {
                    ports: vec![NetworkPolicyPort {
                        protocol: None,
                        port: Some(IntOrString::Int(32000)),
                        end_port: Some(32768),
                    }],
                    from: vec![],
                },
                NetworkPolicyIngressRule {
                    ports: vec![NetworkPolicyPort {
                        protocol: Some("SCTP".into()),
                        port: None,
                        end_port: None,
                    }],
                    from: vec![],
                },
            ],
            egress: vec![],
        },
    ));
    let ok = |port: u16, proto: Protocol| {
        policy::evaluate(&net, &flow("web", "db", port, proto))
            .unwrap()
            .allowed()
    };
    assert!(ok(53, Protocol::Udp));
    assert!(!ok(53, Protocol::Tcp));
    assert!(ok(32000, Protocol::Tcp));
    assert!(ok(32500, Protocol::Tcp));
    assert!(ok(32768, Protocol::Tcp));
    assert!(!ok(32769, Protocol::Tcp));
    assert!(!ok(31999, Protocol::Tcp));
    assert!(!ok(32500, Protocol::Udp));
    assert!(ok(9, Protocol::Sctp));
    let v = policy::evaluate(&net, &flow("web", "db", 53, Protocol::Udp)).unwrap();
    assert!(
        v.text()
            .ends_with("allowed by policy default/db-ports (ingress rule 1)")
    );
    // A packet without a port only matches rules without ports.
    let v = policy::evaluate(
        &net,
        &Flow {
            port: None,
            ..flow("web", "db", 1, Protocol::Sctp)
        },
    )
    .unwrap();
    assert!(v.allowed());
    assert_eq!(v.flow, "default/web → default/db (SCTP, no port)");
}

#[test]
fn named_ports_use_container_ports() {
    let mut net = scenario_3_without_policies();
    if let Some(db) = net.pods.iter_mut().find(|p| p.name == "db") {
        db.ports.push(ContainerPort {
            name: "mysql".into(),
            container_port: 3306,
            protocol: Protocol::Tcp,
        });
    }
    net.policies.push(from_json(
        "default",
        "db-named",
        r#"{"podSelector":{"matchLabels":{"app":"db"}},"ingress":[{"ports":[{"port":"mysql"}]}]}"#,
    ));
    assert!(allowed(&net, "web", "db", 3306));
    assert!(!allowed(&net, "web", "db", 3307));
    // Egress to a named port of the destination pod.
    net.policies.push(from_json(
        "default",
        "web-named",
        r#"{"podSelector":{"matchLabels":{"app":"web"}},"policyTypes":["Egress"],"egress":[{"ports":[{"port":"mysql"}]}]}"#,
    ));
    assert!(allowed(&net, "web", "db", 3306));
    let v = policy::evaluate(
        &net,
        &Flow::tcp(
            Endpoint::pod("default", "web"),
            Endpoint::Ip(ip("1.2.3.4")),
            3306,
        ),
    )
    .unwrap();
    assert!(!v.allowed(), "named ports never match an outside address");
}

#[test]
fn match_expressions_operators_in_policies() {
    let mut net = scenario_3_without_policies();
    net.pods.push(pod(
        "default",
        "cache",
        "node-2",
        "10.244.2.5",
        &[("app", "cache"), ("tier", "be")],
    ));
    net.pods
        .push(pod("default", "bare", "node-2", "10.244.2.6", &[]));
    let expr = |op: &str, values: &[&str]| LabelSelector {
        match_labels: Default::default(),
        match_expressions: vec![LabelSelectorRequirement {
            key: "tier".into(),
            operator: op.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
        }],
    };
    let isolated = |net: &ClusterNet, name: &str| {
        !policy::isolating_policies(net, net.pod("default", name).unwrap(), Direction::Ingress)
            .is_empty()
    };
    for (op, values, expect) in [
        ("In", vec!["be"], vec!["cache"]),
        ("NotIn", vec!["be"], vec!["bare", "db", "web"]),
        ("Exists", vec![], vec!["cache"]),
        ("DoesNotExist", vec![], vec!["bare", "db", "web"]),
    ] {
        net.policies = vec![policy(
            "default",
            "p",
            NetworkPolicySpec {
                pod_selector: expr(op, &values),
                ..Default::default()
            },
        )];
        let mut got: Vec<&str> = ["bare", "cache", "db", "web"]
            .into_iter()
            .filter(|n| isolated(&net, n))
            .collect();
        got.sort();
        assert_eq!(got, expect, "operator {op}");
    }
}

#[test]
fn json_round_trip_in_kubernetes_shape() {
    let json = r#"{"podSelector":{"matchLabels":{"role":"db"}},"policyTypes":["Ingress","Egress"],"ingress":[{"ports":[{"protocol":"TCP","port":6379}],"from":[{"ipBlock":{"cidr":"172.17.0.0/16","except":["172.17.1.0/24"]}},{"namespaceSelector":{"matchLabels":{"project":"myproject"}}},{"podSelector":{"matchLabels":{"role":"frontend"}}}]}],"egress":[{"ports":[{"protocol":"TCP","port":5978}],"to":[{"ipBlock":{"cidr":"10.0.0.0/24"}}]}]}"#;
    let spec: NetworkPolicySpec = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&spec).unwrap(), json);
    let allow_all: NetworkPolicySpec =
        serde_json::from_str(r#"{"podSelector":{},"ingress":[{}]}"#).unwrap();
    assert_eq!(allow_all.ingress.len(), 1);
    assert_eq!(
        serde_json::to_string(&allow_all.defaulted()).unwrap(),
        r#"{"podSelector":{},"policyTypes":["Ingress"],"ingress":[{}]}"#
    );
}

// ---- Properties ----

mod props {
    use super::*;
    use proptest::prelude::*;

    const LABEL_VALUES: [&str; 3] = ["a", "b", "c"];

    fn arb_labels() -> impl Strategy<Value = Vec<(usize, usize)>> {
        proptest::collection::vec((0usize..2, 0usize..3), 0..3)
    }

    fn labels_of(v: &[(usize, usize)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, val)| {
                (
                    ["app", "tier"][*k].to_string(),
                    LABEL_VALUES[*val].to_string(),
                )
            })
            .collect()
    }

    fn arb_selector() -> impl Strategy<Value = LabelSelector> {
        (
            arb_labels(),
            proptest::option::of((0usize..2, 0usize..4, 0usize..3)),
        )
            .prop_map(|(ml, ex)| LabelSelector {
                match_labels: labels_of(&ml).into_iter().collect(),
                match_expressions: ex
                    .map(|(k, op, v)| {
                        let operator = ["In", "NotIn", "Exists", "DoesNotExist"][op];
                        let values = if op < 2 {
                            vec![LABEL_VALUES[v].to_string()]
                        } else {
                            vec![]
                        };
                        LabelSelectorRequirement {
                            key: ["app", "tier"][k].into(),
                            operator: operator.into(),
                            values,
                        }
                    })
                    .into_iter()
                    .collect(),
            })
    }

    fn arb_peer() -> impl Strategy<Value = NetworkPolicyPeer> {
        prop_oneof![
            arb_selector().prop_map(|s| NetworkPolicyPeer {
                pod_selector: Some(s),
                ..Default::default()
            }),
            (arb_selector(), proptest::option::of(arb_selector())).prop_map(|(n, p)| {
                NetworkPolicyPeer {
                    pod_selector: p,
                    namespace_selector: Some(n),
                    ip_block: None,
                }
            }),
            (0u8..4).prop_map(|i| NetworkPolicyPeer {
                ip_block: Some(IpBlock {
                    cidr: format!("10.244.{i}.0/24"),
                    except: vec![format!("10.244.{i}.0/30")],
                }),
                ..Default::default()
            }),
        ]
    }

    fn arb_ports() -> impl Strategy<Value = Vec<NetworkPolicyPort>> {
        proptest::collection::vec(
            (
                0usize..3,
                proptest::option::of(1i32..100),
                proptest::option::of(0i32..20),
            )
                .prop_map(|(proto, port, range)| NetworkPolicyPort {
                    protocol: Some(["TCP", "UDP", "SCTP"][proto].into()),
                    port: port.map(IntOrString::Int),
                    end_port: port.and(range).map(|r| port.unwrap_or(1) + r),
                }),
            0..2,
        )
    }

    fn arb_policy(i: usize) -> impl Strategy<Value = Policy> {
        (
            0usize..2,
            arb_selector(),
            0usize..4,
            proptest::collection::vec(
                (proptest::collection::vec(arb_peer(), 0..2), arb_ports()),
                0..2,
            ),
            proptest::collection::vec(
                (proptest::collection::vec(arb_peer(), 0..2), arb_ports()),
                0..2,
            ),
        )
            .prop_map(move |(ns, sel, types, ing, eg)| Policy {
                namespace: ["default", "other"][ns].into(),
                name: format!("p{i}"),
                spec: NetworkPolicySpec {
                    pod_selector: sel,
                    policy_types: match types {
                        0 => vec![],
                        1 => vec!["Ingress".into()],
                        2 => vec!["Egress".into()],
                        _ => vec!["Ingress".into(), "Egress".into()],
                    },
                    ingress: ing
                        .into_iter()
                        .map(|(from, ports)| NetworkPolicyIngressRule { ports, from })
                        .collect(),
                    egress: eg
                        .into_iter()
                        .map(|(to, ports)| NetworkPolicyEgressRule { ports, to })
                        .collect(),
                },
            })
    }

    fn arb_net() -> impl Strategy<Value = ClusterNet> {
        (
            proptest::collection::vec((0usize..2, 0usize..2, arb_labels()), 1..5),
            proptest::collection::vec(arb_policy(0), 0..3),
            arb_labels(),
        )
            .prop_map(|(pods, policies, ns_labels)| {
                let mut net = two_nodes();
                for (i, (ns, node, labels)) in pods.into_iter().enumerate() {
                    let n = node + 1;
                    let mut p = pod(
                        ["default", "other"][ns],
                        &format!("pod{i}"),
                        &format!("node-{n}"),
                        &format!("10.244.{n}.{}", i + 2),
                        &[],
                    );
                    p.labels = labels_of(&labels).into_iter().collect();
                    net.pods.push(p);
                }
                net.namespaces
                    .insert("other".into(), labels_of(&ns_labels).into_iter().collect());
                net.policies = policies
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut p)| {
                        p.name = format!("p{i}");
                        p
                    })
                    .collect();
                net
            })
    }

    fn all_flows(net: &ClusterNet) -> Vec<Flow> {
        let mut eps: Vec<Endpoint> = net
            .pods
            .iter()
            .map(|p| Endpoint::pod(&p.namespace, &p.name))
            .collect();
        eps.push(Endpoint::Node("node-1".into()));
        eps.push(Endpoint::Ip(ip("10.244.3.9")));
        let mut flows = Vec::new();
        for s in &eps {
            for d in &eps {
                for (port, proto) in [
                    (Some(5), Protocol::Tcp),
                    (Some(50), Protocol::Udp),
                    (None, Protocol::Sctp),
                ] {
                    flows.push(Flow {
                        src: s.clone(),
                        dst: d.clone(),
                        port,
                        protocol: proto,
                    });
                }
            }
        }
        flows
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn policy_selecting_nobody_changes_nothing(net in arb_net(), extra in arb_policy(99), ns in 0usize..2) {
            let mut with = net.clone();
            let mut p = extra;
            p.namespace = ["default", "other"][ns].into();
            p.spec.pod_selector = LabelSelector::labels(&[("nobody", "here")]);
            with.policies.push(p);
            for f in all_flows(&net) {
                prop_assert_eq!(policy::evaluate(&net, &f).unwrap(), policy::evaluate(&with, &f).unwrap());
            }
        }

        #[test]
        fn allow_all_ingress_opens_every_ingress(net in arb_net(), which in 0usize..8) {
            let target = net.pods[which % net.pods.len()].clone();
            let mut with = net.clone();
            // Isolate the target for ingress, then allow everything in.
            with.policies.push(policy(&target.namespace, "zz-deny", NetworkPolicySpec {
                pod_selector: LabelSelector {
                    match_labels: target.labels.clone(),
                    match_expressions: vec![],
                },
                policy_types: vec!["Ingress".into()],
                ..Default::default()
            }));
            with.policies.push(policy(&target.namespace, "zz-allow-all", NetworkPolicySpec {
                pod_selector: LabelSelector::everything(),
                ingress: vec![NetworkPolicyIngressRule::default()],
                ..Default::default()
            }));
            for f in all_flows(&with) {
                if f.dst != Endpoint::pod(&target.namespace, &target.name) { continue; }
                let v = policy::evaluate(&with, &f).unwrap();
                prop_assert!(v.ingress.decision.allows(), "{}", v);
                // The egress side is whatever it was before.
                let before = policy::evaluate(&net, &f).unwrap();
                prop_assert_eq!(v.egress.decision.allows(), before.egress.decision.allows());
            }
        }
    }
}
