//! What a plugin decodes from its config document, kept per thread for the next call.
//!
//! The runtime hands every call on a network the same document (one `Arc` per plugin of
//! the loaded list), so decoding it again on each ADD and DEL only repeats work. A memo
//! entry holds a clone of that `Arc`: while it is held, no other document can live at the
//! same address, so "same pointer" means "same document". Bounded, so loading many lists
//! cannot grow it.

use serde_json::Value;
use std::sync::Arc;

/// Decoded documents, most recent last.
#[derive(Debug)]
pub struct DocMemo<T> {
    entries: Vec<(Arc<Value>, Arc<T>)>,
}

impl<T> Default for DocMemo<T> {
    fn default() -> Self {
        DocMemo {
            entries: Vec::new(),
        }
    }
}

impl<T> DocMemo<T> {
    /// At most this many documents are remembered.
    pub const CAPACITY: usize = 16;

    /// What `decode` makes of `doc`, decoded once while `doc` stays in the memo.
    pub fn get_or(&mut self, doc: &Arc<Value>, decode: impl FnOnce(&Value) -> T) -> Arc<T> {
        if let Some((_, v)) = self.entries.iter().find(|(d, _)| Arc::ptr_eq(d, doc)) {
            return v.clone();
        }
        let v = Arc::new(decode(doc));
        if self.entries.len() == Self::CAPACITY {
            self.entries.remove(0);
        }
        self.entries.push((doc.clone(), v.clone()));
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
        for i in 0..40 {
            memo.get_or(&Arc::new(json!(i)), |v| v.to_string());
        }
        assert_eq!(memo.entries.len(), DocMemo::<String>::CAPACITY);
    }
}
