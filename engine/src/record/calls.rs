//! The two logs the lab keeps, both bounded so memory stays flat: the call log (who called
//! what, in order, with Kubernetes events for `describe`) and the wire log (each plugin
//! execution with its exact env, stdin and stdout, each CSI RPC with its request and reply).

use super::call::{CallEvent, Event, EventPart, Level};
use super::wire::{CsiCall, WireRecord};
use crate::cluster::ObjectRef;
use crate::util::time::Millis;
use std::collections::VecDeque;
use std::sync::Arc;

/// A bounded ring with absolute sequence numbers.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    items: VecDeque<T>,
    first_seq: u64,
    capacity: usize,
}

impl<T> Ring<T> {
    /// An empty ring keeping at most `capacity` items.
    pub fn new(capacity: usize) -> Self {
        Ring {
            items: VecDeque::with_capacity(capacity.min(1024)),
            first_seq: 0,
            capacity: capacity.max(1),
        }
    }

    /// Append an item and return its sequence number.
    pub fn push(&mut self, item: T) -> u64 {
        if self.items.len() == self.capacity {
            self.items.pop_front();
            self.first_seq += 1;
        }
        self.items.push_back(item);
        self.next_seq() - 1
    }

    /// The sequence number the next item will get.
    pub fn next_seq(&self) -> u64 {
        self.first_seq + self.items.len() as u64
    }

    /// The item with this sequence number, if still kept.
    pub fn get(&self, seq: u64) -> Option<&T> {
        seq.checked_sub(self.first_seq)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.items.get(i))
    }

    /// The kept items with their sequence numbers, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, &T)> {
        let first = self.first_seq;
        self.items
            .iter()
            .enumerate()
            .map(move |(i, t)| (first + i as u64, t))
    }

    /// Number of kept items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The call log: a [`Ring`] of entries. It keeps every Kubernetes event recorded, repeats
/// too; the API server's Event objects, which fold repeats into one with a count, are read
/// from it ([`fold_events`]).
#[derive(Debug, Clone)]
pub struct CallLog {
    /// The entries, shared (an [`crate::render::Outcome`] holds the ones its command caused
    /// until it is shown, and a copy of the lab shares them).
    ring: Ring<Arc<CallEvent>>,
}

impl CallLog {
    /// An empty log keeping at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        CallLog {
            ring: Ring::new(capacity),
        }
    }

    /// Append an entry with the next sequence number and return that number.
    pub fn push(&mut self, mut item: CallEvent) -> u64 {
        item.set_seq(self.ring.next_seq());
        self.ring.push(Arc::new(item))
    }

    /// The events about `object`, oldest first: with `uid`, only those of that incarnation
    /// of the name (and those recorded without one), as `describe` lists them.
    pub fn events<'a>(
        &'a self,
        object: &'a ObjectRef,
        uid: Option<crate::cluster::Uid>,
    ) -> impl Iterator<Item = (&'a CallEvent, &'a Event)> + 'a {
        self.iter().filter_map(move |(_, e)| {
            let ev = e.event()?;
            let this = &ev.object == object && uid.is_none_or(|u| ev.uid.is_none_or(|v| v == u));
            this.then_some((e, ev))
        })
    }

    /// Every Kubernetes event still kept, in the order recorded.
    pub(crate) fn all_events(&self) -> impl Iterator<Item = (&CallEvent, &Event)> {
        self.iter().filter_map(|(_, e)| e.event().map(|ev| (e, ev)))
    }

    /// Whether an event with `reason` was recorded about `object` (any incarnation).
    pub(crate) fn has_event(&self, object: &ObjectRef, reason: &str) -> bool {
        self.events(object, None).any(|(_, e)| e.reason == reason)
    }

    /// The latest CSI call of `rpc` (`NodeStageVolume`) still kept, with its wire record's
    /// number.
    pub(crate) fn latest_csi_call(&self, rpc: &str) -> Option<(u64, &CsiCall)> {
        self.iter()
            .rev()
            .find_map(|(_, e)| e.csi().filter(|(_, c)| c.rpc == rpc))
    }
}

impl CallLog {
    /// The entry with this sequence number, if still kept.
    pub fn get(&self, seq: u64) -> Option<&CallEvent> {
        self.ring.get(seq).map(|e| &**e)
    }

