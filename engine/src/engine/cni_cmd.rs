//! Raw CNI commands: the learner plays the container runtime and calls the chain directly.
//! Output is exactly what the chain printed on stdout (the result JSON, nothing for DEL and
//! CHECK, or the CNI error JSON); libcni's error text goes to stderr.

use super::{Lab, LabError};
use crate::cni::conf::{ConfDir, ConfText, NET_D_CAP, parse_file};
use crate::cni::host::Netns;
use crate::cni::plugin::{Attachment, CniCommand};
use crate::cni::registry::Registry;
use crate::cni::release::PluginsRelease;
use crate::cni::runtime::{ChainError, CniArgs, Invoker, Network};
use crate::command::grammar::{CniAttachArgs, CniCmd, CniConfCmd};
use crate::record::{Actor, CallEvent, CniOp, CniPurpose, Level, What, WireRange};
use crate::render::{Line, Outcome, Role};
use std::sync::Arc;

impl Lab {
    /// Dispatch a `cni …` command.
    pub fn cni(&mut self, cmd: CniCmd) -> Result<Outcome, LabError> {
        match cmd {
            CniCmd::Add(a) => self.cni_attach(&a, Op::Add),
            CniCmd::Del(a) => self.cni_attach(&a, Op::Del),
            CniCmd::Check(a) => self.cni_attach(&a, Op::Check),
            CniCmd::Gc { node } => self.cni_gc(&node),
            CniCmd::Status { node } => self.cni_status(&node),
            CniCmd::Version { node } => self.cni_version(node.as_deref()),
            CniCmd::Plugins { release } => self.cni_plugins(release.as_deref()),
            CniCmd::Conf(CniConfCmd::Show { node }) => {
                self.cni_conf_show(node.as_deref()).map(|(o, s)| {
                    self.shown.push(s);
                    o
                })
            }
            CniCmd::Conf(CniConfCmd::Load {
                file,
                node,
                all: _,
                as_name,
                as_is,
            }) => self.cni_conf_load(&file, node.as_deref(), as_name.as_deref(), as_is),
            CniCmd::Conf(CniConfCmd::Remove { name, node }) => {
                self.cni_conf_remove(&name, node.as_deref())
            }
        }
    }

    /// `cni conf remove NAME [--node NODE]`: the file goes from each node's net.d. A node
    /// without it is reported, not an error, unless no node has it.
    fn cni_conf_remove(&mut self, name: &str, node: Option<&str>) -> Result<Outcome, LabError> {
        let targets: Vec<String> = match node {
            Some(n) => {
                if !self.nodes.contains_key(n) {
                    return Err(unknown_node(self, n));
                }
                vec![n.to_string()]
            }
            None => self.nodes.keys().cloned().collect(),
        };
        let holders: Vec<&String> = targets
            .iter()
            .filter(|n| {
                self.nodes
                    .get(*n)
                    .is_some_and(|rt| rt.confdir.files.contains_key(name))
            })
            .collect();
        if holders.is_empty() {
            let have: Vec<String> = targets
                .first()
                .and_then(|n| self.nodes.get(n))
                .map(|rt| rt.confdir.files.keys().cloned().collect())
                .unwrap_or_default();
            return Err(LabError::msg(format!(
                "rm: cannot remove '{}/{name}': No such file or directory (net.d holds: {})",
                ConfDir::PATH,
                super::names::few(&have, "nothing")
            )));
        }
        let holders: Vec<String> = holders.into_iter().cloned().collect();
        let mut out = Outcome::empty();
        for n in holders {
            if let Some(rt) = self.nodes.get_mut(&n) {
                rt.confdir.files.remove(name);
                rt.reload_network();
                let loaded = rt.confdir.active().map(|(f, _)| f);
                let ready = loaded.is_ok();
                let active = loaded.unwrap_or_else(|_| "none".to_string());
                self.post_network_status(&n, ready);
                out.line(
                    Line::new()
                        .push(format!("{}/{name}", ConfDir::PATH), Role::Name)
                        .push(format!(" removed on {n}"), Role::Good)
                        .push(format!("  (active: {active})"), Role::Dim),
                );
            }
        }
        Ok(out)
    }

    fn node_network(&self, node: &str) -> Result<Network, LabError> {
        let rt = self
            .nodes
            .get(node)
            .ok_or_else(|| unknown_node(self, node))?;
        rt.network().clone().map_err(LabError::msg)
    }

