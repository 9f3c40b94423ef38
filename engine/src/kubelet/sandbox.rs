//! containerd's CRI plugin: RunPodSandbox creates the network namespace and runs the CNI
//! chain (go-cni → libcni) with the pod's labels as CNI_ARGS and its port mappings and
//! bandwidth annotations as capability args; a failed ADD is torn down with DEL before the
//! error goes back to kubelet. StopPodSandbox runs DEL and removes the namespace.

use super::{Cri, Kubelet};
use crate::cluster::store::SharedKey;
use crate::cluster::{Object, PodSpec};
use crate::cni::conf::CNI_NOT_INITIALIZED;
use crate::cni::host::Netns;
use crate::cni::plugin::CniCommand;
use crate::cni::runtime::{CniArgs, Invoker, RuntimeConf};
use crate::control::Ctx;
use crate::node::Sandbox;
use crate::record::wire::WireRecord;
use crate::record::{Actor, CallEvent, CniOp, CniPurpose, Detail, Level, What, WireRange};
use serde_json::{Value, json};
use std::sync::Arc;

/// Annotation kubelet reads for ingress shaping.
pub(crate) const INGRESS_BANDWIDTH: &str = "kubernetes.io/ingress-bandwidth";
/// Annotation kubelet reads for egress shaping.
pub(crate) const EGRESS_BANDWIDTH: &str = "kubernetes.io/egress-bandwidth";

