//! What the lab keeps per node besides the Node object: the node's kernel and disk as CNI
//! plugins see them, `/etc/cni/net.d`, libcni's result cache, and the pod sandboxes the
//! container runtime has created.

use crate::cni::conf::ConfDir;
use crate::cni::host::Host;
use crate::cni::runtime::{Network, ResultCache};
use crate::cni::types::CniResult;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// A pod sandbox as containerd keeps it: the RuntimeConf it ran the CNI chain with (its
/// ID and network namespace are that conf's `CNI_CONTAINERID` and `CNI_NETNS`, kept once)
/// and the chain's final result (the pod's IP is its first address).
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// The final CNI result.
    pub result: Arc<CniResult>,
    /// The RuntimeConf it was created with (needed again for DEL).
    pub rt: Arc<crate::cni::runtime::RuntimeConf>,
}

impl Sandbox {
    /// The 64-hex sandbox ID (CNI_CONTAINERID).
    pub fn id(&self) -> &str {
        &self.rt.container_id
    }

    /// The network namespace path (CNI_NETNS).
    pub fn netns(&self) -> &str {
        &self.rt.netns
    }

    /// The pod's IP: the first address of the CNI result without its prefix length.
    pub fn ip_addr(&self) -> Option<std::net::IpAddr> {
        self.result.ips.first().map(|i| i.address.addr())
    }

    /// [`Sandbox::ip_addr`] as text (empty when the result has no address).
    pub fn ip(&self) -> String {
        self.ip_addr().map(|ip| ip.to_string()).unwrap_or_default()
    }
}

/// Every node's runtime state, by node name. Boxed: a B-tree node holds up to eleven
/// values and moves them as it fills and splits, and a node's runtime is hundreds of bytes
/// (a 5,000-node cluster's map then holds and moves pointers).
pub type NodeRuntimes = BTreeMap<String, Box<NodeRuntime>>;

/// One node's runtime state.
#[derive(Debug, Clone)]
pub struct NodeRuntime {
    /// Kernel and disk.
    pub host: Host,
    /// `/etc/cni/net.d`.
    pub confdir: ConfDir,
    /// The network the runtime loaded from `confdir` (first file in lexical order), parsed
    /// the first time something needs it (see [`NodeRuntime::network`]).
    network: OnceLock<Result<Network, String>>,
    /// libcni's result cache.
    pub cache: ResultCache,
    /// Sandboxes by pod key (`ns/name`).
    pub sandboxes: BTreeMap<String, Sandbox>,
}

impl NodeRuntime {
    /// A node with a host namespace and an (unparsed) conf directory.
    pub fn new(host: Host, confdir: ConfDir) -> Self {
        NodeRuntime {
            host,
            confdir,
            network: OnceLock::new(),
            cache: ResultCache::new(),
            sandboxes: BTreeMap::new(),
        }
    }

    /// The network the runtime loaded from `/etc/cni/net.d`, or why there is none. Parsed
    /// on first use and kept until the directory changes: a node that never runs a pod
    /// never holds a parsed copy of its conflist (~11 KB, the largest part of a node; a
    /// 1,000-node preset builds 1,000 of them). The conf directory only changes through
    /// `cni conf load`, which calls [`reload_network`](Self::reload_network), so parsing
    /// later gives what parsing at load time gave.
    pub fn network(&self) -> &Result<Network, String> {
        self.network
            .get_or_init(|| self.confdir.active().map(|(_, list)| Network::new(list)))
    }

    /// The loaded network (as [`network`](Self::network)) beside the kernel and libcni's
    /// cache, borrowed together for one CNI call.
    pub(crate) fn network_host_cache(
        &mut self,
    ) -> (&Result<Network, String>, &mut Host, &mut ResultCache) {
        let confdir = &self.confdir;
        let network = self
            .network
            .get_or_init(|| confdir.active().map(|(_, list)| Network::new(list)));
        (network, &mut self.host, &mut self.cache)
    }

    /// Re-read `/etc/cni/net.d` the way the runtime does when the directory changes.
    pub(crate) fn reload_network(&mut self) {
        self.network = OnceLock::new();
    }
}
