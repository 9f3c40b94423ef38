//! The check language: one small declarative predicate per line, evaluated against the
//! `Lab`'s state (and what the learner just ran). Every predicate is a row of
//! [`PREDICATES`]: a pattern such as `pod <pod> ip in <cidr>` and an evaluator. Adding a
//! predicate (for example `pvc <pvc> phase <word>`) is adding one row.
//!
//! Placeholders: `<pod>`, `<pvc>`, `<policy>`, `<snapshot>` (`name` or `ns/name`,
//! namespace `default`), `<node>`, `<name>`, `<word>`, `<ip>`, `<cidr>`, `<n>` (a number),
//! `<port>` (`P[/PROTO]`), `<flow>` (`"SRC DST [--port P] [--size BYTES]"`, as `trace` takes
//! it), `<text>` (a word or a "quoted string"). A token `a|b` is one of its words. A line
//! starting with `not` holds when the rest does not. The `saw …` predicates
//! ([`super::saw`]) read what the learner's views showed, the others the lab's state.

use super::focus::Topic;
use crate::cluster::{ApiKind, ObjectRef};
pub use crate::command::shape::Shape;
use crate::engine::node_view::{self, LinkType};
use crate::engine::query::{self, PodFacts};
use crate::engine::seen::{Executed, Seen};
use crate::engine::{Lab, Reason};
use crate::record::wire::WireRecord;
use ipnet::IpNet;
use std::net::IpAddr;

/// One parsed check line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Line in the lesson file.
    pub line: usize,
    /// The line as written.
    pub text: String,
    /// Written with a leading `not`.
    pub negated: bool,
    /// Index into [`PREDICATES`].
    pub predicate: usize,
    /// The placeholder values, in pattern order.
    pub args: Vec<String>,
}

/// The result of evaluating a check: whether it holds, and what the lab actually has
/// (for hints, `lesson verify` and the linter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eval {
    /// Whether the check holds.
    pub holds: bool,
    /// What the lab has, in a few words (`pod default/web has ip 10.244.1.3`).
    pub actual: String,
}

impl Eval {
    fn new(holds: bool, actual: impl Into<String>) -> Self {
        Eval {
            holds,
            actual: actual.into(),
        }
    }
}

/// What the learner did during the current step, for the `saw …`, `command …` and
/// `last command …` checks: each command as it ran, with what its views showed as data.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The commands run since the step began, in order, failed ones included.
    pub runs: Vec<Ran>,
    /// The last command (of any step).
    pub last: Option<Ran>,
}

/// One command as it ran (see [`crate::engine::seen::Executed`]).
#[derive(Debug, Clone)]
pub struct Ran {
    /// The line as typed.
    pub line: String,
    /// Its typed shape (`None`: it did not parse).
    pub shape: Option<Shape>,
    /// Why it failed, if it did.
    pub failed: Option<Reason>,
    /// Its error's message, if it failed (`CNI code 999 from bridge: …`).
    pub error: Option<String>,
    /// What its views showed.
    pub seen: Vec<Seen>,
    /// The call-log entries it caused, `[first, end)`.
    pub calls: (u64, u64),
    /// The wire records it caused, `[first, end)`.
    pub wire: (u64, u64),
    /// stdout plus `error: …` (what `output contains` reads until every lesson reads facts).
    pub text: String,
}

impl Ran {
    /// Whether it succeeded.
    pub fn ok(&self) -> bool {
        self.failed.is_none()
    }
}

impl Observed {
    /// Record one line as it ran.
    pub fn record(&mut self, line: &str, ex: &Executed) {
        let text = match &ex.result {
            Ok(o) => o.to_text(),
            Err(e) => format!("{}{}\n", e.output.to_text(), e.text()),
        };
        let ran = Ran {
            line: line.to_string(),
            shape: shape_of(line),
            failed: ex.result.as_ref().err().map(|e| e.reason),
            error: ex.result.as_ref().err().map(|e| e.message.clone()),
            seen: ex.seen.clone(),
            calls: ex.calls,
            wire: ex.wire,
            text,
        };
        self.last = Some(ran.clone());
        self.runs.push(ran);
    }

    /// A new step begins: forget the commands (keep the last one).
    pub(crate) fn new_step(&mut self) {
        self.runs.clear();
    }

    /// The commands of this step that succeeded.
    pub fn succeeded(&self) -> impl Iterator<Item = &Ran> {
        self.runs.iter().filter(|r| r.ok())
    }

    /// What the views of this step's commands showed, in order.
    pub fn seen(&self) -> impl Iterator<Item = &Seen> {
        self.succeeded().flat_map(|r| &r.seen)
    }
}

/// One predicate of the check language.
pub struct Predicate {
    /// The pattern (`pod <pod> ip in <cidr>`).
    pub pattern: &'static str,
    /// What it means, for `help` and error messages.
    pub about: &'static str,
    eval: fn(&Lab, &Observed, &[String]) -> Eval,
    /// What its arguments name, for a step's dashboard focus ([`super::focus`]).
    pub topic: Topic,
    /// For a `saw wire CALL …` line about one record's content: the test of a record. A
    /// step's lines of one call must all hold on one record ([`super::saw::one_record_each`]).
    record: Option<RecordTest>,
}

/// Whether one wire record has what a check's arguments say (the call is the first).
pub(crate) type RecordTest = fn(&Lab, &WireRecord, &[String]) -> bool;

/// Every predicate as (pattern, meaning), for the generated check reference.
pub fn predicate_table() -> Vec<(&'static str, &'static str)> {
    PREDICATES.iter().map(|p| (p.pattern, p.about)).collect()
}

