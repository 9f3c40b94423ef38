//! external-provisioner: for each claim of a class it serves, call CreateVolume (with the
//! claim's size, access modes, the class parameters, topology and data source) and write a
//! PV bound to the claim; when a PV with reclaim policy Delete is released, call
//! DeleteVolume and remove the PV. Also the scheduler's part of WaitForFirstConsumer: a
//! claim used by a pod gets the `selected-node` annotation.

use super::{
    BETA_STORAGE_PROVISIONER, DRIVER, PROVISIONER_FINALIZER, SELECTED_NODE, STORAGE_PROVISIONER,
    volume_capability,
};
use crate::cluster::ObjectRef;
use crate::cluster::{
    ApiKind, CsiPvSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Object,
    ObjectReference, PvSpec, PvcSpec, StorageClassSpec, VolumeNodeAffinity,
};
use crate::control::{Component, Ctx};
use crate::csi::types::{
    CapacityRange, CreateVolumeRequest, DeleteVolumeRequest, SnapshotSource, VolumeContentSource,
};
use crate::record::Level;
use crate::util::quantity::{format_bytes, parse_bytes};
use std::collections::BTreeMap;

/// The PV and CreateVolume name external-provisioner uses: `pvc-<claim uid>`.
pub fn volume_name(pvc: &Object<PvcSpec>) -> String {
    format!("pvc-{}", pvc.metadata.uid)
}

/// external-provisioner: CreateVolume for claims without a volume, DeleteVolume for Released PVs with reclaim policy Delete.
#[derive(Debug, Clone, Default)]
pub(crate) struct Provisioner {
    /// Claims without a volume, not being deleted.
    pub provision: super::work::WorkSet,
    /// Released PVs with reclaim policy Delete.
    pub released: super::work::WorkSet,
    /// PVs whose provisioner finalizer is to be added or removed.
    pub finalizers: super::work::WorkSet,
    /// Its work queue's rate limiter.
    pub backoff: crate::control::Backoff,
    /// The UID of the claim each backoff key last failed for: a claim deleted and created
    /// again under the same name is a new object, and the work queue forgot the old one's
    /// failures when it saw it gone (sig-storage-lib-external-provisioner `Forget`).
    pub backoff_uid: std::collections::BTreeMap<String, crate::cluster::Uid>,
    /// The nodes' topology from its Node and CSINode informers.
    pub topology: super::topology::TopologyCache,
}

impl Component for Provisioner {
    fn name(&self) -> &'static str {
        "external-provisioner"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.pass(ctx)
    }
}

impl Provisioner {
    /// One pass of external-provisioner.
    pub fn pass(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut changed = false;
        // shouldProvision: unbound claims the PV controller handed to this driver.
        let claims =
            self.provision
                .keys(&ctx.api.revs, &ctx.api.pvcs, super::work::only_own, |p| {
                    p.spec.volume_name.is_empty()
                        && p.metadata.deletion_tick().is_none()
                        && handed_to_us(p)
                });
        for key in claims {
            let Some(pvc) = ctx.api.pvcs.get(&key).cloned() else {
                continue;
            };
            changed |= self.provision(ctx, &pvc);
        }
        changed |= self.handle_protection_finalizer(ctx);
        changed |= self.delete_released_volumes(ctx);
        changed
    }

