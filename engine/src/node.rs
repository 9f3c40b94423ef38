//! What the lab keeps per node besides the Node object: the node's kernel and disk as CNI
//! plugins see them, `/etc/cni/net.d`, libcni's result cache, and the pod sandboxes the
//! container runtime has created.

use crate::cluster::store::SharedKey;
use crate::cni::conf::ConfDir;
use crate::cni::host::Host;
use crate::cni::result_cache::ResultCache;
use crate::cni::runtime::Network;
use crate::cni::types::CniResult;
use crate::util::vec_map::VecMap;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// A pod sandbox as containerd keeps it: the RuntimeConf it ran the CNI chain with (its
/// ID and network namespace are that conf's `CNI_CONTAINERID` and `CNI_NETNS`, kept once)
/// and the chain's final result (its addresses: [`sandbox_ips`]).
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

    /// The sandbox's primary address as containerd reports it (`PodSandboxStatus.network.ip`):
    /// see [`sandbox_ips`].
    pub fn ip_addr(&self) -> Option<std::net::IpAddr> {
        sandbox_ips(&self.result).next()
    }

    /// [`Sandbox::ip_addr`] as text (empty when the result has no address).
    pub fn ip(&self) -> String {
        self.ip_addr().map(|ip| ip.to_string()).unwrap_or_default()
    }
}

/// The pod's default interface, where containerd looks for the sandbox's addresses
/// (`defaultIfName`).
pub const DEFAULT_IFNAME: &str = "eth0";

/// The addresses containerd reports for a sandbox (`ip`, then `additional_ips`), from the
/// CNI result as go-cni groups it: the addresses whose `interface` names `eth0`, or that name
/// no interface (go-cni gives those to the default interface), without their prefix lengths.
/// containerd's `selectPodIPs` with its default `ip_pref` (`ipv4`): the first IPv4 address
/// comes first, then every other address in the result's order. Empty when `eth0` has no
/// address, which containerd refuses: `failed to find network info for sandbox`.
pub fn sandbox_ips(result: &CniResult) -> impl Iterator<Item = std::net::IpAddr> + '_ {
    let on_eth0 = move |ip: &&crate::cni::types::IpConfig| match ip
        .interface
        .map(crate::cni::types::IfIndex::get)
    {
        None => true,
        Some(i) => result
            .interfaces
            .get(i)
            .is_some_and(|intf| intf.name == DEFAULT_IFNAME),
    };
    let ips = || {
        result
            .ips
            .iter()
            .filter(on_eth0)
            .map(|ip| ip.address.addr())
    };
    let first = ips().position(|ip| ip.is_ipv4()).unwrap_or(0);
    ips().nth(first).into_iter().chain(
        ips()
            .enumerate()
            .filter(move |(i, _)| *i != first)
            .map(|(_, ip)| ip),
    )
}

/// A pod's key in a node's [`Sandboxes`]: the store's shared (namespace, name), ordered
/// and compared as its `ns/name` text is (`a-b/x` comes before `a/x`), printed as that text.
#[derive(Clone)]
pub struct PodKey(SharedKey);

// One a pod on every node: the store's key, shared, in place of an `ns/name` string.
const _: () = assert!(std::mem::size_of::<(PodKey, Sandbox)>() <= 24);

/// The bytes of the text `ns/name`.
fn key_text<'a>(namespace: &'a str, name: &'a str) -> impl Iterator<Item = u8> + 'a {
    namespace.bytes().chain([b'/']).chain(name.bytes())
}

impl PodKey {
    /// The pod's namespace.
    pub fn namespace(&self) -> &str {
        &self.0.0
    }

    /// The pod's name.
    pub fn name(&self) -> &str {
        &self.0.1
    }

    /// How this key's text orders against `namespace/name`.
    fn cmp_parts(&self, namespace: &str, name: &str) -> Ordering {
        if self.namespace() == namespace {
            self.name().cmp(name)
        } else {
            key_text(self.namespace(), self.name()).cmp(key_text(namespace, name))
        }
    }

