//! `apply -f FILE` and `delete -f FILE`: Kubernetes manifests, as kubectl and the API
//! server take them (`crate::manifest` reads them).
//!
//! Apply creates an object that is not there (`pod/web created`), updates one whose
//! manifest changed (`pod/web configured`) and leaves alone one that did not
//! (`pod/web unchanged`), as kubectl's client-side apply does; like kubectl it keeps
//! what it applied in the `kubectl.kubernetes.io/last-applied-configuration` annotation,
//! and a label or annotation dropped from the manifest since is removed (the three-way
//! merge). An update obeys the API server's rules for what may change
//! (`ValidatePodUpdate`, `ValidatePersistentVolumeClaimUpdate`,
//! `ValidateStorageClassUpdate` in `pkg/apis/*/validation`), and a manifest that carries
//! a `resourceVersion` other than the object's is a Conflict.
//!
//! Objects are applied in the file's order; one refused by the server does not stop the
//! others, and apply then fails naming each (kubectl prints them all at the end).

use super::invalid::Invalid;
use super::validate;
use super::{Lab, LabError};
use crate::cluster::nad::NetAttachDefSpec;
use crate::cluster::policy::NetworkPolicySpec;
use crate::cluster::*;
use crate::command::grammar::ApplyArgs;
use crate::csi::K8sAccessMode;
use crate::manifest::schema::*;
use crate::manifest::{self, Document, Manifest};
use crate::render::{Line, Outcome, Role};
use crate::storage::SNAPSHOT_CLASS;
use crate::util::quantity::parse_bytes;
use std::collections::BTreeMap;

/// The annotation kubectl's client-side apply keeps the applied manifest in.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Why `apply` could not apply one object of its file.
enum Refused {
    /// The API server's validation refused it.
    Invalid {
        /// The error.
        invalid: Box<super::invalid::Invalid>,
        /// Whether the object was there (apply patched it) or was being created.
        existed: bool,
        /// The lab's line for a patched object among several errors.
        lab_text: String,
    },
    /// Anything else, as the lab words it.
    Other(String),
}

/// What applying one object did.
enum Applied {
    Created,
    Configured,
    Unchanged,
}

impl Lab {
    /// `apply -f FILE [-n NS]`.
    pub(crate) fn apply_manifest(&mut self, a: &ApplyArgs) -> Result<Outcome, LabError> {
        let (source, text) = self.manifest_source(a.file.as_deref())?;
        let docs = manifest::parse(&source, &text).map_err(LabError::msg)?;
        let mut out = Outcome::empty();
        let mut errors = Vec::new();
        for doc in docs {
            let what = format!("{}/{}", resource_word(doc.kind), doc.name);
            if !doc.unmodelled.is_empty() {
                out.line(Line::styled(
                    format!(
                        "Warning: {what}: the lab does not model {} (kept out of the object)",
                        doc.unmodelled.join(", ")
                    ),
                    Role::Dim,
                ));
            }
            let existed = object_namespace(&doc, a.ns.as_deref())
                .is_ok_and(|ns| crate::resource::of(doc.kind).exists(self, &ns, &doc.name));
            match self.apply_one(&doc, a.ns.as_deref()) {
                Ok(done) => {
                    let word = match done {
                        Applied::Created => " created",
                        Applied::Configured => " configured",
                        Applied::Unchanged => " unchanged",
                    };
                    out.line(Line::new().push(what, Role::Name).push(word, Role::Good));
                }
                Err(e) => errors.push(match e.invalid {
                    Some(invalid) => Refused::Invalid {
                        // An existing object's patch: kubectl's source prefix then
                        // carries the patch, which the lab does not print.
                        lab_text: format!(
                            "error when applying {what} from {source:?} (line {}): {}",
                            doc.line,
                            invalid.status_message()
                        ),
                        invalid,
                        existed,
                    },
                    None => Refused::Other(format!(
                        "error when applying {what} from {source:?} (line {}): {}",
                        doc.line, e.message
                    )),
                }),
            }
        }
        // kubectl's apply returns its one error as it is (checkErr prints an Invalid one
        // from its details), several as an aggregate: each then reads as
        // StandardErrorMessage prints it, the source added by AddSourceToErr("creating").
        let one = errors.len() == 1;
        let lines: Vec<String> = errors
            .into_iter()
            .map(|e| match e {
                Refused::Invalid { invalid, .. } if one => invalid.kubectl_message(),
                Refused::Invalid {
                    invalid,
                    existed: false,
                    ..
                } => format!(
                    "Error from server (Invalid): error when creating {source:?}: {}",
                    invalid.status_message()
                ),
                Refused::Invalid { lab_text, .. } | Refused::Other(lab_text) => lab_text,
            })
            .collect();
        if lines.is_empty() {
            return Ok(out);
        }
        let mut e = LabError::msg(lines.join("\n"));
        e.output = out;
        Err(e)
    }

    /// `delete -f FILE [-n NS]`: delete each object the manifest names.
    pub(crate) fn delete_manifest(
        &mut self,
        file: &str,
        ns: Option<&str>,
    ) -> Result<Outcome, LabError> {
        let (source, text) = self.manifest_source(Some(file))?;
        let docs = manifest::parse(&source, &text).map_err(LabError::msg)?;
        let mut out = Outcome::empty();
        let mut errors = Vec::new();
        for doc in docs {
            let namespace = match object_namespace(&doc, ns) {
                Ok(n) => n,
                Err(e) => {
                    errors.push(e.message);
                    continue;
                }
            };
            let kind = crate::resource::of(doc.kind);
            let done = super::delete_cmd::route(self, kind, doc.name.clone(), namespace).and_then(
                |route| match route {
                    super::delete_cmd::Route::Command(cmd) => self.dispatch(cmd),
                    super::delete_cmd::Route::Volume(name) => self.pv_delete(&name),
                },
            );
            match done {
                Ok(o) => out.extend(o),
                Err(e) => errors.push(format!(
                    "error when deleting {}/{} from {source:?}: {}",
                    resource_word(doc.kind),
                    doc.name,
                    e.message
                )),
            }
        }
        if errors.is_empty() {
            return Ok(out);
        }
        let mut e = LabError::msg(errors.join("\n"));
        e.output = out;
        Err(e)
    }

