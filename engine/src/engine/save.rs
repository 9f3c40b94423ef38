//! `save FILE` / `load FILE`: the whole lab as a versioned JSON file.
//!
//! The lab is deterministic, so its state is a function of how it started and the
//! commands it ran. A save file holds exactly that, plus a snapshot of the state to read
//! and to check against:
//!
//! ```json
//! {
//!   "format": "cni-csi-lab-save",
//!   "version": 1,
//!   "lab_version": "0.1.0",
//!   "start": "default",
//!   "journal": [ { "line": "cni conf load my.conflist", "files": { "my.conflist": "…" } },
//!                { "line": "cni add c1 --node node-9", "fails": true } ],
//!   "state": { "clock": 0, "mode": "auto", "objects": { "pods": … }, "nodes": { … }, … },
//!   "digest": "sha256:…"
//! }
//! ```
//!
//! `start` is `default` (`Lab::new()`) or `empty` (`Lab::empty()`; presets are journaled
//! lines on it). `journal` is [`super::journal`]'s record; `files` inlines what a command
//! read, so a replay never touches the disk. `state` is every object as `get KIND -o json`
//! prints it, each node's host-local files, net.d, sandboxes, routes and iptables, the
//! volumes view, kubelet and controller bookkeeping, the clock, the mode and the sizes and
//! a digest of the call and wire logs. `digest` is the SHA-256 of `state` in canonical
//! form (keys sorted, no spaces).
//!
//! `load` parses and validates the file (a newer `version` is refused with an "upgrade
//! the lab" message), checks the digest against the state, replays the journal on a fresh
//! lab (each entry must fail or succeed as recorded), recomputes the snapshot and compares
//! digests, and only then replaces the lab: on any error the current lab is untouched.
//! `save` does the same replay before writing, so it never writes a file that would not
//! load, and writes atomically (temporary file + rename). Lesson progress is not part of a
//! save; the lesson desk (`Desk` in the lessons) leaves a lesson in progress on `load`,
//! as on `reset`.

use super::journal::{Entry, Start};
use super::{Lab, LabError, Mode};
use crate::command::grammar::{ShowCmd, TableArg};
use crate::command::{self, Command, ParseError};
use crate::render::{Line, Outcome, Role};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The `format` every save file carries.
pub(crate) const FORMAT: &str = "cni-csi-lab-save";

/// The save format this lab writes and the newest it reads.
pub const VERSION: u64 = 1;

/// A save file, parsed and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveFile {
    /// The crate version that wrote it.
    pub lab_version: String,
    /// How the lab started.
    pub start: Start,
    /// Every command that changed the lab.
    pub journal: Vec<Entry>,
    /// The state snapshot.
    pub state: Value,
    /// `sha256:<hex>` of the canonical state.
    pub digest: String,
}

/// Why a save file was refused: the reason, and where in the file when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveError {
    /// 1-based line and column of a JSON syntax error.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub reason: String,
}

impl SaveError {
    fn new(reason: impl Into<String>) -> Self {
        SaveError {
            at: None,
            reason: reason.into(),
        }
    }

    /// `FILE:LINE:COLUMN: reason` or `FILE: reason`.
    pub(crate) fn in_file(&self, file: &str) -> String {
        match self.at {
            Some((l, c)) => format!("{file}:{l}:{c}: {}", self.reason),
            None => format!("{file}: {}", self.reason),
        }
    }
}

