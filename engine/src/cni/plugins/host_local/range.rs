//! host-local's ranges and range sets: parsing addresses the way Go's `net` package does,
//! `Canonicalize` with its defaults and exact messages, `Contains`, `Overlaps` and the string
//! forms used in errors (`containernetworking/plugins:plugins/ipam/host-local/backend/
//! allocator/range.go`, `range_set.go`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address in Go's canonical form: IPv4 (and IPv4-mapped IPv6) as V4, the rest as V6
/// (`canonicalizeIP`: `To4()` first, then `To16()`).
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// `net.ParseIP` followed by `canonicalizeIP`; `None` where Go returns nil.
pub(crate) fn parse_ip(s: &str) -> Option<IpAddr> {
    // Go accepts neither zones nor surrounding brackets; Rust's parser agrees.
    s.parse::<IpAddr>().ok().map(canonical)
}

/// The number of bits of an address family.
pub(crate) fn family_bits(ip: &IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// The address as an integer.
pub(crate) fn to_u128(ip: &IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(*v4)),
        IpAddr::V6(v6) => u128::from(*v6),
    }
}

/// An integer as an address of the given family (truncated to 32 bits for IPv4).
pub(crate) fn from_u128(v: u128, v4: bool) -> IpAddr {
    if v4 {
        IpAddr::V4(Ipv4Addr::from((v & 0xffff_ffff) as u32))
    } else {
        IpAddr::V6(Ipv6Addr::from(v))
    }
}

/// `ip.NextIP`: the following address, wrapping within the family.
pub(crate) fn next_ip(ip: &IpAddr) -> IpAddr {
    from_u128(to_u128(ip).wrapping_add(1), ip.is_ipv4())
}

fn full_u128(bits: u8) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn mask_u128(prefix: u8, bits: u8) -> u128 {
    let host_bits = u32::from(bits.saturating_sub(prefix));
    if host_bits >= 128 {
        0
    } else {
        full_u128(bits) & !((1u128 << host_bits) - 1)
    }
}

/// A CIDR as Go's `types.ParseCIDR` keeps it: the address as written (host bits kept) and the
/// mask, whose length (`mask_bits`, 32 or 128) follows the *written* family, so
/// `::ffff:10.0.0.0/104` is an IPv4 address with a 128-bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address (canonical form).
    pub ip: IpAddr,
    /// The prefix length.
    pub prefix: u8,
    /// The mask's length in bits (32 or 128).
    pub mask_bits: u8,
}

impl Cidr {
    /// `net.ParseCIDR`; the error is Go's `invalid CIDR address: <s>`.
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let bad = || format!("invalid CIDR address: {s}");
        let (addr, len) = s.split_once('/').ok_or_else(bad)?;
        let (ip, mask_bits) = match addr.parse::<Ipv4Addr>() {
            Ok(v4) => (IpAddr::V4(v4), 32u8),
            Err(_) => match addr.parse::<Ipv6Addr>() {
                Ok(v6) => (canonical(IpAddr::V6(v6)), 128u8),
                Err(_) => return Err(bad()),
            },
        };
        // Go's dtoi: decimal digits only (leading zeros allowed), at least one.
        if len.is_empty() || len.len() > 6 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let prefix: u32 = len.parse().map_err(|_| bad())?;
        if prefix > u32::from(mask_bits) {
            return Err(bad());
        }
        Ok(Cidr {
            ip,
            prefix: prefix as u8,
            mask_bits,
        })
    }

    /// The network as `net.IPNet.String` prints it (`10.0.0.5/8` for `::ffff:10.0.0.5/104`).
    pub fn net(&self) -> ipnet::IpNet {
        // An IPv4 address's printed prefix is at most 32 ([`Cidr::parse`] checks it against
        // the mask, and a 128-bit mask loses 96): always a valid network.
        match self.ip {
            IpAddr::V4(ip) => ipnet::Ipv4Net::new_assert(ip, self.printed_prefix()).into(),
            IpAddr::V6(ip) => ipnet::Ipv6Net::new_assert(ip, self.prefix).into(),
        }
    }

    /// The prefix length as `net.IPNet.String` prints it: an IPv4 address with a 128-bit mask
    /// prints the mask's last 32 bits.
    fn printed_prefix(&self) -> u8 {
        if self.ip.is_ipv4() && self.mask_bits == 128 {
            self.prefix.saturating_sub(96)
        } else {
            self.prefix
        }
    }
}