    /// How this key's text orders against `text`.
    fn cmp_text(&self, text: &str) -> Ordering {
        match text
            .strip_prefix(self.namespace())
            .and_then(|rest| rest.strip_prefix('/'))
        {
            Some(name) => self.name().cmp(name),
            None => key_text(self.namespace(), self.name()).cmp(text.bytes()),
        }
    }
}

impl Ord for PodKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_parts(other.namespace(), other.name())
    }
}

impl PartialOrd for PodKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PodKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PodKey {}

/// The text `ns/name`.
impl std::fmt::Display for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace(), self.name())
    }
}

/// As the text `ns/name`'s own `Debug` (quoted).
impl std::fmt::Debug for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// The text `ns/name` equals `other`.
impl PartialEq<str> for PodKey {
    fn eq(&self, other: &str) -> bool {
        self.cmp_text(other) == Ordering::Equal
    }
}

/// A node's sandboxes by pod, in the order of the pods' `ns/name` keys, read by that text
/// (`get("default/web")`) or by the key's parts. One a pod on every node, so a [`VecMap`],
/// whose room is about its entries, keyed by the store's shared key.
#[derive(Debug, Clone, Default)]
pub struct Sandboxes(VecMap<PodKey, Sandbox>);

impl Sandboxes {
    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The sandbox of the pod whose key is `key` (`ns/name`).
    pub fn get(&self, key: &str) -> Option<&Sandbox> {
        self.0.get_by(|k| k.cmp_text(key)).map(|(_, sb)| sb)
    }

    /// The sandbox of pod `name` in `namespace`.
    pub fn get_pod(&self, namespace: &str, name: &str) -> Option<&Sandbox> {
        self.0
            .get_by(|k| k.cmp_parts(namespace, name))
            .map(|(_, sb)| sb)
    }

    /// Whether the pod whose key is `key` (`ns/name`) has one.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Put `sandbox` under the pod stored under `pod`, returning the one it replaces.
    pub fn insert(&mut self, pod: SharedKey, sandbox: Sandbox) -> Option<Sandbox> {
        self.0.insert(PodKey(pod), sandbox)
    }

    /// Take out the sandbox of pod `name` in `namespace`.
    pub fn remove_pod(&mut self, namespace: &str, name: &str) -> Option<Sandbox> {
        self.0.remove_by(|k| k.cmp_parts(namespace, name))
    }

    /// The pods' keys and sandboxes, in key order.
    pub fn iter(&self) -> crate::util::vec_map::Iter<'_, PodKey, Sandbox> {
        self.0.iter()
    }

    /// The pods' keys, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &PodKey> {
        self.0.keys()
    }

    /// The sandboxes, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Sandbox> {
        self.0.values()
    }
}

impl<'a> IntoIterator for &'a Sandboxes {
    type Item = (&'a PodKey, &'a Sandbox);
    type IntoIter = crate::util::vec_map::Iter<'a, PodKey, Sandbox>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::ops::Index<&str> for Sandboxes {
    type Output = Sandbox;

    /// The sandbox of the pod whose key is `key`; panics when there is none.
    fn index(&self, key: &str) -> &Sandbox {
        self.get(key).expect("no sandbox for the pod")
    }
}

impl std::ops::Index<&String> for Sandboxes {
    type Output = Sandbox;

