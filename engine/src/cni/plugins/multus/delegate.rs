//! One delegate: a network Multus attaches the pod to (the cluster network, or a
//! NetworkAttachmentDefinition the pod named), and how Multus runs it: through libcni with
//! its own result cache under `<cniDir>/results`, chaining prevResult through a conflist
//! exactly as the runtime does (`multus-cni: pkg/types/conf.go` LoadDelegateNetConf,
//! CreateCNIRuntimeConf; `pkg/multus/multus.go` DelegateAdd/DelegateDel, conflistAdd).

use super::annotation::Selection;
use crate::cni::conf::{NetworkConfigList, conflist_from_single_conf, conflist_from_str};
use crate::cni::plugin::{CniCommand, CniEnv, PluginCtx, PluginOutput, Stdin};
use crate::cni::runtime::Network;
use crate::cni::types::{CniError, CniResult};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A delegate as Multus keeps it (and saves it to `<cniDir>/<containerID>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Delegate {
    /// `<ns>/<nad>` for an attachment, the CNI name for the cluster network.
    pub name: String,
    /// The config or conflist, after Multus's edits (name, deviceID, cni-args).
    pub conf: Value,
    /// A conflist (no top-level `type`).
    pub conf_list_plugin: bool,
    /// The cluster network (delegates[0]).
    pub master_plugin: bool,
    /// `interface` / `@ifname`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ifname_request: String,
    /// `mac`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac_request: String,
    /// `ips`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_request: Vec<String>,
    /// `portMappings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_mappings_request: Option<Value>,
    /// `bandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_request: Option<Value>,
    /// `infiniband-guid`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub infiniband_guid_request: String,
    /// The device handed to this delegate (an SR-IOV VF's PCI address).
    #[serde(default, rename = "deviceID", skip_serializing_if = "String::is_empty")]
    pub device_id: String,
    /// The NAD's `k8s.v1.cni.cncf.io/resourceName`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_name: String,
}

impl Delegate {
    /// The CNI name (`Conf.Name`, else `ConfList.Name`): what errors and caches use.
    pub(crate) fn net_name(&self) -> &str {
        self.conf.get("name").and_then(Value::as_str).unwrap_or("")
    }

