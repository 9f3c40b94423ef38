//! kubelet and the container runtime on each node: `syncPod` creates the pod sandbox
//! (containerd's RunPodSandbox: netns, then the CNI chain with the pod's K8S_POD_* args),
//! starts the containers and writes the pod status with optimistic-concurrency retries;
//! `killPod` stops the sandbox (CNI DEL, netns removed) before the pod object goes away.
//!
//! Since Kubernetes 1.24 kubelet never runs CNI itself: it asks the CRI runtime for a pod
//! sandbox, and the runtime (containerd's CRI plugin through go-cni/libcni) runs the plugins.

pub mod bandwidth;
pub mod devices;
pub mod kube_client;
pub mod operations;
pub mod sandbox;
pub mod volumes;

use crate::cluster::store::SharedKey;
use crate::cluster::{Condition, Conditions, Object, PodSpec, Text};
use crate::cni::registry::Registry;
use crate::control::Ctx;
use crate::node::NodeRuntime;
use crate::record::{Actor, Agent, Detail, Level, Message};
use crate::util::time::Millis;
use crate::util::vec_map::VecMap;

pub use crate::control::STATUS_RETRIES;

/// What kubelet (v1.32) holds as its runtime's network error while containerd's CRI
/// plugin reports NetworkReady=false with go-cni's status (`container runtime network not
/// ready: %v` of the runtime's condition): the Node's Ready message and, after `network is
/// not ready: `, a pod's NetworkNotReady event.
pub const RUNTIME_NETWORK_NOT_READY: &str = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized";

/// kubelet's pod worker backoff after a failed sync (`backOffPeriod`, 10 s).
pub const SYNC_BACKOFF: Millis = Millis::secs(10);

// One a pod on every node, with its shared key in the kubelet's `VecMap`.
const _: () = assert!(std::mem::size_of::<(SharedKey, PodWork)>() <= 48);

/// kubelet's bookkeeping for one pod.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodWork {
    /// Sandbox creation attempts so far.
    pub attempts: u32,
    /// Earliest time of the next retry after a failure.
    pub retry_at: Millis,
    /// The last error, for `describe` and the dashboard.
    pub last_error: String,
    /// The worker has seen the pod's deletion (a backoff from here on is a failed kill's).
    pub killing: bool,
}

/// The kubelet of one node: the workers of the pods bound to its node. It reaches the API
/// store, its CSI node client and the event recorder through [`Ctx`], and its node's
/// container runtime through [`Cri`]; it never sees another node.
#[derive(Debug, Clone)]
pub struct Kubelet {
    /// The node it runs on.
    pub node: String,
    /// Its Node's key in the API store (`("", node)`), made once.
    node_key: (String, String),
    /// `kubelet(node)`, the actor of its log lines and events (the node name shared).
    actor: Actor,
    /// `containerd(node)`: its node's container runtime, as it logs.
    runtime_actor: Actor,
    /// The InternalIP kubelet was started with (`--node-ip`): it reports it in its Node's
    /// addresses and in each pod status's `hostIP` (the lab's nodes keep theirs).
    node_ip: Option<std::net::IpAddr>,
    /// Pod workers by pod key (the API store's copy of the key, shared). One entry a pod on
    /// every node: a [`VecMap`], whose room is about its entries.
    pub pod_work: VecMap<SharedKey, PodWork>,
    /// The pods admitted to the node (its pod manager), by key: their requests count as
    /// used when the next pod is admitted. One a pod on every node: a [`VecMap`] (a set),
    /// whose room is about its entries.
    pub admitted: VecMap<SharedKey, ()>,
    /// The device manager: device plugin endpoints and the devices each pod holds.
    pub devices: devices::DeviceManager,
    /// The volume manager's operation executor: the volume operations in backoff.
    pub volume_ops: operations::PendingOperations,
}

