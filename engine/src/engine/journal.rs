//! The journal: every command that changed (or may have changed) the lab, in order, with
//! the content of any file it read. The lab is deterministic, so replaying the journal on
//! a fresh lab of the same start rebuilds the same state, logs included; `save` writes it
//! and `load` replays it (see [`super::save`]).
//!
//! What is journaled (decided per parsed line in `Lab::execute_command`):
//! - every command except pure views (`show`, `get`, `describe`, `reach`, `trace`, the
//!   `… list` commands, `help`, `explain`, `echo`, `save`); a failing one only if it moved
//!   a mark (a failed CNI ADD may have leaked an IP and logged calls; it fails again
//!   identically on replay), never one rejected before it changed anything;
//! - a view too when it moves the call log, the wire log, the object store or the clock (a
//!   read-only CSI or CNI call made by hand, `csi list-volumes`, `cni check`, leaves its
//!   wire record), so a save replays the same logs; such an entry is marked a view and is
//!   no timeline event (no number, no rewind point; see [`super::timeline`]);
//! - never `reset` and `load` (they replace the lab and restart the journal) nor the lesson
//!   commands (the engine refuses them; the front ends' lesson desk rebuilds the cluster
//!   through `execute`, which journals the reference commands it replays).

use super::Lab;
use crate::command::Command;
use crate::command::grammar::{
    CniCmd, CniConfCmd, CsiCmd, FaultCmd, NadCmd, NetworkCmd, NodeCmd, NsCmd, PodCmd, PolicyCmd,
    PvcCmd, ScCmd, SnapshotCmd,
};
use crate::util::chunked::ChunkedVec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the lab a journal replays on was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// `Lab::new()`: node-1 and node-2, the storage defaults, empty logs.
    Default,
    /// `Lab::empty()`: no nodes (presets and `--preset FILE` start here; their lines are
    /// journaled like any other).
    Empty,
}

impl Start {
    /// A fresh lab of this start.
    pub fn lab(self) -> Lab {
        match self {
            Start::Default => Lab::new(),
            Start::Empty => Lab::empty(),
        }
    }

    /// The name written in save files.
    pub fn name(self) -> &'static str {
        match self {
            Start::Default => "default",
            Start::Empty => "empty",
        }
    }
}

/// One journaled command: what `save` writes and a replay (`load`, `rewind`) runs. A lab
/// journals every command it ran, so an entry holds no more than that: the line at its
/// size, and the files only for the few commands that read some.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The command line as typed (comment stripped).
    pub line: Box<str>,
    /// Files the command read, by the path it named, with their content (so a replay
    /// never reads the disk); `None` when it read none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "files_read_some"
    )]
    pub files: Option<Box<BTreeMap<String, String>>>,
    /// The command failed (and fails again on replay).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fails: bool,
    /// A view that moved a mark (a read-only CSI or CNI call made by hand: its wire record
    /// stays in the log): journaled so a replay makes the same records, but no event, so
    /// no timeline number and no rewind point. A replay classifies the line again.
    #[serde(default, skip_serializing_if = "is_false")]
    pub view: bool,
}

impl Entry {
    /// A copy of the files it read, for a replay to answer reads from.
    pub fn files_read(&self) -> BTreeMap<String, String> {
        self.files.as_deref().cloned().unwrap_or_default()
    }
}

