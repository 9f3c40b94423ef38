//! `get -w` and `get --watch-only`: kubectl's watch of one kind (`pkg/cmd/get/get.go`,
//! `GetOptions.watch`), as the lab can run it.
//!
//! kubectl lists the objects (not with `--watch-only`), then prints every watch event the
//! API server sends until Ctrl-C. The lab's API server changes only while a command runs, so
//! a [`Watch`] is started by the `get` ([`Lab::watch_start`]) and kept by the lesson desk,
//! which after every later line asks for what changed since ([`Lab::watch_changes`]) and
//! prints it under that line. What prints follows kubectl and the API server:
//! - each event prints the object as that event carried it (the store's watch tap keeps
//!   the states, see `cluster::WatchTap`), a MODIFIED that changes no printed column
//!   included, and a DELETED prints the object as it was last;
//! - a label selector or a name filters as the API server's watch cache does: an object
//!   that starts to match is ADDED, one that stops matching is DELETED with its last
//!   matching state;
//! - rows are aligned as kubectl's tab writer with `RememberWidths` aligns them: a column
//!   only grows, and a row already printed stays as it was; the header prints once, with
//!   the first rows;
//! - an empty first listing prints nothing (kubectl's watch says no "No resources found");
//! - `--output-watch-events` puts an EVENT column first, its values padded to eight
//!   characters as kubectl's printer pads them (`ADDED   `);
//! - `-o yaml` prints each object as its own document, `---` between them; `-o json`
//!   each object on its own.

use super::listing::Sel;
use super::{Lab, LabError};
use crate::cluster::label_query::LabelQuery;
use crate::cluster::{ApiKind, EventType};
use crate::command::grammar::{GetArgs, OutputFormat};
use crate::render::{Line, Outcome, Role, Table};
use crate::resource::{self, PrintOne, Printed};
use std::collections::BTreeMap;

/// How a watch prints: `get`'s table (or `-o wide`'s), names, JSON or YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Table { wide: bool },
    Name,
    Json,
    Yaml,
}

impl Format {
    fn one(self) -> PrintOne {
        match self {
            Format::Table { wide } => PrintOne::Row { wide },
            Format::Name => PrintOne::Name,
            Format::Json | Format::Yaml => PrintOne::Json,
        }
    }
}

/// A `get -w` in progress: what it watches (one kind, a namespace or all, a name or a
/// label selector), how it prints, and how far it has read the API server's watch log.
/// Not lab state: `save` leaves it out, and it ends when the lab is replaced or rewound.
#[derive(Debug, Clone)]
pub struct Watch {
    kind: ApiKind,
    /// The namespace watched; `None` with `-A`.
    ns: Option<String>,
    name: Option<String>,
    query: Option<LabelQuery>,
    labels_column: bool,
    format: Format,
    /// `--output-watch-events`: an EVENT column first.
    events_column: bool,
    /// The index of the first watch event not yet printed.
    from: u64,
    /// The tab writer's remembered column widths.
    widths: Vec<usize>,
    /// Whether the header has printed.
    header_printed: bool,
    /// YAML documents printed (`---` goes before every one after the first).
    documents: u64,
    /// The objects that match now, by watch key, each as it printed last.
    matching: BTreeMap<String, Printed>,
}

impl Watch {
    /// The kind watched, as kubectl names its resource (`pods`).
    pub fn resource(&self) -> &'static str {
        resource::of(self.kind).names().plural
    }

    fn sel(&self) -> Sel<'_> {
        Sel {
            ns: self.ns.as_deref(),
            name: self.name.as_deref(),
            query: self.query.as_ref(),
            ns_column: self.ns.is_none() && resource::of(self.kind).namespaced(),
            prefix: None,
            labels_column: self.labels_column,
        }
    }

    /// Print these objects, each with its event type, as one flush of kubectl's writer
    /// (the first listing is one, every later event one of its own).
    fn print(&mut self, out: &mut Outcome, items: Vec<(EventType, Printed)>) {
        let kind = resource::of(self.kind);
        let mut table: Option<Table> = None;
        for (event, printed) in items {
            match printed {
                Printed::Row(mut cells) => {
                    let t = table.get_or_insert_with(|| {
                        let sel = self.sel();
                        let mut header = Vec::new();
                        if self.events_column {
                            header.push("EVENT");
                        }
                        header.extend(sel.header(kind.columns(self.wide())));
                        Table::new(&header)
                    });
                    if self.events_column {
                        cells.insert(0, (event_cell(event).to_string(), Role::Plain));
                    }
                    t.row_styled(cells);
                }
                Printed::Name(name) => out
                    .line(Line::new().push(format!("{}/{name}", kind.resource_name()), Role::Name)),
                Printed::Json(json) if self.format == Format::Json => {
                    out.block(json.trim_end(), Role::Json);
                }
                Printed::Json(json) => {
                    if self.documents > 0 {
                        out.plain("---");
                    }
                    self.documents += 1;
                    let value = serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
                    out.block(crate::render::yaml::to_yaml(&value).trim_end(), Role::Plain);
                }
            }
        }
        if let Some(t) = table.filter(|t| !t.is_empty()) {
            let header = !self.header_printed;
            self.header_printed = true;
            out.extend(t.render_remembering(&mut self.widths, header));
        }
    }

    fn wide(&self) -> bool {
        self.format == Format::Table { wide: true }
    }
}

