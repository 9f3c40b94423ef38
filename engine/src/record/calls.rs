//! The two logs the lab keeps, both bounded so memory stays flat: the call log (who called
//! what, in order, with Kubernetes event reasons for `describe`) and the wire log (each
//! plugin execution with its exact env, stdin and stdout).

use super::wire::WireRecord;
use std::borrow::Cow;
use std::collections::VecDeque;

/// How serious an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Level {
    /// Normal progress.
    Normal,
    /// Something failed or is waiting.
    Warning,
}

/// One entry of the call log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CallEvent {
    /// Sequence number (never reused).
    pub seq: u64,
    /// The logical clock when it happened.
    pub tick: crate::util::time::Millis,
    /// Who acted (`kubelet(node-1)`, `containerd(node-1)`, `bridge`).
    pub actor: String,
    /// What it did, in a few words (`CNI ADD`, `RunPodSandbox`): usually a literal.
    pub action: Cow<'static, str>,
    /// The detail line.
    pub detail: String,
    /// Normal or Warning.
    pub level: Level,
    /// The Kubernetes event reason, when this is also an object event (`Scheduled`).
    pub reason: Option<&'static str>,
    /// The object it concerns, as `Kind/ns/name`, for `describe`.
    pub object: Option<String>,
    /// The object's UID when the event was recorded, so `describe` shows only the events of
    /// this incarnation of a name (kubectl filters events by UID too).
    pub object_uid: Option<String>,
    /// Wire records produced by this call, `[first, end)` as the wire view reads them.
    pub wire: Option<(u64, u64)>,
}

impl CallEvent {
    /// A plain log line (no event reason, object or wire records); its sequence number is
    /// set when it is recorded.
    pub fn line(
        tick: crate::util::time::Millis,
        actor: String,
        action: Cow<'static, str>,
        detail: String,
        level: Level,
    ) -> Self {
        CallEvent {
            seq: 0,
            tick,
            actor,
            action,
            detail,
            level,
            reason: None,
            object: None,
            object_uid: None,
            wire: None,
        }
    }
}

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
    ring: Ring<CallEvent>,
    /// Event key hash → the sequence number of the latest entry with that key. Only
    /// lookups read it (output never does); entries older than the window are pruned.
    latest_event: rustc_hash::FxHashMap<u64, u64>,
}

/// How far back a repeated event is noticed: the last this many entries.
pub const REPEAT_WINDOW: u64 = 256;

impl CallLog {
    /// An empty log keeping at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        CallLog {
            ring: Ring::new(capacity),
            latest_event: rustc_hash::FxHashMap::default(),
        }
    }

    /// Append an entry and return its sequence number.
    pub fn push(&mut self, item: CallEvent) -> u64 {
        let key = item.reason.map(|r| {
            event_key(
                r,
                item.object.as_deref(),
                item.object_uid.as_deref(),
                &item.detail,
            )
        });
        let seq = self.ring.push(item);
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
    pub fn repeats_recent_event(
        &self,
        reason: &str,
        object: &str,
        uid: Option<&str>,
        message: &str,
    ) -> bool {
        let key = event_key(reason, Some(object), uid, message);
        let same = |e: &CallEvent| {
            e.reason == Some(reason)
                && e.object.as_deref() == Some(object)
                && e.object_uid.as_deref() == uid
                && e.detail == message
        };
        let found = self
            .latest_event
            .get(&key)
            .is_some_and(|&seq| seq >= self.window_floor() && self.ring.get(seq).is_some_and(same));
        debug_assert_eq!(
            found,
            self.ring
                .iter()
                .rev()
                .take(REPEAT_WINDOW as usize)
                .any(|(_, e)| same(e)),
            "the event index agrees with a scan of the window"
        );
        found
    }
}

impl std::ops::Deref for CallLog {
    type Target = Ring<CallEvent>;
    fn deref(&self) -> &Ring<CallEvent> {
        &self.ring
    }
}

/// A hash of what makes two events the same (FxHash: no random keys, the same in every
/// run, and cheap enough to run on every event recorded).
fn event_key(reason: &str, object: Option<&str>, uid: Option<&str>, message: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (reason, object, uid, message).hash(&mut h);
    h.finish()
}

/// The wire log.
pub type WireLog = Ring<WireRecord>;

#[cfg(test)]
mod tests {
    use super::*;

    fn event(reason: &'static str, object: &str, message: &str) -> CallEvent {
        let mut e = CallEvent::line(
            crate::util::time::Millis::ZERO,
            "actor".into(),
            reason.into(),
            message.into(),
            Level::Normal,
        );
        e.reason = Some(reason);
        e.object = Some(object.into());
        e.object_uid = Some("uid-1".into());
        e
    }

    #[test]
    fn a_repeated_event_is_found_within_the_window_only() {
        let mut log = CallLog::new(10_000);
        log.push(event("Scheduled", "Pod/default/a", "assigned"));
        let repeats = |log: &CallLog, object: &str, uid: Option<&str>| {
            log.repeats_recent_event("Scheduled", object, uid, "assigned")
        };
        assert!(repeats(&log, "Pod/default/a", Some("uid-1")));
        // Another object, another incarnation of the name, another message: not a repeat.
        assert!(!repeats(&log, "Pod/default/b", Some("uid-1")));
        assert!(!repeats(&log, "Pod/default/a", Some("uid-2")));
        assert!(!log.repeats_recent_event("Scheduled", "Pod/default/a", Some("uid-1"), "x"));
        // 255 more entries: the event is still the 256th from the end.
        for i in 0..255 {
            log.push(event("Pulled", "Pod/default/c", &i.to_string()));
        }
        assert!(repeats(&log, "Pod/default/a", Some("uid-1")));
        // More entries push it out of the window (and enough of them prune the index).
        for i in 0..3000 {
            log.push(event("Pulled", "Pod/default/c", &format!("more {i}")));
        }
        assert!(!repeats(&log, "Pod/default/a", Some("uid-1")));
        assert!(log.latest_event.len() <= 8 * REPEAT_WINDOW as usize + 1);
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
