//! kube-controller-manager's namespace controller, its last step: a Terminating namespace
//! whose content is gone is removed (`pkg/controller/namespace/deletion`,
//! `namespaced_resources_deleter.go`: delete all content, then finalize). Deleting the
//! content goes through the engine (`Lab::delete_namespace_content`, the same paths as
//! `pod delete`, `pvc delete`…), so a pod still goes through its kubelet's teardown and a
//! claim through pvc-protection before the namespace can go.

use crate::cluster::Cluster;
use crate::control::{Component, Ctx};

/// The namespace controller (stateless: it reads the Namespace objects and their content).
#[derive(Debug, Clone, Copy, Default)]
pub struct NamespaceController;

impl Component for NamespaceController {
    fn name(&self) -> &'static str {
        "namespace-controller"
    }

    fn reconcile(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let done: Vec<String> = ctx
            .api
            .namespaces
            .values()
            .filter(|n| n.metadata.deletion_tick().is_some() && !holds_content(ctx.api, n.name()))
            .map(|n| n.name().to_string())
            .collect();
        let mut changed = false;
        for name in done {
            if ctx.api.namespaces().delete("", &name).is_ok() {
                changed = true;
                ctx.log(
                    self.name(),
                    "delete",
                    format!("namespace {name} removed (its content is gone)"),
                );
            }
        }
        changed
    }
}

/// Whether anything the lab keeps per namespace still lives in `ns`.
pub(crate) fn holds_content(api: &Cluster, ns: &str) -> bool {
    let here = |k: &(String, String)| k.0 == ns;
    api.pods.keys().any(here)
        || api.pvcs.keys().any(here)
        || api.policies.keys().any(here)
        || api.snapshots.keys().any(here)
        || api.net_attach_defs.keys().any(here)
}
