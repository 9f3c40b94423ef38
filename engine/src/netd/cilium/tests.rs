//! Unit tests of the Cilium model: identities and the label filter, the ipcache, policy map
//! entries for typical policies, the lookup, and the rendered views.

use super::identity::{self, ID_HOST, ID_REMOTE_NODE, ID_UNKNOWN, ID_WORLD, keeps_label};
use super::policymap::masked_ports;
use super::render::{self, Packet, tabwrite};
use super::*;
use crate::cluster::selector::LabelSelector;
use crate::net::policy::{
    IntOrString, IpBlock, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use crate::net::view::{ContainerPort, NodeNet, PodNet, Policy};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn node(name: &str, n: u8) -> NodeNet {
    let mut nd = NodeNet::new(
        name,
        format!("10.244.{n}.0/24").parse().ok(),
        format!("192.168.56.1{n}").parse().ok(),
    );
    nd.gateway = format!("10.244.{n}.1").parse().ok();
    nd
}

fn pod(ns: &str, name: &str, node: &str, addr: &str, labels: &[(&str, &str)]) -> PodNet {
    let mut p = PodNet::new(ns, name, node);
    p.ip = Some(ip(addr));
    p.labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p
}

/// Two nodes; client and nginx in `default` on different nodes, db in `prod`.
fn cluster() -> ClusterNet {
    ClusterNet {
        nodes: vec![node("node-1", 1), node("node-2", 2)],
        pods: vec![
            pod(
                "default",
                "client",
                "node-1",
                "10.244.1.5",
                &[("app", "client")],
            ),
            pod(
                "default",
                "nginx",
                "node-2",
                "10.244.2.7",
                &[("app", "nginx")],
            ),
            pod("prod", "db", "node-2", "10.244.2.9", &[("app", "db")]),
        ],
        ..Default::default()
    }
}

fn np(ns: &str, name: &str, spec: NetworkPolicySpec) -> Policy {
    Policy {
        namespace: ns.into(),
        name: name.into(),
        spec,
    }
}

fn tcp(port: i32) -> NetworkPolicyPort {
    NetworkPolicyPort {
        protocol: Some("TCP".into()),
        port: Some(IntOrString::Int(port)),
        end_port: None,
    }
}

fn from_pods(sel: &[(&str, &str)]) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        pod_selector: Some(LabelSelector::labels(sel)),
        ..Default::default()
    }
}

/// `allow-client`: nginx accepts app=client on 80/TCP.
fn allow_client() -> Policy {
    np(
        "default",
        "allow-client",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "nginx")]),
            ingress: vec![NetworkPolicyIngressRule {
                ports: vec![tcp(80)],
                from: vec![from_pods(&[("app", "client")])],
            }],
            ..Default::default()
        },
    )
}

fn build(net: &ClusterNet) -> Cilium {
    let mut cids = BTreeMap::new();
    cids.insert(
        "default/nginx".to_string(),
        "4f2a2b9c1d0e3f4a5b6c7d8e9f00112233445566778899aabbccddeeff001122".to_string(),
    );
    Cilium::build(net, &cids)
}

fn verdict(c: &Cilium, src: &str, dst: &str, proto: Protocol, port: u16) -> bool {
    c.flow(ip(src), ip(dst), proto, Some(port)).allowed()
}

// ---- Identities ----

#[test]
fn label_filter_defaults() {
    for kept in [
        "app",
        "tier",
        "io.kubernetes.pod.namespace",
        "io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name",
        "io.cilium.k8s.policy.cluster",
        "io.cilium.k8s.policy.serviceaccount",
        "app.kubernetes.io/name",
        "k8s-app",
    ] {
        assert!(keeps_label(kept), "{kept} should be kept");
    }
    for dropped in [
        "pod-template-hash",
        "controller-revision-hash",
        "pod-template-generation",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "batch.kubernetes.io/job-completion-index",
        "kubernetes.io/hostname",
        "io.kubernetes.container.name",
        "k8s.io/foo",
        "failure-domain.beta.kubernetes.io/zone",
        "annotation.foo",
        "etcd_node",
        // A namespace label under beta.kubernetes.io: the ignore match is longer.
        "io.cilium.k8s.namespace.labels.beta.kubernetes.io/arch",
    ] {
        assert!(!keeps_label(dropped), "{dropped} should be dropped");
    }
}

