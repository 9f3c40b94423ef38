//! Stepping a CSI flow call by call (issue 39 §1): `pod create NAME --pvc CLAIM --step` runs
//! the command as usual (the lab runs its control loops until nothing changes), then opens
//! at the first CSI call it made. The calls are the command's typed wire records
//! ([`CsiCall`]), in the order they crossed the socket: external-provisioner's CreateVolume,
//! external-attacher's ControllerPublishVolume (only for a driver with
//! PUBLISH_UNPUBLISH_VOLUME), the kubelet's NodeStageVolume (only with
//! STAGE_UNSTAGE_VOLUME), then NodePublishVolume. Each shows its request's key fields, the
//! reply or gRPC status, and the object it changed with the volume's state on the node
//! before → after (CREATED, NODE_READY, VOL_READY, PUBLISHED), worked out from what the
//! driver held before the command and what each answered call adds or takes away, as the
//! driver's own [`LifecycleState::of`] does.
//!
//! The teardown steps the same way: `pod delete NAME --step` (the kubelet's
//! NodeUnpublishVolume and NodeUnstageVolume, then external-attacher's
//! ControllerUnpublishVolume once the attach/detach controller deleted the
//! VolumeAttachment) and `pvc delete NAME --step` (external-provisioner's DeleteVolume).

use super::stepping::{Cursor, keys};
use crate::command::Command;
use crate::command::grammar::{PodCmd, PvcCmd};
use crate::csi::LifecycleState;
use crate::csi::types::VolumeCapability;
use crate::engine::Lab;
use crate::engine::seen::Seen;
use crate::record::wire::{CsiCall, WireRecord};
use crate::render::{Line, Outcome, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A command run with `--step` whose CSI calls are stepped, with what it needs to say why
/// it made none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CsiStepped {
    /// `pod create NAME … --step`: the calls that set its volumes up.
    PodCreate {
        /// The pod's name.
        name: String,
        /// Whether it mounts a claim.
        claims: bool,
    },
    /// `pod delete NAME --step`: the calls that tore its volumes down.
    PodDelete {
        /// The pod's namespace and name.
        key: (String, String),
        /// Whether it mounted a claim (read before the command ran).
        claims: bool,
    },
    /// `pvc delete NAME --step`: external-provisioner's DeleteVolume.
    PvcDelete {
        /// The claim's namespace and name.
        key: (String, String),
    },
}

impl CsiStepped {
    /// The stepped command `cmd` is, read before it runs (`None`: not one run with
    /// `--step`).
    pub(crate) fn of(cmd: &Command, lab: &Lab) -> Option<Self> {
        match cmd {
            Command::Pod(PodCmd::Create(a)) if a.step => Some(CsiStepped::PodCreate {
                name: a.name.clone(),
                claims: !a.pvcs.is_empty(),
            }),
            Command::Pod(PodCmd::Delete {
                name,
                ns,
                step: true,
            }) => {
                let claims =
                    crate::engine::query::pod_claims(lab, ns, name).is_some_and(|c| !c.is_empty());
                Some(CsiStepped::PodDelete {
                    key: (ns.clone(), name.clone()),
                    claims,
                })
            }
            Command::Pvc(PvcCmd::Delete {
                name,
                ns,
                step: true,
            }) => Some(CsiStepped::PvcDelete {
                key: (ns.clone(), name.clone()),
            }),
            // `delete pod web --step`, `delete pvc/data --step`: the lab's own command.
            Command::Delete(d) => match crate::engine::delete_cmd::stepped(d) {
                Some(Ok(own)) => Self::of(&own, lab),
                _ => None,
            },
            _ => None,
        }
    }

    /// The command's object: `pod/web`, `pvc/data`.
    pub(crate) fn what(&self) -> String {
        match self {
            CsiStepped::PodCreate { name, .. } | CsiStepped::PodDelete { key: (_, name), .. } => {
                format!("pod/{name}")
            }
            CsiStepped::PvcDelete { key: (_, name) } => format!("pvc/{name}"),
        }
    }

