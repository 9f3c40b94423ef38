//! A hop's printed line, made from its typed facts: [`Hop::line`] and the [`Detail`] a
//! hop carries for it.

use super::*;
use crate::net::calico;

/// What a hop did, with the facts its line names that the [`Hop`]'s other fields do not
/// carry. [`Hop::line`] renders it together with the place, device, entry and verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Detail {
    /// A pod sends: its interface and address (none yet when the destination is unknown).
    Sender { addr: Option<IpAddr> },
    /// A pod that has no address tries to send.
    SenderNoAddress,
    /// A node's host network namespace sends.
    HostSender,
    /// The packet arrives in a pod (or a namespace no pod holds), addressed to `addr`;
    /// `from` when a rewrite on the way changed its source.
    Received {
        addr: IpAddr,
        from: Option<IpAddr>,
        netns: Option<String>,
    },
    /// A pod's own address, looped back inside it.
    LocalLoop { addr: IpAddr },
    /// A routing decision (the route is the hop's entry).
    Routed,
    /// The host side of a pod's veth, answering ARP for the gateway under proxy_arp.
    HostVeth { proxy_arp_for: Option<String> },
    /// A bridge, with its address.
    Bridge { addr: Option<IpAddr> },
    /// Arrival at a node's device (its uplink), addressed to `addr`.
    Arrived { addr: IpAddr },
    /// A VXLAN device wrapping the packet (the neighbour and FDB entries are the entry).
    VxlanOut {
        vni: u32,
        local: String,
        port: u16,
        outer: u32,
        uplink_mtu: u32,
    },
    /// A VXLAN device unwrapping it.
    VxlanIn { src: IpAddr, dst: IpAddr },
    /// Out of a pod's macvlan, ipvlan or VF onto its lower device's wire.
    UnderlayOut {
        link: LinkKind,
        lower: String,
        secondary: bool,
    },
    /// Between two VFs of one PF, by the NIC's embedded switch.
    EmbeddedSwitch,
    /// Between two children of one lower device, inside the node.
    SwitchedInside,
    /// Across the lower device's wire to another node.
    Across,
    /// Into the pod interface holding the destination on the wire.
    UnderlayIn { link: LinkKind, lower: String },
    /// A netfilter rule that matched in a hook (the rule is the entry): a RETURN that
    /// left the packet untouched, a MASQUERADE's source change.
    Rule {
        hook: Hook,
        no_nat: bool,
        masquerade: Option<(IpAddr, IpAddr)>,
    },
    /// A Felix endpoint chain's verdict (the deciding rule is the entry).
    Felix {
        hook: Hook,
        ingress: bool,
        iface: String,
        pod: Option<String>,
    },
    /// A BPF policy-map lookup at an endpoint (the map's answer is the entry).
    BpfPolicy { ingress: bool, pod: String },
    /// bpf_lxc or bpf_host redirecting to a local endpoint.
    BpfRedirect {
        from_host: bool,
        prefix: String,
        identity: Identity,
        endpoint: u16,
        pod: String,
        ifname: String,
    },
    /// bpf_lxc passing a packet the ipcache has no tunnel for to the host stack.
    BpfToHost { prefix: String, identity: Identity },
    /// Encapsulation through `cilium_vxlan`.
    BpfEncap {
        prog: &'static str,
        prefix: String,
        identity: Identity,
        remote: IpAddr,
        local: String,
        port: u16,
        vni: u32,
        outer: u32,
        uplink_mtu: u32,
    },
    /// bpf_overlay decapsulating, the source identity read from the VNI.
    BpfDecap {
        src: IpAddr,
        dst: IpAddr,
        identity: Identity,
        from_host: bool,
    },
}

/// A netfilter hook as a hop names it: `nat PREROUTING`, `filter FORWARD (bridged)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hook {
    pub(super) table: TableKind,
    pub(super) chain: &'static str,
    /// br_netfilter: the frame is bridged, not routed.
    pub(super) bridged: bool,
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.table, self.chain)?;
        if self.bridged {
            f.write_str(" (bridged)")?;
        }
        Ok(())
    }
}

