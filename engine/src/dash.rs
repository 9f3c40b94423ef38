//! View models the dashboard reads from the [`Lab`]: plain data (nodes and pods as the
//! topology draws them, an index of pods by node kept from the watch log, volumes, the
//! lesson pane, the wire records behind a call). The dashboard draws only these, so a
//! browser build can draw the same panes from the same engine.
//!
//! Everything here is cheap per call or is kept incrementally ([`PodIndex`]), so a frame
//! costs what is visible, not what exists: at 100,000 pods the topology formats only the
//! rows on screen.

use crate::command::grammar::FlowArgs;
use crate::engine::Lab;
use crate::engine::node_view::{self, LinkType};
use crate::engine::pods::pod_status_text;
use crate::lesson::Lessons;
pub use crate::lesson::focus::{Focus, FocusPane, WireCall};
use std::collections::BTreeMap;

/// A pod's key in the API server's table: (namespace, name).
pub type PodKey = (String, String);

// ---------------------------------------------------------------------------------------
// Volumes (the storage side is being added to the engine; this is the pane's contract).

/// The CSI lifecycle of a volume on a node, as the CSI spec's state diagram draws it
/// (container-storage-interface/spec `spec.md`, "Volume Lifecycle", figure 6):
/// CreateVolume → CREATED, ControllerPublishVolume → NODE_READY, NodeStageVolume →
/// VOL_READY, NodePublishVolume → PUBLISHED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum VolumeState {
    /// The volume exists (CreateVolume returned).
    Created,
    /// Attached to the node (ControllerPublishVolume returned).
    NodeReady,
    /// Staged on the node's global mount (NodeStageVolume returned).
    VolReady,
    /// Bind-mounted into a pod's target path (NodePublishVolume returned).
    Published,
}

impl VolumeState {
    /// The states in lifecycle order.
    pub const ALL: [VolumeState; 4] = [
        VolumeState::Created,
        VolumeState::NodeReady,
        VolumeState::VolReady,
        VolumeState::Published,
    ];

    /// The name the CSI spec uses.
    pub fn label(self) -> &'static str {
        match self {
            VolumeState::Created => "CREATED",
            VolumeState::NodeReady => "NODE_READY",
            VolumeState::VolReady => "VOL_READY",
            VolumeState::Published => "PUBLISHED",
        }
    }
}

/// One row of the volumes pane: a claim followed all the way to the pods' mount points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeRow {
    /// The PVC, `ns/name`.
    pub pvc: String,
    /// The bound PV's name ("" while unbound).
    pub pv: String,
    /// The CSI volume ID the driver returned ("" before CreateVolume).
    pub volume_id: String,
    /// The VolumeAttachment's name ("" when not attached).
    pub attachment: String,
    /// The node it is attached to ("" when not attached).
    pub node: String,
    /// The staging (global mount) path ("" before NodeStageVolume).
    pub staging: String,
    /// Publish target paths, one per pod using it.
    pub targets: Vec<String>,
    /// How far along the CSI lifecycle it is; `None` while the claim has no volume yet
    /// (Pending: no CreateVolume has returned, as in step mode before `reconcile`).
    pub state: Option<VolumeState>,
    /// On a node where pods wait for a volume another node holds: the attach/detach
    /// controller's Multi-Attach refusal.
    pub multi_attach: Option<MultiAttach>,
}

/// A single-node volume (ReadWriteOnce, ReadWriteOncePod) that pods on another node need:
/// the attach/detach controller does not attach it there (`Multi-Attach error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiAttach {
    /// The nodes it is attached to now.
    pub attached_to: Vec<String>,
    /// The pods that wait for it on this row's node (`name`, or `ns/name` elsewhere).
    pub waiting: Vec<String>,
}

