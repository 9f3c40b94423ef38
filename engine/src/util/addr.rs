//! Addresses written as text without `core::fmt`: the same text as `Display` for
//! `Ipv4Addr`, `IpAddr` and `IpNet` (IPv6 goes through `Display`), about a tenth of its
//! cost. Building a 5,000-node preset writes a dozen addresses per node (flanneld's rules,
//! subnet.env, routes, the Node's fields); `Ipv4Addr`'s `Display` is ~1,300 instructions.

use ipnet::IpNet;
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};

/// Append `n` (0..=255) in decimal.
fn push_octet(out: &mut String, n: u8) {
    if n >= 100 {
        out.push(char::from(b'0' + n / 100));
    }
    if n >= 10 {
        out.push(char::from(b'0' + n / 10 % 10));
    }
    out.push(char::from(b'0' + n % 10));
}

/// Append `n` in decimal (as `Display` writes it).
pub(crate) fn push_u32(out: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for d in &digits[i..] {
        out.push(char::from(*d));
    }
}

/// Append `a` as `Display` writes it (`10.244.0.1`).
pub(crate) fn push_ipv4(out: &mut String, a: Ipv4Addr) {
    let [a, b, c, d] = a.octets();
    push_octet(out, a);
    out.push('.');
    push_octet(out, b);
    out.push('.');
    push_octet(out, c);
    out.push('.');
    push_octet(out, d);
}

/// Append `ip` as `Display` writes it.
pub(crate) fn push_ip(out: &mut String, ip: IpAddr) {
    match ip {
        IpAddr::V4(a) => push_ipv4(out, a),
        IpAddr::V6(a) => {
            let _ = write!(out, "{a}");
        }
    }
}

/// Append `net` as `Display` writes it (`10.244.0.0/24`).
pub(crate) fn push_net(out: &mut String, net: IpNet) {
    push_ip(out, net.addr());
    out.push('/');
    push_octet(out, net.prefix_len());
}

/// `ip.to_string()`, cheaper.
pub(crate) fn ip_text(ip: IpAddr) -> String {
    let mut s = String::with_capacity(15);
    push_ip(&mut s, ip);
    debug_assert_eq!(s, ip.to_string());
    s
}

/// `net.to_string()`, cheaper.
pub(crate) fn net_text(net: IpNet) -> String {
    let mut s = String::with_capacity(18);
    push_net(&mut s, net);
    debug_assert_eq!(s, net.to_string());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_as_display() {
        for a in [
            "0.0.0.0",
            "10.244.0.1",
            "192.168.19.250",
            "255.255.255.255",
            "1.22.103.9",
            "fd00::1",
            "::",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert_eq!(ip_text(ip), a);
        }
        for n in [
            "10.224.0.0/11",
            "10.243.135.0/24",
            "0.0.0.0/0",
            "fd00:10::/64",
        ] {
            let net: IpNet = n.parse().unwrap();
            assert_eq!(net_text(net), n);
        }
        for n in [0, 7, 10, 99, 1450, 1500, 65535, u32::MAX] {
            let mut s = String::new();
            push_u32(&mut s, n);
            assert_eq!(s, n.to_string());
        }
        // Every octet value.
        for o in 0..=255u8 {
            let a = Ipv4Addr::new(o, 255 - o, o / 3, o % 7);
            assert_eq!(ip_text(IpAddr::V4(a)), a.to_string());
        }
    }
}
