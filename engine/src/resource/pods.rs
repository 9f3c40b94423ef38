//! `v1` Pod: kubectl's pod printer and describer, with what the lab adds from the node
//! (the sandbox `crictl inspectp` shows, the devices kubelet's device manager handed out).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, ObjectRef, PodSpec, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::PodCmd;
use crate::engine::Lab;
use crate::engine::generic_describe::{multiline_lines, with_events};
use crate::engine::pods::pod_status_text;
use crate::engine::views::{MapStyle, age, human_duration_since, map_field, qos_class};
use crate::manifest::Manifest;
use crate::render::{Line, Outcome, Role};

/// Pods.
pub(crate) struct Pods;

impl Resource for Pods {
    type Spec = PodSpec;
    const NAMES: Names = Names {
        plural: "pods",
        singular: "pod",
        short: &["po"],
        aliases: &[],
        listed: "pods",
        completes_as: "pods",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
    /// printers.go's podColumnDefinitions: IP, Node, Nominated Node and Readiness Gates
    /// at priority 1.
    const WIDE: &'static [&'static str] = &[
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ];
    const DESCRIBE: Option<super::Describer<PodSpec>> = Some(describe);
    const DELETE: Delete = Delete::Command(|name, ns| {
        Command::Pod(PodCmd::Delete {
            name,
            ns,
            step: false,
        })
    });
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::Pod));
    const LABELS: bool = true;

    fn objects(c: &Cluster) -> &Table<PodSpec> {
        &c.pods
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, PodSpec> {
        c.pods()
    }

    fn row(lab: &Lab, p: &Object<PodSpec>, wide: bool) -> Vec<(String, Role)> {
        // printPod's READY: the containers whose status is ready and running, of the
        // spec's containers (a Terminating pod's still count until kubelet stops them).
        let total = p.spec.containers.len();
        let running = matches!(container_state(p), Some(ContainerState::Running));
        let ready = if running && containers_ready(p) {
            total
        } else {
            0
        };
        let ready = format!("{ready}/{total}");
        let mut row = Vec::with_capacity(if wide { 9 } else { 5 });
        row.extend([
            cell(p.name()),
            cell(ready),
            cell(pod_status_text(p)),
            cell("0"),
            cell(age(lab.clock, p.metadata.creation_tick)),
        ]);
        if wide {
            row.push(match p.status.pod_ip {
                Some(ip) => cell(ip.to_string()),
                None => cell("<none>"),
            });
            // kubectl's printPod: `<none>` until the pod is bound.
            row.push(cell(if p.spec.node_name.is_empty() {
                "<none>"
            } else {
                p.spec.node_name.as_str()
            }));
            // `status.nominatedNodeName` (set by scheduler preemption, which the lab's
            // scheduler does not do) and `spec.readinessGates` (the lab's pods have none):
            // printPod's `<none>` for each.
            row.push(cell("<none>"));
            row.push(cell("<none>"));
        }
        row
    }

    /// The pod as the API server serves it: its defaults and kubelet's status added.
    fn json(lab: &Lab, kept: Vec<&Object<PodSpec>>) -> Vec<(String, String)> {
        kept.into_iter()
            .map(|p| {
                let t = super::pod_runtime::kubelet_times(p);
                (p.name().to_string(), super::pod_json::served(lab, p, t))
            })
            .collect()
    }
}