    /// The kept entries with their sequence numbers, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, &CallEvent)> {
        self.ring.iter().map(|(seq, e)| (seq, &**e))
    }

    /// The kept entries from sequence number `mark` on, shared.
    pub(crate) fn since(&self, mark: u64) -> impl Iterator<Item = Arc<CallEvent>> + '_ {
        (mark..self.ring.next_seq()).filter_map(|seq| self.ring.get(seq).cloned())
    }

    /// The sequence number the next entry will get.
    pub fn next_seq(&self) -> u64 {
        self.ring.next_seq()
    }

    /// Number of kept entries.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// One Event object as the API server keeps it: the occurrences of one event that
/// client-go's event recorder folded into it. Its `EventCorrelator` (`events_cache.go`)
/// keys an event by `getEventKey` (source component and host, involved object with its
/// UID, type, reason, message); a repeat of a key it has seen updates that Event instead
/// of creating one: `count` + 1, `lastTimestamp` now, `firstTimestamp` kept.
///
/// Not modelled: the `EventAggregator`'s folding of more than 10 similar events (differing
/// only in message) within 10 minutes into one reading `(combined from similar events): …`,
/// the spam filter's token bucket per source and object, and the recorder's bounded
/// (LRU) cache of keys: the lab's components do not repeat events at those rates in the
/// call log's span, and the call log itself is the bound.
#[derive(Debug, Clone, Copy)]
pub struct Folded<'a> {
    /// The first occurrence: its tick is `firstTimestamp`, its level the Event's type, its
    /// actor the Event's source.
    pub first: &'a CallEvent,
    /// The event (reason, object, message) it was recorded as.
    pub event: &'a Event,
    /// Which of the Events the recorded one is shown as ([`Event::parts`]).
    pub part: EventPart,
    /// The latest occurrence's tick: `lastTimestamp`.
    pub last: Millis,
    /// How many times it was recorded: `count`.
    pub count: u32,
}

/// The Event objects the API server keeps for these recorded events (oldest first, as
/// recorded; a container's `Started` as the three kubelet records, [`Event::parts`]): each repeat of an event folded into the first with its count and last time
/// (see [`Folded`]). Derived when shown, so the log stores nothing more per event.
pub fn fold_events<'a>(
    events: impl IntoIterator<Item = (&'a CallEvent, &'a Event)>,
) -> Vec<Folded<'a>> {
    use std::collections::hash_map::Entry;
    type Key<'a> = (&'a str, Option<&'a str>, Level, &'a Event, EventPart);
    let mut index: rustc_hash::FxHashMap<Key<'a>, usize> = rustc_hash::FxHashMap::default();
    let mut folded: Vec<Folded<'a>> = Vec::new();
    for (e, event) in events {
        for &part in event.parts() {
            let key = (e.event_source(), e.actor().node(), e.level(), event, part);
            match index.entry(key) {
                Entry::Occupied(at) => {
                    let f = &mut folded[*at.get()];
                    f.count += 1;
                    f.last = e.tick();
                }
                Entry::Vacant(at) => {
                    at.insert(folded.len());
                    folded.push(Folded {
                        first: e,
                        event,
                        part,
                        last: e.tick(),
                        count: 1,
                    });
                }
            }
        }
    }
    folded
}

impl Folded<'_> {
    /// The Event's reason.
    pub fn reason(&self) -> &'static str {
        self.event.part_reason(self.part)
    }

    /// The Event's message, written at the end of `out`.
    pub fn write_message(&self, out: &mut String) {
        self.event.write_part_message(self.part, out);
    }
}

