//! Cilium's eBPF datapath as the walker meets it ([`Enforcement::Bpf`]): bpf_lxc at each
//! endpoint's device (ipcache, the policy maps, a redirect or the tunnel), bpf_host at
//! `cilium_host`, and bpf_overlay decapsulating on the peer.

use super::line::Identity;
use super::*;
use crate::net::bpf::{BpfEndpoint, PolicyQuery};

impl<'a, 'n> Walker<'a, 'n> {
    /// One policy-map lookup as a hop; the drop when the map denies.
    fn bpf_policy(
        &mut self,
        bpf: &dyn BpfDatapath,
        host: &Host,
        ep: &BpfEndpoint,
        ingress: bool,
        peer: u32,
        pkt: &Pkt,
    ) -> Option<Outcome> {
        let node: &str = &host.node;
        let ifindex = host.root.links.get(&ep.ifname).map_or(0, |l| l.ifindex());
        let q = PolicyQuery {
            node,
            endpoint: ep.id,
            ingress,
            peer,
            src: pkt.src,
            dst: pkt.dst,
            proto: pkt.proto,
            dport: pkt.dport,
            ifindex,
        };
        let Some(v) = bpf.policy(&q) else {
            return Some(self.dropped(format!(
                "{node} has no policy program for endpoint {} ({})",
                ep.id, ep.pod
            )));
        };
        let dir = if ingress { "ingress" } else { "egress" };
        let hop = self.push_policy(
            Place::Node(node.to_string()),
            &ep.ifname,
            Detail::BpfPolicy {
                ingress,
                pod: ep.pod.clone(),
            },
            v.allowed,
        );
        hop.entry = Some(Entry::Bpf {
            map: v.map.clone(),
            detail: v.detail.clone(),
            allowed: v.allowed,
        });
        if v.allowed {
            return None;
        }
        let monitor = v
            .monitor
            .map(|m| format!("; cilium monitor: {m}"))
            .unwrap_or_default();
        Some(self.dropped(format!(
            "bpf_lxc on {node} drops it at {} ({}), {dir}: {}{monitor}",
            ep.ifname, ep.pod, v.detail
        )))
    }

    /// bpf_lxc's from-container program at the source pod's `lxc…` device: ipcache, the
    /// egress map, then a local endpoint, the tunnel, or (no tunnel endpoint: a node's
    /// address, the world) the host stack. `None` when the source is not a Cilium
    /// endpoint (the kernel path goes on) or the packet is handed to the host stack.
    pub(super) fn bpf_from_container(
        &mut self,
        bpf: &'n dyn BpfDatapath,
        host: &'a Host,
        lxc: &str,
        pkt: Pkt,
    ) -> Option<Outcome> {
        let node: &str = &host.node;
        let src_ep = bpf.endpoint(node, pkt.src).filter(|e| e.ifname == lxc)?;
        let hit = bpf.ipcache(node, pkt.dst);
        let (dst_id, tunnel, prefix) = match &hit {
            Some(h) => (h.identity, h.tunnel, h.prefix.clone()),
            None => (2, None, "(none)".to_string()),
        };
        if let Some(o) = self.bpf_policy(bpf, host, &src_ep, false, dst_id, &pkt) {
            return Some(o);
        }
        if let Some(dst_ep) = bpf.endpoint(node, pkt.dst) {
            self.push(
                HopKind::NodeRoute,
                Place::Node(node.to_string()),
                Some(lxc),
                Detail::BpfRedirect {
                    from_host: false,
                    prefix: prefix.clone(),
                    identity: Identity::of(bpf, dst_id),
                    endpoint: dst_ep.id,
                    pod: dst_ep.pod.clone(),
                    ifname: dst_ep.ifname.clone(),
                },
            );
            return Some(self.bpf_to_container(bpf, host, &dst_ep, src_ep.identity, pkt));
        }
        if let Some(remote) = tunnel {
            return Some(self.bpf_tunnel(
                bpf,
                host,
                "bpf_lxc",
                &prefix,
                dst_id,
                src_ep.identity,
                remote,
                pkt,
            ));
        }
        self.push(
            HopKind::NodeRoute,
            Place::Node(node.to_string()),
            Some(lxc),
            Detail::BpfToHost {
                prefix,
                identity: Identity::of(bpf, dst_id),
            },
        );
        None
    }