    fn provision(&mut self, ctx: &mut Ctx<'_>, pvc: &Object<PvcSpec>) -> bool {
        let object = ObjectRef::to(pvc);
        // The PV controller reported a missing class or another provisioner already.
        let Some(class) = super::listers::class_of(ctx.api, pvc).cloned() else {
            return false;
        };
        if class.spec.provisioner != DRIVER {
            return false;
        }
        let pv_name = volume_name(pvc);
        if ctx
            .api
            .pvs
            .contains_key(&(crate::cluster::no_namespace(), pv_name.clone()))
        {
            return false; // provisioned; the binder takes it from here
        }
        // A WaitForFirstConsumer claim needs its selected node (shouldProvision).
        let wffc = class.spec.volume_binding_mode == "WaitForFirstConsumer";
        let selected = pvc.metadata.annotations().get(SELECTED_NODE).cloned();
        if wffc && selected.is_none() {
            return false;
        }
        let backoff_key = format!("provisioner/{}", pvc.key());
        if self
            .backoff_uid
            .get(&backoff_key)
            .is_some_and(|&uid| uid != pvc.metadata.uid)
        {
            self.backoff.clear(&backoff_key);
            self.backoff_uid.remove(&backoff_key);
        }
        if self.backoff.waiting(ctx.clock, &backoff_key) {
            return false;
        }
        self.backoff_uid
            .insert(backoff_key.clone(), pvc.metadata.uid);
        ctx.event_from(
            "external-provisioner",
            Some(super::PROVISIONER_EVENT_SOURCE),
            "Provisioning",
            format!(
                "External provisioner is provisioning volume for claim \"{}\"",
                pvc.key()
            ),
            object.clone(),
            Level::Normal,
        );
        let req = match self.create_volume_request(ctx, pvc, &class, selected.as_deref(), &pv_name)
        {
            Ok(r) => r,
            Err(msg) => {
                ctx.event_from(
                    "external-provisioner",
                    Some(super::PROVISIONER_EVENT_SOURCE),
                    "ProvisioningFailed",
                    format!(
                        "failed to provision volume with StorageClass \"{}\": {msg}",
                        class.name()
                    ),
                    object,
                    Level::Warning,
                );
                self.backoff.fail(ctx, backoff_key);
                return true;
            }
        };
        let resp = ctx.csi_call("external-provisioner", None, "CreateVolume", req, |d, r| {
            d.create_volume(r)
        });
        let volume = match resp {
            Ok(r) => r.volume.unwrap_or_default(),
            Err(status) => {
                ctx.event_from(
                    "external-provisioner",
                    Some(super::PROVISIONER_EVENT_SOURCE),
                    "ProvisioningFailed",
                    format!(
                        "failed to provision volume with StorageClass \"{}\": {}",
                        class.name(),
                        status.go_error_string()
                    ),
                    object,
                    Level::Warning,
                );
                self.backoff.fail(ctx, backoff_key);
                return true;
            }
        };
        if ctx.crash_at(None, crate::faults::CrashPoint::ProvisionerAfterCreate) {
            let what = format!(
                "after CreateVolume returned {}, before the PV was written",
                volume.volume_id
            );
            crate::control::sidecar_crashed(
                ctx,
                &mut self.backoff,
                "external-provisioner",
                &backoff_key,
                &what,
            );
            return true;
        }
        self.backoff.clear(&backoff_key);
        self.backoff_uid.remove(&backoff_key);
        let mut attrs = volume.volume_context.clone();
        attrs.insert(
            "storage.kubernetes.io/csiProvisionerIdentity".into(),
            format!("0-8081-{DRIVER}"),
        );
        let node_affinity = if volume.accessible_topology.is_empty() {
            None
        } else {
            Some(VolumeNodeAffinity {
                required: NodeSelector {
                    node_selector_terms: volume
                        .accessible_topology
                        .iter()
                        .map(|t| NodeSelectorTerm {
                            match_expressions: t
                                .segments
                                .iter()
                                .map(|(k, v)| NodeSelectorRequirement {
                                    key: k.clone(),
                                    operator: "In".into(),
                                    values: vec![v.clone()],
                                })
                                .collect(),
                        })
                        .collect(),
                },
            })
        };
        let mut pv = Object::new(
            &pv_name,
            "",
            PvSpec {
                capacity: BTreeMap::from([(
                    "storage".to_string(),
                    format_bytes(volume.capacity_bytes),
                )]),
                access_modes: pvc.spec.access_modes.clone(),
                // The provisioner library's `ref.GetReference(scheme, claim)`.
                claim_ref: Some(ObjectReference::of(pvc)),
                persistent_volume_reclaim_policy: class.spec.reclaim_policy.clone(),
                storage_class_name: class.name().to_string(),
                volume_mode: pvc.spec.volume_mode.clone(),
                csi: CsiPvSource {
                    driver: DRIVER.into(),
                    volume_handle: volume.volume_id.clone(),
                    fs_type: if pvc.spec.volume_mode == "Block" {
                        String::new()
                    } else {
                        class_parameters(&class.spec.parameters)
                            .map(|(fs, _)| fs)
                            .unwrap_or_else(|_| DEFAULT_FS_TYPE.into())
                    },
                    volume_attributes: attrs,
                },
                node_affinity,
            },
        );
        pv.metadata
            .annotations_mut()
            .insert("pv.kubernetes.io/provisioned-by".into(), DRIVER.into());
        // The finalizer external-provisioner adds to every PV it provisions
        // (`AddFinalizer(true)`; handleProtectionFinalizer takes it off again from a PV
        // that is not reclaimed with Delete); the store's create then appends the
        // StorageObjectInUseProtection admission plugin's kubernetes.io/pv-protection.
        pv.metadata
            .finalizers_mut()
            .push(PROVISIONER_FINALIZER.into());
        let clock = ctx.clock;
        if ctx.api.pvs().create(pv, clock).is_ok() {
            ctx.event_from(
                "external-provisioner",
                Some(super::PROVISIONER_EVENT_SOURCE),
                "ProvisioningSucceeded",
                format!("Successfully provisioned volume {pv_name}"),
                object,
                Level::Normal,
            );
        }
        true
    }

