//! `networking.k8s.io/v1` NetworkPolicy: kubectl's printer (POD-SELECTOR); `delete netpol`
//! is the lab's `policy delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::meta::go_time_string;
use crate::cluster::policy::{
    IntOrString, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
};
use crate::cluster::{Cluster, Object, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::PolicyCmd;
use crate::engine::Lab;
use crate::engine::generic_describe::{
    annotations_lines, format_label_selector, labels_lines, push_tabbed,
};
use crate::engine::views::{age, selector_column};
use crate::manifest::Manifest;
use crate::render::{Outcome, Role};

/// NetworkPolicies.
pub(crate) struct NetworkPolicies;

impl Resource for NetworkPolicies {
    type Spec = NetworkPolicySpec;
    const NAMES: Names = Names {
        plural: "networkpolicies",
        singular: "networkpolicy",
        short: &["netpol"],
        aliases: &["policy", "policies"],
        listed: "networkpolicies",
        completes_as: "networkpolicies",
    };
    const COLUMNS: &'static [&'static str] = &["NAME", "POD-SELECTOR", "AGE"];
    const DESCRIBE: Option<super::Describer<NetworkPolicySpec>> = Some(describe);
    const DELETE: Delete =
        Delete::Command(|name, ns| Command::Policy(PolicyCmd::Delete { name, ns }));
    const APPLY: Apply = Apply::Reads(|d| d.decode().map(Manifest::NetworkPolicy));

    fn objects(c: &Cluster) -> &Table<NetworkPolicySpec> {
        &c.policies
    }

    fn ops(c: &mut Cluster) -> TableOps<'_, NetworkPolicySpec> {
        c.policies()
    }

    fn row(lab: &Lab, p: &Object<NetworkPolicySpec>, _wide: bool) -> Vec<(String, Role)> {
        vec![
            cell(p.name()),
            cell(selector_column(&p.spec.pod_selector)),
            cell(age(lab.clock, p.metadata.creation_tick)),
        ]
    }
}

/// kubectl's describeNetworkPolicy: the name, namespace, creation time (a `metav1.Time`
/// printed with `%s`), labels and annotations, then describeNetworkPolicySpec. kubectl's
/// NetworkPolicy describer looks up no events, so there is no Events section.
fn describe(_lab: &Lab, p: &Object<NetworkPolicySpec>) -> Outcome {
    let mut lines = vec![
        format!("Name:\t{}", p.name()),
        format!("Namespace:\t{}", p.metadata.namespace()),
        format!(
            "Created on:\t{}",
            go_time_string(p.metadata.creation_tick.whole_secs())
        ),
    ];
    labels_lines(&mut lines, "Labels", &p.metadata.labels);
    annotations_lines(&mut lines, "Annotations", p.metadata.annotations());
    spec_lines(&mut lines, &p.spec);
    let mut out = Outcome::empty();
    push_tabbed(&mut out, &lines);
    out
}

/// describeNetworkPolicySpec: the pod selector (written at PrefixWriter level 2 after
/// `PodSelector: `, hence the wide gap), then each direction the policy types name with
/// its rules, or that it does not affect that direction, then the policy types.
fn spec_lines(lines: &mut Vec<String>, spec: &NetworkPolicySpec) {
    lines.push("Spec:".into());
    let selector = if spec.pod_selector.is_empty() {
        "<none> (Allowing the specific traffic to all pods in this namespace)".to_string()
    } else {
        format_label_selector(&spec.pod_selector)
    };
    lines.push(format!("  PodSelector:     {selector}"));
    let ingress = spec.policy_types.iter().any(|t| t == "Ingress");
    let egress = spec.policy_types.iter().any(|t| t == "Egress");
    if ingress {
        lines.push("  Allowing ingress traffic:".into());
        if spec.ingress.is_empty() {
            lines.push("    <none> (Selected pods are isolated for ingress connectivity)".into());
        }
        let rules: Vec<(&[NetworkPolicyPort], &[NetworkPolicyPeer])> = spec
            .ingress
            .iter()
            .map(|r| (r.ports.as_slice(), r.from.as_slice()))
            .collect();
        rule_lines(lines, &rules, "From", "source");
    } else {
        lines.push("  Not affecting ingress traffic".into());
    }
    if egress {
        lines.push("  Allowing egress traffic:".into());
        if spec.egress.is_empty() {
            lines.push("    <none> (Selected pods are isolated for egress connectivity)".into());
        }
        let rules: Vec<(&[NetworkPolicyPort], &[NetworkPolicyPeer])> = spec
            .egress
            .iter()
            .map(|r| (r.ports.as_slice(), r.to.as_slice()))
            .collect();
        rule_lines(lines, &rules, "To", "destination");
    } else {
        lines.push("  Not affecting egress traffic".into());
    }
    lines.push(format!("  Policy Types: {}", spec.policy_types.join(", ")));
}

/// printNetworkPolicySpecIngressFrom / printNetworkPolicySpecEgressTo: each rule's ports
/// (`To Port: 80/TCP`, a range as `To Port Range: 80-90/TCP`, or any port), then its peers
/// (`From:`/`To:` and the selector or IP block, or any peer), `----------` between rules.
fn rule_lines(
    lines: &mut Vec<String>,
    rules: &[(&[NetworkPolicyPort], &[NetworkPolicyPeer])],
    peer_word: &str,
    any_peer: &str,
) {
    let indent = "    ";
    for (i, (ports, peers)) in rules.iter().enumerate() {
        if ports.is_empty() {
            lines.push(format!(
                "{indent}To Port: <any> (traffic allowed to all ports)"
            ));
        }
        for port in *ports {
            let proto = port.protocol.as_deref().unwrap_or("TCP");
            // intstr's String of a nil port is `<nil>`.
            let number = match &port.port {
                None => "<nil>".to_string(),
                Some(IntOrString::Int(n)) => n.to_string(),
                Some(IntOrString::Str(s)) => s.clone(),
            };
            match port.end_port {
                None => lines.push(format!("{indent}To Port: {number}/{proto}")),
                Some(end) => lines.push(format!("{indent}To Port Range: {number}-{end}/{proto}")),
            }
        }
        if peers.is_empty() {
            lines.push(format!(
                "{indent}{peer_word}: <any> (traffic not restricted by {any_peer})"
            ));
        }
        for peer in *peers {
            lines.push(format!("{indent}{peer_word}:"));
            match (&peer.pod_selector, &peer.namespace_selector, &peer.ip_block) {
                (Some(pods), Some(namespaces), _) => {
                    lines.push(format!(
                        "  {indent}NamespaceSelector: {}",
                        format_label_selector(namespaces)
                    ));
                    lines.push(format!(
                        "  {indent}PodSelector: {}",
                        format_label_selector(pods)
                    ));
                }
                (Some(pods), None, _) => lines.push(format!(
                    "  {indent}PodSelector: {}",
                    format_label_selector(pods)
                )),
                (None, Some(namespaces), _) => lines.push(format!(
                    "  {indent}NamespaceSelector: {}",
                    format_label_selector(namespaces)
                )),
                (None, None, Some(block)) => {
                    lines.push(format!("  {indent}IPBlock:"));
                    lines.push(format!("    {indent}CIDR: {}", block.cidr));
                    lines.push(format!("    {indent}Except: {}", block.except.join(", ")));
                }
                (None, None, None) => {}
            }
        }
        if i + 1 != rules.len() {
            lines.push(format!("{indent}----------"));
        }
    }
}
