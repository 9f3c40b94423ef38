//! flanneld, as kube-flannel's DaemonSet runs it (`--ip-masq --kube-subnet-mgr`), one per
//! node, with the host-gw or the VXLAN backend (`flannel-io/flannel` v0.28:
//! `pkg/subnet/kube/kube.go`, `pkg/backend/hostgw`, `pkg/backend/vxlan`,
//! `pkg/trafficmngr/iptables`; summarised in `flannel-and-netfilter.md` §1, §3–§5).
//!
//! flanneld allocates nothing: its lease is its Node's `spec.podCIDR`, which must lie in the
//! `Network` of net-conf.json. It learns the peers' leases from their Node objects and
//! programs, for each peer, in this order:
//! - host-gw: `<peer subnet> via <peer public-ip> dev eth0` (refused by the kernel when the
//!   peer is not on the segment: host-gw needs L2 adjacency);
//! - VXLAN: the permanent neighbour `<peer subnet>.0 lladdr <peer VtepMAC>` on flannel.1, the
//!   FDB entry `<VtepMAC> dst <peer public-ip> self permanent`, then the route
//!   `<peer subnet> via <peer subnet>.0 dev flannel.1 onlink`.
//!
//! On its own node it creates flannel.1 (VXLAN: VNI 1, `local` the public IP, `dev eth0`, the
//! kernel's default port 8472, `nolearning`, MTU = eth0's − 50, address `<subnet>.0/32`),
//! writes `/run/flannel/subnet.env` last, and keeps its iptables rules.
//!
//! The lab's flanneld takes the public IP from the Node's InternalIP (flanneld takes the
//! address of the interface with the default route; on the lab's nodes that is eth0 with
//! the InternalIP) and derives the VtepMAC from the node name (flanneld makes a random one
//! once and keeps it in the `backend-data` annotation). It does not write the
//! `flannel.alpha.coreos.com/*` annotations: peers are read from podCIDR and InternalIP.

use crate::cni::host::{
    FdbEntry, Host, Link, LinkKind, Neigh, PeerEntries, PeerEntry, PeerTable, RouteDst, RouteEntry,
    Vxlan,
};
use crate::cni::netfilter::{AddrMatch, RuleSpec, TableKind, XtRule, XtTable};
use crate::net::trace::Enforcement;
use crate::node::NodeRuntimes;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

/// The path of the file flanneld writes for the flannel CNI plugin.
pub(crate) const SUBNET_ENV: &str = "/run/flannel/subnet.env";

/// The VXLAN device's name and VNI (`flannel.<VNI>`, VNI 1 by default).
pub(crate) const VXLAN_DEV: &str = "flannel.1";
/// flannel's default VNI.
pub const VNI: u32 = 1;
/// The kernel's default VXLAN port (flanneld passes port 0, so netlink omits it).
pub(crate) const VXLAN_PORT: u16 = 8472;
/// Outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 bytes.
pub(crate) const VXLAN_OVERHEAD: u32 = 50;

/// A flannel backend (`Backend.Type` in net-conf.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Routes via the peers' addresses on a shared L2 segment.
    HostGw,
    /// A VXLAN overlay through flannel.1.
    Vxlan,
}

impl Backend {
    /// The name net-conf.json uses (`host-gw`, `vxlan`).
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::HostGw => "host-gw",
            Backend::Vxlan => "vxlan",
        }
    }
}

/// The MTU flanneld writes to subnet.env with `backend` for an uplink of `uplink_mtu`.
fn mtu(backend: Backend, uplink_mtu: u32) -> u32 {
    match backend {
        Backend::HostGw => uplink_mtu,
        Backend::Vxlan => uplink_mtu.saturating_sub(VXLAN_OVERHEAD),
    }
}

/// One node's lease as flanneld holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lease {
    /// The node's podCIDR (the lease's subnet).
    subnet: IpNet,
    /// The node's public IP (its InternalIP).
    public_ip: IpAddr,
    /// The VTEP MAC of its flannel.1 (VXLAN; all zeros for host-gw, which has no VTEP).
    vtep_mac: crate::cni::host::Mac,
    /// What every other node programs for this lease.
    entry: Arc<PeerEntry>,
}

/// flanneld's masquerade chain (nat table).
pub(crate) const MASQ_CHAIN: &str = "FLANNEL-POSTRTG";
/// flanneld's forward chain (filter table).
pub(crate) const FWD_CHAIN: &str = "FLANNEL-FWD";
/// The comment on flanneld's masquerade rules.
const MASQ_COMMENT: &str = "-m comment --comment \"flanneld masq\"";
/// The comment on flanneld's forward rules.
const FWD_COMMENT: &str = "-m comment --comment \"flanneld forward\"";

/// Where a FLANNEL-POSTRTG rule names the node's own lease (its subnet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeaseAt {
    /// Nowhere: the rule is the same on every node.
    Nowhere,
    /// `-s <lease>`.
    Source,
    /// `-d <lease>`.
    Destination,
}

/// FLANNEL-POSTRTG's rules in order (`pkg/trafficmngr/iptables/iptables.go` MasqRules,
/// v0.22–v0.28), for the Network `net` and the lease `sub`, with where the lease appears:
/// skip kube-proxy's masquerade mark, no NAT between pods or from outside to local pods,
/// masquerade the cluster's traffic leaving it (not multicast) and the host's traffic
/// into it.
fn masq_rules(net: IpNet, sub: &dyn std::fmt::Display) -> [(String, LeaseAt); 6] {
    const C: &str = MASQ_COMMENT;
    [
        (
            format!("-m mark --mark 0x4000/0x4000 {C} -j RETURN"),
            LeaseAt::Nowhere,
        ),
        (format!("-s {sub} -d {net} {C} -j RETURN"), LeaseAt::Source),
        (
            format!("-s {net} -d {sub} {C} -j RETURN"),
            LeaseAt::Destination,
        ),
        (
            format!("! -s {net} -d {sub} {C} -j RETURN"),
            LeaseAt::Destination,
        ),
        (
            format!("-s {net} ! -d 224.0.0.0/4 {C} -j MASQUERADE --random-fully"),
            LeaseAt::Nowhere,
        ),
        (
            format!("! -s {net} -d {net} {C} -j MASQUERADE --random-fully"),
            LeaseAt::Nowhere,
        ),
    ]
}

