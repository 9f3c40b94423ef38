//! `storage.k8s.io/v1` StorageClass: kubectl's printer, the default class marked
//! `(default)`; `delete sc` is the lab's `sc delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, StorageClassSpec, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::ScCmd;
use crate::engine::Lab;
use crate::engine::views::age;
use crate::manifest::Manifest;
use crate::render::Role;
use crate::storage::DEFAULT_CLASS;

/// StorageClasses.
pub(crate) struct StorageClasses;

impl Resource for StorageClasses {
    type Spec = StorageClassSpec;
    const NAMES: Names = Names {
        plural: "storageclasses",
        singular: "storageclass",
        short: &["sc"],
        aliases: &[],
        listed: "sc",
        completes_as: "sc",
    };
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ];
    const DELETE: Delete = Delete::Command(|name, _| Command::Sc(ScCmd::Delete { name }));
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::StorageClass));

    fn objects(c: &Cluster) -> &Table<StorageClassSpec> {
        &c.storage_classes
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, StorageClassSpec> {
        c.storage_classes()
    }

    fn row(lab: &Lab, sc: &Object<StorageClassSpec>, _wide: bool) -> Vec<(String, Role)> {
        let name = if sc
            .metadata
            .annotations()
            .get(DEFAULT_CLASS)
            .is_some_and(|v| v == "true")
        {
            format!("{} (default)", sc.name())
        } else {
            sc.name().to_string()
        };
        vec![
            cell(name),
            cell(sc.spec.provisioner.clone()),
            cell(sc.spec.reclaim_policy.clone()),
            cell(sc.spec.volume_binding_mode.clone()),
            cell(sc.spec.allow_volume_expansion.to_string()),
            cell(age(lab.clock, sc.metadata.creation_tick)),
        ]
    }
}