/// `describe pod NAME`.
fn describe(lab: &Lab, p: &Object<PodSpec>) -> Outcome {
    let mut out = Outcome::empty();
    // kubectl's `spec.nodeName + "/" + status.hostIP`: empty until the kubelet
    // writes a status (a pod it rejected at admission has none).
    let node_ip = p
        .status
        .host_ip
        .map(|ip| ip.to_string())
        .unwrap_or_default();
    // kubectl describe prints the phase (ContainerCreating is the container's waiting
    // reason, below), or, for a pod being deleted that has not finished, how long since its
    // deletionTimestamp and its deletionGracePeriodSeconds. The timestamp is the end of the
    // grace period (`crate::cluster::pod_deletion`), so until a second before it kubectl's
    // HumanDuration of the negative time since reads `<invalid>`.
    let finished = matches!(&*p.status.phase, "Failed" | "Succeeded");
    let terminating = p.metadata.deletion_tick().filter(|_| !finished);
    // One tabwriter column: as wide as its widest key, `Service Account:` or `Termination
    // Grace Period:`, and two spaces.
    let width = if terminating.is_some() {
        "Termination Grace Period:".len() + 2
    } else {
        "Service Account:".len() + 2
    };
    let times = super::pod_runtime::kubelet_times(p);
    let kv = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<width$}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    kv(&mut out, "Name", p.name().into());
    kv(&mut out, "Namespace", p.metadata.namespace().clone());
    // The Priority admission plugin's `spec.priority` (no priority class: 0) and the
    // ServiceAccount plugin's `serviceAccountName`, as `get -o yaml` serves them.
    kv(&mut out, "Priority", "0".into());
    kv(&mut out, "Service Account", "default".into());
    kv(
        &mut out,
        "Node",
        if p.spec.node_name.is_empty() {
            "<none>".to_string() // not scheduled yet
        } else {
            format!("{}/{node_ip}", p.spec.node_name)
        },
    );
    // `status.startTime`, once kubelet has written a status.
    if let Some(t) = times.filter(|_| !p.status.phase.is_empty()) {
        kv(
            &mut out,
            "Start Time",
            crate::cluster::meta::rfc1123z(Some(t.start_time.whole_secs())),
        );
    }
    map_field(
        &mut out,
        "Labels",
        width,
        &p.metadata.labels,
        MapStyle::Labels,
    );
    map_field(
        &mut out,
        "Annotations",
        width,
        p.metadata.annotations(),
        MapStyle::Annotations,
    );
    match terminating {
        Some(deletion) => {
            kv(
                &mut out,
                "Status",
                format!(
                    "Terminating (lasts {})",
                    human_duration_since(lab.clock, deletion)
                ),
            );
            let grace = crate::cluster::pod_deletion::deletion_grace_period_seconds(p);
            kv(
                &mut out,
                "Termination Grace Period",
                format!("{}s", grace.unwrap_or_default()),
            );
        }
        None if p.status.phase.is_empty() => kv(&mut out, "Status", "Pending".to_string()),
        None => kv(&mut out, "Status", p.status.phase.to_string()),
    }
    if p.status.phase == "Failed" {
        kv(&mut out, "Reason", p.status.reason().to_string());
        kv(&mut out, "Message", p.status.message().to_string());
    }
    kv(
        &mut out,
        "IP",
        p.status.pod_ip.map(|ip| ip.to_string()).unwrap_or_default(),
    );
    // kubectl's describePodIPs: each entry of `status.podIPs` (podIP, then a dual-stack
    // pod's address of the other family).
    match p.status.pod_ip {
        Some(ip) => {
            out.line(Line::new().push("IPs:", Role::Header));
            for ip in std::iter::once(ip).chain(p.status.second_pod_ip()) {
                out.line(
                    Line::new()
                        .push("  IP:  ", Role::Header)
                        .push(ip.to_string(), Role::Plain),
                );
            }
        }
        None => kv(&mut out, "IPs", "<none>".into()),
    }
    if let Some(sb) = lab
        .nodes
        .get(&p.spec.node_name)
        .and_then(|n| n.sandboxes.get(&p.key()))
    {
        // Not in kubectl's output: what `crictl inspectp` shows on the node.
        kv(&mut out, "Sandbox", sb.id().to_string());
        kv(&mut out, "Netns", sb.netns().to_string());
        out.line(Line::styled(
            format!(
                "{:width$}↑ the lab's additions (crictl inspectp on the node)",
                ""
            ),
            Role::Dim,
        ));
    }
    crate::engine::multus_view::network_lines(&mut out, p);
    // From here on the lines are written as kubectl's describePod writes them, cells
    // separated by tabs, and aligned by its tabwriter.
    let mut lines: Vec<String> = vec!["Containers:".into()];
    let token_volume = super::pod_runtime::token_volume_name(p.metadata.uid);
    for c in p.spec.containers.iter() {
        container_lines(&mut lines, lab, p, c, times, &token_volume);
    }
    // kubectl prints the section only when the pod has conditions (a pod that
    // kubelet rejected at admission has none); a space ends each cell of a row.
    if !p.status.conditions.is_empty() {
        lines.push("Conditions:".into());
        lines.push("  Type\tStatus".into());
    }
    for c in p.status.conditions.iter() {
        lines.push(format!("  {} \t{} ", c.condition_type, c.status));
    }
    // describeVolumes: the pod's claims, then the ServiceAccount admission plugin's token
    // volume (`printProjectedVolumeSource` of its three sources), which every pod has.
    lines.push("Volumes:".into());
    for v in p.spec.volumes() {
        lines.push(format!("  {}:", v.name));
        lines.push("    Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)".into());
        lines.push(format!(
            "    ClaimName:\t{}",
            v.persistent_volume_claim.claim_name
        ));
        lines.push(format!(
            "    ReadOnly:\t{}",
            v.persistent_volume_claim.read_only
        ));
    }
    lines.push(format!("  {token_volume}:"));
    lines.push(
        "    Type:\tProjected (a volume that contains injected data from multiple sources)".into(),
    );
    lines.push(format!(
        "    TokenExpirationSeconds:\t{}",
        super::pod_runtime::TOKEN_EXPIRATION_SECONDS
    ));
    lines.push(format!(
        "    ConfigMapName:\t{}",
        super::pod_runtime::ROOT_CA_CONFIG_MAP
    ));
    // `%v` of the source's unset `optional` (a nil *bool).
    lines.push("    ConfigMapOptional:\t<nil>".into());
    lines.push("    DownwardAPI:\ttrue".into());
    lines.push(format!("QoS Class:\t{}", qos_class(&p.spec)));
    multiline_lines(
        &mut lines,
        "Node-Selectors",
        p.spec
            .node_selector()
            .iter()
            .map(|(k, v)| format!("{k}={v}")),
    );
    multiline_lines(
        &mut lines,
        "Tolerations",
        tolerations(p.spec.tolerations.list()),
    );
    out.extend(with_events(lab, lines, &ObjectRef::to(p), p.metadata.uid));
    out
}

