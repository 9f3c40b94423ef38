//! A node's kernel and disk as the front ends read them: the host namespace's links, a
//! pod namespace's links and routes, the sandboxes containerd holds, and host-local's lease
//! files — what `ip link`, `ip route`, `crictl pods` and `ls /var/lib/cni/networks/<net>`
//! would show on the node. Plain data for the dashboard and the REPL, so they read no CNI
//! internals (`Host`, `IpamStore`, `Sandbox`).
//!
//! Rows a frame reads per visible line are borrowed or produced lazily ([`host_links`],
//! [`IpamDir::leases_from`]), so a view costs what it shows, not what the node holds.

use super::Lab;
use crate::cni::host::{Link, LinkKind, Netns};
use crate::cni::ipam_store::IpamStore;
use std::collections::BTreeMap;
use std::net::IpAddr;

// ---------------------------------------------------------------------------------------
// Links and routes.

/// What a network link is, as `ip -d link` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkType {
    /// `lo`.
    Loopback,
    /// A Linux bridge (`cni0`).
    Bridge,
    /// One end of a veth pair.
    Veth,
    /// An ifb device (bandwidth's egress shaping).
    Ifb,
    /// The node's uplink (`eth0` of the node, carrying the InternalIP).
    Physical,
    /// A VXLAN device (`flannel.1`).
    Vxlan,
    /// A macvlan or ipvlan on a host link (`net1` on `eth0`).
    Underlay,
    /// An SR-IOV virtual function's netdev.
    SriovVf,
}

/// One link of a network namespace, as `ip addr` prints it (borrowed from the node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinkRow<'a> {
    /// Interface name.
    pub name: &'a str,
    /// What it is.
    pub kind: LinkType,
    /// Addresses in CIDR form (`10.244.1.1/24`), in the order they were added.
    pub addrs: &'a [ipnet::IpNet],
    /// Hardware address.
    pub mac: crate::cni::host::Mac,
    /// MTU.
    pub mtu: u32,
    /// The bridge it is enslaved to.
    pub master: Option<&'a str>,
    /// Administratively up.
    pub up: bool,
    /// For a veth end: the other end's name and its namespace path ("" for the host).
    pub peer: Option<(&'a str, &'a str)>,
    /// For a macvlan/ipvlan: its master; for an SR-IOV VF: its PF (in the host namespace).
    pub lower: Option<&'a str>,
    /// What a macvlan/ipvlan is, with its mode (`macvlan`, `ipvlan`); "" otherwise.
    pub flavour: &'static str,
    /// The PCI address of the device behind it (NICs, SR-IOV PFs and VFs).
    pub pci: Option<&'a str>,
}

impl<'a> LinkRow<'a> {
    fn of(link: &'a Link) -> Self {
        let (lower, flavour) = match &link.kind {
            LinkKind::Macvlan(lower) => (Some(lower.master.as_str()), "macvlan"),
            LinkKind::Ipvlan(lower) => (Some(lower.master.as_str()), "ipvlan"),
            LinkKind::SriovVf(vf) => (Some(vf.pf.as_str()), "vf"),
            _ => (None, ""),
        };
        let (kind, peer) = match &link.kind {
            LinkKind::Loopback => (LinkType::Loopback, None),
            LinkKind::Bridge => (LinkType::Bridge, None),
            LinkKind::Veth { peer, peer_netns } => (
                LinkType::Veth,
                Some((peer.as_str(), peer_netns.as_deref().unwrap_or_default())),
            ),
            LinkKind::Ifb => (LinkType::Ifb, None),
            LinkKind::Physical => (LinkType::Physical, None),
            LinkKind::Vxlan(_) => (LinkType::Vxlan, None),
            LinkKind::Macvlan(_) | LinkKind::Ipvlan(_) => (LinkType::Underlay, None),
            LinkKind::SriovVf(_) => (LinkType::SriovVf, None),
        };
        LinkRow {
            name: &link.name,
            kind,
            addrs: &link.addrs,
            mac: link.mac,
            mtu: link.mtu,
            master: link.master.as_deref(),
            up: link.up,
            peer,
            lower,
            flavour,
            pci: link.pci(),
        }
    }

