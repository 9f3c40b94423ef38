//! The network's daemons as the engine drives them (`crate::netd::Network`: a Node event,
//! the pass after each command), NetworkPolicy commands, `reach`, `trace` and the node route
//! view: the plain-data [`ClusterNet`] is built from the objects and the node kernels
//! (`crate::netd::view`), and `crate::net` is asked.

use super::{Lab, LabError};
use crate::cluster::Object;
use crate::cluster::selector::LabelSelector;
use crate::command::grammar::{FlowArgs, PolicyCmd, PolicyCreateArgs};
use crate::net::policy::{
    IntOrString, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec, Protocol,
};
use crate::net::{ClusterNet, Flow};
use crate::render::{Line, Outcome, Role, Table};

impl Lab {
    /// The running network's `--network` name (`flannel-host-gw`).
    pub fn network_name(&self) -> &'static str {
        self.network.name()
    }

    /// The network's daemons, and what they are handed (see `crate::netd::Ctx`).
    fn daemons(&mut self) -> (&mut dyn crate::netd::Network, crate::netd::Ctx<'_>) {
        let cx = crate::netd::Ctx {
            api: &self.cluster,
            faults: &self.faults,
            clock: self.clock,
            calls: &mut self.calls,
            nodes: &mut self.nodes,
        };
        (self.network.as_mut(), cx)
    }

    /// The network's DaemonSet rolls out: every node's daemon lists what it watches.
    pub(crate) fn network_start(&mut self) {
        let (network, mut cx) = self.daemons();
        network.start(&mut cx);
    }

    /// The network's daemons learn of a new Node (and one starts on it).
    pub(crate) fn network_node_added(&mut self, node: &str) {
        let (network, mut cx) = self.daemons();
        network.node_added(&mut cx, node);
    }

    /// The network's daemons take in what the last command changed.
    pub(crate) fn network_sync(&mut self) {
        let (network, mut cx) = self.daemons();
        network.sync(&mut cx);
    }

    /// What a view of the network reads: the API objects and the nodes.
    pub(crate) fn network_view(&self) -> crate::netd::View<'_> {
        crate::netd::View {
            api: &self.cluster,
            nodes: &self.nodes,
        }
    }

    /// A node's main routing table as `ip route` and `ip -6 route` print it, as its kernel
    /// holds it: the connected routes of its addresses, and what the network daemon
    /// programmed.
    pub fn node_routes(&self, node: &str) -> Result<super::views::RouteTables, String> {
        let rt = self
            .nodes
            .get(node)
            .ok_or_else(|| format!("Error from server (NotFound): nodes \"{node}\" not found"))?;
        let host = &rt.host;
        Ok(super::views::route_tables(
            host,
            &host.root,
            host.route_table(),
        ))
    }

    /// The network as `crate::net` sees it: nodes (podCIDR, InternalIP, cni0's address),
    /// pods (labels, IP, host veth), namespaces and policies.
    pub(crate) fn cluster_net(&self) -> ClusterNet {
        crate::netd::view::cluster_net(&self.network_view())
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
            .map_err(|e| LabError::from(super::invalid::Invalid::from(e)))?;
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
                p.metadata.namespace().clone(),
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
        let src = net.resolve(&a.src, "default").map_err(kind_slash_name)?;
        let dst = net.resolve(&a.dst, "default").map_err(kind_slash_name)?;
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
        let f = crate::net::trace::Fabric::new(LabKernels {
            nodes: &self.nodes,
            faults: &self.faults,
        });
        match bpf {
            Some(b) => f.with_bpf(b),
            None => f,
        }
    }

    /// Walk one packet of the flow (see [`crate::net::trace`]).
    pub fn walk(&self, a: &FlowArgs) -> Result<crate::net::trace::Trace, LabError> {
        self.walk_flow(a).map(|(trace, _)| trace)
    }

    /// [`Lab::walk`], with the flow as it was resolved. The walker starts with a view of
    /// the nodes and no pods, and is handed the pods its questions name (by key, by
    /// address, by node: see `crate::netd::view::answer`) until it asked for none it did
    /// not hold: it is deterministic, so that last walk is the walk over every pod.
    fn walk_flow(
        &self,
        a: &FlowArgs,
    ) -> Result<(crate::net::trace::Trace, super::seen::FlowSeen), LabError> {
        let view = self.network_view();
        #[cfg(debug_assertions)]
        self.cluster
            .fields
            .assert_matches(&self.cluster.nodes, &self.cluster.pods);
        let bpf = self
            .network
            .bpf(&view)
            .map(|c| c as &dyn crate::net::bpf::BpfDatapath);
        let fabric = self.fabric(bpf);
        let size = a.size.unwrap_or(crate::net::trace::DEFAULT_SIZE);
        // `trace web 10.244.2.1`: the packet goes to that address, whoever holds it.
        let to = a.dst.parse::<std::net::IpAddr>().ok();
        let mut net = crate::netd::view::walk_net(&view);
        // First the pods the flow's words name, then the pods on their nodes and at their
        // addresses: most walks ask for nothing more, and are walked once.
        let _ = self.flow(&net, a);
        crate::netd::view::answer(&view, &mut net);
        net.ask_around();
        crate::netd::view::answer(&view, &mut net);
        loop {
            let walked = self.flow(&net, a).and_then(|flow| {
                crate::net::trace::trace(&net, &fabric, &flow, to, size, self.network.enforcement())
                    .map(|trace| (trace, flow_seen(&flow, size)))
                    .map_err(|e| LabError::msg(e.to_string()))
            });
            if !crate::netd::view::answer(&view, &mut net) {
                #[cfg(debug_assertions)]
                self.assert_walk_as_over_every_pod(a, &fabric, &walked);
                return walked;
            }
        }
    }

    /// Debug builds: the walk over the pods the walker asked for is the walk over every
    /// pod.
    #[cfg(debug_assertions)]
    fn assert_walk_as_over_every_pod(
        &self,
        a: &FlowArgs,
        fabric: &crate::net::trace::Fabric<'_>,
        walked: &Result<(crate::net::trace::Trace, super::seen::FlowSeen), LabError>,
    ) {
        let net = self.cluster_net();
        let size = a.size.unwrap_or(crate::net::trace::DEFAULT_SIZE);
        let to = a.dst.parse::<std::net::IpAddr>().ok();
        let full = self.flow(&net, a).and_then(|flow| {
            crate::net::trace::trace(&net, fabric, &flow, to, size, self.network.enforcement())
                .map_err(|e| LabError::msg(e.to_string()))
        });
        match (walked, full) {
            (Ok((t, _)), Ok(f)) => assert_eq!(*t, f, "the walk over the asked pods differs"),
            (Err(e), Err(f)) => assert_eq!(e.message, f.message),
            (w, f) => panic!(
                "the walk over the asked pods differs: {:?} vs {:?}",
                w.as_ref().map(|_| ()).map_err(|e| &e.message),
                f.map(|_| ()).map_err(|e| e.message)
            ),
        }
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
            _ if trace.policy_allows() == verdict.allowed() => {
                let role = if verdict.allowed() {
                    Role::Good
                } else {
                    Role::Bad
                };
                out.line(Line::styled(verdict.text(), role));
            }
            _ => {
                // The datapath decides otherwise than the policies read as the API defines
                // them (Cilium matches a pod by its identity, never by an ipBlock): what
                // happens to the packet is the answer, the API's reading is beside it.
                let (word, does, role, would) = if trace.policy_allows() {
                    ("allowed", "lets it through", Role::Good, "deny")
                } else {
                    ("denied", "drops it", Role::Bad, "allow")
                };
                out.line(Line::styled(
                    format!(
                        "{word}: {}; {}'s datapath {does} (the hop below)",
                        verdict.flow,
                        self.network.name()
                    ),
                    role,
                ));
                out.line(Line::styled(
                    format!(
                        "  the policies as the Kubernetes API defines them would {would} it: {}",
                        verdict.text()
                    ),
                    Role::Dim,
                ));
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
                format!("  judged at hop {} of `trace`: {}", i + 1, h.line()),
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
                format!("  the source is rewritten on the way ({}); ingress judges the rewritten source", hop.line()),
                Role::Dim,
            ));
        }
        let enforced = trace.enforcement != crate::net::trace::Enforcement::None;
        let seen = super::seen::ReachSeen {
            flow,
            allowed: !enforced || trace.policy_allows(),
            enforced,
            policies_allow: verdict.allowed(),
            verdict: verdict.clone(),
            lines: out.lines().map(|l| l.text()).collect(),
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
        hops: trace.hops.clone(),
        routes: trace
            .hops
            .iter()
            .filter_map(|h| h.node_route())
            .map(|(node, r)| (node.to_string(), super::views::route_fact(r)))
            .collect(),
        end: match trace.outcome {
            End::Delivered(_) => TraceEnd::Delivered,
            End::Dropped { .. } => TraceEnd::Dropped,
            End::LeftCluster { .. } => TraceEnd::LeftCluster,
            End::NoRoute { .. } => TraceEnd::NoRoute,
            End::Conflict { .. } => TraceEnd::Conflict,
        },
        result: trace.result_line(),
        rewrites: trace.hops.iter().filter_map(|h| h.rewrite).collect(),
        too_big: trace.too_big.clone(),
    }
}

