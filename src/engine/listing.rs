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

impl Lab {
    /// `get KIND[,KIND…] [NAME] [-n NS | -A] [-l SELECTOR] [-o json|name|wide|yaml]`.
    pub fn get(&self, g: &GetArgs) -> Result<Outcome, LabError> {
        let mut kinds: Vec<&'static str> = Vec::new();
        for k in g.kind.split(',').filter(|k| !k.is_empty()) {
            let k = canonical_kind(k)?;
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        if kinds.is_empty() {
            canonical_kind(&g.kind)?;
        }
        let name = g.name.as_deref();
        if name.is_some() && kinds.len() > 1 {
            return Err(LabError::msg("you must specify only one resource"));
        }
        if name.is_some() && g.all_namespaces {
            return Err(LabError::msg(
                "a resource cannot be retrieved by name across all namespaces",
            ));
        }
        if name.is_some() && g.selector.is_some() {
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
        let sel_for = |kind: &str| Sel {
            ns: (!g.all_namespaces).then_some(ns),
            name,
            query: query.as_ref(),
            ns_column: g.all_namespaces && namespaced(kind),
            prefix: (kinds.len() > 1).then(|| resource_name(kind)),
        };
        let none = || {
            let mut out = Outcome::empty();
            if !g.all_namespaces && kinds.iter().all(|k| namespaced(k)) {
                out.plain(format!("No resources found in {ns} namespace."));
            } else {
                out.plain("No resources found");
            }
            out
        };
        // A named object that does not exist is NotFound, as kubectl says.
        if let (Some(n), [kind]) = (name, kinds.as_slice()) {
            self.get_json(kind, Some(n), &Sel::all_in(Some(ns)))?;
        }
        match g.output {
            Some(OutputFormat::Json | OutputFormat::Yaml) => {
                let json = if let (Some(n), [kind]) = (name, kinds.as_slice()) {
                    self.get_json(kind, Some(n), &sel_for(kind))?.to_text()
                } else {
                    // Several kinds print as one List of every kind's items.
                    let mut items = Vec::new();
                    for kind in &kinds {
                        items.extend(self.kept_json(kind, &sel_for(kind))?);
                    }
                    super::views::list_text(items.iter().map(|(_, t)| t.as_str()))
                };
                let mut out = Outcome::empty();
                if g.output == Some(OutputFormat::Yaml) {
                    // The same document, printed as YAML.
                    let v: serde_json::Value =
                        serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
                    out.block(crate::render::yaml::to_yaml(&v).trim_end(), Role::Plain);
                } else {
                    out.block(json.trim_end(), Role::Json);
                }
                Ok(out)
            }
            Some(OutputFormat::Name) => {
                let mut out = Outcome::empty();
                for kind in &kinds {
                    for (n, _) in self.kept_json(kind, &sel_for(kind))? {
                        out.line(
                            Line::new().push(format!("{}/{n}", resource_name(kind)), Role::Name),
                        );
                    }
                }
                Ok(if out.lines.is_empty() { none() } else { out })
            }
            Some(OutputFormat::Wide) | None => {
                let wide = g.output == Some(OutputFormat::Wide);
                let mut out = Outcome::empty();
                for kind in &kinds {
                    let t = self.kind_table(kind, &sel_for(kind), wide)?;
                    if t.is_empty() {
                        continue;
                    }
                    if !out.lines.is_empty() {
                        out.plain("");
                    }
                    out.extend(t.render());
                }
                Ok(if out.lines.is_empty() { none() } else { out })
            }
        }
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
