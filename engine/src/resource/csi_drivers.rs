//! `storage.k8s.io/v1` CSIDriver: kubectl's printer. The driver's install owns them.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, CsiDriverSpec, Kind, Object, Table, TableOps};
use crate::engine::Lab;
use crate::engine::views::age;
use crate::render::Role;

/// CSIDrivers.
pub(crate) struct CsiDrivers;

impl Resource for CsiDrivers {
    type Spec = CsiDriverSpec;
    const NAMES: Names = Names {
        plural: "csidrivers",
        singular: "csidriver",
        short: &[],
        aliases: &[],
        listed: "csidrivers",
        completes_as: "csidrivers",
    };
    /// printers.go's csiDriverColumnDefinitions.
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
        "AGE",
    ];
    /// kubectl has no describer of its own for the kind: its generic one.
    const DESCRIBE: Option<super::Describer<CsiDriverSpec>> =
        Some(crate::engine::generic_describe::describe);
    const DELETE: Delete = Delete::Refused {
        must_exist: false,
        why: |_| {
            format!(
                "the lab does not delete {}: the kubelet's plugin registration and the driver's install own them",
                CsiDriverSpec::RESOURCE
            )
        },
    };
    const APPLY: Apply = Apply::Refused(Some(
        "the lab's driver hostpath.csi.lab is registered already",
    ));

    fn objects(c: &Cluster) -> &Table<CsiDriverSpec> {
        &c.csi_drivers
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, CsiDriverSpec> {
        c.csi_drivers()
    }

    fn row(lab: &Lab, d: &Object<CsiDriverSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(d.name()),
            cell(d.spec.attach_required.to_string()),
            cell(d.spec.pod_info_on_mount.to_string()),
            cell(d.spec.storage_capacity.to_string()),
            // printCSIDriver: the audiences of `tokenRequests`, `<unset>` when nil (the
            // lab's driver requests no tokens).
            cell("<unset>"),
            cell(d.spec.requires_republish.to_string()),
            // `<none>` when the driver lists no modes.
            cell(if d.spec.volume_lifecycle_modes.is_empty() {
                "<none>".to_string()
            } else {
                d.spec.volume_lifecycle_modes.join(",")
            }),
            cell(age(lab.clock, d.metadata.creation_tick)),
        ]
    }
}
