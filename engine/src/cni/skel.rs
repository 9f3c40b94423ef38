//! What `pkg/skel` does before a plugin's own code runs, and how results are printed:
//! required variables, network name validation, version reconciliation, the CHECK/GC/STATUS
//! minimum versions, and `types.PrintResult`'s conversion to the config's version.

use super::plugin::{CniCommand, CniEnv, Plugin, PluginCtx, PluginOutput, PluginReply, Stdin};
use super::plugins::memo::DocMemo;
use super::release::PluginsRelease;
use super::types::{CniError, CniResult, IfIndex, code, to_go_json};
use super::version;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::sync::Arc;

/// Run one plugin invocation the way a plugin binary built on skel handles it.
pub fn dispatch(
    plugin: &dyn Plugin,
    ctx: &mut PluginCtx<'_>,
    env: &CniEnv,
    stdin: &Stdin,
) -> PluginReply {
    let Some(cmd) = env.command else {
        return Err(CniError::new(
            code::INVALID_ENV,
            "required env variables [CNI_COMMAND] missing",
        ));
    };
    let release = if plugin.is_reference_plugin() {
        ctx.registry.release()
    } else {
        PluginsRelease::default()
    };
    if !release.has_gc_and_status() {
        return dispatch_cni_v1_0_1(plugin, ctx, env, stdin, release, cmd);
    }
    // getCmdArgsFromEnv (CNI library v1.3.0) checks each variable a command requires as it
    // reads it, before it reports the missing ones: `} else if v.reqForCmd[cmd] &&
    // v.validateFn != nil {`, utils.ValidateContainerID for CNI_CONTAINERID and
    // utils.ValidateInterfaceName for CNI_IFNAME (ADD, CHECK and DEL).
    if matches!(cmd, CniCommand::Add | CniCommand::Check | CniCommand::Del) {
        if !env.container_id.is_empty() {
            validate_container_id(&env.container_id)?;
        }
        if !env.ifname.is_empty() {
            validate_ifname(&env.ifname)?;
        }
    }
    check_required_env(cmd, env, release)?;
    let supported = plugin.supported_versions();
    if cmd == CniCommand::Version {
        return super::plugin::version_reply(supported);
    }
    let facts = conf_facts(&stdin.conf);
    facts.valid.clone()?;
    let conf_version = facts.version.as_deref().map_err(Clone::clone)?;
    let min = match cmd {
        CniCommand::Check => Some(("0.4.0", "CHECK")),
        CniCommand::Gc => Some(("1.1.0", "GC")),
        CniCommand::Status => Some(("1.1.0", "STATUS")),
        _ => None,
    };
    if let Some((min, name)) = min {
        check_min_version(conf_version, supported, min, name)?;
    }
    version::reconcile(conf_version, supported)?;
    plugin.invoke(ctx, env, stdin)
}

/// skel as the CNI library v1.0.1 has it, which containernetworking/plugins v1.1.1 is built
/// on (`vendor/github.com/containernetworking/cni/pkg/skel/skel.go` at tag v1.1.1): only
/// ADD, CHECK, DEL and VERSION exist; every other command first goes through the config,
/// container ID and interface name checks (so an empty GC or STATUS environment reads
/// `missing containerID`, code 3) and then is an unknown command (code 4). Checked against
/// Debian's binaries.
fn dispatch_cni_v1_0_1(
    plugin: &dyn Plugin,
    ctx: &mut PluginCtx<'_>,
    env: &CniEnv,
    stdin: &Stdin,
    release: PluginsRelease,
    cmd: CniCommand,
) -> PluginReply {
    use CniCommand::*;
    check_required_env(cmd, env, release)?;
    let supported = release.supported_versions(plugin.supported_versions());
    if cmd == Version {
        return super::plugin::version_reply_as(release.current_spec(), &supported);
    }
    let facts = conf_facts(&stdin.conf);
    facts.valid.clone()?;
    validate_container_id(&env.container_id)?;
    validate_ifname(&env.ifname)?;
    if matches!(cmd, Gc | Status) {
        return Err(CniError::new(
            code::INVALID_ENV,
            format!("unknown CNI_COMMAND: {}", cmd.as_str()),
        ));
    }
    let conf_version = facts.version.as_deref().map_err(Clone::clone)?;
    if cmd == Check {
        check_min_version(conf_version, &supported, "0.4.0", "CHECK")?;
    }
    version::reconcile(conf_version, &supported)?;
    plugin.invoke(ctx, env, stdin)
}