/// Every predicate. Order does not matter: two patterns never match the same line (a test
/// proves it).
pub(crate) const PREDICATES: &[Predicate] = &[
    Predicate {
        pattern: "pod <pod> exists",
        about: "the pod object exists",
        eval: pod_exists,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> phase <word>",
        about: "status.phase (Pending, Running, …)",
        eval: pod_phase,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> ip <ip>",
        about: "status.podIP is this address",
        eval: pod_ip,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> ip in <cidr>",
        about: "status.podIP is inside this CIDR",
        eval: pod_ip_in,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> ip is last-reserved",
        about: "status.podIP is host-local's last_reserved_ip on the pod's node (round robin gave it the next address, whatever came before)",
        eval: pod_ip_is_last_reserved,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> interface <word> ip in <cidr>",
        about: "an interface in the pod's network namespace (net1) has an address inside this CIDR",
        eval: pod_interface_ip_in,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> interface <word> kind <word>",
        about: "an interface in the pod's network namespace is a veth, macvlan, ipvlan or vf",
        eval: pod_interface_kind,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> label <word>",
        about: "metadata.labels has this KEY=VALUE (what NetworkPolicy selectors match)",
        eval: pod_label,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> node <node>",
        about: "spec.nodeName",
        eval: pod_node,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "node <node> exists",
        about: "the Node object exists",
        eval: node_exists,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "node <node> cidr <cidr>",
        about: "the Node's `spec.podCIDR` is this CIDR",
        eval: node_cidr,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "node <node> ip <ip>",
        about: "the Node's InternalIP (`status.addresses`) is this address",
        eval: node_ip,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "node <node> sriov-pf <word> vfs <n>",
        about: "the node's SR-IOV PF of this name has this many virtual functions",
        eval: node_sriov_pf,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "node <node> ipam leased <n>",
        about: "host-local on the node holds this many leases (every network)",
        eval: ipam_leased,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "node <node> ipam has <ip>",
        about: "host-local on the node has a lease file for this address",
        eval: ipam_has,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "node <node> ipam lease <name> <word>",
        about: "host-local on the node holds a lease for this container ID and interface (every network)",
        eval: ipam_lease_for,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "node <node> ipam leaks nothing",
        about: "every host-local lease on the node belongs to a live attachment: a pod sandbox, or an entry of libcni's cache under the network the node uses",
        eval: ipam_leaks_nothing,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "node <node> ipam last-reserved <ip>",
        about: "host-local's last_reserved_ip.0 on the node",
        eval: ipam_last_reserved,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "node <node> route <cidr> via <ip>",
        about: "the node's route table sends this CIDR via this next hop",
        eval: node_route_via,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "cni cached <name> on <node>",
        about: "libcni's result cache on the node has an entry for this container ID",
        eval: cni_cached,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "wire last exit <n>",
        about: "the latest plugin execution exited with this status",
        eval: wire_last_exit,
        topic: Topic::WireAny,
        record: None,
    },
    Predicate {
        pattern: "wire last plugin <word> exit <n>",
        about: "the latest execution of this plugin type exited with this status",
        eval: wire_last_plugin_exit,
        topic: Topic::WirePlugin,
        record: None,
    },
    Predicate {
        pattern: "cni <word> failed <n> times with code <n>",
        about: "this plugin type answered at least n executions with a CNI error of this code (an injected fault's, an IPAM range's exhaustion)",
        eval: cni_failed_times,
        topic: Topic::WirePlugin,
        record: None,
    },
    Predicate {
        pattern: "csinode <node> driver <name>",
        about: "the node's CSINode lists this CSI driver (node-driver-registrar registered it, and kubelet wrote what NodeGetInfo answered)",
        eval: csinode_driver,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "watch has <word> <word> <name>",
        about: "the API server's watch log has an event of this type for this kind and object",
        eval: watch_has,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "reach <name> <name> port <port> allowed|denied",
        about: "whether the cluster's data plane lets this flow through its NetworkPolicy checks (under flannel, which enforces none: allowed)",
        eval: reach,
        topic: Topic::Reach,
        record: None,
    },
    Predicate {
        pattern: "policies <name> <name> port <port> allowed|denied",
        about: "the NetworkPolicies' verdict on this flow by Kubernetes' rules, whatever the network enforces",
        eval: policies_verdict,
        topic: Topic::Reach,
        record: None,
    },
    Predicate {
        pattern: "policy <policy> exists",
        about: "the NetworkPolicy exists (name or ns/name)",
        eval: policy_exists,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "policy <policy> types <word>",
        about: "spec.policyTypes, comma-separated in order (Ingress, Egress or Ingress,Egress)",
        eval: policy_types,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> status <word>",
        about: "the STATUS column kubectl shows (Running, ContainerCreating, Terminating, …)",
        eval: pod_status,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> event <word>",
        about: "the pod (the one of that name now, if it exists) has a Kubernetes event with this reason (FailedAttachVolume, …)",
        eval: pod_event,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> event <word> <text>",
        about: "the pod has an event with this reason whose message holds the text (`\"no IP addresses available\"`)",
        eval: pod_event_message,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> exists",
        about: "the PersistentVolumeClaim exists (name or ns/name)",
        eval: pvc_exists,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> phase <word>",
        about: "the claim's status.phase (Pending, Bound, Lost) or Terminating",
        eval: pvc_phase,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> request <word>",
        about: "the claim's spec.resources.requests.storage, compared as a quantity (20Gi and 20480Mi alike)",
        eval: pvc_request,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> capacity <word>",
        about: "the claim's status.capacity.storage (e.g. 20Gi)",
        eval: pvc_capacity,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> condition <word>",
        about: "the claim carries this condition (e.g. FileSystemResizePending)",
        eval: pvc_condition,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> event <word>",
        about: "the claim has a Kubernetes event with this reason (ProvisioningFailed, …)",
        eval: pvc_event,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> pv phase <word>",
        about: "the phase of the PV provisioned for the claim (Bound, Released, …)",
        eval: pvc_pv_phase,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> pv exists",
        about: "a PersistentVolume is bound to the claim (its claimRef names it), whatever its phase; `not …` holds once that PV is deleted",
        eval: pvc_pv_exists,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> class <name>",
        about: "the claim's `spec.storageClassName` is this class",
        eval: pvc_class,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> on <node> state <word>",
        about: "the CSI lifecycle state of the claim's volume on a node (CREATED, NODE_READY, VOL_READY, PUBLISHED)",
        eval: pvc_state_on,
        topic: Topic::VolumeOn,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> attached to <node>",
        about: "a VolumeAttachment for the claim's volume on the node has status.attached",
        eval: pvc_attached_to,
        topic: Topic::VolumeOn,
        record: None,
    },
    Predicate {
        pattern: "snapshot <snapshot> ready",
        about: "the VolumeSnapshot has readyToUse true",
        eval: snapshot_ready,
        topic: Topic::Volumes,
        record: None,
    },
    Predicate {
        pattern: "snapshot <snapshot> of <pvc>",
        about: "the VolumeSnapshot was taken of this claim (spec.source.persistentVolumeClaimName)",
        eval: snapshot_of,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "sc <name> exists",
        about: "the StorageClass exists",
        eval: sc_exists,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "sc <name> binding <word>",
        about: "the StorageClass's `volumeBindingMode` is this (Immediate, WaitForFirstConsumer)",
        eval: sc_binding,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "csi last <word> code <word>",
        about: "the latest call of this CSI RPC ended with this gRPC code name (OK, ALREADY_EXISTS, …)",
        eval: csi_last_code,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "driver volumes <n>",
        about: "the CSI driver holds this many volumes",
        eval: driver_volumes,
        topic: Topic::Volumes,
        record: None,
    },
    Predicate {
        pattern: "attachments <n>",
        about: "this many VolumeAttachment objects exist",
        eval: attachment_count,
        topic: Topic::Volumes,
        record: None,
    },
    Predicate {
        pattern: "mode <word>",
        about: "the lab runs in auto or step mode",
        eval: mode_is,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "command ran <command>",
        about: "during this step the learner ran a command of this shape (aliases allowed) and it succeeded",
        eval: command_ran,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "command ran <command> <n> times",
        about: "during this step a command of this shape succeeded at least this many times (a repeated DEL, a second publish)",
        eval: command_ran_times,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "watch has <word> <word> <name> after <word> <word> <name>",
        about: "the API server's watch log has an event of the first type for the first object after one of the second for the second (`ADDED pod api after DELETED pod web`: api was created once web was gone)",
        eval: watch_has_after,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "last command failed|succeeded",
        about: "how the learner's last command ended",
        eval: last_command,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw wire <word>",
        about: "during this step a wire record of this call (PLUGIN:COMMAND, COMMAND or a CSI RPC) was shown whole (`show wire`, or a raw `cni`/`csi` command's own record)",
        eval: super::saw::wire,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "saw wire <word> env <text>",
        about: "a record of the call shown this step had this CNI environment variable (`K=V`, or `K`; CNI_ARGS' pairs count)",
        eval: super::saw::wire_env,
        topic: Topic::WireCall,
        record: Some(super::saw::env_test),
    },
    Predicate {
        pattern: "saw wire <word> stdin|stdout|request|response <text> <text>",
        about: "a record of the call shown this step had this JSON value (or `*`: any) at this JSON pointer of its stdin, stdout, request or response",
        eval: super::saw::wire_json,
        topic: Topic::WireCall,
        record: Some(super::saw::json_test),
    },
    Predicate {
        pattern: "saw wire <word> caller <text>",
        about: "a record of the CSI call shown this step was made by this caller",
        eval: super::saw::wire_caller,
        topic: Topic::WireCall,
        record: Some(super::saw::caller_test),
    },
    Predicate {
        pattern: "you called <word> <n> times with <text> <text>",
        about: "during this step the learner made this CSI call by hand (a raw `csi` command) at least this many times, each answered OK, with this JSON value at this pointer of its request (a kubelet's record shown does not count)",
        eval: super::saw::called_by_hand,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "you called <word> <n> times with <text> <text> for pvc <pvc>",
        about: "as `you called …`, and each call is about the claim's volume (its volume ID): a call on another claim's volume or on one made by hand does not count",
        eval: super::saw::called_by_hand_for_pvc,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "you repeated <word> with <text> <text> for pvc <pvc>",
        about: "during this step the learner made this CSI call by hand on the claim's volume, with this JSON value at this pointer of its request, twice in a row: the same request to the same node, both answered OK, and no other call on the volume with that value answered OK between (publish, unpublish, publish repeats nothing; a call about another node or target does not count)",
        eval: super::saw::repeated_by_hand_for_pvc,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "saw wire <word> for pvc <pvc>",
        about: "a record of the CSI call shown this step was made by a component (not by hand) for the claim's volume (its name or volume ID) and answered OK",
        eval: super::saw::wire_for_pvc,
        topic: Topic::WireCall,
        record: Some(super::saw::for_pvc_test),
    },
    Predicate {
        pattern: "saw wire <word> for pod <pod>",
        about: "a record of the CNI call shown this step was made for the pod that exists now (its CNI_ARGS name the pod and its UID): the record of a pod of that name deleted since does not count",
        eval: super::saw::wire_for_pod,
        topic: Topic::WireCall,
        record: Some(super::saw::for_pod_test),
    },
    Predicate {
        pattern: "saw wire <word> from pvc|snapshot <name>",
        about: "a record of the CSI call shown this step copies this source: its request's `volume_content_source` holds the claim's volume ID (a clone) or the snapshot's ID (a restore)",
        eval: super::saw::wire_from_source,
        topic: Topic::WireCall,
        record: Some(super::saw::from_source_test),
    },
    Predicate {
        pattern: "saw route <name> <text>",
        about: "`show routes` showed this place's table (NODE, or pod/POD) with this route (`DST [via IP] [dev D] [proto P] [onlink]`, or `blackhole DST`)",
        eval: super::saw::route,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw link <name> <word> <text>",
        about: "`show links` showed this place's interface with this property (`mtu N`, `master BR`, `kind K`, `addr CIDR`, `up`, or words of its `ip -d` lines)",
        eval: super::saw::link,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw iptables <node> nat|filter <text>",
        about: "`show iptables` showed a rule of the node's table holding these words in a row",
        eval: super::saw::iptables,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw neigh|fdb <node> <text>",
        about: "`show neigh` or `show fdb` showed an entry of the node holding these words in a row",
        eval: super::saw::entries,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw ipam <node> lease|last-reserved|net <text>",
        about: "`show ipam` showed the node's host-local store with this lease, last_reserved_ip or network",
        eval: super::saw::ipam,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "saw conf <node> active <word>",
        about: "`cni conf show` showed that the node's runtime uses this file",
        eval: super::saw::conf_active,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> delivered|dropped|no-route|conflict|left",
        about: "during this step a trace of this flow (`\"SRC DST [--port P] [--size BYTES]\"`, port 80/TCP by default, any size when none is given) ended this way",
        eval: super::saw::trace_end,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> mtu <n>",
        about: "a trace of this flow during this step stopped where the packet did not fit this MTU",
        eval: super::saw::trace_mtu,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> route <node> <text>",
        about: "a trace of this flow during this step took this route on this node",
        eval: super::saw::trace_route,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> source rewritten",
        about: "a trace of this flow during this step had its source rewritten by netfilter (MASQUERADE, SNAT)",
        eval: super::saw::trace_rewritten,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> hop <word>",
        about: "a trace of this flow during this step went through a hop of this kind (tunnel, netfilter, policy, underlay, bridge, veth, pod-route, node-route)",
        eval: super::saw::trace_hop,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw reach <flow> allowed|denied",
        about: "during this step `reach` answered this for the flow (what the data plane does)",
        eval: super::saw::reach,
        topic: Topic::Flow,
        record: None,
    },
    Predicate {
        pattern: "saw reach <flow> policies allowed|denied",
        about: "during this step `reach` gave this as the policies' own verdict on the flow",
        eval: super::saw::reach_policies,
        topic: Topic::Flow,
        record: None,
    },
    Predicate {
        pattern: "saw describe <word> <name>",
        about: "during this step `describe` showed this object (its kind by any of kubectl's names)",
        eval: super::saw::describe,
        topic: Topic::Describe,
        record: None,
    },
    Predicate {
        pattern: "saw describe <word> <name> event <word>",
        about: "a description of the object shown this step listed an event with this reason",
        eval: super::saw::describe_event,
        topic: Topic::Describe,
        record: None,
    },
    Predicate {
        pattern: "saw describe <word> <name> event <word> <text>",
        about: "a description of the object shown this step listed an event with this reason whose message holds the text",
        eval: super::saw::describe_event,
        topic: Topic::Describe,
        record: None,
    },
    Predicate {
        pattern: "saw get <word>",
        about: "during this step `get` listed objects of this kind",
        eval: super::saw::get,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw get <word> <name>",
        about: "during this step `get` listed this object",
        eval: super::saw::get,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw get <word> <name> table|wide|json|yaml|name",
        about: "during this step `get` listed this object in this format",
        eval: super::saw::get,
        topic: Topic::None,
        record: None,
    },
    // lessons ch2-core-ideas and ch7-hands-on
    Predicate {
        pattern: "saw error <text> <word>",
        about: "during this step this command (a complete one, any spelling) failed for this reason: `cni:CODE`, `csi:CODE_NAME`, `api:REASON` (Conflict, NotFound…), `usage`",
        eval: super::saw::error,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw error <text> <word> <text>",
        about: "during this step this command failed for this reason, with these words in its error message",
        eval: super::saw::error,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw wire <word> method <text>",
        about: "`show wire` showed a record of this CSI call whole, with this gRPC method path (`/csi.v1.Identity/Probe`; a raw `csi` command prints only the reply)",
        eval: super::saw::wire_method,
        topic: Topic::WireCall,
        record: Some(super::saw::method_test),
    },
    Predicate {
        pattern: "saw watch <word> <word> <name>",
        about: "`show watch` listed an event of this type (ADDED, MODIFIED, DELETED) for this kind and object (`default/web`)",
        eval: super::saw::watch,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw volume <pvc> on <node> state <word>",
        about: "`show volumes` showed the claim's volume in this CSI lifecycle state on the node (CREATED, NODE_READY, VOL_READY, PUBLISHED)",
        eval: super::saw::volume_state,
        topic: Topic::VolumeOn,
        record: None,
    },
    Predicate {
        pattern: "saw volume <pvc> on <node> targets <n>",
        about: "`show volumes` showed this many publish targets (one per pod) of the claim's volume on the node",
        eval: super::saw::volume_targets,
        topic: Topic::VolumeOn,
        record: None,
    },
    Predicate {
        pattern: "policy <policy> selects <word>",
        about: "the NetworkPolicy's podSelector takes the pods with this KEY=VALUE label and no others: each of its requirements is that label (matchLabels, or KEY In (VALUE)); `{}`, KEY Exists or a second value does not hold",
        eval: super::saw::policy_selects,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "policy <policy> admits <word> port <port>",
        about: "an ingress rule of the NetworkPolicy lets in pods of its namespace with this KEY=VALUE label on this port (what the policy says, whatever pods exist or the network enforces)",
        eval: super::saw::policy_admits,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "policy <policy> only-from|only-to <word> port <port>",
        about: "every ingress (only-from) or egress (only-to) rule of the NetworkPolicy lets through only pods of its namespace with this KEY=VALUE label (a pod selector of just that label: no namespace selector, no ipBlock), on this port alone; and it has such a rule",
        eval: super::saw::policy_only,
        topic: Topic::None,
        record: None,
    },
    // ch5-core-modules
    Predicate {
        pattern: "node <node> conf active <word>",
        about: "the node's runtime uses this file of /etc/cni/net.d (the first that loads, in lexical order)",
        eval: super::saw::node_conf_active,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "saw ipam <node> leak <word>",
        about: "`show ipam` showed, in the node's host-local store of this network, a leaked lease: no pod sandbox holds it, and libcni cached it (if at all) only under a network the node no longer uses",
        eval: super::saw::ipam_leak,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> on <word> delivered|dropped|no-route|conflict|left",
        about: "during this step a trace from the flow's source to the address the destination pod has on this interface (a secondary network's `net1`, whatever address it got) ended this way",
        eval: super::saw::trace_to_interface,
        topic: Topic::Trace,
        record: None,
    },
    Predicate {
        pattern: "saw wire <word> stdin|stdout|request|response <text> contains <text>",
        about: "a record of the call shown this step had a string holding this text at this JSON pointer (a path: `/target_path` contains `/volumeDevices/publish/`)",
        eval: super::saw::wire_json_contains,
        topic: Topic::WireCall,
        record: Some(super::saw::json_contains_test),
    },
    // The chapter 3 lessons (CNI across nodes; CSI, Multus and SR-IOV).
    Predicate {
        pattern: "pod <pod> network <name>",
        about: "the network (the conflist's name) the runtime set up the pod's eth0 with, as libcni's cache keys it (lab-net, k8s-pod-network, multus-cni-network)",
        eval: super::saw::pod_network,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> annotation <word>",
        about: "metadata.annotations has this KEY=VALUE (k8s.v1.cni.cncf.io/networks=rdma-net); the bandwidth annotations compare as quantities, as containerd reads them (10M and 10000000 alike)",
        eval: super::saw::pod_annotation,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "pod <pod> port <word>",
        about: "a host port mapping of the pod as `pod create --port` writes it: HOST:CONTAINER[/PROTO] (TCP unless given)",
        eval: super::saw::pod_port,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "node <node> allocatable <word> <n>",
        about: "the Node's status.allocatable has this many of the resource (intel.com/sriov_netdevice)",
        eval: super::saw::node_allocatable,
        topic: Topic::Node,
        record: None,
    },
    Predicate {
        pattern: "saw bgp <node> peer <ip> <word>",
        about: "`show bgp` showed the node's mesh session to this peer in this state (`up`: Established; `start`: the peer is down)",
        eval: super::saw::bgp_peer,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw bgp <node> route <cidr> via <ip>",
        about: "`show bgp` showed BIRD on the node holding a route to this block via this peer, reachable on eth0",
        eval: super::saw::bgp_route,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw events <text> <text>",
        about: "`show events` showed a call-log entry by this actor (`containerd(node-1)`) with this action (`RunPodSandbox`, `CNI ADD`, an event's reason)",
        eval: super::saw::events,
        topic: Topic::Calls,
        record: None,
    },
    Predicate {
        pattern: "saw trace <flow> destination rewritten",
        about: "a trace of this flow during this step had its destination rewritten by netfilter (DNAT: a host port, a Service)",
        eval: super::saw::trace_dnat,
        topic: Topic::Trace,
        record: None,
    },
    // lessons ch4-runtime-workflow and ch6-source-walkthrough
    Predicate {
        pattern: "saw wire <word> on <node>",
        about: "a record of the call shown this step ran on this node (a CNI plugin's node, the node plugin of a CSI Node call)",
        eval: super::saw::wire_on,
        topic: Topic::WireCall,
        record: Some(super::saw::on_test),
    },
    Predicate {
        pattern: "saw wire <word> <n> times",
        about: "at least this many different records of the call, each answered without an error, were shown whole this step (each raw `cni`/`csi` call shows its own: a repeated publish shows two)",
        eval: super::saw::wire_times,
        topic: Topic::WireCall,
        record: None,
    },
    Predicate {
        pattern: "saw ipam <node> lease of <pod>",
        about: "`show ipam` showed the node's host-local store with the pod's lease (its address, held by its sandbox's container ID)",
        eval: super::saw::ipam_lease_of,
        topic: Topic::Ipam,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> used by <pod> read-only",
        about: "a volume of the pod's spec names the claim with readOnly: true (`--pvc CLAIM:ro`)",
        eval: super::saw::pvc_used_read_only,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> used by <pod>",
        about: "a volume of the pod's spec names the claim (the pod mounts it once it runs)",
        eval: super::saw::pvc_used_by,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "caused <text>",
        about: "a command of this step made this component act (an actor of the call log: `external-attacher`, `containerd(node-1)`)",
        eval: super::saw::caused,
        topic: Topic::Calls,
        record: None,
    },
    Predicate {
        pattern: "caused <word> <word> for pod <pod>",
        about: "a command of this step ran this CNI plugin's command (`calico-ipam DEL`) for the pod's sandbox, as its CNI_ARGS name the pod, and the plugin succeeded",
        eval: super::saw::caused_plugin_for_pod,
        topic: Topic::Calls,
        record: None,
    },
    Predicate {
        pattern: "caused <word> <word> on <node>",
        about: "a command of this step ran this CNI plugin's command on the node (`bridge GC`, which only libcni's GC sends), and the plugin succeeded",
        eval: super::saw::caused_plugin_on,
        topic: Topic::Calls,
        record: None,
    },
    Predicate {
        pattern: "pvc <pvc> on <node> targets <n>",
        about: "how many NodePublish target paths the claim's volume has on the node",
        eval: pvc_targets_on,
        topic: Topic::VolumeOn,
        record: None,
    },
    // The timeline and `why` (issue 39): chapters 2 to 5.
    Predicate {
        pattern: "saw rewind past <command>",
        about: "during this step `rewind` took the lab back to before an event of this command (any spelling)",
        eval: super::saw::rewind_past,
        topic: Topic::None,
        record: None,
    },
    Predicate {
        pattern: "saw diff pod <pod> added",
        about: "during this step `diff` listed the pod appearing, with the address it has now",
        eval: super::saw::diff_pod_added,
        topic: Topic::Pod,
        record: None,
    },
    Predicate {
        pattern: "saw diff rule <node> added|removed <text>",
        about: "during this step `diff` listed a rule of the node added (or removed) holding these words in a row of its `-A CHAIN …` form",
        eval: super::saw::diff_rule,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw why pv of <pvc> call <word>",
        about: "during this step `why pv` explained the PersistentVolume made for the claim back through this CSI call (CreateVolume)",
        eval: super::saw::why_pv,
        topic: Topic::Volume,
        record: None,
    },
    Predicate {
        pattern: "saw why va of <pvc> on <node> call <word>",
        about: "during this step `why va` explained the VolumeAttachment of the claim's volume to the node back through this CSI call (ControllerPublishVolume)",
        eval: super::saw::why_va,
        topic: Topic::VolumeOn,
        record: None,
    },
    Predicate {
        pattern: "saw why route <node> <cidr> lease <node>",
        about: "during this step `why route` explained the node's route to this CIDR as written from the second node's lease",
        eval: super::saw::why_route_lease,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw why rule <node> <word> holding <text>",
        about: "during this step `why rule … --node NODE` explained a rule of this chain on the node whose `-A CHAIN …` form holds these words in a row (`-j MASQUERADE --random-fully`)",
        eval: super::saw::why_rule_holding,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw why rule <node> <word> matching <text>",
        about: "during this step `why rule … --node NODE` explained a rule of this chain on the node whose match and target are these, read as iptables reads them (`-s 10.244.0.0/16 ! -d 224.0.0.0/4 -j MASQUERADE`: each of `[!] -s`, `-d`, `-i`, `-o`, `-p` given is the rule's, the target too when `-j` is given)",
        eval: super::saw::why_rule_matching,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw why rule <node> <word> by portmap|ipmasq|flanneld|felix",
        about: "during this step `why rule … --node NODE` followed a rule of the node to this chain and found it written by this component",
        eval: super::saw::why_rule_by,
        topic: Topic::Routes,
        record: None,
    },
    Predicate {
        pattern: "saw why lease of <pod>",
        about: "during this step `why lease` explained the pod's address on its node back through host-local's ADD for its sandbox to the command that made the pod",
        eval: super::saw::why_lease_of,
        topic: Topic::Ipam,
        record: None,
    },
    // Stepping a packet (issue 39): chapter 3's VXLAN hop.
    Predicate {
        pattern: "saw step tunnel on <node>",
        about: "during this step `trace … --step` or `step` showed the hop where the node's VXLAN device wraps the packet (outer headers to the peer's VTEP)",
        eval: super::saw::step_tunnel,
        topic: Topic::Node,
        record: None,
    },
    // Stepping a packet to a policy drop (issue 39): chapter 5.
    Predicate {
        pattern: "saw step drop at policy on <node>",
        about: "during this step `trace … --step` or `step` showed the policy check on the node that denied the packet (the hop where the trace drops it)",
        eval: super::saw::step_policy_drop,
        topic: Topic::Node,
        record: None,
    },
    // Stepping a CSI flow (issue 39): chapter 4's call order.
    Predicate {
        pattern: "saw step csi <word>",
        about: "during this step `pod create … --step` or `step` showed a CSI call of this RPC (NodePublishVolume) that answered OK",
        eval: super::saw::step_csi,
        topic: Topic::None,
        record: None,
    },
];

