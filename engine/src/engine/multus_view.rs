//! What a learner sees of Multus on a pod (`describe pod`): the pod's networks read back
//! from `k8s.v1.cni.cncf.io/network-status` (its annotations print as every pod's do,
//! `views::map_field`). `describe net-attach-def` is the NAD's resource's
//! (`crate::resource`).

use crate::cluster::nad::{NETWORK_STATUS_ANNOTATION, NETWORKS_ANNOTATION};
use crate::cluster::{Object, PodSpec};
use crate::render::{Line, Outcome, Role, Table};

/// `Networks:`: one row per interface Multus reported in network-status.
pub(crate) fn network_lines(out: &mut Outcome, p: &Object<PodSpec>) {
    let Some(text) = p.metadata.annotations().get(NETWORK_STATUS_ANNOTATION) else {
        if p.metadata.annotations().contains_key(NETWORKS_ANNOTATION) {
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
    for l in t.render().into_lines() {
        let mut spans = vec![crate::render::Span {
            text: "  ".into(),
            role: Role::Plain,
        }];
        spans.extend(l.spans);
        out.line(Line { spans });
    }
}
