//! `sc`, `pvc` and `snapshot`: the API side of storage. The controllers in
//! `crate::storage` and the kubelets do the rest.

use super::invalid::Invalid;
use super::listing::Sel;
use super::validate;
use super::{Lab, LabError};
use crate::cluster::{
    ApiKind, CsiDriverSpec, Object, PvcSpec, Resources, StorageClassSpec, TopologyRequirement,
    TopologySelectorTerm, TypedLocalObjectReference, VolumeSnapshotSource, VolumeSnapshotSpec,
};
use crate::command::grammar::{PvcCmd, PvcCreateArgs, ScCmd, SnapshotCmd};
use crate::control::Component;
use crate::csi::K8sAccessMode;
use crate::render::{Line, Outcome, Role, Table};
use crate::storage::snapshotter::PVC_AS_SOURCE;
use crate::storage::{DEFAULT_CLASS, DRIVER, PV_PROTECTION, PVC_PROTECTION, SNAPSHOT_CLASS};
use crate::util::quantity::{canonical_text, parse_bytes};
use std::collections::BTreeMap;

fn created(what: String) -> Outcome {
    let mut out = Outcome::empty();
    out.line(
        Line::new()
            .push(what, Role::Name)
            .push(" created", Role::Good),
    );
    out
}

impl Lab {
    /// The CSIDriver object and the two StorageClasses of the default cluster.
    pub fn install_storage_defaults(&mut self) {
        let clock = self.clock;
        let driver = Object::new(
            DRIVER,
            "",
            CsiDriverSpec {
                attach_required: true,
                pod_info_on_mount: true,
                volume_lifecycle_modes: vec!["Persistent".into()],
                storage_capacity: false,
                fs_group_policy: "File".into(),
                requires_republish: false,
            },
        );
        let _ = self.cluster.csi_drivers().create(driver, clock);
        for (name, binding, default) in [
            ("standard", "Immediate", true),
            ("local-wffc", "WaitForFirstConsumer", false),
        ] {
            let mut sc = Object::new(
                name,
                "",
                StorageClassSpec {
                    provisioner: DRIVER.into(),
                    parameters: BTreeMap::new(),
                    reclaim_policy: "Delete".into(),
                    volume_binding_mode: binding.into(),
                    allow_volume_expansion: true,
                    allowed_topologies: Vec::new(),
                },
            );
            if default {
                sc.metadata
                    .annotations_mut()
                    .insert(DEFAULT_CLASS.into(), "true".into());
            }
            let _ = self.cluster.storage_classes().create(sc, clock);
        }
    }