#[test]
fn pod_identity_labels_are_the_sanitized_filtered_set() {
    let net = cluster();
    let mut p = net.pods[0].clone();
    p.labels.insert("pod-template-hash".into(), "7d9c".into());
    p.labels
        .insert("io.cilium.k8s.policy.cluster".into(), "evil".into());
    let got: Vec<String> = identity::pod_labels(&net, &p)
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        got,
        [
            "k8s:app=client",
            "k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=default",
            "k8s:io.cilium.k8s.policy.cluster=default",
            "k8s:io.cilium.k8s.policy.serviceaccount=default",
            "k8s:io.kubernetes.pod.namespace=default",
        ]
    );
}

#[test]
fn equal_label_sets_share_an_identity() {
    let mut net = cluster();
    let mut twin = pod(
        "default",
        "client-2",
        "node-2",
        "10.244.2.8",
        &[("app", "client"), ("pod-template-hash", "abc")],
    );
    net.pods.push(twin.clone());
    let c = build(&net);
    let a = c.identities.of_pod("default/client").unwrap();
    assert_eq!(c.identities.of_pod("default/client-2"), Some(a));
    assert!((256..=65535).contains(&a));
    assert_ne!(c.identities.of_pod("default/nginx"), Some(a));
    // The same labels in another namespace are another identity.
    twin.namespace = "prod".into();
    twin.name = "client-3".into();
    twin.ip = Some(ip("10.244.2.10"));
    net.pods.push(twin);
    let c = build(&net);
    assert_ne!(c.identities.of_pod("prod/client-3"), Some(a));
    // Deterministic, and kept across an update that adds an identity.
    assert_eq!(build(&net), build(&net));
    let before = build(&cluster());
    net.pods
        .push(pod("default", "x", "node-1", "10.244.1.9", &[("app", "x")]));
    let after = Cilium::update(Some(&before), &net, &BTreeMap::new());
    for key in ["default/client", "default/nginx", "prod/db"] {
        assert_eq!(
            before.identities.of_pod(key),
            after.identities.of_pod(key),
            "{key}"
        );
        assert_eq!(
            before.endpoint_of_pod(key).map(|e| e.id),
            after.endpoint_of_pod(key).map(|e| e.id)
        );
    }
}

// ---- Endpoints ----

#[test]
fn endpoints_ids_and_devices() {
    let c = build(&cluster());
    let nginx = c.endpoint_of_pod("default/nginx").unwrap();
    assert!((1..=4095).contains(&nginx.id));
    assert_eq!(nginx.node, "node-2");
    // lxc + sha256(container id)[:12]
    assert_eq!(nginx.ifname.len(), 15);
    assert!(nginx.ifname.starts_with("lxc"));
    assert_eq!(nginx.ifname, lxc_name(&nginx.container_id));
    assert_eq!(lxc_name("abc"), "lxcba7816bf8f01");
    assert_eq!(c.agent("node-2").unwrap().endpoints.len(), 2);
    // A pod without an IP has no endpoint.
    let mut net = cluster();
    net.pods[0].ip = None;
    assert!(build(&net).endpoint_of_pod("default/client").is_none());
}

// ---- ipcache ----

