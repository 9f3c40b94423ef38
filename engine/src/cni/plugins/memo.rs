//! What a plugin decodes from its config document, kept per thread for the next call.
//!
//! The runtime hands every call on a network the same document (one `Arc` per plugin of
//! the loaded list), so decoding it again on each ADD and DEL only repeats work. A memo
//! entry holds a `Weak` to that document: the document is freed as usual when its list
//! goes, but its allocation stays reserved while the entry lives, so no other document can
//! appear at the same address: "same pointer" means "same document". Bounded, so decoding
//! many one-off documents cannot grow it without end. The key is an address, which needs
//! no keyed (DoS-resistant) hash: `FxHash` makes a hit a few instructions.

use rustc_hash::FxHashMap;
use serde_json::Value;
use std::sync::{Arc, Weak};

/// Decoded documents by address.
#[derive(Debug)]
pub(crate) struct DocMemo<T> {
    entries: FxHashMap<usize, (Weak<Value>, Arc<T>)>,
    /// The value decoded last, for [`DocMemo::get_or_equal`] (held weakly: it keeps
    /// nothing alive).
    last: Weak<T>,
}

impl<T> Default for DocMemo<T> {
    fn default() -> Self {
        DocMemo {
            entries: FxHashMap::default(),
            last: Weak::new(),
        }
    }
}

impl<T> DocMemo<T> {
    /// At most this many documents are remembered (one per plugin of each node's list:
    /// Kubernetes' limit of five thousand nodes with six plugins fits, for a memo that sees
    /// every plugin's document, as skel's does); when full, it starts over.
    pub const CAPACITY: usize = 32768;

    /// What `decode` makes of `doc`, decoded once while `doc` stays in the memo.
    pub(crate) fn get_or(&mut self, doc: &Arc<Value>, decode: impl FnOnce(&Value) -> T) -> Arc<T> {
        self.get_or_sharing(doc, decode, |_, v| Arc::new(v))
    }

    /// [`get_or`](Self::get_or), where a value equal to the one decoded last is that
    /// value's copy. Every node holds its own document (a template filled in with the
    /// node's podCIDR), so each node's entry would hold its own value; a plugin that does
    /// not read the podCIDR (bridge) decodes the same value from all of them, now held once.
    pub(crate) fn get_or_equal(
        &mut self,
        doc: &Arc<Value>,
        decode: impl FnOnce(&Value) -> T,
    ) -> Arc<T>
    where
        T: PartialEq,
    {
        self.get_or_sharing(doc, decode, |last, v| match last.upgrade() {
            Some(last) if *last == v => last,
            _ => Arc::new(v),
        })
    }

    /// The memo's lookup, with `share` making the new entry's value from the value
    /// decoded last and the new one.
    fn get_or_sharing(
        &mut self,
        doc: &Arc<Value>,
        decode: impl FnOnce(&Value) -> T,
        share: impl FnOnce(&Weak<T>, T) -> Arc<T>,
    ) -> Arc<T> {
        let addr = Arc::as_ptr(doc) as usize;
        if let Some((d, v)) = self.entries.get(&addr) {
            // The entry's Weak keeps this address reserved, so it is this very document.
            if std::ptr::eq(d.as_ptr(), Arc::as_ptr(doc)) {
                return v.clone();
            }
        }
        let v = share(&self.last, decode(doc));
        self.last = Arc::downgrade(&v);
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        self.entries.insert(addr, (Arc::downgrade(doc), v.clone()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_of_different_documents_are_one_copy() {
        let mut memo: DocMemo<String> = DocMemo::default();
        let (a, b, c) = (
            Arc::new(json!({"name": "x", "subnet": "10.1.0.0/24"})),
            Arc::new(json!({"name": "x", "subnet": "10.1.1.0/24"})),
            Arc::new(json!({"name": "y", "subnet": "10.1.1.0/24"})),
        );
        let name = |v: &Value| v["name"].to_string();
        let (va, vb, vc) = (
            memo.get_or_equal(&a, name),
            memo.get_or_equal(&b, name),
            memo.get_or_equal(&c, name),
        );
        assert!(Arc::ptr_eq(&va, &vb), "equal values are shared");
        assert_eq!((&*vb, &*vc), (&"\"x\"".to_string(), &"\"y\"".to_string()));
        assert!(Arc::ptr_eq(&memo.get_or_equal(&b, |_| unreachable!()), &va));
    }

    #[test]
    fn decodes_a_document_once_and_tells_equal_copies_apart() {
        let mut memo: DocMemo<String> = DocMemo::default();
        let a = Arc::new(json!({"name": "a"}));
        let copy = Arc::new(json!({"name": "a"}));
        let mut calls = 0;
        let mut decode = |v: &Value| {
            calls += 1;
            v["name"].to_string()
        };
        assert_eq!(*memo.get_or(&a, &mut decode), "\"a\"");
        assert_eq!(*memo.get_or(&a, &mut decode), "\"a\"");
        assert_eq!(*memo.get_or(&copy, &mut decode), "\"a\"");
        assert_eq!(
            calls, 2,
            "the same Arc is decoded once; another Arc is its own entry"
        );
        let held: Vec<Arc<Value>> = (0..DocMemo::<String>::CAPACITY + 5)
            .map(|i| Arc::new(json!(i)))
            .collect();
        for doc in &held {
            memo.get_or(doc, |v| v.to_string());
        }
        assert!(memo.entries.len() <= DocMemo::<String>::CAPACITY);
        // A freed document's address is not reused while its entry lives: a new document
        // is decoded afresh.
        memo.entries.clear();
        for i in 0..100 {
            let once = Arc::new(json!(format!("doc {i}")));
            assert_eq!(
                *memo.get_or(&once, |v| v.to_string()),
                format!("\"doc {i}\"")
            );
        }
    }
}
