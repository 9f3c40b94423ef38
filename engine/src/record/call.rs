//! One call-log entry as typed facts: which component acted ([`Actor`]), what happened
//! ([`What`]: a runtime's CNI operation, a plugin execution, a CSI RPC, a Kubernetes event
//! on an object, or another step a component took), and the links from a call to the wire
//! records it produced ([`WireRange`]). Text is made only when a view renders an entry
//! ([`CallEvent::write_actor`], [`CallEvent::action`], [`CallEvent::write_detail`]), so
//! recording one costs no formatting; everything a line shows is kept in the entry itself
//! (or in the immutable wire record it shares), never read back from state that changes.

use super::wire::CsiCall;
use crate::cluster::ObjectRef;
use crate::cni::conf::NetworkConfigList;
use crate::cni::plugin::CniCommand;
use crate::cni::runtime::WireCall;
use std::fmt;
use std::sync::Arc;

/// A component that runs once on every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// kubelet.
    Kubelet,
    /// containerd (its CRI plugin, which runs the CNI chain).
    Containerd,
    /// flanneld.
    Flanneld,
    /// Multus's installer (the thin entrypoint).
    Multus,
    /// The SR-IOV network device plugin.
    SriovDevicePlugin,
    /// node-driver-registrar, the CSI driver's registration sidecar.
    NodeDriverRegistrar,
}

impl Agent {
    /// The agent's name as the call log shows it (`kubelet`).
    pub const fn name(self) -> &'static str {
        match self {
            Agent::Kubelet => "kubelet",
            Agent::Containerd => "containerd",
            Agent::Flanneld => "flanneld",
            Agent::Multus => "multus",
            Agent::SriovDevicePlugin => "sriov-device-plugin",
            Agent::NodeDriverRegistrar => "node-driver-registrar",
        }
    }
}

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Actor {
    /// A control-plane component, controller or sidecar, the API server, the lab itself
    /// or the learner, by its name (`default-scheduler`, `external-provisioner`, `you`).
    Component(&'static str),
    /// An agent on one node: `kubelet(node-1)`, `containerd(node-1)`.
    Agent(Agent, Arc<str>),
    /// A CNI plugin: one the runtime ran (`bridge`), or one a plugin delegated to, shown
    /// indented under it (`  host-local`).
    Plugin(PluginRun),
}

/// The plugin of one execution, as an actor: its type and whether another plugin ran it
/// are read from the execution itself (shared with the wire log, so recording the entry
/// copies no text).
#[derive(Debug, Clone)]
pub struct PluginRun(Arc<WireCall>);

impl PluginRun {
    /// The plugin's type (its binary's name).
    pub fn plugin_type(&self) -> &str {
        &self.0.plugin_type
    }

    /// Whether another plugin ran it (an IPAM plugin, a meta-plugin's delegate).
    pub fn delegated(&self) -> bool {
        self.0.depth > 0
    }
}

/// Two plugin actors are the same when they show the same: the type and the indentation.
impl PartialEq for PluginRun {
    fn eq(&self, other: &Self) -> bool {
        self.plugin_type() == other.plugin_type() && self.delegated() == other.delegated()
    }
}

impl Eq for PluginRun {}

impl std::hash::Hash for PluginRun {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.plugin_type().hash(state);
        self.delegated().hash(state);
    }
}

impl Actor {
    /// `agent` on `node`.
    pub fn on(agent: Agent, node: &str) -> Self {
        Actor::Agent(agent, Arc::from(node))
    }

    /// kubelet on `node`.
    pub fn kubelet(node: &str) -> Self {
        Actor::on(Agent::Kubelet, node)
    }

    /// containerd on `node`.
    pub fn containerd(node: &str) -> Self {
        Actor::on(Agent::Containerd, node)
    }

    /// The node it runs on, for a node agent.
    pub fn node(&self) -> Option<&str> {
        match self {
            Actor::Agent(_, node) => Some(node),
            _ => None,
        }
    }

    /// The component an event comes from, as `describe`'s From column shows it (kubelet's
    /// events read `kubelet`, not `kubelet(node-1)`).
    pub fn source(&self) -> &str {
        match self {
            Actor::Component(name) => name.split('(').next().unwrap_or(name),
            Actor::Agent(agent, _) => agent.name(),
            Actor::Plugin(run) => run.plugin_type(),
        }
    }