impl Kubelet {
    /// The kubelet that starts when a node joins, with the node's InternalIP.
    pub fn new(node: &str, node_ip: Option<std::net::IpAddr>) -> Self {
        let shared: std::sync::Arc<str> = std::sync::Arc::from(node);
        Kubelet {
            node: node.to_string(),
            node_key: (crate::cluster::no_namespace(), node.to_string()),
            actor: Actor::Agent(Agent::Kubelet, std::sync::Arc::clone(&shared)),
            runtime_actor: Actor::Agent(Agent::Containerd, shared),
            node_ip,
            pod_work: VecMap::new(),
            admitted: VecMap::new(),
            devices: Default::default(),
            volume_ops: Default::default(),
        }
    }
}

impl Kubelet {
    /// Its node's InternalIP (a pod status's `hostIP`): the one it was started with, which
    /// is its Node's (`getHostIPsAnyWay` reads the Node, or kubelet's own when there is
    /// none).
    fn node_ip(&self) -> Option<std::net::IpAddr> {
        self.node_ip
    }

    /// The node's name, one allocation shared by its actors and the runtime's CNI calls.
    fn shared_node(&self) -> std::sync::Arc<str> {
        match &self.actor {
            Actor::Agent(_, node) => std::sync::Arc::clone(node),
            Actor::Component(_) | Actor::Plugin(_) => std::sync::Arc::from(self.node.as_str()),
        }
    }

    /// kubelet's earliest timer after `now`: a pod worker's retry after a failed sync (or
    /// a restart), or a volume operation's backoff running out.
    pub fn next_timer(&self, now: Millis) -> Option<Millis> {
        let workers = self.pod_work.values().map(|w| w.retry_at);
        workers
            .filter(|t| *t > now)
            .chain(self.volume_ops.next_retry(now))
            .min()
    }
}

/// The CRI endpoint kubelet talks to: containerd on its node, with the node's kernel and
/// `/etc/cni/net.d` it runs CNI against, and the plugins installed in `/opt/cni/bin`.
pub struct Cri<'a> {
    /// The node's runtime state (containerd's sandboxes, libcni's cache, the kernel).
    pub node: &'a mut NodeRuntime,
    /// The plugin binaries the node has.
    pub registry: &'a Registry,
}

/// kubelet's node status after its runtime's network changed (`setNodeReadyCondition`):
/// Ready=False (`KubeletNotReady`, [`RUNTIME_NETWORK_NOT_READY`]) while the runtime has no
/// network loaded, Ready=True again once it has, each change with kubelet's NodeNotReady or
/// NodeReady event. A node the node lifecycle controller marked Unknown (its kubelet
/// silent) is left to it. True when the condition changed.
pub(crate) fn post_network_status(ctx: &mut Ctx<'_>, node: &str, network_ready: bool) -> bool {
    let Ok(cur) = ctx.api.nodes().get("", node).cloned() else {
        return false;
    };
    let ready = cur
        .status
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready");
    if ready.is_some_and(|c| c.status == "Unknown" || (c.status == "True") == network_ready) {
        return false;
    }
    let mut next = cur;
    next.status.conditions = node_conditions(if network_ready {
        node_ready()
    } else {
        Condition {
            condition_type: "Ready".into(),
            status: "False".into(),
            reason: "KubeletNotReady".into(),
            message: RUNTIME_NETWORK_NOT_READY.into(),
        }
    });
    if ctx.api.nodes().update_status(&next).is_err() {
        return false;
    }
    let reason = if network_ready {
        "NodeReady"
    } else {
        "NodeNotReady"
    };
    ctx.log(
        Actor::kubelet(node),
        reason,
        format!("Node {node} status is now: {reason}"),
    );
    true
}

