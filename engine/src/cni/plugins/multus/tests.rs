//! The plugin against a fake API server: delegate order and interface names, the
//! collision check, CNI_ARGS and capability args, device IDs, rollback and DEL.

use crate::cni::host::{Host, Netns};
use crate::cni::kube_api::{KubeClient, NadInfo, PodDevices, PodInfo};
use crate::cni::plugin::{CniCommand, CniEnv, PluginCtx, PluginOutput, PluginReply, Stdin};
use crate::cni::registry::Registry;
use crate::cni::types::CniResult;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Default)]
struct Fake {
    pods: BTreeMap<(String, String), PodInfo>,
    nads: BTreeMap<(String, String), NadInfo>,
    devices: Vec<PodDevices>,
    annotations: Vec<(String, String)>,
    events: Vec<(bool, &'static str, String)>,
}

impl KubeClient for Fake {
    fn pod(&self, ns: &str, name: &str) -> Option<PodInfo> {
        self.pods.get(&(ns.into(), name.into())).cloned()
    }
    fn net_attach_def(&self, ns: &str, name: &str) -> Option<NadInfo> {
        self.nads.get(&(ns.into(), name.into())).cloned()
    }
    fn pod_resources(&self, _: &str, _: &str) -> Vec<PodDevices> {
        self.devices.clone()
    }
    fn annotate_pod(&mut self, _: &str, _: &str, key: &str, value: &str) {
        self.annotations.push((key.into(), value.into()));
    }
    fn event(&mut self, _: &str, _: &str, warning: bool, reason: &'static str, message: &str) {
        self.events.push((warning, reason, message.into()));
    }
}

const NETNS: &str = "/var/run/netns/cni-test";
const CID: &str = "c0ffee";

fn fake(networks: &str) -> Fake {
    let mut f = Fake::default();
    let mut annotations = BTreeMap::new();
    annotations.insert(
        crate::cluster::nad::NETWORKS_ANNOTATION.to_string(),
        networks.to_string(),
    );
    f.pods.insert(
        ("default".into(), "p1".into()),
        PodInfo {
            uid: "uid-1".into(),
            annotations,
        },
    );
    for (name, bridge, subnet) in [
        ("blue", "br-blue", "10.10.0.0/24"),
        ("red", "br-red", "10.20.0.0/24"),
    ] {
        f.nads.insert(
            ("default".into(), name.into()),
            NadInfo {
                config: json!({"cniVersion": "1.0.0", "type": "bridge", "bridge": bridge, "ipam": {"type": "host-local", "subnet": subnet}}).to_string(),
                annotations: BTreeMap::new(),
            },
        );
    }
    f
}

fn multus_conf() -> Value {
    json!({
        "cniVersion": "1.0.0",
        "name": "multus-cni-network",
        "type": "multus",
        "kubeconfig": "/etc/cni/net.d/multus.d/multus.kubeconfig",
        "delegates": [{
            "cniVersion": "1.0.0",
            "name": "lab-net",
            "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": true,
                         "ipam": {"type": "host-local", "subnet": "10.244.1.0/24"}}]
        }]
    })
}

fn env(cmd: CniCommand) -> CniEnv {
    CniEnv {
        command: Some(cmd),
        container_id: CID.into(),
        netns: NETNS.into(),
        ifname: "eth0".into(),
        args: format!(
            "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p1;K8S_POD_INFRA_CONTAINER_ID={CID};K8S_POD_UID=uid-1"
        ),
        path: "/opt/cni/bin".into(),
    }
}

fn host() -> Host {
    let mut h = Host::new(
        "node-1",
        "192.168.0.1",
        "02:00:00:00:00:01".parse().expect("a MAC"),
    );
    h.netns.insert(NETNS, Netns::with_loopback());
    h
}

struct Run {
    reply: PluginReply,
    calls: Vec<(String, CniEnv, Stdin)>,
}

fn run(h: &mut Host, kube: &mut Fake, cmd: CniCommand, conf: &Value) -> Run {
    let reg = Registry::standard();
    let mut ctx = PluginCtx {
        host: h,
        registry: &reg,
        delegations: Default::default(),
        faults: None,
        kube: Some(kube),
    };
    let stdin = Stdin::from_conf(conf.clone());
    let p = reg.find("multus").unwrap();
    let reply = crate::cni::skel::dispatch(p, &mut ctx, &env(cmd), &stdin);
    let calls = ctx
        .delegations
        .calls
        .into_iter()
        .map(|(t, e, s, _)| (t, e.as_ref().clone(), s))
        .collect();
    Run { reply, calls }
}

fn bridges(r: &Run) -> Vec<(String, String)> {
    r.calls
        .iter()
        .filter(|(t, _, _)| t == "bridge")
        .map(|(_, e, s)| (e.ifname.to_string(), s.str_field("name").to_string()))
        .collect()
}

