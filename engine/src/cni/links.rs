//! The links of one network namespace, by name, iterated in name order.
//!
//! A vector of shared links sorted by name, each copied on write: a new namespace's `lo` is
//! the one the kernel gives every namespace ([`Links::with_loopback`]), held once for all of
//! them until a program changes it, and an insert moves pointers (a host has one link a
//! pod). Each entry holds the first eight bytes of its link's name beside the pointer, so a
//! search compares numbers and follows a pointer only to a link whose name starts as the
//! one sought (a host's `vethXXXX` links live apart, each a cold read in a large cluster).
//! A pod's namespace then costs two entries and its own `eth0`.

use super::host::Link;
use std::sync::{Arc, LazyLock};

/// Links by name, in name order, each with the interface index the kernel would have given
/// it here (`ip link` lists them in index order: see [`Link::ifindex`]).
#[derive(Clone, Default)]
pub struct Links {
    /// Sorted by name, each link beside its [`name_prefix`]; a link shared with other
    /// namespaces (or copies of this one) is copied before it changes.
    links: Vec<(u64, Arc<Link>)>,
    /// What the packet walker asks of a host namespace's links on every node (its uplink
    /// addresses, its bridge's address), read from the links the first time it is asked
    /// after they changed: every `&mut` access drops it. (A pointer, not a `OnceLock`,
    /// which would leave no room for `last_ifindex` in a namespace's size.)
    facts: once_cell::race::OnceBox<LinkFacts>,
    /// The last interface index handed out here (the kernel's `net->ifindex`): the next
    /// new device gets the first free index above it, so a deleted device's index is not
    /// reused while the counter has not wrapped.
    last_ifindex: u32,
    /// No link here has an index above this one (the highest any link has had here; not
    /// lowered when a link goes): an index above it is free without looking at the links,
    /// which the kernel's `dev_new_index` asks of each candidate. (It fits in the room
    /// `last_ifindex` leaves.)
    max_ifindex: u32,
}

// One a pod (each sandbox's namespace), in a namespace pinned at 72 bytes.
const _: () = assert!(std::mem::size_of::<Links>() <= 40);

/// Typed facts read from the links (see [`Links::uplink_addrs`], [`Links::bridge_addr`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LinkFacts {
    /// The addresses of the up physical links, in link order.
    uplinks: Vec<std::net::IpAddr>,
    /// The first address of the first bridge holding one, if any (`None` inside when that
    /// address does not parse).
    bridge: Option<Option<std::net::IpAddr>>,
}

impl LinkFacts {
    fn of(links: &Links) -> Self {
        use super::host::LinkKind;
        let uplinks = links
            .values()
            .filter(|l| l.kind == LinkKind::Physical && l.up)
            .flat_map(|l| &l.addrs)
            .map(|n| n.addr())
            .collect();
        let bridge = links
            .values()
            .find(|l| l.kind == LinkKind::Bridge && !l.addrs.is_empty())
            .map(|l| l.addrs.first().map(|a| a.addr()));
        LinkFacts { uplinks, bridge }
    }
}

impl Links {
    /// The links of a new namespace: `lo` as `ip netns add` makes it (`up` and its
    /// addresses as containerd leaves a pod sandbox's when `up`), shared with every other
    /// namespace that has not changed its `lo`, and room for one more link (a pod's `eth0`).
    pub(crate) fn with_loopback(up: bool) -> Self {
        static DOWN: LazyLock<Arc<Link>> = LazyLock::new(|| Arc::new(Link::loopback(false)));
        static UP: LazyLock<Arc<Link>> = LazyLock::new(|| Arc::new(Link::loopback(true)));
        let mut links = Vec::with_capacity(2);
        links.push((name_prefix("lo"), Arc::clone(if up { &UP } else { &DOWN })));
        Links {
            links,
            last_ifindex: 1,
            max_ifindex: 1,
            ..Links::default()
        }
    }

    /// The addresses on the up physical links (the uplinks: who answers ARP for them on
    /// the segment), in link order, then address order.
    pub fn uplink_addrs(&self) -> &[std::net::IpAddr] {
        &self.facts().uplinks
    }

    /// The first address of the first bridge (in name order) that has one: `None` when no
    /// bridge has an address, `Some(None)` when that address is not an IP address.
    pub fn bridge_addr(&self) -> Option<Option<std::net::IpAddr>> {
        self.facts().bridge
    }

    fn facts(&self) -> &LinkFacts {
        let facts = self.facts.get_or_init(|| Box::new(LinkFacts::of(self)));
        debug_assert_eq!(
            *facts,
            LinkFacts::of(self),
            "the links' facts are the links' as they are now"
        );
        facts
    }

    /// The links, about to change: the facts read from them are dropped.
    fn changing(&mut self) -> &mut Vec<(u64, Arc<Link>)> {
        self.facts = once_cell::race::OnceBox::new();
        &mut self.links
    }