    /// Whether `text` names this actor as the call log shows it (`kubelet(node-1)`,
    /// `external-provisioner`, `bridge`; a delegated plugin without its indentation).
    pub fn is(&self, text: &str) -> bool {
        match self {
            Actor::Component(name) => *name == text,
            Actor::Agent(agent, node) => {
                text.strip_prefix(agent.name())
                    .and_then(|t| t.strip_prefix('('))
                    .and_then(|t| t.strip_suffix(')'))
                    == Some(node)
            }
            Actor::Plugin(run) => run.plugin_type() == text,
        }
    }

    /// The actor as the call log shows it, written at the end of `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            Actor::Component(name) => out.push_str(name),
            Actor::Agent(agent, node) => {
                out.push_str(agent.name());
                out.push('(');
                out.push_str(node);
                out.push(')');
            }
            Actor::Plugin(run) => {
                if run.delegated() {
                    out.push_str("  ");
                }
                out.push_str(run.plugin_type());
            }
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.pad(&s)
    }
}

impl From<&'static str> for Actor {
    fn from(name: &'static str) -> Self {
        Actor::Component(name)
    }
}

impl From<&Actor> for Actor {
    fn from(a: &Actor) -> Self {
        a.clone()
    }
}

/// The wire records a call produced: `[first, end)`, as the wire view reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireRange {
    /// The first record's sequence number.
    pub first: u64,
    /// One past the last record's.
    pub end: u64,
}

impl WireRange {
    /// The range of one record.
    pub fn one(seq: u64) -> Self {
        WireRange {
            first: seq,
            end: seq + 1,
        }
    }

    /// Whether it holds no record.
    pub fn is_empty(self) -> bool {
        self.end <= self.first
    }
}

/// A runtime's CNI operation on one attachment (libcni's `AddNetworkList`,
/// `DelNetworkList`, …): the plugin executions it ran.
#[derive(Debug, Clone)]
pub struct CniOp {
    /// The command (`ADD`, `DEL`, `CHECK`, `GC`).
    pub command: CniCommand,
    /// The plugin executions it ran, delegated ones included.
    pub wire: WireRange,
    /// What it was run for.
    pub purpose: CniPurpose,
}

/// Why a runtime ran a CNI operation, as its call-log line says.
#[derive(Debug, Clone)]
pub enum CniPurpose {
    /// containerd setting up a pod sandbox's network with this network list.
    Sandbox(Arc<NetworkConfigList>),
    /// containerd tearing a failed ADD down, with the DEL's own error if it failed too.
    Teardown(Option<String>),
    /// Anything else (the learner acting as the runtime), as its line reads.
    Text(String),
}

/// A Kubernetes event: what `describe` lists under Events.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// The reason (`Scheduled`, `FailedMount`).
    pub reason: &'static str,
    /// The object it is about.
    pub object: ObjectRef,
    /// The object's UID when the event was recorded, so `describe` shows only the events of
    /// this incarnation of a name (kubectl filters events by UID too).
    pub uid: Option<crate::cluster::Uid>,
    /// The message.
    pub message: Message,
    /// The event recorder's `source.component` when it is not the acting component's own
    /// name (external-provisioner's library records as `DRIVER_HOST_UUID`, external-resizer
    /// as `external-resizer DRIVER`); `None` reads the actor's ([`Actor::source`]).
    pub source: Option<&'static str>,
}

/// An event's message: the frequent ones as facts, any other as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    /// The message as written.
    Text(String),
    /// kubelet started the pod's container: `Started container NAME`. kubelet's
    /// `startContainer` records two events before it with this one, which the API server's
    /// view of the log shows beside it ([`ContainerStart`]): the image manager's `Pulled`
    /// (the image is present) and `Created`. The name and image are borrowed from the pod's
    /// spec when it is the lab's own.
    Started {
        /// The container's name.
        container: crate::cluster::Text,
        /// The container's image.
        image: crate::cluster::Text,
    },
    /// kubelet stops the pod's container: `Stopping container NAME`.
    Killing(crate::cluster::Text),
    /// The scheduler bound the pod (the event's object) to this node:
    /// `Successfully assigned NS/NAME to NODE`.
    Assigned(String),
    /// The taint eviction controller deletes the pod (the event's object):
    /// `Marking for deletion Pod NS/NAME`.
    TaintEviction,
    /// The taint eviction controller cancels the pod's scheduled deletion:
    /// `Cancelling deletion of Pod NS/NAME`.
    TaintEvictionCancelled,
}