/// An entry's files as a save file holds them: an empty map (`"files": {}`, which `save`
/// never writes) is none, so the entry saves again as it was read. (Boxed as the field is:
/// an entry is 8 bytes smaller, and few entries read files.)
#[allow(clippy::box_collection)]
fn files_read_some<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<BTreeMap<String, String>>>, D::Error> {
    let files = Option::<BTreeMap<String, String>>::deserialize(d)?;
    Ok(files.filter(|f| !f.is_empty()).map(Box::new))
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The lab's journal.
#[derive(Debug, Clone)]
pub struct Journal {
    /// How the lab started.
    pub start: Start,
    /// The commands since the start (in chunks: one entry a command, and a long session's
    /// doubling `Vec` would leave up to half its room unused).
    pub entries: ChunkedVec<Entry>,
    /// Files read by the command running now.
    reading: BTreeMap<String, String>,
    /// While replaying: the files the entry being replayed read (the disk is not used).
    replay: Option<BTreeMap<String, String>>,
    /// The here-document given to the command running now (`apply -f - <<EOF`).
    pub(crate) stdin: Option<String>,
}

impl Journal {
    /// An empty journal for a lab of this start.
    pub fn new(start: Start) -> Self {
        Journal {
            start,
            entries: ChunkedVec::new(),
            reading: BTreeMap::new(),
            replay: None,
            stdin: None,
        }
    }

    /// Replay mode: file reads are answered from `files` (an entry's recorded files).
    pub(crate) fn replay_files(&mut self, files: Option<BTreeMap<String, String>>) {
        self.replay = files;
    }

    /// The files a replay answers reads from now (`None`: not replaying).
    pub(crate) fn replay_setting(&self) -> Option<BTreeMap<String, String>> {
        self.replay.clone()
    }

    /// [`replay_files`](Self::replay_files), returning the files set before (lesson code
    /// runs with an empty set, so it never reads the disk; see the lesson guard).
    pub(crate) fn swap_replay_files(
        &mut self,
        files: Option<BTreeMap<String, String>>,
    ) -> Option<BTreeMap<String, String>> {
        std::mem::replace(&mut self.replay, files)
    }
}

/// How a parsed command relates to the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Changes (or may change) the lab: journaled.
    Change,
    /// Only reads the lab: journaled only if it moved a mark.
    View,
    /// Replaces the lab and restarts the journal (`reset`, `load`), or belongs to the
    /// lesson player: never journaled.
    Restart,
}