    /// Why the command, which ran, made no CSI call.
    pub(crate) fn no_call(&self, lab: &Lab) -> String {
        let what = self.what();
        let step_mode = lab.mode() == crate::engine::Mode::Step;
        match self {
            CsiStepped::PodCreate { claims: false, .. } => {
                format!("{what} mounts no claim (`--pvc CLAIM` mounts one)")
            }
            CsiStepped::PodDelete { claims: false, .. } => {
                format!("{what} mounts no claim: its teardown is CNI DEL alone")
            }
            _ if step_mode => "in step mode nothing acts until `reconcile`".into(),
            CsiStepped::PodCreate { name, .. } => format!(
                "its volumes made none (`describe pod {name}` says what it waits for)"
            ),
            CsiStepped::PodDelete { key: (ns, name), .. }
                if crate::engine::query::pod_claims(lab, ns, name).is_some() =>
            {
                format!("{what} is still Terminating (`describe pod {name}` says why)")
            }
            CsiStepped::PodDelete { .. } => {
                "its volumes had nothing mounted on the node to tear down".into()
            }
            CsiStepped::PvcDelete { key: (ns, name) }
                if crate::engine::query::claim_exists(lab, ns, name) =>
            {
                format!(
                    "{what} stays Terminating while a pod uses it (finalizer kubernetes.io/pvc-protection)"
                )
            }
            CsiStepped::PvcDelete { .. } => {
                "no volume was deleted: the claim had none, or its reclaimPolicy keeps it (`get pv`)"
                    .into()
            }
        }
    }
}

/// What the driver held of each volume before a command: per node, whether it was attached
/// and staged, and the targets published. Taken before a stepped command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Held {
    /// Volume ID → what the driver holds of it.
    volumes: BTreeMap<String, VolumeHeld>,
    /// Volume ID → the PersistentVolume made for it (the name a DeleteVolume's request
    /// does not carry).
    pvs: BTreeMap<String, String>,
}

/// What the driver holds of one volume.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct VolumeHeld {
    attached: BTreeSet<String>,
    staged: BTreeSet<String>,
    targets: BTreeMap<String, BTreeSet<String>>,
}

impl VolumeHeld {
    fn state(&self, node: &str) -> LifecycleState {
        LifecycleState::of(
            self.attached.contains(node),
            self.staged.contains(node),
            self.targets.get(node).is_some_and(|t| !t.is_empty()),
        )
    }
}

impl Held {
    /// What the lab's driver holds now (every volume: a stepped command is one command).
    pub(crate) fn of(lab: &Lab) -> Self {
        let volumes = crate::engine::query::driver_volumes(lab)
            .map(|v| {
                let held = VolumeHeld {
                    attached: v.attachments.keys().cloned().collect(),
                    staged: v.staged.keys().cloned().collect(),
                    targets: v
                        .published
                        .iter()
                        .map(|(n, t)| (n.clone(), t.keys().cloned().collect()))
                        .collect(),
                };
                (v.volume_id.clone(), held)
            })
            .collect();
        let pvs = crate::engine::query::pv_handles(lab)
            .map(|(handle, pv)| (handle.to_string(), pv.to_string()))
            .collect();
        Held { volumes, pvs }
    }

    /// The volume's state on a node (`None`: no such volume).
    fn state(&self, volume: &str, node: &str) -> Option<LifecycleState> {
        self.volumes.get(volume).map(|v| v.state(node))
    }

