//! Which objects a storage controller looks at on a pass, as its informer and work queue
//! would hand them over: the objects it selected last time (their work may not be done)
//! plus the objects written since, read from the store's watch log. Nothing else can have
//! started to need work, because each controller's selection depends only on the objects
//! themselves (and, for the PV controller, on the claim a PV names).
//!
//! So a pass costs O(objects with work + writes since the last pass), not O(all claims or
//! volumes): with a bound claim on each of 1,000 nodes, a pod create no longer makes every
//! controller walk 1,000 claims and PVs several times. The first pass, and any pass after
//! the watch log dropped events it had not read (`WATCH_WINDOW`), looks at every object,
//! as a relist does. A replaced lab (`load`, `reset`) starts with fresh work sets.

use crate::cluster::{EventType, Kind, Object, PvSpec, Revisions, Table, VaSpec, WatchEvent};
use std::collections::BTreeSet;

/// A table key: (namespace, name); the namespace is empty for cluster-scoped kinds.
pub type Key = (String, String);

pub(crate) use crate::util::hash::LookupMap;

/// A table key ordered as the store orders `(namespace, name)`, but compared without
/// handing empty strings to `memcmp`: glibc's AVX-512 `memcmp` takes a very slow path for
/// a zero-length compare of `String::new()`'s dangling pointer on some CPUs (~130 ns on the
/// benchmark machine), and every cluster-scoped key has an empty namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjKey(pub Key);

/// `a.cmp(b)` for strings, deciding empty strings by length alone.
fn cmp_str(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_empty() || b.is_empty() {
        a.len().cmp(&b.len())
    } else {
        a.cmp(b)
    }
}

impl Ord for ObjKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        cmp_str(&self.0.0, &other.0.0).then_with(|| cmp_str(&self.0.1, &other.0.1))
    }
}