impl Kubelet {
    /// One kubelet sync of one pod: tear down what is deleted; otherwise wait for and mount
    /// the volumes, then ask the runtime for the sandbox (network), then start the
    /// containers. Returns true when anything changed.
    ///
    /// The order is the real kubelet's (`SyncPod`: `WaitForAttachAndMount` comes before
    /// `containerRuntime.SyncPod`, which creates the sandbox and runs CNI ADD). Chapter 7's
    /// Python mini sets up the network first; the lessons say so.
    pub fn sync_pod(
        &mut self,
        ctx: &mut Ctx<'_>,
        cri: &mut Cri<'_>,
        key: &(String, String),
    ) -> bool {
        let Some((shared, pod)) = ctx
            .api
            .pods
            .get_held(&key.0, &key.1)
            .map(|(k, p)| (SharedKey::clone(k), std::sync::Arc::clone(p)))
        else {
            self.pod_work.remove(key);
            self.admitted.remove(key);
            self.devices.free(key);
            return false;
        };
        if pod.metadata.deletion_tick().is_some() {
            return self.kill_pod(ctx, cri, &shared, &pod);
        }
        if pod.spec.node_name.is_empty() {
            // Not bound to a node yet: no kubelet sees it. kubelet watches the pods whose
            // `spec.nodeName` is its node (`pkg/kubelet/config/apiserver.go`), whether the
            // scheduler wrote it or the manifest did (`pod create --node`).
            return false;
        }
        if pod.status.phase == "Failed" {
            return false; // rejected at admission: nothing runs until it is deleted
        }
        if !self.admitted.contains_key(key) && !self.admit_pod(ctx, cri, &shared, &pod) {
            return true; // rejected now
        }
        if pod.status.phase == "Running" {
            // Running pods only need attention when a resize waits for the node, or when
            // the API server's status is not the one kubelet posted.
            use crate::kubelet::volumes::MountWait;
            let reposted = self.repost_ready(ctx, key, &pod);
            return reposted
                | match self.mount_pod_volumes(ctx, &pod) {
                    Ok(changed) | Err(MountWait::BackingOff(changed)) => changed,
                    Err(MountWait::Failed(_) | MountWait::Crashed) => true,
                    Err(MountWait::Waiting(..) | MountWait::Unattached(_)) => false,
                };
        }
        // The pod is bound to this kubelet's node (the engine hands each pod to its node's
        // kubelet), so the actor is this kubelet's own.
        let actor = self.actor.clone();
        let work = self
            .pod_work
            .get_or_insert_with(SharedKey::clone(&shared), PodWork::default);
        if work.retry_at > ctx.clock {
            return false;
        }
        // kubelet starts no pod while the runtime reports NetworkReady=false (`syncPod`:
        // `runtimeState.networkErrors()`, before the volumes; the lab's pods all use the pod
        // network). The worker tries again at each sync, so the pod starts once the conf
        // directory loads.
        if cri.node.network().is_err() {
            let msg = format!("network is not ready: {RUNTIME_NETWORK_NOT_READY}");
            let first = self.pod_work.get(key).is_none_or(|w| w.last_error != msg);
            if first {
                ctx.pod_event(&actor, "NetworkNotReady", msg.clone(), &pod, Level::Warning);
                if let Some(w) = self.pod_work.get_mut(key) {
                    w.last_error = msg;
                }
                self.mark_container_creating(ctx, key, &actor);
            }
            return first;
        }
        if pod.spec.used_volumes().next().is_some() {
            match self.mount_pod_volumes(ctx, &pod) {
                Ok(_) => {}
                Err(crate::kubelet::volumes::MountWait::Waiting(reason, msg)) => {
                    let first = self.pod_work.get(key).is_none_or(|w| w.last_error != msg);
                    if first {
                        ctx.pod_event(&actor, reason, msg.clone(), &pod, Level::Warning);
                        if let Some(w) = self.pod_work.get_mut(key) {
                            w.last_error = msg;
                        }
                        self.mark_container_creating(ctx, key, &actor);
                    }
                    return first;
                }
                Err(crate::kubelet::volumes::MountWait::Unattached(volumes)) => {
                    // No event (see MountWait::Unattached); the pod worker's log line.
                    let msg = format!(
                        "unmounted volumes=[{0}], unattached volumes=[{0}], failed to process volumes=[]: context deadline exceeded",
                        volumes.join(" ")
                    );
                    let first = self.pod_work.get(key).is_none_or(|w| w.last_error != msg);
                    if first {
                        if let Some(w) = self.pod_work.get_mut(key) {
                            w.last_error = msg;
                        }
                        self.mark_container_creating(ctx, key, &actor);
                    }
                    return first;
                }
                Err(crate::kubelet::volumes::MountWait::Crashed) => return true,
                // The volume manager retries the operation after its own backoff; the pod
                // worker waits for the volumes (`WaitForAttachAndMount`) and goes on as soon
                // as they are mounted.
                Err(crate::kubelet::volumes::MountWait::BackingOff(changed)) => return changed,
                Err(crate::kubelet::volumes::MountWait::Failed(msg)) => {
                    if let Some(w) = self.pod_work.get_mut(key) {
                        w.last_error = msg;
                    }
                    self.mark_container_creating(ctx, key, &actor);
                    return true;
                }
            }
        }
        let (ns, name) = (pod.metadata.namespace(), pod.metadata.name());
        let result = if let Some(sb) = cri.node.sandboxes.get_pod(ns, name) {
            std::sync::Arc::clone(&sb.result)
        } else {
            let work = self
                .pod_work
                .get_or_insert_with(SharedKey::clone(&shared), PodWork::default);
            work.attempts += 1;
            let attempt = work.attempts;
            match self.run_pod_sandbox(ctx, cri, &pod, &shared, attempt) {
                Ok(result) => result,
                Err(message) => {
                    ctx.pod_event(
                        &actor,
                        "FailedCreatePodSandBox",
                        format!("Failed to create pod sandbox: {message}"),
                        &pod,
                        Level::Warning,
                    );
                    let retry_at = ctx.clock.saturating_add(SYNC_BACKOFF);
                    if let Some(w) = self.pod_work.get_mut(key) {
                        w.retry_at = retry_at;
                        w.last_error = message;
                    }
                    self.mark_container_creating(ctx, key, &actor);
                    ctx.log(
                        actor,
                        "backoff",
                        format!(
                            "pod/{} stays ContainerCreating; retry at t={} (`tick {}`)",
                            pod.name(),
                            retry_at.secs_text(),
                            SYNC_BACKOFF.tick_arg()
                        ),
                    );
                    return true;
                }
            }
        };
        self.pod_work
            .insert(SharedKey::clone(&shared), PodWork::default());
        ctx.pod_event(
            &actor,
            "Started",
            Message::Started {
                container: container_name(&pod),
                image: container_image(&pod),
            },
            &pod,
            Level::Normal,
        );
        // The worker lets go of the pod it read before writing its status, so the store
        // writes the object in place instead of copying the one still held.
        drop(pod);
        let host_ip = self.node_ip();
        let (ip, second_ip) = sort_pod_ips(&result, host_ip);
        let now = ctx.clock;
        let written = ctx.write_pod_status(key, &actor, move |st| {
            st.keep_start_time(now);
            st.set_started(now);
            st.phase = "Running".into();
            st.set_reason(Text::Borrowed(""));
            st.host_ip = host_ip;
            st.set_pod_ips(ip, second_ip);
            st.conditions = ready_conditions(true);
        });
        if written.is_ok() {
            ctx.log(actor, "status", Detail::PodRunning { pod: shared, ip });
        }
        true
    }