/// One FLANNEL-POSTRTG rule as [`Rules`] keeps it.
#[derive(Debug, Clone)]
enum MasqRule {
    /// The same on every node.
    Fixed(XtRule),
    /// Names the lease: the text around it, and the rule parsed with the Network standing
    /// in for the lease.
    Lease {
        before: String,
        after: String,
        at: LeaseAt,
        parsed: Box<RuleSpec>,
    },
}

/// flanneld's iptables rules for one Network, parsed once: every node writes the same
/// rules but for the lease in three of FLANNEL-POSTRTG's, and parsing rule text was most
/// of what programming a node cost. A node's copy of a rule naming the lease takes the
/// one parse with its own subnet put in the `-s`/`-d` it names ([`XtRule::with_spec`]
/// checks, in debug builds, that this is what parsing the node's text gives).
#[derive(Debug, Clone)]
struct Rules {
    /// The Network these are for.
    network: IpNet,
    /// `-A POSTROUTING … -j FLANNEL-POSTRTG`.
    masq_jump: XtRule,
    /// FLANNEL-POSTRTG's rules in order.
    masq: Vec<MasqRule>,
    /// What making FLANNEL-POSTRTG and its jump does to an empty nat table (every node's,
    /// until something else writes it), before the chain's rules go in: one table, which
    /// each such node shares until it fills the chain with its own lease's rules.
    masq_table: XtTable,
    /// `-A FORWARD … -j FLANNEL-FWD`.
    fwd_jump: XtRule,
    /// FLANNEL-FWD's rules.
    fwd: Vec<XtRule>,
    /// What writing FLANNEL-FWD does to an empty filter table (every node's, until
    /// something else writes it): one table, which the nodes whose filter table was empty
    /// share until one of them is written again (the chains are copy-on-write).
    fwd_table: XtTable,
}

impl Rules {
    fn new(net: IpNet) -> Rules {
        const MARK: &str = "<lease>";
        let parsed = masq_rules(net, &net);
        let masq = masq_rules(net, &MARK)
            .into_iter()
            .zip(parsed)
            .map(|((text, at), (stand_in, _))| match text.split_once(MARK) {
                Some((before, after)) if at != LeaseAt::Nowhere => MasqRule::Lease {
                    before: before.to_string(),
                    after: after.to_string(),
                    at,
                    parsed: Box::new(RuleSpec::parse(&stand_in)),
                },
                _ => MasqRule::Fixed(XtRule::new(text)),
            })
            .collect();
        let fwd_jump = XtRule::new(format!("{FWD_COMMENT} -j {FWD_CHAIN}"));
        let fwd = vec![
            XtRule::new(format!("-s {net} {FWD_COMMENT} -j ACCEPT")),
            XtRule::new(format!("-d {net} {FWD_COMMENT} -j ACCEPT")),
        ];
        let mut fwd_table = XtTable::new(TableKind::Filter);
        write_forward_rules(&mut fwd_table, &fwd_jump, &fwd);
        let masq_jump = XtRule::new(format!("{MASQ_COMMENT} -j {MASQ_CHAIN}"));
        let mut masq_table = XtTable::new(TableKind::Nat);
        prepare_masq_chain(&mut masq_table, &masq_jump);
        Rules {
            network: net,
            masq_jump,
            masq,
            masq_table,
            fwd_jump,
            fwd,
            fwd_table,
        }
    }

    /// FLANNEL-POSTRTG's rules for the lease `sub` (truncated to its network, as iptables
    /// stores an address).
    fn masq(&self, sub: IpNet) -> impl ExactSizeIterator<Item = XtRule> + '_ {
        // Each rule's text is written into one buffer (long enough for an IPv4 lease's
        // rules) and copied once into the rule.
        let mut text = String::with_capacity(128);
        self.masq.iter().map(move |rule| match rule {
            MasqRule::Fixed(r) => r.clone(),
            MasqRule::Lease {
                before,
                after,
                at,
                parsed,
            } => {
                let mut spec = RuleSpec::clone(parsed);
                let slot = if *at == LeaseAt::Source {
                    &mut spec.src
                } else {
                    &mut spec.dst
                };
                *slot = Some(AddrMatch {
                    net: sub,
                    negated: false,
                });
                text.clear();
                text.push_str(before);
                crate::util::addr::push_net(&mut text, sub);
                text.push_str(after);
                XtRule::with_spec(&text, spec)
            }
        })
    }
}

/// FLANNEL-POSTRTG made again in `nat`, empty, and `jump` to it from POSTROUTING, as
/// flanneld does before it appends the chain's rules (`iptables -X`, `-N`, the jump
/// appended unless present).
fn prepare_masq_chain(nat: &mut XtTable, jump: &XtRule) {
    nat.delete_chain(MASQ_CHAIN);
    nat.ensure_fixed_chain(MASQ_CHAIN);
    nat.append_rules_unique("POSTROUTING", [jump.clone()]);
}

/// FLANNEL-FWD with the rules `fwd`, and `jump` to it from FORWARD, written into `filter`
/// as flanneld does: the chain deleted and made again (`iptables -X`, `-N`), the jump
/// appended unless present, the rules appended.
fn write_forward_rules(filter: &mut XtTable, jump: &XtRule, fwd: &[XtRule]) {
    filter.delete_chain(FWD_CHAIN);
    filter.ensure_fixed_chain(FWD_CHAIN);
    filter.append_rules_unique("FORWARD", [jump.clone()]);
    filter.fill_fixed_chain(FWD_CHAIN, fwd.iter().cloned());
}

/// The cached [`Rules`]: derived from the Network alone, so it takes no part in comparing
/// two [`Flannel`]s (one that has programmed a node holds it, a fresh one does not).
#[derive(Debug, Clone, Default)]
struct RuleCache(Option<Rules>);

impl PartialEq for RuleCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RuleCache {}

