//! `v1` Node: kubectl's node printer and describer. `get -o json` adds what kubelet and the
//! attach/detach controller report (`volumesInUse`, `volumesAttached`); the lab does not
//! delete nodes (`fault inject node-down` models losing one).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::meta::rfc1123z;
use crate::cluster::{
    Cluster, NodeSpec, Object, ObjectRef, PodSpec, ResourceList, Table, TableOps,
};
use crate::engine::Lab;
use crate::engine::generic_describe::{
    annotations_lines, labels_lines, multiline_lines, with_events,
};
use crate::engine::views::age;
use crate::render::{Outcome, Role};

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

/// `describe node NAME`: kubectl's describeNode, its lines aligned by the describer's
/// tabwriter. What the lab does not model is left out: the conditions' heartbeat and
/// transition times.
fn describe(lab: &Lab, n: &Object<NodeSpec>) -> Outcome {
    let mut lines: Vec<String> = vec![format!("Name:\t{}", n.name())];
    let roles = node_roles(&n.metadata.labels);
    lines.push(format!(
        "Roles:\t{}",
        if roles.is_empty() {
            "<none>".to_string()
        } else {
            roles.join(",")
        }
    ));
    labels_lines(&mut lines, "Labels", &n.metadata.labels);
    annotations_lines(&mut lines, "Annotations", n.metadata.annotations());
    lines.push(format!(
        "CreationTimestamp:\t{}",
        rfc1123z(Some(n.metadata.creation_tick.whole_secs()))
    ));
    // printNodeTaintsMultiline: sorted by "effect,key" (NoExecute before NoSchedule).
    let mut taints: Vec<&crate::cluster::Taint> = n.spec.taints.iter().collect();
    taints.sort_by(|a, b| (&a.effect, &a.key).cmp(&(&b.effect, &b.key)));
    multiline_lines(
        &mut lines,
        "Taints",
        taints.iter().map(|t| format!("{}:{}", t.key, t.effect)),
    );
    lines.push(format!("Unschedulable:\t{}", n.spec.unschedulable));
    lease_lines(lab, n, &mut lines);
    if !n.status.conditions.is_empty() {
        lines.push("Conditions:".into());
        lines.push("  Type\tStatus\tReason\tMessage".into());
        lines.push("  ----\t------\t------\t-------".into());
        for c in &n.status.conditions {
            lines.push(format!(
                "  {} \t{} \t{} \t{}",
                c.condition_type, c.status, c.reason, c.message
            ));
        }
    }
    lines.push("Addresses:".into());
    for a in &n.status.addresses {
        lines.push(format!("  {}:\t{}", a.address_type, a.address));
    }
    for (title, list) in [
        ("Capacity:", &n.status.capacity),
        ("Allocatable:", &n.status.allocatable),
    ] {
        if !list.is_empty() {
            lines.push(title.into());
            for (k, v) in list.iter() {
                lines.push(format!("  {k}:\t{v}"));
            }
        }
    }
    let info = &n.status.node_info;
    lines.push("System Info:".into());
    for (k, v) in [
        ("Machine ID", info.machine_id_text().as_str()),
        ("System UUID", &info.system_uuid_text()),
        ("Boot ID", &info.boot_id_text()),
        ("Kernel Version", info.kernel_version),
        ("OS Image", info.os_image),
        ("Operating System", info.operating_system),
        ("Architecture", info.architecture),
        ("Container Runtime Version", info.container_runtime_version),
        ("Kubelet Version", info.kubelet_version),
        ("Kube-Proxy Version", info.kube_proxy_version),
    ] {
        lines.push(format!("  {k}:\t{v}"));
    }
    if !n.spec.pod_cidr.is_empty() {
        lines.push(format!("PodCIDR:\t{}", n.spec.pod_cidr));
    }
    if !n.spec.pod_cidrs.is_empty() {
        lines.push(format!("PodCIDRs:\t{}", n.spec.pod_cidrs.join(",")));
    }
    // describeNodeResource: the pods the field selector `spec.nodeName=NAME,
    // status.phase!=Succeeded,status.phase!=Failed` lists.
    let pods: Vec<_> = lab
        .cluster
        .pods_on_node(n.name())
        .filter(|p| p.status.phase != "Failed" && p.status.phase != "Succeeded")
        .collect();
    lines.push(format!("Non-terminated Pods:\t({} in total)", pods.len()));
    lines.push(
        "  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge".into(),
    );
    lines.push(
        "  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---".into(),
    );
    for p in &pods {
        // The lab's containers ask for no cpu or memory.
        lines.push(format!(
            "  {}\t{}\t\t0 (0%)\t0 (0%)\t0 (0%)\t0 (0%)\t{}",
            p.metadata.namespace(),
            p.name(),
            age(lab.clock, p.metadata.creation_tick)
        ));
    }
    allocated_lines(&mut lines, &n.status.allocatable, &pods);
    with_events(lab, lines, &ObjectRef::to(n), n.metadata.uid)
}

/// describeNodeLease: the node's Lease in `kube-node-lease`, which the node's kubelet holds
/// (HolderIdentity its node name; it never sets AcquireTime) and renews
/// ([`crate::kubelet::lease_renew_time`]); kubectl's own line when there is none (a Node no
/// kubelet of the lab runs).
fn lease_lines(lab: &Lab, n: &Object<NodeSpec>, lines: &mut Vec<String>) {
    let name = n.name();
    if !lab.kubelets.contains_key(name) {
        lines.push(format!(
            "Lease:\tFailed to get lease: leases.coordination.k8s.io \"{name}\" not found"
        ));
        return;
    }
    let down_since = lab
        .faults
        .armed
        .iter()
        .filter(|f| f.target == crate::faults::Target::NodeDown && f.node.as_deref() == Some(name))
        .map(|f| f.armed_at)
        .min();
    let renewed = crate::kubelet::lease_renew_time(n.metadata.creation_tick, lab.clock, down_since);
    lines.push("Lease:".into());
    lines.push(format!("  HolderIdentity:\t{name}"));
    lines.push("  AcquireTime:\t<unset>".into());
    lines.push(format!(
        "  RenewTime:\t{}",
        rfc1123z(Some(renewed.whole_secs()))
    ));
}

/// kubectl's `findNodeRoles`: the roles `node-role.kubernetes.io/ROLE` labels give, and a
/// `kubernetes.io/role` label's value, sorted.
fn node_roles(labels: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    let mut roles: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (k, v) in labels {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role.to_string());
            }
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v.clone());
        }
    }
    roles.into_iter().collect()
}

/// kubectl describe node's `Allocated resources:`: requests and limits of the node's
/// non-terminated pods; cpu, memory and ephemeral-storage with their share of allocatable,
/// extended resources as counts.
fn allocated_lines(lines: &mut Vec<String>, allocatable: &ResourceList, pods: &[&Object<PodSpec>]) {
    lines.push("Allocated resources:".into());
    lines.push("  (Total limits may be over 100 percent, i.e., overcommitted.)".into());
    lines.push("  Resource\tRequests\tLimits".into());
    lines.push("  --------\t--------\t------".into());
    // The lab's containers set no cpu, memory or storage requests.
    for r in ["cpu", "memory", "ephemeral-storage"] {
        lines.push(format!("  {r}\t0 (0%)\t0 (0%)"));
    }
    for r in allocatable
        .keys()
        .filter(|k| crate::cluster::is_extended_resource(k))
    {
        let sum = |limits: bool| -> i64 {
            pods.iter()
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
        lines.push(format!("  {r}\t{}\t{}", sum(false), sum(true)));
    }
}
