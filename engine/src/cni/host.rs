//! A node as CNI plugins see it: the host network namespace (links, addresses, routes),
//! the sandbox namespaces the runtime created, netfilter (iptables and ip6tables, nat and
//! filter: [`super::netfilter`]), ipsets ([`super::ipset`]), tc qdiscs, sysctls, and
//! the files host-local keeps under `/var/lib/cni/networks`.
//!
//! This is the "kernel and disk" the stateless plugins act on. Everything is ordered
//! (BTreeMap) so that views are deterministic.

use super::ipam_store::IpamStore;
use super::ipset::IpSets;
use super::links::Links;
use super::netfilter::Netfilter;
use crate::util::vec_map::VecMap;
use compact_str::CompactString;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

/// A hardware (MAC) address: six bytes, printed as `ip link` prints it
/// (`aa:bb:cc:dd:ee:ff`, lowercase).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// The text `ip link` prints (`aa:bb:cc:dd:ee:ff`), as ASCII bytes.
    fn text(&self) -> [u8; 17] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b':'; 17];
        for (i, b) in self.0.iter().enumerate() {
            out[3 * i] = HEX[usize::from(b >> 4)];
            out[3 * i + 1] = HEX[usize::from(b & 0x0f)];
        }
        out
    }

    /// The text as a `CompactString` (inline: 17 bytes), written directly rather than
    /// through `core::fmt` as `ToCompactString` would.
    pub fn to_compact_string(&self) -> CompactString {
        // Hex digits and colons only: always UTF-8.
        CompactString::from_utf8(self.text()).unwrap_or_default()
    }
}

impl std::fmt::Display for Mac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Hex digits and colons only: always UTF-8.
        f.write_str(std::str::from_utf8(&self.text()).map_err(|_| std::fmt::Error)?)
    }
}

impl std::fmt::Debug for Mac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// A text that is not a MAC address (Go's `address <s>: invalid MAC address`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadMac;

/// Go's `net.ParseMAC`: the bytes of a hardware address written as pairs of hex digits
/// separated by `:` or `-` (`aa:bb:cc:dd:ee:ff`), or as groups of four separated by `.`
/// (`aabb.ccdd.eeff`), either case; 6 bytes (EUI-48), 8 (EUI-64) or 20 (IP over
/// InfiniBand).
pub fn parse_hardware_addr(s: &str) -> Result<Vec<u8>, BadMac> {
    let b = s.as_bytes();
    if b.len() < 14 {
        return Err(BadMac);
    }
    // Every group is followed by the separator, but the last.
    let (group, sep) = match (b[2], b[4]) {
        (b':' | b'-', _) => (2, b[2]),
        (_, b'.') => (4, b'.'),
        _ => return Err(BadMac),
    };
    if (b.len() + 1) % (group + 1) != 0 {
        return Err(BadMac);
    }
    let n = (b.len() + 1) / (group + 1) * group / 2;
    if !matches!(n, 6 | 8 | 20) {
        return Err(BadMac);
    }
    let mut out = Vec::with_capacity(n);
    for chunk in b.chunks(group + 1) {
        if chunk.len() > group && chunk[group] != sep {
            return Err(BadMac);
        }
        for pair in chunk[..group].chunks(2) {
            let hex = std::str::from_utf8(pair).map_err(|_| BadMac)?;
            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(BadMac);
            }
            out.push(u8::from_str_radix(hex, 16).map_err(|_| BadMac)?);
        }
    }
    Ok(out)
}

impl std::str::FromStr for Mac {
    type Err = BadMac;

    /// A 6-byte address in any of `net.ParseMAC`'s forms ([`parse_hardware_addr`]).
    fn from_str(s: &str) -> Result<Self, BadMac> {
        let bytes = parse_hardware_addr(s)?;
        <[u8; 6]>::try_from(bytes).map(Mac).map_err(|_| BadMac)
    }
}

/// The address as text equals `other` (the text a CNI result or a config carries).
impl PartialEq<str> for Mac {
    fn eq(&self, other: &str) -> bool {
        self.text() == other.as_bytes()
    }
}

impl PartialEq<&str> for Mac {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for Mac {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

/// The address is the one a result's MAC text spells ([`MacText`](super::types::MacText)).
impl PartialEq<super::types::MacText> for Mac {
    fn eq(&self, other: &super::types::MacText) -> bool {
        *other == *self
    }
}

/// The kind of a network link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkKind {
    /// `lo`.
    Loopback,
    /// A Linux bridge (`cni0`).
    Bridge,
    /// One end of a veth pair; `peer` names the other end, `peer_netns` its namespace.
    Veth {
        /// The other end's name.
        peer: CompactString,
        /// The namespace path of the other end, the text [`Namespaces`] holds it by;
        /// `None` for the host namespace.
        peer_netns: Option<Arc<str>>,
    },
    /// An ifb device (bandwidth's egress shaping).
    Ifb,
    /// The node's uplink (`eth0` of the node, carrying the InternalIP).
    Physical,
    /// A VXLAN device (`ip link add flannel.1 type vxlan id 1 local IP dev eth0 nolearning`):
    /// it encapsulates what it sends in UDP to the VTEP its FDB names. Boxed, as are the
    /// other rare kinds below: a pod's veth keeps every link small.
    Vxlan(Box<Vxlan>),
    /// A macvlan (`ip link add net1 link eth0 type macvlan mode bridge`): its own MAC on the
    /// wire of `master`, a link of the node's host namespace. Its traffic leaves by the
    /// master's wire without passing the host's IP stack (and its iptables).
    Macvlan(Box<Lower>),
    /// An ipvlan (`type ipvlan mode l2`): the master's MAC, its own addresses.
    Ipvlan(Box<Lower>),
    /// An SR-IOV virtual function's netdev (`ens1f0v3`): VF number `vf` of the physical
    /// function `pf` (a link of the host namespace); its PCI address is [`Link::pci`].
    SriovVf(Box<SriovVf>),
}

/// What a VXLAN device ([`LinkKind::Vxlan`]) was made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vxlan {
    /// The VXLAN network identifier (`id`).
    pub vni: u32,
    /// The outer source address (`local`).
    pub local: String,
    /// The underlay device (`dev`).
    pub dev: String,
    /// The UDP destination port (`dstport`; the kernel's default is 8472).
    pub port: u16,
    /// Whether the device learns remote MACs (`nolearning` when false).
    pub learning: bool,
}

/// The lower device and mode of a macvlan or ipvlan ([`LinkKind::Macvlan`],
/// [`LinkKind::Ipvlan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lower {
    /// The lower device in the host namespace (`link eth0`).
    pub master: String,
    /// A macvlan's `bridge`, `private`, `vepa` or `passthru`; an ipvlan's `l2`, `l3` or `l3s`.
    pub mode: String,
}

/// An SR-IOV virtual function ([`LinkKind::SriovVf`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SriovVf {
    /// The PF's netdev name in the host namespace.
    pub pf: String,
    /// The VF index on the PF.
    pub vf: u32,
}

/// A network interface in some namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Interface name (inline up to 24 bytes: a Linux name is at most 15).
    pub name: CompactString,
    /// What it is.
    pub kind: LinkKind,
    /// Hardware address.
    pub mac: Mac,
    /// MTU.
    pub mtu: u32,
    /// The bridge it is enslaved to (its name shared with the bridge's config).
    pub master: Option<Arc<str>>,
    /// Addresses with their prefix length (`10.244.1.1/24`), in the order added.
    pub addrs: Vec<ipnet::IpNet>,
    /// Administratively up.
    pub up: bool,
    /// Hairpin, promiscuous and all-multicast mode, one bit each ([`Link::hairpin`],
    /// [`Link::promisc`], [`Link::allmulti`]): three `bool`s would leave no room for the
    /// index in the link's 128 bytes.
    modes: u8,
    /// The interface index the kernel gave the device in its namespace (`ip link`'s `2:`,
    /// the `N` of a peer's `@ifN`); 0 until the link is in a namespace ([`Links`] hands
    /// indexes out as the kernel does).
    ///
    /// [`Links`]: super::links::Links
    ifindex: u32,
    /// What only some links have (an alias, a PCI address); `None` when neither is set.
    rare: Option<Box<LinkRare>>,
}

