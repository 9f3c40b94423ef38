//! libcni's result cache on one node: `/var/lib/cni/results/<net>-<cid>-<ifname>`, one file
//! per attachment, holding the runtime configuration of the ADD and the chain's result.
//!
//! One entry a pod on every node, so the layout matters at scale. A network's entries are
//! one vector sorted by (container ID, ifname), and each entry carries only the first eight
//! bytes of its container ID beside the shared runtime configuration, where the ID and ifname
//! already are: the network and ifname, the same on almost every entry, are not repeated,
//! and a lookup compares integers until two IDs share their first eight bytes.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::cni::runtime::RuntimeConf;
use crate::cni::types::CniResult;
use crate::util::vec_map::VecMap;

/// One cached attachment: what libcni wrote in its cache file.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// The runtime configuration of the ADD (shared with the sandbox that made it); its
    /// container ID and ifname are the entry's key.
    pub rt: Arc<RuntimeConf>,
    /// The final result of the chain.
    pub result: Arc<CniResult>,
}

impl CacheEntry {
    /// `CNI_CONTAINERID` of the attachment.
    pub fn container_id(&self) -> &str {
        &self.rt.container_id
    }

    /// `CNI_IFNAME` of the attachment.
    pub fn ifname(&self) -> &str {
        &self.rt.ifname
    }
}

/// The cached attachments of every network on a node, in (network, container ID, ifname)
/// order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultCache {
    /// Per network name, its attachments.
    networks: VecMap<Arc<str>, Attachments>,
}

/// One network's attachments, sorted by (container ID, ifname), each with its ID's prefix.
#[derive(Debug, Clone, Default, PartialEq)]
struct Attachments(Vec<(u64, CacheEntry)>);

// One entry a pod on every node: the prefix and two shared pointers.
const _: () = assert!(std::mem::size_of::<(u64, CacheEntry)>() <= 24);

/// The first eight bytes of `id`, big-endian, zero-padded: two IDs whose prefixes differ are
/// ordered as their prefixes are (a shorter ID pads with zero bytes, below any byte it
/// could be compared with, or equal to a NUL, where the full comparison decides).
fn prefix(id: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let head = &id.as_bytes()[..id.len().min(8)];
    bytes[..head.len()].copy_from_slice(head);
    u64::from_be_bytes(bytes)
}

impl Attachments {
    /// Where the attachment (`id`, `ifname`) is (`Ok`) or would go (`Err`).
    fn position(&self, id: &str, ifname: &str) -> Result<usize, usize> {
        let key = prefix(id);
        self.0.binary_search_by(|(p, e)| {
            p.cmp(&key)
                .then_with(|| (e.container_id(), e.ifname()).cmp(&(id, ifname)))
        })
    }

    /// Room for one more: an eighth more when full, as [`VecMap`] grows.
    fn reserve_one(&mut self) {
        if self.0.len() == self.0.capacity() {
            self.0.reserve_exact((self.0.len() / 8).max(1));
        }
    }
}

impl ResultCache {
    /// An empty cache.
    pub fn new() -> Self {
        ResultCache::default()
    }

    /// Cache `entry` under `network` (its container ID and ifname from its runtime
    /// configuration), returning the entry it replaces.
    pub fn insert(&mut self, network: &Arc<str>, entry: CacheEntry) -> Option<CacheEntry> {
        let attachments = self
            .networks
            .get_or_insert_with(Arc::clone(network), Attachments::default);
        match attachments.position(entry.container_id(), entry.ifname()) {
            Ok(at) => Some(std::mem::replace(&mut attachments.0[at].1, entry)),
            Err(at) => {
                attachments.reserve_one();
                let key = prefix(entry.container_id());
                attachments.0.insert(at, (key, entry));
                None
            }
        }
    }

    /// The attachment (`container_id`, `ifname`) of `network`.
    pub fn get(&self, network: &str, container_id: &str, ifname: &str) -> Option<&CacheEntry> {
        let attachments = self.networks.get(network)?;
        let at = attachments.position(container_id, ifname).ok()?;
        Some(&attachments.0[at].1)
    }

    /// Drop the attachment (`container_id`, `ifname`) of `network` (its file deleted),
    /// returning it. A network left with none is forgotten.
    pub fn remove(
        &mut self,
        network: &str,
        container_id: &str,
        ifname: &str,
    ) -> Option<CacheEntry> {
        let attachments = self.networks.get_mut(network)?;
        let at = attachments.position(container_id, ifname).ok()?;
        let (_, entry) = attachments.0.remove(at);
        if attachments.0.is_empty() {
            self.networks.remove(network);
        }
        Some(entry)
    }

