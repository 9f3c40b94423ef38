//! The Lab: one in-memory cluster and the single `execute` every front end goes through.
//!
//! A line is parsed into a [`Command`]; [`Lab::apply`] validates it (a rejected command
//! changes nothing), performs it, and in auto mode runs the control loops until nothing
//! changes. Everything that acted lands in the call log; every plugin execution lands in the
//! wire log.
//!
//! The engine owns the components (the scheduler, the storage controllers, one kubelet per
//! node), their order, the clock and the logs; each component is handed only a
//! [`crate::control::Ctx`] borrowed from the lab's fields (see `ctx!`), and a kubelet its
//! own node's runtime. The `*_cmd` modules are the command handlers; `views`, `node_view`,
//! `ipam_view` and `volume_view` are the view models every `show`, `describe`, `get` and
//! dashboard pane reads.

pub mod apply_cmd;
pub mod cni_cmd;
pub mod csi_cmd;
pub mod delete_cmd;
pub mod diff;
mod events_view;
pub mod fault_cmd;
pub mod generic_describe;
pub(crate) mod invalid;
pub mod ipam_view;
pub mod journal;
pub mod kernel_views;
pub mod label_cmd;
pub mod listing;
pub mod multus_cmd;
pub mod multus_view;
pub mod names;
pub mod network;
pub mod node_index;
pub mod node_view;
pub mod nodes;
pub mod pods;
mod printers;
pub mod query;
pub mod real_views;
pub mod save;
pub mod seen;
pub mod storage_cmd;
pub mod timeline;
#[cfg(test)]
mod timeline_props;
pub mod validate;
pub mod views;
pub mod volume_view;
pub mod watch;
pub mod why;

use crate::cluster::Cluster;
use crate::cni::registry::Registry;
use crate::command::{self, Command, ParseError};
use crate::control::Component;
use crate::node::NodeRuntimes;
use crate::record::{Actor, CallEvent, CallLog, Detail, Level, WireLog};
use crate::render::{Line, Outcome, Role};
use crate::util::time::Millis;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What a component is handed (`crate::control::Ctx`), borrowed field by field from the
/// lab so that the components themselves (other fields) can be borrowed beside it.
macro_rules! ctx {
    ($lab:expr) => {{
        $lab.driver.set_clock_millis(
            $crate::cluster::meta::EPOCH_UNIX
                .saturating_mul(1000)
                .saturating_add(i64::try_from($lab.clock.as_ms()).unwrap_or(i64::MAX)),
        );
        let caps = $crate::engine::driver_caps(&$lab.driver);
        crate::control::Ctx {
            api: &mut $lab.cluster,
            clock: $lab.clock,
            calls: &mut $lab.calls,
            wire: &mut $lab.wire,
            faults: &mut $lab.faults,
            csi: &mut $lab.driver,
            caps,
            real: $lab.edges.real.as_deref(),
        }
    }};
}
pub(crate) use ctx;

/// A failed command: what it printed before failing (for example the CNI error JSON on
/// stdout), the error message (stderr), and why it failed as a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabError {
    /// The error, naming what was wrong and what is accepted.
    pub message: String,
    /// Output produced before the failure.
    pub output: Outcome,
    /// True when the line was only a request for help (not a failure).
    pub is_help: bool,
    /// Why it failed, as a value (what checks read instead of the message).
    pub reason: Reason,
    /// The API server's Invalid error, typed, when that is what refused the command
    /// (`apply` prints it one way alone and another among several errors).
    pub(crate) invalid: Option<Box<invalid::Invalid>>,
}

/// Why a command failed, as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reason {
    /// The line did not parse: an unknown word, a missing or bad argument.
    Usage,
    /// The API server refused it (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`).
    Api(&'static str),
    /// A CNI operation failed with this CNI error code.
    Cni(u32),
    /// A CSI RPC failed with this gRPC code.
    Csi(crate::csi::Code),
    /// Lesson code may not run it (it would read or write a file).
    Refused,
    /// Anything else (the message says what).
    #[default]
    Other,
}

/// A message with any huge word the learner typed cut (see [`crate::util::clip`]).
fn clip_words(message: String) -> String {
    match crate::util::clip::long_words(&message) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(cut) => cut,
    }
}

impl LabError {
    /// An error with no output.
    pub fn msg(message: impl Into<String>) -> Self {
        LabError {
            message: clip_words(message.into()),
            output: Outcome::empty(),
            is_help: false,
            reason: Reason::Other,
            invalid: None,
        }
    }

    /// An error with output that was printed before it.
    pub(crate) fn with_output(message: impl Into<String>, output: Outcome) -> Self {
        LabError {
            message: clip_words(message.into()),
            output,
            is_help: false,
            reason: Reason::Other,
            invalid: None,
        }
    }

    /// The same error, with why it failed.
    pub fn because(mut self, reason: Reason) -> Self {
        self.reason = reason;
        self
    }

    /// The prefix a front end prints before the message: nothing for an API server's
    /// refusal (kubectl's `checkErr` prints a status as `StandardErrorMessage` words it,
    /// `Error from server (Forbidden): …`, and an Invalid one from its details, `The Pod
    /// "x" is invalid: …`, neither with `error: `), else [`crate::render::error_prefix`].
    pub fn prefix(&self) -> &'static str {
        match self.reason {
            Reason::Api(_) => "",
            _ => crate::render::error_prefix(&self.message),
        }
    }

    /// The error as a front end shows it: [`LabError::prefix`], then the message.
    pub fn text(&self) -> String {
        format!("{}{}", self.prefix(), self.message)
    }

    /// What a command that goes on past failures (kubectl's `ContinueOnError`) ends with:
    /// its output, or, after it, every error one per line.
    pub fn after(output: Outcome, errors: Vec<LabError>) -> Result<Outcome, LabError> {
        if errors.is_empty() {
            return Ok(output);
        }
        let lines: Vec<String> = errors.into_iter().map(|e| e.message).collect();
        Err(LabError::with_output(lines.join("\n"), output))
    }
}

impl From<crate::cluster::ApiError> for LabError {
    fn from(e: crate::cluster::ApiError) -> Self {
        LabError::msg(format!("Error from server ({}): {e}", e.reason()))
            .because(Reason::Api(e.reason()))
    }
}

/// Whether control loops run after every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Reconcile after every command until nothing changes.
    Auto,
    /// Nothing acts on its own; the learner drives each hop.
    Step,
}

pub use crate::kubelet::PodWork;

