//! The SR-IOV network device plugin (`k8snetworkplumbingwg/sriov-network-device-plugin`),
//! the DaemonSet pod that turns a node's VFs into an extended resource. It reads
//! `/etc/pcidp/config.json`, builds one resource pool per `resourceList` entry from the
//! devices its selectors match (a device goes to the first pool that matches it,
//! `cmd/sriovdp/manager.go`), registers one endpoint per pool with kubelet's device manager
//! (`crate::kubelet::devices`) and answers its two calls:
//!
//! - **ListAndWatch**: one device per VF, ID = the VF's PCI address, `Healthy` (the plugin's
//!   health check is not implemented upstream, so health never changes);
//! - **Allocate**: for the IDs kubelet chose, the container env `PCIDEVICE_<PREFIX>_<NAME>`
//!   (the IDs joined with `,`) and `…_INFO`, and one device-info file per device under
//!   `/var/run/k8s.cni.cncf.io/devinfo/dp/` for Multus to hand to the CNI plugin
//!   (`pkg/resources/pool_stub.go`, `pkg/netdevice/netResourcePool.go`,
//!   `pkg/infoprovider/genericInfoProvider.go`).
//!
//! The lab's VFs are Intel X710 VFs (vendor `8086`, device `154c`, driver `iavf`), so the
//! `vendors`, `devices` and `drivers` selectors work on them too.

use crate::cni::host::Host;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Where the plugin reads its configuration on the node.
pub(crate) const CONFIG_PATH: &str = "/etc/pcidp/config.json";
/// The directory of the device-info files Allocate writes.
pub(crate) const DEVINFO_DIR: &str = "/var/run/k8s.cni.cncf.io/devinfo/dp";
/// The resource prefix when a pool names none (`-resource-prefix`).
pub(crate) const DEFAULT_PREFIX: &str = "intel.com";
/// The lab's default pool name.
pub(crate) const DEFAULT_RESOURCE_NAME: &str = "sriov_netdevice";
/// The VF's PCI vendor ID (Intel).
pub(crate) const VF_VENDOR: &str = "8086";
/// The VF's PCI device ID (X710 VF).
pub(crate) const VF_DEVICE: &str = "154c";
/// The VF's kernel driver.
pub(crate) const VF_DRIVER: &str = "iavf";

/// The config the lab writes on an SR-IOV node: one pool `intel.com/sriov_netdevice` of the
/// PF's VFs (selector `pfNames`).
pub(crate) fn default_config(pf: &str) -> String {
    let v = json!({
        "resourceList": [{
            "resourceName": DEFAULT_RESOURCE_NAME,
            "resourcePrefix": DEFAULT_PREFIX,
            "selectors": {"pfNames": [pf]},
        }]
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// One selector object (`selectors` may be one object or a list of them; a device matches
/// the pool when it matches any of them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    /// `vendors`.
    pub vendors: Vec<String>,
    /// `devices`.
    pub devices: Vec<String>,
    /// `drivers`.
    pub drivers: Vec<String>,
    /// `pciAddresses`.
    pub pci_addresses: Vec<String>,
    /// `pfNames`, each `PF` or `PF#<ranges>` (`ens1f0#0,2-3`).
    pub pf_names: Vec<String>,
}

impl Selector {
    fn from_json(v: &Value) -> Self {
        let list = |k: &str| -> Vec<String> {
            v.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        Selector {
            vendors: list("vendors"),
            devices: list("devices"),
            drivers: list("drivers"),
            pci_addresses: list("pciAddresses"),
            pf_names: list("pfNames"),
        }
    }

    /// Whether the VF `vf` of `pf` at `pci` matches every selector that is set.
    pub fn matches(&self, pci: &str, pf: &str, vf: u32) -> bool {
        let any = |l: &[String], v: &str| l.is_empty() || l.iter().any(|x| x == v);
        any(&self.vendors, VF_VENDOR)
            && any(&self.devices, VF_DEVICE)
            && any(&self.drivers, VF_DRIVER)
            && any(&self.pci_addresses, pci)
            && (self.pf_names.is_empty()
                || self.pf_names.iter().any(|p| pf_name_matches(p, pf, vf)))
    }
}

/// `pfNames` entry `PF` or `PF#0,2-7` (`pkg/utils` `ParseVFRange`-style ranges).
fn pf_name_matches(entry: &str, pf: &str, vf: u32) -> bool {
    let Some((name, ranges)) = entry.split_once('#') else {
        return entry == pf;
    };
    if name != pf {
        return false;
    }
    ranges.split(',').any(|r| match r.split_once('-') {
        Some((a, b)) => match (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            (Ok(a), Ok(b)) => (a..=b).contains(&vf),
            _ => false,
        },
        None => r.trim().parse::<u32>() == Ok(vf),
    })
}

/// One resource pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// `resourcePrefix` (default `intel.com`).
    pub prefix: String,
    /// `resourceName`.
    pub name: String,
    /// The selectors (any may match).
    pub selectors: Vec<Selector>,
}

impl Pool {
    /// `<prefix>/<name>`, the extended resource pods request.
    pub fn resource(&self) -> String {
        format!("{}/{}", self.prefix, self.name)
    }
}

/// A device as ListAndWatch reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The device ID: the VF's PCI address.
    pub id: String,
    /// `Healthy` (true) or `Unhealthy`.
    pub healthy: bool,
}

/// Allocate's answer for one container (`ContainerAllocateResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerAllocateResponse {
    /// Environment variables for the container.
    pub envs: BTreeMap<String, String>,
}

