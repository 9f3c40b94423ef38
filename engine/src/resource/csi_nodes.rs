//! `storage.k8s.io/v1` CSINode: kubectl's printer. node-driver-registrar (through the
//! kubelet's plugin registration) owns them.

use super::{Delete, Names, Resource, cell};
use crate::cluster::{Cluster, CsiNodeSpec, Kind, Object, Table, TableOps};
use crate::engine::Lab;
use crate::engine::views::age;
use crate::render::Role;

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