// Two links a pod (its `eth0`, the host's veth), each behind an `Arc`: the rare kinds are
// boxed and `master` is shared to keep this size.
const _: () = assert!(std::mem::size_of::<Link>() <= 128);

/// [`Link::modes`]' bits.
const HAIRPIN: u8 = 1;
const PROMISC: u8 = 2;
const ALLMULTI: u8 = 4;

/// The fields of a [`Link`] that few links have, kept out of its common size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct LinkRare {
    alias: Option<String>,
    pci: Option<String>,
}

impl Link {
    /// A link of a kind, down, with no addresses.
    pub fn new(name: &str, kind: LinkKind, mac: Mac, mtu: u32) -> Self {
        Link {
            name: CompactString::new(name),
            kind,
            mac,
            mtu,
            master: None,
            addrs: Vec::new(),
            up: false,
            modes: 0,
            ifindex: 0,
            rare: None,
        }
    }

    /// The interface index in its namespace; 0 before it is added to one.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Set by [`super::links::Links`] when the link enters a namespace.
    pub(crate) fn set_ifindex(&mut self, ifindex: u32) {
        self.ifindex = ifindex;
    }

    /// Hairpin mode on a bridge port (`ip link set … type bridge_slave hairpin on`).
    pub fn hairpin(&self) -> bool {
        self.modes & HAIRPIN != 0
    }

    /// Promiscuous mode (`ip link set … promisc on`).
    pub fn promisc(&self) -> bool {
        self.modes & PROMISC != 0
    }

    /// `allmulticast` (tuning's `allmulti`).
    pub fn allmulti(&self) -> bool {
        self.modes & ALLMULTI != 0
    }

    /// Turn hairpin mode on or off.
    pub fn set_hairpin(&mut self, on: bool) {
        self.set_mode(HAIRPIN, on);
    }

    /// Turn promiscuous mode on or off.
    pub fn set_promisc(&mut self, on: bool) {
        self.set_mode(PROMISC, on);
    }

    /// Turn all-multicast mode on or off.
    pub fn set_allmulti(&mut self, on: bool) {
        self.set_mode(ALLMULTI, on);
    }

    fn set_mode(&mut self, bit: u8, on: bool) {
        if on {
            self.modes |= bit;
        } else {
            self.modes &= !bit;
        }
    }

    /// A namespace's `lo` as the kernel makes it: down, or after `ip link set lo up` (UP
    /// with [`LO_ADDRS`]).
    pub fn loopback(up: bool) -> Self {
        let mut lo = Link::new("lo", LinkKind::Loopback, Mac::default(), 65536);
        // The first device of every namespace (`LOOPBACK_IFINDEX`).
        lo.ifindex = 1;
        if up {
            lo.up = true;
            lo.addrs = LO_ADDRS.to_vec();
        }
        lo
    }

    /// `ip link set … alias NAME` (host-device keeps the device's host name here).
    pub fn alias(&self) -> Option<&str> {
        self.rare.as_ref()?.alias.as_deref()
    }

    /// The PCI address of the device behind the netdev (`/sys/bus/pci/devices/<pci>/net/`),
    /// for NICs, SR-IOV PFs and VFs; `None` for virtual links.
    pub fn pci(&self) -> Option<&str> {
        self.rare.as_ref()?.pci.as_deref()
    }

    /// Set or clear the alias.
    pub fn set_alias(&mut self, alias: Option<String>) {
        self.change_rare(|r| r.alias = alias);
    }

    /// Set or clear the PCI address.
    pub fn set_pci(&mut self, pci: Option<String>) {
        self.change_rare(|r| r.pci = pci);
    }

    /// Change the rare fields; the box goes when they are all unset (so equal links
    /// compare equal whatever they held before).
    fn change_rare(&mut self, change: impl FnOnce(&mut LinkRare)) {
        let mut rare = self.rare.take().unwrap_or_default();
        change(&mut rare);
        if *rare != LinkRare::default() {
            self.rare = Some(rare);
        }
    }
}

/// Where a route leads, in the form `ip route` prints it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteDst {
    /// `default`: every address of the family (0.0.0.0/0, or ::/0 when `v6`).
    Default {
        /// An IPv6 route (`ip -6 route`).
        v6: bool,
    },
    /// A network, printed as its CIDR (`10.244.1.0/24`).
    Net(IpNet),
    /// One address, printed bare as `ip route` prints a host route (`10.244.1.5`).
    Host(IpAddr),
}

impl RouteDst {
    /// A destination as `ip route` names it: `default` for a /0, a bare address for a host
    /// route (/32, /128), else the masked network (what `ip route add` keeps of a CIDR).
    pub fn of_net(net: IpNet) -> Self {
        if net.prefix_len() == 0 {
            RouteDst::Default {
                v6: net.addr().is_ipv6(),
            }
        } else if net.prefix_len() == net.max_prefix_len() {
            RouteDst::Host(net.addr())
        } else {
            RouteDst::Net(net.trunc())
        }
    }

    /// The destination as a network (`default` is 0.0.0.0/0, or ::/0 for IPv6; a host
    /// route is a /32 or /128).
    pub fn net(&self) -> IpNet {
        match *self {
            RouteDst::Default { v6: false } => IpNet::V4(ipnet::Ipv4Net::default()),
            RouteDst::Default { v6: true } => IpNet::V6(ipnet::Ipv6Net::default()),
            RouteDst::Net(n) => n,
            RouteDst::Host(a) => IpNet::from(a),
        }
    }

    /// Whether it is `default`.
    pub fn is_default(&self) -> bool {
        matches!(self, RouteDst::Default { .. })
    }

    /// Whether it is an IPv6 destination.
    pub fn is_ipv6(&self) -> bool {
        match self {
            RouteDst::Default { v6 } => *v6,
            RouteDst::Net(n) => n.addr().is_ipv6(),
            RouteDst::Host(a) => a.is_ipv6(),
        }
    }

    /// `ip route`'s order among the non-default routes: by destination address; for one
    /// address the longer prefix first (the kernel's FIB trie lists a leaf's aliases that
    /// way; checked with `ip route` on 6.x). `default` sorts last.
    pub(crate) fn sort_key(&self) -> (u128, u8) {
        if self.is_default() {
            return (u128::MAX, 0);
        }
        match self.net() {
            IpNet::V4(n) => (u32::from(n.network()) as u128, 128 - n.prefix_len()),
            IpNet::V6(n) => (u128::from(n.network()), 128 - n.prefix_len()),
        }
    }
}

/// A destination as `ip route` takes one: `default`, a CIDR (kept masked, a /32 or /128 as
/// the host it names) or a bare address. `default` reads as IPv4's; callers that accept
/// either family's compare with [`RouteDst::is_default`].
impl std::str::FromStr for RouteDst {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "default" {
            return Ok(RouteDst::Default { v6: false });
        }
        if let Ok(net) = s.parse::<IpNet>() {
            return Ok(RouteDst::of_net(net));
        }
        s.parse::<IpAddr>().map(RouteDst::Host).map_err(|_| {
            format!(
                "{s:?} is not a route destination: expected `default`, a CIDR (10.244.1.0/24) or an address"
            )
        })
    }
}

impl std::fmt::Display for RouteDst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteDst::Default { .. } => f.write_str("default"),
            RouteDst::Net(n) => n.fmt(f),
            RouteDst::Host(a) => a.fmt(f),
        }
    }
}

/// A routing protocol that installs routes, other than the kernel's own (`proto` in
/// `ip route`; `rtnetlink`'s `RTPROT_*` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteProto {
    /// `proto bird`: the BIRD routing daemon (Calico's BGP).
    Bird,
}

impl RouteProto {
    /// The name `ip route` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteProto::Bird => "bird",
        }
    }
}