    fn mark_container_creating(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &(String, String),
        actor: &Actor,
    ) {
        let already = ctx
            .api
            .pods
            .get(key)
            .is_some_and(|p| p.status.reason() == "ContainerCreating");
        if !already {
            // kubelet's status carries the node's IP from its first write on.
            let host_ip = self.node_ip();
            let now = ctx.clock;
            let _ = ctx.write_pod_status(key, actor, |st| {
                st.keep_start_time(now);
                st.phase = "Pending".into();
                st.host_ip = host_ip;
                st.set_reason("ContainerCreating");
                st.conditions = ready_conditions(false);
            });
        }
    }

    /// kubelet's killPod and the final delete: stop the containers, StopPodSandbox (CNI
    /// DEL, netns removed), unmount the volumes (NodeUnpublish, NodeUnstage when no other pod
    /// on the node uses them), then the pod object is removed. The attach/detach controller
    /// detaches afterwards.
    fn kill_pod(
        &mut self,
        ctx: &mut Ctx<'_>,
        cri: &mut Cri<'_>,
        key: &SharedKey,
        pod: &Object<PodSpec>,
    ) -> bool {
        let work = self
            .pod_work
            .get_or_insert_with(SharedKey::clone(key), PodWork::default);
        // A deletion reaches the pod worker at once (`podWorkers.UpdatePod`, SyncPodKill): a
        // backoff left by a failed sync (a mount, a sandbox) does not delay it; only a
        // failed kill backs off.
        if !work.killing {
            work.killing = true;
            work.retry_at = Millis::ZERO;
        }
        if work.retry_at > ctx.clock {
            return false;
        }
        let node_name = pod.spec.node_name.clone();
        let actor = Actor::kubelet(&node_name);
        let had_sandbox = (cri.node.sandboxes)
            .get_pod(pod.metadata.namespace(), pod.metadata.name())
            .is_some();
        let fail = |kubelet: &mut Kubelet, ctx: &mut Ctx<'_>, message: String| {
            ctx.pod_event(
                &actor,
                "FailedKillPod",
                format!("error killing pod: {message}"),
                pod,
                Level::Warning,
            );
            let retry_at = ctx.clock.saturating_add(SYNC_BACKOFF);
            let w = kubelet
                .pod_work
                .get_or_insert_with(SharedKey::clone(key), PodWork::default);
            w.retry_at = retry_at;
            w.last_error = message;
        };
        if had_sandbox {
            ctx.pod_event(
                &actor,
                "Killing",
                Message::Killing(container_name(pod)),
                pod,
                Level::Normal,
            );
            if let Err(message) = self.stop_pod_sandbox(ctx, cri, pod) {
                fail(self, ctx, message);
                return true;
            }
        }
        // The volume manager unmounts a killed pod's volumes (its reconciler, not the pod
        // worker): a failed unmount is retried after that operation's backoff, with no
        // event and no pod worker backoff; the pod object stays until its volumes are gone
        // (kubelet's `podVolumesExist` check before the final delete).
        match self.unmount_pod_volumes(ctx, pod) {
            Ok(()) => {}
            Err(crate::kubelet::volumes::TeardownWait::Failed) => return true,
            Err(crate::kubelet::volumes::TeardownWait::BackingOff) => return had_sandbox,
        }
        if ctx.api.pods().delete(&key.0, &key.1).is_ok() {
            ctx.api.volume_pods.remove(key);
            self.pod_work.remove(key);
            self.admitted.remove(key);
            if let Some(a) = self.devices.free(key) {
                let ids: Vec<String> = a
                    .containers
                    .values()
                    .flat_map(|m| m.iter())
                    .map(|(r, c)| format!("{r} {}", c.ids.join(",")))
                    .collect();
                ctx.log(
                    Actor::kubelet(&node_name),
                    "devices",
                    format!("pod/{} is gone: {} free again", pod.name(), ids.join("; ")),
                );
            }
            ctx.log(
                "apiserver",
                "delete",
                Detail::PodRemoved {
                    pod: pod.name().to_string(),
                },
            );
        }
        true
    }

    /// containerd died during a CNI ADD (`containerd-after-ipam`): no DEL follows, the
    /// lease stays in host-local's store, and kubelet's RunPodSandbox call fails the way
    /// grpc-go reports a connection that closed mid-call. Returns that error.
    pub(crate) fn runtime_crashed(
        &mut self,
        ctx: &mut Ctx<'_>,
        cri: &mut Cri<'_>,
        node: &str,
        sandbox: &str,
        netns: &str,
    ) -> String {
        {
            let n = &mut *cri.node;
            // The lab drops the half-made namespace; the IPAM lease is what leaks.
            n.host.remove_netns(netns);
        }
        ctx.log_warning(
            Actor::containerd(node),
            "crash",
            format!(
                "containerd died during CNI ADD (containerd-after-ipam) for sandbox {}: no DEL ran and libcni cached nothing, so the address host-local allocated leaks (`show ipam {node}`); systemd restarts containerd",
                sandbox.get(..13).unwrap_or(sandbox)
            ),
        );
        "rpc error: code = Unavailable desc = error reading from server: EOF".into()
    }

    /// kubelet died at a crash point: it stops acting until systemd restarts it
    /// (`RestartSec=10`), then resumes from scratch for the pod.
    pub(crate) fn kubelet_crashed(
        &mut self,
        ctx: &mut Ctx<'_>,
        node: &str,
        pod: &Object<PodSpec>,
        what: &str,
    ) {
        let back = ctx.clock.saturating_add(crate::faults::KUBELET_RESTART_SEC);
        ctx.faults.kubelet_down_until.insert(node.to_string(), back);
        // The operation executor's backoffs lived in the process that died.
        self.volume_ops = Default::default();
        let (ns, name) = (pod.metadata.namespace(), pod.metadata.name());
        let key = match ctx.api.pods.get_shared(ns, name) {
            Some((key, _)) => SharedKey::clone(key),
            None => SharedKey::new((ns.clone(), name.clone())),
        };
        let w = self.pod_work.get_or_insert_with(key, PodWork::default);
        w.retry_at = back;
        ctx.log_warning(
            Actor::kubelet(node),
            "crash",
            format!(
                "kubelet died {what} (pod/{}); systemd restarts it at t={} (RestartSec=10, `tick {}`)",
                pod.name(),
                back.secs_text(),
                crate::faults::KUBELET_RESTART_SEC.tick_arg()
            ),
        );
    }
}