/// What skel reads of a config document alone, before the plugin runs: `validateConfig`'s
/// outcome and the version `ConfVersionDecoder` finds. Each is reported at its own point of
/// the command's checks, so both are kept as found.
#[derive(Debug)]
struct ConfFacts {
    /// [`validate_config`].
    valid: Result<(), CniError>,
    /// [`version::config_version`].
    version: Result<String, CniError>,
}

/// The [`ConfFacts`] of `conf`: the runtime hands every call on a network the same
/// document, so they are found once per document ([`DocMemo`]).
fn conf_facts(conf: &Arc<Value>) -> Arc<ConfFacts> {
    thread_local! {
        static FACTS: RefCell<DocMemo<ConfFacts>> = RefCell::new(DocMemo::default());
    }
    FACTS.with(|m| {
        m.borrow_mut().get_or(conf, |c| ConfFacts {
            valid: validate_config(c),
            version: version::config_version(c),
        })
    })
}

/// getCmdArgsFromEnv: the variables each command needs (the library 1.0.1 of release
/// 1.1.1 knows no GC or STATUS, so nothing is required for them there).
fn check_required_env(
    cmd: CniCommand,
    env: &CniEnv,
    release: PluginsRelease,
) -> Result<(), CniError> {
    use CniCommand::*;
    let path_too = release.has_gc_and_status() && matches!(cmd, Gc | Status);
    require_env(&[
        (
            "CNI_CONTAINERID",
            &env.container_id,
            matches!(cmd, Add | Check | Del),
        ),
        ("CNI_NETNS", &env.netns, matches!(cmd, Add | Check)),
        ("CNI_IFNAME", &env.ifname, matches!(cmd, Add | Check | Del)),
        (
            "CNI_PATH",
            &env.path,
            matches!(cmd, Add | Check | Del) || path_too,
        ),
    ])
}

/// getCmdArgsFromEnv's check: every variable required for the command and empty, named in
/// one error.
fn require_env(checks: &[(&str, &str, bool)]) -> Result<(), CniError> {
    let is_missing = |(_, value, required): &&(&str, &str, bool)| *required && value.is_empty();
    if !checks.iter().any(|c| is_missing(&c)) {
        return Ok(());
    }
    let missing: Vec<&str> = checks
        .iter()
        .filter(is_missing)
        .map(|(name, _, _)| *name)
        .collect();
    Err(CniError::new(
        code::INVALID_ENV,
        format!("required env variables [{}] missing", missing.join(",")),
    ))
}

/// skel's guard for a command newer than some config versions (CHECK from 0.4.0, GC and
/// STATUS from 1.1.0): the config must be at least `min`, and the plugin must support a
/// version at least the config's.
fn check_min_version(
    conf_version: &str,
    supported: &[&str],
    min: &str,
    name: &str,
) -> Result<(), CniError> {
    let decode = |e: String| CniError::new(code::DECODING_FAILURE, e);
    if !version::gte(conf_version, min).map_err(decode)? {
        return Err(CniError::new(
            code::INCOMPATIBLE_VERSION,
            format!("config version does not allow {name}"),
        ));
    }
    for v in supported {
        if version::gte(v, conf_version).map_err(decode)? {
            return Ok(());
        }
    }
    Err(CniError::new(
        code::INCOMPATIBLE_VERSION,
        format!("plugin version does not allow {name}"),
    ))
}

/// skel's `validateConfig`: the network name must be present and valid.
fn validate_config(conf: &Value) -> Result<(), CniError> {
    let name = match conf.get("name") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(CniError::new(
                code::DECODING_FAILURE,
                format!(
                    "error unmarshall network config: json: cannot unmarshal {} into Go struct field .name of type string",
                    super::conf::go_json_kind(other)
                ),
            ));
        }
    };
    if name.is_empty() {
        return Err(CniError::new(
            code::INVALID_NETWORK_CONFIG,
            "missing network name",
        ));
    }
    validate_network_name(name)
}

fn valid_id_chars(s: &str) -> bool {
    // `^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$` (pkg/utils/utils.go cniReg).
    match s.as_bytes() {
        // Every byte is looked up (a fold, not `all`): a table read and an `and` a byte,
        // where stopping at the first bad one goes byte by byte (an ID is 64).
        [first, rest @ ..] if first.is_ascii_alphanumeric() => rest
            .iter()
            .fold(true, |ok, &b| ok & ID_BYTE[usize::from(b)]),
        _ => false,
    }
}