    fn cni_attach(&mut self, a: &CniAttachArgs, op: Op) -> Result<Outcome, LabError> {
        let net = self.node_network(&a.node)?;
        let default_netns = format!("/var/run/netns/{}", a.container);
        let node_rt = self
            .nodes
            .get_mut(&a.node)
            .ok_or_else(|| LabError::msg(format!("node {:?} not found", a.node)))?;
        let cached = node_rt
            .cache
            .get(&net.name, &a.container, &a.ifname)
            .map(|c| c.rt.as_ref().clone());
        let netns = match (&a.netns, op, &cached) {
            (Some(n), _, _) => n.clone(),
            (None, Op::Add, _) => default_netns.clone(),
            (None, _, Some(c)) => c.netns.to_string(),
            (None, _, None) => {
                if node_rt.host.netns.contains_key(&default_netns) {
                    default_netns.clone()
                } else {
                    String::new()
                }
            }
        };
        let had_cached_result = cached.is_some();
        let mut rt = cached.unwrap_or_default();
        rt.container_id = a.container.as_str().into();
        rt.ifname = a.ifname.as_str().into();
        rt.netns = netns.as_str().into();
        if a.args.is_some() || op == Op::Add {
            // Kept verbatim, even if malformed: the plugins' parsers report it.
            rt.args = CniArgs::Text(a.args.as_deref().unwrap_or_default().into());
        }
        // Acting as the runtime: create the container's namespace before ADD (`ip netns add
        // CONTAINER`, at /var/run/netns/CONTAINER), whether `--netns` was left out or names
        // that path. Any other path is the learner's own and must exist: the plugins open it
        // as given.
        let created_ns =
            op == Op::Add && netns == default_netns && !node_rt.host.netns.contains_key(&netns);
        if created_ns {
            node_rt
                .host
                .netns
                .insert(netns.clone(), Netns::with_loopback());
        }
        let rt = Arc::new(rt);
        let registry = self.registry.clone();
        let wire = &mut self.wire;
        let first = wire.next_seq();
        let mut record = |c| {
            wire.push(crate::record::wire::WireRecord::cni(c));
        };
        let mut scope = crate::faults::FaultScope::new(&mut self.faults, &a.node);
        let mut model = crate::cni::exec::InProcess {
            registry: &registry,
            host: &mut node_rt.host,
            kube: None,
        };
        let mut inv = Invoker {
            exec: &mut crate::cni::real::SideBySide {
                model: &mut model,
                real: self.edges.real.as_deref(),
                node: &a.node,
            },
            cache: &mut node_rt.cache,
            wire: &mut record,
            node: Arc::from(a.node.as_str()),
            faults: Some(&mut scope),
        };
        let result = match op {
            Op::Add => inv
                .add(&net, &rt)
                .map(|r| crate::cni::skel::print_result(&r)),
            Op::Del => inv.del(&net, &rt).map(|_| String::new()),
            Op::Check => inv.check(&net, &rt).map(|_| String::new()),
        };
        // The runtime removes the namespace it made (`ip netns del`) once nothing but `lo`
        // is left in it: another attachment (`net1`) keeps it.
        if op == Op::Del
            && result.is_ok()
            && netns == default_netns
            && node_rt.host.netns.get(&netns).is_some_and(|ns| {
                ns.links
                    .values()
                    .all(|l| matches!(l.kind, crate::cni::host::LinkKind::Loopback))
            })
        {
            node_rt.host.remove_netns(&netns);
            if let Some(r) = &self.edges.real {
                r.netns_removed(&a.node, &netns);
            }
        }
        let last = self.wire.next_seq();
        let mut text = format!(
            "{} on {} net={} ifname={}",
            a.container, a.node, net.list.name, a.ifname
        );
        // The range of the records it made; none when libcni refused or skipped before
        // any plugin ran (a CHECK below 0.4.0, `disableCheck`, an invalid ID on ADD).
        if !(WireRange { first, end: last }).is_empty() {
            text.push_str(&format!(" (wire #{first}..#{})", last - 1));
        }
        self.log_cni_op(op.command(), first, last, text);
        self.log_wire_summaries(first, last);
        match result {
            Ok(stdout) => {
                let mut out = Outcome::empty();
                out.block(&stdout, Role::Json);
                if op == Op::Add {
                    // Real mode: the real chain's final result beside the model's.
                    out.extend(self.real_chain_result(first, last));
                }
                if op == Op::Del && !had_cached_result {
                    self.no_cached_result_note(&mut out, a, &net.list.name);
                }
                Ok(out)
            }
            Err(e) => Err(chain_error(e)),
        }
    }

    /// After a DEL for an ID libcni holds no cached result for: every plugin answers "ok"
    /// to a DEL of what it does not know (the spec asks DEL to succeed then), so an ID that
    /// matches nothing releases nothing while every line says ok; the runtime says so. A pod's attachment is under its sandbox's
    /// full 64-hex ID; when the ID is a pod's name or the start of a sandbox's ID, the
    /// note names that sandbox.
    fn no_cached_result_note(&self, out: &mut Outcome, a: &CniAttachArgs, net: &str) {
        out.line(Line::styled(
            format!(
                "note: libcni has no cached result for {} on {} (network {net}, {}): the plugins ran DEL without a prevResult, each releasing only what it still held under that ID",
                a.container, a.node, a.ifname
            ),
            Role::Warn,
        ));
        let Some(rt) = self.nodes.get(&a.node) else {
            return;
        };
        let meant = rt
            .sandboxes
            .iter()
            .find(|(pod, sb)| sb.id().starts_with(&a.container) || pod.name() == a.container);
        if let Some((pod, sb)) = meant {
            out.line(Line::styled(
                format!(
                    "  pod {pod}'s sandbox on {} is {}: its network is held under that full ID, and containerd deletes it with that ID when the pod goes (`pod delete`)",
                    a.node, sb.id()
                ),
                Role::Dim,
            ));
        }
    }