    fn create_volume_request(
        &mut self,
        ctx: &Ctx<'_>,
        pvc: &Object<PvcSpec>,
        class: &Object<StorageClassSpec>,
        selected_node: Option<&str>,
        name: &str,
    ) -> Result<CreateVolumeRequest, String> {
        let size = requested_bytes(pvc)?;
        let (fs_type, parameters) = class_parameters(&class.spec.parameters)?;
        let fs = if pvc.spec.volume_mode == "Block" {
            ""
        } else {
            fs_type.as_str()
        };
        let cap = volume_capability(
            &pvc.spec.access_modes,
            &pvc.spec.volume_mode,
            fs,
            ctx.caps.single_node_multi_writer,
        )?;
        let mut content = None;
        if let Some(src) = &pvc.spec.data_source {
            match ApiKind::from_name(&src.kind) {
                Some(ApiKind::VolumeSnapshot) => {
                    let vs = ctx
                        .api
                        .snapshots
                        .get(&(pvc.metadata.namespace().clone(), src.name.clone()))
                        .ok_or_else(|| {
                            format!(
                                "error getting handle for DataSource Type VolumeSnapshot by Name {}: error getting snapshot {} from api server: volumesnapshots.snapshot.storage.k8s.io \"{}\" not found",
                                src.name, src.name, src.name
                            )
                        })?;
                    // getSnapshotSource: a snapshot being deleted still serves a claim
                    // whose provisioning it protects (its as-source finalizer), no new one.
                    let protected = vs
                        .metadata
                        .finalizers()
                        .iter()
                        .any(|f| f == super::snapshotter::SNAPSHOT_AS_SOURCE);
                    if vs.metadata.deletion_tick().is_some() && !protected {
                        return Err(format!(
                            "error getting handle for DataSource Type VolumeSnapshot by Name {}: snapshot {} is being deleted",
                            src.name, src.name
                        ));
                    }
                    if !vs.status.ready_to_use {
                        return Err(format!(
                            "error getting handle for DataSource Type VolumeSnapshot by Name {}: snapshot {} is not Ready",
                            src.name, src.name
                        ));
                    }
                    let content_obj = ctx
                        .api
                        .snapshot_contents
                        .get(&(
                            String::new(),
                            vs.status.bound_volume_snapshot_content_name.clone(),
                        ))
                        .ok_or_else(|| format!("snapshot {} has no bound content", src.name))?;
                    let restore = content_obj.status.restore_size.unwrap_or(0);
                    if size < restore {
                        return Err(format!(
                            "requested volume size {size} is less than the size {restore} for the source snapshot {}",
                            src.name
                        ));
                    }
                    content = Some(VolumeContentSource {
                        snapshot: Some(SnapshotSource {
                            snapshot_id: content_obj.status.snapshot_handle.clone(),
                        }),
                        volume: None,
                    });
                }
                Some(ApiKind::PersistentVolumeClaim) => {
                    content = Some(clone_source(ctx, pvc, class, &src.name, size).map_err(
                        |e| {
                            format!(
                                "error getting handle for DataSource Type PersistentVolumeClaim by Name {}: {e}",
                                src.name
                            )
                        },
                    )?);
                }
                other => {
                    return Err(format!("unsupported dataSource kind {other:?}"));
                }
            }
        }
        // Topology (`GenerateAccessibilityRequirements`, see `super::topology`): only for
        // a driver with VOLUME_ACCESSIBILITY_CONSTRAINTS (`SupportsTopology`).
        let requirement = if ctx.caps.topology {
            super::topology::accessibility_requirements(
                ctx.api,
                &mut self.topology,
                pvc.name(),
                &class.spec.allowed_topologies,
                selected_node,
            )
            .map_err(|e| e.message())?
        } else {
            None
        };
        Ok(CreateVolumeRequest {
            name: name.to_string(),
            capacity_range: Some(CapacityRange {
                required_bytes: size,
                limit_bytes: 0,
            }),
            volume_capabilities: vec![cap],
            parameters,
            volume_content_source: content,
            accessibility_requirements: requirement,
            ..Default::default()
        })
    }

