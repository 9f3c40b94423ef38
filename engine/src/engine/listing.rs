//! `get` as kubectl runs it: which objects (`-n`, `-A`, `-l`, a name), which kinds
//! (`pods,nodes`), and how they print (a table per kind, `-o name`, one JSON/YAML list).
//!
//! The rules follow kubectl (`staging/src/k8s.io/kubectl/pkg/cmd/get/get.go`, and the
//! resource builder `staging/src/k8s.io/cli-runtime/pkg/resource/builder.go`):
//! - `-A` lists every namespace and puts a NAMESPACE column first, for namespaced kinds only;
//! - several kinds print one table each, separated by a blank line; with more than one kind
//!   the NAME column reads `kind/name` (the same string `-o name` prints);
//! - nothing printed at all gives "No resources found in NS namespace." when every kind asked
//!   for is namespaced and `-A` is off, else "No resources found".

use super::{Lab, LabError};
use crate::cluster::label_query::{self, LabelQuery};
use crate::cluster::{ApiKind, Meta};
use crate::command::grammar::{GetArgs, OutputFormat};
use crate::render::{Line, Outcome, Role, Table};
use crate::resource::{self, AnyResource};

/// What an empty listing of namespaced objects prints (kubectl's `get`): "No resources found
/// in NS namespace." for one namespace, "No resources found" for every namespace (`-A`).
pub(crate) fn no_resources_found(ns: Option<&str>) -> String {
    match ns {
        Some(ns) => format!("No resources found in {ns} namespace."),
        None => "No resources found".to_string(),
    }
}

/// Which objects of one kind a listing keeps, and how its rows are named.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sel<'a> {
    /// Only this namespace (cluster-scoped objects ignore it); `None`: every namespace.
    pub ns: Option<&'a str>,
    /// Only this name.
    pub name: Option<&'a str>,
    /// Only objects whose labels match.
    pub query: Option<&'a LabelQuery>,
    /// A NAMESPACE column first (`-A` on a namespaced kind).
    pub ns_column: bool,
    /// Before each name (`pod/`) when several kinds print together.
    pub prefix: Option<String>,
    /// A LABELS column last (`--show-labels`).
    pub labels_column: bool,
}

impl<'a> Sel<'a> {
    /// Every object in `ns` (every namespace when `None`): what the `… list` commands show.
    pub(crate) fn all_in(ns: Option<&'a str>) -> Self {
        Sel {
            ns,
            ..Sel::default()
        }
    }

    /// Whether the object with this metadata is listed.
    pub fn keep(&self, m: &Meta) -> bool {
        let ns_ok = m.namespace().is_empty() || self.ns.is_none_or(|n| n == m.namespace());
        ns_ok
            && self.name.is_none_or(|n| n == m.name())
            && self.query.is_none_or(|q| q.matches(&m.labels))
    }

    /// A table with these columns (NAMESPACE first with `-A`).
    pub fn table(&self, header: &[&str]) -> Table {
        Table::new(&self.header(header))
    }

    /// The column titles of [`Sel::table`].
    pub fn header<'h>(&self, header: &[&'h str]) -> Vec<&'h str> {
        let mut h = Vec::new();
        if self.ns_column {
            h.push("NAMESPACE");
        }
        h.extend_from_slice(header);
        if self.labels_column {
            h.push("LABELS");
        }
        h
    }

    /// Add the row of an object [`Sel::keep`] keeps: its name prefixed, its namespace
    /// first when the table has that column.
    pub fn push(&self, t: &mut Table, m: &Meta, cells: Vec<(String, Role)>) {
        t.row_styled(self.cells(m, cells));
    }

    /// The cells [`Sel::push`] adds for an object's row.
    pub fn cells(&self, m: &Meta, mut cells: Vec<(String, Role)>) -> Vec<(String, Role)> {
        if let (Some(p), Some(first)) = (&self.prefix, cells.first_mut()) {
            first.0 = format!("{p}/{}", first.0);
        }
        if self.ns_column {
            cells.insert(0, (m.namespace().clone(), Role::Plain));
        }
        if self.labels_column {
            // kubectl's labels.FormatLabels: k=v by key, joined by commas.
            let labels: Vec<String> = m.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let text = if labels.is_empty() {
                "<none>".to_string()
            } else {
                labels.join(",")
            };
            cells.push((text, Role::Plain));
        }
        cells
    }
}