#[test]
fn delegates_run_in_order_with_net_index_names() {
    let mut h = host();
    let mut k = fake("blue@macvlan1, red");
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    let Ok(PluginOutput::Result(res)) = &r.reply else {
        panic!("{:?}", r.reply)
    };
    // delegates[0]'s result is Multus's result.
    assert!(res.ips[0].address.to_string().starts_with("10.244.1."));
    assert_eq!(
        bridges(&r),
        vec![
            ("eth0".into(), "lab-net".into()),
            ("macvlan1".into(), "blue".into()),
            ("net2".into(), "red".into())
        ]
    );
    // CNI_ARGS: Multus's five, then its own CNI_ARGS appended (every key already has a value).
    let (_, e, _) = &r.calls[2];
    assert_eq!(
        e.args,
        format!(
            "IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p1;K8S_POD_INFRA_CONTAINER_ID={CID};K8S_POD_UID=uid-1;IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p1;K8S_POD_INFRA_CONTAINER_ID={CID};K8S_POD_UID=uid-1"
        )
    );
    let status = &k.annotations[0];
    assert_eq!(status.0, "k8s.v1.cni.cncf.io/network-status");
    assert!(
        status
            .1
            .starts_with("[{\n    \"name\": \"lab-net\",\n    \"interface\": \"eth0\"")
    );
    assert!(
        status
            .1
            .contains("},{\n    \"name\": \"default/blue\",\n    \"interface\": \"macvlan1\"")
    );
    assert!(
        status
            .1
            .contains("\"name\": \"default/red\",\n    \"interface\": \"net2\"")
    );
    let reasons: Vec<&str> = k.events.iter().map(|e| e.2.as_str()).collect();
    assert_eq!(reasons[1], "Add macvlan1 [10.10.0.2/24] from default/blue");
    // The list is saved for DEL.
    assert!(h.files.contains_key(&format!("/var/lib/cni/multus/{CID}")));
}

#[test]
fn requested_name_colliding_with_a_generated_one_fails_and_rolls_back() {
    let mut h = host();
    let mut k = fake("blue@net2,red");
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    let e = r.reply.unwrap_err();
    assert_eq!(e.code, 999);
    assert_eq!(
        e.msg,
        "[default/p1/uid-1:red]: error adding container to network \"red\": DelegateAdd: cannot set \"bridge\" interface name to \"net2\": validateIfName: interface name net2 already exists"
    );
    // Rollback: DEL of idx 2, 1, 0 (the failed one included), in reverse.
    let dels: Vec<(String, String)> = r
        .calls
        .iter()
        .filter(|(t, e, _)| t == "bridge" && e.cmd() == CniCommand::Del)
        .map(|(_, e, s)| (e.ifname.to_string(), s.str_field("name").to_string()))
        .collect();
    assert_eq!(
        dels,
        vec![
            ("net2".into(), "red".into()),
            ("net2".into(), "blue".into()),
            ("eth0".into(), "lab-net".into())
        ]
    );
    // Nothing is left: no pod interfaces, no leases, no status written.
    let ns = h.netns.get(NETNS).unwrap();
    let names: Vec<&str> = ns.links.values().map(|l| l.name.as_str()).collect();
    assert_eq!(names, vec!["lo"]);
    for store in h.ipam.values() {
        assert!(
            store.files().iter().all(|(f, _)| !f.starts_with("10.")),
            "{:?}",
            store.files()
        );
    }
    assert!(k.annotations.is_empty());
}

#[test]
fn del_runs_the_cached_list_in_reverse() {
    let mut h = host();
    let mut k = fake("blue,red");
    assert!(
        run(&mut h, &mut k, CniCommand::Add, &multus_conf())
            .reply
            .is_ok()
    );
    // The pod is gone from the API by now: DEL works from the cache alone.
    k.pods.clear();
    let r = run(&mut h, &mut k, CniCommand::Del, &multus_conf());
    assert!(r.reply.is_ok(), "{:?}", r.reply);
    assert_eq!(
        bridges(&r),
        vec![
            ("net2".into(), "red".into()),
            ("net1".into(), "blue".into()),
            ("eth0".into(), "lab-net".into())
        ]
    );
    assert!(!h.files.contains_key(&format!("/var/lib/cni/multus/{CID}")));
    // A second DEL has neither cache nor pod: success, nothing runs.
    let again = run(&mut h, &mut k, CniCommand::Del, &multus_conf());
    assert!(again.reply.is_ok());
    assert!(again.calls.is_empty());
}

