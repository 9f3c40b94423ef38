//! `k8s.cni.cncf.io/v1` NetworkAttachmentDefinition (Multus): the CRD's printer and the lab's
//! describer (the config, and the pods whose networks annotation names it); `delete
//! net-attach-def` is the lab's `nad delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::nad::{NETWORKS_ANNOTATION, NetAttachDefSpec};
use crate::cluster::{Cluster, Kind, Object, ObjectRef, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::NadCmd;
use crate::engine::Lab;
use crate::engine::views::{MapStyle, age, map_field};
use crate::manifest::Manifest;
use crate::render::{Line, Outcome, Role};

/// NetworkAttachmentDefinitions.
pub(crate) struct NetAttachDefs;

impl Resource for NetAttachDefs {
    type Spec = NetAttachDefSpec;
    const NAMES: Names = Names {
        plural: "network-attachment-definitions",
        singular: "network-attachment-definition",
        short: &["net-attach-def"],
        aliases: &[
            "network-attachment-definitions.k8s.cni.cncf.io",
            "networkattachmentdefinition",
            "networkattachmentdefinitions",
            "net-attach-defs",
            "nad",
            "nads",
        ],
        listed: "network-attachment-definitions",
        completes_as: "net-attach-def",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "AGE"];
    const DESCRIBE: Option<super::Describer<NetAttachDefSpec>> = Some(describe);
    const DELETE: Delete = Delete::Command(|name, ns| Command::Nad(NadCmd::Delete { name, ns }));
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::Nad));

    fn objects(c: &Cluster) -> &Table<NetAttachDefSpec> {
        &c.net_attach_defs
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, NetAttachDefSpec> {
        c.net_attach_defs()
    }

    fn row(lab: &Lab, n: &Object<NetAttachDefSpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(n.name()),
            cell(age(lab.clock, n.metadata.creation_tick)),
        ]
    }
}

/// `describe net-attach-def NAME`.
fn describe(lab: &Lab, n: &Object<NetAttachDefSpec>) -> Outcome {
    let mut out = Outcome::empty();
    let kv = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<14}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    kv(&mut out, "Name", n.name().to_string());
    kv(&mut out, "Namespace", n.metadata.namespace().clone());
    map_field(&mut out, "Labels", 14, &n.metadata.labels, MapStyle::Labels);
    map_field(
        &mut out,
        "Annotations",
        14,
        n.metadata.annotations(),
        MapStyle::Annotations,
    );
    kv(
        &mut out,
        "API Version",
        NetAttachDefSpec::API_VERSION.into(),
    );
    kv(&mut out, "Kind", NetAttachDefSpec::KIND.into());
    out.line(Line::styled("Spec:", Role::Header));
    if n.spec.config.is_empty() {
        out.plain(
            "  Config:  <empty: Multus loads the file in its confDir whose name is this NAD's>",
        );
    } else {
        out.plain("  Config:");
        for l in n.spec.config.lines() {
            out.plain(format!("    {l}"));
        }
    }
    let users: Vec<String> = lab
        .cluster
        .pods
        .values()
        .filter(|p| {
            p.metadata
                .annotations()
                .get(NETWORKS_ANNOTATION)
                .is_some_and(|v| {
                    crate::cni::plugins::multus::annotation::parse(v, p.metadata.namespace())
                        .is_ok_and(|sels| {
                            sels.iter().any(|s| {
                                s.name == n.name() && s.namespace == *n.metadata.namespace()
                            })
                        })
                })
        })
        .map(|p| p.key())
        .collect();
    kv(
        &mut out,
        "Used By",
        if users.is_empty() {
            "<none>".into()
        } else {
            users.join(", ")
        },
    );
    lab.events_for(&mut out, &ObjectRef::to(n), n.metadata.uid, 14);
    out
}