impl fmt::Display for Cidr {
    /// `net.IPNet.String`: the address as stored (not masked), `/`, the prefix length.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ip, self.printed_prefix())
    }
}

/// One range as written in the config, before `Canonicalize`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeConf {
    /// `subnet`; `None` when absent (Go's zero IPNet).
    pub subnet: Option<Cidr>,
    /// `rangeStart`.
    pub range_start: Option<IpAddr>,
    /// `rangeEnd`.
    pub range_end: Option<IpAddr>,
    /// `gateway`.
    pub gateway: Option<IpAddr>,
}

/// A canonical range: every bound filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The subnet (the network address, host bits zero).
    pub subnet: IpAddr,
    /// The subnet's prefix length.
    pub prefix: u8,
    /// First allocatable address, inclusive.
    pub range_start: IpAddr,
    /// Last allocatable address, inclusive.
    pub range_end: IpAddr,
    /// The gateway (skipped by the allocator; never validated against the subnet).
    pub gateway: IpAddr,
}

impl RangeConf {
    /// A range with only a subnet, parsed from CIDR text (for tests and callers).
    pub fn subnet(cidr: &str) -> Result<RangeConf, String> {
        Ok(RangeConf {
            subnet: Some(Cidr::parse(cidr)?),
            ..Default::default()
        })
    }

    /// `Range.Canonicalize`: check the subnet and fill in the defaults (gateway = network+1,
    /// rangeStart = network+1, rangeEnd = broadcast−1 for IPv4, the last address for IPv6).
    pub fn canonicalize(&self) -> Result<Range, String> {
        let Some(cidr) = self.subnet else {
            return Err("IP <nil> not v4 nor v6".to_string());
        };
        let masklen = cidr.mask_bits;
        if cidr.prefix > masklen.saturating_sub(2) {
            return Err(format!("Network {cidr} too small to allocate from"));
        }
        if family_bits(&cidr.ip) != masklen {
            return Err("IPNet IP and Mask version mismatch".to_string());
        }
        let mask = mask_u128(cidr.prefix, masklen);
        let v4 = cidr.ip.is_ipv4();
        let raw = to_u128(&cidr.ip);
        let network = from_u128(raw & mask, v4);
        if raw & mask != raw {
            return Err(format!(
                "Network has host bits set. For a subnet mask of length {} the network address is {network}",
                cidr.prefix
            ));
        }
        let gateway = self.gateway.map(canonical).unwrap_or(next_ip(&network));
        let subnet_text = cidr.to_string();
        let start = match self.range_start.map(canonical) {
            Some(s) => {
                if !contains_with(network, cidr.prefix, Some(s), self.range_end, s) {
                    return Err(format!("RangeStart {s} not in network {subnet_text}"));
                }
                s
            }
            None => next_ip(&network),
        };
        let end = match self.range_end.map(canonical) {
            Some(e) => {
                if !contains_with(network, cidr.prefix, Some(start), Some(e), e) {
                    return Err(format!("RangeEnd {e} not in network {subnet_text}"));
                }
                e
            }
            None => {
                let last = raw | (!mask & full_u128(masklen));
                // lastIP: the broadcast address is excluded for IPv4 only (end[3]--).
                from_u128(if v4 { last.wrapping_sub(1) } else { last }, v4)
            }
        };
        Ok(Range {
            subnet: network,
            prefix: cidr.prefix,
            range_start: start,
            range_end: end,
            gateway,
        })
    }
}