    /// bpf_host at `cilium_host` for a packet the host sends to a pod: a local endpoint
    /// (its ingress map, the peer being `reserved:host`) or the tunnel.
    pub(super) fn bpf_from_host(
        &mut self,
        bpf: &'n dyn BpfDatapath,
        host: &'a Host,
        pkt: Pkt,
    ) -> Outcome {
        let node: &str = &host.node;
        let src_id = bpf.ipcache(node, pkt.src).map_or(1, |h| h.identity);
        let hit = bpf.ipcache(node, pkt.dst);
        let (dst_id, tunnel, prefix) = match &hit {
            Some(h) => (h.identity, h.tunnel, h.prefix.clone()),
            None => (2, None, "(none)".to_string()),
        };
        if let Some(dst_ep) = bpf.endpoint(node, pkt.dst) {
            self.push(
                HopKind::NodeRoute,
                Place::Node(node.to_string()),
                Some(CILIUM_HOST),
                Detail::BpfRedirect {
                    from_host: true,
                    prefix: prefix.clone(),
                    identity: Identity::of(bpf, dst_id),
                    endpoint: dst_ep.id,
                    pod: dst_ep.pod.clone(),
                    ifname: dst_ep.ifname.clone(),
                },
            );
            return self.bpf_to_container(bpf, host, &dst_ep, src_id, pkt);
        }
        match tunnel {
            Some(remote) => {
                self.bpf_tunnel(bpf, host, "bpf_host", &prefix, dst_id, src_id, remote, pkt)
            }
            None => self.no_route(format!(
                "{node}'s ipcache has no endpoint or tunnel for {}: bpf_host drops it",
                pkt.dst
            )),
        }
    }

    /// bpf_lxc's to-container program: the destination endpoint's ingress map, then the
    /// pod.
    fn bpf_to_container(
        &mut self,
        bpf: &dyn BpfDatapath,
        host: &'a Host,
        ep: &BpfEndpoint,
        peer: u32,
        pkt: Pkt,
    ) -> Outcome {
        if let Some(o) = self.bpf_policy(bpf, host, ep, true, peer, &pkt) {
            return o;
        }
        let pod = self.net.pod_on_node(&host.node, |p| p.key() == ep.pod);
        match pod {
            Some(p) => self.deliver_to_pod(p, &ep.ifname, pkt),
            None => self.no_route(format!("nothing behind {}'s {}", host.node, ep.ifname)),
        }
    }

    /// Encapsulation through `cilium_vxlan` to the ipcache's tunnel endpoint, the underlay,
    /// and the peer's bpf_overlay: decapsulated, the source identity taken from the VNI
    /// (`reserved:host` becomes `reserved:remote-node` on the peer), then the destination
    /// endpoint's ingress map.
    #[allow(clippy::too_many_arguments)]
    fn bpf_tunnel(
        &mut self,
        bpf: &'n dyn BpfDatapath,
        host: &'a Host,
        prog: &'static str,
        prefix: &str,
        dst_id: u32,
        src_id: u32,
        remote: IpAddr,
        pkt: Pkt,
    ) -> Outcome {
        let node: &str = &host.node;
        let Some(dev) = host.root.links.get(CILIUM_VXLAN) else {
            return self.dropped(format!("{node} has no {CILIUM_VXLAN} device"));
        };
        let port = match &dev.kind {
            LinkKind::Vxlan(vxlan) => vxlan.port,
            _ => 8472,
        };
        let local = host
            .root
            .links
            .get("eth0")
            .and_then(|l| l.addrs.first())
            .map(|a| a.addr())
            .map_or_else(|| "0.0.0.0".to_string(), |a| a.to_string());
        let (outer, uplink_mtu) = vxlan_outer(host, &pkt);
        self.outer = local.parse().ok().map(|src| Outer {
            src,
            dst: remote,
            dport: port,
            vni: src_id,
            size: outer,
        });
        self.push(
            HopKind::Tunnel,
            Place::Node(node.to_string()),
            Some(CILIUM_VXLAN),
            Detail::BpfEncap {
                prog,
                prefix: prefix.to_string(),
                identity: Identity::of(bpf, dst_id),
                remote,
                local,
                port,
                vni: src_id,
                outer,
                uplink_mtu,
            },
        );
        let Some(peer) = self.fabric.holder_of(remote) else {
            return self.no_route(format!(
                "nothing on {node}'s eth0 segment answers ARP for the tunnel endpoint {remote}"
            ));
        };
        self.push(
            HopKind::Node,
            Place::Node(peer.node.clone()),
            Some("eth0"),
            Detail::Arrived { addr: remote },
        );
        let decap = peer
            .root
            .links
            .get(CILIUM_VXLAN)
            .filter(|l| matches!(&l.kind, LinkKind::Vxlan(v) if v.port == port));
        if decap.is_none() {
            return self.dropped(format!(
                "{} has no VXLAN device on UDP {port}: the datagram is dropped",
                peer.node
            ));
        }
        // bpf_overlay: a packet from a remote host carries reserved:host; it is the
        // remote-node identity here.
        let from_host = src_id == 1;
        let id = if from_host { 6 } else { src_id };
        self.outer = None;
        self.push(
            HopKind::Tunnel,
            Place::Node(peer.node.clone()),
            Some(CILIUM_VXLAN),
            Detail::BpfDecap {
                src: pkt.src,
                dst: pkt.dst,
                identity: Identity::of(bpf, id),
                from_host,
            },
        );
        if let Some(ep) = bpf.endpoint(&peer.node, pkt.dst) {
            return self.bpf_to_container(bpf, peer, &ep, id, pkt);
        }
        if host_owns(peer, pkt.dst) {
            return Outcome::Delivered(format!("{} (local address {})", peer.node, pkt.dst));
        }
        self.dropped(format!(
            "{} has no endpoint for {}: bpf_overlay drops it",
            peer.node, pkt.dst
        ))
    }
}