/// Sizes of the bounded logs.
pub(crate) const CALL_LOG_SIZE: usize = 5000;
/// Wire records kept.
pub(crate) const WIRE_LOG_SIZE: usize = 2000;

/// The latest the logical clock may read: 10 years of logical seconds (315,360,000). Far
/// past any lesson or experiment (the longest backoff is 5 minutes), and far enough below
/// `u64::MAX` that a retry time (clock plus a backoff) is always a real time ahead of the
/// clock: at a saturated clock every retry was due at once and each command re-ran every
/// failing call. `tick` refuses to go past it.
pub const MAX_CLOCK: Millis = crate::util::time::MAX_CLOCK;
/// The most timers one `tick` fires at their own times (see [`Lab::advance`]). Every timer
/// the lab models backs off or repeats at a fixed period (a pod worker's 10 s after a failed
/// sync, a volume operation's 500 ms doubling to 2 min 2 s, a sidecar's 1 s doubling to
/// 5 min, an attach's 2 min timeout), so a tick of an hour with a failing pod fires a few
/// hundred; past this many the rest of the span is jumped, as a clock with no events would.
pub const MAX_TIMERS_PER_TICK: usize = 10_000;
/// The most control-loop passes one reconcile runs (a guard against a loop that never
/// settles; real work settles in a handful).
pub(crate) const MAX_PASSES: usize = 64;
pub use crate::kubelet::SYNC_BACKOFF;

/// The whole lab.
pub struct Lab {
    /// The API server's objects.
    pub(crate) cluster: Cluster,
    /// Per-node runtime state.
    pub(crate) nodes: NodeRuntimes,
    /// The nodes' podCIDRs and InternalIPs, indexed for `node add`'s checks.
    pub(crate) node_index: node_index::NodeIndex,
    /// The plugin binaries every node has in /opt/cni/bin.
    pub(crate) registry: Arc<Registry>,
    /// The call log.
    pub(crate) calls: CallLog,
    /// The wire log.
    pub(crate) wire: WireLog,
    /// The logical clock (milliseconds since the lab started; `tick` advances it).
    pub(crate) clock: crate::util::time::Millis,
    /// Auto or step.
    pub(crate) mode: Mode,
    /// Pods whose kubelet has work to do (not yet running, being deleted, or waiting for a
    /// resize on the node).
    pub(crate) dirty: BTreeSet<(String, String)>,
    /// The kubelet of each node, by node name (see `crate::kubelet`); boxed, as
    /// [`NodeRuntimes`] are.
    pub(crate) kubelets: BTreeMap<String, Box<crate::kubelet::Kubelet>>,
    /// kube-scheduler.
    pub(crate) scheduler: crate::controllers::Scheduler,
    /// The storage controllers and sidecars, each with its own state.
    pub(crate) storage: crate::storage::StorageControllers,
    /// The conflist template new nodes get (`{{.PodCIDR}}` filled per node).
    pub(crate) conf_template: Arc<str>,
    /// The CSI driver `hostpath.csi.lab`: its controller and every node plugin.
    pub(crate) driver: crate::csi::Driver,
    /// How the lab started and every command that changed it (for `save`/`load`).
    pub(crate) journal: journal::Journal,
    /// Armed faults and what they broke (`fault inject`, see `crate::faults`).
    pub(crate) faults: crate::faults::Faults,
    /// The network implementation's node daemons (flanneld on every node by default; `network
    /// use` switches), driven through `crate::netd::Network` alone.
    pub(crate) network: Box<dyn crate::netd::Network>,
    /// Whether Multus's DaemonSet runs (`network multus on`, see `crate::netd::multus`).
    pub(crate) multus: bool,
    /// What the lab is given from outside: the files a command names and, in real mode
    /// (`--real-cni`), the real plugins (see `crate::edge`).
    pub(crate) edges: crate::edge::Edges,
    /// What the current command's views showed (see [`seen`]); taken by [`Lab::run`].
    pub(crate) shown: Vec<seen::Seen>,
    /// The watch the current command started (`get -w`); taken by [`Lab::run_command`].
    pub(crate) watch_started: Option<watch::Watch>,
    /// The clock after each event, the snapshots rewinding replays from, and while
    /// rewound the present (see [`timeline`]).
    pub(crate) history: timeline::History,
}

/// The capabilities the sidecars and kubelet learned from the driver when they started
/// (ControllerGetCapabilities, NodeGetCapabilities).
pub(crate) fn driver_caps(driver: &crate::csi::Driver) -> crate::control::DriverCaps {
    crate::control::DriverCaps {
        single_node_multi_writer: driver
            .config
            .controller_capabilities
            .contains(&crate::csi::types::ControllerRpcType::SingleNodeMultiWriter),
        node_stage_unstage: driver
            .config
            .node_capabilities
            .contains(&crate::csi::types::NodeRpcType::StageUnstageVolume),
        topology: driver
            .config
            .plugin_services
            .contains(&crate::csi::types::ServiceType::VolumeAccessibilityConstraints),
    }
}

/// The default network config, containerd's template plus bandwidth.
pub const DEFAULT_CONFLIST: &str = include_str!("../../../assets/10-lab.conflist");

/// The file name the default config has in /etc/cni/net.d.
pub(crate) const DEFAULT_CONF_NAME: &str = "10-lab.conflist";

/// Whether a command belongs to the guided lessons (`lesson …`, `hint`, `skip`, `back`):
/// the front ends run those beside the lab; the engine only parses them.
pub(crate) fn is_front_end_command(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::Lesson(_)
            | Command::Hint
            | Command::Skip
            | Command::Back
            | Command::Play(_)
            | Command::Step { .. }
    )
}

/// The error for a lesson command that reached the engine itself.
fn front_end_only() -> LabError {
    LabError::msg(
        "`lesson`, `hint`, `skip`, `back`, `play` and `step` run in the lab's front ends (the lesson desk), not in the engine",
    )
}

