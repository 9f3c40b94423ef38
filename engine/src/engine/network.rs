//! NetworkPolicy commands, `reach`, `trace` and the node route view: the engine builds the
//! plain-data [`ClusterNet`] from its objects and the node kernels, and asks `crate::net`.

use super::{Lab, LabError};
use crate::cluster::Object;
use crate::cluster::selector::LabelSelector;
use crate::command::grammar::{FlowArgs, PolicyCmd, PolicyCreateArgs};
use crate::net::policy::{
    IntOrString, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec, Protocol,
};
use crate::net::{ClusterNet, Flow, NodeNet, PodNet, Policy};
use crate::render::{Line, Outcome, Role, Table};
use std::net::IpAddr;

/// What a watcher saw change (see [`Lab::changes_since`]).
#[derive(Debug, Default)]
struct Changes {
    /// Pods added, changed or deleted (`namespace/name`).
    pods: std::collections::BTreeSet<String>,
    /// A policy, namespace or node changed.
    others: bool,
}

impl Lab {
    /// The network daemons (every node's flanneld) resync with every Node object.
    pub fn run_network(&mut self) -> bool {
        self.network_event(None)
    }

    /// The network daemons handle a Node event (`Some(node)`: that node was added or
    /// changed) or resync with every Node (`None`).
    pub fn network_event(&mut self, node: Option<&str>) -> bool {
        if matches!(self.network, crate::netd::Network::Calico(_)) {
            return self.run_calico();
        }
        if matches!(self.network, crate::netd::Network::Cilium(_)) {
            return self.run_cilium();
        }
        let crate::netd::Network::Flannel(flannel) = &mut self.network else {
            return false;
        };
        fn lease(
            n: &crate::cluster::Object<crate::cluster::NodeSpec>,
        ) -> crate::netd::flannel::NodeLease<'_> {
            crate::netd::flannel::NodeLease {
                name: n.name(),
                pod_cidr: &n.spec.pod_cidr,
                internal_ip: n.status.internal_ip(),
            }
        }
        // An event names one Node: look it up (Nodes are keyed by name) rather than walk
        // them all, which made each `node add` cost O(nodes).
        let nodes: Vec<crate::netd::flannel::NodeLease<'_>> = match node {
            Some(name) => {
                let key = (crate::cluster::no_namespace(), name.to_string());
                self.cluster
                    .nodes
                    .get(&key)
                    .map(lease)
                    .into_iter()
                    .collect()
            }
            None => self.cluster.nodes.values().map(lease).collect(),
        };
        let (calls, clock) = (&mut self.calls, self.clock);
        flannel.reconcile(
            &nodes,
            node.is_none(),
            &mut self.nodes,
            &mut |node, line| {
                calls.push(crate::record::CallEvent::step(
                    clock,
                    crate::record::Actor::on(crate::record::Agent::Flanneld, node),
                    "error",
                    line.to_string().into(),
                    crate::record::Level::Warning,
                ));
            },
        )
    }

    /// Every node's calico-node (when the cluster runs Calico) takes in what changed since
    /// its last pass: nodes, pods, policies, namespaces, the IPAM blocks. Cheap when nothing
    /// did (the API server's resourceVersion and the datastore's generation say so).
    pub fn run_calico(&mut self) -> bool {
        let crate::netd::Network::Calico(calico) = &self.network else {
            return false;
        };
        let ips: Vec<(String, Option<std::net::Ipv4Addr>, bool)> = self
            .cluster
            .nodes
            .values()
            .map(|n| {
                (
                    n.name().to_string(),
                    n.status.internal_ip().and_then(|i| i.parse().ok()),
                    !self.faults.node_down(n.name()),
                )
            })
            .collect();
        let nodes: Vec<crate::netd::calico::CalicoNode<'_>> = ips
            .iter()
            .map(|(name, ip, up)| crate::netd::calico::CalicoNode {
                name,
                ip: *ip,
                up: *up,
            })
            .collect();
        let rv = self.cluster.revs.resource_version;
        if calico.up_to_date(&nodes, rv) {
            return false;
        }
        // What Felix must look at again, from the watch events since the last pass.
        let changes = calico.seen_rv().and_then(|since| self.changes_since(since));
        let work = match changes {
            Some(c)
                if !c.others
                    && !calico.nodes_changed(&nodes)
                    && (c.pods.is_empty() || self.cluster.policies.is_empty()) =>
            {
                crate::netd::calico::FelixWork::Pods(
                    c.pods
                        .into_iter()
                        .map(|key| {
                            let (ns, name) = key.split_once('/').unwrap_or(("", key.as_str()));
                            let now = self
                                .cluster
                                .pods
                                .get(&(ns.to_string(), name.to_string()))
                                .map(|p| p.spec.node_name.clone())
                                .filter(|n| !n.is_empty());
                            (key, now)
                        })
                        .collect(),
                )
            }
            _ => crate::netd::calico::FelixWork::All,
        };
        let net = match &work {
            crate::netd::calico::FelixWork::All => self.cluster_net(),
            crate::netd::calico::FelixWork::Pods(changed) => {
                self.cluster_net_where(changed.iter().filter_map(|(key, _)| {
                    let (ns, name) = key.split_once('/')?;
                    self.cluster.pods.get(&(ns.to_string(), name.to_string()))
                }))
            }
        };
        // BIRD's `since` column shows whole seconds.
        let clock = self.clock.whole_secs();
        let crate::netd::Network::Calico(calico) = &mut self.network else {
            return false;
        };
        let changed = calico.reconcile(&nodes, rv, clock, &net, &work, &mut self.nodes);
        if calico.seen_rv().is_none() {
            // A node needs a full resync.
            let net = self.cluster_net();
            let crate::netd::Network::Calico(calico) = &mut self.network else {
                return changed;
            };
            calico.reconcile(
                &nodes,
                rv,
                clock,
                &net,
                &crate::netd::calico::FelixWork::All,
                &mut self.nodes,
            );
        }
        changed
    }

    /// The API writes after resourceVersion `since`, as a watcher of pods, policies,
    /// namespaces and nodes sees them: the pods' keys, and whether anything else changed.
    /// `None` when the watch window no longer reaches back that far (a relist).
    fn changes_since(&self, since: u64) -> Option<Changes> {
        use crate::cluster::ApiKind;
        let revs = &self.cluster.revs;
        let mut c = Changes::default();
        let mut oldest = u64::MAX;
        for e in revs.events.iter().rev() {
            if e.resource_version <= since {
                break;
            }
            oldest = e.resource_version;
            match e.kind {
                ApiKind::Pod => {
                    c.pods.insert(e.key.clone());
                }
                ApiKind::NetworkPolicy | ApiKind::Namespace | ApiKind::Node => c.others = true,
                _ => {}
            }
        }
        // Every write bumps the resourceVersion once and records one event: a gap means
        // the window dropped some.
        if revs.resource_version > since && oldest != since + 1 {
            return None;
        }
        Some(c)
    }

    /// Every node's cilium-agent (when the cluster runs Cilium) takes in what changed: nodes
    /// (podCIDR, InternalIP), pods, policies, namespaces, and the pods' sandbox IDs (the
    /// endpoints' container IDs, as the CNI plugin passed them). Cheap when nothing did.
    pub fn run_cilium(&mut self) -> bool {
        let crate::netd::Network::Cilium(cilium) = &self.network else {
            return false;
        };
        let info: Vec<(String, Option<ipnet::Ipv4Net>, Option<std::net::Ipv4Addr>)> = self
            .cluster
            .nodes
            .values()
            .map(|n| {
                (
                    n.name().to_string(),
                    n.spec.pod_cidr.parse().ok(),
                    n.status.internal_ip().and_then(|i| i.parse().ok()),
                )
            })
            .collect();
        let nodes: Vec<crate::netd::cilium::agent::CiliumNode<'_>> = info
            .iter()
            .map(|(name, cidr, ip)| crate::netd::cilium::agent::CiliumNode {
                name,
                pod_cidr: *cidr,
                ip: *ip,
            })
            .collect();
        let rv = self.cluster.revs.resource_version;
        if cilium.up_to_date(&nodes, rv) {
            return false;
        }
        let crate::netd::Network::Cilium(cilium) = &mut self.network else {
            return false;
        };
        cilium.reconcile(&nodes, rv, &mut self.nodes)
    }

    /// The Cilium agents' state (identities, ipcaches, endpoints, policy maps), when the
    /// cluster runs Cilium: built from the cluster on the first read after a change.
    pub fn cilium_state(&self) -> Option<&crate::netd::cilium::Cilium> {
        let crate::netd::Network::Cilium(c) = &self.network else {
            return None;
        };
        Some(c.state(|| {
            let ids: std::collections::BTreeMap<String, String> = self
                .nodes
                .values()
                .flat_map(|rt| {
                    rt.sandboxes
                        .iter()
                        .map(|(k, sb)| (k.clone(), sb.id.clone()))
                })
                .collect();
            (self.cluster_net(), ids)
        }))
    }

    /// The nodes alone as `crate::net` sees them (podCIDR, InternalIP, the bridge's address):
    /// all that route tables need, so they stay cheap with many pods.
    fn node_nets(&self) -> ClusterNet {
        let mut net = ClusterNet::default();
        for n in self.cluster.nodes.values() {
            let mut nn = NodeNet::new(
                n.name(),
                n.spec.pod_cidr.parse().ok(),
                n.status.internal_ip().and_then(|ip| ip.parse().ok()),
            );
            if let Some(rt) = self.nodes.get(n.name()) {
                // The bridge's address (flannel's cni0), or Cilium's router IP on cilium_host.
                nn.gateway = rt
                    .host
                    .root
                    .links
                    .values()
                    .find(|l| l.kind == crate::cni::host::LinkKind::Bridge && !l.addrs.is_empty())
                    .or_else(|| {
                        rt.host
                            .root
                            .links
                            .get(crate::netd::cilium::agent::HOST_DEV)
                            .filter(|_| rt.host.cilium.is_some())
                    })
                    .and_then(|l| l.addrs.first())
                    .and_then(|a| a.split('/').next())
                    .and_then(|a| a.parse::<IpAddr>().ok());
            }
            net.nodes.push(nn);
        }
        net
    }

    /// A node's main routing table in `ip route` form, as its kernel holds it: the
    /// connected routes of its addresses, and what the network daemon programmed.
    pub fn node_route_lines(&self, node: &str) -> Result<Vec<String>, String> {
        let rt = self
            .nodes
            .get(node)
            .ok_or_else(|| format!("Error from server (NotFound): nodes \"{node}\" not found"))?;
        Ok(rt
            .host
            .route_table()
            .iter()
            .map(|r| r.to_ip_route())
            .collect())
    }

    /// The network as `crate::net` sees it: nodes (podCIDR, InternalIP, cni0's address),
    /// pods (labels, IP, host veth), namespaces and policies.
    pub fn cluster_net(&self) -> ClusterNet {
        self.cluster_net_where(self.cluster.pods.values())
    }

    /// [`Lab::cluster_net`] with only the pods `keep` picks.
    fn cluster_net_where<'p>(
        &self,
        pods: impl Iterator<Item = &'p crate::cluster::Object<crate::cluster::objects::PodSpec>>,
    ) -> ClusterNet {
        let mut net = self.node_nets();
        for p in pods {
            let mut pn = PodNet::new(&p.metadata.namespace, p.name(), &p.spec.node_name);
            pn.labels = p.metadata.labels.clone();
            pn.ip = p.status.pod_ip.parse().ok();
            let sandbox = self
                .nodes
                .get(&p.spec.node_name)
                .and_then(|n| n.sandboxes.get(&p.key()));
            pn.netns = sandbox.map(|sb| sb.netns.clone());
            let root = self.nodes.get(&p.spec.node_name).map(|n| &n.host.root);
            pn.host_veth = sandbox
                .and_then(|sb| {
                    sb.result.interfaces.iter().find(|i| {
                        i.sandbox.is_empty()
                            && root.and_then(|r| r.links.get(&i.name)).is_some_and(|l| {
                                matches!(l.kind, crate::cni::host::LinkKind::Veth { .. })
                            })
                    })
                })
                .map(|i| i.name.clone())
                // A plugin that reports only the pod's interface (cilium-cni): the host end
                // of the pod's veth, its peer.
                .or_else(|| {
                    let sb = sandbox?;
                    let host = &self.nodes.get(&p.spec.node_name)?.host;
                    match &host.netns.get(&sb.netns)?.links.get(&pn.ifname)?.kind {
                        crate::cni::host::LinkKind::Veth { peer, peer_netns }
                            if peer_netns.is_empty() =>
                        {
                            Some(peer.clone())
                        }
                        _ => None,
                    }
                });
            net.pods.push(pn);
        }
        for ns in self.cluster.namespaces.values() {
            net.namespaces
                .insert(ns.name().to_string(), ns.metadata.labels.clone());
        }
        for p in self.cluster.policies.values() {
            net.policies.push(Policy {
                namespace: p.metadata.namespace.clone(),
                name: p.name().to_string(),
                spec: p.spec.clone(),
            });
        }
        net
    }

    /// Dispatch `policy …`.
    pub fn policy(&mut self, cmd: PolicyCmd) -> Result<Outcome, LabError> {
        match cmd {
            PolicyCmd::Create(a) => self.policy_create(&a),
            PolicyCmd::Delete { name, ns } => {
                self.cluster.policies().delete(&ns, &name)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(
                            format!("networkpolicy.networking.k8s.io \"{name}\""),
                            Role::Name,
                        )
                        .push(" deleted", Role::Good),
                );
                Ok(out)
            }
            PolicyCmd::List => Ok(self.policy_list()),
        }
    }

    fn policy_create(&mut self, a: &PolicyCreateArgs) -> Result<Outcome, LabError> {
        let spec = policy_spec(a).map_err(LabError::msg)?;
        crate::net::validate::validate_policy(&a.ns, &a.name, &spec)
            .map_err(|e| LabError::msg(format!("The {e}")))?;
        self.require_namespace(&a.ns)?;
        let obj = Object::new(&a.name, &a.ns, spec.defaulted());
        let clock = self.clock;
        let created = self.cluster.policies().create(obj, clock)?.clone();
        let (ingress, egress) = created.spec.effective_types();
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(
                    format!("networkpolicy.networking.k8s.io/{}", a.name),
                    Role::Name,
                )
                .push(" created", Role::Good),
        );
        let isolates = match (ingress, egress) {
            (true, true) => "ingress and egress",
            (true, false) => "ingress",
            (false, true) => "egress",
            (false, false) => "nothing",
        };
        out.line(Line::styled(
            format!(
                "  selects pods {} in {} · isolates {isolates}",
                created.spec.pod_selector.describe(),
                a.ns
            ),
            Role::Dim,
        ));
        Ok(out)
    }

    fn policy_list(&self) -> Outcome {
        let mut t = Table::new(&["NAMESPACE", "NAME", "POD-SELECTOR", "TYPES", "AGE"]);
        for p in self.cluster.policies.values() {
            t.row([
                p.metadata.namespace.clone(),
                p.name().to_string(),
                super::views::selector_column(&p.spec.pod_selector),
                p.spec.policy_types.join(","),
                super::views::age(self.clock, p.metadata.creation_tick),
            ]);
        }
        if t.is_empty() {
            let mut out = Outcome::empty();
            out.plain("No resources found");
            return out;
        }
        t.render()
    }

    fn flow(&self, net: &ClusterNet, a: &FlowArgs) -> Result<Flow, LabError> {
        let src = net
            .resolve(&a.src, "default")
            .map_err(|e| LabError::msg(e.to_string()))?;
        let dst = net
            .resolve(&a.dst, "default")
            .map_err(|e| LabError::msg(e.to_string()))?;
        let (port, protocol) = match &a.port {
            Some(p) => parse_port(p).map_err(LabError::msg)?,
            None => (80, Protocol::Tcp),
        };
        Ok(Flow {
            src,
            dst,
            port: Some(port),
            protocol,
        })
    }

    /// The nodes' kernels as the packet walker reads them.
    fn fabric<'a>(
        &'a self,
        bpf: Option<&'a dyn crate::net::bpf::BpfDatapath>,
    ) -> crate::net::trace::Fabric<'a> {
        let f = crate::net::trace::Fabric::new(
            self.nodes.iter().map(|(n, rt)| (n.as_str(), &rt.host)),
            |n| self.faults.node_down(n),
        );
        match bpf {
            Some(b) => f.with_bpf(b),
            None => f,
        }
    }

    /// Walk one packet of the flow (see [`crate::net::trace`]).
    pub fn walk(&self, a: &FlowArgs) -> Result<crate::net::trace::Trace, LabError> {
        self.walk_flow(a).map(|(trace, _)| trace)
    }

    /// [`Lab::walk`], with the flow as it was resolved.
    fn walk_flow(
        &self,
        a: &FlowArgs,
    ) -> Result<(crate::net::trace::Trace, super::seen::FlowSeen), LabError> {
        let net = self.cluster_net();
        let flow = self.flow(&net, a)?;
        let size = a.size.unwrap_or(crate::net::trace::DEFAULT_SIZE);
        let datapath = self
            .cilium_state()
            .map(crate::netd::cilium::agent::Datapath);
        let bpf = datapath
            .as_ref()
            .map(|d| d as &dyn crate::net::bpf::BpfDatapath);
        let trace = crate::net::trace::trace(
            &net,
            &self.fabric(bpf),
            &flow,
            size,
            self.network.enforcement(),
        )
        .map_err(|e| LabError::msg(e.to_string()))?;
        Ok((trace, flow_seen(&flow, size)))
    }

    /// `reach SRC DST [--port P[/PROTO]]`: the NetworkPolicy verdict on the packet as the
    /// enforcing hooks see it (a source rewritten on the way is what ingress judges).
    pub fn reach(&self, a: &FlowArgs) -> Result<(Outcome, super::seen::Seen), LabError> {
        let (trace, flow) = self.walk_flow(a)?;
        let verdict = &trace.verdict;
        let mut out = Outcome::empty();
        match trace.enforcement {
            crate::net::trace::Enforcement::None => {
                if verdict.allowed() {
                    out.line(Line::styled(verdict.text(), Role::Good));
                    if !self.cluster.policies.is_empty() {
                        out.line(Line::styled(
                            format!(
                                "  (whatever the policies said: {} enforces no NetworkPolicy)",
                                self.network.name()
                            ),
                            Role::Dim,
                        ));
                    }
                } else {
                    out.line(Line::styled(
                        format!(
                            "allowed: {}; {} enforces no NetworkPolicy, so nothing on the nodes drops it",
                            verdict.flow,
                            self.network.name()
                        ),
                        Role::Good,
                    ));
                    out.line(Line::styled(
                        format!(
                            "  the policies' verdict, which a network that enforces them would apply: {}",
                            verdict.text()
                        ),
                        Role::Dim,
                    ));
                }
            }
            _ => {
                let role = if trace.policy_allows() {
                    Role::Good
                } else {
                    Role::Bad
                };
                out.line(Line::styled(verdict.text(), role));
            }
        }
        // Where the deciding check sits on the packet's path (the hop `trace` numbers).
        let checks: Vec<(usize, &crate::net::trace::Hop)> = trace
            .hops
            .iter()
            .enumerate()
            .filter(|(_, h)| h.kind == crate::net::trace::HopKind::Policy)
            .collect();
        let decisive = checks
            .iter()
            .find(|(_, h)| h.allowed == Some(false))
            .or(checks.last());
        if let Some((i, h)) = decisive {
            out.line(Line::styled(
                format!("  judged at hop {} of `trace`: {}", i + 1, h.text),
                Role::Dim,
            ));
        } else if !trace.delivered() {
            out.line(Line::styled(
                format!(
                    "  the packet does not get that far: {}",
                    trace.result_line()
                ),
                Role::Dim,
            ));
        }
        if let Some(hop) = trace
            .hops
            .iter()
            .find(|h| h.kind == crate::net::trace::HopKind::Netfilter && h.rewrite.is_some())
        {
            out.line(Line::styled(
                format!("  the source is rewritten on the way ({}); ingress judges the rewritten source", hop.text),
                Role::Dim,
            ));
        }
        let enforced = trace.enforcement != crate::net::trace::Enforcement::None;
        let seen = super::seen::ReachSeen {
            flow,
            allowed: !enforced || trace.policy_allows(),
            enforced,
            policies_allow: verdict.allowed(),
            lines: out.lines.iter().map(|l| l.text()).collect(),
        };
        Ok((out, super::seen::Seen::Reach(Box::new(seen))))
    }

    /// `trace SRC DST [--port P[/PROTO]] [--size BYTES]`.
    pub fn trace(&self, a: &FlowArgs) -> Result<(Outcome, super::seen::Seen), LabError> {
        let (trace, flow) = self.walk_flow(a)?;
        let mut out = Outcome::empty();
        let lines = trace.lines();
        let last = lines.len().saturating_sub(1);
        for (i, l) in lines.into_iter().enumerate() {
            let role = if i == last {
                if trace.went_through() {
                    Role::Good
                } else {
                    Role::Bad
                }
            } else {
                Role::Plain
            };
            out.line(Line::styled(l, role));
        }
        Ok((
            out,
            super::seen::Seen::Trace(Box::new(trace_seen(&trace, flow))),
        ))
    }
}