/// The volumes to show: one row per claim and node it is attached to (a claim on no node
/// gets one row), from the engine's volume view model (`engine::volume_view`).
pub fn volume_rows(lab: &Lab) -> Vec<VolumeRow> {
    let mut rows = Vec::new();
    for r in crate::engine::volume_view::volume_rows(lab) {
        let base = VolumeRow {
            pvc: r.pvc.clone(),
            pv: r.pv.clone().unwrap_or_default(),
            volume_id: r.volume_id.clone().unwrap_or_default(),
            attachment: String::new(),
            node: String::new(),
            staging: String::new(),
            targets: Vec::new(),
            state: r.volume_id.is_some().then_some(VolumeState::Created),
            multi_attach: None,
        };
        let refused = multi_attach_refusals(lab, &r);
        if r.nodes.is_empty() {
            rows.push(base);
            continue;
        }
        for n in &r.nodes {
            rows.push(VolumeRow {
                attachment: n.attachment.clone().unwrap_or_default(),
                node: n.node.clone(),
                staging: n.staging.clone().unwrap_or_default(),
                targets: n.targets.clone(),
                state: Some(match n.state.as_str() {
                    "NODE_READY" => VolumeState::NodeReady,
                    "VOL_READY" => VolumeState::VolReady,
                    "PUBLISHED" => VolumeState::Published,
                    _ => VolumeState::Created,
                }),
                ..base.clone()
            });
        }
        for (node, m) in refused {
            rows.push(VolumeRow {
                node,
                multi_attach: Some(m),
                ..base.clone()
            });
        }
    }
    rows
}

/// The nodes where pods wait for a claim's single-node volume that is attached elsewhere,
/// as the attach/detach controller decides (`IsMultiAttachAllowed`, then
/// `reportMultiAttachError`): each node with the pods there.
fn multi_attach_refusals(
    lab: &Lab,
    r: &crate::engine::volume_view::VolumeRow,
) -> Vec<(String, MultiAttach)> {
    let attached_to: Vec<String> = r.nodes.iter().map(|n| n.node.clone()).collect();
    let Some((ns, claim)) = r.pvc.split_once('/') else {
        return Vec::new();
    };
    let Some(pv) = crate::storage::listers::pv_for_claim(&lab.cluster, ns, claim) else {
        return Vec::new();
    };
    if attached_to.is_empty() || crate::storage::multi_attach_allowed(&pv.spec.access_modes) {
        return Vec::new();
    }
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for key in lab.cluster.volume_pods.using_claim(ns, claim) {
        let Some(pod) = lab.cluster.pods.get(key) else {
            continue;
        };
        let node = &pod.spec.node_name;
        let done = pod.status.phase == "Failed" || pod.status.phase == "Succeeded";
        if node.is_empty() || done || attached_to.contains(node) {
            continue;
        }
        let name = if key.0 == ns {
            key.1.clone()
        } else {
            format!("{}/{}", key.0, key.1)
        };
        out.entry(node.clone()).or_default().push(name);
    }
    out.into_iter()
        .map(|(node, waiting)| {
            let m = MultiAttach {
                attached_to: attached_to.clone(),
                waiting,
            };
            (node, m)
        })
        .collect()
}

/// Markdown source lines joined into paragraphs, so the pane wraps them to its own width.
fn paragraphs(lines: &[String]) -> String {
    let mut out = String::new();
    let mut para = String::new();
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            if !para.is_empty() {
                out.push_str(&para);
                out.push_str("\n\n");
                para.clear();
            }
        } else {
            if !para.is_empty() {
                para.push(' ');
            }
            para.push_str(t);
        }
    }
    out.push_str(&para);
    out.trim_end().to_string()
}

/// What the lesson pane shows for the lesson in progress, if any, with what the current
/// step is about ([`Focus`]) and the NetworkPolicy verdicts of the flows its checks name.
pub fn lesson_view(lab: &Lab, lessons: &Lessons, hint: Option<String>) -> Option<LessonView> {
    use crate::lesson::session::Item;
    let s = lessons.session.as_ref()?;
    let (done, total) = s.counts();
    let (steps, quizzes) = (s.lesson.steps.len(), s.lesson.quizzes.len());
    let (steps_done, right) = (s.progress.steps.len(), s.progress.quizzes.len());
    // The same count as the REPL's `── Step N/M` heading; quizzes counted apart.
    let position = match s.current() {
        Item::Step(step) => format!("step {}/{steps} · quizzes {right}/{quizzes}", step.number),
        Item::Quiz(i, _) => format!("quiz {}/{quizzes} · steps {steps_done}/{steps}", i + 1),
        Item::Finished => format!("steps {steps_done}/{steps} · quizzes {right}/{quizzes}"),
    } + &crate::lesson::commands::variant_tag(s.lesson.variant);
    let focus = match s.current() {
        Item::Step(step) => Some(crate::lesson::focus::of_step(step)),
        _ => None,
    };
    let verdicts = focus
        .iter()
        .flat_map(|f| &f.flows)
        .filter_map(|flow| verdict(lab, flow))
        .collect();
    let (text, goal) = match s.current() {
        Item::Step(step) => (
            format!(
                "Step {} · {}\n{}",
                step.number,
                step.title,
                paragraphs(&step.text)
            ),
            step.task.clone().unwrap_or_default(),
        ),
        Item::Quiz(i, q) => (
            format!("Quiz {}\n{}", i + 1, q.question),
            "answer with `lesson answer …`".into(),
        ),
        Item::Finished => ("Lesson complete.".into(), String::new()),
    };
    let options = match s.current() {
        Item::Quiz(_, q) => match &q.kind {
            crate::lesson::model::QuizKind::Choice { options, .. } => options.clone(),
            crate::lesson::model::QuizKind::Predict { .. } => Vec::new(),
        },
        _ => Vec::new(),
    };
    Some(LessonView {
        title: s.lesson.title.clone(),
        done,
        total,
        position,
        text,
        options,
        goal,
        hint,
        step: match s.current() {
            Item::Step(step) => Some(step.number),
            _ => None,
        },
        focus,
        verdicts,
    })
}

