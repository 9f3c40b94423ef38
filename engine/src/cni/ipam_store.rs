//! host-local's data directory for one network, `/var/lib/cni/networks/<net>/`, as typed
//! data: one lease per IP (the file named by the IP holding `<id>\r\n<ifname>`) and
//! `last_reserved_ip.<rangeset>`. Indexed by owner so a lookup does not scan the directory.
//!
//! The operations mirror `containernetworking/plugins:plugins/ipam/host-local/backend/disk/
//! backend.go` (`Reserve`, `LastReservedIP`, `GetByID`, `FindByID`, `ReleaseByID`), including
//! how they match file *contents*: a file matches an owner when its trimmed content equals
//! `<id>\r\n<ifname>`, or, for files written by old versions, just `<id>`.

use crate::util::vec_map::VecMap;
use std::net::IpAddr;

/// The line break host-local writes between the container ID and the ifname (`disk.LineBreak`).
pub(crate) const LINE_BREAK: &str = "\r\n";

/// The prefix of the round-robin cursor files (`last_reserved_ip.<rangeSetIndex>`).
pub(crate) const LAST_IP_FILE_PREFIX: &str = "last_reserved_ip.";

/// One lease file's content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lease {
    /// The container ID (trimmed), shared with the runtime's `CNI_CONTAINERID` when that
    /// needs no trimming (a pod's sandbox ID).
    pub container_id: std::sync::Arc<str>,
    /// The interface name (inline: a Linux name is at most 15 bytes); empty for a legacy
    /// file that holds only the container ID.
    pub ifname: compact_str::CompactString,
}

// One a pod on every node, with its IP in the store's `VecMap`: the container ID is the
// runtime's text, shared.
const _: () = assert!(std::mem::size_of::<(IpAddr, Lease)>() <= 64);

// One a pod on every node too: the owner index's entry, with no allocation of its own.
const _: () = assert!(std::mem::size_of::<((u32, IpAddr), ())>() <= 24);

impl Lease {
    /// A lease for a container's interface.
    pub fn new(container_id: &std::sync::Arc<str>, ifname: &str) -> Self {
        let trimmed = container_id.trim();
        Lease {
            container_id: if trimmed.len() == container_id.len() {
                std::sync::Arc::clone(container_id)
            } else {
                trimmed.into()
            },
            ifname: ifname.into(),
        }
    }

    /// The file's bytes: `<id>\r\n<ifname>`, or just `<id>` for a legacy lease.
    pub fn content(&self) -> String {
        if self.ifname.is_empty() {
            self.container_id.to_string()
        } else {
            format!("{}{LINE_BREAK}{}", self.container_id, self.ifname)
        }
    }
}

/// The data directory of one network on one node.
///
/// Leases are keyed by IP (one file per IP) and indexed by owner `(container ID, ifname)`,
/// so the duplicate check and release are index lookups rather than directory walks. A
/// node's network holds one lease a pod: both maps are [`VecMap`]s, whose room is about
/// their entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpamStore {
    /// Leases by IP (one file per IP).
    leases: VecMap<IpAddr, Lease>,
    /// The owner index: (the hash of `(container ID, ifname)` ([`owner_key`]), IP) for
    /// every lease, sorted, so an owner's IPs are a run of entries; a lookup keeps those
    /// whose lease is the owner's (a collision only lists another owner's IPs there).
    /// Keyed by numbers, the index holds no second copy of the owner's text, a lookup
    /// builds none, and an entry (24 bytes) needs no allocation of its own.
    by_owner: VecMap<(u32, IpAddr), ()>,
    /// `last_reserved_ip.<index>` files by range-set index (one or two a node's network: a
    /// [`VecMap`], where a B-tree's first leaf has room for eleven).
    last_reserved: VecMap<usize, IpAddr>,
}

impl IpamStore {
    /// An empty directory (what `disk.New` creates: the directory and its `lock`).
    pub fn new() -> Self {
        IpamStore::default()
    }

    /// Leases by IP.
    pub fn leases(&self) -> &VecMap<IpAddr, Lease> {
        &self.leases
    }

