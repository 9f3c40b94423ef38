//! The timeline: the lab's past as events, and `timeline`, `rewind N` / `at N`, `rewind
//! --undo`.
//!
//! An event is one journal entry (see [`super::journal`]): a command that changed (or may
//! have changed) the lab, a failing one included when it changed something before it
//! failed; views and rejected commands (failed, nothing changed) are not events, and take
//! no number. Events are numbered from 1; event 0 is the start. The lab is deterministic, so the lab after event N is a
//! fresh lab of the journal's start with the first N entries replayed. To keep that fast
//! in a long session the lab keeps a [`Snapshot`] of itself each time the events since the
//! last one did [`SNAPSHOT_WORK`] units of work, or [`WORK_PER_WEIGHT`] times the lab's
//! size at the last one when that is more, while the copies together stay within
//! [`SNAPSHOT_BUDGET`], and replays from the nearest one at or before N. Work, not a count of events, so that cheap events (a `node add` while a large
//! preset builds: no call or wire record) take no copy of a large lab.
//!
//! `rewind N` makes the lab the one after event N and keeps the lab it left (the present)
//! aside: every view answers as of then, `rewind M` moves again within the present's
//! events and `rewind --undo` returns to the present. The first command that changes the
//! rewound lab forks the session: the present is dropped (the command says so in a line),
//! and the timeline continues from N. `save` writes the lab as it is, the first N events
//! (and the fork's, after a fork). Real mode cannot rewind: the real plugins' namespaces
//! have no past.

use super::{Lab, LabError};
use crate::render::{Line, Outcome, Role, Table};
use crate::util::chunked::ChunkedVec;
use crate::util::time::Millis;
use std::sync::Arc;

/// The work between two snapshots, in [`work`] units (one an event, one a call-log
/// record, one a wire record): a pod create and its delete are about 25. Rewinding replays
/// at most this much work; each snapshot is a copy of the lab. See BENCHMARKS.md ("Rewind",
/// issue 39) for the measurement that chose it. The property test lowers it on its own lab
/// (`History::snapshot_work`), so that its short sessions rewind through snapshots too.
pub(crate) const SNAPSHOT_WORK: u64 = 1500;

/// At most this many snapshots are kept: one more thins them to every other one (the
/// newest kept) and doubles the work between two, so a session of any length keeps a
/// bounded number of copies and rewinding replays at most twice as much as before.
pub(crate) const MAX_SNAPSHOTS: usize = 64;

/// The snapshots kept hold at most this much [`weight`] together: a snapshot that would
/// take them past it is not taken. A classroom lab (a few nodes, tens of pods: weight
/// under 100) never comes near it; a lab that grows past it (thousands of pods, or a
/// preset of a thousand nodes and more being built) stops being copied, so its copies cost
/// a bounded sum (about 2,000 objects: under 20 MB at the k8s-limits preset's 9 KB an
/// object) and not a multiple of the lab, and building `--preset k8s-limits` (5,000 `node
/// add`s on the timeline) copies no large lab. Rewinding past the last copy replays from
/// it (or from the timeline's start).
pub(crate) const SNAPSHOT_BUDGET: u64 = 2_000;

/// The work between two snapshots is at least this many times the lab's [`weight`] when
/// the last snapshot was taken (or at the timeline's start, before any): a large lab
/// (thousands of nodes or pods) is copied less often.
///
/// The weight is the one at the last snapshot, not the lab's now, so a lab that keeps
/// growing is still snapshotted: a copy costs about its weight, and the work since the last
/// copy is at least 16 times the weight then, so copying stays a bounded fraction of the
/// replay work it saves. Pods pinned to nodes (about 6 units of work each, 1 of weight)
/// take a copy each time the lab has grown about 3.7 times (16/6 + 1): the copies' sizes
/// grow geometrically, so together they hold about 0.4 of the lab, and a rewind replays at
/// most 16 times the weight of the snapshot before it. (Counting the lab's weight now, the
/// first version, never caught up with a growing lab: each pod added 16 to the interval
/// and 6 to the work, so it took no copy after the start and a rewind replayed everything.)
pub(crate) const WORK_PER_WEIGHT: u64 = 16;