impl Kubelet {
    /// The status manager's `needsReconcile` for a running pod: when the API server's
    /// Ready condition is not the True kubelet posted (the node lifecycle controller's
    /// `MarkPodsNotReady` while this kubelet was silent), it posts Ready True again. True
    /// when it wrote.
    fn repost_ready(
        &self,
        ctx: &mut Ctx<'_>,
        key: &(String, String),
        pod: &Object<PodSpec>,
    ) -> bool {
        let ready = |c: &Condition| c.condition_type == "Ready";
        if pod
            .status
            .conditions
            .iter()
            .all(|c| !ready(c) || c.status == "True")
        {
            return false;
        }
        let actor = self.actor.clone();
        let now = ctx.clock;
        ctx.write_pod_status(key, &actor, |s| {
            s.keep_start_time(now);
            if let Some(c) = s.conditions.to_mut().iter_mut().find(|c| ready(c)) {
                c.status = "True".into();
                c.reason = "".into();
                c.message = "".into();
            }
            // Back to every running pod's list: borrow the shared one again instead of
            // keeping a copy.
            if *s.conditions == *ready_conditions(true) {
                s.conditions = ready_conditions(true);
            }
        })
        .is_ok()
    }
}

fn container_name(pod: &Object<PodSpec>) -> Text {
    pod.spec
        .containers
        .first()
        .map_or(Text::Borrowed("app"), |c| c.name.clone())
}