pub use crate::cluster::policy::parse_port;

fn selector(text: &str) -> Result<LabelSelector, String> {
    // kubectl's label selector parser judges the text first (`a=b,,`: "found ',',
    // expected: identifier after ','"); the lab's policies take its `k=v` pairs.
    crate::cluster::label_query::parse(text)?;
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

/// The lab's nodes' kernels, as the packet walker reads them (see
/// [`crate::net::trace::Kernels`]).
struct LabKernels<'a> {
    nodes: &'a crate::node::NodeRuntimes,
    faults: &'a crate::faults::Faults,
}

impl<'a> crate::net::trace::Kernels<'a> for LabKernels<'a> {
    fn host(&self, node: &str) -> Option<&'a crate::cni::host::Host> {
        self.nodes.get(node).map(|rt| &rt.host)
    }

    fn hosts(&self) -> Box<dyn Iterator<Item = &'a crate::cni::host::Host> + '_> {
        Box::new(self.nodes.values().map(|rt| &rt.host))
    }

    fn is_down(&self, node: &str) -> bool {
        self.faults.node_down(node)
    }
}

/// A word the network could not resolve, as the learner reads it: kubectl's `KIND/NAME`
/// (`pod/web`, `po/web`, `node/node-1`) is the lab's `NAMESPACE/NAME` here, and a pod not
/// found in a namespace named like a kind says what to write instead.
fn kind_slash_name(e: crate::net::NetError) -> LabError {
    if let crate::net::NetError::PodNotFound { namespace, name } = &e
        && crate::resource::lookup(namespace).is_some()
    {
        return LabError::msg(format!(
            "{e}: `{namespace}/{name}` reads as NAMESPACE/NAME here; name a pod as `{name}` or `NAMESPACE/{name}`, a node by its name, or an IP address"
        ));
    }
    LabError::msg(e.to_string())
}
