//! `node add` and `node list`: Node objects and the per-node runtime state behind them.

use super::validate;
use super::{Lab, LabError};
use crate::cluster::objects::ResourceList;
use crate::cluster::{ApiKind, NodeAddress, NodeSpec, NodeSystemInfo, Object};
use crate::cni::conf::ConfDir;
use crate::cni::host::Host;
use crate::node::NodeRuntime;
use crate::render::{Outcome, Role, Table};
use ipnet::IpNet;
use std::sync::Arc;

impl Lab {
    /// [`Lab::node_add`], optionally with an SR-IOV NIC: `sriov` = (PF name, VF count).
    /// The PF and its VF netdevs appear in the host namespace, the SR-IOV network device
    /// plugin gets `/etc/pcidp/config.json` and registers `intel.com/sriov_netdevice` with
    /// the node's kubelet, which reports it in the Node's capacity and allocatable.
    pub(crate) fn node_add_with(
        &mut self,
        name: &str,
        cidr: Option<&str>,
        ip: Option<&str>,
        zone: Option<&str>,
        sriov: Option<(&str, u32)>,
    ) -> Result<Outcome, LabError> {
        validate::metadata_name(ApiKind::Node, name)?;
        if self.nodes.contains_key(name) {
            return Err(LabError::msg(format!(
                "Error from server (AlreadyExists): nodes \"{name}\" already exists"
            )));
        }
        // The default index is only worked out when a default or the overlap hint needs it.
        let cidr: IpNet = match cidr {
            Some(c) => validate::cidr(c).map_err(LabError::msg)?,
            None => format!("10.244.{}.0/24", self.free_node_index())
                .parse()
                .map_err(|_| LabError::msg("no free default podCIDR left; pass --cidr"))?,
        };
        if let Some((other, o)) = self.node_index.overlapping(&self.cluster.nodes, &cidr) {
            return Err(LabError::msg(format!(
                "podCIDR {cidr} overlaps {o} of node {other}; pick a free range, e.g. --cidr 10.244.{}.0/24",
                self.free_node_index()
            )));
        }
        let ip = match ip {
            Some(i) => validate::ip(i).map_err(LabError::msg)?,
            None => format!("192.168.0.{}", self.free_node_index())
                .parse()
                .map_err(|_| LabError::msg("no free default InternalIP left; pass --ip"))?,
        };
        let ip_text = crate::util::addr::ip_text(ip);
        if let Some(other) = self.node_index.ip_owner(ip) {
            return Err(LabError::msg(format!(
                "InternalIP {ip} is already used by node {other}"
            )));
        }
        // The zone label as validated is the one the Node gets.
        let zone_label = zone
            .map(|z| validate::label(&format!("topology.kubernetes.io/zone={z}")))
            .transpose()
            .map_err(LabError::msg)?;
        let mut host = Host::new(
            name,
            &ip_text,
            crate::cni::host::Mac(crate::util::hash::mac_bytes(&[name, "eth0"])),
        );
        if let Some((pf, vfs)) = sriov {
            crate::cni::sriov_nic::check_request(&host, pf, vfs).map_err(LabError::msg)?;
            crate::cni::sriov_nic::install(&mut host, pf, vfs);
            // The device plugin's ConfigMap, mounted where the DaemonSet reads it.
            host.files.insert(
                crate::netd::sriov_dp::CONFIG_PATH.to_string(),
                crate::netd::sriov_dp::default_config(pf),
            );
        }

        let cidr_text = crate::util::addr::net_text(cidr);
        let mut obj = Object::new(
            name,
            "",
            NodeSpec {
                pod_cidr: cidr_text.clone(),
                pod_cidrs: vec![cidr_text.clone()],
                ..NodeSpec::default()
            },
        );
        let labels = &mut obj.metadata.labels;
        labels.insert("kubernetes.io/hostname".into(), name.into());
        labels.insert("kubernetes.io/os".into(), "linux".into());
        if let Some((key, value)) = zone_label {
            labels.insert(key, value);
        }
        obj.status.addresses = vec![
            NodeAddress {
                address_type: "InternalIP".into(),
                address: ip_text.clone(),
            },
            NodeAddress {
                address_type: "Hostname".into(),
                address: name.into(),
            },
        ];
        obj.status.conditions = crate::kubelet::node_conditions(crate::kubelet::node_ready());
        // What kubelet reports for the machine: every lab node is the same 4-CPU, 8 GiB VM,
        // so every Node shares the two lists (a device plugin's resource copies them).
        obj.status.node_info = NodeSystemInfo::lab(name);
        let (capacity, allocatable) = node_resources();
        obj.status.capacity = Arc::clone(capacity);
        obj.status.allocatable = Arc::clone(allocatable);
        self.cluster.nodes().create(obj, self.clock)?;
        // The podCIDR as parsed from its text (the text is `cidr`'s own).
        self.node_index.insert_net(name, Some(cidr), Some(ip));

        let mut confdir = ConfDir::default();
        // The template is shared by every node; each holds only its podCIDR.
        confdir.files.insert(
            super::DEFAULT_CONF_NAME.to_string(),
            crate::cni::conf::ConfText::for_node(&self.conf_template, &cidr_text),
        );
        // The device plugins start on the host before it joins the map of nodes (they
        // read only the host), saving a lookup in that map.
        let mut kubelet = crate::kubelet::Kubelet::new(name, Some(ip));
        kubelet.start_device_plugins(&mut super::ctx!(self), &host);
        self.nodes
            .insert(name.to_string(), Box::new(NodeRuntime::new(host, confdir)));
        self.kubelets.insert(name.to_string(), Box::new(kubelet));
        // The driver's DaemonSet starts its node plugin on the new node; the plugin
        // registers with kubelet.
        if self.driver.add_node_default(name, zone).is_ok() {
            crate::storage::registration::register_csi_node(&mut super::ctx!(self), name);
        }

        // The network's DaemonSet starts its daemon on the new node; every node's daemon
        // learns of the Node (in step mode too: daemons are not the learner's hops).
        self.network_node_added(name);
        // Multus's DaemonSet starts its entrypoint on the new node too.
        if self.multus {
            self.multus_install(name);
        }

        let mut out = Outcome::empty();
        out.line(
            crate::render::Line::new()
                .push(format!("node/{name}"), Role::Name)
                .push(" created", Role::Good)
                .push(
                    // The texts made above for the Node (each `Display`'s own).
                    format!(
                        "  podCIDR {cidr_text} · InternalIP {ip_text}{}{}",
                        zone.map(|z| format!(" · zone {z}")).unwrap_or_default(),
                        sriov
                            .map(|(pf, n)| format!(" · SR-IOV {pf} with {n} VFs"))
                            .unwrap_or_default()
                    ),
                    Role::Dim,
                ),
        );
        Ok(out)
    }

