//! The `calico` CNI plugin and `calico-ipam` (one binary installed under both names, as
//! Calico's install-cni copies it; `projectcalico/calico`: `cni-plugin/pkg/k8s/k8s.go`,
//! `pkg/dataplane/linux/dataplane_linux.go`, `pkg/ipamplugin/ipam_plugin.go`; summarised in
//! `calico-and-cilium.md` §A1–§A3).
//!
//! ADD: calico-ipam hands out an address from the node's block (the delegate prints it with
//! the block's mask); the plugin creates a veth pair, the host end named `cali` + the first
//! 11 hex digits of SHA-1(`<namespace>.<pod>`) with MAC `ee:ee:ee:ee:ee:ee` and proxy ARP on,
//! the pod end `eth0` holding the address as a /32 with `default via 169.254.1.1` (an
//! address nothing holds: the host end answers ARP for it) and adds the host route
//! `<ip> dev cali… scope link`. DEL releases the handle, then removes the veth and route.
//!
//! Both reach the cluster's datastore through the kubeconfig calico-node's installer wrote
//! on the node ([`Host::datastore`]); without it they fail as the real binary does without
//! its kubeconfig. Not modelled: the WorkloadEndpoint object and the pod annotations
//! (`cni.projectcalico.org/podIP`…), which the plugin writes through the API; Felix derives
//! the endpoints from the pods instead.

use crate::cni::host::{Host, Link, LinkKind, Mac, RouteDst, RouteEntry};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Interface, IpConfig};
use crate::util::hash;
use ipnet::IpNet;
use sha1::{Digest, Sha1};
use std::sync::Arc;

/// The `calico` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Calico;

/// The `calico-ipam` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CalicoIpam;

/// Where the kubeconfig calico-node's installer writes lives.
pub(crate) const KUBECONFIG: &str = "/etc/cni/net.d/calico-kubeconfig";
/// Where Felix writes the MTU the plugin uses when the conflist says `"mtu": 0`.
pub(crate) const MTU_FILE: &str = "/var/lib/calico/mtu";
/// The MAC of every host-side `cali…` veth.
pub(crate) const HOST_VETH_MAC: Mac = Mac([0xee; 6]);
/// The pod's gateway: an address no one holds; the host veth answers ARP for it.
pub(crate) const POD_GATEWAY: std::net::Ipv4Addr = std::net::Ipv4Addr::new(169, 254, 1, 1);