    /// The text of `-f FILE` (read through the journal, so a replay never reads the disk).
    fn manifest_source(&mut self, file: Option<&str>) -> Result<(String, String), LabError> {
        let Some(file) = file else {
            return Err(LabError::msg(
                "must specify one of -f and -k\nExample: `apply -f pod.yaml` (YAML or JSON; several documents separated by ---)",
            ));
        };
        if file == "-" {
            return match self.read_stdin() {
                Some(text) => Ok(("STDIN".to_string(), text)),
                None => Err(LabError::msg(
                    "`-f -` reads the manifest from a here-document: end the line with `<<EOF`, put the manifest on the next lines and close it with a line `EOF` (in a script or at the REPL), or give a file: `apply -f pod.yaml`",
                )),
            };
        }
        let text = self.read_manifest_file(file).map_err(|e| {
            LabError::msg(if e.kind() == std::io::ErrorKind::NotFound {
                format!("the path {file:?} does not exist")
            } else {
                format!("the path {file:?} cannot be read: {e}")
            })
        })?;
        Ok((file.to_string(), text))
    }

    fn apply_one(&mut self, doc: &Document, ns_flag: Option<&str>) -> Result<Applied, LabError> {
        let ns = object_namespace(doc, ns_flag)?;
        match &doc.object {
            Manifest::Namespace(m) => self.apply_namespace(doc, m),
            Manifest::Pod(m) => self.apply_pod(doc, m, &ns),
            Manifest::Pvc(m) => self.apply_pvc(doc, m, &ns),
            Manifest::Pv(m) => self.apply_pv(doc, m),
            Manifest::StorageClass(m) => self.apply_storage_class(doc, m),
            Manifest::NetworkPolicy(m) => self.apply_policy(doc, m, &ns),
            Manifest::VolumeSnapshot(m) => self.apply_snapshot(doc, m, &ns),
            Manifest::Nad(m) => self.apply_nad(doc, m, &ns),
        }
    }

    fn apply_namespace(
        &mut self,
        doc: &Document,
        m: &ObjectM<NamespaceSpecM>,
    ) -> Result<Applied, LabError> {
        validate::namespace(&doc.name).map_err(LabError::msg)?;
        let clock = self.clock;
        let current = self
            .cluster
            .namespaces
            .get(&(no_namespace(), doc.name.clone()));
        let Some(current) = current.cloned() else {
            let mut obj = Object::new(&doc.name, "", NamespaceSpec {});
            set_metadata(&mut obj.metadata, doc, &m.metadata, None)?;
            obj.metadata
                .labels
                .insert("kubernetes.io/metadata.name".into(), doc.name.clone());
            self.cluster.namespaces().create(obj, clock)?;
            return Ok(Applied::Created);
        };
        let mut next = current.clone();
        set_metadata(
            &mut next.metadata,
            doc,
            &m.metadata,
            Some(&current.metadata),
        )?;
        next.metadata
            .labels
            .insert("kubernetes.io/metadata.name".into(), doc.name.clone());
        self.store_update(&current, next, |c| c.namespaces())
    }

    fn apply_pod(
        &mut self,
        doc: &Document,
        m: &ObjectM<PodSpecM>,
        ns: &str,
    ) -> Result<Applied, LabError> {
        validate::metadata_name(ApiKind::Pod, &doc.name)?;
        validate::namespace(ns).map_err(LabError::msg)?;
        self.require_namespace(ns)?;
        let spec = pod_spec(&doc.name, m.spec.as_ref())?;
        if !spec.node_name.is_empty() && !self.nodes.contains_key(&spec.node_name) {
            let known: Vec<_> = self.nodes.keys().cloned().collect();
            return Err(LabError::msg(format!(
                "spec.nodeName: node {:?} not found; nodes are: {} (a real cluster would keep the pod Pending for a node that never comes)",
                spec.node_name,
                super::names::few(&known, "(none)")
            )));
        }
        let key = (ns.to_string(), doc.name.clone());
        let Some(current) = self.cluster.pods.get(&key).cloned() else {
            let mut obj = Object::new(&doc.name, ns, spec);
            set_metadata(&mut obj.metadata, doc, &m.metadata, None)?;
            self.admit_pod(obj)?;
            return Ok(Applied::Created);
        };
        let mut next = current.clone();
        set_metadata(
            &mut next.metadata,
            doc,
            &m.metadata,
            Some(&current.metadata),
        )?;
        let mut wanted = spec;
        if wanted.node_name.is_empty() {
            // Set by the scheduler; a manifest without it does not unset it.
            wanted.node_name = current.spec.node_name.clone();
        }
        // ValidatePodUpdate: only the images may change (and a few fields the lab does
        // not model).
        let mut images_only = current.spec.clone();
        for (c, w) in images_only
            .containers
            .to_mut()
            .iter_mut()
            .zip(wanted.containers.iter())
        {
            c.image = w.image.clone();
        }
        if images_only != wanted {
            return Err(invalid(
                ApiKind::Pod,
                &doc.name,
                "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
            ));
        }
        next.spec = wanted;
        self.store_update(&current, next, |c| c.pods())
    }

