//! `v1` PersistentVolumeClaim: kubectl's printer and describer; `delete pvc` is the lab's
//! `pvc delete` (pvc-protection holds a claim a pod uses).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, ObjectRef, PvcSpec, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::PvcCmd;
use crate::engine::Lab;
use crate::engine::storage_cmd::short_modes;
use crate::engine::views::{MapStyle, age, map_field};
use crate::manifest::Manifest;
use crate::render::{Line, Outcome, Role};

/// PersistentVolumeClaims.
pub(crate) struct Pvcs;

impl Resource for Pvcs {
    type Spec = PvcSpec;
    const NAMES: Names = Names {
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        short: &["pvc"],
        aliases: &[],
        listed: "pvc",
        completes_as: "pvc",
    };
    /// printers.go's persistentVolumeClaimColumnDefinitions.
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
    ];
    /// VolumeMode at priority 1.
    const WIDE: &'static [&'static str] = &[
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
        "VOLUMEMODE",
    ];
    const DESCRIBE: Option<super::Describer<PvcSpec>> = Some(describe);
    const DELETE: Delete = Delete::Command(|name, ns| {
        Command::Pvc(PvcCmd::Delete {
            name,
            ns,
            step: false,
        })
    });
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::Pvc));

    fn objects(c: &Cluster) -> &Table<PvcSpec> {
        &c.pvcs
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, PvcSpec> {
        c.pvcs()
    }

    fn row(lab: &Lab, p: &Object<PvcSpec>, wide: bool) -> Vec<(String, Role)> {
        let status = if p.metadata.deletion_tick().is_some() {
            "Terminating".to_string()
        } else {
            p.status.phase.clone()
        };
        let role = if status == "Bound" {
            Role::Good
        } else {
            Role::Warn
        };
        let mut row = vec![
            (p.name().to_string(), Role::Name),
            (status, role),
            cell(p.spec.volume_name.clone()),
            cell(
                p.status
                    .capacity
                    .get("storage")
                    .cloned()
                    .unwrap_or_default(),
            ),
            cell(short_modes(&p.status.access_modes)),
            cell(p.spec.storage_class_name.clone()),
            // printPersistentVolumeClaim: `<unset>` for a nil volumeAttributesClassName
            // (the lab models no VolumeAttributesClass).
            cell("<unset>"),
            cell(age(lab.clock, p.metadata.creation_tick)),
        ];
        if wide {
            row.push(cell(super::pvs::unset_if_empty(&p.spec.volume_mode)));
        }
        row
    }
}

/// `describe pvc NAME`.
fn describe(lab: &Lab, p: &Object<PvcSpec>) -> Outcome {
    let mut out = Outcome::empty();
    let kv = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<15}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    kv(&mut out, "Name", p.name().into());
    kv(&mut out, "Namespace", p.metadata.namespace().clone());
    kv(&mut out, "StorageClass", p.spec.storage_class_name.clone());
    let status = if p.metadata.deletion_tick().is_some() {
        format!(
            "Terminating (lasts {})",
            age(lab.clock, p.metadata.deletion_tick().unwrap_or_default())
        )
    } else {
        p.status.phase.clone()
    };
    kv(&mut out, "Status", status);
    kv(&mut out, "Volume", p.spec.volume_name.clone());
    map_field(&mut out, "Labels", 15, &p.metadata.labels, MapStyle::Labels);
    map_field(
        &mut out,
        "Annotations",
        15,
        p.metadata.annotations(),
        MapStyle::Annotations,
    );
    kv(
        &mut out,
        "Finalizers",
        format!("[{}]", p.metadata.finalizers().join(" ")),
    );
    kv(
        &mut out,
        "Capacity",
        p.status
            .capacity
            .get("storage")
            .cloned()
            .unwrap_or_default(),
    );
    kv(
        &mut out,
        "Access Modes",
        short_modes(&p.status.access_modes),
    );
    kv(&mut out, "VolumeMode", p.spec.volume_mode.clone());
    if let Some(ds) = &p.spec.data_source {
        out.line(Line::styled("DataSource:", Role::Header));
        out.plain(format!("  APIGroup:  {}", ds.api_group));
        out.plain(format!("  Kind:      {}", ds.kind));
        out.plain(format!("  Name:      {}", ds.name));
    }
    let users: Vec<String> = lab
        .cluster
        .pods
        .values()
        .filter(|pod| {
            pod.metadata.namespace() == p.metadata.namespace()
                && pod
                    .spec
                    .volumes()
                    .iter()
                    .any(|v| v.persistent_volume_claim.claim_name == p.name())
        })
        .map(|pod| pod.name().to_string())
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
    if !p.status.conditions.is_empty() {
        // describePersistentVolumeClaim's table through describe's tabwriter (each cell
        // of a condition ends in a space; columns padded by 2).
        out.line(Line::styled("Conditions:", Role::Header));
        let mut rows: Vec<[String; 6]> = vec![
            [
                "Type",
                "Status",
                "LastProbeTime",
                "LastTransitionTime",
                "Reason",
                "Message",
            ]
            .map(String::from),
            [
                "----",
                "------",
                "-----------------",
                "------------------",
                "------",
                "-------",
            ]
            .map(String::from),
        ];
        use crate::cluster::meta::rfc1123z;
        for c in &p.status.conditions {
            rows.push([
                format!("{} ", c.condition_type),
                format!("{} ", c.status),
                format!("{} ", rfc1123z(None)),
                format!("{} ", rfc1123z(Some(c.last_transition_time.whole_secs()))),
                " ".to_string(),
                c.message.clone(),
            ]);
        }
        let widths: Vec<usize> = (0..5)
            .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0) + 2)
            .collect();
        for r in &rows {
            let mut line = String::from("  ");
            for (i, w) in widths.iter().enumerate() {
                line.push_str(&format!("{:<w$}", r[i]));
            }
            line.push_str(&r[5]);
            out.plain(line.trim_end().to_string());
        }
    }
    lab.events_for(&mut out, &ObjectRef::to(p), p.metadata.uid, 15);
    out
}