/// The claims (`ns/name`) a step is about: the one its checks name, else those of the pods
/// they name, as the pods use them now.
pub fn focus_claims(lab: &Lab, focus: &Focus) -> Vec<String> {
    let key = |s: &str| match s.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => ("default".to_string(), s.to_string()),
    };
    if let Some(pvc) = &focus.pvc {
        let (ns, name) = key(pvc);
        return vec![format!("{ns}/{name}")];
    }
    let Some(pod) = focus
        .pod
        .as_deref()
        .and_then(|p| lab.cluster.pods.get(&key(p)))
    else {
        return Vec::new();
    };
    pod.spec
        .volumes()
        .iter()
        .map(|v| {
            format!(
                "{}/{}",
                pod.metadata.namespace(),
                v.persistent_volume_claim.claim_name
            )
        })
        .collect()
}

/// A flow's NetworkPolicy verdict, as `reach` takes it now (`None` when an end is gone).
fn verdict(lab: &Lab, flow: &FlowArgs) -> Option<Verdict> {
    let (_, seen) = lab.reach(flow).ok()?;
    let crate::engine::seen::Seen::Reach(r) = seen else {
        return None;
    };
    let end = |e: &crate::engine::seen::Endpoint| match e {
        crate::engine::seen::Endpoint::Pod(p) if p.namespace == "default" => p.name.clone(),
        crate::engine::seen::Endpoint::Pod(p) => format!("{}/{}", p.namespace, p.name),
        crate::engine::seen::Endpoint::Node(n) => n.clone(),
        crate::engine::seen::Endpoint::Ip(ip) => ip.to_string(),
    };
    Some(Verdict {
        src: end(&r.flow.src),
        dst: end(&r.flow.dst),
        port: r.flow.port,
        protocol: r.flow.protocol,
        allowed: r.allowed,
        enforced: r.enforced,
        policies_allow: r.policies_allow,
    })
}

/// The NetworkPolicy verdict on a flow a lesson step asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The source (`web`, `team/web`, a node).
    pub src: String,
    /// The destination.
    pub dst: String,
    /// The destination port.
    pub port: u16,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: &'static str,
    /// Whether the data plane lets it through.
    pub allowed: bool,
    /// Whether the network enforces NetworkPolicy at all.
    pub enforced: bool,
    /// The policies' own verdict (what a network that enforces them would do).
    pub policies_allow: bool,
}

// ---------------------------------------------------------------------------------------
// Lessons (the player is written separately; this is what the pane renders).

/// What the lesson pane shows while a lesson runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LessonView {
    /// The lesson's title.
    pub title: String,
    /// Items (steps and quizzes) done, for the bar.
    pub done: usize,
    /// Items in the lesson.
    pub total: usize,
    /// Where the learner is, in the REPL's words: `step 3/17 · quizzes 0/6`, then
    /// ` · variant 12` when the lesson is not played as written.
    pub position: String,
    /// The step's teaching text, or the quiz's question.
    pub text: String,
    /// A multiple-choice quiz's options, label and text, in order (empty otherwise).
    pub options: Vec<(char, String)>,
    /// What the learner should achieve in this step.
    pub goal: String,
    /// The hint, when the learner asked for it.
    pub hint: Option<String>,
    /// The current step's number (none for a quiz, the end or a playback).
    pub step: Option<u32>,
    /// What the current step is about (none for a quiz or a playback).
    pub focus: Option<Focus>,
    /// The NetworkPolicy verdicts of the flows the step's checks name, as they are now.
    pub verdicts: Vec<Verdict>,
}