impl SaveFile {
    /// The file's text: pretty JSON (one journal entry per few lines), ending in a newline.
    pub fn to_json(&self) -> String {
        /// The file's top level, fields in the order a reader wants them.
        #[derive(serde::Serialize)]
        struct Out<'a> {
            format: &'static str,
            version: u64,
            lab_version: &'a str,
            start: &'static str,
            journal: &'a [Entry],
            state: &'a Value,
            digest: &'a str,
        }
        let out = Out {
            format: FORMAT,
            version: VERSION,
            lab_version: &self.lab_version,
            start: self.start.name(),
            journal: &self.journal,
            state: &self.state,
            digest: &self.digest,
        };
        // Serializing strings, numbers and Values cannot fail.
        let mut s = serde_json::to_string_pretty(&out).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parse and validate a save file's text: JSON syntax (with line and column), the
    /// format and version, then every field (with its JSON path).
    pub fn parse(text: &str) -> Result<SaveFile, SaveError> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            let what = e.to_string();
            let what = what
                .rsplit_once(" at line ")
                .map(|(w, _)| w.to_string())
                .unwrap_or(what);
            let hint = if e.is_eof() {
                " (the file ends too early: truncated?)"
            } else {
                ""
            };
            SaveError {
                at: Some((e.line(), e.column())),
                reason: format!("not valid JSON: {what}{hint}"),
            }
        })?;
        let Value::Object(obj) = v else {
            return Err(SaveError::new(format!(
                "not a cni-csi-lab save file: expected a JSON object with \"format\": \"{FORMAT}\", found {}",
                crate::util::text::json_kind(&v)
            )));
        };
        match obj.get("format") {
            Some(Value::String(f)) if f == FORMAT => {}
            Some(Value::String(f)) => {
                return Err(SaveError::new(format!(
                    "not a cni-csi-lab save file: \"format\" is {f:?}, expected \"{FORMAT}\""
                )));
            }
            Some(other) => return Err(type_error("format", "a string", other)),
            None => {
                return Err(SaveError::new(format!(
                    "not a cni-csi-lab save file: no \"format\": \"{FORMAT}\" field"
                )));
            }
        }
        let version = match obj.get("version") {
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
            Some(other) => return Err(type_error("version", "a whole number", other)),
            None => return Err(missing("version")),
        };
        if version > VERSION {
            return Err(SaveError::new(format!(
                "this save was written by a newer cni-csi-lab (format {version}); upgrade the lab to load it (this lab reads format {VERSION})"
            )));
        }
        if version == 0 {
            return Err(SaveError::new(format!(
                "version: 0 is not a save format (this lab reads format {VERSION})"
            )));
        }
        let lab_version = string_field(&obj, "lab_version")?;
        let start = match string_field(&obj, "start")?.as_str() {
            "default" => Start::Default,
            "empty" => Start::Empty,
            other => {
                return Err(SaveError::new(format!(
                    "start: unknown start {other:?} (expected \"default\" or \"empty\")"
                )));
            }
        };
        let journal = match obj.get("journal") {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, e)| entry(i, e))
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => return Err(type_error("journal", "an array", other)),
            None => return Err(missing("journal")),
        };
        let state = match obj.get("state") {
            Some(s @ Value::Object(_)) => s.clone(),
            Some(other) => return Err(type_error("state", "an object", other)),
            None => return Err(missing("state")),
        };
        let digest = string_field(&obj, "digest")?;
        if let Some(k) = obj.keys().find(|k| {
            ![
                "format",
                "version",
                "lab_version",
                "start",
                "journal",
                "state",
                "digest",
            ]
            .contains(&k.as_str())
        }) {
            return Err(SaveError::new(format!("unknown field {k:?}")));
        }
        Ok(SaveFile {
            lab_version,
            start,
            journal,
            state,
            digest,
        })
    }
}

fn type_error(path: &str, expected: &str, found: &Value) -> SaveError {
    SaveError::new(format!(
        "{path}: expected {expected}, found {}",
        crate::util::text::json_kind(found)
    ))
}

fn missing(path: &str) -> SaveError {
    SaveError::new(format!("{path}: missing (every save file has it)"))
}

fn string_field(obj: &Map<String, Value>, key: &str) -> Result<String, SaveError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(type_error(key, "a string", other)),
        None => Err(missing(key)),
    }
}

/// One journal entry, checked field by field.
fn entry(i: usize, v: &Value) -> Result<Entry, SaveError> {
    let path = format!("journal[{i}]");
    let Value::Object(o) = v else {
        return Err(type_error(&path, "an object", v));
    };
    let line = match o.get("line") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(type_error(&format!("{path}.line"), "a string", other)),
        None => return Err(missing(&format!("{path}.line"))),
    };
    let mut files = BTreeMap::new();
    match o.get("files") {
        None => {}
        Some(Value::Object(m)) => {
            for (name, text) in m {
                match text {
                    Value::String(t) => {
                        files.insert(name.clone(), t.clone());
                    }
                    other => {
                        return Err(type_error(
                            &format!("{path}.files[{name:?}]"),
                            "a string (the file's content)",
                            other,
                        ));
                    }
                }
            }
        }
        Some(other) => return Err(type_error(&format!("{path}.files"), "an object", other)),
    }
    let fails = match o.get("fails") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(type_error(&format!("{path}.fails"), "a boolean", other)),
    };
    // A view that left a wire record (no event); the replay classifies the line again.
    let view = match o.get("view") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(type_error(&format!("{path}.view"), "a boolean", other)),
    };
    if let Some(k) = o
        .keys()
        .find(|k| !["line", "files", "fails", "view"].contains(&k.as_str()))
    {
        return Err(SaveError::new(format!("{path}: unknown field {k:?}")));
    }
    Ok(Entry {
        line: line.into(),
        files: (!files.is_empty()).then(|| Box::new(files)),
        fails,
        view,
    })
}