    /// Apply an answered call; what it made or took away, with the volume's state before
    /// and after.
    fn apply(&mut self, call: &CsiCall, reply_volume: Option<String>) -> Option<Change> {
        let req = &call.request;
        let volume = req.subject().unwrap_or_default().to_string();
        let node = call
            .node
            .clone()
            .or_else(|| req.node_id().map(str::to_string));
        let on = node.clone().unwrap_or_default();
        let before = self.state(&volume, &on);
        let attachment = || Changed::Attachment {
            name: crate::storage::attach_detach::attachment_name(
                &volume,
                crate::storage::DRIVER,
                &on,
            ),
        };
        let (object, removed) = match call.rpc {
            "CreateVolume" => {
                let id = reply_volume?;
                let before = self
                    .volumes
                    .contains_key(&id)
                    .then_some(LifecycleState::Created);
                self.volumes.entry(id.clone()).or_default();
                let pv = req.subject().unwrap_or_default().to_string();
                self.pvs.insert(id.clone(), pv.clone());
                return Some(Change {
                    object: Changed::Volume { pv: Some(pv) },
                    removed: false,
                    volume_id: id,
                    node: None,
                    before,
                    after: Some(LifecycleState::Created),
                });
            }
            "DeleteVolume" => {
                // OK for a volume the driver no longer has: DeleteVolume is idempotent.
                self.volumes.remove(&volume)?;
                return Some(Change {
                    object: Changed::Volume {
                        pv: self.pvs.get(&volume).cloned(),
                    },
                    removed: true,
                    volume_id: volume,
                    node: None,
                    before: Some(LifecycleState::Created),
                    after: None,
                });
            }
            "ControllerPublishVolume" => {
                let held = self.volumes.entry(volume.clone()).or_default();
                held.attached.insert(on.clone());
                (attachment(), false)
            }
            "NodeStageVolume" => {
                let held = self.volumes.entry(volume.clone()).or_default();
                held.staged.insert(on.clone());
                let path = req.staging_path().unwrap_or_default().to_string();
                (Changed::Staging { path }, false)
            }
            "NodePublishVolume" => {
                let path = req.target_path().unwrap_or_default().to_string();
                let held = self.volumes.entry(volume.clone()).or_default();
                held.targets
                    .entry(on.clone())
                    .or_default()
                    .insert(path.clone());
                (Changed::Target { path }, false)
            }
            // Teardown: a call that found nothing to take away (they are idempotent)
            // changed nothing.
            "NodeUnpublishVolume" => {
                let path = req.target_path().unwrap_or_default().to_string();
                let held = self.volumes.get_mut(&volume)?;
                if !held.targets.get_mut(&on)?.remove(&path) {
                    return None;
                }
                (Changed::Target { path }, true)
            }
            "NodeUnstageVolume" => {
                if !self.volumes.get_mut(&volume)?.staged.remove(&on) {
                    return None;
                }
                let path = req.staging_path().unwrap_or_default().to_string();
                (Changed::Staging { path }, true)
            }
            "ControllerUnpublishVolume" => {
                if !self.volumes.get_mut(&volume)?.attached.remove(&on) {
                    return None;
                }
                (attachment(), true)
            }
            _ => return None,
        };
        let after = self.state(&volume, &on);
        Some(Change {
            object,
            removed,
            volume_id: volume,
            node,
            before,
            after,
        })
    }
}

/// The object a CSI call changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// CreateVolume: the volume, for the PersistentVolume external-provisioner names after
    /// the request (`pvc-<claim UID>`).
    Volume {
        /// The PV's name (`None`: a DeleteVolume of a volume no PV named before the
        /// command, as a raw `csi delete-volume` can send).
        pv: Option<String>,
    },
    /// ControllerPublishVolume: the attach the VolumeAttachment asked for.
    Attachment {
        /// The VolumeAttachment's name (`csi-<sha256>`).
        name: String,
    },
    /// NodeStageVolume: the node's staging (global) mount.
    Staging {
        /// The staging path.
        path: String,
    },
    /// NodePublishVolume: a pod's target mount.
    Target {
        /// The target path.
        path: String,
    },
}

/// What an answered call changed: the object, the volume and node, and the volume's state
/// there before → after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The object changed.
    pub object: Changed,
    /// Whether the call took the object away (the teardown calls) rather than made it.
    pub removed: bool,
    /// The volume ID.
    pub volume_id: String,
    /// The node (none for CreateVolume).
    pub node: Option<String>,
    /// The state before the call (`None`: no volume yet).
    pub before: Option<LifecycleState>,
    /// The state after it.
    pub after: Option<LifecycleState>,
}