/// kubectl's resource/name form (`hasCombinedTypeArgs` and `splitResourceTypeName` in
/// cli-runtime's `pkg/resource/builder.go`): when one argument has a `/`, every one must,
/// each with one `/` between a resource and a name. All are checked before any is deleted.
pub(super) fn resource_name_pairs(args: &[&str]) -> Result<Vec<(String, String)>, LabError> {
    if !args.iter().all(|a| a.contains('/')) {
        // Upstream's message, its missing closing parenthesis included.
        return Err(LabError::msg(
            "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'",
        ));
    }
    args.iter()
        .map(|a| match a.split('/').collect::<Vec<_>>()[..] {
            [kind, name] if !kind.is_empty() && !name.is_empty() && !kind.contains(',') => {
                Ok((kind.to_string(), name.to_string()))
            }
            [_, _] => Err(LabError::msg(
                "arguments in resource/name form must have a single resource and name",
            )),
            _ => Err(LabError::msg(
                "arguments in resource/name form may not have more than one slash",
            )),
        })
        .collect()
}

impl GetArgs {
    /// The `-l` selector parsed as `kubectl get -l` parses it (`labels.Parse`), `None`
    /// without one: what `get`, `get events` and `get -w` select by.
    pub(super) fn label_query(&self) -> Result<Option<LabelQuery>, LabError> {
        self.selector
            .as_deref()
            .map(label_query::parse)
            .transpose()
            .map_err(LabError::msg)
    }
}

impl Lab {
    /// `get KIND[,KIND…] [NAME…] [-n NS | -A] [-l SELECTOR] [-o json|name|wide|yaml]`, or
    /// `get KIND/NAME…` of several kinds. Named objects print in the order given; a missing
    /// one is NotFound after the rest print, as kubectl does.
    pub fn get(&self, g: &GetArgs) -> Result<Outcome, LabError> {
        self.get_seen(g).map(|(out, _)| out)
    }

