//! `v1` Namespace: kubectl's printer; `delete ns` is the lab's `ns delete` (the namespace
//! controller empties it first); kubectl's describer.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, NamespaceSpec, Object, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::NsCmd;
use crate::engine::Lab;
use crate::engine::generic_describe::{annotations_lines, labels_lines, push_tabbed};
use crate::engine::views::age;
use crate::manifest::Manifest;
use crate::render::{Outcome, Role};

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
    const DESCRIBE: Option<super::Describer<NamespaceSpec>> = Some(describe);
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

/// kubectl's describeNamespace: name, labels, annotations and phase, then the namespace's
/// ResourceQuotas and LimitRanges, each after a blank line; the lab serves neither kind,
/// so each list is empty, as kubectl says. kubectl's namespace describer looks up no
/// events.
fn describe(_lab: &Lab, ns: &Object<NamespaceSpec>) -> Outcome {
    let mut lines = vec![format!("Name:\t{}", ns.name())];
    labels_lines(&mut lines, "Labels", &ns.metadata.labels);
    annotations_lines(&mut lines, "Annotations", ns.metadata.annotations());
    lines.push(format!("Status:\t{}", ns.status.phase));
    lines.push(String::new());
    lines.push("No resource quota.".into());
    lines.push(String::new());
    lines.push("No LimitRange resource.".into());
    let mut out = Outcome::empty();
    push_tabbed(&mut out, &lines);
    out
}
