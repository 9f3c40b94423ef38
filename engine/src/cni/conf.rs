//! Network configuration lists as libcni parses them (`libcni/conf.go`), with its
//! validation and its exact error texts, and `/etc/cni/net.d` with the runtime's rule that
//! the first file in lexical order wins.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One plugin object of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConf {
    /// `type`: the binary name.
    pub plugin_type: String,
    /// The plugin object's own `name`, if it has one (libcni names plugins by it in errors).
    pub name: String,
    /// `capabilities` the plugin declared true.
    pub capabilities: Vec<String>,
    /// The plugin object exactly as written (unknown keys kept, as runtimes must).
    pub raw: Value,
}

impl PluginConf {
    /// libcni's `pluginDescription`: `type="bridge"` plus ` name="x"` when the object has one.
    pub fn description(&self) -> String {
        if self.name.is_empty() {
            format!("type={:?}", self.plugin_type)
        } else {
            format!("type={:?} name={:?}", self.plugin_type, self.name)
        }
    }
}

/// A parsed `.conflist` (or a single `.conf` turned into a list).
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfigList {
    /// `name`.
    pub name: String,
    /// The selected version: the highest of `cniVersion` and `cniVersions` not newer than
    /// the library's.
    pub cni_version: String,
    /// `disableCheck`.
    pub disable_check: bool,
    /// `disableGC`.
    pub disable_gc: bool,
    /// `loadOnlyInlinedPlugins`.
    pub load_only_inlined_plugins: bool,
    /// The chain, in order.
    pub plugins: Vec<PluginConf>,
}

/// The Go type name `%T` prints for a decoded JSON value.
pub(crate) fn go_json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The JSON type name Go's decoder uses in "cannot unmarshal X into …".
fn go_unmarshal_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

const LIST_ERR: &str = "error parsing configuration list";

/// `libcni.ConfListFromBytes`.
pub(crate) fn conflist_from_str(text: &str) -> Result<NetworkConfigList, String> {
    let raw: Value = serde_json::from_str(text)
        .map_err(|e| format!("{LIST_ERR}: {}", super::go_json::syntax_error(text, &e)))?;
    conflist_from_value(raw)
}

/// `libcni.ConfListFromBytes` after the JSON is decoded: the list's checks, in its order.
fn conflist_from_value(raw: Value) -> Result<NetworkConfigList, String> {
    let Value::Object(mut list) = raw else {
        return Err(format!(
            "{LIST_ERR}: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_unmarshal_kind(&raw)
        ));
    };
    let name = match list.get("name") {
        None => return Err(format!("{LIST_ERR}: no name")),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "{LIST_ERR}: invalid name type {}",
                go_json_kind(other)
            ));
        }
    };
    let mut cni_version = match list.get("cniVersion") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "{LIST_ERR}: invalid cniVersion type {}",
                go_json_kind(other)
            ));
        }
    };
    if let Some(raw_versions) = list.get("cniVersions") {
        cni_version = select_version(raw_versions, &cni_version)?;
    }
    let read_bool = |key: &str| -> Result<bool, String> {
        match list.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) => match s.to_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                lower => Err(format!("{LIST_ERR}: invalid value {lower:?} for {key}")),
            },
            Some(other) => Err(format!(
                "{LIST_ERR}: invalid type {} for {key}",
                go_json_kind(other)
            )),
        }
    };
    let disable_check = read_bool("disableCheck")?;
    let disable_gc = read_bool("disableGC")?;
    let load_only_inlined_plugins = read_bool("loadOnlyInlinedPlugins")?;
    let mut out = NetworkConfigList {
        name,
        cni_version,
        disable_check,
        disable_gc,
        load_only_inlined_plugins,
        plugins: Vec::new(),
    };
    let plugins = match list.remove("plugins") {
        None if load_only_inlined_plugins => {
            return Err(format!(
                "{LIST_ERR}: `loadOnlyInlinedPlugins` is true, and no 'plugins' key"
            ));
        }
        // libcni accepts a list with no plugins key (plugins may come from a sibling
        // directory); the lab has no such directory, so the list is empty.
        None => return Ok(out),
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(format!(
                "{LIST_ERR}: invalid 'plugins' type {}",
                go_json_kind(&other)
            ));
        }
    };
    if plugins.is_empty() {
        return Err(format!("{LIST_ERR}: no plugins in list"));
    }
    for (i, p) in plugins.into_iter().enumerate() {
        let conf =
            plugin_from_value(p).map_err(|e| format!("failed to parse plugin config {i}: {e}"))?;
        out.plugins.push(conf);
    }
    Ok(out)
}

