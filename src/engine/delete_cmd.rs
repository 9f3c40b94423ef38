//! `delete KIND NAME`, kubectl's verb order, routed to the lab's own `pod delete`, `pvc
//! delete`, … so that the output and the journal are theirs; and `apply -f` / `delete -f`,
//! which say that manifests are not read yet and what to type instead.
//!
//! Argument errors use kubectl's words (the resource builder,
//! `staging/src/k8s.io/cli-runtime/pkg/resource/builder.go`).

use super::listing::api_resource;
use super::views::{canonical_kind, not_found};
use super::{Lab, LabError};
use crate::cluster::no_namespace;
use crate::command::Command;
use crate::command::grammar::{
    ApplyArgs, DeleteArgs, NadCmd, NsCmd, PodCmd, PolicyCmd, PvcCmd, ScCmd, SnapshotCmd,
};
use crate::render::Outcome;

impl Lab {
    /// `delete KIND NAME [-n NS]`: the lab's own delete command for that kind.
    pub fn delete(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        let cmd = self.delete_route(d)?;
        self.dispatch(cmd)
    }

    /// The command `delete …` stands for, or why there is none.
    fn delete_route(&self, d: DeleteArgs) -> Result<Command, LabError> {
        if let Some(f) = &d.file {
            return Err(LabError::msg(format!(
                "{f:?}: the lab does not read manifests yet; delete by kind and name instead, e.g. `delete pod web`, `delete pvc data -n team-a`"
            )));
        }
        let Some(kind_word) = d.kind else {
            return Err(LabError::msg(
                "You must provide one or more resources by argument or filename.\nExample: `delete pod web` (kinds: pod, pvc, sc, netpol, vs, nad, ns)",
            ));
        };
        if kind_word.contains(',') {
            return Err(LabError::msg("you must specify only one resource"));
        }
        let kind = canonical_kind(&kind_word)?;
        let Some(name) = d.name else {
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
            "persistentvolumes" => {
                let pv = self
                    .cluster
                    .pvs
                    .get(&cluster_key)
                    .ok_or_else(|| not_found(api_resource(kind), &name))?;
                let claim = pv
                    .spec
                    .claim_ref
                    .as_ref()
                    .map(|c| {
                        let ns = if c.namespace == "default" {
                            String::new()
                        } else {
                            format!(" -n {}", c.namespace)
                        };
                        format!("`delete pvc {}{ns}`", c.name)
                    })
                    .unwrap_or_else(|| "`delete pvc CLAIM`".to_string());
                return Err(LabError::msg(format!(
                    "the lab does not delete PersistentVolumes directly; delete the claim instead ({claim}): the PV's reclaim policy ({}) does the rest",
                    pv.spec.persistent_volume_reclaim_policy
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

    /// `apply -f FILE`: not supported yet.
    pub fn apply_manifest(&self, a: &ApplyArgs) -> Result<Outcome, LabError> {
        let Some(f) = &a.file else {
            return Err(LabError::msg("must specify one of -f and -k"));
        };
        Err(LabError::msg(format!(
            "{f:?}: the lab does not read manifests yet; create objects with its commands instead, e.g. `pod create web --node node-1 --label app=web`, `pvc create data --size 1Gi`, `policy create db-allow-web --select app=db --ingress-from app=web` (`help` lists them all)"
        )))
    }
}
