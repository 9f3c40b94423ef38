//! NetworkPolicy (`networking.k8s.io/v1`) as the API server stores it: the spec types in
//! Kubernetes JSON shape (k8s.io/api `networking/v1/types.go`). What a policy means for a
//! flow is the pod network model's job (`net::policy`); this module only holds the object.

use crate::cluster::selector::LabelSelector;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `spec` of a NetworkPolicy, in Kubernetes JSON shape (camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicySpec {
    /// The pods (in the policy's namespace) the policy applies to; `{}` selects all.
    #[serde(default)]
    pub pod_selector: LabelSelector,
    /// `Ingress`, `Egress` (kept as text so a bad value can be reported). Empty means the
    /// default (see [`NetworkPolicySpec::effective_types`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_types: Vec<String>,
    /// Ingress rules (ORed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ingress: Vec<NetworkPolicyIngressRule>,
    /// Egress rules (ORed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<NetworkPolicyEgressRule>,
}

/// One ingress rule: traffic from any of `from` to any of `ports`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyIngressRule {
    /// Destination ports on the selected pod; empty matches all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<NetworkPolicyPort>,
    /// Sources; empty matches all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<NetworkPolicyPeer>,
}

/// One egress rule: traffic to any of `to` on any of `ports`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyEgressRule {
    /// Destination ports; empty matches all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<NetworkPolicyPort>,
    /// Destinations; empty matches all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<NetworkPolicyPeer>,
}

/// A peer: pods by selector, namespaces by selector, or an IP block.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyPeer {
    /// Pods (in the policy's namespace unless `namespaceSelector` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<LabelSelector>,
    /// Namespaces whose pods match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Addresses in `cidr` but not in any `except`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_block: Option<IpBlock>,
}

/// `ipBlock`: a CIDR with holes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IpBlock {
    /// The block (`10.0.0.0/8`).
    pub cidr: String,
    /// Sub-blocks excluded from it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
}

/// A port number or a named container port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrString {
    /// A number (validated to 1..=65535).
    Int(i32),
    /// A container port name.
    Str(String),
}

/// `ports[]` entry: protocol (default TCP), port or named port, optional `endPort`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyPort {
    /// `TCP`, `UDP` or `SCTP`; absent means TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The port; absent matches every port of the protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
    /// Last port of a range starting at `port` (numeric `port` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_port: Option<i32>,
}

/// A transport protocol NetworkPolicy knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Protocol {
    /// TCP (the default).
    #[default]
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
}

impl Protocol {
    /// The API spelling: `TCP`, `UDP`, `SCTP`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        }
    }

    /// Parse a command-line spelling, case-insensitively (`tcp`, `UDP`).
    pub(crate) fn parse_loose(s: &str) -> Option<Protocol> {
        match s.to_ascii_uppercase().as_str() {
            "TCP" => Some(Protocol::Tcp),
            "UDP" => Some(Protocol::Udp),
            "SCTP" => Some(Protocol::Sctp),
            _ => None,
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `P[/PROTO]` → (port, protocol).
pub fn parse_port(text: &str) -> Result<(u16, Protocol), String> {
    let (p, proto) = match text.split_once('/') {
        Some((p, proto)) => (p, Some(proto)),
        None => (text, None),
    };
    let protocol = match proto {
        None => Protocol::Tcp,
        Some(s) => Protocol::parse_loose(s)
            .ok_or_else(|| format!("invalid protocol {s:?}: expected TCP, UDP or SCTP"))?,
    };
    let port: u16 = p
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("invalid port {p:?}: expected a number from 1 to 65535"))?;
    Ok((port, protocol))
}
