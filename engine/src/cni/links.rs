//! The links of one network namespace, by name, iterated in name order.
//!
//! A pod's namespace holds two links (`lo`, `eth0`) and the host's holds one per pod, so
//! the set is a short sorted vector until it grows past [`Links::FEW`] and a B-tree after
//! that: a pod's namespace then costs two links, not a B-tree node of eleven.

use super::host::Link;
use std::collections::BTreeMap;

/// Links by name, in name order (`ip link` order is not modelled; name order keeps every
/// view deterministic).
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// While small: sorted by name, allocated to fit.
    few: Vec<Link>,
    /// Once it has grown past `FEW` (then `few` is empty).
    many: BTreeMap<String, Link>,
}

impl Links {
    /// Up to this many links stay in the vector.
    pub(crate) const FEW: usize = 8;

    /// Whether a link of this name exists.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The link of this name.
    pub fn get(&self, name: &str) -> Option<&Link> {
        if self.many.is_empty() {
            self.few_index(name).ok().map(|i| &self.few[i])
        } else {
            self.many.get(name)
        }
    }

    /// The link of this name, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Link> {
        if self.many.is_empty() {
            self.few_index(name).ok().map(|i| &mut self.few[i])
        } else {
            self.many.get_mut(name)
        }
    }

    /// Add or replace the link called `name` (the link takes that name); returns the link
    /// it replaced.
    pub fn insert(&mut self, name: String, mut link: Link) -> Option<Link> {
        link.name = name;
        if !self.many.is_empty() {
            return self.many.insert(link.name.clone(), link);
        }
        match self.few_index(&link.name) {
            Ok(i) => Some(std::mem::replace(&mut self.few[i], link)),
            Err(i) if self.few.len() < Self::FEW => {
                self.few.reserve_exact(1);
                self.few.insert(i, link);
                None
            }
            Err(_) => {
                self.many = std::mem::take(&mut self.few)
                    .into_iter()
                    .map(|l| (l.name.clone(), l))
                    .collect();
                self.many.insert(link.name.clone(), link)
            }
        }
    }

    /// The link called `name`, made by `make` (and named `name`) if there is none.
    pub(crate) fn get_or_insert_with(
        &mut self,
        name: &str,
        make: impl FnOnce() -> Link,
    ) -> &mut Link {
        if self.many.is_empty() && self.few_index(name).is_err() && self.few.len() == Self::FEW {
            // Adding one more: move to the tree first.
            self.many = std::mem::take(&mut self.few)
                .into_iter()
                .map(|l| (l.name.clone(), l))
                .collect();
        }
        let named = || {
            let mut link = make();
            link.name = name.to_string();
            link
        };
        if !self.many.is_empty() {
            return self.many.entry(name.to_string()).or_insert_with(named);
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
        if self.many.is_empty() {
            let i = self.few_index(name).ok()?;
            Some(self.few.remove(i))
        } else {
            self.many.remove(name)
        }
    }

    /// The links in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Link> {
        self.few.iter().chain(self.many.values())
    }

    /// The links in name order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Link> {
        self.few.iter_mut().chain(self.many.values_mut())
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
}

impl PartialEq for Links {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.values().eq(other.values())
    }
}

impl Eq for Links {}

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
    use crate::cni::host::LinkKind;

    fn link(name: &str) -> Link {
        Link::new(name, LinkKind::Ifb, "00:00:00:00:00:01".into(), 1500)
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
        a.insert("eth0".into(), old);
        assert_eq!(a["eth0"].name, "eth0", "the key names the link");
        let replaced = a.insert("eth0".into(), link("eth0")).expect("replaced");
        assert_eq!(replaced.mtu, 9000);
        // The same set reached through a tree (grow, then shrink) equals the small one.
        let mut b = Links::default();
        for i in 0..=Links::FEW {
            b.insert(format!("tmp{i}"), link("t"));
        }
        for i in 0..=Links::FEW {
            b.remove(&format!("tmp{i}"));
        }
        b.insert("eth0".into(), link("eth0"));
        assert_eq!(a, b);
    }
}