impl std::fmt::Display for RouteProto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One route in a routing table, kept in the fields `ip route` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteEntry {
    /// Destination.
    pub dst: RouteDst,
    /// Next hop, if any.
    pub via: Option<IpAddr>,
    /// Output device (empty for a blackhole route).
    pub dev: CompactString,
    /// `proto kernel` for connected routes.
    pub proto_kernel: bool,
    /// `scope link` for on-link routes.
    pub scope_link: bool,
    /// `scope host` (`ip.AddHostRoute`: ptp's route to its pod on the host veth).
    pub scope_host: bool,
    /// `onlink`: the next hop is on the device even though no address covers it (flannel's
    /// VXLAN routes via `<peer subnet>.0 dev flannel.1`).
    pub onlink: bool,
    /// A `blackhole` route (type blackhole, no device): matching packets are discarded.
    pub blackhole: bool,
    /// The preferred source, protocol and MTU, boxed and held only when one is set (see
    /// [`RouteEntry::src`], [`RouteEntry::proto`], [`RouteEntry::mtu`]): a pod's routes,
    /// one or more a pod on every node, set none of them.
    rare: Option<Box<RouteRare>>,
}

// A pod's default route lives in its namespace, one a pod: its rarely set fields are boxed.
const _: () = assert!(std::mem::size_of::<RouteEntry>() <= 72);

/// The fields of a route that a pod's routes leave unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct RouteRare {
    src: Option<IpAddr>,
    proto: Option<RouteProto>,
    mtu: Option<u32>,
}

impl RouteEntry {
    /// A route to `dst` via `via` (if any) on `dev`, added by a program (no proto/scope).
    pub fn static_route(dst: RouteDst, via: Option<IpAddr>, dev: &str) -> Self {
        RouteEntry {
            dst,
            via,
            dev: CompactString::new(dev),
            proto_kernel: false,
            scope_link: false,
            scope_host: false,
            onlink: false,
            blackhole: false,
            rare: None,
        }
    }

    /// `blackhole DST proto P`: what BIRD installs for a block the node owns.
    pub fn blackhole(dst: RouteDst, proto: RouteProto) -> Self {
        RouteEntry {
            blackhole: true,
            ..RouteEntry::static_route(dst, None, "")
        }
        .with_proto(Some(proto))
    }

    /// Preferred source address.
    pub fn src(&self) -> Option<IpAddr> {
        self.rare.as_ref().and_then(|r| r.src)
    }

    /// The routing protocol that installed it, other than `kernel` (`proto bird` for the
    /// routes Calico's BIRD programs); `None` prints nothing (`boot`, `static`'s default).
    pub fn proto(&self) -> Option<RouteProto> {
        self.rare.as_ref().and_then(|r| r.proto)
    }

    /// The route's `mtu` metric (Cilium's tunnel routes: `mtu 1450`); `None` prints nothing
    /// and the output device's MTU applies.
    pub fn mtu(&self) -> Option<u32> {
        self.rare.as_ref().and_then(|r| r.mtu)
    }

    /// The route with preferred source `src`.
    pub fn with_src(self, src: Option<IpAddr>) -> Self {
        self.with_rare(|r| r.src = src)
    }

    /// The route with protocol `proto`.
    pub fn with_proto(self, proto: Option<RouteProto>) -> Self {
        self.with_rare(|r| r.proto = proto)
    }

    /// The route with `mtu` metric `mtu`.
    pub fn with_mtu(self, mtu: Option<u32>) -> Self {
        self.with_rare(|r| r.mtu = mtu)
    }

    /// Set the preferred source address.
    pub fn set_src(&mut self, src: Option<IpAddr>) {
        self.edit_rare(|r| r.src = src);
    }

    /// Set the protocol that installed it.
    pub fn set_proto(&mut self, proto: Option<RouteProto>) {
        self.edit_rare(|r| r.proto = proto);
    }

    /// Set the `mtu` metric.
    pub fn set_mtu(&mut self, mtu: Option<u32>) {
        self.edit_rare(|r| r.mtu = mtu);
    }

    fn with_rare(mut self, edit: impl FnOnce(&mut RouteRare)) -> Self {
        self.edit_rare(edit);
        self
    }

    /// Edit the rare fields; none set is held as no box, so equal routes compare equal.
    fn edit_rare(&mut self, edit: impl FnOnce(&mut RouteRare)) {
        let mut rare = self.rare.as_deref().copied().unwrap_or_default();
        edit(&mut rare);
        self.rare = (rare != RouteRare::default()).then(|| Box::new(rare));
    }

    /// Whether it is an IPv6 route (`ip -6 route`).
    pub fn is_ipv6(&self) -> bool {
        self.dst.is_ipv6()
    }

    /// The line as `ip route` prints it.
    pub fn to_ip_route(&self) -> String {
        self.to_ip_route_linkdown(false)
    }

    /// The line as `ip route` prints it, with `linkdown` when `linkdown` (the kernel flags a
    /// route whose device has no carrier, RTNH_F_LINKDOWN: see [`Netns::linkdown`]).
    pub fn to_ip_route_linkdown(&self, linkdown: bool) -> String {
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_ip_route(&mut s, linkdown);
        s
    }

    /// In iproute2's `print_route` order: destination, `via`, `dev`, `proto`, `scope`,
    /// `src`, `metric`, the flags (`onlink`, `linkdown`), the metrics (`mtu`), `pref`.
    fn write_ip_route(&self, s: &mut String, linkdown: bool) -> std::fmt::Result {
        use std::fmt::Write;
        if self.blackhole {
            write!(s, "blackhole {}", self.dst)?;
            if let Some(p) = self.proto() {
                write!(s, " proto {p}")?;
            }
            return Ok(());
        }
        write!(s, "{}", self.dst)?;
        if let Some(via) = &self.via {
            write!(s, " via {via}")?;
        }
        write!(s, " dev {}", self.dev)?;
        if self.proto_kernel {
            s.push_str(" proto kernel");
        } else if let Some(p) = self.proto() {
            write!(s, " proto {p}")?;
        }
        if self.scope_link {
            s.push_str(" scope link");
        } else if self.scope_host {
            s.push_str(" scope host");
        }
        if let Some(src) = self.src() {
            write!(s, " src {src}")?;
        }
        if self.is_ipv6() {
            // `ip -6 route` prints every route's metric and router preference: the kernel's
            // connected routes have IP6_RT_PRIO_ADDRCONF (256), a program's IP6_RT_PRIO_USER
            // (1024).
            let metric = if self.proto_kernel { 256 } else { 1024 };
            write!(s, " metric {metric}")?;
        }
        if self.onlink {
            s.push_str(" onlink");
        }
        if linkdown {
            s.push_str(" linkdown");
        }
        if let Some(mtu) = self.mtu() {
            write!(s, " mtu {mtu}")?;
        }
        if self.is_ipv6() {
            s.push_str(" pref medium");
        }
        Ok(())
    }
}

/// One entry of a neighbour (ARP) table, as `ip neigh` prints it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Neigh {
    /// The neighbour's address.
    pub ip: String,
    /// The device it is reached on.
    pub dev: String,
    /// Its hardware address.
    pub lladdr: String,
    /// `PERMANENT` for entries a program added (flannel), `REACHABLE` for learned ones.
    pub state: String,
}

impl Neigh {
    /// The line as `ip neigh show` prints it (`10.244.2.0 dev flannel.1 lladdr … PERMANENT`).
    pub(crate) fn to_ip_neigh(&self) -> String {
        format!(
            "{} dev {} lladdr {} {}",
            self.ip, self.dev, self.lladdr, self.state
        )
    }
}

/// One bridge forwarding database entry, as `bridge fdb show` prints it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FdbEntry {
    /// The MAC address.
    pub mac: String,
    /// The device (a VXLAN device or a bridge port).
    pub dev: String,
    /// For a VXLAN device: the remote VTEP's underlay address.
    pub dst: Option<String>,
    /// The flags as printed (`self permanent`).
    pub flags: String,
}