/// Why a check line did not parse.
fn unknown(words: &[String], text: &str) -> String {
    let first = words.first().map(String::as_str).unwrap_or("");
    let same: Vec<String> = PREDICATES
        .iter()
        .filter(|p| p.pattern.split(' ').next() == Some(first))
        .map(|p| format!("`{}`", p.pattern))
        .collect();
    if same.is_empty() {
        let mut firsts: Vec<&str> = PREDICATES
            .iter()
            .filter_map(|p| p.pattern.split(' ').next())
            .collect();
        firsts.dedup();
        format!(
            "unknown check `{text}`; a check starts with one of: {}",
            firsts.join(", ")
        )
    } else {
        format!(
            "unknown check `{text}`; checks about `{first}` are: {}",
            same.join(", ")
        )
    }
}

fn validate(placeholder: &str, value: &str) -> Result<(), String> {
    let ok = match placeholder {
        "<ip>" => value.parse::<IpAddr>().is_ok(),
        "<cidr>" => value.parse::<IpNet>().is_ok(),
        "<n>" => value.parse::<u64>().is_ok(),
        "<port>" => crate::cluster::policy::parse_port(value).is_ok(),
        "<flow>" => super::saw::FlowSpec::parse(value).is_ok(),
        "<command>" => shape_of(value).is_some(),
        _ => !value.is_empty(),
    };
    if ok {
        return Ok(());
    }
    let what = match placeholder {
        "<ip>" => "an IP address",
        "<cidr>" => "a CIDR such as 10.244.1.0/24",
        "<n>" => "a number",
        "<port>" => "a port P[/PROTO] such as 3306/TCP",
        "<flow>" => "a flow \"SRC DST [--port P[/PROTO]] [--size BYTES]\"",
        "<command>" => {
            "a whole lab command that parses (`cni add c1 --node node-1`, not a part of one)"
        }
        _ => "a non-empty word",
    };
    Err(format!("expected {what} for {placeholder}, got {value:?}"))
}