/// The highest version of `cniVersions` ∪ {cniVersion}, dropping ones newer than ours.
fn select_version(raw: &Value, cni_version: &str) -> Result<String, String> {
    // `rvs, ok := rawVersions.([]interface{})` then `%T` of rvs, which a failed assertion
    // leaves the zero `[]interface{}`: the text names that type whatever the JSON held.
    let Value::Array(items) = raw else {
        return Err(format!(
            "{LIST_ERR}: invalid type for cniVersions: []interface {{}}"
        ));
    };
    let current = super::version::parse(super::version::CURRENT).unwrap_or((1, 1, 0));
    let mut versions: Vec<((i64, i64, i64), String)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::String(v) = item else {
            return Err(format!(
                "{LIST_ERR}: invalid type for cniVersions index {i}: {}",
                go_json_kind(item)
            ));
        };
        let parsed = super::version::parse(v)
            .map_err(|e| format!("{LIST_ERR}: invalid cniVersions entry {v} at index {i}: {e}"))?;
        if parsed <= current {
            versions.push((parsed, v.clone()));
        }
    }
    if !cni_version.is_empty() {
        let parsed = super::version::parse(cni_version)
            .map_err(|e| format!("{LIST_ERR}: invalid cniVersion {cni_version}: {e}"))?;
        if parsed <= current {
            versions.push((parsed, cni_version.to_string()));
        }
    }
    versions.sort();
    Ok(versions
        .pop()
        .map(|(_, v)| v)
        .unwrap_or_else(|| cni_version.to_string()))
}

/// `libcni.ConfFromBytes` for one plugin object.
fn plugin_from_value(p: Value) -> Result<PluginConf, String> {
    const ERR: &str = "error parsing configuration";
    let Value::Object(obj) = &p else {
        return Err(format!(
            "{ERR}: json: cannot unmarshal {} into Go value of type types.PluginConf",
            go_unmarshal_kind(&p)
        ));
    };
    let str_field = |key: &str| -> Result<String, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!(
                "{ERR}: json: cannot unmarshal {} into Go struct field PluginConf.{key} of type string",
                go_unmarshal_kind(other)
            )),
        }
    };
    let plugin_type = str_field("type")?;
    let name = str_field("name")?;
    let mut capabilities = Vec::new();
    match obj.get("capabilities") {
        None | Some(Value::Null) => {}
        Some(Value::Object(caps)) => {
            for (k, v) in caps {
                match v {
                    Value::Bool(true) => capabilities.push(k.clone()),
                    Value::Bool(false) => {}
                    other => {
                        return Err(format!(
                            "{ERR}: json: cannot unmarshal {} into Go struct field PluginConf.capabilities of type bool",
                            go_unmarshal_kind(other)
                        ));
                    }
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "{ERR}: json: cannot unmarshal {} into Go struct field PluginConf.capabilities of type map[string]bool",
                go_unmarshal_kind(other)
            ));
        }
    }
    if plugin_type.is_empty() {
        return Err(format!("{ERR}: missing 'type'"));
    }
    Ok(PluginConf {
        plugin_type,
        name,
        capabilities,
        raw: p,
    })
}