impl Message {
    /// The message's text about `object`, written at the end of `out`.
    pub fn write(&self, object: &ObjectRef, out: &mut String) {
        match self {
            Message::Text(t) => out.push_str(t),
            Message::Started { container, .. } => {
                out.push_str("Started container ");
                out.push_str(container);
            }
            Message::Killing(container) => {
                out.push_str("Stopping container ");
                out.push_str(container);
            }
            Message::Assigned(node) => {
                out.push_str("Successfully assigned ");
                out.push_str(&object.namespace);
                out.push('/');
                out.push_str(&object.name);
                out.push_str(" to ");
                out.push_str(node);
            }
            Message::TaintEviction | Message::TaintEvictionCancelled => {
                out.push_str(if matches!(self, Message::TaintEviction) {
                    "Marking for deletion Pod "
                } else {
                    "Cancelling deletion of Pod "
                });
                out.push_str(&object.namespace);
                out.push('/');
                out.push_str(&object.name);
            }
        }
    }
}

/// Which Event a recorded event is shown as. kubelet's `startContainer`
/// (`kuberuntime_container.go`) records three events as it starts a container, which the
/// lab's kubelet does in one step: the image manager's `Pulled`, then `Created`, then
/// `Started`. The call log keeps the last ([`Message::Started`]) and the API server's view
/// of the log ([`Event::parts`]) shows the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventPart {
    /// The event as recorded.
    Recorded,
    /// Before a container's `Started`, the image manager's `Pulled`: `Container image
    /// "IMAGE" already present on machine`.
    Pulled,
    /// Before a container's `Started`, `Created container NAME`.
    Created,
}

impl Event {
    /// The Events this recorded event is, in the order they were recorded: a container's
    /// `Started` is `Pulled` (when kubelet's image manager does not pull: an
    /// `IfNotPresent` image, which the lab's nodes hold; an `Always` image is pulled, and
    /// the pull's events, with its duration and image size, are left out), `Created` and
    /// itself; any other event is itself.
    pub fn parts(&self) -> &'static [EventPart] {
        match &self.message {
            Message::Started { image, .. }
                if crate::cluster::image_pull_policy(image) == "IfNotPresent" =>
            {
                &[EventPart::Pulled, EventPart::Created, EventPart::Recorded]
            }
            Message::Started { .. } => &[EventPart::Created, EventPart::Recorded],
            _ => &[EventPart::Recorded],
        }
    }

    /// The reason of `part` of this event (`Pulled`, `Created`, or its own).
    pub fn part_reason(&self, part: EventPart) -> &'static str {
        match part {
            EventPart::Recorded => self.reason,
            EventPart::Pulled => "Pulled",
            EventPart::Created => "Created",
        }
    }

    /// The message of `part` of this event, written at the end of `out`.
    pub fn write_part_message(&self, part: EventPart, out: &mut String) {
        match (part, &self.message) {
            (EventPart::Pulled, Message::Started { image, .. }) => {
                // The image manager's `Container image %q already present on machine`.
                out.push_str("Container image ");
                out.push_str(&crate::net::validate::go_quote(image));
                out.push_str(" already present on machine");
            }
            (EventPart::Created, Message::Started { container, .. }) => {
                out.push_str("Created container ");
                out.push_str(container);
            }
            _ => self.message.write(&self.object, out),
        }
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::Text(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::Text(text.to_string())
    }
}