#[test]
fn ipcache_per_node_view() {
    let c = build(&cluster());
    let a1 = c.agent("node-1").unwrap();
    let client = c.identities.of_pod("default/client").unwrap();
    let nginx = c.identities.of_pod("default/nginx").unwrap();
    let e = |a: &NodeAgent, s: &str| a.ipcache.lookup(ip(s)).unwrap().clone();
    assert_eq!(e(a1, "8.8.8.8").identity, ID_WORLD);
    assert_eq!(e(a1, "192.168.56.11").identity, ID_HOST);
    assert_eq!(e(a1, "10.244.1.1").identity, ID_HOST);
    assert_eq!(e(a1, "192.168.56.12").identity, ID_REMOTE_NODE);
    let local = e(a1, "10.244.1.5");
    assert_eq!((local.identity, local.has_tunnel), (client, false));
    assert_eq!(local.tunnel_endpoint, ip("0.0.0.0"));
    let remote = e(a1, "10.244.2.7");
    assert_eq!(remote.identity, nginx);
    assert_eq!(remote.tunnel_endpoint, ip("192.168.56.12"));
    assert!(remote.has_tunnel);
    // Seen from node-2 the roles swap.
    let a2 = c.agent("node-2").unwrap();
    assert_eq!(e(a2, "192.168.56.11").identity, ID_REMOTE_NODE);
    assert_eq!(e(a2, "10.244.2.7").tunnel_endpoint, ip("0.0.0.0"));
    assert_eq!(e(a2, "10.244.1.5").tunnel_endpoint, ip("192.168.56.11"));
    let text = render::bpf_ipcache_list(a1);
    // The IDENTITY column is as wide as its widest cell + 3 (every cell is tab-terminated).
    let db = c.identities.of_pod("prod/db").unwrap();
    let rows = [
        "IP PREFIX/ADDRESS   IDENTITY".to_string(),
        "0.0.0.0/0           identity=2 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"
            .to_string(),
        "10.244.1.1/32       identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"
            .to_string(),
        format!(
            "10.244.1.5/32       identity={client} encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"
        ),
        "10.244.2.1/32       identity=6 encryptkey=0 tunnelendpoint=192.168.56.12 flags=hastunnel"
            .to_string(),
        format!(
            "10.244.2.7/32       identity={nginx} encryptkey=0 tunnelendpoint=192.168.56.12 flags=hastunnel"
        ),
        format!(
            "10.244.2.9/32       identity={db} encryptkey=0 tunnelendpoint=192.168.56.12 flags=hastunnel"
        ),
        "192.168.56.11/32    identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"
            .to_string(),
        "192.168.56.12/32    identity=6 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"
            .to_string(),
    ];
    let width = rows.iter().map(|r| r.len() - 20).max().unwrap() + 3;
    let want: String = rows
        .iter()
        .map(|r| format!("{:<20}{:<width$}\n", &r[..20], &r[20..]))
        .collect();
    assert_eq!(text, want);
}

// ---- Policy maps ----

#[test]
fn typical_ingress_policy_entries_and_render() {
    let mut net = cluster();
    net.policies = vec![allow_client()];
    let c = build(&net);
    let nginx = c.endpoint_of_pod("default/nginx").unwrap();
    let client = c.identities.of_pod("default/client").unwrap();
    let keys: Vec<(u32, TrafficDirection, u8, u16, u8)> = nginx
        .policy
        .entries
        .keys()
        .map(|k| (k.identity, k.direction, k.proto, k.dport, k.prefix_len))
        .collect();
    assert_eq!(
        keys,
        [
            (ID_UNKNOWN, TrafficDirection::Egress, 0, 0, 0),
            (ID_HOST, TrafficDirection::Ingress, 0, 0, 0),
            (client, TrafficDirection::Ingress, 6, 80, 24),
        ]
    );
    assert!(nginx.policy.enforcement.ingress && !nginx.policy.enforcement.egress);
    let cont = |l: &str| format!("{:21}{l:<73}{:65}\n", "", "");
    let want = [
        "POLICY   DIRECTION   LABELS (source:key[=value])                                              PORT/PROTO   PROXY PORT   AUTH TYPE   BYTES   PACKETS   PREFIX   \n".to_string(),
        "Allow    Ingress     reserved:host                                                            ANY          NONE         disabled    0       0         0        \n".to_string(),
        "Allow    Ingress     k8s:app=client                                                           80/TCP       NONE         disabled    0       0         24       \n".to_string(),
        cont("k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=default"),
        cont("k8s:io.cilium.k8s.policy.cluster=default"),
        cont("k8s:io.cilium.k8s.policy.serviceaccount=default"),
        cont("k8s:io.kubernetes.pod.namespace=default"),
        "Allow    Egress      ANY                                                                      ANY          NONE         disabled    0       0         0        \n".to_string(),
    ]
    .concat();
    assert_eq!(render::bpf_policy_get(&c.identities, nginx, false), want);
    let numeric = render::bpf_policy_get(&c.identities, nginx, true);
    assert!(numeric.starts_with("POLICY   DIRECTION   IDENTITY   PORT/PROTO"));
    assert!(numeric.contains(&format!("Allow    Ingress     {client}      80/TCP")));
    // Verdicts: client → nginx:80 allowed, :81 and db → nginx dropped with 133.
    assert!(verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 80));
    assert!(!verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 81));
    assert!(!verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Udp, 80));
    let v = c.flow(ip("10.244.2.9"), ip("10.244.2.7"), Protocol::Tcp, Some(80));
    let (dir, side) = v.dropped_at().unwrap();
    assert_eq!(dir, TrafficDirection::Ingress);
    assert_eq!(
        side.verdict,
        MapVerdict::Drop {
            peer: c.identities.of_pod("prod/db").unwrap(),
            reason: DropReason::PolicyDenied
        }
    );
    assert_eq!(DropReason::PolicyDenied.code(), 133);
}