/// `libcni.ConfListFromConf`: a single-plugin `.conf` becomes a one-element list.
pub(crate) fn conflist_from_single_conf(text: &str) -> Result<NetworkConfigList, String> {
    let raw: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "error parsing configuration: {}",
            super::go_json::syntax_error(text, &e)
        )
    })?;
    single_conf_from_value(raw)
}

/// `libcni.ConfListFromConf` after the JSON is decoded.
fn single_conf_from_value(raw: Value) -> Result<NetworkConfigList, String> {
    let name = raw
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let cni_version = raw
        .get("cniVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let plugin = plugin_from_value(raw)?;
    Ok(NetworkConfigList {
        name,
        cni_version,
        disable_check: false,
        disable_gc: false,
        load_only_inlined_plugins: false,
        plugins: vec![plugin],
    })
}

/// Parse a file by its extension, as `libcni.LoadConfList` does: `.conflist` as a list,
/// `.conf`/`.json` as a single plugin.
pub(crate) fn parse_file(file_name: &str, text: &str) -> Result<NetworkConfigList, String> {
    if file_name.ends_with(".conflist") {
        conflist_from_str(text)
    } else if file_name.ends_with(".conf") || file_name.ends_with(".json") {
        // A .conf that is really a list is read as one (libcni: "a conf with plugins").
        let is_list = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("plugins").map(|_| ()))
            .is_some();
        if is_list {
            conflist_from_str(text)
        } else {
            conflist_from_single_conf(text)
        }
    } else {
        Err(format!(
            "{file_name}: not a CNI config file (accepted extensions: .conflist, .conf, .json)"
        ))
    }
}

/// [`parse_file`] of a text whose JSON is already decoded (`raw`): the same answer, as the
/// decoding is the only step that reads the text.
fn parse_file_value(file_name: &str, raw: Value) -> Result<NetworkConfigList, String> {
    if file_name.ends_with(".conflist") {
        conflist_from_value(raw)
    } else if file_name.ends_with(".conf") || file_name.ends_with(".json") {
        if raw.get("plugins").is_some() {
            conflist_from_value(raw)
        } else {
            single_conf_from_value(raw)
        }
    } else {
        Err(format!(
            "{file_name}: not a CNI config file (accepted extensions: .conflist, .conf, .json)"
        ))
    }
}

/// A template's decoded JSON, when filling in a podCIDR after decoding gives what decoding
/// the filled-in text gives: the template is valid JSON, no object key holds
/// [`POD_CIDR_PLACEHOLDER`], and every placeholder of the text is in a string value as
/// written (none made by a `\u` escape). Then each placeholder is in a string literal
/// whose other bytes decode alone, and a podCIDR with no `"`, `\` or control character
/// decodes as itself. `None` when the template is not like that.
fn decoded_template(template: &str) -> Option<Value> {
    fn count(v: &Value, keys: &mut usize) -> usize {
        match v {
            Value::String(s) => s.matches(POD_CIDR_PLACEHOLDER).count(),
            Value::Array(a) => a.iter().map(|v| count(v, keys)).sum(),
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| {
                    *keys += k.matches(POD_CIDR_PLACEHOLDER).count();
                    count(v, keys)
                })
                .sum(),
            _ => 0,
        }
    }
    let raw: Value = serde_json::from_str(template).ok()?;
    let mut in_keys = 0;
    let in_values = count(&raw, &mut in_keys);
    (in_keys == 0 && in_values == template.matches(POD_CIDR_PLACEHOLDER).count()).then_some(raw)
}