    /// The `last_reserved_ip.<index>` cursors by range-set index.
    pub(crate) fn last_reserved(&self) -> &VecMap<usize, IpAddr> {
        &self.last_reserved
    }

    /// The lease on an IP, if its file exists.
    pub fn lease(&self, ip: &IpAddr) -> Option<&Lease> {
        self.leases.get(ip)
    }

    /// Whether a file exists for this IP.
    pub fn is_leased(&self, ip: &IpAddr) -> bool {
        self.leases.contains_key(ip)
    }

    /// Number of leased IPs.
    pub fn len(&self) -> usize {
        self.leases.len()
    }

    /// True when no IP is leased.
    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }

    /// `Store.Reserve`: create the IP's file (O_EXCL) for the owner and record the IP as
    /// `last_reserved_ip.<range_set>`. Returns false, changing nothing, if the file exists.
    pub(crate) fn reserve(
        &mut self,
        id: &std::sync::Arc<str>,
        ifname: &str,
        ip: IpAddr,
        range_set: usize,
    ) -> bool {
        if self.leases.contains_key(&ip) {
            return false;
        }
        let lease = Lease::new(id, ifname);
        self.index_owner(owner_key(&lease.container_id, &lease.ifname), ip);
        self.leases.insert(ip, lease);
        self.last_reserved.insert(range_set, ip);
        true
    }

    /// Write a lease file directly (what a previous run, or an older host-local, left on
    /// disk). Replaces an existing file for that IP. Does not move the cursor.
    pub fn insert_lease(&mut self, ip: IpAddr, lease: Lease) {
        self.remove_lease(&ip);
        self.index_owner(owner_key(&lease.container_id, &lease.ifname), ip);
        self.leases.insert(ip, lease);
    }

    /// Add `ip` to the owner index under `key` ([`owner_key`]).
    fn index_owner(&mut self, key: u32, ip: IpAddr) {
        self.by_owner.insert((key, ip), ());
    }

    /// Write `last_reserved_ip.<range_set>` directly.
    pub fn set_last_reserved(&mut self, range_set: usize, ip: IpAddr) {
        self.last_reserved.insert(range_set, ip);
    }

    /// `Store.LastReservedIP`: the cursor of a range set, if its file exists.
    pub fn last_reserved_ip(&self, range_set: usize) -> Option<IpAddr> {
        self.last_reserved.get(&range_set).copied()
    }

    /// `Store.GetByID`: the IPs whose file holds `<id>\r\n<ifname>` or the legacy `<id>`, in
    /// the order `filepath.Walk` visits them (lexical order of the file names).
    pub fn get_by_id(&self, id: &str, ifname: &str) -> Vec<IpAddr> {
        let id = id.trim();
        let mut ips: Vec<IpAddr> = Vec::new();
        for owner_ifname in [ifname, ""] {
            ips.extend(self.owned(id, owner_ifname));
            if ifname.is_empty() {
                // Both owners are the same; do not list the IPs twice.
                break;
            }
        }
        ips.sort_by_key(|ip| ip.to_string());
        ips
    }

    /// `Store.FindByID` (CHECK): whether any file holds `<id>\r\n<ifname>`, or, failing that,
    /// just `<id>`. The fallback compares every file's content, so a `last_reserved_ip.N`
    /// whose IP text equals the ID matches too, as it does on disk.
    pub(crate) fn find_by_id(&self, id: &str, ifname: &str) -> bool {
        let id = id.trim();
        if self.has_owner(id, ifname) {
            return true;
        }
        self.has_owner(id, "") || self.last_reserved.values().any(|ip| ip.to_string() == id)
    }

    /// `Store.ReleaseByID`: remove every file holding `<id>\r\n<ifname>`; if there was none,
    /// remove every file holding just `<id>` (legacy leases, and — as on disk — any
    /// `last_reserved_ip.N` whose content equals the ID). Unknown owners are fine.
    pub(crate) fn release_by_id(&mut self, id: &str, ifname: &str) {
        let id = id.trim();
        if !ifname.is_empty() && self.remove_owner(id, ifname) {
            return;
        }
        // A query with an empty ifname matches `<id>\r\n` trimmed, i.e. the legacy form;
        // the second pass below covers it.
        self.remove_owner(id, "");
        self.last_reserved.retain(|_, ip| ip.to_string() != id);
    }

    /// The directory as `ls -A` lists it (C-locale byte order): each lease file, each
    /// `last_reserved_ip.N`, and the empty `lock`. Pairs are (file name, content).
    pub fn files(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::with_capacity(self.leases.len() + 3);
        for (ip, lease) in &self.leases {
            out.push((ip.to_string(), lease.content()));
        }
        for (idx, ip) in &self.last_reserved {
            out.push((format!("{LAST_IP_FILE_PREFIX}{idx}"), ip.to_string()));
        }
        out.push(("lock".to_string(), String::new()));
        out.sort();
        out
    }

    /// Whether the owner index agrees exactly with the leases (an invariant; for tests).
    pub fn index_consistent(&self) -> bool {
        // Leases iterate in IP order, so each rebuilt list is sorted.
        let mut rebuilt: VecMap<(u32, IpAddr), ()> = VecMap::new();
        for (ip, lease) in &self.leases {
            rebuilt.insert((owner_key(&lease.container_id, &lease.ifname), *ip), ());
        }
        rebuilt == self.by_owner
    }

    /// The IPs whose file holds exactly this owner, in IP order.
    fn owned<'s>(&'s self, id: &'s str, ifname: &'s str) -> impl Iterator<Item = IpAddr> + 's {
        let key = owner_key(id, ifname);
        self.by_owner
            .iter_from(|(k, _)| *k < key)
            .map(|((k, ip), ())| (*k, *ip))
            .take_while(move |(k, _)| *k == key)
            .map(|(_, ip)| ip)
            .filter(move |ip| {
                self.leases
                    .get(ip)
                    .is_some_and(|l| *l.container_id == *id && l.ifname == ifname)
            })
    }

    fn has_owner(&self, id: &str, ifname: &str) -> bool {
        self.owned(id, ifname).next().is_some()
    }

    fn remove_owner(&mut self, id: &str, ifname: &str) -> bool {
        let owned: Vec<IpAddr> = self.owned(id, ifname).collect();
        for ip in &owned {
            self.remove_lease(ip);
        }
        !owned.is_empty()
    }

    fn remove_lease(&mut self, ip: &IpAddr) {
        if let Some(old) = self.leases.remove(ip) {
            self.by_owner
                .remove(&(owner_key(&old.container_id, &old.ifname), *ip));
        }
    }
}