/// The image of the pod's container, as its `Started` event names it.
fn container_image(pod: &Object<PodSpec>) -> Text {
    pod.spec
        .containers
        .first()
        .map_or(Text::Borrowed(crate::cluster::LAB_IMAGE), |c| {
            c.image.clone()
        })
}

/// kubelet's `sortPodIPs`: of the sandbox's addresses, the first of the node's family, then
/// the first of the other family; `podIP` is the first of the two, `podIPs` both. The real
/// kubelet takes the family from its `--node-ip` (IPv4 when unset); the lab's kubelets run as
/// if `--node-ip` were the Node's InternalIP.
fn sort_pod_ips(
    result: &crate::cni::types::CniResult,
    node_ip: Option<std::net::IpAddr>,
) -> (Option<std::net::IpAddr>, Option<std::net::IpAddr>) {
    let node_v4 = node_ip.is_none_or(|ip| ip.is_ipv4());
    let first_of = |v4: bool| crate::node::sandbox_ips(result).find(|ip| ip.is_ipv4() == v4);
    match (first_of(node_v4), first_of(!node_v4)) {
        (Some(first), second) => (Some(first), second),
        (None, other) => (other, None),
    }
}

/// kubelet's node lease renewInterval: NodeLeaseDurationSeconds (40) ×
/// nodeLeaseRenewIntervalFraction (0.25), pkg/kubelet/kubelet.go.
pub(crate) const LEASE_RENEW_INTERVAL: Millis = Millis::secs(10);