/// What a step a component logged did, beside its verb: the frequent ones as facts, any
/// other as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Detail {
    /// Text made when the step was recorded.
    Text(String),
    /// A fixed text.
    Static(&'static str),
    /// containerd's RunPodSandbox: `pod/NAME → sandbox ID, netns PATH`.
    RunPodSandbox {
        /// The pod's table key (namespace, name), shared with the store; the line shows
        /// its name.
        pod: crate::cluster::store::SharedKey,
        /// The sandbox ID (shown shortened to 13 characters), shared with the sandbox's
        /// runtime conf.
        sandbox: Arc<str>,
        /// The network namespace's path, shared with the sandbox's runtime conf.
        netns: Arc<str>,
    },
    /// containerd's StopPodSandbox: `sandbox ID → CNI DEL ifname=eth0, netns PATH removed`.
    StopPodSandbox {
        /// The sandbox ID (shown shortened to 13 characters).
        sandbox: String,
        /// The network namespace's path.
        netns: String,
    },
    /// kubelet's status write for a pod now running: `pod/NAME podIP=IP phase=Running`.
    PodRunning {
        /// The pod's table key (namespace, name), shared with the store; the line shows
        /// its name.
        pod: crate::cluster::store::SharedKey,
        /// Its IP (none when the CNI result had no address).
        ip: Option<std::net::IpAddr>,
    },
    /// The API server removed a pod: `pod/NAME removed`.
    PodRemoved {
        /// The pod's name.
        pod: String,
    },
    /// The scheduler's binding: `pod/NAME → NODE (pods/binding)`.
    Binding {
        /// The pod's name.
        pod: String,
        /// The node.
        node: String,
    },
    /// kubelet's plugin registration wrote the CSINode: `csinode/NODE: driver D
    /// nodeID=ID topology {"KEY": "VALUE"}` (the segments as Go's `%v` of the map would
    /// not quote them; the lab has always shown Rust's `{:?}`).
    CsiNodeRegistered {
        /// The node.
        node: String,
        /// The driver's name.
        driver: &'static str,
        /// NodeGetInfo's node ID.
        node_id: String,
        /// NodeGetInfo's accessible topology segments.
        segments: std::collections::BTreeMap<String, String>,
    },
}

impl Detail {
    /// The detail's text, written at the end of `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            Detail::Text(t) => out.push_str(t),
            Detail::Static(t) => out.push_str(t),
            Detail::RunPodSandbox {
                pod,
                sandbox,
                netns,
            } => {
                out.push_str("pod/");
                out.push_str(&pod.1);
                out.push_str(" → sandbox ");
                out.push_str(short_id(sandbox));
                out.push_str(", netns ");
                out.push_str(netns);
            }
            Detail::StopPodSandbox { sandbox, netns } => {
                out.push_str("sandbox ");
                out.push_str(short_id(sandbox));
                out.push_str(" → CNI DEL ifname=eth0, netns ");
                out.push_str(netns);
                out.push_str(" removed");
            }
            Detail::PodRunning { pod, ip } => {
                out.push_str("pod/");
                out.push_str(&pod.1);
                out.push_str(" podIP=");
                match ip {
                    Some(ip) => {
                        use fmt::Write;
                        let _ = write!(out, "{ip}");
                    }
                    // Unset (a network without IPAM), shown as kubectl shows it.
                    None => out.push_str("<none>"),
                }
                out.push_str(" phase=Running");
            }
            Detail::PodRemoved { pod } => {
                out.push_str("pod/");
                out.push_str(pod);
                out.push_str(" removed");
            }
            Detail::Binding { pod, node } => {
                out.push_str("pod/");
                out.push_str(pod);
                out.push_str(" → ");
                out.push_str(node);
                out.push_str(" (pods/binding)");
            }
            Detail::CsiNodeRegistered {
                node,
                driver,
                node_id,
                segments,
            } => {
                use std::fmt::Write as _;
                let _ = write!(
                    out,
                    "csinode/{node}: driver {driver} nodeID={node_id} topology {segments:?}"
                );
            }
        }
    }
}

impl From<String> for Detail {
    fn from(text: String) -> Self {
        Detail::Text(text)
    }
}

impl From<&'static str> for Detail {
    fn from(text: &'static str) -> Self {
        Detail::Static(text)
    }
}

/// A sandbox ID as containerd's lines shorten it.
fn short_id(id: &str) -> &str {
    id.get(..13).unwrap_or(id)
}