    /// The index a device entering this namespace gets, as `dev_new_index` and
    /// `dev_change_net_namespace` choose it: a device moved in keeps its index (`wanted`)
    /// when no device here has it; otherwise, and for a new device (`wanted` 0), the first
    /// free index after the last one handed out here.
    fn index_for(&mut self, wanted: u32) -> u32 {
        let max = self.max_ifindex;
        let taken = |i: u32| i <= max && self.values().any(|l| l.ifindex() == i);
        if wanted != 0 && !taken(wanted) {
            self.max_ifindex = max.max(wanted);
            return wanted;
        }
        let mut next = self.last_ifindex;
        loop {
            next = next
                .checked_add(1)
                .filter(|&n| n <= i32::MAX as u32)
                .unwrap_or(1);
            if !taken(next) {
                self.last_ifindex = next;
                self.max_ifindex = max.max(next);
                return next;
            }
        }
    }

    /// Whether a link of this name exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// The link of this name.
    pub fn get(&self, name: &str) -> Option<&Link> {
        self.position(name).ok().map(|i| &*self.links[i].1)
    }

    /// The link of this name, mutably (copied first if it is shared).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Link> {
        let i = self.position(name).ok()?;
        Some(Arc::make_mut(&mut self.changing()[i].1))
    }

    /// Add or replace the link called `name` (the link takes that name); returns the link
    /// it replaced.
    ///
    /// A link replacing one of its name is the same device changed, and keeps that
    /// device's index. A new one gets an index as the kernel gives it ([`Link::ifindex`]):
    /// a link made here (index 0) the next free one, a link moved from another namespace
    /// its own when it is free here.
    pub fn insert(&mut self, name: impl AsRef<str>, mut link: Link) -> Option<Link> {
        let name = name.as_ref();
        if link.name != name {
            link.name = name.into();
        }
        match self.position(name) {
            Ok(i) => {
                link.set_ifindex(self.links[i].1.ifindex());
                let links = self.changing();
                Some(Arc::unwrap_or_clone(std::mem::replace(
                    &mut links[i].1,
                    Arc::new(link),
                )))
            }
            Err(i) => {
                let ifindex = self.index_for(link.ifindex());
                link.set_ifindex(ifindex);
                self.changing()
                    .insert(i, (name_prefix(name), Arc::new(link)));
                None
            }
        }
    }

    /// The link called `name`, made by `make` (and named `name`) if there is none.
    pub(crate) fn get_or_insert_with(
        &mut self,
        name: &str,
        make: impl FnOnce() -> Link,
    ) -> &mut Link {
        let i = match self.position(name) {
            Ok(i) => i,
            Err(i) => {
                let mut link = make();
                link.name = name.into();
                let ifindex = self.index_for(link.ifindex());
                link.set_ifindex(ifindex);
                self.changing()
                    .insert(i, (name_prefix(name), Arc::new(link)));
                i
            }
        };
        Arc::make_mut(&mut self.changing()[i].1)
    }

    /// Remove the link called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Link> {
        let i = self.position(name).ok()?;
        Some(Arc::unwrap_or_clone(self.changing().remove(i).1))
    }

    /// The links in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Link> {
        self.links.iter().map(|(_, l)| &**l)
    }

    /// The links in interface-index order, as `ip link` lists them (the order the
    /// kernel's device list keeps, for a namespace whose devices were made here).
    pub fn by_ifindex(&self) -> Vec<&Link> {
        let mut links: Vec<&Link> = self.values().collect();
        links.sort_by_key(|l| l.ifindex());
        links
    }

    /// The link with this interface index.
    pub fn by_index(&self, ifindex: u32) -> Option<&Link> {
        self.values().find(|l| l.ifindex() == ifindex)
    }

    /// The links in name order, mutably (each copied first if it is shared).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Link> {
        self.changing().iter_mut().map(|(_, l)| Arc::make_mut(l))
    }

    /// How many links there are.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        let prefix = name_prefix(name);
        self.links
            .binary_search_by(|(p, l)| p.cmp(&prefix).then_with(|| l.name.as_str().cmp(name)))
    }
}

/// The first eight bytes of a link's name as a big-endian number, zero-padded: where two
/// names' numbers differ, they order as the names do (a name that ends within the eight
/// bytes orders before any it is a prefix of, as `str` orders them).
fn name_prefix(name: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name.as_bytes()[..n]);
    u64::from_be_bytes(bytes)
}

impl PartialEq for Links {
    fn eq(&self, other: &Self) -> bool {
        // `max_ifindex` is a bound for lookups, not state the kernel shows.
        self.links == other.links && self.last_ifindex == other.last_ifindex
    }
}

