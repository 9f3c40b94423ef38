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

use super::views::canonical_kind;
use super::{Lab, LabError};
use crate::cluster::Meta;
use crate::cluster::label_query::{self, LabelQuery};
use crate::command::grammar::{GetArgs, OutputFormat};
use crate::render::{Line, Outcome, Role, Table};

/// Which objects of one kind a listing keeps, and how its rows are named.
#[derive(Debug, Clone, Default)]
pub struct Sel<'a> {
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
}

impl<'a> Sel<'a> {
    /// Every object in `ns` (every namespace when `None`): what the `… list` commands show.
    pub fn all_in(ns: Option<&'a str>) -> Self {
        Sel {
            ns,
            ..Sel::default()
        }
    }

    /// Whether the object with this metadata is listed.
    pub fn keep(&self, m: &Meta) -> bool {
        let ns_ok = m.namespace.is_empty() || self.ns.is_none_or(|n| n == m.namespace);
        ns_ok
            && self.name.is_none_or(|n| n == m.name)
            && self.query.is_none_or(|q| q.matches(&m.labels))
    }

    /// A table with these columns (NAMESPACE first with `-A`).
    pub fn table(&self, header: &[&str]) -> Table {
        if self.ns_column {
            let mut h = vec!["NAMESPACE"];
            h.extend_from_slice(header);
            Table::new(&h)
        } else {
            Table::new(header)
        }
    }

    /// Add the row of an object if it is kept: its first cell is the name.
    pub fn row(&self, t: &mut Table, m: &Meta, cells: Vec<String>) {
        self.row_styled(t, m, cells.into_iter().map(|c| (c, Role::Plain)).collect());
    }

    /// [`Sel::row`] with roles.
    pub fn row_styled(&self, t: &mut Table, m: &Meta, mut cells: Vec<(String, Role)>) {
        if !self.keep(m) {
            return;
        }
        if let (Some(p), Some(first)) = (&self.prefix, cells.first_mut()) {
            first.0 = format!("{p}/{}", first.0);
        }
        if self.ns_column {
            cells.insert(0, (m.namespace.clone(), Role::Plain));
        }
        t.row_styled(cells);
    }
}

/// What the API says of a (canonical) kind: the [`Kind`] constants of its object type, so
/// a listing never keeps a table of kinds of its own.
struct KindInfo {
    kind: &'static str,
    api_version: &'static str,
    resource: &'static str,
    namespaced: bool,
}

fn kind_info(kind: &str) -> Option<KindInfo> {
    use crate::cluster::{nad::NetAttachDefSpec, policy::NetworkPolicySpec, *};
    macro_rules! info {
        ($t:ty) => {
            Some(KindInfo {
                kind: <$t as Kind>::KIND,
                api_version: <$t as Kind>::API_VERSION,
                resource: <$t as Kind>::RESOURCE,
                namespaced: <$t as Kind>::NAMESPACED,
            })
        };
    }
    match kind {
        "nodes" => info!(NodeSpec),
        "pods" => info!(PodSpec),
        "namespaces" => info!(NamespaceSpec),
        "networkpolicies" => info!(NetworkPolicySpec),
        "network-attachment-definitions" => info!(NetAttachDefSpec),
        "persistentvolumeclaims" => info!(PvcSpec),
        "persistentvolumes" => info!(PvSpec),
        "storageclasses" => info!(StorageClassSpec),
        "volumeattachments" => info!(VaSpec),
        "csinodes" => info!(CsiNodeSpec),
        "csidrivers" => info!(CsiDriverSpec),
        "volumesnapshots" => info!(VolumeSnapshotSpec),
        "volumesnapshotcontents" => info!(VolumeSnapshotContentSpec),
        _ => None,
    }
}