/// A node as flanneld's informer sees it: name, `spec.podCIDR`, InternalIP.
#[derive(Debug, Clone, Copy)]
pub struct NodeLease<'a> {
    /// The node's name.
    pub name: &'a str,
    /// `spec.podCIDR` ("" when unassigned).
    pub pod_cidr: &'a str,
    /// `status.addresses[InternalIP]`.
    pub internal_ip: Option<&'a str>,
}

/// flannel on every node: the configuration kube-flannel's ConfigMap and DaemonSet give
/// flanneld, and what each node's flanneld holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flannel {
    /// `Backend.Type`.
    pub backend: Backend,
    /// `Network` in net-conf.json (the cluster CIDR).
    pub network: IpNet,
    /// flanneld's `--ip-masq` (kube-flannel's manifest passes it): flanneld masquerades
    /// traffic leaving the cluster, and the plugin's bridge delegate gets `ipMasq: false`.
    pub ip_masq: bool,
    /// The lease each node's flanneld holds, by node.
    leases: BTreeMap<String, Lease>,
    /// Why a node's flanneld holds no lease (its log line), by node.
    problems: BTreeMap<String, String>,
    /// The peer entries every node with a lease programs, one table all their hosts share
    /// (see [`PeerTable`]).
    shared: PeerTable,
    /// flanneld's iptables rules for `network`, parsed once (see [`Rules`]).
    rules: RuleCache,
}

impl Default for Flannel {
    fn default() -> Self {
        Flannel::new(Backend::HostGw)
    }
}

impl Flannel {
    /// flannel with a backend, Network 10.244.0.0/16 and `--ip-masq`, as kube-flannel.yml.
    pub fn new(backend: Backend) -> Self {
        Flannel {
            backend,
            network: "10.244.0.0/16"
                .parse()
                .unwrap_or(IpNet::V4(Default::default())),
            ip_masq: true,
            leases: BTreeMap::new(),
            problems: BTreeMap::new(),
            shared: PeerTable::default(),
            rules: RuleCache::default(),
        }
    }

    /// The MTU flanneld writes to subnet.env for an uplink of `uplink_mtu`.
    pub fn mtu(&self, uplink_mtu: u32) -> u32 {
        mtu(self.backend, uplink_mtu)
    }

    /// Why `node`'s flanneld holds no lease, if it does not.
    pub fn problem(&self, node: &str) -> Option<&str> {
        self.problems.get(node).map(String::as_str)
    }

    /// The subnet `node` holds, if any.
    pub(crate) fn lease_of(&self, node: &str) -> Option<IpNet> {
        self.leases.get(node).map(|l| l.subnet)
    }

    /// The lease (or the error) flanneld's AcquireLease gets for a node in the Network
    /// `network`.
    fn acquire(network: IpNet, n: &NodeLease<'_>) -> Result<(IpNet, IpAddr), String> {
        if n.pod_cidr.is_empty() {
            return Err(format!("node \"{}\" pod cidr not assigned", n.name));
        }
        let subnet: IpNet = n
            .pod_cidr
            .parse()
            .map_err(|_| format!("node \"{}\" pod cidr not assigned", n.name))?;
        if !network.contains(&subnet) {
            return Err(format!(
                "subnet \"{}\" specified in the flannel net config doesn't contain \"{}\" PodCIDR of the \"{}\" node",
                network, n.pod_cidr, n.name
            ));
        }
        let ip = n
            .internal_ip
            .and_then(|i| i.parse::<IpAddr>().ok())
            .ok_or_else(|| {
                "Failed to find any valid interface to use: failed to get default interface: Unable to find default route".to_string()
            })?;
        Ok((subnet, ip))
    }

    /// The lease `node`'s flanneld holds for `subnet` and `ip`, with what every peer
    /// programs for it.
    fn lease(backend: Backend, node: &str, subnet: IpNet, ip: IpAddr) -> Lease {
        use crate::util::addr::ip_text;
        // Each text is made once, in the field that keeps it.
        let (vtep_mac, entry) = match backend {
            Backend::HostGw => (
                crate::cni::host::Mac::default(),
                PeerEntry {
                    owner: node.to_string(),
                    route: RouteEntry::static_route(
                        RouteDst::Net(subnet.trunc()),
                        Some(ip),
                        "eth0",
                    ),
                    neigh: None,
                    fdb: None,
                },
            ),
            Backend::Vxlan => {
                let mac = crate::cni::host::Mac(crate::util::hash::mac_bytes(&[node, VXLAN_DEV]));
                let mut route = RouteEntry::static_route(
                    RouteDst::Net(subnet.trunc()),
                    Some(subnet.network()),
                    VXLAN_DEV,
                );
                route.onlink = true;
                let entry = PeerEntry {
                    owner: node.to_string(),
                    route,
                    neigh: Some(Neigh {
                        ip: ip_text(subnet.network()),
                        dev: VXLAN_DEV.to_string(),
                        lladdr: mac.to_string(),
                        state: "PERMANENT".to_string(),
                    }),
                    fdb: Some(FdbEntry {
                        mac: mac.to_string(),
                        dev: VXLAN_DEV.to_string(),
                        dst: Some(ip_text(ip)),
                        flags: "self permanent".to_string(),
                    }),
                };
                (mac, entry)
            }
        };
        Lease {
            subnet,
            public_ip: ip,
            vtep_mac,
            entry: Arc::new(entry),
        }
    }

