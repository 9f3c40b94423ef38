//! `why …`: where a piece of state came from, back to the learner's command, as a chain of
//! typed links rendered at the edge. Each link is found by following a typed reference of
//! the one before: a route's peer entry names the peer whose lease it is, a Node its
//! podCIDR; a lease file names its container, whose sandbox names the pod; a wire record's
//! sequence number gives the event that made it (the timeline keeps the wire log's mark
//! after every event); an API object's UID gives the first event after which it exists
//! (the timeline's moments are asked, never the printed text).

mod identity;
mod rule;

use super::{Lab, LabError};
use crate::cluster::Uid;
use crate::cni::host::RouteEntry;
use crate::command::grammar::WhyCmd;
use crate::record::WireRecord;
use crate::render::{Line, Outcome, Role};
use std::net::IpAddr;

/// Where a link's state came from: a command of the timeline, or the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The lab's start (the default cluster's nodes).
    Start,
    /// Event N, with its command line.
    Event(usize, String),
    /// Older than the wire log keeps.
    Forgotten,
}

/// Which of the wire records a search accepts is wanted.
#[derive(Debug, Clone, Copy)]
enum Which {
    /// The earliest still kept.
    First,
    /// The latest.
    Last,
}

/// One link of a `why` chain, as typed facts (rendered only when shown; lessons read them
/// through `Seen::Why`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// A route of a node's main table.
    Route {
        /// The node.
        node: String,
        /// The route.
        route: RouteEntry,
    },
    /// A network daemon on `node` programmed it for `peer`'s lease.
    PeerLease {
        /// The daemon (`flanneld`).
        daemon: &'static str,
        /// The node it runs on.
        node: String,
        /// The node whose lease it is.
        peer: String,
    },
    /// A Node's podCIDR and InternalIP (what a peer's lease holds).
    NodeSpec {
        /// The node.
        node: String,
        /// Its podCIDR.
        pod_cidr: String,
        /// Its InternalIP.
        ip: String,
    },
    /// A route the kernel adds for an address on a device (`proto kernel`).
    Connected {
        /// The node.
        node: String,
        /// The device.
        dev: String,
    },
    /// A node's own underlay route (its InternalIP's network, its default gateway).
    Underlay {
        /// The node.
        node: String,
    },
    /// A host-local lease file.
    Lease {
        /// The node.
        node: String,
        /// The network's name.
        net: String,
        /// The address.
        ip: IpAddr,
        /// The container ID it holds.
        container: String,
        /// The interface it holds.
        ifname: String,
    },
    /// A plugin execution or a CSI call on the wire.
    Wire {
        /// Its sequence number (`show wire N`).
        seq: u64,
        /// What it was, in a few words.
        what: String,
        /// The node it ran on.
        node: Option<String>,
        /// The RPC, for a CSI call (`CreateVolume`).
        rpc: Option<&'static str>,
    },
    /// The CSI call (ControllerPublishVolume) after which its caller (external-attacher)
    /// set a VolumeAttachment's `status.attached`.
    Attached {
        /// The call's sequence number in the wire log.
        seq: u64,
        /// Who called.
        caller: crate::record::call::Actor,
        /// The RPC.
        rpc: &'static str,
    },
    /// The pod whose sandbox a container is.
    Sandbox {
        /// The pod, `ns/name`.
        pod: String,
        /// Its node.
        node: String,
    },
    /// An API object.
    Object {
        /// Its kind.
        kind: &'static str,
        /// Its name, with what identifies it further.
        name: String,
    },
    /// A PersistentVolume.
    Pv {
        /// Its name.
        name: String,
        /// The driver's volume ID (`spec.csi.volumeHandle`).
        volume: String,
    },
    /// A VolumeAttachment.
    Va {
        /// Its name.
        name: String,
        /// The PV it attaches.
        pv: String,
        /// The node it attaches it to.
        node: String,
    },
    /// A controller acted for a reason.
    Controller {
        /// The controller.
        who: &'static str,
        /// What for.
        because: String,
    },
    /// An iptables rule: its place (`-t TABLE -L CHAIN --line-numbers` numbering) and text.
    Rule {
        /// The node.
        node: String,
        /// ip6tables.
        v6: bool,
        /// The table.
        table: crate::cni::netfilter::TableKind,
        /// The chain.
        chain: String,
        /// Its number in the chain, from 1.
        number: usize,
        /// The rule as stored: its text after `-A CHAIN` and its parsed match and target.
        rule: crate::cni::netfilter::XtRule,
    },
    /// Whose a chain is (a rule's, or the chain a rule jumps to).
    Chain {
        /// The chain.
        chain: String,
        /// Who writes it.
        writer: ChainWriter,
    },
    /// A Cilium security identity and its labels.
    Identity {
        /// The identity.
        id: u32,
        /// Its labels.
        labels: Vec<String>,
    },
    /// Where the chain ends: the learner's command.
    Made(Origin),
}

