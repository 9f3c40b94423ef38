//! The apiserver's validation of a NetworkPolicy on create, with its exact messages.
//!
//! Sources: kubernetes `pkg/apis/networking/validation/validation.go`
//! (`ValidateNetworkPolicy`, `…Spec`, `…Port`, `…Peer`, `ValidateIPBlock`),
//! apimachinery `pkg/apis/meta/v1/validation` (label selectors, labels),
//! `pkg/util/validation/validation.go` (names, label values, ports) and
//! `pkg/util/validation/field/errors.go` (how one error prints). The order of the errors
//! is the order in which the apiserver finds them; `matchLabels` are checked in key order
//! (Go iterates a map randomly; the lab is deterministic).
//!
//! CIDRs are checked the legacy (non-strict) way, the default while the
//! `StrictIPCIDRValidation` gate is off: `10.0.0.1/8` is accepted and read as `10.0.0.0/8`.

use super::policy::{
    IntOrString, IpBlock, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
};
use crate::cluster::selector::LabelSelector;
use std::fmt;

/// The kind of a field error (`field.ErrorType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldErrorKind {
    /// `Invalid value: <value>`.
    Invalid(String),
    /// `Required value`.
    Required,
    /// `Forbidden`.
    Forbidden,
    /// `Unsupported value: <value>` (the detail lists the supported ones).
    NotSupported(String),
}

/// One `field.Error`: a path, a kind and a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    /// The field path (`spec.ingress[0].ports[0].port`).
    pub field: String,
    /// What is wrong.
    pub kind: FieldErrorKind,
    /// The explanation.
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = match &self.kind {
            FieldErrorKind::Invalid(v) => format!("Invalid value: {v}"),
            FieldErrorKind::Required => "Required value".to_string(),
            FieldErrorKind::Forbidden => "Forbidden".to_string(),
            FieldErrorKind::NotSupported(v) => format!("Unsupported value: {v}"),
        };
        if self.detail.is_empty() {
            write!(f, "{}: {body}", self.field)
        } else {
            write!(f, "{}: {body}: {}", self.field, self.detail)
        }
    }
}

/// A rejected NetworkPolicy: `NetworkPolicy.networking.k8s.io "<name>" is invalid: …`
/// (`apierrors.NewInvalid`; several errors print as `[e1, e2]`, duplicates once).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) struct PolicyInvalid {
    /// The policy's name.
    pub name: String,
    /// Every error found, in order.
    pub errors: Vec<FieldError>,
}

impl fmt::Display for PolicyInvalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut seen: Vec<String> = Vec::new();
        for e in &self.errors {
            let s = e.to_string();
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        let agg = if seen.len() == 1 {
            seen.join("")
        } else {
            format!("[{}]", seen.join(", "))
        };
        write!(
            f,
            "NetworkPolicy.networking.k8s.io {} is invalid: {agg}",
            go_quote(&self.name)
        )
    }
}

/// Validate a NetworkPolicy on create: metadata (name, namespace) then spec.
pub(crate) fn validate_policy(
    namespace: &str,
    name: &str,
    spec: &NetworkPolicySpec,
) -> Result<(), PolicyInvalid> {
    let mut errs = Errs::default();
    if name.is_empty() {
        errs.required("metadata.name", "name or generateName is required");
    } else {
        for msg in is_dns1123_subdomain(name) {
            errs.invalid("metadata.name", go_quote(name), msg);
        }
    }
    if namespace.is_empty() {
        errs.required("metadata.namespace", "");
    } else {
        for msg in is_dns1123_label(namespace) {
            errs.invalid("metadata.namespace", go_quote(namespace), msg);
        }
    }
    validate_spec(spec, "spec", &mut errs);
    if errs.0.is_empty() {
        Ok(())
    } else {
        Err(PolicyInvalid {
            name: name.to_string(),
            errors: errs.0,
        })
    }
}

#[derive(Default)]
struct Errs(Vec<FieldError>);

impl Errs {
    fn push(&mut self, field: &str, kind: FieldErrorKind, detail: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_string(),
            kind,
            detail: detail.into(),
        });
    }
    fn invalid(&mut self, field: &str, value: String, detail: impl Into<String>) {
        self.push(field, FieldErrorKind::Invalid(value), detail);
    }
    fn required(&mut self, field: &str, detail: &str) {
        self.push(field, FieldErrorKind::Required, detail);
    }
    fn forbidden(&mut self, field: &str, detail: &str) {
        self.push(field, FieldErrorKind::Forbidden, detail);
    }
}