/// What happened.
#[derive(Debug, Clone)]
pub enum What {
    /// A runtime's CNI operation (`CNI ADD`), linked to the plugin executions it ran.
    Cni(CniOp),
    /// One plugin execution (`exec`), linked to its wire record (shared with the wire log).
    Exec {
        /// The wire record's sequence number.
        wire: u64,
        /// The execution.
        call: Arc<WireCall>,
    },
    /// Real mode (`--real-cni`): the real plugin's run of one execution beside the model's.
    RealExec {
        /// The model's wire record.
        wire: u64,
        /// The comparison, as the real-mode edge reported it.
        text: String,
    },
    /// A CSI RPC, linked to its wire record (shared with the wire log).
    Csi {
        /// The wire record's sequence number.
        wire: u64,
        /// The call.
        call: Arc<CsiCall>,
    },
    /// A Kubernetes event on an object.
    Event(Event),
    /// Another step a component took: a verb (`bind`, `backoff`) and what it did.
    Step {
        /// The verb.
        action: &'static str,
        /// What it did.
        detail: Detail,
    },
}

/// How serious an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Level {
    /// Normal progress.
    Normal,
    /// Something failed or is waiting.
    Warning,
}

/// One entry of the call log.
#[derive(Debug, Clone)]
pub struct CallEvent {
    seq: u64,
    tick: crate::util::time::Millis,
    level: Level,
    actor: Actor,
    what: What,
}

impl CallEvent {
    /// An entry (its sequence number is set when it is recorded).
    pub fn new(tick: crate::util::time::Millis, actor: Actor, what: What, level: Level) -> Self {
        CallEvent {
            seq: 0,
            tick,
            level,
            actor,
            what,
        }
    }

    /// A step a component took: a verb and what it did.
    pub fn step(
        tick: crate::util::time::Millis,
        actor: Actor,
        action: &'static str,
        detail: Detail,
        level: Level,
    ) -> Self {
        CallEvent::new(tick, actor, What::Step { action, detail }, level)
    }

    /// One plugin execution, the wire record `wire`.
    pub fn execution(tick: crate::util::time::Millis, wire: u64, call: Arc<WireCall>) -> Self {
        let actor = Actor::Plugin(PluginRun(Arc::clone(&call)));
        let level = if call.reply.is_err() {
            Level::Warning
        } else {
            Level::Normal
        };
        CallEvent::new(tick, actor, What::Exec { wire, call }, level)
    }

