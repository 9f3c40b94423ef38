//! The `cilium-cni` plugin, not chained (`cni-chaining-mode: none`), veth datapath
//! (`cilium/cilium`: `plugins/cilium-cni/cmd/cmd.go`, `pkg/datapath/connector/veth.go`,
//! `pkg/datapath/connector/ipam.go`; summarised in `calico-and-cilium.md` Part B).
//!
//! ADD: the plugin connects to the agent's API socket and reads its configuration (device
//! MTU, route MTU, the node's router IP), asks the agent's IPAM for an address (`POST
//! /ipam`), creates the veth pair (host end `lxc` + the first 12 hex digits of
//! SHA-256(container ID), pod end created as `tmp…` and renamed `eth0`) with the device MTU,
//! puts the address on `eth0` as a /32 and adds the routes `connector.IPv4Routes` gives:
//! `<router IP> dev eth0 scope link` and `default via <router IP> dev eth0 mtu <route MTU>`.
//! It then creates the endpoint (`PUT /endpoint/{id}`); the agent regenerates its policy
//! program (the lab's agent does so on its next pass). No route to the pod is added on the
//! host: with BPF host routing the endpoint is reached by bpf_lxc's lookup, not the FIB
//! (`enable-endpoint-routes` is false by default).
//!
//! The result holds the container-side interface only (index 0), the address with the
//! router IP as gateway, and both routes without their MTU (`newCNIRoute` copies prefix and
//! next hop).
//!
//! DEL releases the address (`DELETE /ipam/{ip}`) and removes the pod's interface. With no
//! agent, DEL still succeeds: the plugin's deletion fallback client queues the request for
//! the agent (`plugins/cilium-cni/lib/deletion_queue.go`), and the interface goes with the
//! netns.
//!
//! Missing agent on ADD: `unable to connect to Cilium agent: failed to create cilium agent
//! client after 30.000000 seconds timeout: Get "http://localhost/v1/config": dial unix
//! /var/run/cilium/cilium.sock: connect: no such file or directory` + `Is the agent
//! running?` (the text as users report it, cilium#40312; `client.Hint` appends the last
//! line; releases before 1.10 said "Cilium daemon").

use crate::cni::host::{Host, Link, LinkKind, Mac, RouteDst, RouteEntry};
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::{CniError, CniResult, Interface, IpConfig, Route};
use crate::util::hash;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The `cilium-cni` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CiliumCni;

/// The error ADD gives when no agent answers on the node.
pub(crate) const NO_AGENT: &str = "unable to connect to Cilium agent: failed to create cilium agent client after 30.000000 seconds timeout: Get \"http://localhost/v1/config\": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory\nIs the agent running?";