/// A resolved flow as seen.
fn flow_seen(flow: &crate::net::policy::Flow, size: u32) -> super::seen::FlowSeen {
    use super::seen::Endpoint as Seen;
    use crate::net::view::Endpoint;
    let end = |e: &Endpoint| match e {
        Endpoint::Pod { namespace, name } => Seen::Pod(crate::cluster::ObjectRef::new(
            crate::cluster::ApiKind::Pod,
            namespace,
            name,
        )),
        Endpoint::Node(n) => Seen::Node(n.clone()),
        Endpoint::Ip(ip) => Seen::Ip(*ip),
    };
    super::seen::FlowSeen {
        src: end(&flow.src),
        dst: end(&flow.dst),
        port: flow.port.unwrap_or(0),
        protocol: flow.protocol.as_str(),
        size,
    }
}

/// A walked packet as seen.
fn trace_seen(
    trace: &crate::net::trace::Trace,
    flow: super::seen::FlowSeen,
) -> super::seen::TraceSeen {
    use super::seen::TraceEnd;
    use crate::net::trace::Outcome as End;
    super::seen::TraceSeen {
        flow,
        hops: trace
            .hops
            .iter()
            .map(|h| (h.kind, h.text.clone()))
            .collect(),
        routes: trace
            .hops
            .iter()
            .filter_map(|h| h.route.as_ref())
            .map(|(node, r)| (node.clone(), super::views::route_fact(r)))
            .collect(),
        end: match trace.outcome {
            End::Delivered(_) => TraceEnd::Delivered,
            End::Dropped { .. } => TraceEnd::Dropped,
            End::LeftCluster { .. } => TraceEnd::LeftCluster,
            End::NoRoute { .. } => TraceEnd::NoRoute,
        },
        result: trace.result_line(),
        rewrites: trace.hops.iter().filter_map(|h| h.rewrite).collect(),
        too_big: trace.too_big.clone(),
    }
}

