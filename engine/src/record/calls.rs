//! The two logs the lab keeps, both bounded so memory stays flat: the call log (who called
//! what, in order, with Kubernetes events for `describe`) and the wire log (each plugin
//! execution with its exact env, stdin and stdout, each CSI RPC with its request and reply).

use super::call::{CallEvent, Event};
use super::wire::{CsiCall, WireRecord};
use crate::cluster::ObjectRef;
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

/// The call log: a [`Ring`] of entries that also indexes its Kubernetes events by what
/// makes two of them the same (reason, object, its UID, message), so the API server's
/// aggregation of a repeat ([`CallLog::repeats_recent_event`]) is a lookup, not a scan.
#[derive(Debug, Clone)]
pub struct CallLog {
    /// The entries, shared (an [`crate::render::Outcome`] holds the ones its command caused
    /// until it is shown, and a copy of the lab shares them).
    ring: Ring<Arc<CallEvent>>,
    /// Event key hash → the sequence number of the latest entry with that key. Only
    /// lookups read it (output never does); entries older than the window are pruned.
    latest_event: rustc_hash::FxHashMap<u64, u64>,
}

/// How far back a repeated event is noticed: the last this many entries.
pub(crate) const REPEAT_WINDOW: u64 = 256;

impl CallLog {
    /// An empty log keeping at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        CallLog {
            ring: Ring::new(capacity),
            latest_event: rustc_hash::FxHashMap::default(),
        }
    }

    /// Append an entry with the next sequence number and return that number.
    pub fn push(&mut self, mut item: CallEvent) -> u64 {
        item.set_seq(self.ring.next_seq());
        let key = item.event().map(event_key);
        let seq = self.ring.push(Arc::new(item));
        if let Some(key) = key {
            self.latest_event.insert(key, seq);
            if self.latest_event.len() > 8 * REPEAT_WINDOW as usize {
                let floor = self.window_floor();
                self.latest_event.retain(|_, s| *s >= floor);
            }
        }
        seq
    }

    /// The first sequence number inside the repeat window.
    fn window_floor(&self) -> u64 {
        self.ring.next_seq().saturating_sub(REPEAT_WINDOW)
    }

    /// Whether one of the last [`REPEAT_WINDOW`] entries is this event already: the same
    /// reason, object, object UID and message.
    pub(crate) fn repeats_recent_event(&self, event: &Event) -> bool {
        let key = event_key(event);
        let same = |e: &CallEvent| e.event() == Some(event);
        let found = self
            .latest_event
            .get(&key)
            .is_some_and(|&seq| seq >= self.window_floor() && self.get(seq).is_some_and(same));
        debug_assert_eq!(
            found,
            self.iter()
                .rev()
                .take(REPEAT_WINDOW as usize)
                .any(|(_, e)| same(e)),
            "the event index agrees with a scan of the window"
        );
        found
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

/// A hash of what makes two events the same (FxHash: no random keys, the same in every
/// run, and cheap enough to run on every event recorded).
fn event_key(event: &Event) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    event.hash(&mut h);
    h.finish()
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
    fn a_repeated_event_is_found_within_the_window_only() {
        let mut log = CallLog::new(10_000);
        log.push(entry(event("Scheduled", "a", "uid-1", "assigned")));
        let repeats = |log: &CallLog, name: &str, uid: &str| {
            log.repeats_recent_event(&event("Scheduled", name, uid, "assigned"))
        };
        assert!(repeats(&log, "a", "uid-1"));
        // Another object, another incarnation of the name, another message: not a repeat.
        assert!(!repeats(&log, "b", "uid-1"));
        assert!(!repeats(&log, "a", "uid-2"));
        assert!(!log.repeats_recent_event(&event("Scheduled", "a", "uid-1", "x")));
        // 255 more entries: the event is still the 256th from the end.
        for i in 0..255 {
            log.push(entry(event("Pulled", "c", "uid-3", &i.to_string())));
        }
        assert!(repeats(&log, "a", "uid-1"));
        // More entries push it out of the window (and enough of them prune the index).
        for i in 0..3000 {
            log.push(entry(event("Pulled", "c", "uid-3", &format!("more {i}"))));
        }
        assert!(!repeats(&log, "a", "uid-1"));
        assert!(log.latest_event.len() <= 8 * REPEAT_WINDOW as usize + 1);
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
