//! `snapshot.storage.k8s.io/v1` VolumeSnapshotContent: the CRD's printer columns and
//! kubectl's generic describer. csi-snapshotter makes them and snapshot-controller deletes
//! them with their VolumeSnapshot.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, Table, TableOps, VolumeSnapshotContentSpec};
use crate::engine::Lab;
use crate::engine::views::age;
use crate::render::Role;

/// VolumeSnapshotContents.
pub(crate) struct VolumeSnapshotContents;

impl Resource for VolumeSnapshotContents {
    type Spec = VolumeSnapshotContentSpec;
    const NAMES: Names = Names {
        plural: "volumesnapshotcontents",
        singular: "volumesnapshotcontent",
        short: &["vsc"],
        aliases: &[],
        listed: "volumesnapshotcontents",
        completes_as: "vsc",
    };
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "READYTOUSE",
        "RESTORESIZE",
        "DELETIONPOLICY",
        "DRIVER",
        "VOLUMESNAPSHOTCLASS",
        "VOLUMESNAPSHOT",
        "VOLUMESNAPSHOTNAMESPACE",
        "AGE",
    ];
    const DESCRIBE: Option<super::Describer<VolumeSnapshotContentSpec>> =
        Some(crate::engine::generic_describe::describe);
    const DELETE: Delete = Delete::Refused {
        must_exist: false,
        why: |_| {
            "snapshot-controller deletes a VolumeSnapshotContent with its VolumeSnapshot (deletionPolicy Delete): delete the snapshot (`delete vs NAME`)".to_string()
        },
    };
    const APPLY: Apply = Apply::Refused(Some(
        "csi-snapshotter makes them for each VolumeSnapshot; watch them with `get vsc`",
    ));

    fn objects(c: &Cluster) -> &Table<VolumeSnapshotContentSpec> {
        &c.snapshot_contents
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, VolumeSnapshotContentSpec> {
        c.snapshot_contents()
    }

    fn row(lab: &Lab, c: &Object<VolumeSnapshotContentSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(c.name()),
            cell(c.status.ready_to_use.to_string()),
            cell(
                c.status
                    .restore_size
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
            ),
            cell(c.spec.deletion_policy.clone()),
            cell(c.spec.driver.clone()),
            cell(c.spec.volume_snapshot_class_name.clone()),
            cell(c.spec.volume_snapshot_ref.name.clone()),
            cell(c.spec.volume_snapshot_ref.namespace.clone()),
            cell(age(lab.clock, c.metadata.creation_tick)),
        ]
    }
}