/// How big a copy of the lab is, in objects: its pods, claims, volumes and attachments,
/// and its nodes twice (a node's kernel, routes and rules weigh more than a pod).
fn weight(lab: &Lab) -> u64 {
    let c = &lab.cluster;
    (c.pods.len() + 2 * c.nodes.len() + c.pvcs.len() + c.pvs.len() + c.volume_attachments.len())
        as u64
}

/// What a lab has done so far, in units of replay work (see [`SNAPSHOT_WORK`]).
fn work(lab: &Lab) -> u64 {
    lab.journal.entries.len() as u64 + lab.calls.next_seq() + lab.wire.next_seq()
}

/// A copy of the lab after an event, kept to replay from (its journal's entries are not
/// kept: the timeline has them).
#[derive(Clone)]
struct Snapshot {
    /// The event it was taken after.
    event: usize,
    /// The work done by then.
    work: u64,
    /// The lab's [`weight`] then.
    weight: u64,
    /// The lab.
    lab: Arc<Lab>,
}

/// The lab's past: the clock after each event, the snapshots, and while rewound the
/// present the rewind left.
#[derive(Clone)]
pub(crate) struct History {
    /// The work between two snapshots ([`SNAPSHOT_WORK`]), doubled each time they are
    /// thinned.
    pub(crate) snapshot_work: u64,
    /// The work between two snapshots per unit of the lab's weight at the last one
    /// ([`WORK_PER_WEIGHT`]; the property test sets 0).
    pub(crate) work_per_weight: u64,
    /// The most [`weight`] the snapshots may hold together ([`SNAPSHOT_BUDGET`]).
    pub(crate) snapshot_budget: u64,
    /// The lab's [`weight`] at the timeline's start: what the first snapshot's interval
    /// is measured by.
    start_weight: u64,
    /// The clock after each event (index `i` is event `i + 1`).
    times: ChunkedVec<Millis>,
    /// The wire log's next sequence number after each event: wire record `s` was made by
    /// the first event whose mark is above `s`.
    wire: ChunkedVec<u64>,
    /// The journal's indices of its views: entries that moved a mark (read-only calls made
    /// by hand) but are no events, in order. Event `n` is the journal's entry `n - 1` plus
    /// the views before it; a session of pods alone has none, so this costs no room a pod.
    views: Vec<usize>,
    /// Copies of the lab after some events, in event order.
    snapshots: Vec<Snapshot>,
    /// While rewound: the lab the first `rewind` left, with every event.
    present: Option<Arc<Lab>>,
}

/// One event, as `timeline` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its number, from 1.
    pub number: usize,
    /// The lab's clock after it.
    pub clock: Millis,
    /// The command line as typed.
    pub line: String,
    /// The command failed after changing the lab (a rejected command is no event).
    pub failed: bool,
}

/// Where the lab stands on its timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The event the lab is after (0: the start).
    pub at: usize,
    /// How many events the present has (equal to `at` unless rewound).
    pub of: usize,
}

impl Position {
    /// Whether the lab is rewound (the present is kept aside).
    pub fn rewound(self) -> bool {
        self.at < self.of
    }
}

impl Default for History {
    fn default() -> Self {
        History {
            snapshot_work: SNAPSHOT_WORK,
            work_per_weight: WORK_PER_WEIGHT,
            snapshot_budget: SNAPSHOT_BUDGET,
            start_weight: 0,
            times: ChunkedVec::new(),
            wire: ChunkedVec::new(),
            views: Vec::new(),
            snapshots: Vec::new(),
            present: None,
        }
    }
}

impl History {
    /// Keep every other snapshot, the newest among them, and double the work between two.
    fn thin(&mut self) {
        let newest = self.snapshots.len() - 1;
        let mut i = 0;
        self.snapshots.retain(|_| {
            let keep = (newest - i) % 2 == 0;
            i += 1;
            keep
        });
        self.snapshot_work = self.snapshot_work.saturating_mul(2);
    }

    /// How many snapshots are kept.
    pub(crate) fn snapshots_len(&self) -> usize {
        self.snapshots.len()
    }