    /// The sandbox of the pod whose key is `key`; panics when there is none.
    fn index(&self, key: &String) -> &Sandbox {
        &self[key.as_str()]
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
    /// Sandboxes by pod, in the order of the pods' `ns/name` keys.
    pub sandboxes: Sandboxes,
}

impl NodeRuntime {
    /// A node with a host namespace and an (unparsed) conf directory.
    pub fn new(host: Host, confdir: ConfDir) -> Self {
        NodeRuntime {
            host,
            confdir,
            network: OnceLock::new(),
            cache: ResultCache::new(),
            sandboxes: Sandboxes::default(),
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

    /// The pods whose sandbox libcni cached only under networks other than the one the
    /// runtime loads now, each with a network that set it up (`ns/name`, in key order):
    /// containerd tears a sandbox down with the config in use at that moment, so their DEL
    /// would run this network's chain, which never reaches the plugins (and IPAM) that set
    /// them up.
    pub(crate) fn pods_set_up_by_another_network(&self) -> Vec<(&PodKey, &str)> {
        // A node without pods keeps its conflist unparsed (see [`Self::network`]).
        if self.sandboxes.is_empty() {
            return Vec::new();
        }
        let Ok(network) = self.network() else {
            return Vec::new();
        };
        self.sandboxes
            .iter()
            .filter_map(|(pod, sb)| {
                let mut nets = self.cache.networks_of(sb.id(), None);
                let first = nets.next()?;
                let other = *first != network.name && nets.all(|net| *net != network.name);
                other.then_some((pod, &**first))
            })
            .collect()
    }

    /// Re-read `/etc/cni/net.d` the way the runtime does when the directory changes.
    pub(crate) fn reload_network(&mut self) {
        self.network = OnceLock::new();
    }
}

#[cfg(test)]
mod tests {
    use super::{Sandbox, Sandboxes, SharedKey, sandbox_ips};
    use crate::cni::types::CniResult;
    use std::net::IpAddr;

    fn ips(result: &str) -> Vec<IpAddr> {
        let r: CniResult = serde_json::from_str(result).unwrap();
        sandbox_ips(&r).collect()
    }

    fn addrs(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn containerd_puts_the_first_ipv4_address_first_and_keeps_the_rest_in_order() {
        let r = r#"{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[
            {"interface":0,"address":"fd00::2/64"},{"interface":0,"address":"fd01::2/64"},
            {"interface":0,"address":"10.0.0.2/24"},{"interface":0,"address":"10.1.0.2/24"}]}"#;
        assert_eq!(
            ips(r),
            addrs(&["10.0.0.2", "fd00::2", "fd01::2", "10.1.0.2"])
        );
    }

    #[test]
    fn only_eth0_and_addresses_without_an_interface_count() {
        let r = r#"{"cniVersion":"1.0.0","interfaces":[{"name":"net1"},{"name":"eth0"}],"ips":[
            {"interface":0,"address":"10.9.0.2/24"},{"address":"fd00::2/64"},
            {"interface":1,"address":"10.0.0.2/24"}]}"#;
        assert_eq!(ips(r), addrs(&["10.0.0.2", "fd00::2"]));
        // No address on eth0: containerd fails the sandbox ("failed to find network info").
        let none = r#"{"cniVersion":"1.0.0","interfaces":[{"name":"net1"},{"name":"eth0"}],
            "ips":[{"interface":0,"address":"10.9.0.2/24"}]}"#;
        assert_eq!(ips(none), addrs(&[]));
    }

    #[test]
    fn a_single_stack_ipv6_pod_has_its_first_address() {
        let r =
            r#"{"cniVersion":"1.0.0","ips":[{"address":"fd00::2/64"},{"address":"fd00::3/64"}]}"#;
        assert_eq!(ips(r), addrs(&["fd00::2", "fd00::3"]));
    }

    #[test]
    fn sandboxes_keep_the_order_of_their_keys_as_text() {
        let sb = Sandbox {
            result: Default::default(),
            rt: Default::default(),
        };
        let mut map = Sandboxes::default();
        for (ns, name) in [
            ("a", "x"),
            ("a-b", "x"),
            ("a", "w"),
            ("ab", "c"),
            ("b", "a"),
        ] {
            map.insert(SharedKey::new((ns.into(), name.into())), sb.clone());
        }
        // As the `ns/name` strings sort: `-` (0x2d) before `/` (0x2f) before letters.
        let keys: Vec<String> = map.keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["a-b/x", "a/w", "a/x", "ab/c", "b/a"]);
        assert_eq!(format!("{:?}", map.keys().next().unwrap()), "\"a-b/x\"");
        for key in &keys {
            assert!(map.contains_key(key));
            let (ns, name) = key.split_once('/').unwrap();
            assert!(map.get_pod(ns, name).is_some());
        }
        for missing in ["a", "a/", "a-b", "a/xx", "b/", "c/a", ""] {
            assert!(map.get(missing).is_none(), "{missing}");
        }
        assert!(map.get_pod("a", "").is_none());
        assert!(map.remove_pod("a", "w").is_some());
        assert!(map.remove_pod("a", "w").is_none());
        assert_eq!(map.len(), 4);
        assert!(*map.keys().next().unwrap() == *"a-b/x");
    }
}