    /// `get`, with what it showed: the objects listed, and the format.
    pub(super) fn get_seen(&self, g: &GetArgs) -> Result<(Outcome, super::seen::Seen), LabError> {
        if g.output_watch_events {
            // kubectl's Validate.
            return Err(LabError::msg(
                "--output-watch-events option can only be used with --watch or --watch-only",
            ));
        }
        let kinds: Vec<&str> = g.kind.split(',').collect();
        if kinds.iter().any(|k| super::events_view::names_events(k)) {
            if kinds.len() > 1 {
                return Err(LabError::msg(
                    "the lab lists events on their own: `get events`, then the other kinds",
                ));
            }
            return self.get_events(g);
        }
        for (flag, given) in [
            ("--field-selector", g.field_selector.is_some()),
            ("--sort-by", g.sort_by.is_some()),
        ] {
            if given {
                return Err(LabError::msg(format!(
                    "{flag} applies to events in the lab (`get events {flag} …`); other kinds list by name"
                )));
            }
        }
        let args: Vec<&str> = std::iter::once(g.kind.as_str())
            .chain(g.names.iter().map(String::as_str))
            .collect();
        let pairs = if args.iter().any(|a| a.contains('/')) {
            resource_name_pairs(&args)?
        } else {
            Vec::new()
        };
        // (kind, names) in the order asked; no names: every object of the kind.
        let mut targets: Vec<(&'static dyn AnyResource, Vec<&str>)> = Vec::new();
        if !pairs.is_empty() {
            for (kind, name) in &pairs {
                let kind = resource::resolve(kind)?;
                let name = name.as_str();
                match targets.iter_mut().find(|(k, _)| k.kind() == kind.kind()) {
                    Some((_, names)) => names.push(name),
                    None => targets.push((kind, vec![name])),
                }
            }
        } else {
            for k in g.kind.split(',').filter(|k| !k.is_empty()) {
                let k = resource::resolve(k)?;
                if !targets.iter().any(|(t, _)| t.kind() == k.kind()) {
                    targets.push((k, g.names.iter().map(String::as_str).collect()));
                }
            }
            if targets.is_empty() {
                resource::resolve(&g.kind)?;
            }
            if !g.names.is_empty() && targets.len() > 1 {
                return Err(LabError::msg("you must specify only one resource"));
            }
        }
        let named = targets.iter().map(|(_, n)| n.len()).sum::<usize>();
        if named > 0 && g.all_namespaces {
            return Err(LabError::msg(
                "a resource cannot be retrieved by name across all namespaces",
            ));
        }
        if named > 0 && g.selector.is_some() {
            return Err(LabError::msg(
                "name cannot be provided when a selector is specified",
            ));
        }
        let query = g.label_query()?;
        let ns = g.ns.as_deref().unwrap_or("default");
        let several_kinds = targets.len() > 1;
        let sel_for = |kind: &dyn AnyResource, name| Sel {
            ns: (!g.all_namespaces).then_some(ns),
            name,
            query: query.as_ref(),
            ns_column: g.all_namespaces && kind.namespaced(),
            labels_column: g.show_labels,
            prefix: several_kinds.then(|| kind.resource_name()),
        };
        // A named object that does not exist is NotFound, as kubectl says: the others
        // still print, and the errors follow.
        let mut errors = Vec::new();
        for (kind, names) in &mut targets {
            self.keep_found(*kind, ns, names, &mut errors);
        }
        let asked_by_name = named > 0;
        // Each object (or every object of a kind) with its selection.
        let selections: Vec<(&'static dyn AnyResource, Sel<'_>)> = targets
            .iter()
            .flat_map(|(kind, names)| {
                let sels: Vec<(&'static dyn AnyResource, Sel<'_>)> =
                    if names.is_empty() && !asked_by_name {
                        vec![(*kind, sel_for(*kind, None))]
                    } else {
                        names
                            .iter()
                            .map(|n| (*kind, sel_for(*kind, Some(n))))
                            .collect()
                    };
                sels
            })
            .collect();
        let none = || {
            let mut out = Outcome::empty();
            if !g.all_namespaces && targets.iter().all(|(k, _)| k.namespaced()) {
                out.plain(format!("No resources found in {ns} namespace."));
            } else {
                out.plain("No resources found");
            }
            out
        };
        // What -o json prints: one name asks for the object itself; anything else is a
        // List. `None` when every name was missing: only the errors print.
        let json = || -> Result<Option<String>, LabError> {
            if named > 0 && selections.is_empty() {
                return Ok(None);
            }
            if let ([(kind, sel @ Sel { name: Some(n), .. })], 1) = (selections.as_slice(), named) {
                return self.get_json(*kind, n, sel).map(Some);
            }
            let mut items = Vec::new();
            for (kind, sel) in &selections {
                items.extend(kind.kept_json(self, sel));
            }
            Ok(Some(super::views::list_text(
                items.iter().map(|(_, t)| t.as_str()),
            )))
        };
        // The same document, read back for the printers that print it another way.
        let value = |json: &str| serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
        let out = match &g.output {
            Some(OutputFormat::Json) => {
                let mut out = Outcome::empty();
                if let Some(json) = json()? {
                    out.block(json.trim_end(), Role::Json);
                }
                out
            }
            Some(OutputFormat::Yaml) => {
                let mut out = Outcome::empty();
                if let Some(json) = json()? {
                    out.block(
                        crate::render::yaml::to_yaml(&value(&json)).trim_end(),
                        Role::Plain,
                    );
                }
                out
            }
            Some(OutputFormat::JsonPath(template)) => {
                let printer = super::printers::JsonPath::new(template)?;
                match json()? {
                    Some(json) => printer.print(&value(&json)),
                    None => Outcome::empty(),
                }
            }
            Some(OutputFormat::CustomColumns(spec)) => {
                let printer = super::printers::CustomColumns::new(spec)?;
                match json()?.and_then(|json| printer.print(&value(&json))) {
                    Some(out) => out,
                    None if !asked_by_name => none(),
                    None => Outcome::empty(),
                }
            }
            Some(OutputFormat::Name) => {
                let mut out = Outcome::empty();
                for (kind, sel) in &selections {
                    let resource = kind.resource_name();
                    for n in kind.kept_names(self, sel) {
                        out.line(Line::new().push(format!("{resource}/{n}"), Role::Name));
                    }
                }
                if out.is_empty() && !asked_by_name {
                    none()
                } else {
                    out
                }
            }
            Some(OutputFormat::Wide) | None => {
                let wide = g.output == Some(OutputFormat::Wide);
                // One table per kind, the named objects' rows in the order given.
                let mut tables: Vec<(ApiKind, crate::render::Table)> = Vec::new();
                for (kind, sel) in &selections {
                    let t = kind.table(self, sel, wide);
                    match tables.iter_mut().find(|(k, _)| *k == kind.kind()) {
                        Some((_, all)) => all.append(t),
                        None => tables.push((kind.kind(), t)),
                    }
                }
                let mut out = Outcome::empty();
                for (_, t) in tables.into_iter().filter(|(_, t)| !t.is_empty()) {
                    if !out.is_empty() {
                        out.plain("");
                    }
                    out.extend(t.render());
                }
                if out.is_empty() && !asked_by_name {
                    none()
                } else {
                    out
                }
            }
        };
        let seen = super::seen::Seen::Got {
            objects: selections
                .iter()
                .flat_map(|(kind, sel)| kind.kept_refs(self, sel))
                .collect(),
            format: g.output.as_ref().map_or("table", OutputFormat::name),
        };
        LabError::after(out, errors).map(|out| (out, seen))
    }

    /// The names of `kind` in `ns` that exist, in order; a NotFound for each other one.
    pub(super) fn keep_found<N: AsRef<str>>(
        &self,
        kind: &dyn AnyResource,
        ns: &str,
        names: &mut Vec<N>,
        errors: &mut Vec<LabError>,
    ) {
        names.retain(|n| {
            let found = kind.exists(self, ns, n.as_ref());
            if !found {
                errors.push(kind.not_found(n.as_ref()));
            }
            found
        });
    }

    /// `get KIND NAME -o json`: the object as Kubernetes prints it.
    fn get_json(&self, kind: &dyn AnyResource, name: &str, sel: &Sel) -> Result<String, LabError> {
        let one = Sel {
            ns: Some(sel.ns.unwrap_or("default")),
            name: Some(name),
            ..Sel::default()
        };
        let (_, text) = kind
            .kept_json(self, &one)
            .into_iter()
            .next()
            .ok_or_else(|| kind.not_found(name))?;
        // As it prints (control characters escaped), which the YAML is read from.
        let mut out = Outcome::empty();
        out.block(&text, Role::Json);
        Ok(out.to_text())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Lab;

    fn run(lab: &mut Lab, line: &str) -> String {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
            .to_text()
    }

    /// The name column of a `get` table, header dropped.
    fn names(text: &str) -> Vec<String> {
        text.lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect()
    }

    /// `get pods -l` (read from the store's label index; debug builds check it against a
    /// read of every pod) follows `label`, deletes and namespaces, and a rewind answers
    /// as the lab did then.
    #[test]
    fn get_by_label_follows_relabels_deletes_namespaces_and_rewind() {
        let mut lab = Lab::new();
        for line in [
            "ns create team",
            "pod create web-2 -l app=web -l tier=front",
            "pod create web-1 -l app=web",
            "pod create db -l app=db",
            "pod create web-0 -n team -l app=web",
        ] {
            run(&mut lab, line);
        }
        assert_eq!(
            names(&run(&mut lab, "get pods -l app=web")),
            ["web-1", "web-2"]
        );
        let all = run(&mut lab, "get pods -A -l app=web");
        assert_eq!(
            all.lines()
                .skip(1)
                .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join("/"))
                .collect::<Vec<_>>(),
            ["default/web-1", "default/web-2", "team/web-0"]
        );
        assert_eq!(
            names(&run(&mut lab, "get pods -l 'app in (db,web),tier!=front'")),
            ["db", "web-1"]
        );
        let before = run(&mut lab, "get pods -l app=web -o name");
        let event = lab.journal().entries.len();
        run(&mut lab, "label pod web-1 app=db --overwrite");
        assert_eq!(names(&run(&mut lab, "get pods -l app=web")), ["web-2"]);
        assert_eq!(names(&run(&mut lab, "get pods -l app=db")), ["db", "web-1"]);
        run(&mut lab, "delete pods -l tier=front");
        assert_eq!(
            run(&mut lab, "get pods -l app=web").trim_end(),
            "No resources found in default namespace."
        );
        run(&mut lab, &format!("rewind {event}"));
        assert_eq!(run(&mut lab, "get pods -l app=web -o name"), before);
        run(&mut lab, "rewind --undo");
        assert_eq!(names(&run(&mut lab, "get pods -l app=db")), ["db", "web-1"]);
        assert_eq!(
            names(&run(&mut lab, "get pods -n team -l app=web")),
            ["web-0"]
        );
    }
}