    /// `Conf.Type`: the top-level `type` ("" for a conflist), as DelegateAdd's error names it.
    pub(crate) fn conf_type(&self) -> &str {
        self.conf.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// The interface name (`getIfname`): the request, else CNI_IFNAME for the master,
    /// else `net<idx>`.
    pub fn ifname(&self, cni_ifname: &str, idx: usize) -> String {
        if !self.ifname_request.is_empty() {
            self.ifname_request.clone()
        } else if self.master_plugin {
            cni_ifname.to_string()
        } else {
            format!("net{idx}")
        }
    }

    /// The network as libcni runs it.
    pub fn network(&self) -> Result<Network, String> {
        let text = self.conf.to_string();
        let list = if self.conf_list_plugin {
            conflist_from_str(&text)?
        } else {
            conflist_from_single_conf(&text)?
        };
        Ok(Network::new(list))
    }
}

/// `LoadDelegateNetConf`: a delegate from config bytes, with the selection element's
/// requests, a device ID (injected as `deviceID` and `pciBusID`) and `cni-args`.
pub fn load(
    config: &Value,
    sel: Option<&Selection>,
    device_id: &str,
    resource_name: &str,
) -> Result<Delegate, String> {
    let Value::Object(obj) = config else {
        return Err(format!(
            "LoadDelegateNetConf: error unmarshalling delegate config: json: cannot unmarshal {} into Go value of type types.NetConf",
            super::json_kind(config)
        ));
    };
    let mut conf = config.clone();
    let conf_type = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let is_list = conf_type.is_empty();
    if is_list {
        let plugins = match obj.get("plugins") {
            Some(Value::Array(p)) => p,
            _ => {
                return Err("LoadDelegateNetConf: failed with: LoadDelegateNetConfList: delegate must have the 'type' or 'plugin' field".into());
            }
        };
        let first_type = plugins
            .first()
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if first_type.is_empty() {
            return Err("LoadDelegateNetConf: failed with: LoadDelegateNetConfList: a plugin delegate must have the 'type' field".into());
        }
    }
    let edit_plugins = |conf: &mut Value, f: &dyn Fn(&mut Map<String, Value>)| {
        if is_list {
            if let Some(Value::Array(ps)) = conf.get_mut("plugins") {
                for p in ps {
                    if let Value::Object(m) = p {
                        f(m);
                    }
                }
            }
        } else if let Value::Object(m) = conf {
            f(m);
        }
    };
    if !device_id.is_empty() {
        edit_plugins(&mut conf, &|m| {
            m.insert("deviceID".into(), Value::String(device_id.to_string()));
            m.insert("pciBusID".into(), Value::String(device_id.to_string()));
        });
    }
    if let Some(args) = sel.and_then(|s| s.cni_args.as_ref()) {
        edit_plugins(&mut conf, &|m| {
            let a = m.entry("args").or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(a) = a {
                let cni = a.entry("cni").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(cni) = cni {
                    for (k, v) in args {
                        cni.insert(k.clone(), v.clone());
                    }
                }
            }
        });
    }
    let mut d = Delegate {
        name: obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        conf,
        conf_list_plugin: is_list,
        ..Default::default()
    };
    if !device_id.is_empty() {
        d.device_id = device_id.to_string();
        d.resource_name = resource_name.to_string();
    }
    if let Some(s) = sel {
        if !s.name.is_empty() {
            // Overwrite the CNI config name with the net-attach-def's.
            d.name = format!("{}/{}", s.namespace, s.name);
        }
        d.ifname_request = s.interface.clone();
        d.mac_request = s.mac.clone();
        d.ip_request = s.ips.clone();
        d.port_mappings_request = s.port_mappings.clone();
        d.bandwidth_request = s.bandwidth.clone();
        d.infiniband_guid_request = s.infiniband_guid.clone();
    }
    Ok(d)
}

/// What one delegate call runs with (`libcni.RuntimeConf`).
#[derive(Debug, Clone)]
pub struct DelegateRt {
    /// `CNI_CONTAINERID` (shared with Multus's own env).
    pub container_id: std::sync::Arc<str>,
    /// `CNI_NETNS` (shared with Multus's own env).
    pub netns: std::sync::Arc<str>,
    /// `CNI_IFNAME`.
    pub ifname: String,
    /// `CNI_ARGS` as pairs, in order.
    pub args: Vec<(String, String)>,
    /// Capability args offered to the plugins that declare them.
    pub caps: Map<String, Value>,
    /// `CNI_PATH` (shared with Multus's own env).
    pub path: std::sync::Arc<str>,
}

/// `newCNIRuntimeConf`: the five K8S args, Multus's own CNI_ARGS merged in (a key whose
/// value is empty is filled, any other pair appended, so keys can repeat), and the
/// capability args (`mergeCNIRuntimeConfig`: the runtime's, plus, for an attachment, what
/// its selection asked for).
pub(crate) fn runtime_conf(
    env: &CniEnv,
    k8s: &super::K8sArgs,
    ifname: &str,
    runtime_config: &Map<String, Value>,
    d: &Delegate,
) -> (DelegateRt, String) {
    let mut args: Vec<(String, String)> = vec![
        ("IgnoreUnknown".into(), "true".into()),
        ("K8S_POD_NAMESPACE".into(), k8s.namespace.clone()),
        ("K8S_POD_NAME".into(), k8s.name.clone()),
        ("K8S_POD_INFRA_CONTAINER_ID".into(), k8s.infra_id.clone()),
        ("K8S_POD_UID".into(), k8s.uid.clone()),
    ];
    for pair in env.args.split(';').filter(|s| !s.is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            continue; // "is not recognized as CNI arg, skipped"
        };
        match args
            .iter_mut()
            .find(|(ak, av)| ak == k && av.is_empty() && !v.is_empty())
        {
            Some(slot) => slot.1 = v.to_string(),
            None => args.push((k.to_string(), v.to_string())),
        }
    }
    let mut caps = runtime_config.clone();
    if !d.master_plugin {
        if let Some(p) = &d.port_mappings_request {
            caps.insert("portMappings".into(), p.clone());
        }
        if let Some(b) = &d.bandwidth_request {
            caps.insert("bandwidth".into(), b.clone());
        }
        if !d.ip_request.is_empty() {
            caps.insert("ips".into(), serde_json::json!(d.ip_request));
        }
        if !d.mac_request.is_empty() {
            caps.insert("mac".into(), Value::String(d.mac_request.clone()));
        }
        if !d.infiniband_guid_request.is_empty() {
            caps.insert(
                "infinibandGUID".into(),
                Value::String(d.infiniband_guid_request.clone()),
            );
        }
        if !d.device_id.is_empty() {
            caps.insert("deviceID".into(), Value::String(d.device_id.clone()));
        }
    }
    let mut info_file = String::new();
    if caps
        .get("deviceID")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        info_file = cni_device_info_path(&format!("{}-{}_{ifname}", d.name, env.container_id));
        caps.insert("CNIDeviceInfoFile".into(), Value::String(info_file.clone()));
    }
    (
        DelegateRt {
            container_id: env.container_id.clone(),
            netns: env.netns.clone(),
            ifname: ifname.to_string(),
            args,
            caps,
            path: std::sync::Arc::clone(&env.path),
        },
        info_file,
    )
}