/// The plugin as it runs on one node: the pools it built from its config.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SriovDevicePlugin {
    /// The pools, in config order.
    pub pools: Vec<Pool>,
    /// What it logged while reading its config (pools it skipped and why).
    pub warnings: Vec<String>,
}

impl SriovDevicePlugin {
    /// Start the plugin on a node: read `/etc/pcidp/config.json` from its files. A missing
    /// or unreadable config is the error the plugin exits with.
    pub fn start(host: &Host) -> Result<Self, String> {
        let text = host.files.get(CONFIG_PATH).ok_or_else(|| {
            format!(
                "error reading file {CONFIG_PATH}: open {CONFIG_PATH}: no such file or directory"
            )
        })?;
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("error unmarshalling raw bytes {e}"))?;
        let mut dp = SriovDevicePlugin::default();
        let list = v
            .get("resourceList")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for entry in list {
            let name = entry
                .get("resourceName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            // `^[a-zA-Z0-9_-]+$` (the README forbids `-`, the code accepts it).
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !valid {
                dp.warnings.push(format!(
                    "resource name \"{name}\" contains invalid characters"
                ));
                continue;
            }
            let prefix = entry
                .get("resourcePrefix")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .unwrap_or(DEFAULT_PREFIX)
                .to_string();
            let selectors = match entry.get("selectors") {
                Some(Value::Array(a)) => a.iter().map(Selector::from_json).collect(),
                Some(o @ Value::Object(_)) => vec![Selector::from_json(o)],
                _ => vec![Selector::default()],
            };
            dp.pools.push(Pool {
                prefix,
                name,
                selectors,
            });
        }
        Ok(dp)
    }

    /// ListAndWatch of every pool: (resource, devices), devices in PCI order; a VF goes to
    /// the first pool that selects it. Pools with no device still register (capacity 0).
    pub(crate) fn list_and_watch(&self, host: &Host) -> Vec<(String, Vec<Device>)> {
        let mut taken = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for pool in &self.pools {
            let mut devices = Vec::new();
            for (pci, vf) in crate::cni::sriov_nic::vfs(host) {
                if taken.contains(pci) {
                    continue;
                }
                if pool.selectors.iter().any(|s| s.matches(pci, &vf.pf, vf.vf)) {
                    taken.insert(pci.to_string());
                    devices.push(Device {
                        id: pci.to_string(),
                        healthy: true,
                    });
                }
            }
            out.push((pool.resource(), devices));
        }
        out
    }

