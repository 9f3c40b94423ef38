//! The API kinds the lab serves, one [`Resource`] each, in one registry: how a kind is
//! spelled (kubectl's RESTMapper entry: plural, singular, short names, as `kubectl
//! api-resources` shows them, and the lab's aliases), its `get` table and `-o wide`
//! columns, its JSON, its describer (kubectl's `pkg/describe` keys describers by kind), what
//! `delete` does with it, what `apply -f` reads of it, whether `label` works on it, and its
//! save form. `get`, `describe`, `delete`, `apply`, `label`, `save`, Tab completion and the
//! `Kinds:` lines of help iterate over [`REGISTRY`] or resolve a typed word through it once
//! ([`resolve`]) and then work on the typed kind; nothing else matches kind names.
//!
//! Adding a kind: its object type in `cluster` (with `impl Kind` and a line in `tables!`),
//! its [`ApiKind`] variant, a file here with `impl Resource`, and a line in the `registry!`
//! call below. The compiler points at the rest: the registry is as long as
//! [`ApiKind::ALL`] and holds each kind once, `ApiKind`'s own matches are exhaustive, and
//! a kind `apply -f` reads needs its `Manifest` variant and that variant its apply.

mod csi_drivers;
mod csi_nodes;
mod namespaces;
mod net_attach_defs;
mod network_policies;
mod nodes;
mod pod_json;
mod pod_runtime;
mod pods;
mod pvcs;
mod pvs;
mod storage_classes;
mod volume_attachments;
mod volume_snapshot_contents;
mod volume_snapshots;

use crate::cluster::Table as Objects;
use crate::cluster::{ApiKind, Cluster, Kind, LabelIndex, Meta, Object, ObjectRef, TableOps};
use crate::command::Command;
use crate::command::help::{KindLists, KindsOf};
use crate::engine::listing::Sel;
use crate::engine::{Lab, LabError};
use crate::render::{Outcome, Role, Table};

/// How a kind is spelled: kubectl's RESTMapper entry for it (what `kubectl api-resources`
/// shows) and the lab's own aliases. Words are matched ignoring ASCII case.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Names {
    /// The resource, plural (`pods`, `network-attachment-definitions`): the lab's
    /// canonical word for the kind (errors name it, a save file keys its objects by it).
    pub(crate) plural: &'static str,
    /// The singular (`pod`).
    pub(crate) singular: &'static str,
    /// kubectl's short names (`po`, `net-attach-def`); none for most storage kinds.
    pub(crate) short: &'static [&'static str],
    /// Other spellings the lab accepts (`policy`, `snapshots`, `nad`).
    pub(crate) aliases: &'static [&'static str],
    /// The word lists of kinds show (`nodes`, `pvc`, `snapshots`), its short name beside
    /// it when that is another word (`nodes (no)`).
    pub(crate) listed: &'static str,
    /// The word Tab offers where a kind goes (`get <Tab>`): `nodes`, `pvc`, `net-attach-def`.
    pub(crate) completes_as: &'static str,
}

impl Names {
    /// Whether `word` names the kind.
    fn matches(&self, word: &str) -> bool {
        std::iter::once(self.plural)
            .chain(std::iter::once(self.singular))
            .chain(self.short.iter().copied())
            .chain(self.aliases.iter().copied())
            .any(|n| n.eq_ignore_ascii_case(word))
    }

    /// Whether `word` is one of kubectl's names for the kind (its plural, singular or a
    /// short name; not the lab's aliases), the resource part of a group-qualified word.
    fn kubectl_matches(&self, word: &str) -> bool {
        std::iter::once(self.plural)
            .chain(std::iter::once(self.singular))
            .chain(self.short.iter().copied())
            .any(|n| n.eq_ignore_ascii_case(word))
    }

    /// The kind in a list of kinds: `nodes (no)`, `pvc`, `snapshots (vs)`.
    pub(crate) fn entry(&self) -> String {
        match self.short.first() {
            Some(short) if *short != self.listed => format!("{} ({short})", self.listed),
            _ => self.listed.to_string(),
        }
    }
}

/// What `delete KIND NAME` does with an object of a kind.
#[derive(Clone, Copy)]
pub(crate) enum Delete {
    /// The lab's own delete command for the kind (`pod delete NAME`), so that the output
    /// and the journal are that command's; given the name and the namespace.
    Command(fn(String, String) -> Command),
    /// `Lab::pv_delete`: a PersistentVolume (it has no command of its own).
    Volume,
    /// The lab does not delete the kind: why, and what to do instead, given the name.
    /// With `must_exist`, a name that does not exist is NotFound first.
    Refused {
        /// Look the object up first.
        must_exist: bool,
        /// The reason, given the object's name.
        why: fn(&str) -> String,
    },
}

