//! `get events` (`ev`, `event`): the Events the components recorded, as kubectl's event
//! printer lists them (`pkg/printers/internalversion/printers.go`, `printEvent`): LAST
//! SEEN, TYPE, REASON, OBJECT (`kind/name`, the kind lower-cased), MESSAGE; NAMESPACE
//! first with `-A`.
//!
//! Order: without `--sort-by`, the API server's, which lists a namespace's events by key,
//! and an event's name is its object's name and a timestamp (`web.17f3a…`): so by
//! namespace, then object name, then time. `--sort-by` takes kubectl's JSONPath to a field
//! (`.lastTimestamp`, `.firstTimestamp`, `.metadata.creationTimestamp`, `.reason`,
//! `.type`, `.involvedObject.name`) and sorts stably; timestamps are whole seconds, as the
//! API server keeps them. `--field-selector` takes the fields the API server selects
//! events by (`involvedObject.kind=Pod`, `involvedObject.name=web`, `type=Warning`,
//! `reason=…`, `source=…`, `involvedObject.namespace=…`), with `=`, `==` and `!=`, ANDed by
//! commas.

use super::seen::{EventSeen, Seen};
use super::{Lab, LabError};
use crate::cluster::ObjectRef;

use crate::command::grammar::GetArgs;
use crate::record::Level;
use crate::render::{Outcome, Role, Table};
use crate::util::time::Millis;
use std::cmp::Ordering;

/// Whether a kind word names events (`kubectl api-resources`: `events`, `event`, `ev`).
pub(super) fn names_events(word: &str) -> bool {
    ["events", "event", "ev"]
        .iter()
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// One event as `get events` reads it.
struct Row {
    /// The namespace it is in: its object's (`default` for a cluster-scoped object, where
    /// kubelet and the controllers record them).
    namespace: String,
    /// When it was first recorded (`firstTimestamp`).
    at: Millis,
    /// When it was last recorded (`lastTimestamp`: a repeat updates the Event).
    last: Millis,
    /// What it is about.
    object: ObjectRef,
    /// Its source component (`kubelet`, `default-scheduler`).
    source: String,
    /// Type, reason, message.
    seen: EventSeen,
}

impl Row {
    /// The event's `type`.
    fn type_name(&self) -> &'static str {
        if self.seen.warning {
            "Warning"
        } else {
            "Normal"
        }
    }
}

/// A field of an event that `--field-selector` and `--sort-by` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Kind,
    Name,
    Namespace,
    Reason,
    Type,
    Source,
    /// `firstTimestamp`, `metadata.creationTimestamp`: when the Event was made.
    Time,
    /// `lastTimestamp`: when it was last seen (a repeat updates it).
    Last,
}

impl Field {
    /// The text the API server compares a selector's value with.
    fn text(self, r: &Row) -> String {
        match self {
            Field::Kind => r.object.kind.name().to_string(),
            Field::Name => r.object.name.clone(),
            Field::Namespace => r.namespace.clone(),
            Field::Reason => r.seen.reason.to_string(),
            Field::Type => r.type_name().to_string(),
            Field::Source => r.source.clone(),
            Field::Time => r.at.whole_secs().to_string(),
            Field::Last => r.last.whole_secs().to_string(),
        }
    }

    /// The order `--sort-by` puts two events in.
    fn compare(self, a: &Row, b: &Row) -> Ordering {
        match self {
            Field::Time => a.at.whole_secs().cmp(&b.at.whole_secs()),
            Field::Last => a.last.whole_secs().cmp(&b.last.whole_secs()),
            _ => self.text(a).cmp(&self.text(b)),
        }
    }
}

/// The field labels the API server selects events by (the core Event strategy's
/// selectable fields), as the lab reads them.
const SELECTABLE: &[(&str, Field)] = &[
    ("involvedObject.kind", Field::Kind),
    ("involvedObject.name", Field::Name),
    ("involvedObject.namespace", Field::Namespace),
    ("metadata.namespace", Field::Namespace),
    ("reason", Field::Reason),
    ("reportingComponent", Field::Source),
    ("source", Field::Source),
    ("type", Field::Type),
];