/// One call of a stepped flow.
#[derive(Debug, Clone)]
pub struct CsiStep {
    /// The wire record's number (`show wire N`).
    pub seq: u64,
    /// The call as it crossed the socket.
    pub call: Arc<CsiCall>,
    /// What it changed (`None` when it failed, or changes nothing stepped).
    pub change: Option<Change>,
}

/// A command's CSI calls being stepped, and the call shown.
#[derive(Debug, Clone)]
pub struct CsiStepping {
    /// The command's object (`pod/web`).
    what: String,
    steps: Vec<CsiStep>,
    /// Volumes whose first call here is not CreateVolume: how far they were before.
    earlier: Vec<(String, String, LifecycleState)>,
    cursor: Cursor,
}

impl PartialEq for CsiStepping {
    fn eq(&self, other: &Self) -> bool {
        self.what == other.what
            && self.cursor == other.cursor
            && self
                .steps
                .iter()
                .map(|s| s.seq)
                .eq(other.steps.iter().map(|s| s.seq))
    }
}

impl Eq for CsiStepping {}

impl CsiStepping {
    /// The CSI calls among the wire records `[first, end)` of `lab`, stepped from the first
    /// with the driver's state `before` the command; `None` when there is none.
    pub(crate) fn new(lab: &Lab, what: String, wire: (u64, u64), before: Held) -> Option<Self> {
        let mut held = before.clone();
        let mut steps = Vec::new();
        for (seq, rec) in lab.wire().iter() {
            if seq < wire.0 || seq >= wire.1 {
                continue;
            }
            let WireRecord::Csi(call) = rec else {
                continue;
            };
            let change = match &call.reply {
                Ok(reply) => held.apply(call, reply.volume_id().map(str::to_string)),
                Err(_) => None,
            };
            steps.push(CsiStep {
                seq,
                call: Arc::clone(call),
                change,
            });
        }
        let cursor = Cursor::first_of(steps.len())?;
        let mut earlier = Vec::new();
        let mut seen = BTreeSet::new();
        for s in &steps {
            let Some(c) = &s.change else { continue };
            if !seen.insert(c.volume_id.clone()) {
                continue;
            }
            if let (Some(node), Some(state)) = (&c.node, c.before) {
                earlier.push((c.volume_id.clone(), node.clone(), state));
            }
        }
        Some(CsiStepping {
            what,
            steps,
            earlier,
            cursor,
        })
    }

    /// The calls stepped, in order.
    pub fn steps(&self) -> &[CsiStep] {
        &self.steps
    }

    /// The call shown, 0-based.
    pub fn at(&self) -> usize {
        self.cursor.at()
    }

    /// The call shown.
    pub fn step(&self) -> &CsiStep {
        &self.steps[self.cursor.at()]
    }

    /// Where the stepping stands.
    pub(crate) fn cursor(&self) -> &Cursor {
        &self.cursor
    }

    pub(crate) fn cursor_mut(&mut self) -> &mut Cursor {
        &mut self.cursor
    }

    /// What the command prints after its own output: the calls in order, what had happened
    /// before, the keys, the first call.
    pub(crate) fn opening(&self) -> Outcome {
        let mut out = Outcome::empty();
        let names: Vec<&str> = self.steps.iter().map(|s| s.call.rpc).collect();
        out.line(Line::styled(
            format!(
                "{} made {}: {}",
                self.what,
                crate::util::text::plural(self.steps.len(), "CSI call", "CSI calls"),
                names.join(" → ")
            ),
            Role::Header,
        ));
        for (volume, node, state) in &self.earlier {
            out.line(Line::styled(
                format!(
                    "{volume} was already {state} on {node} before this command: the calls that got it there ran earlier (`show wire --list`)"
                ),
                Role::Dim,
            ));
        }
        out.line(Line::styled(keys("call"), Role::Dim));
        out.extend(self.shown());
        out
    }

    /// The call shown: its marker, the call, its request's key fields, the reply, the
    /// object it changed.
    pub fn shown(&self) -> Outcome {
        let mut out = Outcome::empty();
        let c = &self.step().call;
        out.line(Line::styled(
            format!(
                "── call {}: {} · {} ──",
                self.cursor.count(),
                c.rpc,
                c.caller
            ),
            Role::Header,
        ));
        for l in self.lines() {
            out.plain(format!("  {l}"));
        }
        out
    }