/// Who writes an iptables chain, as `why rule` finds it (each writer names its chains by a
/// rule of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainWriter {
    /// portmap's chain for one container's host ports (`CNI-DN-` and a hash).
    PortmapContainer,
    /// portmap's shared chains (`CNI-HOSTPORT-DNAT`, …), made by its first ADD on the node.
    PortmapShared,
    /// The ipMasq chain of one container, made by bridge or ptp (`CNI-` and a hash).
    MasqContainer,
    /// flanneld's masquerade chain (`--ip-masq`).
    FlanneldMasq,
    /// flanneld's forward chain (`--iptables-forward-rules`).
    FlanneldForward,
    /// Felix's chain for the ingress or egress rules of a NetworkPolicy.
    FelixPolicy {
        /// The policy's namespace.
        namespace: String,
        /// The policy's name.
        name: String,
        /// Its ingress rules (else its egress rules).
        ingress: bool,
    },
    /// Felix's chain for a pod's workload endpoint.
    FelixEndpoint {
        /// The pod's namespace.
        namespace: String,
        /// The pod's name.
        name: String,
        /// The pod's host-side device.
        iface: String,
        /// The node.
        node: String,
    },
    /// Felix's profile chain of a namespace (its own, or its default service account's).
    FelixProfile {
        /// The namespace.
        namespace: String,
        /// The profile's id.
        id: String,
    },
    /// One of Felix's own chains.
    Felix,
}

impl ChainWriter {
    /// The component that writes the chain: `portmap`, `ipmasq` (bridge's or ptp's
    /// ipMasq), `flanneld` or `felix`.
    pub fn component(&self) -> &'static str {
        match self {
            ChainWriter::PortmapContainer | ChainWriter::PortmapShared => "portmap",
            ChainWriter::MasqContainer => "ipmasq",
            ChainWriter::FlanneldMasq | ChainWriter::FlanneldForward => "flanneld",
            ChainWriter::FelixPolicy { .. }
            | ChainWriter::FelixEndpoint { .. }
            | ChainWriter::FelixProfile { .. }
            | ChainWriter::Felix => "felix",
        }
    }

    /// What `why` prints after `CHAIN is`.
    fn text(&self) -> String {
        match self {
            ChainWriter::PortmapContainer => "portmap's chain for one container's host ports (CNI-DN- and a hash of the network name and container ID)".into(),
            ChainWriter::PortmapShared => {
                "one of portmap's shared chains, made by its first ADD on the node".into()
            }
            ChainWriter::MasqContainer => "the ipMasq chain of one container (CNI- and a hash of the network name and container ID)".into(),
            ChainWriter::FlanneldMasq => "flanneld's masquerade chain (--ip-masq)".into(),
            ChainWriter::FlanneldForward => {
                "flanneld's forward chain (--iptables-forward-rules)".into()
            }
            ChainWriter::FelixPolicy {
                namespace,
                name,
                ingress,
            } => format!(
                "Felix's chain for the {} rules of NetworkPolicy {namespace}/{name}",
                if *ingress { "ingress" } else { "egress" },
            ),
            ChainWriter::FelixEndpoint {
                namespace,
                name,
                iface,
                node,
            } => format!(
                "Felix's chain for pod {namespace}/{name}'s workload endpoint ({iface} on {node})"
            ),
            ChainWriter::FelixProfile { namespace, id } => format!(
                "Felix's chain for profile {id}: namespace {namespace}'s, which every endpoint there passes"
            ),
            ChainWriter::Felix => "one of Felix's own chains (calico-node programs them on every node while Calico runs)".into(),
        }
    }
}

