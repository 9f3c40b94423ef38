//! Kubernetes manifests as `kubectl apply -f` reads them: YAML or JSON, several documents
//! separated by `---`, or a `List` (what `get -o yaml` prints for several objects).
//!
//! Reading is kubectl's client side plus the API server's decoding: a document that is
//! not YAML fails with the line (`error converting YAML to JSON: yaml: line N: …`, as
//! sigs.k8s.io/yaml words it); a missing `apiVersion` or `kind` is kubectl's `error
//! validating data`; a kind the lab does not serve is `no matches for kind`; a field no
//! Kubernetes version has is refused as strict field validation refuses it (`strict
//! decoding error: unknown field "spec.containers[0].imagee"`), with the line. Every
//! document is read before anything is applied, so a file with a mistake changes nothing.
//!
//! This module only reads; `crate::engine` turns each [`Manifest`] into objects.

pub mod lines;
pub mod schema;

use crate::cluster::ApiKind;
use schema::*;
use serde::Deserialize;
use serde_json::Value;

/// The largest manifest file the lab reads (1 MiB: kubectl's own limit for a single
/// request body is 3 MiB; a lesson or a chapter's YAML is a few KiB).
pub const MANIFEST_CAP: u64 = 1 << 20;

/// The most objects one apply handles.
pub const MAX_OBJECTS: usize = 500;

/// The most YAML nodes (mappings, lists and scalars) one document may hold: 250,000, the
/// YAML reader's own default, hundreds of times a real manifest's.
pub const MAX_YAML_NODES: usize = 250_000;

/// The deepest a document's mappings and lists may nest: 64 levels (a Pod nests about 8).
pub const MAX_YAML_DEPTH: usize = 64;

/// The YAML reader's options: its default budget with the lab's two caps stated.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_depth = MAX_YAML_DEPTH;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// One object of a manifest, typed by its kind.
#[derive(Debug)]
pub enum Manifest {
    /// `v1 Namespace`.
    Namespace(ObjectM<NamespaceSpecM>),
    /// `v1 Pod`.
    Pod(ObjectM<PodSpecM>),
    /// `v1 PersistentVolumeClaim`.
    Pvc(ObjectM<PvcSpecM>),
    /// `v1 PersistentVolume`.
    Pv(ObjectM<PvSpecM>),
    /// `storage.k8s.io/v1 StorageClass`.
    StorageClass(StorageClassM),
    /// `networking.k8s.io/v1 NetworkPolicy`.
    NetworkPolicy(ObjectM<PolicySpecM>),
    /// `snapshot.storage.k8s.io/v1 VolumeSnapshot`.
    VolumeSnapshot(ObjectM<SnapshotSpecM>),
    /// `k8s.cni.cncf.io/v1 NetworkAttachmentDefinition`.
    Nad(ObjectM<NadSpecM>),
}

/// Kinds Kubernetes has and the lab has no object for at all, with what to do instead (the
/// lab's own kinds say what `apply -f` does with them in their `resource` entry).
const NOT_MODELLED: &[(&str, &str)] = &[
    (
        "ConfigMap",
        "the lab's networks are chosen with `network use NAME`, not from a ConfigMap",
    ),
    (
        "VolumeSnapshotClass",
        "the lab has one, csi-hostpath-snapclass (driver hostpath.csi.lab)",
    ),
    (
        "Deployment",
        "create its pods with `pod create` or Pod manifests",
    ),
    ("Service", "the lab models pod networking, not Services"),
];

/// How a kind's manifest is read: the document decoded into its [`Manifest`] variant (a
/// kind's `resource::Apply::Reads`).
pub(crate) type Read = fn(&mut Decoder<'_>) -> Result<Manifest, String>;

/// One document on its way to its kind's typed manifest.
pub(crate) struct Decoder<'a> {
    value: &'a Value,
    unknown: &'a mut Vec<Vec<lines::Seg>>,
    kind: &'a str,
    served: &'a str,
    at: &'a dyn Fn(&[lines::Seg]) -> usize,
}

impl Decoder<'_> {
    /// The document as `T`, collecting the fields `T` does not declare (see [`decode`]).
    pub(crate) fn decode<T: for<'de> Deserialize<'de>>(&mut self) -> Result<T, String> {
        decode(self.value, self.unknown, self.kind, self.served, self.at)
    }
}