/// `GetCNIDeviceInfoPath`: `/var/run/k8s.cni.cncf.io/devinfo/cni/<id with / as ->`.
pub(crate) fn cni_device_info_path(id: &str) -> String {
    format!(
        "/var/run/k8s.cni.cncf.io/devinfo/cni/{}",
        id.replace('/', "-")
    )
}

/// The device plugin's devinfo file for a device (`GetDPDeviceInfoPath`).
pub(crate) fn dp_device_info_path(resource: &str, device_id: &str) -> String {
    format!(
        "/var/run/k8s.cni.cncf.io/devinfo/dp/{}-{device_id}-device.json",
        resource.replace('/', "-")
    )
}

impl DelegateRt {
    fn env(&self, cmd: CniCommand) -> CniEnv {
        CniEnv {
            command: Some(cmd),
            container_id: self.container_id.clone(),
            netns: self.netns.clone(),
            ifname: self.ifname.as_str().into(),
            args: self
                .args
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(";"),
            path: self.path.clone(),
        }
    }

    fn runtime_config(&self, caps: &[String]) -> Option<Arc<Value>> {
        let mut rc = Map::new();
        for c in caps {
            if let Some(v) = self.caps.get(c) {
                rc.insert(c.clone(), v.clone());
            }
        }
        (!rc.is_empty()).then(|| Arc::new(Value::Object(rc)))
    }
}

/// The cache file of Multus's libcni (`<cniDir>/results/<net>-<cid>-<ifname>`).
pub(crate) fn result_cache_path(cni_dir: &str, net: &str, cid: &str, ifname: &str) -> String {
    format!("{cni_dir}/results/{net}-{cid}-{ifname}")
}

fn validate(rt: &DelegateRt, list: &NetworkConfigList) -> Result<(), CniError> {
    crate::cni::skel::validate_container_id(&rt.container_id)?;
    crate::cni::skel::validate_network_name(&list.name)?;
    crate::cni::skel::validate_ifname(&rt.ifname)?;
    Ok(())
}

