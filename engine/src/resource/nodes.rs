//! `v1` Node: kubectl's node printer and describer. `get -o json` adds what kubelet and the
//! attach/detach controller report (`volumesInUse`, `volumesAttached`); the lab does not
//! delete nodes (`fault inject node-down` models losing one).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, NodeSpec, Object, PodSpec, ResourceList, Table, TableOps};
use crate::engine::Lab;
use crate::engine::views::{MapStyle, age, map_field};
use crate::render::{Line, Outcome, Role};

/// Nodes.
pub(crate) struct Nodes;

impl Resource for Nodes {
    type Spec = NodeSpec;
    const NAMES: Names = Names {
        plural: "nodes",
        singular: "node",
        short: &["no"],
        aliases: &[],
        listed: "nodes",
        completes_as: "nodes",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "STATUS", "ROLES", "AGE", "VERSION"];
    /// printers.go's nodeColumnDefinitions: Internal-IP, External-IP, OS-Image,
    /// Kernel-Version and Container-Runtime at priority 1 (no pod CIDR: `describe node`'s
    /// PodCIDR line shows it).
    const WIDE: &'static [&'static str] = &[
        "NAME",
        "STATUS",
        "ROLES",
        "AGE",
        "VERSION",
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ];
    const DESCRIBE: Option<super::Describer<NodeSpec>> = Some(describe);
    const DELETE: Delete = Delete::Refused {
        must_exist: true,
        why: |name| {
            format!(
                "the lab does not delete Node objects; to model losing {name}, type `fault inject node-down --node {name}`"
            )
        },
    };
    const APPLY: Apply = Apply::Refused(Some("add nodes with `node add NAME`"));
    const LABELS: bool = true;

    fn objects(c: &Cluster) -> &Table<NodeSpec> {
        &c.nodes
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, NodeSpec> {
        c.nodes()
    }

    fn row(lab: &Lab, o: &Object<NodeSpec>, wide: bool) -> Vec<(String, Role)> {
        let info = &o.status.node_info;
        let mut row = Vec::with_capacity(if wide { 10 } else { 5 });
        row.extend([
            cell(o.name()),
            cell(crate::engine::nodes::status_text(o)),
            cell("<none>"),
            cell(age(lab.clock, o.metadata.creation_tick)),
            cell(info.kubelet_version),
        ]);
        if wide {
            // printNode: the first InternalIP and ExternalIP address (`<none>` without
            // one; the lab's nodes have no external address), then nodeInfo's osImage,
            // kernelVersion and containerRuntimeVersion, `<unknown>` when empty.
            let known = |v: &'static str| cell(if v.is_empty() { "<unknown>" } else { v });
            row.push(cell(o.status.internal_ip().unwrap_or("<none>")));
            row.push(cell(o.status.external_ip().unwrap_or("<none>")));
            row.push(known(info.os_image));
            row.push(known(info.kernel_version));
            row.push(known(info.container_runtime_version));
        }
        row
    }

    /// Node status with what kubelet and the attach/detach controller report.
    fn json(lab: &Lab, kept: Vec<&Object<NodeSpec>>) -> Vec<(String, String)> {
        if kept.is_empty() {
            return Vec::new();
        }
        let reports = crate::engine::volume_view::node_volumes(&lab.cluster);
        kept.into_iter()
            .map(|o| {
                let mut n = o.clone();
                if let Some(r) = reports.get(n.name()) {
                    r.fill(&mut n.status);
                }
                (n.metadata.name().clone(), super::kubectl_json(&n))
            })
            .collect()
    }
}