impl Link {
    fn line(&self) -> Line {
        let text = match self {
            Link::Route { node, route } => {
                format!("route on {node}: {}", route.to_ip_route())
            }
            Link::PeerLease { daemon, node, peer } => {
                format!("{daemon} on {node} wrote it from {peer}'s lease")
            }
            Link::NodeSpec { node, pod_cidr, ip } => {
                format!("{node}'s lease: podCIDR {pod_cidr}, InternalIP {ip} (the Node object)")
            }
            Link::Connected { node, dev } => format!(
                "the kernel on {node} added it when {dev} got an address in it (proto kernel, scope link)"
            ),
            Link::Underlay { node } => format!(
                "{node}'s own network: the lab gives each node an underlay eth0 on 192.168.0.0/24 and a default gateway"
            ),
            Link::Lease {
                node,
                net,
                ip,
                container,
                ifname,
            } => format!(
                "lease file /var/lib/cni/networks/{net}/{ip} on {node}: container {}, {ifname}",
                short(container)
            ),
            Link::Wire {
                seq, what, node, ..
            } => match node {
                Some(n) => {
                    format!("written by {what} on {n} (wire record {seq}: `show wire {seq}`)")
                }
                None => format!("made by {what} (wire record {seq}: `show wire {seq}`)"),
            },
            Link::Sandbox { pod, node } => {
                format!("the container is pod {pod}'s sandbox on {node}")
            }
            Link::Object { kind, name } => format!("{kind} {name}"),
            Link::Attached { seq, caller, rpc } => format!(
                "{caller} set status.attached when {rpc} answered (wire record {seq}: `show wire {seq}`)"
            ),
            Link::Pv { name, volume } => format!("PersistentVolume {name} (volume {volume})"),
            Link::Va { name, pv, node } => format!("VolumeAttachment {name} (pv {pv} on {node})"),
            Link::Rule {
                node,
                v6,
                table,
                chain,
                number,
                rule,
            } => format!(
                "rule {number} of {chain} ({} -t {}) on {node}: -A {chain} {}",
                if *v6 { "ip6tables" } else { "iptables" },
                table.name(),
                rule.text()
            ),
            Link::Chain { chain, writer } => format!("{chain} is {}", writer.text()),
            Link::Identity { id, labels } => format!("identity {id}: {}", labels.join(" ")),
            Link::Controller { who, because } => format!("{who} made it {because}"),
            Link::Made(Origin::Start) => "part of the lab's start (the default cluster)".into(),
            Link::Made(Origin::Event(n, line)) => format!("from `{line}` at event {n}"),
            Link::Made(Origin::Forgotten) => {
                "made before the oldest record the wire log keeps (it keeps the latest 2000)".into()
            }
        };
        Line::styled(text, Role::Plain)
    }
}

/// A container ID's first 12 characters.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

impl Lab {
    /// `why …`: the chain, one link a line, the state asked about first; and the chain as
    /// it was shown.
    pub(crate) fn why_cmd(&self, w: &WhyCmd) -> Result<(Outcome, Vec<Link>), LabError> {
        let chain = match w {
            WhyCmd::Route { dst, node } => self.why_route(dst, node)?,
            WhyCmd::Lease { ip, node } => self.why_lease(ip, node)?,
            WhyCmd::Pv { name } => self.why_pv(name)?,
            WhyCmd::Va { name } => self.why_va(name)?,
            WhyCmd::Rule(r) => self.why_rule(r)?,
            WhyCmd::Identity { id } => self.why_identity(id)?,
        };
        let mut out = Outcome::empty();
        for (i, link) in chain.iter().enumerate() {
            let mut line = Line::new().push(
                if i == 0 { "" } else { "  ← " }.to_string() + &"  ".repeat(i.saturating_sub(1)),
                Role::Dim,
            );
            line.spans.extend(link.line().spans);
            out.line(line);
        }
        Ok((out, chain))
    }