    /// The first address as `ip addr` prints it ("" when it has none).
    pub(crate) fn first_addr(&self) -> String {
        self.addrs
            .first()
            .map(ToString::to_string)
            .unwrap_or_default()
    }
}

fn links_of(ns: Option<&Netns>) -> impl Iterator<Item = LinkRow<'_>> {
    ns.into_iter()
        .flat_map(|ns| ns.links.values().map(LinkRow::of))
}

/// The links of a node's host namespace in name order (none for an unknown node).
pub(crate) fn host_links<'a>(lab: &'a Lab, node: &str) -> impl Iterator<Item = LinkRow<'a>> {
    links_of(lab.nodes.get(node).map(|rt| &rt.host.root))
}

/// The links of a sandbox namespace on a node, by its path (none when it does not exist).
pub(crate) fn netns_links<'a>(
    lab: &'a Lab,
    node: &str,
    netns: &str,
) -> impl Iterator<Item = LinkRow<'a>> {
    links_of(lab.nodes.get(node).and_then(|rt| rt.host.netns.get(netns)))
}

/// The routing tables of a sandbox namespace on a node as `ip route` and `ip -6 route`
/// print them (empty when the namespace does not exist).
pub(crate) fn netns_routes(lab: &Lab, node: &str, netns: &str) -> super::views::RouteTables {
    lab.nodes
        .get(node)
        .and_then(|rt| Some((rt, rt.host.netns.get(netns)?)))
        .map(|(rt, ns)| super::views::route_tables(&rt.host, ns, ns.route_table()))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Sandboxes.

/// One interface of a sandbox's CNI result (`interfaces[]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InterfaceRow {
    /// Interface name (`cni0`, `veth1a2b3c4d`, `eth0`).
    pub name: String,
    /// The netns path for an in-container interface; "" for a host interface.
    pub sandbox: String,
}

/// A pod sandbox on a node as containerd keeps it (`crictl inspectp`): its ID, network
/// namespace and what its CNI ADD returned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxRow {
    /// The pod, `ns/name`.
    pub pod: String,
    /// The 64-hex sandbox ID (CNI_CONTAINERID).
    pub id: String,
    /// The network namespace path (CNI_NETNS).
    pub netns: String,
    /// The pod's IP from the CNI result.
    pub ip: String,
    /// The result's interfaces, in result order.
    pub interfaces: Vec<InterfaceRow>,
    /// The result's addresses in CIDR form (`10.244.1.2/24`), in result order.
    pub addresses: Vec<String>,
}

fn sandbox_row(pod: &str, sb: &crate::node::Sandbox) -> SandboxRow {
    SandboxRow {
        pod: pod.to_string(),
        id: sb.id().to_string(),
        netns: sb.netns().to_string(),
        ip: sb.ip(),
        interfaces: sb
            .result
            .interfaces
            .iter()
            .map(|i| InterfaceRow {
                name: i.name.to_string(),
                sandbox: i.sandbox_path().to_string(),
            })
            .collect(),
        addresses: sb
            .result
            .ips
            .iter()
            .map(|ip| ip.address.to_string())
            .collect(),
    }
}

/// The sandbox of a pod (`ns/name`) on a node, if the runtime has one.
pub fn sandbox(lab: &Lab, node: &str, pod: &str) -> Option<SandboxRow> {
    let sb = lab.nodes.get(node)?.sandboxes.get(pod)?;
    Some(sandbox_row(pod, sb))
}

/// Every sandbox on a node, by pod key order.
pub fn sandboxes(lab: &Lab, node: &str) -> Vec<SandboxRow> {
    lab.nodes
        .get(node)
        .map(|rt| {
            rt.sandboxes
                .iter()
                .map(|(k, sb)| sandbox_row(&k.to_string(), sb))
                .collect()
        })
        .unwrap_or_default()
}