impl Lab {
    /// An empty lab: no nodes, the `default` namespace, the standard plugins.
    pub fn empty() -> Self {
        let mut lab = Lab {
            cluster: Cluster::default(),
            nodes: BTreeMap::new(),
            node_index: node_index::NodeIndex::default(),
            registry: Arc::new(Registry::standard()),
            calls: CallLog::new(CALL_LOG_SIZE),
            wire: WireLog::new(WIRE_LOG_SIZE),
            clock: Millis::ZERO,
            mode: Mode::Auto,
            dirty: BTreeSet::new(),
            kubelets: BTreeMap::new(),
            scheduler: Default::default(),
            storage: Default::default(),
            conf_template: Arc::from(DEFAULT_CONFLIST),
            driver: crate::csi::Driver::default(),
            journal: journal::Journal::new(journal::Start::Empty),
            faults: crate::faults::Faults::default(),
            network: crate::netd::default_network(),
            multus: false,
            edges: crate::edge::Edges::default(),
            shown: Vec::new(),
            watch_started: None,
            history: timeline::History::default(),
        };
        for ns in ["default", "kube-system"] {
            let mut obj = crate::cluster::Object::new(ns, "", crate::cluster::NamespaceSpec {});
            obj.metadata
                .labels
                .insert("kubernetes.io/metadata.name".into(), ns.into());
            // Creating a namespace in an empty store cannot conflict.
            let _ = lab.cluster.namespaces().create(obj, Millis::ZERO);
        }
        lab
    }

    /// The default lab: node-1 and node-2 as DESIGN.md describes.
    pub fn new() -> Self {
        let mut lab = Lab::empty();
        lab.install_storage_defaults();
        for line in DEFAULT_PRESET.lines() {
            // The preset is part of the lab and always valid.
            let _ = lab.execute(line);
        }
        lab.calls = CallLog::new(CALL_LOG_SIZE);
        lab.wire = WireLog::new(WIRE_LOG_SIZE);
        lab.journal = journal::Journal::new(journal::Start::Default);
        lab.timeline_clear();
        lab
    }

    /// Parse and run one line. Comments and blank lines do nothing.
    pub fn execute(&mut self, line: &str) -> Result<Outcome, LabError> {
        self.run(line).result
    }

    /// Parse and run one line, and say what it did as data (see [`seen::Executed`]).
    /// Comments and blank lines do nothing.
    pub fn run(&mut self, line: &str) -> seen::Executed {
        match self.read_line(line) {
            Ok((text, parsed)) => self.run_parsed(text, parsed),
            Err(e) => seen::Executed::nothing(Err(e)),
        }
    }

