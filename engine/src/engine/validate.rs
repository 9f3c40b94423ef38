//! Checks on user input, with messages that say what was wrong and what is accepted.
//! Rules follow Kubernetes' validation (DNS-1123 names, label syntax).

use super::LabError;
use super::invalid::Invalid;
use crate::cluster::ApiKind;
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A DNS-1123 subdomain (object names): lowercase alphanumerics, `-` and `.`, starting and
/// ending alphanumeric, at most 253 characters, each dot-separated part a DNS-1123 label
/// (so `a.b..c` and `a.-b` are refused, as the API server refuses them). Names of every
/// kind the lab creates are subdomains (nodes, pods, claims, classes, snapshots); only
/// namespaces are labels ([`namespace`]). Errors name the kind by its singular (`pod`):
/// this checks a name a command or manifest refers to (`--pvc CLAIM`, a snapshot's
/// source claim); the name of an object being created is [`metadata_name`]'s.
pub(crate) fn object_name(kind: ApiKind, name: &str) -> Result<(), String> {
    let singular = || crate::resource::of(kind).names().singular;
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ends_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > 253 || !ok_chars || !ends_ok {
        return Err(format!(
            "invalid {} name {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (at most 253 characters), e.g. 'web' or 'node-1'",
            singular()
        ));
    }
    // The characters are right; the parts between dots are not (`a.b..c`, `a.-b`).
    if let Some(why) = crate::net::validate::is_dns1123_subdomain(name)
        .into_iter()
        .next()
    {
        return Err(format!("invalid {} name {name:?}: {why}", singular()));
    }
    Ok(())
}

/// The name of an object being created, as the API server's `ValidateObjectMeta` checks
/// it (apimachinery `pkg/api/validation/objectmeta.go`):
/// `field.Required(fldPath.Child("name"), "name or generateName is required")`, else for
/// each message of the kind's name check (`NameIsDNSSubdomain` for every kind the lab
/// creates) `field.Invalid(fldPath.Child("name"), meta.GetName(), msg)`; refused as the
/// kind's Invalid error (`The Pod "P4" is invalid: metadata.name: Invalid value: "P4": …`).
pub(crate) fn metadata_name(kind: ApiKind, name: &str) -> Result<(), Invalid> {
    if name.is_empty() {
        return Err(Invalid::one(
            kind,
            name,
            "metadata.name: Required value: name or generateName is required",
        ));
    }
    let causes: Vec<String> = crate::net::validate::is_dns1123_subdomain(name)
        .into_iter()
        .map(|msg| format!("metadata.name: Invalid value: {name:?}: {msg}"))
        .collect();
    if causes.is_empty() {
        return Ok(());
    }
    Err(Invalid {
        kind,
        name: name.to_string(),
        causes,
    })
}

/// A StorageClass's provisioner, checked as the API server's `validateProvisioner` does:
/// required, and a qualified name once lowercased (`hostpath.csi.lab`, `example.com/nfs`).
pub(crate) fn provisioner(class: &str, provisioner: &str) -> Result<(), Invalid> {
    let invalid =
        |why: String| Invalid::one(ApiKind::StorageClass, class, format!("provisioner: {why}"));
    if provisioner.is_empty() {
        return Err(invalid("Required value".to_string()));
    }
    let errs = crate::net::validate::is_qualified_name(&provisioner.to_ascii_lowercase());
    if let Some(why) = errs.into_iter().next() {
        return Err(invalid(format!(
            "Invalid value: {}: {why}",
            crate::net::validate::go_quote(provisioner)
        )));
    }
    Ok(())
}

/// A namespace name: a DNS-1123 label (at most 63 characters, no dots).
pub fn namespace(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid namespace {name:?}: a lowercase RFC 1123 label (at most 63 characters of a-z, 0-9 and '-', starting and ending alphanumeric), e.g. 'default'"
        ))
    }
}