/// The pod (`ns/name`) whose sandbox has this container ID on a node, if any (a raw
/// `cni add` has none).
pub(crate) fn sandbox_owner(lab: &Lab, node: &str, container_id: &str) -> Option<String> {
    lab.nodes
        .get(node)?
        .sandboxes
        .iter()
        .find(|(_, sb)| sb.id() == container_id)
        .map(|(k, _)| k.to_string())
}

/// Who accounts for a host-local lease on a node, as the node's own files tell: a sandbox,
/// libcni's result cache, or nothing that will ever DEL it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseHolder {
    /// A pod whose sandbox has this container ID (`ns/name`).
    Pod(String),
    /// No pod, but libcni cached the attachment under the network the node uses: a raw
    /// `cni add`, which `cni del` releases.
    Attachment,
    /// No pod, and only a network the node no longer uses cached it: a pod torn down after
    /// the switch (with the config in use at that moment, as containerd does), or a raw
    /// `cni add` made before it. A DEL now runs the new chain, which never reaches this
    /// store: a leak, and host-local has no GC.
    OtherChain {
        /// The file of `/etc/cni/net.d` the node uses now (whose chain ran the DEL).
        active: String,
    },
    /// No pod and nothing cached: no runtime will send a DEL (containerd died mid-ADD).
    Leaked,
}

impl LeaseHolder {
    /// True when nothing that will ever send a DEL accounts for the lease.
    pub fn leaked(&self) -> bool {
        matches!(self, LeaseHolder::OtherChain { .. } | LeaseHolder::Leaked)
    }
}

/// Who accounts for the lease of this container ID and interface on a node (`None` for a
/// node that does not exist).
pub fn lease_holder(
    lab: &Lab,
    node: &str,
    container_id: &str,
    ifname: &str,
) -> Option<LeaseHolder> {
    let rt = lab.nodes.get(node)?;
    if let Some(pod) = sandbox_owner(lab, node, container_id) {
        return Some(LeaseHolder::Pod(pod));
    }
    let active = rt.confdir.active().ok();
    let mut cached = rt
        .cache
        .networks_of(container_id, (!ifname.is_empty()).then_some(ifname))
        .map(|net| &**net)
        .peekable();
    if cached.peek().is_none() {
        return Some(LeaseHolder::Leaked);
    }
    match active {
        Some((_, list)) if cached.any(|net| net == list.name) => Some(LeaseHolder::Attachment),
        Some((file, _)) => Some(LeaseHolder::OtherChain { active: file }),
        // No usable config: nothing can DEL it now, but the cache keeps it for when one is.
        None => Some(LeaseHolder::Attachment),
    }
}

// ---------------------------------------------------------------------------------------
// host-local's lease files.

/// One lease file in host-local's directory: the file named by the IP, holding
/// `<containerID>\r\n<ifname>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeaseRow {
    /// The leased IP (the file's name).
    pub ip: IpAddr,
    /// The container ID the file holds.
    pub container_id: String,
    /// The interface name; "" for a legacy file that holds only the container ID.
    pub ifname: String,
}

/// One route of a node's host table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RouteRow {
    /// The destination prefix (`None` for `default`).
    pub dst: Option<ipnet::IpNet>,
    /// The next hop, for a gatewayed route.
    pub via: Option<IpAddr>,
    /// The route as `ip route` prints it.
    pub line: String,
}

/// The routing table of a node's host namespace (`None` for an unknown node).
pub(crate) fn host_routes(lab: &Lab, node: &str) -> Option<Vec<RouteRow>> {
    let rt = lab.nodes.get(node)?;
    Some(
        rt.host
            .route_table()
            .iter()
            .map(|r| RouteRow {
                dst: (!r.dst.is_default()).then(|| r.dst.net()),
                via: r.via,
                line: r.to_ip_route_linkdown(rt.host.root.linkdown(&r.dev)),
            })
            .collect(),
    )
}

