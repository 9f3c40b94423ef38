//! `why rule CHAIN N --node NODE [-t TABLE] [-6]` (or `why rule -A CHAIN SPEC… --node NODE`,
//! the rule as `iptables -S` prints it, compared as a parsed rule): an iptables rule back to
//! its writer.
//! The writer is the one of the chain the rule jumps to when that chain is made for a single
//! container, policy or endpoint (the rule is there for it), else the one of the chain the
//! rule sits in: each writer names its chains by
//! a rule of its own (portmap `CNI-DN-` + a hash of the network and container ID, the
//! ipMasq chain of bridge and ptp `CNI-` + the same hash, Felix `cali-pi-` + the policy's
//! id and `cali-tw-` + the endpoint's device), and the name is computed again from the
//! candidate (a plugin execution on the wire, a NetworkPolicy, a pod) and compared.

use super::{ChainWriter, Lab, LabError, Link, Origin, Which};
use crate::cni::netfilter::TableKind;
use crate::cni::plugin::CniCommand;
use crate::cni::plugins::{common::format_chain_name, portmap};
use crate::cni::runtime::WireCall;
use crate::command::grammar::{RuleRef, TableArg, WhyRuleArgs};
use crate::netd::{calico::felix, flannel};
use crate::record::WireRecord;

/// The table flags of `a` as `show iptables` takes them (` -t filter`, ` -6`; nothing for
/// IPv4's nat).
fn table_flags(a: &WhyRuleArgs) -> String {
    let mut flags = String::new();
    if a.table == TableArg::Filter {
        flags.push_str(" -t filter");
    }
    if a.v6 {
        flags.push_str(" -6");
    }
    flags
}

/// Who writes a chain.
enum Author {
    /// A plugin's ADD for one container (the chain is named after its network and
    /// container ID); `None` when that record is older than the wire log keeps.
    ContainerAdd {
        writer: ChainWriter,
        add: Option<(u64, WireRecord)>,
    },
    /// portmap's shared chains, made by its first ADD on the node.
    PortmapShared(Option<(u64, WireRecord)>),
    /// flanneld on the node (`--ip-masq`, `--iptables-forward-rules`).
    Flanneld,
    /// Felix's chain for one NetworkPolicy (namespace, name).
    FelixPolicy {
        policy: (String, String),
        ingress: bool,
    },
    /// Felix's chain for one pod's workload endpoint (namespace, name; its device).
    FelixEndpoint {
        pod: (String, String),
        iface: String,
    },
    /// Felix's profile chain of a namespace (its own, or its default service account's).
    FelixProfile { namespace: String, id: String },
    /// One of Felix's own chains.
    Felix,
}

impl Author {
    /// Made for one container, policy or endpoint (rather than shared by many).
    fn specific(&self) -> bool {
        matches!(
            self,
            Author::ContainerAdd { .. } | Author::FelixPolicy { .. } | Author::FelixEndpoint { .. }
        )
    }
}

/// A successful-or-not ADD by one of `plugins`.
fn is_add(c: &WireCall, plugins: &[&str]) -> bool {
    c.env.command == Some(CniCommand::Add) && plugins.contains(&c.plugin_type.as_str())
}