/// What `apply -f` does with an object of a kind.
#[derive(Clone, Copy)]
pub(crate) enum Apply {
    /// It reads it, at the kind's apiVersion, into its typed manifest.
    Reads(crate::manifest::Read),
    /// It refuses it ("no matches for kind"), with what to do instead when the lab has a
    /// word for it.
    Refused(Option<&'static str>),
}

/// `describe`'s printer for one object of a kind (kubectl's describer for it).
pub(crate) type Describer<S> = fn(&Lab, &Object<S>) -> Outcome;

/// One API kind, typed: everything the verbs need to know about it. Implemented once per
/// kind, by a unit struct in this module's files; the verbs reach it through
/// [`AnyResource`].
pub(crate) trait Resource: Sync + 'static {
    /// The kind's object type, by its spec (whose `Kind` constants give its `kind`,
    /// apiVersion, API resource and scope).
    type Spec: Kind;
    /// How the kind is spelled.
    const NAMES: Names;
    /// `get`'s columns.
    const COLUMNS: &'static [&'static str];
    /// `get -o wide`'s columns (the same unless the kind has more to show).
    const WIDE: &'static [&'static str] = Self::COLUMNS;
    /// `describe`'s printer; `None` for a kind the lab does not describe.
    const DESCRIBE: Option<Describer<Self::Spec>> = None;
    /// What `delete` does.
    const DELETE: Delete;
    /// What `apply -f` does.
    const APPLY: Apply = Apply::Refused(None);
    /// Whether `label` works on the kind.
    const LABELS: bool = false;
    /// The kind's objects in the API server's store.
    fn objects(c: &Cluster) -> &Objects<Self::Spec>;
    /// Writes to them (with the store's revisions).
    fn ops(c: &mut Cluster) -> TableOps<'_, Self::Spec>;
    /// One object's row under [`Self::COLUMNS`] (or [`Self::WIDE`]).
    fn row(lab: &Lab, o: &Object<Self::Spec>, wide: bool) -> Vec<(String, Role)>;
    /// `get -o json`: the kept objects, each with its name, as kubectl prints them.
    fn json(_lab: &Lab, kept: Vec<&Object<Self::Spec>>) -> Vec<(String, String)> {
        kept.into_iter()
            .map(|o| (o.metadata.name().clone(), kubectl_json(o)))
            .collect()
    }
}

/// An object as `kubectl get -o json` prints it: kubectl reads what the API server sends
/// as unstructured maps, and Go's encoder writes a map's keys sorted, so every level's
/// fields print in byte order (`apiVersion`, `kind`, `metadata`, `spec`, `status`), four
/// spaces a level (`-o yaml` is made from the same document).
pub(crate) fn kubectl_json<T: serde::Serialize>(obj: &T) -> String {
    let value = serde_json::to_value(obj).unwrap_or(serde_json::Value::Null);
    crate::cni::types::to_go_json(&value)
}

/// How `get -w` prints one object: its row (`-o wide`'s with `wide`), its name or its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrintOne {
    /// Its row under the kind's columns.
    Row {
        /// `-o wide`'s columns.
        wide: bool,
    },
    /// Its name (`-o name`).
    Name,
    /// Its JSON (`-o json`, and `-o yaml` made from it).
    Json,
}

/// One object as [`PrintOne`] printed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Printed {
    /// Its row's cells, the selection's NAMESPACE and LABELS columns included.
    Row(Vec<(String, Role)>),
    /// Its name.
    Name(String),
    /// Its JSON, as `get -o json` prints one object.
    Json(String),
}

/// One object of `R` as `how` prints it (`sel` adds its columns).
fn print_one<R: Resource>(lab: &Lab, o: &Object<R::Spec>, sel: &Sel<'_>, how: PrintOne) -> Printed {
    match how {
        PrintOne::Row { wide } => Printed::Row(sel.cells(&o.metadata, R::row(lab, o, wide))),
        PrintOne::Name => Printed::Name(o.metadata.name().clone()),
        PrintOne::Json => Printed::Json(
            R::json(lab, vec![o])
                .into_iter()
                .next()
                .map(|(_, json)| json)
                .unwrap_or_default(),
        ),
    }
}

/// A plain table cell.
pub(crate) fn cell(text: impl Into<String>) -> (String, Role) {
    (text.into(), Role::Plain)
}

/// The object `namespace/name` of `R` in the store (the namespace ignored for a
/// cluster-scoped kind).
fn get<'a, R: Resource>(c: &'a Cluster, ns: &str, name: &str) -> Option<&'a Object<R::Spec>> {
    let ns = if R::Spec::NAMESPACED {
        ns.to_string()
    } else {
        crate::cluster::no_namespace()
    };
    R::objects(c).get(&(ns, name.to_string()))
}

/// The table of the objects of `R` that `sel` keeps (empty when none is).
fn table<R: Resource>(lab: &Lab, sel: &Sel<'_>, wide: bool) -> Table {
    let mut t = sel.table(if wide { R::WIDE } else { R::COLUMNS });
    for o in kept::<R>(&lab.cluster, sel) {
        sel.push(&mut t, &o.metadata, R::row(lab, o, wide));
    }
    t
}