/// The owner index's key: a hash of `(container ID, ifname)`, eight bytes at a time (FxHash's
/// step), each part closed by its length, folded to 32 bits (a node's network holds tens of
/// owners; a collision costs a comparison, never a wrong answer). Stable (no random seed):
/// the engine is deterministic, and the index is only ever looked up, never listed.
fn owner_key(id: &str, ifname: &str) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = 0u64;
    let mut add = |w: u64| h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    for part in [id, ifname] {
        let mut chunks = part.as_bytes().chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            add(u64::from_le_bytes(w));
        }
        let mut last = [0u8; 8];
        let tail = chunks.remainder();
        last[..tail.len()].copy_from_slice(tail);
        add(u64::from_le_bytes(last));
        add(part.len() as u64);
    }
    ((h >> 32) ^ h) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn reserve_writes_file_and_cursor() {
        let mut s = IpamStore::new();
        assert!(s.reserve(&"dummy".into(), "eth0", ip("10.1.2.2"), 0));
        assert!(!s.reserve(&"other".into(), "eth0", ip("10.1.2.2"), 0));
        assert_eq!(
            s.files(),
            vec![
                ("10.1.2.2".to_string(), "dummy\r\neth0".to_string()),
                ("last_reserved_ip.0".to_string(), "10.1.2.2".to_string()),
                ("lock".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn files_sort_like_ls_in_c_locale() {
        let mut s = IpamStore::new();
        s.reserve(&"a".into(), "eth0", ip("10.0.0.2"), 0);
        s.reserve(&"b".into(), "eth0", ip("10.0.0.10"), 0);
        s.reserve(&"c".into(), "eth0", ip("2001:db8::2"), 1);
        let names: Vec<String> = s.files().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "10.0.0.10",
                "10.0.0.2",
                "2001:db8::2",
                "last_reserved_ip.0",
                "last_reserved_ip.1",
                "lock"
            ]
        );
    }

    #[test]
    fn release_prefers_exact_owner_then_legacy() {
        let mut s = IpamStore::new();
        s.reserve(&"c1".into(), "eth0", ip("10.0.0.2"), 0);
        s.insert_lease(ip("10.0.0.3"), Lease::new(&"c1".into(), ""));
        s.release_by_id("c1", "eth0");
        assert!(!s.is_leased(&ip("10.0.0.2")));
        assert!(s.is_leased(&ip("10.0.0.3")), "legacy kept when exact found");
        s.release_by_id("c1", "eth0");
        assert!(s.is_empty());
        assert!(s.index_consistent());
    }

    #[test]
    fn legacy_match_also_hits_cursor_file_with_same_text() {
        let mut s = IpamStore::new();
        s.reserve(&"c1".into(), "eth0", ip("10.1.3.2"), 0);
        assert!(s.find_by_id("10.1.3.2", "eth0"));
        s.release_by_id("10.1.3.2", "eth0");
        assert!(s.last_reserved().is_empty());
        assert!(s.is_leased(&ip("10.1.3.2")));
    }

    #[test]
    fn get_by_id_lists_in_file_name_order() {
        let mut s = IpamStore::new();
        s.reserve(&"c1".into(), "eth0", ip("10.1.2.2"), 0);
        s.reserve(&"c1".into(), "eth0", ip("10.1.2.10"), 0);
        assert_eq!(
            s.get_by_id("c1", "eth0"),
            vec![ip("10.1.2.10"), ip("10.1.2.2")]
        );
        assert!(s.get_by_id("c1", "eth1").is_empty());
    }

    #[test]
    fn owners_that_share_an_index_entry_stay_apart() {
        // Two owners forced into one entry (as a hash collision would put them).
        let mut s = IpamStore::new();
        s.reserve(&"c1".into(), "eth0", ip("10.0.0.2"), 0);
        s.reserve(&"c2".into(), "eth0", ip("10.0.0.3"), 0);
        let (c1, c2) = (owner_key("c1", "eth0"), owner_key("c2", "eth0"));
        assert!(s.by_owner.remove(&(c2, ip("10.0.0.3"))).is_some());
        s.by_owner.insert((c1, ip("10.0.0.3")), ());
        assert_eq!(s.get_by_id("c1", "eth0"), vec![ip("10.0.0.2")]);
        assert!(!s.find_by_id("c2", "eth0"), "c2's key has no entry now");
        s.release_by_id("c1", "eth0");
        assert!(!s.is_leased(&ip("10.0.0.2")) && s.is_leased(&ip("10.0.0.3")));
        assert_eq!(s.by_owner.keys().filter(|(k, _)| *k == c1).count(), 1);
    }

    #[test]
    fn an_owner_of_several_ips_keeps_its_index_when_one_file_is_rewritten() {
        let mut s = IpamStore::new();
        s.reserve(&"c1".into(), "eth0", ip("10.0.0.3"), 0);
        s.reserve(&"c1".into(), "eth0", ip("2001:db8::2"), 1);
        s.reserve(&"c1".into(), "eth0", ip("10.0.0.2"), 0);
        // Another owner's file replaces one of c1's (a lease written over on disk).
        s.insert_lease(ip("10.0.0.3"), Lease::new(&"c2".into(), "eth0"));
        assert!(s.index_consistent());
        assert_eq!(
            s.get_by_id("c1", "eth0"),
            vec![ip("10.0.0.2"), ip("2001:db8::2")]
        );
        s.release_by_id("c1", "eth0");
        assert_eq!(s.get_by_id("c2", "eth0"), vec![ip("10.0.0.3")]);
        assert!(!s.is_leased(&ip("10.0.0.2")) && !s.is_leased(&ip("2001:db8::2")));
        assert!(s.index_consistent());
    }
}
