//! `v1` PersistentVolume: kubectl's printer and describer; `delete pv` requests its
//! deletion, which pv-protection holds while the PV is Bound (`Lab::pv_delete`: the lab
//! has no `pv delete` command).

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::{Cluster, Object, ObjectRef, PvSpec, Table, TableOps};
use crate::engine::Lab;
use crate::engine::storage_cmd::short_modes;
use crate::engine::views::{MapStyle, age, map_field};
use crate::manifest::Manifest;
use crate::render::{Line, Outcome, Role};

/// PersistentVolumes.
pub(crate) struct Pvs;

impl Resource for Pvs {
    type Spec = PvSpec;
    const NAMES: Names = Names {
        plural: "persistentvolumes",
        singular: "persistentvolume",
        short: &["pv"],
        aliases: &[],
        listed: "pv",
        completes_as: "pv",
    };
    /// printers.go's persistentVolumeColumnDefinitions.
    const COLUMNS: &'static [&'static str] = &[
        "NAME",
        "CAPACITY",
        "ACCESS MODES",
        "RECLAIM POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
    ];
    /// VolumeMode at priority 1.
    const WIDE: &'static [&'static str] = &[
        "NAME",
        "CAPACITY",
        "ACCESS MODES",
        "RECLAIM POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
        "VOLUMEMODE",
    ];
    const DESCRIBE: Option<super::Describer<PvSpec>> = Some(describe);
    const DELETE: Delete = Delete::Volume;
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::Pv));

    fn objects(c: &Cluster) -> &Table<PvSpec> {
        &c.pvs
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, PvSpec> {
        c.pvs()
    }

    fn row(lab: &Lab, pv: &Object<PvSpec>, wide: bool) -> Vec<(String, Role)> {
        let mut row = vec![
            cell(pv.name()),
            cell(pv.spec.capacity.get("storage").cloned().unwrap_or_default()),
            cell(short_modes(&pv.spec.access_modes)),
            cell(pv.spec.persistent_volume_reclaim_policy.clone()),
            // printPersistentVolume: a PV being deleted shows Terminating.
            cell(if pv.metadata.deletion_tick().is_some() {
                "Terminating".to_string()
            } else {
                pv.status.phase.clone()
            }),
            cell(
                pv.spec
                    .claim_ref
                    .as_ref()
                    .map(|c| format!("{}/{}", c.namespace, c.name))
                    .unwrap_or_default(),
            ),
            cell(pv.spec.storage_class_name.clone()),
            // printPersistentVolume: `<unset>` for a nil volumeAttributesClassName (the
            // lab models no VolumeAttributesClass), then status.reason, which the lab's
            // volume controllers leave empty.
            cell("<unset>"),
            cell(""),
            cell(age(lab.clock, pv.metadata.creation_tick)),
        ];
        if wide {
            row.push(cell(unset_if_empty(&pv.spec.volume_mode)));
        }
        row
    }
}

/// printers.go's `<unset>` for a field that is nil (the lab keeps an unset mode as "").
pub(super) fn unset_if_empty(v: &str) -> String {
    if v.is_empty() {
        "<unset>".to_string()
    } else {
        v.to_string()
    }
}

/// describePersistentVolume's `Status:`: `Terminating (lasts AGE)` for a PV being deleted,
/// else its phase.
fn status(lab: &Lab, pv: &Object<PvSpec>) -> String {
    match pv.metadata.deletion_tick() {
        Some(tick) => format!("Terminating (lasts {})", age(lab.clock, tick)),
        None => pv.status.phase.clone(),
    }
}

/// `describe pv NAME`.
fn describe(lab: &Lab, pv: &Object<PvSpec>) -> Outcome {
    let mut out = Outcome::empty();
    // kubectl's describer writes through one tabwriter (padding 2) up to
    // `Source:`: the first column is as wide as its widest cell, which is
    // `  Required Terms:` when the PV has a node affinity
    // (`printVolumeNodeAffinity`, `k8s.io/kubectl/pkg/describe/describe.go`).
    let width = if pv.spec.node_affinity.is_some() {
        19
    } else {
        17
    };
    let kv = |out: &mut Outcome, k: &str, v: String| {
        out.line(
            Line::new()
                .push(format!("{:<width$}", format!("{k}:")), Role::Header)
                .push(v, Role::Plain),
        );
    };
    kv(&mut out, "Name", pv.name().into());
    map_field(
        &mut out,
        "Labels",
        width,
        &pv.metadata.labels,
        MapStyle::Labels,
    );
    map_field(
        &mut out,
        "Annotations",
        width,
        pv.metadata.annotations(),
        MapStyle::Annotations,
    );
    kv(
        &mut out,
        "Finalizers",
        format!("[{}]", pv.metadata.finalizers().join(" ")),
    );
    kv(&mut out, "StorageClass", pv.spec.storage_class_name.clone());
    kv(&mut out, "Status", status(lab, pv));
    kv(
        &mut out,
        "Claim",
        pv.spec
            .claim_ref
            .as_ref()
            .map(|c| format!("{}/{}", c.namespace, c.name))
            .unwrap_or_default(),
    );
    kv(
        &mut out,
        "Reclaim Policy",
        pv.spec.persistent_volume_reclaim_policy.clone(),
    );
    kv(&mut out, "Access Modes", short_modes(&pv.spec.access_modes));
    kv(&mut out, "VolumeMode", pv.spec.volume_mode.clone());
    kv(
        &mut out,
        "Capacity",
        pv.spec.capacity.get("storage").cloned().unwrap_or_default(),
    );
    match &pv.spec.node_affinity {
        None => kv(&mut out, "Node Affinity", "<none>".into()),
        Some(a) => {
            kv(&mut out, "Node Affinity", String::new());
            let terms = &a.required.node_selector_terms;
            let none = if terms.is_empty() { "<none>" } else { "" };
            out.plain(format!("{:<width$}{none}", "  Required Terms:"));
            // printNodeSelectorTermsMultilineWithIndent: the term's first
            // expression beside `Term N:`, the others below it.
            for (i, t) in terms.iter().enumerate() {
                let title = format!("    Term {i}:");
                if t.match_expressions.is_empty() {
                    out.plain(format!("{title:<width$}<none>"));
                }
                for (j, r) in t.match_expressions.iter().enumerate() {
                    let mut expr = format!("{} {}", r.key, r.operator.to_ascii_lowercase());
                    if !r.values.is_empty() {
                        expr = format!("{expr} [{}]", r.values.join(", "));
                    }
                    let cell = if j == 0 { title.as_str() } else { "    " };
                    out.plain(format!("{cell:<width$}{expr}"));
                }
            }
        }
    }
    kv(&mut out, "Message", String::new());
    out.line(Line::styled("Source:", Role::Header));
    out.plain("    Type:              CSI (a Container Storage Interface (CSI) volume source)");
    out.plain(format!("    Driver:            {}", pv.spec.csi.driver));
    out.plain(format!("    FSType:            {}", pv.spec.csi.fs_type));
    out.plain(format!(
        "    VolumeHandle:      {}",
        pv.spec.csi.volume_handle
    ));
    out.plain("    ReadOnly:          false");
    out.plain("    VolumeAttributes:");
    for (k, v) in &pv.spec.csi.volume_attributes {
        out.plain(format!("        {k}={v}"));
    }
    lab.events_for(&mut out, &ObjectRef::to(pv), pv.metadata.uid, width);
    out
}
