//! Multus's own configuration (`multus-cni: pkg/types/types.go` NetConf, `pkg/types/conf.go`
//! LoadNetConf), as the thin entrypoint writes it into `/etc/cni/net.d` with the primary
//! network as `delegates[0]` (see `crate::netd::multus`).

use serde_json::{Map, Value};

/// Where Multus keeps each sandbox's delegate list and its libcni result cache.
pub(crate) const CNI_DIR: &str = "/var/lib/cni/multus";
/// Where Multus looks for a config named by an empty NAD.
pub(crate) const CONF_DIR: &str = "/etc/cni/multus/net.d";

/// The parts of Multus's NetConf the lab models.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConf {
    /// `cniVersion`.
    pub cni_version: String,
    /// `kubeconfig`: without one Multus runs only its `delegates`.
    pub kubeconfig: String,
    /// `delegates`: the first is the cluster network (the master plugin).
    pub delegates: Vec<Value>,
    /// `clusterNetwork`: a NAD in `multusNamespace` that replaces `delegates[0]`.
    pub cluster_network: String,
    /// `cniDir`.
    pub cni_dir: String,
    /// `confDir`.
    pub conf_dir: String,
    /// `multusNamespace`.
    pub multus_namespace: String,
    /// `systemNamespaces`.
    pub system_namespaces: Vec<String>,
    /// `runtimeConfig`, as the runtime passed it (portMappings, bandwidth, …).
    pub runtime_config: Map<String, Value>,
}

fn string(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "failed to load netconf: json: cannot unmarshal {} into Go struct field NetConf.{key} of type string",
            kind(other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `LoadNetConf` on the stdin document (the plugin object with `runtimeConfig`).
pub fn load(doc: &Value) -> Result<NetConf, String> {
    let Value::Object(obj) = doc else {
        return Err(
            "failed to load netconf: json: cannot unmarshal into Go value of type types.NetConf"
                .into(),
        );
    };
    let delegates = match obj.get("delegates") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => {
            return Err(format!(
                "failed to load netconf: json: cannot unmarshal {} into Go struct field NetConf.delegates of type []map[string]interface {{}}",
                kind(other)
            ));
        }
    };
    let cluster_network = string(obj, "clusterNetwork")?;
    if delegates.is_empty() && cluster_network.is_empty() {
        return Err("at least one delegate/clusterNetwork must be specified".into());
    }
    let or = |s: String, d: &str| if s.is_empty() { d.to_string() } else { s };
    let system_namespaces = match obj.get("systemNamespaces") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => vec!["kube-system".to_string()],
    };
    Ok(NetConf {
        cni_version: string(obj, "cniVersion")?,
        kubeconfig: string(obj, "kubeconfig")?,
        delegates,
        cluster_network,
        cni_dir: or(string(obj, "cniDir")?, CNI_DIR),
        conf_dir: or(string(obj, "confDir")?, CONF_DIR),
        multus_namespace: or(string(obj, "multusNamespace")?, "kube-system"),
        system_namespaces,
        runtime_config: match obj.get("runtimeConfig") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        },
    })
}