    /// The work done and the lab's weight at each snapshot kept, in order.
    #[cfg(test)]
    pub(crate) fn snapshot_marks(&self) -> Vec<(u64, u64)> {
        self.snapshots.iter().map(|s| (s.work, s.weight)).collect()
    }
}

impl Lab {
    /// After an event was journaled: note its clock, take a snapshot when one is due, and
    /// fork if the lab was rewound. Returns the note a fork prints.
    pub(crate) fn timeline_record(&mut self) -> Option<Line> {
        let events = self.history.times.len() + 1;
        let fork = self.history.present.take().map(|present| {
            let (from, to) = (events, present.history.times.len());
            let dropped = if from == to {
                format!("event {from} of the old timeline is")
            } else {
                format!("events {from} to {to} of the old timeline are")
            };
            Line::styled(
                format!(
                    "forked after event {}: {dropped} dropped (`rewind --undo` has nothing to return to now)",
                    events - 1,
                ),
                Role::Warn,
            )
        });
        self.history.times.push(self.clock);
        self.history.wire.push(self.wire.next_seq());
        let done = work(self);
        let (since, base) = self
            .history
            .snapshots
            .last()
            .map_or((0, self.history.start_weight), |s| (s.work, s.weight));
        let interval = self
            .history
            .snapshot_work
            .max(self.history.work_per_weight.saturating_mul(base));
        let held: u64 = self.history.snapshots.iter().map(|s| s.weight).sum();
        if done - since >= interval && held + weight(self) <= self.history.snapshot_budget {
            let mut copy = self.clone();
            copy.history = History::default();
            copy.journal.entries = ChunkedVec::new();
            // A `get -w` is not state: the past keeps no watch tap.
            copy.cluster.revs.tap = None;
            self.history.snapshots.push(Snapshot {
                event: events,
                work: done,
                weight: weight(self),
                lab: Arc::new(copy),
            });
            if self.history.snapshots.len() > MAX_SNAPSHOTS {
                self.history.thin();
            }
        }
        fork
    }

    /// Forget the past (a fresh lab's journal restarted).
    pub(crate) fn timeline_clear(&mut self) {
        self.history = History {
            start_weight: weight(self),
            ..History::default()
        };
    }

    /// The lab with every event: the present kept aside while rewound, or this lab.
    fn present(&self) -> &Lab {
        self.history.present.as_deref().unwrap_or(self)
    }

    /// How many copies of itself the lab keeps to rewind from (a bounded number: see
    /// [`MAX_SNAPSHOTS`] and [`SNAPSHOT_BUDGET`]).
    pub fn snapshots_kept(&self) -> usize {
        self.history.snapshots_len()
    }

    /// Where the lab stands on its timeline.
    pub fn position(&self) -> Position {
        Position {
            at: self.history.times.len(),
            of: self.present().history.times.len(),
        }
    }

    /// Event `number` (from 1) of the present, if there is one: what a view that shows a
    /// few events of a long session reads instead of [`Lab::events`].
    pub fn event(&self, number: usize) -> Option<Event> {
        let present = self.present();
        let i = number.checked_sub(1)?;
        let (e, t) = (present.event_entry(number)?, present.history.times.get(i)?);
        Some(Event {
            number,
            clock: *t,
            line: e.line.to_string(),
            failed: e.fails,
        })
    }

    /// Every event of the present, in order.
    pub fn events(&self) -> Vec<Event> {
        let present = self.present();
        present
            .journal
            .entries
            .iter()
            .filter(|e| !e.view)
            .zip(&present.history.times)
            .enumerate()
            .map(|(i, (e, t))| Event {
                number: i + 1,
                clock: *t,
                line: e.line.to_string(),
                failed: e.fails,
            })
            .collect()
    }

    /// After a view was journaled (a read-only call that left a record): note its place,
    /// so that event numbers skip it.
    pub(crate) fn timeline_view(&mut self) {
        let index = self.journal.entries.len() - 1;
        self.history.views.push(index);
    }