    /// Every node's flanneld handles Node events: acquire or drop leases, program the nodes
    /// whose own lease changed, and give every node the peers' entries. `full`: `nodes` is
    /// every Node (a resync, which also notices deleted ones); otherwise only the Nodes an
    /// event named. `log(node, line)` records a flanneld error once. True when anything
    /// changed.
    ///
    /// A Node event costs the same whatever the cluster's size: the named node's lease and
    /// its own programming, and one entry put into the peers' table every node shares.
    pub fn reconcile(
        &mut self,
        nodes: &[NodeLease<'_>],
        full: bool,
        hosts: &mut NodeRuntimes,
        log: &mut dyn FnMut(&str, &str),
    ) -> bool {
        if self
            .rules
            .0
            .as_ref()
            .is_none_or(|r| r.network != self.network)
        {
            self.rules = RuleCache(Some(Rules::new(self.network)));
        }
        let mut changed = false;
        // The leases taken, changed or dropped, with the entry each now has (none when
        // dropped): what the peers' entries change by, when no Node was deleted.
        let mut touched: Vec<(&str, Option<Arc<PeerEntry>>)> = Vec::new();
        let mut seen: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
        // Borrowed apart from the leases and problems the loop changes.
        let own = Own {
            backend: self.backend,
            network: self.network,
            ip_masq: self.ip_masq,
            rules: self.rules.0.as_ref(),
        };
        for n in nodes {
            if full {
                seen.insert(n.name);
            }
            let mut host = hosts.get_mut(n.name).map(|rt| &mut rt.host);
            match Flannel::acquire(self.network, n) {
                Ok((subnet, ip)) => {
                    use std::collections::btree_map::Entry;
                    match self.leases.entry(n.name.to_string()) {
                        // The lease flanneld holds already: nothing to program.
                        Entry::Occupied(o)
                            if o.get().subnet == subnet && o.get().public_ip == ip => {}
                        slot => {
                            self.problems.remove(n.name);
                            let lease = Flannel::lease(self.backend, n.name, subnet, ip);
                            let entry = Arc::clone(&lease.entry);
                            let lease = match slot {
                                Entry::Occupied(mut o) => {
                                    o.insert(lease);
                                    o.into_mut()
                                }
                                Entry::Vacant(v) => v.insert(lease),
                            };
                            if let Some(host) = host.as_deref_mut() {
                                own.program(host, lease);
                            }
                            touched.push((n.name, Some(entry)));
                        }
                    }
                }
                Err(e) => {
                    if self.leases.remove(n.name).is_some() {
                        touched.push((n.name, None));
                    }
                    if self.problems.get(n.name) != Some(&e) {
                        log(n.name, &e);
                        self.problems.insert(n.name.to_string(), e);
                        changed = true;
                    }
                }
            }
            // Every node's kernel holds the table, but a node whose flanneld holds no
            // lease: its flanneld has exited and programs nothing. The table is shared, so
            // a lease taken or dropped reaches every node without visiting them; only the
            // nodes this pass names may have started or stopped holding it (a full pass
            // hands it to every host below).
            if let (false, Some(host)) = (full, host) {
                Flannel::hand_table(&self.shared, &self.problems, n.name, host);
            }
        }
        // A deleted Node is a Removed event: its peers delete what they programmed for it.
        // (Only a full pass knows every Node; an event names one.)
        let gone: Vec<String> = if full {
            self.leases
                .keys()
                .filter(|k| !seen.contains(&k.as_str()))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let rebuild = !gone.is_empty();
        for k in gone {
            self.leases.remove(&k);
        }
        if rebuild || !touched.is_empty() {
            let mut table = self.shared.write();
            if rebuild {
                *table.entries_mut() = self.leases.values().map(|l| Arc::clone(&l.entry)).collect();
            } else {
                Flannel::patch_peers(&mut table, touched);
            }
            debug_assert!(
                table
                    .entries()
                    .iter()
                    .map(|p| p.as_ref())
                    .eq(self.leases.values().map(|l| l.entry.as_ref())),
                "the peers' entries are the leases' in node order"
            );
            changed = true;
        }
        if full {
            for (name, rt) in hosts.iter_mut() {
                Flannel::hand_table(&self.shared, &self.problems, name, &mut rt.host);
            }
        }
        debug_assert!(
            hosts
                .iter()
                .all(|(name, rt)| rt.host.peers.is_shared_with(&self.shared)
                    != self.problems.contains_key(name)),
            "every node but those without a lease holds the peers' table"
        );
        changed
    }

    /// Put the entries of the leases `touched` (taken, changed: `Some`; dropped: `None`)
    /// into the peers' table (one per lease in node order): in, replaced or taken out. The
    /// same list as walking every lease again, without walking them; a node named after
    /// every other (a cluster's nodes added in name order) goes on the end without a search.
    fn patch_peers(table: &mut PeerEntries, touched: Vec<(&str, Option<Arc<PeerEntry>>)>) {
        let peers = table.entries_mut();
        for (name, entry) in touched {
            // Leases are keyed by node name, and the entries are in that order.
            let at = match peers.last() {
                Some(last) if last.owner.as_str() < name => Err(peers.len()),
                _ => peers.binary_search_by(|p| p.owner.as_str().cmp(name)),
            };
            match (entry, at) {
                (Some(e), Ok(i)) => peers[i] = e,
                (Some(e), Err(i)) => peers.insert(i, e),
                (None, Ok(i)) => {
                    peers.remove(i);
                }
                (None, Err(_)) => {}
            }
        }
    }

    /// Give `node`'s kernel the peers' table `shared`, or take it away when its flanneld
    /// holds no lease (it has a problem).
    fn hand_table(
        shared: &PeerTable,
        problems: &BTreeMap<String, String>,
        node: &str,
        host: &mut Host,
    ) {
        let holds = !problems.contains_key(node);
        if holds != host.peers.is_shared_with(shared) {
            host.peers = if holds {
                shared.share()
            } else {
                PeerTable::default()
            };
        }
    }
}

/// flanneld's configuration as it programs its own node: borrowed apart from the leases,
/// so a lease can be programmed where it is stored.
struct Own<'a> {
    backend: Backend,
    network: IpNet,
    ip_masq: bool,
    /// The rules for `network` (`None`: not built yet; [`Flannel::reconcile`] builds them
    /// first).
    rules: Option<&'a Rules>,
}

impl Own<'_> {
    /// What flanneld sets up on its own node once it holds its lease: the VXLAN device, then
    /// subnet.env (written last: the plugin waits for it).
    fn program(&self, host: &mut Host, lease: &Lease) {
        let uplink_mtu = host.root.links.get("eth0").map(|l| l.mtu).unwrap_or(1500);
        if self.backend == Backend::Vxlan {
            let mut dev = Link::new(
                VXLAN_DEV,
                LinkKind::Vxlan(Box::new(Vxlan {
                    vni: VNI,
                    local: crate::util::addr::ip_text(lease.public_ip),
                    dev: "eth0".to_string(),
                    port: VXLAN_PORT,
                    learning: false,
                })),
                lease.vtep_mac,
                uplink_mtu.saturating_sub(VXLAN_OVERHEAD),
            );
            dev.up = true;
            dev.addrs = ipnet::IpNet::new(lease.subnet.network(), 32)
                .into_iter()
                .collect();
            host.root.links.insert(VXLAN_DEV, dev);
        } else {
            host.root.links.remove(VXLAN_DEV);
        }
        let fresh;
        let rules = match self.rules {
            Some(r) => r,
            None => {
                fresh = Rules::new(self.network);
                &fresh
            }
        };
        if self.ip_masq {
            self.masquerade_rules(host, rules, lease.subnet);
        }
        self.forward_rules(host, rules);
        let env = self.subnet_env(lease.subnet, uplink_mtu);
        match host.files.get_mut(SUBNET_ENV) {
            Some(file) => *file = env,
            None => {
                host.files.insert(SUBNET_ENV.to_string(), env);
            }
        }
    }

