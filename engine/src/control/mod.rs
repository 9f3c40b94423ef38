//! What every component is handed when the engine runs it, and nothing more: the API
//! server (client verbs on the store, watch by resourceVersion), the logical clock, an
//! event recorder (the call log), the wire log its clients write, the fault table (the
//! world failing around it), and the CSI endpoint the sidecars and kubelet dial.
//!
//! A component is a type with its own state (work sets, rate limiters, caches) that
//! implements [`Component`]; the engine owns the list, their order and the clock.
//! Components never see each other's fields: what one learns of another it learns from the
//! API objects, as the real ones do.

pub mod backoff;
pub mod csi_client;

pub use backoff::Backoff;
pub use csi_client::CsiEndpoint;

use crate::cluster::{ApiError, ApiKind, Cluster, Object, ObjectRef, PodSpec, PodStatus, Uid};

/// How many times a status write is retried on Conflict (kubelet's status manager).
pub const STATUS_RETRIES: u32 = 5;
use crate::faults::Faults;
use crate::record::{Actor, CallEvent, CallLog, Detail, Event, Level, Message, What, WireLog};

/// The clients and clock a component works with during one pass.
pub struct Ctx<'a> {
    /// The API server's store, used through its client verbs (`api.pvcs().update(…)`).
    pub api: &'a mut Cluster,
    /// The logical clock; only the engine advances it.
    pub clock: crate::util::time::Millis,
    /// The event recorder: every component's log lines and Kubernetes events.
    pub calls: &'a mut CallLog,
    /// Where clients record what went over the wire (CSI RPCs, plugin executions).
    pub wire: &'a mut WireLog,
    /// Armed faults (`fault inject`): RPCs that fail, crash points, nodes that are down.
    pub faults: &'a mut Faults,
    /// The CSI driver's endpoint (controller and node services).
    pub csi: &'a mut dyn CsiEndpoint,
    /// What the sidecars learned from the driver's ControllerGetCapabilities when they
    /// started (csi-lib-utils `GetControllerCapabilities`).
    pub caps: DriverCaps,
    /// Real mode (`--real-cni`): CNI executions also run the real plugins.
    pub real: Option<&'a dyn crate::cni::real::RealCni>,
}

/// The driver capabilities the sidecars act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DriverCaps {
    /// SINGLE_NODE_MULTI_WRITER: ReadWriteOncePod maps to SINGLE_NODE_SINGLE_WRITER.
    pub single_node_multi_writer: bool,
    /// STAGE_UNSTAGE_VOLUME (NodeGetCapabilities): kubelet stages before it publishes.
    pub node_stage_unstage: bool,
    /// VOLUME_ACCESSIBILITY_CONSTRAINTS (GetPluginCapabilities): external-provisioner sends
    /// accessibility requirements (`SupportsTopology`, with its Topology feature gate on).
    pub topology: bool,
}

/// One control loop the engine runs: a controller, a sidecar, a kubelet.
pub(crate) trait Component {
    /// The name it logs under (`external-provisioner`).
    fn name(&self) -> &'static str;
    /// One pass over the work it has; true when it changed anything.
    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool;
}

