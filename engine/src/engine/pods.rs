//! `pod create`, `pod delete`, `pod list`: the API side of pods. The kubelet does the rest
//! (see `crate::kubelet`).

use super::validate;
use super::{Lab, LabError};
use crate::cluster::{ApiKind, ClaimRef, Container, ContainerPort, Object, PodSpec, PodVolume};
use crate::command::grammar::PodCreateArgs;
use crate::kubelet::sandbox::{EGRESS_BANDWIDTH, INGRESS_BANDWIDTH};
use crate::render::{Line, Outcome, Role, Table};

impl Lab {
    /// Whether namespace `ns` is Terminating, or the API server's NotFound when it does
    /// not exist (objects of a Terminating namespace may still be updated).
    pub(crate) fn existing_namespace(&self, ns: &str) -> Result<bool, LabError> {
        self.cluster
            .namespaces
            .get_named("", ns)
            .map(|n| n.metadata.deletion_tick().is_some())
            .ok_or_else(|| {
                LabError::msg(format!(
                    "Error from server (NotFound): namespaces \"{ns}\" not found"
                ))
            })
    }

    /// The API server's answer when an object is created in a namespace that does not
    /// exist, or in one being deleted (the NamespaceLifecycle admission plugin).
    pub(crate) fn require_namespace(&self, ns: &str) -> Result<(), LabError> {
        if self.existing_namespace(ns)? {
            return Err(LabError::msg(format!(
                "Error from server (Forbidden): unable to create new content in namespace {ns} because it is being terminated"
            )));
        }
        Ok(())
    }

