//! `delete KIND NAME`, kubectl's verb order, routed to the lab's own `pod delete`, `pvc
//! delete`, … so that the output and the journal are theirs; `delete -f FILE` deletes what
//! a manifest names (`super::apply_cmd`), and `delete pv NAME` a volume no claim holds.
//!
//! Argument errors use kubectl's words (the resource builder,
//! `staging/src/k8s.io/cli-runtime/pkg/resource/builder.go`).

use super::listing::api_resource;
use super::views::{canonical_kind, not_found};
use super::{Lab, LabError};
use crate::cluster::no_namespace;
use crate::command::Command;
use crate::command::grammar::{
    DeleteArgs, NadCmd, NsCmd, PodCmd, PolicyCmd, PvcCmd, ScCmd, SnapshotCmd,
};
use crate::render::Outcome;

impl Lab {
    /// `delete KIND NAME [-n NS]`: the lab's own delete command for that kind.
    pub fn delete(&mut self, d: DeleteArgs) -> Result<Outcome, LabError> {
        if let Some(f) = &d.file {
            let ns = (d.ns != "default").then_some(d.ns.as_str());
            return self.delete_manifest(f, ns);
        }
        if let (Some(kind), Some(name)) = (&d.kind, &d.name) {
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