/// `Range.Contains` with optional bounds (Go ignores nil bounds while canonicalizing).
fn contains_with(
    subnet: IpAddr,
    prefix: u8,
    start: Option<IpAddr>,
    end: Option<IpAddr>,
    addr: IpAddr,
) -> bool {
    let addr = canonical(addr);
    if addr.is_ipv4() != subnet.is_ipv4() {
        return false;
    }
    let bits = family_bits(&subnet);
    let mask = mask_u128(prefix, bits);
    let a = to_u128(&addr);
    if a & mask != to_u128(&subnet) & mask {
        return false;
    }
    // ip.Cmp compares 16-byte forms; a bound of the other family never matches here.
    let before_start = start.is_some_and(|s| s.is_ipv4() != addr.is_ipv4() || a < to_u128(&s));
    let after_end = end.is_some_and(|e| e.is_ipv4() != addr.is_ipv4() || a > to_u128(&e));
    !before_start && !after_end
}

impl Range {
    /// `Range.Contains`: same family, inside the subnet, and rangeStart ≤ ip ≤ rangeEnd.
    pub fn contains(&self, ip: IpAddr) -> bool {
        contains_with(
            self.subnet,
            self.prefix,
            Some(self.range_start),
            Some(self.range_end),
            ip,
        )
    }

    /// `Range.Overlaps`: same family and either range contains the other's start or end.
    pub fn overlaps(&self, other: &Range) -> bool {
        if self.range_start.is_ipv4() != other.range_start.is_ipv4() {
            return false;
        }
        self.contains(other.range_start)
            || self.contains(other.range_end)
            || other.contains(self.range_start)
            || other.contains(self.range_end)
    }
}

impl fmt::Display for Range {
    /// `Range.String`: `start-end`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.range_start, self.range_end)
    }
}

/// A canonical range set: the ranges one allocation draws a single IP from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSet(pub Vec<Range>);

impl RangeSet {
    /// `RangeSet.Canonicalize`: non-empty, every range canonical, one family, no overlap.
    pub fn canonicalize(confs: &[RangeConf]) -> Result<RangeSet, String> {
        if confs.is_empty() {
            return Err("empty range set".to_string());
        }
        let mut ranges: Vec<Range> = Vec::with_capacity(confs.len());
        for conf in confs {
            let r = conf.canonicalize()?;
            let mixed = ranges
                .first()
                .is_some_and(|first| first.range_start.is_ipv4() != r.range_start.is_ipv4());
            if mixed {
                return Err("mixed address families".to_string());
            }
            ranges.push(r);
        }
        for (i, r1) in ranges.iter().enumerate() {
            for r2 in ranges.iter().skip(i + 1) {
                if r1.overlaps(r2) {
                    return Err(format!("subnets {r1} and {r2} overlap"));
                }
            }
        }
        Ok(RangeSet(ranges))
    }

    /// The ranges.
    pub fn ranges(&self) -> &[Range] {
        &self.0
    }

    /// `RangeSet.RangeFor`: the first range containing the IP, or
    /// `<ip> not in range set <set>`.
    pub(crate) fn range_for(&self, ip: IpAddr) -> Result<&Range, String> {
        let ip = canonical(ip);
        self.0
            .iter()
            .find(|r| r.contains(ip))
            .ok_or_else(|| format!("{ip} not in range set {self}"))
    }

    /// `RangeSet.Contains`.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.range_for(ip).is_ok()
    }

    /// `RangeSet.Overlaps`: any range of one overlaps any range of the other.
    pub fn overlaps(&self, other: &RangeSet) -> bool {
        self.0
            .iter()
            .any(|r| other.0.iter().any(|r1| r.overlaps(r1)))
    }

    /// Whether the set is IPv4 (by its first range).
    pub(crate) fn is_ipv4(&self) -> bool {
        self.0.first().is_some_and(|r| r.range_start.is_ipv4())
    }
}

impl fmt::Display for RangeSet {
    /// `RangeSet.String`: the ranges joined with `,`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}