impl FdbEntry {
    /// The line as `bridge fdb show` prints it.
    pub(crate) fn to_bridge_fdb(&self) -> String {
        let mut s = format!("{} dev {}", self.mac, self.dev);
        if let Some(d) = &self.dst {
            s.push_str(" dst ");
            s.push_str(d);
        }
        s.push(' ');
        s.push_str(&self.flags);
        s
    }
}

/// What a network daemon (flanneld) programmed on every node for the other nodes' leases:
/// one route per peer, and for VXLAN a permanent neighbour and an FDB entry per peer. Every
/// node's daemon programs the same entries from the same leases, less its own, so the nodes
/// share one copy ([`Host::peers`]) and each reads it without the entries `owner`-ed by
/// itself (a /24 per node on 1,000 nodes would otherwise be a million routes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PeerEntries {
    /// Per peer node, in node order: its route, and for VXLAN its neighbour and FDB entry.
    peers: Vec<std::sync::Arc<PeerEntry>>,
    /// The routes' destinations by prefix, made from `peers` at the first lookup after they
    /// changed (see [`PeerEntries::longest_match`]).
    by_prefix: PrefixIndex,
}

impl PeerEntries {
    /// The entries `peers`, in that order.
    pub fn new(peers: Vec<std::sync::Arc<PeerEntry>>) -> Self {
        PeerEntries {
            peers,
            by_prefix: PrefixIndex::default(),
        }
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[std::sync::Arc<PeerEntry>] {
        &self.peers
    }

    /// The entries, to change (the prefix index is made again at the next lookup).
    pub fn entries_mut(&mut self) -> &mut Vec<std::sync::Arc<PeerEntry>> {
        self.by_prefix = PrefixIndex::default();
        &mut self.peers
    }

    /// The kernel's longest-prefix match over the entries' routes: of the entries whose
    /// destination covers `ip` with a prefix longer than `longer_than` (any, for `None`)
    /// and that `held` takes, the longest; for one prefix the first in order. Reads only the
    /// prefixes that could cover `ip`, not every entry. With the prefix length it matched.
    pub(crate) fn longest_match(
        &self,
        ip: std::net::IpAddr,
        longer_than: Option<u8>,
        held: impl Fn(&PeerEntry) -> bool,
    ) -> Option<(&std::sync::Arc<PeerEntry>, u8)> {
        let index = self
            .by_prefix
            .0
            .get_or_init(|| PrefixTable::of(&self.peers));
        let found = index.lengths.iter().find_map(|&(v4, len)| {
            if v4 != ip.is_ipv4() || longer_than.is_some_and(|l| len <= l) {
                return None;
            }
            let key = ipnet::IpNet::new(ip, len).ok()?.trunc();
            let at = index.nets.get(&key)?;
            at.iter()
                .map(|&i| &self.peers[i])
                .find(|p| held(p))
                .map(|p| (p, len))
        });
        debug_assert_eq!(
            found.map(|(p, len)| (std::sync::Arc::as_ptr(p), len)),
            self.longest_match_by_scan(ip, longer_than, &held)
                .map(|(p, len)| (std::sync::Arc::as_ptr(p), len)),
            "the peers' prefix index answers as a scan of every entry"
        );
        found
    }

    /// [`PeerEntries::longest_match`] by reading every entry (debug builds check the index
    /// against it).
    fn longest_match_by_scan(
        &self,
        ip: std::net::IpAddr,
        longer_than: Option<u8>,
        held: &impl Fn(&PeerEntry) -> bool,
    ) -> Option<(&std::sync::Arc<PeerEntry>, u8)> {
        let mut best: Option<(&std::sync::Arc<PeerEntry>, u8)> = None;
        for p in &self.peers {
            let net = p.route.dst.net();
            let floor = best.map(|(_, len)| len).or(longer_than);
            if net.addr().is_ipv4() == ip.is_ipv4()
                && net.contains(&ip)
                && floor.is_none_or(|len| net.prefix_len() > len)
                && held(p)
            {
                best = Some((p, net.prefix_len()));
            }
        }
        best
    }
}

/// The peers' route destinations parsed once and grouped by network, made lazily from the
/// entries and dropped whenever they change. Equal whatever it holds: it is only a faster
/// way to read the entries.
#[derive(Default, Clone)]
struct PrefixIndex(std::sync::OnceLock<PrefixTable>);

/// The destinations of the entries: each network (truncated) and the entries routing to
/// it, in entry order; and the (family, prefix length) pairs present, longest first.
#[derive(Clone)]
struct PrefixTable {
    nets: std::collections::HashMap<ipnet::IpNet, Vec<usize>>,
    lengths: Vec<(bool, u8)>,
}

impl PrefixTable {
    fn of(peers: &[std::sync::Arc<PeerEntry>]) -> Self {
        let mut nets: std::collections::HashMap<ipnet::IpNet, Vec<usize>> =
            std::collections::HashMap::new();
        let mut lengths = std::collections::BTreeSet::new();
        for (i, p) in peers.iter().enumerate() {
            let net = p.route.dst.net();
            lengths.insert((net.addr().is_ipv4(), net.prefix_len()));
            nets.entry(net.trunc()).or_default().push(i);
        }
        PrefixTable {
            nets,
            lengths: lengths.into_iter().rev().collect(),
        }
    }
}

impl PartialEq for PrefixIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PrefixIndex {}

impl std::fmt::Debug for PrefixIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrefixIndex")
    }
}

/// The peer entries a node's kernel holds from its network daemon ([`Host::peers`]): a
/// handle on the one table every node running the daemon shares ([`PeerTable::share`]), so
/// that a daemon adding a peer's entries adds them on every node at once, as each node's
/// daemon does on the Node event, without visiting each node (a `node add` among 1,000 nodes
/// would otherwise cost a visit to every one of them). Cloning a host copies the entries: a
/// clone is a snapshot, not another sharer.
#[derive(Default)]
pub struct PeerTable(std::sync::Arc<std::sync::RwLock<PeerEntries>>);

impl PeerTable {
    /// A table of its own holding `entries`.
    pub fn new(entries: PeerEntries) -> Self {
        PeerTable(std::sync::Arc::new(std::sync::RwLock::new(entries)))
    }

    /// Another handle on the same table: what the daemon writes, every holder reads.
    pub fn share(&self) -> Self {
        PeerTable(std::sync::Arc::clone(&self.0))
    }

    /// Is `other` a handle on this same table?
    pub(crate) fn is_shared_with(&self, other: &PeerTable) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }

    /// The entries, for reading. (A panic while the table was written leaves it as the
    /// writer left it; the lab reads on rather than poisoning every later read.)
    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, PeerEntries> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The entries, for the daemon to change: every holder sees the change.
    pub fn write(&self) -> std::sync::RwLockWriteGuard<'_, PeerEntries> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clone for PeerTable {
    fn clone(&self) -> Self {
        PeerTable::new(self.read().clone())
    }
}

impl PartialEq for PeerTable {
    fn eq(&self, other: &Self) -> bool {
        self.is_shared_with(other) || *self.read() == *other.read()
    }
}

impl Eq for PeerTable {}

impl std::fmt::Debug for PeerTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.read().fmt(f)
    }
}

/// The kernel entries a daemon programmed for one peer node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerEntry {
    /// The peer node whose lease this is.
    pub owner: String,
    /// The route to its pod subnet.
    pub route: RouteEntry,
    /// VXLAN: the permanent neighbour for its VTEP address.
    pub neigh: Option<Neigh>,
    /// VXLAN: the FDB entry sending its VTEP MAC to its underlay address.
    pub fdb: Option<FdbEntry>,
}

/// A network namespace: its links and its main routing table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Netns {
    /// Links by name.
    pub links: Links,
    /// Routes added explicitly (connected routes are derived from addresses).
    pub routes: Vec<RouteEntry>,
    /// What few namespaces have (written sysctls, deleted connected routes): boxed, `None`
    /// while both are empty, so a namespace holding only links and routes stays small.
    tweaks: Option<Box<NetnsTweaks>>,
}

