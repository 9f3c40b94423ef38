//! The store's label index, as client-go informers' indexers keep one: per kind and
//! namespace, each `(label key, value)` with the names of the objects that carry it, kept
//! on every create, metadata update and delete (a status write never changes labels).
//! Only the kinds whose [`Kind::LABEL_INDEX`] is set (pods) are kept in it.
//!
//! A selector ([`LabelQuery`]) is answered from it by its most selective `=`/`in`
//! requirement: those names are the candidates, and the full selector is matched on each,
//! so `!=`, `notin`, `!key`, existence and `>`/`<` keep their exact semantics. A selector
//! with no `=`/`in` requirement has no answer here (the caller reads every object).

use super::label_query::{LabelQuery, Op, Requirement};
use super::{ApiKind, Kind, Meta, Object, Table};
use std::collections::{BTreeMap, BTreeSet};

/// One namespace's labels: key → value → the names of the objects with that label.
type NsLabels = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The label index of every kind: kind → namespace (empty for cluster-scoped kinds) →
/// key → value → names. Holds only labels that some object carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelIndex {
    by_kind: BTreeMap<ApiKind, BTreeMap<String, NsLabels>>,
}

impl LabelIndex {
    /// The namespace an object of `K` is indexed under: its own, or the empty one for a
    /// cluster-scoped kind (whatever its metadata says).
    fn ns_of<K: Kind>(m: &Meta) -> &str {
        if K::NAMESPACED { m.namespace() } else { "" }
    }

    /// Enter an object's labels (after it was created or its metadata written).
    pub(super) fn insert<K: Kind>(&mut self, m: &Meta) {
        if !K::LABEL_INDEX || m.labels.is_empty() {
            return;
        }
        let by_ns = self.by_kind.entry(K::API_KIND).or_default();
        let ns_name = Self::ns_of::<K>(m);
        // Looked up before a key is made: most writes find the namespace and label there.
        if !by_ns.contains_key(ns_name) {
            // A cluster-scoped kind's empty namespace with a buffer: see `no_namespace`.
            let key = if ns_name.is_empty() {
                super::no_namespace()
            } else {
                ns_name.to_string()
            };
            by_ns.insert(key, NsLabels::new());
        }
        let Some(ns) = by_ns.get_mut(ns_name) else {
            return;
        };
        for (k, v) in &m.labels {
            if !ns.contains_key(k.as_str()) {
                ns.insert(k.clone(), BTreeMap::new());
            }
            let Some(values) = ns.get_mut(k.as_str()) else {
                continue;
            };
            match values.get_mut(v.as_str()) {
                Some(names) => {
                    names.insert(m.name().clone());
                }
                None => {
                    values.insert(v.clone(), BTreeSet::from([m.name().clone()]));
                }
            }
        }
    }

    /// Take an object's labels out (before it is written or removed), dropping every map
    /// that empties.
    pub(super) fn remove<K: Kind>(&mut self, m: &Meta) {
        if !K::LABEL_INDEX || m.labels.is_empty() {
            return;
        }
        let Some(by_ns) = self.by_kind.get_mut(&K::API_KIND) else {
            return;
        };
        let ns_name = Self::ns_of::<K>(m);
        let Some(ns) = by_ns.get_mut(ns_name) else {
            return;
        };
        for (k, v) in &m.labels {
            let Some(values) = ns.get_mut(k.as_str()) else {
                continue;
            };
            if let Some(names) = values.get_mut(v.as_str()) {
                names.remove(m.name().as_str());
                if names.is_empty() {
                    values.remove(v.as_str());
                }
            }
            if values.is_empty() {
                ns.remove(k.as_str());
            }
        }
        if ns.is_empty() {
            by_ns.remove(ns_name);
        }
        if by_ns.is_empty() {
            self.by_kind.remove(&K::API_KIND);
        }
    }

    /// The namespaces holding a labelled object of `kind` (`None`: every one) that are
    /// `ns` (`Some`: that one only), in order.
    fn namespaces<'a>(
        &'a self,
        kind: ApiKind,
        ns: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a str, &'a NsLabels)> + 'a {
        let by_ns = self.by_kind.get(&kind);
        let all = by_ns
            .filter(|_| ns.is_none())
            .into_iter()
            .flatten()
            .map(|(n, l)| (n.as_str(), l));
        let one = ns.and_then(|n| Some((n, by_ns?.get(n)?)));
        all.chain(one)
    }

    /// How many objects in scope a `=`/`in` requirement leaves (`None` for any other).
    fn selects(&self, kind: ApiKind, ns: Option<&str>, r: &Requirement) -> Option<usize> {
        (r.op == Op::In).then(|| {
            self.namespaces(kind, ns)
                .filter_map(|(_, labels)| labels.get(r.key.as_str()))
                .flat_map(|values| r.values.iter().filter_map(|v| values.get(v.as_str())))
                .map(BTreeSet::len)
                .sum()
        })
    }