/// The bytes `cniReg` allows after the first: ASCII letters, digits, `_`, `.` and `-`.
const ID_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
        b += 1;
    }
    table
};

/// `utils.ValidateNetworkName`.
pub(crate) fn validate_network_name(name: &str) -> Result<(), CniError> {
    if name.is_empty() {
        return Err(CniError::new(
            code::INVALID_NETWORK_CONFIG,
            "missing network name:",
        ));
    }
    if !valid_id_chars(name) {
        return Err(CniError::new(
            code::INVALID_NETWORK_CONFIG,
            "invalid characters found in network name",
        )
        .with_details(name));
    }
    Ok(())
}

/// `utils.ValidateContainerID`.
pub(crate) fn validate_container_id(id: &str) -> Result<(), CniError> {
    if id.is_empty() {
        return Err(CniError::new(
            code::UNKNOWN_CONTAINER,
            "missing containerID",
        ));
    }
    if !valid_id_chars(id) {
        return Err(
            CniError::new(code::INVALID_ENV, "invalid characters in containerID").with_details(id),
        );
    }
    Ok(())
}

/// `utils.ValidateInterfaceName` (Linux IFNAMSIZ-1 = 15 bytes).
pub(crate) fn validate_ifname(ifname: &str) -> Result<(), CniError> {
    if ifname.is_empty() {
        return Err(CniError::new(code::INVALID_ENV, "interface name is empty"));
    }
    if ifname.len() > 15 {
        return Err(
            CniError::new(code::INVALID_ENV, "interface name is too long")
                .with_details("interface name should be less than 16 characters"),
        );
    }
    if ifname == "." || ifname == ".." {
        return Err(CniError::new(
            code::INVALID_ENV,
            "interface name is . or ..",
        ));
    }
    if ifname
        .chars()
        .any(|c| c == '/' || c == ':' || c.is_whitespace())
    {
        return Err(CniError::new(
            code::INVALID_ENV,
            "interface name contains / or : or whitespace characters",
        ));
    }
    Ok(())
}

/// What a plugin prints on stdout for a reply (nothing for an empty success).
pub fn stdout_of(reply: &PluginReply) -> String {
    match reply {
        Ok(PluginOutput::Result(r)) => print_result(r),
        Ok(PluginOutput::Empty) => String::new(),
        // `versionInfo.Encode` is a json.Encoder: compact, with a newline.
        Ok(PluginOutput::Versions(v)) => {
            format!("{}\n", serde_json::to_string(v).unwrap_or_default())
        }
        Err(e) => e.to_stdout(),
    }
}

/// `types.PrintResult`: the result converted to its `cniVersion`'s layout and printed with
/// four-space indentation.
pub fn print_result(result: &CniResult) -> String {
    let v = result.cni_version.as_str();
    if result.printed_as_current {
        return to_go_json(result);
    }
    if v == "1.0.0" || v == "1.1.0" {
        return to_go_json(result);
    }
    if matches!(v, "0.3.0" | "0.3.1" | "0.4.0") {
        return to_go_json_ordered(&result_040(result));
    }
    to_go_json_ordered(&result_020(result))
}

/// `version` of an address's family, as `types040` labels it.
fn family(v6: bool) -> &'static str {
    if v6 { "6" } else { "4" }
}

/// The 0.3.x/0.4.0 layout (`types040`): each IP carries `version`.
fn result_040(r: &CniResult) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("cniVersion".into(), json!(r.cni_version.as_str()));
    if !r.interfaces.is_empty() {
        let ifs: Vec<Value> = r
            .interfaces
            .iter()
            .map(|i| {
                let mut m = serde_json::Map::new();
                m.insert("name".into(), json!(i.name.as_str()));
                if !i.mac.is_empty() {
                    m.insert("mac".into(), json!(i.mac.to_compact_string().as_str()));
                }
                if let Some(sandbox) = &i.sandbox {
                    m.insert("sandbox".into(), json!(&**sandbox));
                }
                ordered(m, &["name", "mac", "sandbox"])
            })
            .collect();
        out.insert("interfaces".into(), Value::Array(ifs));
    }
    if !r.ips.is_empty() {
        let ips: Vec<Value> = r
            .ips
            .iter()
            .map(|ip| {
                let mut m = serde_json::Map::new();
                m.insert("version".into(), json!(family(ip.address.addr().is_ipv6())));
                if let Some(i) = ip.interface.map(IfIndex::get) {
                    m.insert("interface".into(), json!(i));
                }
                m.insert("address".into(), json!(ip.address.to_string()));
                if let Some(gw) = ip.gateway {
                    m.insert("gateway".into(), json!(gw.to_string()));
                }
                ordered(m, &["version", "interface", "address", "gateway"])
            })
            .collect();
        out.insert("ips".into(), Value::Array(ips));
    }
    if !r.routes.is_empty() {
        out.insert("routes".into(), json!(r.routes));
    }
    out.insert("dns".into(), json!(r.dns()));
    ordered(out, &["cniVersion", "interfaces", "ips", "routes", "dns"])
}