/// Canonical JSON: object keys sorted, no whitespace (what the digest hashes).
pub(crate) fn canonical(v: &Value) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(x) = m.get(k) {
                    write_canonical(x, out);
                }
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `sha256:<hex>` of the canonical form of a state snapshot.
pub fn digest(state: &Value) -> String {
    let h = Sha256::digest(canonical(state).as_bytes());
    let mut s = String::from("sha256:");
    for b in h {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The first place two snapshots differ, as `path: the journal gives X, the file says Y`.
pub fn first_difference(path: &str, replayed: &Value, stored: &Value) -> Option<String> {
    match (replayed, stored) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => first_difference(&p, x, y),
                    (Some(_), None) => {
                        Some(format!("{p}: the journal gives it, the file lacks it"))
                    }
                    (None, Some(_)) => Some(format!("{p}: the file has it, the journal does not")),
                    (None, None) => None,
                }
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            let diff = a
                .iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(&format!("{path}[{i}]"), x, y));
            diff.or_else(|| {
                (a.len() != b.len()).then(|| {
                    format!(
                        "{path}: the journal gives {} items, the file says {}",
                        a.len(),
                        b.len()
                    )
                })
            })
        }
        (a, b) if a == b => None,
        (a, b) => Some(format!(
            "{path}: the journal gives {}, the file says {}",
            short(a),
            short(b)
        )),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