    /// The smallest N ≥ 1 such that neither 10.244.N.0/24 nor 192.168.0.N is taken.
    fn free_node_index(&self) -> u32 {
        self.node_index.free_default(&self.cluster.nodes)
    }

    /// `node list`: name, podCIDR, InternalIP, bridge gateway, pods.
    pub(crate) fn node_list(&self) -> Outcome {
        let mut t = Table::new(&["NAME", "STATUS", "PODCIDR", "INTERNAL-IP", "ZONE", "PODS"]);
        for obj in self.cluster.nodes.values() {
            let name = obj.name();
            let pods = self.cluster.fields.pod_count_on_node(name);
            t.row([
                name.to_string(),
                ready_text(&obj.status).to_string(),
                obj.spec.pod_cidr.clone(),
                obj.status.internal_ip().unwrap_or("<none>").to_string(),
                obj.metadata
                    .labels
                    .get("topology.kubernetes.io/zone")
                    .cloned()
                    .unwrap_or_else(|| "<none>".into()),
                pods.to_string(),
            ]);
        }
        if t.is_empty() {
            let mut out = Outcome::empty();
            out.plain("No resources found");
            return out;
        }
        t.render()
    }
}

/// The machine resources kubelet reports for every lab node: (name, capacity,
/// allocatable). Allocatable is capacity less the eviction thresholds (memory.available
/// 100Mi, nodefs.available 10%), as a kubelet without reservations computes it.
pub(crate) const NODE_RESOURCES: [(&str, &str, &str); 4] = [
    ("cpu", "4", "4"),
    ("ephemeral-storage", "61255492Ki", "56453061882"),
    ("memory", "8136868Ki", "8034468Ki"),
    ("pods", "110", "110"),
];

/// [`NODE_RESOURCES`] as a Node's `status.capacity` and `status.allocatable`, built once
/// and shared by every Node.
fn node_resources() -> &'static (Arc<ResourceList>, Arc<ResourceList>) {
    static LISTS: std::sync::OnceLock<(Arc<ResourceList>, Arc<ResourceList>)> =
        std::sync::OnceLock::new();
    LISTS.get_or_init(|| {
        let mut capacity = ResourceList::new();
        let mut allocatable = ResourceList::new();
        for (k, cap, alloc) in NODE_RESOURCES {
            capacity.insert(k.to_string(), cap.to_string());
            allocatable.insert(k.to_string(), alloc.to_string());
        }
        (Arc::new(capacity), Arc::new(allocatable))
    })
}

