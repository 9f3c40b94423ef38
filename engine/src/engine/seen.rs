//! What a command did and what it showed, as data. Running a line ([`super::Lab::run`])
//! gives an [`Executed`]: the command as parsed, its text (or its error with a
//! [`super::Reason`]), the call-log and wire records it caused, and for each view it rendered
//! a [`Seen`]: which view of which object, with the facts it displayed as values (the view
//! model the text was made from). Lessons check these, never printed text, so `echo` of a
//! view's words observes nothing, a failed command shows nothing, and a view of another
//! object shows other facts.

use super::{LabError, Outcome};
use crate::cluster::ObjectRef;
use crate::command::Command;
use std::net::IpAddr;

/// How one line went.
#[derive(Debug, Clone)]
pub struct Executed {
    /// The command as parsed (`None` for a blank line, a comment, or a line that did not
    /// parse).
    pub command: Option<Command>,
    /// What it printed, or its error.
    pub result: Result<Outcome, LabError>,
    /// What its views showed, in order.
    pub seen: Vec<Seen>,
    /// The call-log entries it caused, `[first, end)`.
    pub calls: (u64, u64),
    /// The wire records it caused, `[first, end)`.
    pub wire: (u64, u64),
    /// The watch it started (`get -w`), for the desk to keep.
    pub started_watch: Option<super::watch::Watch>,
    /// Why the command failed when `result` no longer says so: a lesson step its failure
    /// completed turned the error into a line of the step's feedback (see
    /// `Desk::lesson_observe`), and a script's `!` line still expects a failure.
    pub failed_into_feedback: Option<super::Reason>,
}

impl Executed {
    /// A line that ran nothing (blank, a comment, or refused before parsing).
    pub fn nothing(result: Result<Outcome, LabError>) -> Self {
        Executed {
            command: None,
            result,
            seen: Vec::new(),
            calls: (0, 0),
            wire: (0, 0),
            started_watch: None,
            failed_into_feedback: None,
        }
    }

    /// Whether it failed.
    pub fn failed(&self) -> bool {
        self.result.is_err() || self.failed_into_feedback.is_some()
    }
}