/// The host-side device of an endpoint: `lxc` + the first 12 hex digits of
/// SHA-256(container ID) (`pkg/datapath/connector`: 12 = IFNAMSIZ 16 − len("tmp") − 1).
pub(crate) fn lxc_name(container_id: &str) -> String {
    let digest = Sha256::digest(container_id.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("lxc{}", &hex[..12])
}

/// `K8S_POD_NAMESPACE`/`K8S_POD_NAME` from `CNI_ARGS` (empty when absent).
fn pod_of(env: &CniEnv) -> Result<String, CniError> {
    let args = super::common::load_args(
        &env.args,
        &[
            "K8S_POD_NAMESPACE",
            "K8S_POD_NAME",
            "K8S_POD_INFRA_CONTAINER_ID",
            "K8S_POD_UID",
        ],
    )
    .map_err(|e| CniError::internal(format!("unable to extract CNI arguments: {e}")))?;
    let get = |k: &str| {
        args.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Ok(format!(
        "{}/{}",
        get("K8S_POD_NAMESPACE"),
        get("K8S_POD_NAME")
    ))
}

impl CiliumCni {
    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let _pod = pod_of(env)?;
        let Some(agent) = ctx.host.cilium.as_ref() else {
            return Err(CniError::internal(NO_AGENT));
        };
        let (router, device_mtu, route_mtu) = (agent.router_ip, agent.device_mtu, agent.route_mtu);
        if !super::common::netns_exists(ctx.host, &env.netns) {
            return Err(super::common::netns_open_error(&env.netns));
        }
        let host_name = lxc_name(&env.container_id);
        let host: &mut Host = ctx.host;
        // A retried ADD of the same container gets the same address back.
        if let Some(api) = host.cilium.as_mut() {
            api.release_owner(&env.container_id);
        }
        let ip = host
            .cilium
            .as_mut()
            .map(|api| api.allocate_next(&env.container_id))
            .unwrap_or_else(|| Err(NO_AGENT.to_string()))
            .map_err(CniError::internal)?;
        let cont_mac = Mac(hash::mac_bytes(&[
            &host.node,
            &env.container_id,
            &env.ifname,
            "container",
        ]));
        let host_mac = Mac(hash::mac_bytes(&[&host.node, &env.container_id, "lxc"]));
        host.delete_link("", &host_name);
        let addr = ipnet::IpNet::from(std::net::IpAddr::from(ip));
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
            device_mtu,
        );
        cont.up = true;
        cont.addrs.push(addr);
        let mut hostl = Link::new(
            &host_name,
            LinkKind::Veth {
                peer: (&*env.ifname).into(),
                peer_netns: Some(netns.clone()),
            },
            host_mac,
            device_mtu,
        );
        hostl.up = true;
        let Some(pod_ns) = host.netns.get_mut(&env.netns) else {
            return Err(super::common::netns_open_error(&env.netns));
        };
        pod_ns.links.insert(env.ifname.clone(), cont);
        pod_ns.routes.retain(|r| r.dev != env.ifname);
        let mut gw = RouteEntry::static_route(RouteDst::Host(router.into()), None, &env.ifname);
        gw.scope_link = true;
        pod_ns.routes.push(gw);
        let mut default = RouteEntry::static_route(
            RouteDst::Default { v6: false },
            Some(router.into()),
            &env.ifname,
        );
        default.set_mtu(Some(route_mtu));
        pod_ns.routes.push(default);
        host.root.links.insert(host_name.clone(), hostl);
        host.sysctls.insert(
            format!("net.ipv4.conf.{host_name}.rp_filter").into(),
            "0".into(),
        );
        let result = CniResult {
            cni_version: stdin.cni_version().into(),
            interfaces: vec![Interface {
                name: (&*env.ifname).into(),
                mac: cont_mac.into(),
                mtu: 0,
                sandbox: Some(netns),
            }]
            .into(),
            ips: vec![IpConfig {
                interface: Some(crate::cni::types::IfIndex::new(0)),
                address: addr,
                gateway: Some(router.into()),
            }]
            .into(),
            routes: vec![
                Route {
                    dst: Some(ipnet::IpNet::from(std::net::IpAddr::from(router))),
                    gw: None,
                },
                Route {
                    dst: Some(ipnet::IpNet::V4(ipnet::Ipv4Net::default())),
                    gw: Some(router.into()),
                },
            ]
            .into(),
            ..Default::default()
        };
        Ok(PluginOutput::Result(Arc::new(result)))
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv) -> PluginReply {
        let host = &mut *ctx.host;
        if let Some(api) = host.cilium.as_mut() {
            api.release_owner(&env.container_id);
        }
        // The pod's interface takes its lxc peer with it; without one, the lxc of the
        // container ID goes on its own.
        if host.delete_link(&env.netns, &env.ifname).is_none() {
            host.delete_link("", &lxc_name(&env.container_id));
        }
        Ok(PluginOutput::Empty)
    }
}

impl Plugin for CiliumCni {
    fn type_name(&self) -> &'static str {
        "cilium-cni"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx, env, stdin),
            CniCommand::Del => self.cmd_del(ctx, env),
            CniCommand::Check | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}
