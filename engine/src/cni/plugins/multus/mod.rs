//! Multus CNI in thin mode (`multus-cni: pkg/multus/multus.go`): a meta-plugin the runtime
//! calls as the cluster's only network (`00-multus.conf[list]`, see `crate::netd::multus`).
//! It reads the pod through its kubeconfig ([`crate::cni::kube_api::KubeClient`]), turns
//! the pod's `k8s.v1.cni.cncf.io/networks` annotation into delegates (the cluster network
//! first, then one per NetworkAttachmentDefinition), runs each delegate's ADD as libcni does,
//! writes `k8s.v1.cni.cncf.io/network-status`, and returns the cluster network's result.
//!
//! - [`conf`]: Multus's own config (`LoadNetConf`).
//! - [`annotation`]: parsing the networks annotation, both forms, Multus's errors.
//! - [`delegate`]: a delegate, the runtime conf it gets (ifname, CNI_ARGS, capability
//!   args, device IDs), and running it through libcni with Multus's cache.
//! - [`status`]: the network-status annotation, byte for byte.
//!
//! Not modelled: `defaultNetworks`, the `v1.multus-cni.io/default-network` override,
//! `default-route` (accepted, not applied), namespace isolation, the readiness indicator
//! file, thick mode (multus-shim and the daemon).

pub mod annotation;
pub mod conf;
pub mod delegate;
pub mod status;

#[cfg(test)]
mod tests;

use crate::cluster::nad::{
    NETWORK_STATUS_ANNOTATION, NETWORKS_ANNOTATION, RESOURCE_NAME_ANNOTATION,
};
use crate::cni::plugin::{CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin};
use crate::cni::types::{CniError, CniResult, Interface, IpConfig};
use delegate::Delegate;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The `multus` binary.
pub struct Multus;

impl Plugin for Multus {
    fn type_name(&self) -> &'static str {
        "multus"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        crate::cni::plugin::ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let r = match env.cmd() {
            CniCommand::Add => cmd_add(ctx, env, stdin).map(|r| PluginOutput::Result(Arc::new(r))),
            CniCommand::Del => cmd_del(ctx, env, stdin).map(|()| PluginOutput::Empty),
            CniCommand::Check => cmd_check(ctx, env, stdin).map(|()| PluginOutput::Empty),
            CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => {
                return crate::cni::plugin::version_reply(self.supported_versions());
            }
        };
        // Multus's errors are plain Go errors: skel prints them with code 999.
        r.map_err(CniError::internal)
    }
}

/// The pod Multus works for, from CNI_ARGS (`types.K8sArgs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct K8sArgs {
    /// `K8S_POD_NAMESPACE`.
    pub namespace: String,
    /// `K8S_POD_NAME`.
    pub name: String,
    /// `K8S_POD_INFRA_CONTAINER_ID`.
    pub infra_id: String,
    /// `K8S_POD_UID`.
    pub uid: String,
}

impl K8sArgs {
    fn parse(args: &str) -> Result<Self, String> {
        let known = [
            "K8S_POD_NAMESPACE",
            "K8S_POD_NAME",
            "K8S_POD_INFRA_CONTAINER_ID",
            "K8S_POD_UID",
        ];
        let mut k = K8sArgs::default();
        for (key, v) in super::common::load_args(args, &known)? {
            match key.as_str() {
                "K8S_POD_NAMESPACE" => k.namespace = v,
                "K8S_POD_NAME" => k.name = v,
                "K8S_POD_INFRA_CONTAINER_ID" => k.infra_id = v,
                _ => k.uid = v,
            }
        }
        Ok(k)
    }

    /// `cmdErr`'s prefix: `Multus: [<ns>/<pod>/<uid>]: `.
    fn err(&self, msg: impl std::fmt::Display) -> String {
        format!(
            "Multus: [{}/{}/{}]: {msg}",
            self.namespace, self.name, self.uid
        )
    }

    /// `cmdPluginErr`'s prefix: `[<ns>/<pod>/<uid>:<conf name>]: `.
    fn plugin_err(&self, conf: &str, msg: impl std::fmt::Display) -> String {
        format!(
            "[{}/{}/{}:{conf}]: {msg}",
            self.namespace, self.name, self.uid
        )
    }
}

