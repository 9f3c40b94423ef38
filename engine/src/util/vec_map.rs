//! A map kept as one `Vec` of entries sorted by key, grown by an eighth at a time.
//!
//! For the per-node maps that hold one entry a pod (a node's sandbox namespaces, its
//! sandboxes): a B-tree leaves its nodes part empty and a doubling `Vec` up to half its room
//! unused, which at thousands of nodes is most of what these maps cost. A node holds tens of
//! pods, so finding by binary search and moving the tail on insert cost little.

use std::borrow::Borrow;

/// A map from `K` to `V` in key order, its room at most an eighth more than its entries
/// (plus any left by removals).
#[derive(Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    /// Sorted by key, each key once.
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap::new()
    }
}

impl<K, V> VecMap<K, V> {
    /// An empty map (no allocation).
    pub const fn new() -> Self {
        VecMap {
            entries: Vec::new(),
        }
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        let by_ref: for<'e> fn(&'e (K, V)) -> (&'e K, &'e V) = |(k, v)| (k, v);
        self.entries.iter().map(by_ref)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// The iterator of [`VecMap::iter`]: entries in key order.
pub type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, for<'e> fn(&'e (K, V)) -> (&'e K, &'e V)>;

impl<K: Ord, V> VecMap<K, V> {
    /// Room for one more entry: when full, an eighth more (at least one). Growing by one
    /// moved the entries to a new allocation at each of the allocator's size classes
    /// (four to a doubling), each move reading and writing the whole map; an eighth more
    /// moves them about half as often, for at most an eighth of the room unused.
    fn reserve_one(&mut self) {
        if self.entries.len() == self.entries.capacity() {
            self.entries.reserve_exact((self.entries.len() / 8).max(1));
        }
    }

    /// Where `key` is (`Ok`) or would go (`Err`).
    fn position<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value under `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.get_key_value(key).map(|(_, v)| v)
    }

    /// The key as the map holds it and its value.
    pub fn get_key_value<Q: Ord + ?Sized>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
    {
        let at = self.position(key).ok()?;
        let (k, v) = &self.entries[at];
        Some((k, v))
    }

    /// The value under `key`, mutably.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let at = self.position(key).ok()?;
        Some(&mut self.entries[at].1)
    }

    /// Whether `key` has a value.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.position(key).is_ok()
    }

    /// Put `value` under `key`, returning the value it replaces. A new entry in a full map
    /// grows the room by an eighth (at least one), not by doubling.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.position(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, value)),
            Err(at) => {
                self.reserve_one();
                self.entries.insert(at, (key, value));
                None
            }
        }
    }

    /// The value under `key`, made by `make` (its entry put in order) if there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let at = match self.position(&key) {
            Ok(at) => at,
            Err(at) => {
                self.reserve_one();
                self.entries.insert(at, (key, make()));
                at
            }
        };
        &mut self.entries[at].1
    }

    /// Keep only the entries `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    /// The entry `cmp` finds: `cmp` orders a key against the one sought, as `Ord` orders
    /// the keys (for a key type that is not looked up by a borrowed form).
    pub fn get_by(&self, cmp: impl FnMut(&K) -> std::cmp::Ordering) -> Option<(&K, &V)> {
        let mut cmp = cmp;
        let at = self.entries.binary_search_by(|(k, _)| cmp(k)).ok()?;
        let (k, v) = &self.entries[at];
        Some((k, v))
    }

    /// The entries from the first whose key `before` says no to, in order: with `before`
    /// true for a prefix of the keys (those below a bound), the entries from that bound on.
    pub fn iter_from(&self, before: impl FnMut(&K) -> bool) -> Iter<'_, K, V> {
        let mut before = before;
        let at = self.entries.partition_point(|(k, _)| before(k));
        let by_ref: for<'e> fn(&'e (K, V)) -> (&'e K, &'e V) = |(k, v)| (k, v);
        self.entries[at..].iter().map(by_ref)
    }

    /// Take out the value of the entry `cmp` finds (see [`VecMap::get_by`]).
    pub fn remove_by(&mut self, cmp: impl FnMut(&K) -> std::cmp::Ordering) -> Option<V> {
        let mut cmp = cmp;
        let at = self.entries.binary_search_by(|(k, _)| cmp(k)).ok()?;
        Some(self.entries.remove(at).1)
    }

    /// Take out the value under `key`.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let at = self.position(key).ok()?;
        Some(self.entries.remove(at).1)
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for VecMap<K, V> {
    type Output = V;

    /// The value under `key`; panics when there is none (as `BTreeMap`'s index does).
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry for the key")
    }
}

/// Written as a map (`{key: value, …}`), as `BTreeMap` writes itself.
impl<K: std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::VecMap;

    #[test]
    fn entries_stay_in_key_order_and_the_room_grows_by_one() {
        let mut map = VecMap::new();
        for key in ["b", "d", "a", "c"] {
            assert_eq!(map.insert(key.to_string(), key.len()), None);
        }
        assert_eq!(map.insert("c".to_string(), 7), Some(1));
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(map.entries.capacity(), 4);
        assert_eq!(map["c"], 7);
        assert_eq!(map.get("e"), None);
        assert_eq!(map.remove("a"), Some(1));
        assert!(!map.contains_key("a"));
        assert_eq!(format!("{map:?}"), r#"{"b": 1, "c": 7, "d": 1}"#);
    }
}
