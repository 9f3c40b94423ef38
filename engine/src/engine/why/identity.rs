//! `why identity ID`: a Cilium security identity back to what it stands for. A cluster
//! identity is cilium-agent's number for a label set (a pod's labels, its namespace's,
//! the service account and cluster), allocated when the first pod with that set appeared
//! (`pod create`, or `label` giving a pod a new set); a CIDR identity is the number of a
//! prefix a NetworkPolicy's ipBlock names; a reserved one the agent knows from its start.

use super::{Lab, LabError, Link};
use crate::netd::cilium::identity::{Identity, IdentityKind, Label, NumericIdentity, prefixes_of};

/// The labels identity `id` stands for in `lab`, if Cilium runs there and has it.
fn labels_at(lab: &Lab, id: NumericIdentity) -> Option<Vec<Label>> {
    let view = lab.network_view();
    lab.network
        .bpf(&view)
        .and_then(|s| s.identities.get(id))
        .map(|i| i.labels.clone())
}

impl Lab {
    /// `why identity ID`.
    pub(super) fn why_identity(&self, text: &str) -> Result<Vec<Link>, LabError> {
        let view = self.network_view();
        let Some(state) = self.network.bpf(&view) else {
            return Err(LabError::msg(format!(
                "{} allocates no security identities: Cilium does (`network use cilium`)",
                self.network.name()
            )));
        };
        let ids = || {
            state
                .identities
                .all()
                .map(|i| i.id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let id: NumericIdentity = text.parse().map_err(|_| {
            LabError::msg(format!(
                "{text:?} is not an identity number; identities: {}",
                ids()
            ))
        })?;
        let Some(identity) = state.identities.get(id) else {
            return Err(LabError::msg(format!(
                "no identity {id}; identities: {} (`show bpf NODE --identities`)",
                ids()
            )));
        };
        let Identity { labels, kind, .. } = identity;
        let mut chain = vec![Link::Identity {
            id,
            labels: identity.printable(),
        }];
        let since = |chain: &mut Vec<Link>| {
            chain.push(Link::Made(
                self.origin_since(|lab| labels_at(lab, id).as_ref() == Some(labels)),
            ));
        };
        match kind {
            IdentityKind::Reserved => {
                chain.push(Link::Controller {
                    who: "cilium-agent",
                    because: "at its start: a reserved identity, which every agent knows and none allocates".into(),
                });
                chain.push(Link::Made(self.network_origin()));
            }
            IdentityKind::Cidr(prefix) => {
                let net = self.cluster_net();
                let policies: Vec<String> = net
                    .policies
                    .iter()
                    .filter(|p| prefixes_of(p).contains(prefix))
                    .map(|p| format!("{}/{}", p.namespace, p.name))
                    .collect();
                chain.push(Link::Controller {
                    who: "cilium-agent",
                    because: format!(
                        "for the prefix {prefix}, which NetworkPolicy {} names in an ipBlock",
                        policies.join(", ")
                    ),
                });
                since(&mut chain);
            }
            IdentityKind::Cluster => {
                let pods: Vec<_> = self
                    .cluster
                    .pods
                    .iter()
                    .filter(|(k, _)| {
                        state.identities.of_pod(&format!("{}/{}", k.0, k.1)) == Some(id)
                    })
                    .collect();
                chain.push(Link::Controller {
                    who: "cilium-agent",
                    because: "for a pod's label set (its labels, its namespace's, the service account and cluster)".into(),
                });
                if let Some((_, pod)) = pods.first() {
                    let own: Vec<String> = pod
                        .metadata
                        .labels
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    let names: Vec<String> = pods
                        .iter()
                        .map(|(k, _)| format!("{}/{}", k.0, k.1))
                        .collect();
                    chain.push(Link::Object {
                        kind: if pods.len() == 1 { "Pod" } else { "Pods" },
                        name: format!(
                            "{} (labels: {})",
                            names.join(", "),
                            if own.is_empty() {
                                "none of its own".to_string()
                            } else {
                                own.join(", ")
                            }
                        ),
                    });
                }
                since(&mut chain);
            }
        }
        Ok(chain)
    }
}