/// libcni's AddNetworkList (or AddNetwork for a single conf, whose errors are not
/// wrapped) through the plugin context, so each plugin call lands on the wire; the
/// result is cached under `<cniDir>/results`.
pub fn add(
    ctx: &mut PluginCtx<'_>,
    d: &Delegate,
    rt: &DelegateRt,
    cni_dir: &str,
) -> Result<CniResult, String> {
    let net = d.network()?;
    let env = rt.env(CniCommand::Add);
    let mut prev: Option<Arc<CniResult>> = None;
    for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
        validate(rt, &net.list).map_err(|e| e.to_string())?;
        let stdin = Stdin {
            conf: conf.clone(),
            list: Some(Arc::clone(&net.list)),
            runtime_config: rt.runtime_config(&plugin.capabilities),
            prev_result: prev.clone(),
            valid_attachments: None,
        };
        let wrap = |msg: String| {
            if d.conf_list_plugin {
                format!("plugin {} failed (add): {msg}", plugin.description())
            } else {
                msg
            }
        };
        match ctx.delegate(&plugin.plugin_type, &env, &stdin) {
            Ok(PluginOutput::Result(r)) => prev = Some(r.as_libcni_reads_it()),
            Ok(_) => return Err(wrap("unexpected end of JSON input".into())),
            Err(e) => return Err(wrap(e.to_string())),
        }
    }
    let result = prev.map(|r| r.as_ref().clone()).unwrap_or_default();
    let cache = serde_json::json!({
        "kind": "cniCacheV1",
        "containerId": &*rt.container_id,
        "ifName": rt.ifname,
        "networkName": net.list.name,
        "result": result,
    });
    ctx.host.files.insert(
        result_cache_path(cni_dir, &net.list.name, &rt.container_id, &rt.ifname),
        cache.to_string(),
    );
    Ok(result)
}

fn cached_result(ctx: &PluginCtx<'_>, path: &str) -> Option<Arc<CniResult>> {
    let text = ctx.host.files.get(path)?;
    let v: Value = serde_json::from_str(text).ok()?;
    serde_json::from_value(v.get("result")?.clone())
        .ok()
        .map(Arc::new)
}

/// libcni's DelNetworkList (DelNetwork): the chain in reverse with the cached result, then
/// the cache entry goes.
pub fn del(
    ctx: &mut PluginCtx<'_>,
    d: &Delegate,
    rt: &DelegateRt,
    cni_dir: &str,
) -> Result<(), String> {
    let net = d.network()?;
    let path = result_cache_path(cni_dir, &net.list.name, &rt.container_id, &rt.ifname);
    let cached = if crate::cni::version::gte(&net.list.cni_version, "0.4.0").unwrap_or(false) {
        cached_result(ctx, &path)
    } else {
        None
    };
    let env = rt.env(CniCommand::Del);
    for (plugin, conf) in net.list.plugins.iter().zip(&net.injected).rev() {
        validate(rt, &net.list).map_err(|e| e.to_string())?;
        let stdin = Stdin {
            conf: conf.clone(),
            list: Some(Arc::clone(&net.list)),
            runtime_config: rt.runtime_config(&plugin.capabilities),
            prev_result: cached.clone(),
            valid_attachments: None,
        };
        if let Err(e) = ctx.delegate(&plugin.plugin_type, &env, &stdin) {
            return Err(if d.conf_list_plugin {
                format!("plugin {} failed (delete): {e}", plugin.description())
            } else {
                e.to_string()
            });
        }
    }
    ctx.host.files.remove(&path);
    Ok(())
}

/// libcni's CheckNetworkList (CheckNetwork) with the cached result.
pub fn check(
    ctx: &mut PluginCtx<'_>,
    d: &Delegate,
    rt: &DelegateRt,
    cni_dir: &str,
) -> Result<(), String> {
    let net = d.network()?;
    let v = &net.list.cni_version;
    if !crate::cni::version::gte(v, "0.4.0").unwrap_or(false) {
        return Err(format!(
            "configuration version {v:?} does not support the CHECK command"
        ));
    }
    if net.list.disable_check {
        return Ok(());
    }
    let path = result_cache_path(cni_dir, &net.list.name, &rt.container_id, &rt.ifname);
    let cached = cached_result(ctx, &path);
    let env = rt.env(CniCommand::Check);
    for (plugin, conf) in net.list.plugins.iter().zip(&net.injected) {
        validate(rt, &net.list).map_err(|e| e.to_string())?;
        let stdin = Stdin {
            conf: conf.clone(),
            list: Some(Arc::clone(&net.list)),
            runtime_config: rt.runtime_config(&plugin.capabilities),
            prev_result: cached.clone(),
            valid_attachments: None,
        };
        ctx.delegate(&plugin.plugin_type, &env, &stdin)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
