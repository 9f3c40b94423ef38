//! The `host-local` IPAM plugin (`containernetworking/plugins:plugins/ipam/host-local/
//! main.go`), in-process: ADD allocates one IP per range set from the node's data directory,
//! DEL releases them, CHECK looks for a lease. GC and STATUS are not implemented upstream
//! ("FIXME GC"); skel answers success for them, and so does this model.
//!
//! State lives on the node: `Host::ipam[store_key(dataDir, network)]` stands for the
//! directory `<dataDir>/<network>/`. With the default data directory the key is just the
//! network name; with any other `dataDir` it is the joined, cleaned path, so two configs with
//! the same name but different data directories do not share leases — as on disk.
//!
//! Things the lab cannot do like the real binary, by design:
//! - `resolvConf` names a file on the node's disk: the lab's nodes have one,
//!   `/etc/resolv.conf` (their gateway as nameserver); any other path reads as missing and
//!   ADD fails with Go's `open <path>: no such file or directory`.
//! - When several requested IPs fall in one range set, Go picks one in map order (random)
//!   and lists the leftovers in map order; the lab takes them in request order.

pub mod allocator;
pub mod args;
pub mod config;
pub mod range;

use super::memo::DocMemo;
use crate::cni::host::Host;
use crate::cni::ipam_store::IpamStore;
use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
    version_reply,
};
use crate::cni::types::{CniError, CniResult, Dns, IpConfig};
use allocator::IpAllocator;
use config::IpamConfig;
use std::net::IpAddr;
use std::sync::Arc;

/// host-local's default data directory (`disk.defaultDataDir`).
pub(crate) const DEFAULT_DATA_DIR: &str = "/var/lib/cni/networks";

/// The `host-local` plugin binary.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostLocal;

/// The key of a network's store in `Host::ipam`: the network name for the default data
/// directory, otherwise the data directory's full path (`filepath.Join(dataDir, network)`).
pub fn store_key(data_dir: &str, network: &str) -> String {
    if data_dir.is_empty() || data_dir == DEFAULT_DATA_DIR {
        // The default directory, already clean: no path to build.
        return network.to_string();
    }
    let dir = if data_dir.is_empty() {
        DEFAULT_DATA_DIR
    } else {
        data_dir
    };
    if clean_path(dir) == DEFAULT_DATA_DIR {
        network.to_string()
    } else {
        store_path(data_dir, network)
    }
}

/// The directory host-local uses for a network: `filepath.Join(dataDir or default, network)`.
pub(crate) fn store_path(data_dir: &str, network: &str) -> String {
    let dir = if data_dir.is_empty() {
        DEFAULT_DATA_DIR
    } else {
        data_dir
    };
    if network.is_empty() {
        clean_path(dir)
    } else {
        clean_path(&format!("{dir}/{network}"))
    }
}

/// Go's `path.Clean` (`filepath.Clean` on Linux).
pub(crate) fn clean_path(p: &str) -> String {
    if p.is_empty() {
        return ".".to_string();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(last) if *last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

impl Plugin for HostLocal {
    fn type_name(&self) -> &'static str {
        "host-local"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn is_reference_plugin(&self) -> bool {
        true
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => cmd_add(ctx.host, env, stdin),
            CniCommand::Del => cmd_del(ctx.host, env, stdin),
            CniCommand::Check => cmd_check(ctx.host, env, stdin),
            // host-local passes no GC or STATUS func to skel, which then reports success.
            CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => version_reply(ALL_VERSIONS),
        }
    }
}

/// The configuration (shared with the memo) and the requested IPs: `LoadIPAMConfig`'s
/// answer, whose `ip_args` are the second part.
fn load(env: &CniEnv, stdin: &Stdin) -> Result<(Arc<IpamConfig>, Vec<IpAddr>), CniError> {
    thread_local! {
        static DECODED: std::cell::RefCell<DocMemo<config::Prepared>> =
            std::cell::RefCell::new(DocMemo::default());
    }
    // The runtime's document is decoded once; one with runtimeConfig merged in is new on
    // every call. host-local never reads prevResult, so it is left out rather than
    // serialized.
    let prepared = match &stdin.runtime_config {
        None => DECODED.with(|m| m.borrow_mut().get_or(&stdin.conf, config::prepare)),
        Some(_) => Arc::new(config::prepare(&stdin.to_json_without_prev_result())),
    };
    prepared
        .finish_shared(&env.args)
        .map_err(CniError::internal)
}

/// Open (create) the network's directory, as `disk.New` does.
fn open_store<'h>(host: &'h mut Host, conf: &IpamConfig) -> &'h mut IpamStore {
    host.ipam.get_or_insert_with(
        store_key(&conf.data_dir, &conf.name).into(),
        IpamStore::default,
    )
}

/// Release an owner from every range set already allocated (main.go's rollback loop).
fn release_sets(store: &mut IpamStore, conf: &IpamConfig, sets: &[usize], env: &CniEnv) {
    for &idx in sets {
        if let Some(set) = conf.ranges.get(idx) {
            IpAllocator::new(set, store, idx).release(&env.container_id, &env.ifname);
        }
    }
}

