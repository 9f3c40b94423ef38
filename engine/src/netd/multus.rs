//! Multus's thin entrypoint, as its DaemonSet (`deployments/multus-daemonset.yml`,
//! `--multus-conf-file=auto`) runs it on every node (`multus-cni:
//! cmd/thin_entrypoint/main.go`): it writes the kubeconfig the plugin uses to
//! `/etc/cni/net.d/multus.d/multus.kubeconfig`, picks the master config (the first
//! `.conf`/`.conflist` in `/etc/cni/net.d` in lexical order that is not its own), and
//! writes `00-multus.conf` (`00-multus.conflist` when the master's cniVersion is 1.0.0 or
//! later) with type `multus`, name `multus-cni-network`, the master's capabilities, and the
//! master config (compact, keys sorted) as `delegates[0]`. Its name sorts first, so the
//! runtime now calls Multus for every pod.
//!
//! The lab regenerates the file when the network changes (`network use`): the DaemonSet
//! pod is restarted after a network switch (upstream's own watch loop runs only with
//! `--cleanup-config-on-exit`).

use crate::node::NodeRuntime;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where the entrypoint writes the kubeconfig.
pub(crate) const KUBECONFIG: &str = "/etc/cni/net.d/multus.d/multus.kubeconfig";
/// The config file names the entrypoint writes (and skips when picking the master).
pub(crate) const CONF_NAMES: [&str; 2] = ["00-multus.conf", "00-multus.conflist"];
/// `--multus-cni-conf-dir`'s default, written into the config as `cniConf`.
const CNI_CONF_DIR: &str = "/host/etc/cni/multus/net.d";

/// The kubeconfig (`kubeConfigTemplate`), with the lab's service address and a placeholder
/// token.
pub fn kubeconfig() -> String {
    "# Kubeconfig file for Multus CNI plugin.
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://10.96.0.1:443
    certificate-authority-data: TEFCLUNB
users:
- name: multus
  user:
    token: \"multus-service-account-token\"
contexts:
- name: multus-context
  context:
    cluster: local
    user: multus
current-context: multus-context
"
    .to_string()
}

/// `getMasterConfigPath`: the first `.conf`/`.conflist` not named `00-multus.conf*`.
pub(crate) fn master_file(rt: &NodeRuntime) -> Option<(&String, &crate::cni::conf::ConfText)> {
    rt.confdir.files.iter().find(|(name, _)| {
        (name.ends_with(".conf") || name.ends_with(".conflist"))
            && !name.starts_with("00-multus.conf")
    })
}

/// `createMultusConfig`: the file name and text for a master config, or the entrypoint's
/// error.
pub fn render(master_name: &str, master_text: &str) -> Result<(String, String), String> {
    let path = format!("/etc/cni/net.d/{master_name}");
    let master: Map<String, Value> = serde_json::from_str(master_text)
        .map_err(|e| format!("cannot read master CNI config json: {e}"))?;
    let Some(Value::String(version)) = master.get("cniVersion") else {
        return Err(format!(
            "cannot get cniVersion in master CNI config file {path:?}"
        ));
    };
    let mut caps: BTreeMap<String, bool> = BTreeMap::new();
    let mut take = |v: Option<&Value>| {
        if let Some(Value::Object(c)) = v {
            for (k, b) in c {
                if let Value::Bool(b) = b {
                    caps.insert(k.clone(), *b);
                }
            }
        }
    };
    match master.get("plugins") {
        Some(Value::Array(ps)) => ps.iter().for_each(|p| take(p.get("capabilities"))),
        _ => take(master.get("capabilities")),
    }
    let caps_line = if caps.is_empty() {
        String::new()
    } else {
        format!(
            "\n        \"capabilities\": {},",
            serde_json::to_string(&caps).unwrap_or_default()
        )
    };
    let master_json = go_marshal(&Value::Object(master.clone()));
    let list = crate::cni::version::gte(version, "1.0.0").unwrap_or(false);
    let text = if list {
        format!(
            "{{\n    \"cniVersion\": \"{version}\",\n    \"name\": \"multus-cni-network\",\n    \"plugins\": [ {{\n        \"type\": \"multus\",{caps_line}\n        \"cniConf\": \"{CNI_CONF_DIR}\",\n        \"kubeconfig\": \"{KUBECONFIG}\",\n        \"delegates\": [\n            {master_json}\n        ]\n    }}]\n}}\n"
        )
    } else {
        format!(
            "{{\n        \"cniVersion\": \"{version}\",\n        \"name\": \"multus-cni-network\",\n        \"type\": \"multus\",{caps_line}\n        \"cniConf\": \"{CNI_CONF_DIR}\",\n        \"kubeconfig\": \"{KUBECONFIG}\",\n        \"delegates\": [\n                {master_json}\n        ]\n}}\n"
        )
    };
    let name = if list { CONF_NAMES[1] } else { CONF_NAMES[0] };
    Ok((name.to_string(), text))
}