    fn cni_gc(&mut self, node: &str) -> Result<Outcome, LabError> {
        let net = self.node_network(node)?;
        // The valid attachments are the sandboxes the runtime still has on this node.
        let node_rt = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| LabError::msg("node gone"))?;
        let valid: Vec<Attachment> = node_rt
            .sandboxes
            .values()
            .map(|s| Attachment {
                container_id: s.id().to_string(),
                ifname: s.rt.ifname.to_string(),
            })
            .collect();
        let registry = self.registry.clone();
        let wire = &mut self.wire;
        let first = wire.next_seq();
        let mut record = |c| {
            wire.push(crate::record::wire::WireRecord::cni(c));
        };
        let mut scope = crate::faults::FaultScope::new(&mut self.faults, node);
        let mut model = crate::cni::exec::InProcess {
            registry: &registry,
            host: &mut node_rt.host,
            kube: None,
        };
        let mut inv = Invoker {
            exec: &mut crate::cni::real::SideBySide {
                model: &mut model,
                real: self.edges.real.as_deref(),
                node,
            },
            cache: &mut node_rt.cache,
            wire: &mut record,
            node: Arc::from(node),
            faults: Some(&mut scope),
        };
        let errors = inv.gc(&net, &valid);
        let last = self.wire.next_seq();
        let text = format!(
            "{node} net={} valid attachments: {}",
            net.list.name,
            valid.len()
        );
        self.log_cni_op(CniCommand::Gc, first, last, text);
        self.log_wire_summaries(first, last);
        if errors.is_empty() {
            Ok(Outcome::empty())
        } else {
            let msg = errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("\n");
            Err(LabError::msg(msg))
        }
    }

    fn cni_status(&mut self, node: &str) -> Result<Outcome, LabError> {
        let net = self.node_network(node)?;
        let node_rt = self
            .nodes
            .get_mut(node)
            .ok_or_else(|| LabError::msg("node gone"))?;
        let registry = self.registry.clone();
        let first = self.wire.next_seq();
        let wire = &mut self.wire;
        let mut record = |c| {
            wire.push(crate::record::wire::WireRecord::cni(c));
        };
        let mut model = crate::cni::exec::InProcess {
            registry: &registry,
            host: &mut node_rt.host,
            kube: None,
        };
        let mut inv = Invoker {
            exec: &mut crate::cni::real::SideBySide {
                model: &mut model,
                real: self.edges.real.as_deref(),
                node,
            },
            cache: &mut node_rt.cache,
            wire: &mut record,
            node: Arc::from(node),
            faults: None,
        };
        let status = inv.status(&net);
        let last = self.wire.next_seq();
        self.log_real_calls(first, last);
        match status {
            Ok(()) => {
                let mut out = Outcome::empty();
                if crate::cni::version::gte(&net.list.cni_version, "1.1.0").unwrap_or(false) {
                    out.line(Line::styled(
                        format!(
                            "network {} is ready (every plugin answered STATUS)",
                            net.list.name
                        ),
                        Role::Good,
                    ));
                } else {
                    out.line(Line::styled(
                        format!(
                            "network {} has cniVersion {}: STATUS needs 1.1.0, so libcni reports ready without asking the plugins",
                            net.list.name, net.list.cni_version
                        ),
                        Role::Dim,
                    ));
                }
                Ok(out)
            }
            Err(e) => Err(chain_error(e)),
        }
    }

    /// `cni plugins [RELEASE]`: show the release of containernetworking/plugins the nodes
    /// run, or install another on every node. Attachments made before stay as they are (the
    /// kernel state and the caches do not depend on the binaries); the next call runs the
    /// new binaries, as after a package upgrade on a real node.
    fn cni_plugins(&mut self, release: Option<&str>) -> Result<Outcome, LabError> {
        let mut out = Outcome::empty();
        let current = self.registry.release();
        let chosen = match release {
            None => current,
            Some(r) => PluginsRelease::parse(r).map_err(LabError::msg)?,
        };
        if chosen != current {
            self.registry = Arc::new(Registry::standard_of(chosen));
        }
        out.line(Line::styled(
            format!(
                "containernetworking/plugins {chosen} in /opt/cni/bin on every node ({})",
                chosen.origin()
            ),
            Role::Header,
        ));
        let what = if chosen.has_gc_and_status() {
            "GC and STATUS"
        } else {
            "no GC or STATUS (skel answers `unknown CNI_COMMAND`)"
        };
        out.line(Line::plain(format!(
            "  built on the CNI library {}: VERSION says cniVersion {}, configs up to {} are accepted, {what}",
            chosen.cni_library(),
            chosen.current_spec(),
            chosen.current_spec(),
        )));
        out.line(Line::plain(format!(
            "  in the release but not modelled by the lab (a chain that names one fails there): {}",
            chosen.unmodelled().join(", ")
        )));
        for other in PluginsRelease::ALL.into_iter().filter(|r| *r != chosen) {
            out.line(Line::styled(
                format!(
                    "  also modelled: {other} ({}): `cni plugins {other}`",
                    other.origin()
                ),
                Role::Dim,
            ));
        }
        // A network whose cniVersion this release does not know fails every ADD: say so.
        let mut seen = std::collections::BTreeSet::new();
        for rt in self.nodes.values() {
            let Ok(net) = rt.network() else { continue };
            let v = net.list.cni_version.as_str();
            let too_new = !crate::cni::version::gte(chosen.current_spec(), v).unwrap_or(true);
            let reference = net.list.plugins.iter().any(|p| {
                self.registry
                    .find(&p.plugin_type)
                    .is_some_and(|b| b.is_reference_plugin())
            });
            if too_new && reference && seen.insert((net.list.name.clone(), v.to_string())) {
                out.line(Line::styled(
                    format!(
                        "  note: network {} has cniVersion {v}, newer than these plugins accept: its ADDs fail with `incompatible CNI versions`",
                        net.list.name
                    ),
                    Role::Warn,
                ));
            }
        }
        Ok(out)
    }

    fn cni_version(&mut self, node: Option<&str>) -> Result<Outcome, LabError> {
        let node = match node {
            Some(n) => n.to_string(),
            None => self
                .nodes
                .keys()
                .next()
                .cloned()
                .ok_or_else(|| LabError::msg("no nodes: add one with `node add NAME`"))?,
        };
        let net = self.node_network(&node)?;
        let node_rt = self
            .nodes
            .get_mut(&node)
            .ok_or_else(|| LabError::msg("node gone"))?;
        let registry = self.registry.clone();
        let first = self.wire.next_seq();
        let wire = &mut self.wire;
        let mut record = |c| {
            wire.push(crate::record::wire::WireRecord::cni(c));
        };
        let mut model = crate::cni::exec::InProcess {
            registry: &registry,
            host: &mut node_rt.host,
            kube: None,
        };
        let mut inv = Invoker {
            exec: &mut crate::cni::real::SideBySide {
                model: &mut model,
                real: self.edges.real.as_deref(),
                node: &node,
            },
            cache: &mut node_rt.cache,
            wire: &mut record,
            node: Arc::from(node.as_str()),
            faults: None,
        };
        let mut out = Outcome::empty();
        out.line(Line::styled(
            format!(
                "containernetworking/plugins {} ({}); `cni plugins` to change it",
                registry.release(),
                registry.release().origin()
            ),
            Role::Dim,
        ));
        for p in &net.list.plugins {
            match inv.version(&p.plugin_type, &net.list.cni_version) {
                Ok(v) => out.line(
                    Line::new()
                        .push(format!("{:<10} ", p.plugin_type), Role::Actor)
                        .push(serde_json::to_string(&v).unwrap_or_default(), Role::Json),
                ),
                Err(e) => out.line(
                    Line::new()
                        .push(format!("{:<10} ", p.plugin_type), Role::Actor)
                        .push(e.message, Role::Bad),
                ),
            }
        }
        let last = self.wire.next_seq();
        self.log_real_calls(first, last);
        Ok(out)
    }

    fn cni_conf_show(&self, node: Option<&str>) -> Result<(Outcome, super::seen::Seen), LabError> {
        let node = match node {
            Some(n) => n.to_string(),
            None => self
                .nodes
                .keys()
                .next()
                .cloned()
                .ok_or_else(|| LabError::msg("no nodes: add one with `node add NAME`"))?,
        };
        let rt = self
            .nodes
            .get(&node)
            .ok_or_else(|| unknown_node(self, &node))?;
        let mut out = Outcome::empty();
        let active = rt.confdir.active().ok().map(|(f, _)| f);
        out.line(Line::styled(
            format!(
                "{}/ on {node} (the runtime uses the first file in lexical order)",
                ConfDir::PATH
            ),
            Role::Header,
        ));
        for name in rt.confdir.files.keys() {
            let mark = if Some(name) == active.as_ref() {
                "* "
            } else {
                "  "
            };
            out.line(
                Line::new()
                    .push(mark, Role::Good)
                    .push(name.clone(), Role::Name),
            );
        }
        match (&active, rt.network()) {
            (Some(f), Ok(_)) => {
                out.plain("");
                out.line(Line::styled(format!("{}/{f}:", ConfDir::PATH), Role::Dim));
                if let Some(text) = rt.confdir.files.get(f) {
                    out.block(text.text().trim_end(), Role::Json);
                }
            }
            (_, Err(e)) => out.line(Line::styled(e.clone(), Role::Bad)),
            _ => {}
        }
        let seen = super::seen::Seen::Conf(vec![super::seen::ConfDir {
            node: node.clone(),
            files: rt.confdir.files.keys().cloned().collect(),
            active,
        }]);
        Ok((out, seen))
    }

    fn cni_conf_load(
        &mut self,
        file: &str,
        node: Option<&str>,
        as_name: Option<&str>,
        as_is: bool,
    ) -> Result<Outcome, LabError> {
        let text = match self.read_input_file(file) {
            Ok(t) => t,
            Err(e) => {
                // The example configs ship inside the lab, so `assets/conflists/X` (or just
                // `X`) works from any directory.
                let base = std::path::Path::new(file)
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or(file);
                match EXAMPLE_CONFLISTS.iter().find(|(n, _)| *n == base) {
                    Some((_, t)) if e.kind() == std::io::ErrorKind::NotFound => t.to_string(),
                    // A file that is there but refused (not a regular file, too large) is
                    // reported, not silently replaced by the built-in of the same name.
                    Some(_) => return Err(LabError::msg(format!("cannot read {file}: {e}"))),
                    None => {
                        let names: Vec<&str> = EXAMPLE_CONFLISTS.iter().map(|(n, _)| *n).collect();
                        return Err(LabError::msg(format!(
                            "cannot read {file}: {e}; built-in examples: {}",
                            names.join(", ")
                        )));
                    }
                }
            }
        };
        let base = as_name.unwrap_or_else(|| {
            std::path::Path::new(file)
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or(file)
        });
        if base.contains('/') || base.is_empty() {
            return Err(LabError::msg(format!(
                "invalid file name {base:?} for {}",
                ConfDir::PATH
            )));
        }
        let targets: Vec<String> = match node {
            Some(n) => {
                if !self.nodes.contains_key(n) {
                    return Err(unknown_node(self, n));
                }
                vec![n.to_string()]
            }
            None => self.nodes.keys().cloned().collect(),
        };
        // Validate first, so a bad file changes nothing (with --as-is it is written as `cp`
        // would, and what it does to the runtime is shown). One copy is shared by every
        // target: the text, or the template that each node fills in with its podCIDR
        // when read (a CIDR is digits, dots and a slash, so every node's rendering parses
        // as the first one does).
        let shared: Arc<str> = Arc::from(text.as_str());
        let mut rendered: Vec<(String, ConfText)> = Vec::new();
        let mut unparsed = None;
        for n in &targets {
            let cidr = self
                .cluster
                .nodes
                .get(&(crate::cluster::no_namespace(), n.clone()))
                .map(|o| o.spec.pod_cidr.clone())
                .unwrap_or_default();
            let t = ConfText::for_node(&shared, &cidr);
            if rendered.is_empty()
                && let Err(e) = parse_file(base, &t.text())
            {
                if !as_is {
                    return Err(LabError::msg(format!(
                        "{file}: {e} (--as-is writes it anyway, as cp would)"
                    )));
                }
                unparsed = Some(e);
            }
            rendered.push((n.clone(), t));
        }
        // All of net.d across the nodes stays under NET_D_CAP (a shared copy counts once).
        let replaced: std::collections::HashSet<&str> =
            targets.iter().map(String::as_str).collect();
        let held = ConfDir::held_bytes(
            self.nodes.iter().map(|(n, rt)| (n.as_str(), &rt.confdir)),
            |n, f| f == base && replaced.contains(n),
        ) + shared.len() as u64;
        if held > NET_D_CAP {
            return Err(LabError::msg(format!(
                "cannot load {file}: /etc/cni/net.d on the nodes would hold {held} bytes of conflists together, over the lab's cap of {} (a file loaded on every node at once counts once; one loaded node by node, once per load); remove some first (`cni conf remove NAME`)",
                crate::edge::human_size(NET_D_CAP)
            )));
        }
        let mut out = Outcome::empty();
        if let Some(e) = &unparsed {
            out.line(Line::styled(
                format!("warning: {file} does not parse ({e}); written as it is"),
                Role::Warn,
            ));
        }
        for (n, t) in rendered {
            if let Some(rt) = self.nodes.get_mut(&n) {
                rt.confdir.files.insert(base.to_string(), t);
                rt.reload_network();
                let loaded = rt.confdir.active().map(|(f, _)| f);
                let line = Line::new()
                    .push(format!("{}/{base}", ConfDir::PATH), Role::Name)
                    .push(format!(" written on {n}"), Role::Good);
                match loaded {
                    Ok(active) => {
                        out.line(line.push(format!("  (active: {active})"), Role::Dim));
                        self.post_network_status(&n, true);
                    }
                    Err(e) => {
                        out.line(line.push("  (active: none)", Role::Dim));
                        // containerd's CRI plugin reloads on the directory's change and logs
                        // go-cni's error; the node's runtime has no network now.
                        out.line(Line::styled(
                            format!("  containerd({n}): failed to reload cni configuration after receiving fs change event: {e}"),
                            Role::Bad,
                        ));
                        self.post_network_status(&n, false);
                    }
                }
            }
        }
        Ok(out)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Del,
    Check,
}