// One a pod (boxed in the host's sorted `Vec` of namespaces): the rare state is boxed to
// keep this size.
const _: () = assert!(std::mem::size_of::<Netns>() <= 72);

/// The rarer state of a [`Netns`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct NetnsTweaks {
    /// sysctls written in this namespace (a sandbox's own `/proc/sys/net`: they go with the
    /// namespace, and a link's `conf`/`neigh` knobs go with the link). The host namespace's
    /// are [`Host::sysctls`].
    sysctls: BTreeMap<String, String>,
    /// Connected routes a program deleted (`ip route del 10.12.0.0/24 dev net6`, as ptp
    /// does), as (device, destination): left out of [`Netns::route_table`].
    deleted_connected: Vec<(CompactString, IpNet)>,
}

/// `fe80::/64`, the prefix of the kernel's link-local routes.
const LINK_LOCAL_NET: IpNet = IpNet::V6(ipnet::Ipv6Net::new_assert(
    std::net::Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
    64,
));

/// The addresses the kernel puts on `lo` when it comes up, in `ip addr`'s order: IPv4's
/// 127.0.0.1/8 (`inetdev_event` on NETDEV_UP), then IPv6's ::1/128 (`addrconf_notify` →
/// `init_loopback`).
pub const LO_ADDRS: [ipnet::IpNet; 2] = [
    ipnet::IpNet::V4(ipnet::Ipv4Net::new_assert(std::net::Ipv4Addr::LOCALHOST, 8)),
    ipnet::IpNet::V6(ipnet::Ipv6Net::new_assert(
        std::net::Ipv6Addr::LOCALHOST,
        128,
    )),
];

impl Netns {
    /// A namespace holding only a down `lo`, as `ip netns add` makes it, with room for the
    /// one interface a network then adds (a pod's `eth0`).
    pub fn with_loopback() -> Self {
        Netns {
            links: Links::with_loopback(false),
            ..Netns::default()
        }
    }

    /// A new namespace after `ip link set lo up`: `lo` is UP with the addresses the kernel
    /// gives it as it comes up ([`LO_ADDRS`]), as containerd leaves every pod sandbox.
    pub fn with_loopback_up() -> Self {
        Netns {
            links: Links::with_loopback(true),
            ..Netns::default()
        }
    }

    /// The sysctls written in this namespace (a sandbox's own `/proc/sys/net`).
    pub fn sysctl(&self, name: &str) -> Option<&str> {
        let tweaks = self.tweaks.as_deref()?;
        tweaks.sysctls.get(name).map(String::as_str)
    }

    /// Write a sysctl of this namespace.
    pub fn set_sysctl(&mut self, name: &str, value: &str) {
        let tweaks = self.tweaks.get_or_insert_default();
        tweaks.sysctls.insert(name.to_string(), value.to_string());
    }

    /// Leave the connected route to `dst` on `dev` out of [`Netns::route_table`] (`ip route
    /// del` of a route the kernel derived from an address).
    pub fn delete_connected(&mut self, dev: &str, dst: IpNet) {
        let tweaks = self.tweaks.get_or_insert_default();
        tweaks.deleted_connected.push((dev.into(), dst));
    }

    /// Whether a program deleted the connected route to `dst` on `dev`.
    fn connected_deleted(&self, dev: &str, dst: IpNet) -> bool {
        self.tweaks.as_deref().is_some_and(|t| {
            t.deleted_connected
                .iter()
                .any(|(d, n)| *d == dev && *n == dst)
        })
    }

    /// Drop what goes with the link `ifname` as it leaves this namespace: its routes, the
    /// connected routes deleted on it and its own sysctls ([`is_link_sysctl`]).
    pub fn forget_link_state(&mut self, ifname: &str) {
        self.routes.retain(|r| r.dev != ifname);
        if let Some(tweaks) = &mut self.tweaks {
            tweaks.deleted_connected.retain(|(d, _)| d != ifname);
            tweaks.sysctls.retain(|k, _| !is_link_sysctl(k, ifname));
            if tweaks.sysctls.is_empty() && tweaks.deleted_connected.is_empty() {
                self.tweaks = None;
            }
        }
    }

    /// Whether the link has carrier (`LOWER_UP`; `NO-CARRIER` when it is up without): an up
    /// bridge has carrier while some up link is its port, as the bridge's port state
    /// selection sets it (`br_port_state_selection`: the last port going takes it off, and
    /// `ip link` then says `NO-CARRIER … state DOWN`); any other up link has it. The
    /// kernel leaves a new bridge's carrier on until its first port comes and goes; the
    /// lab keeps no such history, and the bridge plugin attaches a port in the ADD that
    /// makes the bridge, so a bridge without ports here is one whose ports went.
    pub fn carrier(&self, link: &Link) -> bool {
        link.up
            && (link.kind != LinkKind::Bridge
                || self
                    .links
                    .values()
                    .any(|p| p.up && p.master.as_deref() == Some(link.name.as_str())))
    }

    /// Whether the kernel flags a route on `dev` `linkdown` (RTNH_F_LINKDOWN): its device
    /// is up without carrier (a bridge whose last port went). The kernel still routes by
    /// such a route (`ignore_routes_with_linkdown` is 0 by default), so the packet walker
    /// takes it as any other; only the views print the flag.
    pub fn linkdown(&self, dev: &str) -> bool {
        self.links
            .get(dev)
            .is_some_and(|l| l.up && !self.carrier(l))
    }

    /// The link-local address the kernel gives `link` here (`inet6 fe80::…/64 scope
    /// link`), derived from its state: addrconf gives one to every up non-loopback
    /// Ethernet-like device once it has carrier (a bridge keeps its own when its carrier
    /// goes), unless IPv6 is off on it (`disable_ipv6`, read by `sysctl`: the namespace's
    /// sysctls). With Debian's default `addr_gen_mode` 0 it is EUI-64 from the MAC:
    /// `fe80::` then the MAC with its universal/local bit flipped and `ff:fe` in the
    /// middle (checked on a veth, a bridge and an ifb in a netns here). An ipvlan (whose
    /// interface ID the kernel derives from its `dev_id`, not only the shared MAC) shows
    /// none here.
    pub fn link_local<'s>(
        &self,
        link: &Link,
        sysctl: impl Fn(&str) -> Option<&'s str>,
    ) -> Option<ipnet::Ipv6Net> {
        let eligible = match link.kind {
            LinkKind::Loopback | LinkKind::Ipvlan(_) => false,
            LinkKind::Bridge => link.up,
            _ => self.carrier(link),
        };
        let off = |key: &str| sysctl(&format!("net.ipv6.conf.{key}.disable_ipv6")) == Some("1");
        if !eligible || off("all") || off(&link.name) {
            return None;
        }
        let m = link.mac.0;
        let addr = std::net::Ipv6Addr::from([
            0xfe,
            0x80,
            0,
            0,
            0,
            0,
            0,
            0,
            m[0] ^ 2,
            m[1],
            m[2],
            0xff,
            0xfe,
            m[3],
            m[4],
            m[5],
        ]);
        Some(ipnet::Ipv6Net::new_assert(addr, 64))
    }

    /// The kernel's `fe80::/64 dev LINK proto kernel metric 256` route for each link with a
    /// link-local address ([`Netns::link_local`]), in interface-index order (the order the
    /// links come up, as the plugins make them).
    pub fn link_local_routes<'s>(
        &self,
        sysctl: impl Fn(&str) -> Option<&'s str> + Copy,
    ) -> Vec<RouteEntry> {
        self.links
            .by_ifindex()
            .into_iter()
            .filter(|l| self.link_local(l, sysctl).is_some())
            .map(|l| RouteEntry {
                proto_kernel: true,
                ..RouteEntry::static_route(RouteDst::Net(LINK_LOCAL_NET), None, &l.name)
            })
            .collect()
    }

    /// The routing table as `ip route` then `ip -6 route` show it: IPv4's default routes
    /// first, then its other routes by destination; then IPv6's routes by destination, its
    /// default routes last (the kernel lists ::/0 after the prefixes).
    /// Routes to one destination with one metric list the newest added route first: netlink
    /// `RouteAdd` (what the plugins call) inserts without `NLM_F_APPEND`, so the kernel puts
    /// the new alias ahead of the equal ones (`fib_table_insert`), while the connected routes
    /// the kernel derives from addresses are appended (`fib_magic` with `NLM_F_APPEND`).
    /// Checked against the kernel with two bridge attachments in one pod
    /// (`tests/underlay_differential.rs`: two default routes, the second on top).
    pub fn route_table(&self) -> Vec<RouteEntry> {
        let mut table: Vec<RouteEntry> = Vec::new();
        for r in self.routes.iter().rev() {
            if r.dst.is_default() {
                table.push(r.clone());
            }
        }
        let mut rest: Vec<RouteEntry> = Vec::new();
        for r in self.routes.iter().rev() {
            if !r.dst.is_default() {
                rest.push(r.clone());
            }
        }
        for link in self.links.values() {
            if !link.up || link.kind == LinkKind::Loopback {
                continue;
            }
            for &net in &link.addrs {
                // A host address (/32, /128) gets only a local route (table local), no
                // prefix route.
                if net.prefix_len() == net.max_prefix_len() {
                    continue;
                }
                let v6 = net.addr().is_ipv6();
                let dst = net.trunc();
                if self.connected_deleted(&link.name, dst) {
                    continue;
                }
                rest.push(
                    RouteEntry {
                        proto_kernel: true,
                        // An IPv6 connected route has no scope or preferred source.
                        scope_link: !v6,
                        ..RouteEntry::static_route(RouteDst::Net(dst), None, &link.name)
                    }
                    .with_src((!v6).then(|| net.addr())),
                );
            }
        }
        rest.sort_by_key(|r| r.dst.sort_key());
        let (v6_defaults, v4_defaults): (Vec<_>, Vec<_>) =
            table.into_iter().partition(RouteEntry::is_ipv6);
        let (v6_rest, v4_rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(RouteEntry::is_ipv6);
        [v4_defaults, v4_rest, v6_rest, v6_defaults].concat()
    }
}