    fn apply_pvc(
        &mut self,
        doc: &Document,
        m: &ObjectM<PvcSpecM>,
        ns: &str,
    ) -> Result<Applied, LabError> {
        validate::metadata_name(ApiKind::PersistentVolumeClaim, &doc.name)?;
        validate::namespace(ns).map_err(LabError::msg)?;
        self.require_namespace(ns)?;
        let name = &doc.name;
        let invalid = |what: String| {
            LabError::from(super::invalid::Invalid::one(
                ApiKind::PersistentVolumeClaim,
                name,
                what,
            ))
        };
        let empty = PvcSpecM::default();
        let s = m.spec.as_ref().unwrap_or(&empty);
        let modes = access_modes(&s.access_modes).map_err(invalid)?;
        if modes.is_empty() {
            return Err(invalid(
                "spec.accessModes: Required value: at least 1 access mode is required".into(),
            ));
        }
        let size = s
            .resources
            .requests
            .get("storage")
            .map(Quantity::text)
            .ok_or_else(|| invalid("spec.resources[storage]: Required value".into()))?;
        let bytes =
            parse_bytes(&size).map_err(|e| invalid(format!("spec.resources[storage]: {e}")))?;
        // Kept as the API server keeps it: in canonical form (`5000M` is `5G`).
        let size = crate::util::quantity::canonical_text(&size);
        if bytes <= 0 {
            return Err(invalid(format!(
                "spec.resources[storage]: Invalid value: \"{size}\": must be greater than zero"
            )));
        }
        let volume_mode = s.volume_mode.clone().unwrap_or_else(|| "Filesystem".into());
        if !matches!(volume_mode.as_str(), "Filesystem" | "Block") {
            return Err(invalid(format!(
                "spec.volumeMode: Unsupported value: \"{volume_mode}\": supported values: \"Block\", \"Filesystem\""
            )));
        }
        let source = s.data_source.as_ref().or(s.data_source_ref.as_ref());
        let data_source = match source {
            None => None,
            Some(d) => {
                let group = d.api_group.clone().unwrap_or_default();
                let kind = match ApiKind::from_name(&d.kind) {
                    Some(k @ (ApiKind::VolumeSnapshot | ApiKind::PersistentVolumeClaim))
                        if crate::resource::of(k).group() == group =>
                    {
                        k
                    }
                    _ => {
                        return Err(invalid(format!(
                            "spec.dataSource: Invalid value: {:?}: the lab restores from a VolumeSnapshot (apiGroup snapshot.storage.k8s.io) or clones a PersistentVolumeClaim (no apiGroup)",
                            d.kind
                        )));
                    }
                };
                validate::object_name(kind, &d.name).map_err(LabError::msg)?;
                Some(TypedLocalObjectReference {
                    api_group: group,
                    kind: d.kind.clone(),
                    name: d.name.clone(),
                })
            }
        };
        let key = (ns.to_string(), name.clone());
        let current = self.cluster.pvcs.get(&key).cloned();
        // The DefaultStorageClass admission plugin fills in the default class on create.
        let class = match &s.storage_class_name {
            Some(c) => c.clone(),
            None => match &current {
                Some(c) => c.spec.storage_class_name.clone(),
                None => self.default_class(),
            },
        };
        let wanted = PvcSpec {
            access_modes: modes,
            resources: Resources {
                requests: BTreeMap::from([("storage".to_string(), size.clone())]),
            },
            storage_class_name: class,
            volume_mode,
            volume_name: s
                .volume_name
                .clone()
                .or_else(|| current.as_ref().map(|c| c.spec.volume_name.clone()))
                .unwrap_or_default(),
            data_source,
        };
        let Some(current) = current else {
            let mut obj = Object::new(name, ns, wanted);
            set_metadata(&mut obj.metadata, doc, &m.metadata, None)?;
            // The store's create adds kubernetes.io/pvc-protection (admission).
            let clock = self.clock;
            self.cluster.pvcs().create(obj, clock)?;
            return Ok(Applied::Created);
        };
        let mut next = current.clone();
        set_metadata(
            &mut next.metadata,
            doc,
            &m.metadata,
            Some(&current.metadata),
        )?;
        // ValidatePersistentVolumeClaimUpdate: only requests may change, and only up.
        let mut same_but_size = current.spec.clone();
        same_but_size.resources = wanted.resources.clone();
        if same_but_size != wanted {
            return Err(invalid(
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims".into(),
            ));
        }
        let old = current
            .spec
            .resources
            .requests
            .get("storage")
            .cloned()
            .unwrap_or_default();
        if old != size {
            // The resize goes through the same door as `pvc expand`.
            let users_dirty = next.metadata != current.metadata;
            if users_dirty {
                let mut meta_only = current.clone();
                meta_only.metadata = next.metadata.clone();
                self.cluster.pvcs().update(meta_only)?;
            }
            self.pvc_expand(ns, name, &size)?;
            return Ok(Applied::Configured);
        }
        self.store_update(&current, next, |c| c.pvcs())
    }