/// Parse one check line (comments and blank lines are the caller's business).
pub fn parse(line: usize, text: &str) -> Result<Check, String> {
    let text = text.trim();
    let mut words =
        shlex::split(text).ok_or_else(|| format!("unbalanced quotes in check `{text}`"))?;
    let negated = words.first().is_some_and(|w| w == "not");
    if negated {
        words.remove(0);
    }
    for (i, p) in PREDICATES.iter().enumerate() {
        let pat: Vec<&str> = p.pattern.split(' ').collect();
        if pat.len() != words.len() {
            continue;
        }
        let literal_ok = pat.iter().zip(&words).all(|(t, w)| {
            t.starts_with('<') || (t.contains('|') && t.split('|').any(|a| a == w)) || t == w
        });
        if !literal_ok {
            continue;
        }
        let mut args = Vec::new();
        for (t, w) in pat.iter().zip(&words) {
            if t.starts_with('<') {
                validate(t, w).map_err(|e| format!("check `{text}`: {e}"))?;
                args.push(w.clone());
            } else if t.contains('|') {
                args.push(w.clone());
            }
        }
        return Ok(Check {
            line,
            text: text.to_string(),
            negated,
            predicate: i,
            args,
        });
    }
    Err(unknown(&words, text))
}

impl Check {
    /// Evaluate against the lab and what the learner did.
    pub(crate) fn eval(&self, lab: &Lab, seen: &Observed) -> Eval {
        let Some(p) = PREDICATES.get(self.predicate) else {
            return Eval::new(false, "unknown predicate");
        };
        let mut e = (p.eval)(lab, seen, &self.args);
        if self.negated {
            e.holds = !e.holds;
        }
        e
    }
}

/// Evaluate every check: `Ok(())` when all hold, else the first that does not, with what
/// the lab has.
pub(crate) fn eval_all<'a>(
    checks: &'a [Check],
    lab: &Lab,
    seen: &Observed,
) -> Result<(), (&'a Check, Eval)> {
    for c in checks {
        let e = c.eval(lab, seen);
        if !e.holds {
            return Err((c, e));
        }
    }
    super::saw::one_record_each(checks, lab, seen)
}

/// The record test of a check's predicate, for a `saw wire CALL …` line about one
/// record's content.
pub(crate) fn record_test(c: &Check) -> Option<RecordTest> {
    PREDICATES.get(c.predicate)?.record
}

// ---- evaluators (args are already validated by `parse`) ----

fn arg(args: &[String], i: usize) -> &str {
    args.get(i).map(String::as_str).unwrap_or("")
}

fn split_ns(key: &str) -> (String, String) {
    match key.split_once('/') {
        Some((ns, n)) => (ns.to_string(), n.to_string()),
        None => ("default".to_string(), key.to_string()),
    }
}

pub(super) fn pod<'a>(lab: &'a Lab, key: &str) -> Result<PodFacts<'a>, Eval> {
    query::pod(lab, key).ok_or_else(|| {
        let (ns, name) = split_ns(key);
        Eval::new(false, format!("there is no pod {ns}/{name}"))
    })
}

fn pod_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => Eval::new(true, format!("pod {} exists", p.key)),
        Err(e) => e,
    }
}

fn pod_phase(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => Eval::new(
            p.phase == arg(a, 1),
            format!("pod {} is {}", p.key, p.phase),
        ),
        Err(e) => e,
    }
}

fn pod_ip_text(p: &PodFacts) -> String {
    match p.ip {
        None => format!("pod {} has no IP yet", p.key),
        Some(ip) => format!("pod {} has ip {ip}", p.key),
    }
}