/// The router a node's uplink points its default route at: `.254` of the node's /24 (the
/// lab's segments are /24s; a node that is itself `.254` uses `.253`). Nothing answers
/// there: the lab models no network beyond the nodes.
pub(crate) fn default_gateway(internal_ip: &str) -> Option<std::net::Ipv4Addr> {
    let ip: std::net::Ipv4Addr = internal_ip.parse().ok()?;
    let base = u32::from(ip) & 0xffff_ff00;
    let gw = if u32::from(ip) == base | 254 {
        base | 253
    } else {
        base | 254
    };
    Some(std::net::Ipv4Addr::from(gw))
}

/// A tc qdisc on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qdisc {
    /// The device.
    pub dev: String,
    /// `tbf` or `ingress`.
    pub kind: String,
    /// Parameters as `tc qdisc show` prints them.
    pub params: String,
}

impl Qdisc {
    /// The line `tc qdisc show` prints, e.g. `qdisc tbf 1: dev veth1 root refcnt 3 rate
    /// 1Mbit burst 250000b lat 25ms`. The handle follows the kind: `ffff:` for `ingress`,
    /// `1:` otherwise (what the bandwidth plugin creates).
    pub fn to_tc_line(&self) -> String {
        let handle = if self.kind == "ingress" {
            "ffff:"
        } else {
            "1:"
        };
        format!(
            "qdisc {} {handle} dev {} {} ",
            self.kind, self.dev, self.params
        )
    }
}

/// A node's sandbox namespaces by path (`/var/run/netns/cni-…`), in path order. Each path
/// is kept once: a veth whose other end is in a sandbox names it with the same text
/// ([`Namespaces::path`]). One entry a pod on every node: a [`VecMap`], whose room is
/// about its entries, where a B-tree's part-empty nodes cost about as much again. The
/// namespaces are boxed: the sorted entries move as random paths are added, and 24 bytes
/// move (and are copied when the map grows) where 88 did.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Namespaces(VecMap<Arc<str>, Box<Netns>>);

const _: () = assert!(std::mem::size_of::<(Arc<str>, Box<Netns>)>() <= 24);

impl Namespaces {
    /// The namespace at `path`.
    pub fn get(&self, path: &str) -> Option<&Netns> {
        self.0.get(path).map(|ns| &**ns)
    }

    /// The namespace at `path`, mutably.
    pub fn get_mut(&mut self, path: &str) -> Option<&mut Netns> {
        self.0.get_mut(path).map(|ns| &mut **ns)
    }

    /// The path as this map holds it, to name the namespace elsewhere without a copy.
    pub fn path(&self, path: &str) -> Option<&Arc<str>> {
        self.0.get_key_value(path).map(|(k, _)| k)
    }

    /// Whether a namespace is at `path`.
    pub fn contains_key(&self, path: &str) -> bool {
        self.0.contains_key(path)
    }

    /// Add (or replace) the namespace at `path`.
    pub fn insert(&mut self, path: impl Into<Arc<str>>, ns: Netns) -> Option<Netns> {
        self.0.insert(path.into(), Box::new(ns)).map(|ns| *ns)
    }

    /// Remove the namespace at `path`.
    pub fn remove(&mut self, path: &str) -> Option<Netns> {
        self.0.remove(path).map(|ns| *ns)
    }

    /// The paths, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(|k| &**k)
    }

    /// The namespaces, in path order.
    pub fn values(&self) -> impl Iterator<Item = &Netns> {
        self.0.values().map(|ns| &**ns)
    }

    /// The paths and their namespaces, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Netns)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Namespaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::Index<&str> for Namespaces {
    type Output = Netns;

    fn index(&self, path: &str) -> &Netns {
        match self.get(path) {
            Some(ns) => ns,
            None => panic!("no namespace {path:?}"),
        }
    }
}

/// One node's kernel and disk as the CNI plugins see them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Host {
    /// The node's name.
    pub node: String,
    /// The host network namespace.
    pub root: Netns,
    /// Sandbox namespaces by path (`/var/run/netns/cni-…`).
    pub netns: Namespaces,
    /// iptables and ip6tables: the nat and filter tables of each family.
    pub netfilter: Netfilter,
    /// The ipsets `-m set` rules test (one namespace of names for both families).
    pub ipsets: IpSets,
    /// tc qdiscs.
    pub qdiscs: Vec<Qdisc>,
    /// sysctls that plugins set (`net.ipv4.ip_forward` …), by name (a few a node: a
    /// [`VecMap`], where a B-tree's first leaf has room for eleven).
    pub sysctls: VecMap<CompactString, CompactString>,
    /// host-local's data directories by network name (`/var/lib/cni/networks/<net>`): one
    /// or two a node, a [`VecMap`].
    pub ipam: VecMap<CompactString, IpamStore>,
    /// Routes, neighbours and FDB entries the node's network daemon programmed for the other
    /// nodes: a handle on the table every node running the daemon shares (see
    /// [`PeerTable`]; entries owned by this node, or whose route the kernel refuses here,
    /// are skipped when read: [`Host::peer_entries`]).
    pub peers: PeerTable,
    /// Files daemons wrote on the node (`/run/flannel/subnet.env`), by path.
    pub files: BTreeMap<String, String>,
    /// The cluster datastore this node's plugins reach through the kubeconfig a network's
    /// installer wrote (`/etc/cni/net.d/calico-kubeconfig`); `None` when there is none.
    pub datastore: Option<super::datastore::Datastore>,
    /// cilium-agent's API as this node's `cilium-cni` reaches it over
    /// `/var/run/cilium/cilium.sock`; `None` when no agent runs on the node.
    pub cilium: Option<super::cilium_api::AgentApi>,
    /// The SR-IOV PFs' VF tables, by VF PCI address (sysfs `virtfnN`, `ip link show PF`'s
    /// `vf N` lines); empty on a node without an SR-IOV NIC (see [`super::sriov_nic`]).
    pub vfs: BTreeMap<String, super::sriov_nic::VfConfig>,
}