    /// Reclaim policy Delete: a Released PV's volume is deleted, then the PV.
    /// `handleProtectionFinalizer`: a Bound PV of this driver reclaimed with Delete carries
    /// [`PROVISIONER_FINALIZER`]; one reclaimed otherwise does not.
    fn handle_protection_finalizer(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let pvs = self
            .finalizers
            .keys(&ctx.api.revs, &ctx.api.pvs, super::work::only_own, |pv| {
                let has = has_finalizer(pv, PROVISIONER_FINALIZER);
                let delete = pv.spec.persistent_volume_reclaim_policy == "Delete";
                pv.spec.csi.driver == DRIVER
                    && if delete {
                        !has && pv.status.phase == "Bound" && pv.metadata.deletion_tick().is_none()
                    } else {
                        has
                    }
            });
        let mut changed = false;
        for key in pvs {
            let Some(has) = ctx
                .api
                .pvs
                .get(&key)
                .map(|pv| has_finalizer(pv, PROVISIONER_FINALIZER))
            else {
                continue;
            };
            let mut ops = ctx.api.pvs();
            let done = if has {
                ops.remove_finalizer("", &key.1, PROVISIONER_FINALIZER)
                    .map(|_| ())
            } else {
                ops.add_finalizer("", &key.1, PROVISIONER_FINALIZER)
            };
            changed |= done.is_ok();
        }
        changed
    }