/// The node Lease's `spec.renewTime`: kubelet's lease controller (component-helpers
/// `apimachinery/lease`) creates the Lease as kubelet starts (`started`, when the node
/// joined) and renews it every [`LEASE_RENEW_INTERVAL`]; a lost node's kubelet
/// (`down_since`) renews no more. The controller's 4% jitter is left out (renewals fall
/// on the 10 s grid), and a node back from `node-down` renews on the same grid.
pub(crate) fn lease_renew_time(started: Millis, now: Millis, down_since: Option<Millis>) -> Millis {
    let until = down_since.map_or(now, |d| d.min(now));
    if until < started {
        return started;
    }
    let every = LEASE_RENEW_INTERVAL.as_ms();
    let renewals = (until.as_ms() - started.as_ms()) / every;
    started.saturating_add(Millis::ms(renewals * every))
}

/// The node conditions kubelet posts, in the order its status setters write them
/// (`defaultNodeStatusFuncs`): MemoryPressure, DiskPressure and PIDPressure, False (the
/// lab's nodes run short of none of them), then `ready`.
pub(crate) fn node_conditions(ready: Condition) -> Vec<Condition> {
    vec![
        Condition::fixed(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        Condition::fixed(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        Condition::fixed(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        ready,
    ]
}

/// kubelet's Ready condition of a node whose runtime is ready.
pub(crate) fn node_ready() -> Condition {
    Condition::fixed(
        "Ready",
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
    )
}

/// The pod conditions kubelet reports, all true once running. Every pod reports one of
/// these two lists, so its status borrows the list rather than holding a copy.
fn ready_conditions(ready: bool) -> Conditions {
    Conditions::Borrowed(if ready { &READY } else { &NOT_READY })
}

/// A running pod's conditions, in the order kubelet's status manager writes them.
static READY: [Condition; 5] = [
    Condition::fixed("PodReadyToStartContainers", "True", "", ""),
    Condition::fixed("Initialized", "True", "", ""),
    Condition::fixed("Ready", "True", "", ""),
    Condition::fixed("ContainersReady", "True", "", ""),
    Condition::fixed("PodScheduled", "True", "", ""),
];

/// A pod whose sandbox or containers are not up.
static NOT_READY: [Condition; 5] = [
    Condition::fixed("PodReadyToStartContainers", "False", "", ""),
    Condition::fixed("Initialized", "True", "", ""),
    Condition::fixed(
        "Ready",
        "False",
        "ContainersNotReady",
        "containers with unready status: [app]",
    ),
    Condition::fixed(
        "ContainersReady",
        "False",
        "ContainersNotReady",
        "containers with unready status: [app]",
    ),
    Condition::fixed("PodScheduled", "True", "", ""),
];

#[cfg(test)]
mod tests {
    use crate::cni::types::CniResult;
    use std::net::IpAddr;

    fn ip(a: &str) -> Option<IpAddr> {
        Some(a.parse().unwrap())
    }

    #[test]
    fn kubelet_lists_the_nodes_family_first_then_the_first_of_the_other() {
        let r: CniResult = serde_json::from_str(
            r#"{"cniVersion":"1.0.0","ips":[{"address":"fd00::2/64"},{"address":"fd00::3/64"},
            {"address":"10.0.0.2/24"},{"address":"10.0.0.3/24"}]}"#,
        )
        .unwrap();
        let on_v4_node = (ip("10.0.0.2"), ip("fd00::2"));
        assert_eq!(super::sort_pod_ips(&r, ip("192.168.0.2")), on_v4_node);
        assert_eq!(super::sort_pod_ips(&r, None), on_v4_node);
        let on_v6_node = (ip("fd00::2"), ip("10.0.0.2"));
        assert_eq!(super::sort_pod_ips(&r, ip("fd00:ffff::2")), on_v6_node);
    }

    #[test]
    fn a_pod_with_no_address_of_the_nodes_family_has_the_other_alone() {
        let v6: CniResult =
            serde_json::from_str(r#"{"cniVersion":"1.0.0","ips":[{"address":"fd00::2/64"}]}"#)
                .unwrap();
        assert_eq!(
            super::sort_pod_ips(&v6, ip("192.168.0.2")),
            (ip("fd00::2"), None)
        );
    }
}