    /// Read a line to run: its here-document (`<<EOF` … `EOF`) goes to the journal as the
    /// command's standard input, its comment is cut, and the rest parsed. Returns the text
    /// without the comment, and the command (`None` for a blank line) or why it did not
    /// parse. Every front end reads lines here (the lesson desk too), so there is one way a
    /// line becomes a command.
    pub fn read_line<'l>(
        &mut self,
        line: &'l str,
    ) -> Result<(&'l str, Result<Option<Command>, ParseError>), LabError> {
        let first = line.split('\n').next().unwrap_or("").trim_end_matches('\r');
        if first.len() > command::MAX_LINE {
            self.journal.stdin = None;
            return Err(LabError::msg(command::line_too_long(first.len())).because(Reason::Usage));
        }
        let (line, stdin) =
            command::split_heredoc(line).map_err(|e| LabError::msg(e).because(Reason::Usage))?;
        let text = command::strip_comment(line);
        let parsed = command::parse(text);
        if stdin.is_some()
            && let Ok(Some(cmd)) = &parsed
            && !command::reads_stdin(cmd)
        {
            // A shell would hand the document to a command that ignores it; the lab says
            // so instead of dropping the lines silently.
            self.journal.stdin = None;
            return Err(LabError::msg(format!(
                "`{}` reads no standard input, so the here-document after it would be ignored: only `apply -f -` and `delete -f -` read one; nothing was run",
                command::command_name(text)
            ))
            .because(Reason::Usage));
        }
        self.journal.stdin = stdin;
        Ok((text, parsed))
    }

    /// Run a line [`Lab::read_line`] read.
    pub(crate) fn run_parsed(
        &mut self,
        text: &str,
        parsed: Result<Option<Command>, ParseError>,
    ) -> seen::Executed {
        match parsed {
            Ok(None) => seen::Executed::nothing(Ok(Outcome::empty())),
            Ok(Some(cmd)) => self.run_command(text, cmd),
            Err(ParseError::Help(h)) => {
                let mut out = Outcome::empty();
                out.block(&h, Role::Plain);
                seen::Executed::nothing(Ok(out))
            }
            Err(ParseError::Invalid(msg)) => {
                let msg = msg.strip_prefix("error: ").unwrap_or(&msg).to_string();
                seen::Executed::nothing(Err(LabError::msg(msg).because(Reason::Usage)))
            }
        }
    }

    /// Run one parsed command whose text is `text` (comment stripped), journaling it when it
    /// changed the lab (see [`journal::classify`]).
    pub(crate) fn execute_command(
        &mut self,
        text: &str,
        cmd: Command,
    ) -> Result<Outcome, LabError> {
        self.run_command(text, cmd).result
    }

    /// [`Lab::execute_command`], saying what it did as data.
    pub fn run_command(&mut self, text: &str, cmd: Command) -> seen::Executed {
        if is_front_end_command(&cmd) {
            return seen::Executed::nothing(Err(front_end_only()));
        }
        let class = journal::classify(&cmd);
        let before = self.journal_begin();
        let calls = self.calls.next_seq();
        let wire = self.wire.next_seq();
        self.shown.clear();
        self.watch_started = None;
        let result = self.apply(cmd.clone());
        let fork = self.journal_end(text, class, before, result.is_err());
        let mut result = result;
        if let Some(note) = fork {
            match &mut result {
                Ok(out) => out.line(note),
                Err(e) => e.output.line(note),
            }
        }
        let seen = if result.is_ok() {
            std::mem::take(&mut self.shown)
        } else {
            // A view that failed showed nothing.
            self.shown.clear();
            Vec::new()
        };
        let started_watch = self.watch_started.take().filter(|_| result.is_ok());
        seen::Executed {
            command: Some(cmd),
            result,
            seen,
            started_watch,
            calls: (calls, self.calls.next_seq()),
            wire: (wire, self.wire.next_seq()),
            failed_into_feedback: None,
        }
    }

    /// Run one parsed command, then (in auto mode) the control loops.
    pub fn apply(&mut self, cmd: Command) -> Result<Outcome, LabError> {
        if is_front_end_command(&cmd) {
            return Err(front_end_only());
        }
        if let Command::Load(a) = &cmd {
            // The lab is replaced whole; nothing of the old one is reported or reconciled.
            return self.load_cmd(&a.file);
        }
        if let Command::Rewind(a) = &cmd {
            // The lab becomes its own past, which is reconciled as it was.
            return self.rewind_cmd(a);
        }
        let mark = self.calls.next_seq();
        let result = self.dispatch(cmd);
        if self.mode == Mode::Auto {
            self.reconcile();
        }
        // Node agents are not stepped controllers: the network's daemons take in every
        // change (calico-node, cilium-agent; flanneld acts on Node events alone).
        self.network_sync();
        match result {
            Ok(mut out) => {
                out.extend(self.calls_since(mark));
                Ok(out)
            }
            Err(mut e) => {
                e.output.extend(self.calls_since(mark));
                Err(e)
            }
        }
    }

    fn dispatch(&mut self, cmd: Command) -> Result<Outcome, LabError> {
        use crate::command::grammar::*;
        match cmd {
            Command::Node(NodeCmd::Add {
                name,
                cidr,
                ip,
                zone,
                sriov_pf,
                vfs,
            }) => {
                let sriov = sriov_pf.as_deref().zip(vfs);
                self.node_add_with(
                    &name,
                    cidr.as_deref(),
                    ip.as_deref(),
                    zone.as_deref(),
                    sriov,
                )
            }
            Command::Node(NodeCmd::List) => Ok(self.node_list()),
            Command::Ns(c) => self.namespace(c),
            Command::Pod(PodCmd::Create(args)) => self.pod_create(&args),
            Command::Pod(PodCmd::Delete { name, ns, .. }) => self.pod_delete(&ns, &name),
            Command::Pod(PodCmd::List { ns }) => Ok(self.pod_list(ns.as_deref())),
            Command::Cni(c) => self.cni(c),
            Command::Sc(c) => self.sc(c),
            Command::Pvc(c) => self.pvc(c),
            Command::Snapshot(c) => self.snapshot(c),
            Command::Csi(c) => self.csi(c),
            Command::Fault(c) => self.fault(c),
            Command::Show(s) => self.show(s),
            Command::Get(g) if g.watches() => self.watch_start(&g).map(|(out, seen)| {
                self.shown.push(seen);
                out
            }),
            Command::Get(g) => self.get_seen(&g).map(|(out, seen)| {
                self.shown.push(seen);
                out
            }),
            Command::Describe(d) => self.describe_seen(&d).map(|(out, seen)| {
                self.shown.push(seen::Seen::Described(seen));
                out
            }),
            Command::Delete(d) => self.delete(d),
            Command::Apply(a) => self.apply_manifest(&a),
            Command::Label(a) => self.label(&a),
            Command::Cordon { node } => self.cordon(&node, true),
            Command::Uncordon { node } => self.cordon(&node, false),
            Command::Drain { node, force, .. } => self.drain(&node, force),
            Command::Tick { duration } => {
                self.check_tick(duration).map_err(LabError::msg)?;
                let jumped = self.advance(duration);
                let mut out = Outcome::empty();
                out.line(Line::styled(
                    format!("t={}", self.clock.secs_text()),
                    Role::Dim,
                ));
                if jumped {
                    out.line(Line::styled(
                        format!("  (the first {MAX_TIMERS_PER_TICK} timers due in this tick fired at their times; the clock jumped over the rest of the span, and what is due runs now)"),
                        Role::Dim,
                    ));
                }
                Ok(out)
            }
            Command::Mode { mode } => {
                self.mode = match mode {
                    ModeArg::Auto => Mode::Auto,
                    ModeArg::Step => Mode::Step,
                };
                let mut out = Outcome::empty();
                out.plain(match self.mode {
                    Mode::Auto => "mode auto: control loops run after every command",
                    Mode::Step => "mode step: nothing acts until you run `reconcile`",
                });
                Ok(out)
            }
            Command::Reconcile { controller, node } => {
                if let Some(n) = &node {
                    if !self.nodes.contains_key(n) {
                        return Err(LabError::msg(format!("node {n:?} not found")));
                    }
                }
                let changed = match controller {
                    None => {
                        if self.mode == Mode::Step {
                            self.reconcile();
                        }
                        true
                    }
                    Some(ControllerArg::Scheduler) => self.run_scheduler(),
                    Some(ControllerArg::Provisioner) => {
                        self.run_storage(|s, ctx| s.provisioner.reconcile(ctx))
                    }
                    Some(ControllerArg::Binder) => self.run_storage(|s, ctx| {
                        let a = s.binder.reconcile(ctx);
                        let b = s.protection.reconcile(ctx);
                        s.pv_protection.reconcile(ctx) || a || b
                    }),
                    Some(ControllerArg::Attachdetach) => {
                        self.run_storage(|s, ctx| s.attach_detach.reconcile(ctx))
                    }
                    Some(ControllerArg::Attacher) => {
                        self.run_storage(|s, ctx| s.attacher.reconcile(ctx))
                    }
                    Some(ControllerArg::Resizer) => {
                        self.run_storage(|s, ctx| s.resizer.reconcile(ctx))
                    }
                    Some(ControllerArg::Snapshotter) => {
                        self.run_storage(|s, ctx| s.snapshotter.reconcile(ctx))
                    }
                    Some(ControllerArg::Kubelet) => self.run_kubelets_on(node.as_deref()),
                };
                let mut out = Outcome::empty();
                if !changed {
                    out.line(Line::styled(
                        "nothing to do: the controller found no work (the state already matches)",
                        Role::Dim,
                    ));
                }
                Ok(out)
            }
            Command::Reset(r) => Ok(self.reset_cmd(r.empty)),
            Command::Echo(e) => {
                let mut out = Outcome::empty();
                out.plain(e.words.join(" "));
                Ok(out)
            }
            Command::Save(a) => self.save_cmd(&a.file),
            Command::Timeline => Ok(self.timeline_cmd()),
            Command::Rewind(a) => self.rewind_cmd(&a),
            Command::Diff(a) => self.diff_cmd(&a).map(|(out, seen)| {
                self.shown.push(seen);
                out
            }),
            Command::Why(w) => self.why_cmd(&w).map(|(out, chain)| {
                self.shown.push(seen::Seen::Why(chain));
                out
            }),
            Command::Load(a) => self.load_cmd(&a.file),
            Command::Policy(p) => self.policy(p),
            Command::Nad(c) => self.nad(c),
            Command::Network(n) => self.network_cmd(n),
            Command::Reach(f) => self.reach(&f).map(|(out, seen)| {
                self.shown.push(seen);
                out
            }),
            Command::Trace(t) => self.trace(&t.flow).map(|(out, seen)| {
                self.shown.push(seen);
                out
            }),
            Command::Help(h) => {
                command::help::command_help(&h.words, &crate::resource::Help).map_err(LabError::msg)
            }
            Command::Explain(e) => {
                command::explain::explain(e.topic.as_deref()).map_err(LabError::msg)
            }
            Command::Lesson(_)
            | Command::Hint
            | Command::Skip
            | Command::Back
            | Command::Play(_)
            | Command::Step { .. } => Err(front_end_only()),
        }
    }

    /// `reset [--empty]`: a fresh cluster (the default one, or an empty one).
    pub(crate) fn reset_cmd(&mut self, empty: bool) -> Outcome {
        self.replace_with(if empty { Lab::empty() } else { Lab::new() });
        Outcome::empty()
    }

    /// Replace this lab with `fresh`, which keeps this one's edges (its files and real
    /// mode). Real mode: the namespaces, links and host-local files of the old cluster go.
    pub(crate) fn replace_with(&mut self, fresh: Lab) {
        let edges = std::mem::take(&mut self.edges);
        *self = fresh;
        if let Some(r) = &edges.real {
            r.reset();
        }
        self.edges = edges;
    }

    /// Give the lab what it needs from outside (see `crate::edge`).
    pub fn set_edges(&mut self, edges: crate::edge::Edges) {
        self.edges = edges;
    }

    /// A lab built by `build` (`Lab::new`, `Lab::empty`) with these edges.
    pub fn with_edges(build: fn() -> Lab, edges: crate::edge::Edges) -> Lab {
        let mut lab = build();
        lab.edges = edges;
        lab
    }

    /// Run the control loops until nothing changes: the storage controllers, then each
    /// kubelet syncs the pods it has work for (in order). Work waiting on a backoff waits for
    /// the clock (`tick`).
    pub fn reconcile(&mut self) {
        for _ in 0..MAX_PASSES {
            // The network daemons act on Node events (`node add`, `network use`), not here.
            let mut changed = self.run_scheduler();
            changed |= self.run_storage_controllers();
            changed |= self.run_kubelets();
            changed |= self.run_namespace_controller();
            if !changed {
                break;
            }
        }
    }

    /// One pass of every kubelet over the pods with work to do.
    pub(crate) fn run_kubelets(&mut self) -> bool {
        self.run_kubelets_on(None)
    }

    /// One pass of the kubelets (or one node's) over the pods with work to do.
    pub(crate) fn run_kubelets_on(&mut self, node: Option<&str>) -> bool {
        let mut changed = false;
        // The dirty pods this pass syncs are taken out of the set (moved, not copied); the
        // others stay, and each synced one goes back unless it is done.
        let (work, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.dirty).into_iter().partition(|k| {
                // A lost node's kubelet, or one restarting after a crash, does nothing.
                let pod = self.cluster.pods.get(k);
                let down = pod.is_some_and(|p| {
                    !p.spec.node_name.is_empty()
                        && self.faults.kubelet_down(&p.spec.node_name, self.clock)
                });
                let here = node.is_none_or(|n| pod.is_none_or(|p| p.spec.node_name == n));
                !down && here
            });
        self.dirty = waiting.into_iter().collect();
        for key in work {
            changed |= self.sync_pod(&key);
            // Done until something changes it again (`pod delete`, `apply`, a fault, a due
            // retry): a running pod with nothing pending, or one kubelet rejected at
            // admission (phase Failed: nothing runs until it is deleted, `sync_pod`).
            let done = self.cluster.pods.get(&key).is_none_or(|p| {
                p.metadata.deletion_tick().is_none()
                    && (p.status.phase == "Failed"
                        || (p.status.phase == "Running" && !self.resize_pending_for(p)))
            });
            if !done {
                self.dirty.insert(key);
            }
        }
        changed
    }

    /// Whether a running pod uses a claim whose filesystem resize waits for the node.
    fn resize_pending_for(&self, pod: &crate::cluster::Object<crate::cluster::PodSpec>) -> bool {
        pod.spec.volumes().iter().any(|v| {
            self.cluster
                .pvcs
                .get(&(
                    pod.metadata.namespace().clone(),
                    v.persistent_volume_claim.claim_name.clone(),
                ))
                .is_some_and(|c| {
                    c.status
                        .conditions
                        .iter()
                        .any(|c| c.condition_type == crate::storage::resizer::FS_RESIZE_PENDING)
                })
        })
    }

    /// Whether `tick DURATION` keeps the clock within [`MAX_CLOCK`]; the error names the
    /// maximum, the current clock and the largest tick still allowed.
    pub(crate) fn check_tick(&self, by: Millis) -> Result<(), String> {
        match self.clock.as_ms().checked_add(by.as_ms()) {
            Some(t) if Millis::ms(t) <= MAX_CLOCK => Ok(()),
            _ => Err(format!(
                "tick {} would take the clock past its maximum of t={} (10 years of logical seconds); the clock is at t={}, so the largest tick now is {}",
                by.tick_arg(),
                MAX_CLOCK.secs_text(),
                self.clock.secs_text(),
                MAX_CLOCK.saturating_sub(self.clock).tick_arg()
            )),
        }
    }

    /// Advance the logical clock by whole seconds (see [`Lab::advance`]).
    pub fn tick(&mut self, seconds: u64) {
        let _ = self.advance(Millis::secs(seconds));
    }

    /// Advance the logical clock (never past [`MAX_CLOCK`]) as a discrete-event simulation:
    /// in `mode auto` every component's timer that falls due inside the span fires at its own
    /// time, earliest first (the clock stops there and the control loops run), then the
    /// clock reaches the end, where the command's own reconcile follows. At most
    /// [`MAX_TIMERS_PER_TICK`] fire; past that the rest of the span is jumped. In `mode
    /// step` nothing acts until `reconcile`, so the clock jumps and the work due runs then.
    /// True when the cap made it jump.
    pub fn advance(&mut self, by: Millis) -> bool {
        let end = self.clock.saturating_add(by).min(MAX_CLOCK.max(self.clock));
        let mut fired = 0;
        let mut jumped = false;
        if self.mode == Mode::Auto {
            while let Some(at) = self.next_timer().filter(|t| *t < end) {
                if fired == MAX_TIMERS_PER_TICK {
                    jumped = true;
                    break;
                }
                self.clock = at;
                self.timers_due();
                self.reconcile();
                fired += 1;
            }
        }
        self.clock = end;
        self.timers_due();
        jumped
    }

    /// The event queue's head: the earliest timer after now of any component (kubelet's
    /// pod workers and volume operations, a crashed kubelet's restart, the storage
    /// controllers' retries and attach timeouts, the node lifecycle controller's grace
    /// period, the taint eviction controller's scheduled deletions). Each component keeps its own timers; the queue is their merge, so a timer
    /// a component clears never fires.
    fn next_timer(&self) -> Option<Millis> {
        let now = self.clock;
        let kubelets = self.kubelets.values().filter_map(|k| k.next_timer(now));
        kubelets
            .chain(self.faults.next_kubelet_restart(now))
            .chain(self.storage.next_timer(&self.cluster, now))
            .chain(crate::controllers::NodeLifecycle::next_timer(
                &self.faults,
                now,
            ))
            .chain(crate::controllers::taint_eviction::next_timer(
                &self.cluster,
                now,
            ))
            .min()
    }

    /// What falls due at the clock: the node lifecycle controller looks at the
    /// heartbeats, and the pod workers whose retry time has come get work.
    fn timers_due(&mut self) {
        self.node_lifecycle();
        let due: Vec<_> = self
            .pod_workers()
            .filter(|(_, w)| w.retry_at <= self.clock)
            .map(|(k, _)| k.clone())
            .collect();
        self.dirty.extend(due);
    }

    /// One sync of one pod by the kubelet of the node it is bound to (see
    /// `crate::kubelet`), on that node's runtime. A pod bound to no node has no kubelet:
    /// deleting it removes it at once, as the API server does for an unscheduled pod.
    pub fn sync_pod(&mut self, key: &(String, String)) -> bool {
        let Some(pod) = self.cluster.pods.get(key) else {
            for k in self.kubelets.values_mut() {
                k.pod_work.remove(key);
            }
            return false;
        };
        let deleting = pod.metadata.deletion_tick().is_some();
        let node = pod.spec.node_name.as_str();
        let (Some(kubelet), Some(runtime)) =
            (self.kubelets.get_mut(node), self.nodes.get_mut(node))
        else {
            return deleting && self.remove_pod(key);
        };
        let mut ctx = ctx!(self);
        let mut cri = crate::kubelet::Cri {
            node: runtime,
            registry: &self.registry,
        };
        kubelet.sync_pod(&mut ctx, &mut cri, key)
    }

    /// The API server's delete of a pod with a zero grace period (never bound to a node,
    /// or already terminal: `CheckGracefulDelete`), or one no kubelet holds; kubelet, if
    /// any, drops what it kept of the pod when it next syncs it.
    fn remove_pod(&mut self, key: &(String, String)) -> bool {
        if self.cluster.pods().delete(&key.0, &key.1).is_ok() {
            self.cluster.volume_pods.remove(key);
            self.log(
                "apiserver",
                "delete",
                Detail::PodRemoved { pod: key.1.clone() },
            );
        }
        true
    }

    /// Every kubelet's pod workers, by pod (for `describe`, `tick` and the save state).
    pub fn pod_workers(&self) -> impl Iterator<Item = (&(String, String), &PodWork)> {
        self.kubelets
            .values()
            .flat_map(|k| k.pod_work.iter().map(|(key, w)| (&**key, w)))
    }

    /// One call-log line per plugin execution in the wire range.
    pub(crate) fn log_wire_summaries(&mut self, first: u64, last: u64) {
        ctx!(self).log_wire_summaries(first, last);
    }

    /// Real mode: the call-log lines of the real executions in `first..last` (see
    /// `crate::cni::real`); nothing without `--real-cni`.
    pub(crate) fn log_real_calls(&mut self, first: u64, last: u64) {
        if self.edges.real.is_some() {
            ctx!(self).log_real_calls(first, last);
        }
    }

    /// Run one storage controller (or all of them) once.
    pub(crate) fn run_storage(
        &mut self,
        pick: impl FnOnce(&mut crate::storage::StorageControllers, &mut crate::control::Ctx<'_>) -> bool,
    ) -> bool {
        let mut ctx = ctx!(self);
        pick(&mut self.storage, &mut ctx)
    }

    /// One pass of the scheduler.
    pub(crate) fn run_scheduler(&mut self) -> bool {
        let mut ctx = ctx!(self);
        self.scheduler.reconcile(&mut ctx)
    }

    /// The scheduler's WaitForFirstConsumer pass alone (`pvc bind` waits on it).
    pub(crate) fn schedule_wffc_claims(&mut self) -> bool {
        let mut ctx = ctx!(self);
        self.scheduler.schedule_wffc_claims(&mut ctx)
    }

    /// kubelet on `node` posts its Ready condition after the runtime reloaded its CNI
    /// config (see [`crate::kubelet::post_network_status`]); the node lifecycle controller
    /// sees the Node's update and taints it (or takes its taints off) at once.
    pub(crate) fn post_network_status(&mut self, node: &str, network_ready: bool) -> bool {
        let posted = crate::kubelet::post_network_status(&mut ctx!(self), node, network_ready);
        if posted {
            crate::controllers::NodeLifecycle::taint_node(&mut ctx!(self), node);
        }
        posted
    }

    /// One pass of the node lifecycle controller, then the taint eviction controller on
    /// the Node updates it made: the deletions a lost taint cancels, and the ones due now.
    pub(crate) fn node_lifecycle(&mut self) -> bool {
        use crate::controllers::taint_eviction;
        let scheduled = taint_eviction::scheduled(&self.cluster, self.clock);
        let mut changed = crate::controllers::NodeLifecycle.reconcile(&mut ctx!(self));
        for key in taint_eviction::cancelled(&self.cluster, scheduled) {
            taint_eviction::cancel(&mut ctx!(self), &key);
        }
        for key in taint_eviction::due_now(&self.cluster, self.clock) {
            changed |= taint_eviction::evict(&mut ctx!(self), &key);
            self.dirty.insert(key);
        }
        changed
    }

    /// Run every storage controller once; true when any of them changed something.
    /// One pass of the namespace controller: the content of a Terminating namespace is
    /// deleted, and the namespace removed once it is gone.
    pub(crate) fn run_namespace_controller(&mut self) -> bool {
        use crate::control::Component;
        let terminating: Vec<String> = self
            .cluster
            .namespaces
            .values()
            .filter(|n| n.metadata.deletion_tick().is_some())
            .map(|n| n.name().to_string())
            .collect();
        let mut changed = false;
        for ns in &terminating {
            changed |= self.delete_namespace_content(ns);
        }
        changed | crate::controllers::NamespaceController.reconcile(&mut ctx!(self))
    }

    pub(crate) fn run_storage_controllers(&mut self) -> bool {
        self.run_storage(|s, ctx| s.reconcile_all(ctx))
    }

    /// Call one CSI RPC as `caller` (the learner's `csi …` commands, kubelet), recorded on
    /// the wire and in the call log (see `crate::control::csi_client`).
    pub(crate) fn csi_call<Req, Resp>(
        &mut self,
        caller: impl Into<Actor>,
        node: Option<&str>,
        rpc: &'static str,
        req: Req,
        call: impl FnOnce(&mut dyn crate::csi::CsiEndpoint, Req) -> Result<Resp, crate::csi::Status>,
    ) -> Result<Resp, crate::csi::Status>
    where
        Req: crate::record::WireMessage + crate::csi::types::CsiRequest + Clone + 'static,
        Resp: crate::record::WireMessage + crate::csi::types::CsiResponse + Clone + 'static,
    {
        ctx!(self).csi_call(caller, node, rpc, req, call)
    }

    /// Record a step the lab or the learner took: a verb and what it did.
    pub fn log(
        &mut self,
        actor: impl Into<Actor>,
        action: &'static str,
        detail: impl Into<Detail>,
    ) -> u64 {
        let e = CallEvent::step(
            self.clock,
            actor.into(),
            action,
            detail.into(),
            Level::Normal,
        );
        self.log_event(e)
    }

    /// Record a full call-log entry.
    pub(crate) fn log_event(&mut self, e: CallEvent) -> u64 {
        self.calls.push(e)
    }

    /// The call-log entries since `mark`, as the short trace a command prints (made into
    /// lines only when the output is shown).
    fn calls_since(&self, mark: u64) -> Outcome {
        let mut out = Outcome::empty();
        out.later(
            self.calls
                .since(mark)
                .map(|e| e as std::sync::Arc<dyn crate::render::ShownLine>),
        );
        out
    }

    /// A one-line summary for the prompt or the dashboard's title.
    pub fn summary(&self) -> Line {
        Line::new().push(
            format!(
                "{} · {} · t={}",
                crate::resource::count(crate::cluster::ApiKind::Node, self.cluster.nodes.len()),
                crate::resource::count(crate::cluster::ApiKind::Pod, self.cluster.pods.len()),
                self.clock.secs_text()
            ),
            Role::Dim,
        )
    }
}