/// The entrypoint runs on a node: kubeconfig and config written (a previous config of the
/// other extension removed). Returns the file written and its master, or the error the
/// entrypoint logs (then nothing is written and the runtime keeps the network it had).
pub(crate) fn install_on(rt: &mut NodeRuntime) -> Result<(String, String), String> {
    let (master_name, master_text) = match master_file(rt) {
        Some((n, t)) => (n.clone(), t.text().into_owned()),
        None => {
            return Err("cannot find valid master CNI config in \"/host/etc/cni/net.d\"".into());
        }
    };
    let (name, text) = render(&master_name, &master_text)?;
    rt.host.files.insert(KUBECONFIG.to_string(), kubeconfig());
    for n in CONF_NAMES {
        rt.confdir.files.remove(n);
    }
    rt.confdir.files.insert(name.clone(), text.into());
    rt.reload_network();
    Ok((name, master_name))
}

/// Go's `json.Marshal`: compact, keys sorted (a map), `<`, `>` and `&` escaped.
pub(crate) fn go_marshal(v: &Value) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The DaemonSet is deleted: its config and kubeconfig go (`cleanupMultusConf`).
pub(crate) fn uninstall(rt: &mut NodeRuntime) {
    let mut changed = false;
    for n in CONF_NAMES {
        changed |= rt.confdir.files.remove(n).is_some();
    }
    rt.host.files.remove(KUBECONFIG);
    if changed {
        rt.reload_network();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_entrypoint_conflist_layout() {
        let master = r#"{"cniVersion":"1.0.0","name":"lab-net","plugins":[{"type":"bridge"},{"type":"portmap","capabilities":{"portMappings":true}}]}"#;
        let (name, text) = render("10-lab.conflist", master).unwrap();
        assert_eq!(name, "00-multus.conflist");
        assert_eq!(
            text,
            "{\n    \"cniVersion\": \"1.0.0\",\n    \"name\": \"multus-cni-network\",\n    \"plugins\": [ {\n        \"type\": \"multus\",\n        \"capabilities\": {\"portMappings\":true},\n        \"cniConf\": \"/host/etc/cni/multus/net.d\",\n        \"kubeconfig\": \"/etc/cni/net.d/multus.d/multus.kubeconfig\",\n        \"delegates\": [\n            {\"cniVersion\":\"1.0.0\",\"name\":\"lab-net\",\"plugins\":[{\"type\":\"bridge\"},{\"capabilities\":{\"portMappings\":true},\"type\":\"portmap\"}]}\n        ]\n    }]\n}\n"
        );
        let parsed = crate::cni::conf::parse_file(&name, &text).unwrap();
        assert_eq!(parsed.name, "multus-cni-network");
        assert_eq!(parsed.plugins[0].plugin_type, "multus");
    }

    #[test]
    fn old_versions_get_a_single_conf() {
        let (name, text) = render(
            "10-x.conf",
            r#"{"cniVersion":"0.4.0","name":"x","type":"bridge"}"#,
        )
        .unwrap();
        assert_eq!(name, "00-multus.conf");
        assert!(text.starts_with("{\n        \"cniVersion\": \"0.4.0\""));
        assert!(crate::cni::conf::parse_file(&name, &text).is_ok());
        assert_eq!(
            render("10-x.conf", r#"{"name":"x","type":"bridge"}"#).unwrap_err(),
            "cannot get cniVersion in master CNI config file \"/etc/cni/net.d/10-x.conf\""
        );
    }
}