/// `cali` + the first 11 hex digits of SHA-1(`<namespace>.<pod>`)
/// (`libcalico-go/lib/backend/k8s/conversion/workload_endpoint_default.go`
/// VethNameForWorkload): `default.nginx` → `calic440f455693`.
pub(crate) fn host_veth_name(namespace: &str, pod: &str) -> String {
    let digest = Sha1::digest(format!("{namespace}.{pod}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("cali{}", &hex[..11])
}

/// `K8S_POD_NAMESPACE` and `K8S_POD_NAME` from `CNI_ARGS`.
fn pod_of(env: &CniEnv) -> Result<(String, String), CniError> {
    let args = super::common::load_args(
        &env.args,
        &[
            "K8S_POD_NAMESPACE",
            "K8S_POD_NAME",
            "K8S_POD_INFRA_CONTAINER_ID",
            "K8S_POD_UID",
        ],
    )
    .map_err(CniError::internal)?;
    let get = |k: &str| {
        args.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Ok((get("K8S_POD_NAMESPACE"), get("K8S_POD_NAME")))
}

/// The datastore the kubeconfig points at, or the error the binary prints without one.
fn datastore(host: &Host) -> Result<crate::cni::datastore::Datastore, CniError> {
    host.datastore
        .clone()
        .ok_or_else(|| CniError::internal(format!("stat {KUBECONFIG}: no such file or directory")))
}

/// The node name the conflist was rendered with (`nodename`), else the host's.
fn node_name(host: &Host, stdin: &Stdin) -> String {
    match stdin.str_field("nodename") {
        "" => host.node.clone(),
        n => n.to_string(),
    }
}

/// The conflist's `ipam.type` (calico-ipam unless it says otherwise).
fn ipam_type(stdin: &Stdin) -> String {
    stdin
        .conf
        .get("ipam")
        .and_then(|i| i.get("type"))
        .and_then(|t| t.as_str())
        .unwrap_or("calico-ipam")
        .to_string()
}

/// The IPAM handle of a container: `<network name>.<containerID>`.
fn handle(stdin: &Stdin, env: &CniEnv) -> String {
    format!("{}.{}", stdin.network_name(), env.container_id)
}

impl Calico {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        datastore(ctx.host)?;
        let (ns, pod) = pod_of(env)?;
        if pod.is_empty() {
            return Err(CniError::internal(
                "the lab's calico plugin runs as Kubernetes calls it: CNI_ARGS must name K8S_POD_NAMESPACE and K8S_POD_NAME",
            ));
        }
        if !super::common::netns_exists(ctx.host, &env.netns) {
            return Err(super::common::netns_open_error(&env.netns));
        }
        let ipam_type = ipam_type(stdin);
        let ipam = match ctx.delegate(&ipam_type, env, stdin)? {
            PluginOutput::Result(r) => r.as_ref().clone(),
            _ => CniResult::default(),
        };
        let Some(ip) = ipam.ips.first().map(|c| c.address) else {
            let mut del = env.clone();
            del.command = Some(CniCommand::Del);
            let _ = ctx.delegate(&ipam_type, &del, stdin);
            return Err(CniError::internal("IPAM plugin returned missing IP config"));
        };
        let mtu = match stdin.conf.get("mtu").and_then(|m| m.as_u64()) {
            Some(m) if m > 0 => m as u32,
            _ => ctx
                .host
                .files
                .get(MTU_FILE)
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(1500),
        };
        let host_name = host_veth_name(&ns, &pod);
        let cont_mac = Mac(hash::mac_bytes(&[
            &ctx.host.node,
            &env.container_id,
            &env.ifname,
            "container",
        ]));
        let host = &mut *ctx.host;
        // A leftover host veth of an earlier sandbox of the same pod is replaced.
        host.delete_link("", &host_name);
        // calico's `/32` of the pod's address (whatever its family, as the plugin writes it).
        let addr = IpNet::new(ip.addr(), 32).map_err(|e| CniError::internal(e.to_string()))?;
        let Some(netns) = host.netns.path(&env.netns).cloned() else {
            return Err(super::common::netns_open_error(&env.netns));
        };
        let mut cont = Link::new(
            &env.ifname,
            LinkKind::Veth {
                peer: host_name.as_str().into(),
                peer_netns: None,
            },
            cont_mac,
            mtu,
        );
        cont.up = true;
        cont.addrs.push(addr);
        let mut hostl = Link::new(
            &host_name,
            LinkKind::Veth {
                peer: (&*env.ifname).into(),
                peer_netns: Some(netns.clone()),
            },
            HOST_VETH_MAC,
            mtu,
        );
        hostl.up = true;
        let Some(pod_ns) = host.netns.get_mut(&env.netns) else {
            return Err(super::common::netns_open_error(&env.netns));
        };
        pod_ns.links.insert(env.ifname.clone(), cont);
        let mut gw =
            RouteEntry::static_route(RouteDst::Host(POD_GATEWAY.into()), None, &env.ifname);
        gw.scope_link = true;
        pod_ns.routes.retain(|r| r.dev != env.ifname);
        pod_ns.routes.push(RouteEntry::static_route(
            RouteDst::Default { v6: false },
            Some(POD_GATEWAY.into()),
            &env.ifname,
        ));
        pod_ns.routes.push(gw);
        host.root.links.insert(host_name.clone(), hostl);
        for (key, value) in [
            (format!("net.ipv4.conf.{host_name}.proxy_arp"), "1"),
            (format!("net.ipv4.neigh.{host_name}.proxy_delay"), "0"),
            (format!("net.ipv4.conf.{host_name}.forwarding"), "1"),
            (format!("net.ipv4.conf.{host_name}.route_localnet"), "1"),
        ] {
            host.sysctls.insert(key.into(), value.into());
        }
        let mut route = RouteEntry::static_route(RouteDst::Host(ip.addr()), None, &host_name);
        route.scope_link = true;
        host.root.routes.push(route);
        let result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![
                Interface {
                    name: host_name.into(),
                    ..Default::default()
                },
                Interface {
                    name: (&*env.ifname).into(),
                    mac: cont_mac.into(),
                    mtu,
                    sandbox: Some(netns),
                },
            ]
            .into(),
            ips: vec![IpConfig {
                interface: Some(crate::cni::types::IfIndex::new(1)),
                address: addr,
                gateway: None,
            }]
            .into(),
            ..Default::default()
        };
        Ok(PluginOutput::Result(Arc::new(result)))
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        datastore(ctx.host)?;
        let ipam_type = ipam_type(stdin);
        ctx.delegate(&ipam_type, env, stdin)?;
        // CleanUpNamespace: the pod's interface and its veth peer; a missing one is fine.
        ctx.host.delete_link(&env.netns, &env.ifname);
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for Calico {
    fn type_name(&self) -> &'static str {
        "calico"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx, env, stdin),
            CniCommand::Del => self.cmd_del(ctx, env, stdin),
            CniCommand::Check | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

impl Plugin for CalicoIpam {
    fn type_name(&self) -> &'static str {
        "calico-ipam"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => {
                let ds = datastore(ctx.host)?;
                let (ns, pod) = pod_of(env)?;
                let node = node_name(ctx.host, stdin);
                let h = handle(stdin, env);
                let (ip, block) = ds
                    .write(|d| d.auto_assign(&h, &node, &format!("{ns}/{pod}")))
                    .map_err(|e| {
                        CniError::internal(format!("failed to request IPv4 addresses: {e}"))
                    })?;
                Ok(PluginOutput::Result(Arc::new(CniResult {
                    cni_version: stdin.cni_version().into(),
                    ips: vec![IpConfig {
                        interface: None,
                        // An IPv4 block's prefix length is one of an IPv4 address.
                        address: ipnet::Ipv4Net::new_assert(ip, block.prefix_len()).into(),
                        gateway: None,
                    }]
                    .into(),
                    ..Default::default()
                })))
            }
            CniCommand::Del => {
                let ds = datastore(ctx.host)?;
                let h = handle(stdin, env);
                ds.write(|d| d.release_by_handle(&h));
                Ok(PluginOutput::Empty)
            }
            CniCommand::Check | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_veth_name_is_calico_s() {
        // calico-and-cilium.md §A3: computed, `default.nginx` → `calic440f455693`.
        assert_eq!(host_veth_name("default", "nginx"), "calic440f455693");
    }
}