/// The canonical kind words the lab serves, as `get` takes them (see [`kind_info`]).
const CANONICAL: [&str; 13] = [
    "nodes",
    "pods",
    "namespaces",
    "networkpolicies",
    "network-attachment-definitions",
    "persistentvolumeclaims",
    "persistentvolumes",
    "storageclasses",
    "volumeattachments",
    "csinodes",
    "csidrivers",
    "volumesnapshots",
    "volumesnapshotcontents",
];

/// The canonical kind word (`pods`) of an object's `kind` (`Pod`), as a manifest names it.
pub fn canonical_of(kind: &str) -> Option<&'static str> {
    CANONICAL
        .into_iter()
        .find(|c| kind_info(c).is_some_and(|k| k.kind == kind))
}

/// Whether objects of a (canonical) kind live in a namespace.
pub fn namespaced(kind: &str) -> bool {
    kind_info(kind).is_some_and(|k| k.namespaced)
}

/// The resource as kubectl prints it before `/NAME` (`-o name`, and the NAME column of a
/// multi-kind `get`): the lower-cased kind, then `.group` unless it is the core group
/// (cli-runtime `printers/name.go`, `printObj`).
pub fn resource_name(kind: &str) -> String {
    let Some(k) = kind_info(kind) else {
        return "object".to_string();
    };
    let lower = k.kind.to_ascii_lowercase();
    match k.api_version.rsplit_once('/') {
        Some((group, _)) => format!("{lower}.{group}"),
        None => lower,
    }
}

/// The resource an API error names (`pods`, `storageclasses.storage.k8s.io`).
pub fn api_resource(kind: &str) -> &'static str {
    kind_info(kind).map_or("objects", |k| k.resource)
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