/// One view a command rendered, with the facts it displayed.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// Wire records shown whole (`show wire N`, `show wire --last CALL`), by sequence
    /// number; the records themselves are in the wire log, unchanged since.
    Wire(Vec<u64>),
    /// Route tables (`show routes`).
    Routes(Vec<RouteTable>),
    /// Links (`show links`).
    Links(Vec<LinkSet>),
    /// host-local's stores (`show ipam`).
    Ipam(Vec<IpamStore>),
    /// One netfilter table of one family on a node (`show iptables`).
    Iptables(IptablesTable),
    /// A node's neighbour or FDB entries (`show neigh`, `show fdb`), as `ip`/`bridge` print
    /// them.
    Entries {
        /// Which table.
        table: EntryTable,
        /// The node.
        node: String,
        /// The entries, one per line.
        entries: Vec<String>,
    },
    /// A packet walked hop by hop (`trace`).
    Trace(Box<TraceSeen>),
    /// A reachability verdict (`reach`).
    Reach(Box<ReachSeen>),
    /// Call-log entries shown (`show events`), `[first, end)`.
    Events(u64, u64),
    /// The files of a node's `/etc/cni/net.d` (`cni conf show`).
    Conf(Vec<ConfDir>),
    /// Objects described (`describe`), each with the events its description showed.
    Described(Vec<Described>),
    /// A node's BGP as Calico shows it (`show bgp`): the mesh sessions of `calicoctl node
    /// status` and the routes of `birdcl show route`.
    Bgp {
        /// The node.
        node: String,
        /// What was shown.
        view: crate::netd::BgpView,
    },
    /// Objects listed (`get`), in the format asked for.
    Got {
        /// The objects, in the order printed.
        objects: Vec<ObjectRef>,
        /// `table`, `wide`, `json`, `yaml` or `name`.
        format: &'static str,
    },
    /// Events listed (`get events`), in the order printed, each with its object.
    GotEvents(Vec<(ObjectRef, EventSeen)>),
    /// The API server's watch events listed (`show watch`), in order.
    Watch(Vec<crate::cluster::WatchEvent>),
    /// Claims and where their volumes stand (`show volumes`): the rows printed.
    Volumes(Vec<super::volume_view::VolumeRow>),
    /// What changed between two moments (`diff N M`).
    Diff {
        /// The first moment (event number, 0: the start).
        from: usize,
        /// The second.
        to: usize,
        /// The changes listed, in order.
        changes: Vec<super::diff::Change>,
    },
    /// Where a piece of state came from (`why …`): the chain shown, the state asked about
    /// first.
    Why(Vec<super::why::Link>),
    /// The lab moved on its timeline (`rewind N`, `rewind --undo`).
    Rewound {
        /// The event it is now after (0: the start).
        at: usize,
        /// The events of the present.
        of: usize,
        /// The command lines of the events it is now before (`at + 1` to `of`), as typed.
        past: Vec<String>,
    },
    /// A hop of a stepped trace shown (`trace … --step`, `step`, `step back`).
    Stepped {
        /// The hop shown, with its typed facts.
        hop: Box<crate::net::trace::Hop>,
        /// Its position, 1-based.
        index: usize,
        /// How many hops the trace has.
        of: usize,
    },
    /// A call of a stepped CSI flow shown (`pod create … --step`, `step`, `step back`).
    SteppedCall {
        /// The method (`NodeStageVolume`).
        rpc: &'static str,
        /// The node plugin called, for Node RPCs.
        node: Option<String>,
        /// The volume (or CreateVolume's name) the request is about.
        volume: String,
        /// How the call ended.
        code: crate::csi::Code,
        /// Its position, 1-based.
        index: usize,
        /// How many calls the flow has.
        of: usize,
    },
}

/// One object `describe` showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The object.
    pub object: ObjectRef,
    /// The events of its Events section (none when the section was left out).
    pub events: Vec<EventSeen>,
}

/// One event as `describe` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSeen {
    /// `Warning` (true) or `Normal`.
    pub warning: bool,
    /// The reason (`FailedAttachVolume`).
    pub reason: &'static str,
    /// The message as printed.
    pub message: String,
}

/// Where a table or a link lives: a node's host namespace, or a pod's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A node's host network namespace.
    Node(String),
    /// A pod's network namespace (on its node).
    Pod {
        /// The node.
        node: String,
        /// The pod.
        pod: ObjectRef,
    },
}

impl Place {
    /// The node it is on.
    pub fn node(&self) -> &str {
        match self {
            Place::Node(n) | Place::Pod { node: n, .. } => n,
        }
    }

    /// The pod, for a pod's namespace.
    pub fn pod(&self) -> Option<&ObjectRef> {
        match self {
            Place::Node(_) => None,
            Place::Pod { pod, .. } => Some(pod),
        }
    }
}

/// One route as `ip route` shows it, field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFact {
    /// `default`, a CIDR, or a host address.
    pub dst: String,
    /// The next hop.
    pub via: Option<IpAddr>,
    /// The output device (empty for a blackhole route).
    pub dev: String,
    /// `proto kernel`, `proto bird`, … (`None`: no proto printed).
    pub proto: Option<String>,
    /// A blackhole route.
    pub blackhole: bool,
    /// `onlink`.
    pub onlink: bool,
    /// The whole line as printed.
    pub line: String,
}

/// A route table shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteTable {
    /// Whose table.
    pub place: Place,
    /// Its routes, in the order shown.
    pub routes: Vec<RouteFact>,
}