fn pod_ip(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => {
            let want: Option<IpAddr> = arg(a, 1).parse().ok();
            Eval::new(p.ip.is_some() && p.ip == want, pod_ip_text(&p))
        }
        Err(e) => e,
    }
}

fn pod_ip_in(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => {
            let net: Option<IpNet> = arg(a, 1).parse().ok();
            let holds = matches!((net, p.ip), (Some(n), Some(ip)) if n.contains(&ip));
            Eval::new(holds, pod_ip_text(&p))
        }
        Err(e) => e,
    }
}

/// The `last_reserved_ip.0` cursors of every host-local directory on a node.
fn last_reserved(lab: &Lab, node: &str) -> Option<Vec<IpAddr>> {
    let dirs = node_view::ipam_dirs(lab, node)?;
    Some(dirs.values().filter_map(|d| d.cursor(0)).collect())
}

fn pod_ip_is_last_reserved(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let Some(last) = last_reserved(lab, p.node) else {
        return Eval::new(false, format!("pod {} is not on a node", p.key));
    };
    let shown: Vec<String> = last.iter().map(|ip| ip.to_string()).collect();
    Eval::new(
        p.ip.is_some_and(|ip| last.contains(&ip)),
        format!(
            "{}; last_reserved_ip.0 on {} is [{}]",
            pod_ip_text(&p),
            p.node,
            shown.join(", ")
        ),
    )
}

/// The link called `ifname` in the pod's sandbox namespace, or what is there instead.
pub(super) fn pod_link<'l>(
    lab: &'l Lab,
    p: &PodFacts<'l>,
    ifname: &str,
) -> Result<node_view::LinkRow<'l>, Eval> {
    let Some(netns) = p.netns else {
        return Err(Eval::new(
            false,
            format!("pod {} has no sandbox (no network namespace)", p.key),
        ));
    };
    let links: Vec<node_view::LinkRow<'l>> = node_view::netns_links(lab, p.node, netns).collect();
    if links.is_empty() {
        return Err(Eval::new(
            false,
            format!("pod {}'s network namespace is gone", p.key),
        ));
    }
    match links.iter().find(|l| l.name == ifname) {
        Some(l) => Ok(*l),
        None => {
            let names: Vec<&str> = links.iter().map(|l| l.name).collect();
            Err(Eval::new(
                false,
                format!(
                    "pod {} has no {ifname}; its interfaces are {}",
                    p.key,
                    names.join(", ")
                ),
            ))
        }
    }
}

fn pod_interface_ip_in(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let link = match pod_link(lab, &p, arg(a, 1)) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let net: Option<IpNet> = arg(a, 2).parse().ok();
    let holds = link
        .addrs
        .iter()
        .any(|addr| net.is_some_and(|n| n.contains(&addr.addr())));
    let have = if link.addrs.is_empty() {
        "no address".to_string()
    } else {
        join_addrs(link.addrs)
    };
    Eval::new(holds, format!("pod {} {}: {have}", p.key, link.name))
}

fn pod_interface_kind(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let link = match pod_link(lab, &p, arg(a, 1)) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let kind = match link.kind {
        LinkType::Loopback => "loopback",
        LinkType::Bridge => "bridge",
        LinkType::Veth => "veth",
        LinkType::Ifb => "ifb",
        LinkType::Physical => "physical",
        LinkType::Vxlan => "vxlan",
        LinkType::Underlay => link.flavour,
        LinkType::SriovVf => "vf",
    };
    Eval::new(
        kind == arg(a, 2),
        format!("pod {} {} is a {kind}", p.key, link.name),
    )
}

fn pod_label(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let p = match pod(lab, arg(a, 0)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let (k, v) = arg(a, 1).split_once('=').unwrap_or((arg(a, 1), ""));
    let holds = p.labels.get(k).is_some_and(|have| have == v);
    let labels: Vec<String> = p.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Eval::new(
        holds,
        if labels.is_empty() {
            format!("pod {} has no labels", p.key)
        } else {
            format!("pod {} has labels {}", p.key, labels.join(","))
        },
    )
}

fn pod_node(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => Eval::new(
            p.node == arg(a, 1),
            format!("pod {} is on node {:?}", p.key, p.node),
        ),
        Err(e) => e,
    }
}

fn node_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let n = arg(a, 0);
    let holds = query::node_exists(lab, n);
    Eval::new(
        holds,
        if holds {
            format!("node {n} exists")
        } else {
            format!("there is no node {n}")
        },
    )
}

fn node_cidr(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let n = arg(a, 0);
    let want: Option<IpNet> = arg(a, 1).parse().ok();
    match query::node_pod_cidr(lab, n) {
        Some(cidr) => Eval::new(
            want.is_some() && cidr.parse::<IpNet>().ok() == want,
            if cidr.is_empty() {
                format!("node {n} has no podCIDR")
            } else {
                format!("node {n} has podCIDR {cidr}")
            },
        ),
        None => Eval::new(false, format!("there is no node {n}")),
    }
}

fn node_ip(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let n = arg(a, 0);
    let want: Option<std::net::IpAddr> = arg(a, 1).parse().ok();
    match query::node_internal_ip(lab, n) {
        Some(Some(ip)) => Eval::new(
            want.is_some() && ip.parse().ok() == want,
            format!("node {n} has InternalIP {ip}"),
        ),
        Some(None) => Eval::new(false, format!("node {n} has no InternalIP")),
        None => Eval::new(false, format!("there is no node {n}")),
    }
}

fn node_sriov_pf(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (n, pf) = (arg(a, 0), arg(a, 1));
    match node_view::sriov_vf_count(lab, n, pf) {
        Some(count) => Eval::new(
            arg(a, 2).parse::<usize>().ok() == Some(count),
            format!("node {n}'s PF {pf} has {count} VF(s)"),
        ),
        None => Eval::new(false, format!("there is no node {n}")),
    }
}

/// A node's host-local directories, or "there is no node".
pub(super) fn ipam_dirs<'a>(
    lab: &'a Lab,
    n: &str,
) -> Result<std::collections::BTreeMap<&'a str, node_view::IpamDir<'a>>, Eval> {
    node_view::ipam_dirs(lab, n).ok_or_else(|| Eval::new(false, format!("there is no node {n}")))
}

/// Every lease file of a node's host-local directories.
fn leases(dirs: &std::collections::BTreeMap<&str, node_view::IpamDir>) -> Vec<node_view::LeaseRow> {
    dirs.values().flat_map(|d| d.leases_from(0)).collect()
}

fn ipam_leased(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match ipam_dirs(lab, arg(a, 0)) {
        Ok(dirs) => {
            let count: usize = dirs.values().map(|d| d.len()).sum();
            let want: usize = arg(a, 1).parse().unwrap_or(usize::MAX);
            Eval::new(
                count == want,
                format!(
                    "host-local on {} holds {count} {}",
                    arg(a, 0),
                    if count == 1 { "lease" } else { "leases" }
                ),
            )
        }
        Err(e) => e,
    }
}

fn ipam_has(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match ipam_dirs(lab, arg(a, 0)) {
        Ok(dirs) => {
            let ip: Option<IpAddr> = arg(a, 1).parse().ok();
            let holds = ip.is_some_and(|ip| dirs.values().any(|d| d.is_leased(&ip)));
            let leased: Vec<String> = leases(&dirs).iter().map(|l| l.ip.to_string()).collect();
            Eval::new(
                holds,
                format!(
                    "host-local on {} has leases [{}]",
                    arg(a, 0),
                    leased.join(", ")
                ),
            )
        }
        Err(e) => e,
    }
}

fn ipam_lease_for(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let dirs = match ipam_dirs(lab, arg(a, 0)) {
        Ok(dirs) => dirs,
        Err(e) => return e,
    };
    let (id, ifname) = (arg(a, 1), arg(a, 2));
    let held: Vec<String> = leases(&dirs)
        .iter()
        .filter(|l| l.container_id == id && l.ifname == ifname)
        .map(|l| l.ip.to_string())
        .collect();
    let actual = if held.is_empty() {
        format!(
            "host-local on {} holds no lease for {id}/{ifname}",
            arg(a, 0)
        )
    } else {
        format!(
            "host-local on {} leased {} to {id}/{ifname}",
            arg(a, 0),
            held.join(", ")
        )
    };
    Eval::new(!held.is_empty(), actual)
}

/// A lease is live when a pod sandbox has its container ID (a Multus delegate's `net1`
/// too, cached by Multus rather than libcni) or libcni's cache has its attachment under
/// the network the node uses (a raw `cni add`); one cached only by a network the node no
/// longer uses was torn down through another chain and has leaked
/// ([`LeaseHolder`](crate::engine::node_view::LeaseHolder)).
fn ipam_leaks_nothing(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let dirs = match ipam_dirs(lab, arg(a, 0)) {
        Ok(dirs) => dirs,
        Err(e) => return e,
    };
    let live = |id: &str, ifname: &str| {
        node_view::lease_holder(lab, arg(a, 0), id, ifname).is_some_and(|h| !h.leaked())
    };
    let all = leases(&dirs);
    let count = all.len();
    let mut leaked = Vec::new();
    for lease in &all {
        if !live(&lease.container_id, &lease.ifname) {
            let short: String = lease.container_id.chars().take(12).collect();
            leaked.push(format!("{} ({short}/{})", lease.ip, lease.ifname));
        }
    }
    let actual = if leaked.is_empty() {
        format!(
            "host-local on {} holds {count} lease(s), each of a live attachment",
            arg(a, 0)
        )
    } else {
        format!(
            "host-local on {} holds lease(s) nothing live owns: {}",
            arg(a, 0),
            leaked.join(", ")
        )
    };
    Eval::new(leaked.is_empty(), actual)
}

