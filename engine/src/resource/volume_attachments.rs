//! `storage.k8s.io/v1` VolumeAttachment: kubectl's printer. The attach/detach controller
//! makes and deletes them; neither `apply -f` nor `delete` does.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, Table, TableOps, VaSpec};
use crate::engine::Lab;
use crate::engine::views::age;
use crate::render::Role;

/// VolumeAttachments.
pub(crate) struct VolumeAttachments;

impl Resource for VolumeAttachments {
    type Spec = VaSpec;
    const NAMES: Names = Names {
        plural: "volumeattachments",
        singular: "volumeattachment",
        short: &[],
        aliases: &["va"],
        listed: "va",
        completes_as: "va",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"];
    /// kubectl has no describer of its own for the kind: its generic one.
    const DESCRIBE: Option<super::Describer<VaSpec>> =
        Some(crate::engine::generic_describe::describe);
    const DELETE: Delete = Delete::Refused {
        must_exist: false,
        why: |_| {
            "the attach/detach controller deletes a VolumeAttachment when no pod on its node uses the volume any more: delete the pod (`delete pod NAME`)".to_string()
        },
    };
    const APPLY: Apply = Apply::Refused(Some(
        "the attach/detach controller makes them when a pod on a node uses a claim; watch them with `get va`",
    ));

    fn objects(c: &Cluster) -> &Table<VaSpec> {
        &c.volume_attachments
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, VaSpec> {
        c.volume_attachments()
    }

    fn row(lab: &Lab, va: &Object<VaSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(va.name()),
            cell(va.spec.attacher.clone()),
            cell(va.spec.source.persistent_volume_name.clone()),
            cell(va.spec.node_name.clone()),
            cell(va.status.attached.to_string()),
            cell(age(lab.clock, va.metadata.creation_tick)),
        ]
    }
}
