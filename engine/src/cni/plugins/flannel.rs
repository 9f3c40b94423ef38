//! The `flannel` CNI plugin (`flannel-io/cni-plugin`: `flannel.go`, `flannel_linux.go`;
//! summarised in `flannel-and-netfilter.md` §2): it reads the subnet.env flanneld wrote,
//! builds a `bridge` delegate config from it, saves that config under `dataDir` and runs
//! the delegate. DEL replays the saved config (subnet.env is not read); CHECK does nothing.
//!
//! The delegate: `name` is the network's, `ipam` is host-local on FLANNEL_SUBNET with a
//! route to each FLANNEL_NETWORK (unless the conflist's own `ipam.type` is set), and
//! `cniVersion`/`runtimeConfig` come from the input; `type` (bridge), `ipMasq`
//! (`!FLANNEL_IPMASQ`), `mtu` (FLANNEL_MTU) and `isGateway` (true, for bridge) are set only
//! when the conflist's `delegate` does not set them.

use crate::cni::plugin::{
    ALL_VERSIONS, CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin,
};
use crate::cni::types::CniError;
use serde_json::{Map, Value, json};

/// The `flannel` plugin binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Flannel;

/// Where flanneld writes subnet.env unless `subnetFile` says otherwise.
const SUBNET_FILE: &str = "/run/flannel/subnet.env";
/// Where the plugin keeps each container's delegate config unless `dataDir` says otherwise.
const DATA_DIR: &str = "/var/lib/cni/flannel";

/// subnet.env's values.
struct SubnetEnv {
    networks: Vec<String>,
    subnet: String,
    mtu: u64,
    ipmasq: bool,
}

/// `loadFlannelSubnetEnv`: the keys it needs, or which are missing.
fn read_subnet_env(path: &str, text: &str) -> Result<SubnetEnv, String> {
    let mut networks = None;
    let mut subnet = None;
    let mut mtu = None;
    let mut ipmasq = None;
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "FLANNEL_NETWORK" => {
                let mut nets = Vec::new();
                for n in v.split(',') {
                    let net: ipnet::IpNet = n
                        .trim()
                        .parse()
                        .map_err(|_| format!("invalid CIDR address: {n}"))?;
                    nets.push(net.trunc().to_string());
                }
                networks = Some(nets);
            }
            "FLANNEL_SUBNET" => {
                let net: ipnet::IpNet = v
                    .parse()
                    .map_err(|_| format!("invalid CIDR address: {v}"))?;
                subnet = Some(net.trunc().to_string());
            }
            "FLANNEL_MTU" => {
                mtu = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("strconv.ParseUint: parsing {v:?}: invalid syntax"))?,
                )
            }
            "FLANNEL_IPMASQ" => ipmasq = Some(v == "true"),
            _ => {}
        }
    }
    let mut missing = Vec::new();
    if networks.is_none() {
        missing.push("FLANNEL_NETWORK");
    }
    if subnet.is_none() {
        missing.push("FLANNEL_SUBNET");
    }
    if mtu.is_none() {
        missing.push("FLANNEL_MTU");
    }
    if ipmasq.is_none() {
        missing.push("FLANNEL_IPMASQ");
    }
    match (networks, subnet, mtu, ipmasq) {
        (Some(networks), Some(subnet), Some(mtu), Some(ipmasq)) => Ok(SubnetEnv {
            networks,
            subnet,
            mtu,
            ipmasq,
        }),
        _ => Err(format!("{path} is missing {}", missing.join(", "))),
    }
}

fn str_field<'a>(conf: &'a Value, key: &str, default: &'a str) -> &'a str {
    conf.get(key).and_then(Value::as_str).unwrap_or(default)
}