/// The wire log.
pub type WireLog = Ring<WireRecord>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ApiKind;
    use crate::record::call::{Actor, Level, Message, What};

    fn event(reason: &'static str, name: &str, uid: &str, message: &str) -> Event {
        Event {
            reason,
            object: ObjectRef::new(ApiKind::Pod, "default", name),
            uid: Some(crate::util::hash::uid(&[uid])),
            message: Message::Text(message.into()),
            source: None,
        }
    }

    fn entry(e: Event) -> CallEvent {
        CallEvent::new(
            crate::util::time::Millis::ZERO,
            Actor::from("actor"),
            What::Event(e),
            Level::Normal,
        )
    }

    #[test]
    fn repeats_fold_into_one_event_with_a_count_and_last_time() {
        let mut log = CallLog::new(100);
        let at = |secs: u64, e: Event, level: Level, actor: Actor| {
            CallEvent::new(Millis::secs(secs), actor, What::Event(e), level)
        };
        let kubelet = || Actor::kubelet("node-1");
        let warn = |secs, e| at(secs, e, Level::Warning, kubelet());
        log.push(warn(1, event("FailedMount", "a", "uid-1", "boom")));
        log.push(warn(3, event("FailedMount", "a", "uid-1", "other")));
        log.push(warn(5, event("FailedMount", "a", "uid-1", "boom")));
        // Another incarnation, another type, another source: other Events.
        log.push(warn(6, event("FailedMount", "a", "uid-2", "boom")));
        log.push(at(
            7,
            event("FailedMount", "a", "uid-1", "boom"),
            Level::Normal,
            kubelet(),
        ));
        log.push(at(
            8,
            event("FailedMount", "a", "uid-1", "boom"),
            Level::Warning,
            Actor::kubelet("node-2"),
        ));
        log.push(warn(9, event("FailedMount", "a", "uid-1", "boom")));
        let folded = fold_events(log.all_events());
        let facts: Vec<_> = folded
            .iter()
            .map(|f| (f.first.tick().whole_secs(), f.last.whole_secs(), f.count))
            .collect();
        assert_eq!(
            facts,
            [(1, 9, 3), (3, 3, 1), (6, 6, 1), (7, 7, 1), (8, 8, 1)]
        );
    }

    /// A container's Started is the three Events kubelet records as it starts it, each
    /// folded with its own repeats; an `Always` image has no `Pulled` (it is pulled, and
    /// the pull's events are not modelled).
    #[test]
    fn a_started_event_is_pulled_created_started() {
        let started = |image: &'static str| Event {
            reason: "Started",
            object: ObjectRef::new(ApiKind::Pod, "default", "a"),
            uid: Some(crate::util::hash::uid(&["uid-1"])),
            message: Message::Started {
                container: "app".into(),
                image: image.into(),
            },
            source: None,
        };
        let mut log = CallLog::new(100);
        log.push(entry(started("registry.k8s.io/nginx-slim:0.27")));
        log.push(entry(started("registry.k8s.io/nginx-slim:0.27")));
        let shown: Vec<(String, String, u32)> = fold_events(log.all_events())
            .iter()
            .map(|f| {
                let mut m = String::new();
                f.write_message(&mut m);
                (f.reason().to_string(), m, f.count)
            })
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "Pulled".to_string(),
                    "Container image \"registry.k8s.io/nginx-slim:0.27\" already present on machine"
                        .to_string(),
                    2
                ),
                ("Created".to_string(), "Created container app".to_string(), 2),
                ("Started".to_string(), "Started container app".to_string(), 2),
            ]
        );
        let mut log = CallLog::new(100);
        log.push(entry(started("nginx")));
        let reasons: Vec<&str> = fold_events(log.all_events())
            .iter()
            .map(|f| f.reason())
            .collect();
        assert_eq!(reasons, ["Created", "Started"]);
    }

    #[test]
    fn events_are_found_by_object_and_incarnation() {
        let mut log = CallLog::new(100);
        log.push(entry(event("Scheduled", "a", "uid-1", "first")));
        log.push(entry(event("Started", "a", "uid-2", "second")));
        let mut no_uid = event("Killing", "a", "", "third");
        no_uid.uid = None;
        log.push(entry(no_uid));
        log.push(entry(event("Scheduled", "b", "uid-3", "other")));
        let a = ObjectRef::new(ApiKind::Pod, "default", "a");
        let reasons = |uid| -> Vec<&str> { log.events(&a, uid).map(|(_, e)| e.reason).collect() };
        assert_eq!(reasons(None), ["Scheduled", "Started", "Killing"]);
        assert_eq!(
            reasons(Some(crate::util::hash::uid(&["uid-2"]))),
            ["Started", "Killing"]
        );
        assert!(log.has_event(&a, "Started"));
        assert!(!log.has_event(&a, "Pulled"));
        assert!(!log.has_event(&ObjectRef::new(ApiKind::Pod, "other", "a"), "Started"));
    }

    #[test]
    fn ring_is_bounded_and_keeps_numbers() {
        let mut r = Ring::new(2);
        assert_eq!(r.push("a"), 0);
        assert_eq!(r.push("b"), 1);
        assert_eq!(r.push("c"), 2);
        assert_eq!(r.len(), 2);
        assert!(r.get(0).is_none());
        assert_eq!(r.get(2), Some(&"c"));
    }
}
