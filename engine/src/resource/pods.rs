//! `v1` Pod: kubectl's pod printer and describer, with what the lab adds from the node
//! (the sandbox `crictl inspectp` shows, the devices kubelet's device manager handed out).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, ObjectRef, PodSpec, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::PodCmd;
use crate::engine::Lab;
use crate::engine::pods::pod_status_text;
use crate::engine::views::{MapStyle, age, map_field, qos_class};
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
        let ready = if p.status.phase == "Running" {
            "1/1"
        } else {
            "0/1"
        };
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
    let kv = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<14}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    kv(&mut out, "Name", p.name().into());
    kv(&mut out, "Namespace", p.metadata.namespace().clone());
    kv(
        &mut out,
        "Node",
        if p.spec.node_name.is_empty() {
            "<none>".to_string() // not scheduled yet
        } else {
            format!("{}/{node_ip}", p.spec.node_name)
        },
    );
    map_field(&mut out, "Labels", 14, &p.metadata.labels, MapStyle::Labels);
    map_field(
        &mut out,
        "Annotations",
        14,
        p.metadata.annotations(),
        MapStyle::Annotations,
    );
    // kubectl describe prints the phase (ContainerCreating is the container's
    // waiting reason, below), or Terminating for a pod being deleted.
    let column = pod_status_text(p);
    let status = if p.metadata.deletion_tick().is_some() {
        column.clone()
    } else if p.status.phase.is_empty() {
        "Pending".to_string()
    } else {
        p.status.phase.to_string()
    };
    kv(&mut out, "Status", status);
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
            "              ↑ the lab's additions (crictl inspectp on the node)",
            Role::Dim,
        ));
    }
    crate::engine::multus_view::network_lines(&mut out, p);
    out.line(Line::styled("Containers:", Role::Header));
    for c in p.spec.containers.iter() {
        out.plain(format!("  {}:", c.name));
        out.plain(format!("    Image:  {}", c.image));
        match column.as_str() {
            "Running" => out.plain("    State:  Running"),
            "ContainerCreating" => {
                out.plain("    State:  Waiting");
                out.plain("      Reason:  ContainerCreating");
            }
            _ => {}
        }
        for port in &c.ports {
            out.plain(format!(
                "    Port:   {}/{} (host port {})",
                port.container_port, port.protocol, port.host_port
            ));
        }
        for (title, list) in [
            ("    Limits:", &c.resources().limits),
            ("    Requests:", &c.resources().requests),
        ] {
            if !list.is_empty() {
                out.plain(title);
                for (k, v) in list {
                    out.plain(format!("      {k}:  {v}"));
                }
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
            out.plain("    Devices (kubelet device manager):");
            for (r, d) in held {
                out.plain(format!("      {r}:  {}", d.ids.join(",")));
            }
            out.plain("    Environment (from the device plugin's Allocate):");
            for d in held.values() {
                for (k, v) in &d.envs {
                    out.plain(format!("      {k}:  {v}"));
                }
            }
        }
    }
    // kubectl prints the section only when the pod has conditions (a pod that
    // kubelet rejected at admission has none).
    if !p.status.conditions.is_empty() {
        out.line(Line::styled("Conditions:", Role::Header));
        out.plain("  Type                        Status");
    }
    for c in p.status.conditions.iter() {
        out.plain(format!("  {:<27} {}", c.condition_type, c.status));
    }
    // describePodVolumes: only claims are modelled (no service-account token
    // volume, which a real pod also has).
    if p.spec.volumes().is_empty() {
        kv(&mut out, "Volumes", "<none>".into());
    } else {
        out.line(Line::styled("Volumes:", Role::Header));
        for v in p.spec.volumes() {
            out.plain(format!("  {}:", v.name));
            out.plain("    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)");
            out.plain(format!(
                "    ClaimName:  {}",
                v.persistent_volume_claim.claim_name
            ));
            out.plain(format!(
                "    ReadOnly:   {}",
                v.persistent_volume_claim.read_only
            ));
        }
    }
    let wide = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<17}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    wide(&mut out, "QoS Class", qos_class(&p.spec).into());
    wide(
        &mut out,
        "Node-Selectors",
        if p.spec.node_selector().is_empty() {
            "<none>".into()
        } else {
            p.spec
                .node_selector()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n                 ")
        },
    );
    wide(
        &mut out,
        "Tolerations",
        tolerations_text(p.spec.tolerations.list()),
    );
    lab.events_for(&mut out, &ObjectRef::to(p), p.metadata.uid, 14);
    out
}

/// kubectl's `printTolerationsMultiline`: one a line, sorted by key. The lab's tolerations
/// all have a key, an effect, `Exists` and a time, so each reads
/// `KEY:EFFECT op=Exists for Ns`.
fn tolerations_text(tolerations: &[crate::cluster::Toleration]) -> String {
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
        .collect::<Vec<_>>()
        .join("\n                 ")
}