    /// Create a pod: on `--node`, or where the scheduler places it.
    pub(crate) fn pod_create(&mut self, a: &PodCreateArgs) -> Result<Outcome, LabError> {
        validate::metadata_name(ApiKind::Pod, &a.name)?;
        validate::namespace(&a.ns).map_err(LabError::msg)?;
        self.require_namespace(&a.ns)?;
        if let Some(node) = &a.node {
            if !self.nodes.contains_key(node) {
                let known: Vec<_> = self.nodes.keys().cloned().collect();
                return Err(LabError::msg(format!(
                    "node {node:?} not found; nodes are: {}",
                    super::names::few(&known, "(none: add one with `node add NAME`)")
                )));
            }
        }
        let mut resources = crate::cluster::ResourceRequirements::default();
        for r in &a.resources {
            let (name, count) = validate::extended_resource(&a.name, r)?;
            if resources.limits.contains_key(&name) {
                return Err(LabError::msg(format!(
                    "invalid --resource {r:?}: {name} is given twice; give each resource once with its count"
                )));
            }
            // Extended resources cannot be overcommitted: requests = limits.
            resources.limits.insert(name.clone(), count.to_string());
            resources.requests.insert(name, count.to_string());
        }
        let mut volumes = Vec::new();
        for spec in &a.pvcs {
            let (claim, read_only) = match spec.split_once(':') {
                Some((c, "ro")) => (c, true),
                Some((c, "rw")) => (c, false),
                Some((_, other)) => {
                    return Err(LabError::msg(format!(
                        "invalid --pvc {spec:?}: the suffix {other:?} is not ro or rw (CLAIM[:ro])"
                    )));
                }
                None => (spec.as_str(), false),
            };
            validate::object_name(ApiKind::PersistentVolumeClaim, claim).map_err(LabError::msg)?;
            if volumes
                .iter()
                .any(|v: &PodVolume| v.persistent_volume_claim.claim_name == claim)
            {
                // The lab names a claim's volume after the claim.
                return Err(LabError::from(super::invalid::Invalid::one(
                    ApiKind::Pod,
                    &a.name,
                    format!(
                        "spec.volumes[{}].name: Duplicate value: {claim:?}",
                        volumes.len()
                    ),
                )));
            }
            volumes.push(PodVolume {
                name: claim.to_string(),
                persistent_volume_claim: ClaimRef {
                    claim_name: claim.to_string(),
                    read_only,
                },
            });
        }
        let (mounts, devices) = self.claim_mounts(&a.ns, &volumes);
        let mut node_selector = std::collections::BTreeMap::new();
        for l in &a.node_selector {
            let (k, v) = validate::label(l)
                .map_err(|e| LabError::msg(format!("invalid --node-selector: {e}")))?;
            node_selector.insert(k, v);
        }
        let mut labels = std::collections::BTreeMap::new();
        for l in &a.labels {
            let (k, v) = validate::label(l).map_err(LabError::msg)?;
            labels.insert(k, v);
        }
        let mut ports = Vec::new();
        for p in &a.ports {
            let (host, container, proto) = validate::port_mapping(p).map_err(LabError::msg)?;
            ports.push(ContainerPort {
                container_port: container,
                host_port: host,
                protocol: proto.to_ascii_uppercase(),
            });
        }
        let mut annotations = std::collections::BTreeMap::new();
        // The API server stores any text; containerd reads it when it makes the sandbox
        // (a bad one fails RunPodSandbox: see `kubelet::bandwidth`).
        if let Some(r) = &a.bandwidth_ingress {
            annotations.insert(INGRESS_BANDWIDTH.to_string(), r.clone());
        }
        if let Some(r) = &a.bandwidth_egress {
            annotations.insert(EGRESS_BANDWIDTH.to_string(), r.clone());
        }
        if let Some(n) = &a.networks {
            // The API server stores any string; Multus parses it when the sandbox is made.
            annotations.insert(
                crate::cluster::nad::NETWORKS_ANNOTATION.to_string(),
                n.clone(),
            );
        }
        let spec = PodSpec::new(
            a.node.clone().unwrap_or_default(),
            vec![
                Container::new("app", crate::cluster::LAB_IMAGE, ports, resources)
                    .with_volumes(mounts, devices),
            ],
            volumes,
            node_selector,
        );
        let mut obj = Object::new(&a.name, &a.ns, spec);
        obj.metadata.labels = labels;
        obj.metadata.set_annotations(annotations);
        self.admit_pod(obj)?;
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(["pod/", a.name.as_str()].concat(), Role::Name)
                .push(" created", Role::Good),
        );
        if let Some(node) = a.node.as_deref().filter(|_| !a.pvcs.is_empty()) {
            // Only a pod with claims (`--pvc`) has volumes to note.
            self.pinned_volume_notes(&mut out, &a.ns, &a.name, node);
        }
        if a.networks.is_some() && !self.multus {
            // The API server keeps the annotation; with no meta-plugin in net.d nothing
            // reads it, and the pod gets only the cluster network, silently.
            out.line(Line::styled(
                format!(
                    "  note: Multus is not running, so nothing reads {}: the pod gets only its {} interface (turn it on with `network multus on`, then create the pod again)",
                    crate::cluster::nad::NETWORKS_ANNOTATION,
                    self.network.name()
                ),
                Role::Warn,
            ));
        }
        Ok(out)
    }

    /// Where `pod create`'s container uses each `--pvc` volume: a filesystem claim mounted
    /// at `/mnt/CLAIM` (read-only with `:ro`), a claim that exists with `volumeMode: Block`
    /// as the device `/dev/CLAIM` (kubelet refuses a block volume in `volumeMounts`). A
    /// volume no container uses is one kubelet never mounts ("Skipping unused volume").
    fn claim_mounts(
        &self,
        ns: &str,
        volumes: &[PodVolume],
    ) -> (
        Vec<crate::cluster::VolumeMount>,
        Vec<crate::cluster::VolumeDevice>,
    ) {
        let (mut mounts, mut devices) = (Vec::new(), Vec::new());
        for v in volumes {
            let claim = &v.persistent_volume_claim.claim_name;
            let block = self
                .cluster
                .pvcs
                .get(&(ns.to_string(), claim.clone()))
                .is_some_and(|c| c.spec.volume_mode == "Block");
            if block {
                devices.push(crate::cluster::VolumeDevice {
                    name: v.name.clone(),
                    device_path: format!("/dev/{claim}"),
                });
            } else {
                mounts.push(crate::cluster::VolumeMount {
                    name: v.name.clone(),
                    mount_path: format!("/mnt/{claim}"),
                    read_only: v.persistent_volume_claim.read_only,
                });
            }
        }
        (mounts, devices)
    }

    /// A pod pinned with `--node` skips the scheduler's VolumeBinding check: for each of
    /// its claims bound to a PV whose node affinity leaves `node` out, say where the volume
    /// is (the nodes it admits), since the attach or mount on `node` will fail.
    fn pinned_volume_notes(&self, out: &mut Outcome, ns: &str, pod: &str, node: &str) {
        let Some(p) = self.cluster.pods.get(&(ns.to_string(), pod.to_string())) else {
            return;
        };
        let labels_of = |n: &str| {
            self.cluster
                .nodes
                .get(&(crate::cluster::no_namespace(), n.to_string()))
                .map(|o| &o.metadata.labels)
        };
        let Some(here) = labels_of(node) else {
            return;
        };
        for v in p.spec.volumes() {
            let claim = &v.persistent_volume_claim.claim_name;
            if self.waits_for_a_scheduled_consumer(ns, claim) {
                out.line(Line::styled(
                    format!(
                        "  note: claim {claim} waits for its first consumer to be scheduled (WaitForFirstConsumer): --node skips the scheduler, which writes the node it chose on the claim (volume.kubernetes.io/selected-node), so no volume is made and the pod waits with it (leave out --node; --node-selector kubernetes.io/hostname={node} lets the scheduler place it there)"
                    ),
                    Role::Warn,
                ));
                continue;
            }
            let Some(affinity) = self
                .cluster
                .pvcs
                .get(&(ns.to_string(), claim.clone()))
                .and_then(|c| {
                    self.cluster
                        .pvs
                        .get(&(crate::cluster::no_namespace(), c.spec.volume_name.clone()))
                })
                .and_then(|pv| pv.spec.node_affinity.as_ref())
            else {
                continue;
            };
            if affinity.admits(here) {
                continue;
            }
            let admitted: Vec<&str> = self
                .cluster
                .nodes
                .values()
                .filter(|n| affinity.admits(&n.metadata.labels))
                .map(|n| n.name())
                .collect();
            out.line(Line::styled(
                format!(
                    "  note: claim {claim}'s volume is on {} (its PV's node affinity), not {node}: --node skips the scheduler, which would have placed the pod there, so the volume cannot reach it (leave out --node, or use a claim on {node})",
                    super::names::few(
                        &admitted.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                        "no node"
                    )
                ),
                Role::Warn,
            ));
        }
    }

    /// Whether a claim is unbound, of a WaitForFirstConsumer class, and has no node the
    /// scheduler chose for it yet (`volume.kubernetes.io/selected-node`).
    fn waits_for_a_scheduled_consumer(&self, ns: &str, claim: &str) -> bool {
        let Some(c) = self.cluster.pvcs.get(&(ns.to_string(), claim.to_string())) else {
            return false;
        };
        let wffc = crate::storage::listers::class_of(&self.cluster, c)
            .is_some_and(|sc| sc.spec.waits_for_first_consumer());
        wffc && c.spec.volume_name.is_empty()
            && !c
                .metadata
                .annotations()
                .contains_key(crate::storage::SELECTED_NODE)
    }

    /// Store a new pod (from `pod create` or a manifest). The scheduler (run in the
    /// reconcile after this command) places it, or, with `spec.nodeName`, the node's
    /// kubelet takes it as it is.
    pub(crate) fn admit_pod(&mut self, obj: Object<PodSpec>) -> Result<(), LabError> {
        let key = (
            obj.metadata.namespace().clone(),
            obj.metadata.name().clone(),
        );
        let clock = self.clock;
        self.cluster.pods().create(obj, clock)?;
        if let Some(pod) = self.cluster.pods.get(&key) {
            self.cluster.volume_pods.add(pod);
        }
        self.dirty.insert(key);
        Ok(())
    }

    /// The namespace controller's `deleteAllContent` for a Terminating namespace: delete
    /// what it holds that is not being deleted yet, through the same paths as `pod
    /// delete`, `pvc delete`… (pods go through their kubelet's teardown, claims through
    /// pvc-protection). True when it asked for a deletion.
    pub(crate) fn delete_namespace_content(&mut self, name: &str) -> bool {
        use crate::command::grammar::{NadCmd, PolicyCmd, PvcCmd, SnapshotCmd};
        let c = &self.cluster;
        let pods = live_in(&c.pods, name);
        let snaps = live_in(&c.snapshots, name);
        let pvcs = live_in(&c.pvcs, name);
        let pols = live_in(&c.policies, name);
        let nads = live_in(&c.net_attach_defs, name);
        let asked = [&pods, &snaps, &pvcs, &pols, &nads]
            .iter()
            .any(|names| !names.is_empty());
        let ns = name.to_string();
        for pod in pods {
            let _ = self.pod_delete(name, &pod);
        }
        for s in snaps {
            let _ = self.snapshot(SnapshotCmd::Delete {
                name: s,
                ns: ns.clone(),
            });
        }
        for c in pvcs {
            let _ = self.pvc(PvcCmd::Delete {
                name: c,
                ns: ns.clone(),
                step: false,
            });
        }
        for p in pols {
            let _ = self.policy(PolicyCmd::Delete {
                name: p,
                ns: ns.clone(),
            });
        }
        for n in nads {
            let _ = self.nad(NadCmd::Delete {
                name: n,
                ns: ns.clone(),
            });
        }
        asked
    }

    /// Request deletion, gracefully as the API server does (see
    /// `crate::cluster::pod_deletion`); the kubelet tears the pod down at once (the lab's
    /// container stops on SIGTERM, well within its grace period), then it is removed.
    pub(crate) fn pod_delete(&mut self, ns: &str, name: &str) -> Result<Outcome, LabError> {
        let mut pod = self.cluster.pods().get(ns, name)?.clone();
        let key = (pod.metadata.namespace().clone(), name.to_string());
        let grace = crate::cluster::pod_deletion::grace_period_seconds(&pod);
        if crate::cluster::pod_deletion::mark_for_deletion(&mut pod, self.clock) {
            self.cluster.pods().update(pod)?;
            if grace == 0 {
                // Never scheduled, or already terminal: the API server deletes it in the
                // request (its `updateForGracefulDeletionAndFinalizers` writes the
                // deletionTimestamp, then a zero grace period deletes it at once).
                self.remove_pod(&key);
            }
        }
        self.dirty.insert(key);
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("pod \"{name}\""), Role::Name)
                .push(" deleted", Role::Good),
        );
        Ok(out)
    }

    /// `pod list`: name, node, IP, status.
    pub(crate) fn pod_list(&self, ns: Option<&str>) -> Outcome {
        let mut t = Table::new(&["NAMESPACE", "NAME", "NODE", "IP", "STATUS"]);
        for p in self.cluster.pods.values() {
            if ns.is_some_and(|n| n != p.metadata.namespace()) {
                continue;
            }
            let status = pod_status_text(p);
            let role = match status.as_str() {
                "Running" => Role::Good,
                "ContainerCreating" | "Terminating" | "Pending" => Role::Warn,
                _ => Role::Plain,
            };
            t.row_styled(vec![
                (p.metadata.namespace().clone(), Role::Plain),
                (p.metadata.name().clone(), Role::Name),
                (p.spec.node_name.clone(), Role::Plain),
                (
                    p.status
                        .pod_ip
                        .map_or_else(|| "<none>".into(), |ip| ip.to_string()),
                    Role::Plain,
                ),
                (status, role),
            ]);
        }
        if t.is_empty() {
            let mut out = Outcome::empty();
            out.plain(super::listing::no_resources_found(ns));
            return out;
        }
        t.render()
    }
}

