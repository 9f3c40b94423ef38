//! The links of one network namespace, by name, iterated in name order.
//!
//! A pod's namespace holds two links (`lo`, `eth0`) and the host's holds one per pod, so
//! the set is a short sorted vector until it grows past [`Links::FEW`] and a sorted vector
//! of boxed links after that: a pod's namespace then costs two links, not a B-tree node of
//! eleven, and a host's link costs its box and a pointer, not a B-tree slot of a name and a
//! link (nodes a third empty) plus a second copy of its name.

use super::host::Link;

/// Links by name, in name order (`ip link` order is not modelled; name order keeps every
/// view deterministic).
#[derive(Clone, Default)]
pub struct Links {
    /// While small: sorted by name, allocated to fit.
    few: Vec<Link>,
    /// Once it has grown past `FEW` (then `few` is empty): sorted by name, each link boxed
    /// so an insert moves pointers (a host has one link a pod).
    #[allow(clippy::vec_box)] // the boxes are the point: a Link is ~200 bytes
    many: Vec<Box<Link>>,
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
    /// Up to this many links stay in the vector.
    pub(crate) const FEW: usize = 8;

    /// Room for `n` links before the vector grows.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Links {
            few: Vec::with_capacity(n.min(Self::FEW)),
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
    fn changing(&mut self) -> &mut Self {
        self.facts = std::sync::OnceLock::new();
        self
    }

    /// Whether a link of this name exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The link of this name.
    pub fn get(&self, name: &str) -> Option<&Link> {
        if self.many.is_empty() {
            self.few_index(name).ok().map(|i| &self.few[i])
        } else {
            self.many_index(name).ok().map(|i| &*self.many[i])
        }
    }

    /// The link of this name, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Link> {
        let this = self.changing();
        if this.many.is_empty() {
            this.few_index(name).ok().map(|i| &mut this.few[i])
        } else {
            this.many_index(name).ok().map(|i| &mut *this.many[i])
        }
    }

    /// Add or replace the link called `name` (the link takes that name); returns the link
    /// it replaced.
    pub fn insert(&mut self, name: impl AsRef<str>, mut link: Link) -> Option<Link> {
        self.changing();
        let name = name.as_ref();
        if link.name != name {
            link.name = name.into();
        }
        if !self.many.is_empty() {
            return self.insert_many(link);
        }
        match self.few_index(&link.name) {
            Ok(i) => Some(std::mem::replace(&mut self.few[i], link)),
            Err(i) if self.few.len() < Self::FEW => {
                self.few.reserve_exact(1);
                self.few.insert(i, link);
                None
            }
            Err(_) => {
                self.grow();
                self.insert_many(link)
            }
        }
    }

    /// From the small vector to the boxed one (the links stay in name order).
    fn grow(&mut self) {
        self.many = std::mem::take(&mut self.few)
            .into_iter()
            .map(Box::new)
            .collect();
    }

    /// [`Links::insert`] into the boxed vector.
    fn insert_many(&mut self, link: Link) -> Option<Link> {
        match self.many_index(&link.name) {
            Ok(i) => Some(std::mem::replace(&mut *self.many[i], link)),
            Err(i) => {
                self.many.insert(i, Box::new(link));
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
        self.changing();
        if self.many.is_empty() && self.few_index(name).is_err() && self.few.len() == Self::FEW {
            // Adding one more: move to the boxed vector first.
            self.grow();
        }
        let named = || {
            let mut link = make();
            link.name = name.into();
            link
        };
        if !self.many.is_empty() {
            let i = match self.many_index(name) {
                Ok(i) => i,
                Err(i) => {
                    self.many.insert(i, Box::new(named()));
                    i
                }
            };
            return &mut self.many[i];
        }
        let i = match self.few_index(name) {
            Ok(i) => i,
            Err(i) => {
                self.few.reserve_exact(1);
                self.few.insert(i, named());
                i
            }
        };
        &mut self.few[i]
    }

    /// Remove the link called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Link> {
        self.changing();
        if self.many.is_empty() {
            let i = self.few_index(name).ok()?;
            Some(self.few.remove(i))
        } else {
            let i = self.many_index(name).ok()?;
            Some(*self.many.remove(i))
        }
    }

    /// The links in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Link> {
        self.few.iter().chain(self.many.iter().map(|l| &**l))
    }

    /// The links in name order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Link> {
        self.changing();
        self.few
            .iter_mut()
            .chain(self.many.iter_mut().map(|l| &mut **l))
    }

    /// How many links there are.
    pub fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn few_index(&self, name: &str) -> Result<usize, usize> {
        self.few.binary_search_by(|l| l.name.as_str().cmp(name))
    }

    fn many_index(&self, name: &str) -> Result<usize, usize> {
        self.many.binary_search_by(|l| l.name.as_str().cmp(name))
    }
}

impl PartialEq for Links {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.values().eq(other.values())
    }
}

impl Eq for Links {}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Links")
            .field("few", &self.few)
            // As the B-tree by name printed it.
            .field(
                "many",
                &DebugMap(self.many.iter().map(|l| (&l.name, &**l)).collect()),
            )
            .finish()
    }
}

/// Pairs printed as a map (`{k: v, …}`).
struct DebugMap<'a>(Vec<(&'a compact_str::CompactString, &'a Link)>);

impl std::fmt::Debug for DebugMap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.0.iter().copied()).finish()
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
    fn stays_in_name_order_across_the_switch_to_a_tree() {
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
        for i in 0..=Links::FEW {
            let made = links.get_or_insert_with(&format!("br{i}"), || link("x"));
            assert_eq!(made.name, format!("br{i}"));
            made.mtu = 9000;
        }
        assert_eq!(links.len(), Links::FEW + 1);
        let again = links.get_or_insert_with("br0", || link("never"));
        assert_eq!(again.mtu, 9000, "an existing link is returned, not remade");
        let order: Vec<&str> = links.values().map(|l| l.name.as_str()).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }

    #[test]
    fn insert_replaces_and_renames_and_equality_ignores_the_representation() {
        let mut a = Links::default();
        let mut old = link("x");
        old.mtu = 9000;
        a.insert("eth0", old);
        assert_eq!(a["eth0"].name, "eth0", "the key names the link");
        let replaced = a.insert("eth0", link("eth0")).expect("replaced");
        assert_eq!(replaced.mtu, 9000);
        // The same set reached through a tree (grow, then shrink) equals the small one.
        let mut b = Links::default();
        for i in 0..=Links::FEW {
            b.insert(format!("tmp{i}"), link("t"));
        }
        for i in 0..=Links::FEW {
            b.remove(&format!("tmp{i}"));
        }
        b.insert("eth0", link("eth0"));
        assert_eq!(a, b);
    }
}