    fn delete_released_volumes(&mut self, ctx: &mut Ctx<'_>) -> bool {
        // shouldDelete: a deleted PV whose finalizer is already gone was deleted before.
        let released =
            self.released
                .keys(&ctx.api.revs, &ctx.api.pvs, super::work::only_own, |pv| {
                    (pv.metadata.deletion_tick().is_none()
                        || has_finalizer(pv, PROVISIONER_FINALIZER))
                        && pv.status.phase == "Released"
                        && pv.spec.persistent_volume_reclaim_policy == "Delete"
                        && pv.spec.csi.driver == DRIVER
                });
        let mut changed = false;
        for pv_key in released {
            let name = &pv_key.1;
            let key = format!("provisioner-delete/{name}");
            if self.backoff.waiting(ctx.clock, &key) {
                continue;
            }
            let Some(pv) = ctx.api.pvs.get(&pv_key) else {
                continue;
            };
            let object = ObjectRef::to(pv);
            let req = DeleteVolumeRequest {
                volume_id: pv.spec.csi.volume_handle.clone(),
                ..Default::default()
            };
            match ctx.csi_call("external-provisioner", None, "DeleteVolume", req, |d, r| {
                d.delete_volume(r)
            }) {
                Ok(_) => {
                    self.backoff.clear(&key);
                    // deleteVolumeOperation: delete the PV object (its finalizers hold it:
                    // pv-protection until the pv-protection controller sees it is not
                    // Bound, external-attacher's until it is detached), then drop this
                    // provisioner's own finalizer.
                    let clock = ctx.clock;
                    let _ = ctx.api.pvs().request_delete("", name, clock);
                    let _ = ctx
                        .api
                        .pvs()
                        .remove_finalizer("", name, PROVISIONER_FINALIZER);
                    ctx.log(
                        "external-provisioner",
                        "delete",
                        format!("persistentvolume {name} deleted (reclaimPolicy Delete)"),
                    );
                }
                Err(status) => {
                    ctx.event_from(
                        "external-provisioner",
                        Some(super::PROVISIONER_EVENT_SOURCE),
                        "VolumeFailedDelete",
                        status.go_error_string(),
                        object,
                        Level::Warning,
                    );
                    self.backoff.fail(ctx, key);
                }
            }
            changed = true;
        }
        changed
    }
}

fn has_finalizer(pv: &Object<PvSpec>, f: &str) -> bool {
    pv.metadata.finalizers().iter().any(|x| x == f)
}

/// Whether the PV controller handed a claim to this driver: `shouldProvision` reads the
/// storage-provisioner annotation, or its beta name.
fn handed_to_us(p: &Object<PvcSpec>) -> bool {
    let ann = p.metadata.annotations();
    ann.get(STORAGE_PROVISIONER)
        .or_else(|| ann.get(BETA_STORAGE_PROVISIONER))
        .is_some_and(|v| v == DRIVER)
}

/// external-provisioner's `getPVCSource` (`pkg/controller/controller.go`), check for check:
/// the source claim is Bound and not being deleted, the new claim is not smaller, the source
/// PV is this driver's and bound to that claim, the volume modes match. The result names the
/// source PV's volume handle (`volume_content_source.volume`).
fn clone_source(
    ctx: &Ctx<'_>,
    claim: &Object<PvcSpec>,
    class: &Object<StorageClassSpec>,
    source: &str,
    requested: i64,
) -> Result<VolumeContentSource, String> {
    let ns = claim.metadata.namespace();
    let src = ctx
        .api
        .pvcs
        .get(&(ns.clone(), source.to_string()))
        .ok_or_else(|| {
            format!(
                "error getting PVC {source} (namespace \"{ns}\") from api server: persistentvolumeclaim \"{source}\" not found"
            )
        })?;
    if src.status.phase != "Bound" {
        // Go's %v of the PersistentVolumeClaimStatus struct: the phase, then its seven
        // other fields, empty.
        return Err(format!(
            "the PVC DataSource {source} must have a status of Bound.  Got {{{} [] map[] [] map[] map[] <nil> <nil>}}",
            src.status.phase
        ));
    }
    if src.metadata.deletion_tick().is_some() {
        return Err(format!(
            "the PVC DataSource {source} is currently being deleted"
        ));
    }
    let src_size = requested_bytes(src)?;
    if requested < src_size {
        return Err(format!(
            "error, new PVC request must be greater than or equal in size to the specified PVC data source, requested {requested} but source is {src_size}"
        ));
    }
    if src.spec.volume_name.is_empty() {
        return Err(format!("volume name is empty in source PVC {source}"));
    }
    let invalid = || "claim in dataSource not bound or invalid".to_string();
    let pv = ctx
        .api
        .pvs
        .get_named("", &src.spec.volume_name)
        .ok_or_else(invalid)?;
    let bound_to_it = pv
        .spec
        .claim_ref
        .as_ref()
        .is_some_and(|r| r.uid == src.metadata.uid && r.namespace == *ns && r.name == source);
    if pv.spec.csi.driver != class.spec.provisioner || !bound_to_it || pv.status.phase != "Bound" {
        return Err(invalid());
    }
    let want_block = claim.spec.volume_mode == "Block";
    let src_block = pv.spec.volume_mode == "Block";
    if !want_block && src_block {
        return Err("the source PVC and destination PVCs must have the same volume mode for cloning.  Source is Block, but new PVC requested Filesystem".into());
    }
    if want_block && !src_block {
        return Err("the source PVC and destination PVCs must have the same volume mode for cloning.  Source is Filesystem, but new PVC requested Block".into());
    }
    Ok(VolumeContentSource {
        snapshot: None,
        volume: Some(crate::csi::types::VolumeSource {
            volume_id: pv.spec.csi.volume_handle.clone(),
        }),
    })
}

