//! host-local's allocator: one per range set, round robin from `last_reserved_ip.<idx>`,
//! the gateway skipped, requested IPs honoured, duplicates refused
//! (`containernetworking/plugins:plugins/ipam/host-local/backend/allocator/allocator.go`).
//!
//! The iterator keeps a cursor like the real one, so an allocation scans forward only past
//! leased addresses; the duplicate check is a lookup in the store's owner index.

use super::range::{Range, RangeSet, canonical, next_ip};
use crate::cni::ipam_store::IpamStore;
use std::net::IpAddr;

/// One address handed out: `ip/<subnet prefix>` with the range's gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocated {
    /// The address.
    pub ip: IpAddr,
    /// The subnet's prefix length.
    pub prefix: u8,
    /// The range's gateway.
    pub gateway: IpAddr,
}

impl Allocated {
    /// The address with the subnet's prefix length, as the result holds it (`10.1.2.2/24`).
    pub fn address(&self) -> ipnet::IpNet {
        // A canonical range's prefix length is one of its family (`Range.Canonicalize`
        // refuses a mask of the other family).
        match self.ip {
            IpAddr::V4(ip) => ipnet::Ipv4Net::new_assert(ip, self.prefix).into(),
            IpAddr::V6(ip) => ipnet::Ipv6Net::new_assert(ip, self.prefix).into(),
        }
    }
}

/// `IPAllocator`: a range set, the network's store, and the set's index (`rangeID`).
pub struct IpAllocator<'a> {
    set: &'a RangeSet,
    store: &'a mut IpamStore,
    range_id: usize,
}

impl<'a> IpAllocator<'a> {
    /// `NewIPAllocator`.
    pub fn new(set: &'a RangeSet, store: &'a mut IpamStore, range_id: usize) -> Self {
        IpAllocator {
            set,
            store,
            range_id,
        }
    }

    /// `Get`: reserve the requested IP, or the next free one round robin.
    ///
    /// Errors (plain text, as Go's `fmt.Errorf`):
    /// `<ip> not in range set <set>`, `requested ip <ip> is subnet's gateway`,
    /// `requested IP address <ip> is not available in range set <set>`,
    /// `<ip> has been allocated to <id>, duplicate allocation is not allowed`,
    /// `no IP addresses available in range set: <set>`.
    pub fn get(
        &mut self,
        id: &std::sync::Arc<str>,
        ifname: &str,
        requested: Option<IpAddr>,
    ) -> Result<Allocated, String> {
        if let Some(req) = requested {
            let req = canonical(req);
            let r = *self.set.range_for(req)?;
            if req == r.gateway {
                return Err(format!("requested ip {req} is subnet's gateway"));
            }
            if !self.store.reserve(id, ifname, req, self.range_id) {
                return Err(format!(
                    "requested IP address {req} is not available in range set {}",
                    self.set
                ));
            }
            return Ok(Allocated {
                ip: req,
                prefix: r.prefix,
                gateway: r.gateway,
            });
        }

        // Duplicate allocation is not allowed (SPEC): the first of the owner's IPs, in file
        // name order, that lies in this set.
        for ip in self.store.get_by_id(id, ifname) {
            if self.set.contains(ip) {
                return Err(format!(
                    "{ip} has been allocated to {id}, duplicate allocation is not allowed"
                ));
            }
        }

        let mut iter = RangeIter::new(self.set, self.store.last_reserved_ip(self.range_id));
        while let Some((ip, r)) = iter.next_candidate() {
            if self.store.reserve(id, ifname, ip, self.range_id) {
                return Ok(Allocated {
                    ip,
                    prefix: r.prefix,
                    gateway: r.gateway,
                });
            }
        }
        Err(format!(
            "no IP addresses available in range set: {}",
            self.set
        ))
    }

    /// `Release`: remove the owner's files (every match, in every range set).
    pub fn release(&mut self, id: &str, ifname: &str) {
        self.store.release_by_id(id, ifname);
    }
}

/// `RangeIter`: walks a range set from the cursor, range by range, wrapping, skipping each
/// range's gateway, and stops when it comes back to where it started.
#[derive(Debug, Clone)]
pub struct RangeIter<'a> {
    set: &'a RangeSet,
    range_idx: usize,
    cur: Option<IpAddr>,
    start_ip: Option<IpAddr>,
}

impl<'a> RangeIter<'a> {
    /// `GetIter`: start after `last_reserved` when the set contains it (round robin),
    /// otherwise at rangeStart of the first range.
    pub fn new(set: &'a RangeSet, last_reserved: Option<IpAddr>) -> Self {
        let mut iter = RangeIter {
            set,
            range_idx: 0,
            cur: None,
            start_ip: None,
        };
        match last_reserved.map(canonical).and_then(|last| {
            set.0
                .iter()
                .position(|r| r.contains(last))
                .map(|i| (i, last))
        }) {
            Some((idx, last)) => {
                // The first Next() returns last + 1.
                iter.range_idx = idx;
                iter.cur = Some(last);
            }
            None => {
                iter.start_ip = set.0.first().map(|r| r.range_start);
            }
        }
        iter
    }

    /// The first candidate, once known (`startIP`); reaching it again ends the walk.
    pub fn start_ip(&self) -> Option<IpAddr> {
        self.start_ip
    }

    /// `Next`: the next candidate and its range, or `None` once the walk is back at its start.
    pub fn next_candidate(&mut self) -> Option<(IpAddr, Range)> {
        loop {
            let mut r = *self.set.0.get(self.range_idx)?;
            let cur = match self.cur {
                None => {
                    // First call without a cursor: rangeStart itself, inclusive.
                    self.cur = Some(r.range_start);
                    self.start_ip = Some(r.range_start);
                    if r.range_start == r.gateway {
                        continue;
                    }
                    return Some((r.range_start, r));
                }
                Some(c) => c,
            };
            let next = if cur == r.range_end {
                self.range_idx = (self.range_idx + 1) % self.set.0.len();
                r = *self.set.0.get(self.range_idx)?;
                r.range_start
            } else {
                next_ip(&cur)
            };
            self.cur = Some(next);
            match self.start_ip {
                None => self.start_ip = Some(next),
                Some(s) if s == next => return None,
                Some(_) => {}
            }
            if next == r.gateway {
                continue;
            }
            return Some((next, r));
        }
    }
}

impl Iterator for RangeIter<'_> {
    type Item = IpAddr;

    fn next(&mut self) -> Option<IpAddr> {
        self.next_candidate().map(|(ip, _)| ip)
    }
}