impl Lab {
    /// `get KIND[,KIND…] [NAME…] [-n NS | -A] [-l SELECTOR] [-o json|name|wide|yaml]`, or
    /// `get KIND/NAME…` of several kinds. Named objects print in the order given; a missing
    /// one is NotFound after the rest print, as kubectl does.
    pub fn get(&self, g: &GetArgs) -> Result<Outcome, LabError> {
        let args: Vec<&str> = std::iter::once(g.kind.as_str())
            .chain(g.names.iter().map(String::as_str))
            .collect();
        let pairs = if args.iter().any(|a| a.contains('/')) {
            resource_name_pairs(&args)?
        } else {
            Vec::new()
        };
        // (kind, names) in the order asked; no names: every object of the kind.
        let mut targets: Vec<(&'static str, Vec<&str>)> = Vec::new();
        if !pairs.is_empty() {
            for (kind, name) in &pairs {
                let kind = canonical_kind(kind)?;
                let name = name.as_str();
                match targets.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, names)) => names.push(name),
                    None => targets.push((kind, vec![name])),
                }
            }
        } else {
            for k in g.kind.split(',').filter(|k| !k.is_empty()) {
                let k = canonical_kind(k)?;
                if !targets.iter().any(|(t, _)| *t == k) {
                    targets.push((k, g.names.iter().map(String::as_str).collect()));
                }
            }
            if targets.is_empty() {
                canonical_kind(&g.kind)?;
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
        let query = g
            .selector
            .as_deref()
            .map(label_query::parse)
            .transpose()
            .map_err(LabError::msg)?;
        let ns = g.ns.as_deref().unwrap_or("default");
        let several_kinds = targets.len() > 1;
        let sel_for = |kind: &str, name| Sel {
            ns: (!g.all_namespaces).then_some(ns),
            name,
            query: query.as_ref(),
            ns_column: g.all_namespaces && namespaced(kind),
            prefix: several_kinds.then(|| resource_name(kind)),
        };
        // A named object that does not exist is NotFound, as kubectl says: the others
        // still print, and the errors follow.
        let mut errors = Vec::new();
        for (kind, names) in &mut targets {
            self.keep_found(kind, ns, names, &mut errors);
        }
        let asked_by_name = named > 0;
        // Each object (or every object of a kind) with its selection.
        let selections: Vec<(&'static str, Sel<'_>)> = targets
            .iter()
            .flat_map(|(kind, names)| {
                let sels: Vec<(&'static str, Sel<'_>)> = if names.is_empty() && !asked_by_name {
                    vec![(*kind, sel_for(kind, None))]
                } else {
                    names
                        .iter()
                        .map(|n| (*kind, sel_for(kind, Some(n))))
                        .collect()
                };
                sels
            })
            .collect();
        let none = || {
            let mut out = Outcome::empty();
            if !g.all_namespaces && targets.iter().all(|(k, _)| namespaced(k)) {
                out.plain(format!("No resources found in {ns} namespace."));
            } else {
                out.plain("No resources found");
            }
            out
        };
        let out = match g.output {
            Some(OutputFormat::Json | OutputFormat::Yaml) => {
                // One name asks for the object itself; anything else is a List.
                let json = if let ([(kind, sel)], 1) = (selections.as_slice(), named) {
                    self.get_json(kind, sel.name, sel)?.to_text()
                } else {
                    let mut items = Vec::new();
                    for (kind, sel) in &selections {
                        items.extend(self.kept_json(kind, sel)?);
                    }
                    super::views::list_text(items.iter().map(|(_, t)| t.as_str()))
                };
                let mut out = Outcome::empty();
                if named > 0 && selections.is_empty() {
                    // Every name was missing: only the errors print.
                } else if g.output == Some(OutputFormat::Yaml) {
                    // The same document, printed as YAML.
                    let v: serde_json::Value =
                        serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
                    out.block(crate::render::yaml::to_yaml(&v).trim_end(), Role::Plain);
                } else {
                    out.block(json.trim_end(), Role::Json);
                }
                out
            }
            Some(OutputFormat::Name) => {
                let mut out = Outcome::empty();
                for (kind, sel) in &selections {
                    for (n, _) in self.kept_json(kind, sel)? {
                        out.line(
                            Line::new().push(format!("{}/{n}", resource_name(kind)), Role::Name),
                        );
                    }
                }
                if out.lines.is_empty() && !asked_by_name {
                    none()
                } else {
                    out
                }
            }
            Some(OutputFormat::Wide) | None => {
                let wide = g.output == Some(OutputFormat::Wide);
                // One table per kind, the named objects' rows in the order given.
                let mut tables: Vec<(&'static str, crate::render::Table)> = Vec::new();
                for (kind, sel) in &selections {
                    let t = self.kind_table(kind, sel, wide)?;
                    match tables.iter_mut().find(|(k, _)| k == kind) {
                        Some((_, all)) => all.append(t),
                        None => tables.push((kind, t)),
                    }
                }
                let mut out = Outcome::empty();
                for (_, t) in tables.into_iter().filter(|(_, t)| !t.is_empty()) {
                    if !out.lines.is_empty() {
                        out.plain("");
                    }
                    out.extend(t.render());
                }
                if out.lines.is_empty() && !asked_by_name {
                    none()
                } else {
                    out
                }
            }
        };
        LabError::after(out, errors)
    }

    /// The names of `kind` in `ns` that exist, in order; a NotFound for each other one.
    pub(super) fn keep_found<N: AsRef<str>>(
        &self,
        kind: &str,
        ns: &str,
        names: &mut Vec<N>,
        errors: &mut Vec<LabError>,
    ) {
        names.retain(
            |n| match self.get_json(kind, Some(n.as_ref()), &Sel::all_in(Some(ns))) {
                Ok(_) => true,
                Err(e) => {
                    errors.push(e);
                    false
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_canonical_kind_is_known_and_found_by_its_kind() {
        for c in CANONICAL {
            let k = kind_info(c).unwrap_or_else(|| panic!("{c} has no kind info"));
            assert_eq!(canonical_of(k.kind), Some(c));
        }
        assert_eq!(
            resource_name("network-attachment-definitions"),
            "networkattachmentdefinition.k8s.cni.cncf.io"
        );
        assert_eq!(canonical_of("ConfigMap"), None);
    }
}
