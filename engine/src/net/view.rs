//! The input view: plain data the engine builds from its Node, Pod, Namespace and
//! NetworkPolicy objects. Cheap to build (owned strings, no references into the store).

use super::NetError;
use super::policy::{NetworkPolicySpec, Protocol};
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// The label every namespace carries, set by the apiserver since Kubernetes 1.22
/// (`NamespaceDefaultLabelName` in k8s.io/api core/v1): `kubernetes.io/metadata.name=<ns>`.
pub(crate) const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// One node's networking, as the Node object and the node's kernel show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNet {
    /// Node name (`node-1`).
    pub name: String,
    /// `spec.podCIDR`, if the node has one.
    pub pod_cidr: Option<IpNet>,
    /// `status.addresses[type=InternalIP]`, the address of the uplink.
    pub internal_ip: Option<IpAddr>,
    /// The address of the bridge pods are attached to (isGateway; whatever the bridge is
    /// called), set once the first pod was networked on the node.
    pub gateway: Option<IpAddr>,
}

impl NodeNet {
    /// A node whose bridge has no address yet.
    pub fn new(name: &str, pod_cidr: Option<IpNet>, internal_ip: Option<IpAddr>) -> Self {
        NodeNet {
            name: name.to_string(),
            pod_cidr,
            internal_ip,
            gateway: None,
        }
    }

    /// True if `ip` is one of the node's own addresses (InternalIP or bridge address).
    pub fn owns(&self, ip: IpAddr) -> bool {
        self.internal_ip == Some(ip) || self.gateway == Some(ip)
    }
}

/// A port a container declares (`spec.containers[].ports[]`), used for named ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPort {
    /// The port's name (`http`).
    pub name: String,
    /// The port number.
    pub container_port: u16,
    /// Its protocol.
    pub protocol: Protocol,
}

/// One pod's networking: where it runs, its labels and what CNI gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodNet {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The node it is scheduled on.
    pub node: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `status.podIP`, once the sandbox network is up.
    pub ip: Option<IpAddr>,
    /// A dual-stack pod's other address (`status.podIPs[1]`): a policy selects the pod at
    /// either.
    pub second_ip: Option<IpAddr>,
    /// The host end of its veth pair (`veth1a2b3c4d`).
    pub host_veth: Option<String>,
    /// The path of its sandbox's network namespace on the node (`/var/run/netns/cni-…`).
    pub netns: Option<String>,
    /// The interface inside the pod (`eth0`).
    pub ifname: String,
    /// Named container ports (for `port: "http"` in policies).
    pub ports: Vec<ContainerPort>,
}

impl PodNet {
    /// A pod with no labels, no IP yet, interface `eth0`.
    pub fn new(namespace: &str, name: &str, node: &str) -> Self {
        PodNet {
            namespace: namespace.to_string(),
            name: name.to_string(),
            node: node.to_string(),
            labels: BTreeMap::new(),
            ip: None,
            second_ip: None,
            host_veth: None,
            netns: None,
            ifname: "eth0".to_string(),
            ports: Vec::new(),
        }
    }

    /// `namespace/name`, as the verdicts print it.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A NetworkPolicy: where it lives and its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec`.
    pub spec: NetworkPolicySpec,
}

impl Policy {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A question asked of a [`ClusterNet`]'s pods, noted when the view was made with
/// [`ClusterNet::noting`]: the engine then knows which pods the packet walker needed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Asked {
    /// The pod `namespace/name`.
    Pod(String, String),
    /// The pods whose `status.podIP` is this address.
    Ip(IpAddr),
    /// The pods on this node.
    Node(String),
}

/// Everything the network questions need, as plain data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterNet {
    /// Nodes.
    pub nodes: Vec<NodeNet>,
    /// Pods.
    pub pods: Vec<PodNet>,
    /// Namespaces and their labels (without the automatic name label, which
    /// [`ClusterNet::namespace_labels`] adds). A namespace a pod uses but not listed here
    /// is treated as existing with no labels of its own.
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// NetworkPolicies, in any order.
    pub policies: Vec<Policy>,
    /// The questions asked of the pods so far, when they are noted (see
    /// [`ClusterNet::noting`]).
    pub(crate) asked: Option<std::cell::RefCell<std::collections::BTreeSet<Asked>>>,
}

/// One end of a flow: a pod, a node (its host network namespace) or any IP address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Endpoint {
    /// A pod by namespace and name.
    Pod {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A node by name.
    Node(String),
    /// An address that is not a pod's or a node's (outside the cluster).
    Ip(IpAddr),
}