#[test]
fn unselected_directions_get_allow_any() {
    let c = build(&cluster());
    let ep = c.endpoint_of_pod("default/client").unwrap();
    let keys: Vec<_> = ep
        .policy
        .entries
        .keys()
        .map(|k| (k.identity, k.direction))
        .collect();
    assert_eq!(
        keys,
        [
            (ID_UNKNOWN, TrafficDirection::Ingress),
            (ID_UNKNOWN, TrafficDirection::Egress),
            (ID_HOST, TrafficDirection::Ingress),
        ]
    );
    assert_eq!(
        ep.policy.entries.values().next().unwrap().derived_from,
        ["allow-any".to_string()].into()
    );
    assert!(verdict(&c, "8.8.8.8", "10.244.1.5", Protocol::Udp, 53));
    // Ingress only: egress stays open.
    let mut net = cluster();
    net.policies = vec![np(
        "default",
        "deny-in",
        NetworkPolicySpec {
            pod_selector: LabelSelector::everything(),
            policy_types: vec!["Ingress".into()],
            ..Default::default()
        },
    )];
    let c = build(&net);
    assert!(verdict(&c, "10.244.1.5", "8.8.8.8", Protocol::Tcp, 443));
    assert!(!verdict(&c, "8.8.8.8", "10.244.1.5", Protocol::Tcp, 443));
    let ep = c.endpoint_of_pod("default/client").unwrap();
    assert_eq!(
        ep.policy.entries.len(),
        2,
        "host allow and egress allow-any"
    );
}

#[test]
fn host_may_always_enter_but_egress_to_host_is_policed() {
    let mut net = cluster();
    net.policies = vec![np(
        "default",
        "deny-all",
        NetworkPolicySpec {
            pod_selector: LabelSelector::everything(),
            policy_types: vec!["Ingress".into(), "Egress".into()],
            ..Default::default()
        },
    )];
    let c = build(&net);
    // node-1 (InternalIP and cilium_host) → client on node-1: identity 1, allowed.
    assert!(verdict(
        &c,
        "192.168.56.11",
        "10.244.1.5",
        Protocol::Tcp,
        8080
    ));
    assert!(verdict(&c, "10.244.1.1", "10.244.1.5", Protocol::Tcp, 8080));
    // node-2 is remote-node for client: dropped.
    assert!(!verdict(
        &c,
        "192.168.56.12",
        "10.244.1.5",
        Protocol::Tcp,
        8080
    ));
    // client → its own node: egress is enforced, nothing allows identity 1.
    assert!(!verdict(
        &c,
        "10.244.1.5",
        "192.168.56.11",
        Protocol::Tcp,
        10250
    ));
    let ep = c.endpoint_of_pod("default/client").unwrap();
    assert!(
        ep.policy
            .lookup(ID_HOST, TrafficDirection::Ingress, 6, 1)
            .allowed()
    );
}