/// The 0.1.0/0.2.0 layout (`types020`): one `ip4` and one `ip6` block.
fn result_020(r: &CniResult) -> Value {
    let mut out = serde_json::Map::new();
    // `convert.Convert` reads an empty target version as 0.1.0, and that is the label.
    let label = if r.cni_version.is_empty() {
        "0.1.0"
    } else {
        r.cni_version.as_str()
    };
    out.insert("cniVersion".into(), json!(label));
    for fam in ["4", "6"] {
        if let Some(ip) = r
            .ips
            .iter()
            .find(|ip| family(ip.address.addr().is_ipv6()) == fam)
        {
            let mut m = serde_json::Map::new();
            m.insert("ip".into(), json!(ip.address.to_string()));
            if let Some(gw) = ip.gateway {
                m.insert("gateway".into(), json!(gw.to_string()));
            }
            let routes: Vec<_> = r
                .routes
                .iter()
                .filter(|rt| family(rt.dst.is_some_and(|d| d.addr().is_ipv6())) == fam)
                .collect();
            if !routes.is_empty() {
                m.insert("routes".into(), json!(routes));
            }
            out.insert(format!("ip{fam}"), ordered(m, &["ip", "gateway", "routes"]));
        }
    }
    out.insert("dns".into(), json!(r.dns()));
    ordered(out, &["cniVersion", "ip4", "ip6", "dns"])
}

/// serde_json's map is sorted; Go prints struct fields in declaration order. Rebuild the
/// object through a struct-like serializer that keeps `order`.
fn ordered(map: serde_json::Map<String, Value>, order: &[&str]) -> Value {
    // The values are re-emitted by `OrderedObject` when printed.
    let pairs: Vec<(String, Value)> = order
        .iter()
        .filter_map(|k| map.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    json!({ ORDERED_MARKER: pairs })
}

/// A marker key for objects whose field order matters (see [`to_go_json_ordered`]).
const ORDERED_MARKER: &str = "\u{0}ordered";

/// Print a value built with [`ordered`] keeping field order.
pub(crate) fn to_go_json_ordered(v: &Value) -> String {
    to_go_json(&OrderedRef(v))
}

struct OrderedRef<'a>(&'a Value);