pub use crate::cluster::policy::parse_port;

fn selector(text: &str) -> Result<LabelSelector, String> {
    let labels = super::validate::labels(text)?;
    Ok(LabelSelector {
        match_labels: labels,
        ..Default::default()
    })
}

/// A peer: `k=v` (pods in the policy's namespace), `ns:k=v` (namespaces), `cidr:X`.
fn peer(text: &str) -> Result<NetworkPolicyPeer, String> {
    let mut p = NetworkPolicyPeer::default();
    if let Some(rest) = text.strip_prefix("ns:") {
        p.namespace_selector = Some(selector(rest)?);
    } else if let Some(rest) = text.strip_prefix("cidr:") {
        p.ip_block = Some(crate::net::policy::IpBlock {
            cidr: rest.to_string(),
            except: Vec::new(),
        });
    } else {
        p.pod_selector = Some(selector(text)?);
    }
    Ok(p)
}

fn policy_port(text: &str) -> Result<NetworkPolicyPort, String> {
    let (range, proto) = match text.split_once('/') {
        Some((r, p)) => (r, Some(p)),
        None => (text, None),
    };
    // Kept as typed (upper-cased) so validation can name a bad protocol, as the apiserver does.
    let protocol = proto.map(|s| s.to_ascii_uppercase());
    let (port, end) = match range.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (range, None),
    };
    let num = |s: &str| -> Result<i32, String> {
        s.parse::<i32>().map_err(|_| {
            format!("invalid port {s:?}: expected P[/PROTO] or P-END[/PROTO], e.g. 3306/TCP")
        })
    };
    Ok(NetworkPolicyPort {
        protocol,
        port: Some(match port.parse::<i32>() {
            Ok(n) => IntOrString::Int(n),
            Err(_) => IntOrString::Str(port.to_string()),
        }),
        end_port: end.map(num).transpose()?,
    })
}