/// The fields `--sort-by` sorts events by.
const SORTABLE: &[(&str, Field)] = &[
    ("lastTimestamp", Field::Last),
    ("firstTimestamp", Field::Time),
    ("eventTime", Field::Time),
    ("metadata.creationTimestamp", Field::Time),
    ("metadata.namespace", Field::Namespace),
    ("reason", Field::Reason),
    ("type", Field::Type),
    ("involvedObject.kind", Field::Kind),
    ("involvedObject.name", Field::Name),
    ("source.component", Field::Source),
];

/// One term of a field selector: the field, whether it must equal (or differ), the value.
type Term = (Field, bool, String);

/// A field selector, by apimachinery's `fields.ParseSelector` rules (`k=v`, `k==v`,
/// `k!=v`, ANDed by commas), its fields checked as the API server checks them.
fn parse_field_selector(text: &str) -> Result<Vec<Term>, LabError> {
    let mut terms = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (key, equal, value) = if let Some((k, v)) = part.split_once("!=") {
            (k, false, v)
        } else if let Some((k, v)) = part.split_once("==") {
            (k, true, v)
        } else if let Some((k, v)) = part.split_once('=') {
            (k, true, v)
        } else {
            return Err(bad_request(
                text,
                &format!("invalid selector: '{text}'; can't understand '{part}'"),
            ));
        };
        let Some((_, field)) = SELECTABLE.iter().find(|(name, _)| *name == key) else {
            return Err(bad_request(
                text,
                &format!("field label not supported: {key}"),
            ));
        };
        terms.push((*field, equal, value.to_string()));
    }
    Ok(terms)
}

/// The API server's BadRequest for a field selector, as kubectl wraps it.
fn bad_request(selector: &str, why: &str) -> LabError {
    LabError::msg(format!(
        "Error from server (BadRequest): Unable to find \"/v1, Resource=events\" that match label selector \"\", field selector {selector:?}: {why}"
    ))
}

/// The field `--sort-by` names: kubectl's JSONPath (`.lastTimestamp` or
/// `{.lastTimestamp}`), or kubectl's error for a path the events do not have.
fn parse_sort_by(text: &str) -> Result<Field, LabError> {
    let path = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text);
    let field = path.strip_prefix('.').unwrap_or(path);
    SORTABLE
        .iter()
        .find(|(name, _)| *name == field)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            let names: Vec<String> = SORTABLE.iter().map(|(n, _)| format!(".{n}")).collect();
            LabError::msg(format!(
                "couldn't find any field with path \"{{.{field}}}\" in the list of objects\nthe lab sorts events by {}",
                names.join(", ")
            ))
        })
}