/// kubectl's describeContainers for one container: describeContainerBasicInfo (name, the
/// status's container ID, image, the status's image ID, ports and host ports, `<none>`
/// without any), describeContainerState (when the pod has a container status: kubelet
/// writes one once it has the pod's sandbox), describeContainerResource,
/// describeContainerEnvVars (the lab's containers set no environment) and
/// describeContainerVolumes (the container's mounts and the ServiceAccount plugin's token
/// mount, then its block devices); then the lab's lines from the
/// kubelet's device manager. The lab's containers have no command or probes. A running
/// container's image ID is left out: the lab has no image digests.
fn container_lines(
    lines: &mut Vec<String>,
    lab: &Lab,
    p: &Object<PodSpec>,
    c: &crate::cluster::Container,
    times: Option<super::pod_runtime::KubeletTimes>,
    token_volume: &str,
) {
    let state = container_state(p);
    lines.push(format!("  {}:", c.name));
    match &state {
        Some(ContainerState::Running) => {
            let id = super::pod_runtime::container_id(lab, p, &c.name);
            if let Some(id) = id {
                lines.push(format!("    Container ID:\t{id}"));
            }
            lines.push(format!("    Image:\t{}", c.image));
        }
        // A waiting container's status has neither yet (kubectl prints them empty).
        Some(ContainerState::Waiting(_)) => {
            lines.push("    Container ID:\t".into());
            lines.push(format!("    Image:\t{}", c.image));
            lines.push("    Image ID:\t".into());
        }
        None => lines.push(format!("    Image:\t{}", c.image)),
    }
    let ports = |f: fn(&crate::cluster::ContainerPort) -> u16| {
        c.ports
            .iter()
            .map(|port| format!("{}/{}", f(port), port.protocol))
            .collect::<Vec<_>>()
    };
    for (one, many, list) in [
        ("Port", "Ports", ports(|p| p.container_port)),
        ("Host Port", "Host Ports", ports(|p| p.host_port)),
    ] {
        match list.len() {
            0 => lines.push(format!("    {one}:\t<none>")),
            1 => lines.push(format!("    {one}:\t{}", list[0])),
            _ => lines.push(format!("    {many}:\t{}", list.join(", "))),
        }
    }
    if let Some(state) = state {
        match state {
            ContainerState::Running => {
                lines.push("    State:\tRunning".into());
                if let Some(at) = times.and_then(|t| t.started_at) {
                    lines.push(format!(
                        "      Started:\t{}",
                        crate::cluster::meta::rfc1123z(Some(at.whole_secs()))
                    ));
                }
            }
            ContainerState::Waiting(reason) => {
                lines.push("    State:\tWaiting".into());
                lines.push(format!("      Reason:\t{reason}"));
            }
        }
        let ready = containers_ready(p);
        lines.push(format!(
            "    Ready:\t{}",
            if ready { "True" } else { "False" }
        ));
        // The lab's kubelet never restarts a container (`get pods`' RESTARTS is 0).
        lines.push("    Restart Count:\t0".into());
    }
    for (title, list) in [
        ("    Limits:", &c.resources().limits),
        ("    Requests:", &c.resources().requests),
    ] {
        if !list.is_empty() {
            lines.push(title.into());
            for (k, v) in list {
                lines.push(format!("      {k}:\t{v}"));
            }
        }
    }
    lines.push("    Environment:\t<none>".into());
    // describeContainerVolumes: the mounts sorted by path (the token's among them), then
    // the block devices sorted by path.
    lines.push("    Mounts:".into());
    let token = crate::cluster::VolumeMount {
        name: token_volume.to_string(),
        mount_path: super::pod_runtime::TOKEN_MOUNT_PATH.to_string(),
        read_only: true,
    };
    let mut mounts: Vec<&crate::cluster::VolumeMount> =
        c.volume_mounts().iter().chain([&token]).collect();
    mounts.sort_by(|a, b| a.mount_path.cmp(&b.mount_path));
    for m in mounts {
        let flag = if m.read_only { "ro" } else { "rw" };
        lines.push(format!("      {} from {} ({flag})", m.mount_path, m.name));
    }
    if !c.volume_devices().is_empty() {
        lines.push("    Devices:".into());
        let mut devices: Vec<_> = c.volume_devices().iter().collect();
        devices.sort_by(|a, b| a.device_path.cmp(&b.device_path));
        for d in devices {
            lines.push(format!("      {} from {}", d.device_path, d.name));
        }
    }
    let held = lab
        .kubelets
        .get(&p.spec.node_name)
        .and_then(|k| {
            k.devices
                .allocated
                .get(&(p.metadata.namespace().clone(), p.name().to_string()))
        })
        .and_then(|a| a.containers.get(&*c.name));
    if let Some(held) = held {
        // Not in kubectl's output, and not aligned with it: what the device manager did.
        lines.push("    Devices (kubelet device manager):".into());
        for (r, d) in held {
            lines.push(format!("      {r}:  {}", d.ids.join(",")));
        }
        lines.push("    Environment (from the device plugin's Allocate):".into());
        for d in held.values() {
            for (k, v) in &d.envs {
                lines.push(format!("      {k}:  {v}"));
            }
        }
    }
}

