//! kubelet's device manager (`pkg/kubelet/cm/devicemanager`) and the resource part of its
//! pod admission (`pkg/kubelet/lifecycle/predicate.go`).
//!
//! A device plugin registers one endpoint per resource; its ListAndWatch devices become the
//! node's `capacity` (healthy + unhealthy) and `allocatable` (healthy) for that resource
//! (`GetCapacity`). When kubelet admits a pod it first checks that each extended resource
//! the pod requests fits: requested ≤ allocatable − used by the pods already admitted
//! (else the pod fails with reason `OutOf<resource>`). Then it allocates devices for each
//! container and calls the plugin's Allocate, whose env goes into the container.
//!
//! **Which devices.** Without a topology hint the real manager takes the needed number from
//! an unordered set (a Go map), so the choice is arbitrary; the lab takes the free healthy
//! devices in ascending ID order (the lowest PCI addresses first), so runs repeat.
//!
//! Devices are freed when the pod is gone (kubelet's killPod finished). PodResources `List`
//! ([`DeviceManager::pod_devices`]) reports what a pod holds, which is how Multus finds the
//! VF's PCI address for sriov-cni.

use crate::cluster::store::SharedKey;
use crate::cluster::{Object, PodSpec};
use crate::cni::host::Host;
use crate::cni::kube_api::PodDevices;
use crate::netd::sriov_dp::{Device, SriovDevicePlugin};
use crate::record::{Actor, Agent};
use std::collections::BTreeMap;

/// One registered device plugin endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Its devices by ID, `true` when healthy.
    pub devices: BTreeMap<String, bool>,
    /// The plugin serving it (for Allocate).
    pub plugin: SriovDevicePlugin,
}

/// What one container of a pod was given for one resource.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerDevices {
    /// The device IDs, in the order allocated.
    pub ids: Vec<String>,
    /// The env the plugin's Allocate returned.
    pub envs: BTreeMap<String, String>,
}

/// A pod's allocation (the checkpoint's `PodDeviceEntries`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodAllocation {
    /// Per container, per resource.
    pub containers: BTreeMap<String, BTreeMap<String, ContainerDevices>>,
}

/// Why admission refused a pod: kubelet's reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// `OutOf<resource>`, `NodeAffinity`, `NodePorts` or `UnexpectedAdmissionError`.
    pub reason: String,
    /// The message without the `Pod was rejected: ` prefix.
    pub message: String,
}

/// The device manager of one kubelet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceManager {
    /// Registered endpoints by resource name.
    pub endpoints: BTreeMap<String, Endpoint>,
    /// Allocations by pod key (namespace, name).
    pub allocated: BTreeMap<(String, String), PodAllocation>,
}

impl DeviceManager {
    /// A plugin registered (or its ListAndWatch sent a new list) for `resource`.
    pub fn register(&mut self, resource: &str, devices: &[Device], plugin: &SriovDevicePlugin) {
        self.endpoints.insert(
            resource.to_string(),
            Endpoint {
                devices: devices.iter().map(|d| (d.id.clone(), d.healthy)).collect(),
                plugin: plugin.clone(),
            },
        );
    }

    /// `GetCapacity`: per resource, (capacity, allocatable) = (all devices, healthy ones).
    pub fn capacity(&self) -> BTreeMap<String, (usize, usize)> {
        self.endpoints
            .iter()
            .map(|(r, e)| {
                let healthy = e.devices.values().filter(|h| **h).count();
                (r.clone(), (e.devices.len(), healthy))
            })
            .collect()
    }

    /// The devices of `resource` allocated to any pod.
    pub fn in_use(&self, resource: &str) -> std::collections::BTreeSet<&str> {
        self.allocated
            .values()
            .flat_map(|a| a.containers.values())
            .filter_map(|m| m.get(resource))
            .flat_map(|c| c.ids.iter().map(String::as_str))
            .collect()
    }

