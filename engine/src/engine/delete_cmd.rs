//! `delete KIND NAME`, kubectl's verb order, routed to the lab's own `pod delete`, `pvc
//! delete`, … so that the output and the journal are theirs; `delete -f FILE` deletes what
//! a manifest names (`super::apply_cmd`), and `delete pv NAME` a volume no claim holds.
//!
//! Argument errors use kubectl's words (the resource builder,
//! `staging/src/k8s.io/cli-runtime/pkg/resource/builder.go`).

use super::listing::{api_resource, resource_name_pairs};
use super::views::{canonical_kind, not_found};
use super::{Lab, LabError};
use crate::cluster::no_namespace;
use crate::command::Command;
use crate::command::grammar::{
    DeleteArgs, NadCmd, NsCmd, PodCmd, PolicyCmd, PvcCmd, ScCmd, SnapshotCmd,
};
use crate::render::Outcome;

impl Lab {
    /// `delete KIND NAME… [-n NS]` or `delete KIND -l SELECTOR`: the lab's own delete
    /// command for that kind, once per object.
    pub fn delete(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        if let Some(f) = &d.file {
            let ns = (d.ns != "default").then_some(d.ns.as_str());
            return self.delete_manifest(f, ns);
        }
        let names = match (&d.selector, d.names.is_empty()) {
            (Some(_), false) => {
                return Err(LabError::msg(
                    "name cannot be provided when a selector is specified",
                ));
            }
            (Some(sel), true) => {
                let kind = canonical_kind(d.kind.as_deref().unwrap_or(""))?;
                let names = self.names_matching(kind, &d.ns, sel)?;
                if names.is_empty() {
                    let mut out = Outcome::empty();
                    out.plain("No resources found");
                    return Ok(out);
                }
                names
            }
            (None, _) => d.names.clone(),
        };
        // (kind, name) pairs: the KIND/NAME form when an argument has a `/` (the grammar
        // already read `pod/a pod/b` as `pod a b`), else the kind and each name.
        let args: Vec<&str> = d.kind.iter().chain(&names).map(String::as_str).collect();
        let targets: Vec<(Option<String>, Option<String>)> =
            if d.selector.is_none() && args.iter().any(|a| a.contains('/')) {
                resource_name_pairs(&args)?
                    .into_iter()
                    .map(|(k, n)| (Some(k), Some(n)))
                    .collect()
            } else if names.is_empty() {
                vec![(d.kind.clone(), None)]
            } else {
                names
                    .iter()
                    .map(|n| (d.kind.clone(), Some(n.clone())))
                    .collect()
            };
        // One object after another, as kubectl does: a missing one does not stop the rest.
        let mut out = Outcome::empty();
        let mut errors = Vec::new();
        for (kind, name) in targets {
            let one = DeleteArgs {
                kind,
                names: name.into_iter().collect(),
                selector: None,
                ..d.clone()
            };
            match self.delete_one(one) {
                Ok(o) => out.extend(o),
                Err(e) => errors.push(e.message),
            }
        }
        if errors.is_empty() {
            return Ok(out);
        }
        let mut e = LabError::msg(errors.join("\n"));
        e.output = out;
        Err(e)
    }