/// kubectl's node STATUS: `Ready` when the Ready condition is True, else `NotReady`.
pub(crate) fn ready_text(status: &crate::cluster::NodeStatus) -> &'static str {
    let ready = status
        .conditions
        .iter()
        .any(|c| c.condition_type == "Ready" && c.status == "True");
    if ready { "Ready" } else { "NotReady" }
}

/// The STATUS column of `get nodes`: the Ready condition, then `SchedulingDisabled` for a
/// cordoned node (kubectl's printer).
pub(crate) fn status_text(node: &crate::cluster::Object<crate::cluster::NodeSpec>) -> String {
    let ready = ready_text(&node.status);
    if node.spec.unschedulable {
        format!("{ready},SchedulingDisabled")
    } else {
        ready.to_string()
    }
}

impl super::Lab {
    /// `cordon NODE` / `uncordon NODE`: set or clear `spec.unschedulable` and the
    /// `node.kubernetes.io/unschedulable:NoSchedule` taint (kubectl's wording for each).
    pub(crate) fn cordon(
        &mut self,
        name: &str,
        on: bool,
    ) -> Result<crate::render::Outcome, super::LabError> {
        use crate::cluster::{Taint, UNSCHEDULABLE_TAINT};
        let mut node = self.cluster.nodes().get("", name)?.clone();
        let verb = if on { "cordoned" } else { "uncordoned" };
        let mut out = crate::render::Outcome::empty();
        if node.spec.unschedulable == on {
            out.plain(format!("node/{name} already {verb}"));
            return Ok(out);
        }
        node.spec.unschedulable = on;
        node.spec.taints.retain(|t| t.key != UNSCHEDULABLE_TAINT);
        if on {
            node.spec.taints.push(Taint {
                key: UNSCHEDULABLE_TAINT.into(),
                effect: "NoSchedule".into(),
                time_added: Some(self.clock),
            });
        }
        self.cluster.nodes().update(node)?;
        out.line(
            crate::render::Line::new()
                .push(format!("node/{name}"), crate::render::Role::Name)
                .push(format!(" {verb}"), crate::render::Role::Good),
        );
        Ok(out)
    }

    /// `drain NODE [--force]`, as kubectl drain does it (`pkg/cmd/drain`, `pkg/drain`):
    /// cordon the node, list its pods in every namespace (`GetPodsForDeletion`), refuse
    /// pods that declare no controller unless `--force` (`unreplicatedFilter`; a pod that
    /// has finished is deleted anyway), then evict each (the Eviction API deletes it
    /// gracefully: kubelet tears it down) and say the node is drained. A refusal leaves the
    /// node cordoned, as kubectl does. The lab has no DaemonSet, mirror or emptyDir pods
    /// and no PodDisruptionBudgets, so those filters and eviction refusals never apply.
    pub fn drain(
        &mut self,
        name: &str,
        force: bool,
    ) -> Result<crate::render::Outcome, super::LabError> {
        use crate::render::{Line, Role};
        let mut out = self.cordon(name, true)?;
        let on_node: Vec<(String, String, bool)> = self
            .cluster
            .pods_on_node(name)
            .filter(|p| p.metadata.deletion_tick().is_none())
            .map(|p| {
                let (ns, n) = (p.metadata.namespace(), p.metadata.name());
                let finished = p.status.phase == "Succeeded" || p.status.phase == "Failed";
                (ns.clone(), n.clone(), finished)
            })
            .collect();
        let unmanaged: Vec<String> = on_node
            .iter()
            .filter(|(_, _, finished)| !finished)
            .map(|(ns, n, _)| format!("{ns}/{n}"))
            .collect();
        if !unmanaged.is_empty() && !force {
            let why = format!(
                "cannot delete Pods that declare no controller (use --force to override): {}",
                unmanaged.join(", ")
            );
            let mut e = super::LabError::msg(format!(
                "unable to drain node {name:?} due to error: {why}, continuing command...\nThere are pending nodes to be drained:\n {name}\nerror: {why}"
            ));
            e.output = out;
            return Err(e);
        }
        if !unmanaged.is_empty() {
            out.line(Line::styled(
                format!(
                    "Warning: deleting Pods that declare no controller: {}",
                    unmanaged.join(", ")
                ),
                Role::Warn,
            ));
        }
        for (ns, pod, _) in &on_node {
            out.plain(format!("evicting pod {ns}/{pod}"));
            self.pod_delete(ns, pod)?;
            out.line(
                Line::new()
                    .push(format!("pod/{pod}"), Role::Name)
                    .push(" evicted", Role::Good),
            );
        }
        out.line(
            Line::new()
                .push(format!("node/{name}"), Role::Name)
                .push(" drained", Role::Good),
        );
        Ok(out)
    }
}
