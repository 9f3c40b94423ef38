//! kubelet and the container runtime on each node: `syncPod` creates the pod sandbox
//! (containerd's RunPodSandbox: netns, then the CNI chain with the pod's K8S_POD_* args),
//! starts the containers and writes the pod status with optimistic-concurrency retries;
//! `killPod` stops the sandbox (CNI DEL, netns removed) before the pod object goes away.
//!
//! Since Kubernetes 1.24 kubelet never runs CNI itself: it asks the CRI runtime for a pod
//! sandbox, and the runtime (containerd's CRI plugin through go-cni/libcni) runs the plugins.

pub mod sandbox;
pub mod volumes;

use crate::cluster::{ApiError, Condition, Object, PodIp, PodSpec, PodStatus, Text};
use crate::engine::{Lab, PodWork, SYNC_BACKOFF};
use crate::record::{CallEvent, Level};

/// How many times a status write is retried on Conflict.
pub const STATUS_RETRIES: u32 = 5;

impl Lab {
    /// One kubelet sync of one pod: tear down what is deleted; otherwise wait for and mount
    /// the volumes, then ask the runtime for the sandbox (network), then start the
    /// containers. Returns true when anything changed.
    ///
    /// The order is the real kubelet's (`SyncPod`: `WaitForAttachAndMount` comes before
    /// `containerRuntime.SyncPod`, which creates the sandbox and runs CNI ADD). Chapter 7's
    /// Python mini sets up the network first; the lessons say so.
    pub fn sync_pod(&mut self, key: &(String, String)) -> bool {
        let Some(pod) = self.cluster.pods.get(key).cloned() else {
            self.pod_work.remove(key);
            return false;
        };
        if pod.metadata.deletion_tick.is_some() {
            return self.kill_pod(key, &pod);
        }
        if !crate::engine::scheduler::is_scheduled(&pod) {
            return false; // not placed on the node yet: its kubelet does not see it
        }
        if pod.status.phase == "Running" {
            // Running pods only need attention when a resize waits for the node.
            return self.mount_pod_volumes(&pod).unwrap_or_default();
        }
        let node_name = pod.spec.node_name.clone();
        let actor = format!("kubelet({node_name})");
        let work = self.pod_work.entry(key.clone()).or_default();
        if work.retry_at > self.clock {
            return false;
        }
        if !pod.spec.volumes.is_empty() {
            match self.mount_pod_volumes(&pod) {
                Ok(_) => {}
                Err(crate::kubelet::volumes::MountWait::Waiting(reason, msg)) => {
                    let first = self.pod_work.get(key).is_none_or(|w| w.last_error != msg);
                    if first {
                        let from = if reason == "FailedScheduling" {
                            "default-scheduler"
                        } else {
                            actor.as_str()
                        };
                        self.object_event(from, reason, reason, msg.clone(), &pod, Level::Warning);
                        if let Some(w) = self.pod_work.get_mut(key) {
                            w.last_error = msg;
                        }
                        self.mark_container_creating(key, &actor);
                    }
                    return first;
                }
                Err(crate::kubelet::volumes::MountWait::Crashed) => return true,
                Err(crate::kubelet::volumes::MountWait::Failed(msg)) => {
                    self.object_event(
                        &actor,
                        "FailedMount",
                        "FailedMount",
                        msg.clone(),
                        &pod,
                        Level::Warning,
                    );
                    let retry_at = self.clock.saturating_add(SYNC_BACKOFF);
                    if let Some(w) = self.pod_work.get_mut(key) {
                        w.retry_at = retry_at;
                        w.last_error = msg;
                    }
                    self.mark_container_creating(key, &actor);
                    self.log(
                        actor,
                        "backoff",
                        format!(
                            "pod/{} retries its mounts at t={retry_at}s (`tick {SYNC_BACKOFF}`)",
                            pod.name()
                        ),
                    );
                    return true;
                }
            }
        }
        let has_sandbox = self
            .nodes
            .get(&node_name)
            .is_some_and(|n| n.sandboxes.contains_key(&pod.key()));
        if !has_sandbox {
            let attempt = {
                let w = self.pod_work.entry(key.clone()).or_default();
                w.attempts += 1;
                w.attempts
            };
            if let Err(message) = self.run_pod_sandbox(&pod, attempt) {
                self.object_event(
                    &actor,
                    "FailedCreatePodSandBox",
                    "FailedCreatePodSandBox",
                    format!("Failed to create pod sandbox: {message}"),
                    &pod,
                    Level::Warning,
                );
                let retry_at = self.clock.saturating_add(SYNC_BACKOFF);
                if let Some(w) = self.pod_work.get_mut(key) {
                    w.retry_at = retry_at;
                    w.last_error = message;
                }
                self.mark_container_creating(key, &actor);
                self.log(
                    actor,
                    "backoff",
                    format!(
                        "pod/{} stays ContainerCreating; retry at t={retry_at}s (`tick {SYNC_BACKOFF}`)",
                        pod.name()
                    ),
                );
                return true;
            }
        }
        let ip = self
            .nodes
            .get(&node_name)
            .and_then(|n| n.sandboxes.get(&pod.key()))
            .map(|s| s.ip.clone())
            .unwrap_or_default();
        self.pod_work.insert(key.clone(), PodWork::default());
        self.object_event(
            &actor,
            "Started",
            "Started",
            format!("Started container {}", container_name(&pod)),
            &pod,
            Level::Normal,
        );
        let host_ip = self
            .cluster
            .nodes
            .get(&(crate::cluster::no_namespace(), node_name.clone()))
            .and_then(|n| n.status.internal_ip())
            .unwrap_or_default()
            .to_string();
        let ip2 = ip.clone();
        let written = self.write_pod_status(key, &actor, move |st| {
            st.phase = "Running".into();
            st.reason = Text::Borrowed("");
            st.host_ip = host_ip.clone();
            st.pod_ip = ip2.clone();
            st.pod_ips = vec![PodIp { ip: ip2.clone() }];
            st.conditions = ready_conditions(true);
        });
        if written.is_ok() {
            self.log(
                actor,
                "status",
                format!("pod/{} podIP={ip} phase=Running", pod.name()),
            );
        }
        true
    }