impl PartialOrd for ObjKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A table key borrowed, ordered as [`ObjKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct KeyRef<'a>(&'a str, &'a str);

impl<'a> KeyRef<'a> {
    fn of(key: &'a Key) -> Self {
        KeyRef(&key.0, &key.1)
    }

    /// The key a watch event names (`ns/name` or `name`).
    fn of_event(e: &'a WatchEvent) -> Self {
        // '/' is ASCII: a byte search finds it (cheaper than a `char` pattern's searcher).
        match e.key.bytes().position(|b| b == b'/') {
            Some(at) => KeyRef(&e.key[..at], &e.key[at + 1..]),
            None => KeyRef("", &e.key),
        }
    }
}

impl Ord for KeyRef<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        cmp_str(self.0, other.0).then_with(|| cmp_str(self.1, other.1))
    }
}

impl PartialOrd for KeyRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The store's own copy of a table key, shared: what a work set keeps and hands over.
pub(crate) use crate::cluster::store::SharedKey;

/// One controller's view of one kind: where it is in the watch log and what it selected
/// last time.
#[derive(Debug, Clone, Default)]
pub struct WorkSet {
    /// The index of the first watch event not yet read (`None` before the first pass).
    seen: Option<u64>,
    /// The keys the last pass selected, in order.
    pending: Vec<SharedKey>,
}

/// The watch events from index `from` on, or `None` when some of them were dropped.
pub(crate) fn events_from(
    revs: &Revisions,
    from: u64,
) -> Option<impl Iterator<Item = &WatchEvent>> {
    let first = revs.events.front().map_or(revs.next_event, |e| e.index);
    if from < first || from > revs.next_event {
        return None;
    }
    let skip = usize::try_from(from - first).ok()?;
    Some(revs.events.iter().skip(skip))
}

/// The table key a watch event names (`ns/name` or `name`).
pub(crate) fn event_key(e: &WatchEvent) -> ObjKey {
    let KeyRef(ns, name) = KeyRef::of_event(e);
    let ns = if ns.is_empty() {
        crate::cluster::no_namespace()
    } else {
        ns.to_string()
    };
    ObjKey((ns, name.to_string()))
}

/// Look objects up one by one only when there are few of them for the table's size;
/// otherwise a walk of the table is cheaper (and gives the same answer).
const LOOKUP_FACTOR: usize = 8;

impl WorkSet {
    /// The keys of the objects of `table` that pass `keep`, in key order, as a scan of the
    /// whole table would find them: only last pass's selection and the objects of kind `K`
    /// written since are checked. `related` sees every unread event and may add more keys
    /// (objects whose selection depends on the object the event names). The controller
    /// reads each object from the table as it handles it, as a sync reads its informer's
    /// lister, and copies only what it writes.
    pub fn keys<K: Kind>(
        &mut self,
        revs: &Revisions,
        table: &Table<K>,
        related: impl FnMut(&WatchEvent, &mut BTreeSet<ObjKey>),
        keep: impl Fn(&Object<K>) -> bool,
    ) -> Vec<SharedKey> {
        self.keys_filtered(revs, table, related, |_| true, keep)
    }

    /// [`keys`](Self::keys), each object copied out of the table (for a controller that
    /// handles an object by value).
    pub fn select<K: Kind>(
        &mut self,
        revs: &Revisions,
        table: &Table<K>,
        related: impl FnMut(&WatchEvent, &mut BTreeSet<ObjKey>),
        keep: impl Fn(&Object<K>) -> bool,
    ) -> Vec<Object<K>> {
        self.select_filtered(revs, table, related, |_| true, keep)
    }

    /// [`keys_filtered`](Self::keys_filtered), each object copied out of the table.
    pub fn select_filtered<K: Kind>(
        &mut self,
        revs: &Revisions,
        table: &Table<K>,
        related: impl FnMut(&WatchEvent, &mut BTreeSet<ObjKey>),
        wanted: impl Fn(&WatchEvent) -> bool,
        keep: impl Fn(&Object<K>) -> bool,
    ) -> Vec<Object<K>> {
        self.keys_filtered(revs, table, related, wanted, keep)
            .iter()
            .filter_map(|k| table.get(k).cloned())
            .collect()
    }

    /// [`keys`](Self::keys) for an informer whose event handler is filtered: an event
    /// of kind `K` is looked at only when `wanted` says the object it carries could pass
    /// `keep` (the scheduler's `unassignedPod`: a pod written with a node never needs it
    /// again, so its events are not even looked up). `wanted` must never turn away an
    /// event of an object `keep` would pass.
    pub fn keys_filtered<K: Kind>(
        &mut self,
        revs: &Revisions,
        table: &Table<K>,
        mut related: impl FnMut(&WatchEvent, &mut BTreeSet<ObjKey>),
        wanted: impl Fn(&WatchEvent) -> bool,
        keep: impl Fn(&Object<K>) -> bool,
    ) -> Vec<SharedKey> {
        let events = self.seen.and_then(|seen| events_from(revs, seen));
        self.seen = Some(revs.next_event);
        let scan = || -> Vec<&SharedKey> {
            table
                .iter()
                .filter(|(_, o)| keep(o))
                // The walk lends plain keys; a kept one's shared key is read by name.
                .filter_map(|(k, _)| table.get_shared(&k.0, &k.1).map(|(k, _)| k))
                .collect()
        };
        let last = std::mem::take(&mut self.pending);
        let selected: Vec<&SharedKey> = match events {
            Some(mut events) => {
                let mut first = events.next();
                if first.is_none() && last.is_empty() {
                    debug_assert!(
                        !table.values().any(&keep),
                        "a {} work set missed an object with work",
                        K::KIND
                    );
                    return Vec::new();
                }
                let mut related_keys: BTreeSet<ObjKey> = BTreeSet::new();
                let mut candidates: Vec<KeyRef<'_>> = last.iter().map(|k| KeyRef::of(k)).collect();
                while let Some(e) = first {
                    if e.kind == K::API_KIND && wanted(e) {
                        candidates.push(KeyRef::of_event(e));
                    }
                    related(e, &mut related_keys);
                    first = events.next();
                }
                candidates.extend(related_keys.iter().map(|k| KeyRef::of(&k.0)));
                candidates.sort_unstable();
                candidates.dedup();
                if candidates.len().saturating_mul(LOOKUP_FACTOR) >= table.len() {
                    scan()
                } else {
                    // Point reads by hash (a walk of the ordered keys compares long keys
                    // at every level).
                    candidates
                        .into_iter()
                        .filter_map(|KeyRef(ns, name)| {
                            let (k, o) = table.get_shared(ns, name)?;
                            keep(o).then_some(k)
                        })
                        .collect()
                }
            }
            None => scan(),
        };
        // Tests (debug builds) check every selection against a scan of the whole table.
        debug_assert!(
            selected
                .iter()
                .map(|k| &***k)
                .eq(table.iter().filter(|(_, o)| keep(o)).map(|(k, _)| k)),
            "a {} work set missed an object with work, or kept one without",
            K::KIND
        );
        self.pending = selected.into_iter().cloned().collect();
        self.pending.clone()
    }

    /// Whether this work set has nothing to look at again and has read the watch log at
    /// least up to event `from` (see [`StorageWatch`]).
    pub(crate) fn quiet_since(&self, from: u64) -> bool {
        self.pending.is_empty() && self.seen.is_some_and(|s| s >= from)
    }

    /// Mark the watch log read up to `next` (every event from its position on was one no
    /// selection of this work set depends on).
    pub(crate) fn skip_to(&mut self, next: u64) {
        self.seen = Some(next);
    }

    /// Whether the next [`keys`](Self::keys) looks at every object.
    pub(crate) fn relists(&self, revs: &Revisions) -> bool {
        self.seen
            .and_then(|seen| events_from(revs, seen).map(|_| ()))
            .is_none()
    }
}

/// The PV controller's work set and the claim each PV names (so a write to a claim brings
/// the PVs bound to it back for a look).
#[derive(Debug, Clone, Default)]
pub(crate) struct BinderWork {
    /// PVs.
    pub pvs: WorkSet,
    /// PV name → the claim its claimRef names.
    claim_of: LookupMap<String, Key>,
    /// Claim → the PVs whose claimRef names it.
    pvs_of: LookupMap<Key, BTreeSet<String>>,
}

impl BinderWork {
    /// The keys of the PVs that pass `keep`, in name order (see [`WorkSet::keys`]).
    pub fn keys(
        &mut self,
        revs: &Revisions,
        pvs: &Table<PvSpec>,
        keep: impl Fn(&Object<PvSpec>) -> bool,
    ) -> Vec<SharedKey> {
        if self.pvs.relists(revs) {
            self.claim_of.clear();
            self.pvs_of.clear();
            for pv in pvs.values() {
                self.note(pv.name(), Some(pv));
            }
        }
        let (claim_of, pvs_of) = (&mut self.claim_of, &mut self.pvs_of);
        self.pvs.keys(
            revs,
            pvs,
            |e, candidates| {
                if e.kind == PvSpec::API_KIND {
                    // Once a PV's claimRef names a claim it keeps naming that claim:
                    // external-provisioner writes it at create, the PV controller's static
                    // binding writes it on a PV that had none (so not indexed here yet),
                    // and nothing in the lab moves it to another claim. So only a create, a
                    // delete, or a PV not indexed yet needs a look (a lookup in the PV
                    // table is not free, see `ObjKey`).
                    let name = &e.key;
                    match e.event_type {
                        EventType::Deleted => note(claim_of, pvs_of, name, None),
                        EventType::Modified if claim_of.contains_key(name) => {}
                        _ => {
                            let pv = pvs.get_named("", name);
                            note(claim_of, pvs_of, name, pv);
                        }
                    }
                } else if e.kind == crate::cluster::PvcSpec::API_KIND {
                    if let Some(names) = pvs_of.get(&event_key(e).0) {
                        candidates.extend(
                            names
                                .iter()
                                .map(|n| ObjKey((crate::cluster::no_namespace(), n.clone()))),
                        );
                    }
                }
            },
            keep,
        )
    }

    /// See [`WorkSet::quiet_since`].
    pub(crate) fn quiet_since(&self, from: u64) -> bool {
        self.pvs.quiet_since(from)
    }

    /// See [`WorkSet::skip_to`] (the claim index reads only PV events).
    pub(crate) fn skip_to(&mut self, next: u64) {
        self.pvs.skip_to(next);
    }

    fn note(&mut self, name: &str, pv: Option<&Object<PvSpec>>) {
        note(&mut self.claim_of, &mut self.pvs_of, name, pv);
    }
}

/// Record which claim a PV names now (`None`: the PV is gone).
fn note(
    claim_of: &mut LookupMap<String, Key>,
    pvs_of: &mut LookupMap<Key, BTreeSet<String>>,
    name: &str,
    pv: Option<&Object<PvSpec>>,
) {
    let now = pv
        .and_then(|pv| pv.spec.claim_ref.as_ref())
        .map(|r| (r.namespace.clone(), r.name.clone()));
    if claim_of.get(name) == now.as_ref() {
        return;
    }
    if let Some(old) = claim_of.remove(name) {
        if let Some(set) = pvs_of.get_mut(&old) {
            set.remove(name);
            if set.is_empty() {
                pvs_of.remove(&old);
            }
        }
    }
    if let Some(claim) = now {
        pvs_of
            .entry(claim.clone())
            .or_default()
            .insert(name.to_string());
        claim_of.insert(name.to_string(), claim);
    }
}

/// The PVs the PV controller's `findBestMatchForClaim` can choose for a claim: those with
/// no claimRef, and those pre-bound to a claim by name only (a claimRef without uid), by
/// name. Kept from the watch log (every PV written since the last look is looked up again),
/// so matching a claim looks at these few PVs instead of every PV; the first look, and one
/// after the watch log dropped events not read yet, walks every PV.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreePvs {
    /// The index of the first watch event not read yet (`None` before the first look).
    seen: Option<u64>,
    /// PV names.
    names: BTreeSet<String>,
}

impl FreePvs {
    /// Whether a PV can be chosen for a claim it is not bound to.
    pub fn holds(pv: &Object<PvSpec>) -> bool {
        pv.spec.claim_ref.as_ref().is_none_or(|r| r.uid.is_empty())
    }

    /// Move on to `next` when the log is read up to `from` and the events from there on
    /// are not PV events (see [`StorageWatch`]); otherwise they are read at the next look.
    pub(crate) fn skip_to(&mut self, from: u64, next: u64) {
        if self.seen.is_some_and(|s| s >= from) {
            self.seen = Some(next);
        }
    }

    /// The names, brought up to date with the PV table.
    pub fn refresh(&mut self, revs: &Revisions, pvs: &Table<PvSpec>) -> &BTreeSet<String> {
        match self.seen.and_then(|seen| events_from(revs, seen)) {
            Some(events) => {
                for e in events.filter(|e| e.kind == PvSpec::API_KIND) {
                    let pv = pvs.get_named("", &e.key);
                    if pv.is_some_and(Self::holds) {
                        self.names.insert(e.key.clone());
                    } else {
                        self.names.remove(&e.key);
                    }
                }
            }
            None => {
                self.names = pvs
                    .values()
                    .filter(|pv| Self::holds(pv))
                    .map(|pv| pv.name().to_string())
                    .collect();
            }
        }
        self.seen = Some(revs.next_event);
        debug_assert!(
            self.names.iter().eq(pvs
                .values()
                .filter(|pv| Self::holds(pv))
                .map(|pv| pv.metadata.name())),
            "the PV controller's free PVs differ from a scan"
        );
        &self.names
    }
}

/// The VolumeAttachments naming each PV, kept from the watch log as an informer's indexer
/// keeps them (external-attacher asks whether any attachment still names a volume before
/// it lets the volume go), so the question is one lookup, not a walk of every attachment.
/// The first look, and one after the watch log dropped events not read yet, reads every
/// VolumeAttachment.
#[derive(Debug, Clone, Default)]
pub(crate) struct VasByPv {
    /// The index of the first watch event not read yet (`None` before the first look).
    seen: Option<u64>,
    /// VolumeAttachment name → the PV it names.
    pv_of: LookupMap<String, String>,
    /// PV → the VolumeAttachments naming it.
    by_pv: LookupMap<String, BTreeSet<String>>,
}

impl VasByPv {
    /// As [`FreePvs::skip_to`], for VolumeAttachment events.
    pub(crate) fn skip_to(&mut self, from: u64, next: u64) {
        if self.seen.is_some_and(|s| s >= from) {
            self.seen = Some(next);
        }
    }

    /// Whether a VolumeAttachment of the table names `pv`.
    pub fn names(&mut self, revs: &Revisions, vas: &Table<VaSpec>, pv: &str) -> bool {
        match self.seen.and_then(|seen| events_from(revs, seen)) {
            Some(events) => {
                for e in events.filter(|e| e.kind == VaSpec::API_KIND) {
                    let name = &e.key;
                    match e.event_type {
                        EventType::Deleted => self.set(name, None),
                        // A VolumeAttachment's source is immutable: a write to a known one
                        // names the same PV.
                        EventType::Modified if self.pv_of.contains_key(name) => {}
                        _ => {
                            let va = vas.get_named("", name);
                            let named = va.map(|va| va.spec.source.persistent_volume_name.clone());
                            self.set(name, named);
                        }
                    }
                }
            }
            None => {
                self.pv_of.clear();
                self.by_pv.clear();
                for va in vas.values() {
                    let named = va.spec.source.persistent_volume_name.clone();
                    self.set(va.name(), Some(named));
                }
            }
        }
        self.seen = Some(revs.next_event);
        let found = self.by_pv.contains_key(pv);
        debug_assert_eq!(
            found,
            vas.values()
                .any(|va| va.spec.source.persistent_volume_name == pv),
            "external-attacher's attachments by volume differ from a scan"
        );
        found
    }

    /// Record which PV a VolumeAttachment names now (`None`: it is gone).
    fn set(&mut self, name: &str, pv: Option<String>) {
        if self.pv_of.get(name) == pv.as_ref() {
            return;
        }
        if let Some(old) = self.pv_of.remove(name) {
            if let Some(set) = self.by_pv.get_mut(&old) {
                set.remove(name);
                if set.is_empty() {
                    self.by_pv.remove(&old);
                }
            }
        }
        if let Some(pv) = pv {
            self.by_pv
                .entry(pv.clone())
                .or_default()
                .insert(name.to_string());
            self.pv_of.insert(name.to_string(), pv);
        }
    }
}

/// Whether a watch event can give a storage controller work, or change what one keeps:
/// claims, volumes, attachments, snapshots, CSIDrivers, StorageClasses, and pods that name
/// volumes. The events of a pod without volumes (its volumes never change), of nodes,
/// CSINodes, namespaces, network policies and network attachment definitions are none of
/// their business: no storage informer's handler looks at them. (external-provisioner and
/// external-attacher read a node's CSINode from their listers when they work on a claim
/// or an attachment; no CSINode event queues either, and no work set selects on one, so
/// kubelet registering the driver on a new node wakes no storage controller.)
pub(crate) fn storage_event(e: &WatchEvent) -> bool {
    use crate::cluster::ApiKind;
    match e.kind {
        ApiKind::Pod => e.facts.volumes,
        ApiKind::Namespace
        | ApiKind::Node
        | ApiKind::CsiNode
        | ApiKind::NetworkPolicy
        | ApiKind::NetworkAttachmentDefinition => false,
        ApiKind::StorageClass
        | ApiKind::PersistentVolumeClaim
        | ApiKind::PersistentVolume
        | ApiKind::VolumeAttachment
        | ApiKind::CsiDriver
        | ApiKind::VolumeSnapshot
        | ApiKind::VolumeSnapshotContent => true,
    }
}

/// Where the storage controllers' last full pass started in the watch log. When none of
/// the events written since is a [`storage_event`] and no controller kept work from that
/// pass, the pass would look at nothing: every work set's selection is empty and stays
/// so. Then each one's position in the log is moved on instead, and a network-only pod
/// costs the storage controllers one look at each of its events, not one per work set.
#[derive(Debug, Clone, Default)]
pub(crate) struct StorageWatch {
    /// The index of the first watch event of the last full pass (`None` before it).
    pass_start: Option<u64>,
    /// The events from `pass_start` up to this index are known to be none of storage's
    /// business, so each look reads only the events written since the last one (a look
    /// per command would otherwise read every event since the pass, again and again).
    quiet_to: u64,
}

impl StorageWatch {
    /// The start of the last full pass, when every event since is none of storage's
    /// business; `None` when a pass must run (the first, one after the watch log dropped
    /// events, or one with storage events to read).
    pub fn quiet_since(&mut self, revs: &Revisions) -> Option<u64> {
        let start = self.pass_start?;
        // The log must still hold the pass's first event (else a pass relists).
        let _since_pass = events_from(revs, start)?;
        let mut new = events_from(revs, self.quiet_to.max(start))?;
        if new.any(storage_event) {
            return None;
        }
        self.quiet_to = revs.next_event;
        debug_assert!(
            events_from(revs, start).is_some_and(|mut all| !all.any(storage_event)),
            "an event since the last pass is storage's business"
        );
        Some(start)
    }

    /// A full pass starts now.
    pub fn pass_starts(&mut self, revs: &Revisions) {
        self.pass_start = Some(revs.next_event);
        self.quiet_to = revs.next_event;
    }
}

/// No related objects: only the kind's own writes matter.
pub(crate) fn only_own(_: &WatchEvent, _: &mut BTreeSet<ObjKey>) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::store::WATCH_WINDOW;
    use crate::cluster::{Cluster, PvcSpec};

    fn claim(name: &str, class: &str) -> Object<PvcSpec> {
        Object::new(
            name,
            "default",
            PvcSpec {
                storage_class_name: class.into(),
                ..Default::default()
            },
        )
    }

    fn names(v: &[SharedKey]) -> Vec<&str> {
        v.iter().map(|k| k.1.as_str()).collect()
    }

    /// Selects claims of class `work`.
    fn select(ws: &mut WorkSet, c: &Cluster) -> Vec<SharedKey> {
        ws.keys(&c.revs, &c.pvcs, only_own, |p| {
            p.spec.storage_class_name == "work"
        })
    }

    #[test]
    fn a_work_set_sees_what_a_scan_sees() {
        let mut c = Cluster::default();
        let mut ws = WorkSet::default();
        for (n, class) in [("a", "work"), ("b", "idle"), ("c", "work")] {
            c.pvcs()
                .create(claim(n, class), crate::util::time::Millis::ZERO)
                .unwrap();
        }
        assert!(ws.relists(&c.revs));
        assert_eq!(names(&select(&mut ws, &c)), ["a", "c"]);
        assert!(!ws.relists(&c.revs));
        // Nothing written: the same selection (its work may not be done).
        assert_eq!(names(&select(&mut ws, &c)), ["a", "c"]);
        // b gets work, a is done, d is new, c is deleted.
        let mut b = c.pvcs.get(&("default".into(), "b".into())).unwrap().clone();
        b.spec.storage_class_name = "work".into();
        c.pvcs().update(b).unwrap();
        let mut a = c.pvcs.get(&("default".into(), "a".into())).unwrap().clone();
        a.spec.storage_class_name = "idle".into();
        c.pvcs().update(a).unwrap();
        c.pvcs()
            .create(claim("d", "work"), crate::util::time::Millis::ZERO)
            .unwrap();
        c.pvcs().delete("default", "c").unwrap();
        assert_eq!(names(&select(&mut ws, &c)), ["b", "d"]);
    }

    #[test]
    fn a_work_set_relists_after_the_watch_log_dropped_events() {
        let mut c = Cluster::default();
        let mut ws = WorkSet::default();
        c.pvcs()
            .create(claim("a", "idle"), crate::util::time::Millis::ZERO)
            .unwrap();
        assert!(select(&mut ws, &c).is_empty());
        c.pvcs()
            .create(claim("z", "work"), crate::util::time::Millis::ZERO)
            .unwrap();
        for i in 0..WATCH_WINDOW {
            c.pvcs()
                .create(
                    claim(&format!("x{i}"), "idle"),
                    crate::util::time::Millis::ZERO,
                )
                .unwrap();
        }
        assert!(ws.relists(&c.revs), "the event for z is gone");
        assert_eq!(names(&select(&mut ws, &c)), ["z"]);
    }

    fn va(name: &str, pv: &str) -> Object<VaSpec> {
        Object::new(
            name,
            "",
            VaSpec {
                attacher: "d".into(),
                source: crate::cluster::VaSource {
                    persistent_volume_name: pv.into(),
                },
                node_name: "node-1".into(),
            },
        )
    }

    /// external-attacher lets a volume go only when no attachment names it: the index
    /// answers as a walk of the attachments would, through creates, deletes and a relist.
    #[test]
    fn attachments_by_volume_follow_the_table() {
        let mut c = Cluster::default();
        let mut idx = VasByPv::default();
        let t0 = crate::util::time::Millis::ZERO;
        c.volume_attachments().create(va("a", "pv-1"), t0).unwrap();
        assert!(idx.names(&c.revs, &c.volume_attachments, "pv-1"));
        assert!(!idx.names(&c.revs, &c.volume_attachments, "pv-2"));
        c.volume_attachments().create(va("b", "pv-1"), t0).unwrap();
        c.volume_attachments().delete("", "a").unwrap();
        assert!(
            idx.names(&c.revs, &c.volume_attachments, "pv-1"),
            "b still does"
        );
        c.volume_attachments().delete("", "b").unwrap();
        assert!(!idx.names(&c.revs, &c.volume_attachments, "pv-1"));
        // Events dropped: every attachment is read again.
        c.volume_attachments().create(va("z", "pv-9"), t0).unwrap();
        for i in 0..WATCH_WINDOW {
            c.pvcs()
                .create(claim(&format!("x{i}"), "idle"), t0)
                .unwrap();
        }
        assert!(idx.names(&c.revs, &c.volume_attachments, "pv-9"));
    }

    #[test]
    fn obj_keys_order_as_the_store_orders_its_keys() {
        let words = [
            "",
            "a",
            "ab",
            "b",
            "default",
            "kube-system",
            "node-1",
            "node-10",
        ];
        for a in words {
            for b in words {
                for c in words {
                    let x: Key = (a.into(), b.into());
                    let y: Key = (a.into(), c.into());
                    let z: Key = (c.into(), b.into());
                    for (p, q) in [(&x, &y), (&x, &z), (&y, &z)] {
                        assert_eq!(ObjKey(p.clone()).cmp(&ObjKey(q.clone())), p.cmp(q));
                    }
                }
            }
        }
    }
}