/// Whether libcni's result cache on the node holds an attachment of this container ID, in
/// any network (`None` for an unknown node).
pub(crate) fn cni_cached(lab: &Lab, node: &str, container_id: &str) -> Option<bool> {
    let rt = lab.nodes.get(node)?;
    Some(rt.cache.holds_container(container_id))
}

/// The file of the node's `/etc/cni/net.d` the runtime uses (the first that loads, in
/// lexical order), or why none does (`None` for an unknown node).
pub(crate) fn active_conf(lab: &Lab, node: &str) -> Option<Result<String, String>> {
    let rt = lab.nodes.get(node)?;
    Some(
        rt.confdir
            .active()
            .map(|(file, _)| file)
            .map_err(|e| e.to_string()),
    )
}

/// The networks (conflist names) libcni cached an attachment of this container ID and
/// interface under, on the node.
pub(crate) fn cached_networks<'a>(
    lab: &'a Lab,
    node: &str,
    container_id: &str,
    ifname: &str,
) -> Vec<&'a str> {
    lab.nodes
        .get(node)
        .map(|rt| {
            rt.cache
                .networks_of(container_id, Some(ifname))
                .map(|net| &**net)
                .collect()
        })
        .unwrap_or_default()
}

/// One network's host-local directory on a node, read in place (borrowed from the node):
/// the lease files in IP order and the `last_reserved_ip.N` cursors.
#[derive(Debug, Clone, Copy)]
pub struct IpamDir<'a> {
    store: &'a IpamStore,
}

impl<'a> IpamDir<'a> {
    /// Number of lease files.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// True when no IP is leased.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// The lease files in IP order, from the `first`-th on (the ones skipped cost no copy).
    pub fn leases_from(&self, first: usize) -> impl Iterator<Item = LeaseRow> + 'a {
        self.store
            .leases()
            .iter()
            .skip(first)
            .map(|(ip, l)| LeaseRow {
                ip: *ip,
                container_id: l.container_id.to_string(),
                ifname: l.ifname.to_string(),
            })
    }

    /// Whether a file exists for this IP.
    pub fn is_leased(&self, ip: &IpAddr) -> bool {
        self.store.is_leased(ip)
    }

    /// Whether the file for `row.ip` exists and holds what `row` says.
    pub fn holds(&self, row: &LeaseRow) -> bool {
        self.store
            .lease(&row.ip)
            .is_some_and(|l| *l.container_id == *row.container_id && l.ifname == row.ifname)
    }

    /// The `last_reserved_ip.N` cursors: (N, IP), by N.
    pub fn cursors(&self) -> impl Iterator<Item = (usize, IpAddr)> + 'a {
        self.store.last_reserved().iter().map(|(i, ip)| (*i, *ip))
    }

    /// Number of `last_reserved_ip.N` files.
    pub fn cursor_count(&self) -> usize {
        self.store.last_reserved().len()
    }

    /// The content of `last_reserved_ip.N`, if the file exists.
    pub fn cursor(&self, n: usize) -> Option<IpAddr> {
        self.store.last_reserved_ip(n)
    }

    /// A copy of every file, to compare with the directory later.
    pub fn files(&self) -> IpamFiles {
        IpamFiles {
            leases: self.leases_from(0).map(|r| (r.ip, r)).collect(),
            cursors: self.cursors().collect(),
        }
    }
}

/// A copy of one network's host-local directory: what a view keeps from before a command
/// to tell which files the command wrote or removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpamFiles {
    /// Lease files by IP.
    pub leases: BTreeMap<IpAddr, LeaseRow>,
    /// `last_reserved_ip.N` contents by N.
    pub cursors: BTreeMap<usize, IpAddr>,
}

/// A node's host-local directories by store key (the network name, or the data directory
/// of a custom one); `None` for an unknown node.
pub fn ipam_dirs<'a>(lab: &'a Lab, node: &str) -> Option<BTreeMap<&'a str, IpamDir<'a>>> {
    let rt = lab.nodes.get(node)?;
    Some(
        rt.host
            .ipam
            .iter()
            .map(|(k, store)| (k.as_str(), IpamDir { store }))
            .collect(),
    )
}