/// One object read from a manifest, with where it came from.
#[derive(Debug)]
pub struct Document {
    /// The object.
    pub object: Manifest,
    /// The kind.
    pub kind: ApiKind,
    /// The name in `metadata.name` (checked non-empty).
    pub name: String,
    /// The first line of the object in the file (1-based).
    pub line: usize,
    /// Real fields the lab does not model, as paths (`spec.containers[0].command`).
    pub unmodelled: Vec<String>,
    /// The object as given, compact JSON: what `kubectl.kubernetes.io/last-applied-configuration` holds.
    pub applied_json: String,
}

/// Read every object of a manifest named `source` (a path, or `-`). Nothing is applied.
pub fn parse(source: &str, text: &str) -> Result<Vec<Document>, String> {
    let mut docs = Vec::new();
    for (start, body) in split_documents(text) {
        if body.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with('#')
        }) {
            continue; // kubectl skips empty documents
        }
        let value: Value =
            serde_saphyr::from_str_with_options(body, yaml_options()).map_err(|e| {
                let (line, msg) = saphyr_message(&e, body);
                format!(
                    "error parsing {source}: error converting YAML to JSON: yaml: line {}: {msg}",
                    start + line.max(1) - 1
                )
            })?;
        read_value(source, body, start, &value, &mut docs, None)?;
        if docs.len() > MAX_OBJECTS {
            return Err(format!(
                "{source}: more than {MAX_OBJECTS} objects; the lab applies at most {MAX_OBJECTS} at once"
            ));
        }
    }
    if docs.is_empty() {
        return Err(format!("no objects passed to apply (in {source})"));
    }
    Ok(docs)
}

/// A saphyr error as (line in `body`, message without its own "at line …" suffix). The
/// errors whose library wording would puzzle a learner (budgets, duplicate keys, numbers
/// JSON cannot hold) are said in the lab's words: what was found, and what is accepted.
fn saphyr_message(e: &serde_saphyr::Error, body: &str) -> (usize, String) {
    use serde_saphyr::Error as E;
    let line = e.location().map(|l| l.line() as usize).unwrap_or(1);
    let msg = match e.without_snippet() {
        E::Budget { breach, .. } => budget_message(breach),
        E::DuplicateMappingKey { key: Some(k), .. } => {
            let first = first_definition(body, line, k)
                .map(|l| format!(" at line {l}"))
                .unwrap_or_default();
            format!(
                "mapping key {k:?} already defined{first} (a key appears once in a mapping: keep one of them)"
            )
        }
        E::DuplicateMappingKey { key: None, .. } => {
            "a mapping key is defined twice (a key appears once in a mapping: keep one of them)"
                .to_string()
        }
        E::NonFiniteFloat { value, .. } => number_message(value),
        other => {
            let text = other.to_string();
            match text.rfind(" at line ") {
                Some(i) => text[..i].to_string(),
                None => text,
            }
        }
    };
    (line, msg)
}

/// A breach of the YAML reader's budget, with the cap it passed.
fn budget_message(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let defaults = serde_saphyr::Budget::default();
    match breach {
        B::Nodes { nodes } => format!(
            "too many YAML nodes ({nodes}, at most {MAX_YAML_NODES}: mappings, lists and values together); split the manifest into several files"
        ),
        B::Depth { depth } => format!(
            "nesting deeper than {MAX_YAML_DEPTH} levels (mappings and lists nest {depth} deep here, at most {MAX_YAML_DEPTH})"
        ),
        B::Documents { documents } => format!(
            "too many YAML documents ({documents}, at most {})",
            defaults.max_documents
        ),
        B::Aliases { aliases } => format!(
            "too many aliases (*name: {aliases}, at most {})",
            defaults.max_aliases
        ),
        B::Anchors { anchors } => format!(
            "too many anchors (&name: {anchors}, at most {})",
            defaults.max_anchors
        ),
        B::Events { events } => format!(
            "the document is too large for the YAML reader ({events} parser events, at most {})",
            defaults.max_events
        ),
        B::ScalarBytes { total_scalar_bytes } => format!(
            "the document's values are too large ({total_scalar_bytes} bytes, at most {})",
            defaults.max_total_scalar_bytes
        ),
        _ => "the document is too large or too repetitive for the YAML reader (aliases expanding into too many values?)".to_string(),
    }
}