/// `cmdAdd`.
fn cmd_add(host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
    let (conf, ip_args) = load(env, stdin)?;
    // parseResolvConf reads the file before the store is touched (main.go, dns.go).
    let dns = if conf.resolv_conf.is_empty() {
        Dns::default()
    } else {
        match host.files.get(&conf.resolv_conf) {
            Some(text) => parse_resolv_conf(text),
            None => {
                return Err(CniError::internal(format!(
                    "open {}: no such file or directory",
                    conf.resolv_conf
                )));
            }
        }
    };
    let store = open_store(host, &conf);

    // Requested IPs, one per distinct text (main.go keeps them in a map keyed by String()).
    let mut requested: Vec<IpAddr> = Vec::with_capacity(ip_args.len());
    for ip in &ip_args {
        if !requested.contains(ip) {
            requested.push(*ip);
        }
    }

    let mut done: Vec<usize> = Vec::with_capacity(conf.ranges.len());
    let mut ips: Vec<IpConfig> = Vec::with_capacity(conf.ranges.len());
    for (idx, set) in conf.ranges.iter().enumerate() {
        let wanted = requested
            .iter()
            .position(|ip| set.contains(*ip))
            .map(|i| requested.remove(i));
        let got = IpAllocator::new(set, store, idx).get(&env.container_id, &env.ifname, wanted);
        match got {
            Ok(a) => {
                done.push(idx);
                ips.push(IpConfig {
                    address: a.address(),
                    gateway: Some(a.gateway),
                    interface: None,
                });
            }
            Err(e) => {
                release_sets(store, &conf, &done, env);
                return Err(CniError::internal(format!(
                    "failed to allocate for range {idx}: {e}"
                )));
            }
        }
    }

    if !requested.is_empty() {
        release_sets(store, &conf, &done, env);
        let mut msg = String::from("failed to allocate all requested IPs:");
        for ip in &requested {
            msg.push(' ');
            msg.push_str(&ip.to_string());
        }
        return Err(CniError::internal(msg));
    }

    Ok(PluginOutput::Result(Arc::new(CniResult {
        cni_version: conf.cni_version.as_str().into(),
        interfaces: Default::default(),
        ips: ips.into(),
        routes: conf.routes.clone().into(),
        dns: dns.boxed_if_set(),
        printed_as_current: false,
    })))
}

/// host-local's `parseResolvConf` (`plugins/ipam/host-local/dns.go`): `nameserver`,
/// `domain`, `search` and `options` lines; comments (`#`, `;`), blank lines and lines of one
/// word are skipped, anything else ignored.
pub(crate) fn parse_resolv_conf(text: &str) -> Dns {
    let mut dns = Dns::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 2 {
            continue;
        }
        let rest = fields[1..].iter().map(|s| s.to_string());
        match fields[0] {
            "nameserver" => dns.nameservers.push(fields[1].to_string()),
            "domain" => dns.domain = fields[1].to_string(),
            "search" => dns.search.extend(rest),
            "options" => dns.options.extend(rest),
            _ => {}
        }
    }
    dns
}

/// `cmdDel`: release per range set; unknown owners are fine.
fn cmd_del(host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
    let (conf, _) = load(env, stdin)?;
    let store = open_store(host, &conf);
    let all: Vec<usize> = (0..conf.ranges.len()).collect();
    release_sets(store, &conf, &all, env);
    Ok(PluginOutput::Empty)
}

/// `cmdCheck`: some file must hold the container's ID (and ifname).
fn cmd_check(host: &mut Host, env: &CniEnv, stdin: &Stdin) -> PluginReply {
    let (conf, _) = load(env, stdin)?;
    let store = open_store(host, &conf);
    if store.find_by_id(&env.container_id, &env.ifname) {
        Ok(PluginOutput::Empty)
    } else {
        Err(CniError::internal(format!(
            "host-local: Failed to find address added by container {}",
            env.container_id
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_keys() {
        assert_eq!(store_key("", "mynet"), "mynet");
        assert_eq!(store_key("/var/lib/cni/networks/", "mynet"), "mynet");
        assert_eq!(store_key("/tmp/x//y/", "mynet"), "/tmp/x/y/mynet");
        assert_eq!(store_key("rel/../d", "n"), "d/n");
        assert_eq!(store_path("", "mynet"), "/var/lib/cni/networks/mynet");
    }
}

#[cfg(test)]
mod resolv_conf_tests {
    use super::parse_resolv_conf;

    /// The file and the `dns` Debian's host-local 1.1.1 printed for it (captured here with
    /// `resolvConf` pointing at it).
    #[test]
    fn resolv_conf_reads_as_the_real_plugin_reads_it() {
        let text = "# comment\nnameserver 192.168.0.254\nnameserver 1.1.1.1\n; semi\nsearch a.lab b.lab\ndomain lab\noptions ndots:5 edns0\nbogus\n";
        let dns = serde_json::to_value(parse_resolv_conf(text)).unwrap();
        assert_eq!(
            dns,
            serde_json::json!({
                "nameservers": ["192.168.0.254", "1.1.1.1"],
                "domain": "lab",
                "search": ["a.lab", "b.lab"],
                "options": ["ndots:5", "edns0"]
            })
        );
    }
}
