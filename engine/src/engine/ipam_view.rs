//! host-local's stores on a node summarised with their ranges, as `show ipam` and the
//! dashboard's IPAM pane print them: the range sets host-local derives from the active
//! network config (`LoadIPAMConfig`), the gateway it skips, capacity, used and free.

use super::Lab;
use std::collections::BTreeMap;

/// One host-local network directory on a node, summarised for the IPAM pane's header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpamSummary {
    /// The store's key (the network name, or the data directory for a custom one).
    pub net: String,
    /// The directory on disk.
    pub path: String,
    /// The range sets as host-local prints them (`10.244.1.1-10.244.1.254`).
    pub ranges: Vec<String>,
    /// The gateway host-local skips (`10.244.1.1`).
    pub gateway: String,
    /// Addresses the ranges hold, gateways excluded.
    pub capacity: u128,
    /// Leased addresses.
    pub used: usize,
}

impl IpamSummary {
    /// Addresses still free.
    pub fn free(&self) -> u128 {
        self.capacity.saturating_sub(self.used as u128)
    }
}

/// The host-local directories of a node with their ranges, read from the node's active
/// network config (the ranges are what `LoadIPAMConfig` derives from it).
pub fn ipam_summaries(lab: &Lab, node: &str) -> Vec<IpamSummary> {
    use crate::cni::plugins::host_local::range::to_u128;
    use crate::cni::plugins::host_local::{config::load_ipam_config, store_key, store_path};
    let Some(rt) = lab.nodes.get(node) else {
        return Vec::new();
    };
    // The ranges of each host-local in the active network, by store key.
    let mut ranges: BTreeMap<
        String,
        (String, crate::cni::plugins::host_local::config::IpamConfig),
    > = BTreeMap::new();
    let mut configs: Vec<serde_json::Value> = Vec::new();
    if let Ok(net) = rt.network() {
        for conf in &net.injected {
            if conf.get("type").and_then(|t| t.as_str()) == Some("multus") {
                // Multus's delegates, and every attachment a pod may name (the NADs'
                // configs, with the NAD's name where the config has none, as Multus does).
                for d in conf
                    .get("delegates")
                    .and_then(|d| d.as_array())
                    .into_iter()
                    .flatten()
                {
                    configs.extend(plugin_objects(d, ""));
                }
                for nad in lab.cluster.net_attach_defs.values() {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&nad.spec.config) {
                        configs.extend(plugin_objects(&v, nad.name()));
                    }
                }
            } else {
                configs.push(conf.as_ref().clone());
            }
        }
    }
    for conf in &configs {
        let is_host_local = conf
            .get("ipam")
            .and_then(|i| i.get("type"))
            .and_then(|t| t.as_str())
            == Some("host-local");
        if !is_host_local {
            continue;
        }
        if let Ok(cfg) = load_ipam_config(conf, "") {
            let key = store_key(&cfg.data_dir, &cfg.name);
            let path = store_path(&cfg.data_dir, &cfg.name);
            ranges.entry(key).or_insert((path, cfg));
        }
    }
    let mut keys: Vec<String> = rt.host.ipam.keys().map(|k| k.to_string()).collect();
    for k in ranges.keys() {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    keys.sort();
    keys.into_iter()
        .map(|key| {
            let used = rt.host.ipam.get(key.as_str()).map_or(0, |s| s.len());
            let mut s = IpamSummary {
                path: format!("/var/lib/cni/networks/{key}"),
                net: key.clone(),
                used,
                ..IpamSummary::default()
            };
            if let Some((path, cfg)) = ranges.get(&key) {
                s.path = path.clone();
                let mut gws: Vec<String> = Vec::new();
                for set in &cfg.ranges {
                    s.ranges.push(set.to_string());
                    for r in set.ranges() {
                        let (a, b) = (to_u128(&r.range_start), to_u128(&r.range_end));
                        let mut n = b.saturating_sub(a).saturating_add(1);
                        let gw = to_u128(&r.gateway);
                        if gw >= a && gw <= b {
                            n = n.saturating_sub(1);
                        }
                        s.capacity = s.capacity.saturating_add(n);
                        let g = r.gateway.to_string();
                        if !gws.contains(&g) {
                            gws.push(g);
                        }
                    }
                }
                s.gateway = gws.join(", ");
            }
            s
        })
        .collect()
}

/// The plugin objects of a CNI config or conflist, each with the network's `name` (or
/// `default_name` when it has none) and `cniVersion`, as libcni injects them.
fn plugin_objects(conf: &serde_json::Value, default_name: &str) -> Vec<serde_json::Value> {
    let name = conf
        .get("name")
        .and_then(|n| n.as_str())
        .filter(|n| !n.is_empty())
        .unwrap_or(default_name);
    let version = conf.get("cniVersion").cloned().unwrap_or_default();
    let plugins: Vec<&serde_json::Value> = match conf.get("plugins").and_then(|p| p.as_array()) {
        Some(list) => list.iter().collect(),
        None => vec![conf],
    };
    plugins
        .into_iter()
        .filter_map(|p| {
            let mut obj = p.as_object()?.clone();
            obj.insert("name".into(), name.into());
            obj.insert("cniVersion".into(), version.clone());
            Some(serde_json::Value::Object(obj))
        })
        .collect()
}

/// A node's addresses when its network hands them out without host-local (Calico's
/// calico-ipam blocks, the Cilium agent's pool): one line each, for the IPAM pane. Empty
/// when the node's pods get them from host-local (or from nowhere yet).
pub fn other_ipam_lines(lab: &Lab, node: &str) -> Vec<String> {
    let Some(rt) = lab.nodes.get(node) else {
        return Vec::new();
    };
    if let Some(ds) = &rt.host.datastore {
        let mut out = vec![format!(
            "calico-ipam (the cluster datastore): {node}'s blocks"
        )];
        ds.read(|d| {
            for b in d.blocks_of(node) {
                let size = b.allocations.len();
                out.push(format!(
                    "  {} · used {} · free {}",
                    b.cidr,
                    b.in_use(),
                    size - b.in_use()
                ));
                for (ord, a) in b.allocations.iter().enumerate() {
                    if let Some(a) = a {
                        out.push(format!("    {}  {}", b.addr(ord as u32), a.pod));
                    }
                }
            }
        });
        if out.len() == 1 {
            out.push("  none yet: the node claims a /26 with its first pod".to_string());
        }
        return out;
    }
    if let Some(api) = &rt.host.cilium {
        let mut out = vec![format!(
            "cilium-agent (IPAM kubernetes): {} · used {}",
            api.pod_cidr,
            api.allocated.len()
        )];
        for (ip, owner) in &api.allocated {
            let who = if owner == crate::cni::cilium_api::ROUTER_OWNER {
                "router IP (cilium_host)".to_string()
            } else {
                lab.nodes
                    .get(node)
                    .and_then(|rt| rt.sandboxes.iter().find(|(_, sb)| sb.id() == owner))
                    .map(|(k, _)| k.to_string())
                    .unwrap_or_else(|| owner.chars().take(13).collect())
            };
            out.push(format!("    {ip}  {who}"));
        }
        return out;
    }
    Vec::new()
}