/// The objects of `R` that `sel` keeps, in the store's order, read as the API server reads
/// them: one key for a named object, the namespace's range of keys for a namespace, every
/// object only when the selection spans namespaces (so `get pod web` at 150,000 pods reads
/// one object, not all of them). A label selector with an `=`/`in` requirement reads only
/// the objects the store's label index gives for it (as an informer's indexer answers),
/// each matched against the whole selector; debug builds check that against the read.
fn kept<'a, R: Resource>(c: &'a Cluster, sel: &Sel<'_>) -> Vec<&'a Object<R::Spec>> {
    let indexed = match (sel.query, sel.name) {
        (Some(query), None) => {
            let ns = if R::Spec::NAMESPACED {
                sel.ns
            } else {
                Some("")
            };
            c.labels.candidates::<R::Spec>(ns, query)
        }
        _ => None,
    };
    let Some(keys) = indexed else {
        return kept_by_reading::<R>(c, sel);
    };
    let kept: Vec<&Object<R::Spec>> = LabelIndex::objects(R::objects(c), keys)
        .into_iter()
        .filter(|o| sel.keep(&o.metadata))
        .collect();
    #[cfg(debug_assertions)]
    {
        c.labels.assert_matches(R::objects(c));
        let read = kept_by_reading::<R>(c, sel);
        assert!(
            kept.len() == read.len() && kept.iter().zip(&read).all(|(a, b)| std::ptr::eq(*a, *b)),
            "the label index selected other {} than a read of every object",
            R::Spec::RESOURCE
        );
    }
    kept
}

/// [`kept`] by reading every object of the selection's namespace (of every namespace when
/// it spans them) and matching each.
fn kept_by_reading<'a, R: Resource>(c: &'a Cluster, sel: &Sel<'_>) -> Vec<&'a Object<R::Spec>> {
    let objects = R::objects(c);
    let ns = if R::Spec::NAMESPACED {
        sel.ns.map(str::to_string)
    } else {
        Some(crate::cluster::no_namespace())
    };
    let candidates: Vec<&Object<R::Spec>> = match (ns, sel.name) {
        (Some(ns), Some(name)) => objects.get(&(ns, name.to_string())).into_iter().collect(),
        (Some(ns), None) => objects
            .range((ns.clone(), String::new())..)
            .take_while(|((n, _), _)| *n == ns)
            .map(|(_, o)| o)
            .collect(),
        (None, _) => objects.values().collect(),
    };
    candidates
        .into_iter()
        .filter(|o| sel.keep(&o.metadata))
        .collect()
}