    fn node_runtime(&self, node: &str) -> Result<&crate::node::NodeRuntime, LabError> {
        self.nodes.get(node).map(Box::as_ref).ok_or_else(|| {
            LabError::msg(format!(
                "node {node:?} not found; nodes: {}",
                self.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }

    fn why_route(&self, dst: &str, node: &str) -> Result<Vec<Link>, LabError> {
        let rt = self.node_runtime(node)?;
        let table = rt.host.route_table();
        let want: crate::cni::host::RouteDst = dst.parse().map_err(LabError::msg)?;
        let Some(route) = table
            .iter()
            .find(|r| r.dst == want || (want.is_default() && r.dst.is_default()))
            .cloned()
        else {
            return Err(LabError::msg(format!(
                "no route {dst} on {node}; routes there: {}",
                table
                    .iter()
                    .map(|r| r.dst.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let mut chain = vec![Link::Route {
            node: node.to_string(),
            route: route.clone(),
        }];
        if let Some(peer) = rt
            .host
            .peer_entries()
            .into_iter()
            .find(|p| p.route == route)
        {
            chain.push(Link::PeerLease {
                daemon: self.daemon_name(),
                node: node.to_string(),
                peer: peer.owner.clone(),
            });
            chain.extend(self.node_origin(&peer.owner));
        } else if route.proto_kernel && route.dev != "eth0" {
            chain.push(Link::Connected {
                node: node.to_string(),
                dev: route.dev.to_string(),
            });
            if let Some((seq, rec)) =
                self.exec_on(node, Which::First, |c| c.plugin_type == "bridge")
            {
                chain.extend(self.exec_chain(node, seq, &rec));
            }
        } else if route.dev == "eth0" {
            chain.push(Link::Underlay {
                node: node.to_string(),
            });
            chain.extend(self.node_origin(node));
        } else {
            return Err(LabError::msg(format!(
                "why route follows flanneld's peer routes, connected routes and a node's own ones; {dst} on {node} is {}'s, which it does not follow yet",
                self.network.name()
            )));
        }
        Ok(chain)
    }

    /// The daemon that programs peers' routes under the running network.
    fn daemon_name(&self) -> &'static str {
        match self.network.name() {
            n if n.starts_with("flannel") => "flanneld",
            n if n.starts_with("calico") => "calico-node (BIRD)",
            _ => "cilium-agent",
        }
    }

    /// A Node's podCIDR and InternalIP, and the command that registered it.
    fn node_origin(&self, node: &str) -> Vec<Link> {
        let key = (crate::cluster::no_namespace(), node.to_string());
        let Some(obj) = self.cluster.nodes.get(&key) else {
            return Vec::new();
        };
        vec![
            Link::NodeSpec {
                node: node.to_string(),
                pod_cidr: obj.spec.pod_cidr.clone(),
                ip: obj.status.internal_ip().unwrap_or("<none>").to_string(),
            },
            Link::Made(self.origin_of_object(
                |lab| lab.cluster.nodes.get(&key).map(|o| o.metadata.uid),
                obj.metadata.uid,
            )),
        ]
    }

    fn why_lease(&self, ip: &str, node: &str) -> Result<Vec<Link>, LabError> {
        let addr: IpAddr = ip.parse().map_err(|_| {
            LabError::msg(format!(
                "{ip:?} is not an IP address (a lease is named by one: 10.244.1.2)"
            ))
        })?;
        let rt = self.node_runtime(node)?;
        let found = rt
            .host
            .ipam
            .iter()
            .find_map(|(net, store)| store.lease(&addr).map(|l| (net.clone(), l.clone())));
        let Some((net, lease)) = found else {
            let leased: Vec<String> = rt
                .host
                .ipam
                .values()
                .flat_map(|s| s.leases().keys().map(|ip| ip.to_string()))
                .collect();
            return Err(LabError::msg(format!(
                "no lease {ip} on {node}; leases there: {}",
                if leased.is_empty() {
                    "none".to_string()
                } else {
                    leased.join(", ")
                }
            )));
        };
        let mut chain = vec![Link::Lease {
            node: node.to_string(),
            net: net.to_string(),
            ip: addr,
            container: lease.container_id.to_string(),
            ifname: lease.ifname.to_string(),
        }];
        let add = self.exec_on(node, Which::Last, |c| {
            c.plugin_type == "host-local"
                && c.env.command == Some(crate::cni::plugin::CniCommand::Add)
                && c.env.container_id == lease.container_id
                && *c.env.ifname == *lease.ifname
        });
        match add {
            Some((seq, rec)) => chain.extend(self.exec_chain(node, seq, &rec)),
            None => {
                chain.extend(self.sandbox_of(node, &lease.container_id));
                chain.push(Link::Made(Origin::Forgotten));
            }
        }
        Ok(chain)
    }

    fn why_pv(&self, name: &str) -> Result<Vec<Link>, LabError> {
        let key = (crate::cluster::no_namespace(), name.to_string());
        let Some(pv) = self.cluster.pvs.get(&key) else {
            return Err(LabError::msg(format!(
                "no PersistentVolume {name:?}; volumes: {}",
                list(self.cluster.pvs.keys().map(|k| k.1.clone()))
            )));
        };
        let mut chain = vec![Link::Pv {
            name: name.to_string(),
            volume: pv.spec.csi.volume_handle.clone(),
        }];
        let create =
            self.last_csi(|c| c.rpc == "CreateVolume" && c.request.subject() == Some(name));
        if let Some(claim) = &pv.spec.claim_ref {
            chain.push(Link::Controller {
                who: "external-provisioner",
                because: format!("for claim {}/{}", claim.namespace, claim.name),
            });
        }
        match create {
            Some((seq, rec)) => {
                chain.push(wire_link(seq, &rec));
                chain.push(Link::Made(self.origin_of_wire(seq)));
            }
            None => chain.push(Link::Made(self.origin_of_object(
                |lab| lab.cluster.pvs.get(&key).map(|o| o.metadata.uid),
                pv.metadata.uid,
            ))),
        }
        Ok(chain)
    }

    fn why_va(&self, name: &str) -> Result<Vec<Link>, LabError> {
        let found =
            self.cluster.volume_attachments.iter().find(|(k, _)| {
                k.1 == name || crate::storage::attach_detach::short_va(&k.1) == name
            });
        let Some((key, va)) = found else {
            return Err(LabError::msg(format!(
                "no VolumeAttachment {name:?}; attachments: {}",
                list(
                    self.cluster
                        .volume_attachments
                        .keys()
                        .map(|k| crate::storage::attach_detach::short_va(&k.1).to_string())
                )
            )));
        };
        let pv = &va.spec.source.persistent_volume_name;
        let node = &va.spec.node_name;
        let users: Vec<String> = self
            .cluster
            .pods_on_node(node)
            .filter(|p| {
                p.spec.volumes().iter().any(|v| {
                    let claim = (
                        p.metadata.namespace().clone(),
                        v.persistent_volume_claim.claim_name.clone(),
                    );
                    self.cluster
                        .pvcs
                        .get(&claim)
                        .is_some_and(|c| &c.spec.volume_name == pv)
                })
            })
            .map(|p| p.key())
            .collect();
        let mut chain = vec![Link::Va {
            name: key.1.clone(),
            pv: pv.clone(),
            node: node.clone(),
        }];
        if va.status.attached {
            // external-attacher sets status.attached once ControllerPublishVolume answered
            // for the volume and the node (external-attacher's csi_handler.go).
            let handle = self
                .cluster
                .pvs
                .get(&(crate::cluster::no_namespace(), pv.clone()))
                .map(|p| p.spec.csi.volume_handle.clone());
            let publish = self.last_csi(|c| {
                c.rpc == "ControllerPublishVolume"
                    && c.request.subject() == handle.as_deref()
                    && c.request.to_json().get("node_id").and_then(|v| v.as_str())
                        == Some(node.as_str())
            });
            if let Some((seq, WireRecord::Csi(call))) = publish {
                chain.push(Link::Attached {
                    seq,
                    caller: call.caller.clone(),
                    rpc: call.rpc,
                });
            }
        }
        chain.extend([Link::Controller {
            who: "the attach/detach controller",
            because: if users.is_empty() {
                format!("for a pod on {node} that used it (none does now)")
            } else {
                format!(
                    "for pod {} on {node}, which uses its claim",
                    users.join(", ")
                )
            },
        }]);
        let key = key.clone();
        chain.push(Link::Made(self.origin_of_object(
            |lab| {
                lab.cluster
                    .volume_attachments
                    .get(&key)
                    .map(|o| o.metadata.uid)
            },
            va.metadata.uid,
        )));
        Ok(chain)
    }

    /// The latest (`Which::Last`) or earliest still kept (`Which::First`) CNI execution on
    /// `node` that `pick` accepts, with its wire sequence.
    fn exec_on(
        &self,
        node: &str,
        which: Which,
        pick: impl Fn(&crate::cni::runtime::WireCall) -> bool,
    ) -> Option<(u64, WireRecord)> {
        let accepts = |(_, r): &(u64, &WireRecord)| matches!(r, WireRecord::Cni(c) if &*c.node == node && pick(c));
        let found = match which {
            Which::First => self.wire.iter().find(accepts),
            Which::Last => self.wire.iter().rev().find(accepts),
        };
        found.map(|(s, r)| (s, r.clone()))
    }

    /// A plugin execution on `node` and what it leads back to: its wire record, the pod
    /// whose sandbox its container is, the command that made it.
    fn exec_chain(&self, node: &str, seq: u64, rec: &WireRecord) -> Vec<Link> {
        let mut chain = vec![wire_link(seq, rec)];
        chain.extend(self.sandbox_of(node, rec.container_id()));
        chain.push(Link::Made(self.origin_of_wire(seq)));
        chain
    }

    /// The latest successful CSI call that `pick` accepts.
    fn last_csi(
        &self,
        pick: impl Fn(&crate::record::CsiCall) -> bool,
    ) -> Option<(u64, WireRecord)> {
        self.wire
            .iter()
            .rev()
            .find(|(_, r)| matches!(r, WireRecord::Csi(c) if c.reply.is_ok() && pick(c)))
            .map(|(s, r)| (s, r.clone()))
    }

    /// The pod whose sandbox is this container on `node`.
    fn sandbox_of(&self, node: &str, container: &str) -> Option<Link> {
        let rt = self.nodes.get(node)?;
        rt.sandboxes
            .iter()
            .find(|(_, s)| s.id() == container)
            .map(|(pod, _)| Link::Sandbox {
                pod: pod.to_string(),
                node: node.to_string(),
            })
    }

    /// The event that wrote wire record `seq`.
    fn origin_of_wire(&self, seq: u64) -> Origin {
        match self.event_of_wire(seq) {
            Some(n) => self.origin(n),
            None => Origin::Start,
        }
    }

    /// The first event after which the object `uid_at` finds has this UID (it has existed
    /// since; the moments are rebuilt from the timeline, by bisection).
    fn origin_of_object(&self, uid_at: impl Fn(&Lab) -> Option<Uid>, uid: Uid) -> Origin {
        self.origin_since(|lab| uid_at(lab) == Some(uid))
    }

    /// The first event after which `holds` is true of the lab and stays true up to now
    /// (by bisection over the timeline's moments; `holds` must be true of the lab now).
    fn origin_since(&self, holds: impl Fn(&Lab) -> bool) -> Origin {
        let n = self.position().at;
        if holds(&self.lab_at(0)) {
            return Origin::Start;
        }
        let (mut lo, mut hi) = (0, n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if holds(&self.lab_at(mid)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        self.origin(hi)
    }

    /// Event `n` (from 1) as an origin.
    fn origin(&self, n: usize) -> Origin {
        match self.event_entry(n) {
            Some(e) => Origin::Event(n, e.line.to_string()),
            None => Origin::Start,
        }
    }
}

/// A wire record as a link.
fn wire_link(seq: u64, rec: &WireRecord) -> Link {
    let what = match rec {
        WireRecord::Cni(c) => format!(
            "{} on {} for container {} ({})",
            c.plugin_type,
            c.env
                .command
                .map(|c| c.as_str())
                .unwrap_or("a call with no CNI_COMMAND"),
            short(&c.env.container_id),
            c.env.ifname
        ),
        WireRecord::Csi(c) => format!("{} {}", c.caller, c.rpc),
    };
    Link::Wire {
        seq,
        what,
        node: rec.node().map(str::to_string),
        rpc: match rec {
            WireRecord::Csi(c) => Some(c.rpc),
            WireRecord::Cni(_) => None,
        },
    }
}

fn list(names: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = names.collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