/// A copy of the lab that shares nothing with it: what the copy's daemons write, only the
/// copy's nodes read (the shared tables and datastores are copied and handed out again,
/// see `crate::netd::Network::relink`). Rewinding, the linter's decoys and what-ifs run on
/// copies.
impl Clone for Lab {
    fn clone(&self) -> Self {
        let mut lab = Lab {
            cluster: self.cluster.clone(),
            nodes: self.nodes.clone(),
            node_index: self.node_index.clone(),
            registry: self.registry.clone(),
            calls: self.calls.clone(),
            wire: self.wire.clone(),
            clock: self.clock,
            mode: self.mode,
            dirty: self.dirty.clone(),
            kubelets: self.kubelets.clone(),
            scheduler: self.scheduler.clone(),
            storage: self.storage.clone(),
            conf_template: self.conf_template.clone(),
            driver: self.driver.clone(),
            journal: self.journal.clone(),
            faults: self.faults.clone(),
            network: self.network.clone(),
            multus: self.multus,
            edges: self.edges.clone(),
            shown: self.shown.clone(),
            watch_started: self.watch_started.clone(),
            history: self.history.clone(),
            // A copy is a lab a learner may use (rewinding, what-ifs): it echoes.
        };
        lab.network.relink(&mut lab.nodes);
        lab
    }
}