impl Eq for Links {}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // By name, as a map.
        f.debug_map()
            .entries(self.values().map(|l| (&l.name, l)))
            .finish()
    }
}

impl std::ops::Index<&str> for Links {
    type Output = Link;

    fn index(&self, name: &str) -> &Link {
        match self.get(name) {
            Some(l) => l,
            None => panic!("no link {name:?}"),
        }
    }
}

impl std::ops::Index<&String> for Links {
    type Output = Link;

    fn index(&self, name: &String) -> &Link {
        &self[name.as_str()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::host::{LinkKind, Mac};

    fn link(name: &str) -> Link {
        Link::new(name, LinkKind::Ifb, Mac([0, 0, 0, 0, 0, 1]), 1500)
    }

    #[test]
    fn stays_in_name_order() {
        let mut links = Links::default();
        let names: Vec<String> = (0..20).rev().map(|i| format!("veth{i:02}")).collect();
        for (n, name) in names.iter().enumerate() {
            assert!(links.insert(name.clone(), link(name)).is_none());
            assert_eq!(links.len(), n + 1);
            let order: Vec<&str> = links.values().map(|l| l.name.as_str()).collect();
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(order, sorted, "after {} inserts", n + 1);
        }
        assert!(links.contains_key("veth07"));
        assert_eq!(links["veth07"].name, "veth07");
        assert!(links.remove("veth07").is_some());
        assert!(!links.contains_key("veth07"));
        assert_eq!(links.len(), 19);
    }

    #[test]
    fn names_sharing_their_first_eight_bytes_or_shorter_stay_in_order() {
        let mut links = Links::with_loopback(true);
        let names = [
            "veth1234abce",
            "veth1234abcd",
            "veth1234",
            "veth123",
            "v",
            "vethX",
            "eth0",
            "cni0",
            "flannel.1",
            "veth1234abcd.100",
        ];
        for name in names {
            links.insert(name, link(name));
        }
        let order: Vec<&str> = links.values().map(|l| l.name.as_str()).collect();
        let mut sorted: Vec<&str> = names.iter().copied().chain(["lo"]).collect();
        sorted.sort();
        assert_eq!(order, sorted);
        for name in names {
            assert_eq!(links[name].name, name);
        }
        for absent in ["veth1234abc", "veth1234abcf", "veth12", "lo0", ""] {
            assert!(!links.contains_key(absent), "{absent}");
        }
        links.remove("veth1234abcd");
        assert!(links.contains_key("veth1234abce") && !links.contains_key("veth1234abcd"));
    }

    #[test]
    fn a_new_device_skips_an_index_a_device_moved_in_kept() {
        let mut links = Links::with_loopback(true);
        // A device moved in from another namespace keeps its index there when it is free.
        let mut moved = link("moved0");
        moved.set_ifindex(4);
        links.insert("moved0", moved);
        let made: Vec<u32> = (0..4)
            .map(|i| {
                let name = format!("made{i}");
                links.insert(name.clone(), link(&name));
                links[name.as_str()].ifindex()
            })
            .collect();
        assert_eq!(made, [2, 3, 5, 6], "index 4 is the moved device's");
        // A device moved in with a taken index gets the next free one instead.
        let mut clash = link("clash0");
        clash.set_ifindex(3);
        links.insert("clash0", clash);
        assert_eq!(links["clash0"].ifindex(), 7);
        // A device gone leaves its index unused until the counter wraps.
        links.remove("made1");
        links.insert("again", link("again"));
        assert_eq!(links["again"].ifindex(), 8);
    }

    #[test]
    fn uplink_and_bridge_addresses_follow_every_change() {
        let mut links = Links::default();
        let mut eth0 = Link::new("eth0", LinkKind::Physical, Mac([2, 0, 0, 0, 0, 1]), 1500);
        eth0.up = true;
        eth0.addrs.push("192.168.0.1/24".parse().unwrap());
        links.insert("eth0", eth0);
        for i in 0..10 {
            let name = format!("veth{i}");
            links.insert(name.clone(), link(&name));
        }
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(links.uplink_addrs(), [ip("192.168.0.1")]);
        assert_eq!(links.bridge_addr(), None);
        let cni0 = Link::new("cni0", LinkKind::Bridge, Mac([2, 0, 0, 0, 0, 2]), 1500);
        links.insert("cni0", cni0);
        assert_eq!(links.bridge_addr(), None, "a bridge without an address");
        if let Some(l) = links.get_mut("cni0") {
            l.addrs.push("10.244.1.1/24".parse().unwrap());
        }
        assert_eq!(links.bridge_addr(), Some(Some(ip("10.244.1.1"))));
        // The uplink going down takes its address off the segment.
        for l in links.values_mut() {
            if l.name == "eth0" {
                l.up = false;
            }
        }
        assert!(links.uplink_addrs().is_empty());
        links.remove("cni0");
        assert_eq!(links.bridge_addr(), None);
        // A copy answers as the original.
        let copy = links.clone();
        assert_eq!(copy.uplink_addrs(), links.uplink_addrs());
        assert_eq!(copy, links);
    }

    #[test]
    fn get_or_insert_with_makes_once_and_names_the_link() {
        let mut links = Links::default();
        for i in 0..10 {
            let made = links.get_or_insert_with(&format!("br{i}"), || link("x"));
            assert_eq!(made.name, format!("br{i}"));
            made.mtu = 9000;
        }
        assert_eq!(links.len(), 10);
        let again = links.get_or_insert_with("br0", || link("never"));
        assert_eq!(again.mtu, 9000, "an existing link is returned, not remade");
        let order: Vec<&str> = links.values().map(|l| l.name.as_str()).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }

    #[test]
    fn insert_replaces_and_renames_and_equality_is_by_value() {
        let mut a = Links::default();
        let mut old = link("x");
        old.mtu = 9000;
        a.insert("eth0", old);
        assert_eq!(a["eth0"].name, "eth0", "the key names the link");
        let replaced = a.insert("eth0", link("eth0")).expect("replaced");
        assert_eq!(replaced.mtu, 9000);
        assert_eq!(a["eth0"].ifindex(), 1, "a replaced device keeps its index");
        // The same links reached another way (grow, then shrink) differ in their indexes:
        // the kernel does not hand the ten deleted ones out again.
        let mut b = Links::default();
        for i in 0..10 {
            b.insert(format!("tmp{i}"), link("t"));
        }
        for i in 0..10 {
            b.remove(&format!("tmp{i}"));
        }
        b.insert("eth0", link("eth0"));
        assert_eq!(b["eth0"].ifindex(), 11);
        assert_ne!(a, b);
        let mut c = Links::default();
        c.insert("eth0", link("eth0"));
        assert_eq!(a, c, "equal links with equal histories are equal");
    }

    #[test]
    fn interface_indexes_are_handed_out_as_the_kernel_does() {
        let mut host = Links::with_loopback(true);
        assert_eq!(
            host["lo"].ifindex(),
            1,
            "lo is the first device of every namespace"
        );
        for name in ["eth0", "cni0", "vethb", "vetha"] {
            host.insert(name, link(name));
        }
        let index = |l: &Links, name: &str| l[name].ifindex();
        // Creation order, not name order.
        assert_eq!(
            ["eth0", "cni0", "vethb", "vetha"].map(|n| index(&host, n)),
            [2, 3, 4, 5]
        );
        let order: Vec<&str> = host.by_ifindex().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(order, ["lo", "eth0", "cni0", "vethb", "vetha"]);
        // A deleted device's index is not reused, and the others keep theirs.
        host.remove("vethb");
        host.insert("vethc", link("vethc"));
        assert_eq!(index(&host, "vethc"), 6);
        assert_eq!(index(&host, "vetha"), 5);
        // A device moved in keeps its index where it is free, else takes the next one.
        let mut pod = Links::with_loopback(false);
        pod.insert("eth0", link("eth0"));
        assert_eq!(index(&pod, "eth0"), 2);
        let moved = host.remove("vetha").expect("there");
        pod.insert("net1", moved);
        assert_eq!(index(&pod, "net1"), 5, "kept: free here");
        let clash = host.remove("cni0").expect("there");
        assert_eq!(clash.ifindex(), 3);
        pod.insert("net2", clash.clone());
        assert_eq!(index(&pod, "net2"), 3, "kept: free here too");
        pod.insert("net3", clash);
        assert_eq!(
            index(&pod, "net3"),
            4,
            "3 is taken: the next free after the last"
        );
        pod.insert("net4", link("net4"));
        assert_eq!(index(&pod, "net4"), 6, "5 is taken by the moved device");
        // Looked up by index.
        assert_eq!(pod.by_index(5).map(|l| l.name.as_str()), Some("net1"));
        assert_eq!(pod.by_index(9), None);
    }

    #[test]
    fn a_new_namespaces_lo_is_shared_until_it_changes() {
        let (a, mut b) = (Links::with_loopback(true), Links::with_loopback(true));
        assert!(std::ptr::eq(&a["lo"], &b["lo"]), "one lo for both");
        assert!(a["lo"].up);
        assert_eq!(a["lo"].addrs, crate::cni::host::LO_ADDRS);
        if let Some(lo) = b.get_mut("lo") {
            lo.up = false;
        }
        assert!(a["lo"].up, "a change copies the link first");
        assert!(!b["lo"].up);
        let down = Links::with_loopback(false);
        assert!(
            !down["lo"].up && down["lo"].addrs.is_empty(),
            "a new lo is down, bare"
        );
        assert_ne!(a, b);
    }
}