impl Endpoint {
    /// A pod endpoint.
    pub fn pod(namespace: &str, name: &str) -> Self {
        Endpoint::Pod {
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// An endpoint looked up in the view.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Resolved<'a> {
    Pod(&'a PodNet),
    Node(&'a NodeNet),
    Ip(IpAddr),
}

impl Resolved<'_> {
    /// The address traffic from or to this endpoint carries.
    pub(crate) fn ip(&self) -> Option<IpAddr> {
        match self {
            Resolved::Pod(p) => p.ip,
            Resolved::Node(n) => n.internal_ip,
            Resolved::Ip(ip) => Some(*ip),
        }
    }

    /// How verdicts and traces name it (`default/web`, `node-1`, `8.8.8.8`).
    pub(crate) fn label(&self) -> String {
        match self {
            Resolved::Pod(p) => p.key(),
            Resolved::Node(n) => n.name.clone(),
            Resolved::Ip(ip) => ip.to_string(),
        }
    }
}

impl ClusterNet {
    /// A view that notes every question asked of its pods ([`ClusterNet::take_asked`]):
    /// one made with only some of the cluster's pods answers like the whole cluster as
    /// long as it holds every pod that answers each question asked.
    pub(crate) fn noting(self) -> Self {
        ClusterNet {
            asked: Some(Default::default()),
            ..self
        }
    }

    /// The questions asked of the pods since the last call (none unless noting).
    pub(crate) fn take_asked(&self) -> std::collections::BTreeSet<Asked> {
        self.asked
            .as_ref()
            .map(|a| std::mem::take(&mut *a.borrow_mut()))
            .unwrap_or_default()
    }

    /// Ask about every pod held: the pods on its node and those at its address (what a
    /// walk from or to it usually asks next).
    pub(crate) fn ask_around(&self) {
        for p in &self.pods {
            self.note(|| Asked::Node(p.node.clone()));
            for ip in p.ip.into_iter().chain(p.second_ip) {
                self.note(|| Asked::Ip(ip));
            }
        }
    }

    fn note(&self, q: impl FnOnce() -> Asked) {
        if let Some(a) = &self.asked {
            a.borrow_mut().insert(q());
        }
    }

    /// The node with this name.
    pub fn node(&self, name: &str) -> Option<&NodeNet> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The pod with this namespace and name.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&PodNet> {
        self.note(|| Asked::Pod(namespace.to_string(), name.to_string()));
        self.pods
            .iter()
            .find(|p| p.namespace == namespace && p.name == name)
    }

    /// The first pod (in the order of [`ClusterNet::pods`]) with `ip` among its
    /// `status.podIPs`.
    pub(crate) fn pod_with_ip(&self, ip: IpAddr) -> Option<&PodNet> {
        self.note(|| Asked::Ip(ip));
        self.pods
            .iter()
            .find(|p| p.ip == Some(ip) || p.second_ip == Some(ip))
    }

    /// The first pod on `node` that `pred` accepts.
    pub(crate) fn pod_on_node(
        &self,
        node: &str,
        pred: impl Fn(&PodNet) -> bool,
    ) -> Option<&PodNet> {
        self.note(|| Asked::Node(node.to_string()));
        self.pods.iter().find(|p| p.node == node && pred(p))
    }

    /// A namespace's labels, including `kubernetes.io/metadata.name=<ns>` as the apiserver
    /// sets it on every namespace.
    pub(crate) fn namespace_labels(&self, namespace: &str) -> BTreeMap<String, String> {
        let mut labels = self.namespaces.get(namespace).cloned().unwrap_or_default();
        labels.insert(NAMESPACE_NAME_LABEL.to_string(), namespace.to_string());
        labels
    }

    /// Turn a word from the command line into an endpoint: `ns/pod`, a pod name in
    /// `default_ns`, a node name, or an IP address (a pod's or node's address resolves to
    /// that pod or node).
    pub fn resolve(&self, word: &str, default_ns: &str) -> Result<Endpoint, NetError> {
        if let Some((ns, name)) = word.split_once('/') {
            return match self.pod(ns, name) {
                Some(_) => Ok(Endpoint::pod(ns, name)),
                None => Err(NetError::PodNotFound {
                    namespace: ns.to_string(),
                    name: name.to_string(),
                }),
            };
        }
        if let Ok(ip) = word.parse::<IpAddr>() {
            return Ok(self.endpoint_for_ip(ip));
        }
        if self.pod(default_ns, word).is_some() {
            return Ok(Endpoint::pod(default_ns, word));
        }
        if self.node(word).is_some() {
            return Ok(Endpoint::Node(word.to_string()));
        }
        Err(NetError::Unresolvable(word.to_string()))
    }

    /// The endpoint that owns an address: a pod (by `status.podIP`), a node (InternalIP or
    /// bridge address), or else the bare address.
    pub(crate) fn endpoint_for_ip(&self, ip: IpAddr) -> Endpoint {
        if let Some(p) = self.pod_with_ip(ip) {
            return Endpoint::pod(&p.namespace, &p.name);
        }
        if let Some(n) = self.nodes.iter().find(|n| n.owns(ip)) {
            return Endpoint::Node(n.name.clone());
        }
        Endpoint::Ip(ip)
    }

    /// What an address on a packet is: the pod holding it, else the node, else the address.
    pub(crate) fn resolve_ip(&self, ip: IpAddr) -> Resolved<'_> {
        match self.pod_with_ip(ip) {
            Some(p) => Resolved::Pod(p),
            None => match self.nodes.iter().find(|n| n.owns(ip)) {
                Some(n) => Resolved::Node(n),
                None => Resolved::Ip(ip),
            },
        }
    }

    pub(crate) fn lookup(&self, ep: &Endpoint) -> Result<Resolved<'_>, NetError> {
        match ep {
            Endpoint::Pod { namespace, name } => self
                .pod(namespace, name)
                .map(Resolved::Pod)
                .ok_or_else(|| NetError::PodNotFound {
                    namespace: namespace.clone(),
                    name: name.clone(),
                }),
            Endpoint::Node(name) => self
                .node(name)
                .map(Resolved::Node)
                .ok_or_else(|| NetError::NodeNotFound(name.clone())),
            // An address that belongs to a pod or a node is that pod or node.
            Endpoint::Ip(ip) => Ok(match self.pod_with_ip(*ip) {
                Some(p) => Resolved::Pod(p),
                None => match self.nodes.iter().find(|n| n.owns(*ip)) {
                    Some(n) => Resolved::Node(n),
                    None => Resolved::Ip(*ip),
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> ClusterNet {
        let mut n1 = NodeNet::new(
            "node-1",
            "10.244.1.0/24".parse().ok(),
            "192.168.0.1".parse().ok(),
        );
        n1.gateway = "10.244.1.1".parse().ok();
        let mut web = PodNet::new("default", "web", "node-1");
        web.ip = "10.244.1.2".parse().ok();
        ClusterNet {
            nodes: vec![n1],
            pods: vec![web, PodNet::new("prod", "db", "node-1")],
            ..Default::default()
        }
    }

    #[test]
    fn namespaces_carry_their_name_label() {
        let mut n = net();
        n.namespaces
            .insert("prod".into(), [("team".into(), "a".into())].into());
        let l = n.namespace_labels("prod");
        assert_eq!(l.get("kubernetes.io/metadata.name").unwrap(), "prod");
        assert_eq!(l.get("team").unwrap(), "a");
        assert_eq!(n.namespace_labels("default").len(), 1);
    }

    #[test]
    fn resolve_words() {
        let n = net();
        assert_eq!(
            n.resolve("web", "default").unwrap(),
            Endpoint::pod("default", "web")
        );
        assert_eq!(
            n.resolve("prod/db", "default").unwrap(),
            Endpoint::pod("prod", "db")
        );
        assert_eq!(
            n.resolve("node-1", "default").unwrap(),
            Endpoint::Node("node-1".into())
        );
        assert_eq!(
            n.resolve("10.244.1.2", "default").unwrap(),
            Endpoint::pod("default", "web")
        );
        assert_eq!(
            n.resolve("10.244.1.1", "default").unwrap(),
            Endpoint::Node("node-1".into())
        );
        assert_eq!(
            n.resolve("8.8.8.8", "default").unwrap(),
            Endpoint::Ip("8.8.8.8".parse().unwrap())
        );
        assert_eq!(
            n.resolve("db", "default").unwrap_err().to_string(),
            "\"db\" is not a pod, a node or an IP address"
        );
        assert_eq!(
            n.resolve("default/db", "default").unwrap_err().to_string(),
            "pods \"db\" not found in namespace \"default\""
        );
        // kubectl's KIND/NAME is read as NAMESPACE/NAME here (the engine, which knows the
        // kinds' names, turns it into [`NetError::KindSlashName`]).
        assert_eq!(
            n.resolve("pod/web", "default"),
            Err(NetError::PodNotFound {
                namespace: "pod".into(),
                name: "web".into()
            })
        );
    }
}