/// The STATUS column kubectl shows.
pub(crate) fn pod_status_text(p: &Object<PodSpec>) -> String {
    if p.metadata.deletion_tick().is_some() {
        "Terminating".into()
    } else if !p.status.reason().is_empty() {
        p.status.reason().to_string()
    } else {
        p.status.phase.to_string()
    }
}

impl Lab {
    /// `ns create|delete|list`.
    pub fn namespace(&mut self, cmd: crate::command::grammar::NsCmd) -> Result<Outcome, LabError> {
        use crate::command::grammar::NsCmd;
        match cmd {
            NsCmd::Create { name, labels } => {
                validate::namespace(&name).map_err(LabError::msg)?;
                let mut obj = Object::new(&name, "", crate::cluster::NamespaceSpec {});
                for l in &labels {
                    let (k, v) = validate::label(l).map_err(LabError::msg)?;
                    obj.metadata.labels.insert(k, v);
                }
                obj.metadata
                    .labels
                    .insert("kubernetes.io/metadata.name".into(), name.clone());
                let clock = self.clock;
                self.cluster.namespaces().create(obj, clock)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(format!("namespace/{name}"), Role::Name)
                        .push(" created", Role::Good),
                );
                Ok(out)
            }
            NsCmd::Delete { name } => {
                if matches!(name.as_str(), "default" | "kube-system") {
                    return Err(LabError::msg(format!(
                        "Error from server (Forbidden): namespaces \"{name}\" is forbidden: this namespace may not be deleted"
                    )));
                }
                self.cluster.namespaces().get("", &name)?;
                if crate::controllers::namespace::holds_content(&self.cluster, &name) {
                    // Terminating: the namespace controller deletes the content, then the
                    // namespace once it is empty (`Lab::run_namespace_controller`).
                    let mut ns = self.cluster.namespaces().get("", &name)?.clone();
                    if ns.metadata.deletion_tick().is_none() {
                        ns.metadata.set_deletion_tick(Some(self.clock));
                        self.cluster.namespaces().update(ns)?;
                        let mut ns = self.cluster.namespaces().get("", &name)?.clone();
                        ns.status.phase = "Terminating".into();
                        self.cluster.namespaces().update_status(&ns)?;
                    }
                } else {
                    self.cluster.namespaces().delete("", &name)?;
                }
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(format!("namespace \"{name}\""), Role::Name)
                        .push(" deleted", Role::Good),
                );
                Ok(out)
            }
            NsCmd::List => {
                let mut t = Table::new(&["NAME", "STATUS", "LABELS"]);
                for o in self.cluster.namespaces.values() {
                    t.row([
                        o.name().to_string(),
                        o.status.phase.clone(),
                        o.metadata
                            .labels
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(","),
                    ]);
                }
                Ok(t.render())
            }
        }
    }
}

/// The names of the objects of `table` in namespace `ns` that are not being deleted yet.
fn live_in<K: crate::cluster::Kind>(table: &crate::cluster::Table<K>, ns: &str) -> Vec<String> {
    table
        .iter()
        .filter(|((n, _), o)| n == ns && o.metadata.deletion_tick().is_none())
        .map(|((_, name), _)| name.clone())
        .collect()
}