    /// `--ip-masq`: the FLANNEL-POSTRTG chain in nat POSTROUTING
    /// (`pkg/trafficmngr/iptables/iptables.go` MasqRules, v0.22–v0.28): skip kube-proxy's
    /// masquerade mark, no NAT between pods or from outside to local pods, masquerade the
    /// cluster's traffic leaving it (not multicast) and the host's traffic into it. The
    /// rules come parsed from [`Rules`]: the same text on every node is parsed once. A
    /// node whose nat table is still empty starts from the prepared table [`Rules`] keeps,
    /// shared (debug builds check it against preparing the chain in the table).
    fn masquerade_rules(&self, host: &mut Host, rules: &Rules, subnet: IpNet) {
        let nat = &mut host.netfilter.family_mut(self.network.addr().is_ipv6()).nat;
        if nat.is_pristine() {
            debug_assert_eq!(
                rules.masq_table,
                {
                    let mut prepared = nat.clone();
                    prepare_masq_chain(&mut prepared, &rules.masq_jump);
                    prepared
                },
                "the shared table is what preparing the chain in an empty one gives"
            );
            *nat = rules.masq_table.clone();
        } else {
            prepare_masq_chain(nat, &rules.masq_jump);
        }
        nat.fill_fixed_chain(MASQ_CHAIN, rules.masq(subnet.trunc()));
    }

    /// `--iptables-forward-rules` (on by default): FLANNEL-FWD in the filter table's FORWARD
    /// accepts the cluster's traffic both ways (for hosts whose FORWARD policy is DROP).
    /// A node whose filter table is still empty gets the copy of the result [`Rules`]
    /// keeps, shared (debug builds check it against writing the rules into the table).
    fn forward_rules(&self, host: &mut Host, rules: &Rules) {
        let filter = &mut host
            .netfilter
            .family_mut(self.network.addr().is_ipv6())
            .filter;
        if filter.is_pristine() {
            debug_assert_eq!(
                rules.fwd_table,
                {
                    let mut written = filter.clone();
                    write_forward_rules(&mut written, &rules.fwd_jump, &rules.fwd);
                    written
                },
                "the shared table is what writing the rules into an empty one gives"
            );
            *filter = rules.fwd_table.clone();
        } else {
            write_forward_rules(filter, &rules.fwd_jump, &rules.fwd);
        }
    }

    /// The MTU flanneld writes to subnet.env for an uplink of `uplink_mtu`.
    fn mtu(&self, uplink_mtu: u32) -> u32 {
        mtu(self.backend, uplink_mtu)
    }

    /// `/run/flannel/subnet.env` (`pkg/subnet/subnet.go` WriteSubnetFile): FLANNEL_SUBNET is
    /// the lease's network address plus one.
    fn subnet_env(&self, subnet: IpNet, uplink_mtu: u32) -> String {
        let first = match subnet.network() {
            IpAddr::V4(a) => IpAddr::V4(std::net::Ipv4Addr::from(u32::from(a).saturating_add(1))),
            IpAddr::V6(a) => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(a).saturating_add(1))),
        };
        // Written piece by piece (addresses without `core::fmt`): every node writes one.
        let mut env = String::with_capacity(96);
        env.push_str("FLANNEL_NETWORK=");
        crate::util::addr::push_net(&mut env, self.network);
        env.push_str("\nFLANNEL_SUBNET=");
        crate::util::addr::push_ip(&mut env, first);
        env.push('/');
        crate::util::addr::push_u32(&mut env, u32::from(subnet.prefix_len()));
        env.push_str("\nFLANNEL_MTU=");
        crate::util::addr::push_u32(&mut env, self.mtu(uplink_mtu));
        env.push_str(if self.ip_masq {
            "\nFLANNEL_IPMASQ=true\n"
        } else {
            "\nFLANNEL_IPMASQ=false\n"
        });
        debug_assert_eq!(
            env,
            format!(
                "FLANNEL_NETWORK={}\nFLANNEL_SUBNET={first}/{}\nFLANNEL_MTU={}\nFLANNEL_IPMASQ={}\n",
                self.network,
                subnet.prefix_len(),
                self.mtu(uplink_mtu),
                self.ip_masq
            )
        );
        env
    }
}

/// flannel, host-gw backend: routes to each peer's pod subnet via its InternalIP (the
/// default).
pub(crate) const HOST_GW: super::Implementation = super::Implementation {
    name: "flannel-host-gw",
    compare: [
        "none",
        "flanneld: <peer podCIDR> via <peer InternalIP> dev eth0 (one L2 segment)",
        "1500",
        "host-local on the node's podCIDR (the lab's conflist)",
        "flanneld --ip-masq: FLANNEL-POSTRTG in nat POSTROUTING",
        "not enforced: stored by the API server, ignored by the nodes",
        "show routes, show iptables",
    ],
    build: |cidr| Ok(Box::new(Flannel::with(Backend::HostGw, cidr))),
};