impl Op {
    fn command(self) -> CniCommand {
        match self {
            Op::Add => CniCommand::Add,
            Op::Del => CniCommand::Del,
            Op::Check => CniCommand::Check,
        }
    }
}

impl Lab {
    /// The learner's CNI operation, acting as the runtime: its line, linked to the plugin
    /// executions `first..last` it ran.
    fn log_cni_op(&mut self, command: CniCommand, first: u64, last: u64, text: String) {
        let op = CniOp {
            command,
            wire: WireRange { first, end: last },
            purpose: CniPurpose::Text(text),
        };
        let e = CallEvent::new(
            self.clock,
            Actor::from("runtime(you)"),
            What::Cni(op),
            Level::Normal,
        );
        self.log_event(e);
    }
}

fn unknown_node(lab: &Lab, node: &str) -> LabError {
    let known: Vec<_> = lab.nodes.keys().cloned().collect();
    LabError::msg(format!(
        "node {node:?} not found; nodes are: {}",
        super::names::few(&known, "(none)")
    ))
}

/// A chain failure as the lab reports it: the plugin's error JSON on stdout (none when the
/// plugin crashed without printing one), libcni's message (with the CNI code and the
/// plugin) as the error. A plain Go error of libcni's own has no code and no JSON: its
/// text alone.
pub(crate) fn chain_error(e: ChainError) -> LabError {
    let Some(error) = &e.error else {
        return LabError::msg(format!("libcni: {}", e.message));
    };
    let mut out = Outcome::empty();
    if error.crash.is_none() {
        out.block(&error.to_stdout(), Role::Json);
    }
    let who = e.plugin.as_deref().unwrap_or("libcni");
    LabError::with_output(
        format!("CNI code {} from {who}: {}", error.code, e.message),
        out,
    )
    .because(super::Reason::Cni(error.code))
}