    /// Allocate devices to every container of `pod` that requests a registered resource,
    /// and run the plugin's Allocate for each (its device-info files land on `host`).
    /// Nothing is kept when a container cannot be served.
    pub fn allocate(&mut self, host: &mut Host, pod: &Object<PodSpec>) -> Result<(), Rejection> {
        let mut alloc = PodAllocation::default();
        let mut taken: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for c in pod.spec.containers.iter() {
            for (resource, q) in &c.resources().limits {
                let Some(ep) = self.endpoints.get(resource) else {
                    continue; // not a device plugin resource
                };
                let need = usize::try_from(q.parse::<i64>().unwrap_or(0)).unwrap_or(0);
                if need == 0 {
                    continue;
                }
                let used = self.in_use(resource);
                let mine = taken.entry(resource.clone()).or_default();
                let free: Vec<String> = ep
                    .devices
                    .iter()
                    .filter(|(id, healthy)| {
                        **healthy && !used.contains(id.as_str()) && !mine.contains(id)
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                if free.len() < need {
                    return Err(Rejection {
                        reason: "UnexpectedAdmissionError".into(),
                        message: format!(
                            "Allocate failed due to requested number of devices unavailable for {resource}. Requested: {need}, Available: {}, which is unexpected",
                            free.len()
                        ),
                    });
                }
                let ids: Vec<String> = free.into_iter().take(need).collect();
                mine.extend(ids.iter().cloned());
                let resp = ep
                    .plugin
                    .allocate(host, resource, &ids)
                    .map_err(|e| Rejection {
                        reason: "UnexpectedAdmissionError".into(),
                        message: format!("Allocate failed for {resource}: {e}"),
                    })?;
                alloc
                    .containers
                    .entry(c.name.to_string())
                    .or_default()
                    .insert(
                        resource.clone(),
                        ContainerDevices {
                            ids,
                            envs: resp.envs,
                        },
                    );
            }
        }
        if !alloc.containers.is_empty() {
            self.allocated.insert(pod_key(pod), alloc);
        }
        Ok(())
    }

    /// The pod is gone: its devices go back to the free set.
    pub fn free(&mut self, key: &(String, String)) -> Option<PodAllocation> {
        self.allocated.remove(key)
    }

    /// PodResources `List` for one pod: per resource, its device IDs across containers.
    pub fn pod_devices(&self, ns: &str, name: &str) -> Vec<PodDevices> {
        let Some(a) = self.allocated.get(&(ns.to_string(), name.to_string())) else {
            return Vec::new();
        };
        let mut by_res: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for m in a.containers.values() {
            for (r, c) in m {
                by_res.entry(r).or_default().extend(c.ids.iter().cloned());
            }
        }
        by_res
            .into_iter()
            .map(|(r, ids)| PodDevices {
                resource: r.to_string(),
                device_ids: ids,
            })
            .collect()
    }
}

fn pod_key(pod: &Object<PodSpec>) -> (String, String) {
    (
        pod.metadata.namespace().clone(),
        pod.metadata.name().clone(),
    )
}

/// predicate.go's resource fit for one pod against the node's allocatable and the pods
/// already admitted: `pods_used` of them, whose requests are `others` (needed only when the
/// pod requests an extended resource; otherwise it may be empty). `pods` (the pod count) is
/// checked first, as `fitsRequest` does; then the first extended resource that does not fit.
/// Extended resources the node does not have are not checked
/// (`removeMissingExtendedResources`).
pub fn admit(
    allocatable: &crate::cluster::ResourceList,
    pod: &PodSpec,
    pods_used: usize,
    others: &[&PodSpec],
) -> Result<(), Rejection> {
    if let Some(max) = allocatable.get("pods").and_then(|q| q.parse::<i64>().ok()) {
        let used = pods_used as i64;
        if used + 1 > max {
            return Err(insufficient("pods", 1, used, max));
        }
    }
    for (resource, requested) in pod.extended_requests() {
        // removeMissingExtendedResources: an extended resource the node does not list at
        // all is dropped from the check (it may be a cluster-level resource), so such a
        // pod is admitted, and runs without the device.
        let Some(capacity) = allocatable.get(&resource) else {
            continue;
        };
        if requested == 0 {
            continue;
        }
        let capacity = capacity.parse::<i64>().unwrap_or(0);
        let used: i64 = others.iter().map(|o| o.request_count(&resource)).sum();
        if requested > capacity - used {
            return Err(insufficient(&resource, requested, used, capacity));
        }
    }
    Ok(())
}

/// The node-selector part of kubelet's admission (`scheduler.AdmissionCheck`, which
/// predicate.go runs after the resource fit, reporting only the first failure): a pod whose
/// `spec.nodeSelector` the node's labels do not match is rejected with reason `NodeAffinity`
/// and the PredicateFailureError text. Only a pod created with `spec.nodeName` can get here:
/// the scheduler never places a pod on such a node.
pub(crate) fn admit_selector(
    labels: &std::collections::BTreeMap<String, String>,
    pod: &PodSpec,
) -> Result<(), Rejection> {
    if pod.selector_matches(labels) {
        return Ok(());
    }
    Err(Rejection {
        reason: "NodeAffinity".into(),
        message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
            .into(),
    })
}

/// The host-port part of kubelet's admission (`scheduler.AdmissionCheck`'s
/// `nodeports.Fits`, after the node selector): a pod asking for a host port that one of
/// the node's active pods (`others`) holds is rejected with reason `NodePorts`. Only a pod
/// created with `spec.nodeName` can get here: the scheduler's NodePorts filter keeps the
/// pods it places off such a node.
pub(crate) fn admit_ports<'a>(
    pod: &PodSpec,
    others: impl IntoIterator<Item = &'a PodSpec>,
) -> Result<(), Rejection> {
    let want = crate::controllers::host_ports::wanted(pod);
    if want.is_empty() {
        return Ok(());
    }
    let used = crate::controllers::host_ports::HostPortInfo::of(others);
    if used.fits(&want, &[]) {
        return Ok(());
    }
    Err(Rejection {
        reason: "NodePorts".into(),
        message: format!(
            "Predicate NodePorts failed: {}",
            crate::controllers::host_ports::ERR_REASON
        ),
    })
}

fn insufficient(resource: &str, requested: i64, used: i64, capacity: i64) -> Rejection {
    Rejection {
        reason: format!("OutOf{resource}"),
        message: format!(
            "Node didn't have enough resource: {resource}, requested: {requested}, used: {used}, capacity: {capacity}"
        ),
    }
}

/// An event reason as the call log keeps it (`&'static str`): kubelet's `OutOf<resource>`
/// reasons are made from resource names, so each distinct one is kept once (at most
/// [`MAX_REASONS`]; past that, the generic `OutOfResource`).
pub(crate) fn reason_text(reason: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<std::collections::BTreeSet<&'static str>>> = OnceLock::new();
    match reason {
        "UnexpectedAdmissionError" => return "UnexpectedAdmissionError",
        "NodeAffinity" => return "NodeAffinity",
        "NodePorts" => return "NodePorts",
        "OutOfpods" => return "OutOfpods",
        _ => {}
    }
    let Ok(mut seen) = SEEN.get_or_init(Default::default).lock() else {
        return "OutOfResource";
    };
    if let Some(s) = seen.get(reason) {
        return s;
    }
    if seen.len() >= MAX_REASONS {
        return "OutOfResource";
    }
    let s: &'static str = Box::leak(reason.to_string().into_boxed_str());
    seen.insert(s);
    s
}

/// How many distinct `OutOf<resource>` reasons [`reason_text`] keeps.
pub(crate) const MAX_REASONS: usize = 256;

impl super::Kubelet {
    /// The device plugins that run on the node start and register with this kubelet: the
    /// SR-IOV network device plugin when the node has `/etc/pcidp/config.json`. The node's
    /// status then carries each resource's capacity and allocatable.
    pub(crate) fn start_device_plugins(&mut self, ctx: &mut crate::control::Ctx<'_>, host: &Host) {
        if !host.files.contains_key(crate::netd::sriov_dp::CONFIG_PATH) {
            return;
        }
        let dp_actor = Actor::on(Agent::SriovDevicePlugin, &self.node);
        let actor = Actor::kubelet(&self.node);
        let dp = match SriovDevicePlugin::start(host) {
            Ok(dp) => dp,
            Err(e) => {
                ctx.log_warning(&dp_actor, "start", e);
                return;
            }
        };
        for w in &dp.warnings {
            ctx.log_warning(&dp_actor, "config", w.clone());
        }
        for (resource, devices) in dp.list_and_watch(host) {
            ctx.log(
                &dp_actor,
                "ListAndWatch",
                format!(
                    "{resource}: {} device(s) Healthy [{}]",
                    devices.len(),
                    devices
                        .iter()
                        .map(|d| d.id.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            );
            self.devices.register(&resource, &devices, &dp);
            ctx.log(
                &actor,
                "device manager",
                format!(
                    "plugin for {resource} registered (/var/lib/kubelet/device-plugins/kubelet.sock)"
                ),
            );
        }
        self.post_device_capacity(ctx);
    }

    /// Write the device manager's capacity and allocatable into the Node's status.
    fn post_device_capacity(&mut self, ctx: &mut crate::control::Ctx<'_>) {
        let caps = self.devices.capacity();
        let node = self.node.clone();
        let Ok(cur) = ctx.api.nodes().get("", &node).cloned() else {
            return;
        };
        let mut status = cur.status.clone();
        for (r, (cap, alloc)) in &caps {
            std::sync::Arc::make_mut(&mut status.capacity).insert(r.clone(), cap.to_string());
            std::sync::Arc::make_mut(&mut status.allocatable).insert(r.clone(), alloc.to_string());
        }
        if ctx
            .api
            .nodes()
            .write_status("", &node, cur.metadata.resource_version, status)
            .is_ok()
        {
            let text: Vec<String> = caps
                .iter()
                .map(|(r, (c, a))| format!("{r}: capacity {c}, allocatable {a}"))
                .collect();
            ctx.log(
                Actor::kubelet(&node),
                "node status",
                format!("node/{node} {}", text.join("; ")),
            );
        }
    }

    /// kubelet's `canAdmitPod` for a pod newly bound to the node: the device manager's
    /// allocation, then the resource fit against the pods admitted before it and the node
    /// selector, in the order NewMainKubelet adds their admit handlers. A refused pod is
    /// rejected (`rejectPod`: phase Failed, a Warning event). Returns whether it was admitted.
    pub(super) fn admit_pod(
        &mut self,
        ctx: &mut crate::control::Ctx<'_>,
        cri: &mut super::Cri<'_>,
        key: &SharedKey,
        pod: &Object<PodSpec>,
    ) -> bool {
        // The node's allocatable and labels, read in place (a node object is not copied).
        let (no_allocatable, no_labels) = (Default::default(), Default::default());
        let (allocatable, labels) = ctx
            .api
            .nodes
            .get(&self.node_key)
            .map_or((&no_allocatable, &no_labels), |n| {
                (&n.status.allocatable, &n.metadata.labels)
            });
        // The active pods (`GetActivePods`) are the admitted ones: kubelet admits only pods
        // bound to its node, drops a key when it deletes the pod (`kill_pod`) or finds it
        // gone (`sync_pod`), and never turns an admitted pod Failed or Succeeded. So their
        // count is the set's size, and their specs are read only for a pod that requests an
        // extended resource (walking them for every admission made a node's pods O(n²)).
        let active = || {
            self.admitted
                .keys()
                .filter(|k| *k != key)
                .filter_map(|k| ctx.api.pods.get(k))
                .filter(|p| p.status.phase != "Failed" && p.status.phase != "Succeeded")
                .map(|p| &p.spec)
        };
        let pods_used = self.admitted.len() - usize::from(self.admitted.contains_key(key));
        debug_assert_eq!(
            pods_used,
            active().count(),
            "admitted pods are the active ones"
        );
        let others: Vec<&PodSpec> = if pod.spec.has_extended_requests() {
            active().collect()
        } else {
            Vec::new()
        };
        // NewMainKubelet adds the container manager's GetAllocateResourcesPodAdmitHandler
        // before lifecycle.NewPredicateAdmitHandler: the device manager allocates a device
        // plugin's resource first, so a pod pinned to a node with no free device is
        // refused by its Allocate (UnexpectedAdmissionError), never by the predicate's
        // `OutOf<resource>`, which is left for what no device plugin serves (pods, and
        // extended resources no plugin registered). A refusal after the allocation gives
        // the devices back.
        let verdict = self
            .devices
            .allocate(&mut cri.node.host, pod)
            .and_then(|()| {
                let fit = admit(allocatable, &pod.spec, pods_used, &others)
                    .and_then(|()| admit_selector(labels, &pod.spec))
                    .and_then(|()| admit_ports(&pod.spec, active()));
                if fit.is_err() {
                    self.devices.free(&pod_key(pod));
                }
                fit
            });
        let actor = self.actor.clone();
        match verdict {
            Ok(()) => {
                self.admitted.insert(SharedKey::clone(key), ());
                if let Some(a) = self.devices.allocated.get(&**key) {
                    for (c, m) in &a.containers {
                        for (r, d) in m {
                            ctx.log(
                                &actor,
                                "devices",
                                format!(
                                    "pod/{} container {c}: {r} → {} (device plugin Allocate: {})",
                                    pod.name(),
                                    d.ids.join(","),
                                    d.envs.keys().cloned().collect::<Vec<_>>().join(", ")
                                ),
                            );
                        }
                    }
                }
                true
            }
            Err(rej) => {
                let reason = reason_text(&rej.reason);
                ctx.pod_event(
                    &actor,
                    reason,
                    rej.message.clone(),
                    pod,
                    crate::record::Level::Warning,
                );
                let message = format!("Pod was rejected: {}", rej.message);
                let now = ctx.clock;
                let _ = ctx.write_pod_status(key, &actor, |st| {
                    st.keep_start_time(now);
                    st.phase = "Failed".into();
                    st.set_reason(reason);
                    st.set_message(message.clone());
                });
                false
            }
        }
    }

    /// PodResources `List` for one pod on this node (what Multus asks kubelet for).
    pub fn pod_devices(&self, ns: &str, name: &str) -> Vec<PodDevices> {
        self.devices.pod_devices(ns, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Container, ContainerPort, ResourceRequirements};

    /// A pod whose one container asks for these host ports (protocol, port).
    fn with_host_ports(ports: &[(&str, u16)]) -> PodSpec {
        let mut spec = PodSpec::default();
        let ports = ports
            .iter()
            .map(|&(protocol, host_port)| ContainerPort {
                container_port: 80,
                host_port,
                protocol: protocol.into(),
            })
            .collect();
        spec.containers.to_mut().push(Container::new(
            "app",
            "busybox",
            ports,
            ResourceRequirements::default(),
        ));
        spec
    }

    #[test]
    fn admission_rejects_a_host_port_an_active_pod_holds() {
        let holder = with_host_ports(&[("TCP", 8080)]);
        let e = admit_ports(&with_host_ports(&[("TCP", 8080)]), [&holder]).unwrap_err();
        assert_eq!(e.reason, "NodePorts");
        assert_eq!(
            e.message,
            "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
        );
        assert_eq!(reason_text(&e.reason), "NodePorts");
        assert!(admit_ports(&with_host_ports(&[("UDP", 8080)]), [&holder]).is_ok());
        assert!(admit_ports(&with_host_ports(&[("TCP", 8081)]), [&holder]).is_ok());
        // A container port with no host port holds nothing.
        assert!(admit_ports(&with_host_ports(&[("TCP", 0)]), [&holder]).is_ok());
    }

    const RES: &str = "intel.com/sriov_netdevice";

    fn pod(name: &str, vfs: i64) -> Object<PodSpec> {
        let mut r = ResourceRequirements::default();
        if vfs > 0 {
            r.limits.insert(RES.into(), vfs.to_string());
            r.requests.insert(RES.into(), vfs.to_string());
        }
        Object::new(
            name,
            "default",
            PodSpec::new(
                "sriov-1".into(),
                vec![Container::new("app", "x", vec![], r)],
                vec![],
                Default::default(),
            ),
        )
    }

    fn setup(vfs: u32) -> (Host, DeviceManager) {
        let mut h = Host::new(
            "sriov-1",
            "192.168.0.9",
            "02:00:00:00:00:09".parse().expect("a MAC"),
        );
        crate::cni::sriov_nic::install(&mut h, "ens1f0", vfs);
        h.files.insert(
            crate::netd::sriov_dp::CONFIG_PATH.into(),
            crate::netd::sriov_dp::default_config("ens1f0"),
        );
        let dp = SriovDevicePlugin::start(&h).unwrap();
        let mut dm = DeviceManager::default();
        for (r, d) in dp.list_and_watch(&h) {
            dm.register(&r, &d, &dp);
        }
        (h, dm)
    }

    #[test]
    fn capacity_counts_devices() {
        let (_, dm) = setup(2);
        assert_eq!(dm.capacity()[RES], (2, 2));
    }

    #[test]
    fn allocates_lowest_free_ids_and_frees() {
        let (mut h, mut dm) = setup(2);
        dm.allocate(&mut h, &pod("a", 1)).unwrap();
        dm.allocate(&mut h, &pod("b", 1)).unwrap();
        assert_eq!(
            dm.pod_devices("default", "a")[0].device_ids,
            ["0000:03:02.0"]
        );
        assert_eq!(
            dm.pod_devices("default", "b")[0].device_ids,
            ["0000:03:02.1"]
        );
        let e = dm.allocate(&mut h, &pod("c", 1)).unwrap_err();
        assert_eq!(e.reason, "UnexpectedAdmissionError");
        assert!(
            e.message.contains("Requested: 1, Available: 0"),
            "{}",
            e.message
        );
        dm.free(&("default".into(), "a".into()));
        dm.allocate(&mut h, &pod("c", 1)).unwrap();
        assert_eq!(
            dm.pod_devices("default", "c")[0].device_ids,
            ["0000:03:02.0"]
        );
        let envs = &dm.allocated[&("default".into(), "c".into())].containers["app"][RES].envs;
        assert_eq!(envs["PCIDEVICE_INTEL_COM_SRIOV_NETDEVICE"], "0000:03:02.0");
        assert!(dm.pod_devices("default", "zz").is_empty());
    }

    #[test]
    fn node_selector_admission() {
        let mut p = pod("a", 0);
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("kubernetes.io/hostname".to_string(), "sriov-1".to_string());
        assert!(admit_selector(&labels, &p.spec).is_ok());
        p.spec
            .set_node_selector([("disktype".to_string(), "ssd".to_string())].into());
        let e = admit_selector(&labels, &p.spec).unwrap_err();
        assert_eq!(e.reason, "NodeAffinity");
        assert_eq!(
            e.message,
            "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
        );
        assert_eq!(reason_text(&e.reason), "NodeAffinity");
        labels.insert("disktype".into(), "ssd".into());
        assert!(admit_selector(&labels, &p.spec).is_ok());
    }

    #[test]
    fn admission_texts() {
        let mut alloc = crate::cluster::ResourceList::new();
        alloc.insert(RES.into(), "2".into());
        alloc.insert("pods".into(), "110".into());
        let a = pod("a", 1);
        let b = pod("b", 1);
        assert!(admit(&alloc, &a.spec, 0, &[]).is_ok());
        let e = admit(&alloc, &pod("c", 1).spec, 2, &[&a.spec, &b.spec]).unwrap_err();
        assert_eq!(e.reason, "OutOfintel.com/sriov_netdevice");
        assert_eq!(
            e.message,
            "Node didn't have enough resource: intel.com/sriov_netdevice, requested: 1, used: 2, capacity: 2"
        );
        alloc.insert(RES.into(), "0".into());
        let e = admit(&alloc, &a.spec, 0, &[]).unwrap_err();
        assert!(e.message.ends_with("requested: 1, used: 0, capacity: 0"));
        // A node without the resource at all does not check it.
        alloc.remove(RES);
        assert!(admit(&alloc, &a.spec, 0, &[]).is_ok());
        assert!(admit(&alloc, &pod("d", 0).spec, 0, &[]).is_ok());
    }
}