fn ipam_last_reserved(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match last_reserved(lab, arg(a, 0)) {
        Some(have) => {
            let want: Option<IpAddr> = arg(a, 1).parse().ok();
            let holds = want.is_some_and(|w| have.contains(&w));
            let shown: Vec<String> = have.iter().map(|ip| ip.to_string()).collect();
            Eval::new(
                holds,
                format!(
                    "last_reserved_ip.0 on {} is [{}]",
                    arg(a, 0),
                    shown.join(", ")
                ),
            )
        }
        None => Eval::new(false, format!("there is no node {}", arg(a, 0))),
    }
}

fn node_route_via(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match node_view::host_routes(lab, arg(a, 0)) {
        Some(routes) => {
            let dst: Option<IpNet> = arg(a, 1).parse().ok();
            let via: Option<IpAddr> = arg(a, 2).parse().ok();
            let found = routes
                .iter()
                .find(|r| r.dst.is_some() && r.dst.map(|d| d.trunc()) == dst.map(|d| d.trunc()));
            match found {
                Some(r) => Eval::new(
                    r.via.is_some() && r.via == via,
                    format!("node {}: {}", arg(a, 0), r.line),
                ),
                None => Eval::new(
                    false,
                    format!("node {} has no route to {}", arg(a, 0), arg(a, 1)),
                ),
            }
        }
        None => Eval::new(false, format!("there is no node {}", arg(a, 0))),
    }
}

fn cni_cached(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match node_view::cni_cached(lab, arg(a, 1), arg(a, 0)) {
        Some(holds) => Eval::new(
            holds,
            format!(
                "libcni's cache on {} {} {}",
                arg(a, 1),
                if holds { "has" } else { "has no entry for" },
                arg(a, 0)
            ),
        ),
        None => Eval::new(false, format!("there is no node {}", arg(a, 1))),
    }
}

fn wire_last_exit(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match lab.wire().iter().next_back() {
        Some((seq, w)) => Eval::new(
            w.exit_code().to_string() == arg(a, 0),
            format!("wire #{seq} ({}) exited {}", w.plugin_type(), w.exit_code()),
        ),
        None => Eval::new(false, "the wire log is empty"),
    }
}

fn wire_last_plugin_exit(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let plugin = arg(a, 0);
    match lab
        .wire()
        .iter()
        .rev()
        .find(|(_, w)| w.plugin_type() == plugin)
    {
        Some((seq, w)) => Eval::new(
            w.exit_code().to_string() == arg(a, 1),
            format!("wire #{seq} ({plugin}) exited {}", w.exit_code()),
        ),
        None => Eval::new(false, format!("{plugin} has not run")),
    }
}

fn cni_failed_times(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (plugin, want, code) = (arg(a, 0), arg(a, 1), arg(a, 2));
    let want: usize = want.parse().unwrap_or(usize::MAX);
    let code: u32 = code.parse().unwrap_or(u32::MAX);
    let have = lab
        .wire()
        .iter()
        .filter(|(_, w)| match w {
            WireRecord::Cni(c) => {
                c.plugin_type == plugin && c.reply.as_ref().is_err_and(|e| e.code == code)
            }
            WireRecord::Csi(_) => false,
        })
        .count();
    Eval::new(
        have >= want,
        format!(
            "{plugin} answered {have} execution{} with CNI code {code}",
            if have == 1 { "" } else { "s" }
        ),
    )
}

fn csinode_driver(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (node, driver) = (arg(a, 0), arg(a, 1));
    match query::csinode_drivers(lab, node) {
        Some(drivers) => Eval::new(
            drivers.contains(&driver),
            if drivers.is_empty() {
                format!("csinode {node} lists no driver")
            } else {
                format!("csinode {node} lists {}", drivers.join(", "))
            },
        ),
        None => Eval::new(false, format!("there is no csinode {node}")),
    }
}

fn watch_has(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let ty = arg(a, 0).to_ascii_uppercase();
    let holds = crate::resource::lookup(arg(a, 1))
        .is_some_and(|kind| query::watched(lab, &ty, kind, arg(a, 2)));
    Eval::new(
        holds,
        format!(
            "the watch log {} {ty} {} {}",
            if holds { "has" } else { "has no" },
            arg(a, 1),
            arg(a, 2)
        ),
    )
}

fn watch_has_after(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let at = |i: usize| {
        crate::resource::lookup(arg(a, i + 1))
            .and_then(|kind| query::watched_at(lab, arg(a, i), kind, arg(a, i + 2)))
    };
    let (then, first) = (at(0), at(3));
    let name = |i: usize| {
        format!(
            "{} {} {}",
            arg(a, i).to_ascii_uppercase(),
            arg(a, i + 1),
            arg(a, i + 2)
        )
    };
    let holds = matches!((then, first), (Some((_, last)), Some((earliest, _))) if last > earliest);
    Eval::new(
        holds,
        match (then, first) {
            (_, None) => format!("the watch log has no {}", name(3)),
            (None, _) => format!("the watch log has no {}", name(0)),
            _ if holds => format!("the watch log has {} after {}", name(0), name(3)),
            _ => format!(
                "the watch log has {} before {}, not after it",
                name(0),
                name(3)
            ),
        },
    )
}

fn reach(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    // What the data plane does: the packet walker's policy checks on the packet as each
    // enforcing hook sees it (nothing checks under flannel).
    flow_verdict(lab, a, |t| t.policy_allows())
}

fn policies_verdict(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    // What the NetworkPolicies say by Kubernetes' rules, enforced or not.
    flow_verdict(lab, a, |t| t.verdict.allowed())
}

/// `SRC DST port P allowed|denied`, decided by `allowed` on the walk of that flow.
fn flow_verdict(
    lab: &Lab,
    a: &[String],
    allowed: impl Fn(&crate::net::trace::Trace) -> bool,
) -> Eval {
    let args = crate::command::grammar::FlowArgs {
        src: arg(a, 0).to_string(),
        dst: arg(a, 1).to_string(),
        port: Some(arg(a, 2).to_string()),
        size: None,
    };
    match lab.walk(&args) {
        Ok(t) => {
            let want_allowed = arg(a, 3) == "allowed";
            Eval::new(allowed(&t) == want_allowed, t.verdict.text())
        }
        Err(e) => Eval::new(false, e.message),
    }
}

fn policy_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    let holds = query::policy_types(lab, arg(a, 0)).is_some();
    Eval::new(
        holds,
        format!(
            "networkpolicy {ns}/{name} {}",
            if holds { "exists" } else { "does not exist" }
        ),
    )
}

fn policy_types(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    match query::policy_types(lab, arg(a, 0)) {
        Some(types) => {
            let types = types.join(",");
            Eval::new(
                types == arg(a, 1),
                format!("networkpolicy {ns}/{name} has policyTypes [{types}]"),
            )
        }
        None => Eval::new(false, format!("networkpolicy {ns}/{name} does not exist")),
    }
}

/// Whether this run was the command `want` (by typed shape: defaults, spelling, order).
fn ran_as(r: &Ran, want: &Shape) -> bool {
    r.shape.as_ref().is_some_and(|s| s.matches(want))
}

/// A line's shape as the lessons compare it (see [`Shape::of`]), its `kind` argument by the
/// kind's singular name: `label po web` and `label pods web` are `label pod web`.
pub(super) fn shape_of(line: &str) -> Option<Shape> {
    let shape = Shape::of(line)?;
    let own = own_delete_line(line).and_then(|own| Shape::of(&own));
    Some(kinds_named(own.as_ref().unwrap_or(&shape)))
}

/// `delete pod web [-n NS] [--step]` as the lab's own command it runs, `pod delete web [-n
/// NS] [--step]` (`help delete`: they are the same command): one object of a kind the lab
/// deletes with its own command. `None` for any other line.
fn own_delete_line(line: &str) -> Option<String> {
    let Ok(Some(crate::command::Command::Delete(d))) = crate::command::parse(line) else {
        return None;
    };
    if d.file.is_some() || d.selector.is_some() || d.all {
        return None;
    }
    let (kind, name) = match (d.kind.as_deref(), d.names.as_slice()) {
        (Some(k), [n]) if !k.contains('/') => (k, n.as_str()),
        (Some(k), []) => k.split_once('/').filter(|(_, n)| !n.is_empty())?,
        _ => return None,
    };
    // The kind by any of its spellings (`po`, `pods`, `persistentvolumeclaim`).
    let want = crate::resource::lookup(kind)?;
    let own =
        crate::command::help::kind_command("delete", |n| crate::resource::lookup(n) == Some(want))?;
    let delete = own.find_subcommand("delete")?;
    let takes = |id: &str| delete.get_arguments().any(|a| a.get_id() == id);
    let mut words = vec![
        own.get_name().to_string(),
        "delete".into(),
        name.to_string(),
    ];
    if takes("ns") {
        words.extend(["-n".to_string(), d.ns.clone()]);
    }
    if d.step && takes("step") {
        words.push("--step".into());
    }
    shlex::try_join(words.iter().map(String::as_str)).ok()
}

fn kinds_named(shape: &Shape) -> Shape {
    let canonical = |(k, v): &(String, String)| {
        let v = match (k.as_str(), crate::resource::lookup(v)) {
            ("kind", Some(kind)) => crate::resource::of(kind).names().singular.to_string(),
            _ => v.clone(),
        };
        (k.clone(), v)
    };
    Shape {
        path: shape.path.clone(),
        args: shape.args.iter().map(canonical).collect(),
        given: shape.given.iter().map(canonical).collect(),
    }
}

