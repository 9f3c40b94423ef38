//! `storage.k8s.io/v1` CSINode: kubectl's printer. node-driver-registrar (through the
//! kubelet's plugin registration) owns them.

use super::{Delete, Names, Resource, cell};
use crate::cluster::meta::rfc1123z;
use crate::cluster::{Cluster, CsiNodeSpec, Kind, Object, ObjectRef, Table, TableOps};
use crate::engine::Lab;
use crate::engine::generic_describe::{annotations_lines, labels_lines, with_events};
use crate::engine::views::age;
use crate::render::{Outcome, Role};

/// CSINodes.
pub(crate) struct CsiNodes;

impl Resource for CsiNodes {
    type Spec = CsiNodeSpec;
    const NAMES: Names = Names {
        plural: "csinodes",
        singular: "csinode",
        short: &[],
        aliases: &[],
        listed: "csinodes",
        completes_as: "csinodes",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "DRIVERS", "AGE"];
    const DESCRIBE: Option<super::Describer<CsiNodeSpec>> = Some(describe);
    const DELETE: Delete = Delete::Refused {
        must_exist: false,
        why: |_| {
            format!(
                "the lab does not delete {}: the kubelet's plugin registration and the driver's install own them",
                CsiNodeSpec::RESOURCE
            )
        },
    };

    fn objects(c: &Cluster) -> &Table<CsiNodeSpec> {
        &c.csi_nodes
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, CsiNodeSpec> {
        c.csi_nodes()
    }

    fn row(lab: &Lab, c: &Object<CsiNodeSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(c.name()),
            cell(c.spec.drivers.len().to_string()),
            cell(age(lab.clock, c.metadata.creation_tick)),
        ]
    }
}

/// kubectl's describeCSINode: each registered driver with its node ID, its attach limit
/// (`Allocatables:`) when it reports one, and its topology keys (Go's `%s` of a string
/// slice: `[a b]`).
fn describe(lab: &Lab, c: &Object<CsiNodeSpec>) -> Outcome {
    let mut lines = vec![format!("Name:\t{}", c.name())];
    labels_lines(&mut lines, "Labels", &c.metadata.labels);
    annotations_lines(&mut lines, "Annotations", c.metadata.annotations());
    lines.push(format!(
        "CreationTimestamp:\t{}",
        rfc1123z(Some(c.metadata.creation_tick.whole_secs()))
    ));
    lines.push("Spec:".into());
    lines.push("  Drivers:".into());
    for d in &c.spec.drivers {
        lines.push(format!("    {}:", d.name));
        lines.push(format!("      Node ID:\t{}", d.node_id));
        if let Some(a) = d.allocatable {
            lines.push("      Allocatables:".into());
            lines.push(format!("        Count:\t{}", a.count));
        }
        lines.push(format!(
            "      Topology Keys:\t[{}]",
            d.topology_keys.join(" ")
        ));
    }
    with_events(lab, lines, &ObjectRef::to(c), c.metadata.uid)
}
