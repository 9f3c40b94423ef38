//! What a learner sees of Multus on a pod (`describe pod`): the pod's networks read back
//! from `k8s.v1.cni.cncf.io/network-status` (its annotations print as every pod's do,
//! `views::map_field`); and `describe net-attach-def`.

use super::Lab;
use super::views::not_found;
use crate::cluster::nad::{NETWORK_STATUS_ANNOTATION, NETWORKS_ANNOTATION};
use crate::cluster::{Object, PodSpec};
use crate::render::{Line, Outcome, Role, Table};

/// `Networks:`: one row per interface Multus reported in network-status.
pub fn network_lines(out: &mut Outcome, p: &Object<PodSpec>) {
    let Some(text) = p.metadata.annotations.get(NETWORK_STATUS_ANNOTATION) else {
        if p.metadata.annotations.contains_key(NETWORKS_ANNOTATION) {
            out.line(
                Line::new()
                    .push(format!("{:<14}", "Networks:"), Role::Header)
                    .push(
                        "<no network-status yet: Multus writes it when the sandbox's CNI ADD succeeds>",
                        Role::Dim,
                    ),
            );
        }
        return;
    };
    let Ok(serde_json::Value::Array(entries)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return;
    };
    out.line(Line::styled("Networks:", Role::Header));
    let mut t = Table::new(&["INTERFACE", "NETWORK", "IPS", "MAC", "DEFAULT"]);
    let s = |e: &serde_json::Value, k: &str| {
        e.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    for e in &entries {
        let ips: Vec<&str> = e
            .get("ips")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default();
        let default = e.get("default").and_then(|v| v.as_bool()).unwrap_or(false);
        t.row([
            s(e, "interface"),
            s(e, "name"),
            if ips.is_empty() {
                "<none>".into()
            } else {
                ips.join(",")
            },
            s(e, "mac"),
            if default { "yes".into() } else { String::new() },
        ]);
    }
    for l in t.render().lines {
        let mut spans = vec![crate::render::Span {
            text: "  ".into(),
            role: Role::Plain,
        }];
        spans.extend(l.spans);
        out.line(Line { spans });
    }
}

impl Lab {
    /// `describe net-attach-def NAME`.
    pub fn describe_nad(
        &self,
        out: &mut Outcome,
        ns: &str,
        name: &str,
    ) -> Result<(), super::LabError> {
        let n = self
            .cluster
            .net_attach_defs
            .get(&(ns.to_string(), name.to_string()))
            .ok_or_else(|| not_found("network-attachment-definitions.k8s.cni.cncf.io", name))?;
        let kv = |out: &mut Outcome, k: &str, v: String| {
            out.line(
                Line::new()
                    .push(format!("{:<14}", format!("{k}:")), Role::Header)
                    .push(v, Role::Plain),
            );
        };
        kv(out, "Name", n.name().to_string());
        kv(out, "Namespace", n.metadata.namespace.clone());
        use super::views::{MapStyle, map_field};
        map_field(out, "Labels", 14, &n.metadata.labels, MapStyle::Labels);
        map_field(
            out,
            "Annotations",
            14,
            &n.metadata.annotations,
            MapStyle::Annotations,
        );
        kv(out, "API Version", "k8s.cni.cncf.io/v1".into());
        kv(out, "Kind", "NetworkAttachmentDefinition".into());
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
        let users: Vec<String> = self
            .cluster
            .pods
            .values()
            .filter(|p| {
                p.metadata
                    .annotations
                    .get(NETWORKS_ANNOTATION)
                    .is_some_and(|v| {
                        crate::cni::plugins::multus::annotation::parse(v, &p.metadata.namespace)
                            .is_ok_and(|sels| {
                                sels.iter().any(|s| {
                                    s.name == n.name() && s.namespace == n.metadata.namespace
                                })
                            })
                    })
            })
            .map(|p| p.key())
            .collect();
        kv(
            out,
            "Used By",
            if users.is_empty() {
                "<none>".into()
            } else {
                users.join(", ")
            },
        );
        self.events_for(out, &crate::cluster::ObjectRef::to(n), &n.metadata.uid, 14);
        Ok(())
    }
}