    /// Allocate `ids` of `resource` for one container: its env and the device-info files.
    pub fn allocate(
        &self,
        host: &mut Host,
        resource: &str,
        ids: &[String],
    ) -> Result<ContainerAllocateResponse, String> {
        let pool = self
            .pools
            .iter()
            .find(|p| p.resource() == resource)
            .ok_or_else(|| format!("no resource pool {resource:?}"))?;
        let mut resp = ContainerAllocateResponse::default();
        let key = env_name(&pool.prefix, &pool.name);
        resp.envs.insert(key.clone(), ids.join(","));
        let mut info = serde_json::Map::new();
        for id in ids {
            info.insert(id.clone(), json!({"generic": {"deviceID": id}}));
        }
        resp.envs
            .insert(format!("{key}_INFO"), Value::Object(info).to_string());
        for id in ids {
            host.files.insert(
                devinfo_path(resource, id),
                // nadutils' DeviceInfo struct, in its field order.
                format!(r#"{{"type":"pci","version":"1.1.0","pci":{{"pci-address":"{id}"}}}}"#),
            );
        }
        Ok(resp)
    }
}

/// `PCIDEVICE_<PREFIX>_<NAME>`: upper case, `.` → `_` (hyphens kept).
pub(crate) fn env_name(prefix: &str, name: &str) -> String {
    format!(
        "PCIDEVICE_{}_{}",
        prefix.replace('.', "_").to_ascii_uppercase(),
        name.to_ascii_uppercase()
    )
}

/// The device-info file of one device: `<dir>/<prefix>-<name>-<pci>-device.json`.
pub(crate) fn devinfo_path(resource: &str, id: &str) -> String {
    format!(
        "{DEVINFO_DIR}/{}-{id}-device.json",
        resource.replace('/', "-")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(vfs: u32) -> Host {
        let mut h = Host::new(
            "sriov-1",
            "192.168.0.9",
            "02:00:00:00:00:09".parse().expect("a MAC"),
        );
        crate::cni::sriov_nic::install(&mut h, "ens1f0", vfs);
        h.files.insert(CONFIG_PATH.into(), default_config("ens1f0"));
        h
    }

    #[test]
    fn advertises_one_healthy_device_per_vf() {
        let h = host(3);
        let dp = SriovDevicePlugin::start(&h).unwrap();
        let l = dp.list_and_watch(&h);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].0, "intel.com/sriov_netdevice");
        let ids: Vec<_> = l[0].1.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["0000:03:02.0", "0000:03:02.1", "0000:03:02.2"]);
        assert!(l[0].1.iter().all(|d| d.healthy));
    }

    #[test]
    fn first_matching_pool_wins_and_ranges_select() {
        let mut h = host(4);
        h.files.insert(
            CONFIG_PATH.into(),
            r#"{"resourceList":[{"resourceName":"low","selectors":{"pfNames":["ens1f0#0-1"]}},
                {"resourceName":"all","resourcePrefix":"example.com","selectors":[{"pfNames":["ens1f0"]}]},
                {"resourceName":"bad name"}]}"#
                .into(),
        );
        let dp = SriovDevicePlugin::start(&h).unwrap();
        assert_eq!(
            dp.warnings,
            ["resource name \"bad name\" contains invalid characters"]
        );
        let l = dp.list_and_watch(&h);
        assert_eq!(l[0].0, "intel.com/low");
        assert_eq!(l[0].1.len(), 2);
        assert_eq!(l[1].0, "example.com/all");
        assert_eq!(l[1].1.len(), 2);
        assert_eq!(l[1].1[0].id, "0000:03:02.2");
    }

    #[test]
    fn allocate_gives_env_and_devinfo() {
        let mut h = host(2);
        let dp = SriovDevicePlugin::start(&h).unwrap();
        let ids = vec!["0000:03:02.1".to_string()];
        let r = dp
            .allocate(&mut h, "intel.com/sriov_netdevice", &ids)
            .unwrap();
        assert_eq!(
            r.envs["PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE"],
            "0000:03:02.1"
        );
        assert_eq!(
            r.envs["PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE_INFO"],
            r#"{"0000:03:02.1":{"generic":{"deviceID":"0000:03:02.1"}}}"#
        );
        let f = "/var/run/k8s.cni.cncf.io/devinfo/dp/intel.com-sriov_netdevice-0000:03:02.1-device.json";
        assert_eq!(
            h.files[f],
            r#"{"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:03:02.1"}}"#
        );
    }

    #[test]
    fn missing_config_is_an_error() {
        let h = Host::new(
            "n",
            "192.168.0.9",
            "02:00:00:00:00:09".parse().expect("a MAC"),
        );
        assert!(
            SriovDevicePlugin::start(&h)
                .unwrap_err()
                .contains("no such file")
        );
    }
}