impl Ctx<'_> {
    /// Write a pod's status through the status subresource, re-reading and retrying on
    /// Conflict as kubelet's status manager does.
    pub(crate) fn write_pod_status(
        &mut self,
        key: &(String, String),
        actor: impl Into<Actor>,
        mutate: impl Fn(&mut PodStatus),
    ) -> Result<u64, ApiError> {
        let actor = actor.into();
        let mut last = None;
        for attempt in 1..=STATUS_RETRIES {
            let pods = self.api.pods();
            let current = pods.get(&key.0, &key.1)?;
            let read_at = current.metadata.resource_version;
            let mut status = current.status.clone();
            mutate(&mut status);
            match self
                .api
                .pods()
                .write_status(&key.0, &key.1, read_at, status)
            {
                Ok(rv) => return Ok(rv),
                Err(e @ ApiError::Conflict { .. }) => {
                    self.log(
                        &actor,
                        "conflict",
                        format!("status write {attempt}/{STATUS_RETRIES} rejected: {e}; re-reading and retrying"),
                    );
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(ApiError::Conflict {
            resource: <crate::cluster::PodSpec as crate::cluster::Kind>::RESOURCE,
            name: key.1.clone(),
        }))
    }

    /// One call-log entry per plugin execution in the wire range, each linked to (and
    /// sharing) its wire record.
    pub(crate) fn log_wire_summaries(&mut self, first: u64, last: u64) {
        use crate::record::wire::WireRecord;
        let tick = self.clock;
        for seq in first..last {
            let Some(WireRecord::Cni(c)) = self.wire.get(seq) else {
                continue;
            };
            let e = CallEvent::execution(tick, seq, std::sync::Arc::clone(c));
            self.calls.push(e);
        }
        self.log_real_calls(first, last);
    }

    /// Real mode: one call-log entry per top-level plugin execution in `first..last`, the
    /// real plugin's answer against the model's (see `crate::cni::real`).
    pub(crate) fn log_real_calls(&mut self, first: u64, last: u64) {
        let tick = self.clock;
        let Some(real) = self.real else {
            return;
        };
        let records: Vec<(u64, &str, crate::cni::plugin::CniCommand)> = (first..last)
            .filter_map(|seq| match self.wire.get(seq) {
                Some(crate::record::wire::WireRecord::Cni(c)) if c.depth == 0 => {
                    Some((seq, c.plugin_type.as_str(), c.env.cmd()))
                }
                _ => None,
            })
            .collect();
        let paired = real.pair(&records);
        for (wire, text, differs) in paired {
            let level = if differs {
                Level::Warning
            } else {
                Level::Normal
            };
            self.calls.push(CallEvent::new(
                tick,
                Actor::from("real-cni"),
                What::RealExec { wire, text },
                level,
            ));
        }
    }

    /// Record a warning in the call log.
    pub(crate) fn log_warning(
        &mut self,
        actor: impl Into<Actor>,
        action: &'static str,
        detail: impl Into<Detail>,
    ) {
        self.log_at(actor, action, detail, Level::Warning);
    }

    /// Whether a crash is armed at `point` (on `node`) and fires now.
    pub(crate) fn crash_at(
        &mut self,
        node: Option<&str>,
        point: crate::faults::CrashPoint,
    ) -> bool {
        self.faults.take_crash(node, point).is_some()
    }

    /// Record a step a component took: a verb and what it did.
    pub fn log(
        &mut self,
        actor: impl Into<Actor>,
        action: &'static str,
        detail: impl Into<Detail>,
    ) -> u64 {
        self.log_at(actor, action, detail, Level::Normal)
    }

    /// Record a step at a level.
    pub(crate) fn log_at(
        &mut self,
        actor: impl Into<Actor>,
        action: &'static str,
        detail: impl Into<Detail>,
        level: Level,
    ) -> u64 {
        let e = CallEvent::step(self.clock, actor.into(), action, detail.into(), level);
        self.calls.push(e)
    }

    /// Record a full call-log entry.
    pub(crate) fn log_event(&mut self, e: CallEvent) -> u64 {
        self.calls.push(e)
    }

    /// Record a Kubernetes event on an object. Every occurrence is recorded: the API
    /// server's Event folds a repeat into one with a count ([`crate::record::fold_events`]).
    pub fn event(
        &mut self,
        actor: impl Into<Actor>,
        reason: &'static str,
        message: impl Into<Message>,
        object: ObjectRef,
        level: Level,
    ) {
        self.event_from(actor, None, reason, message, object, level);
    }

    /// Record a Kubernetes event on an object through a recorder whose source component
    /// is not the actor's name (a sidecar's: `external-resizer DRIVER`); the call log
    /// still names the actor.
    pub(crate) fn event_from(
        &mut self,
        actor: impl Into<Actor>,
        source: Option<&'static str>,
        reason: &'static str,
        message: impl Into<Message>,
        object: ObjectRef,
        level: Level,
    ) {
        let event = Event {
            reason,
            uid: uid_of(self.api, &object),
            object,
            message: message.into(),
            source,
        };
        let e = CallEvent::new(self.clock, actor.into(), What::Event(event), level);
        self.calls.push(e);
    }

    /// Record a Kubernetes event on a pod (this incarnation of it).
    pub(crate) fn pod_event(
        &mut self,
        actor: impl Into<Actor>,
        reason: &'static str,
        message: impl Into<Message>,
        pod: &Object<PodSpec>,
        level: Level,
    ) {
        let event = Event {
            reason,
            object: ObjectRef::to(pod),
            uid: Some(pod.metadata.uid),
            message: message.into(),
            source: None,
        };
        let e = CallEvent::new(self.clock, actor.into(), What::Event(event), level);
        self.calls.push(e);
    }
}

/// The current UID of an object, for the kinds whose events `describe` tells apart by
/// incarnation (pods, claims, volumes, snapshots).
pub(crate) fn uid_of(api: &Cluster, object: &ObjectRef) -> Option<Uid> {
    let key = (object.namespace.clone(), object.name.clone());
    match object.kind {
        ApiKind::Pod => api.pods.get(&key).map(|o| o.metadata.uid),
        ApiKind::PersistentVolumeClaim => api.pvcs.get(&key).map(|o| o.metadata.uid),
        ApiKind::PersistentVolume => api.pvs.get(&key).map(|o| o.metadata.uid),
        ApiKind::VolumeSnapshot => api.snapshots.get(&key).map(|o| o.metadata.uid),
        _ => None,
    }
}

/// A sidecar container died at a crash point: kubelet restarts it (immediately the first
/// time, then CrashLoopBackOff); it retries its work from the API objects, so its rate
/// limiter holds the object until the container is back.
pub(crate) fn sidecar_crashed(
    ctx: &mut Ctx<'_>,
    backoff: &mut Backoff,
    container: &'static str,
    backoff_key: &str,
    what: &str,
) {
    let delay = ctx.faults.restart_delay(container);
    let restarts = ctx.faults.restarts.get(container).copied().unwrap_or(0);
    backoff.hold(backoff_key, ctx.clock.saturating_add(delay));
    let when = if delay == crate::util::time::Millis::ZERO {
        "kubelet restarts the container now".to_string()
    } else {
        format!(
            "CrashLoopBackOff: kubelet restarts the container at t={} (`tick {}`)",
            ctx.clock.saturating_add(delay).secs_text(),
            delay.tick_arg()
        )
    };
    ctx.log_at(
        container,
        "crash",
        format!("{container} died {what} (restart {restarts}); {when}"),
        Level::Warning,
    );
}
