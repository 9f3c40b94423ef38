//! `describe` for the kinds kubectl has no describer of its own for (the snapshot CRDs,
//! VolumeAttachment, CSIDriver):
//! kubectl's generic describer (`pkg/describe/describe.go` genericDescriber), which prints
//! the name, namespace, labels and annotations, then every other field of the object, keys
//! sorted and named by `smartLabelFor` (`creationTimestamp` → `Creation Timestamp`), and
//! lines the values up with a `text/tabwriter` (padding 2) as kubectl's `tabbedString` does;
//! and the tabbed-line helpers the lab's other describers print with (the tabwriter, the
//! multi-line label and annotation fields, the Events section, label and selector text).

use super::Lab;
use crate::cluster::selector::LabelSelector;
use crate::cluster::{Kind, Object, ObjectRef, Uid};
use crate::render::{Line, Outcome, Role};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// kubectl's PrefixWriter indentation: two spaces a level.
fn indent(level: usize) -> String {
    "  ".repeat(level)
}

/// `smartLabelFor`: a camelCase field as words (`apiVersion` → `API Version`); a field
/// with characters other than letters and `-` is kept as it is.
pub(crate) fn smart_label_for(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_string();
    }
    let parts = camelcase_split(field);
    let mut merged: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let part = &parts[i];
        let all_upper = part.chars().all(|c| !c.is_alphabetic() || c.is_uppercase());
        if let Some(next) = parts.get(i + 1) {
            if part.chars().count() >= 2
                && all_upper
                && next.chars().next().is_some_and(char::is_uppercase)
            {
                merged.push(format!("{part}{next}"));
                i += 2;
                continue;
            }
        }
        merged.push(part.clone());
        i += 1;
    }
    merged
        .into_iter()
        .filter(|p| p != "_")
        .map(|p| {
            let upper = p.to_uppercase();
            if ["API", "URL", "UID", "GUID"].contains(&upper.as_str()) {
                upper
            } else if p.to_lowercase() == p {
                let mut c = p.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// fatih/camelcase `Split`: runs of one character class (lower, upper, digit, other), an
/// upper-case run followed by a lower-case one giving its last letter to the next word
/// (`PDFLoader` → `PDF`, `Loader`).
fn camelcase_split(s: &str) -> Vec<String> {
    fn class(c: char) -> u8 {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else if c.is_numeric() {
            3
        } else {
            4
        }
    }
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last = 0;
    for c in s.chars() {
        let k = class(c);
        match runs.last_mut() {
            Some(r) if k == last => r.push(c),
            _ => runs.push(vec![c]),
        }
        last = k;
    }
    for i in 0..runs.len().saturating_sub(1) {
        let upper_then_lower = runs[i].first().is_some_and(|c| c.is_uppercase())
            && runs[i + 1].first().is_some_and(|c| c.is_lowercase());
        if upper_then_lower {
            if let Some(c) = runs[i].pop() {
                runs[i + 1].insert(0, c);
            }
        }
    }
    runs.into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.into_iter().collect())
        .collect()
}

/// Go's `%v` of a decoded JSON value.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// `printUnstructuredContent`: every field, keys sorted, maps and lists as blocks.
fn print_unstructured(
    lines: &mut Vec<String>,
    level: usize,
    content: &Map<String, Value>,
    prefix: &str,
    skip: &[&str],
) {
    let mut fields: Vec<&String> = content.keys().collect();
    fields.sort();
    for field in fields {
        let path = format!("{prefix}.{field}");
        if skip.contains(&path.as_str()) {
            continue;
        }
        let label = smart_label_for(field);
        match &content[field] {
            Value::Object(m) => {
                lines.push(format!("{}{label}:", indent(level)));
                print_unstructured(lines, level + 1, m, &path, skip);
            }
            Value::Array(items) => {
                lines.push(format!("{}{label}:", indent(level)));
                for item in items {
                    match item {
                        Value::Object(m) => print_unstructured(lines, level + 1, m, &path, skip),
                        other => lines.push(format!("{}{}", indent(level + 1), go_value(other))),
                    }
                }
            }
            other => lines.push(format!("{}{label}:\t{}", indent(level), go_value(other))),
        }
    }
}

/// Go's `text/tabwriter` with minwidth 0, padding 2 and spaces: a line's tab-terminated
/// cells are padded to the widest cell of their column block (consecutive lines that have
/// a cell in that column); the last cell of a line is not part of any column. Returns
/// each line's cells, padded.
pub(crate) fn tabwrite(text: &[String]) -> Vec<Vec<String>> {
    let lines: Vec<Vec<&str>> = text.iter().map(|l| l.split('\t').collect()).collect();
    let mut out = vec![Vec::new(); lines.len()];
    let mut widths = Vec::new();
    format_block(&lines, &mut widths, 0, lines.len(), &mut out);
    out
}

fn format_block(
    lines: &[Vec<&str>],
    widths: &mut Vec<usize>,
    mut line0: usize,
    line1: usize,
    out: &mut [Vec<String>],
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column >= lines[this].len() - 1 {
            this += 1;
            continue;
        }
        write_lines(lines, widths, line0, this, out);
        line0 = this;
        let mut width = 0;
        while this < line1 && column < lines[this].len() - 1 {
            width = width.max(lines[this][column].chars().count() + 2);
            this += 1;
        }
        widths.push(width);
        format_block(lines, widths, line0, this, out);
        widths.pop();
        line0 = this;
    }
    write_lines(lines, widths, line0, line1, out);
}

fn write_lines(
    lines: &[Vec<&str>],
    widths: &[usize],
    line0: usize,
    line1: usize,
    out: &mut [Vec<String>],
) {
    for i in line0..line1 {
        out[i] = lines[i]
            .iter()
            .enumerate()
            .map(|(j, cell)| match widths.get(j) {
                Some(w) => format!("{cell:<w$}"),
                None => cell.to_string(),
            })
            .collect();
    }
}

/// Lines as a kubectl describer writes them (the PrefixWriter's indentation in the text,
/// cells separated by tabs), aligned by [`tabwrite`] as kubectl's `tabbedString` aligns
/// them, added to `out` without the blanks a line ends in (kubectl writes a space after a
/// condition's status): a line's first cell is a header when a value follows it or it ends
/// with `:`.
pub(crate) fn push_tabbed(out: &mut Outcome, lines: &[String]) {
    for cells in tabwrite(lines) {
        let mut line = Line::new();
        let mut cells = cells.into_iter();
        if let Some(mut first) = cells.next() {
            let rest = cells.collect::<String>().trim_end().to_string();
            if rest.is_empty() {
                first.truncate(first.trim_end().len());
            }
            let header = !rest.is_empty() || first.ends_with(':');
            line = line.push(first, if header { Role::Header } else { Role::Plain });
            if !rest.is_empty() {
                line = line.push(rest, Role::Plain);
            }
        }
        out.line(line);
    }
}

/// `printLabelsMultiline` (and `printNodeTaintsMultiline`, `printPodTolerationsMultiline`,
/// which print the same way): `Title:` and the first item, each other item on a line of its
/// own in the value column, `<none>` without any.
pub(crate) fn multiline_lines(
    lines: &mut Vec<String>,
    title: &str,
    items: impl IntoIterator<Item = String>,
) {
    let mut any = false;
    for (i, item) in items.into_iter().enumerate() {
        any = true;
        if i == 0 {
            lines.push(format!("{title}:\t{item}"));
        } else {
            lines.push(format!("\t{item}"));
        }
    }
    if !any {
        lines.push(format!("{title}:\t<none>"));
    }
}

/// `printLabelsMultiline`: `key=value`, sorted by key.
pub(crate) fn labels_lines(
    lines: &mut Vec<String>,
    title: &str,
    labels: &BTreeMap<String, String>,
) {
    multiline_lines(lines, title, labels.iter().map(|(k, v)| format!("{k}={v}")));
}

/// kubectl's `maxAnnotationLen`: a longer annotation prints on the lines under its key.
const MAX_ANNOTATION_LEN: usize = 140;

/// `printAnnotationsMultiline`: `key: value`, sorted by key, kubectl's last-applied
/// annotation skipped; a value that spans lines, or would make the line longer than
/// [`MAX_ANNOTATION_LEN`], goes on the lines under its key, each cut to 138 characters
/// and `...`.
pub(crate) fn annotations_lines(
    lines: &mut Vec<String>,
    title: &str,
    annotations: &BTreeMap<String, String>,
) {
    let kept: Vec<(&String, &String)> = annotations
        .iter()
        .filter(|(k, _)| *k != "kubectl.kubernetes.io/last-applied-configuration")
        .collect();
    if kept.is_empty() {
        lines.push(format!("{title}:\t<none>"));
        return;
    }
    for (i, (k, v)) in kept.into_iter().enumerate() {
        let head = if i == 0 {
            format!("{title}:")
        } else {
            String::new()
        };
        let value = v.strip_suffix('\n').unwrap_or(v);
        if value.len() + k.len() + 2 > MAX_ANNOTATION_LEN || value.contains('\n') {
            lines.push(format!("{head}\t{k}:"));
            for part in value.split('\n') {
                lines.push(format!("\t  {}", shorten(part, MAX_ANNOTATION_LEN - 2)));
            }
        } else {
            lines.push(format!("{head}\t{k}: {value}"));
        }
    }
}

/// kubectl's `shorten`: the first `max` bytes and `...` (here cut at a character
/// boundary).
fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// A describer's tabbed lines (see [`push_tabbed`]) and then its Events section: the
/// events recorded about `object` with `uid`, or `Events:  <none>` in the lines' last
/// column block (kubectl's DescribeEvents writes it through the same tabwriter).
pub(crate) fn with_events(
    lab: &Lab,
    mut lines: Vec<String>,
    object: &ObjectRef,
    uid: Uid,
) -> Outcome {
    let has_events = lab.has_events(object, uid);
    if !has_events {
        lines.push("Events:\t<none>".into());
    }
    let mut out = Outcome::empty();
    push_tabbed(&mut out, &lines);
    if has_events {
        lab.events_for(&mut out, object, uid, 0);
    }
    out
}

/// apimachinery's `labels.FormatLabels`: `k=v` pairs sorted by key, joined by commas;
/// `<none>` for none.
pub(crate) fn format_labels(m: &BTreeMap<String, String>) -> String {
    if m.is_empty() {
        return "<none>".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.FormatLabelSelector`: the selector's requirements as `labels.Selector` prints
/// them, sorted by key (`k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, values sorted),
/// joined by commas; `<none>` for the empty selector.
pub(crate) fn format_label_selector(sel: &LabelSelector) -> String {
    let mut reqs: Vec<(String, String)> = sel
        .match_labels
        .iter()
        .map(|(k, v)| (k.clone(), format!("{k}={v}")))
        .collect();
    for r in &sel.match_expressions {
        let mut values = r.values.clone();
        values.sort();
        let values = values.join(",");
        let text = match r.operator.as_str() {
            "In" => format!("{} in ({values})", r.key),
            "NotIn" => format!("{} notin ({values})", r.key),
            "Exists" => r.key.clone(),
            "DoesNotExist" => format!("!{}", r.key),
            other => format!("{} {other} ({values})", r.key),
        };
        reqs.push((r.key.clone(), text));
    }
    if reqs.is_empty() {
        return "<none>".into();
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// `describe KIND NAME` of a kind kubectl has no describer for (the snapshot CRDs,
/// VolumeAttachment, CSIDriver), as its generic describer prints it.
pub(crate) fn describe<K: Kind>(lab: &Lab, o: &Object<K>) -> Outcome {
    let object = ObjectRef::to(o);
    let uid = o.metadata.uid;
    // Serializing an object cannot fail (its fields are strings, numbers, maps and lists).
    let value = serde_json::to_value(o).unwrap_or(Value::Null);
    let empty = Map::new();
    let content = value.as_object().unwrap_or(&empty);
    let meta = content
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut lines = vec![
        format!("Name:\t{}", text("name")),
        format!("Namespace:\t{}", text("namespace")),
    ];
    labels_lines(&mut lines, "Labels", &o.metadata.labels);
    annotations_lines(&mut lines, "Annotations", o.metadata.annotations());
    print_unstructured(
        &mut lines,
        0,
        content,
        "",
        &[
            ".metadata.managedFields",
            ".metadata.name",
            ".metadata.namespace",
            ".metadata.labels",
            ".metadata.annotations",
        ],
    );
    with_events(lab, lines, &object, uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_labels_read_as_kubectl_prints_them() {
        for (field, label) in [
            ("apiVersion", "API Version"),
            ("uid", "UID"),
            ("creationTimestamp", "Creation Timestamp"),
            (
                "boundVolumeSnapshotContentName",
                "Bound Volume Snapshot Content Name",
            ),
            ("readyToUse", "Ready To Use"),
            ("kind", "Kind"),
            ("PDFLoader", "PDFLoader"),
            ("snapshot.storage.k8s.io/x", "snapshot.storage.k8s.io/x"),
        ] {
            assert_eq!(smart_label_for(field), label, "{field}");
        }
    }

    #[test]
    fn tabwriter_aligns_column_blocks_across_indentation() {
        let lines: Vec<String> = [
            "Spec:",
            "  Source:",
            "    Persistent Volume Claim Name:\tdb",
            "  Volume Snapshot Class Name:\tcsi-hostpath-snapclass",
            "Status:",
            "  Ready To Use:\ttrue",
        ]
        .map(String::from)
        .to_vec();
        let text: Vec<String> = tabwrite(&lines).into_iter().map(|c| c.concat()).collect();
        assert_eq!(
            text,
            [
                "Spec:",
                "  Source:",
                "    Persistent Volume Claim Name:  db",
                "  Volume Snapshot Class Name:      csi-hostpath-snapclass",
                "Status:",
                "  Ready To Use:  true",
            ]
        );
    }
}