/// Classify a command.
pub(crate) fn classify(cmd: &Command) -> Class {
    // Every command is named here (no catch-all): a new verb must say whether it changes
    // the lab, or a view would be journaled as a change.
    match cmd {
        Command::Show(_)
        | Command::Get(_)
        | Command::Describe(_)
        | Command::Reach(_)
        | Command::Trace(_)
        | Command::Help(_)
        | Command::Explain(_)
        | Command::Echo(_)
        | Command::Save(_)
        | Command::Timeline
        | Command::Diff(_)
        | Command::Why(_) => Class::View,
        Command::Node(c) => match c {
            NodeCmd::List => Class::View,
            NodeCmd::Add { .. } => Class::Change,
        },
        Command::Ns(c) => match c {
            NsCmd::List => Class::View,
            NsCmd::Create { .. } | NsCmd::Delete { .. } => Class::Change,
        },
        Command::Pod(c) => match c {
            PodCmd::List { .. } => Class::View,
            PodCmd::Create(_) | PodCmd::Delete { .. } => Class::Change,
        },
        Command::Sc(c) => match c {
            ScCmd::List => Class::View,
            ScCmd::Create { .. } | ScCmd::Delete { .. } => Class::Change,
        },
        Command::Pvc(c) => match c {
            PvcCmd::List => Class::View,
            PvcCmd::Create(_)
            | PvcCmd::Bind { .. }
            | PvcCmd::Expand { .. }
            | PvcCmd::Delete { .. } => Class::Change,
        },
        Command::Snapshot(c) => match c {
            SnapshotCmd::List => Class::View,
            SnapshotCmd::Create { .. } | SnapshotCmd::Delete { .. } => Class::Change,
        },
        Command::Policy(c) => match c {
            PolicyCmd::List => Class::View,
            PolicyCmd::Create(_) | PolicyCmd::Delete { .. } => Class::Change,
        },
        Command::Nad(c) => match c {
            NadCmd::List { .. } => Class::View,
            NadCmd::Create(_) | NadCmd::Delete { .. } => Class::Change,
        },
        Command::Network(c) => match c {
            NetworkCmd::Show | NetworkCmd::Compare => Class::View,
            NetworkCmd::Multus { .. } | NetworkCmd::Use { .. } => Class::Change,
        },
        // `cni plugins` alone names the release in use, `cni conf show` reads net.d; CHECK,
        // STATUS and VERSION ask the plugins and change nothing. Their wire records still
        // move the wire log's mark, so a view that made one is journaled, as no event.
        Command::Cni(c) => match c {
            CniCmd::Plugins { release: None }
            | CniCmd::Conf(CniConfCmd::Show { .. })
            | CniCmd::Check(_)
            | CniCmd::Status { .. }
            | CniCmd::Version { .. } => Class::View,
            CniCmd::Plugins { release: Some(_) }
            | CniCmd::Conf(CniConfCmd::Load { .. } | CniConfCmd::Remove { .. })
            | CniCmd::Add(_)
            | CniCmd::Del(_)
            | CniCmd::Gc { .. } => Class::Change,
        },
        // A CSI RPC that only reads (an Identity call, a list, a get, a capability) is a
        // view; one that creates, attaches, mounts, expands or deletes is a change.
        Command::Csi(c) => match c {
            CsiCmd::GetPluginInfo
            | CsiCmd::GetPluginCapabilities
            | CsiCmd::Probe
            | CsiCmd::ControllerGetCapabilities
            | CsiCmd::ValidateVolumeCapabilities { .. }
            | CsiCmd::ListVolumes { .. }
            | CsiCmd::ControllerGetVolume { .. }
            | CsiCmd::GetCapacity
            | CsiCmd::ListSnapshots { .. }
            | CsiCmd::NodeGetInfo { .. }
            | CsiCmd::NodeGetCapabilities { .. }
            | CsiCmd::NodeGetVolumeStats { .. } => Class::View,
            CsiCmd::Call { rpc, .. } => match crate::csi::resolve(rpc) {
                Ok((_, method)) if CSI_READS.contains(&method) => Class::View,
                _ => Class::Change,
            },
            CsiCmd::CreateVolume { .. }
            | CsiCmd::DeleteVolume { .. }
            | CsiCmd::ControllerPublish { .. }
            | CsiCmd::ControllerUnpublish { .. }
            | CsiCmd::CreateSnapshot { .. }
            | CsiCmd::DeleteSnapshot { .. }
            | CsiCmd::ControllerExpand { .. }
            | CsiCmd::NodeStage { .. }
            | CsiCmd::NodeUnstage { .. }
            | CsiCmd::NodePublish { .. }
            | CsiCmd::NodeUnpublish { .. }
            | CsiCmd::NodeExpand { .. }
            | CsiCmd::Serve { .. } => Class::Change,
        },
        Command::Fault(FaultCmd::List) => Class::View,
        Command::Delete(_)
        | Command::Apply(_)
        | Command::Label(_)
        | Command::Cordon { .. }
        | Command::Uncordon { .. }
        | Command::Drain { .. }
        | Command::Fault(FaultCmd::Inject { .. } | FaultCmd::Clear { .. })
        | Command::Tick { .. }
        | Command::Mode { .. }
        | Command::Reconcile { .. } => Class::Change,
        // A rewind replaces the lab with its own past (never journaled: the journal
        // becomes the first N events).
        Command::Reset(_) | Command::Load(_) | Command::Rewind(_) => Class::Restart,
        // The lesson desk runs these (and journals the commands a `play` runs, one by one).
        Command::Lesson(_)
        | Command::Hint
        | Command::Skip
        | Command::Back
        | Command::Play(_)
        | Command::Step { .. } => Class::Restart,
    }
}

/// The CSI RPCs that only read (what `csi call RPC` classifies as a view).
const CSI_READS: &[&str] = &[
    "GetPluginInfo",
    "GetPluginCapabilities",
    "Probe",
    "ControllerGetCapabilities",
    "ValidateVolumeCapabilities",
    "ListVolumes",
    "ControllerGetVolume",
    "GetCapacity",
    "ListSnapshots",
    "NodeGetInfo",
    "NodeGetCapabilities",
    "NodeGetVolumeStats",
];

/// What a view must leave unchanged: call log, wire log, object store, clock, mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marks {
    calls: u64,
    wire: u64,
    revision: u64,
    created: u64,
    clock: crate::util::time::Millis,
    step: bool,
}

impl Lab {
    /// The marks a view must not move.
    pub fn marks(&self) -> Marks {
        Marks {
            calls: self.calls.next_seq(),
            wire: self.wire.next_seq(),
            revision: self.cluster.revs.resource_version,
            created: self.cluster.revs.created,
            clock: self.clock,
            step: self.mode == super::Mode::Step,
        }
    }

