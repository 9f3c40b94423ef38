//! Just enough HPACK (RFC 7541) to read the header blocks a client sends and rewrite one
//! field in place: integers, string literals (raw or Huffman-coded), the static table's
//! names, and the dynamic table's entry sizes (so that what is evicted stays in step with
//! the server's decoder). [`super::authority`] uses it.

use std::collections::{HashMap, VecDeque};
use std::sync::OnceLock;

/// The static table's names, index 1 first (RFC 7541 Appendix A).
const STATIC_NAMES: [&str; 61] = [
    ":authority",
    ":method",
    ":method",
    ":path",
    ":path",
    ":scheme",
    ":scheme",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
];

/// The Huffman code of each byte: (code, length in bits) (RFC 7541 Appendix B).
const HUFFMAN: [(u32, u8); 256] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
];

/// The dynamic table size a connection starts with (SETTINGS_HEADER_TABLE_SIZE's default,
/// which the lab's server does not change).
pub(super) const DEFAULT_TABLE_SIZE: usize = 4096;

/// The client's dynamic table as far as a reader needs it: each entry's size and whether
/// its name is `:authority`, newest first.
#[derive(Debug)]
pub(super) struct Table {
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    authority: bool,
    name_len: usize,
    size: usize,
}

impl Table {
    pub(super) fn new() -> Table {
        Table {
            entries: VecDeque::new(),
            size: 0,
            max: DEFAULT_TABLE_SIZE,
        }
    }

    fn resize(&mut self, max: usize) {
        self.max = max;
        self.evict(0);
    }

    /// Evict the oldest entries until `room` more bytes fit (RFC 7541 4.4).
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            match self.entries.pop_back() {
                Some(e) => self.size -= e.size,
                None => break,
            }
        }
    }

    fn insert(&mut self, authority: bool, name_len: usize, value_len: usize) {
        let size = name_len + value_len + 32;
        if size > self.max {
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict(size);
        self.size += size;
        self.entries.push_front(Entry {
            authority,
            name_len,
            size,
        });
    }

    /// (whether the name is `:authority`, the name's length) of an index (1-based: the
    /// static table, then the dynamic table).
    fn name(&self, index: usize) -> Option<(bool, usize)> {
        match index {
            0 => None,
            1..=61 => Some((index == 1, STATIC_NAMES[index - 1].len())),
            _ => self
                .entries
                .get(index - 62)
                .map(|e| (e.authority, e.name_len)),
        }
    }
}

/// What a header block is made of, past what [`rewrite`] needs: `None` for a block that
/// is not valid HPACK (the server's decoder then refuses it itself).
struct Reader<'a> {
    block: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.block.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// An integer with an `n`-bit prefix (RFC 7541 5.1), at most 2^28 or so.
    fn int(&mut self, n: u32) -> Option<usize> {
        let mask = (1usize << n) - 1;
        let mut v = usize::from(self.byte()?) & mask;
        if v < mask {
            return Some(v);
        }
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            v += usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
            if shift > 21 {
                return None;
            }
        }
    }

    /// A string literal (RFC 7541 5.2), decoded.
    fn string(&mut self) -> Option<Vec<u8>> {
        let huffman = self.block.get(self.at)? & 0x80 != 0;
        let len = self.int(7)?;
        let raw = self.block.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        if huffman {
            huffman_decode(raw)
        } else {
            Some(raw.to_vec())
        }
    }
}

/// Decode Huffman-coded bytes; `None` for a code that is not one, or padding longer than
/// 7 bits or not all ones (RFC 7541 5.2).
fn huffman_decode(raw: &[u8]) -> Option<Vec<u8>> {
    static CODES: OnceLock<HashMap<(u8, u32), u8>> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        (0..=255u8)
            .map(|b| ((HUFFMAN[usize::from(b)].1, HUFFMAN[usize::from(b)].0), b))
            .collect()
    });
    let mut out = Vec::with_capacity(raw.len() * 8 / 5);
    let (mut code, mut len) = (0u32, 0u8);
    for byte in raw {
        for bit in (0..8).rev() {
            code = code << 1 | u32::from(byte >> bit & 1);
            len += 1;
            if let Some(&b) = codes.get(&(len, code)) {
                out.push(b);
                (code, len) = (0, 0);
            } else if len >= 30 {
                return None;
            }
        }
    }
    (len <= 7 && code == (1 << len) - 1).then_some(out)
}

