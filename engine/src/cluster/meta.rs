//! Object metadata as the API server keeps it: name, namespace, uid, resourceVersion,
//! generation, labels, annotations.

use super::store::SharedKey;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `metadata` of an object (`ObjectMeta`).
#[derive(Clone, Default)]
pub struct Meta {
    /// The namespace (empty for cluster-scoped kinds) and the name, read with
    /// [`Meta::namespace`] and [`Meta::name`]: once the store holds the object, the
    /// table's key itself (one copy of the text, however many maps name the object).
    key: SharedKey,
    /// A deterministic UID derived from kind, namespace and name and the creation counter.
    pub uid: Uid,
    /// Assigned by the store on every write (a decimal string, as Kubernetes prints it).
    pub resource_version: u64,
    /// 1 on create and bumped only when the spec changes, for the kinds whose registry
    /// strategy keeps it ([`super::Kind::GENERATION`]); 0 (not printed) for the others.
    pub generation: u64,
    /// The logical time the object was created (the lab's clock, not wall time), printed
    /// as `creationTimestamp` counted from the lab's epoch.
    pub creation_tick: crate::util::time::Millis,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// The deletion time, annotations and finalizers, held only once one was set (most
    /// objects, a running pod among them, have none): read with [`Meta::deletion_tick`],
    /// [`Meta::annotations`] and [`Meta::finalizers`].
    rare: Option<Box<MetaRare>>,
}

// One a pod (in its object's own allocation): the rare fields are boxed and the names are
// the store key's, to keep this size.
const _: () = assert!(std::mem::size_of::<Meta>() <= 88);

/// The rare part of a [`Meta`].
#[derive(Debug, Clone, Default)]
struct MetaRare {
    deletion_tick: Option<crate::util::time::Millis>,
    annotations: BTreeMap<String, String>,
    finalizers: Vec<String>,
}

/// The annotations of an object that has none.
static NO_ANNOTATIONS: BTreeMap<String, String> = BTreeMap::new();

impl Meta {
    /// The object's name.
    pub fn name(&self) -> &String {
        &self.key.1
    }

    /// The namespace; empty for cluster-scoped kinds.
    pub fn namespace(&self) -> &String {
        &self.key.0
    }

    /// Rename the object (the text is copied first while the store's key shares it).
    pub fn set_name(&mut self, name: impl Into<String>) {
        Arc::make_mut(&mut self.key).1 = name.into();
    }

    /// Move the object to another namespace (copied first while shared, as
    /// [`Meta::set_name`]).
    pub fn set_namespace(&mut self, namespace: impl Into<String>) {
        Arc::make_mut(&mut self.key).0 = namespace.into();
    }

    /// Hold the names as `key` (the store's table key) when it spells them, instead of a
    /// copy.
    pub(crate) fn share_key(&mut self, key: &SharedKey) {
        if !Arc::ptr_eq(&self.key, key) && *self.key == **key {
            self.key = SharedKey::clone(key);
        }
    }

    /// Set when deletion was requested and teardown is still running
    /// (`deletionTimestamp`).
    pub fn deletion_tick(&self) -> Option<crate::util::time::Millis> {
        self.rare.as_ref().and_then(|r| r.deletion_tick)
    }

    /// Set (or clear) the deletion time.
    pub fn set_deletion_tick(&mut self, tick: Option<crate::util::time::Millis>) {
        self.rare_mut().deletion_tick = tick;
        self.drop_empty_rare();
    }

    /// Annotations.
    pub fn annotations(&self) -> &BTreeMap<String, String> {
        self.rare
            .as_ref()
            .map_or(&NO_ANNOTATIONS, |r| &r.annotations)
    }

    /// Replace the annotations.
    pub fn set_annotations(&mut self, annotations: BTreeMap<String, String>) {
        self.rare_mut().annotations = annotations;
        self.drop_empty_rare();
    }

    /// Annotations, to change.
    pub fn annotations_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.rare_mut().annotations
    }

    /// Finalizers that hold the object until they are removed.
    pub fn finalizers(&self) -> &[String] {
        self.rare.as_ref().map_or(&[], |r| &r.finalizers)
    }

    /// Finalizers, to change.
    pub fn finalizers_mut(&mut self) -> &mut Vec<String> {
        &mut self.rare_mut().finalizers
    }

    fn rare_mut(&mut self) -> &mut MetaRare {
        self.rare.get_or_insert_default()
    }

    /// Hold no rare part when all of it is empty.
    fn drop_empty_rare(&mut self) {
        if self.rare.as_ref().is_some_and(|r| {
            r.deletion_tick.is_none() && r.annotations.is_empty() && r.finalizers.is_empty()
        }) {
            self.rare = None;
        }
    }
}