// ---------------------------------------------------------------------------------------
// Nodes and pods.

/// What the topology pane draws for a node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeFacts {
    /// Node name.
    pub name: String,
    /// `topology.kubernetes.io/zone`, if set.
    pub zone: String,
    /// `spec.podCIDR`.
    pub pod_cidr: String,
    /// The InternalIP.
    pub internal_ip: String,
    /// The uplink device and its address (`eth0`, `192.168.0.1/24`).
    pub uplink: (String, String),
    /// The bridge and its address once the first ADD created it (`cni0`, `10.244.1.1/24`).
    pub bridge: Option<(String, String)>,
    /// A tunnel device the network daemon made, and what it is (`flannel.1`, `VXLAN`).
    pub tunnel: Option<(String, String)>,
    /// With no bridge: how pods reach the node instead (Cilium's `cilium_host` and its
    /// router IP, or Calico's routed `cali…` veths), as (device, address, what).
    pub routed: Option<(String, String, String)>,
}

/// The facts of one node, from its Node object and its kernel.
pub fn node_facts(lab: &Lab, name: &str) -> Option<NodeFacts> {
    let node = lab
        .cluster
        .nodes
        .get(&(crate::cluster::no_namespace(), name.to_string()))?;
    let mut f = NodeFacts {
        name: name.to_string(),
        zone: node
            .metadata
            .labels
            .get("topology.kubernetes.io/zone")
            .cloned()
            .unwrap_or_default(),
        pod_cidr: node.spec.pod_cidr.clone(),
        internal_ip: node.status.internal_ip().unwrap_or("").to_string(),
        uplink: ("eth0".to_string(), String::new()),
        bridge: None,
        tunnel: None,
        routed: None,
    };
    let mut cali = 0usize;
    for link in node_view::host_links(lab, name) {
        match link.kind {
            LinkType::Physical => {
                f.uplink = (link.name.to_string(), link.first_addr());
            }
            LinkType::Bridge if f.bridge.is_none() => {
                f.bridge = Some((link.name.to_string(), link.first_addr()));
            }
            LinkType::Vxlan if f.tunnel.is_none() => {
                f.tunnel = Some((link.name.to_string(), "VXLAN".to_string()));
            }
            LinkType::Veth if link.name == "cilium_host" => {
                f.routed = Some((
                    link.name.to_string(),
                    link.first_addr(),
                    "router IP · pods' gateway".to_string(),
                ));
            }
            LinkType::Veth if link.name.starts_with("cali") => cali += 1,
            _ => {}
        }
    }
    if f.routed.is_none() && (cali > 0 || lab.network_name() == "calico-bgp") {
        f.routed = Some((
            "cali…".to_string(),
            String::new(),
            format!("{cali} routed veth(s), no bridge: each answers ARP for 169.254.1.1"),
        ));
    }
    Some(f)
}

/// What the topology pane draws for a pod.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodFacts {
    /// Namespace.
    pub ns: String,
    /// Name.
    pub name: String,
    /// The node it runs on.
    pub node: String,
    /// kubectl's STATUS column (`Running`, `ContainerCreating`, `Terminating`).
    pub status: String,
    /// Whether the pod is fully up (`Running` and not terminating).
    pub running: bool,
    /// The pod's address with prefix from the CNI result (`10.244.1.2/24`), or its podIP.
    pub ip: String,
    /// The host end of the veth pair (`veth1c2d3e4f`).
    pub host_veth: String,
    /// The pod end (`eth0`).
    pub pod_if: String,
    /// The sandbox's network namespace path.
    pub netns: String,
    /// The pod's other interfaces (Multus attachments): `net1 10.10.0.5/24 macvlan on eth0
    /// · storage`, one entry each, in name order.
    pub more_ifs: Vec<String>,
}

