//! What a plugin decodes from its config document, kept per thread for the next call.
//!
//! The runtime hands every call on a network the same document (one `Arc` per plugin of
//! the loaded list), so decoding it again on each ADD and DEL only repeats work. A memo
//! entry holds a clone of that `Arc`: while it is held, no other document can live at the
//! same address, so "same pointer" means "same document". Bounded, so loading many lists
//! cannot grow it without end.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Decoded documents by address (each entry holds its document, so the address is its own).
#[derive(Debug)]
pub struct DocMemo<T> {
    entries: HashMap<usize, (Arc<Value>, Arc<T>)>,
}

impl<T> Default for DocMemo<T> {
    fn default() -> Self {
        DocMemo {
            entries: HashMap::new(),
        }
    }
}

impl<T> DocMemo<T> {
    /// At most this many documents are remembered (one per plugin of each node's list: a
    /// thousand-node cluster with four plugins fits); when full, it starts over.
    pub const CAPACITY: usize = 8192;

    /// What `decode` makes of `doc`, decoded once while `doc` stays in the memo.
    pub fn get_or(&mut self, doc: &Arc<Value>, decode: impl FnOnce(&Value) -> T) -> Arc<T> {
        let addr = Arc::as_ptr(doc) as usize;
        if let Some((d, v)) = self.entries.get(&addr) {
            if Arc::ptr_eq(d, doc) {
                return v.clone();
            }
        }
        let v = Arc::new(decode(doc));
        if self.entries.len() >= Self::CAPACITY {
            self.entries.clear();
        }
        self.entries.insert(addr, (doc.clone(), v.clone()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        for i in 0..DocMemo::<String>::CAPACITY + 5 {
            memo.get_or(&Arc::new(json!(i)), |v| v.to_string());
        }
        assert!(memo.entries.len() <= DocMemo::<String>::CAPACITY);
    }
}