impl Kubelet {
    /// RunPodSandbox for the pod stored under `shared` (its sandbox's key): returns the chain's result (the sandbox's addresses are
    /// [`crate::node::sandbox_ips`] of it), or the error kubelet reports.
    pub(crate) fn run_pod_sandbox(
        &mut self,
        ctx: &mut Ctx<'_>,
        cri: &mut Cri<'_>,
        pod: &Object<PodSpec>,
        shared: &SharedKey,
        attempt: u32,
    ) -> Result<Arc<crate::cni::types::CniResult>, String> {
        let node_name = pod.spec.node_name.as_str();
        let id = crate::util::hash::id64(&[&pod.metadata.uid.text(), &attempt.to_string()]);
        let netns = [
            "/var/run/netns/cni-",
            &crate::util::hash::uid(&[&id, "netns"]).text(),
        ]
        .concat();
        let (id, netns): (Arc<str>, Arc<str>) = (id.into(), netns.into());
        let actor = self.runtime_actor.clone();
        ctx.log(
            &actor,
            "RunPodSandbox",
            Detail::RunPodSandbox {
                pod: SharedKey::clone(shared),
                sandbox: Arc::clone(&id),
                netns: Arc::clone(&netns),
            },
        );
        // setupPodNetwork's `cniNamespaceOpts` reads the annotations before any plugin
        // runs: a bad bandwidth fails the sandbox with no CNI call.
        let rt = match runtime_conf(pod, shared, Arc::clone(&id), netns) {
            Ok(rt) => Arc::new(rt),
            Err(e) => {
                return Err(format!(
                    "rpc error: code = Unknown desc = failed to setup network for sandbox {:?}: get cni namespace options: reading pod bandwidth annotations: {e}",
                    &*id
                ));
            }
        };
        // The conf holds the sandbox's ID and namespace from here on.
        let id = &rt.container_id;
        // go-cni's Setup asks its Status first: with no network loaded it is
        // ErrCNINotInitialized, whatever made the load fail.
        let (net, host, cache) = cri.node.network_host_cache();
        let net = match net {
            Ok(n) => n,
            Err(_) => {
                return Err(format!(
                    "rpc error: code = Unknown desc = failed to setup network for sandbox {id:?}: {CNI_NOT_INITIALIZED}"
                ));
            }
        };
        // containerd brings the sandbox's `lo` up before the pod's network (its loopback
        // network, `cni.WithLoNetwork`: the `loopback` plugin's ADD; CRI-O does the same):
        // `lo` is ifindex 1, UP, and holds the kernel's 127.0.0.1/8 and ::1/128 in every pod.
        // The namespace is held under the conf's path: one text for both.
        host.netns
            .insert(Arc::clone(&rt.netns), Netns::with_loopback_up());
        let netns: &str = &rt.netns;
        let first_wire = ctx.wire.next_seq();
        let registry = cri.registry;
        let wire = &mut ctx.wire;
        // How many records the chain wrote so far: where the ADD's end and a teardown DEL's
        // begin.
        let recorded = std::cell::Cell::new(0u64);
        let mut record = |c| {
            wire.push(WireRecord::cni(c));
            recorded.set(recorded.get() + 1);
        };
        let mut scope = crate::faults::FaultScope::new(ctx.faults, node_name);
        // PodResources `List`: the device manager's allocations for this pod (kubelet
        // admitted the pod and allocated its devices before RunPodSandbox).
        let pod_devices = self.pod_devices(pod.metadata.namespace(), pod.metadata.name());
        let shared_node = self.shared_node();
        let mut kube = super::kube_client::KubeletClient::new(&*ctx.api, pod_devices);
        let mut model = crate::cni::exec::InProcess {
            registry,
            host: &mut *host,
            kube: Some(&mut kube),
        };
        let mut inv = Invoker {
            exec: &mut crate::cni::real::SideBySide {
                model: &mut model,
                real: ctx.real,
                node: node_name,
            },
            cache,
            wire: &mut record,
            node: shared_node,
            faults: Some(&mut scope),
        };
        // containerd's setupPodNetwork: the chain's result must give the pod's `eth0` an
        // address, or RunPodSandbox fails (and its deferred teardown runs DEL).
        let added = inv
            .add(net, &rt)
            .map_err(|e| e.to_string())
            .and_then(|result| {
                if crate::node::sandbox_ips(&result).next().is_some() {
                    Ok(result)
                } else {
                    Err(format!("failed to find network info for sandbox {id:?}"))
                }
            });
        let add_end = first_wire + recorded.get();
        let runtime_died = inv.faults.as_deref().is_some_and(|f| f.runtime_died());
        let teardown = if added.is_err() && !runtime_died {
            // containerd: "if retErr != nil { teardownPodNetwork }" — every failed ADD is
            // followed by a DEL, then the namespace is removed.
            let r = inv.del(net, &rt);
            host.remove_netns(netns);
            if let Some(r) = ctx.real {
                r.netns_removed(node_name, netns);
            }
            Some(r)
        } else {
            None
        };
        let queued = kube.take();
        let last_wire = ctx.wire.next_seq();
        ctx.log_event(CallEvent::new(
            ctx.clock,
            actor.clone(),
            What::Cni(CniOp {
                command: CniCommand::Add,
                wire: WireRange {
                    first: first_wire,
                    end: add_end,
                },
                purpose: CniPurpose::Sandbox(Arc::clone(&net.list)),
            }),
            Level::Normal,
        ));
        ctx.log_wire_summaries(first_wire, last_wire);
        // What a plugin with a kubeconfig (Multus) wrote: events, then one pod update.
        ctx.apply_plugin_writes("multus", queued);
        if runtime_died {
            return Err(self.runtime_crashed(ctx, cri, node_name, id, netns));
        }
        match added {
            Ok(result) => {
                let sandbox = Sandbox {
                    result: Arc::clone(&result),
                    rt,
                };
                cri.node.sandboxes.insert(SharedKey::clone(shared), sandbox);
                Ok(result)
            }
            Err(e) => {
                let failed = match teardown {
                    Some(Err(del)) => Some(del.to_string()),
                    _ => None,
                };
                ctx.log_event(CallEvent::new(
                    ctx.clock,
                    actor,
                    What::Cni(CniOp {
                        command: CniCommand::Del,
                        wire: WireRange {
                            first: add_end,
                            end: last_wire,
                        },
                        purpose: CniPurpose::Teardown(failed),
                    }),
                    Level::Normal,
                ));
                Err(format!(
                    "rpc error: code = Unknown desc = failed to setup network for sandbox {id:?}: {e}"
                ))
            }
        }
    }