/// What the front ends and the tests read of the lab, besides running lines and the view
/// models (`crate::dash`, `node_view`, `volume_view`, `ipam_view`): the clock, the mode, the
/// typed call and wire logs, the names of what exists.
impl Lab {
    /// The logical clock.
    pub fn clock(&self) -> Millis {
        self.clock
    }

    /// Auto or step.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The call log (typed records; text is made when a view renders them).
    pub fn calls(&self) -> &CallLog {
        &self.calls
    }

    /// The wire log.
    pub fn wire(&self) -> &WireLog {
        &self.wire
    }

    /// Whether real mode (`--real-cni`) runs the real plugins beside the model.
    pub fn real_mode(&self) -> bool {
        self.edges.real.is_some()
    }

    /// The nodes' names, in order.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.nodes.keys().map(String::as_str)
    }

    /// Where the files a command names are read and written (the edge the front end gave).
    pub fn files(&self) -> &dyn crate::edge::Files {
        &*self.edges.files
    }

    /// The files `cni conf load` and `apply -f` read during a replay, returning the set
    /// before: lesson code runs with an empty set, so it never reads the disk (see
    /// [`Journal::swap_replay_files`](journal::Journal::swap_replay_files)).
    pub(crate) fn swap_replay_files(
        &mut self,
        files: Option<BTreeMap<String, String>>,
    ) -> Option<BTreeMap<String, String>> {
        self.journal.swap_replay_files(files)
    }

    /// Whether a node of this name exists.
    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// How many nodes and pods the API server holds.
    pub fn counts(&self) -> (usize, usize) {
        (self.cluster.nodes.len(), self.cluster.pods.len())
    }

    /// The node a pod (`(namespace, name)`) is bound to, if the pod exists (empty while
    /// unscheduled).
    pub fn pod_node(&self, key: &(String, String)) -> Option<&str> {
        self.cluster
            .pods
            .get(key)
            .map(|p| p.spec.node_name.as_str())
    }

    /// From now on, the commands run read no file (a file they name is answered as a
    /// replay with no files is: `cni conf load` takes the built-in example of that name),
    /// as lesson code runs; returns what [`Lab::restore_files`] puts back.
    pub fn read_no_files(&mut self) -> Option<BTreeMap<String, String>> {
        self.journal.swap_replay_files(Some(Default::default()))
    }

    /// Where the journal stands, for [`Lab::files_read_since`].
    pub(crate) fn journal_mark(&self) -> usize {
        self.journal.entries.len()
    }

    /// The files the one command journaled since `mark` read (name → contents); nothing
    /// when it read none, or when the lab was rebuilt meanwhile.
    pub(crate) fn files_read_since(&self, mark: usize) -> BTreeMap<String, String> {
        match (
            self.journal.entries.len() == mark + 1,
            self.journal.entries.get(mark),
        ) {
            (true, Some(one)) => one.files_read(),
            _ => BTreeMap::new(),
        }
    }

    /// Undo [`Lab::read_no_files`].
    pub fn restore_files(&mut self, saved: Option<BTreeMap<String, String>>) {
        self.journal.swap_replay_files(saved);
    }

    /// The file that sorts first in any node's `/etc/cni/net.d`.
    pub fn first_conf_file(&self) -> Option<&str> {
        self.nodes
            .values()
            .filter_map(|n| n.confdir.files.keys().next())
            .min()
            .map(String::as_str)
    }

    /// A pod's podIP (`None` inside before it has one), if the pod exists.
    pub fn pod_ip(&self, key: &(String, String)) -> Option<Option<std::net::IpAddr>> {
        self.cluster.pods.get(key).map(|p| p.status.pod_ip)
    }

    /// The first pod in the API server's order, as `(namespace, name)`.
    pub fn first_pod(&self) -> Option<(&str, &str)> {
        self.cluster
            .pods
            .keys()
            .next()
            .map(|(ns, n)| (ns.as_str(), n.as_str()))
    }

    /// The API server's store, read-only: for tests and tools that check the model itself
    /// (front ends read view models; `tests/it/architecture.rs` holds them to it).
    #[doc(hidden)]
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Every node's runtime (its kernel model, net.d, libcni's cache, sandboxes): for tests
    /// and tools that check the model itself.
    #[doc(hidden)]
    pub fn nodes(&self) -> &NodeRuntimes {
        &self.nodes
    }

    /// Whether Multus's DaemonSet runs (`network multus on`).
    pub fn multus_on(&self) -> bool {
        self.multus
    }

    /// The cluster's API objects for writing, bypassing admission and controllers (tests
    /// that set up a state no command makes).
    #[doc(hidden)]
    pub fn cluster_mut(&mut self) -> &mut Cluster {
        &mut self.cluster
    }

    /// [`Lab::nodes`], to set a node's state up by hand in a test.
    #[doc(hidden)]
    pub fn nodes_mut(&mut self) -> &mut NodeRuntimes {
        &mut self.nodes
    }

    /// The CSI driver: for tests that check the model itself.
    #[doc(hidden)]
    pub fn driver(&self) -> &crate::csi::Driver {
        &self.driver
    }

    /// The journal `save` writes: for tests that check the model itself.
    #[doc(hidden)]
    pub fn journal(&self) -> &journal::Journal {
        &self.journal
    }

    /// The kubelets: for tests that check the model itself.
    #[doc(hidden)]
    pub fn kubelets(&self) -> &BTreeMap<String, Box<crate::kubelet::Kubelet>> {
        &self.kubelets
    }

    /// The pods a kubelet has work for: for tests that check the model itself.
    #[doc(hidden)]
    pub fn dirty(&self) -> &BTreeSet<(String, String)> {
        &self.dirty
    }
}