fn command_ran(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let Some(want) = shape_of(arg(a, 0)) else {
        return Eval::new(false, "not a whole command");
    };
    let holds = seen.succeeded().any(|r| ran_as(r, &want));
    Eval::new(
        holds,
        format!(
            "`{}` {} during this step",
            arg(a, 0),
            if holds {
                "was run"
            } else {
                "has not been run successfully"
            }
        ),
    )
}

fn command_ran_times(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    let Some(want) = shape_of(arg(a, 0)) else {
        return Eval::new(false, "not a whole command");
    };
    let need: usize = arg(a, 1).parse().unwrap_or(usize::MAX);
    let have = seen.succeeded().filter(|r| ran_as(r, &want)).count();
    Eval::new(
        have >= need,
        format!(
            "`{}` succeeded {have} time{} during this step",
            arg(a, 0),
            if have == 1 { "" } else { "s" }
        ),
    )
}

fn last_command(_: &Lab, seen: &Observed, a: &[String]) -> Eval {
    match seen.last.as_ref().map(|r| !r.ok()) {
        Some(failed) => Eval::new(
            failed == (arg(a, 0) == "failed"),
            if failed {
                "the last command failed"
            } else {
                "the last command succeeded"
            },
        ),
        None => Eval::new(false, "no command has run yet"),
    }
}

fn pod_status(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pod(lab, arg(a, 0)) {
        Ok(p) => Eval::new(
            p.status == arg(a, 1),
            format!("pod {} is {}", p.key, p.status),
        ),
        Err(e) => e,
    }
}

fn pod_event(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    // The pod that exists now: a deleted pod of the same name had other events.
    let holds = query::pod_has_event(lab, arg(a, 0), arg(a, 1));
    if !holds && !pod_exists_now(lab, arg(a, 0)) {
        return Eval::new(false, format!("there is no pod {ns}/{name}"));
    }
    Eval::new(
        holds,
        format!(
            "pod {ns}/{name} {} {} event",
            if holds { "has a" } else { "has no" },
            arg(a, 1)
        ),
    )
}

/// Whether the pod exists (an event check's "has no event" of a pod that does not exist
/// says so instead).
fn pod_exists_now(lab: &Lab, key: &str) -> bool {
    query::pod(lab, key).is_some()
}

fn pod_event_message(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    let (reason, text) = (arg(a, 1), arg(a, 2));
    let messages = query::pod_event_messages(lab, arg(a, 0), reason);
    let holds = messages.iter().any(|m| m.contains(text));
    Eval::new(
        holds,
        match messages.last() {
            None if !pod_exists_now(lab, arg(a, 0)) => format!("there is no pod {ns}/{name}"),
            None => format!("pod {ns}/{name} has no {reason} event"),
            Some(m) if !holds => format!("pod {ns}/{name}'s {reason} event says {m:?}"),
            Some(_) => format!("pod {ns}/{name} has a {reason} event saying {text:?}"),
        },
    )
}

fn pvc<'a>(lab: &'a Lab, key: &str) -> Result<query::ClaimFacts<'a>, Eval> {
    query::claim(lab, key).ok_or_else(|| {
        let (ns, name) = split_ns(key);
        Eval::new(false, format!("there is no claim {ns}/{name}"))
    })
}

fn pvc_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pvc(lab, arg(a, 0)) {
        Ok(p) => Eval::new(true, format!("claim {} exists", p.key)),
        Err(e) => e,
    }
}

fn pvc_phase(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pvc(lab, arg(a, 0)) {
        Ok(p) => Eval::new(
            p.phase == arg(a, 1),
            format!("claim {} is {}", p.key, p.phase),
        ),
        Err(e) => e,
    }
}

fn pvc_capacity(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pvc(lab, arg(a, 0)) {
        Ok(p) => {
            let have = p.capacity.unwrap_or_default();
            Eval::new(
                have == arg(a, 1),
                format!(
                    "claim {} has capacity {}",
                    p.key,
                    if have.is_empty() { "<none>" } else { have }
                ),
            )
        }
        Err(e) => e,
    }
}

fn pvc_request(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    use crate::util::quantity::parse_bytes;
    match pvc(lab, arg(a, 0)) {
        Ok(p) => {
            let have = p.request.unwrap_or_default();
            let same = parse_bytes(have)
                .ok()
                .zip(parse_bytes(arg(a, 1)).ok())
                .is_some_and(|(h, w)| h == w);
            Eval::new(
                same,
                format!(
                    "claim {} requests {}",
                    p.key,
                    if have.is_empty() { "<none>" } else { have }
                ),
            )
        }
        Err(e) => e,
    }
}

fn pvc_condition(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pvc(lab, arg(a, 0)) {
        Ok(p) => {
            let holds = p.conditions.contains(&arg(a, 1));
            Eval::new(
                holds,
                format!(
                    "claim {} {} condition {}",
                    p.key,
                    if holds { "has" } else { "has no" },
                    arg(a, 1)
                ),
            )
        }
        Err(e) => e,
    }
}

fn pvc_event(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    let object = ObjectRef::new(ApiKind::PersistentVolumeClaim, &ns, &name);
    let holds = lab.calls().has_event(&object, arg(a, 1));
    Eval::new(
        holds,
        format!(
            "claim {ns}/{name} {} {} event",
            if holds { "has a" } else { "has no" },
            arg(a, 1)
        ),
    )
}

fn pv_of<'a>(lab: &'a Lab, key: &str) -> Result<query::VolumeFacts<'a>, Eval> {
    query::claim_volume(lab, key).ok_or_else(|| {
        let (ns, name) = split_ns(key);
        Eval::new(
            false,
            format!("no persistent volume was made for claim {ns}/{name}"),
        )
    })
}

fn pvc_pv_phase(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pv_of(lab, arg(a, 0)) {
        Ok(pv) => Eval::new(
            pv.phase == arg(a, 1),
            format!("persistentvolume {} is {}", pv.name, pv.phase),
        ),
        Err(e) => e,
    }
}

fn pvc_pv_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pv_of(lab, arg(a, 0)) {
        Ok(pv) => Eval::new(
            true,
            format!(
                "persistentvolume {} ({}) is bound to the claim",
                pv.name, pv.phase
            ),
        ),
        Err(e) => e,
    }
}

fn pvc_class(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    match query::claim_class(lab, arg(a, 0)) {
        Some(class) => Eval::new(
            class == arg(a, 1),
            format!("claim {ns}/{name} is of class {class:?}"),
        ),
        None => Eval::new(false, format!("there is no claim {ns}/{name}")),
    }
}

fn pvc_state_on(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pv_of(lab, arg(a, 0)) {
        Ok(pv) => {
            let state = query::volume_state_on(lab, pv.handle, arg(a, 1)).unwrap_or("gone");
            Eval::new(
                state == arg(a, 2),
                format!("volume {} is {state} on {}", pv.handle, arg(a, 1)),
            )
        }
        Err(e) => e,
    }
}

fn pvc_attached_to(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pv_of(lab, arg(a, 0)) {
        Ok(pv) => {
            let attached = query::attached(lab, pv.name, arg(a, 1));
            Eval::new(
                attached,
                format!(
                    "{} {} attached to {}",
                    pv.name,
                    if attached { "is" } else { "is not" },
                    arg(a, 1)
                ),
            )
        }
        Err(e) => e,
    }
}

fn snapshot_ready(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    match query::snapshot_ready(lab, arg(a, 0)) {
        Some(ready) => Eval::new(ready, format!("snapshot {ns}/{name} readyToUse={ready}")),
        None => Eval::new(false, format!("there is no snapshot {ns}/{name}")),
    }
}

fn snapshot_of(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let (ns, name) = split_ns(arg(a, 0));
    match query::snapshot_source(lab, arg(a, 0)) {
        Some(claim) => Eval::new(
            claim == arg(a, 1),
            format!("snapshot {ns}/{name} is of claim {claim}"),
        ),
        None => Eval::new(false, format!("there is no snapshot {ns}/{name}")),
    }
}

fn sc_exists(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let holds = query::storage_class_exists(lab, arg(a, 0));
    Eval::new(
        holds,
        format!(
            "storageclass {} {}",
            arg(a, 0),
            if holds { "exists" } else { "does not exist" }
        ),
    )
}

fn sc_binding(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match query::storage_class_binding(lab, arg(a, 0)) {
        Some(mode) => Eval::new(
            mode == arg(a, 1),
            format!("storageclass {} binds {mode}", arg(a, 0)),
        ),
        None => Eval::new(false, format!("storageclass {} does not exist", arg(a, 0))),
    }
}

fn csi_last_code(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match lab.calls().latest_csi_call(arg(a, 0)) {
        Some((seq, c)) => {
            let code = c.code().name();
            Eval::new(
                code == arg(a, 1),
                format!("{} (wire #{seq}) ended {code}", c.rpc),
            )
        }
        None => Eval::new(false, format!("no {} call on the wire yet", arg(a, 0))),
    }
}

fn driver_volumes(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let n = query::driver_volume_count(lab);
    Eval::new(
        n.to_string() == arg(a, 0),
        format!("the driver holds {n} volume(s)"),
    )
}

fn attachment_count(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let n = query::attachment_count(lab);
    Eval::new(
        n.to_string() == arg(a, 0),
        format!("{n} VolumeAttachment(s) exist"),
    )
}

