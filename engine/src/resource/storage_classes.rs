//! `storage.k8s.io/v1` StorageClass: kubectl's printer, the default class marked
//! `(default)`; `delete sc` is the lab's `sc delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, ObjectRef, StorageClassSpec, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::ScCmd;
use crate::engine::Lab;
use crate::engine::generic_describe::{format_labels, with_events};
use crate::engine::views::age;
use crate::manifest::Manifest;
use crate::render::{Outcome, Role};
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
    const DESCRIBE: Option<super::Describer<StorageClassSpec>> = Some(describe);
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

/// kubectl's describeStorageClass. The lab's classes have no mount options; a class that
/// does not allow expansion leaves `allowVolumeExpansion` unset (`<unset>`), and one
/// without allowed topologies leaves the field out (no `AllowedTopologies:` line).
fn describe(lab: &Lab, sc: &Object<StorageClassSpec>) -> Outcome {
    let annotations = sc.metadata.annotations();
    // storageutil.IsDefaultAnnotationText: the GA annotation, or the beta one.
    let default = [
        DEFAULT_CLASS,
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|a| annotations.get(*a).is_some_and(|v| v == "true"));
    let mut lines = vec![
        format!("Name:\t{}", sc.name()),
        format!("IsDefaultClass:\t{}", if default { "Yes" } else { "No" }),
        format!("Annotations:\t{}", format_labels(annotations)),
        format!("Provisioner:\t{}", sc.spec.provisioner),
        format!("Parameters:\t{}", format_labels(&sc.spec.parameters)),
        format!(
            "AllowVolumeExpansion:\t{}",
            if sc.spec.allow_volume_expansion {
                "True"
            } else {
                "<unset>"
            }
        ),
        "MountOptions:\t<none>".to_string(),
        format!("ReclaimPolicy:\t{}", sc.spec.reclaim_policy),
        format!("VolumeBindingMode:\t{}", sc.spec.volume_binding_mode),
    ];
    if !sc.spec.allowed_topologies.is_empty() {
        // printAllowedTopologies: each term's requirements as `key in [a, b]`.
        lines.push("AllowedTopologies:\t".into());
        for (i, term) in sc.spec.allowed_topologies.iter().enumerate() {
            let reqs = &term.match_label_expressions;
            if reqs.is_empty() {
                lines.push(format!("  Term {i}:\t<none>"));
            }
            for (j, r) in reqs.iter().enumerate() {
                let mut expr = format!("{} in", r.key);
                if !r.values.is_empty() {
                    expr = format!("{expr} [{}]", r.values.join(", "));
                }
                let head = if j == 0 {
                    format!("Term {i}:")
                } else {
                    String::new()
                };
                lines.push(format!("  {head}\t{expr}"));
            }
        }
    }
    with_events(lab, lines, &ObjectRef::to(sc), sc.metadata.uid)
}