/// flannel, VXLAN backend: flannel.1 (VNI 1, UDP 8472, MTU 1450) tunnels to each peer.
pub(crate) const VXLAN: super::Implementation = super::Implementation {
    name: "flannel-vxlan",
    compare: [
        "VXLAN: flannel.1, VNI 1, UDP 8472",
        "flanneld: <peer podCIDR> via <peer>.0 dev flannel.1 onlink, a neighbour and an FDB entry per peer",
        "1450 on flannel.1 (FLANNEL_MTU); the lab's conflist leaves pods at 1500",
        "host-local on the node's podCIDR (the lab's conflist)",
        "flanneld --ip-masq: FLANNEL-POSTRTG in nat POSTROUTING",
        "not enforced: stored by the API server, ignored by the nodes",
        "show links, show neigh, show fdb",
    ],
    build: |cidr| Ok(Box::new(Flannel::with(Backend::Vxlan, cidr))),
};

impl Flannel {
    /// flannel with a backend on the Network `network`, as `network use` configures it.
    fn with(backend: Backend, network: IpNet) -> Self {
        Flannel {
            network,
            ..Flannel::new(backend)
        }
    }

    /// Every node's flanneld handles a Node event (`Some(node)`: that Node was added or
    /// changed) or lists every Node (`None`), as its informer delivers them: the Nodes'
    /// podCIDR and InternalIP are all it reads. A flanneld error goes to the call log once.
    fn watch(&mut self, cx: &mut super::Ctx<'_>, node: Option<&str>) {
        fn lease(n: &crate::cluster::Object<crate::cluster::NodeSpec>) -> NodeLease<'_> {
            NodeLease {
                name: n.name(),
                pod_cidr: &n.spec.pod_cidr,
                internal_ip: n.status.internal_ip(),
            }
        }
        // An event names one Node: look it up (Nodes are keyed by name) rather than walk
        // them all, which made each `node add` cost O(nodes).
        let nodes: Vec<NodeLease<'_>> = match node {
            Some(name) => {
                let node = cx.api.nodes.get_named("", name);
                node.map(lease).into_iter().collect()
            }
            None => cx.api.nodes.values().map(lease).collect(),
        };
        let (calls, clock) = (&mut *cx.calls, cx.clock);
        self.reconcile(&nodes, node.is_none(), cx.nodes, &mut |node, line| {
            calls.push(crate::record::CallEvent::step(
                clock,
                crate::record::Actor::on(crate::record::Agent::Flanneld, node),
                "error",
                line.to_string().into(),
                crate::record::Level::Warning,
            ));
        });
    }
}