/// The example configs under `assets/conflists/`, built into the lab.
pub const EXAMPLE_CONFLISTS: &[(&str, &str)] = &[
    (
        "01-minimal.conflist",
        include_str!("../../../assets/conflists/01-minimal.conflist"),
    ),
    (
        "05-lab-v110.conflist",
        include_str!("../../../assets/conflists/05-lab-v110.conflist"),
    ),
    (
        // kube-flannel's cni-conf.json, as its init container installs it.
        "10-flannel.conflist",
        include_str!("../../../assets/conflists/10-flannel.conflist"),
    ),
    (
        "99-broken.conflist",
        include_str!("../../../assets/conflists/99-broken.conflist"),
    ),
];

#[cfg(test)]
mod tests {
    use crate::engine::Lab;

    fn text(lab: &mut Lab, line: &str) -> String {
        match lab.execute(line) {
            Ok(out) => out.to_text(),
            Err(e) => panic!("{line}: {}", e.message),
        }
    }

    /// The lab, as the runtime, makes the container's namespace /var/run/netns/CONTAINER for
    /// an ADD whether `--netns` leaves it out or names that very path (ch2's hint calls it
    /// the lab's); any other path must exist, and the plugin's own error says it does not.
    #[test]
    fn an_add_naming_the_container_s_own_namespace_creates_it() {
        let mut lab = Lab::new();
        let out = text(
            &mut lab,
            "cni add c1 --node node-1 --netns /var/run/netns/c1",
        );
        assert!(out.contains("\"sandbox\": \"/var/run/netns/c1\""), "{out}");
        assert!(
            lab.nodes["node-1"]
                .host
                .netns
                .contains_key("/var/run/netns/c1")
        );
        let e = lab
            .execute("cni add c3 --node node-1 --netns /var/run/netns/elsewhere")
            .expect_err("no such namespace");
        assert_eq!(
            e.message,
            "CNI code 999 from bridge: plugin type=\"bridge\" failed (add): failed to open netns \"/var/run/netns/elsewhere\": failed to Statfs \"/var/run/netns/elsewhere\": no such file or directory"
        );
        assert!(
            !lab.nodes["node-1"]
                .host
                .netns
                .contains_key("/var/run/netns/elsewhere")
        );
    }