    /// The journal index of event `number` (from 1): its place among the events, shifted
    /// past the views before it.
    fn entry_index(&self, number: usize) -> Option<usize> {
        let mut i = number.checked_sub(1)?;
        if i >= self.history.times.len() {
            return None;
        }
        for &v in &self.history.views {
            if v > i {
                break;
            }
            i += 1;
        }
        Some(i)
    }

    /// The journal entry of event `number` (from 1) of this lab.
    pub(crate) fn event_entry(&self, number: usize) -> Option<&super::journal::Entry> {
        self.journal.entries.get(self.entry_index(number)?)
    }

    /// How many journal entries the lab after event `n` has (0: the start): the event's
    /// own and those before it, the views after it not counted.
    fn entries_to(&self, n: usize) -> usize {
        self.entry_index(n).map_or(0, |i| i + 1)
    }

    /// The lab as it was after event `n` of the present (0: the start), built from the
    /// nearest snapshot and the journal; its history is the present's first `n` events.
    /// `n` must be at most the present's event count.
    pub(crate) fn lab_at(&self, n: usize) -> Lab {
        let present = self.present();
        let entries = &present.journal.entries;
        let kept = present.history.snapshots.partition_point(|s| s.event <= n);
        let (mut lab, from) = match kept.checked_sub(1) {
            Some(i) => {
                let s = &present.history.snapshots[i];
                (s.lab.as_ref().clone(), present.entries_to(s.event))
            }
            None => (present.journal.start.lab(), 0),
        };
        let to = present.entries_to(n);
        lab.journal.entries = entries.prefix(from);
        lab.edges = self.edges.clone();
        // The replay reads no file: each entry's own are handed back.
        let outer = self.journal.replay_setting();
        for e in entries.iter_from(from).take(to - from) {
            lab.journal.replay_files(Some(e.files_read()));
            let _ = lab.execute(&e.line);
        }
        lab.journal.replay_files(outer);
        lab.shown.clear();
        lab.history = History {
            snapshot_work: present.history.snapshot_work,
            work_per_weight: present.history.work_per_weight,
            snapshot_budget: present.history.snapshot_budget,
            start_weight: present.history.start_weight,
            times: present.history.times.prefix(n),
            wire: present.history.wire.prefix(n),
            views: present
                .history
                .views
                .iter()
                .copied()
                .take_while(|&v| v < to)
                .collect(),
            snapshots: present.history.snapshots[..kept].to_vec(),
            present: None,
        };
        lab
    }

    /// The event (from 1) that made wire record `seq`, if an event of this lab's timeline
    /// did (not its start).
    pub(crate) fn event_of_wire(&self, seq: u64) -> Option<usize> {
        let i = self.history.wire.partition_point(|&mark| mark <= seq);
        (i < self.history.wire.len()).then_some(i + 1)
    }

    /// Check an event number against the present's: 0 to its count.
    pub(crate) fn check_event(&self, n: u64) -> Result<usize, LabError> {
        let of = self.position().of;
        match usize::try_from(n) {
            Ok(n) if n <= of => Ok(n),
            _ if of == 0 => Err(LabError::msg(format!(
                "no event {n}: the timeline has no events yet (0 is the start; a command that changes the lab is event 1)"
            ))),
            _ => Err(LabError::msg(format!(
                "no event {n}: the timeline has events 1 to {of} (0 is the start; see `timeline`)"
            ))),
        }
    }

    /// A moment as `rewind` and `diff` name it: event N of the present, or K events before
    /// the one the lab is after.
    pub(crate) fn event_at(&self, r: crate::command::grammar::EventRef) -> Result<usize, LabError> {
        use crate::command::grammar::EventRef;
        match r {
            EventRef::At(n) => self.check_event(n),
            EventRef::Back(k) => {
                let at = self.position().at;
                usize::try_from(k)
                    .ok()
                    .and_then(|k| at.checked_sub(k))
                    .ok_or_else(|| {
                        LabError::msg(format!(
                            "no event -{k}: the lab is after event {at}, and -K counts back from there to 0, the start (see `timeline`)"
                        ))
                    })
            }
        }
    }