fn validate_spec(spec: &NetworkPolicySpec, path: &str, errs: &mut Errs) {
    validate_selector(&spec.pod_selector, &format!("{path}.podSelector"), errs);
    for (i, rule) in spec.ingress.iter().enumerate() {
        let rp = format!("{path}.ingress[{i}]");
        for (j, port) in rule.ports.iter().enumerate() {
            validate_port(port, &format!("{rp}.ports[{j}]"), errs);
        }
        for (j, peer) in rule.from.iter().enumerate() {
            validate_peer(peer, &format!("{rp}.from[{j}]"), errs);
        }
    }
    for (i, rule) in spec.egress.iter().enumerate() {
        let rp = format!("{path}.egress[{i}]");
        for (j, port) in rule.ports.iter().enumerate() {
            validate_port(port, &format!("{rp}.ports[{j}]"), errs);
        }
        for (j, peer) in rule.to.iter().enumerate() {
            validate_peer(peer, &format!("{rp}.to[{j}]"), errs);
        }
    }
    if spec.policy_types.len() > 2 {
        let list: Vec<String> = spec.policy_types.iter().map(|t| go_quote(t)).collect();
        errs.invalid(
            &format!("{path}.policyTypes"),
            format!("[]networking.PolicyType{{{}}}", list.join(", ")),
            "may not specify more than two policyTypes",
        );
        return;
    }
    for (i, t) in spec.policy_types.iter().enumerate() {
        if t != "Ingress" && t != "Egress" {
            errs.push(
                &format!("{path}.policyTypes[{i}]"),
                FieldErrorKind::NotSupported(go_quote(t)),
                "supported values: \"Ingress\", \"Egress\"",
            );
        }
    }
}

fn validate_port(port: &NetworkPolicyPort, path: &str, errs: &mut Errs) {
    if let Some(proto) = &port.protocol {
        if proto != "TCP" && proto != "UDP" && proto != "SCTP" {
            errs.push(
                &format!("{path}.protocol"),
                FieldErrorKind::NotSupported(go_quote(proto)),
                "supported values: \"TCP\", \"UDP\", \"SCTP\"",
            );
        }
    }
    match &port.port {
        Some(IntOrString::Int(p)) => {
            for msg in is_valid_port_num(*p) {
                errs.invalid(&format!("{path}.port"), p.to_string(), msg);
            }
            if let Some(end) = port.end_port {
                if end < *p {
                    // The value reported is the port's, not endPort's:
                    //   field.Invalid(portPath.Child("endPort"), port.Port.IntVal,
                    //       "must be greater than or equal to `port`")
                    errs.invalid(
                        &format!("{path}.endPort"),
                        p.to_string(),
                        "must be greater than or equal to `port`",
                    );
                }
                for msg in is_valid_port_num(end) {
                    errs.invalid(&format!("{path}.endPort"), end.to_string(), msg);
                }
            }
        }
        Some(IntOrString::Str(name)) => {
            if let Some(end) = port.end_port {
                errs.invalid(
                    &format!("{path}.endPort"),
                    end.to_string(),
                    "may not be specified when `port` is non-numeric",
                );
            }
            for msg in is_valid_port_name(name) {
                errs.invalid(&format!("{path}.port"), go_quote(name), msg);
            }
        }
        None => {
            if let Some(end) = port.end_port {
                errs.invalid(
                    &format!("{path}.endPort"),
                    end.to_string(),
                    "may not be specified when `port` is not specified",
                );
            }
        }
    }
}

fn validate_peer(peer: &NetworkPolicyPeer, path: &str, errs: &mut Errs) {
    let mut n = 0;
    if let Some(s) = &peer.pod_selector {
        n += 1;
        validate_selector(s, &format!("{path}.podSelector"), errs);
    }
    if let Some(s) = &peer.namespace_selector {
        n += 1;
        validate_selector(s, &format!("{path}.namespaceSelector"), errs);
    }
    if let Some(b) = &peer.ip_block {
        n += 1;
        validate_ip_block(b, &format!("{path}.ipBlock"), errs);
    }
    if n == 0 {
        errs.required(path, "must specify a peer");
    } else if n > 1 && peer.ip_block.is_some() {
        errs.forbidden(path, "may not specify both ipBlock and another peer");
    }
}

const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

fn validate_ip_block(b: &IpBlock, path: &str, errs: &mut Errs) {
    if b.cidr.is_empty() {
        errs.required(&format!("{path}.cidr"), "");
        return;
    }
    let Ok(cidr) = b.cidr.parse::<ipnet::IpNet>() else {
        errs.invalid(&format!("{path}.cidr"), go_quote(&b.cidr), CIDR_MSG);
        return;
    };
    let cidr = cidr.trunc();
    for (i, e) in b.except.iter().enumerate() {
        let ep = format!("{path}.except[{i}]");
        let Ok(ex) = e.parse::<ipnet::IpNet>() else {
            errs.invalid(&ep, go_quote(e), CIDR_MSG);
            continue;
        };
        let ex = ex.trunc();
        if !cidr.contains(&ex.network()) || cidr.prefix_len() >= ex.prefix_len() {
            errs.invalid(&ep, go_quote(e), "must be a strict subset of `cidr`");
        }
    }
}