/// A number the YAML reader refused because JSON cannot hold it: `.nan` and `.inf`, or a
/// literal too large for a 64-bit float (a 100,000-digit integer, `1e999`).
fn number_message(value: &str) -> String {
    let shown = crate::util::clip::long_words(value);
    let digits = value.trim_start_matches(['-', '+']);
    let lower = value.to_ascii_lowercase();
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        format!(
            "the integer {shown} ({} digits) is too large: a number in a manifest must fit in 64 bits (at most {}); a value that only looks like a number goes in quotes",
            digits.len(),
            i64::MAX
        )
    } else if lower.contains("nan") {
        format!(
            "{shown} (not a number) is refused: JSON numbers are finite, and Kubernetes objects hold no NaN; write the value you mean, or quote it (\"{value}\") if it is a string"
        )
    } else if lower.contains("inf") {
        format!(
            "{shown} (infinity) is refused: JSON numbers are finite, and Kubernetes objects hold no infinity; write the value you mean, or quote it if it is a string"
        )
    } else {
        format!(
            "the number {shown} is too large for a 64-bit float (it would be infinite); write a smaller one, or quote it if it is a string"
        )
    }
}

/// The line (in `body`, 1-based) where key `key` was first defined in the mapping whose
/// duplicate is on line `dup`: the nearest line above at the same indentation that
/// defines the key, before the mapping ends (a line indented less).
fn first_definition(body: &str, dup: usize, key: &str) -> Option<usize> {
    let lines: Vec<&str> = body.lines().collect();
    let dup_line = lines.get(dup.checked_sub(1)?)?;
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '-']).len();
    let level = indent(dup_line);
    let defines = |l: &str| {
        let t = l.trim_start_matches([' ', '-']);
        t.strip_prefix(key)
            .or_else(|| t.strip_prefix(&format!("{key:?}")))
            .or_else(|| t.strip_prefix(&format!("'{key}'")))
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    for i in (0..dup - 1).rev() {
        let l = lines[i];
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = indent(l);
        if at < level {
            return None;
        }
        if at == level && defines(l) {
            return Some(i + 1);
        }
        if at == level && t.starts_with('-') {
            // The list item (the mapping) starts here.
            return None;
        }
    }
    None
}

/// The documents of a YAML stream: (first line, text), split at `---` lines. A `---` at
/// column 0 cannot sit inside a block scalar (those are indented), so splitting by line
/// is exact for the manifests people write.
fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut docs = Vec::new();
    let mut start_byte = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let marker =
            bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t") || bare == "...";
        if marker {
            docs.push((start_line, &text[start_byte..offset]));
            // Content after `--- ` on the same line belongs to the next document.
            start_byte = offset
                + if bare.starts_with("--- ") {
                    4
                } else {
                    line.len()
                };
            start_line = if bare.starts_with("--- ") {
                i + 1
            } else {
                i + 2
            };
            if bare == "..." || bare == "---" || bare.starts_with("---\t") {
                start_byte = offset + line.len();
            }
        }
        offset += line.len();
    }
    docs.push((start_line, &text[start_byte..]));
    docs
}