    fn apply_pv(&mut self, doc: &Document, m: &ObjectM<PvSpecM>) -> Result<Applied, LabError> {
        validate::metadata_name(ApiKind::PersistentVolume, &doc.name)?;
        let name = &doc.name;
        let invalid = |what: String| invalid(ApiKind::PersistentVolume, name, what);
        let empty = PvSpecM::default();
        let s = m.spec.as_ref().unwrap_or(&empty);
        let capacity = s
            .capacity
            .get("storage")
            .map(Quantity::text)
            .ok_or_else(|| invalid("spec.capacity: Required value".into()))?;
        let bytes =
            parse_bytes(&capacity).map_err(|e| invalid(format!("spec.capacity[storage]: {e}")))?;
        if bytes <= 0 {
            return Err(invalid(format!(
                "spec.capacity[storage]: Invalid value: \"{capacity}\": must be greater than zero"
            )));
        }
        let modes = access_modes(&s.access_modes).map_err(invalid)?;
        if modes.is_empty() {
            return Err(invalid("spec.accessModes: Required value".into()));
        }
        let Some(csi) = &s.csi else {
            return Err(invalid(
                "spec: Required value: must specify a volume type; the lab's volumes are CSI volumes (spec.csi with driver and volumeHandle)".into(),
            ));
        };
        if csi.driver.is_empty() {
            return Err(invalid("spec.csi.driver: Required value".into()));
        }
        if csi.volume_handle.is_empty() {
            return Err(invalid("spec.csi.volumeHandle: Required value".into()));
        }
        let reclaim = s
            .persistent_volume_reclaim_policy
            .clone()
            .unwrap_or_else(|| "Retain".into());
        if !matches!(reclaim.as_str(), "Delete" | "Retain" | "Recycle") {
            return Err(invalid(format!(
                "spec.persistentVolumeReclaimPolicy: Unsupported value: \"{reclaim}\": supported values: \"Delete\", \"Recycle\", \"Retain\""
            )));
        }
        let volume_mode = s.volume_mode.clone().unwrap_or_else(|| "Filesystem".into());
        if !matches!(volume_mode.as_str(), "Filesystem" | "Block") {
            return Err(invalid(format!(
                "spec.volumeMode: Unsupported value: \"{volume_mode}\": supported values: \"Block\", \"Filesystem\""
            )));
        }
        let node_affinity = match &s.node_affinity {
            None => None,
            Some(a) => {
                let mut terms = Vec::new();
                for (i, t) in a.required.node_selector_terms.iter().enumerate() {
                    let mut reqs = Vec::new();
                    for (j, r) in t.match_expressions.iter().enumerate() {
                        if r.operator != "In" {
                            return Err(invalid(format!(
                                "spec.nodeAffinity.required.nodeSelectorTerms[{i}].matchExpressions[{j}].operator: Unsupported value: {:?}: the lab's volume node affinity reads `In`",
                                r.operator
                            )));
                        }
                        reqs.push(NodeSelectorRequirement {
                            key: r.key.clone(),
                            operator: "In".into(),
                            values: r.values.clone(),
                        });
                    }
                    terms.push(NodeSelectorTerm {
                        match_expressions: reqs,
                    });
                }
                Some(VolumeNodeAffinity {
                    required: NodeSelector {
                        node_selector_terms: terms,
                    },
                })
            }
        };
        let claim_ref = s.claim_ref.as_ref().map(|r| ObjectReference {
            kind: r
                .kind
                .clone()
                .unwrap_or_else(|| ApiKind::PersistentVolumeClaim.name().into()),
            namespace: if r.namespace.is_empty() {
                "default".into()
            } else {
                r.namespace.clone()
            },
            name: r.name.clone(),
            uid: r.uid.clone().unwrap_or_default(),
            api_version: r.api_version.clone().unwrap_or_default(),
            resource_version: r.resource_version.clone().unwrap_or_default(),
        });
        let current = self
            .cluster
            .pvs
            .get(&(no_namespace(), name.clone()))
            .cloned();
        let wanted = PvSpec {
            capacity: BTreeMap::from([("storage".to_string(), capacity)]),
            access_modes: modes,
            claim_ref: claim_ref
                .or_else(|| current.as_ref().and_then(|c| c.spec.claim_ref.clone())),
            persistent_volume_reclaim_policy: reclaim,
            storage_class_name: s.storage_class_name.clone().unwrap_or_default(),
            volume_mode,
            csi: CsiPvSource {
                driver: csi.driver.clone(),
                volume_handle: csi.volume_handle.clone(),
                fs_type: csi.fs_type.clone().unwrap_or_default(),
                volume_attributes: csi.volume_attributes.clone(),
            },
            node_affinity,
        };
        self.upsert(doc, &m.metadata, "", wanted, |c| c.pvs(), |was, now| {
            if now.csi != was.csi {
                return Err(invalid(
                    "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation".into(),
                ));
            }
            if now.volume_mode != was.volume_mode {
                return Err(invalid("spec.volumeMode: Invalid value: field is immutable".into()));
            }
            if now.node_affinity != was.node_affinity {
                return Err(invalid("spec.nodeAffinity: Invalid value: field is immutable".into()));
            }
            Ok(())
        })
    }