/// How many virtual functions the node's SR-IOV PF `pf` has (`None`: no such node; `Some(0)`:
/// no such PF, or one without VFs).
pub fn sriov_vf_count(lab: &Lab, node: &str, pf: &str) -> Option<usize> {
    let rt = lab.nodes.get(node)?;
    Some(rt.host.vfs.values().filter(|v| v.pf == pf).count())
}

/// One host-local directory of a node by store key, if it exists.
pub fn ipam_dir<'a>(lab: &'a Lab, node: &str, net: &str) -> Option<IpamDir<'a>> {
    let store = lab.nodes.get(node)?.host.ipam.get(net)?;
    Some(IpamDir { store })
}

/// A copy of every host-local directory of a node by store key; `None` for an unknown
/// node.
pub fn ipam_files(lab: &Lab, node: &str) -> Option<BTreeMap<String, IpamFiles>> {
    let dirs = ipam_dirs(lab, node)?;
    Some(
        dirs.into_iter()
            .map(|(k, d)| (k.to_string(), d.files()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_shows_in_links_sandboxes_routes_and_leases() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        let kinds: Vec<LinkType> = host_links(&lab, "node-1").map(|l| l.kind).collect();
        assert!(kinds.contains(&LinkType::Physical));
        assert!(kinds.contains(&LinkType::Bridge));
        assert!(kinds.contains(&LinkType::Veth));
        let sb = sandbox(&lab, "node-1", "default/web").unwrap();
        assert_eq!(sandboxes(&lab, "node-1"), vec![sb.clone()]);
        assert_eq!(
            sandbox_owner(&lab, "node-1", &sb.id).as_deref(),
            Some("default/web")
        );
        assert!(netns_links(&lab, "node-1", &sb.netns).any(|l| l.name == "eth0"));
        assert!(!netns_routes(&lab, "node-1", &sb.netns).v4.is_empty());
        let files = ipam_files(&lab, "node-1").unwrap();
        let (net, f) = files.iter().next().unwrap();
        let lease = f.leases.values().next().unwrap();
        assert_eq!(lease.container_id, sb.id);
        let dir = ipam_dir(&lab, "node-1", net).unwrap();
        assert!(dir.holds(lease));
        assert_eq!((dir.len(), dir.cursor_count()), (1, 1));
        assert!(ipam_files(&lab, "nope").is_none());
    }

    /// The holder of each kind of lease: a pod, a raw `cni add`, a pod torn down through
    /// another network's chain (after `network use calico-bgp` the DEL runs Calico's chain
    /// and never reaches lab-net's host-local), and an ADD that never finished (nothing cached).
    #[test]
    fn a_lease_is_held_by_a_pod_an_attachment_or_nothing() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("cni add raw1 --node node-1").unwrap();
        let web = sandbox(&lab, "node-1", "default/web").unwrap().id;
        assert_eq!(
            lease_holder(&lab, "node-1", &web, "eth0"),
            Some(LeaseHolder::Pod("default/web".to_string()))
        );
        assert_eq!(
            lease_holder(&lab, "node-1", "raw1", "eth0"),
            Some(LeaseHolder::Attachment)
        );
        lab.execute("network use calico-bgp").unwrap();
        lab.execute("pod delete web").unwrap();
        let h = lease_holder(&lab, "node-1", &web, "eth0").unwrap();
        assert_eq!(
            h,
            LeaseHolder::OtherChain {
                active: "10-calico.conflist".into()
            }
        );
        assert!(h.leaked());
        assert_eq!(
            lease_holder(&lab, "node-1", "never-added", "eth0"),
            Some(LeaseHolder::Leaked)
        );
        assert_eq!(lease_holder(&lab, "nope", &web, "eth0"), None);
    }
}