impl Lab {
    /// `why rule …`.
    pub(super) fn why_rule(&self, a: &WhyRuleArgs) -> Result<Vec<Link>, LabError> {
        let node = a.node.as_str();
        let kind = match a.table {
            TableArg::Nat => TableKind::Nat,
            TableArg::Filter => TableKind::Filter,
        };
        let tool = if a.v6 { "ip6tables" } else { "iptables" };
        let table = self
            .node_runtime(node)?
            .host
            .netfilter
            .family(a.v6)
            .get(kind);
        let rule_ref = a.rule();
        let chain_name = match &rule_ref {
            RuleRef::Numbered { chain, .. } | RuleRef::Spec { chain, .. } => chain.as_str(),
        };
        let Some(rules) = table.chains().get(chain_name) else {
            return Err(LabError::msg(format!(
                "no chain {chain_name} in {tool} -t {kind} on {node}; chains there: {}",
                table
                    .chains()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let found = match &rule_ref {
            RuleRef::Numbered { number, .. } => usize::try_from(*number)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| rules.get(i).map(|r| (i, r))),
            RuleRef::Spec { spec, .. } => rules
                .iter()
                .enumerate()
                .find(|(_, r)| r.spec() == spec.as_ref()),
        };
        let Some((index, rule)) = found else {
            return Err(LabError::msg(match (&rule_ref, rules.len()) {
                (RuleRef::Spec { text, .. }, _) => format!(
                    "no rule `-A {chain_name} {text}` in {tool} -t {kind} on {node} (the rule is compared whole, as `{tool} -C` compares it): `show iptables {node}{}` lists the chain's rules as `{tool} -S` prints them, or give its number: `why rule {chain_name} N --node {node}{}`",
                    table_flags(a),
                    table_flags(a)
                ),
                (_, 0) => format!("{chain_name} in {tool} -t {kind} on {node} has no rules"),
                (_, n) => format!(
                    "{chain_name} in {tool} -t {kind} on {node} has {n} rule{}: N is 1 to {n}, as `{tool} -t {kind} -L {chain_name} --line-numbers` numbers them",
                    if n == 1 { "" } else { "s" },
                ),
            }));
        };
        let number = index + 1;
        let mut chain = vec![Link::Rule {
            node: node.to_string(),
            v6: a.v6,
            table: kind,
            chain: chain_name.to_string(),
            number,
            rule: rule.clone(),
        }];
        let own = self.chain_author(node, chain_name);
        let target = rule
            .spec()
            .jump_chain()
            .and_then(|t| self.chain_author(node, t).map(|w| (t, w)));
        let (at, author) = match (own, target) {
            (_, Some((t, w))) if w.specific() => (t.to_string(), w),
            (Some(o), _) => (chain_name.to_string(), o),
            (None, Some((t, w))) => (t.to_string(), w),
            (None, None) => {
                return Err(LabError::msg(format!(
                    "why rule follows the chains of portmap, the ipMasq of bridge and ptp, flanneld and Calico's Felix; rule {number} of {chain_name} on {node} is none of theirs"
                )));
            }
        };
        chain.extend(self.author_links(node, at, author));
        Ok(chain)
    }

    /// Who writes `chain` on `node`, if one of the writers the lab models does.
    fn chain_author(&self, node: &str, chain: &str) -> Option<Author> {
        if [
            portmap::TOP_DNAT_CHAIN,
            portmap::SETMARK_CHAIN,
            portmap::MASQ_CHAIN,
        ]
        .contains(&chain)
        {
            let first = self.exec_on(node, Which::First, |c| is_add(c, &["portmap"]));
            return Some(Author::PortmapShared(first));
        }
        if [flannel::MASQ_CHAIN, flannel::FWD_CHAIN].contains(&chain) {
            return Some(Author::Flanneld);
        }
        if chain.starts_with("CNI-DN-") {
            let add = self.exec_on(node, Which::Last, |c| {
                is_add(c, &["portmap"])
                    && portmap::dnat_chain_name(c.stdin.network_name(), &c.env.container_id)
                        == chain
            });
            return Some(Author::ContainerAdd {
                writer: ChainWriter::PortmapContainer,
                add,
            });
        }
        if chain.starts_with("CNI-") {
            let add = self.exec_on(node, Which::Last, |c| {
                is_add(c, &["bridge", "ptp"])
                    && format_chain_name(c.stdin.network_name(), &c.env.container_id) == chain
            });
            return add.map(|add| Author::ContainerAdd {
                writer: ChainWriter::MasqContainer,
                add: Some(add),
            });
        }
        if !chain.starts_with("cali-") {
            return None;
        }
        let net = self.cluster_net();
        for (prefix, ingress) in [("cali-pi-", true), ("cali-po-", false)] {
            if let Some(p) = net
                .policies
                .iter()
                .find(|p| felix::chain_name(prefix, &felix::policy_id(p)) == chain)
            {
                return Some(Author::FelixPolicy {
                    policy: (p.namespace.clone(), p.name.clone()),
                    ingress,
                });
            }
        }
        let iface = ["cali-tw-", "cali-fw-"]
            .iter()
            .find_map(|p| chain.strip_prefix(p));
        if let Some(p) = iface.and_then(|i| {
            net.pods
                .iter()
                .find(|p| p.node == node && p.host_veth.as_deref() == Some(i))
        }) {
            return Some(Author::FelixEndpoint {
                pod: (p.namespace.clone(), p.name.clone()),
                iface: p.host_veth.clone().unwrap_or_default(),
            });
        }
        for ns in net
            .pods
            .iter()
            .filter(|p| p.node == node)
            .map(|p| &p.namespace)
        {
            let ids = felix::profile_ids(ns);
            let found = ["cali-pri-", "cali-pro-"]
                .iter()
                .flat_map(|prefix| ids.iter().map(move |id| (prefix, id)))
                .find(|(prefix, id)| felix::chain_name(prefix, id) == chain);
            if let Some((_, id)) = found {
                return Some(Author::FelixProfile {
                    namespace: ns.clone(),
                    id: id.clone(),
                });
            }
        }
        Some(Author::Felix)
    }

    /// The links from the chain `at` to the command that made it.
    fn author_links(&self, node: &str, at: String, author: Author) -> Vec<Link> {
        let whose = |writer: ChainWriter| Link::Chain {
            chain: at.clone(),
            writer,
        };
        let mut chain = Vec::new();
        match author {
            Author::ContainerAdd { writer, add } => {
                chain.push(whose(writer));
                chain.extend(self.exec_or_forgotten(node, add));
            }
            Author::PortmapShared(add) => {
                chain.push(whose(ChainWriter::PortmapShared));
                chain.extend(self.exec_or_forgotten(node, add));
            }
            Author::Flanneld => {
                chain.push(whose(if at == flannel::MASQ_CHAIN {
                    ChainWriter::FlanneldMasq
                } else {
                    ChainWriter::FlanneldForward
                }));
                chain.push(Link::PeerLease {
                    daemon: "flanneld",
                    node: node.to_string(),
                    peer: node.to_string(),
                });
                chain.extend(self.node_origin(node));
            }
            Author::FelixPolicy { policy, ingress } => {
                chain.push(whose(ChainWriter::FelixPolicy {
                    namespace: policy.0.clone(),
                    name: policy.1.clone(),
                    ingress,
                }));
                let uid = self.cluster.policies.get(&policy).map(|o| o.metadata.uid);
                chain.push(Link::Made(match uid {
                    Some(uid) => self.origin_of_object(
                        |lab| lab.cluster.policies.get(&policy).map(|o| o.metadata.uid),
                        uid,
                    ),
                    None => Origin::Start,
                }));
            }
            Author::FelixEndpoint { pod, iface } => {
                chain.push(whose(ChainWriter::FelixEndpoint {
                    namespace: pod.0.clone(),
                    name: pod.1.clone(),
                    iface,
                    node: node.to_string(),
                }));
                let uid = self.cluster.pods.get(&pod).map(|o| o.metadata.uid);
                chain.push(Link::Made(match uid {
                    Some(uid) => self.origin_of_object(
                        |lab| lab.cluster.pods.get(&pod).map(|o| o.metadata.uid),
                        uid,
                    ),
                    None => Origin::Start,
                }));
            }
            Author::FelixProfile { namespace, id } => {
                chain.push(whose(ChainWriter::FelixProfile {
                    namespace: namespace.clone(),
                    id,
                }));
                // Programmed for the first endpoint of the namespace on the node (or when
                // Calico started under one): the first event since which the chain is there.
                chain.push(Link::Made(self.origin_since(|lab| {
                    lab.nodes.get(node).is_some_and(|rt| {
                        rt.host
                            .netfilter
                            .family(false)
                            .get(TableKind::Filter)
                            .chains()
                            .contains_key(at.as_str())
                    })
                })));
            }
            Author::Felix => {
                chain.push(whose(ChainWriter::Felix));
                chain.push(Link::Made(self.network_origin()));
            }
        }
        chain
    }

    /// A plugin execution's chain, or the note that it is older than the wire log keeps.
    fn exec_or_forgotten(&self, node: &str, add: Option<(u64, WireRecord)>) -> Vec<Link> {
        match add {
            Some((seq, rec)) => self.exec_chain(node, seq, &rec),
            None => vec![Link::Made(Origin::Forgotten)],
        }
    }

    /// The event since which the running network has run (`network use`, or the start).
    pub(super) fn network_origin(&self) -> Origin {
        let name = self.network.name();
        self.origin_since(|lab| lab.network.name() == name)
    }
}