/// Equal when every field reads the same (an emptied rare part equals none).
impl PartialEq for Meta {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && self.uid == other.uid
            && self.resource_version == other.resource_version
            && self.generation == other.generation
            && self.creation_tick == other.creation_tick
            && self.labels == other.labels
            && self.deletion_tick() == other.deletion_tick()
            && self.annotations() == other.annotations()
            && self.finalizers() == other.finalizers()
    }
}

impl Eq for Meta {}

/// As the fields were derived: the name and namespace as two fields.
impl std::fmt::Debug for Meta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meta")
            .field("name", self.name())
            .field("namespace", self.namespace())
            .field("uid", &self.uid)
            .field("resource_version", &self.resource_version)
            .field("generation", &self.generation)
            .field("creation_tick", &self.creation_tick)
            .field("labels", &self.labels)
            .field("rare", &self.rare)
            .finish()
    }
}

/// `metadata` as the API writes it, fields in `ObjectMeta`'s order as the lab prints them;
/// an empty namespace, label, annotation or finalizer list, a zero generation and an unset
/// deletion time are left out.
impl Serialize for Meta {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Meta", 10)?;
        st.serialize_field("name", self.name())?;
        if !self.namespace().is_empty() {
            st.serialize_field("namespace", self.namespace())?;
        }
        st.serialize_field("uid", &self.uid)?;
        st.serialize_field("resourceVersion", &self.resource_version.to_string())?;
        // `generation,omitempty`: the kinds that keep none print none.
        if self.generation != 0 {
            st.serialize_field("generation", &self.generation)?;
        }
        // `metav1.Time` keeps whole seconds: a sub-second clock time is truncated.
        st.serialize_field(
            "creationTimestamp",
            &timestamp(self.creation_tick.whole_secs()),
        )?;
        if let Some(tick) = self.deletion_tick() {
            st.serialize_field("deletionTimestamp", &timestamp(tick.whole_secs()))?;
        }
        if !self.labels.is_empty() {
            st.serialize_field("labels", &self.labels)?;
        }
        if !self.annotations().is_empty() {
            st.serialize_field("annotations", self.annotations())?;
        }
        if !self.finalizers().is_empty() {
            st.serialize_field("finalizers", self.finalizers())?;
        }
        st.end()
    }
}

/// An object's UID: 128 bits, printed in the 8-4-4-4-12 form Kubernetes prints. The
/// default is the empty UID of an object the store has not written yet, printed as an
/// empty string (`types.UID("")`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uid(Option<[u8; 16]>);

impl Uid {
    /// The UID of these 128 bits (most significant byte first).
    pub(crate) fn from_bytes(bytes: [u8; 16]) -> Self {
        Uid(Some(bytes))
    }

    /// The UID as text, on the stack.
    pub fn text(&self) -> UidText {
        let mut text = UidText {
            bytes: [0; 36],
            len: 0,
        };
        let Some(bytes) = self.0 else {
            return text;
        };
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [0u8; 32];
        for (pair, b) in digits.chunks_exact_mut(2).zip(bytes) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 0x0f)];
        }
        // 8-4-4-4-12 digits, a dash between groups.
        text.bytes[..8].copy_from_slice(&digits[..8]);
        text.bytes[9..13].copy_from_slice(&digits[8..12]);
        text.bytes[14..18].copy_from_slice(&digits[12..16]);
        text.bytes[19..23].copy_from_slice(&digits[16..20]);
        text.bytes[24..].copy_from_slice(&digits[20..]);
        for dash in [8, 13, 18, 23] {
            text.bytes[dash] = b'-';
        }
        text.len = 36;
        text
    }
}

/// The text of a [`Uid`] (36 characters, or empty for the empty UID).
#[derive(Clone, Copy)]
pub struct UidText {
    bytes: [u8; 36],
    len: usize,
}

impl std::ops::Deref for UidText {
    type Target = str;
    fn deref(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("hex digits and dashes are ASCII")
    }
}

impl std::fmt::Display for Uid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Uid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// A UID given as text (a claim's or snapshot's reference, which a manifest may set) names
/// this object's UID when the texts are the same.
impl PartialEq<str> for Uid {
    fn eq(&self, other: &str) -> bool {
        *self.text() == *other
    }
}