    /// Dispatch `sc …`.
    pub fn sc(&mut self, cmd: ScCmd) -> Result<Outcome, LabError> {
        match cmd {
            ScCmd::Create {
                name,
                provisioner,
                reclaim,
                binding,
                params,
                no_expansion,
                zones,
                default,
            } => {
                validate::metadata_name(ApiKind::StorageClass, &name)?;
                validate::provisioner(&name, &provisioner)?;
                if !matches!(reclaim.as_str(), "Delete" | "Retain") {
                    return Err(LabError::from(Invalid::one(
                        ApiKind::StorageClass,
                        &name,
                        format!(
                            "reclaimPolicy: Unsupported value: \"{reclaim}\": supported values: \"Delete\", \"Retain\""
                        ),
                    )));
                }
                if !matches!(binding.as_str(), "Immediate" | "WaitForFirstConsumer") {
                    return Err(LabError::from(Invalid::one(
                        ApiKind::StorageClass,
                        &name,
                        format!(
                            "volumeBindingMode: Unsupported value: \"{binding}\": supported values: \"Immediate\", \"WaitForFirstConsumer\""
                        ),
                    )));
                }
                let mut parameters = BTreeMap::new();
                for p in &params {
                    let (k, v) = p.split_once('=').ok_or_else(|| {
                        LabError::msg(format!("invalid parameter {p:?}: expected KEY=VALUE"))
                    })?;
                    parameters.insert(k.to_string(), v.to_string());
                }
                let allowed_topologies = match zones {
                    Some(z) => vec![TopologySelectorTerm {
                        match_label_expressions: vec![TopologyRequirement {
                            key: crate::csi::TOPOLOGY_KEY_ZONE.into(),
                            values: z.split(',').map(|s| s.trim().to_string()).collect(),
                        }],
                    }],
                    None => Vec::new(),
                };
                let mut sc = Object::new(
                    &name,
                    "",
                    StorageClassSpec {
                        provisioner,
                        parameters,
                        reclaim_policy: reclaim,
                        volume_binding_mode: binding,
                        allow_volume_expansion: !no_expansion,
                        allowed_topologies,
                    },
                );
                if default {
                    sc.metadata
                        .annotations_mut()
                        .insert(DEFAULT_CLASS.into(), "true".into());
                }
                let clock = self.clock;
                self.cluster.storage_classes().create(sc, clock)?;
                Ok(created(format!("storageclass.storage.k8s.io/{name}")))
            }
            ScCmd::Delete { name } => {
                self.cluster.storage_classes().delete("", &name)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(
                            format!("storageclass.storage.k8s.io \"{name}\""),
                            Role::Name,
                        )
                        .push(" deleted", Role::Good),
                );
                Ok(out)
            }
            ScCmd::List => Ok(table_or(
                crate::resource::of(ApiKind::StorageClass).table(self, &Sel::default(), false),
                "No resources found",
            )),
        }
    }

    /// Dispatch `pvc …`.
    pub fn pvc(&mut self, cmd: PvcCmd) -> Result<Outcome, LabError> {
        match cmd {
            PvcCmd::Create(a) => self.pvc_create(&a),
            PvcCmd::Bind { name, ns } => {
                self.cluster.pvcs().get(&ns, &name)?;
                let mut changed = true;
                let mut passes = 0;
                while changed && passes < super::MAX_PASSES {
                    changed = self.schedule_wffc_claims();
                    changed |= self.run_storage(|s, ctx| {
                        let a = s.provisioner.reconcile(ctx);
                        s.binder.reconcile(ctx) || a
                    });
                    passes += 1;
                }
                let pvc = self.cluster.pvcs().get(&ns, &name)?.clone();
                let mut out = Outcome::empty();
                out.line(Line::styled(
                    format!(
                        "persistentvolumeclaim/{name} {}{}",
                        pvc.status.phase,
                        if pvc.spec.volume_name.is_empty() {
                            String::new()
                        } else {
                            format!(" → {}", pvc.spec.volume_name)
                        }
                    ),
                    if pvc.status.phase == "Bound" {
                        Role::Good
                    } else {
                        Role::Warn
                    },
                ));
                if pvc.status.phase != "Bound" {
                    self.why_pending(&mut out, &pvc);
                }
                Ok(out)
            }
            PvcCmd::Expand { name, size, ns } => self.pvc_expand(&ns, &name, &size),
            PvcCmd::Delete { name, ns, .. } => {
                let clock = self.clock;
                let gone = self.cluster.pvcs().request_delete(&ns, &name, clock)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(format!("persistentvolumeclaim \"{name}\""), Role::Name)
                        .push(" deleted", Role::Good),
                );
                if gone.is_none() {
                    out.line(Line::styled(
                        format!("  (Terminating until no pod uses it: finalizer {PVC_PROTECTION})"),
                        Role::Dim,
                    ));
                    let source = self
                        .cluster
                        .pvcs
                        .get(&(ns.clone(), name.clone()))
                        .is_some_and(|p| {
                            p.metadata.finalizers().iter().any(|f| f == PVC_AS_SOURCE)
                        });
                    if source {
                        out.line(Line::styled(
                            format!("  (and until no snapshot of it is still being taken: finalizer {PVC_AS_SOURCE})"),
                            Role::Dim,
                        ));
                    }
                }
                Ok(out)
            }
            PvcCmd::List => Ok(table_or(
                crate::resource::of(ApiKind::PersistentVolumeClaim).table(
                    self,
                    &Sel::default(),
                    false,
                ),
                "No resources found",
            )),
        }
    }

    fn pvc_create(&mut self, a: &PvcCreateArgs) -> Result<Outcome, LabError> {
        validate::metadata_name(ApiKind::PersistentVolumeClaim, &a.name)?;
        validate::namespace(&a.ns).map_err(LabError::msg)?;
        self.require_namespace(&a.ns)?;
        let size = parse_bytes(&a.size).map_err(LabError::msg)?;
        // The API server keeps the request in its canonical form (`5000M` is `5G`).
        let request = canonical_text(&a.size);
        if size <= 0 {
            return Err(LabError::from(Invalid::one(
                ApiKind::PersistentVolumeClaim,
                &a.name,
                format!(
                    "spec.resources[storage]: Invalid value: \"{request}\": must be greater than zero"
                ),
            )));
        }
        let mut modes = Vec::new();
        for m in &a.access {
            let mode = K8sAccessMode::parse(m).ok_or_else(|| {
                LabError::from(Invalid::one(ApiKind::PersistentVolumeClaim, &a.name, format!("spec.accessModes: Unsupported value: \"{m}\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\" (or RWO, ROX, RWX, RWOP)")))
            })?;
            let name = mode.api_name().to_string();
            if !modes.contains(&name) {
                modes.push(name);
            }
        }
        if modes.contains(&"ReadWriteOncePod".to_string()) && modes.len() > 1 {
            return Err(LabError::from(Invalid::one(
                ApiKind::PersistentVolumeClaim,
                &a.name,
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
            )));
        }
        if !matches!(a.mode.as_str(), "Filesystem" | "Block") {
            return Err(LabError::from(Invalid::one(
                ApiKind::PersistentVolumeClaim,
                &a.name,
                format!(
                    "spec.volumeMode: Unsupported value: \"{}\": supported values: \"Block\", \"Filesystem\"",
                    a.mode
                ),
            )));
        }
        // The DefaultStorageClass admission plugin fills in the default class.
        let class = match &a.class {
            Some(c) => c.clone(),
            None => self.default_class(),
        };
        // spec.dataSource.name is validated as the object name it refers to.
        if let Some(s) = &a.from_snapshot {
            validate::object_name(ApiKind::VolumeSnapshot, s).map_err(LabError::msg)?;
        }
        if let Some(c) = &a.from_pvc {
            validate::object_name(ApiKind::PersistentVolumeClaim, c).map_err(LabError::msg)?;
        }
        let data_source = match (&a.from_snapshot, &a.from_pvc) {
            (Some(s), _) => Some(TypedLocalObjectReference {
                api_group: "snapshot.storage.k8s.io".into(),
                kind: ApiKind::VolumeSnapshot.name().into(),
                name: s.clone(),
            }),
            // A clone: the core group, written without apiGroup.
            (None, Some(c)) => Some(TypedLocalObjectReference {
                api_group: String::new(),
                kind: ApiKind::PersistentVolumeClaim.name().into(),
                name: c.clone(),
            }),
            (None, None) => None,
        };
        let obj = Object::new(
            &a.name,
            &a.ns,
            PvcSpec {
                access_modes: modes,
                resources: Resources {
                    requests: BTreeMap::from([("storage".to_string(), request.clone())]),
                },
                storage_class_name: class.clone(),
                volume_mode: a.mode.clone(),
                volume_name: String::new(),
                data_source,
            },
        );
        // The store's create adds the StorageObjectInUseProtection admission plugin's
        // finalizer. The provisioner annotations come later, from the PV controller, once
        // provisioning may start.
        let clock = self.clock;
        self.cluster.pvcs().create(obj, clock)?;
        let mut out = created(format!("persistentvolumeclaim/{}", a.name));
        out.line(Line::styled(
            format!(
                "  {} {} · class {}",
                request,
                a.access.join(","),
                if class.is_empty() { "<none>" } else { &class }
            ),
            Role::Dim,
        ));
        Ok(out)
    }

    pub(crate) fn pvc_expand(
        &mut self,
        ns: &str,
        name: &str,
        size: &str,
    ) -> Result<Outcome, LabError> {
        let want = parse_bytes(size).map_err(LabError::msg)?;
        let pvc = self.cluster.pvcs().get(ns, name)?.clone();
        let old = pvc
            .spec
            .resources
            .requests
            .get("storage")
            .and_then(|s| parse_bytes(s).ok())
            .unwrap_or(0);
        // A request the claim already has is a patch that changes nothing: kubectl says so
        // and the API server writes nothing (no new resourceVersion, no watch event, so no
        // controller wakes).
        if let Some(held) = pvc
            .spec
            .resources
            .requests
            .get("storage")
            .filter(|_| want == old)
        {
            return Ok(requests_line(
                name,
                &format!("{held} (no change)"),
                Role::Dim,
            ));
        }
        // The API server validates the update first (ValidatePersistentVolumeClaimUpdate,
        // Kubernetes 1.31 with RecoverVolumeExpansionFailure off, its default): the size of
        // a claim that is not Bound is part of its immutable spec, and a request may not
        // shrink. Both errors come together.
        let mut causes = Vec::new();
        if pvc.status.phase != "Bound" && want != old {
            causes.push(
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims".to_string(),
            );
        }
        if want < old {
            causes.push(
                "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
                    .to_string(),
            );
        }
        if !causes.is_empty() {
            return Err(LabError::from(Invalid {
                kind: ApiKind::PersistentVolumeClaim,
                name: name.to_string(),
                causes,
            }));
        }
        // Then the PersistentVolumeClaimResize admission plugin, for a claim that grows.
        let allowed = crate::storage::listers::class_of(&self.cluster, &pvc)
            .is_some_and(|c| c.spec.allow_volume_expansion);
        if want > old && !allowed {
            return Err(LabError::from(crate::cluster::ApiError::Forbidden {
                resource: "persistentvolumeclaims",
                name: name.to_string(),
                reason: "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize".into(),
            }));
        }
        let mut next = pvc;
        next.spec
            .resources
            .requests
            .insert("storage".into(), canonical_text(size));
        self.cluster.pvcs().update(next)?;
        // Pods using the claim need kubelet's attention if the node must grow the filesystem.
        let users: Vec<(String, String)> = self
            .cluster
            .pods
            .values()
            .filter(|p| {
                p.metadata.namespace() == ns
                    && p.spec
                        .volumes()
                        .iter()
                        .any(|v| v.persistent_volume_claim.claim_name == name)
            })
            .map(|p| (p.metadata.namespace().clone(), p.name().to_string()))
            .collect();
        self.dirty.extend(users);
        Ok(requests_line(name, size, Role::Good))
    }

    /// Why a claim is still Pending, as `kubectl describe pvc` shows it: its latest event
    /// (the PV controller's WaitForFirstConsumer, the provisioner's ProvisioningFailed, …).
    fn why_pending(&self, out: &mut Outcome, pvc: &Object<PvcSpec>) {
        let object = crate::cluster::ObjectRef::to(pvc);
        let Some((e, ev)) = self.calls.events(&object, Some(pvc.metadata.uid)).last() else {
            return;
        };
        let mut message = String::new();
        ev.message.write(&ev.object, &mut message);
        let (kind, role) = match e.level() {
            crate::record::Level::Normal => ("Normal", Role::Dim),
            crate::record::Level::Warning => ("Warning", Role::Bad),
        };
        out.line(
            Line::new()
                .push(format!("  {kind} {} ", ev.reason), role)
                .push(format!("({}): ", e.actor().source()), Role::Actor)
                .push(message, Role::Plain),
        );
    }

    /// The class the DefaultStorageClass admission plugin gives a claim created without
    /// one: among the classes annotated `storageclass.kubernetes.io/is-default-class:
    /// "true"`, the most recently created (Kubernetes 1.26+, `GetDefaultClass`: newest
    /// `creationTimestamp` first, which has whole seconds, then the name ascending).
    pub(crate) fn default_class(&self) -> String {
        self.cluster
            .storage_classes
            .values()
            .filter(|sc| {
                sc.metadata
                    .annotations()
                    .get(DEFAULT_CLASS)
                    .is_some_and(|v| v == "true")
            })
            .map(|sc| (sc.metadata.creation_tick.whole_secs(), sc.name()))
            .min_by(|(a_secs, a), (b_secs, b)| b_secs.cmp(a_secs).then_with(|| a.cmp(b)))
            .map(|(_, name)| name.to_string())
            .unwrap_or_default()
    }

    /// `delete pv NAME` (or `delete -f` of a PV manifest): the API server accepts it and,
    /// as the PV holds finalizers (kubernetes.io/pv-protection from admission, the
    /// provisioner's), only sets its deletionTimestamp. The pv-protection controller lets
    /// go once the PV is not Bound (its claim is gone), so a bound PV stays Terminating
    /// and keeps serving its claim until then.
    pub(crate) fn pv_delete(&mut self, name: &str) -> Result<Outcome, LabError> {
        let clock = self.clock;
        let pv = self.cluster.pvs().get("", name)?.clone();
        self.cluster.pvs().request_delete("", name, clock)?;
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("persistentvolume \"{name}\""), Role::Name)
                .push(" deleted", Role::Good),
        );
        if pv.status.phase == "Bound"
            && let Some(c) = &pv.spec.claim_ref
        {
            out.line(Line::styled(
                format!(
                    "  (Terminating while bound to claim {}/{}: finalizer {PV_PROTECTION})",
                    c.namespace, c.name
                ),
                Role::Dim,
            ));
        }
        if pv.spec.persistent_volume_reclaim_policy == "Retain" || pv.status.phase == "Available" {
            out.line(Line::styled(
                format!(
                    "  the volume {} stays on the driver: deleting a PV object never deletes its volume",
                    pv.spec.csi.volume_handle
                ),
                Role::Dim,
            ));
        }
        Ok(out)
    }

    /// Dispatch `snapshot …`.
    pub fn snapshot(&mut self, cmd: SnapshotCmd) -> Result<Outcome, LabError> {
        match cmd {
            SnapshotCmd::Create { name, pvc, ns } => {
                validate::metadata_name(ApiKind::VolumeSnapshot, &name)?;
                validate::object_name(ApiKind::PersistentVolumeClaim, &pvc)
                    .map_err(LabError::msg)?;
                // The API server does not look the claim up: a snapshot of a missing claim is
                // created, and snapshot-controller reports the error (SnapshotContentCreationFailed).
                self.require_namespace(&ns)?;
                let obj = Object::new(
                    &name,
                    &ns,
                    VolumeSnapshotSpec {
                        source: VolumeSnapshotSource {
                            persistent_volume_claim_name: pvc,
                        },
                        volume_snapshot_class_name: SNAPSHOT_CLASS.into(),
                    },
                );
                let clock = self.clock;
                self.cluster.snapshots().create(obj, clock)?;
                Ok(created(format!(
                    "volumesnapshot.snapshot.storage.k8s.io/{name}"
                )))
            }
            SnapshotCmd::Delete { name, ns } => {
                // The API server only sets deletionTimestamp while finalizers remain;
                // snapshot-controller deletes the content first, then lets it go.
                let clock = self.clock;
                let gone = self.cluster.snapshots().request_delete(&ns, &name, clock)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(
                            format!("volumesnapshot.snapshot.storage.k8s.io \"{name}\""),
                            Role::Name,
                        )
                        .push(" deleted", Role::Good),
                );
                if gone.is_none() {
                    let held = self
                        .cluster
                        .snapshots
                        .get(&(ns.clone(), name.clone()))
                        .map(|s| s.metadata.finalizers().join(", "))
                        .unwrap_or_default();
                    out.line(Line::styled(
                        format!("  (Terminating until snapshot-controller removes its finalizers: {held})"),
                        Role::Dim,
                    ));
                }
                Ok(out)
            }
            SnapshotCmd::List => Ok(table_or(
                crate::resource::of(ApiKind::VolumeSnapshot).table(self, &Sel::default(), false),
                "No resources found",
            )),
        }
    }
}