#[test]
fn ip_block_with_except_becomes_cidr_identities_and_carve_outs() {
    let mut net = cluster();
    net.policies = vec![np(
        "default",
        "egress-cidr",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "client")]),
            policy_types: vec!["Egress".into()],
            egress: vec![NetworkPolicyEgressRule {
                ports: vec![],
                to: vec![NetworkPolicyPeer {
                    ip_block: Some(IpBlock {
                        cidr: "203.0.113.0/24".into(),
                        except: vec!["203.0.113.128/25".into()],
                    }),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
    )];
    let c = build(&net);
    let base = identity::CIDR_ID_BASE;
    let v: Vec<_> = c
        .identities
        .cidrs()
        .map(|(p, id)| (p.to_string(), id))
        .collect();
    assert_eq!(
        v,
        [
            ("203.0.113.0/24".to_string(), base),
            ("203.0.113.128/25".to_string(), base + 1)
        ]
    );
    assert_eq!(
        c.identities.get(base).unwrap().printable(),
        ["cidr:203.0.113.0/24", "reserved:world"]
    );
    let a1 = c.agent("node-1").unwrap();
    assert_eq!(a1.ipcache.identity_of(ip("203.0.113.5")), base);
    assert_eq!(a1.ipcache.identity_of(ip("203.0.113.200")), base + 1);
    let ep = c.endpoint_of_pod("default/client").unwrap();
    let egress: Vec<u32> = ep
        .policy
        .entries
        .keys()
        .filter(|k| k.direction == TrafficDirection::Egress)
        .map(|k| k.identity)
        .collect();
    assert_eq!(egress, [base], "the except identity is not selected");
    assert!(verdict(&c, "10.244.1.5", "203.0.113.5", Protocol::Tcp, 443));
    assert!(!verdict(
        &c,
        "10.244.1.5",
        "203.0.113.200",
        Protocol::Tcp,
        443
    ));
    assert!(!verdict(&c, "10.244.1.5", "8.8.8.8", Protocol::Tcp, 443));
    assert_eq!(
        render::bpf_policy_get(&c.identities, ep, false),
        "POLICY   DIRECTION   LABELS (source:key[=value])   PORT/PROTO   PROXY PORT   AUTH TYPE   BYTES   PACKETS   PREFIX   \n\
         Allow    Ingress     ANY                           ANY          NONE         disabled    0       0         0        \n\
         Allow    Ingress     reserved:host                 ANY          NONE         disabled    0       0         0        \n\
         Allow    Egress      cidr:203.0.113.0/24           ANY          NONE         disabled    0       0         0        \n\
         \x20                    reserved:world                                                                                 \n"
    );
}

#[test]
fn ip_block_does_not_match_cluster_identities() {
    // Cilium: a CIDR selector selects CIDR identities; pods and nodes have their own.
    let mut net = cluster();
    net.policies = vec![np(
        "default",
        "from-pod-cidr",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "nginx")]),
            ingress: vec![NetworkPolicyIngressRule {
                ports: vec![],
                from: vec![NetworkPolicyPeer {
                    ip_block: Some(IpBlock {
                        cidr: "10.244.0.0/16".into(),
                        except: vec![],
                    }),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
    )];
    let c = build(&net);
    assert!(!verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 80));
    // An address in the CIDR that no pod holds is matched.
    assert!(verdict(&c, "10.244.3.3", "10.244.2.7", Protocol::Tcp, 80));
}

#[test]
fn end_port_ranges_expand_to_lpm_blocks() {
    assert_eq!(masked_ports(80, 80), [(80, 16)]);
    assert_eq!(masked_ports(80, 95), [(80, 12)]);
    assert_eq!(
        masked_ports(1000, 1010),
        [(1000, 13), (1008, 15), (1010, 16)]
    );
    assert_eq!(masked_ports(1, 65535).len(), 16);
    let mut net = cluster();
    net.policies = vec![np(
        "default",
        "range",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "nginx")]),
            ingress: vec![NetworkPolicyIngressRule {
                ports: vec![NetworkPolicyPort {
                    protocol: Some("TCP".into()),
                    port: Some(IntOrString::Int(1000)),
                    end_port: Some(1010),
                }],
                from: vec![],
            }],
            ..Default::default()
        },
    )];
    let c = build(&net);
    let ep = c.endpoint_of_pod("default/nginx").unwrap();
    let rows: Vec<(String, u8)> = ep
        .policy
        .entries
        .keys()
        .filter(|k| k.identity == ID_UNKNOWN && k.direction == TrafficDirection::Ingress)
        .map(|k| (k.port_proto(), k.prefix_len))
        .collect();
    assert_eq!(
        rows,
        [
            ("1000-1007/TCP".to_string(), 21),
            ("1008-1009/TCP".to_string(), 23),
            ("1010/TCP".to_string(), 24)
        ]
    );
    for (port, ok) in [
        (999, false),
        (1000, true),
        (1007, true),
        (1010, true),
        (1011, false),
    ] {
        assert_eq!(
            verdict(&c, "8.8.8.8", "10.244.2.7", Protocol::Tcp, port),
            ok,
            "port {port}"
        );
    }
}