    fn apply_storage_class(
        &mut self,
        doc: &Document,
        m: &StorageClassM,
    ) -> Result<Applied, LabError> {
        let name = &doc.name;
        validate::metadata_name(ApiKind::StorageClass, name)?;
        validate::provisioner(name, &m.provisioner)?;
        let invalid = |what: String| invalid(ApiKind::StorageClass, name, what);
        let reclaim = m.reclaim_policy.clone().unwrap_or_else(|| "Delete".into());
        if !matches!(reclaim.as_str(), "Delete" | "Retain") {
            return Err(invalid(format!(
                "reclaimPolicy: Unsupported value: \"{reclaim}\": supported values: \"Delete\", \"Retain\""
            )));
        }
        let binding = m
            .volume_binding_mode
            .clone()
            .unwrap_or_else(|| "Immediate".into());
        if !matches!(binding.as_str(), "Immediate" | "WaitForFirstConsumer") {
            return Err(invalid(format!(
                "volumeBindingMode: Unsupported value: \"{binding}\": supported values: \"Immediate\", \"WaitForFirstConsumer\""
            )));
        }
        let wanted = StorageClassSpec {
            provisioner: m.provisioner.clone(),
            parameters: m
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), v.text()))
                .collect(),
            reclaim_policy: reclaim,
            volume_binding_mode: binding,
            allow_volume_expansion: m.allow_volume_expansion.unwrap_or(false),
            allowed_topologies: m
                .allowed_topologies
                .iter()
                .map(|t| TopologySelectorTerm {
                    match_label_expressions: t
                        .match_label_expressions
                        .iter()
                        .map(|r| TopologyRequirement {
                            key: r.key.clone(),
                            values: r.values.clone(),
                        })
                        .collect(),
                })
                .collect(),
        };
        self.upsert(
            doc,
            &m.metadata,
            "",
            wanted,
            |c| c.storage_classes(),
            |was, now| {
                // ValidateStorageClassUpdate (pkg/apis/storage/validation): parameters,
                // provisioner, reclaimPolicy and volumeBindingMode are fixed; the rest may change.
                let mut forbidden = Vec::new();
                if was.parameters != now.parameters {
                    forbidden
                        .push("parameters: Forbidden: updates to parameters are forbidden.".into());
                }
                if was.provisioner != now.provisioner {
                    forbidden.push(
                        "provisioner: Forbidden: updates to provisioner are forbidden.".into(),
                    );
                }
                if was.reclaim_policy != now.reclaim_policy {
                    forbidden.push(
                        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.".into(),
                    );
                }
                if was.volume_binding_mode != now.volume_binding_mode {
                    forbidden.push(format!(
                        "volumeBindingMode: Invalid value: {:?}: field is immutable",
                        now.volume_binding_mode
                    ));
                }
                if forbidden.is_empty() {
                    return Ok(());
                }
                Err(LabError::from(Invalid {
                    kind: ApiKind::StorageClass,
                    name: name.clone(),
                    causes: forbidden,
                }))
            },
        )
    }

    fn apply_policy(
        &mut self,
        doc: &Document,
        m: &ObjectM<NetworkPolicySpec>,
        ns: &str,
    ) -> Result<Applied, LabError> {
        let spec = m.spec.clone().unwrap_or_default();
        crate::net::validate::validate_policy(ns, &doc.name, &spec)
            .map_err(|e| LabError::from(super::invalid::Invalid::from(e)))?;
        self.require_namespace(ns)?;
        let wanted = spec.defaulted();
        self.upsert(
            doc,
            &m.metadata,
            ns,
            wanted,
            |c| c.policies(),
            |_, _| Ok(()),
        )
    }

    fn apply_snapshot(
        &mut self,
        doc: &Document,
        m: &ObjectM<SnapshotSpecM>,
        ns: &str,
    ) -> Result<Applied, LabError> {
        let name = &doc.name;
        validate::metadata_name(ApiKind::VolumeSnapshot, name)?;
        self.require_namespace(ns)?;
        let empty = SnapshotSpecM::default();
        let s = m.spec.as_ref().unwrap_or(&empty);
        let invalid = |what: &str| invalid(ApiKind::VolumeSnapshot, name, what);
        let claim = match (
            &s.source.persistent_volume_claim_name,
            &s.source.volume_snapshot_content_name,
        ) {
            (Some(c), None) => c.clone(),
            (None, Some(_)) => {
                return Err(LabError::msg(
                    "spec.source.volumeSnapshotContentName: a pre-provisioned snapshot is not modelled; snapshot a claim with spec.source.persistentVolumeClaimName",
                ));
            }
            _ => {
                return Err(invalid(
                    "spec.source: Invalid value: \"object\": Exactly one of volumeSnapshotContentName and persistentVolumeClaimName should be specified",
                ));
            }
        };
        validate::object_name(ApiKind::PersistentVolumeClaim, &claim).map_err(LabError::msg)?;
        // snapshot-controller gives a snapshot without a class the driver's default one.
        let wanted = VolumeSnapshotSpec {
            source: VolumeSnapshotSource {
                persistent_volume_claim_name: claim,
            },
            volume_snapshot_class_name: s
                .volume_snapshot_class_name
                .clone()
                .unwrap_or_else(|| SNAPSHOT_CLASS.into()),
        };
        self.upsert(doc, &m.metadata, ns, wanted, |c| c.snapshots(), |was, now| {
            if was.source != now.source {
                return Err(invalid(
                    "spec.source: Invalid value: \"object\": source is immutable",
                ));
            }
            if was.volume_snapshot_class_name != now.volume_snapshot_class_name {
                return Err(invalid(
                    "spec.volumeSnapshotClassName: Invalid value: \"string\": volumeSnapshotClassName is immutable",
                ));
            }
            Ok(())
        })
    }

    fn apply_nad(
        &mut self,
        doc: &Document,
        m: &ObjectM<NadSpecM>,
        ns: &str,
    ) -> Result<Applied, LabError> {
        if let Some(why) = crate::net::validate::is_dns1123_subdomain(&doc.name)
            .into_iter()
            .next()
        {
            return Err(invalid(
                ApiKind::NetworkAttachmentDefinition,
                &doc.name,
                format!("metadata.name: Invalid value: {:?}: {why}", doc.name),
            ));
        }
        self.require_namespace(ns)?;
        let wanted = NetAttachDefSpec {
            config: m
                .spec
                .as_ref()
                .map(|s| s.config.clone())
                .unwrap_or_default(),
        };
        self.upsert(
            doc,
            &m.metadata,
            ns,
            wanted,
            |c| c.net_attach_defs(),
            |_, _| Ok(()),
        )
    }

    /// Create the object from its manifest, or update the one there with `wanted` once
    /// `may_change(current, wanted)` allows it (the API server's update validation).
    fn upsert<K: Kind + Clone + PartialEq>(
        &mut self,
        doc: &Document,
        meta: &MetaM,
        ns: &str,
        wanted: K,
        table: fn(&mut Cluster) -> TableOps<'_, K>,
        may_change: impl FnOnce(&K, &K) -> Result<(), LabError>,
    ) -> Result<Applied, LabError> {
        let current = table(&mut self.cluster).get(ns, &doc.name).ok().cloned();
        let Some(current) = current else {
            let mut obj = Object::new(&doc.name, ns, wanted);
            set_metadata(&mut obj.metadata, doc, meta, None)?;
            let clock = self.clock;
            table(&mut self.cluster).create(obj, clock)?;
            return Ok(Applied::Created);
        };
        may_change(&current.spec, &wanted)?;
        let mut next = current.clone();
        set_metadata(&mut next.metadata, doc, meta, Some(&current.metadata))?;
        next.spec = wanted;
        self.store_update(&current, next, table)
    }

    /// Write `next` over `current` unless nothing changed; a stale resourceVersion given
    /// in the manifest was already turned into a Conflict by [`set_metadata`].
    fn store_update<K: Kind>(
        &mut self,
        current: &Object<K>,
        next: Object<K>,
        table: impl FnOnce(&mut Cluster) -> TableOps<'_, K>,
    ) -> Result<Applied, LabError> {
        if next.metadata == current.metadata && next.spec == current.spec {
            return Ok(Applied::Unchanged);
        }
        let key = (
            current.metadata.namespace().clone(),
            current.metadata.name().clone(),
        );
        table(&mut self.cluster).update(next)?;
        if K::API_KIND == ApiKind::Pod {
            self.dirty.insert(key);
        }
        Ok(Applied::Configured)
    }
}