    /// `timeline`: the present's events, the one the lab is at marked.
    pub(crate) fn timeline_cmd(&self) -> Outcome {
        let pos = self.position();
        let mut out = Outcome::empty();
        let events = self.events();
        if events.is_empty() {
            out.line(Line::styled(
                "no events yet: the lab is at its start (event 0); a command that changes the lab is event 1",
                Role::Dim,
            ));
            return out;
        }
        let mut table = Table::new(&["", "EVENT", "T", "COMMAND"]);
        let start_mark = if pos.at == 0 { "▶" } else { "" };
        table.row_styled(vec![
            (start_mark.to_string(), Role::Good),
            ("0".to_string(), Role::Dim),
            ("t=0s".to_string(), Role::Dim),
            (
                format!("(the {} start)", self.journal.start.name()),
                Role::Dim,
            ),
        ]);
        for e in &events {
            let here = e.number == pos.at;
            let after = e.number > pos.at;
            let role = if after { Role::Dim } else { Role::Plain };
            let line = if e.failed {
                format!("{}   (failed)", e.line)
            } else {
                e.line.clone()
            };
            table.row_styled(vec![
                (if here { "▶" } else { "" }.to_string(), Role::Good),
                (e.number.to_string(), role),
                (format!("t={}", e.clock.secs_text()), role),
                (line, if e.failed { Role::Bad } else { role }),
            ]);
        }
        out.extend(table.render());
        if pos.rewound() {
            out.line(Line::styled(
                format!(
                    "rewound to event {} of {}: views answer as of then; a command that changes the lab forks here; `rewind --undo` returns to event {}",
                    pos.at, pos.of, pos.of
                ),
                Role::Dim,
            ));
        }
        out
    }

    /// `rewind N` / `rewind --undo`.
    pub(crate) fn rewind_cmd(
        &mut self,
        a: &crate::command::grammar::RewindArgs,
    ) -> Result<Outcome, LabError> {
        if self.edges.real.is_some() {
            return Err(LabError::msg(
                "rewind moves the model only, and real mode (--real-cni) made real namespaces that have no past: restart without --real-cni to rewind",
            ));
        }
        let edges = self.edges.clone();
        let pos = self.position();
        let target = match a.event {
            Some(n) => self.event_at(n)?,
            None if pos.rewound() => pos.of,
            None => {
                return Err(LabError::msg(format!(
                    "nothing to undo: the lab is at its present (event {}); `rewind --undo` returns there after a `rewind N`, until a command changes the lab",
                    pos.of
                )));
            }
        };
        let lab = if target == pos.of {
            match self.history.present.take() {
                Some(present) => Arc::unwrap_or_clone(present),
                None => self.clone(),
            }
        } else {
            let present = match self.history.present.take() {
                Some(p) => p,
                None => Arc::new(std::mem::replace(self, Lab::empty())),
            };
            let mut lab = present.lab_at(target);
            lab.history.present = Some(present);
            lab
        };
        *self = lab;
        self.edges = edges;
        let pos = self.position();
        let past = self
            .present()
            .events()
            .into_iter()
            .skip(pos.at)
            .map(|e| e.line)
            .collect();
        self.shown.push(super::seen::Seen::Rewound {
            at: pos.at,
            of: pos.of,
            past,
        });
        Ok(self.rewound_line())
    }

    /// What `rewind` prints: where the lab is now.
    fn rewound_line(&self) -> Outcome {
        let pos = self.position();
        let mut out = Outcome::empty();
        let what = match self.event_entry(pos.at) {
            Some(e) => format!("after event {} of {}: {}", pos.at, pos.of, e.line),
            None => format!(
                "at the start (event 0 of {}): the {} lab",
                pos.of,
                self.journal.start.name()
            ),
        };
        out.line(
            Line::new()
                .push(what, Role::Good)
                .push(format!("  (t={})", self.clock.secs_text()), Role::Dim),
        );
        if pos.rewound() {
            out.line(Line::styled(
                format!(
                    "views answer as of then; a command that changes the lab forks here ({} dropped); `rewind --undo` returns to event {}",
                    if pos.at + 1 == pos.of {
                        format!("event {} is", pos.of)
                    } else {
                        format!("events {} to {} are", pos.at + 1, pos.of)
                    },
                    pos.of
                ),
                Role::Dim,
            ));
        }
        out
    }
}