    /// The objects of `K` that can match `query`, as `(namespace, name)` in the table's
    /// order: in `ns` (every namespace when `None`; the empty namespace for a
    /// cluster-scoped kind), those carrying a label its most selective `=`/`in`
    /// requirement asks for. `None` when it has no such requirement or `K` has no label
    /// index (the caller reads every object). The caller matches each candidate against
    /// the whole selector.
    pub fn candidates<'a, K: Kind>(
        &'a self,
        ns: Option<&'a str>,
        query: &'a LabelQuery,
    ) -> Option<Vec<(&'a str, &'a str)>> {
        if !K::LABEL_INDEX {
            return None;
        }
        let kind = K::API_KIND;
        let best = query
            .requirements
            .iter()
            .filter_map(|r| Some((self.selects(kind, ns, r)?, r)))
            .min_by_key(|(n, _)| *n)?
            .1;
        let mut out = Vec::new();
        for (ns, labels) in self.namespaces(kind, ns) {
            let Some(values) = labels.get(best.key.as_str()) else {
                continue;
            };
            let start = out.len();
            for v in &best.values {
                let names = values.get(v.as_str()).into_iter().flatten();
                out.extend(names.map(|n| (ns, n.as_str())));
            }
            // An object has one value per key, so the sets are disjoint: one sort makes
            // the namespace's part name-ordered.
            if best.values.len() > 1 {
                out[start..].sort_unstable();
            }
        }
        Some(out)
    }

    /// The index of one table, built by reading every object.
    pub fn of_table<K: Kind>(table: &Table<K>) -> Self {
        let mut index = LabelIndex::default();
        for o in table.values() {
            index.insert::<K>(&o.metadata);
        }
        index
    }

    /// Panics (debug builds' and tests' check) unless the part of the index for `K` is
    /// what a read of every object of `table` gives.
    #[cfg(any(debug_assertions, test))]
    pub(crate) fn assert_matches<K: Kind>(&self, table: &Table<K>) {
        let again = Self::of_table(table);
        assert_eq!(
            self.by_kind.get(&K::API_KIND),
            again.by_kind.get(&K::API_KIND),
            "the store's label index of {} is stale",
            K::RESOURCE
        );
    }

    /// The objects of a selection from the index's candidates, looked up in `table`
    /// (whose key for a cluster-scoped kind has an empty namespace).
    pub fn objects<'t, K: Kind>(
        table: &'t Table<K>,
        keys: Vec<(&str, &str)>,
    ) -> Vec<&'t Object<K>> {
        keys.into_iter()
            .filter_map(|(ns, name)| {
                let ns = if K::NAMESPACED {
                    ns.to_string()
                } else {
                    super::no_namespace()
                };
                table.get(&(ns, name.to_string()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::label_query::parse;
    use crate::cluster::{Cluster, NodeSpec, PodSpec};
    use crate::util::time::Millis;

    fn pod(c: &mut Cluster, ns: &str, name: &str, labels: &[(&str, &str)]) {
        let mut p = Object::new(name, ns, PodSpec::default());
        for (k, v) in labels {
            p.metadata.labels.insert(k.to_string(), v.to_string());
        }
        c.pods().create(p, Millis::ZERO).unwrap();
    }

    /// What the index answers for `selector`, as `ns/name`.
    fn selected(c: &Cluster, ns: Option<&str>, selector: &str) -> Option<Vec<String>> {
        let q = parse(selector).unwrap();
        let keys = c.labels.candidates::<PodSpec>(ns, &q)?;
        Some(
            LabelIndex::objects(&c.pods, keys)
                .into_iter()
                .filter(|p| q.matches(&p.metadata.labels))
                .map(|p| format!("{}/{}", p.metadata.namespace(), p.metadata.name()))
                .collect(),
        )
    }

    /// What reading every pod answers.
    fn scanned(c: &Cluster, ns: Option<&str>, selector: &str) -> Vec<String> {
        let q = parse(selector).unwrap();
        c.pods
            .values()
            .filter(|p| ns.is_none_or(|n| n == p.metadata.namespace()))
            .filter(|p| q.matches(&p.metadata.labels))
            .map(|p| format!("{}/{}", p.metadata.namespace(), p.metadata.name()))
            .collect()
    }

    /// `get pods -l` answers from the index what a read of every pod answers, in the
    /// table's order, as labels change, pods go and namespaces differ.
    #[test]
    fn follows_label_changes_deletes_and_namespaces() {
        let mut c = Cluster::default();
        pod(
            &mut c,
            "default",
            "web-2",
            &[("app", "web"), ("tier", "front")],
        );
        pod(&mut c, "default", "web-1", &[("app", "web")]);
        pod(&mut c, "default", "db", &[("app", "db")]);
        pod(&mut c, "other", "web-0", &[("app", "web")]);
        pod(&mut c, "default", "plain", &[]);
        let web = ["default/web-1", "default/web-2"];
        assert_eq!(selected(&c, Some("default"), "app=web").unwrap(), web);
        assert_eq!(
            selected(&c, None, "app=web").unwrap(),
            ["default/web-1", "default/web-2", "other/web-0"]
        );
        assert_eq!(
            selected(&c, Some("default"), "app in (web,db)").unwrap(),
            ["default/db", "default/web-1", "default/web-2"]
        );
        // The other requirements filter the candidates with their own semantics.
        assert_eq!(
            selected(&c, Some("default"), "app=web,tier!=front").unwrap(),
            ["default/web-1"]
        );
        assert_eq!(
            selected(&c, Some("default"), "app=web,!tier").unwrap(),
            ["default/web-1"]
        );
        // No `=`/`in`: no answer from the index.
        assert_eq!(selected(&c, Some("default"), "app!=web"), None);
        assert_eq!(selected(&c, Some("default"), "tier"), None);

        // `label pod web-1 app=db --overwrite`.
        let mut p = c.pods().get("default", "web-1").unwrap().clone();
        p.metadata.labels.insert("app".into(), "db".into());
        c.pods().update(p).unwrap();
        assert_eq!(
            selected(&c, Some("default"), "app=web").unwrap(),
            ["default/web-2"]
        );
        assert_eq!(
            selected(&c, Some("default"), "app=db").unwrap(),
            ["default/db", "default/web-1"]
        );
        // A status write keeps the labels.
        let mut p = c.pods().get("default", "db").unwrap().clone();
        p.status.phase = "Running".into();
        c.pods().update_status(&p).unwrap();
        c.pods().delete("default", "web-2").unwrap();
        c.pods().delete("other", "web-0").unwrap();
        assert_eq!(selected(&c, None, "app=web").unwrap(), Vec::<String>::new());
        assert_eq!(
            selected(&c, None, "tier=front").unwrap(),
            Vec::<String>::new()
        );
        c.labels.assert_matches(&c.pods);
        for sel in ["app=db", "app in (db,web)", "app=db,tier", "app=web"] {
            for ns in [None, Some("default"), Some("other")] {
                assert_eq!(selected(&c, ns, sel).unwrap(), scanned(&c, ns, sel));
            }
        }
        // Every label gone: nothing is left behind in the index.
        for name in ["web-1", "db", "plain"] {
            c.pods().delete("default", name).unwrap();
        }
        assert_eq!(c.labels, LabelIndex::default());
    }

    /// A kind without a label index (nodes: 5,000 at most) has no answer from it, and its
    /// writes leave nothing in it: a selector reads its objects.
    #[test]
    fn kinds_without_an_index_are_read() {
        let mut c = Cluster::default();
        let mut n = Object::new("node-1", "", NodeSpec::default());
        n.metadata.labels.insert("zone".into(), "a".into());
        c.nodes().create(n, Millis::ZERO).unwrap();
        let q = parse("zone=a").unwrap();
        assert_eq!(c.labels.candidates::<NodeSpec>(Some(""), &q), None);
        assert_eq!(c.labels, LabelIndex::default());
    }

    proptest::proptest! {
        /// Any run of creates, relabels and deletes leaves the index equal to one built
        /// from the table, and every selector answers from it as a scan does.
        #[test]
        fn index_answers_as_a_scan(ops in proptest::collection::vec(
            (0u8..3, 0u8..2, 0u8..6, proptest::option::of(0u8..3), proptest::option::of(0u8..2)),
            0..60,
        )) {
            let mut c = Cluster::default();
            for (op, ns, name, app, tier) in ops {
                let ns = ["default", "other"][usize::from(ns)];
                let name = format!("p{name}");
                let mut labels = Vec::new();
                let apps = ["web", "db", ""];
                if let Some(a) = app {
                    labels.push(("app", apps[usize::from(a)]));
                }
                if let Some(t) = tier {
                    labels.push(("tier", ["front", "back"][usize::from(t)]));
                }
                let exists = c.pods().get(ns, &name).is_ok();
                match (op, exists) {
                    (0, false) => pod(&mut c, ns, &name, &labels),
                    (1, true) => {
                        let mut p = c.pods().get(ns, &name).unwrap().clone();
                        p.metadata.labels = labels
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect();
                        c.pods().update(p).unwrap();
                    }
                    (_, true) => {
                        c.pods().delete(ns, &name).unwrap();
                    }
                    _ => {}
                }
            }
            c.labels.assert_matches(&c.pods);
            for sel in ["app=web", "app=", "app in (web,db)", "app in (db,,web)", "app=web,tier=front",
                        "app=db,tier!=front", "tier in (back),!app", "app notin (web)"] {
                for ns in [None, Some("default"), Some("other")] {
                    let want = scanned(&c, ns, sel);
                    if let Some(got) = selected(&c, ns, sel) {
                        proptest::prop_assert_eq!(got, want, "{} in {:?}", sel, ns);
                    }
                }
            }
        }
    }
}
