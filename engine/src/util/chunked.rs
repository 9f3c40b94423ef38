//! An append-only sequence kept in fixed-size chunks.
//!
//! For the lab's longest sequences, one element a command or an object (the journal's
//! entries, the timeline's clock of each event, a store table's slots): a doubling `Vec` leaves up to half its room unused and
//! copies everything at each doubling, which at 150,000 commands is megabytes of slack. A
//! chunk holds [`CHUNK`] elements and is allocated at that size, so the room past the
//! elements is at most one chunk's.

/// Elements a chunk holds.
const CHUNK: usize = 1024;

/// A sequence of `T` grown at its end, held in chunks of [`CHUNK`] elements.
#[derive(Clone, PartialEq, Eq)]
pub struct ChunkedVec<T> {
    /// Every chunk full but the last, which is not empty (no chunks when empty).
    chunks: Vec<Vec<T>>,
}

impl<T> Default for ChunkedVec<T> {
    fn default() -> Self {
        ChunkedVec::new()
    }
}

impl<T> ChunkedVec<T> {
    /// An empty sequence (no allocation).
    pub const fn new() -> Self {
        ChunkedVec { chunks: Vec::new() }
    }

    /// How many elements there are.
    pub fn len(&self) -> usize {
        self.chunks
            .last()
            .map_or(0, |last| (self.chunks.len() - 1) * CHUNK + last.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Add `value` at the end.
    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => {
                // A cloned chunk has room for its elements only: give it the rest at once.
                if last.len() == last.capacity() {
                    last.reserve_exact(CHUNK - last.len());
                }
                last.push(value);
            }
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(value);
                self.chunks.push(chunk);
            }
        }
    }

    /// The element at `index`.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks.get(index / CHUNK)?.get(index % CHUNK)
    }

    /// The last element.
    pub fn last(&self) -> Option<&T> {
        self.chunks.last()?.last()
    }

    /// The number of elements before the first for which `pred` is false (`pred` true of a
    /// prefix and false of the rest, as [`slice::partition_point`] asks).
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let whole = self
            .chunks
            .partition_point(|c| c.last().is_some_and(&mut pred));
        match self.chunks.get(whole) {
            Some(chunk) => whole * CHUNK + chunk.partition_point(pred),
            // `pred` holds for every element (the last chunk may be part full).
            None => self.len(),
        }
    }

    /// The elements, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone {
        self.chunks.iter().flatten()
    }

    /// The elements, in order, to change in place.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flatten()
    }

    /// The elements from `start` on, in order (none when `start` is past the end).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &T> + Clone {
        let (chunk, at) = (start / CHUNK, start % CHUNK);
        let first = self
            .chunks
            .get(chunk)
            .map_or(&[][..], |c| c.get(at..).unwrap_or(&[]));
        let rest = self.chunks.get(chunk + 1..).unwrap_or(&[]);
        first.iter().chain(rest.iter().flatten())
    }
}

impl<T: Clone> ChunkedVec<T> {
    /// A copy of the first `n` elements (all of them when there are fewer).
    pub fn prefix(&self, n: usize) -> ChunkedVec<T> {
        self.iter().take(n).cloned().collect()
    }
}

impl<T> std::ops::Index<usize> for ChunkedVec<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        &self.chunks[index / CHUNK][index % CHUNK]
    }
}

impl<T> std::ops::IndexMut<usize> for ChunkedVec<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        &mut self.chunks[index / CHUNK][index % CHUNK]
    }
}

impl<T> FromIterator<T> for ChunkedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut seq = ChunkedVec::new();
        for value in iter {
            seq.push(value);
        }
        seq
    }
}

impl<'a, T> IntoIterator for &'a ChunkedVec<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.iter().flatten()
    }
}

/// Printed as a list, as a `Vec` prints.
impl<T: std::fmt::Debug> std::fmt::Debug for ChunkedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{CHUNK, ChunkedVec};

    #[test]
    fn reads_as_the_vec_it_replaces() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7] {
            let v: Vec<usize> = (0..n).collect();
            let c: ChunkedVec<usize> = v.iter().copied().collect();
            assert_eq!(c.len(), n);
            assert_eq!(c.is_empty(), n == 0);
            assert!(c.iter().eq(&v));
            assert!(c.iter().rev().eq(v.iter().rev()));
            assert_eq!(c.last(), v.last());
            for i in [0, 1, CHUNK - 1, CHUNK, n.saturating_sub(1), n, n + 1] {
                assert_eq!(c.get(i), v.get(i), "get({i}) of {n}");
                assert!(
                    c.iter_from(i).eq(v.get(i..).unwrap_or(&[])),
                    "from {i} of {n}"
                );
                assert!(c.prefix(i).iter().eq(&v[..i.min(n)]));
            }
            for x in [0, 1, CHUNK, n / 2, n, n + 5] {
                assert_eq!(c.partition_point(|&e| e < x), v.partition_point(|&e| e < x));
            }
            if n > 0 {
                assert_eq!(c[n - 1], n - 1);
            }
            assert_eq!(format!("{c:?}"), format!("{v:?}"));
            // A clone grows on as the original does, its chunks at their full size.
            let mut copy = c.clone();
            for x in copy.iter_mut() {
                *x += 1;
            }
            if n > 0 {
                copy[0] -= 1;
                assert_eq!(copy[0], 0);
            }
            copy.push(n);
            assert_eq!(copy.len(), n + 1);
            assert_eq!(copy.last(), Some(&n));
            assert!(
                copy.chunks
                    .iter()
                    .all(|k| k.capacity() == CHUNK || k.len() < CHUNK)
            );
        }
    }
}