#[test]
fn lookup_prefers_longer_prefix_then_exact_identity() {
    let mut m = PolicyMap::default();
    let key = |identity, proto, dport, prefix_len| PolicyKey {
        identity,
        direction: TrafficDirection::Ingress,
        proto,
        dport,
        prefix_len,
    };
    m.entries.insert(key(300, 0, 0, 0), PolicyEntry::default());
    m.entries.insert(key(0, 6, 80, 24), PolicyEntry::default());
    m.entries.insert(key(400, 6, 0, 8), PolicyEntry::default());
    m.entries.insert(key(0, 6, 0, 8), PolicyEntry::default());
    let won = |peer, port| match m.lookup(peer, TrafficDirection::Ingress, 6, port) {
        MapVerdict::Allow { key, .. } => (key.identity, key.prefix_len),
        MapVerdict::Drop { .. } => (u32::MAX, 0),
    };
    assert_eq!(won(300, 80), (0, 24), "the wildcard's longer prefix wins");
    assert_eq!(won(300, 81), (0, 8));
    assert_eq!(won(400, 81), (400, 8), "a tie goes to the exact identity");
    assert_eq!(won(500, 81), (0, 8));
    assert!(!m.lookup(500, TrafficDirection::Egress, 6, 80).allowed());
}

#[test]
fn named_ports_resolve_per_direction() {
    let mut net = cluster();
    net.pods[1].ports = vec![ContainerPort {
        name: "http".into(),
        container_port: 8080,
        protocol: Protocol::Tcp,
    }];
    let named = |dir_egress: bool| {
        let port = NetworkPolicyPort {
            protocol: Some("TCP".into()),
            port: Some(IntOrString::Str("http".into())),
            end_port: None,
        };
        if dir_egress {
            np(
                "default",
                "out",
                NetworkPolicySpec {
                    pod_selector: LabelSelector::labels(&[("app", "client")]),
                    policy_types: vec!["Egress".into()],
                    egress: vec![NetworkPolicyEgressRule {
                        ports: vec![port],
                        to: vec![],
                    }],
                    ..Default::default()
                },
            )
        } else {
            np(
                "default",
                "in",
                NetworkPolicySpec {
                    pod_selector: LabelSelector::labels(&[("app", "nginx")]),
                    ingress: vec![NetworkPolicyIngressRule {
                        ports: vec![port],
                        from: vec![],
                    }],
                    ..Default::default()
                },
            )
        }
    };
    net.policies = vec![named(false)];
    let c = build(&net);
    assert!(verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 8080));
    assert!(!verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 80));
    // Egress: the name resolves over the selected peers (all pods here), not per peer, so
    // 8080 is allowed to db too, which has no port called http (Kubernetes would deny).
    net.policies = vec![named(true)];
    let c = build(&net);
    assert!(verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 8080));
    assert!(verdict(&c, "10.244.1.5", "10.244.2.9", Protocol::Tcp, 8080));
    // Two numbers for one name among the peers: ErrDuplicateNamedPorts, no entry.
    net.pods[2].ports = vec![ContainerPort {
        name: "http".into(),
        container_port: 9090,
        protocol: Protocol::Tcp,
    }];
    let c = build(&net);
    assert!(!verdict(
        &c,
        "10.244.1.5",
        "10.244.2.7",
        Protocol::Tcp,
        8080
    ));
}