/// Go's name for a JSON value's type in "cannot unmarshal X".
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn load(env: &CniEnv, stdin: &Stdin) -> Result<(conf::NetConf, K8sArgs), String> {
    let n =
        conf::load(&stdin.to_json()).map_err(|e| format!("Multus: error loading netconf: {e}"))?;
    let k8s =
        K8sArgs::parse(&env.args).map_err(|e| format!("Multus: error getting k8s args: {e}"))?;
    Ok((n, k8s))
}

/// The master delegate from `delegates[0]`.
fn master(n: &conf::NetConf) -> Result<Delegate, String> {
    let first = n.delegates.first().cloned().unwrap_or(Value::Null);
    let mut d = delegate::load(&first, None, "", "")
        .map_err(|e| format!("Multus: error loading netconf: {e}"))?;
    d.master_plugin = true;
    Ok(d)
}

/// The prefix of every error found while loading the pod's delegates.
const LOADING: &str = "error loading k8s delegates k8s args";
const GETTING: &str = "TryLoadPodDelegates: error in getting k8s network for pod: GetNetworkDelegates: failed getting the delegate";

/// `GetCNIConfig`: the NAD's `spec.config` with `name` injected when missing or empty
/// (re-marshalled, so compact with sorted keys), or for an empty spec the file in `confDir`
/// whose `name` is the NAD's (`network-attachment-definition-client: pkg/utils/cniconfig.go`).
fn nad_config(
    ctx: &PluginCtx<'_>,
    config: &str,
    nad: &str,
    conf_dir: &str,
) -> Result<Value, String> {
    if config.is_empty() {
        let files: Vec<(&String, &String)> = ctx
            .host
            .files
            .iter()
            .filter(|(p, _)| {
                p.strip_prefix(conf_dir)
                    .and_then(|r| r.strip_prefix('/'))
                    .is_some_and(|f| {
                        !f.contains('/')
                            && (f.ends_with(".conf")
                                || f.ends_with(".json")
                                || f.ends_with(".conflist"))
                    })
            })
            .collect();
        if files.is_empty() {
            return Err(format!(
                "GetCNIConfig: err in GetCNIConfigFromFile: No networks found in {conf_dir}"
            ));
        }
        for (_, text) in files {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                if v.get("name").and_then(Value::as_str) == Some(nad) {
                    return Ok(v);
                }
            }
        }
        return Err(format!(
            "GetCNIConfig: err in GetCNIConfigFromFile: no network available in the name {nad} in cni dir {conf_dir}"
        ));
    }
    let spec_err = |e: String| {
        format!("GetCNIConfig: err in getCNIConfigFromSpec: failed to unmarshal Spec.Config: {e}")
    };
    let mut v: Value = serde_json::from_str(config)
        .map_err(|e| spec_err(crate::cni::go_json::syntax_error(config, &e)))?;
    let Value::Object(m) = &mut v else {
        return Err(spec_err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&v)
        )));
    };
    match m.get("name") {
        None => {
            m.insert("name".into(), Value::String(nad.to_string()));
        }
        Some(Value::String(s)) if s.is_empty() => {
            m.insert("name".into(), Value::String(nad.to_string()));
        }
        _ => {}
    }
    Ok(v)
}