    /// Set the sequence number the log gives it.
    pub(super) fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }

    /// Its sequence number in the call log.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The logical clock when it happened.
    pub fn tick(&self) -> crate::util::time::Millis {
        self.tick
    }

    /// Normal or Warning.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Who acted.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// What happened.
    pub fn what(&self) -> &What {
        &self.what
    }

    /// The Kubernetes event it is, if it is one.
    pub fn event(&self) -> Option<&Event> {
        match &self.what {
            What::Event(e) => Some(e),
            _ => None,
        }
    }

    /// The component an event was recorded by, as `describe`'s From column and `get
    /// events`' SOURCE show it: the recorder's source, else the actor's
    /// ([`Actor::source`]).
    pub fn event_source(&self) -> &str {
        self.event()
            .and_then(|e| e.source)
            .unwrap_or_else(|| self.actor.source())
    }

    /// The event's reason, if it is an event (`Scheduled`).
    pub fn reason(&self) -> Option<&'static str> {
        self.event().map(|e| e.reason)
    }

    /// The runtime's CNI operation it is, if it is one.
    pub fn cni_op(&self) -> Option<&CniOp> {
        match &self.what {
            What::Cni(op) => Some(op),
            _ => None,
        }
    }

    /// The plugin execution it is, with its wire record's number, if it is one: the
    /// command, plugin and outcome (exit code, CNI error code) are the record's.
    pub fn exec(&self) -> Option<(u64, &WireCall)> {
        match &self.what {
            What::Exec { wire, call } => Some((*wire, call)),
            _ => None,
        }
    }

    /// The CSI call it is, with its wire record's number, if it is one (its RPC, and its
    /// outcome: [`CsiCall::code`]).
    pub fn csi(&self) -> Option<(u64, &CsiCall)> {
        match &self.what {
            What::Csi { wire, call } => Some((*wire, call)),
            _ => None,
        }
    }

    /// The wire records behind it: a runtime's CNI operation's plugin executions, a plugin
    /// execution's or a CSI call's own record; `None` for an entry that ran no plugin.
    pub fn wire(&self) -> Option<WireRange> {
        let range = match &self.what {
            What::Cni(op) => op.wire,
            What::Exec { wire, .. } | What::RealExec { wire, .. } | What::Csi { wire, .. } => {
                WireRange::one(*wire)
            }
            What::Event(_) | What::Step { .. } => return None,
        };
        (!range.is_empty()).then_some(range)
    }

    /// The verb the call log shows (`CNI ADD`, `exec`, `RunPodSandbox`, an event's reason).
    pub fn action(&self) -> &'static str {
        match &self.what {
            What::Cni(op) => match op.command {
                CniCommand::Add => "CNI ADD",
                CniCommand::Del => "CNI DEL",
                CniCommand::Check => "CNI CHECK",
                CniCommand::Gc => "CNI GC",
                CniCommand::Status => "CNI STATUS",
                CniCommand::Version => "CNI VERSION",
            },
            What::Exec { .. } | What::RealExec { .. } => "exec",
            What::Csi { call, .. } => call.rpc,
            What::Event(e) => e.reason,
            What::Step { action, .. } => action,
        }
    }

    /// The actor as the call log shows it, written at the end of `out`.
    pub(crate) fn write_actor(&self, out: &mut String) {
        self.actor.write(out);
    }

    /// The detail the call log shows, written at the end of `out`.
    pub(crate) fn write_detail(&self, out: &mut String) {
        match &self.what {
            What::Cni(op) => match &op.purpose {
                CniPurpose::Sandbox(list) => {
                    out.push_str("net=");
                    out.push_str(&list.name);
                    out.push_str(" ifname=eth0 (chain: ");
                    for (i, p) in list.plugins.iter().enumerate() {
                        if i > 0 {
                            out.push_str(" → ");
                        }
                        out.push_str(&p.plugin_type);
                    }
                    out.push(')');
                }
                CniPurpose::Teardown(None) => {
                    out.push_str(
                        "teardown after failed ADD (every failed ADD is followed by a DEL)",
                    );
                }
                CniPurpose::Teardown(Some(e)) => {
                    out.push_str("teardown after failed ADD also failed: ");
                    out.push_str(e);
                }
                CniPurpose::Text(t) => out.push_str(t),
            },
            What::Exec { wire, call } => {
                out.push_str(call.env.cmd().as_str());
                out.push_str(" #");
                push_u64(out, *wire);
                out.push_str(": ");
                super::wire::write_cni_summary(call, out);
            }
            What::RealExec { text, .. } => out.push_str(text),
            What::Csi { wire, call } => {
                out.push('#');
                push_u64(out, *wire);
                out.push(' ');
                out.push_str(call.subject());
                out.push_str(": ");
                call.write_summary(out);
            }
            What::Event(e) => e.message.write(&e.object, out),
            What::Step { detail, .. } => detail.write(out),
        }
    }

    /// The detail the call log shows.
    pub fn detail(&self) -> String {
        let mut s = String::new();
        self.write_detail(&mut s);
        s
    }
}

/// `n` in decimal, at the end of `out`.
fn push_u64(out: &mut String, n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_actors_render_as_the_call_log_shows_them() {
        for n in [0, 7, 10, 12345, u64::MAX] {
            let mut s = String::from("#");
            push_u64(&mut s, n);
            assert_eq!(s, format!("#{n}"));
        }
        assert_eq!(Actor::kubelet("node-1").to_string(), "kubelet(node-1)");
        assert_eq!(format!("{:<10}|", Actor::from("lab")), "lab       |");
        let mut lab = crate::Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        let ipam = lab
            .calls()
            .iter()
            .map(|(_, e)| e.actor().clone())
            .find(|a| matches!(a, Actor::Plugin(run) if run.delegated()))
            .expect("the pod's ADD ran an IPAM delegate");
        assert_eq!(ipam.to_string(), "  host-local");
        assert_eq!(ipam.source(), "host-local");
        assert_eq!(Actor::from("runtime(you)").source(), "runtime");
        assert_eq!(Actor::containerd("n").source(), "containerd");
        assert!(Actor::kubelet("node-1").is("kubelet(node-1)"));
        assert!(!Actor::kubelet("node-1").is("kubelet(node-2)"));
        assert!(!Actor::kubelet("node-1").is("containerd(node-1)"));
        assert!(ipam.is("host-local") && Actor::from("you").is("you"));
    }
}
