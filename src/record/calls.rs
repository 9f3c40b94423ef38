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

/// The call log.
pub type CallLog = Ring<CallEvent>;

/// The wire log.
pub type WireLog = Ring<WireRecord>;

#[cfg(test)]
mod tests {
    use super::*;

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