    fn mark_container_creating(&mut self, key: &(String, String), actor: &str) {
        let already = self
            .cluster
            .pods
            .get(key)
            .is_some_and(|p| p.status.reason == "ContainerCreating");
        if !already {
            let _ = self.write_pod_status(key, actor, |st| {
                st.phase = "Pending".into();
                st.reason = "ContainerCreating".into();
                st.conditions = ready_conditions(false);
            });
        }
    }

    /// Write a pod's status through the status subresource, re-reading and retrying on
    /// Conflict as kubelet's status manager does.
    pub fn write_pod_status(
        &mut self,
        key: &(String, String),
        actor: &str,
        mutate: impl Fn(&mut PodStatus),
    ) -> Result<u64, ApiError> {
        let mut last = None;
        for attempt in 1..=STATUS_RETRIES {
            let pods = self.cluster.pods();
            let current = pods.get(&key.0, &key.1)?;
            let read_at = current.metadata.resource_version;
            let mut status = current.status.clone();
            mutate(&mut status);
            match self
                .cluster
                .pods()
                .write_status(&key.0, &key.1, read_at, status)
            {
                Ok(rv) => return Ok(rv),
                Err(e @ ApiError::Conflict { .. }) => {
                    self.log(
                        actor,
                        "conflict",
                        format!("status write {attempt}/{STATUS_RETRIES} rejected: {e}; re-reading and retrying"),
                    );
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(ApiError::Conflict {
            resource: "pods",
            name: key.1.clone(),
        }))
    }

    /// kubelet's killPod and the final delete: stop the containers, StopPodSandbox (CNI
    /// DEL, netns removed), unmount the volumes (NodeUnpublish, NodeUnstage when no other pod
    /// on the node uses them), then the pod object is removed. The attach/detach controller
    /// detaches afterwards.
    fn kill_pod(&mut self, key: &(String, String), pod: &Object<PodSpec>) -> bool {
        let work = self.pod_work.entry(key.clone()).or_default();
        if work.retry_at > self.clock {
            return false;
        }
        let node_name = pod.spec.node_name.clone();
        let actor = format!("kubelet({node_name})");
        let had_sandbox = self
            .nodes
            .get(&node_name)
            .is_some_and(|n| n.sandboxes.contains_key(&pod.key()));
        let fail = |lab: &mut Lab, message: String| {
            lab.object_event(
                &actor,
                "FailedKillPod",
                "FailedKillPod",
                format!("error killing pod: {message}"),
                pod,
                Level::Warning,
            );
            let retry_at = lab.clock.saturating_add(SYNC_BACKOFF);
            let w = lab.pod_work.entry(key.clone()).or_default();
            w.retry_at = retry_at;
            w.last_error = message;
        };
        if had_sandbox {
            self.object_event(
                &actor,
                "Killing",
                "Killing",
                format!("Stopping container {}", container_name(pod)),
                pod,
                Level::Normal,
            );
            if let Err(message) = self.stop_pod_sandbox(pod) {
                fail(self, message);
                return true;
            }
        }
        if let Err(message) = self.unmount_pod_volumes(pod) {
            fail(self, message);
            return true;
        }
        if self.cluster.pods().delete(&key.0, &key.1).is_ok() {
            self.cluster.pods_with_volumes.remove(key);
            self.pod_work.remove(key);
            self.log("apiserver", "delete", format!("pod/{} removed", pod.name()));
        }
        true
    }

    /// Record a call-log entry that is also a Kubernetes event on an object.
    pub fn object_event(
        &mut self,
        actor: &str,
        action: &'static str,
        reason: &'static str,
        message: String,
        pod: &Object<PodSpec>,
        level: Level,
    ) {
        self.log_event(CallEvent {
            seq: 0,
            tick: self.clock,
            actor: actor.to_string(),
            action: action.into(),
            detail: message,
            level,
            reason: Some(reason),
            object: Some(format!("Pod/{}", pod.key())),
            wire: None,
            object_uid: Some(pod.metadata.uid.clone()),
        });
    }
}

fn container_name(pod: &Object<PodSpec>) -> String {
    pod.spec
        .containers
        .first()
        .map(|c| c.name.clone())
        .unwrap_or_else(|| "app".into())
}

/// The pod conditions kubelet reports, all true once running.
fn ready_conditions(ready: bool) -> Vec<Condition> {
    let status = |b: bool| Text::Borrowed(if b { "True" } else { "False" });
    let mut v = Vec::with_capacity(5);
    v.push(Condition {
        condition_type: "PodReadyToStartContainers".into(),
        status: status(ready),
        reason: Text::Borrowed(""),
        message: Text::Borrowed(""),
    });
    v.push(Condition {
        condition_type: "Initialized".into(),
        status: "True".into(),
        reason: Text::Borrowed(""),
        message: Text::Borrowed(""),
    });
    for t in ["Ready", "ContainersReady"] {
        v.push(Condition {
            condition_type: t.into(),
            status: status(ready),
            reason: if ready {
                Text::Borrowed("")
            } else {
                "ContainersNotReady".into()
            },
            message: if ready {
                Text::Borrowed("")
            } else {
                "containers with unready status: [app]".into()
            },
        });
    }
    v.push(Condition {
        condition_type: "PodScheduled".into(),
        status: "True".into(),
        reason: Text::Borrowed(""),
        message: Text::Borrowed(""),
    });
    v
}