/// `template` (see [`decoded_template`]) with `pod_cidr` in place of every placeholder.
fn fill_in(template: &Value, pod_cidr: &str) -> Value {
    match template {
        Value::String(s) if s.contains(POD_CIDR_PLACEHOLDER) => {
            Value::String(s.replace(POD_CIDR_PLACEHOLDER, pod_cidr))
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| fill_in(v, pod_cidr)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), fill_in(v, pod_cidr)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Templates decoded so far, by the address of their shared text (`None`: a template that
/// must be filled in before decoding). Every node of a cluster holds the same template,
/// so a runtime loading its network decodes the JSON once for all of them. An entry's
/// `Weak` keeps the text's allocation reserved, so an address names one text for as long
/// as its entry lives; bounded, so one-off texts cannot grow it.
type TemplateMemo = std::collections::HashMap<usize, (std::sync::Weak<str>, Option<Arc<Value>>)>;

thread_local! {
    static TEMPLATES: std::cell::RefCell<TemplateMemo> =
        std::cell::RefCell::new(TemplateMemo::new());
}

/// At most this many templates are remembered; when full, the memo starts over.
const TEMPLATE_MEMO_CAPACITY: usize = 64;

/// The decoded template of `template`, from the memo or decoded now.
fn template_value(template: &Arc<str>) -> Option<Arc<Value>> {
    let addr = Arc::as_ptr(template) as *const u8 as usize;
    TEMPLATES.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some((weak, value)) = memo.get(&addr)
            && std::ptr::addr_eq(weak.as_ptr(), Arc::as_ptr(template))
        {
            return value.clone();
        }
        let value = decoded_template(template).map(Arc::new);
        if memo.len() >= TEMPLATE_MEMO_CAPACITY {
            memo.clear();
        }
        memo.insert(addr, (Arc::downgrade(template), value.clone()));
        value
    })
}

/// [`parse_file`] of a file as a node holds it. A template filled in with the node's
/// podCIDR is decoded once for every node that holds it ([`template_value`]), then filled
/// in; checked against decoding the node's text in debug builds.
pub(crate) fn parse_conf_text(
    file_name: &str,
    text: &ConfText,
) -> Result<NetworkConfigList, String> {
    let fast = match &text.pod_cidr {
        Some(cidr) if !cidr.contains(|c: char| c == '"' || c == '\\' || c.is_control()) => {
            template_value(&text.shared)
                .map(|template| parse_file_value(file_name, fill_in(&template, cidr)))
        }
        _ => None,
    };
    match fast {
        Some(parsed) => {
            debug_assert_eq!(parsed, parse_file(file_name, &text.text()));
            parsed
        }
        None => parse_file(file_name, &text.text()),
    }
}

/// The placeholder a conflist may hold for the node's podCIDR (filled in per node).
pub(crate) const POD_CIDR_PLACEHOLDER: &str = "{{.PodCIDR}}";

/// The most bytes of conflists all the nodes' `/etc/cni/net.d` may hold together: 64 MiB.
/// A file loaded on every node at once is held once and counts once (a templated one as
/// its template); a file loaded node by node counts once per load. A `cni conf load` that
/// would pass it is refused and changes nothing.
pub const NET_D_CAP: u64 = 64 << 20;

/// The text of one file in `/etc/cni/net.d`. Nodes share it: a file that is the same on
/// every node is one shared copy, and a file with [`POD_CIDR_PLACEHOLDER`] is one shared
/// template plus the node's podCIDR, filled in when read. Nodes diverge only when a
/// node-specific load gives one of them a text of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfText {
    /// The text, or the template when `pod_cidr` is set; shared between nodes.
    shared: Arc<str>,
    /// The podCIDR filled in for [`POD_CIDR_PLACEHOLDER`] (`None`: the text as it is).
    pod_cidr: Option<Arc<str>>,
}

impl ConfText {
    /// A text the same on every node that holds it.
    pub fn same(text: impl Into<Arc<str>>) -> Self {
        ConfText {
            shared: text.into(),
            pod_cidr: None,
        }
    }

    /// `template` with this node's podCIDR in place of [`POD_CIDR_PLACEHOLDER`] (the
    /// template itself when it has none).
    pub(crate) fn for_node(template: &Arc<str>, pod_cidr: &str) -> Self {
        ConfText {
            shared: Arc::clone(template),
            pod_cidr: template
                .contains(POD_CIDR_PLACEHOLDER)
                .then(|| Arc::from(pod_cidr)),
        }
    }