/// Read one decoded document (or List item) into `docs`.
fn read_value(
    source: &str,
    body: &str,
    start: usize,
    value: &Value,
    docs: &mut Vec<Document>,
    item: Option<usize>,
) -> Result<(), String> {
    let prefix: Vec<lines::Seg> = item
        .map(|i| vec![lines::Seg::Key("items".into()), lines::Seg::Index(i)])
        .unwrap_or_default();
    let at = |path: &[lines::Seg]| -> usize {
        let mut full = prefix.clone();
        full.extend_from_slice(path);
        start + lines::line_of(body, &full).unwrap_or(1) - 1
    };
    let Value::Object(map) = value else {
        return Err(format!(
            "error validating {source:?} (line {}): an object must be a mapping with apiVersion, kind and metadata; found {}",
            at(&[]),
            json_type(value)
        ));
    };
    let tm = TypeMeta {
        api_version: map
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        kind: map.get("kind").and_then(Value::as_str).map(str::to_string),
    };
    let validation = |what: &str| {
        format!(
            "error validating {source:?} (line {}): error validating data: {what} not set; every object needs apiVersion and kind (e.g. `apiVersion: v1` and `kind: Pod`)",
            at(&[])
        )
    };
    let kind = tm.kind.ok_or_else(|| validation("kind"))?;
    let api_version = tm.api_version.ok_or_else(|| validation("apiVersion"))?;
    if kind == "List" {
        let items = map.get("items").and_then(Value::as_array).ok_or_else(|| {
            format!(
                "error validating {source:?} (line {}): a List needs `items`, a sequence of objects",
                at(&[])
            )
        })?;
        if item.is_some() {
            return Err(format!("{source}: a List inside a List is not read"));
        }
        for (i, it) in items.iter().enumerate() {
            read_value(source, body, start, it, docs, Some(i))?;
        }
        return Ok(());
    }
    let name = map
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let read = crate::resource::by_kind(&kind).map(|r| (r, r.apply()));
    let Some((resource, crate::resource::Apply::Reads(read))) = read else {
        let lab_hint = read.and_then(|(_, apply)| match apply {
            crate::resource::Apply::Refused(hint) => hint,
            crate::resource::Apply::Reads(_) => None,
        });
        let hint = lab_hint
            .or_else(|| {
                NOT_MODELLED
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map(|(_, h)| *h)
            })
            .map(|h| format!("the lab does not model {kind} objects: {h}"))
            .unwrap_or_else(|| {
                format!(
                    "the kinds the lab reads are {}",
                    crate::resource::REGISTRY
                        .iter()
                        .filter(|r| matches!(r.apply(), crate::resource::Apply::Reads(_)))
                        .map(|r| r.kind().name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        return Err(format!(
            "resource mapping not found for name: {name:?} namespace: \"\" from {source:?} (line {}): no matches for kind {kind:?} in version {api_version:?}\n{hint}",
            at(&[])
        ));
    };
    let served = resource.api_version();
    if api_version != served {
        return Err(format!(
            "resource mapping not found for name: {name:?} namespace: \"\" from {source:?} (line {}): no matches for kind {kind:?} in version {api_version:?}\nthe lab serves {kind} at apiVersion {served}",
            at(&[])
        ));
    }
    if name.is_empty() {
        return Err(format!(
            "error when retrieving current configuration of:\nResource: {kind}, Name: \"\"\nfrom server for: {source:?} (line {}): resource name may not be empty",
            at(&[])
        ));
    }
    let mut unknown: Vec<Vec<lines::Seg>> = Vec::new();
    let object = read(&mut Decoder {
        value,
        unknown: &mut unknown,
        kind: &kind,
        served,
        at: &at,
    })?;
    let (unmodelled, strict): (Vec<_>, Vec<_>) = unknown
        .into_iter()
        .partition(|p| UNMODELLED.contains(&lines::pattern(p).as_str()));
    if let Some(first) = strict.first() {
        let fields: Vec<String> = strict
            .iter()
            .map(|p| format!("unknown field {:?}", lines::dotted(p)))
            .collect();
        return Err(format!(
            "Error from server (BadRequest): error when creating {source:?}: {kind} in version {:?} cannot be handled as a {kind}: strict decoding error: {} (line {})",
            served.rsplit('/').next().unwrap_or(served),
            fields.join(", "),
            at(first)
        ));
    }
    docs.push(Document {
        object,
        kind: resource.kind(),
        name,
        line: at(&[]),
        unmodelled: unmodelled.iter().map(|p| lines::dotted(p)).collect(),
        applied_json: serde_json::to_string(value).unwrap_or_default(),
    });
    Ok(())
}

/// Decode one object into its typed form, collecting the paths of fields the type does
/// not declare; a value of the wrong type is the API server's decode error, with its path.
fn decode<T: for<'de> Deserialize<'de>>(
    value: &Value,
    unknown: &mut Vec<Vec<lines::Seg>>,
    kind: &str,
    served: &str,
    at: &dyn Fn(&[lines::Seg]) -> usize,
) -> Result<T, String> {
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(lines::segments(&path));
    let ignored = serde_ignored::Deserializer::new(value, &mut note);
    serde_path_to_error::deserialize(ignored).map_err(|e| {
        let path: Vec<lines::Seg> = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(lines::Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(lines::Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        format!(
            "Error from server (BadRequest): {kind} in version {:?} cannot be handled as a {kind}: {}: {} (line {})",
            served.rsplit('/').next().unwrap_or(served),
            lines::dotted(&path),
            e.inner(),
            at(&path)
        )
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38: the YAML reader's own wording ("budget breached: Nodes { nodes: 250001 }",
    /// "duplicate mapping key: name, set DuplicateKeyPolicy in Options if acceptable",
    /// "non-finite float … rejected by the configured policy", "did not match any variant
    /// of untagged enum Quantity") reached the learner. Each says what was found and what
    /// is accepted, with the line.
    #[test]
    fn reader_errors_are_said_in_the_labs_words() {
        let head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n";
        let many = format!("{head}x: [{}]\n", vec!["1"; MAX_YAML_NODES + 1].join(","));
        let e = parse("m.yaml", &many).unwrap_err();
        assert!(
            e.contains("line 5: too many YAML nodes (250001, at most 250000"),
            "{e}"
        );
        let deep = format!("{head}x: {}{}\n", "[".repeat(70), "]".repeat(70));
        let e = parse("m.yaml", &deep).unwrap_err();
        assert!(e.contains("line 5: nesting deeper than 64 levels"), "{e}");
        let dup = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: {}\n  name: b\n";
        let e = parse("m.yaml", dup).unwrap_err();
        assert!(
            e.contains("yaml: line 6: mapping key \"name\" already defined at line 4 (a key appears once in a mapping"),
            "{e}"
        );
        let nan = format!("{head}spec:\n  x: .nan\n");
        let e = parse("m.yaml", &nan).unwrap_err();
        assert!(e.contains("line 6: .nan (not a number) is refused"), "{e}");
        let big = format!("{head}spec:\n  x: {}\n", "9".repeat(100_000));
        let e = parse("m.yaml", &big).unwrap_err();
        assert!(
            e.contains("line 6: the integer 9")
                && e.contains(
                    "(100000 digits) is too large: a number in a manifest must fit in 64 bits"
                ),
            "{}",
            &e[..e.len().min(400)]
        );
        assert!(e.len() < 1000, "the 100,000 digits are not echoed");
        let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: d\nspec:\n  resources:\n    requests:\n      storage: {a: 1}\n";
        let e = parse("m.yaml", pvc).unwrap_err();
        assert!(
            e.contains("expected a quantity: a number, or a number with a suffix such as 10Gi, 500Mi, 1.5G or 100m (line 8)"),
            "{e}"
        );
        assert!(
            !e.contains("untagged") && !e.contains("Options") && !e.contains("{ "),
            "{e}"
        );
    }

    #[test]
    fn splits_documents_and_keeps_lines() {
        let d = split_documents("a: 1\n---\nb: 2\n--- \n\nc: 3\n");
        assert_eq!(d.len(), 3);
        assert_eq!(d[1], (3, "b: 2\n"));
        assert_eq!(d[2].0, 4);
    }

    #[test]
    fn the_chapter_storage_class_reads() {
        let yaml = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: zonal-ssd\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nallowedTopologies:\n  - matchLabelExpressions:\n      - key: topology.ebs.csi.aws.com/zone\n        values: [\"us-east-1a\", \"us-east-1b\"]\nparameters:\n  type: gp3\n  iops: \"16000\"\n";
        let docs = parse("sc.yaml", yaml).unwrap();
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].name, "zonal-ssd");
        let Manifest::StorageClass(sc) = &docs[0].object else {
            panic!("not a StorageClass")
        };
        assert_eq!(sc.provisioner, "ebs.csi.aws.com");
        assert_eq!(sc.parameters["iops"].text(), "16000");
    }

    #[test]
    fn unknown_fields_are_refused_with_path_and_line() {
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    imagee: nginx\n";
        let e = parse("pod.yaml", yaml).unwrap_err();
        assert!(
            e.contains("unknown field \"spec.containers[0].imagee\"") && e.ends_with("(line 8)"),
            "{e}"
        );
    }

    #[test]
    fn unmodelled_fields_are_listed_not_refused() {
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  restartPolicy: Always\n  containers:\n  - name: app\n    image: nginx\n    command: [sleep, '3600']\n";
        let docs = parse("pod.yaml", yaml).unwrap();
        assert_eq!(
            docs[0].unmodelled,
            ["spec.containers[0].command", "spec.restartPolicy"]
        );
    }

    #[test]
    fn bad_yaml_names_the_line() {
        let e = parse(
            "x.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\na: [1, 2\n",
        )
        .unwrap_err();
        assert!(e.contains("yaml: line 5"), "{e}");
    }

    #[test]
    fn missing_kind_and_unknown_kinds() {
        let e = parse("x.yaml", "apiVersion: v1\nmetadata: {name: a}\n").unwrap_err();
        assert!(e.contains("kind not set"), "{e}");
        let e = parse(
            "x.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        )
        .unwrap_err();
        assert!(
            e.contains("no matches for kind \"ConfigMap\" in version \"v1\""),
            "{e}"
        );
        let e = parse(
            "x.yaml",
            "apiVersion: storage.k8s.io/v1beta1\nkind: StorageClass\nmetadata: {name: a}\n",
        )
        .unwrap_err();
        assert!(e.contains("storage.k8s.io/v1beta1"), "{e}");
    }

    #[test]
    fn wrong_types_name_the_path() {
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: nginx\n    ports:\n    - containerPort: http\n";
        let e = parse("pod.yaml", yaml).unwrap_err();
        assert!(
            e.contains("spec.containers[0].ports[0].containerPort") && e.ends_with("(line 10)"),
            "{e}"
        );
    }

    #[test]
    fn lists_and_json_read() {
        let json = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}]}"#;
        let docs = parse("l.json", json).unwrap();
        assert_eq!(docs[0].kind, ApiKind::Namespace);
    }
}
