//! The API server and kubelet as a CNI plugin with a kubeconfig reaches them during one
//! sandbox's CNI calls (Multus): GETs read the API store as it is; PodResources `List`
//! answers from the device allocations kubelet made for the pod; annotations and events
//! are queued and applied by the kubelet when the CNI call returns, as one pod update
//! (Multus's `UpdateStatus`, retried on conflict) and the events Multus's recorder sent.

use crate::cluster::Cluster;
use crate::cni::kube_api::{KubeClient, NadInfo, PodDevices, PodInfo};

/// One event a plugin recorded on a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuedEvent {
    /// Pod namespace.
    pub ns: String,
    /// Pod name.
    pub name: String,
    /// Warning (else Normal).
    pub warning: bool,
    /// The reason (`AddedInterface`).
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

/// The kubelet's [`KubeClient`] over the API store.
pub(crate) struct KubeletClient<'a> {
    /// The API server's store (read only: writes are queued).
    pub api: &'a Cluster,
    /// PodResources: this pod's device allocations (filled by the device manager).
    pub pod_devices: Vec<PodDevices>,
    /// Annotations to set: (ns, name, key, value), in order.
    pub annotations: Vec<(String, String, String, String)>,
    /// Events to record.
    pub events: Vec<QueuedEvent>,
}

impl<'a> KubeletClient<'a> {
    /// A client over `api` with nothing queued.
    pub fn new(api: &'a Cluster, pod_devices: Vec<PodDevices>) -> Self {
        KubeletClient {
            api,
            pod_devices,
            annotations: Vec::new(),
            events: Vec::new(),
        }
    }
}

impl KubeClient for KubeletClient<'_> {
    fn pod(&self, ns: &str, name: &str) -> Option<PodInfo> {
        let p = self.api.pods.get(&(ns.to_string(), name.to_string()))?;
        Some(PodInfo {
            uid: p.metadata.uid.to_string(),
            annotations: p.metadata.annotations().clone(),
        })
    }

    fn net_attach_def(&self, ns: &str, name: &str) -> Option<NadInfo> {
        let n = self
            .api
            .net_attach_defs
            .get(&(ns.to_string(), name.to_string()))?;
        Some(NadInfo {
            config: n.spec.config.clone(),
            annotations: n.metadata.annotations().clone(),
        })
    }

    fn pod_resources(&self, _ns: &str, _name: &str) -> Vec<PodDevices> {
        self.pod_devices.clone()
    }

    fn annotate_pod(&mut self, ns: &str, name: &str, key: &str, value: &str) {
        self.annotations
            .push((ns.into(), name.into(), key.into(), value.into()));
    }

    fn event(&mut self, ns: &str, name: &str, warning: bool, reason: &'static str, message: &str) {
        self.events.push(QueuedEvent {
            ns: ns.into(),
            name: name.into(),
            warning,
            reason,
            message: message.into(),
        });
    }
}

/// What the plugin queued, taken out of the client when the CNI call returned.
#[derive(Debug, Default)]
pub(crate) struct Queued {
    /// Annotations to set.
    pub annotations: Vec<(String, String, String, String)>,
    /// Events to record.
    pub events: Vec<QueuedEvent>,
}

impl crate::control::Ctx<'_> {
    /// Apply what a plugin queued through its [`KubeletClient`]: every annotation in one pod
    /// update (re-read and retried on Conflict), then the events, from `actor`.
    pub(crate) fn apply_plugin_writes(&mut self, actor: &'static str, q: Queued) {
        for e in q.events {
            let key = (e.ns.clone(), e.name.clone());
            if let Some(pod) = self.api.pods.get(&key).cloned() {
                let level = if e.warning {
                    crate::record::Level::Warning
                } else {
                    crate::record::Level::Normal
                };
                self.pod_event(actor, e.reason, e.message, &pod, level);
            }
        }
        let mut by_pod: std::collections::BTreeMap<(String, String), Vec<(String, String)>> =
            std::collections::BTreeMap::new();
        for (ns, name, k, v) in q.annotations {
            by_pod.entry((ns, name)).or_default().push((k, v));
        }
        for (key, kvs) in by_pod {
            for attempt in 1..=crate::control::STATUS_RETRIES {
                let Ok(current) = self.api.pods().get(&key.0, &key.1).cloned() else {
                    break; // the pod is gone: Multus tolerates it
                };
                let mut obj = current;
                for (k, v) in &kvs {
                    obj.metadata.annotations_mut().insert(k.clone(), v.clone());
                }
                match self.api.pods().update(obj) {
                    Ok(_) => break,
                    Err(e @ crate::cluster::ApiError::Conflict { .. }) => {
                        self.log(
                            actor,
                            "conflict",
                            format!(
                                "pod update {attempt}/{} rejected: {e}; re-reading and retrying",
                                crate::control::STATUS_RETRIES
                            ),
                        );
                    }
                    Err(_) => break,
                }
            }
        }
    }
}

impl KubeletClient<'_> {
    /// Take what was queued.
    pub fn take(&mut self) -> Queued {
        Queued {
            annotations: std::mem::take(&mut self.annotations),
            events: std::mem::take(&mut self.events),
        }
    }
}