    /// The call shown as lines: the call, the request's key fields, the reply, what changed.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.call_line()];
        out.extend(self.request_lines());
        out.push(self.reply_line());
        out.extend(self.change_lines());
        out
    }

    /// The call shown: `#N caller → /csi.v1.Node/NodeStageVolume on node-1`.
    pub fn call_line(&self) -> String {
        call_line(self.step())
    }

    /// The request's key fields, one a line (`volume …`, `staging …`, `access …`).
    pub fn request_lines(&self) -> Vec<String> {
        request_lines(&self.step().call)
    }

    /// `reply     OK`, or the gRPC status of a failed call.
    pub fn reply_line(&self) -> String {
        format!("reply     {}", self.step().call.summary())
    }

    /// What the call changed and the volume's state before → after (or that it changed
    /// nothing).
    pub fn change_lines(&self) -> Vec<String> {
        let s = self.step();
        match &s.change {
            Some(c) => vec![
                format!("changed   {}", object_text(c)),
                format!("state     {}", state_text(c)),
            ],
            None if s.call.reply.is_err() => vec!["changed   nothing: the call failed".into()],
            None => vec!["changed   nothing stepped".into()],
        }
    }

    /// The call shown, as what a lesson's check reads.
    pub(crate) fn seen(&self) -> Seen {
        let s = self.step();
        Seen::SteppedCall {
            rpc: s.call.rpc,
            node: s.call.node.clone(),
            volume: s.call.subject().to_string(),
            code: s.call.code(),
            index: self.at() + 1,
            of: self.cursor.len(),
        }
    }

    /// The flow's last line: how many calls, how many failed, where each volume ended.
    pub(crate) fn result(&self) -> Outcome {
        let mut out = Outcome::empty();
        let failed = self.steps.iter().filter(|s| s.call.reply.is_err()).count();
        let mut ends: BTreeMap<(String, String), LifecycleState> = BTreeMap::new();
        for s in &self.steps {
            if let Some(Change {
                volume_id,
                node: Some(node),
                after: Some(after),
                ..
            }) = &s.change
            {
                ends.insert((volume_id.clone(), node.clone()), *after);
            }
        }
        let mut text = format!(
            "end of {}'s CSI calls: {}",
            self.what,
            crate::util::text::plural(self.steps.len(), "call", "calls")
        );
        if failed > 0 {
            text.push_str(&format!(", {failed} failed"));
        }
        for ((v, n), s) in &ends {
            text.push_str(&format!(" · {v} {s} on {n}"));
        }
        out.line(Line::styled(
            text,
            if failed > 0 { Role::Bad } else { Role::Good },
        ));
        out
    }
}

/// `#N caller → /csi.v1.Node/NodeStageVolume on node-1`.
fn call_line(s: &CsiStep) -> String {
    let c = &s.call;
    let on = c
        .node
        .as_deref()
        .map(|n| format!(" on {n}"))
        .unwrap_or_default();
    format!("#{} {} → {}{on}", s.seq, c.caller, c.path())
}

/// The request's key fields, one a line.
fn request_lines(c: &CsiCall) -> Vec<String> {
    let r = &c.request;
    let mut out = Vec::new();
    let key = if c.rpc == "CreateVolume" {
        "name"
    } else {
        "volume"
    };
    if let Some(v) = r.subject() {
        out.push(format!("{key:<9} {v}"));
    }
    if let Some(n) = r.node_id() {
        out.push(format!("node_id   {n}"));
    }
    if let Some(p) = r.staging_path() {
        out.push(format!("staging   {p}"));
    }
    if let Some(p) = r.target_path() {
        out.push(format!("target    {p}"));
    }
    if let Some(cap) = r.capability() {
        out.push(format!("access    {}", capability_text(cap)));
    }
    out
}

