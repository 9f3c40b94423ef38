//! What the lab keeps per node besides the Node object: the node's kernel and disk as CNI
//! plugins see them, `/etc/cni/net.d`, libcni's result cache, and the pod sandboxes the
//! container runtime has created.

use crate::cni::conf::ConfDir;
use crate::cni::host::Host;
use crate::cni::runtime::{Network, ResultCache};
use crate::cni::types::CniResult;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A pod sandbox as containerd keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// The 64-hex sandbox ID (CNI_CONTAINERID).
    pub id: String,
    /// The network namespace path (CNI_NETNS).
    pub netns: String,
    /// The pod's IP from the CNI result.
    pub ip: String,
    /// The final CNI result.
    pub result: Arc<CniResult>,
    /// Capability arguments it was created with (needed again for DEL).
    pub rt: Arc<crate::cni::runtime::RuntimeConf>,
}

/// One node's runtime state.
#[derive(Debug, Clone)]
pub struct NodeRuntime {
    /// Kernel and disk.
    pub host: Host,
    /// `/etc/cni/net.d`.
    pub confdir: ConfDir,
    /// The network the runtime loaded from `confdir` (first file in lexical order).
    pub network: Result<Network, String>,
    /// libcni's result cache.
    pub cache: ResultCache,
    /// Sandboxes by pod key (`ns/name`).
    pub sandboxes: BTreeMap<String, Sandbox>,
}

impl NodeRuntime {
    /// A node with a host namespace and an (unparsed) conf directory.
    pub fn new(host: Host, confdir: ConfDir) -> Self {
        let mut n = NodeRuntime {
            host,
            confdir,
            network: Err(String::new()),
            cache: ResultCache::new(),
            sandboxes: BTreeMap::new(),
        };
        n.reload_network();
        n
    }

    /// Re-read `/etc/cni/net.d` the way the runtime does when the directory changes.
    pub fn reload_network(&mut self) {
        self.network = self.confdir.active().map(|(_, list)| Network::new(list));
    }
}
