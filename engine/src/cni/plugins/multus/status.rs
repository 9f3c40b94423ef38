//! `k8s.v1.cni.cncf.io/network-status`: what Multus writes on the pod after ADD, one entry
//! per pod interface of each delegate's result (`network-attachment-definition-client:
//! pkg/utils/net-attach-def.go` CreateNetworkStatuses, CreateNetworkStatus; the struct is
//! `pkg/apis/k8s.cni.cncf.io/v1/types.go` NetworkStatus).
//!
//! The bytes: each entry is `json.MarshalIndent(s, "", "    ")`, joined by `,` inside
//! `[`…`]` (so `[{ … },{ … }]`), with Go's HTML escaping (`<nil>` → `\u003cnil\u003e`).

use crate::cni::types::{CniResult, Dns, IfIndex, IpConfig, Route, to_go_json};
use serde::Serialize;
use serde_json::Value;

/// One entry, fields in the Go struct's order with its `omitempty`s (`dns` has none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkStatus {
    /// `<ns>/<nad>` for an attachment, the CNI name for the cluster network.
    pub name: String,
    /// The interface in the pod.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub interface: String,
    /// Its addresses, bare.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ips: Vec<String>,
    /// Its MAC.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mac: String,
    /// Its MTU, when the plugin reported one.
    #[serde(skip_serializing_if = "is_zero")]
    pub mtu: u32,
    /// True on the cluster network's interface.
    #[serde(skip_serializing_if = "is_false")]
    pub default: bool,
    /// The result's DNS (`{}` when empty).
    pub dns: Dns,
    /// The device plugin's device info (SR-IOV: the VF's PCI address).
    #[serde(rename = "device-info", skip_serializing_if = "Option::is_none")]
    pub device_info: Option<DeviceInfo>,
    /// The `gw` of each default route of the result.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gateway: Vec<String>,
}

/// `v1.DeviceInfo`, in the Go struct's field order (the device-info spec 1.1.0).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, Default)]
pub struct DeviceInfo {
    /// `pci`, `vdpa`, `vhost-user` or `memif`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The spec version (`1.1.0`).
    #[serde(default)]
    pub version: String,
    /// PCI details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<PciDevice>,
    /// vDPA details, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vdpa: Option<Value>,
    /// vhost-user details, as given.
    #[serde(
        default,
        rename = "vhost-user",
        skip_serializing_if = "Option::is_none"
    )]
    pub vhost_user: Option<Value>,
    /// memif details, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memif: Option<Value>,
}