impl PartialEq<String> for Uid {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl PartialEq<Uid> for String {
    fn eq(&self, other: &Uid) -> bool {
        *other == **self
    }
}

#[cfg(test)]
/// The lab's clock starts at this instant; timestamps are deterministic.
pub(crate) const EPOCH: &str = "2025-01-01T00:00:00Z";

/// [`EPOCH`] in seconds since the Unix epoch: what a component's wall clock reads at tick 0
/// (the CSI driver stamps snapshots with it, so `creation_time` and the API objects agree).
pub(crate) const EPOCH_UNIX: i64 = 1_735_689_600;

/// A logical tick (seconds since the lab's epoch) as an RFC 3339 timestamp.
pub(crate) fn timestamp(tick: u64) -> String {
    let days = tick / 86_400;
    let rem = tick % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 2025-01-01 (proleptic Gregorian).
    // Whole 400-year cycles (146,097 days each) first, so a huge clock cannot loop long.
    let mut year = 2025u64.saturating_add((days / 146_097).saturating_mul(400));
    let mut day = days % 146_097;
    loop {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let len = if leap { 366 } else { 365 };
        if day < len {
            break;
        }
        day -= len;
        year += 1;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let months = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for len in months {
        if day < len {
            break;
        }
        day -= len;
        month += 1;
    }
    format!("{year:04}-{month:02}-{:02}T{h:02}:{m:02}:{s:02}Z", day + 1)
}

/// A tick as Go's `time.RFC1123Z` prints it (`Wed, 01 Jan 2025 00:00:05 +0000`), as
/// kubectl describe prints condition times; `None` is the zero time
/// (`Mon, 01 Jan 0001 00:00:00 +0000`).
pub(crate) fn rfc1123z(tick: Option<u64>) -> String {
    let Some(tick) = tick else {
        return "Mon, 01 Jan 0001 00:00:00 +0000".to_string();
    };
    // 2025-01-01 was a Wednesday.
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let day = DAYS[((3 + tick / 86_400) % 7) as usize];
    // From the RFC 3339 text: YYYY-MM-DDTHH:MM:SSZ.
    let t = timestamp(tick);
    let (date, time) = t.split_once('T').unwrap_or((&t, ""));
    let mut parts = date.splitn(3, '-');
    let (y, m, d) = (
        parts.next().unwrap_or(""),
        parts
            .next()
            .and_then(|m| m.parse::<usize>().ok())
            .unwrap_or(1),
        parts.next().unwrap_or(""),
    );
    let month = MONTHS[m.clamp(1, 12) - 1];
    format!(
        "{day}, {d} {month} {y} {} +0000",
        time.trim_end_matches('Z')
    )
}

/// A tick as Go's `time.Time.String` prints a UTC time (`2025-01-01 00:00:05 +0000 UTC`),
/// as kubectl describe prints a `metav1.Time` with `%s` (NetworkPolicy's `Created on:`).
pub(crate) fn go_time_string(tick: u64) -> String {
    let t = timestamp(tick);
    format!(
        "{} +0000 UTC",
        t.replacen('T', " ", 1).trim_end_matches('Z')
    )
}

pub(crate) fn opt_tick_as_timestamp<S: serde::Serializer>(
    tick: &Option<crate::util::time::Millis>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match tick {
        Some(t) => s.serialize_str(&timestamp(t.whole_secs())),
        None => s.serialize_none(),
    }
}

impl Meta {
    /// Metadata for a new object (uid and resourceVersion are set by the store).
    pub fn named(name: &str, namespace: &str) -> Self {
        Meta {
            key: Arc::new((namespace.to_string(), name.to_string())),
            uid: Uid::default(),
            resource_version: 0,
            generation: 0,
            creation_tick: Default::default(),
            labels: BTreeMap::new(),
            rare: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Uid, rfc1123z, timestamp};

    #[test]
    fn uids_print_in_groups_and_the_empty_one_as_nothing() {
        let uid = Uid::from_bytes([
            0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54,
            0x32, 0x10,
        ]);
        assert_eq!(uid.to_string(), "01234567-89ab-cdef-fedc-ba9876543210");
        assert_eq!(
            serde_json::to_string(&uid).unwrap(),
            "\"01234567-89ab-cdef-fedc-ba9876543210\""
        );
        assert_eq!(Uid::default().to_string(), "");
        let text = String::from("01234567-89ab-cdef-fedc-ba9876543210");
        assert_eq!(uid, text);
        assert_eq!(text, uid);
        assert_ne!(uid, String::new());
        assert_eq!(String::new(), Uid::default());
    }

    #[test]
    fn timestamps_count_from_the_epoch() {
        assert_eq!(rfc1123z(Some(5)), "Wed, 01 Jan 2025 00:00:05 +0000");
        assert_eq!(
            rfc1123z(Some(86_400 * 59 + 3661)),
            "Sat, 01 Mar 2025 01:01:01 +0000"
        );
        assert_eq!(rfc1123z(None), "Mon, 01 Jan 0001 00:00:00 +0000");
        assert_eq!(
            super::go_time_string(86_400 + 3661),
            "2025-01-02 01:01:01 +0000 UTC"
        );
        assert_eq!(timestamp(0), super::EPOCH);
        assert_eq!(timestamp(3661), "2025-01-01T01:01:01Z");
        assert_eq!(timestamp(59 * 86_400), "2025-03-01T00:00:00Z");
        assert_eq!(timestamp(365 * 86_400), "2026-01-01T00:00:00Z");
    }

    #[test]
    fn the_epoch_in_unix_seconds_is_the_epoch() {
        let t = crate::csi::protojson::Timestamp::from_seconds(super::EPOCH_UNIX + 3661);
        assert_eq!(t.to_rfc3339(), timestamp(3661));
    }
}