/// The facts of one pod.
pub fn pod_facts(lab: &Lab, key: &PodKey) -> Option<PodFacts> {
    let p = lab.cluster.pods.get(key)?;
    let status = pod_status_text(p);
    let mut f = PodFacts {
        ns: key.0.clone(),
        name: key.1.clone(),
        node: p.spec.node_name.clone(),
        running: status == "Running",
        status,
        ip: p.status.pod_ip.map(|ip| ip.to_string()).unwrap_or_default(),
        ..PodFacts::default()
    };
    let sandbox = node_view::sandbox(lab, &p.spec.node_name, &format!("{}/{}", key.0, key.1));
    if let Some(sb) = sandbox {
        f.netns = sb.netns;
        let netns = f.netns.clone();
        for i in sb.interfaces {
            if i.sandbox.is_empty() {
                if i.name.starts_with("veth") || i.name.starts_with("cali") {
                    f.host_veth = i.name;
                }
            } else if f.pod_if.is_empty() {
                f.pod_if = i.name;
            }
        }
        if f.host_veth.is_empty() {
            // A plugin that reports only the pod's end (cilium-cni): the host veth whose
            // peer is in the sandbox.
            if let Some(l) = node_view::host_links(lab, &p.spec.node_name)
                .into_iter()
                .find(|l| l.peer.is_some_and(|(_, ns)| ns == netns))
            {
                f.host_veth = l.name.to_string();
            }
        }
        if let Some(ip) = sb.addresses.into_iter().next() {
            f.ip = ip;
        }
        f.more_ifs = more_interfaces(lab, p, &f.netns, &f.pod_if);
    }
    Some(f)
}

/// The pod's interfaces besides `lo` and the primary one, from its namespace on the node,
/// each with the network the `k8s.v1.cni.cncf.io/network-status` annotation names for it.
fn more_interfaces(
    lab: &Lab,
    pod: &crate::cluster::Object<crate::cluster::PodSpec>,
    netns: &str,
    primary: &str,
) -> Vec<String> {
    let status: Vec<serde_json::Value> = pod
        .metadata
        .annotations()
        .get("k8s.v1.cni.cncf.io/network-status")
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let primary = if primary.is_empty() { "eth0" } else { primary };
    node_view::netns_links(lab, &pod.spec.node_name, netns)
        .filter(|l| l.kind != LinkType::Loopback && l.name != primary)
        .map(|l| {
            // `net1 10.10.0.5/24 macvlan on eth0 · storage`
            let what = match (l.kind, l.lower, l.pci) {
                (LinkType::SriovVf, Some(pf), Some(pci)) => format!("VF {pci} of {pf}"),
                (_, Some(lower), _) => format!("{} on {lower}", l.flavour),
                (LinkType::Veth, ..) => "veth".to_string(),
                _ => "device".to_string(),
            };
            let own_ns = format!("{}/", pod.metadata.namespace());
            let net = status
                .iter()
                .find(|e| e.get("interface").and_then(|v| v.as_str()) == Some(l.name))
                .and_then(|e| e.get("name").and_then(|v| v.as_str()))
                .map(|n| format!(" · {}", n.strip_prefix(&own_ns).unwrap_or(n)))
                .unwrap_or_default();
            format!("{} {} {what}{net}", l.name, or_no_ip(&l.first_addr()))
        })
        .collect()
}

fn or_no_ip(addr: &str) -> &str {
    if addr.is_empty() { "(no IP)" } else { addr }
}

/// Pods grouped by node, kept up to date from the API server's watch log so a refresh costs
/// the number of changes, not the number of pods. Every node of the cluster has an entry
/// (possibly empty); pods of a node the lab does not know sit under their `nodeName` too.
#[derive(Debug, Clone, Default)]
pub struct PodIndex {
    /// Pod keys per node, sorted.
    pub by_node: BTreeMap<String, Vec<PodKey>>,
    node_of: BTreeMap<PodKey, String>,
    /// Pods with interfaces besides the cluster network's (Multus's network-status lists
    /// more than one): how many, each drawn on a row of its own under the pod.
    extra: BTreeMap<PodKey, usize>,
    /// The sum of `extra` per node (absent when zero).
    node_extra: BTreeMap<String, usize>,
    /// The next watch-event index to read.
    seen: u64,
    /// The last event read: (index, key, resourceVersion), to notice a replaced store.
    last: Option<(u64, String, u64)>,
}

impl PodIndex {
    /// An index of the lab as it is now.
    pub fn new(lab: &Lab) -> Self {
        let mut ix = PodIndex::default();
        ix.rebuild(lab);
        ix
    }

    /// Number of pods indexed.
    pub fn len(&self) -> usize {
        self.node_of.len()
    }