    /// The file's text as the node holds it.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.pod_cidr {
            Some(cidr) => self.shared.replace(POD_CIDR_PLACEHOLDER, cidr).into(),
            None => std::borrow::Cow::Borrowed(&self.shared),
        }
    }

    /// Whether the text holds `pattern`.
    pub fn contains(&self, pattern: &str) -> bool {
        self.text().contains(pattern)
    }

    /// The shared copy (the text or the template): who else holds the same one, and its
    /// size, for [`ConfDir::held_bytes`].
    pub fn shared(&self) -> &Arc<str> {
        &self.shared
    }
}

impl From<String> for ConfText {
    fn from(text: String) -> Self {
        ConfText::same(text)
    }
}

impl From<&str> for ConfText {
    fn from(text: &str) -> Self {
        ConfText::same(text)
    }
}

impl From<Arc<str>> for ConfText {
    fn from(text: Arc<str>) -> Self {
        ConfText::same(text)
    }
}

/// `/etc/cni/net.d` on one node: file name → contents.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfDir {
    /// Files by name; iteration is lexical order, the order runtimes read them.
    pub files: BTreeMap<String, ConfText>,
}

impl ConfDir {
    /// The bytes the conf directories of `dirs` hold together, each shared copy counted
    /// once (what [`NET_D_CAP`] bounds). `skip` leaves out files about to be replaced.
    pub(crate) fn held_bytes<'a>(
        dirs: impl IntoIterator<Item = (&'a str, &'a ConfDir)>,
        skip: impl Fn(&str, &str) -> bool,
    ) -> u64 {
        let mut seen = std::collections::HashSet::new();
        let mut total = 0u64;
        for (node, dir) in dirs {
            for (name, text) in &dir.files {
                if skip(node, name) {
                    continue;
                }
                let copy = text.shared();
                if seen.insert(Arc::as_ptr(copy) as *const u8 as usize) {
                    total += copy.len() as u64;
                }
            }
        }
        total
    }

    /// The directory's path.
    pub const PATH: &'static str = "/etc/cni/net.d";

    /// The network the runtime uses, as containerd's CRI plugin loads it (go-cni
    /// `loadFromConfDir` with at most one network): the files named `.conf`, `.conflist` or
    /// `.json`, in lexical order; the first one is the network, and if it does not load the
    /// whole load fails with go-cni's error (`cni config load failed: …`), so the node's
    /// runtime has no network at all. Files after the first are never read.
    pub fn active(&self) -> Result<(String, NetworkConfigList), String> {
        let Some((name, text)) = self.files.iter().find(|(name, _)| is_conf_file(name)) else {
            return Err(format!(
                "cni config load failed: no network config found in {}: {CNI_NOT_INITIALIZED}: {ERR_LOAD}",
                Self::PATH
            ));
        };
        let path = format!("{}/{name}", Self::PATH);
        let what = if name.ends_with(".conflist") {
            "config list file"
        } else {
            "config file"
        };
        match parse_conf_text(name, text) {
            Ok(list) => Ok((name.clone(), list)),
            Err(e) => Err(format!(
                "cni config load failed: failed to load CNI {what} {path}: {e}: invalid cni config: {ERR_LOAD}"
            )),
        }
    }
}

/// go-cni's `ErrCNINotInitialized`: what its `Status` (and so every `Setup`) answers while
/// the runtime has no network loaded.
pub const CNI_NOT_INITIALIZED: &str = "cni plugin not initialized";

/// go-cni's `ErrLoad`, the end of every failed `Load`.
const ERR_LOAD: &str = "failed to load cni config";

