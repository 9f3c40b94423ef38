//! `nad create|delete|list` (NetworkAttachmentDefinition objects, as the API server stores
//! them: any `spec.config` string is accepted; Multus parses it when a pod uses it) and
//! `network multus on|off` (Multus's DaemonSet: the thin entrypoint on every node, see
//! `crate::netd::multus`).

use super::{Lab, LabError};
use crate::cluster::Object;
use crate::cluster::nad::{NetAttachDefSpec, RESOURCE_NAME_ANNOTATION};
use crate::command::grammar::{NadCmd, NadCreateArgs};
use crate::render::{Line, Outcome, Role, Table};

/// The resource name kubectl prints for the kind.
const RESOURCE: &str = "network-attachment-definition.k8s.cni.cncf.io";

impl Lab {
    /// Dispatch `nad …`.
    pub fn nad(&mut self, cmd: NadCmd) -> Result<Outcome, LabError> {
        match cmd {
            NadCmd::Create(a) => self.nad_create(&a),
            NadCmd::Delete { name, ns } => {
                self.cluster.net_attach_defs().delete(&ns, &name)?;
                let mut out = Outcome::empty();
                out.line(
                    Line::new()
                        .push(format!("{RESOURCE} \"{name}\""), Role::Name)
                        .push(" deleted", Role::Good),
                );
                Ok(out)
            }
            NadCmd::List { ns } => Ok(self.nad_list(ns.as_deref())),
        }
    }

    fn nad_create(&mut self, a: &NadCreateArgs) -> Result<Outcome, LabError> {
        if let Some(why) = crate::net::validate::is_dns1123_subdomain(&a.name)
            .into_iter()
            .next()
        {
            return Err(LabError::from(super::invalid::Invalid::one(
                crate::cluster::ApiKind::NetworkAttachmentDefinition,
                &a.name,
                format!("metadata.name: Invalid value: {:?}: {why}", a.name),
            )));
        }
        super::validate::namespace(&a.ns).map_err(LabError::msg)?;
        self.require_namespace(&a.ns)?;
        if let Some(r) = &a.resource {
            if r.is_empty() || r.chars().any(char::is_whitespace) {
                return Err(LabError::msg(format!(
                    "invalid --resource {r:?}: a device-plugin resource name such as intel.com/sriov_netdevice (no spaces)"
                )));
            }
        }
        let config = match (&a.config, &a.file) {
            (Some(c), _) => c.clone(),
            (None, Some(f)) => self
                .read_input_file(f)
                .map_err(|e| LabError::msg(format!("cannot read {f}: {e}")))?,
            (None, None) => String::new(),
        };
        let mut obj = Object::new(&a.name, &a.ns, NetAttachDefSpec { config });
        if let Some(r) = &a.resource {
            obj.metadata
                .annotations_mut()
                .insert(RESOURCE_NAME_ANNOTATION.to_string(), r.clone());
        }
        let clock = self.clock;
        self.cluster.net_attach_defs().create(obj, clock)?;
        let mut out = Outcome::empty();
        out.line(
            Line::new()
                .push(format!("{RESOURCE}/{}", a.name), Role::Name)
                .push(" created", Role::Good),
        );
        if !self.multus {
            out.line(Line::styled(
                "  nothing reads it until Multus runs: `network multus on`",
                Role::Dim,
            ));
        }
        Ok(out)
    }

    /// `nad list`: namespace, name, the config's plugin type(s), the resource, age.
    pub(crate) fn nad_list(&self, ns: Option<&str>) -> Outcome {
        let mut t = Table::new(&["NAMESPACE", "NAME", "TYPE", "RESOURCE", "AGE"]);
        for n in self.cluster.net_attach_defs.values() {
            if ns.is_some_and(|x| x != n.metadata.namespace()) {
                continue;
            }
            t.row([
                n.metadata.namespace().clone(),
                n.name().to_string(),
                config_types(&n.spec.config),
                n.metadata
                    .annotations()
                    .get(RESOURCE_NAME_ANNOTATION)
                    .cloned()
                    .unwrap_or_else(|| "<none>".into()),
                super::views::age(self.clock, n.metadata.creation_tick),
            ]);
        }
        if t.is_empty() {
            let mut out = Outcome::empty();
            out.plain(super::listing::no_resources_found(ns));
            return out;
        }
        t.render()
    }