impl super::Network for Flannel {
    fn name(&self) -> &'static str {
        match self.backend {
            Backend::HostGw => HOST_GW.name,
            Backend::Vxlan => VXLAN.name,
        }
    }

    fn cluster_cidr(&self) -> IpNet {
        self.network
    }

    fn enforcement(&self) -> Enforcement {
        Enforcement::None
    }

    fn start(&mut self, cx: &mut super::Ctx<'_>) {
        self.watch(cx, None);
    }

    fn node_added(&mut self, cx: &mut super::Ctx<'_>, node: &str) {
        self.watch(cx, Some(node));
    }

    /// flanneld watches Nodes alone: their events reach it (`node_added`), and nothing else
    /// it acts on changes with a command.
    fn sync(&mut self, _cx: &mut super::Ctx<'_>) {}

    fn stop(&mut self, nodes: &mut NodeRuntimes) {
        for rt in nodes.values_mut() {
            rt.host.netfilter.ip4.nat.delete_chain(MASQ_CHAIN);
            rt.host.netfilter.ip4.filter.delete_chain(FWD_CHAIN);
            rt.host.root.links.remove(VXLAN_DEV);
            rt.host.files.remove(SUBNET_ENV);
            rt.host.peers = PeerTable::default();
        }
    }

    fn started(&self) -> &'static str {
        "flanneld restarted on every node with the new backend; pods keep the network they were created with"
    }

    fn routing(&self) -> &'static str {
        match self.backend {
            Backend::HostGw => "flannel routes by static routes via the peers' addresses",
            Backend::Vxlan => "flannel routes by VXLAN tunnels",
        }
    }

    fn card(&self, view: &super::View<'_>) -> super::Card {
        let uplink = 1500;
        let mut rows: Vec<(&'static str, String)> = vec![
            (
                "backend",
                match self.backend {
                    Backend::HostGw => "host-gw: every node routes each peer's pod subnet via the peer's InternalIP (the nodes must share one L2 segment)".to_string(),
                    Backend::Vxlan => "vxlan: flannel.1 (VNI 1, local = InternalIP, dev eth0, UDP 8472, nolearning); per peer a permanent neighbour, an FDB entry and an onlink route".to_string(),
                },
            ),
            (
                "encapsulation",
                match self.backend {
                    Backend::HostGw => "none: pod packets cross the underlay as they are".to_string(),
                    Backend::Vxlan => "VXLAN in UDP: 50 bytes of outer IPv4, UDP, VXLAN and inner Ethernet headers".to_string(),
                },
            ),
            (
                "MTU",
                format!(
                    "{} (FLANNEL_MTU in /run/flannel/subnet.env; eth0 is {uplink}){}",
                    self.mtu(uplink),
                    if self.backend == Backend::Vxlan {
                        "; the lab's conflist sets no mtu, so pods get 1500: larger packets with DF do not fit flannel.1"
                    } else {
                        ""
                    }
                ),
            ),
            (
                "masquerade",
                format!(
                    "flanneld (--ip-masq: FLANNEL-POSTRTG in nat POSTROUTING) masquerades traffic leaving {}; pod-to-pod keeps its source. The lab's conflist gives bridge ipMasq false, as flannel's plugin does; a bridge with ipMasq true masquerades traffic to other nodes' pods too",
                    self.network
                ),
            ),
            (
                "NetworkPolicy",
                "not enforced: flannel programs no policy, so the API server stores NetworkPolicies and nothing on the nodes acts on them (Canal pairs flannel with Calico's Felix for that; `network use calico-bgp` enforces them)".to_string(),
            ),
            ("cluster CIDR", format!("{} (net-conf.json Network)", self.network)),
        ];
        let leases: Vec<String> = view
            .api
            .nodes
            .values()
            .map(|n| {
                let name = n.name();
                match (self.lease_of(name), self.problem(name)) {
                    (Some(s), _) => format!("{name} {s}"),
                    (None, Some(p)) => format!("{name} none ({p})"),
                    (None, None) => format!("{name} none"),
                }
            })
            .collect();
        rows.push(("leases", super::per_node(leases)));
        let file = view.nodes.iter().next().and_then(|(name, rt)| {
            let env = rt.host.files.get(SUBNET_ENV)?;
            Some((name.clone(), SUBNET_ENV, env.clone()))
        });
        super::Card {
            deployed: "  flannel v0.28 as kube-flannel.yml deploys it: flanneld --ip-masq --kube-subnet-mgr on every node",
            rows,
            file,
        }
    }

    /// Hand this daemon's (copied) table to the nodes that hold one.
    fn relink(&mut self, nodes: &mut NodeRuntimes) {
        for (name, rt) in nodes.iter_mut() {
            Flannel::hand_table(&self.shared, &self.problems, name, &mut rt.host);
        }
    }

    fn boxed(&self) -> Box<dyn super::Network> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::conf::ConfDir;
    use crate::node::NodeRuntime;

    fn hosts(names: &[(&str, &str)]) -> NodeRuntimes {
        names
            .iter()
            .map(|(n, ip)| {
                let host = Host::new(
                    n,
                    ip,
                    crate::cni::host::Mac(crate::util::hash::mac_bytes(&[n, "eth0"])),
                );
                (
                    n.to_string(),
                    Box::new(NodeRuntime::new(host, ConfDir::default())),
                )
            })
            .collect()
    }

    fn leases<'a>(v: &'a [(&'a str, &'a str, &'a str)]) -> Vec<NodeLease<'a>> {
        v.iter()
            .map(|(name, cidr, ip)| NodeLease {
                name,
                pod_cidr: cidr,
                internal_ip: Some(ip),
            })
            .collect()
    }

    #[test]
    fn host_gw_routes_each_peer_via_its_address_and_skips_its_own() {
        let nodes = [
            ("node-1", "10.244.1.0/24", "192.168.0.1"),
            ("node-2", "10.244.2.0/24", "192.168.0.2"),
            ("node-3", "10.244.3.0/24", "192.168.9.3"),
        ];
        let mut h = hosts(&[
            ("node-1", "192.168.0.1"),
            ("node-2", "192.168.0.2"),
            ("node-3", "192.168.9.3"),
        ]);
        let mut f = Flannel::new(Backend::HostGw);
        assert!(f.reconcile(&leases(&nodes), true, &mut h, &mut |_, _| {}));
        let lines: Vec<String> = h["node-1"]
            .host
            .route_table()
            .iter()
            .map(|r| r.to_ip_route())
            .collect();
        // node-3 is on another segment: the kernel refuses its route.
        assert_eq!(
            lines,
            [
                "default via 192.168.0.254 dev eth0",
                "10.244.2.0/24 via 192.168.0.2 dev eth0",
                "192.168.0.0/24 dev eth0 proto kernel scope link src 192.168.0.1"
            ]
        );
        assert_eq!(
            h["node-2"].host.files[SUBNET_ENV],
            "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.2.1/24\nFLANNEL_MTU=1500\nFLANNEL_IPMASQ=true\n"
        );
        // A second pass with the same nodes changes nothing.
        assert!(!f.reconcile(&leases(&nodes), true, &mut h, &mut |_, _| {}));
    }

    #[test]
    fn vxlan_programs_neighbour_fdb_and_onlink_route_per_peer() {
        let nodes = [
            ("node-1", "10.244.1.0/24", "192.168.0.1"),
            ("node-2", "10.244.2.0/24", "192.168.0.2"),
        ];
        let mut h = hosts(&[("node-1", "192.168.0.1"), ("node-2", "192.168.0.2")]);
        let mut f = Flannel::new(Backend::Vxlan);
        f.reconcile(&leases(&nodes), true, &mut h, &mut |_, _| {});
        let host = &h["node-1"].host;
        let dev = host.root.links.get(VXLAN_DEV).expect("flannel.1");
        assert_eq!(dev.mtu, 1450);
        assert_eq!(
            dev.addrs,
            ["10.244.1.0/32".parse::<ipnet::IpNet>().unwrap()]
        );
        let routes: Vec<String> = host.route_table().iter().map(|r| r.to_ip_route()).collect();
        assert!(routes.contains(&"10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink".to_string()));
        let mac = crate::util::hash::mac(&["node-2", VXLAN_DEV]);
        assert_eq!(
            host.neighbours()[0].to_ip_neigh(),
            format!("10.244.2.0 dev flannel.1 lladdr {mac} PERMANENT")
        );
        assert_eq!(
            host.fdb_entries()[0].to_bridge_fdb(),
            format!("{mac} dev flannel.1 dst 192.168.0.2 self permanent")
        );
        assert!(h["node-2"].host.files[SUBNET_ENV].contains("FLANNEL_MTU=1450\n"));
    }

    #[test]
    fn rules_parsed_once_are_what_each_node_s_text_parses_to() {
        for (net, sub) in [
            ("10.244.0.0/16", "10.244.7.0/24"),
            ("10.244.0.0/14", "10.247.255.0/24"),
            ("fd00:10:244::/56", "fd00:10:244:3::/64"),
        ] {
            let (net, sub): (IpNet, IpNet) = (net.parse().unwrap(), sub.parse().unwrap());
            let got: Vec<XtRule> = Rules::new(net).masq(sub).collect();
            let want = masq_rules(net, &sub);
            assert_eq!(got.len(), want.len());
            for (g, (text, _)) in got.iter().zip(&want) {
                assert_eq!(g.text(), text);
                assert_eq!(*g.spec(), RuleSpec::parse(text));
            }
        }
    }

    #[test]
    fn nodes_added_one_event_at_a_time_are_programmed_as_one_full_pass_programs_them() {
        // Out of name order: node-1's entry goes between the others, node-4's on the end.
        let nodes = [
            ("node-2", "10.244.2.0/24", "192.168.0.2"),
            ("node-3", "10.244.3.0/24", "192.168.0.3"),
            ("node-1", "10.244.1.0/24", "192.168.0.1"),
            ("node-4", "10.244.4.0/24", "192.168.0.4"),
        ];
        let names: Vec<(&str, &str)> = nodes.iter().map(|(n, _, ip)| (*n, *ip)).collect();
        for backend in [Backend::HostGw, Backend::Vxlan] {
            let (mut by_event, mut by_pass) = (BTreeMap::new(), hosts(&names));
            let mut f = Flannel::new(backend);
            // `node add`: the node's host comes up, then every flanneld sees the Node.
            for (one, name) in nodes.chunks(1).zip(&names) {
                by_event.append(&mut hosts(&[*name]));
                assert!(f.reconcile(&leases(one), false, &mut by_event, &mut |_, _| {}));
            }
            Flannel::new(backend).reconcile(&leases(&nodes), true, &mut by_pass, &mut |_, _| {});
            for (name, _) in &names {
                let (a, b) = (&by_event[*name].host, &by_pass[*name].host);
                for v6 in [false, true] {
                    let (ta, tb) = (a.netfilter.family(v6), b.netfilter.family(v6));
                    assert_eq!(ta.nat.to_restore_lines(), tb.nat.to_restore_lines());
                    assert_eq!(ta.filter.to_restore_lines(), tb.filter.to_restore_lines());
                }
                assert_eq!(a.route_table(), b.route_table());
                assert_eq!(a.neighbours(), b.neighbours());
                assert_eq!(a.fdb_entries(), b.fdb_entries());
                assert_eq!(a.files, b.files);
                assert_eq!(a.root.links.get(VXLAN_DEV), b.root.links.get(VXLAN_DEV));
            }
            // Each node routes to the three others, in destination order.
            let dsts: Vec<String> = by_event["node-3"]
                .host
                .route_table()
                .iter()
                .map(|r| r.dst.to_string())
                .filter(|dst| dst.starts_with("10.244."))
                .collect();
            assert_eq!(dsts, ["10.244.1.0/24", "10.244.2.0/24", "10.244.4.0/24"]);
        }
    }

    #[test]
    fn a_lease_as_wide_as_the_network_writes_the_repeated_masquerade_rule_once() {
        // `-s <lease> -d <net>` and `-s <net> -d <lease>` are one rule here: flanneld's
        // AppendUnique (`iptables -C`, then `-A`) writes it once.
        let nodes = [("node-1", "10.244.0.0/16", "192.168.0.1")];
        let mut h = hosts(&[("node-1", "192.168.0.1")]);
        Flannel::default().reconcile(&leases(&nodes), true, &mut h, &mut |_, _| {});
        let rules: Vec<String> = h["node-1"]
            .host
            .netfilter
            .ip4
            .nat
            .to_lines()
            .into_iter()
            .filter(|l| l.starts_with("-A FLANNEL-POSTRTG"))
            .collect();
        assert_eq!(
            rules,
            [
                "-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment \"flanneld masq\" -j RETURN",
                "-A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment \"flanneld masq\" -j RETURN",
                "-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment \"flanneld masq\" -j RETURN",
                "-A FLANNEL-POSTRTG -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment \"flanneld masq\" -j MASQUERADE --random-fully",
                "-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment \"flanneld masq\" -j MASQUERADE --random-fully",
            ]
        );
    }

    #[test]
    fn a_lease_dropped_by_an_event_leaves_every_peer() {
        let mut nodes = vec![
            ("node-1", "10.244.1.0/24", "192.168.0.1"),
            ("node-2", "10.244.2.0/24", "192.168.0.2"),
            ("node-3", "10.244.3.0/24", "192.168.0.3"),
        ];
        let mut h = hosts(&[
            ("node-1", "192.168.0.1"),
            ("node-2", "192.168.0.2"),
            ("node-3", "192.168.0.3"),
        ]);
        let mut f = Flannel::new(Backend::HostGw);
        f.reconcile(&leases(&nodes), true, &mut h, &mut |_, _| {});
        // node-2's podCIDR leaves the Network: an event for node-2 alone.
        nodes[1].1 = "10.9.2.0/24";
        f.reconcile(&leases(&nodes[1..2]), false, &mut h, &mut |_, _| {});
        let owners: Vec<String> = h["node-1"]
            .host
            .peers
            .read()
            .entries()
            .iter()
            .map(|p| p.owner.clone())
            .collect();
        assert_eq!(owners, ["node-1", "node-3"]);
        assert!(h["node-2"].host.peers.read().entries().is_empty());
        // The table is shared: node-3 holds node-1's copy, not one of its own.
        assert!(
            h["node-1"]
                .host
                .peers
                .is_shared_with(&h["node-3"].host.peers)
        );
    }

    #[test]
    fn a_node_outside_the_network_has_no_lease_and_says_why_once() {
        let nodes = [("node-9", "10.9.0.0/24", "192.168.0.9")];
        let mut h = hosts(&[("node-9", "192.168.0.9")]);
        let mut f = Flannel::default();
        let mut logged = Vec::new();
        f.reconcile(&leases(&nodes), true, &mut h, &mut |n, l| {
            logged.push(format!("{n}: {l}"))
        });
        f.reconcile(&leases(&nodes), true, &mut h, &mut |n, l| {
            logged.push(format!("{n}: {l}"))
        });
        assert_eq!(
            logged,
            [
                "node-9: subnet \"10.244.0.0/16\" specified in the flannel net config doesn't contain \"10.9.0.0/24\" PodCIDR of the \"node-9\" node"
            ]
        );
        assert!(!h["node-9"].host.files.contains_key(SUBNET_ENV));
    }
}