fn label_part_ok(s: &str, max: usize) -> bool {
    s.len() <= max
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A label `k=v` (key: optional DNS prefix `/` name ≤63; value ≤63, may be empty).
pub fn label(pair: &str) -> Result<(String, String), String> {
    let Some((k, v)) = pair.split_once('=') else {
        return Err(format!(
            "invalid label {pair:?}: expected KEY=VALUE, e.g. app=web"
        ));
    };
    let name = k.rsplit_once('/').map(|(_, n)| n).unwrap_or(k);
    let prefix_ok = k
        .rsplit_once('/')
        .is_none_or(|(p, _)| !p.is_empty() && p.len() <= 253 && label_part_ok(p, 253));
    if k.is_empty() || !label_part_ok(name, 63) || !prefix_ok {
        return Err(format!(
            "invalid label key {k:?}: name part must be 1-63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric, with an optional DNS prefix (example.com/app)"
        ));
    }
    if !v.is_empty() && !label_part_ok(v, 63) {
        return Err(format!(
            "invalid label value {v:?} for {k:?}: at most 63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric (or empty)"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parse `k=v[,k2=v2]` into labels ('' is the empty selector).
pub fn labels(list: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = label(part)?;
        out.insert(k, v);
    }
    Ok(out)
}

/// A network in CIDR form whose host bits are zero.
pub fn cidr(text: &str) -> Result<IpNet, String> {
    let net: IpNet = text.parse().map_err(|_| {
        format!("invalid CIDR {text:?}: expected an address and prefix length, e.g. 10.244.3.0/24")
    })?;
    if net.trunc() != net {
        return Err(format!(
            "invalid CIDR {text:?}: host bits are set; the network address is {}",
            net.trunc()
        ));
    }
    Ok(net)
}

/// An IP address.
pub fn ip(text: &str) -> Result<IpAddr, String> {
    text.parse()
        .map_err(|_| format!("invalid IP address {text:?}: expected e.g. 192.168.0.3"))
}

pub use crate::kubelet::bandwidth::parse as bandwidth;

/// A port mapping `HOST:CONTAINER[/PROTO]`.
pub(crate) fn port_mapping(text: &str) -> Result<(u16, u16, String), String> {
    let err = || {
        format!(
            "invalid port mapping {text:?}: expected HOST:CONTAINER[/PROTO] with ports 1-65535 and PROTO tcp, udp or sctp, e.g. 8080:80/tcp"
        )
    };
    let (ports, proto) = match text.split_once('/') {
        Some((p, proto)) => (p, proto.to_ascii_lowercase()),
        None => (text, "tcp".to_string()),
    };
    if !matches!(proto.as_str(), "tcp" | "udp" | "sctp") {
        return Err(err());
    }
    let (h, c) = ports.split_once(':').ok_or_else(err)?;
    let h: u16 = h.parse().map_err(|_| err())?;
    let c: u16 = c.parse().map_err(|_| err())?;
    if h == 0 || c == 0 {
        return Err(err());
    }
    Ok((h, c, proto))
}

/// The most of one extended resource a container may ask for in the lab.
pub(crate) const MAX_EXTENDED_COUNT: i64 = 1024;

/// `--resource NAME=COUNT` of pod `pod`: an extended resource name (a qualified name with a
/// domain outside `kubernetes.io`, as `validateContainerResourceName` demands) and a
/// whole, non-negative count (`IsIntegerResourceName`: extended resources are counted).
pub(crate) fn extended_resource(pod: &str, text: &str) -> Result<(String, i64), LabError> {
    let Some((name, qty)) = text.split_once('=') else {
        return Err(LabError::msg(format!(
            "invalid --resource {text:?}: expected NAME=COUNT, e.g. intel.com/sriov_netdevice=1"
        )));
    };
    let field = format!("spec.containers[0].resources.limits[{name}]");
    let invalid = |cause: String| LabError::from(Invalid::one(ApiKind::Pod, pod, cause));
    if let Some(why) = crate::net::validate::is_qualified_name(name)
        .into_iter()
        .next()
    {
        return Err(invalid(format!(
            "{field}: Invalid value: {}: {why}",
            crate::net::validate::go_quote(name)
        )));
    }
    if !name.contains('/') {
        return Err(LabError::msg(format!(
            "invalid --resource {text:?}: the lab's pods request extended resources only (DOMAIN/NAME, e.g. intel.com/sriov_netdevice); {name:?} is a standard resource, and cpu and memory requests are not modelled"
        )));
    }
    if !crate::cluster::is_extended_resource(name) {
        return Err(invalid(format!(
            "{field}: Invalid value: {}: doesn't follow extended resource name standard",
            crate::net::validate::go_quote(name)
        )));
    }
    let bad_syntax = || {
        LabError::msg(format!(
            "invalid --resource {text:?}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ))
    };
    let num = qty.strip_prefix('+').unwrap_or(qty);
    let (neg, digits) = match num.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, num),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad_syntax());
    }
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(bad_syntax());
    }
    let whole = frac.chars().all(|c| c == '0');
    let zero = int.chars().all(|c| c == '0') && whole;
    if neg && !zero {
        return Err(invalid(format!(
            "{field}: Invalid value: {}: must be greater than or equal to 0",
            crate::net::validate::go_quote(qty)
        )));
    }
    if !whole {
        return Err(invalid(format!(
            "{field}: Invalid value: {}: must be an integer",
            crate::net::validate::go_quote(qty)
        )));
    }
    let trimmed = int.trim_start_matches('0');
    let n: i64 = if trimmed.is_empty() {
        0
    } else if trimmed.len() > 6 {
        MAX_EXTENDED_COUNT + 1
    } else {
        trimmed.parse().unwrap_or(MAX_EXTENDED_COUNT + 1)
    };
    if n > MAX_EXTENDED_COUNT {
        return Err(LabError::msg(format!(
            "invalid --resource {text:?}: at most {MAX_EXTENDED_COUNT} of one resource per pod in the lab"
        )));
    }
    Ok((name.to_string(), n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(object_name(ApiKind::Pod, "web-1").is_ok());
        assert!(object_name(ApiKind::Pod, "Web").is_err());
        assert!(object_name(ApiKind::Pod, "-web").is_err());
        assert!(object_name(ApiKind::Pod, &"a".repeat(254)).is_err());
        assert!(object_name(ApiKind::Pod, "a.b.c").is_ok());
    }

    #[test]
    fn names_are_refused_as_the_api_server_refuses_them() {
        let e = object_name(ApiKind::Pod, "a.b..c").unwrap_err();
        assert!(
            e.starts_with(
                "invalid pod name \"a.b..c\": a lowercase RFC 1123 subdomain must consist of"
            ),
            "{e}"
        );
        assert!(e.contains("regex used for validation is"), "{e}");
        assert!(object_name(ApiKind::Node, "a.-b").is_err());
        let e = object_name(ApiKind::PersistentVolumeClaim, &"a".repeat(254)).unwrap_err();
        assert!(e.contains("(at most 253 characters)"), "{e}");
        assert!(object_name(ApiKind::Pod, &"a".repeat(253)).is_ok());
        let e = namespace(&"a".repeat(64)).unwrap_err();
        assert!(e.contains("at most 63 characters"), "{e}");
        assert!(namespace("a.b").is_err());
    }

    #[test]
    fn provisioners_follow_validate_provisioner() {
        assert!(provisioner("s", "hostpath.csi.lab").is_ok());
        assert!(provisioner("s", "example.com/nfs").is_ok());
        assert_eq!(
            provisioner("s", "").unwrap_err().kubectl_message(),
            "The StorageClass \"s\" is invalid: provisioner: Required value"
        );
        assert_eq!(
            provisioner("s", "").unwrap_err().status_message(),
            "StorageClass.storage.k8s.io \"s\" is invalid: provisioner: Required value"
        );
        assert!(
            provisioner("s", &"p".repeat(64)).unwrap_err().causes[0].contains("no more than 63")
        );
        assert!(
            provisioner("s", "bad name!").unwrap_err().causes[0]
                .starts_with("provisioner: Invalid value: \"bad name!\"")
        );
    }

    #[test]
    fn cidrs() {
        assert!(cidr("10.244.3.0/24").is_ok());
        assert!(cidr("10.244.3.5/24").unwrap_err().contains("10.244.3.0/24"));
        assert!(cidr("10.244.3.0/33").is_err());
    }

    #[test]
    fn quantities() {
        assert_eq!(bandwidth("10M").unwrap(), 10_000_000);
        assert_eq!(bandwidth("1Mi").unwrap(), 1_048_576);
        assert!(bandwidth("10").is_err());
        assert!(bandwidth("2P").is_err());
        assert!(bandwidth("ten").is_err());
        assert_eq!(bandwidth("1e6").unwrap(), 1_000_000);
        assert_eq!(bandwidth("1.5M").unwrap(), 1_500_000);
        assert_eq!(
            bandwidth("-1M").unwrap_err(),
            "resource is unreasonably small (< 1kbit)"
        );
        // Value() rounds up: 999.2 is 1000 bits, the least allowed.
        assert_eq!(bandwidth("999.2").unwrap(), 1_000);
        assert!(bandwidth("999").is_err());
        assert!(
            bandwidth("ten")
                .unwrap_err()
                .starts_with("quantities must match")
        );
        assert!(
            bandwidth("1e99")
                .unwrap_err()
                .contains("unreasonably large")
        );
    }

    #[test]
    fn extended_resources() {
        assert_eq!(
            extended_resource("p", "intel.com/sriov_netdevice=1").unwrap(),
            ("intel.com/sriov_netdevice".into(), 1)
        );
        assert_eq!(extended_resource("p", "example.com/x=02").unwrap().1, 2);
        assert_eq!(extended_resource("p", "example.com/x=1.0").unwrap().1, 1);
        assert_eq!(
            extended_resource("p", "intel.com/sriov_netdevice=1.5")
                .unwrap_err()
                .message,
            "The Pod \"p\" is invalid: spec.containers[0].resources.limits[intel.com/sriov_netdevice]: Invalid value: \"1.5\": must be an integer"
        );
        assert!(
            extended_resource("p", "example.com/x=-1")
                .unwrap_err()
                .message
                .contains("greater than or equal to 0")
        );
        assert!(
            extended_resource("p", "example.com/x=one")
                .unwrap_err()
                .message
                .contains("regular expression")
        );
        assert!(
            extended_resource("p", "example.com/x")
                .unwrap_err()
                .message
                .contains("NAME=COUNT")
        );
        assert!(
            extended_resource("p", "cpu=1")
                .unwrap_err()
                .message
                .contains("extended resources only")
        );
        assert!(
            extended_resource("p", "kubernetes.io/x=1")
                .unwrap_err()
                .message
                .contains("extended resource name standard")
        );
        assert!(
            extended_resource("p", "bad name/x=1")
                .unwrap_err()
                .message
                .contains("Invalid value")
        );
        assert!(
            extended_resource("p", "example.com/x=99999999999999999999")
                .unwrap_err()
                .message
                .contains("at most")
        );
    }

    #[test]
    fn ports() {
        assert_eq!(port_mapping("8080:80").unwrap(), (8080, 80, "tcp".into()));
        assert_eq!(port_mapping("53:53/UDP").unwrap().2, "udp");
        assert!(port_mapping("0:80").is_err());
        assert!(port_mapping("80").is_err());
    }
}