/// The EVENT column's cell, padded as kubectl's `formatEventType` pads it.
fn event_cell(event: EventType) -> &'static str {
    match event {
        EventType::Added => "ADDED   ",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED ",
    }
}

/// Why a watch ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEnd {
    /// The lab it watched is gone or went back in time (`reset`, `load`, `rewind`, a
    /// lesson step started over).
    Replaced,
    /// More changes came in one line than the watch keeps
    /// (`cluster::store::WATCH_WINDOW`); kubectl's watch would end with "too old resource
    /// version".
    FellBehind,
}

impl Lab {
    /// `get … -w` / `--watch-only`: the first listing (not with `--watch-only`), and the
    /// watch that follows, which [`Lab::run_command`] hands over in
    /// its `Executed` for the desk to keep.
    pub(super) fn watch_start(
        &mut self,
        g: &GetArgs,
    ) -> Result<(Outcome, super::seen::Seen), LabError> {
        let format = match &g.output {
            None => Format::Table { wide: false },
            Some(OutputFormat::Wide) => Format::Table { wide: true },
            Some(OutputFormat::Name) => Format::Name,
            Some(OutputFormat::Json) => Format::Json,
            Some(OutputFormat::Yaml) => Format::Yaml,
            Some(other) => {
                return Err(LabError::msg(format!(
                    "-o {} does not print a watch in the lab: -w prints the table, -o wide, -o name, -o json or -o yaml",
                    other.name()
                )));
            }
        };
        if g.output_watch_events && !matches!(format, Format::Table { .. }) {
            return Err(LabError::msg(
                "the lab prints --output-watch-events as kubectl's EVENT column: with the table or -o wide",
            ));
        }
        // kubectl's builder asks for one resource type (`SingleResourceType`), then a
        // watch of one object or of the collection.
        let (kind, names) = match g.kind.split_once('/') {
            Some(_) => {
                let args: Vec<&str> = std::iter::once(g.kind.as_str())
                    .chain(g.names.iter().map(String::as_str))
                    .collect();
                let pairs = super::listing::resource_name_pairs(&args)?;
                let kinds: Vec<_> = pairs
                    .iter()
                    .map(|(k, _)| resource::resolve(k).map(|r| r.kind()))
                    .collect::<Result<_, _>>()?;
                if kinds.iter().any(|k| *k != kinds[0]) {
                    return Err(single_type());
                }
                let names: Vec<String> = pairs.into_iter().map(|(_, n)| n).collect();
                (kinds[0], names)
            }
            None if g.kind.contains(',') => return Err(single_type()),
            None if super::events_view::names_events(&g.kind) => {
                return Err(LabError::msg(
                    "the lab's events come from its event recorder, not the API server's watch: `get events` (or `show events`) lists them after a command",
                ));
            }
            None => (resource::resolve(&g.kind)?.kind(), g.names.clone()),
        };
        // Every other rule of `get` (a name with -A or -l, a selector that does not parse,
        // a missing object) is checked by `get` itself.
        // kubectl's watch prints nothing before such an error.
        self.get_seen(&GetArgs {
            watch: false,
            watch_only: false,
            output_watch_events: false,
            output: None,
            ..g.clone()
        })
        .map_err(|e| LabError {
            output: Outcome::empty(),
            ..e
        })?;
        if names.len() > 1 {
            return Err(LabError::msg(format!(
                "watch is only supported on individual resources and resource collections, but {} resources were found",
                names.len()
            )));
        }
        let query = g.label_query()?;
        let mut watch = Watch {
            kind,
            ns: (!g.all_namespaces).then(|| g.ns.clone().unwrap_or_else(|| "default".into())),
            name: names.into_iter().next(),
            query,
            labels_column: g.show_labels,
            format,
            events_column: g.output_watch_events,
            from: self.cluster.revs.next_event(),
            widths: Vec::new(),
            header_printed: false,
            documents: 0,
            matching: BTreeMap::new(),
        };
        let kept = resource::of(kind).print_each(self, &watch.sel(), format.one());
        let objects = resource::of(kind).kept_refs(self, &watch.sel());
        let mut out = Outcome::empty();
        if !g.watch_only {
            let first = kept
                .iter()
                .map(|(_, p)| (EventType::Added, p.clone()))
                .collect();
            watch.print(&mut out, first);
        }
        watch.matching = kept.into_iter().collect();
        self.cluster.revs.tap = Some(crate::cluster::WatchTap::new(kind));
        self.watch_started = Some(watch);
        let seen = super::seen::Seen::Got {
            objects: if g.watch_only { Vec::new() } else { objects },
            format: g.output.as_ref().map_or("table", OutputFormat::name),
        };
        Ok((out, seen))
    }