/// A kind as the verbs use it: [`Resource`] without its types, one per entry of
/// [`REGISTRY`].
pub(crate) trait AnyResource: Sync {
    /// Which kind.
    fn kind(&self) -> ApiKind;
    /// How it is spelled.
    fn names(&self) -> Names;
    /// Its apiVersion (`v1`, `storage.k8s.io/v1`).
    fn api_version(&self) -> &'static str;
    /// The resource the API server's errors name (`pods`, `storageclasses.storage.k8s.io`).
    fn api_resource(&self) -> &'static str;
    /// Whether its objects live in a namespace.
    fn namespaced(&self) -> bool;
    /// `get`'s table of the objects `sel` keeps.
    fn table(&self, lab: &Lab, sel: &Sel<'_>, wide: bool) -> Table;
    /// `get`'s columns (`-o wide`'s with `wide`).
    fn columns(&self, wide: bool) -> &'static [&'static str];
    /// `get -w`'s first listing: the objects `sel` keeps, each by its watch key
    /// (`namespace/name` or name) and as `how` prints it.
    fn print_each(&self, lab: &Lab, sel: &Sel<'_>, how: PrintOne) -> Vec<(String, Printed)>;
    /// `get -w`: the object a watch event carried (a state the store's watch tap kept, see
    /// `cluster::WatchTap`), by its watch key, and as `how` prints it when `sel` keeps it.
    /// `None` for a state of another kind.
    fn print_state(
        &self,
        lab: &Lab,
        state: &dyn std::any::Any,
        sel: &Sel<'_>,
        how: PrintOne,
    ) -> Option<(String, Option<Printed>)>;
    /// The objects `sel` keeps, each name with its JSON.
    fn kept_json(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<(String, String)>;
    /// The names of the objects `sel` keeps, in the store's order.
    fn kept_names(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<String>;
    /// Whether `namespace/name` exists (the namespace ignored for a cluster-scoped kind).
    fn exists(&self, lab: &Lab, ns: &str, name: &str) -> bool;
    /// A reference to the object and its uid, when it exists.
    fn reference(
        &self,
        lab: &Lab,
        ns: &str,
        name: &str,
    ) -> Option<(ObjectRef, crate::cluster::Uid)>;
    /// References to the objects `sel` keeps, in the store's order.
    fn kept_refs(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<ObjectRef>;
    /// Whether `describe` prints the kind.
    fn describes(&self) -> bool;
    /// `describe`'s text of one object, its events last; NotFound, or why the kind is not
    /// described.
    fn describe(&self, lab: &Lab, ns: &str, name: &str) -> Result<Outcome, LabError>;
    /// What `delete` does.
    fn delete(&self) -> Delete;
    /// What `apply -f` does.
    fn apply(&self) -> Apply;
    /// Whether `label` works on the kind.
    fn labels(&self) -> bool;
    /// Let `edit` change one object's metadata, and write the object when it says so.
    fn relabel(
        &self,
        lab: &mut Lab,
        ns: &str,
        name: &str,
        edit: &mut dyn FnMut(&mut Meta) -> Result<bool, LabError>,
    ) -> Result<(), LabError>;
}

impl<R: Resource> AnyResource for R {
    fn kind(&self) -> ApiKind {
        R::Spec::API_KIND
    }

    fn names(&self) -> Names {
        R::NAMES
    }

    fn api_version(&self) -> &'static str {
        R::Spec::API_VERSION
    }

    fn api_resource(&self) -> &'static str {
        R::Spec::RESOURCE
    }

    fn namespaced(&self) -> bool {
        R::Spec::NAMESPACED
    }

    fn table(&self, lab: &Lab, sel: &Sel<'_>, wide: bool) -> Table {
        table::<R>(lab, sel, wide)
    }

    fn columns(&self, wide: bool) -> &'static [&'static str] {
        if wide { R::WIDE } else { R::COLUMNS }
    }

    fn print_each(&self, lab: &Lab, sel: &Sel<'_>, how: PrintOne) -> Vec<(String, Printed)> {
        kept::<R>(&lab.cluster, sel)
            .into_iter()
            .map(|o| (o.key(), print_one::<R>(lab, o, sel, how)))
            .collect()
    }

    fn print_state(
        &self,
        lab: &Lab,
        state: &dyn std::any::Any,
        sel: &Sel<'_>,
        how: PrintOne,
    ) -> Option<(String, Option<Printed>)> {
        let o = state.downcast_ref::<Object<R::Spec>>()?;
        let printed = sel
            .keep(&o.metadata)
            .then(|| print_one::<R>(lab, o, sel, how));
        Some((o.key(), printed))
    }

    fn kept_json(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<(String, String)> {
        R::json(lab, kept::<R>(&lab.cluster, sel))
    }

    fn kept_names(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<String> {
        kept::<R>(&lab.cluster, sel)
            .into_iter()
            .map(|o| o.metadata.name().clone())
            .collect()
    }

    fn exists(&self, lab: &Lab, ns: &str, name: &str) -> bool {
        get::<R>(&lab.cluster, ns, name).is_some()
    }

    fn reference(
        &self,
        lab: &Lab,
        ns: &str,
        name: &str,
    ) -> Option<(ObjectRef, crate::cluster::Uid)> {
        get::<R>(&lab.cluster, ns, name).map(|o| (ObjectRef::to(o), o.metadata.uid))
    }

    fn kept_refs(&self, lab: &Lab, sel: &Sel<'_>) -> Vec<ObjectRef> {
        kept::<R>(&lab.cluster, sel)
            .into_iter()
            .map(ObjectRef::to)
            .collect()
    }

    fn describes(&self) -> bool {
        R::DESCRIBE.is_some()
    }

    fn describe(&self, lab: &Lab, ns: &str, name: &str) -> Result<Outcome, LabError> {
        let Some(describer) = R::DESCRIBE else {
            return Err(LabError::msg(format!(
                "describe does not know {:?}; it describes {}",
                R::NAMES.plural,
                and_list(
                    REGISTRY
                        .iter()
                        .filter(|r| r.describes())
                        .map(|r| r.names().entry())
                        .collect()
                )
            )));
        };
        let o = get::<R>(&lab.cluster, ns, name)
            .ok_or_else(|| crate::engine::views::not_found(R::Spec::RESOURCE, name))?;
        Ok(describer(lab, o))
    }

    fn delete(&self) -> Delete {
        R::DELETE
    }

    fn apply(&self) -> Apply {
        R::APPLY
    }

    fn labels(&self) -> bool {
        R::LABELS
    }

    fn relabel(
        &self,
        lab: &mut Lab,
        ns: &str,
        name: &str,
        edit: &mut dyn FnMut(&mut Meta) -> Result<bool, LabError>,
    ) -> Result<(), LabError> {
        let mut obj = R::ops(&mut lab.cluster).get(ns, name)?.clone();
        if edit(&mut obj.metadata)? {
            R::ops(&mut lab.cluster).update(obj)?;
        }
        Ok(())
    }
}

impl dyn AnyResource + '_ {
    /// The resource as kubectl prints it before `/NAME` (`-o name`, the NAME column of a
    /// multi-kind `get`, apply's result lines): the lower-cased kind, then `.group` unless
    /// it is the core group (cli-runtime `printers/name.go`, `printObj`).
    pub(crate) fn resource_name(&self) -> String {
        let lower = self.kind().name().to_ascii_lowercase();
        match self.group() {
            "" => lower,
            group => format!("{lower}.{group}"),
        }
    }

    /// The kind's API group (`storage.k8s.io`; empty for the core group).
    pub(crate) fn group(&self) -> &'static str {
        self.api_version().rsplit_once('/').map_or("", |(g, _)| g)
    }

    /// Whether `word` names the kind with its group, as kubectl's `schema.ParseResourceArg`
    /// and `ParseKindArg` read it: `RESOURCE.VERSION.GROUP` (two dots or more: the part
    /// after the second dot is the group) or `RESOURCE.GROUP` (after the first dot), where
    /// RESOURCE is one of kubectl's names for the kind, matched ignoring case, or its
    /// `Kind`, matched exactly.
    fn qualified_by(&self, word: &str) -> bool {
        let names = self.names();
        let kind = self.kind().name();
        let resource = |r: &str| names.kubectl_matches(r) || r == kind;
        let (version, group) = self
            .api_version()
            .rsplit_once('/')
            .map_or(("v1", ""), |(g, v)| (v, g));
        let mut parts = word.splitn(3, '.');
        let (Some(first), Some(second)) = (parts.next(), parts.next()) else {
            return false;
        };
        let by_version = parts.next().is_some_and(|rest| {
            resource(first)
                && second.eq_ignore_ascii_case(version)
                && rest.eq_ignore_ascii_case(group)
        });
        let by_group = word
            .split_once('.')
            .is_some_and(|(r, g)| resource(r) && g.eq_ignore_ascii_case(group));
        by_version || by_group
    }

    /// The API server's NotFound for `name` of this kind.
    pub(crate) fn not_found(&self, name: &str) -> LabError {
        crate::engine::views::not_found(self.api_resource(), name)
    }
}

/// The registry: every resource, in the order lists of kinds show them, each once.
macro_rules! registry {
    ($($file:ident :: $resource:ident),* $(,)?) => {
        /// Every kind's resource, in the order lists of kinds show them.
        pub(crate) static REGISTRY: [&dyn AnyResource; ApiKind::ALL.len()] =
            [$(&$file::$resource),*];

        /// Where each kind's entry is in [`REGISTRY`], by the kind's place in
        /// [`ApiKind::ALL`]; building it fails to compile when a kind is registered twice.
        const POSITION: [usize; ApiKind::ALL.len()] =
            positions([$(<<$file::$resource as Resource>::Spec as Kind>::API_KIND),*]);
    };
}

registry! {
    nodes::Nodes,
    pods::Pods,
    namespaces::Namespaces,
    network_policies::NetworkPolicies,
    net_attach_defs::NetAttachDefs,
    pvcs::Pvcs,
    pvs::Pvs,
    storage_classes::StorageClasses,
    volume_attachments::VolumeAttachments,
    volume_snapshots::VolumeSnapshots,
    volume_snapshot_contents::VolumeSnapshotContents,
    csi_nodes::CsiNodes,
    csi_drivers::CsiDrivers,
}

/// [`POSITION`] from the registry's kinds in order: the registry is as long as
/// [`ApiKind::ALL`], so with no kind twice every kind is there.
const fn positions(kinds: [ApiKind; ApiKind::ALL.len()]) -> [usize; ApiKind::ALL.len()] {
    let mut at = [usize::MAX; ApiKind::ALL.len()];
    let mut i = 0;
    while i < kinds.len() {
        let k = kinds[i] as usize;
        assert!(at[k] == usize::MAX, "a kind is registered twice");
        at[k] = i;
        i += 1;
    }
    at
}

/// A kind's resource.
pub(crate) fn of(kind: ApiKind) -> &'static dyn AnyResource {
    REGISTRY[POSITION[kind as usize]]
}