    /// `network multus on|off`.
    pub(crate) fn multus_cmd(&mut self, state: &str) -> Result<Outcome, LabError> {
        let mut out = Outcome::empty();
        let on = match state {
            "on" => true,
            "off" => false,
            other => {
                return Err(LabError::msg(format!(
                    "network multus takes on or off, not {other:?}"
                )));
            }
        };
        if on == self.multus {
            out.line(Line::styled(
                format!("Multus is already {state}"),
                Role::Dim,
            ));
            return Ok(out);
        }
        self.multus = on;
        if on {
            let names: Vec<String> = self.nodes.keys().cloned().collect();
            for n in names {
                self.multus_install(&n);
            }
            out.line(
                Line::new()
                    .push("Multus (thin)", Role::Name)
                    .push(" running", Role::Good)
                    .push(
                        format!(
                            "  on top of {}: every pod's sandbox now goes through Multus; `pod create … --networks NAD` adds interfaces",
                            self.network.name()
                        ),
                        Role::Dim,
                    ),
            );
        } else {
            for rt in self.nodes.values_mut() {
                crate::netd::multus::uninstall(rt);
            }
            out.line(
                Line::new()
                    .push("Multus", Role::Name)
                    .push(" removed", Role::Good)
                    .push(
                        "  00-multus.conf[list] and multus.d/ are gone from every node; running pods keep their sandboxes",
                        Role::Dim,
                    ),
            );
        }
        Ok(out)
    }

    /// The thin entrypoint runs on one node (Multus on, a node joins, the network changed).
    pub(crate) fn multus_install(&mut self, node: &str) {
        let Some(rt) = self.nodes.get_mut(node) else {
            return;
        };
        let actor = crate::record::Actor::on(crate::record::Agent::Multus, node);
        match crate::netd::multus::install_on(rt) {
            Ok((file, master)) => {
                self.log(
                    actor,
                    "install",
                    format!(
                        "{}/{file} written (delegates[0] from {master}) and {}",
                        crate::cni::conf::ConfDir::PATH,
                        crate::netd::multus::KUBECONFIG
                    ),
                );
            }
            Err(e) => {
                // The entrypoint exits; the DaemonSet restarts it (CrashLoopBackOff) and the
                // runtime keeps using the node's current config.
                let detail = format!("failed to create multus config: {e}");
                let clock = self.clock;
                self.log_event(crate::record::CallEvent::step(
                    clock,
                    actor,
                    "error",
                    detail.into(),
                    crate::record::Level::Warning,
                ));
            }
        }
    }

    /// With Multus on, every node's entrypoint regenerates its config.
    pub(crate) fn multus_resync(&mut self) {
        if !self.multus {
            return;
        }
        let names: Vec<String> = self.nodes.keys().cloned().collect();
        for n in names {
            self.multus_install(&n);
        }
    }
}

/// The plugin type(s) a config names, for `nad list` (`bridge`, `bridge,tuning`), or what
/// the text is when it is not a config.
fn config_types(config: &str) -> String {
    if config.is_empty() {
        return "<empty: from confDir>".into();
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(config) else {
        return "<not JSON>".into();
    };
    if let Some(t) = v.get("type").and_then(|t| t.as_str()) {
        return t.to_string();
    }
    match v.get("plugins").and_then(|p| p.as_array()) {
        Some(ps) => ps
            .iter()
            .filter_map(|p| p.get("type").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join(","),
        None => "<no type>".into(),
    }
}