impl Flannel {
    /// The delegate config `doCmdAdd` builds (`flannel_linux.go`).
    fn delegate_conf(stdin: &Stdin, env: &SubnetEnv) -> Result<Map<String, Value>, CniError> {
        let conf = stdin.conf.as_ref();
        let mut d: Map<String, Value> = match conf.get("delegate") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(CniError::internal(
                    "'delegate' dictionary, if present, must have (string) 'type' field",
                ));
            }
        };
        if d.contains_key("type") && !d["type"].is_string() {
            return Err(CniError::internal(
                "'delegate' dictionary, if present, must have (string) 'type' field",
            ));
        }
        for key in ["name", "ipam"] {
            if d.contains_key(key) {
                return Err(CniError::internal(format!(
                    "'delegate' dictionary must not have '{key}' field, it'll be set by flannel"
                )));
            }
        }
        d.insert("name".into(), json!(str_field(conf, "name", "")));
        d.entry("type").or_insert_with(|| json!("bridge"));
        d.entry("ipMasq").or_insert_with(|| json!(!env.ipmasq));
        d.entry("mtu").or_insert_with(|| json!(env.mtu));
        if d.get("type").and_then(Value::as_str) == Some("bridge") {
            d.entry("isGateway").or_insert_with(|| json!(true));
        }
        if let Some(v) = conf.get("cniVersion") {
            d.insert("cniVersion".into(), v.clone());
        }
        if let Some(rc) = &stdin.runtime_config {
            d.insert("runtimeConfig".into(), rc.as_ref().clone());
        }
        let top_ipam = conf.get("ipam").and_then(Value::as_object);
        let ipam_type = top_ipam
            .and_then(|m| m.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("host-local");
        let mut routes: Vec<Value> = top_ipam
            .and_then(|m| m.get("routes"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for n in &env.networks {
            routes.push(json!({ "dst": n }));
        }
        let mut ipam = top_ipam.cloned().unwrap_or_default();
        ipam.insert("type".into(), json!(ipam_type));
        ipam.insert("ranges".into(), json!([[{ "subnet": env.subnet }]]));
        ipam.insert("routes".into(), Value::Array(routes));
        d.insert("ipam".into(), Value::Object(ipam));
        Ok(d)
    }

    fn cmd_add(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let conf = stdin.conf.as_ref();
        let path = str_field(conf, "subnetFile", SUBNET_FILE).to_string();
        let text = ctx.host.files.get(&path).cloned().ok_or_else(|| {
            CniError::internal(format!(
                "failed to load flannel 'subnet.env' file: open {path}: no such file or directory. Check the flannel pod log for this node."
            ))
        })?;
        let subnet_env = read_subnet_env(&path, &text).map_err(|e| {
            CniError::internal(format!(
                "failed to load flannel 'subnet.env' file: {e}. Check the flannel pod log for this node."
            ))
        })?;
        let delegate = Self::delegate_conf(stdin, &subnet_env)?;
        let data_dir = str_field(conf, "dataDir", DATA_DIR);
        // Go's json.Marshal of the map: compact, keys sorted, no trailing newline.
        let saved = Value::Object(delegate.clone()).to_string();
        ctx.host
            .files
            .insert(format!("{data_dir}/{}", env.container_id), saved);
        run_delegate(ctx, env, delegate)
    }

    fn cmd_del(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        let data_dir = str_field(stdin.conf.as_ref(), "dataDir", DATA_DIR);
        let file = format!("{data_dir}/{}", env.container_id);
        let Some(saved) = ctx.host.files.get(&file).cloned() else {
            // Nothing saved: ADD never ran or DEL already did.
            return Ok(PluginOutput::Empty);
        };
        let Ok(Value::Object(delegate)) = serde_json::from_str::<Value>(&saved) else {
            // "failed to parse netconf": reported as success, the file is kept.
            return Ok(PluginOutput::Empty);
        };
        ctx.host.files.remove(&file);
        run_delegate(ctx, env, delegate).map(|_| PluginOutput::Empty)
    }
}

/// Exec the delegate its config names (`invoke.DelegateAdd`/`DelegateDel` by `type`).
fn run_delegate(
    ctx: &mut PluginCtx<'_>,
    env: &CniEnv,
    delegate: Map<String, Value>,
) -> PluginReply {
    let kind = delegate
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("bridge")
        .to_string();
    ctx.delegate(&kind, env, &Stdin::from_conf(Value::Object(delegate)))
}

impl Plugin for Flannel {
    fn type_name(&self) -> &'static str {
        "flannel"
    }

    fn supported_versions(&self) -> &'static [&'static str] {
        ALL_VERSIONS
    }

    fn invoke(&self, ctx: &mut PluginCtx<'_>, env: &CniEnv, stdin: &Stdin) -> PluginReply {
        match env.cmd() {
            CniCommand::Add => self.cmd_add(ctx, env, stdin),
            CniCommand::Del => self.cmd_del(ctx, env, stdin),
            // `cmdCheck` returns nil.
            CniCommand::Check | CniCommand::Gc | CniCommand::Status => Ok(PluginOutput::Empty),
            CniCommand::Version => crate::cni::plugin::version_reply(ALL_VERSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnet_env_names_every_missing_key() {
        let e = read_subnet_env("/run/flannel/subnet.env", "FLANNEL_MTU=1450\n")
            .err()
            .unwrap();
        assert_eq!(
            e,
            "/run/flannel/subnet.env is missing FLANNEL_NETWORK, FLANNEL_SUBNET, FLANNEL_IPMASQ"
        );
    }

    #[test]
    fn the_delegate_is_the_one_flannel_writes() {
        let stdin = Stdin::from_conf(json!({
            "cniVersion": "0.3.1", "name": "cbr0", "type": "flannel",
            "delegate": {"hairpinMode": true, "isDefaultGateway": true}
        }));
        let env = read_subnet_env(
            "f",
            "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n",
        )
        .unwrap();
        let d = Flannel::delegate_conf(&stdin, &env).unwrap();
        // flannel-and-netfilter.md §2: the saved file for this setup.
        assert_eq!(
            Value::Object(d).to_string(),
            r#"{"cniVersion":"0.3.1","hairpinMode":true,"ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.244.1.0/24"}]],"routes":[{"dst":"10.244.0.0/16"}],"type":"host-local"},"isDefaultGateway":true,"isGateway":true,"mtu":1450,"name":"cbr0","type":"bridge"}"#
        );
        let bad = Stdin::from_conf(json!({"name":"cbr0","delegate":{"name":"x"}}));
        assert_eq!(
            Flannel::delegate_conf(&bad, &env).err().unwrap().msg,
            "'delegate' dictionary must not have 'name' field, it'll be set by flannel"
        );
    }
}