    /// A DEL of an ID libcni has no cached result for succeeds in every plugin and releases
    /// nothing; the runtime says so, and names the sandbox a pod's name or a short ID meant.
    #[test]
    fn a_del_of_an_unknown_id_says_nothing_was_released() {
        let mut lab = Lab::new();
        text(&mut lab, "pod create web --node node-1");
        let id = lab.nodes["node-1"].sandboxes["default/web"]
            .id()
            .to_string();
        for asked in ["web", &id[..13]] {
            let out = text(&mut lab, &format!("cni del {asked} --node node-1"));
            let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
            assert!(
                lines.contains(&format!("note: libcni has no cached result for {asked} on node-1 (network lab-net, eth0): the plugins ran DEL without a prevResult, each releasing only what it still held under that ID").as_str()),
                "{out}"
            );
            assert!(
                out.contains(&format!("  pod default/web's sandbox on node-1 is {id}: its network is held under that full ID")),
                "{out}"
            );
        }
        // The pod's address is still held.
        let ipam = text(&mut lab, "show ipam node-1");
        assert!(ipam.contains("10.244.1.2"), "{ipam}");
        // An ID the runtime knows gets no note.
        text(&mut lab, "cni add c1 --node node-1");
        let out = text(&mut lab, "cni del c1 --node node-1");
        assert!(!out.contains("note: libcni"), "{out}");
    }