    /// Read a file a command names (`cni conf load FILE`): from the lab's files (see
    /// `crate::edge`), recorded in the journal; while replaying a save, from the save file only.
    pub(crate) fn read_input_file(&mut self, path: &str) -> std::io::Result<String> {
        self.read_journaled(path, "a conflist", crate::edge::CONFIG_CAP)
    }

    /// Read a file of at most `cap` bytes and keep its text in the journal; on replay,
    /// the text the journal kept.
    fn read_journaled(&mut self, path: &str, what: &str, cap: u64) -> std::io::Result<String> {
        if let Some(files) = &self.journal.replay {
            let text = files.get(path).cloned().ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not in the save file (a replay never reads the disk)",
                )
            })?;
            // The replayed entry is journaled again (a rewound lab's past, a loaded save's
            // journal): it keeps the text it read, or a later replay of it would find none.
            self.journal.reading.insert(path.to_string(), text.clone());
            return Ok(text);
        }
        let text = crate::edge::read_text(&*self.edges.files, path, what, cap)?;
        self.journal.reading.insert(path.to_string(), text.clone());
        Ok(text)
    }

    /// The command's standard input (`-f -`): the here-document that came with it, or on
    /// replay the text the journal kept under the name `-`.
    pub(crate) fn read_stdin(&mut self) -> Option<String> {
        if let Some(files) = &self.journal.replay {
            let text = files.get("-").cloned()?;
            self.journal.reading.insert("-".to_string(), text.clone());
            return Some(text);
        }
        let text = self.journal.stdin.take()?;
        self.journal.reading.insert("-".to_string(), text.clone());
        Some(text)
    }

    /// The text of a manifest (`apply -f`), capped at [`crate::manifest::MANIFEST_CAP`] and
    /// journaled like [`Lab::read_input_file`].
    pub(crate) fn read_manifest_file(&mut self, path: &str) -> std::io::Result<String> {
        self.read_journaled(path, "a manifest", crate::manifest::MANIFEST_CAP)
    }

    /// Before a command runs: forget files read by the previous one.
    pub(crate) fn journal_begin(&mut self) -> Marks {
        self.journal.reading.clear();
        self.marks()
    }

    /// After a command ran: journal it if its class (or a moved mark) says so, as the
    /// timeline's next event. Returns the note a fork prints (see [`super::timeline`]).
    pub(crate) fn journal_end(
        &mut self,
        line: &str,
        class: Class,
        before: Marks,
        failed: bool,
    ) -> Option<crate::render::Line> {
        // A rejected command (failed, no mark moved: no call, no wire record, no object
        // written, no time passed) changed nothing, so it is no event: it takes no timeline
        // number, `rewind` and `timeline` never list it and it does not fork a rewound
        // session. A command that failed after changing something (a CNI ADD that failed
        // after its calls, an `apply` whose later document failed, a refused `drain` that
        // left the node cordoned) is an event, and fails again on replay.
        let moved = self.marks() != before;
        let record = match class {
            Class::Change => !failed || moved,
            Class::View => moved,
            Class::Restart => false,
        };
        let files = std::mem::take(&mut self.journal.reading);
        if record {
            let view = class == Class::View;
            self.journal.entries.push(Entry {
                line: line.trim().into(),
                files: (!files.is_empty()).then(|| Box::new(files)),
                fails: failed,
                view,
            });
            // A view is journaled for the replay's sake only: it is no event.
            if view {
                self.timeline_view();
            } else {
                return self.timeline_record();
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Entry;

    #[test]
    fn an_entry_with_an_empty_files_map_saves_without_one() {
        let e: Entry = serde_json::from_str(r#"{"line": "node list", "files": {}}"#).unwrap();
        assert_eq!(e.files, None);
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"line":"node list"}"#
        );
        let e: Entry =
            serde_json::from_str(r#"{"line": "cni conf load a", "files": {"a": "{}"}}"#).unwrap();
        assert_eq!(e.files_read().get("a").map(String::as_str), Some("{}"));
    }
}