/// The pod's delegates after the cluster network (`TryLoadPodDelegates` → `GetNetworkDelegates`
/// → `getKubernetesDelegate` for each selection), with device IDs handed out from
/// PodResources: per resource, sorted, one each in delegate order.
fn pod_delegates(
    ctx: &mut PluginCtx<'_>,
    n: &conf::NetConf,
    k8s: &K8sArgs,
    annotations: &BTreeMap<String, String>,
    events: bool,
) -> Result<Vec<Delegate>, String> {
    let Some(value) = annotations
        .get(NETWORKS_ANNOTATION)
        .filter(|v| !v.is_empty())
    else {
        return Ok(Vec::new());
    };
    let nets =
        annotation::parse(value, &k8s.namespace).map_err(|e| k8s.err(format!("{LOADING}: {e}")))?;
    let mut resources: Option<BTreeMap<String, (Vec<String>, usize)>> = None;
    let mut out = Vec::new();
    for sel in &nets {
        let kube = ctx.kube.as_deref_mut();
        let Some(nad) = kube
            .as_ref()
            .and_then(|k| k.net_attach_def(&sel.namespace, &sel.name))
        else {
            let msg = format!(
                "cannot find a network-attachment-definition ({}) in namespace ({}): network-attachment-definitions.k8s.cni.cncf.io \"{}\" not found",
                sel.name, sel.namespace, sel.name
            );
            if events {
                if let Some(k) = ctx.kube.as_deref_mut() {
                    k.event(&k8s.namespace, &k8s.name, true, "NoNetworkFound", &msg);
                }
            }
            return Err(k8s.err(format!(
                "{LOADING}: {GETTING}: getKubernetesDelegate: {msg}"
            )));
        };
        let mut device_id = String::new();
        let resource = nad
            .annotations
            .get(RESOURCE_NAME_ANNOTATION)
            .cloned()
            .unwrap_or_default();
        if !resource.is_empty() && !k8s.name.is_empty() && !k8s.namespace.is_empty() {
            let map = resources.get_or_insert_with(|| {
                let mut m: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
                if let Some(k) = ctx.kube.as_deref() {
                    for pd in k.pod_resources(&k8s.namespace, &k8s.name) {
                        m.entry(pd.resource).or_default().0.extend(pd.device_ids);
                    }
                }
                for (ids, _) in m.values_mut() {
                    ids.sort();
                }
                m
            });
            if let Some((ids, next)) = map.get_mut(&resource) {
                if let Some(id) = ids.get(*next) {
                    device_id = id.clone();
                    *next += 1;
                }
            }
        }
        let config = nad_config(ctx, &nad.config, &sel.name, &n.conf_dir)
            .map_err(|e| k8s.err(format!("{LOADING}: {GETTING}: {e}")))?;
        let d = delegate::load(&config, Some(sel), &device_id, &resource)
            .map_err(|e| k8s.err(format!("{LOADING}: {GETTING}: {e}")))?;
        out.push(d);
    }
    Ok(out)
}

/// The placeholder result for a pod the API does not have (`emptyCNIResult`).
fn empty_result(env: &CniEnv, cni_version: &str) -> CniResult {
    CniResult {
        cni_version: cni_version.into(),
        interfaces: vec![Interface {
            name: (&*env.ifname).into(),
            sandbox: (!env.netns.is_empty()).then(|| std::sync::Arc::clone(&env.netns)),
            ..Default::default()
        }]
        .into(),
        ips: vec![IpConfig {
            interface: None,
            address: ipnet::IpNet::V4(ipnet::Ipv4Net::default()),
            gateway: Some(std::net::Ipv4Addr::UNSPECIFIED.into()),
        }]
        .into(),
        ..Default::default()
    }
}

/// Where the sandbox's delegate list is kept for DEL.
fn scratch_path(cni_dir: &str, container_id: &str) -> String {
    format!("{cni_dir}/{container_id}")
}

