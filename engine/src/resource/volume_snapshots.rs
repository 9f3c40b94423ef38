//! `snapshot.storage.k8s.io/v1` VolumeSnapshot: the CRD's printer columns, and kubectl's
//! generic describer (the CRD has no describer of its own); `delete vs` is the lab's
//! `snapshot delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, Table, TableOps, VolumeSnapshotSpec};
use crate::command::Command;
use crate::command::grammar::SnapshotCmd;
use crate::engine::Lab;
use crate::engine::views::age;
use crate::manifest::Manifest;
use crate::render::Role;

/// VolumeSnapshots.
pub(crate) struct VolumeSnapshots;

impl Resource for VolumeSnapshots {
    type Spec = VolumeSnapshotSpec;
    const NAMES: Names = Names {
        plural: "volumesnapshots",
        singular: "volumesnapshot",
        short: &["vs"],
        aliases: &["snapshot", "snapshots"],
        listed: "snapshots",
        completes_as: "snapshots",
    };
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "READYTOUSE",
        "SOURCEPVC",
        "SOURCESNAPSHOTCONTENT",
        "RESTORESIZE",
        "SNAPSHOTCLASS",
        "SNAPSHOTCONTENT",
        "CREATIONTIME",
        "AGE",
    ];
    const DESCRIBE: Option<super::Describer<VolumeSnapshotSpec>> =
        Some(crate::engine::generic_describe::describe);
    const DELETE: Delete =
        Delete::Command(|name, ns| Command::Snapshot(SnapshotCmd::Delete { name, ns }));
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::VolumeSnapshot));

    fn objects(c: &Cluster) -> &Table<VolumeSnapshotSpec> {
        &c.snapshots
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, VolumeSnapshotSpec> {
        c.snapshots()
    }

    /// The CRD's `additionalPrinterColumns` (external-snapshotter v8): a pre-provisioned
    /// content's name (`SOURCESNAPSHOTCONTENT`, blank: the lab snapshots claims only) and
    /// when the driver cut the snapshot (`CREATIONTIME`, a date column: its age).
    fn row(lab: &Lab, s: &Object<VolumeSnapshotSpec>, _wide: bool) -> Vec<(String, Role)> {
        let cut = lab
            .cluster
            .snapshot_contents
            .get_named("", &s.status.bound_volume_snapshot_content_name)
            .and_then(|c| c.status.creation_time)
            .map(|nanos| {
                let secs = (nanos / 1_000_000_000 - crate::cluster::meta::EPOCH_UNIX).max(0);
                age(lab.clock, crate::util::time::Millis::secs(secs as u64))
            })
            .unwrap_or_default();
        vec![
            cell(s.name()),
            cell(s.status.ready_to_use.to_string()),
            cell(s.spec.source.persistent_volume_claim_name.clone()),
            cell(String::new()),
            cell(s.status.restore_size.clone()),
            cell(s.spec.volume_snapshot_class_name.clone()),
            cell(s.status.bound_volume_snapshot_content_name.clone()),
            cell(cut),
            cell(age(lab.clock, s.metadata.creation_tick)),
        ]
    }
}
