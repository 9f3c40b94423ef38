//! `k8s.v1.cni.cncf.io/networks`, parsed as Multus parses it at sandbox time
//! (`multus-cni: pkg/k8sclient/k8sclient.go` parsePodNetworkAnnotation,
//! parsePodNetworkObjectName). The API server stores any string; a bad value fails the
//! pod's CNI ADD with these messages.
//!
//! - A value containing `[`, `{` or `"` is a JSON list of selection elements (`name`,
//!   `namespace`, `ips`, `mac`, `interface`, …).
//! - Anything else is a comma list of `[<ns>/]<name>[@<ifname>]`, whitespace trimmed; ns and
//!   name must be DNS-1123 labels, the ifname at most 15 bytes with no `/` or whitespace.

use serde_json::Value;

/// One network the pod asks for (`types.NetworkSelectionElement`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    /// The NetworkAttachmentDefinition's name.
    pub name: String,
    /// Its namespace (the pod's when not given).
    pub namespace: String,
    /// `interface` / `@ifname`: the name to give the interface in the pod.
    pub interface: String,
    /// `ips`: static addresses (CIDR or bare IP).
    pub ips: Vec<String>,
    /// `mac`.
    pub mac: String,
    /// `infiniband-guid`.
    pub infiniband_guid: String,
    /// `portMappings`, passed as the capability arg.
    pub port_mappings: Option<Value>,
    /// `bandwidth`, passed as the capability arg.
    pub bandwidth: Option<Value>,
    /// `deviceID`.
    pub device_id: String,
    /// `cni-args`, merged into the delegate's `args.cni`.
    pub cni_args: Option<serde_json::Map<String, Value>>,
    /// `default-route`: gateways for the pod's default route through this interface.
    pub default_route: Vec<String>,
}

/// The wrapper every parse error carries.
const PREFIX: &str = "parsePodNetworkAnnotation";

/// Parse the annotation value (see the module doc); errors are Multus's texts.
pub fn parse(value: &str, default_ns: &str) -> Result<Vec<Selection>, String> {
    if value.is_empty() {
        return Err(format!(
            "{PREFIX}: pod annotation does not have \"network\" as key"
        ));
    }
    let mut nets = if value.contains(['[', '{', '"']) {
        parse_json(value).map_err(|e| {
            format!(
                "{PREFIX}: failed to parse pod Network Attachment Selection Annotation JSON format: {e}"
            )
        })?
    } else {
        let mut v = Vec::new();
        for item in value.split(',') {
            let (ns, name, ifname) =
                parse_object_name(item.trim()).map_err(|e| format!("{PREFIX}: {e}"))?;
            v.push(Selection {
                name,
                namespace: ns,
                interface: ifname,
                ..Default::default()
            });
        }
        v
    };
    for n in &mut nets {
        if n.namespace.is_empty() {
            n.namespace = default_ns.to_string();
        }
        if !n.mac.is_empty() {
            parse_mac(&n.mac).map_err(|e| format!("{PREFIX}: failed to mac: {e}"))?;
        }
        if !n.infiniband_guid.is_empty() {
            parse_mac(&n.infiniband_guid)
                .map_err(|e| format!("{PREFIX}: failed to validate infiniband GUID: {e}"))?;
        }
        for ip in &n.ips {
            if ip.contains('/') {
                if ip.parse::<ipnet::IpNet>().is_err() {
                    return Err(format!(
                        "failed to parse CIDR {ip:?}: invalid CIDR address: {ip}"
                    ));
                }
            } else if ip.parse::<std::net::IpAddr>().is_err() {
                return Err(format!("failed to parse IP address {ip:?}"));
            }
        }
    }
    Ok(nets)
}

fn is_dns_label(s: &str) -> bool {
    // ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(b[0])
        && alnum(b[b.len() - 1])
        && b.iter().all(|&c| alnum(c) || c == b'-')
}