/// Build a NetworkPolicy spec from `policy create` flags.
fn policy_spec(a: &PolicyCreateArgs) -> Result<NetworkPolicySpec, String> {
    let ports = a
        .ports
        .iter()
        .map(|p| policy_port(p))
        .collect::<Result<Vec<_>, _>>()?;
    let types: Vec<String> = match &a.types {
        Some(t) => t
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => Vec::new(),
    };
    let mut spec = NetworkPolicySpec {
        pod_selector: selector(&a.select)?,
        policy_types: types.clone(),
        ..Default::default()
    };
    let wants_ingress = types.is_empty() || types.iter().any(|t| t == "Ingress");
    if !a.ingress_from.is_empty() || (a.egress_to.is_empty() && !ports.is_empty() && wants_ingress)
    {
        let from = a
            .ingress_from
            .iter()
            .filter(|p| p.as_str() != "all")
            .map(|p| peer(p))
            .collect::<Result<Vec<_>, _>>()?;
        spec.ingress.push(NetworkPolicyIngressRule {
            from,
            ports: ports.clone(),
        });
    }
    if !a.egress_to.is_empty() {
        let to = a
            .egress_to
            .iter()
            .filter(|p| p.as_str() != "all")
            .map(|p| peer(p))
            .collect::<Result<Vec<_>, _>>()?;
        spec.egress.push(NetworkPolicyEgressRule { to, ports });
    }
    Ok(spec)
}