impl Lab {
    /// `get events [-n NS | -A] [--field-selector F] [--sort-by PATH]`.
    pub(super) fn get_events(&self, g: &GetArgs) -> Result<(Outcome, Seen), LabError> {
        if !g.names.is_empty() {
            return Err(LabError::msg(
                "the lab's events have no names of their own: list them with `get events`, and pick one object's with --field-selector involvedObject.name=NAME",
            ));
        }
        if let Some(o) = &g.output {
            return Err(LabError::msg(format!(
                "-o {} is not offered for events in the lab: `get events` prints kubectl's table (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE)",
                o.name()
            )));
        }
        let terms = match &g.field_selector {
            Some(f) => parse_field_selector(f)?,
            None => Vec::new(),
        };
        let sort = g.sort_by.as_deref().map(parse_sort_by).transpose()?;
        // Events carry no labels: a selector keeps them only when it asks for nothing.
        let query = g.label_query()?;
        let keep_labels = query.is_none_or(|q| q.matches(&Default::default()));
        let ns = g.ns.as_deref().unwrap_or("default");
        // The API server's Events: each repeat folded into the first with its count.
        let mut rows: Vec<Row> = crate::record::fold_events(self.calls.all_events())
            .into_iter()
            .map(|f| {
                let (e, ev) = (f.first, f.event);
                let mut message = String::new();
                f.write_message(&mut message);
                let namespace = if ev.object.namespace.is_empty() {
                    "default".to_string()
                } else {
                    ev.object.namespace.clone()
                };
                Row {
                    namespace,
                    at: e.tick(),
                    last: f.last,
                    object: ev.object.clone(),
                    source: e.event_source().to_string(),
                    seen: EventSeen {
                        warning: e.level() == Level::Warning,
                        reason: f.reason(),
                        message,
                    },
                }
            })
            .filter(|r| keep_labels && (g.all_namespaces || r.namespace == ns))
            .filter(|r| {
                terms
                    .iter()
                    .all(|(field, equal, value)| (field.text(r) == *value) == *equal)
            })
            .collect();
        // The API server's order: by key (namespace, then the event's name, which starts
        // with its object's name and goes on with the time).
        rows.sort_by(|a, b| {
            (&a.namespace, &a.object.name, a.at).cmp(&(&b.namespace, &b.object.name, b.at))
        });
        if let Some(field) = sort {
            rows.sort_by(|a, b| field.compare(a, b));
        }
        let mut out = Outcome::empty();
        if rows.is_empty() {
            out.plain(if g.all_namespaces {
                "No resources found".to_string()
            } else {
                format!("No resources found in {ns} namespace.")
            });
        } else {
            let header = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"];
            let mut t = if g.all_namespaces {
                let mut h = vec!["NAMESPACE"];
                h.extend(header);
                Table::new(&h)
            } else {
                Table::new(&header)
            };
            for r in &rows {
                let mut cells = Vec::new();
                if g.all_namespaces {
                    cells.push((r.namespace.clone(), Role::Plain));
                }
                let type_role = if r.seen.warning {
                    Role::Bad
                } else {
                    Role::Plain
                };
                cells.extend([
                    // LAST SEEN: `lastTimestamp` (the count and first time are -o wide's).
                    (super::views::age(self.clock, r.last), Role::Plain),
                    (r.type_name().to_string(), type_role),
                    (r.seen.reason.to_string(), Role::Plain),
                    (
                        format!(
                            "{}/{}",
                            r.object.kind.name().to_ascii_lowercase(),
                            r.object.name
                        ),
                        Role::Name,
                    ),
                    (r.seen.message.trim().to_string(), Role::Plain),
                ]);
                t.row_styled(cells);
            }
            out.extend(t.render());
        }
        let seen = Seen::GotEvents(rows.into_iter().map(|r| (r.object, r.seen)).collect());
        Ok((out, seen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_selectors_are_read_as_the_api_server_reads_them() {
        let t = parse_field_selector("involvedObject.name=web,type!=Normal").unwrap();
        assert_eq!(
            t,
            vec![
                (Field::Name, true, "web".to_string()),
                (Field::Type, false, "Normal".to_string())
            ]
        );
        assert_eq!(
            parse_field_selector("reason==Started").unwrap(),
            vec![(Field::Reason, true, "Started".to_string())]
        );
        let e = parse_field_selector("spec.nodeName=x").unwrap_err().message;
        assert_eq!(
            e,
            "Error from server (BadRequest): Unable to find \"/v1, Resource=events\" that match label selector \"\", field selector \"spec.nodeName=x\": field label not supported: spec.nodeName"
        );
        let e = parse_field_selector("type").unwrap_err().message;
        assert!(
            e.ends_with("invalid selector: 'type'; can't understand 'type'"),
            "{e}"
        );
    }

    #[test]
    fn sort_by_takes_kubectl_s_paths() {
        assert_eq!(parse_sort_by(".lastTimestamp").unwrap(), Field::Last);
        assert_eq!(
            parse_sort_by("{.metadata.creationTimestamp}").unwrap(),
            Field::Time
        );
        let e = parse_sort_by(".spec.x").unwrap_err().message;
        assert!(
            e.starts_with("couldn't find any field with path \"{.spec.x}\" in the list of objects"),
            "{e}"
        );
    }
}