fn mode_is(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    let mode = match lab.mode() {
        crate::engine::Mode::Auto => "auto",
        crate::engine::Mode::Step => "step",
    };
    Eval::new(mode == arg(a, 0), format!("the lab is in {mode} mode"))
}

/// One staging path per node, one target per pod: NodePublish bind-mounts the staged volume
/// into each pod's directory (`kubelet/pkg/volume/csi/csi_mounter.go`).
fn pvc_targets_on(lab: &Lab, _: &Observed, a: &[String]) -> Eval {
    match pv_of(lab, arg(a, 0)) {
        Ok(pv) => {
            let n = query::volume_targets_on(lab, pv.handle, arg(a, 1));
            Eval::new(
                n.to_string() == arg(a, 2),
                format!(
                    "volume {} has {n} published target(s) on {}",
                    pv.handle,
                    arg(a, 1)
                ),
            )
        }
        Err(e) => e,
    }
}

/// Addresses as `ip addr` prints them, joined by `, `.
pub(crate) fn join_addrs(addrs: &[IpNet]) -> String {
    addrs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_check_reads_printed_text_or_a_part_of_a_command() {
        let e = parse(1, "output contains \"already exists\"").unwrap_err();
        assert!(e.starts_with("unknown check"), "{e}");
        let e = parse(1, "command ran \"get\" printing \"web\"").unwrap_err();
        assert!(e.starts_with("unknown check"), "{e}");
        let e = parse(1, "command ran \"cni conf load\"").unwrap_err();
        assert!(e.contains("a whole lab command that parses"), "{e}");
        assert!(parse(1, "command ran \"get pods\"").is_ok());
        assert!(parse(1, "command ran \"cni del c1 --node node-1\" 2 times").is_ok());
    }

    fn example(pattern: &str) -> String {
        pattern
            .split(' ')
            .map(|t| match t {
                "<ip>" => "10.244.1.2".to_string(),
                "<cidr>" => "10.244.1.0/24".to_string(),
                "<n>" => "2".to_string(),
                "<port>" => "3306/TCP".to_string(),
                "<text>" => "\"show wire\"".to_string(),
                "<flow>" => "\"web db --port 80\"".to_string(),
                "<command>" => "\"get pods\"".to_string(),
                t if t.starts_with('<') => "x".to_string(),
                t if t.contains('|') => t.split('|').next().unwrap_or("").to_string(),
                t => t.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_pattern_matches_exactly_its_own_row() {
        for (i, p) in PREDICATES.iter().enumerate() {
            let line = example(p.pattern);
            let c = parse(1, &line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(
                c.predicate, i,
                "{line} matched {}",
                PREDICATES[c.predicate].pattern
            );
        }
    }

    #[test]
    fn unknown_and_invalid_checks_explain_themselves() {
        let e = parse(1, "pod web colour red").unwrap_err();
        assert!(
            e.starts_with(
                "unknown check `pod web colour red`; checks about `pod` are: `pod <pod> exists`"
            ),
            "{e}"
        );
        assert!(parse(1, "pvc data phase Bound").is_ok());
        let e = parse(1, "volume data is happy").unwrap_err();
        assert!(
            e.contains("a check starts with one of: pod, node, cni"),
            "{e}"
        );
        assert_eq!(
            parse(1, "pod web ip 10.244.1.x").unwrap_err(),
            "check `pod web ip 10.244.1.x`: expected an IP address for <ip>, got \"10.244.1.x\""
        );
        assert!(parse(1, "reach web db port 3306 maybe").is_err());
    }

    #[test]
    fn checks_read_the_lab() {
        let mut lab = Lab::new();
        let seen = Observed::default();
        let c = |t: &str| parse(1, t).unwrap();
        assert!(!c("pod web exists").eval(&lab, &seen).holds);
        assert!(c("not pod web exists").eval(&lab, &seen).holds);
        lab.execute("pod create web --node node-1 --label app=web")
            .unwrap();
        for t in [
            "pod web phase Running",
            "pod default/web ip 10.244.1.2",
            "pod web ip in 10.244.1.0/24",
            "pod web node node-1",
            "node node-1 ipam leased 1",
            "node node-1 ipam has 10.244.1.2",
            "node node-1 ipam last-reserved 10.244.1.2",
            "node node-1 route 10.244.2.0/24 via 192.168.0.2",
            "wire last plugin host-local exit 0",
            "wire last exit 0",
            "csinode node-1 driver hostpath.csi.lab",
            "watch has MODIFIED Pod default/web",
            "reach web web port 80 allowed",
        ] {
            let e = c(t).eval(&lab, &seen);
            assert!(e.holds, "{t}: {}", e.actual);
        }
        let e = c("pod web ip 10.244.1.3").eval(&lab, &seen);
        assert_eq!(e, Eval::new(false, "pod default/web has ip 10.244.1.2"));
    }

    #[test]
    fn a_failed_command_ran_nothing_and_twice_means_twice() {
        let lab = Lab::new();
        let c = |t: &str| parse(1, t).unwrap();
        let mut seen = Observed::default();
        let failed = Executed::nothing(Err(crate::engine::LabError::msg("unexpected argument")));
        let ok = Executed::nothing(Ok(crate::render::Outcome::empty()));
        // A usage error (the port without --port) is not the command having run.
        seen.record("reach web db 5432", &failed);
        assert!(
            !c("command ran \"reach web db --port 5432\"")
                .eval(&lab, &seen)
                .holds
        );
        seen.record("reach web db --port 5432/tcp", &ok);
        assert!(
            c("command ran \"reach web db --port 5432\"")
                .eval(&lab, &seen)
                .holds
        );
        // A repeated DEL: the first call alone does not complete a "twice" step.
        seen.record("cni del c1 --node node-1", &ok);
        let e = c("command ran \"cni del c1 --node node-1\" 2 times").eval(&lab, &seen);
        assert!(!e.holds);
        assert_eq!(
            e.actual,
            "`cni del c1 --node node-1` succeeded 1 time during this step"
        );
        seen.record("cni del c1 --node node-1", &ok);
        assert!(
            c("command ran \"cni del c1 --node node-1\" 2 times")
                .eval(&lab, &seen)
                .holds
        );
        seen.new_step();
        assert!(
            !c("command ran \"cni del c1 --node node-1\"")
                .eval(&lab, &seen)
                .holds
        );
    }

    #[test]
    fn a_plugin_s_failures_and_a_node_s_drivers_are_read_from_records_and_objects() {
        let mut lab = Lab::new();
        let seen = Observed::default();
        let c = |t: &str| parse(1, t).unwrap();
        let failed = c("cni bridge failed 2 times with code 11");
        let registered = c("csinode node-3 driver hostpath.csi.lab");
        assert!(!failed.eval(&lab, &seen).holds);
        assert!(!registered.eval(&lab, &seen).holds);
        // Printing the words makes no record and no object.
        lab.execute("echo 'bridge failed 2 times with code 11: injected fault; csinode/node-3'")
            .unwrap();
        assert!(!failed.eval(&lab, &seen).holds);
        lab.execute("fault inject bridge --code 11 --times 2")
            .unwrap();
        lab.execute("pod create flaky --node node-2").unwrap();
        lab.execute("tick 10").unwrap();
        lab.execute("tick 10").unwrap();
        let e = failed.eval(&lab, &seen);
        assert!(e.holds, "{}", e.actual);
        assert!(
            !c("cni bridge failed 2 times with code 5")
                .eval(&lab, &seen)
                .holds
        );
        assert!(
            !c("cni portmap failed 1 times with code 11")
                .eval(&lab, &seen)
                .holds
        );
        lab.execute("node add node-3").unwrap();
        let e = registered.eval(&lab, &seen);
        assert!(e.holds, "{}", e.actual);
        assert!(
            !c("csinode node-3 driver ebs.csi.aws.com")
                .eval(&lab, &seen)
                .holds
        );
    }

    #[test]
    fn targets_count_publishes_per_node() {
        let mut lab = Lab::new();
        let seen = Observed::default();
        let c = |t: &str| parse(1, t).unwrap();
        lab.execute("pvc create data --size 1Gi").unwrap();
        assert!(c("pvc data on node-2 targets 0").eval(&lab, &seen).holds);
        lab.execute("pod create a --node node-2 --pvc data")
            .unwrap();
        lab.execute("pod create b --node node-2 --pvc data")
            .unwrap();
        assert!(c("pvc data on node-2 targets 2").eval(&lab, &seen).holds);
        lab.execute("pod delete a").unwrap();
        let e = c("pvc data on node-2 targets 2").eval(&lab, &seen);
        assert!(!e.holds);
        assert!(
            e.actual.ends_with("has 1 published target(s) on node-2"),
            "{}",
            e.actual
        );
        assert!(!c("pvc nope on node-2 targets 0").eval(&lab, &seen).holds);
    }

    #[test]
    fn command_shapes_resolve_aliases() {
        let mut seen = Observed::default();
        let ok = Executed::nothing(Ok(crate::render::Outcome::empty()));
        seen.record("po create web --node node-1", &ok);
        let c = parse(1, "command ran \"pod create web --node node-1\"").unwrap();
        assert!(c.eval(&Lab::empty(), &seen).holds);
        let c = parse(1, "command ran \"pod create web --node node-2\"").unwrap();
        assert!(!c.eval(&Lab::empty(), &seen).holds);
        seen.new_step();
        let c = parse(1, "command ran \"pod create web --node node-1\"").unwrap();
        assert!(!c.eval(&Lab::empty(), &seen).holds);
    }
}