/// The kind a word names as typed (`po`, `PODS`, `pvc`, `net-attach-def`, `vs`), if any:
/// kubectl's plural, singular and short names, and the lab's aliases; or, as kubectl's
/// builder reads a word with dots (`mappingFor`), one of kubectl's names qualified by the
/// kind's group (`volumeattachment.storage.k8s.io`), or by its version and group
/// (`volumeattachments.v1.storage.k8s.io`), or the kind itself so qualified
/// (`VolumeAttachment.storage.k8s.io`).
pub fn lookup(word: &str) -> Option<ApiKind> {
    REGISTRY
        .iter()
        .find(|r| r.names().matches(word))
        .or_else(|| REGISTRY.iter().find(|r| r.qualified_by(word)))
        .map(|r| r.kind())
}

/// One kind's objects as `get KIND -o wide` lists them in one namespace or all (k9s's
/// resource view, `:pods` in the dashboard): the table, and the object each row shows.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The kind listed.
    pub kind: ApiKind,
    /// `get -o wide`'s table, its rows in the store's order.
    pub table: Table,
    /// The object each row of the table shows, in the same order.
    pub objects: Vec<ObjectRef>,
}

/// The listing of the kind a typed word names (`po`, `pvc`, `netpol`) in `namespace`
/// (every namespace when `None`, with kubectl's NAMESPACE column), or [`resolve`]'s error
/// for a word that names none (its did-you-mean included).
pub fn listing(lab: &Lab, word: &str, namespace: Option<&str>) -> Result<Listing, LabError> {
    let r = resolve(word)?;
    let sel = Sel::all_in(namespace);
    Ok(Listing {
        kind: r.kind(),
        table: r.table(lab, &sel, true),
        objects: r.kept_refs(lab, &sel),
    })
}