impl Default for Lab {
    fn default() -> Self {
        Lab::new()
    }
}

/// The starting cluster of DESIGN.md.
pub(crate) const DEFAULT_PRESET: &str =
    "node add node-1 --cidr 10.244.1.0/24 --ip 192.168.0.1 --zone zone-1
node add node-2 --cidr 10.244.2.0/24 --ip 192.168.0.2 --zone zone-2
";

#[cfg(test)]
mod tests {
    use super::*;

    /// A command's trace is printed from the call log's records, made into lines when
    /// shown: the same lines `show calls` gives for them, and still there after the log's
    /// ring has dropped those records (a `run FILE` that prints late, a busy lab).
    #[test]
    fn a_command_prints_its_calls_even_after_the_log_dropped_them() {
        let mut lab = Lab::new();
        let mark = lab.calls.next_seq();
        let out = lab.execute("pod create a --node node-1").unwrap();
        let calls: Vec<String> = (mark..lab.calls.next_seq())
            .filter_map(|seq| lab.calls.get(seq))
            .map(|e| views::call_line(e).text())
            .collect();
        assert!(calls.len() > 3, "{calls:?}");
        let text = out.to_text();
        let shown: Vec<String> = out.lines().map(|l| l.text()).collect();
        assert!(shown.ends_with(&calls), "{shown:?}");
        for i in 0..(CALL_LOG_SIZE / calls.len() + 2) {
            let _ = lab.execute(&format!("pod create p{i} --node node-2"));
            let _ = lab.execute(&format!("pod delete p{i}"));
        }
        assert!(
            lab.calls.get(mark).is_none(),
            "the ring dropped the records"
        );
        assert_eq!(out.to_text(), text);
        assert_eq!(out.clone().into_lines().len(), shown.len());
    }