    /// bridge with `isDefaultGateway` and an IPAM default route without `gw`: `calcGateways`
    /// does not count that route (no GW) and appends its own via the same gateway, and the
    /// kernel refuses the second, identical route (EEXIST), as on a real node; the message
    /// is each release's `ipam.ConfigureIface` text, the appended route's `defaultNet`
    /// printed with its 16-byte mask.
    #[test]
    fn is_default_gateway_beside_an_ipam_default_route_without_gw_is_file_exists() {
        // Named to sort before the lab's own conflist, so it is the node's network.
        let dir = std::env::temp_dir().join(format!("lab-cni-cmd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let path = dir.join("00-g.conflist");
        for version in ["1.0.0", "0.2.0"] {
            let conflist = format!(
                r#"{{"cniVersion":"{version}","name":"gnet","plugins":[{{"type":"bridge","bridge":"br-g","isDefaultGateway":true,"ipam":{{"type":"host-local","ranges":[[{{"subnet":"10.65.0.0/24"}}]],"routes":[{{"dst":"0.0.0.0/0"}}]}}}}]}}"#
            );
            std::fs::write(&path, conflist).expect("a temp file");
            for (release, extra) in [
                ("1.1.1", ""),
                ("1.9.1", " metric 0 (Scope: universe, Table: 0)"),
            ] {
                let mut lab = Lab::with_edges(Lab::new, crate::edge::tests::disk());
                text(&mut lab, &format!("cni plugins {release}"));
                text(
                    &mut lab,
                    &format!("cni conf load {} --node node-1", path.display()),
                );
                let Err(e) = lab.execute("cni add c1 --node node-1") else {
                    panic!("{version} on {release}: ADD succeeded");
                };
                assert_eq!(
                    e.message,
                    format!(
                        "CNI code 999 from bridge: plugin type=\"bridge\" failed (add): failed to add route '{{0.0.0.0 00000000000000000000ffff00000000}} via 10.65.0.1 dev eth0{extra}': file exists"
                    ),
                    "{version} on {release}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A plugin the release ships but the lab does not model: the chain runs up to it, as
    /// libcni runs it, and it fails there with an exec failure's code (0) and a message
    /// that says so (not FindInPath's "failed to find plugin", which says the binary is
    /// missing); in 1.1.1 too, and as a delegated IPAM (dhcp). A type no release ships is
    /// FindInPath's plain Go error: no CNI code, printed as libcni's.
    #[test]
    fn a_shipped_plugin_the_lab_does_not_model_says_so() {
        let dir = std::env::temp_dir().join(format!("lab-cni-unmodelled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let conf = |name: &str, plugins: &str| {
            let path = dir.join(format!("00-{name}.conflist"));
            std::fs::write(
                &path,
                format!(r#"{{"cniVersion":"1.0.0","name":"{name}","plugins":[{plugins}]}}"#),
            )
            .expect("a temp file");
            path.display().to_string()
        };
        let firewall = conf(
            "fw",
            r#"{"type":"bridge","bridge":"br-fw","ipam":{"type":"host-local","subnet":"10.66.0.0/24"}},{"type":"firewall"}"#,
        );
        let dhcp = conf(
            "dh",
            r#"{"type":"macvlan","master":"eth0","ipam":{"type":"dhcp"}}"#,
        );
        let nosuch = conf("nx", r#"{"type":"nosuch"}"#);
        for release in ["1.9.1", "1.1.1"] {
            let mut lab = Lab::with_edges(Lab::new, crate::edge::tests::disk());
            text(&mut lab, &format!("cni plugins {release}"));
            text(&mut lab, &format!("cni conf load {firewall} --node node-1"));
            let before = lab.wire.next_seq();
            let Err(e) = lab.execute("cni add c1 --node node-1") else {
                panic!("{release}: ADD succeeded");
            };
            assert_eq!(
                e.message,
                format!(
                    "CNI code 0 from firewall: plugin type=\"firewall\" failed (add): plugin \"firewall\" is in containernetworking/plugins {release} (/opt/cni/bin) but not modelled by the lab (`cni plugins` lists the ones it models)"
                )
            );
            // bridge ran (with its host-local), firewall did not.
            assert_eq!(lab.wire.next_seq() - before, 2, "{release}");
            text(&mut lab, "cni conf remove 00-fw.conflist --node node-1");
            text(&mut lab, &format!("cni conf load {dhcp} --node node-1"));
            let Err(e) = lab.execute("cni add c2 --node node-1") else {
                panic!("{release}: ADD succeeded");
            };
            assert_eq!(
                e.message,
                format!(
                    "CNI code 0 from macvlan: plugin type=\"macvlan\" failed (add): plugin \"dhcp\" is in containernetworking/plugins {release} (/opt/cni/bin) but not modelled by the lab (`cni plugins` lists the ones it models)"
                )
            );
            text(&mut lab, "cni conf remove 00-dh.conflist --node node-1");
            text(&mut lab, &format!("cni conf load {nosuch} --node node-1"));
            let Err(e) = lab.execute("cni add c3 --node node-1") else {
                panic!("{release}: ADD succeeded");
            };
            assert_eq!(
                e.message,
                "libcni: plugin type=\"nosuch\" failed (add): failed to find plugin \"nosuch\" in path [/opt/cni/bin]"
            );
            let plugins = text(&mut lab, "cni plugins");
            let listed = if release == "1.1.1" {
                "dhcp, firewall, sbr, vlan, vrf"
            } else {
                "dhcp, dummy, firewall, sbr, tap, vlan, vrf"
            };
            assert!(
                plugins.contains(&format!(
                    "in the release but not modelled by the lab (a chain that names one fails there): {listed}"
                )),
                "{plugins}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// libcni 1.3.0 validates the container ID, network name and ifname in `addNetwork`
    /// only, after `FindInPath`, and `AddNetworkList` wraps the error; `delNetwork` and
    /// `checkNetwork` validate nothing, so the plugin runs and its skel refuses (DEL runs
    /// the chain in reverse: bandwidth first), DEL's error wrapped, CHECK's not.
    #[test]
    fn invalid_ids_are_refused_where_libcni_and_the_plugins_refuse_them() {
        let mut lab = Lab::new();
        let refused = |lab: &mut Lab, line: &str| {
            let before = lab.wire.next_seq();
            let Err(e) = lab.execute(line) else {
                panic!("{line}: succeeded");
            };
            (e.message, lab.wire.next_seq() - before)
        };
        assert_eq!(
            refused(&mut lab, "cni add 'bad id' --node node-1"),
            (
                "CNI code 4 from libcni: plugin type=\"bridge\" failed (add): invalid characters in containerID; bad id".to_string(),
                0
            )
        );
        assert_eq!(
            refused(&mut lab, "cni add c1 --node node-1 --ifname a:b"),
            (
                "CNI code 4 from libcni: plugin type=\"bridge\" failed (add): interface name contains / or : or whitespace characters".to_string(),
                0
            )
        );
        assert_eq!(
            refused(&mut lab, "cni del 'bad id' --node node-1"),
            (
                "CNI code 4 from bandwidth: plugin type=\"bandwidth\" failed (delete): invalid characters in containerID; bad id".to_string(),
                1
            )
        );
        assert_eq!(
            refused(&mut lab, "cni check 'bad id' --node node-1"),
            (
                "CNI code 4 from bridge: invalid characters in containerID; bad id".to_string(),
                1
            )
        );
    }

    /// CheckNetworkList's refusals are plain Go errors (no CNI code, no JSON) made before
    /// any plugin runs: a version below 0.4.0, and a version ParseVersion cannot read.
    #[test]
    fn check_refusals_of_libcni_are_plain_errors() {
        let dir = std::env::temp_dir().join(format!("lab-cni-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let path = dir.join("00-v.conflist");
        for (version, want) in [
            (
                "0.3.1",
                "libcni: configuration version \"0.3.1\" does not support the CHECK command",
            ),
            (
                "abc",
                "libcni: failed to convert major version part \"abc\": strconv.Atoi: parsing \"abc\": invalid syntax",
            ),
        ] {
            let conflist = format!(
                r#"{{"cniVersion":"{version}","name":"z","plugins":[{{"type":"bridge","bridge":"br-z","ipam":{{"type":"host-local","ranges":[[{{"subnet":"10.1.0.0/24"}}]]}}}}]}}"#
            );
            std::fs::write(&path, conflist).expect("a temp file");
            let mut lab = Lab::with_edges(Lab::new, crate::edge::tests::disk());
            text(
                &mut lab,
                &format!("cni conf load {} --node node-1", path.display()),
            );
            let before = lab.wire.next_seq();
            let Err(e) = lab.execute("cni check c1 --node node-1") else {
                panic!("{version}: CHECK succeeded");
            };
            assert_eq!(e.message, want);
            let out = e.output.to_text();
            assert!(!out.contains("\"code\""), "{out}");
            // No record was made, so the call log names no range of them.
            assert!(
                out.contains("CNI CHECK       c1 on node-1 net=z ifname=eth0\n")
                    && !out.contains("(wire #"),
                "{out}"
            );
            assert_eq!(lab.wire.next_seq(), before);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