/// The words `describe` takes for an object: its kind's plural, its name, and `-n NS`
/// for a namespaced object outside `default`.
pub fn describe_line(o: &ObjectRef) -> String {
    let mut line = format!("describe {} {}", plural(o.kind), o.name);
    if !o.namespace.is_empty() && o.namespace != "default" {
        line.push_str(&format!(" -n {}", o.namespace));
    }
    line
}

/// The resource a typed word names, or kubectl's answer to a kind the server does not
/// serve (`the server doesn't have a resource type "pdos"`), then the lab's lines: the
/// nearest kinds by their spellings (`did you mean pods?`, see [`near`]) and every kind.
pub(crate) fn resolve(word: &str) -> Result<&'static dyn AnyResource, LabError> {
    if let Some(kind) = lookup(word) {
        return Ok(of(kind));
    }
    // kubectl names the resource part of a qualified word (`pod` of `pod.storage.k8s.io`:
    // `schema.ParseGroupResource` cuts at the first dot).
    let (word, qualified) = word
        .split_once('.')
        .map_or((word, false), |(r, _)| (r, true));
    // cli-runtime's `mappingFor` quotes `groupResource.Resource` as typed (`"PDOS"`).
    let mut msg = format!("the server doesn't have a resource type {word:?}");
    // A kind's own word with another group is no misspelling.
    let near = if qualified && lookup(word).is_some() {
        Vec::new()
    } else {
        near(word)
    };
    if !near.is_empty() {
        msg.push_str(&format!("\ndid you mean {}?", near.join(" or ")));
    }
    msg.push_str(&format!("\nkinds are: {}", entries(|_| true).join(", ")));
    Err(LabError::msg(msg))
}

/// The kinds a mistyped word is nearest to, as lists of kinds spell them (`pods`, `pvc`):
/// every spelling of every kind (plural, singular, short names, aliases) is compared with
/// `command::help::suggest` (a prefix, or an edit distance of 1, 2 for words over four
/// letters; ties in the registry's order), so the answer is the same every time.
fn near(word: &str) -> Vec<String> {
    let spellings: Vec<(String, String)> = REGISTRY
        .iter()
        .flat_map(|r| {
            let n = r.names();
            [n.plural, n.singular]
                .into_iter()
                .chain(n.short.iter().copied())
                .chain(n.aliases.iter().copied())
                .map(move |s| (s.to_string(), n.listed.to_string()))
        })
        .collect();
    crate::command::help::suggest(word, &spellings)
}

/// The resource of an object's `kind` as a manifest spells it (`Pod`, `CSIDriver`).
pub(crate) fn by_kind(kind: &str) -> Option<&'static dyn AnyResource> {
    REGISTRY.iter().copied().find(|r| r.kind().name() == kind)
}

/// kubectl's plural resource name of a kind (`pods`): the word the lab's errors name it
/// by, and the key its objects have in a save file.
pub fn plural(kind: ApiKind) -> &'static str {
    of(kind).names().plural
}

/// `1 node`, `3 pods`: a count of objects of a kind, by its singular and plural.
pub fn count(kind: ApiKind, n: usize) -> String {
    let names = of(kind).names();
    crate::util::text::plural(n, names.singular, names.plural)
}

/// The list entries (`nodes (no)`) of the kinds `keep` keeps, in the registry's order.
fn entries(keep: impl Fn(&dyn AnyResource) -> bool) -> Vec<String> {
    REGISTRY
        .iter()
        .filter(|r| keep(**r))
        .map(|r| r.names().entry())
        .collect()
}

/// `a, b and c`.
fn and_list(mut items: Vec<String>) -> String {
    match items.pop() {
        None => String::new(),
        Some(last) if items.is_empty() => last,
        Some(last) => format!("{} and {last}", items.join(", ")),
    }
}

/// The words Tab offers where a kind goes.
pub(crate) fn completion_words() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|r| r.names().completes_as)
}

/// The kinds help lists for `get`, `delete` and `apply`, from the registry.
pub struct Help;