/// Access modes as kubectl prints them (`RWO,ROX`).
pub(crate) fn short_modes(modes: &[String]) -> String {
    modes
        .iter()
        .map(|m| K8sAccessMode::parse(m).map(|x| x.short_name()).unwrap_or(m))
        .collect::<Vec<_>>()
        .join(",")
}

fn table_or(t: Table, empty: &str) -> Outcome {
    if t.is_empty() {
        let mut out = Outcome::empty();
        out.plain(empty);
        out
    } else {
        t.render()
    }
}

/// `pvc expand`'s answer: the claim and what it now requests.
fn requests_line(name: &str, request: &str, role: Role) -> Outcome {
    let mut out = Outcome::empty();
    out.line(
        Line::new()
            .push(format!("persistentvolumeclaim/{name}"), Role::Name)
            .push(format!(" requests {request}"), role),
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::engine::Lab;

    fn run(lab: &mut Lab, line: &str) {
        if let Err(e) = lab.execute(line) {
            panic!("{line}: {}", e.message);
        }
    }

    fn class_of(lab: &Lab, claim: &str) -> String {
        let key = ("default".to_string(), claim.to_string());
        lab.cluster.pvcs[&key].spec.storage_class_name.clone()
    }

    #[test]
    fn of_two_default_classes_a_claim_gets_the_most_recently_created() {
        let mut lab = Lab::new();
        run(&mut lab, "tick 5");
        run(&mut lab, "sc create zfast --default");
        run(&mut lab, "pvc create data --size 1Gi");
        assert_eq!(class_of(&lab, "data"), "zfast");
    }

    /// `pvc bind` on a claim that stays Pending says why, as `kubectl describe pvc` would.
    #[test]
    fn binding_a_wait_for_first_consumer_claim_says_why_it_stays_pending() {
        let mut lab = Lab::new();
        run(&mut lab, "pvc create w --size 1Gi --class local-wffc");
        let out = lab.execute("pvc bind w").expect("bind").to_text();
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "persistentvolumeclaim/w Pending",
                "  Normal WaitForFirstConsumer (persistentvolume-controller): waiting for first consumer to be created before binding",
            ]
        );
    }

    #[test]
    fn default_classes_created_in_the_same_second_go_by_name() {
        let mut lab = Lab::new();
        run(&mut lab, "tick 5");
        run(&mut lab, "sc create zeta --default");
        run(&mut lab, "sc create alpha --default");
        run(&mut lab, "pvc create data --size 1Gi");
        assert_eq!(class_of(&lab, "data"), "alpha");
    }
}