impl serde::Serialize for OrderedRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(m) => {
                if let Some(Value::Array(pairs)) = m.get(ORDERED_MARKER) {
                    let mut map = s.serialize_map(Some(pairs.len()))?;
                    for p in pairs {
                        if let Value::Array(kv) = p {
                            if let (Some(Value::String(k)), Some(v)) = (kv.first(), kv.get(1)) {
                                map.serialize_entry(k, &OrderedRef(v))?;
                            }
                        }
                    }
                    map.end()
                } else {
                    let mut map = s.serialize_map(Some(m.len()))?;
                    for (k, v) in m {
                        map.serialize_entry(k, &OrderedRef(v))?;
                    }
                    map.end()
                }
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&OrderedRef(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cni::types::IpConfig;

    #[test]
    fn ids_take_cni_reg_s_bytes_only() {
        // `^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$`, byte by byte after an allowed first one.
        for b in 0..=u8::MAX {
            let allowed = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
            let id = [b'a', b, b'z'];
            let id = String::from_utf8_lossy(&id);
            assert_eq!(valid_id_chars(&id), allowed, "byte {b:#04x} in {id:?}");
        }
        assert!(!valid_id_chars("-leading") && !valid_id_chars("") && valid_id_chars("a"));
        assert!(!valid_id_chars("caf\u{e9}"), "a non-ASCII byte is refused");
    }

    /// host-local behind skel on a node of `release`, with this env and config.
    fn run_host_local(release: PluginsRelease, env: &CniEnv, conf: Value) -> PluginReply {
        let registry = crate::cni::registry::Registry::empty().with_release(release);
        let mut host = crate::cni::host::Host::new(
            "n",
            "192.168.0.10",
            "02:00:00:00:00:01".parse().expect("a MAC"),
        );
        let mut ctx = PluginCtx {
            host: &mut host,
            registry: &registry,
            delegations: Default::default(),
            faults: None,
            kube: None,
        };
        dispatch(
            &crate::cni::plugins::host_local::HostLocal,
            &mut ctx,
            env,
            &Stdin::from_conf(conf),
        )
    }

    /// What Debian's 1.1.1 host-local answered (the differential test runs the same).
    #[test]
    fn release_1_1_1_has_no_gc_or_status_and_reports_spec_1_0_0() {
        let conf = json!({"cniVersion": "1.1.0", "name": "n", "type": "host-local",
            "ipam": {"subnet": "10.1.0.0/24"}});
        let env = |cmd, id: &str, ifname: &str| CniEnv {
            command: Some(cmd),
            container_id: id.into(),
            ifname: ifname.into(),
            netns: if cmd == CniCommand::Add {
                "/x".into()
            } else {
                std::sync::Arc::default()
            },
            path: "/opt/cni/bin".into(),
            ..Default::default()
        };
        let old = PluginsRelease::V1_1_1;
        let v = run_host_local(old, &env(CniCommand::Version, "", ""), conf.clone());
        assert_eq!(
            stdout_of(&v),
            "{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"0.1.0\",\"0.2.0\",\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\"]}\n"
        );
        let gc = run_host_local(old, &env(CniCommand::Gc, "", ""), conf.clone()).unwrap_err();
        assert_eq!((gc.code, gc.msg.as_str()), (3, "missing containerID"));
        let gc = run_host_local(old, &env(CniCommand::Gc, "c1", "eth0"), conf.clone());
        let gc = gc.unwrap_err();
        assert_eq!((gc.code, gc.msg.as_str()), (4, "unknown CNI_COMMAND: GC"));
        let add = run_host_local(old, &env(CniCommand::Add, "c1", "eth0"), conf.clone());
        assert_eq!(add.unwrap_err().msg, "incompatible CNI versions");
        // The default release: GC is a command (host-local has nothing to collect).
        let new = PluginsRelease::V1_9_1;
        assert!(run_host_local(new, &env(CniCommand::Gc, "", ""), conf.clone()).is_ok());
        let v = run_host_local(new, &env(CniCommand::Version, "", ""), conf);
        assert!(stdout_of(&v).starts_with("{\"cniVersion\":\"1.1.0\""));
    }

    #[test]
    fn missing_env_names_every_variable() {
        let env = CniEnv {
            command: Some(CniCommand::Add),
            ..Default::default()
        };
        let e = check_required_env(CniCommand::Add, &env, PluginsRelease::default()).unwrap_err();
        assert_eq!(e.code, 4);
        assert_eq!(
            e.msg,
            "required env variables [CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME,CNI_PATH] missing"
        );
    }

    #[test]
    fn ifname_rules() {
        assert!(validate_ifname("eth0").is_ok());
        assert_eq!(
            validate_ifname("a-very-long-ifname").unwrap_err().msg,
            "interface name is too long"
        );
        assert!(validate_ifname("a:b").is_err());
        assert_eq!(
            validate_container_id("").unwrap_err().code,
            code::UNKNOWN_CONTAINER
        );
        assert_eq!(
            validate_container_id("-x").unwrap_err().code,
            code::INVALID_ENV
        );
    }

    #[test]
    fn prints_040_with_ip_version() {
        let r = CniResult {
            cni_version: "0.4.0".into(),
            ips: vec![IpConfig {
                address: "10.1.2.2/24".parse().unwrap(),
                gateway: "10.1.2.1".parse().ok(),
                interface: None,
            }]
            .into(),
            ..Default::default()
        };
        let s = print_result(&r);
        assert!(
            s.contains("\"version\": \"4\",\n            \"address\""),
            "{s}"
        );
        assert!(s.starts_with("{\n    \"cniVersion\": \"0.4.0\""));
    }
}