    /// Every attachment with its network, in (network, container ID, ifname) order.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &CacheEntry)> {
        self.networks
            .iter()
            .flat_map(|(net, a)| a.0.iter().map(move |(_, e)| (net, e)))
    }

    /// The attachments of `network`, in (container ID, ifname) order.
    pub fn of_network(&self, network: &str) -> impl Iterator<Item = &CacheEntry> {
        self.networks
            .get(network)
            .into_iter()
            .flat_map(|a| a.0.iter().map(|(_, e)| e))
    }

    /// The networks holding an attachment of `container_id` (on `ifname`, or any when
    /// `None`), in name order.
    pub fn networks_of<'s, 'q>(
        &'s self,
        container_id: &'q str,
        ifname: Option<&'q str>,
    ) -> impl Iterator<Item = &'s Arc<str>> + use<'s, 'q> {
        self.networks.iter().filter_map(move |(net, a)| {
            let key = prefix(container_id);
            let start = a.0.partition_point(|(p, e)| {
                p.cmp(&key).then_with(|| e.container_id().cmp(container_id)) == Ordering::Less
            });
            a.0[start..]
                .iter()
                .take_while(|(_, e)| e.container_id() == container_id)
                .any(|(_, e)| ifname.is_none_or(|i| e.ifname() == i))
                .then_some(net)
        })
    }

    /// Whether any network holds an attachment of `container_id`.
    pub fn holds_container(&self, container_id: &str) -> bool {
        self.networks_of(container_id, None).next().is_some()
    }

    /// How many attachments there are.
    pub fn len(&self) -> usize {
        self.networks.values().map(|a| a.0.len()).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.networks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, ifname: &str) -> CacheEntry {
        CacheEntry {
            rt: Arc::new(RuntimeConf {
                container_id: Arc::from(id),
                ifname: Arc::from(ifname),
                ..Default::default()
            }),
            result: Arc::new(CniResult::default()),
        }
    }

    fn keys(cache: &ResultCache) -> Vec<(String, String, String)> {
        cache
            .iter()
            .map(|(n, e)| (n.to_string(), e.container_id().into(), e.ifname().into()))
            .collect()
    }

    #[test]
    fn attachments_are_in_network_id_ifname_order_as_their_file_names_sort_by_key() {
        let mut cache = ResultCache::new();
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("cbr0"), Arc::from("aux"));
        // IDs sharing their first eight bytes, shorter than eight, and with a NUL.
        for (net, id, ifname) in [
            (&a, "0123456789b", "eth0"),
            (&a, "0123456789a", "net1"),
            (&a, "0123456789a", "eth0"),
            (&a, "ab", "eth0"),
            (&a, "ab\0", "eth0"),
            (&a, "a", "eth0"),
            (&b, "zz", "eth0"),
        ] {
            assert!(cache.insert(net, entry(id, ifname)).is_none());
        }
        let mut want: Vec<_> = keys(&cache);
        want.sort();
        assert_eq!(keys(&cache), want);
        assert_eq!(cache.len(), 7);
        assert!(cache.get("cbr0", "ab\0", "eth0").is_some());
        assert!(cache.get("cbr0", "ab", "net1").is_none());
        assert!(cache.get("aux", "ab", "eth0").is_none());
    }

    #[test]
    fn a_second_add_replaces_and_a_removed_network_is_forgotten() {
        let mut cache = ResultCache::new();
        let net: Arc<str> = Arc::from("cbr0");
        assert!(cache.insert(&net, entry("c1", "eth0")).is_none());
        assert!(cache.insert(&net, entry("c1", "eth0")).is_some());
        assert!(cache.holds_container("c1"));
        assert!(!cache.holds_container("c"));
        assert_eq!(
            cache.networks_of("c1", Some("eth0")).collect::<Vec<_>>(),
            [&net]
        );
        assert_eq!(cache.networks_of("c1", Some("net1")).count(), 0);
        assert!(cache.remove("cbr0", "c1", "eth0").is_some());
        assert!(cache.remove("cbr0", "c1", "eth0").is_none());
        assert!(cache.is_empty());
    }
}