fn validate_selector(s: &LabelSelector, path: &str, errs: &mut Errs) {
    let ml = format!("{path}.matchLabels");
    for (k, v) in &s.match_labels {
        for msg in is_qualified_name(k) {
            errs.invalid(&ml, go_quote(k), msg);
        }
        for msg in is_valid_label_value(v) {
            errs.invalid(&ml, go_quote(v), msg);
        }
    }
    for (i, r) in s.match_expressions.iter().enumerate() {
        let rp = format!("{path}.matchExpressions[{i}]");
        match r.operator.as_str() {
            "In" | "NotIn" => {
                if r.values.is_empty() {
                    errs.required(
                        &format!("{rp}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    );
                }
            }
            "Exists" | "DoesNotExist" => {
                if !r.values.is_empty() {
                    errs.forbidden(
                        &format!("{rp}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    );
                }
            }
            other => errs.invalid(
                &format!("{rp}.operator"),
                go_quote(other),
                "not a valid selector operator",
            ),
        }
        for msg in is_qualified_name(&r.key) {
            errs.invalid(&format!("{rp}.key"), go_quote(&r.key), msg);
        }
        for (j, v) in r.values.iter().enumerate() {
            for msg in is_valid_label_value(v) {
                errs.invalid(&format!("{rp}.values[{j}]"), go_quote(v), msg);
            }
        }
    }
}

// ---- k8s.io/apimachinery/pkg/util/validation, hand-translated (no regex crate) ----

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(e);
        s.push_str("', ");
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

const QNAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QNAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_qname_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, anchored.
fn is_dns_label_re(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || *c == b'-'),
        _ => false,
    }
}

fn is_dns_subdomain_re(s: &str) -> bool {
    s.split('.').all(is_dns_label_re)
}

/// `IsQualifiedName`: label keys (`app`, `example.com/tier`).
pub(crate) fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {m}"));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QNAME_MSG, QNAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qname_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(QNAME_MSG, QNAME_FMT, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

/// `IsValidLabelValue`.
pub(crate) fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_qname_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            &format!("({QNAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`: object names.
pub(crate) fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_dns_subdomain_re(value) {
        errs.push(regex_error(
            DNS_SUBDOMAIN_MSG,
            &format!("{DNS_LABEL_FMT}(\\.{DNS_LABEL_FMT})*"),
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Label`: namespace names.
pub(crate) fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_dns_label_re(value) {
        if is_dns_subdomain_re(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS_LABEL_MSG,
                DNS_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsValidPortNum`.
pub(crate) fn is_valid_port_num(port: i32) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_string()]
    }
}

/// `IsValidPortName` (IANA_SVC_NAME).
pub(crate) fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    let b = port.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !b.iter().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens (-)".to_string());
    }
    if b.first() == Some(&b'-') || b.last() == Some(&b'-') {
        errs.push("must not begin or end with a hyphen (-)".to_string());
    }
    errs
}

/// Go's `%q` for the strings the lab meets (escapes quotes, backslashes, controls).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::selector::LabelSelectorRequirement;
    use crate::net::policy::{IpBlock, NetworkPolicyIngressRule};

    fn spec_json(json: &str) -> NetworkPolicySpec {
        serde_json::from_str(json).unwrap()
    }

    fn err_text(json: &str) -> String {
        validate_policy("default", "p", &spec_json(json))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn valid_policy_passes() {
        let s = spec_json(
            r#"{"podSelector":{"matchLabels":{"app":"db"}},"policyTypes":["Ingress"],
                "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"web"}}},
                {"ipBlock":{"cidr":"172.17.0.0/16","except":["172.17.1.0/24"]}}],
                "ports":[{"protocol":"TCP","port":3306},{"port":"mysql"},{"port":32000,"endPort":32768}]}]}"#,
        );
        assert_eq!(validate_policy("default", "db-allow", &s), Ok(()));
    }

    #[test]
    fn port_out_of_range() {
        assert_eq!(
            err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"port":70000}]}]}"#),
            "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"
        );
    }

    #[test]
    fn bad_protocol() {
        assert_eq!(
            err_text(r#"{"podSelector":{},"egress":[{"ports":[{"protocol":"ICMP","port":1}]}]}"#),
            "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.egress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\""
        );
        // The API is case-sensitive.
        assert!(
            err_text(r#"{"podSelector":{},"egress":[{"ports":[{"protocol":"tcp"}]}]}"#)
                .contains("Unsupported value: \"tcp\"")
        );
    }

    #[test]
    fn end_port_rules() {
        assert_eq!(
            err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"port":100,"endPort":90}]}]}"#),
            "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 100: must be greater than or equal to `port`"
        );
        assert!(
            err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"port":"http","endPort":90}]}]}"#)
                .ends_with("spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric")
        );
        assert!(
            err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"endPort":90}]}]}"#)
                .ends_with("may not be specified when `port` is not specified")
        );
    }

    #[test]
    fn named_port_rules() {
        assert!(
            err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"port":"80"}]}]}"#).ends_with(
                "spec.ingress[0].ports[0].port: Invalid value: \"80\": must contain at least one letter (a-z)"
            )
        );
        let t = err_text(r#"{"podSelector":{},"ingress":[{"ports":[{"port":"HTTP"}]}]}"#);
        assert!(t.contains("[spec.ingress[0].ports[0].port: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), "), "{t}");
    }

    #[test]
    fn bad_selector_operator_and_values() {
        let mut s = NetworkPolicySpec::default();
        s.pod_selector.match_expressions = vec![
            LabelSelectorRequirement {
                key: "app".into(),
                operator: "Equals".into(),
                values: vec!["a".into()],
            },
            LabelSelectorRequirement {
                key: "app".into(),
                operator: "In".into(),
                values: vec![],
            },
            LabelSelectorRequirement {
                key: "app".into(),
                operator: "Exists".into(),
                values: vec!["x".into()],
            },
        ];
        let e = validate_policy("default", "p", &s).unwrap_err();
        let lines: Vec<String> = e.errors.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            lines,
            vec![
                "spec.podSelector.matchExpressions[0].operator: Invalid value: \"Equals\": not a valid selector operator",
                "spec.podSelector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "spec.podSelector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ]
        );
        assert!(
            e.to_string()
                .starts_with("NetworkPolicy.networking.k8s.io \"p\" is invalid: [spec.podSelector")
        );
    }

    #[test]
    fn bad_label_key_and_value() {
        let t = err_text(r#"{"podSelector":{"matchLabels":{"a b":"-x"}}}"#);
        assert!(t.contains("spec.podSelector.matchLabels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"), "{t}");
        assert!(t.contains("spec.podSelector.matchLabels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"), "{t}");
    }

    #[test]
    fn bad_cidrs() {
        assert_eq!(
            err_text(
                r#"{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/33"}}]}]}"#
            ),
            "NetworkPolicy.networking.k8s.io \"p\" is invalid: spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
        );
        assert!(
            err_text(r#"{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/16","except":["10.1.0.0/24"]}}]}]}"#)
                .ends_with("spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`")
        );
        assert!(
            err_text(r#"{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":""}}]}]}"#)
                .ends_with("spec.ingress[0].from[0].ipBlock.cidr: Required value")
        );
    }

    #[test]
    fn peers_must_be_one_thing() {
        let mut s = NetworkPolicySpec::default();
        s.ingress.push(NetworkPolicyIngressRule {
            ports: vec![],
            from: vec![
                NetworkPolicyPeer::default(),
                NetworkPolicyPeer {
                    pod_selector: Some(LabelSelector::everything()),
                    namespace_selector: None,
                    ip_block: Some(IpBlock {
                        cidr: "10.0.0.0/8".into(),
                        except: vec![],
                    }),
                },
            ],
        });
        let e = validate_policy("default", "p", &s).unwrap_err();
        let lines: Vec<String> = e.errors.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            lines,
            vec![
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
            ]
        );
    }

    #[test]
    fn policy_types() {
        assert!(
            err_text(r#"{"podSelector":{},"policyTypes":["Ingres"]}"#).ends_with(
                "spec.policyTypes[0]: Unsupported value: \"Ingres\": supported values: \"Ingress\", \"Egress\""
            )
        );
        assert!(
            err_text(r#"{"podSelector":{},"policyTypes":["Ingress","Egress","Ingress"]}"#).ends_with(
                "spec.policyTypes: Invalid value: []networking.PolicyType{\"Ingress\", \"Egress\", \"Ingress\"}: may not specify more than two policyTypes"
            )
        );
    }

    #[test]
    fn metadata_names() {
        let s = NetworkPolicySpec::default();
        let e = validate_policy("Prod", "Bad_Name", &s)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "NetworkPolicy.networking.k8s.io \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), metadata.namespace: Invalid value: \"Prod\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"
        );
        assert!(
            validate_policy("default", "", &s)
                .unwrap_err()
                .to_string()
                .ends_with("metadata.name: Required value: name or generateName is required")
        );
    }
}