#[test]
fn del_collects_every_error() {
    let mut h = host();
    let mut k = fake("blue");
    assert!(
        run(&mut h, &mut k, CniCommand::Add, &multus_conf())
            .reply
            .is_ok()
    );
    // Break both delegates' IPAM in the cached list.
    let path = format!("/var/lib/cni/multus/{CID}");
    let text = h.files[&path].replace("host-local", "gone");
    h.files.insert(path, text);
    let e = run(&mut h, &mut k, CniCommand::Del, &multus_conf())
        .reply
        .unwrap_err();
    assert_eq!(
        e.msg,
        "errors: DelegateDel: error invoking DelegateDel - \"bridge\": failed to find plugin \"gone\" in path [/opt/cni/bin] / DelegateDel: error invoking ConflistDel - \"lab-net\": plugin type=\"bridge\" failed (delete): failed to find plugin \"gone\" in path [/opt/cni/bin]"
    );
}

#[test]
fn missing_pod_gives_the_placeholder_result() {
    let mut h = host();
    let mut k = Fake::default();
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    let Ok(PluginOutput::Result(res)) = r.reply else {
        panic!()
    };
    assert_eq!(res.ips[0].address.to_string(), "0.0.0.0/0");
    assert_eq!(res.ips[0].gateway, "0.0.0.0".parse().ok());
    assert_eq!(res.interfaces[0].name, "eth0");
    assert_eq!(res.interfaces[0].sandbox_path(), NETNS);
    assert!(r.calls.is_empty());
}

#[test]
fn missing_nad_is_an_error_and_a_warning_event() {
    let mut h = host();
    let mut k = fake("nope");
    let e = run(&mut h, &mut k, CniCommand::Add, &multus_conf())
        .reply
        .unwrap_err();
    assert_eq!(
        e.msg,
        "Multus: [default/p1/uid-1]: error loading k8s delegates k8s args: TryLoadPodDelegates: error in getting k8s network for pod: GetNetworkDelegates: failed getting the delegate: getKubernetesDelegate: cannot find a network-attachment-definition (nope) in namespace (default): network-attachment-definitions.k8s.cni.cncf.io \"nope\" not found"
    );
    assert!(k.events[0].0);
    assert_eq!(k.events[0].1, "NoNetworkFound");
}

#[test]
fn nad_name_injection_and_bad_spec() {
    let mut h = host();
    let mut k = fake("noname,bad");
    k.nads.insert(
        ("default".into(), "noname".into()),
        NadInfo {
            config: r#"{"cniVersion":"1.0.0","type":"bridge","bridge":"br-n","ipam":{"type":"host-local","subnet":"10.30.0.0/24"}}"#.into(),
            annotations: BTreeMap::new(),
        },
    );
    k.nads.insert(
        ("default".into(), "bad".into()),
        NadInfo {
            config: "{oops".into(),
            annotations: BTreeMap::new(),
        },
    );
    let e = run(&mut h, &mut k, CniCommand::Add, &multus_conf())
        .reply
        .unwrap_err();
    assert_eq!(
        e.msg,
        "Multus: [default/p1/uid-1]: error loading k8s delegates k8s args: TryLoadPodDelegates: error in getting k8s network for pod: GetNetworkDelegates: failed getting the delegate: GetCNIConfig: err in getCNIConfigFromSpec: failed to unmarshal Spec.Config: invalid character 'o' looking for beginning of object key string"
    );
    k.nads.remove(&("default".to_string(), "bad".to_string()));
    let mut k2 = fake("noname");
    k2.nads = k.nads.clone();
    let r = run(&mut h, &mut k2, CniCommand::Add, &multus_conf());
    assert!(r.reply.is_ok(), "{:?}", r.reply);
    assert_eq!(bridges(&r)[1], ("net1".to_string(), "noname".to_string()));
}