/// A Cilium security identity, with its name when it is a reserved one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    id: u32,
    name: Option<String>,
}

impl Identity {
    pub(super) fn of(bpf: &dyn BpfDatapath, id: u32) -> Self {
        Identity {
            id,
            name: bpf.identity_name(id),
        }
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} ({n})", self.id),
            None => write!(f, "{}", self.id),
        }
    }
}

/// `, fragmented: …` when the outer datagram does not fit the uplink (it has no DF).
fn frag_note(outer: u32, uplink_mtu: u32) -> String {
    if outer > uplink_mtu {
        format!(", fragmented: {outer} > eth0 mtu {uplink_mtu} (the outer packet has no DF)")
    } else {
        String::new()
    }
}

impl Hop {
    /// The hop as the trace prints it: `web eth0 10.244.1.2`, `route on node-1: …`,
    /// `nat POSTROUTING on node-1: -A … (source … → …)`.
    pub fn line(&self) -> String {
        let at = self.at.text();
        let node = self.at.node();
        let dev = self.dev.as_deref().unwrap_or_default();
        let rule = || match &self.entry {
            Some(Entry::Rule { rule, .. }) => rule.as_str(),
            _ => "",
        };
        let word = if self.allowed == Some(true) {
            "allowed"
        } else {
            "denied"
        };
        match &self.detail {
            Detail::Sender { addr: Some(a) } => format!("{at} {dev} {a}"),
            Detail::Sender { addr: None } => format!("{at} {dev}"),
            Detail::SenderNoAddress => format!("{at} {dev} (no address)"),
            Detail::HostSender => format!("{at} (host network namespace)"),
            Detail::Received { addr, from, netns } => {
                let who = netns.as_ref().map_or(at, |n| format!("netns {n}"));
                let from = from
                    .map(|f| format!(" (from {f}, as the source was rewritten)"))
                    .unwrap_or_default();
                format!("{who} {dev} {addr}{from}")
            }
            Detail::LocalLoop { addr } => format!(
                "route in {at}: local {addr} dev {dev} table local proto kernel scope host src {addr} (its own address: looped back inside the pod)"
            ),
            Detail::Routed => {
                let route = match &self.entry {
                    Some(Entry::Route(r)) => r.to_ip_route(),
                    _ => String::new(),
                };
                match self.at {
                    Place::Pod { .. } => format!("route in {at}: {route}"),
                    Place::Node(_) => format!("route on {at}: {route}"),
                }
            }
            Detail::HostVeth {
                proxy_arp_for: Some(gw),
            } => format!("{dev} (host side) on {node}, answering ARP for {gw} (proxy_arp)"),
            Detail::HostVeth {
                proxy_arp_for: None,
            } => format!("{dev} (host side) on {node}"),
            Detail::Bridge { addr: Some(a) } => format!("{dev} on {node} ({a})"),
            Detail::Bridge { addr: None } => format!("{dev} on {node}"),
            Detail::Arrived { addr } => format!("{node} {dev} {addr}"),
            Detail::VxlanOut {
                vni,
                local,
                port,
                outer,
                uplink_mtu,
            } => {
                let (next, lladdr, remote) = match &self.entry {
                    Some(Entry::Vxlan {
                        neighbour,
                        lladdr,
                        fdb_dst,
                    }) => (neighbour.to_string(), lladdr.as_str(), fdb_dst.to_string()),
                    _ => Default::default(),
                };
                format!(
                    "{dev} on {node}: VXLAN VNI {vni}, neighbour {next} lladdr {lladdr} → FDB dst {remote}; outer {local} → {remote} UDP dport {port}, {outer} bytes{}",
                    frag_note(*outer, *uplink_mtu)
                )
            }
            Detail::VxlanIn { src, dst } => {
                format!("{dev} on {node}: decapsulated, inner {src} → {dst}")
            }
            Detail::UnderlayOut {
                link,
                lower,
                secondary,
            } => {
                let secondary = if *secondary {
                    "; NetworkPolicy does not apply to a secondary network"
                } else {
                    ""
                };
                format!(
                    "{dev} ({}): onto {node}'s {lower} wire, past {node}'s IP stack and iptables{secondary}",
                    underlay_text(link, lower)
                )
            }
            Detail::EmbeddedSwitch => {
                format!("switched by {dev}'s embedded switch (VEB) on {node}, never on the wire")
            }
            Detail::SwitchedInside => {
                format!("switched inside {node} between the {dev} children, never on the wire")
            }
            Detail::Across => format!("across the {dev} wire to {node}'s {dev}"),
            Detail::UnderlayIn { link, lower } => {
                format!("{dev} ({}) on {node}", underlay_text(link, lower))
            }
            Detail::Rule {
                hook,
                no_nat,
                masquerade,
            } => {
                let no_nat = if *no_nat { " (no NAT)" } else { "" };
                let masq = match masquerade {
                    Some((from, to)) if from == to => {
                        format!(" (the source {to} is already the output's address)")
                    }
                    Some((from, to)) => format!(" (source {from} → {to})"),
                    None => String::new(),
                };
                format!("{hook} on {node}: {}{no_nat}{masq}", rule())
            }
            Detail::Felix {
                hook,
                ingress,
                iface,
                pod,
            } => {
                let dir = if *ingress { "ingress" } else { "egress" };
                let chain = calico::endpoint_chain_name(*ingress, iface);
                let pod = pod.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
                format!(
                    "{dir} policy at {chain}{pod} on {node} ({hook}, Felix): {word} ({})",
                    rule()
                )
            }
            Detail::BpfPolicy { ingress, pod } => {
                let (dir, prog) = if *ingress {
                    ("ingress", "bpf_lxc to-container")
                } else {
                    ("egress", "bpf_lxc from-container")
                };
                let (map, detail) = match &self.entry {
                    Some(Entry::Bpf { map, detail, .. }) => (map.as_str(), detail.as_str()),
                    _ => ("", ""),
                };
                format!(
                    "{dir} policy at {dev} ({pod}) on {node} ({prog}, {map}): {word} ({detail})"
                )
            }
            Detail::BpfRedirect {
                from_host: false,
                prefix,
                identity,
                endpoint,
                pod,
                ifname,
            } => format!(
                "bpf_lxc on {node}: ipcache {prefix} → identity {identity}, local endpoint {endpoint} ({pod}): redirected to {ifname} (no routing, no netfilter)"
            ),
            Detail::BpfRedirect {
                from_host: true,
                prefix,
                identity,
                endpoint,
                pod,
                ifname,
            } => format!(
                "{CILIUM_HOST} on {node} (bpf_host): ipcache {prefix} → identity {identity}, local endpoint {endpoint} ({pod}): redirected to {ifname}"
            ),
            Detail::BpfToHost { prefix, identity } => format!(
                "bpf_lxc on {node}: ipcache {prefix} → identity {identity}, no tunnel endpoint: passed to the host stack"
            ),
            Detail::BpfEncap {
                prog,
                prefix,
                identity,
                remote,
                local,
                port,
                vni,
                outer,
                uplink_mtu,
            } => format!(
                "{CILIUM_VXLAN} on {node} ({prog}): ipcache {prefix} → identity {identity}, tunnel endpoint {remote}; outer {local} → {remote} UDP dport {port}, VNI {vni} (the source's security identity), {outer} bytes{}",
                frag_note(*outer, *uplink_mtu)
            ),
            Detail::BpfDecap {
                src,
                dst,
                identity,
                from_host,
            } => {
                let note = if *from_host {
                    " (reserved:host from the sender is reserved:remote-node here)"
                } else {
                    ""
                };
                format!(
                    "{CILIUM_VXLAN} on {node} (bpf_overlay): decapsulated, inner {src} → {dst}, source identity {identity} from the VNI{note}"
                )
            }
        }
    }
}