/// A claim's `spec.resources.requests.storage` in bytes (0 when it asks for none).
fn requested_bytes(pvc: &Object<PvcSpec>) -> Result<i64, String> {
    Ok(pvc
        .spec
        .resources
        .requests
        .get("storage")
        .map(|s| parse_bytes(s))
        .transpose()?
        .unwrap_or(0))
}

/// The filesystem a Filesystem volume gets when the class names none: the lab's
/// external-provisioner runs with `--default-fstype=ext4` (its own default is empty, and the
/// kubelet would then mount ext4 anyway).
pub(crate) const DEFAULT_FS_TYPE: &str = "ext4";

/// The `csi.storage.k8s.io/` keys external-provisioner knows (`controller.go`): the fsType
/// and the secret references, stripped before CreateVolume.
const RESERVED_PARAMETER_KEYS: &[&str] = &[
    "fstype",
    "provisioner-secret-name",
    "provisioner-secret-namespace",
    "controller-publish-secret-name",
    "controller-publish-secret-namespace",
    "node-stage-secret-name",
    "node-stage-secret-namespace",
    "node-publish-secret-name",
    "node-publish-secret-namespace",
    "controller-expand-secret-name",
    "controller-expand-secret-namespace",
    "secret-name",
    "secret-namespace",
    "node-expand-secret-name",
    "node-expand-secret-namespace",
    "controller-modify-secret-name",
    "controller-modify-secret-namespace",
];

/// A StorageClass's parameters as external-provisioner reads them: the fsType (from
/// `csi.storage.k8s.io/fstype` or the deprecated `fstype`, not both; else the default) and
/// the parameters CreateVolume gets, with the known `csi.storage.k8s.io/` keys stripped and
/// an unknown one refused (`removePrefixedParameters`).
pub(crate) fn class_parameters(
    params: &std::collections::BTreeMap<String, String>,
) -> Result<(String, std::collections::BTreeMap<String, String>), String> {
    const PREFIX: &str = "csi.storage.k8s.io/";
    let prefixed_fs = format!("{PREFIX}fstype");
    let found: Vec<&String> = params
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("fstype") || **k == prefixed_fs)
        .map(|(_, v)| v)
        .collect();
    if found.len() > 1 {
        return Err(format!(
            "fstype specified in parameters with both \"fstype\" and \"{prefixed_fs}\" keys"
        ));
    }
    let fs_type = found
        .first()
        .filter(|v| !v.is_empty())
        .map(|v| v.to_string())
        .unwrap_or_else(|| DEFAULT_FS_TYPE.to_string());
    let mut rest = std::collections::BTreeMap::new();
    for (k, v) in params {
        match k.strip_prefix(PREFIX) {
            Some(key) if RESERVED_PARAMETER_KEYS.contains(&key) => {}
            Some(_) => {
                return Err(format!(
                    "failed to strip CSI Parameters of prefixed keys: found unknown parameter key \"{k}\" with reserved namespace {PREFIX}"
                ));
            }
            None => {
                rest.insert(k.clone(), v.clone());
            }
        }
    }
    Ok((fs_type, rest))
}
