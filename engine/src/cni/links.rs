//! The links of one network namespace, by name, iterated in name order.
//!
//! A vector of shared links sorted by name, each copied on write: a new namespace's `lo` is
//! the one the kernel gives every namespace ([`Links::with_loopback`]), held once for all of
//! them until a program changes it, and an insert moves pointers (a host has one link a
//! pod). A pod's namespace then costs two pointers and its own `eth0`.

use super::host::Link;
use std::sync::{Arc, LazyLock};

/// Links by name, in name order (`ip link` order is not modelled; name order keeps every
/// view deterministic).
#[derive(Clone, Default)]
pub struct Links {
    /// Sorted by name; a link shared with other namespaces (or copies of this one) is
    /// copied before it changes.
    links: Vec<Arc<Link>>,
    /// What the packet walker asks of a host namespace's links on every node (its uplink
    /// addresses, its bridge's address), read from the links the first time it is asked
    /// after they changed: every `&mut` access drops it.
    facts: std::sync::OnceLock<Box<LinkFacts>>,
}

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
        links.push(Arc::clone(if up { &UP } else { &DOWN }));
        Links {
            links,
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
            **facts,
            LinkFacts::of(self),
            "the links' facts are the links' as they are now"
        );
        facts
    }

    /// The links, about to change: the facts read from them are dropped.
    fn changing(&mut self) -> &mut Vec<Arc<Link>> {
        self.facts = std::sync::OnceLock::new();
        &mut self.links
    }

    /// Whether a link of this name exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// The link of this name.
    pub fn get(&self, name: &str) -> Option<&Link> {
        self.position(name).ok().map(|i| &*self.links[i])
    }

    /// The link of this name, mutably (copied first if it is shared).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Link> {
        let i = self.position(name).ok()?;
        Some(Arc::make_mut(&mut self.changing()[i]))
    }

    /// Add or replace the link called `name` (the link takes that name); returns the link
    /// it replaced.
    pub fn insert(&mut self, name: impl AsRef<str>, mut link: Link) -> Option<Link> {
        let name = name.as_ref();
        if link.name != name {
            link.name = name.into();
        }
        let at = self.position(name);
        let links = self.changing();
        match at {
            Ok(i) => Some(Arc::unwrap_or_clone(std::mem::replace(
                &mut links[i],
                Arc::new(link),
            ))),
            Err(i) => {
                links.insert(i, Arc::new(link));
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
        let at = self.position(name);
        let links = self.changing();
        let i = match at {
            Ok(i) => i,
            Err(i) => {
                let mut link = make();
                link.name = name.into();
                links.insert(i, Arc::new(link));
                i
            }
        };
        Arc::make_mut(&mut links[i])
    }

    /// Remove the link called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Link> {
        let i = self.position(name).ok()?;
        Some(Arc::unwrap_or_clone(self.changing().remove(i)))
    }

    /// The links in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Link> {
        self.links.iter().map(|l| &**l)
    }

    /// The links in name order, mutably (each copied first if it is shared).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Link> {
        self.changing().iter_mut().map(Arc::make_mut)
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
        self.links.binary_search_by(|l| l.name.as_str().cmp(name))
    }
}

impl PartialEq for Links {
    fn eq(&self, other: &Self) -> bool {
        self.links == other.links
    }
}

impl Eq for Links {}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // By name, as a map.
        f.debug_map()
            .entries(self.links.iter().map(|l| (&l.name, &**l)))
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
        // The same set reached another way (grow, then shrink) equals it.
        let mut b = Links::default();
        for i in 0..10 {
            b.insert(format!("tmp{i}"), link("t"));
        }
        for i in 0..10 {
            b.remove(&format!("tmp{i}"));
        }
        b.insert("eth0", link("eth0"));
        assert_eq!(a, b);
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