    /// StopPodSandbox + RemovePodSandbox: CNI DEL with the cached result, netns removed.
    pub(crate) fn stop_pod_sandbox(
        &mut self,
        ctx: &mut Ctx<'_>,
        cri: &mut Cri<'_>,
        pod: &Object<PodSpec>,
    ) -> Result<(), String> {
        let node_name = pod.spec.node_name.clone();
        let (ns, name) = (pod.metadata.namespace(), pod.metadata.name());
        let node = &mut *cri.node;
        let Some(sb) = node.sandboxes.get_pod(ns, name).cloned() else {
            return Ok(());
        };
        let first_wire = ctx.wire.next_seq();
        let result = match node.network() {
            Ok(net) => {
                let net = net.clone();
                let registry = cri.registry;
                let wire = &mut ctx.wire;
                let mut record = |c| {
                    wire.push(WireRecord::cni(c));
                };
                let mut scope = crate::faults::FaultScope::new(ctx.faults, &node_name);
                let pod_devices = self.pod_devices(pod.metadata.namespace(), pod.metadata.name());
                let mut kube = super::kube_client::KubeletClient::new(&*ctx.api, pod_devices);
                let mut model = crate::cni::exec::InProcess {
                    registry,
                    host: &mut node.host,
                    kube: Some(&mut kube),
                };
                let mut inv = Invoker {
                    exec: &mut crate::cni::real::SideBySide {
                        model: &mut model,
                        real: ctx.real,
                        node: &node_name,
                    },
                    cache: &mut node.cache,
                    wire: &mut record,
                    node: Arc::from(node_name.as_str()),
                    faults: Some(&mut scope),
                };
                inv.del(&net, &sb.rt).map_err(|e| e.to_string())
            }
            // go-cni's Remove asks its Status first, as Setup does.
            Err(_) => Err(CNI_NOT_INITIALIZED.to_string()),
        };
        if result.is_ok() {
            node.host.remove_netns(sb.netns());
            node.sandboxes.remove_pod(ns, name);
            if let Some(r) = ctx.real {
                r.netns_removed(&node_name, sb.netns());
            }
        }
        let last_wire = ctx.wire.next_seq();
        let error = result.err().map(|e| {
            format!(
                "rpc error: code = Unknown desc = failed to destroy network for sandbox {:?}: {e}",
                sb.id()
            )
        });
        ctx.log(
            Actor::containerd(&node_name),
            "StopPodSandbox",
            Detail::StopPodSandbox {
                sandbox: sb.id().to_string(),
                netns: sb.netns().to_string(),
            },
        );
        ctx.log_wire_summaries(first_wire, last_wire);
        error.map_or(Ok(()), Err)
    }
}

/// The interface every pod sandbox gets, its name allocated once.
static ETH0: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from(crate::node::DEFAULT_IFNAME));

/// The RuntimeConf containerd builds for a pod sandbox.
fn runtime_conf(
    pod: &Object<PodSpec>,
    shared: &SharedKey,
    id: Arc<str>,
    netns: Arc<str>,
) -> Result<RuntimeConf, String> {
    let mut rt = RuntimeConf {
        container_id: id,
        netns,
        ifname: Arc::clone(&ETH0),
        // containerd's labels: the pod's identity, the text made when a plugin runs.
        args: CniArgs::Pod {
            pod: SharedKey::clone(shared),
            uid: pod.metadata.uid,
        },
        ..Default::default()
    };
    let mut mappings = Vec::new();
    for c in pod.spec.containers.iter() {
        for p in &c.ports {
            if p.host_port != 0 {
                mappings.push(json!({
                    "hostPort": p.host_port,
                    "containerPort": p.container_port,
                    "protocol": p.protocol.to_ascii_lowercase(),
                }));
            }
        }
    }
    if !mappings.is_empty() {
        rt.capability_args
            .insert("portMappings".into(), Value::Array(mappings));
    }
    // containerd's toCNIBandWidth: rates from the annotations, bursts math.MaxUint32.
    let ann = pod.metadata.annotations();
    let ingress = ann
        .get(INGRESS_BANDWIDTH)
        .map(|v| super::bandwidth::parse(v))
        .transpose()?;
    let egress = ann
        .get(EGRESS_BANDWIDTH)
        .map(|v| super::bandwidth::parse(v))
        .transpose()?;
    if ingress.is_some() || egress.is_some() {
        let mut bw = serde_json::Map::new();
        if let Some(r) = ingress {
            bw.insert("ingressRate".into(), json!(r));
            bw.insert("ingressBurst".into(), json!(u32::MAX));
        }
        if let Some(r) = egress {
            bw.insert("egressRate".into(), json!(r));
            bw.insert("egressBurst".into(), json!(u32::MAX));
        }
        rt.capability_args
            .insert("bandwidth".into(), Value::Object(bw));
    }
    Ok(rt)
}