    /// What changed since the watch last printed, as kubectl prints it (nothing when
    /// nothing it watches changed); why it cannot go on when the lab it watched was
    /// replaced or rewound, or it fell behind.
    pub fn watch_changes(&mut self, w: &mut Watch) -> Result<Outcome, WatchEnd> {
        let revs = &mut self.cluster.revs;
        if revs.next_event() < w.from {
            return Err(WatchEnd::Replaced);
        }
        let Some(tap) = revs.tap.as_mut().filter(|t| t.kind() == w.kind) else {
            return Err(WatchEnd::Replaced);
        };
        let states = tap.take_from(w.from).map_err(|()| WatchEnd::FellBehind)?;
        w.from = revs.next_event();
        let kind = resource::of(w.kind);
        let how = w.format.one();
        let mut out = Outcome::empty();
        for (_, event, state) in states {
            let Some((key, now)) = kind.print_state(self, state.as_ref(), &w.sel(), how) else {
                continue;
            };
            let was = w.matching.remove(&key);
            let printed = match (event, now, was) {
                (EventType::Deleted, now, Some(was)) => {
                    Some((EventType::Deleted, now.unwrap_or(was)))
                }
                (EventType::Deleted, _, None) => None,
                (_, Some(now), was) => {
                    w.matching.insert(key, now.clone());
                    let event = if was.is_some() {
                        EventType::Modified
                    } else {
                        EventType::Added
                    };
                    Some((event, now))
                }
                // It matched and no longer does: the watch cache sends DELETED with the
                // state that matched.
                (_, None, Some(was)) => Some((EventType::Deleted, was)),
                (_, None, None) => None,
            };
            if let Some(p) = printed {
                w.print(&mut out, vec![p]);
            }
        }
        Ok(out)
    }

    /// Stop keeping the watched kind's states (the watch ended).
    pub fn watch_stop(&mut self) {
        self.cluster.revs.tap = None;
    }
}

/// kubectl's builder error for several kinds in a watch.
fn single_type() -> LabError {
    LabError::msg("you may only specify a single resource type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_keeps_the_watched_kind_while_the_watch_runs() {
        let mut lab = Lab::new();
        let ran = lab.run_command(
            "get pods -w",
            crate::command::parse("get pods -w").unwrap().unwrap(),
        );
        let mut w = ran.started_watch.expect("a watch");
        lab.execute("pvc create data --size 1Gi").unwrap();
        lab.execute("pod create a").unwrap();
        let tap = lab.cluster.revs.tap.as_ref().expect("a tap");
        assert_eq!(tap.kind(), ApiKind::Pod);
        let out = lab.watch_changes(&mut w).unwrap().to_text();
        // ADDED, bound, sandbox under way, Running: four events, four rows, header first.
        assert_eq!(out.lines().count(), 5, "{out}");
        assert!(
            out.starts_with("NAME   READY   STATUS    RESTARTS   AGE\na      0/1     Pending"),
            "{out}"
        );
        // Read: the next call has nothing new.
        assert_eq!(lab.watch_changes(&mut w).unwrap().to_text(), "");
        lab.watch_stop();
        assert!(lab.cluster.revs.tap.is_none());
        assert_eq!(lab.watch_changes(&mut w).unwrap_err(), WatchEnd::Replaced);
    }
}