/// One link as `ip -d link`/`ip addr` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkFact {
    /// The interface name.
    pub name: String,
    /// What it is (`veth`, `bridge`, `vxlan`, `macvlan`, `ipvlan`, `vf`, `loopback`,
    /// `physical`, `ifb`).
    pub kind: &'static str,
    /// Its MTU.
    pub mtu: u32,
    /// The bridge it is enslaved to.
    pub master: Option<String>,
    /// Its addresses, CIDR form.
    pub addrs: Vec<String>,
    /// Up.
    pub up: bool,
    /// The lines shown for it.
    pub lines: Vec<String>,
}

/// The links of one namespace shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSet {
    /// Whose links.
    pub place: Place,
    /// The links, in the order shown.
    pub links: Vec<LinkFact>,
}

/// One host-local store shown (`/var/lib/cni/networks/<net>/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpamStore {
    /// The node.
    pub node: String,
    /// The network's name.
    pub net: String,
    /// The directory.
    pub dir: String,
    /// Leases: address, container ID, interface.
    pub leases: Vec<(IpAddr, String, String)>,
    /// `last_reserved_ip.N` files: range index, address.
    pub last_reserved: Vec<(usize, IpAddr)>,
}

/// Which per-node table of entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryTable {
    /// `ip neigh`.
    Neigh,
    /// `bridge fdb`.
    Fdb,
}

/// A netfilter table shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IptablesTable {
    /// The node.
    pub node: String,
    /// IPv6 (`ip6tables`).
    pub v6: bool,
    /// `nat` or `filter`.
    pub table: &'static str,
    /// The rules as `iptables -S` prints them (`-N CHAIN`, `-A CHAIN …`).
    pub rules: Vec<String>,
}

/// A flow as `trace` and `reach` resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSeen {
    /// The source pod (or node, `trace NODE …`), as resolved.
    pub src: Endpoint,
    /// The destination.
    pub dst: Endpoint,
    /// The destination port.
    pub port: u16,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: &'static str,
    /// The packet's size in bytes.
    pub size: u32,
}

/// One end of a flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A pod.
    Pod(ObjectRef),
    /// A node.
    Node(String),
    /// An address that is neither (a Service IP, something outside the cluster).
    Ip(IpAddr),
}

/// A `trace`: the flow, every hop as printed, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSeen {
    /// The flow.
    pub flow: FlowSeen,
    /// The hops in order, as typed facts (what kind, where, the packet, the entry).
    pub hops: Vec<crate::net::trace::Hop>,
    /// The routes the packet took on nodes, in order (node, route).
    pub routes: Vec<(String, RouteFact)>,
    /// How it ended.
    pub end: TraceEnd,
    /// The result line as printed.
    pub result: String,
    /// Addresses netfilter rewrote on the way, in order.
    pub rewrites: Vec<crate::net::trace::Rewrite>,
    /// Where it did not fit a link's MTU, if that is how it ended.
    pub too_big: Option<crate::net::trace::TooBig>,
}

/// How a trace ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEnd {
    /// Delivered (to a pod, a node or out of the cluster).
    Delivered,
    /// Dropped by a policy, a netfilter rule or a too-small MTU.
    Dropped,
    /// Left the cluster through a gateway.
    LeftCluster,
    /// No route (or no neighbour).
    NoRoute,
    /// Two interfaces on the wire hold the destination address.
    Conflict,
}

/// A `reach`: the flow and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ReachSeen {
    /// The flow.
    pub flow: FlowSeen,
    /// Whether the data plane lets it through.
    pub allowed: bool,
    /// Whether the network enforces NetworkPolicy at all.
    pub enforced: bool,
    /// The policies' own verdict (what a network that enforces them would do).
    pub policies_allow: bool,
    /// Each side's decision and the policies behind it, as `reach` judged the flow then.
    pub verdict: crate::net::policy::Verdict,
    /// The lines printed.
    pub lines: Vec<String>,
}

/// A node's `/etc/cni/net.d` shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfDir {
    /// The node.
    pub node: String,
    /// The files in lexical order.
    pub files: Vec<String>,
    /// The file the runtime uses (the first that loads), if any.
    pub active: Option<String>,
}