/// `parsePodNetworkObjectName`: `[<ns>/]<name>[@<ifname>]` → (ns, name, ifname).
fn parse_object_name(item: &str) -> Result<(String, String, String), String> {
    const F: &str = "parsePodNetworkObjectName";
    let slash: Vec<&str> = item.split('/').collect();
    let (ns, rest) = match slash.as_slice() {
        [one] => ("", *one),
        [ns, name] => (ns.trim(), *name),
        _ => return Err(format!("{F}: Invalid network object (failed at '/')")),
    };
    let at: Vec<&str> = rest.split('@').collect();
    let (name, ifname) = match at.as_slice() {
        [n] => (n.trim(), ""),
        [n, i] => (n.trim(), i.trim()),
        _ => return Err(format!("{F}: Invalid network object (failed at '@')")),
    };
    for s in [ns, name] {
        if !s.is_empty() && !is_dns_label(s) {
            return Err(format!(
                "{F}: Failed to parse: one or more items did not match comma-delimited format (must consist of lower case alphanumeric characters). Must start and end with an alphanumeric character), mismatch @ '{s}'"
            ));
        }
    }
    if !ifname.is_empty()
        && (ifname.len() > 15 || ifname.contains([' ', '\t', '\n', '\x0b', '\x0c', '\r', '/']))
    {
        return Err(format!(
            "{F}: Failed to parse interface name: must be less than 15 chars and not contain '/' or spaces. interface name '{ifname}'"
        ));
    }
    Ok((ns.to_string(), name.to_string(), ifname.to_string()))
}

/// Go's `net.ParseMAC` ([`crate::cni::host::parse_hardware_addr`]: 6, 8 or 20 bytes in the
/// colon, hyphen or dotted form); the error is Go's `address <s>: invalid MAC address`.
pub(crate) fn parse_mac(s: &str) -> Result<(), String> {
    crate::cni::host::parse_hardware_addr(s)
        .map(drop)
        .map_err(|_| format!("address {s}: invalid MAC address"))
}

/// Decode the JSON form into selection elements, with Go's decoder wording for the
/// errors a learner meets (a syntax error, a field of the wrong type, not a list).
fn parse_json(text: &str) -> Result<Vec<Selection>, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| crate::cni::go_json::syntax_error(text, &e))?;
    let Value::Array(items) = v else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type []*types.NetworkSelectionElement",
            go_kind(&v)
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let obj = match item {
            Value::Null => serde_json::Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type types.NetworkSelectionElement",
                    go_kind(&other)
                ));
            }
        };
        let string = |key: &str, field: &str| -> Result<String, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(field_error(other, field, "string")),
            }
        };
        let mut s = Selection {
            name: string("name", "name")?,
            namespace: string("namespace", "namespace")?,
            interface: string("interface", "interface")?,
            mac: string("mac", "mac")?,
            infiniband_guid: string("infiniband-guid", "infiniband-guid")?,
            device_id: string("deviceID", "deviceID")?,
            ..Default::default()
        };
        // `interfaceRequest`: the pre-3.2 spelling, used when `interface` is empty.
        if s.interface.is_empty() {
            s.interface = string("interfaceRequest", "interfaceRequest")?;
        }
        s.ips = string_list(obj.get("ips"), "ips")?;
        s.default_route = string_list(obj.get("default-route"), "default-route")?;
        match obj.get("portMappings") {
            None | Some(Value::Null) => {}
            Some(v @ Value::Array(_)) => s.port_mappings = Some(v.clone()),
            Some(other) => return Err(field_error(other, "portMappings", "[]*types.PortMapEntry")),
        }
        match obj.get("bandwidth") {
            None | Some(Value::Null) => {}
            Some(v @ Value::Object(_)) => s.bandwidth = Some(v.clone()),
            Some(other) => return Err(field_error(other, "bandwidth", "types.BandwidthEntry")),
        }
        match obj.get("cni-args") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => s.cni_args = Some(m.clone()),
            Some(other) => {
                return Err(field_error(other, "cni-args", "map[string]interface {}"));
            }
        }
        out.push(s);
    }
    Ok(out)
}

fn string_list(v: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.clone()),
                Value::Null => Ok(String::new()),
                other => Err(field_error(other, field, "string")),
            })
            .collect(),
        Some(other) => Err(field_error(other, field, "[]string")),
    }
}

fn field_error(v: &Value, field: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field NetworkSelectionElement.{field} of type {go_type}",
        go_kind(v)
    )
}

fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_with_namespaces_and_ifnames() {
        let v = parse(" macvlan-conf@macvlan1 , other/b ,c", "default").unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (
                v[0].namespace.as_str(),
                v[0].name.as_str(),
                v[0].interface.as_str()
            ),
            ("default", "macvlan-conf", "macvlan1")
        );
        assert_eq!(
            (v[1].namespace.as_str(), v[1].name.as_str()),
            ("other", "b")
        );
        assert_eq!(v[2].interface, "");
    }

    #[test]
    fn text_form_errors() {
        let p = "parsePodNetworkAnnotation: parsePodNetworkObjectName: ";
        assert_eq!(
            parse("Macvlan-Conf", "default").unwrap_err(),
            format!(
                "{p}Failed to parse: one or more items did not match comma-delimited format (must consist of lower case alphanumeric characters). Must start and end with an alphanumeric character), mismatch @ 'Macvlan-Conf'"
            )
        );
        assert_eq!(
            parse("a/b/c", "default").unwrap_err(),
            format!("{p}Invalid network object (failed at '/')")
        );
        assert_eq!(
            parse("a@b@c", "default").unwrap_err(),
            format!("{p}Invalid network object (failed at '@')")
        );
        assert_eq!(
            parse("a@averyveryverylongname", "default").unwrap_err(),
            format!(
                "{p}Failed to parse interface name: must be less than 15 chars and not contain '/' or spaces. interface name 'averyveryverylongname'"
            )
        );
        assert_eq!(
            parse("Bad_NS/a", "default").unwrap_err(),
            format!(
                "{p}Failed to parse: one or more items did not match comma-delimited format (must consist of lower case alphanumeric characters). Must start and end with an alphanumeric character), mismatch @ 'Bad_NS'"
            )
        );
        // An empty item (a trailing comma) passes the parser with an empty name; the GET
        // of that NAD is what fails.
        assert_eq!(parse("a,", "default").unwrap()[1].name, "");
        assert_eq!(
            parse("", "default").unwrap_err(),
            "parsePodNetworkAnnotation: pod annotation does not have \"network\" as key"
        );
    }

    #[test]
    fn json_form() {
        let v = parse(
            r#"[{"name":"macvlan-conf","interface":"eth9","ips":["10.10.0.5/24"],"mac":"ca:fe:c0:ff:ee:00"},{"name":"b","namespace":"x"}]"#,
            "default",
        )
        .unwrap();
        assert_eq!(v[0].interface, "eth9");
        assert_eq!(v[0].ips, vec!["10.10.0.5/24".to_string()]);
        assert_eq!(v[0].namespace, "default");
        assert_eq!(v[1].namespace, "x");
    }

    #[test]
    fn json_form_errors() {
        let p = "parsePodNetworkAnnotation: failed to parse pod Network Attachment Selection Annotation JSON format: ";
        assert_eq!(
            parse(r#"[{"name":1}]"#, "default").unwrap_err(),
            format!(
                "{p}json: cannot unmarshal number into Go struct field NetworkSelectionElement.name of type string"
            )
        );
        assert_eq!(
            parse(r#"{"name":"a"}"#, "default").unwrap_err(),
            format!(
                "{p}json: cannot unmarshal object into Go value of type []*types.NetworkSelectionElement"
            )
        );
        assert_eq!(
            parse(r#"[{"name":"a"}"#, "default").unwrap_err(),
            format!("{p}unexpected end of JSON input")
        );
        assert_eq!(
            parse(r#"[x]"#, "default").unwrap_err(),
            format!("{p}invalid character 'x' looking for beginning of value")
        );
        assert_eq!(
            parse(r#"[{"name":"a"} {}]"#, "default").unwrap_err(),
            format!("{p}invalid character '{{' after array element")
        );
        assert_eq!(
            crate::cni::go_json::syntax_error(
                "not json",
                &serde_json::from_str::<Value>("not json").unwrap_err()
            ),
            "invalid character 'o' in literal null (expecting 'u')"
        );
        assert_eq!(
            parse(r#"[{"name":"a","mac":"zz:11"}]"#, "default").unwrap_err(),
            "parsePodNetworkAnnotation: failed to mac: address zz:11: invalid MAC address"
        );
        assert_eq!(
            parse(r#"[{"name":"a","ips":["10.1.1.1/99"]}]"#, "default").unwrap_err(),
            "failed to parse CIDR \"10.1.1.1/99\": invalid CIDR address: 10.1.1.1/99"
        );
        assert_eq!(
            parse(r#"[{"name":"a","ips":["10.1.1"]}]"#, "default").unwrap_err(),
            "failed to parse IP address \"10.1.1\""
        );
    }

    #[test]
    fn macs() {
        assert!(parse_mac("ca:fe:c0:ff:ee:00").is_ok());
        assert!(parse_mac("CA-FE-C0-FF-EE-00").is_ok());
        assert!(parse_mac("cafe.c0ff.ee00").is_ok());
        assert!(parse_mac("ca:fe:c0:ff:ee").is_err());
        assert!(parse_mac("ca:fe:c0:ff:ee:0g").is_err());
    }
}