    /// The names of the objects of `kind` (in `ns` when namespaced) whose labels match a
    /// selector.
    fn names_matching(
        &self,
        kind: &str,
        ns: &str,
        selector: &str,
    ) -> Result<Vec<String>, LabError> {
        let query = crate::cluster::label_query::parse(selector).map_err(LabError::msg)?;
        let c = &self.cluster;
        let pick = |items: Vec<(&(String, String), &crate::cluster::Meta)>, namespaced: bool| {
            items
                .into_iter()
                .filter(|(k, m)| (!namespaced || k.0 == ns) && query.matches(&m.labels))
                .map(|(k, _)| k.1.clone())
                .collect::<Vec<_>>()
        };
        Ok(match kind {
            "pods" => pick(c.pods.iter().map(|(k, o)| (k, &o.metadata)).collect(), true),
            "persistentvolumeclaims" => {
                pick(c.pvcs.iter().map(|(k, o)| (k, &o.metadata)).collect(), true)
            }
            "persistentvolumes" => {
                pick(c.pvs.iter().map(|(k, o)| (k, &o.metadata)).collect(), false)
            }
            "storageclasses" => pick(
                c.storage_classes
                    .iter()
                    .map(|(k, o)| (k, &o.metadata))
                    .collect(),
                false,
            ),
            "networkpolicies" => pick(
                c.policies.iter().map(|(k, o)| (k, &o.metadata)).collect(),
                true,
            ),
            "volumesnapshots" => pick(
                c.snapshots.iter().map(|(k, o)| (k, &o.metadata)).collect(),
                true,
            ),
            "network-attachment-definitions" => pick(
                c.net_attach_defs
                    .iter()
                    .map(|(k, o)| (k, &o.metadata))
                    .collect(),
                true,
            ),
            "namespaces" => pick(
                c.namespaces.iter().map(|(k, o)| (k, &o.metadata)).collect(),
                false,
            ),
            // The kinds the lab does not delete say why, by name.
            _ => Vec::new(),
        })
    }

    /// `delete KIND NAME`: one object.
    fn delete_one(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        if let (Some(kind), Some(name)) = (&d.kind, d.names.first()) {
            if !kind.contains(',') && canonical_kind(kind)? == "persistentvolumes" {
                return self.pv_delete(name);
            }
        }
        let cmd = self.delete_route(d)?;
        self.dispatch(cmd)
    }

    /// The command `delete …` stands for, or why there is none.
    fn delete_route(&self, d: DeleteArgs) -> Result<Command, LabError> {
        let Some(kind_word) = d.kind else {
            return Err(LabError::msg(
                "You must provide one or more resources by argument or filename.\nExample: `delete pod web` (kinds: pod, pvc, sc, netpol, vs, nad, ns)",
            ));
        };
        if kind_word.contains(',') {
            return Err(LabError::msg("you must specify only one resource"));
        }
        let kind = canonical_kind(&kind_word)?;
        let Some(name) = d.names.into_iter().next() else {
            return Err(LabError::msg(
                "resource(s) were provided, but no name was specified",
            ));
        };
        let ns = d.ns;
        let cluster_key = (no_namespace(), name.clone());
        Ok(match kind {
            "pods" => Command::Pod(PodCmd::Delete { name, ns }),
            "persistentvolumeclaims" => Command::Pvc(PvcCmd::Delete { name, ns }),
            "storageclasses" => Command::Sc(ScCmd::Delete { name }),
            "networkpolicies" => Command::Policy(PolicyCmd::Delete { name, ns }),
            "volumesnapshots" => Command::Snapshot(SnapshotCmd::Delete { name, ns }),
            "network-attachment-definitions" => Command::Nad(NadCmd::Delete { name, ns }),
            "namespaces" => Command::Ns(NsCmd::Delete { name }),
            "nodes" => {
                if !self.cluster.nodes.contains_key(&cluster_key) {
                    return Err(not_found(api_resource(kind), &name));
                }
                return Err(LabError::msg(format!(
                    "the lab does not delete Node objects; to model losing {name}, type `fault inject node-down --node {name}`"
                )));
            }
            "volumeattachments" => {
                return Err(LabError::msg(
                    "the attach/detach controller deletes a VolumeAttachment when no pod on its node uses the volume any more: delete the pod (`delete pod NAME`)",
                ));
            }
            "volumesnapshotcontents" => {
                return Err(LabError::msg(
                    "snapshot-controller deletes a VolumeSnapshotContent with its VolumeSnapshot (deletionPolicy Delete): delete the snapshot (`delete vs NAME`)",
                ));
            }
            "csinodes" | "csidrivers" => {
                return Err(LabError::msg(format!(
                    "the lab does not delete {}: the kubelet's plugin registration and the driver's install own them",
                    api_resource(kind)
                )));
            }
            other => {
                return Err(LabError::msg(format!(
                    "the server doesn't have a resource type {other:?}"
                )));
            }
        })
    }
}