#[test]
fn policy_types_do_not_stop_rules_of_the_other_direction() {
    // cilium#48703: ingress rules count even when policyTypes is only Egress.
    let mut net = cluster();
    let mut p = allow_client();
    p.spec.policy_types = vec!["Egress".into()];
    net.policies = vec![p];
    let c = build(&net);
    let ep = c.endpoint_of_pod("default/nginx").unwrap();
    assert!(ep.policy.enforcement.ingress && ep.policy.enforcement.egress);
    assert!(!verdict(&c, "10.244.2.9", "10.244.2.7", Protocol::Tcp, 80));
    let k8s = crate::net::policy::evaluate(
        &net,
        &crate::net::policy::Flow::tcp(
            crate::net::Endpoint::pod("prod", "db"),
            crate::net::Endpoint::pod("default", "nginx"),
            80,
        ),
    )
    .unwrap();
    assert!(k8s.allowed(), "Kubernetes ignores the ingress rules");
}

#[test]
fn selectors_on_filtered_labels_select_nothing() {
    let mut net = cluster();
    net.pods[1]
        .labels
        .insert("pod-template-hash".into(), "7d9c".into());
    net.policies = vec![np(
        "default",
        "by-hash",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("pod-template-hash", "7d9c")]),
            policy_types: vec!["Ingress".into()],
            ..Default::default()
        },
    )];
    let c = build(&net);
    let ep = c.endpoint_of_pod("default/nginx").unwrap();
    assert!(!ep.policy.enforcement.ingress, "the policy selects nothing");
}