/// The namespace an object goes to: its own, else `-n`, else `default`; the two must
/// agree (kubectl's check).
fn object_namespace(doc: &Document, flag: Option<&str>) -> Result<String, LabError> {
    let own = match &doc.object {
        Manifest::Namespace(_) | Manifest::Pv(_) | Manifest::StorageClass(_) => {
            return Ok(String::new());
        }
        Manifest::Pod(m) => m.metadata.namespace.clone(),
        Manifest::Pvc(m) => m.metadata.namespace.clone(),
        Manifest::NetworkPolicy(m) => m.metadata.namespace.clone(),
        Manifest::VolumeSnapshot(m) => m.metadata.namespace.clone(),
        Manifest::Nad(m) => m.metadata.namespace.clone(),
    };
    match (own, flag) {
        (Some(o), Some(f)) if o != f => Err(LabError::msg(format!(
            "the namespace from the provided object {o:?} does not match the namespace {f:?}. You must pass '--namespace={o}' to perform this operation."
        ))),
        (Some(o), _) if !o.is_empty() => Ok(o),
        (_, Some(f)) => Ok(f.to_string()),
        _ => Ok("default".into()),
    }
}

/// `pod`, `storageclass.storage.k8s.io`, … as kubectl names an object in its output: the
/// lower-cased kind and its group.
fn resource_word(kind: ApiKind) -> String {
    crate::resource::of(kind).resource_name()
}

/// Access modes by their API names (a manifest spells them out).
fn access_modes(given: &[String]) -> Result<Vec<String>, String> {
    let mut modes = Vec::new();
    for m in given {
        let ok = K8sAccessMode::parse(m).is_some_and(|a| a.api_name() == m);
        if !ok {
            return Err(format!(
                "spec.accessModes: Unsupported value: \"{m}\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""
            ));
        }
        if !modes.contains(m) {
            modes.push(m.clone());
        }
    }
    if modes.iter().any(|m| m == "ReadWriteOncePod") && modes.len() > 1 {
        return Err(
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"
                .into(),
        );
    }
    Ok(modes)
}

/// A container's resources checked as `ValidateResourceRequirements` checks them (after
/// defaulting): each name a standard container resource or a qualified extended one,
/// each value not negative (an extended resource's a whole count), each request at most
/// its limit and, for an extended resource (which cannot be overcommitted), equal to it.
/// Every error is returned, in the order the API server finds them (limits, then
/// requests; names in order); text that is no quantity is refused as the decoder does.
fn resource_requirements(path: &str, r: &ResourceRequirements) -> Result<Vec<String>, LabError> {
    use crate::util::quantity::Quantity as Q;
    let parse = |v: &str| {
        Q::parse(v).ok_or_else(|| {
            LabError::msg(format!(
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {v:?}"
            ))
        })
    };
    let shown = |q: &Q, v: &str| q.canonical().unwrap_or_else(|| v.to_string());
    let mut causes = Vec::new();
    for (which, list) in [("limits", &r.limits), ("requests", &r.requests)] {
        for (k, v) in list {
            let field = format!("{path}.{which}[{k}]");
            causes.extend(container_resource_name(k, &field));
            let q = parse(v)?;
            if q.negative {
                causes.push(format!(
                    "{field}: Invalid value: {:?}: must be greater than or equal to 0",
                    shown(&q, v)
                ));
            }
            let whole = q
                .ceil()
                .is_ok_and(|n| q.cmp_whole(n) == std::cmp::Ordering::Equal);
            if is_extended_resource(k) && !whole {
                causes.push(format!(
                    "{field}: Invalid value: {:?}: must be an integer",
                    shown(&q, v)
                ));
            }
            let Some(limit) = r.limits.get(k).filter(|_| which == "requests") else {
                continue;
            };
            let l = parse(limit)?;
            let order = q.cmp_value(&l);
            if is_extended_resource(k) && order != std::cmp::Ordering::Equal {
                causes.push(format!(
                    "{path}.requests: Invalid value: {:?}: must be equal to {k} limit of {}",
                    shown(&q, v),
                    shown(&l, limit)
                ));
            } else if order == std::cmp::Ordering::Greater {
                causes.push(format!(
                    "{path}.requests: Invalid value: {:?}: must be less than or equal to {k} limit of {}",
                    shown(&q, v),
                    shown(&l, limit)
                ));
            }
        }
    }
    Ok(causes)
}

/// `validateContainerResourceName`: a qualified name; without a domain, a standard
/// container resource (`cpu`, `memory`, `ephemeral-storage`, `hugepages-…`); with one, a
/// native (`kubernetes.io`) or extended resource name.
fn container_resource_name(name: &str, field: &str) -> Vec<String> {
    let quoted = crate::net::validate::go_quote(name);
    let qualified = crate::net::validate::is_qualified_name(name);
    if !qualified.is_empty() {
        return qualified
            .into_iter()
            .map(|why| format!("{field}: Invalid value: {quoted}: {why}"))
            .collect();
    }
    let mut errs = Vec::new();
    if !name.contains('/') {
        // IsStandardResourceName, then IsStandardContainerResourceName.
        const STANDARD: [&str; 20] = [
            "cpu",
            "memory",
            "ephemeral-storage",
            "requests.cpu",
            "requests.memory",
            "requests.ephemeral-storage",
            "limits.cpu",
            "limits.memory",
            "limits.ephemeral-storage",
            "pods",
            "resourcequotas",
            "services",
            "replicationcontrollers",
            "secrets",
            "configmaps",
            "persistentvolumeclaims",
            "storage",
            "requests.storage",
            "services.nodeports",
            "services.loadbalancers",
        ];
        let huge = name.starts_with("hugepages-");
        let quota_huge = huge || name.starts_with("requests.hugepages-");
        if !(STANDARD.contains(&name) || quota_huge) {
            errs.push(format!(
                "{field}: Invalid value: {quoted}: must be a standard resource type or fully qualified"
            ));
        }
        if !(matches!(name, "cpu" | "memory" | "ephemeral-storage") || huge) {
            errs.push(format!(
                "{field}: Invalid value: {quoted}: must be a standard resource for containers"
            ));
        }
    } else if !(name.contains("kubernetes.io/") || is_extended_resource(name)) {
        errs.push(format!(
            "{field}: Invalid value: {quoted}: doesn't follow extended resource name standard"
        ));
    }
    errs
}