/// `describe node NAME`.
fn describe(lab: &Lab, n: &Object<NodeSpec>) -> Outcome {
    let mut out = Outcome::empty();
    // The value column is the tabwriter's: after the longest key printed,
    // `Unschedulable:`, and a space.
    out.line(
        Line::new()
            .push("Name:          ", Role::Header)
            .push(n.name().to_string(), Role::Plain),
    );
    map_field(&mut out, "Labels", 15, &n.metadata.labels, MapStyle::Labels);
    // kubectl prints Taints and Unschedulable for every node, the taints sorted by
    // "effect,key" (`printTaintsMultilineWithIndent`: NoExecute before NoSchedule).
    let mut taints: Vec<&crate::cluster::Taint> = n.spec.taints.iter().collect();
    taints.sort_by(|a, b| (&a.effect, &a.key).cmp(&(&b.effect, &b.key)));
    let taints: Vec<String> = taints
        .iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect();
    if taints.is_empty() {
        out.line(
            Line::new()
                .push("Taints:        ", Role::Header)
                .push("<none>", Role::Plain),
        );
    }
    for (i, t) in taints.into_iter().enumerate() {
        let key = if i == 0 { "Taints:" } else { "" };
        out.line(
            Line::new()
                .push(format!("{key:<15}"), Role::Header)
                .push(t, Role::Plain),
        );
    }
    out.line(
        Line::new()
            .push("Unschedulable: ", Role::Header)
            .push(n.spec.unschedulable.to_string(), Role::Plain),
    );
    conditions_block(&mut out, &n.status.conditions);
    out.line(
        Line::new()
            .push("PodCIDR:       ", Role::Header)
            .push(n.spec.pod_cidr.clone(), Role::Plain),
    );
    out.line(Line::styled("Addresses:", Role::Header));
    // kubectl's tabwriter aligns the addresses on the longest type.
    let w = n
        .status
        .addresses
        .iter()
        .map(|a| a.address_type.len() + 1)
        .max()
        .unwrap_or(0);
    for a in &n.status.addresses {
        let t = format!("{}:", a.address_type);
        out.plain(format!("  {t:<w$}  {}", a.address));
    }
    resource_block(&mut out, "Capacity:", &n.status.capacity);
    resource_block(&mut out, "Allocatable:", &n.status.allocatable);
    let pods: Vec<_> = lab
        .cluster
        .pods_on_node(n.name())
        .filter(|p| p.status.phase != "Failed" && p.status.phase != "Succeeded")
        .collect();
    out.line(Line::styled(
        format!("Non-terminated Pods: ({} in total)", pods.len()),
        Role::Header,
    ));
    for p in &pods {
        out.plain(format!(
            "  {:<12} {:<20} {}",
            p.metadata.namespace(),
            p.name(),
            p.status.pod_ip.map(|ip| ip.to_string()).unwrap_or_default()
        ));
    }
    if !n.status.allocatable.is_empty() {
        allocated_block(&mut out, &n.status.allocatable, &pods);
    }
    out
}

/// kubectl describe node's `Conditions:` table (the lab's clock has no heartbeat or
/// transition times, so those two columns are left out), the columns as its tabwriter
/// aligns them.
fn conditions_block(out: &mut Outcome, conditions: &[crate::cluster::Condition]) {
    if conditions.is_empty() {
        return;
    }
    out.line(Line::styled("Conditions:", Role::Header));
    let rows: Vec<[&str; 4]> = std::iter::once(["Type", "Status", "Reason", "Message"])
        .chain(std::iter::once(["----", "------", "------", "-------"]))
        .chain(
            conditions
                .iter()
                .map(|c| [&*c.condition_type, &*c.status, &*c.reason, &*c.message]),
        )
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for r in &rows {
        out.plain(format!(
            "  {:<w0$}  {:<w1$}  {:<w2$}  {}",
            r[0], r[1], r[2], r[3]
        ));
    }
}

/// kubectl describe node's `Capacity:` / `Allocatable:` block: `  name:  value`, aligned.
fn resource_block(out: &mut Outcome, title: &str, list: &ResourceList) {
    if list.is_empty() {
        return;
    }
    out.line(Line::styled(title, Role::Header));
    let width = list.keys().map(|k| k.len() + 1).max().unwrap_or(0);
    for (k, v) in list {
        out.plain(format!("  {:<width$}  {v}", format!("{k}:")));
    }
}

/// kubectl describe node's `Allocated resources:`: requests and limits of the node's
/// non-terminated pods; cpu, memory and ephemeral-storage with their share of allocatable,
/// extended resources as counts.
fn allocated_block(out: &mut Outcome, allocatable: &ResourceList, pods: &[&Object<PodSpec>]) {
    let active: Vec<_> = pods
        .iter()
        .filter(|p| p.status.phase != "Failed" && p.status.phase != "Succeeded")
        .collect();
    out.line(Line::styled("Allocated resources:", Role::Header));
    out.plain("  (Total limits may be over 100 percent, i.e., overcommitted.)");
    let mut rows: Vec<(String, String, String)> = Vec::new();
    // The lab's containers set no cpu, memory or storage requests.
    for r in ["cpu", "memory", "ephemeral-storage"] {
        rows.push((r.to_string(), "0 (0%)".into(), "0 (0%)".into()));
    }
    for r in allocatable
        .keys()
        .filter(|k| crate::cluster::is_extended_resource(k))
    {
        let sum = |limits: bool| -> i64 {
            active
                .iter()
                .flat_map(|p| p.spec.containers.iter())
                .filter_map(|c| {
                    let l = if limits {
                        &c.resources().limits
                    } else {
                        &c.resources().requests
                    };
                    l.get(r).and_then(|q| q.parse::<i64>().ok())
                })
                .sum()
        };
        rows.push((r.clone(), sum(false).to_string(), sum(true).to_string()));
    }
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(8);
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(8);
    out.plain(format!(
        "  {:<w0$}  {:<w1$}  Limits",
        "Resource", "Requests"
    ));
    out.plain(format!(
        "  {:<w0$}  {:<w1$}  ------",
        "--------", "--------"
    ));
    for (r, req, lim) in rows {
        out.plain(format!("  {r:<w0$}  {req:<w1$}  {lim}"));
    }
}
