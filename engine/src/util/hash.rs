//! Stable hashing: the lab derives MACs, veth names, sandbox IDs and UIDs from names, so the
//! same commands give the same output on every machine (no randomness in engine state).

/// 64-bit FNV-1a over the bytes of each part, with a separator between parts.
pub(crate) fn fnv64(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0x1f;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for b in part.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// `n` lowercase hex digits derived from the parts (n ≤ 32).
pub(crate) fn hex_id(parts: &[&str], n: usize) -> String {
    ascii(&hex_digits(parts)[..n.min(32)]).to_string()
}

/// The 32 hex digits [`hex_id`] takes its digits from: those of [`halves`] (the first
/// half's digits written once, as the second half hashes them).
fn hex_digits(parts: &[&str]) -> [u8; 32] {
    let a = fnv64(parts);
    let mut digits = [0u8; 32];
    write_hex(a, &mut digits[..16]);
    let b = second_half(&digits[..16]);
    write_hex(b, &mut digits[16..]);
    digits
}

/// 128 bits derived from the parts: their hash, then the hash of its 16 hex digits and
/// `second`.
fn halves(parts: &[&str]) -> [u64; 2] {
    let a = fnv64(parts);
    let mut digits = [0u8; 16];
    write_hex(a, &mut digits);
    [a, second_half(&digits)]
}

/// The second half of [`halves`], from the first half's 16 hex digits.
fn second_half(digits: &[u8]) -> u64 {
    fnv64(&[ascii(digits), "second"])
}

/// Hex digits as text.
fn ascii(digits: &[u8]) -> &str {
    std::str::from_utf8(digits).expect("hex digits are ASCII")
}

/// `v` as 16 lowercase hex digits, zero-padded (`{v:016x}`), into `out`.
fn write_hex(v: u64, out: &mut [u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, d) in out.iter_mut().enumerate().take(16) {
        *d = HEX[((v >> (60 - 4 * i)) & 0xf) as usize];
    }
}

/// The bytes of [`mac`]: a locally administered unicast address derived from the parts.
pub fn mac_bytes(parts: &[&str]) -> [u8; 6] {
    let h = fnv64(parts).to_be_bytes();
    [(h[0] & 0xfe) | 0x02, h[1], h[2], h[3], h[4], h[5]]
}

/// A locally administered unicast MAC derived from the parts (`x2:xx:xx:xx:xx:xx`).
pub fn mac(parts: &[&str]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let h = mac_bytes(parts);
    // `format!("{:02x}:…")` by hand: a MAC is made for every veth and bridge.
    let mut out = String::with_capacity(17);
    for (i, b) in h[..6].iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0x0f)] as char);
    }
    out
}

/// A deterministic UID (printed in the 8-4-4-4-12 form Kubernetes prints): the 128 bits
/// whose hex digits are [`hex_id`]'s 32.
pub fn uid(parts: &[&str]) -> crate::cluster::meta::Uid {
    let [a, b] = halves(parts);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    crate::cluster::meta::Uid::from_bytes(bytes)
}

/// 128 bits derived from the parts with a version-4 UUID's version and variant bits set
/// (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-…`), as a random UUID the kernel or systemd makes has.
pub(crate) fn uuid_v4_bytes(parts: &[&str]) -> [u8; 16] {
    let [a, b] = halves(parts);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    bytes
}

/// A 64-hex-digit ID like containerd's sandbox and container IDs.
pub(crate) fn id64(parts: &[&str]) -> String {
    let mut digits = [0u8; 64];
    digits[..32].copy_from_slice(&hex_digits(parts));
    let tail = hex_digits(&[ascii(&digits[..32]), "tail"]);
    digits[32..].copy_from_slice(&tail);
    ascii(&digits).to_string()
}

/// Lowercase hex of a byte string (one allocation).
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0x0f)] as char);
    }
    out
}

/// A hash map that is only looked up, never walked in order (so its order can reach no
/// output), hashed with foldhash's fixed-seed hasher: deterministic, quick on short keys,
/// and its low bits vary between keys that differ only in their high bytes
/// (`10.244.7.5` and `10.244.9.5`, `node-0017` and `node-0019`), where Fx's hardly do. A
/// lookup in an ordered map compares long keys sharing prefixes (`pvc-…`, `default/…`) at
/// every level.
pub(crate) type LookupMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ids_are_the_formatted_hashes() {
        for parts in [&["a"][..], &["node-1", "eth0"], &[""]] {
            let a = fnv64(parts);
            let b = fnv64(&[&format!("{a:016x}"), "second"]);
            let want = format!("{a:016x}{b:016x}");
            for n in [0, 8, 12, 16, 31, 32, 40] {
                assert_eq!(hex_id(parts, n), want[..n.min(32)]);
            }
        }
    }

    #[test]
    fn stable_across_runs() {
        assert_eq!(fnv64(&["a"]), 0xaf63dc4c8601ec8c);
        assert_eq!(hex_id(&["web"], 8).len(), 8);
        assert_ne!(fnv64(&["ab", "c"]), fnv64(&["a", "bc"]));
    }

    #[test]
    fn ids_keep_their_formats() {
        let h = fnv64(&["node-1", "cni0"]).to_be_bytes();
        let want = format!(
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            (h[0] & 0xfe) | 0x02,
            h[1],
            h[2],
            h[3],
            h[4],
            h[5]
        );
        assert_eq!(mac(&["node-1", "cni0"]), want);
        let x = hex_id(&["web"], 32);
        let want = format!(
            "{}-{}-{}-{}-{}",
            &x[..8],
            &x[8..12],
            &x[12..16],
            &x[16..20],
            &x[20..]
        );
        assert_eq!(uid(&["web"]).to_string(), want);
        assert_eq!(id64(&["web"]), format!("{x}{}", hex_id(&[&x, "tail"], 32)));
    }

    #[test]
    fn macs_are_local_unicast() {
        let m = mac(&["node-1", "cni0"]);
        let first = u8::from_str_radix(&m[..2], 16).unwrap();
        assert_eq!(first & 0x03, 0x02);
    }
}