/// The names go-cni reads from the conf directory (`ConfFiles` with these extensions).
fn is_conf_file(name: &str) -> bool {
    [".conf", ".conflist", ".json"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libcni 1.3.0 `ConfListFromBytes`: `%T` of the failed assertion's zero
    /// `[]interface{}`, whatever `cniVersions` held; an entry as ParseVersion reads it.
    #[test]
    fn cni_versions_errors_read_as_libcni_prints_them() {
        for raw in [r#""1.0.0""#, "1", "{}", "true"] {
            let text = format!(
                r#"{{"cniVersion":"1.0.0","name":"z","cniVersions":{raw},"plugins":[{{"type":"bridge"}}]}}"#
            );
            assert_eq!(
                conflist_from_str(&text).unwrap_err(),
                "error parsing configuration list: invalid type for cniVersions: []interface {}",
                "{raw}"
            );
        }
        let text = r#"{"cniVersion":"1.0.0","name":"z","cniVersions":["x"],"plugins":[{"type":"bridge"}]}"#;
        assert_eq!(
            conflist_from_str(text).unwrap_err(),
            "error parsing configuration list: invalid cniVersions entry x at index 0: failed to convert major version part \"x\": strconv.Atoi: parsing \"x\": invalid syntax"
        );
    }

    #[test]
    fn a_file_that_is_not_json_reads_as_go_reads_it() {
        for (text, want) in [
            ("", "unexpected end of JSON input"),
            (r#"{"name":"x","plugins":["#, "unexpected end of JSON input"),
            (
                "not json",
                "invalid character 'o' in literal null (expecting 'u')",
            ),
            (r#"{"name" "x"}"#, "invalid character '\"' after object key"),
        ] {
            assert_eq!(
                conflist_from_str(text).unwrap_err(),
                format!("error parsing configuration list: {want}"),
                "{text:?}"
            );
        }
        assert_eq!(
            conflist_from_single_conf("{").unwrap_err(),
            "error parsing configuration: unexpected end of JSON input"
        );
    }

    #[test]
    fn libcni_messages() {
        assert_eq!(
            conflist_from_str(r#"{"plugins":[]}"#).unwrap_err(),
            "error parsing configuration list: no name"
        );
        assert_eq!(
            conflist_from_str(r#"{"name":"n","plugins":[]}"#).unwrap_err(),
            "error parsing configuration list: no plugins in list"
        );
        assert_eq!(
            conflist_from_str(r#"{"name":"n","plugins":{}}"#).unwrap_err(),
            "error parsing configuration list: invalid 'plugins' type map[string]interface {}"
        );
        assert_eq!(
            conflist_from_str(r#"{"name":"n","plugins":[{"ipam":{}}]}"#).unwrap_err(),
            "failed to parse plugin config 0: error parsing configuration: missing 'type'"
        );
        assert_eq!(
            conflist_from_str(r#"{"name":"n","loadOnlyInlinedPlugins":true}"#).unwrap_err(),
            "error parsing configuration list: `loadOnlyInlinedPlugins` is true, and no 'plugins' key"
        );
        assert_eq!(
            conflist_from_str(r#"{"name":"n","disableCheck":"maybe","plugins":[{"type":"x"}]}"#)
                .unwrap_err(),
            "error parsing configuration list: invalid value \"maybe\" for disableCheck"
        );
    }

    #[test]
    fn picks_highest_supported_version() {
        let l = conflist_from_str(
            r#"{"name":"n","cniVersion":"0.4.0","cniVersions":["1.0.0","9.9.9"],"disableCheck":"TRUE","plugins":[{"type":"x","capabilities":{"portMappings":true,"bandwidth":false}}]}"#,
        )
        .unwrap();
        assert_eq!(l.cni_version, "1.0.0");
        assert!(l.disable_check);
        assert_eq!(l.plugins[0].capabilities, vec!["portMappings".to_string()]);
    }

    /// A template filled in after decoding reads as the filled-in text does, and a
    /// template where that would not hold (not JSON, the placeholder in a key or made by
    /// an escape) is filled in first: the same list, or the same error, either way.
    #[test]
    fn a_template_decoded_once_reads_as_each_nodes_text() {
        let templates = [
            r#"{"cniVersion":"1.0.0","name":"n","plugins":[{"type":"bridge","ipam":{"type":"host-local","ranges":[[{"subnet":"{{.PodCIDR}}"}]],"note":"x{{.PodCIDR}}y{{.PodCIDR}}"}}]}"#,
            r#"{"cniVersion":"1.0.0","name":"n","plugins":[{"type":"x","{{.PodCIDR}}":1,"a10.1.0.0/24":2}]}"#,
            r#"{"cniVersion":"1.0.0","name":"n","plugins":[{"type":"x","s":"\u007b{.PodCIDR}} {{.PodCIDR}}"}]}"#,
            r#"{"cniVersion":"1.0.0","name":"{{.PodCIDR}}","plugins":[{"type":"x"}]}"#,
            r#"{"cniVersion":"1.0.0","name":"n","disableCheck":"{{.PodCIDR}}","plugins":[{"type":"x"}]}"#,
            r#"{"name":"n","plugins":[{{.PodCIDR}}]}"#,
            r#"{"type":"bridge","name":"n","cniVersion":"1.0.0","subnet":"{{.PodCIDR}}"}"#,
        ];
        for template in templates {
            let shared: Arc<str> = Arc::from(template);
            for cidr in ["10.1.0.0/24", "10.2.0.0/24", "a\"b"] {
                let text = ConfText::for_node(&shared, cidr);
                for file in ["10-x.conflist", "10-x.conf"] {
                    assert_eq!(
                        parse_conf_text(file, &text),
                        parse_file(file, &text.text()),
                        "{template} {cidr} {file}"
                    );
                }
            }
        }
        let eligible: Vec<bool> = templates
            .iter()
            .map(|t| decoded_template(t).is_some())
            .collect();
        assert_eq!(eligible, [true, false, false, true, true, false, true]);
        // A node's list names its own podCIDR.
        let shared: Arc<str> = Arc::from(templates[0]);
        let list =
            parse_conf_text("10-x.conflist", &ConfText::for_node(&shared, "10.9.0.0/24")).unwrap();
        assert_eq!(
            list.plugins[0].raw["ipam"]["ranges"][0][0]["subnet"],
            "10.9.0.0/24"
        );
        // Another text at a new address is decoded afresh, not taken for the old one.
        drop(shared);
        let other: Arc<str> = Arc::from(templates[6]);
        let list =
            parse_conf_text("10-x.conf", &ConfText::for_node(&other, "10.9.0.0/24")).unwrap();
        assert_eq!(list.plugins[0].raw["subnet"], "10.9.0.0/24");
    }

    #[test]
    fn first_file_in_lexical_order_wins() {
        let mut d = ConfDir::default();
        d.files.insert(
            "20-b.conflist".into(),
            ConfText::from(r#"{"name":"b","cniVersion":"1.0.0","plugins":[{"type":"bridge"}]}"#),
        );
        d.files.insert(
            "10-a.conflist".into(),
            ConfText::from(r#"{"name":"a","cniVersion":"1.0.0","plugins":[{"type":"ptp"}]}"#),
        );
        assert_eq!(d.active().unwrap().1.name, "a");
    }

    #[test]
    fn a_first_file_that_does_not_load_fails_the_whole_load_as_go_cni_does() {
        let mut d = ConfDir::default();
        d.files.insert(
            "10-a.conflist".into(),
            ConfText::from(r#"{"name":"a","cniVersion":"1.0.0","plugins":[{"type":"ptp"}]}"#),
        );
        d.files
            .insert("00-broken.conflist".into(), ConfText::from("{"));
        d.files
            .insert("00-notes.txt".into(), ConfText::from("ignored"));
        assert_eq!(
            d.active().unwrap_err(),
            "cni config load failed: failed to load CNI config list file /etc/cni/net.d/00-broken.conflist: error parsing configuration list: unexpected end of JSON input: invalid cni config: failed to load cni config"
        );
        // Sorting after the first network, it is never read.
        d.files.remove("00-broken.conflist");
        d.files.insert("20-broken.conf".into(), ConfText::from("{"));
        assert_eq!(d.active().unwrap().0, "10-a.conflist");
    }
}