/// Whether the pod's containers are ready (its ContainersReady condition: kubelet writes
/// each container's `ready` with it).
pub(super) fn containers_ready(p: &Object<PodSpec>) -> bool {
    p.status
        .conditions
        .iter()
        .any(|c| c.condition_type == "ContainersReady" && c.status == "True")
}

/// A container's state in its status, as kubelet writes it for the lab's pods.
pub(super) enum ContainerState {
    /// Running.
    Running,
    /// Waiting, for this reason (`ContainerCreating`).
    Waiting(String),
}

/// The state of the pod's containers, when the pod has container statuses: kubelet writes
/// them with its first status (Waiting in ContainerCreating while the sandbox is made,
/// Running once it runs); an unscheduled pod, or one kubelet rejected, has none.
pub(super) fn container_state(p: &Object<PodSpec>) -> Option<ContainerState> {
    match (&*p.status.phase, p.status.reason()) {
        ("Running", _) => Some(ContainerState::Running),
        ("Pending", "ContainerCreating") => {
            Some(ContainerState::Waiting("ContainerCreating".into()))
        }
        _ => None,
    }
}

/// kubectl's `printTolerationsMultiline`: one a line, sorted by key. The lab's tolerations
/// all have a key, an effect, `Exists` and a time, so each reads
/// `KEY:EFFECT op=Exists for Ns`.
fn tolerations(tolerations: &[crate::cluster::Toleration]) -> Vec<String> {
    let mut sorted = tolerations.to_vec();
    sorted.sort_by_key(|t| t.key);
    sorted
        .iter()
        .map(|t| {
            format!(
                "{}:{} op={} for {}s",
                t.key, t.effect, t.operator, t.toleration_seconds
            )
        })
        .collect()
}