/// `mount ext4 · SINGLE_NODE_MULTI_WRITER`, `block · MULTI_NODE_MULTI_WRITER`.
fn capability_text(cap: &VolumeCapability) -> String {
    let kind = match (&cap.block, &cap.mount) {
        (Some(_), _) => "block".to_string(),
        (None, Some(m)) if !m.fs_type.is_empty() => format!("mount {}", m.fs_type),
        (None, _) => "mount".to_string(),
    };
    match &cap.access_mode {
        Some(m) => format!("{kind} · {}", m.mode.name()),
        None => kind,
    }
}

/// The object a call changed: `volumeattachment csi-… (vol-… → node-1)`.
/// A teardown call's object ends with what happened to it: `…, detached`.
fn object_text(c: &Change) -> String {
    let node = c.node.as_deref().unwrap_or("-");
    let (object, undone) = match &c.object {
        Changed::Volume { pv } => (
            match pv {
                Some(pv) => format!("volume {} for persistentvolume {pv}", c.volume_id),
                None => format!("volume {}", c.volume_id),
            },
            "deleted",
        ),
        Changed::Attachment { name } => (
            format!(
                "volumeattachment {} ({} → {node})",
                crate::storage::attach_detach::short_va(name),
                c.volume_id,
            ),
            "detached",
        ),
        Changed::Staging { .. } => (
            format!("the staging mount of {} on {node}", c.volume_id),
            "unmounted",
        ),
        Changed::Target { .. } => (
            format!("the pod's target mount of {} on {node}", c.volume_id),
            "unmounted",
        ),
    };
    if c.removed {
        format!("{object}, {undone}")
    } else {
        object
    }
}

