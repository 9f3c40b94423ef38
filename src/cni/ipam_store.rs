//! host-local's data directory for one network, `/var/lib/cni/networks/<net>/`, as typed
//! data: one lease per IP (the file named by the IP holding `<id>\r\n<ifname>`) and
//! `last_reserved_ip.<rangeset>`. Indexed by owner so a lookup does not scan the directory.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// One lease file's content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lease {
    /// The container ID (trimmed).
    pub container_id: String,
    /// The interface name.
    pub ifname: String,
}

/// The data directory of one network on one node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpamStore {
    /// Leases by IP (one file per IP).
    pub leases: BTreeMap<IpAddr, Lease>,
    /// `last_reserved_ip.<index>` files by range-set index.
    pub last_reserved: BTreeMap<usize, IpAddr>,
}