/// The node's resolver configuration (a file in [`Host::files`]).
pub(crate) const RESOLV_CONF: &str = "/etc/resolv.conf";

impl Host {
    /// A node whose host namespace has `lo` (up, with the kernel's `127.0.0.1/8` and
    /// `::1/128`, as every booted host's) and an uplink `eth0` with the InternalIP and the
    /// MAC `mac`, and `/etc/resolv.conf` naming the uplink's gateway.
    pub fn new(node: &str, internal_ip: &str, mac: Mac) -> Self {
        let mut root = Netns::with_loopback_up();
        let mut eth0 = Link::new("eth0", LinkKind::Physical, mac, 1500);
        eth0.up = true;
        if let Ok(ip) = internal_ip.parse() {
            eth0.addrs.extend(ipnet::IpNet::new(ip, 24));
        }
        root.links.insert("eth0", eth0);
        let mut files = BTreeMap::new();
        if let Some(gw) = default_gateway(internal_ip) {
            root.routes.push(RouteEntry::static_route(
                RouteDst::Default { v6: false },
                Some(gw.into()),
                "eth0",
            ));
            // The node's resolver: its uplink's gateway, as DHCP would set it. host-local's
            // `resolvConf` reads this file.
            // Written piece by piece (the address without `core::fmt`): every node has one.
            let mut conf = String::with_capacity(48);
            conf.push_str("nameserver ");
            crate::util::addr::push_ipv4(&mut conf, gw);
            conf.push_str("\nsearch lab.internal\n");
            debug_assert_eq!(conf, format!("nameserver {gw}\nsearch lab.internal\n"));
            files.insert(RESOLV_CONF.to_string(), conf);
        }
        Host {
            node: node.to_string(),
            root,
            files,
            ..Default::default()
        }
    }

    /// The peer entries this node's kernel holds: every one not owned by the node itself,
    /// less the routes the kernel refuses here: a gateway that no connected route of the
    /// device covers, without `onlink` (`Error: Nexthop has invalid gateway.`, ENETUNREACH;
    /// host-gw peers on another segment). The node's addresses do not change once made, so
    /// deciding this when reading is deciding it when the route was added.
    pub(crate) fn peer_entries(&self) -> Vec<std::sync::Arc<PeerEntry>> {
        self.peers
            .read()
            .peers
            .iter()
            .filter(|p| self.holds_peer_entry(p))
            .cloned()
            .collect()
    }

    /// Does this node's kernel hold the daemon's entry `p` (another node's, its route taken)?
    pub(crate) fn holds_peer_entry(&self, p: &PeerEntry) -> bool {
        p.owner != self.node && self.accepts_route(&p.route)
    }

    /// The entry the network daemon programmed here for `owner`'s lease, whether or not the
    /// kernel took its route.
    pub(crate) fn peer_entry_of(&self, owner: &str) -> Option<std::sync::Arc<PeerEntry>> {
        self.peers
            .read()
            .peers
            .iter()
            .find(|p| p.owner == owner)
            .cloned()
    }

    /// Would the kernel take this route on the host (its gateway on-link)?
    pub(crate) fn accepts_route(&self, route: &RouteEntry) -> bool {
        let Some(gw) = route.via else {
            return true;
        };
        if route.onlink {
            return self.root.links.contains_key(&route.dev);
        }
        self.root
            .links
            .get(&route.dev)
            .is_some_and(|l| l.up && l.addrs.iter().any(|n| n.trunc().contains(&gw)))
    }

    /// The host's main routing table as `ip route` shows it: the namespace's own routes
    /// and the daemon's peer routes, default first, then by destination.
    pub fn route_table(&self) -> Vec<RouteEntry> {
        let mut table = self.root.route_table();
        let peers = self.peer_entries();
        if peers.is_empty() {
            return table;
        }
        table.extend(peers.iter().map(|p| p.route.clone()));
        // The order Netns::route_table gives: IPv4 defaults, IPv4, IPv6, IPv6 defaults.
        table.sort_by_key(|r| {
            let v6 = r.is_ipv6();
            (v6, r.dst.is_default() == v6, r.dst.sort_key())
        });
        table
    }

    /// The host's neighbour table (`ip neigh show`): the daemon's permanent entries.
    pub fn neighbours(&self) -> Vec<Neigh> {
        self.peer_entries()
            .iter()
            .filter_map(|p| p.neigh.clone())
            .collect()
    }

    /// The host's FDB entries on non-bridge devices (`bridge fdb show`, VXLAN part).
    pub fn fdb_entries(&self) -> Vec<FdbEntry> {
        self.peer_entries()
            .iter()
            .filter_map(|p| p.fdb.clone())
            .collect()
    }

    /// The namespace at a path, host (`""`) included.
    pub fn ns(&self, path: &str) -> Option<&Netns> {
        if path.is_empty() {
            Some(&self.root)
        } else {
            self.netns.get(path)
        }
    }

    /// The namespace at a path, mutably.
    pub(crate) fn ns_mut(&mut self, path: &str) -> Option<&mut Netns> {
        if path.is_empty() {
            Some(&mut self.root)
        } else {
            self.netns.get_mut(path)
        }
    }

    /// The namespace a veth's `peer_netns` names (`None`: the host's).
    pub fn peer_ns(&self, peer_netns: Option<&str>) -> Option<&Netns> {
        match peer_netns {
            None => Some(&self.root),
            Some(path) => self.netns.get(path),
        }
    }

    /// Delete the link `ifname` of the namespace at `netns` ("" for the host's) as the kernel
    /// unregisters a device (`ip link del`, netlink's `LinkDel`): its routes, its
    /// connected-route and per-device sysctls and, on the host, its qdiscs go with it; a
    /// veth takes its peer with it, wherever the peer is, the same way. Returns the link (its
    /// addresses: `ip.DelLinkByNameAddr`), or `None` when there is no such link.
    pub fn delete_link(&mut self, netns: &str, ifname: &str) -> Option<Link> {
        let link = self.unregister(netns, ifname)?;
        if let LinkKind::Veth { peer, peer_netns } = &link.kind {
            let peer_ns = peer_netns.as_deref().unwrap_or("");
            let pairs_back = self
                .ns(peer_ns)
                .and_then(|ns| ns.links.get(peer))
                .is_some_and(
                    |l| matches!(&l.kind, LinkKind::Veth { peer: back, .. } if *back == link.name),
                );
            if pairs_back {
                self.unregister(peer_ns, peer);
            }
        }
        Some(link)
    }

    /// One device's removal from its namespace (see [`Host::delete_link`]).
    fn unregister(&mut self, netns: &str, ifname: &str) -> Option<Link> {
        let ns = self.ns_mut(netns)?;
        let link = ns.links.remove(ifname)?;
        ns.forget_link_state(ifname);
        if netns.is_empty() {
            self.qdiscs.retain(|q| q.dev != ifname);
            self.sysctls.retain(|k, _| !is_link_sysctl(k, ifname));
        }
        Some(link)
    }

    /// Destroy the namespace at `path` as the kernel does once its last reference goes
    /// (`ip netns del`, the runtime removing a sandbox): every virtual link in it goes, and
    /// a veth takes its peer with it wherever the peer is, with the peer's routes (Calico's
    /// `10.244.1.5 dev cali…`, which a DEL by another network's plugins did not remove).
    pub fn remove_netns(&mut self, path: &str) -> Option<Netns> {
        let names: Vec<CompactString> = self
            .netns
            .get(path)?
            .links
            .values()
            .filter(|l| matches!(l.kind, LinkKind::Veth { .. }))
            .map(|l| l.name.clone())
            .collect();
        for name in names {
            self.delete_link(path, &name);
        }
        self.netns.remove(path)
    }
}

