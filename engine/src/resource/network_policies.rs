//! `networking.k8s.io/v1` NetworkPolicy: kubectl's printer (POD-SELECTOR); `delete netpol`
//! is the lab's `policy delete`.

use super::{Apply, Delete, Names, Resource, cell};
use crate::cluster::policy::NetworkPolicySpec;
use crate::cluster::{Cluster, Object, Table, TableOps};
use crate::command::Command;
use crate::command::grammar::PolicyCmd;
use crate::engine::Lab;
use crate::engine::views::{age, selector_column};
use crate::manifest::Manifest;
use crate::render::Role;

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