fn text_lines(o: &Outcome) -> Value {
    Value::Array(
        o.to_text()
            .lines()
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

fn key_name(k: &(String, String)) -> String {
    if k.0.is_empty() {
        k.1.clone()
    } else {
        format!("{}/{}", k.0, k.1)
    }
}

impl Lab {
    /// The state snapshot a save file carries (see the module docs). Reading only: it runs
    /// views, which change nothing.
    pub fn state_snapshot(&mut self) -> Value {
        let mut objects = Map::new();
        // Every kind, under its plural resource name (`pods`).
        for kind in crate::resource::REGISTRY.iter().map(|r| r.names().plural) {
            let args = crate::command::grammar::GetArgs {
                kind: kind.to_string(),
                names: Vec::new(),
                output: Some(crate::command::grammar::OutputFormat::Json),
                ns: None,
                all_namespaces: true,
                selector: None,
                field_selector: None,
                sort_by: None,
                show_labels: false,
                watch: false,
                watch_only: false,
                output_watch_events: false,
            };
            let v = match self.get(&args) {
                Ok(o) => {
                    let text = o.to_text();
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
                Err(e) => Value::String(format!("error: {}", e.message)),
            };
            objects.insert(kind.to_string(), v);
        }
        let names: Vec<String> = self.nodes.keys().cloned().collect();
        let mut nodes = Map::new();
        for n in names {
            let routes = self
                .show(ShowCmd::Routes {
                    node: Some(n.clone()),
                    pod: None,
                    real: false,
                })
                .map(|o| text_lines(&o))
                .unwrap_or(Value::Null);
            let iptables = self
                .show(ShowCmd::Iptables {
                    node: n.clone(),
                    v6: false,
                    table: TableArg::Nat,
                    real: false,
                })
                .map(|o| text_lines(&o))
                .unwrap_or(Value::Null);
            let Some(rt) = self.nodes.get(&n) else {
                continue;
            };
            let host_local: Map<String, Value> = rt
                .host
                .ipam
                .iter()
                .map(|(net, store)| {
                    let files: Map<String, Value> = store
                        .files()
                        .into_iter()
                        .map(|(f, c)| (f, Value::String(c)))
                        .collect();
                    (net.to_string(), Value::Object(files))
                })
                .collect();
            let sandboxes: Map<String, Value> = rt
                .sandboxes
                .iter()
                .map(|(k, s)| {
                    (
                        k.to_string(),
                        json!({"id": s.id(), "netns": s.netns(), "ip": s.ip()}),
                    )
                })
                .collect();
            nodes.insert(
                n.clone(),
                json!({
                    "net.d": rt.confdir.files.keys().collect::<Vec<_>>(),
                    "active": rt.confdir.active().map(|(f, _)| f).ok(),
                    "network": rt.network().as_ref().err(),
                    "host-local": host_local,
                    "sandboxes": sandboxes,
                    "routes": routes,
                    "iptables": iptables,
                }),
            );
        }
        let volumes = self
            .show_volumes(None)
            .map(|o| text_lines(&o))
            .unwrap_or(Value::Null);
        let mut logs = Sha256::new();
        for (_, e) in self.calls.iter() {
            for span in super::views::call_line(e).spans {
                logs.update(span.text.as_bytes());
            }
            logs.update(b"\n");
        }
        for (seq, w) in self.wire.iter() {
            logs.update(super::views::wire_detail(seq, w).to_text().as_bytes());
        }
        let logs_digest: String =
            logs.finalize()
                .iter()
                .fold(String::from("sha256:"), |mut s, b| {
                    let _ = write!(s, "{b:02x}");
                    s
                });
        let work: Map<String, Value> = self
            .pod_workers()
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .map(|(k, w)| {
                (
                    key_name(k),
                    json!({"attempts": w.attempts, "retryAt": w.retry_at, "lastError": w.last_error}),
                )
            })
            .collect();
        // kubelet's volume operations in backoff, by node and operation key; absent when
        // there are none (as in every save written before they existed).
        let volume_ops: Map<String, Value> = self
            .kubelets
            .iter()
            .flat_map(|(node, k)| {
                k.volume_ops
                    .retry_times()
                    .map(move |(key, at)| (format!("{node} {}", key.go_text()), json!(at)))
            })
            .collect();
        let mut kubelet = json!({
            "dirty": self.dirty.iter().map(key_name).collect::<Vec<_>>(),
            "work": work,
        });
        if !volume_ops.is_empty() {
            kubelet["volumeOperations"] = Value::Object(volume_ops);
        }
        json!({
            "clock": self.clock,
            "mode": match self.mode { Mode::Auto => "auto", Mode::Step => "step" },
            "objects": objects,
            "revisions": {
                "resourceVersion": self.cluster.revs.resource_version,
                "created": self.cluster.revs.created,
                "nextWatchEvent": self.cluster.revs.next_event,
            },
            "nodes": nodes,
            "volumes": volumes,
            "kubelet": kubelet,
            "backoff": self.storage.retry_times(),
            "logs": {
                "calls": self.calls.len(),
                "callsNextSeq": self.calls.next_seq(),
                "wire": self.wire.len(),
                "wireNextSeq": self.wire.next_seq(),
                "digest": logs_digest,
            },
        })
    }

    /// This lab as a save file.
    pub fn to_save(&mut self) -> SaveFile {
        let state = self.state_snapshot();
        SaveFile {
            lab_version: env!("CARGO_PKG_VERSION").to_string(),
            start: self.journal.start,
            journal: self.journal.entries.iter().cloned().collect(),
            digest: digest(&state),
            state,
        }
    }

    /// Rebuild a lab from a save: check the digest, replay the journal on a fresh lab of
    /// its start (each entry must succeed or fail as recorded), and check the rebuilt
    /// state against the snapshot.
    pub fn from_save(save: &SaveFile) -> Result<Lab, SaveError> {
        let stated = digest(&save.state);
        if stated != save.digest {
            return Err(SaveError::new(format!(
                "the save file's state does not match its digest (damaged or edited by hand): \"digest\" is {}, the state hashes to {stated}",
                save.digest
            )));
        }
        let other_version = if save.lab_version == env!("CARGO_PKG_VERSION") {
            String::new()
        } else {
            format!(
                " (it was written by cni-csi-lab {}; this is {}, which may behave differently)",
                save.lab_version,
                env!("CARGO_PKG_VERSION")
            )
        };
        // A replay is the model's alone, with no edges: the journal holds what its files
        // said, and real mode (`--real-cni`) never runs plugins for it.
        let mut lab = save.start.lab();
        for (i, e) in save.journal.iter().enumerate() {
            let where_ = format!("journal[{i}] `{}`", e.line);
            match command::parse(command::strip_comment(&e.line)) {
                Ok(Some(cmd)) => {
                    let class = super::journal::classify(&cmd);
                    if class == super::journal::Class::Restart || matches!(cmd, Command::Save(_)) {
                        return Err(SaveError::new(format!(
                            "{where_}: not a command a save replays (reset, load, save and lesson commands are never journaled)"
                        )));
                    }
                }
                Ok(None) => {
                    return Err(SaveError::new(format!("{where_}: an empty command")));
                }
                Err(ParseError::Help(_)) => {
                    return Err(SaveError::new(format!(
                        "{where_}: a help request, not a command"
                    )));
                }
                Err(ParseError::Invalid(m)) => {
                    let m = m.strip_prefix("error: ").unwrap_or(&m);
                    let m = m.lines().next().unwrap_or_default();
                    return Err(SaveError::new(format!("{where_}: does not parse: {m}")));
                }
            }
            lab.journal.replay_files(Some(e.files_read()));
            let result = lab.execute(&e.line);
            lab.journal.replay_files(None);
            match (result, e.fails) {
                (Err(err), false) => {
                    return Err(SaveError::new(format!(
                        "{where_} failed on replay: {}{other_version}",
                        err.message
                    )));
                }
                (Ok(_), true) => {
                    return Err(SaveError::new(format!(
                        "{where_} succeeded on replay, but the save records it as failing{other_version}"
                    )));
                }
                _ => {}
            }
        }
        let state = lab.state_snapshot();
        if digest(&state) != save.digest {
            let diff = first_difference("state", &state, &save.state)
                .unwrap_or_else(|| "the digests differ".into());
            return Err(SaveError::new(format!(
                "the save file's state does not match its journal (damaged or edited by hand): {diff}{other_version}"
            )));
        }
        Ok(lab)
    }

    /// Read, validate and replay a save file. Errors name the file (and line and column
    /// for JSON syntax).
    pub fn read_save(files: &dyn crate::edge::Files, file: &str) -> Result<Lab, String> {
        let bytes = files
            .read(file, "a save file", crate::edge::SCRIPT_CAP)
            .map_err(|e| format!("{file}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "{file}: not UTF-8 text (invalid byte at offset {}); not a save file",
                e.utf8_error().valid_up_to()
            )
        })?;
        let save = SaveFile::parse(&text).map_err(|e| e.in_file(file))?;
        Lab::from_save(&save).map_err(|e| e.in_file(file))
    }

    /// `save FILE`: check that the journal rebuilds this lab, then write atomically.
    pub(crate) fn save_cmd(&mut self, file: &str) -> Result<Outcome, LabError> {
        let save = self.to_save();
        if let Err(e) = Lab::from_save(&save) {
            return Err(LabError::msg(format!(
                "cannot save {file}: the journal does not rebuild this lab ({}); nothing was written",
                e.reason
            )));
        }
        self.edges
            .files
            .write(file, save.to_json().as_bytes())
            .map_err(|e| {
                LabError::msg(format!(
                    "cannot save {file}: {e}; nothing was written (an existing file is kept)"
                ))
            })?;
        let mut out = Outcome::empty();
        out.line(Line::new().push(format!("saved {file}"), Role::Good).push(
            format!(
                "  ({} commands from the {} start, checked by replaying them)",
                save.journal.len(),
                save.start.name(),
            ),
            Role::Dim,
        ));
        Ok(out)
    }

    /// `load FILE`: replace the lab with a saved one, or change nothing.
    pub(crate) fn load_cmd(&mut self, file: &str) -> Result<Outcome, LabError> {
        let lab = Lab::read_save(&*self.edges.files, file)
            .map_err(|e| LabError::msg(format!("cannot load {e}; the lab is unchanged")))?;
        let mut out = Outcome::empty();
        let replayed = lab.journal.entries.len();
        // Real mode: the old cluster's namespaces go; the loaded one was replayed by the
        // model alone, and its later CNI calls run the real plugins too.
        self.replace_with(lab);
        let real = self.edges.real.is_some();
        out.line(Line::new().push(format!("loaded {file}"), Role::Good).push(
            format!(
                "  ({replayed} commands replayed; {} nodes · {} pods · t={})",
                self.cluster.nodes.len(),
                self.cluster.pods.len(),
                self.clock.secs_text()
            ),
            Role::Dim,
        ));
        if real {
            out.line(Line::styled(
                "real-cni: the loaded pods were replayed by the model only (no real namespaces); CNI calls from now on run the real plugins too",
                Role::Dim,
            ));
        }
        Ok(out)
    }
}