    /// Whether no pod is indexed.
    pub fn is_empty(&self) -> bool {
        self.node_of.is_empty()
    }

    /// Rebuild from scratch (O(pods)).
    pub(crate) fn rebuild(&mut self, lab: &Lab) {
        self.by_node.clear();
        self.node_of.clear();
        self.extra.clear();
        self.node_extra.clear();
        for name in lab.cluster.nodes.keys().map(|(_, n)| n) {
            self.by_node.insert(name.clone(), Vec::new());
        }
        for (key, p) in &lab.cluster.pods {
            // The table is ordered by key, so each node's list comes out sorted.
            self.by_node
                .entry(p.spec.node_name.clone())
                .or_default()
                .push(key.clone());
            self.node_of.insert(key.clone(), p.spec.node_name.clone());
            self.set_extra(key, p);
        }
        let revs = &lab.cluster.revs;
        self.seen = revs.next_event;
        self.last = revs
            .events
            .back()
            .map(|e| (e.index, e.key.clone(), e.resource_version));
    }

    /// Catch up with the watch log: apply Pod and Node additions and deletions since the
    /// last sync, or rebuild when the log no longer covers them (or the lab was replaced).
    pub fn sync(&mut self, lab: &Lab) {
        let revs = &lab.cluster.revs;
        let still_same = match &self.last {
            None => true,
            Some((index, key, rv)) => revs
                .events
                .iter()
                .rev()
                .find(|e| e.index == *index)
                .is_some_and(|e| &e.key == key && e.resource_version == *rv),
        };
        let first_kept = revs.events.front().map_or(revs.next_event, |e| e.index);
        if !still_same || first_kept > self.seen || revs.next_event < self.seen {
            self.rebuild(lab);
            return;
        }
        for e in revs.events_since(self.seen) {
            use crate::cluster::{ApiKind, EventType};
            match (e.kind, e.event_type) {
                (ApiKind::Pod, EventType::Added) => {
                    let Some((ns, name)) = e.key.split_once('/') else {
                        continue;
                    };
                    let key = (ns.to_string(), name.to_string());
                    if let Some(p) = lab.cluster.pods.get(&key) {
                        self.insert(key.clone(), &p.spec.node_name);
                        self.set_extra(&key, p);
                    }
                }
                (ApiKind::Pod, EventType::Modified) => {
                    // The scheduler binds a pod created without a node: follow it. Multus
                    // writes network-status with a pod update.
                    let Some((ns, name)) = e.key.split_once('/') else {
                        continue;
                    };
                    let key = (ns.to_string(), name.to_string());
                    if let Some(p) = lab.cluster.pods.get(&key) {
                        if self
                            .node_of
                            .get(&key)
                            .is_some_and(|n| *n != p.spec.node_name)
                        {
                            self.remove(&key);
                            self.insert(key.clone(), &p.spec.node_name);
                        }
                        self.set_extra(&key, p);
                    }
                }
                (ApiKind::Pod, EventType::Deleted) => {
                    if let Some((ns, name)) = e.key.split_once('/') {
                        self.remove(&(ns.to_string(), name.to_string()));
                    }
                }
                (ApiKind::Node, EventType::Added) => {
                    self.by_node.entry(e.key.clone()).or_default();
                }
                (ApiKind::Node, EventType::Deleted)
                    if self.by_node.get(&e.key).is_some_and(Vec::is_empty) =>
                {
                    self.by_node.remove(&e.key);
                }
                _ => {}
            }
        }
        self.seen = revs.next_event;
        self.last = revs
            .events
            .back()
            .map(|e| (e.index, e.key.clone(), e.resource_version));
        // A cheap consistency check: if anything slipped past the log, start over.
        if self.node_of.len() != lab.cluster.pods.len()
            || self.by_node.len() < lab.cluster.nodes.len()
        {
            self.rebuild(lab);
        }
    }

    fn insert(&mut self, key: PodKey, node: &str) {
        if self.node_of.contains_key(&key) {
            return;
        }
        let list = self.by_node.entry(node.to_string()).or_default();
        if let Err(at) = list.binary_search(&key) {
            list.insert(at, key.clone());
        }
        self.node_of.insert(key, node.to_string());
    }

    /// How many rows a pod's other interfaces take (0 for most pods).
    pub fn extra_rows(&self, key: &PodKey) -> usize {
        self.extra.get(key).copied().unwrap_or(0)
    }