#[test]
fn selection_requests_become_args_and_capabilities() {
    let mut h = host();
    let mut k = fake(r#"[{"name":"blue","mac":"ca:fe:c0:ff:ee:00","ips":["10.10.0.9/24"]}]"#);
    // A delegate that declares the ips and mac capabilities gets them in runtimeConfig.
    k.nads.insert(
        ("default".into(), "blue".into()),
        NadInfo {
            config: json!({"cniVersion": "1.0.0", "name": "blue", "plugins": [
                {"type": "bridge", "bridge": "br-blue", "capabilities": {"ips": true},
                 "ipam": {"type": "host-local", "subnet": "10.10.0.0/24"}}]})
            .to_string(),
            annotations: BTreeMap::new(),
        },
    );
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    assert!(r.reply.is_ok(), "{:?}", r.reply);
    let (_, e, s) = r
        .calls
        .iter()
        .find(|(t, e, _)| t == "bridge" && &*e.ifname == "net1")
        .unwrap();
    assert!(
        e.args.ends_with(";MAC=ca:fe:c0:ff:ee:00;IP=10.10.0.9/24"),
        "{}",
        e.args
    );
    let rc = s.runtime_config.as_ref().unwrap();
    assert_eq!(rc.as_ref(), &json!({"ips": ["10.10.0.9/24"]}));
    // The master delegate gets no MAC/IP and no selection capabilities.
    let (_, e0, s0) = &r.calls[0];
    assert!(!e0.args.contains("MAC="));
    assert!(s0.runtime_config.is_none());
}

#[test]
fn device_ids_are_sorted_and_handed_out_in_delegate_order() {
    let mut h = host();
    let mut k = fake("sriov-a,sriov-b");
    for n in ["sriov-a", "sriov-b"] {
        let mut ann = BTreeMap::new();
        ann.insert(
            crate::cluster::nad::RESOURCE_NAME_ANNOTATION.to_string(),
            "intel.com/sriov_netdevice".to_string(),
        );
        k.nads.insert(
            ("default".into(), n.into()),
            NadInfo {
                config: json!({"cniVersion": "1.0.0", "type": "bridge", "bridge": format!("br-{n}"),
                               "ipam": {"type": "host-local", "subnet": if n == "sriov-a" {"10.40.0.0/24"} else {"10.41.0.0/24"}}})
                .to_string(),
                annotations: ann,
            },
        );
    }
    k.devices = vec![PodDevices {
        resource: "intel.com/sriov_netdevice".into(),
        device_ids: vec!["0000:03:02.3".into(), "0000:03:02.1".into()],
    }];
    h.files.insert(
        "/var/run/k8s.cni.cncf.io/devinfo/dp/intel.com-sriov_netdevice-0000:03:02.1-device.json"
            .into(),
        r#"{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:03:02.1"}}"#.into(),
    );
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    assert!(r.reply.is_ok(), "{:?}", r.reply);
    let ids: Vec<(String, String)> = r
        .calls
        .iter()
        .filter(|(t, e, _)| t == "bridge" && &*e.ifname != "eth0")
        .map(|(_, e, s)| (e.ifname.to_string(), s.str_field("pciBusID").to_string()))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("net1".into(), "0000:03:02.1".into()),
            ("net2".into(), "0000:03:02.3".into())
        ]
    );
    let (_, _, s) = r
        .calls
        .iter()
        .find(|(_, e, _)| &*e.ifname == "net1")
        .unwrap();
    assert_eq!(s.str_field("deviceID"), "0000:03:02.1");
    // The device plugin's devinfo reaches network-status.
    assert!(
        k.annotations[0]
            .1
            .contains("\"device-info\": {\n        \"type\": \"pci\"")
    );
    let info = format!("/var/run/k8s.cni.cncf.io/devinfo/cni/default-sriov-a-{CID}_net1");
    assert!(h.files.contains_key(&info));
    assert!(
        run(&mut h, &mut k, CniCommand::Del, &multus_conf())
            .reply
            .is_ok()
    );
    assert!(!h.files.contains_key(&info));
}

#[test]
fn conf_errors() {
    let mut h = host();
    let mut k = fake("blue");
    let e = run(
        &mut h,
        &mut k,
        CniCommand::Add,
        &json!({"cniVersion": "1.0.0", "name": "m", "type": "multus"}),
    )
    .reply
    .unwrap_err();
    assert_eq!(
        e.msg,
        "Multus: error loading netconf: at least one delegate/clusterNetwork must be specified"
    );
    let _ = CniResult::default();
}

#[test]
fn an_empty_spec_loads_the_conf_dir_file_of_that_name() {
    let mut h = host();
    let mut k = fake("green");
    k.nads
        .insert(("default".into(), "green".into()), NadInfo::default());
    let e = run(&mut h, &mut k, CniCommand::Add, &multus_conf())
        .reply
        .unwrap_err();
    assert!(
        e.msg.ends_with("failed getting the delegate: GetCNIConfig: err in GetCNIConfigFromFile: No networks found in /etc/cni/multus/net.d"),
        "{}",
        e.msg
    );
    h.files.insert(
        "/etc/cni/multus/net.d/10-other.conf".into(),
        r#"{"cniVersion":"1.0.0","name":"other","type":"bridge"}"#.into(),
    );
    let e = run(&mut h, &mut k, CniCommand::Add, &multus_conf())
        .reply
        .unwrap_err();
    assert!(
        e.msg.ends_with("GetCNIConfigFromFile: no network available in the name green in cni dir /etc/cni/multus/net.d"),
        "{}",
        e.msg
    );
    h.files.insert(
        "/etc/cni/multus/net.d/20-green.conf".into(),
        r#"{"cniVersion":"1.0.0","name":"green","type":"bridge","bridge":"br-green","ipam":{"type":"host-local","subnet":"10.50.0.0/24"}}"#.into(),
    );
    let r = run(&mut h, &mut k, CniCommand::Add, &multus_conf());
    assert!(r.reply.is_ok(), "{:?}", r.reply);
    assert_eq!(bridges(&r)[1], ("net1".to_string(), "green".to_string()));
}