impl KindLists for Help {
    fn kinds(&self, of: KindsOf) -> Vec<String> {
        match of {
            KindsOf::Get => entries(|_| true),
            KindsOf::Delete => entries(|r| !matches!(r.delete(), Delete::Refused { .. })),
            KindsOf::Apply => REGISTRY
                .iter()
                .filter(|r| matches!(r.apply(), Apply::Reads(_)))
                .map(|r| r.kind().name().to_string())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_once_under_its_own_names() {
        for kind in ApiKind::ALL {
            let r = of(kind);
            assert_eq!(r.kind(), kind);
            let n = r.names();
            for word in [n.plural, n.singular, n.listed, n.completes_as]
                .into_iter()
                .chain(n.short.iter().copied())
                .chain(n.aliases.iter().copied())
            {
                assert_eq!(lookup(word), Some(kind), "{word}");
                assert_eq!(lookup(&word.to_ascii_uppercase()), Some(kind), "{word}");
            }
        }
        assert_eq!(REGISTRY.len(), ApiKind::ALL.len());
        assert_eq!(lookup("widgets"), None);
    }

    #[test]
    fn no_two_kinds_share_a_word() {
        let mut seen = std::collections::BTreeMap::new();
        for r in REGISTRY {
            let n = r.names();
            let words = [n.plural, n.singular]
                .into_iter()
                .chain(n.short.iter().copied())
                .chain(n.aliases.iter().copied());
            for w in words {
                if let Some(other) = seen.insert(w.to_ascii_lowercase(), r.kind()) {
                    assert_eq!(other, r.kind(), "{w} names two kinds");
                }
            }
        }
    }

    #[test]
    fn a_mistyped_kind_is_kubectl_s_error_with_the_nearest_kinds() {
        let e = |w: &str| resolve(w).err().map(|e| e.message).unwrap_or_default();
        let m = e("pdos");
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(
            lines.get(..2),
            Some(
                &[
                    "the server doesn't have a resource type \"pdos\"",
                    "did you mean pods?"
                ][..]
            ),
            "{m}"
        );
        assert!(
            lines[2].starts_with("kinds are: nodes (no), pods (po),"),
            "{m}"
        );
        assert_eq!(near("nodse"), ["nodes"]);
        assert_eq!(near("PVCS"), ["pvc"]);
        assert_eq!(near("netpols"), ["networkpolicies"]);
        assert_eq!(near("storagclass"), ["sc"]);
        // Nothing near: no suggestion line, only the kinds.
        let m = e("widgets");
        assert!(!m.contains("did you mean"), "{m}");
        assert_eq!(m.lines().count(), 2, "{m}");
        // The same answer every time.
        assert_eq!(e("pdos"), e("pdos"));
    }

    fn run(lab: &mut crate::engine::Lab, line: &str) -> String {
        lab.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
            .to_text()
    }

    /// A table's header words (a column of two words, `ACCESS MODES`, is two).
    fn header(text: &str) -> Vec<String> {
        text.lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// A table's first row, cell by cell (split on runs of two spaces or more).
    fn first_row(text: &str) -> Vec<String> {
        text.lines()
            .nth(1)
            .unwrap_or_default()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// printers.go's podColumnDefinitions: `-o wide` adds IP, Node, Nominated Node and
    /// Readiness Gates; printPod prints `<none>` for the last two when unset.
    #[test]
    fn get_pods_wide_has_printers_go_s_columns() {
        let mut lab = crate::engine::Lab::new();
        run(&mut lab, "pod create web --node node-1");
        let t = run(&mut lab, "get pods -o wide");
        assert_eq!(
            header(&t),
            [
                "NAME",
                "READY",
                "STATUS",
                "RESTARTS",
                "AGE",
                "IP",
                "NODE",
                "NOMINATED",
                "NODE",
                "READINESS",
                "GATES"
            ],
            "{t}"
        );
        assert_eq!(first_row(&t)[6..], ["node-1", "<none>", "<none>"], "{t}");
    }

    /// printers.go's nodeColumnDefinitions: `-o wide` adds Internal-IP, External-IP,
    /// OS-Image, Kernel-Version and Container-Runtime (no pod CIDR), read from the node's
    /// `status.nodeInfo`, which `-o json` carries.
    #[test]
    fn get_nodes_wide_shows_node_info_not_the_pod_cidr() {
        let mut lab = crate::engine::Lab::new();
        let t = run(&mut lab, "get nodes -o wide");
        assert_eq!(
            header(&t),
            [
                "NAME",
                "STATUS",
                "ROLES",
                "AGE",
                "VERSION",
                "INTERNAL-IP",
                "EXTERNAL-IP",
                "OS-IMAGE",
                "KERNEL-VERSION",
                "CONTAINER-RUNTIME"
            ],
            "{t}"
        );
        assert_eq!(
            first_row(&t)[4..],
            [
                "v1.31.0-lab",
                "192.168.0.1",
                "<none>",
                "Debian GNU/Linux 12 (bookworm)",
                "6.1.0-25-amd64",
                "containerd://1.7.22"
            ],
            "{t}"
        );
        let json = run(&mut lab, "get node node-1 -o json");
        assert!(
            json.contains("\"nodeInfo\": {")
                && json.contains("\"kubeletVersion\": \"v1.31.0-lab\"")
                && json.contains("\"containerRuntimeVersion\": \"containerd://1.7.22\""),
            "{json}"
        );
    }

    /// printers.go's csiDriverColumnDefinitions: TokenRequests and RequiresRepublish
    /// between StorageCapacity and Modes; printCSIDriver prints `<unset>` for nil
    /// tokenRequests.
    #[test]
    fn get_csidrivers_has_token_requests_and_requires_republish() {
        let mut lab = crate::engine::Lab::new();
        let t = run(&mut lab, "get csidrivers");
        assert_eq!(
            header(&t),
            [
                "NAME",
                "ATTACHREQUIRED",
                "PODINFOONMOUNT",
                "STORAGECAPACITY",
                "TOKENREQUESTS",
                "REQUIRESREPUBLISH",
                "MODES",
                "AGE"
            ],
            "{t}"
        );
        assert_eq!(
            first_row(&t)[..7],
            [
                "hostpath.csi.lab",
                "true",
                "true",
                "false",
                "<unset>",
                "false",
                "Persistent"
            ],
            "{t}"
        );
    }

    /// printers.go's persistentVolumeColumnDefinitions and
    /// persistentVolumeClaimColumnDefinitions: VolumeAttributesClass (`<unset>` when nil)
    /// after StorageClass, a PV's Reason, and VolumeMode at priority 1.
    #[test]
    fn get_pv_and_pvc_have_volume_attributes_class_reason_and_wide_volume_mode() {
        let mut lab = crate::engine::Lab::new();
        run(&mut lab, "pvc create data --size 1Gi");
        let words = |v: &[&str]| {
            v.iter()
                .flat_map(|c| c.split(' '))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let pv_columns = [
            "NAME",
            "CAPACITY",
            "ACCESS MODES",
            "RECLAIM POLICY",
            "STATUS",
            "CLAIM",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "REASON",
            "AGE",
        ];
        let t = run(&mut lab, "get pv");
        assert_eq!(header(&t), words(&pv_columns), "{t}");
        let t = run(&mut lab, "get pv -o wide");
        assert_eq!(
            header(&t),
            words(&[&pv_columns[..], &["VOLUMEMODE"]].concat()),
            "{t}"
        );
        let row = first_row(&t);
        // An empty REASON: the cells after CLAIM are class, `<unset>`, age, mode.
        assert_eq!(
            row[row.len() - 4..],
            ["standard", "<unset>", "0s", "Filesystem"],
            "{t}"
        );
        let pvc_columns = [
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE",
        ];
        let t = run(&mut lab, "get pvc");
        assert_eq!(header(&t), words(&pvc_columns), "{t}");
        let t = run(&mut lab, "get pvc -o wide");
        assert_eq!(
            header(&t),
            words(&[&pvc_columns[..], &["VOLUMEMODE"]].concat()),
            "{t}"
        );
        assert_eq!(
            first_row(&t)[5..],
            ["standard", "<unset>", "0s", "Filesystem"],
            "{t}"
        );
    }

    /// kubectl's DescribeEvents: the header, then `----\t------\t----\t----\t-------`,
    /// through the describer's tab writer (padding 2).
    #[test]
    fn describe_events_have_kubectl_s_separator_line() {
        let mut lab = crate::engine::Lab::new();
        run(&mut lab, "pvc create data --size 1Gi");
        let d = run(&mut lab, "describe pvc data");
        let lines: Vec<&str> = d.lines().collect();
        let at = lines.iter().position(|l| *l == "Events:").expect("Events:");
        // The From column is as wide as its widest cell, external-provisioner's source.
        let w = crate::storage::PROVISIONER_EVENT_SOURCE.len() + 2;
        assert_eq!(
            lines[at + 1..at + 3],
            [
                format!(
                    "  Type    Reason                 Age   {:<w$}Message",
                    "From"
                ),
                format!(
                    "  ----    ------                 ----  {:<w$}-------",
                    "----"
                ),
            ],
            "{d}"
        );
        assert!(
            lines[at + 3].starts_with(&format!(
                "  Normal  ExternalProvisioning   0s    {:<w$}Waiting",
                "persistentvolume-controller"
            )),
            "{d}"
        );
    }

    /// kubectl get's List for several objects (get.go: a `corev1.List` with an empty
    /// ListMeta, printed as an unstructured map): keys sorted, `metadata.resourceVersion` "".
    #[test]
    fn a_list_carries_kubectl_s_empty_resource_version() {
        let mut lab = crate::engine::Lab::new();
        let empty = run(&mut lab, "get pods -o json");
        assert_eq!(
            empty.trim_end(),
            "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}"
        );
        run(&mut lab, "pod create web --node node-1");
        let json = run(&mut lab, "get pods -o json");
        assert!(
            json.trim_end().ends_with(
                "    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}"
            ),
            "{json}"
        );
        let yaml = run(&mut lab, "get pods -o yaml");
        assert!(
            yaml.starts_with("apiVersion: v1\nitems:\n")
                && yaml.ends_with("kind: List\nmetadata:\n  resourceVersion: \"\"\n"),
            "{yaml}"
        );
    }

    #[test]
    fn resource_names_are_kubectl_s() {
        assert_eq!(
            of(ApiKind::NetworkAttachmentDefinition).resource_name(),
            "networkattachmentdefinition.k8s.cni.cncf.io"
        );
        assert_eq!(of(ApiKind::Pod).resource_name(), "pod");
        assert_eq!(
            by_kind("CSIDriver").map(|r| r.kind()),
            Some(ApiKind::CsiDriver)
        );
        assert!(by_kind("ConfigMap").is_none());
        assert_eq!(
            and_list(vec!["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
    }
}