    /// Whether any pod on the node has other interfaces (its rows are not one per pod).
    pub fn node_has_extra(&self, node: &str) -> bool {
        self.node_extra.contains_key(node)
    }

    /// Record the pod's interfaces besides the first from its network-status annotation.
    fn set_extra(&mut self, key: &PodKey, pod: &crate::cluster::Object<crate::cluster::PodSpec>) {
        let n = pod
            .metadata
            .annotations()
            .get(crate::cluster::nad::NETWORK_STATUS_ANNOTATION)
            .map(|s| s.matches("\"interface\":").count().saturating_sub(1))
            .unwrap_or(0);
        self.set_extra_count(key, n);
    }

    fn set_extra_count(&mut self, key: &PodKey, n: usize) {
        let old = self.extra_rows(key);
        if old == n {
            return;
        }
        let Some(node) = self.node_of.get(key).cloned() else {
            return;
        };
        if n == 0 {
            self.extra.remove(key);
        } else {
            self.extra.insert(key.clone(), n);
        }
        let total = self.node_extra.get(&node).copied().unwrap_or(0) + n - old;
        if total == 0 {
            self.node_extra.remove(&node);
        } else {
            self.node_extra.insert(node, total);
        }
    }

    fn remove(&mut self, key: &PodKey) {
        self.set_extra_count(key, 0);
        if let Some(node) = self.node_of.remove(key)
            && let Some(list) = self.by_node.get_mut(&node)
            && let Ok(at) = list.binary_search(key)
        {
            list.remove(at);
            // The group of pods not scheduled yet goes when its last pod is placed.
            if node.is_empty() && list.is_empty() {
                self.by_node.remove(&node);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// IPAM.

pub use crate::engine::ipam_view::{IpamSummary, ipam_summaries};

// ---------------------------------------------------------------------------------------
// Routes.

pub use crate::engine::seen::RouteFact;
pub use crate::engine::views::RouteTables;

/// The routes inside a pod's network namespace, as `ip route` and `ip -6 route` print them.
pub fn pod_routes(lab: &Lab, pod: &PodFacts) -> RouteTables {
    node_view::netns_routes(lab, &pod.node, &pod.netns)
}

// ---------------------------------------------------------------------------------------
// Calls and wire records.

/// The wire records (`[first, last)`) behind a call-log entry, by the typed link the entry
/// holds: a plugin `exec` line's or a CSI call's own record, a runtime's `CNI ADD|DEL|CHECK`
/// line's plugin executions.
pub fn wire_range(lab: &Lab, call: u64) -> Option<(u64, u64)> {
    lab.calls.get(call)?.wire().map(|r| (r.first, r.end))
}

/// The latest call-log entry that has wire records, looking back at most `limit` entries.
pub fn latest_call_with_wire(lab: &Lab, limit: usize) -> Option<u64> {
    lab.calls
        .iter()
        .rev()
        .take(limit)
        .find(|(seq, _)| wire_range(lab, *seq).is_some())
        .map(|(seq, _)| seq)
}

/// The runtime's `CNI ADD|DEL|CHECK` line whose chain holds the record of an `exec` line
/// (`None` for a call no chain ran).
pub fn chain_of(lab: &Lab, call: u64) -> Option<u64> {
    let (rec, _) = wire_range(lab, call)?;
    // The line sits next to the plugins' `exec` lines, before or after them.
    (call.saturating_sub(64)..=call.saturating_add(64))
        .find(|seq| wire_range(lab, *seq).is_some_and(|(a, b)| b > a + 1 && a <= rec && rec < b))
}

/// The newest call-log entry that ran one record of `call` (a plugin's `exec` line, a CSI
/// call), looking back at most `limit` entries: the record a step's wire check names.
pub fn latest_call_of(lab: &Lab, call: &WireCall, limit: usize) -> Option<u64> {
    lab.calls
        .iter()
        .rev()
        .take(limit)
        .find(|(seq, _)| {
            wire_range(lab, *seq).is_some_and(|(a, b)| {
                b == a + 1 && lab.wire.get(a).is_some_and(|r| call.matches(r))
            })
        })
        .map(|(seq, _)| seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::plugin::CniCommand;
    use crate::record::What;

    /// The first runtime CNI line of `command` in the call log.
    fn cni_line(lab: &Lab, command: CniCommand) -> Option<u64> {
        lab.calls
            .iter()
            .find(|(_, e)| e.cni_op().is_some_and(|op| op.command == command))
            .map(|(s, _)| s)
    }

    #[test]
    fn exec_lines_name_their_wire_record() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("pod delete web").unwrap();
        // Every `exec` line links to the one record it ran, whatever its text says.
        let execs: Vec<(u64, u64)> = lab
            .calls
            .iter()
            .filter(|(_, e)| matches!(e.what(), What::Exec { .. }))
            .filter_map(|(s, _)| wire_range(&lab, s))
            .collect();
        assert_eq!(execs, (0..8).map(|n| (n, n + 1)).collect::<Vec<_>>());
        // Lines that ran no plugin link to nothing.
        let started = lab
            .calls
            .iter()
            .find(|(_, e)| e.reason() == Some("Started"));
        assert_eq!(started.and_then(|(s, _)| wire_range(&lab, s)), None);
    }

    #[test]
    fn a_line_that_reads_like_a_link_is_not_one() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        // Lines worded as a plugin execution or a runtime's CNI call, with no typed link:
        // the old text parser took the first for wire #2 and scanned after the second.
        let fake_exec = lab.log("you", "exec", "ADD #2: cni0 ↔ veth · 10.244.1.2/24");
        let fake_cni = lab.log("you", "CNI ADD", "net=lab-net ifname=eth0 (chain: bridge)");
        lab.execute("pod create db --node node-1").unwrap();
        assert_eq!(wire_range(&lab, fake_exec), None);
        assert_eq!(wire_range(&lab, fake_cni), None);
        // The real ones keep their links, whatever was logged around them.
        let adds: Vec<_> = lab
            .calls
            .iter()
            .filter(|(_, e)| e.cni_op().is_some())
            .filter_map(|(s, _)| wire_range(&lab, s))
            .collect();
        assert_eq!(adds, [(0, 4), (4, 8)]);
    }

    #[test]
    fn pod_index_follows_creates_and_deletes_and_resets() {
        let mut lab = Lab::new();
        let mut ix = PodIndex::new(&lab);
        assert_eq!(ix.by_node.len(), 2);
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("pod create db --node node-2").unwrap();
        lab.execute("pod create api --node node-1").unwrap();
        ix.sync(&lab);
        let n1: Vec<&str> = ix.by_node["node-1"].iter().map(|k| k.1.as_str()).collect();
        assert_eq!(n1, ["api", "web"]);
        lab.execute("pod delete web").unwrap();
        ix.sync(&lab);
        assert_eq!(ix.by_node["node-1"].len(), 1);
        assert_eq!(ix.len(), 2);
        lab.execute("reset").unwrap();
        ix.sync(&lab);
        assert!(ix.is_empty());
        assert_eq!(ix.by_node.len(), 2);
    }

    #[test]
    fn ipam_summary_counts_the_range_without_the_gateway() {
        let mut lab = Lab::empty();
        lab.execute("node add tiny --cidr 10.9.0.0/30 --ip 192.168.0.9")
            .unwrap();
        lab.execute("pod create t1 --node tiny").unwrap();
        let s = ipam_summaries(&lab, "tiny");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].ranges, ["10.9.0.1-10.9.0.2"]);
        assert_eq!(s[0].gateway, "10.9.0.1");
        assert_eq!((s[0].capacity, s[0].used, s[0].free()), (1, 1, 0));
    }

    #[test]
    fn containerd_cni_line_maps_to_the_chain_it_ran() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        let cni = cni_line(&lab, CniCommand::Add).unwrap();
        assert_eq!(wire_range(&lab, cni), Some((0, 4)));
        assert_eq!(
            latest_call_with_wire(&lab, 100).map(|s| wire_range(&lab, s)),
            Some(Some((3, 4)))
        );
    }

    #[test]
    fn teardown_line_maps_to_the_dels_before_it() {
        let mut lab = Lab::empty();
        lab.execute("node add tiny --cidr 10.9.0.0/30 --ip 192.168.0.9")
            .unwrap();
        lab.execute("pod create t1 --node tiny").unwrap();
        lab.execute("pod create t2 --node tiny").unwrap();
        let del = cni_line(&lab, CniCommand::Del).unwrap();
        // #0 is the new node's NodeGetInfo (CSI registration).
        assert_eq!(wire_range(&lab, del), Some((7, 11)));
    }
}
