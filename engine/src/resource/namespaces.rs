//! `v1` Namespace: kubectl's printer; `delete ns` is the lab's `ns delete` (the namespace
//! controller empties it first). kubectl describes namespaces; the lab does not yet.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, NamespaceSpec, Object, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::NsCmd;
use crate::engine::Lab;
use crate::engine::views::age;
use crate::manifest::Manifest;
use crate::render::Role;

/// Namespaces.
pub(crate) struct Namespaces;

impl Resource for Namespaces {
    type Spec = NamespaceSpec;
    const NAMES: Names = Names {
        plural: "namespaces",
        singular: "namespace",
        short: &["ns"],
        aliases: &[],
        listed: "namespaces",
        completes_as: "namespaces",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "STATUS", "AGE"];
    const DELETE: Delete = Delete::Command(|name, _| Command::Ns(NsCmd::Delete { name }));
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::Namespace));
    const LABELS: bool = true;

    fn objects(c: &Cluster) -> &Table<NamespaceSpec> {
        &c.namespaces
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, NamespaceSpec> {
        c.namespaces()
    }

    fn row(lab: &Lab, o: &Object<NamespaceSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(o.name()),
            cell(o.status.phase.clone()),
            cell(age(lab.clock, o.metadata.creation_tick)),
        ]
    }
}