/// `v` as an integer with an `n`-bit prefix whose other bits are `flags`.
fn push_int(out: &mut Vec<u8>, flags: u8, n: u32, v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = v - mask;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// The block with every `:authority` value `fix` changes rewritten (as a raw string of the
/// same length, so that the dynamic tables on both sides keep the same sizes), the table
/// kept in step; `None` when the block is not valid HPACK. `fix` must return a value of
/// the length it is given.
pub(super) fn rewrite(
    table: &mut Table,
    block: &[u8],
    fix: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(block.len() + 16);
    let mut r = Reader { block, at: 0 };
    while r.at < block.len() {
        let start = r.at;
        let first = block[start];
        if first & 0x80 != 0 {
            r.int(7)?; // an indexed field: the entry was rewritten when it was inserted
            out.extend_from_slice(&block[start..r.at]);
            continue;
        }
        if first & 0xe0 == 0x20 {
            let max = r.int(5)?;
            (max <= DEFAULT_TABLE_SIZE).then_some(())?;
            table.resize(max);
            out.extend_from_slice(&block[start..r.at]);
            continue;
        }
        let indexing = first & 0x40 != 0;
        let index = r.int(if indexing { 6 } else { 4 })?;
        let (authority, name_len) = if index == 0 {
            let name = r.string()?;
            (name == b":authority", name.len())
        } else {
            table.name(index)?
        };
        let name_end = r.at;
        let value = r.string()?;
        match authority.then(|| fix(&value)).flatten() {
            Some(fixed) if fixed.len() == value.len() => {
                out.extend_from_slice(&block[start..name_end]);
                push_int(&mut out, 0, 7, fixed.len());
                out.extend_from_slice(&fixed);
            }
            _ => out.extend_from_slice(&block[start..r.at]),
        }
        if indexing {
            table.insert(authority, name_len, value.len());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7541 C.4.1: "www.example.com" Huffman-coded.
    #[test]
    fn decodes_the_rfc_s_huffman_example() {
        let raw = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        assert_eq!(
            huffman_decode(&raw).as_deref(),
            Some(&b"www.example.com"[..])
        );
        // Padding that is not all ones is an error.
        assert_eq!(
            huffman_decode(&[
                0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xfe
            ]),
            None
        );
    }

    /// RFC 7541 C.4: three requests sharing a dynamic table; the :authority of each is
    /// rewritten, the other fields are passed on byte for byte, and the table stays in step
    /// (the third request's indexed fields reach the entries the first ones inserted).
    #[test]
    fn rewrites_the_authority_and_keeps_the_table_in_step() {
        let upper = |v: &[u8]| Some(v.to_ascii_uppercase());
        let mut table = Table::new();
        let first = [
            0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
            0x90, 0xf4, 0xff,
        ];
        let out = rewrite(&mut table, &first, upper).expect("valid");
        let mut want = vec![0x82, 0x86, 0x84, 0x41, 15];
        want.extend_from_slice(b"WWW.EXAMPLE.COM");
        assert_eq!(out, want);
        assert_eq!(table.size, 57);
        // C.4.2: the authority is the dynamic entry 62 now; "cache-control: no-cache" is
        // inserted with its name from the static table.
        let second = [
            0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf,
        ];
        assert_eq!(
            rewrite(&mut table, &second, upper).as_deref(),
            Some(&second[..])
        );
        assert_eq!(table.size, 110);
        assert_eq!(table.name(63), Some((true, 10)));
        // A block that is not HPACK.
        assert_eq!(rewrite(&mut table, &[0x41, 0x85, 0x00], upper), None);
    }
}