/// `Pod.spec` from a manifest, checked as `ValidatePodSpec` checks what the lab models.
fn pod_spec(name: &str, spec: Option<&PodSpecM>) -> Result<PodSpec, LabError> {
    let invalid = |what: String| invalid(ApiKind::Pod, name, what);
    let empty = PodSpecM::default();
    let s = spec.unwrap_or(&empty);
    if s.containers.is_empty() {
        return Err(invalid("spec.containers: Required value".into()));
    }
    let mut containers = Vec::new();
    for (i, c) in s.containers.iter().enumerate() {
        if c.name.is_empty() {
            return Err(invalid(format!(
                "spec.containers[{i}].name: Required value"
            )));
        }
        if c.image.is_empty() {
            return Err(invalid(format!(
                "spec.containers[{i}].image: Required value"
            )));
        }
        let mut ports = Vec::new();
        for (j, p) in c.ports.iter().enumerate() {
            let field = format!("spec.containers[{i}].ports[{j}]");
            let port = |v: i64, what: &str| -> Result<u16, LabError> {
                u16::try_from(v).ok().filter(|p| *p > 0).ok_or_else(|| {
                    invalid(format!(
                        "{field}.{what}: Invalid value: {v}: must be between 1 and 65535, inclusive"
                    ))
                })
            };
            let container_port = port(p.container_port, "containerPort")?;
            let host_port = match p.host_port {
                Some(h) => port(h, "hostPort")?,
                None => 0,
            };
            let protocol = p.protocol.clone().unwrap_or_else(|| "TCP".into());
            if !matches!(protocol.as_str(), "TCP" | "UDP" | "SCTP") {
                return Err(invalid(format!(
                    "{field}.protocol: Unsupported value: \"{protocol}\": supported values: \"SCTP\", \"TCP\", \"UDP\""
                )));
            }
            ports.push(ContainerPort {
                container_port,
                host_port,
                protocol,
            });
        }
        let text = |m: &BTreeMap<String, Quantity>| -> ResourceList {
            m.iter().map(|(k, v)| (k.clone(), v.text())).collect()
        };
        let mut resources = ResourceRequirements {
            limits: text(&c.resources.limits),
            requests: text(&c.resources.requests),
        };
        // SetDefaults_Pod: a limit without a request is the request too.
        for (k, v) in &resources.limits {
            resources
                .requests
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
        let causes = resource_requirements(&format!("spec.containers[{i}].resources"), &resources)?;
        if !causes.is_empty() {
            return Err(LabError::from(Invalid {
                kind: ApiKind::Pod,
                name: name.to_string(),
                causes,
            }));
        }
        for (k, v) in &resources.limits {
            if is_extended_resource(k) {
                // The lab's own cap on a count (the API server's checks passed above).
                validate::extended_resource(name, &format!("{k}={v}"))?;
            }
        }
        let (mounts, devices) = volume_uses(name, i, c, s)?;
        containers.push(
            Container::new(c.name.clone(), c.image.clone(), ports, resources)
                .with_volumes(mounts, devices),
        );
    }
    let mut volumes = Vec::new();
    for (i, v) in s.volumes.iter().enumerate() {
        if v.name.is_empty() {
            return Err(invalid(format!("spec.volumes[{i}].name: Required value")));
        }
        // Volumes of kinds the lab does not model were named in apply's warning.
        let Some(claim) = &v.persistent_volume_claim else {
            continue;
        };
        if claim.claim_name.is_empty() {
            return Err(invalid(format!(
                "spec.volumes[{i}].persistentVolumeClaim.claimName: Required value"
            )));
        }
        volumes.push(PodVolume {
            name: v.name.clone(),
            persistent_volume_claim: ClaimRef {
                claim_name: claim.claim_name.clone(),
                read_only: claim.read_only,
            },
        });
    }
    for (k, v) in &s.node_selector {
        validate::label(&format!("{k}={v}"))
            .map_err(|e| invalid(format!("spec.nodeSelector: {e}")))?;
    }
    // The manifest's own tolerations are not modelled (apply warned): the spec holds the
    // DefaultTolerationSeconds admission plugin's two.
    Ok(PodSpec::new(
        s.node_name.clone().unwrap_or_default(),
        containers,
        volumes,
        s.node_selector.clone(),
    ))
}

/// Container `i`'s `volumeMounts` and `volumeDevices`, checked as `ValidateVolumeMounts`
/// and `ValidateVolumeDevices` check them (each names a volume of the pod; paths given and
/// unique; a volume or path not both mounted and a device), every error found reported.
/// Those of volumes of kinds the lab does not model are left out with their volumes.
fn volume_uses(
    pod: &str,
    i: usize,
    c: &crate::manifest::schema::ContainerM,
    spec: &PodSpecM,
) -> Result<(Vec<VolumeMount>, Vec<VolumeDevice>), LabError> {
    let source = |name: &str| spec.volumes.iter().find(|v| v.name == name);
    let mut causes = Vec::new();
    let mut paths: Vec<&str> = Vec::new();
    for (j, m) in c.volume_mounts.iter().enumerate() {
        let field = format!("spec.containers[{i}].volumeMounts[{j}]");
        if m.name.is_empty() {
            causes.push(format!("{field}.name: Required value"));
        }
        if source(&m.name).is_none() {
            causes.push(format!("{field}.name: Not found: {:?}", m.name));
        }
        if m.mount_path.is_empty() {
            causes.push(format!("{field}.mountPath: Required value"));
        }
        if paths.contains(&m.mount_path.as_str()) {
            causes.push(format!(
                "{field}.mountPath: Invalid value: {:?}: must be unique",
                m.mount_path
            ));
        }
        paths.push(&m.mount_path);
        if c.volume_devices.iter().any(|d| d.name == m.name) {
            causes.push(format!(
                "{field}.name: Invalid value: {:?}: must not already exist in volumeDevices",
                m.name
            ));
        }
        if c.volume_devices
            .iter()
            .any(|d| d.device_path == m.mount_path)
        {
            causes.push(format!(
                "{field}.mountPath: Invalid value: {:?}: must not already exist as a path in volumeDevices",
                m.mount_path
            ));
        }
    }
    let mut device_paths: Vec<&str> = Vec::new();
    for (j, d) in c.volume_devices.iter().enumerate() {
        let field = format!("spec.containers[{i}].volumeDevices[{j}]");
        match source(&d.name) {
            None => causes.push(format!("{field}.name: Not found: {:?}", d.name)),
            Some(v) if v.persistent_volume_claim.is_none() => causes.push(format!(
                "{field}.name: Invalid value: {:?}: can only use volume source type of PersistentVolumeClaim for block mode",
                d.name
            )),
            Some(_) => {}
        }
        if d.device_path.is_empty() {
            causes.push(format!("{field}.devicePath: Required value"));
        }
        if device_paths.contains(&d.device_path.as_str()) {
            causes.push(format!(
                "{field}.devicePath: Invalid value: {:?}: must be unique",
                d.device_path
            ));
        }
        device_paths.push(&d.device_path);
        if c.volume_mounts.iter().any(|m| m.name == d.name) {
            causes.push(format!(
                "{field}.name: Invalid value: {:?}: must not already exist in volumeMounts",
                d.name
            ));
        }
        if c.volume_mounts
            .iter()
            .any(|m| m.mount_path == d.device_path)
        {
            causes.push(format!(
                "{field}.devicePath: Invalid value: {:?}: must not already exist as a path in volumeMounts",
                d.device_path
            ));
        }
    }
    if !causes.is_empty() {
        return Err(LabError::from(Invalid {
            kind: ApiKind::Pod,
            name: pod.to_string(),
            causes,
        }));
    }
    let modelled = |name: &str| source(name).is_some_and(|v| v.persistent_volume_claim.is_some());
    let mounts = c
        .volume_mounts
        .iter()
        .filter(|m| modelled(&m.name))
        .map(|m| VolumeMount {
            name: m.name.clone(),
            mount_path: m.mount_path.clone(),
            read_only: m.read_only,
        })
        .collect();
    let devices = c
        .volume_devices
        .iter()
        .filter(|d| modelled(&d.name))
        .map(|d| VolumeDevice {
            name: d.name.clone(),
            device_path: d.device_path.clone(),
        })
        .collect();
    Ok((mounts, devices))
}

/// The API server's Invalid error for one field of the object `kind` `name`.
fn invalid(kind: ApiKind, name: &str, cause: impl Into<String>) -> LabError {
    LabError::from(Invalid::one(kind, name, cause))
}

/// Labels and annotations from the manifest onto `meta`, merged with what the object
/// has as kubectl's three-way merge does: keys the last apply set and this one dropped
/// are removed, keys others set are kept. The applied manifest is kept in
/// [`LAST_APPLIED`]. A `resourceVersion` in the manifest must be the current one.
fn set_metadata(
    meta: &mut Meta,
    doc: &Document,
    given: &MetaM,
    current: Option<&Meta>,
) -> Result<(), LabError> {
    for (k, v) in &given.labels {
        validate::label(&format!("{k}={v}"))
            .map_err(|e| invalid(doc.kind, &doc.name, format!("metadata.labels: {e}")))?;
    }
    if let (Some(rv), Some(cur)) = (&given.resource_version, current) {
        if rv.parse::<u64>().ok() != Some(cur.resource_version) {
            return Err(LabError::msg(format!(
                "Error from server (Conflict): Operation cannot be fulfilled on {} {:?}: the object has been modified; please apply your changes to the latest version and try again",
                plural_resource(doc.kind),
                doc.name
            )));
        }
    }
    let last: Option<serde_json::Value> = current
        .and_then(|c| c.annotations().get(LAST_APPLIED))
        .and_then(|t| serde_json::from_str(t).ok());
    let last_keys = |field: &str| -> Vec<String> {
        last.as_ref()
            .and_then(|v| v.get("metadata"))
            .and_then(|m| m.get(field))
            .and_then(|m| m.as_object())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    for k in last_keys("labels") {
        if !given.labels.contains_key(&k) {
            meta.labels.remove(&k);
        }
    }
    for k in last_keys("annotations") {
        if !given.annotations.contains_key(&k) {
            meta.annotations_mut().remove(&k);
        }
    }
    meta.labels.extend(given.labels.clone());
    meta.annotations_mut().extend(
        given
            .annotations
            .iter()
            .filter(|(k, _)| k.as_str() != LAST_APPLIED)
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    meta.annotations_mut()
        .insert(LAST_APPLIED.into(), format!("{}\n", last_applied(doc)));
    Ok(())
}

/// The manifest as kubectl records it: compact JSON without the annotation itself.
fn last_applied(doc: &Document) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&doc.applied_json) else {
        return doc.applied_json.clone();
    };
    if let Some(ann) = v
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(|a| a.as_object_mut())
    {
        ann.remove(LAST_APPLIED);
    }
    v.to_string()
}

/// `pods`, `persistentvolumeclaims`, … (the resource in a Conflict message: the kind's
/// `RESOURCE`).
fn plural_resource(kind: ApiKind) -> &'static str {
    crate::resource::of(kind).api_resource()
}