impl Host {
    /// Write a sysctl of the namespace at `netns` ("" = the host's, in [`Host::sysctls`];
    /// a sandbox's in its [`Netns::sysctls`]). A namespace that does not exist takes nothing.
    pub(crate) fn set_sysctl(&mut self, netns: &str, name: &str, value: &str) {
        if netns.is_empty() {
            self.sysctls.insert(name.into(), value.into());
        } else if let Some(ns) = self.netns.get_mut(netns) {
            ns.set_sysctl(name, value);
        }
    }

    /// A sysctl a program wrote in `ns`, one of this host's namespaces (the host's own
    /// namespace keeps its sysctls in [`Host::sysctls`]).
    pub fn sysctl_in<'a>(&'a self, ns: &'a Netns, name: &str) -> Option<&'a str> {
        if std::ptr::eq(ns, &self.root) {
            self.sysctls.get(name).map(CompactString::as_str)
        } else {
            ns.sysctl(name)
        }
    }

    /// A sysctl a program wrote in the namespace at `netns` ("" = the host's).
    pub fn sysctl(&self, netns: &str, name: &str) -> Option<&str> {
        if netns.is_empty() {
            self.sysctls.get(name).map(CompactString::as_str)
        } else {
            self.netns.get(netns)?.sysctl(name)
        }
    }
}

/// Whether a sysctl name is one of a link's own knobs (`net.ipv4.conf.<ifname>.…`,
/// `net.ipv6.conf…`, `net.ipv{4,6}.neigh.<ifname>.…`), which go when the link goes.
fn is_link_sysctl(name: &str, ifname: &str) -> bool {
    [
        "net.ipv4.conf.",
        "net.ipv6.conf.",
        "net.ipv4.neigh.",
        "net.ipv6.neigh.",
    ]
    .iter()
    .any(|p| {
        name.strip_prefix(p)
            .and_then(|rest| rest.strip_prefix(ifname))
            .is_some_and(|rest| rest.starts_with('.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A destination as `ip route` prints it (a bare address is a host route).
    fn dst(text: &str) -> RouteDst {
        text.parse().expect("a route destination")
    }

    /// A destination typed by a learner reads as `ip route` would keep it, and prints back
    /// as `ip route` prints it; anything else is refused, saying what is accepted.
    #[test]
    fn a_route_destination_reads_as_ip_route_keeps_it() {
        for (text, shown) in [
            ("default", "default"),
            ("10.244.1.0/24", "10.244.1.0/24"),
            ("10.244.1.5/24", "10.244.1.0/24"),
            ("10.1.1.1/32", "10.1.1.1"),
            ("10.1.1.1", "10.1.1.1"),
            ("fd00::/64", "fd00::/64"),
            ("fd00::1/128", "fd00::1"),
        ] {
            assert_eq!(dst(text).to_string(), shown, "{text}");
        }
        assert_eq!(dst("0.0.0.0/0"), RouteDst::Default { v6: false });
        let e = "cni0".parse::<RouteDst>().expect_err("not a destination");
        assert!(e.contains("expected `default`, a CIDR"), "{e}");
    }

    fn entry(owner: &str, to: &str, via: &str) -> Arc<PeerEntry> {
        Arc::new(PeerEntry {
            owner: owner.to_string(),
            route: RouteEntry::static_route(dst(to), via.parse().ok(), "eth0"),
            neigh: None,
            fdb: None,
        })
    }

    #[test]
    fn hardware_addresses_parse_as_go_s_parse_mac() {
        let mac = |s: &str| s.parse::<Mac>().map(|m| m.to_string());
        for s in ["ca:fe:c0:ff:ee:00", "CA-FE-C0-FF-EE-00", "cafe.c0ff.ee00"] {
            assert_eq!(mac(s).as_deref(), Ok("ca:fe:c0:ff:ee:00"), "{s}");
        }
        for s in [
            "ca:fe:c0:ff:ee",
            "ca:fe:c0:ff:ee:0g",
            "ca:fe-c0:ff:ee:00",
            "ca:fe:c0:ff:ee:00:",
            "cafe.c0ff:ee00",
            "",
        ] {
            assert_eq!(mac(s), Err(BadMac), "{s}");
        }
        // EUI-64 and InfiniBand addresses are hardware addresses, not Macs.
        let eui64 = "02:00:5e:10:00:00:00:01";
        assert_eq!(parse_hardware_addr(eui64).map(|b| b.len()), Ok(8));
        assert_eq!(mac(eui64), Err(BadMac));
        let ib = "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01";
        assert_eq!(parse_hardware_addr(ib).map(|b| b.len()), Ok(20));
    }

    #[test]
    fn a_daemon_s_write_reaches_every_sharer_but_not_a_cloned_host() {
        let table = PeerTable::default();
        let mut node_1 = Host::new(
            "node-1",
            "192.168.0.1",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        node_1.peers = table.share();
        let mut node_2 = Host::new(
            "node-2",
            "192.168.0.2",
            "02:00:00:00:00:02".parse().expect("a MAC"),
        );
        node_2.peers = table.share();
        let snapshot = node_1.clone();
        *table.write().entries_mut() = vec![
            entry("node-1", "10.244.1.0/24", "192.168.0.1"),
            entry("node-2", "10.244.2.0/24", "192.168.0.2"),
        ];
        // Each node holds the other's route, not its own.
        let dsts = |h: &Host| -> Vec<String> {
            h.peer_entries()
                .iter()
                .map(|p| p.route.dst.to_string())
                .collect()
        };
        assert_eq!(dsts(&node_1), ["10.244.2.0/24"]);
        assert_eq!(dsts(&node_2), ["10.244.1.0/24"]);
        // The clone was taken before the write: it is a snapshot, not another sharer.
        assert!(dsts(&snapshot).is_empty());
        assert!(!snapshot.peers.is_shared_with(&table));
        assert_ne!(snapshot, node_1);
    }

    #[test]
    fn a_peer_route_is_the_longest_prefix_the_node_holds_and_the_first_of_equals() {
        let table = PeerTable::new(PeerEntries::new(vec![
            entry("node-2", "10.244.0.0/16", "192.168.0.2"),
            entry("node-3", "10.244.2.0/24", "192.168.0.3"),
            entry("node-4", "10.244.2.0/24", "192.168.0.4"),
            entry("node-1", "10.244.2.128/25", "192.168.0.1"),
            entry("node-5", "10.244.5.7", "192.168.0.5"),
        ]));
        let mut host = Host::new(
            "node-1",
            "192.168.0.1",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        host.peers = table.share();
        let via = |ip: &str| {
            let r = host.route_table();
            let best = crate::net::trace::host_route(&host, ip.parse().unwrap());
            assert!(best.as_ref().is_none_or(|b| r.contains(b)));
            best.and_then(|r| r.via).map(|v| v.to_string())
        };
        // node-1's own /25 is not in its kernel: the first /24 (node-3's) wins over node-4's.
        assert_eq!(via("10.244.2.200").as_deref(), Some("192.168.0.3"));
        assert_eq!(via("10.244.9.1").as_deref(), Some("192.168.0.2"));
        // A host route (a bare address) is a /32.
        assert_eq!(via("10.244.5.7").as_deref(), Some("192.168.0.5"));
        // Nothing covers it but the node's default route.
        assert_eq!(via("10.9.0.1").as_deref(), Some("192.168.0.254"));
        // A write drops the index: the new entry answers at once.
        table
            .write()
            .entries_mut()
            .insert(0, entry("node-6", "10.244.9.0/24", "192.168.0.6"));
        assert_eq!(via("10.244.9.1").as_deref(), Some("192.168.0.6"));
    }

    #[test]
    fn a_peer_route_whose_gateway_is_off_the_uplink_s_subnet_is_refused() {
        let table = PeerTable::new(PeerEntries::new(vec![entry(
            "node-9",
            "10.244.9.0/24",
            "192.168.7.9",
        )]));
        let mut host = Host::new(
            "node-1",
            "192.168.0.1",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        host.peers = table.share();
        assert!(host.peer_entries().is_empty());
        assert!(host.peer_entry_of("node-9").is_some());
        assert!(
            host.route_table()
                .iter()
                .all(|r| r.dst != dst("10.244.9.0/24"))
        );
    }
}