#[test]
fn namespace_selectors_match_namespace_labels() {
    let mut net = cluster();
    net.namespaces
        .insert("prod".into(), [("team".into(), "db".into())].into());
    net.policies = vec![np(
        "default",
        "from-team-db",
        NetworkPolicySpec {
            pod_selector: LabelSelector::labels(&[("app", "nginx")]),
            ingress: vec![NetworkPolicyIngressRule {
                ports: vec![],
                from: vec![NetworkPolicyPeer {
                    namespace_selector: Some(LabelSelector::labels(&[("team", "db")])),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
    )];
    let c = build(&net);
    assert!(verdict(&c, "10.244.2.9", "10.244.2.7", Protocol::Tcp, 5432));
    assert!(!verdict(
        &c,
        "10.244.1.5",
        "10.244.2.7",
        Protocol::Tcp,
        5432
    ));
    // An empty namespaceSelector: every pod, no node or world.
    net.policies[0].spec.ingress[0].from[0].namespace_selector = Some(LabelSelector::everything());
    let c = build(&net);
    assert!(verdict(&c, "10.244.1.5", "10.244.2.7", Protocol::Tcp, 1));
    assert!(!verdict(&c, "8.8.8.8", "10.244.2.7", Protocol::Tcp, 1));
    assert!(!verdict(
        &c,
        "192.168.56.11",
        "10.244.2.7",
        Protocol::Tcp,
        1
    ));
}

// ---- Rendering ----

#[test]
fn tabwriter_matches_go() {
    // Go: w := tabwriter.NewWriter(&buf, 5, 0, 3, ' ', 0); "a\tbbb\t\nccccccc\td\t\n"
    assert_eq!(
        tabwrite("a\tbbb\t\nccccccc\td\t\n", 5, 3),
        "a         bbb   \nccccccc   d     \n"
    );
    // A line without tabs ends the column block.
    assert_eq!(
        tabwrite("a\tb\nno tabs\nlonger\tc\n", 2, 1),
        "a b\nno tabs\nlonger c\n"
    );
    // The last cell of a line is not in a column.
    assert_eq!(tabwrite("x\ty\nlong\tz\n", 1, 1), "x    y\nlong z\n");
}

#[test]
fn endpoint_and_identity_lists() {
    let mut net = cluster();
    net.policies = vec![allow_client()];
    let c = build(&net);
    let a2 = c.agent("node-2").unwrap();
    let out = render::endpoint_list(&c.identities, a2);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(
        "ENDPOINT   POLICY (ingress)   POLICY (egress)   IDENTITY   LABELS (source:key[=value])"
    ));
    assert!(
        lines[0].ends_with("IPv6   IPv4         STATUS   "),
        "{:?}",
        lines[0]
    );
    assert!(lines[1].starts_with("           ENFORCEMENT        ENFORCEMENT       "));
    let nginx = c.endpoint_of_pod("default/nginx").unwrap();
    let row = lines
        .iter()
        .find(|l| l.starts_with(&nginx.id.to_string()))
        .unwrap();
    assert!(row.contains("Enabled            Disabled"), "{row}");
    assert!(row.contains("k8s:app=nginx"));
    assert!(row.contains("10.244.2.7   ready"), "{row}");
    assert_eq!(out.matches("k8s:io.kubernetes.pod.namespace=").count(), 2);

    let ids = render::identity_list(&c.identities);
    let lines: Vec<&str> = ids.lines().collect();
    assert_eq!(lines[0], "ID      LABELS");
    assert_eq!(lines[1], "1       reserved:host");
    assert_eq!(lines[6], "6       reserved:remote-node");
    let client = c.identities.of_pod("default/client").unwrap();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{client} ")))
        .unwrap();
    assert_eq!(lines[at], format!("{client:<8}k8s:app=client"));
    assert_eq!(
        lines[at + 1],
        "        k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=default"
    );
}

#[test]
fn drop_lines() {
    let mut net = cluster();
    net.policies = vec![allow_client()];
    let c = build(&net);
    let db = c.identities.of_pod("prod/db").unwrap();
    let nginx = c.endpoint_of_pod("default/nginx").unwrap();
    let ev = c
        .drop_event(Packet {
            src: ip("10.244.2.9"),
            sport: 43516,
            dst: ip("10.244.2.7"),
            dport: 80,
            proto: Protocol::Tcp,
        })
        .unwrap();
    assert_eq!(
        ev.monitor_line(),
        format!(
            "xx drop (Policy denied) flow 0x0 to endpoint {}, ifindex 0, file bpf_lxc.c:2079, , identity {db}->{}: 10.244.2.9:43516 -> 10.244.2.7:80 tcp SYN",
            nginx.id, nginx.identity
        )
    );
    let [verdict_line, drop_line] = ev.hubble_lines(62);
    assert_eq!(
        verdict_line,
        format!(
            "Jan  1 00:01:02.000: prod/db:43516 (ID:{db}) -> default/nginx:80 (ID:{}) policy-verdict:none INGRESS DENIED (TCP Flags: SYN)",
            nginx.identity
        )
    );
    assert!(drop_line.ends_with(") Policy denied DROPPED (TCP Flags: SYN)"));
    // From the world: the reserved name, not a number.
    let ev = c
        .drop_event(Packet {
            src: ip("8.8.8.8"),
            sport: 5353,
            dst: ip("10.244.2.7"),
            dport: 53,
            proto: Protocol::Udp,
        })
        .unwrap();
    assert!(ev.monitor_line().contains(", identity world->"));
    assert!(ev.hubble_lines(0)[1].starts_with("Jan  1 00:00:00.000: 8.8.8.8:5353 (world) -> "));
    // Allowed traffic produces no drop.
    assert!(
        c.drop_event(Packet {
            src: ip("10.244.1.5"),
            sport: 1,
            dst: ip("10.244.2.7"),
            dport: 80,
            proto: Protocol::Tcp
        })
        .is_none()
    );
}