    /// What the copy does stays in the copy, under every network (their daemons share
    /// tables and a datastore with the nodes).
    #[test]
    fn a_copy_shares_nothing_with_the_original() {
        for net in ["flannel-host-gw", "flannel-vxlan", "calico-bgp", "cilium"] {
            let mut lab = Lab::new();
            lab.execute(&format!("network use {net}")).unwrap();
            lab.execute("pod create a --node node-1").unwrap();
            let before_routes = lab.execute("show routes").unwrap().to_text();
            let before_ipam = lab.execute("show ipam").unwrap().to_text();
            let mut copy = lab.clone();
            let mut twin = lab.clone();
            assert_eq!(
                copy.execute("show routes").unwrap().to_text(),
                before_routes
            );
            copy.execute("node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3")
                .unwrap();
            copy.execute("pod create b --node node-2").unwrap();
            copy.execute("pod create c --node node-3").unwrap();
            assert_ne!(copy.execute("show routes node-1").unwrap().to_text(), {
                lab.execute("show routes node-1").unwrap().to_text()
            });
            assert_eq!(
                lab.execute("show routes").unwrap().to_text(),
                before_routes,
                "{net}: the copy's node add changed the original's routes"
            );
            assert_eq!(
                lab.execute("show ipam").unwrap().to_text(),
                before_ipam,
                "{net}: the copy's pods took the original's addresses"
            );
            // And the original goes on as a copy left alone does, as if the other copy
            // never was.
            for line in [
                "pod create b --node node-2",
                "get pod b -o json",
                "show ipam",
            ] {
                assert_eq!(
                    lab.execute(line).unwrap().to_text(),
                    twin.execute(line).unwrap().to_text(),
                    "{net}: {line}"
                );
            }
        }
    }
}