fn cmd_add(ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> Result<CniResult, String> {
    let (n, k8s) = load(env, stdin)?;
    let mut delegates = vec![master(&n)?];
    // With a kubeconfig and a pod to look up, Multus reads it from the API server.
    let use_kube = !n.kubeconfig.is_empty() && ctx.kube.is_some() && !k8s.name.is_empty();
    let mut pod = None;
    if use_kube {
        let got = ctx
            .kube
            .as_deref()
            .and_then(|k| k.pod(&k8s.namespace, &k8s.name));
        let Some(p) = got else {
            return Ok(empty_result(env, &n.cni_version));
        };
        if !k8s.uid.is_empty() && p.uid != k8s.uid {
            return Err(k8s.err(format!(
                "expected pod UID {:?} but got {:?} from Kube API",
                k8s.uid, p.uid
            )));
        }
        if !n.cluster_network.is_empty() {
            let nad = ctx
                .kube
                .as_deref()
                .and_then(|k| k.net_attach_def(&n.multus_namespace, &n.cluster_network));
            let d = nad
                .and_then(|nad| nad_config(ctx, &nad.config, &n.cluster_network, &n.conf_dir).ok())
                .and_then(|c| delegate::load(&c, None, "", "").ok());
            let Some(mut d) = d else {
                return Err(k8s.err(format!(
                    "failed to get clusterNetwork/defaultNetworks: GetDefaultNetworks: failed to get clusterNetwork {} in namespace {}",
                    n.cluster_network, n.multus_namespace
                )));
            };
            d.master_plugin = true;
            delegates[0] = d;
        }
        delegates.extend(pod_delegates(ctx, &n, &k8s, &p.annotations, true)?);
        pod = Some(p);
    }
    // Cache the list for DEL.
    let saved = serde_json::to_string(&delegates).unwrap_or_default();
    ctx.host
        .files
        .insert(scratch_path(&n.cni_dir, &env.container_id), saved);
    let mut result: Option<CniResult> = None;
    let mut statuses = Vec::new();
    for (idx, d) in delegates.iter().enumerate() {
        let ifname = d.ifname(&env.ifname, idx);
        let (mut rt, info_file) = delegate::runtime_conf(env, &k8s, &ifname, &n.runtime_config, d);
        let net_name = d.net_name().to_string();
        if !info_file.is_empty() && !d.resource_name.is_empty() && !d.device_id.is_empty() {
            // CopyDeviceInfoForCNIFromDP: the device plugin's file, if it wrote one.
            let dp = delegate::dp_device_info_path(&d.resource_name, &d.device_id);
            if let Some(text) = ctx.host.files.get(&dp).cloned() {
                ctx.host.files.insert(info_file.clone(), text);
            }
        }
        let added = delegate_add(ctx, d, &mut rt, &n.cni_dir);
        let r = match added {
            Ok(r) => r,
            Err(e) => {
                // Tear down what was added, the failed one included; errors are ignored.
                let _ = del_plugins(ctx, env, &k8s, &n, &delegates, idx);
                return Err(k8s.plugin_err(
                    &net_name,
                    format!("error adding container to network {net_name:?}: {e}"),
                ));
            }
        };
        if d.master_plugin || result.is_none() {
            result = Some(r.clone());
        }
        if pod.is_some() && (!r.interfaces.is_empty() || !r.ips.is_empty()) {
            let ips: Vec<String> = r.ips.iter().map(|i| i.address.to_string()).collect();
            let msg = if d.name.is_empty() {
                format!("Add {ifname} [{}]", ips.join(" "))
            } else {
                format!("Add {ifname} [{}] from {}", ips.join(" "), d.name)
            };
            if let Some(k) = ctx.kube.as_deref_mut() {
                k.event(&k8s.namespace, &k8s.name, false, "AddedInterface", &msg);
            }
        }
        let devinfo = (!info_file.is_empty())
            .then(|| ctx.host.files.get(&info_file))
            .flatten()
            .and_then(|t| serde_json::from_str::<status::DeviceInfo>(t).ok());
        statuses.extend(status::statuses(
            &r,
            &d.name,
            d.master_plugin,
            devinfo.as_ref(),
        ));
    }
    // One write of every status (`SetNetworkStatus`); the skip compares the pod's *name*
    // with systemNamespaces, as upstream does.
    if pod.is_some() && !n.system_namespaces.contains(&k8s.name) {
        let value = status::annotation(&statuses);
        if let Some(k) = ctx.kube.as_deref_mut() {
            k.annotate_pod(&k8s.namespace, &k8s.name, NETWORK_STATUS_ANNOTATION, &value);
        }
    }
    Ok(result.unwrap_or_default())
}

/// `DelegateAdd`: the interface name must be free in the pod, `mac`/`ips` requests become
/// `MAC=`/`IP=` CNI_ARGS, then libcni runs the delegate.
fn delegate_add(
    ctx: &mut PluginCtx<'_>,
    d: &Delegate,
    rt: &mut delegate::DelegateRt,
    cni_dir: &str,
) -> Result<CniResult, String> {
    let cannot = |e: String| {
        format!(
            "DelegateAdd: cannot set {:?} interface name to {:?}: {e}",
            d.conf_type(),
            rt.ifname
        )
    };
    match ctx.host.netns.get(&rt.netns) {
        None => {
            return Err(cannot(format!(
                "validateIfName: no net namespace {} found: {}",
                rt.netns,
                super::common::statfs_missing(&rt.netns)
            )));
        }
        Some(ns) if ns.links.contains_key(&rt.ifname) => {
            return Err(cannot(format!(
                "validateIfName: interface name {} already exists",
                rt.ifname
            )));
        }
        Some(_) => {}
    }
    if !d.mac_request.is_empty() {
        if annotation::parse_mac(&d.mac_request).is_err() {
            return Err(format!(
                "DelegateAdd: failed to parse mac address {:?}",
                d.mac_request
            ));
        }
        rt.args.push(("MAC".into(), d.mac_request.clone()));
    }
    if !d.ip_request.is_empty() {
        rt.args.push(("IP".into(), d.ip_request.join(",")));
    }
    delegate::add(ctx, d, rt, cni_dir)
}

/// `delPlugins`: DEL from `last` down to 0, collecting every error (`errors: a / b`).
fn del_plugins(
    ctx: &mut PluginCtx<'_>,
    env: &CniEnv,
    k8s: &K8sArgs,
    n: &conf::NetConf,
    delegates: &[Delegate],
    last: usize,
) -> Result<(), String> {
    let mut errors = Vec::new();
    for idx in (0..=last.min(delegates.len().saturating_sub(1))).rev() {
        let d = &delegates[idx];
        let ifname = d.ifname(&env.ifname, idx);
        let (rt, info_file) = delegate::runtime_conf(env, k8s, &ifname, &n.runtime_config, d);
        if let Err(e) = delegate::del(ctx, d, &rt, &n.cni_dir) {
            errors.push(if d.conf_list_plugin {
                format!(
                    "DelegateDel: error invoking ConflistDel - {:?}: {e}",
                    d.net_name()
                )
            } else {
                format!(
                    "DelegateDel: error invoking DelegateDel - {:?}: {e}",
                    d.conf_type()
                )
            });
        }
        if !info_file.is_empty() {
            ctx.host.files.remove(&info_file);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("errors: {}", errors.join(" / ")))
    }
}

fn cmd_del(ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> Result<(), String> {
    let (n, k8s) = load(env, stdin)?;
    let path = scratch_path(&n.cni_dir, &env.container_id);
    let cached: Option<Vec<Delegate>> = ctx
        .host
        .files
        .get(&path)
        .and_then(|t| serde_json::from_str(t).ok());
    let delegates = match cached {
        Some(mut ds) if !ds.is_empty() => {
            ds[0].master_plugin = true;
            ds
        }
        _ => {
            // No cache: rebuild from the API when the pod is still there, else nothing can
            // be deleted properly and DEL succeeds (a sandbox must always go).
            let pod = if !n.kubeconfig.is_empty() && !k8s.name.is_empty() {
                ctx.kube
                    .as_deref()
                    .and_then(|k| k.pod(&k8s.namespace, &k8s.name))
            } else {
                None
            };
            let Some(p) = pod else {
                return Ok(());
            };
            let mut ds = vec![master(&n)?];
            if let Ok(more) = pod_delegates(ctx, &n, &k8s, &p.annotations, false) {
                ds.extend(more);
            }
            ds
        }
    };
    let r = del_plugins(ctx, env, &k8s, &n, &delegates, delegates.len() - 1);
    ctx.host.files.remove(&path);
    r
}

fn cmd_check(ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> Result<(), String> {
    let (n, k8s) = load(env, stdin)?;
    // CmdCheck checks the delegates of Multus's own config (the cluster network).
    let d = master(&n)?;
    let ifname = d.ifname(&env.ifname, 0);
    let (rt, _) = delegate::runtime_conf(env, &k8s, &ifname, &n.runtime_config, &d);
    delegate::check(ctx, &d, &rt, &n.cni_dir).map_err(|e| {
        if d.conf_list_plugin {
            format!(
                "DelegateCheck: error invoking ConflistCheck - {:?}: {e}",
                d.net_name()
            )
        } else {
            format!(
                "DelegateCheck: error invoking DelegateCheck - {:?}: {e}",
                d.conf_type()
            )
        }
    })
}