/// `v1.PciDevice`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, Default)]
pub struct PciDevice {
    /// The device's PCI address.
    #[serde(
        rename = "pci-address",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub pci_address: String,
    /// `vhost-net`.
    #[serde(
        rename = "vhost-net",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub vhost_net: String,
    /// `rdma-device`.
    #[serde(
        rename = "rdma-device",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub rdma_device: String,
    /// `pf-pci-address`.
    #[serde(
        rename = "pf-pci-address",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub pf_pci_address: String,
    /// `representor-device`.
    #[serde(
        rename = "representor-device",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub representor_device: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `isDefaultRoute`: a destination whose address is 0.0.0.0 or ::.
fn is_default_route(r: &Route) -> bool {
    r.dst.is_some_and(|n| n.addr().is_unspecified())
}

/// `route.GW.String()`: a route without a gateway prints Go's `<nil>`.
fn gw_text(r: &Route) -> String {
    crate::cni::types::GoIp(r.gw).to_string()
}

fn bare(ip: &IpConfig) -> String {
    ip.address.addr().to_string()
}

/// `CreateNetworkStatuses` for one delegate's result.
pub(crate) fn statuses(
    result: &CniResult,
    name: &str,
    default: bool,
    device_info: Option<&DeviceInfo>,
) -> Vec<NetworkStatus> {
    let gateways: Vec<String> = result
        .routes
        .iter()
        .filter(|r| is_default_route(r))
        .map(gw_text)
        .collect();
    if result.interfaces.len() == 1 {
        // CreateNetworkStatus: the (last) sandboxed interface, every IP.
        let mut s = NetworkStatus {
            name: name.to_string(),
            interface: String::new(),
            ips: result.ips.iter().map(bare).collect(),
            mac: String::new(),
            mtu: 0,
            default,
            dns: result.dns().clone(),
            device_info: device_info.cloned(),
            gateway: gateways,
        };
        for i in result
            .interfaces
            .iter()
            .filter(|i| !i.sandbox_path().is_empty())
        {
            s.interface = i.name.to_string();
            s.mac = i.mac.to_string();
            s.mtu = i.mtu;
        }
        return vec![s];
    }
    // The interface of the first IP with a gateway gets `default` (gatewayInterfaceIndex).
    let gw_iface = if default {
        result
            .ips
            .iter()
            .find(|ip| ip.gateway.is_some() && ip.interface.is_some())
            .and_then(|ip| ip.interface.map(IfIndex::get))
    } else {
        None
    };
    let mut out: Vec<NetworkStatus> = Vec::new();
    let mut index = std::collections::BTreeMap::new();
    let (mut did_default, mut first_sandbox) = (false, false);
    for (i, iface) in result.interfaces.iter().enumerate() {
        if iface.sandbox_path().is_empty() {
            continue;
        }
        let mut is_default = false;
        if default && gw_iface == Some(i) && !did_default {
            is_default = true;
            did_default = true;
        }
        if default && gw_iface.is_none() && !first_sandbox {
            is_default = true;
            first_sandbox = true;
        }
        index.insert(i, out.len());
        out.push(NetworkStatus {
            name: name.to_string(),
            interface: iface.name.to_string(),
            ips: Vec::new(),
            mac: iface.mac.to_string(),
            mtu: iface.mtu,
            default: is_default,
            dns: result.dns().clone(),
            device_info: device_info.cloned(),
            gateway: gateways.clone(),
        });
    }
    let last = out.len().checked_sub(1);
    for ip in &result.ips {
        let at = match ip.interface.map(IfIndex::get) {
            Some(i) => index.get(&i).copied(),
            None => last,
        };
        if let Some(at) = at {
            out[at].ips.push(bare(ip));
        }
    }
    out
}

/// The annotation's value: each entry indented as `json.MarshalIndent`, joined by `,`.
pub fn annotation(entries: &[NetworkStatus]) -> String {
    let parts: Vec<String> = entries.iter().map(to_go_json).collect();
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::types::Interface;

    fn iface(name: &str, mac: &str, sandbox: &str, mtu: u32) -> Interface {
        Interface {
            name: name.into(),
            mac: mac.into(),
            mtu,
            sandbox: (!sandbox.is_empty()).then(|| sandbox.into()),
        }
    }

    fn ip(a: &str, gw: &str, i: Option<usize>) -> IpConfig {
        IpConfig {
            interface: i.map(IfIndex::new),
            address: a.parse().unwrap(),
            gateway: gw.parse().ok(),
        }
    }

    /// The example of the reference (§2.5), built from the three results it describes.
    #[test]
    fn reference_example_bytes() {
        let bridge = CniResult {
            cni_version: "1.0.0".into(),
            interfaces: vec![
                iface("cni0", "aa:aa:aa:aa:aa:aa", "", 0),
                iface("veth1234", "bb:bb:bb:bb:bb:bb", "", 0),
                iface("eth0", "0a:58:0a:f4:01:05", "/var/run/netns/x", 0),
            ]
            .into(),
            ips: vec![ip("10.244.1.5/24", "10.244.1.1", Some(2))].into(),
            routes: vec![Route {
                dst: "0.0.0.0/0".parse().ok(),
                gw: "10.244.1.1".parse().ok(),
            }]
            .into(),
            dns: None,
            printed_as_current: false,
        };
        let macvlan = CniResult {
            cni_version: "1.0.0".into(),
            interfaces: vec![iface("net1", "3a:94:93:60:98:07", "/var/run/netns/x", 0)].into(),
            ips: vec![ip("10.10.0.5/24", "10.10.0.1", Some(0))].into(),
            routes: vec![].into(),
            dns: None,
            printed_as_current: false,
        };
        let sriov = CniResult {
            cni_version: "1.0.0".into(),
            interfaces: vec![iface("net2", "ca:fe:c0:ff:ee:01", "/var/run/netns/x", 1500)].into(),
            ips: vec![ip("10.56.217.171/24", "", Some(0))].into(),
            routes: vec![].into(),
            dns: None,
            printed_as_current: false,
        };
        let dev: DeviceInfo = serde_json::from_str(
            r#"{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:03:02.1"}}"#,
        )
        .unwrap();
        let mut all = statuses(&bridge, "cbr0", true, None);
        all.extend(statuses(&macvlan, "default/macvlan-conf", false, None));
        all.extend(statuses(&sriov, "default/sriov-net", false, Some(&dev)));
        let expected = r#"[{
    "name": "cbr0",
    "interface": "eth0",
    "ips": [
        "10.244.1.5"
    ],
    "mac": "0a:58:0a:f4:01:05",
    "default": true,
    "dns": {},
    "gateway": [
        "10.244.1.1"
    ]
},{
    "name": "default/macvlan-conf",
    "interface": "net1",
    "ips": [
        "10.10.0.5"
    ],
    "mac": "3a:94:93:60:98:07",
    "dns": {}
},{
    "name": "default/sriov-net",
    "interface": "net2",
    "ips": [
        "10.56.217.171"
    ],
    "mac": "ca:fe:c0:ff:ee:01",
    "mtu": 1500,
    "dns": {},
    "device-info": {
        "type": "pci",
        "version": "1.1.0",
        "pci": {
            "pci-address": "0000:03:02.1"
        }
    }
}]"#;
        assert_eq!(annotation(&all), expected);
    }

    #[test]
    fn default_route_without_gateway_is_go_nil() {
        let r = CniResult {
            interfaces: vec![iface("net1", "02:00:00:00:00:01", "/n", 0)].into(),
            ips: vec![ip("10.10.0.5/24", "", Some(0))].into(),
            routes: vec![Route {
                dst: "0.0.0.0/0".parse().ok(),
                gw: None,
            }]
            .into(),
            ..Default::default()
        };
        let s = annotation(&statuses(&r, "default/m", false, None));
        assert!(
            s.contains("\"gateway\": [\n        \"\\u003cnil\\u003e\"\n    ]"),
            "{s}"
        );
    }

    #[test]
    fn ips_without_interface_go_to_the_last_pod_interface() {
        let r = CniResult {
            interfaces: vec![
                iface("veth0", "aa", "", 0),
                iface("a", "01", "/n", 0),
                iface("b", "02", "/n", 0),
            ]
            .into(),
            ips: vec![ip("10.0.0.2/24", "", None)].into(),
            ..Default::default()
        };
        let s = statuses(&r, "n", true, None);
        assert_eq!(s.len(), 2);
        assert!(s[0].default && !s[1].default);
        assert!(s[0].ips.is_empty());
        assert_eq!(s[1].ips, vec!["10.0.0.2".to_string()]);
    }
}