/// The volume's state before → after, then where: `CREATED → NODE_READY (vol-… on node-1)`,
/// `— → CREATED (vol-…)`.
pub fn state_text(c: &Change) -> String {
    let state = |s: Option<LifecycleState>| s.map_or("—", LifecycleState::name);
    let at = match &c.node {
        Some(n) => format!("{} on {n}", c.volume_id),
        None => c.volume_id.clone(),
    };
    format!("{} → {} ({at})", state(c.before), state(c.after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::Desk;

    fn ok(desk: &mut Desk, line: &str) -> String {
        desk.execute(line)
            .unwrap_or_else(|e| panic!("{line}: {}", e.message))
            .to_text()
    }

    /// The states worked out call by call end where the driver's own lifecycle is.
    #[test]
    fn the_last_state_of_each_volume_is_the_driver_s() {
        let mut desk = Desk::new();
        ok(&mut desk, "pvc create a --size 1Gi --class local-wffc");
        ok(&mut desk, "pvc create b --size 1Gi --class local-wffc");
        ok(&mut desk, "pod create p --pvc a --pvc b --step");
        let c = desk.stepping().and_then(|s| s.csi()).expect("stepping");
        assert_eq!(c.steps().len(), 8, "four calls per new volume");
        let mut last = BTreeMap::new();
        for s in c.steps() {
            let ch = s.change.as_ref().expect("every call answered");
            if let Some(n) = &ch.node {
                last.insert((ch.volume_id.clone(), n.clone()), ch.after);
            }
        }
        assert_eq!(last.len(), 2);
        for ((v, n), after) in last {
            let driver = crate::engine::query::volume_state_on(&desk.lab, &v, &n);
            assert_eq!(after.map(LifecycleState::name), driver, "{v} on {n}");
        }
    }

    /// `pod delete --step` walks the volume back down, each call taking one thing away,
    /// and ends where the driver is.
    #[test]
    fn the_teardown_steps_the_volume_back_to_created() {
        let mut desk = Desk::new();
        ok(&mut desk, "pvc create a --size 1Gi --class local-wffc");
        ok(&mut desk, "pod create p --pvc a");
        ok(&mut desk, "pod delete p --step");
        let c = desk.stepping().and_then(|s| s.csi()).expect("stepping");
        let calls: Vec<&str> = c.steps().iter().map(|s| s.call.rpc).collect();
        assert_eq!(
            calls,
            [
                "NodeUnpublishVolume",
                "NodeUnstageVolume",
                "ControllerUnpublishVolume"
            ]
        );
        let states: Vec<(Option<&str>, Option<&str>, bool)> = c
            .steps()
            .iter()
            .map(|s| {
                let ch = s.change.as_ref().expect("every call took something away");
                (
                    ch.before.map(LifecycleState::name),
                    ch.after.map(LifecycleState::name),
                    ch.removed,
                )
            })
            .collect();
        assert_eq!(
            states,
            [
                (Some("PUBLISHED"), Some("VOL_READY"), true),
                (Some("VOL_READY"), Some("NODE_READY"), true),
                (Some("NODE_READY"), Some("CREATED"), true),
            ]
        );
        let last = c
            .steps()
            .last()
            .and_then(|s| s.change.clone())
            .expect("a change");
        let node = last.node.expect("a node");
        assert_eq!(
            crate::engine::query::volume_state_on(&desk.lab, &last.volume_id, &node),
            Some("CREATED")
        );
        assert!(ok(&mut desk, "step end").contains("stepping ended"));
        // DeleteVolume names the PV it was made for, gone by the time it is shown.
        let pv = crate::engine::query::claim_volume(&desk.lab, "a")
            .map(|v| v.name.to_string())
            .expect("a volume");
        ok(&mut desk, "pvc delete a --step");
        let c = desk.stepping().and_then(|s| s.csi()).expect("stepping");
        let step = c.step();
        assert_eq!(step.call.rpc, "DeleteVolume");
        assert_eq!(
            step.change
                .as_ref()
                .map(|ch| (&ch.object, ch.removed, ch.after)),
            Some((&Changed::Volume { pv: Some(pv) }, true, None))
        );
    }

    /// A claim a pod still uses is only marked for deletion: nothing to step, nothing opens.
    #[test]
    fn a_claim_in_use_makes_no_call_and_opens_nothing() {
        let mut desk = Desk::new();
        ok(&mut desk, "pvc create a --size 1Gi --class local-wffc");
        ok(&mut desk, "pod create p --pvc a");
        let out = ok(&mut desk, "pvc delete a --step");
        assert!(out.contains("no CSI call: pvc/a stays Terminating while a pod uses it"));
        assert!(desk.stepping().is_none());
        let out = ok(&mut desk, "pod create q");
        assert!(!out.contains("CSI call"));
        let out = ok(&mut desk, "pod delete q --step");
        assert!(out.contains("no CSI call: pod/q mounts no claim"));
        assert!(desk.stepping().is_none());
    }

    #[test]
    fn forward_and_back_stop_at_the_ends() {
        let mut desk = Desk::new();
        ok(&mut desk, "pvc create a --size 1Gi --class local-wffc");
        ok(&mut desk, "pod create p --pvc a --step");
        let mut s = desk.stepping().expect("stepping").clone();
        assert_eq!((s.unit(), s.at(), s.len()), ("call", 0, 4));
        assert!(!s.back());
        for at in 1..4 {
            assert_eq!(s.forward(), super::super::stepping::Moved::On);
            assert_eq!(s.at(), at);
        }
        assert_eq!(s.forward(), super::super::stepping::Moved::Ended);
        assert!(
            s.result()
                .to_text()
                .starts_with("end of pod/p's CSI calls: 4 calls")
        );
    }

    #[test]
    fn a_stepped_call_is_seen_with_its_rpc_node_and_code() {
        let mut desk = Desk::new();
        ok(&mut desk, "pvc create a --size 1Gi --class local-wffc");
        let ran = desk.run("pod create p --pvc a --step");
        assert!(matches!(
            ran.seen.last(),
            Some(Seen::SteppedCall {
                rpc: "CreateVolume",
                node: None,
                code: crate::csi::Code::Ok,
                index: 1,
                of: 4,
                ..
            })
        ));
        let ran = desk.run("step");
        assert!(matches!(
            ran.seen.as_slice(),
            [Seen::SteppedCall {
                rpc: "ControllerPublishVolume",
                index: 2,
                ..
            }]
        ));
    }
}
