//! Read-only views: `show …`, `get`, `describe`, and the short lines the call log prints.
//! The dashboard reads the same functions.

use super::{Lab, LabError};

use super::listing::Sel;
use super::seen::Seen;
use crate::cluster::{ObjectRef, Uid};
use crate::cni::netfilter::TableKind;
use crate::cni::runtime::WireCall;
use crate::cni::types::to_go_json;
use crate::command::grammar::{DescribeArgs, ShowCmd, TableArg};
use crate::record::wire::{CsiCall, WireRecord};
use crate::record::{CallEvent, Level};
use crate::render::{Line, Outcome, Role, Table};
use crate::resource::{self, AnyResource};
use crate::util::time::Millis;
use serde::Serialize;

/// The line a call-log entry prints: actor, action, detail, made from the typed record.
pub(crate) fn call_line(e: &CallEvent) -> Line {
    let role = match e.level() {
        Level::Normal => Role::Plain,
        Level::Warning => Role::Bad,
    };
    let mut actor = String::with_capacity(24);
    actor.push_str("  ");
    e.write_actor(&mut actor);
    pad(&mut actor, 2, 20);
    let mut detail = String::with_capacity(96);
    e.write_detail(&mut detail);
    Line {
        spans: Vec::with_capacity(3),
    }
    .push(actor, Role::Actor)
    .push(padded("", e.action(), 15), Role::Dim)
    .push(detail, role)
}

/// A call-log entry in a command's output is its trace line.
impl crate::render::ShownLine for CallEvent {
    fn shown_line(&self) -> Line {
        call_line(self)
    }

    /// [`call_line`]'s text, written straight into `out` (`run FILE` prints every
    /// command's trace this way).
    fn write_text(&self, out: &mut String) {
        let start = out.len();
        out.push_str("  ");
        self.write_actor(out);
        pad(out, start + 2, 20);
        let action = out.len();
        out.push_str(self.action());
        pad(out, action, 15);
        self.write_detail(out);
    }
}

/// `format!("{prefix}{text:<width$} ")` without the formatting machinery (a call-log line
/// is built for every event a command prints).
fn padded(prefix: &str, text: &str, width: usize) -> String {
    let mut s = String::with_capacity(prefix.len() + text.len().max(width) + 1);
    s.push_str(prefix);
    s.push_str(text);
    pad(&mut s, prefix.len(), width);
    s
}

/// Pad what `s` holds after byte `from` to `width` characters, then a space.
fn pad(s: &mut String, from: usize, width: usize) {
    const SPACES: &str = "                         ";
    let mut fill = width.saturating_sub(s[from..].chars().count()) + 1;
    while fill > 0 {
        let n = fill.min(SPACES.len());
        s.push_str(&SPACES[..n]);
        fill -= n;
    }
}

fn json_block<T: Serialize + ?Sized>(out: &mut Outcome, v: &T) {
    out.block(&to_go_json(v), Role::Json);
}

impl Lab {
    /// Dispatch `show …`.
    pub fn show(&mut self, s: ShowCmd) -> Result<Outcome, LabError> {
        match s {
            ShowCmd::Ipam { node, real } => {
                let (mut out, seen) = self.show_ipam(node.as_deref())?;
                self.shown.push(seen);
                if real {
                    out.extend(self.show_ipam_real(node.as_deref())?);
                }
                Ok(out)
            }
            ShowCmd::Routes { node, pod, real } => {
                let (mut out, seen) = self.show_routes(node.as_deref(), pod.as_deref())?;
                self.shown.push(seen);
                if real {
                    out.extend(self.show_routes_real(node.as_deref(), pod.as_deref())?);
                }
                Ok(out)
            }
            ShowCmd::Links { node, pod } => self.show_links(&node, pod.as_deref()).map(|(o, s)| {
                self.shown.push(s);
                o
            }),
            ShowCmd::Bgp { node } => {
                let out = self.show_bgp(&node)?;
                if let Some(seen) = self.bgp_seen(&node) {
                    self.shown.push(seen);
                }
                Ok(out)
            }
            ShowCmd::Bpf {
                node,
                policy,
                identities,
            } => self.show_bpf(&node, policy.as_deref(), identities),
            ShowCmd::Neigh { node } => self.show_neigh(&node).map(|(o, s)| {
                self.shown.push(s);
                o
            }),
            ShowCmd::Fdb { node } => self.show_fdb(&node).map(|(o, s)| {
                self.shown.push(s);
                o
            }),
            ShowCmd::Events { n } => {
                let first = self.calls.next_seq().saturating_sub(n as u64);
                let first = first.max(self.calls.iter().next().map_or(0, |(s, _)| s));
                self.shown
                    .push(super::seen::Seen::Events(first, self.calls.next_seq()));
                Ok(self.show_events(n))
            }
            ShowCmd::Wire {
                n,
                list,
                last,
                node,
                real,
            } => {
                let seq = match &last {
                    Some(call) => self.wire_last(call, node.as_deref())?,
                    None if list => None,
                    None => Some(n.unwrap_or(self.wire.next_seq().saturating_sub(1))),
                };
                let out = match last {
                    Some(_) => self.show_wire(seq, false),
                    None if real => self.show_wire_real(n),
                    None => self.show_wire(n, list),
                }?;
                if let Some(seq) = seq.filter(|s| self.wire.get(*s).is_some()) {
                    self.shown.push(super::seen::Seen::Wire(vec![seq]));
                }
                Ok(out)
            }
            ShowCmd::Iptables {
                node,
                v6,
                table,
                real,
            } => {
                let (mut out, seen) = self.show_iptables(&node, v6, table)?;
                self.shown.extend(seen);
                if real {
                    out.extend(self.show_iptables_real(&node, v6, table)?);
                }
                Ok(out)
            }
            ShowCmd::Ipset { node } => self.show_ipset(&node),
            ShowCmd::Volumes { node } => {
                let (out, rows) = self.show_volumes_seen(node.as_deref())?;
                self.shown.push(Seen::Volumes(rows));
                Ok(out)
            }
            ShowCmd::Watch { since } => {
                let events = self.cluster.revs.events_since(since).cloned().collect();
                self.shown.push(Seen::Watch(events));
                Ok(self.show_watch(since))
            }
        }
    }

    pub(super) fn nodes_selected(&self, node: Option<&str>) -> Result<Vec<String>, LabError> {
        match node {
            Some(n) if self.nodes.contains_key(n) => Ok(vec![n.to_string()]),
            Some(n) => Err(LabError::msg(format!(
                "node {n:?} not found; nodes are: {}",
                super::names::few(&self.nodes.keys().cloned().collect::<Vec<_>>(), "")
            ))),
            None => Ok(self.nodes.keys().cloned().collect()),
        }
    }

    /// What `show bgp NODE` showed, as data: the sessions of `calicoctl node status` and
    /// the routes of `birdcl show route`.
    fn bgp_seen(&self, node: &str) -> Option<Seen> {
        let mesh = self.network.bgp()?;
        let host = self.nodes.get(node).map(|rt| &rt.host);
        let view = mesh.view(node, host).ok()?;
        Some(Seen::Bgp {
            node: node.to_string(),
            view,
        })
    }

    /// The note after a lease: the pod that holds it, or why nothing does (a raw `cni add`
    /// is cached; a lease whose pod was torn down through another network's chain, or
    /// whose ADD never finished, has leaked).
    fn lease_note(&self, node: &str, container_id: &str, ifname: &str) -> String {
        use super::node_view::LeaseHolder;
        match super::node_view::lease_holder(self, node, container_id, ifname) {
            Some(LeaseHolder::Pod(pod)) => format!("   (pod {pod})"),
            Some(LeaseHolder::Attachment) | None => String::new(),
            Some(LeaseHolder::OtherChain { active }) => format!(
                "   (leaked: no pod; a DEL now runs {active}'s chain, which never reaches this store)"
            ),
            Some(LeaseHolder::Leaked) => format!(
                "   (leaked: no sandbox or cached attachment; `cni del {container_id} --node {node}` releases it)"
            ),
        }
    }

    fn show_ipam(&self, node: Option<&str>) -> Result<(Outcome, Seen), LabError> {
        let mut out = Outcome::empty();
        let mut stores = Vec::new();
        for n in self.nodes_selected(node)? {
            let Some(rt) = self.nodes.get(&n) else {
                continue;
            };
            if rt.host.ipam.is_empty() {
                out.line(Line::new().push(format!("{n}: "), Role::Name).push(
                    "no host-local data yet (the first ADD creates /var/lib/cni/networks/<net>)",
                    Role::Dim,
                ));
                continue;
            }
            let summaries = super::ipam_view::ipam_summaries(self, &n);
            for (net, store) in &rt.host.ipam {
                let summary = summaries.iter().find(|s| s.net == *net);
                let path = summary
                    .map(|s| s.path.clone())
                    .unwrap_or_else(|| format!("/var/lib/cni/networks/{net}"));
                let mut head = Line::new()
                    .push(format!("{n}: "), Role::Name)
                    .push(format!("{path}/"), Role::Header);
                if !store.leases().is_empty() {
                    // The real bytes: `\r\n` is host-local's CR LF between the two fields.
                    head = head.push(
                        "   (lease file: <containerID> CR LF <ifname>, CR LF shown as \\r\\n)",
                        Role::Dim,
                    );
                }
                out.line(head);
                // The directory's files as `ls` lists them: by name in byte order
                // (LC_COLLATE=C), so 10.244.1.10 comes before 10.244.1.3, as in the
                // `--real` listing of the real directory.
                let mut files: Vec<(String, Line)> = Vec::new();
                for (ip, lease) in store.leases() {
                    let owner = self.lease_note(&n, &lease.container_id, &lease.ifname);
                    let name = ip.to_string();
                    let line = Line::new()
                        .push(format!("  {name:<20}"), Role::Name)
                        .push(
                            format!("{}\\r\\n{}", lease.container_id, lease.ifname),
                            Role::Plain,
                        )
                        .push(owner, Role::Dim);
                    files.push((name, line));
                }
                for (idx, ip) in store.last_reserved() {
                    let name = format!("last_reserved_ip.{idx}");
                    let line = Line::new()
                        .push(format!("  {name:<20}"), Role::Name)
                        .push(ip.to_string(), Role::Plain);
                    files.push((name, line));
                }
                files.push(("lock".into(), Line::new().push("  lock", Role::Name)));
                files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                for (_, line) in files {
                    out.line(line);
                }
                let text = match summary {
                    Some(s) if !s.ranges.is_empty() => format!(
                        "  range {} · gateway {} (skipped) · {} leased · {} free",
                        s.ranges.join(" + "),
                        s.gateway,
                        s.used,
                        s.free()
                    ),
                    _ => format!("  {} leased", store.leases().len()),
                };
                out.line(Line::styled(text, Role::Dim));
                stores.push(super::seen::IpamStore {
                    node: n.clone(),
                    net: net.to_string(),
                    dir: path,
                    leases: store
                        .leases()
                        .iter()
                        .map(|(ip, l)| (*ip, l.container_id.to_string(), l.ifname.to_string()))
                        .collect(),
                    last_reserved: store
                        .last_reserved()
                        .iter()
                        .map(|(i, ip)| (*i, *ip))
                        .collect(),
                });
            }
        }
        Ok((out, Seen::Ipam(stores)))
    }

    fn show_routes(
        &self,
        node: Option<&str>,
        pod: Option<&str>,
    ) -> Result<(Outcome, Seen), LabError> {
        let mut out = Outcome::empty();
        let mut tables = Vec::new();
        let pod_key = pod.map(|p| match p.split_once('/') {
            Some(_) => p.to_string(),
            None => format!("default/{p}"),
        });
        if let Some(key) = &pod_key {
            let found = self.nodes_selected(node)?.iter().any(|n| {
                self.nodes
                    .get(n)
                    .is_some_and(|rt| rt.sandboxes.contains_key(key))
            });
            if !found {
                return Err(LabError::msg(format!(
                    "pod {key} has no sandbox{}: is it created, and on that node?",
                    node.map(|n| format!(" on {n}")).unwrap_or_default()
                )));
            }
        }
        for n in self.nodes_selected(node)? {
            let Some(rt) = self.nodes.get(&n) else {
                continue;
            };
            if let Some(key) = &pod_key {
                if let Some(sb) = rt.sandboxes.get(key) {
                    if let Some(ns) = rt.host.netns.get(sb.netns()) {
                        let head = |cmd: &str| {
                            Line::new()
                                .push(format!("pod {key}"), Role::Name)
                                .push(format!(" (netns {}) $ {cmd}", sb.netns()), Role::Dim)
                        };
                        let table = ns.route_table();
                        let routes = route_sections(&mut out, &rt.host, ns, table, "  ", head);
                        tables.push(super::seen::RouteTable {
                            place: pod_place(&n, key),
                            routes,
                        });
                    }
                }
                continue;
            }
            let head = |cmd: &str| {
                Line::new()
                    .push(n.to_string(), Role::Name)
                    .push(format!(" (host) $ {cmd}"), Role::Dim)
            };
            let table = rt.host.route_table();
            let routes = route_sections(&mut out, &rt.host, &rt.host.root, table, "  ", head);
            tables.push(super::seen::RouteTable {
                place: super::seen::Place::Node(n.clone()),
                routes,
            });
            for (key, sb) in &rt.sandboxes {
                if let Some(ns) = rt.host.netns.get(sb.netns()) {
                    let head = |cmd: &str| {
                        Line::new()
                            .push(format!("  pod {key}"), Role::Name)
                            .push(format!(" (netns {}) $ {cmd}", sb.netns()), Role::Dim)
                    };
                    let table = ns.route_table();
                    let routes = route_sections(&mut out, &rt.host, ns, table, "    ", head);
                    tables.push(super::seen::RouteTable {
                        place: pod_place(&n, &key.to_string()),
                        routes,
                    });
                }
            }
        }
        Ok((out, Seen::Routes(tables)))
    }

    fn show_events(&self, n: usize) -> Outcome {
        let mut out = Outcome::empty();
        let skip = self.calls.len().saturating_sub(n);
        for (seq, e) in self.calls.iter().skip(skip) {
            out.line(
                Line::new()
                    .push(
                        format!("{seq:>5} t={:<4}", e.tick().secs_number()),
                        Role::Dim,
                    )
                    .push(
                        call_line(e).text(),
                        match e.level() {
                            Level::Normal => Role::Plain,
                            Level::Warning => Role::Bad,
                        },
                    ),
            );
        }
        if out.is_empty() {
            out.plain("No events yet");
        }
        out
    }

    pub(super) fn show_wire(&self, n: Option<u64>, list: bool) -> Result<Outcome, LabError> {
        let mut out = Outcome::empty();
        if self.wire.is_empty() {
            out.plain("No calls on the wire yet (create a pod, run `cni add` or a `csi` command)");
            return Ok(out);
        }
        if list {
            let mut t = Table::new(&[
                "SEQ", "NODE", "TARGET", "CALL", "SUBJECT", "RESULT", "SUMMARY",
            ]);
            let skip = self.wire.len().saturating_sub(20);
            for (seq, rec) in self.wire.iter().skip(skip) {
                t.row(wire_row(seq, rec));
            }
            return Ok(t.render());
        }
        let seq = n.unwrap_or(self.wire.next_seq().saturating_sub(1));
        let Some(rec) = self.wire.get(seq) else {
            let first = self.wire.iter().next().map(|(s, _)| s).unwrap_or(0);
            return Err(LabError::msg(format!(
                "no wire record #{seq}; records #{first}..#{} are kept",
                self.wire.next_seq().saturating_sub(1)
            )));
        };
        out.extend(wire_detail(seq, rec));
        Ok(out)
    }

    /// `show wire --last CALL [--node NODE]`: the latest record of a call, so a lesson or a
    /// learner never depends on record numbers.
    fn wire_last(&self, call: &str, node: Option<&str>) -> Result<Option<u64>, LabError> {
        let (plugin, cmd) = match call.split_once(':') {
            Some((p, c)) => (Some(p), c),
            None => (None, call),
        };
        let hit = self.wire.iter().rev().find(|(_, rec)| match rec {
            WireRecord::Cni(c) => {
                c.env.cmd().as_str().eq_ignore_ascii_case(cmd)
                    && plugin.is_none_or(|p| c.plugin_type == p)
                    && node.is_none_or(|n| c.node.as_ref() == n)
            }
            WireRecord::Csi(c) => {
                // A controller RPC names its node in the request (`node_id`).
                let on = |n: &str| {
                    c.node.as_deref() == Some(n)
                        || c.request.to_json().get("node_id").and_then(|v| v.as_str()) == Some(n)
                };
                plugin.is_none()
                    && c.rpc.to_string().eq_ignore_ascii_case(cmd)
                    && node.is_none_or(on)
            }
        });
        let Some((seq, _)) = hit else {
            let on = node.map(|n| format!(" on {n}")).unwrap_or_default();
            return Err(LabError::msg(format!(
                "no {call} record{on} on the wire among the kept records; CALL is a CSI RPC (ControllerPublishVolume) or a CNI command (ADD, DEL, CHECK), optionally PLUGIN:COMMAND (bridge:ADD)"
            )));
        };
        Ok(Some(seq))
    }

    /// `show iptables NODE [-6] [--table nat|filter]`: one table of one family, as
    /// `iptables -t TABLE -S` (or `ip6tables`) prints it.
    fn show_iptables(
        &self,
        node: &str,
        v6: bool,
        table: TableArg,
    ) -> Result<(Outcome, Vec<Seen>), LabError> {
        let kind = match table {
            TableArg::Nat => TableKind::Nat,
            TableArg::Filter => TableKind::Filter,
        };
        let tool = if v6 { "ip6tables" } else { "iptables" };
        let n = self.nodes_selected(Some(node))?;
        let mut out = Outcome::empty();
        let mut seen = Vec::new();
        for name in n {
            if let Some(rt) = self.nodes.get(&name) {
                out.line(
                    Line::new()
                        .push(name.clone(), Role::Name)
                        .push(format!(" $ {tool} -t {kind} -S"), Role::Dim),
                );
                let rules = rt.host.netfilter.family(v6).get(kind).to_lines();
                for l in &rules {
                    out.plain(format!("  {l}"));
                }
                seen.push(Seen::Iptables(super::seen::IptablesTable {
                    node: name.clone(),
                    v6,
                    table: match table {
                        TableArg::Nat => "nat",
                        TableArg::Filter => "filter",
                    },
                    rules,
                }));
            }
        }
        Ok((out, seen))
    }

    fn show_watch(&self, since: u64) -> Outcome {
        let mut t = Table::new(&["INDEX", "TYPE", "KIND", "OBJECT", "RESOURCEVERSION"]);
        for e in self.cluster.revs.events_since(since) {
            t.row([
                e.index.to_string(),
                format!("{:?}", e.event_type).to_uppercase(),
                e.kind.to_string(),
                e.key.clone(),
                e.resource_version.to_string(),
            ]);
        }
        t.render()
    }

    /// `describe KIND [NAME…] [-n NS]` or `describe KIND/NAME…`, as kubectl's `describe`
    /// runs it (`pkg/cmd/describe/describe.go`): every object of the kind when no name is
    /// given; the objects one after another, two blank lines between, each with its events
    /// unless `--show-events=false` (v1.31's `DescriberSettings.ShowEvents`, true by
    /// default; leaving them out for several objects came with v1.36's
    /// `ShowEventsExplicitlySet`); a missing name is NotFound after the others print; and
    /// `describe KIND X` that finds no `X` describes the objects whose names start with `X`
    /// (`DescribeMatchingResources`), with their events likewise.
    pub fn describe(&self, d: &DescribeArgs) -> Result<Outcome, LabError> {
        self.describe_seen(d).map(|(out, _)| out)
    }

    /// `describe`, with what it showed: the objects, each with the events printed.
    pub(super) fn describe_seen(
        &self,
        d: &DescribeArgs,
    ) -> Result<(Outcome, Vec<super::seen::Described>), LabError> {
        let mut seen = Vec::new();
        let args: Vec<&str> = std::iter::once(d.kind.as_str())
            .chain(d.names.iter().map(String::as_str))
            .collect();
        let by_pair = args.iter().any(|a| a.contains('/'));
        // The builder's checks (cli-runtime `builder.go`), before anything is looked up.
        let named = by_pair || !d.names.is_empty();
        if named && d.all_namespaces {
            return Err(LabError::msg(
                "a resource cannot be retrieved by name across all namespaces",
            ));
        }
        if named && d.selector.is_some() {
            return Err(LabError::msg(
                "name cannot be provided when a selector is specified",
            ));
        }
        let query = d
            .selector
            .as_deref()
            .map(crate::cluster::label_query::parse)
            .transpose()
            .map_err(LabError::msg)?;
        // (kind, namespace, name) in the order asked.
        let mut asked: Vec<(&'static dyn AnyResource, String, String)> = Vec::new();
        if by_pair {
            for (kind, name) in super::listing::resource_name_pairs(&args)? {
                asked.push((resource::resolve(&kind)?, d.ns.clone(), name));
            }
        } else {
            let kind = resource::resolve(&d.kind)?;
            if d.names.is_empty() {
                let every = self.described_keys(kind, d, query.as_ref());
                if every.is_empty() {
                    // kubectl's describe says so whatever the kind (`describe.go`).
                    let mut out = Outcome::empty();
                    out.plain(if d.all_namespaces {
                        "No resources found".to_string()
                    } else {
                        format!("No resources found in {} namespace.", d.ns)
                    });
                    return Ok((out, seen));
                }
                asked.extend(every.into_iter().map(|(ns, n)| (kind, ns, n)));
            } else {
                asked.extend(d.names.iter().map(|n| (kind, d.ns.clone(), n.clone())));
            }
        }
        // client-go's request builder refuses an empty name before any request.
        if asked.iter().any(|(_, _, name)| name.is_empty()) {
            return Err(LabError::msg("resource name may not be empty"));
        }
        let mut errors = Vec::new();
        let mut found = Vec::with_capacity(asked.len());
        for (kind, ns, name) in asked {
            let mut one = vec![name];
            self.keep_found(kind, &ns, &mut one, &mut errors);
            found.extend(one.into_iter().map(|n| (kind, ns.clone(), n)));
        }
        let asked = found;
        // `describe KIND X` with no X: the objects whose names start with X.
        if let ([e], [_], true) = (&errors[..], &d.names[..], asked.is_empty())
            && !d.names[0].contains('/')
        {
            let kind = resource::resolve(&d.kind)?;
            let prefix = d.names[0].as_str();
            let matching: Vec<String> = kind
                .kept_names(self, &Sel::all_in(Some(&d.ns)))
                .into_iter()
                .filter(|n| n.starts_with(prefix))
                .collect();
            if matching.is_empty() {
                return Err(LabError::msg(e.message.clone()));
            }
            // kubectl ends each with a blank line (`"%s\n"`); the last one is left out here.
            let mut out = Outcome::empty();
            for (i, name) in matching.iter().enumerate() {
                if i > 0 {
                    out.plain("");
                }
                let events = d.show_events.unwrap_or(true);
                out.extend(self.describe_one(kind, &d.ns, name, events)?);
                seen.extend(self.described(kind, &d.ns, name, events));
            }
            return Ok((out, seen));
        }
        let show_events = d.show_events.unwrap_or(true);
        let mut out = Outcome::empty();
        for (i, (kind, ns, name)) in asked.iter().enumerate() {
            if i > 0 {
                out.plain("");
                out.plain("");
            }
            out.extend(self.describe_one(*kind, ns, name, show_events)?);
            seen.extend(self.described(*kind, ns, name, show_events));
        }
        LabError::after(out, errors).map(|out| (out, seen))
    }

    /// What describing one object showed: the object, and the events of its Events section
    /// when that was printed (the same events [`Lab::events_for`] prints).
    fn described(
        &self,
        kind: &dyn AnyResource,
        ns: &str,
        name: &str,
        show_events: bool,
    ) -> Option<super::seen::Described> {
        let (object, uid) = kind.reference(self, ns, name)?;
        let events = if show_events {
            self.shown_events(&object, uid)
        } else {
            Vec::new()
        };
        Some(super::seen::Described { object, events })
    }

    /// The Event objects an Events section shows for `object` with `uid`: the recorded
    /// events folded as the API server keeps them (a repeat counted into the first), in
    /// kubectl's order (`DescribeEvents` sorts by `lastTimestamp`, whole seconds; ties keep
    /// the order recorded).
    fn described_events<'a>(
        &'a self,
        object: &'a ObjectRef,
        uid: Uid,
    ) -> Vec<crate::record::Folded<'a>> {
        let mut events = crate::record::fold_events(self.calls.events(object, Some(uid)));
        events.sort_by_key(|f| f.last.whole_secs());
        events
    }

    /// The events an Events section shows for `object` with `uid`.
    fn shown_events(&self, object: &ObjectRef, uid: Uid) -> Vec<super::seen::EventSeen> {
        self.described_events(object, uid)
            .into_iter()
            .map(|f| {
                let mut message = String::new();
                f.write_message(&mut message);
                super::seen::EventSeen {
                    warning: f.first.level() == Level::Warning,
                    reason: f.reason(),
                    message,
                }
            })
            .collect()
    }

    /// The objects `describe KIND` with no name describes, as (namespace, name): those of
    /// `-n NS` (or of every namespace with `-A`, namespace by namespace as the API server
    /// lists them) whose labels match `-l`.
    fn described_keys(
        &self,
        kind: &dyn AnyResource,
        d: &DescribeArgs,
        query: Option<&crate::cluster::label_query::LabelQuery>,
    ) -> Vec<(String, String)> {
        let namespaces: Vec<Option<&str>> = if d.all_namespaces && kind.namespaced() {
            self.cluster
                .namespaces
                .values()
                .map(|n| Some(n.name()))
                .collect()
        } else if d.all_namespaces {
            vec![None]
        } else {
            vec![Some(d.ns.as_str())]
        };
        let mut keys = Vec::new();
        for ns in namespaces {
            let sel = Sel {
                query,
                ..Sel::all_in(ns)
            };
            let names = kind.kept_names(self, &sel).into_iter();
            keys.extend(names.map(|n| (ns.unwrap_or_default().to_string(), n)));
        }
        keys
    }

    /// One object's description; without its Events section when `show_events` is off
    /// (kubectl's `DescriberSettings.ShowEvents`: every describer ends with that section).
    fn describe_one(
        &self,
        kind: &dyn AnyResource,
        ns: &str,
        name: &str,
        show_events: bool,
    ) -> Result<Outcome, LabError> {
        let mut out = kind.describe(self, ns, name)?;
        let events_at = (!show_events)
            .then(|| {
                out.lines().position(|l| {
                    l.spans
                        .first()
                        .is_some_and(|s| s.text.starts_with("Events:"))
                })
            })
            .flatten();
        if let Some(at) = events_at {
            out.truncate(at);
        }
        Ok(out)
    }

    /// Whether the call log has events about `object` with `uid` (a description's Events
    /// section is a table then, `Events:  <none>` otherwise).
    pub(crate) fn has_events(&self, object: &ObjectRef, uid: Uid) -> bool {
        self.calls.events(object, Some(uid)).next().is_some()
    }

    /// The Events section of a description: the call log's events about `object` with its
    /// uid, in a table under `Events:` (`<none>` in the value column at `width` when there
    /// are none).
    pub(crate) fn events_for(&self, out: &mut Outcome, object: &ObjectRef, uid: Uid, width: usize) {
        let events = self.described_events(object, uid);
        if events.is_empty() {
            // In the describe's value column, as kubectl's tabwriter puts it.
            out.line(
                Line::new()
                    .push(format!("{:<width$}", "Events:"), Role::Header)
                    .push("<none>", Role::Plain),
            );
            return;
        }
        out.line(Line::styled("Events:", Role::Header));
        // kubectl's DescribeEvents, through the describer's tab writer (padding 2):
        //   w.Write(LEVEL_0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
        //   w.Write(LEVEL_1, "----\t------\t----\t----\t-------\n")
        let mut t = Table::new(&["Type", "Reason", "Age", "From", "Message"]).with_gap(2);
        t.row_styled(
            ["----", "------", "----", "----", "-------"]
                .into_iter()
                .map(|c| (c.to_string(), Role::Header))
                .collect(),
        );
        for f in events {
            let e = f.first;
            let kind = match e.level() {
                Level::Normal => "Normal",
                Level::Warning => "Warning",
            };
            let mut message = String::new();
            f.write_message(&mut message);
            // DescribeEvents' interval: `LAST (xCOUNT over FIRST)` for a repeated event.
            let interval = if f.count > 1 {
                format!(
                    "{} (x{} over {})",
                    age(self.clock, f.last),
                    f.count,
                    age(self.clock, e.tick())
                )
            } else {
                age(self.clock, e.tick())
            };
            t.row_styled(vec![
                (
                    kind.into(),
                    if e.level() == Level::Warning {
                        Role::Bad
                    } else {
                        Role::Plain
                    },
                ),
                (f.reason().into(), Role::Plain),
                (interval, Role::Plain),
                (e.event_source().to_string(), Role::Actor),
                (message, Role::Plain),
            ]);
        }
        for l in t.render().into_lines() {
            let mut spans = vec![crate::render::Span {
                text: "  ".into(),
                role: Role::Plain,
            }];
            spans.extend(l.spans);
            out.line(Line { spans });
        }
    }
}

/// The API server's NotFound, as kubectl prints it.
pub(crate) fn not_found(resource: &str, name: &str) -> LabError {
    LabError::msg(format!(
        "Error from server (NotFound): {resource} \"{name}\" not found"
    ))
}

/// A kubectl List of items already printed by `to_go_json`, as kubectl prints the List it
/// builds for several objects: its keys in the order the unstructured map prints them, and
/// an empty `metadata.resourceVersion` (`kubectl get pods -o json` in v1.31:
/// `{"apiVersion": "v1", "items": [...], "kind": "List", "metadata": {"resourceVersion": ""}}`).
pub(super) fn list_text<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut body: Vec<String> = Vec::new();
    for item in items {
        let indented: Vec<String> = item.lines().map(|l| format!("        {l}")).collect();
        body.push(indented.join("\n"));
    }
    let items = if body.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n{}\n    ]", body.join(",\n"))
    };
    format!(
        "{{\n    \"apiVersion\": \"v1\",\n    \"items\": {items},\n    \"kind\": \"List\",\n    \"metadata\": {{\n        \"resourceVersion\": \"\"\n    }}\n}}"
    )
}

/// A short age like kubectl's, from the logical clock.
pub fn age(now: Millis, then: Millis) -> String {
    human_duration(now.saturating_sub(then).whole_secs())
}

/// kubectl describe's `translateTimestampSince` of a `metav1.Time` (whole seconds, as the
/// API serves it): apimachinery's `duration.HumanDuration` of `time.Since(then)`, which
/// reads a time more than a second ahead as `<invalid>` and one less than two seconds ahead
/// as `0s` (its tolerance for clock skew; `int(d.Seconds())` truncates toward zero).
pub(crate) fn human_duration_since(now: Millis, then: Millis) -> String {
    let (now, then) = (now.as_ms(), then.whole_secs().saturating_mul(1000));
    match now.checked_sub(then) {
        Some(since) => human_duration(since / 1000),
        None if (then - now) / 1000 > 1 => "<invalid>".to_string(),
        None => "0s".to_string(),
    }
}

/// apimachinery's `duration.HumanDuration` of a whole number of seconds: seconds below
/// 2 minutes, minutes and seconds below 10 minutes, minutes below 3 hours, hours and
/// minutes below 8 hours, hours below 2 days, days and hours below 8 days, days below 2
/// years, then years and days below 8 years, then years (a zero second part is left out).
pub(crate) fn human_duration(seconds: u64) -> String {
    let (s, m, h) = (seconds, seconds / 60, seconds / 3600);
    let (d, y) = (h / 24, h / 24 / 365);
    let pair = |big: u64, a: &str, small: u64, b: &str| {
        if small == 0 {
            format!("{big}{a}")
        } else {
            format!("{big}{a}{small}{b}")
        }
    };
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        pair(m, "m", s % 60, "s")
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        pair(h, "h", m % 60, "m")
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        pair(d, "d", h % 24, "h")
    } else if h < 24 * 365 * 2 {
        format!("{d}d")
    } else if h < 24 * 365 * 8 {
        pair(y, "y", d % 365, "d")
    } else {
        format!("{y}y")
    }
}

/// How kubectl describe prints a map field (`printLabelsMultiline`,
/// `printAnnotationsMultiline`): one entry a line, the first beside the key and the others
/// under it in the value column, `<none>` when empty. Labels read `key=value`, annotations
/// `key: value`; an annotation whose value spans lines, or is too long for one, has it on
/// the lines below its key, and kubectl's last-applied-configuration is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapStyle {
    /// `key=value`.
    Labels,
    /// `key: value`.
    Annotations,
}

/// `Labels:` or `Annotations:` (see [`MapStyle`]) with the value column at `width`.
pub(crate) fn map_field(
    out: &mut Outcome,
    field: &str,
    width: usize,
    m: &std::collections::BTreeMap<String, String>,
    style: MapStyle,
) {
    let mut lines = Vec::new();
    match style {
        MapStyle::Labels => super::generic_describe::labels_lines(&mut lines, field, m),
        MapStyle::Annotations => super::generic_describe::annotations_lines(&mut lines, field, m),
    }
    // The tabbed lines with the value column at `width`.
    for l in lines {
        let (key, value) = l.split_once('\t').unwrap_or(("", &l));
        out.line(
            Line::new()
                .push(format!("{key:<width$}"), Role::Header)
                .push(value.to_string(), Role::Plain),
        );
    }
}

/// The first 13 characters of a container ID, as crictl shows it.
pub fn short_id(id: &str) -> &str {
    id.get(..13).unwrap_or(id)
}

/// kubectl's POD-SELECTOR column: `<none>` for the empty selector.
pub(crate) fn selector_column(sel: &crate::cluster::selector::LabelSelector) -> String {
    if sel.is_empty() {
        "<none>".into()
    } else {
        sel.describe()
    }
}

/// What `show wire N` prints for one record: CNI env, stdin and stdout, or a CSI request
/// and its response or status.
pub fn wire_detail(seq: u64, rec: &WireRecord) -> Outcome {
    let mut out = Outcome::empty();
    match rec {
        WireRecord::Cni(c) => cni_wire_detail(&mut out, seq, c),
        WireRecord::Csi(c) => csi_wire_detail(&mut out, seq, c),
    }
    out
}

/// One row of `show wire --list`.
fn wire_row(seq: u64, rec: &WireRecord) -> Vec<String> {
    match rec {
        WireRecord::Cni(c) => vec![
            seq.to_string(),
            c.node.to_string(),
            format!("{}{}", if c.depth > 0 { "└ " } else { "" }, c.plugin_type),
            c.env.cmd().as_str().to_string(),
            short_id(&c.env.container_id).to_string(),
            format!("exit {}", c.exit_code()),
            crate::record::wire::cni_summary(c),
        ],
        WireRecord::Csi(c) => vec![
            seq.to_string(),
            c.node.clone().unwrap_or_else(|| "-".into()),
            format!(
                "csi {}",
                c.service.grpc_name().trim_start_matches("csi.v1.")
            ),
            c.rpc.to_string(),
            c.subject().to_string(),
            match &c.reply {
                Ok(_) => "OK".into(),
                Err(s) => s.code.name().to_string(),
            },
            c.summary(),
        ],
    }
}

fn cni_wire_detail(out: &mut Outcome, seq: u64, c: &WireCall) {
    out.line(
        Line::new()
            .push(format!("wire #{seq}  "), Role::Header)
            .push(format!("{} on {}", c.plugin_type, c.node), Role::Actor)
            .push(
                format!(
                    "  {}{}  exit {}",
                    c.env.cmd().as_str(),
                    if c.depth == 0 {
                        ""
                    } else if c.stdin.str_field("type") == c.plugin_type {
                        // Its own config: a network a meta-plugin (Multus) ran.
                        " (delegate of a meta-plugin)"
                    } else {
                        " (delegated IPAM call)"
                    },
                    c.exit_code()
                ),
                Role::Dim,
            ),
    );
    out.line(Line::styled("env:", Role::Header));
    for (k, v) in c.env.vars() {
        out.plain(format!("  {k}={v}"));
    }
    out.line(Line::styled("stdin:", Role::Header));
    json_block(out, &c.stdin.to_json());
    out.line(Line::styled("stdout:", Role::Header));
    let stdout = c.stdout();
    if stdout.is_empty() {
        out.line(Line::styled("  (empty)", Role::Dim));
    } else {
        out.block(&stdout, Role::Json);
    }
    let stderr = c.stderr();
    if !stderr.is_empty() {
        out.line(Line::styled("stderr:", Role::Header));
        out.block(stderr.trim_end(), Role::Bad);
    }
}

fn csi_wire_detail(out: &mut Outcome, seq: u64, c: &CsiCall) {
    out.line(
        Line::new()
            .push(format!("wire #{seq}  "), Role::Header)
            .push(c.path(), Role::Actor)
            .push(
                format!(
                    "  from {}{}",
                    c.caller,
                    c.node
                        .as_ref()
                        .map(|n| format!(" to the node plugin on {n}"))
                        .unwrap_or_default()
                ),
                Role::Dim,
            ),
    );
    out.line(Line::styled("request:", Role::Header));
    json_block(out, &c.request.to_json());
    match &c.reply {
        Ok(resp) => {
            out.line(Line::styled("response:", Role::Header));
            json_block(out, &resp.to_json());
        }
        Err(s) => {
            out.line(Line::styled("status:", Role::Header));
            out.line(Line::styled(
                format!("  code = {} ({})", s.code.name(), s.code.number()),
                Role::Bad,
            ));
            out.line(Line::styled(
                format!("  message = {}", s.message),
                Role::Bad,
            ));
        }
    }
}

/// A pod's QoS class as `GetPodQOS` (`pkg/apis/core/helper/qos`) computes it from CPU and
/// memory only: no request or limit anywhere → BestEffort; every container limiting both
/// with requests equal to the limits → Guaranteed; anything else → Burstable.
pub(crate) fn qos_class(spec: &crate::cluster::PodSpec) -> &'static str {
    const COMPUTE: [&str; 2] = ["cpu", "memory"];
    let any = spec.containers.iter().any(|c| {
        let res = c.resources();
        COMPUTE
            .iter()
            .any(|r| res.requests.contains_key(*r) || res.limits.contains_key(*r))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = spec.containers.iter().all(|c| {
        let res = c.resources();
        COMPUTE.iter().all(|r| {
            res.limits
                .get(*r)
                .is_some_and(|l| res.requests.get(*r).is_none_or(|q| q == l))
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// The place of a pod's namespace (`key` is `ns/name`) on `node`.
fn pod_place(node: &str, key: &str) -> super::seen::Place {
    let (ns, name) = key.split_once('/').unwrap_or(("default", key));
    super::seen::Place::Pod {
        node: node.to_string(),
        pod: crate::cluster::ObjectRef::new(crate::cluster::ApiKind::Pod, ns, name),
    }
}

/// A namespace's routes as the two commands `show routes` runs print them: `ip route`
/// (IPv4's routes) and `ip -6 route`, which has the kernel's link-local routes
/// (`fe80::/64`) among its own. (The kernel has those in every namespace with an up link;
/// the lab prints IPv6's table only where a network configured IPv6, so `v6` is empty
/// otherwise.) Each route's line has `linkdown` when its device has no carrier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteTables {
    /// `ip route`.
    pub v4: Vec<super::seen::RouteFact>,
    /// `ip -6 route` (empty when the namespace has no IPv6 route).
    pub v6: Vec<super::seen::RouteFact>,
}

/// The routes of `ns` on `host`, whose main table is `table` (a sandbox's own table; the
/// host's with the network daemon's peer routes), as [`RouteTables`].
pub(crate) fn route_tables(
    host: &crate::cni::host::Host,
    ns: &crate::cni::host::Netns,
    table: Vec<crate::cni::host::RouteEntry>,
) -> RouteTables {
    let (v6, v4): (Vec<_>, Vec<_>) = table
        .into_iter()
        .partition(crate::cni::host::RouteEntry::is_ipv6);
    let v6 = if v6.is_empty() {
        v6
    } else {
        let mut all = v6;
        all.extend(ns.link_local_routes(|k| host.sysctl_in(ns, k)));
        // Stable, so each destination's routes keep the table's order, the link-local
        // ones after the others to fe80::/64; the default routes last.
        all.sort_by_key(|r| r.dst.sort_key());
        all
    };
    RouteTables {
        v4: v4.iter().map(|r| route_fact_in(ns, r)).collect(),
        v6: v6.iter().map(|r| route_fact_in(ns, r)).collect(),
    }
}

/// Print `ns`'s [`RouteTables`]: each command is a header made by `head`, then its routes
/// indented by `indent` (`ip -6 route` only when there are IPv6 routes); returns the routes
/// shown as facts.
fn route_sections(
    out: &mut Outcome,
    host: &crate::cni::host::Host,
    ns: &crate::cni::host::Netns,
    table: Vec<crate::cni::host::RouteEntry>,
    indent: &str,
    head: impl Fn(&str) -> Line,
) -> Vec<super::seen::RouteFact> {
    let RouteTables { v4, v6 } = route_tables(host, ns, table);
    let mut facts = Vec::new();
    let mut section = |cmd: &str, routes: Vec<super::seen::RouteFact>| {
        out.line(head(cmd));
        for fact in routes {
            out.plain(format!("{indent}{}", fact.line));
            facts.push(fact);
        }
    };
    section("ip route", v4);
    if !v6.is_empty() {
        section("ip -6 route", v6);
    }
    facts
}

/// A route of the namespace `ns` as a fact, its line with `linkdown` when its device has
/// no carrier.
fn route_fact_in(
    ns: &crate::cni::host::Netns,
    r: &crate::cni::host::RouteEntry,
) -> super::seen::RouteFact {
    super::seen::RouteFact {
        line: r.to_ip_route_linkdown(ns.linkdown(&r.dev)),
        ..route_fact(r)
    }
}

/// A route of the kernel model as a fact.
pub(super) fn route_fact(r: &crate::cni::host::RouteEntry) -> super::seen::RouteFact {
    super::seen::RouteFact {
        dst: r.dst.to_string(),
        via: r.via,
        dev: r.dev.to_string(),
        proto: if r.proto_kernel {
            Some("kernel".to_string())
        } else {
            r.proto().map(|p| p.as_str().to_string())
        },
        blackhole: r.blackhole,
        onlink: r.onlink,
        line: r.to_ip_route(),
    }
}

#[cfg(test)]
mod qos_tests {
    /// As apimachinery's duration_test.go has them.
    #[test]
    fn ages_read_as_human_duration_prints_them() {
        for (secs, want) in [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (599, "9m59s"),
            (600, "10m"),
            (7200, "120m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60 * 30, "3h30m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 59 * 60, "47h"),
            (48 * 3600, "2d"),
            (48 * 3600 + 3600, "2d1h"),
            (8 * 24 * 3600, "8d"),
            (367 * 24 * 3600, "367d"),
            (2 * 365 * 24 * 3600, "2y"),
            (2 * 365 * 24 * 3600 + 24 * 3600, "2y1d"),
            (8 * 365 * 24 * 3600, "8y"),
        ] {
            assert_eq!(human_duration(secs), want, "{secs} s");
        }
    }

    use super::{human_duration, qos_class};
    use crate::cluster::{Container, PodSpec, ResourceRequirements};

    fn pod(limits: &[(&str, &str)], requests: &[(&str, &str)]) -> PodSpec {
        let list = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(k, q)| (k.to_string(), q.to_string()))
                .collect()
        };
        PodSpec::new(
            String::new(),
            vec![Container::new(
                "app",
                "x",
                Vec::new(),
                ResourceRequirements {
                    limits: list(limits),
                    requests: list(requests),
                },
            )],
            Vec::new(),
            Default::default(),
        )
    }

    #[test]
    fn classes_follow_cpu_and_memory_only() {
        assert_eq!(qos_class(&pod(&[], &[])), "BestEffort");
        assert_eq!(
            qos_class(&pod(
                &[("intel.com/sriov", "1")],
                &[("intel.com/sriov", "1")]
            )),
            "BestEffort"
        );
        assert_eq!(
            qos_class(&pod(&[("cpu", "1"), ("memory", "1Gi")], &[])),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(
                &[("cpu", "1"), ("memory", "1Gi")],
                &[("cpu", "1"), ("memory", "1Gi")]
            )),
            "Guaranteed"
        );
        assert_eq!(qos_class(&pod(&[("cpu", "1")], &[])), "Burstable");
        assert_eq!(
            qos_class(&pod(&[("cpu", "2"), ("memory", "1Gi")], &[("cpu", "1")])),
            "Burstable"
        );
    }
}

#[cfg(test)]
mod trace_text_tests {
    use crate::engine::Lab;
    use crate::record::call::{Actor, Event, Message, What};
    use crate::record::{CallEvent, Level};
    use crate::render::{Outcome, ShownLine};
    use std::sync::Arc;

    /// `run FILE` writes each trace line's text straight from the record; the dashboard
    /// and the REPL build the line. Both must read the same for every kind of entry.
    #[test]
    fn a_trace_line_written_as_text_reads_as_its_line() {
        let mut lab = Lab::new();
        for line in [
            "pvc create data --size 1Gi",
            "pod create web --node node-1 -l app=web --pvc data",
            "pod create db",
            "fault inject cni-plugin-error --node node-2",
            "pod create broken --node node-2",
            "pod delete web",
            "node cordon node-1",
            "tick 30",
        ] {
            let _ = lab.execute(line);
        }
        let mut kinds = std::collections::HashSet::new();
        for (_, e) in lab.calls().iter() {
            let mut text = String::new();
            e.write_text(&mut text);
            assert_eq!(text, e.shown_line().text(), "{e:?}");
            kinds.insert(std::mem::discriminant(e.what()));
        }
        assert!(kinds.len() >= 5, "only {} kinds of entries", kinds.len());
    }

    /// A record's text is escaped as a line's is: nothing from outside reaches the
    /// terminal raw, wide actors still pad to their column.
    #[test]
    fn a_trace_record_with_controls_is_escaped_when_printed() {
        let event = Event {
            reason: "Failed",
            object: crate::cluster::ObjectRef::new(crate::cluster::ApiKind::Pod, "default", "p"),
            uid: None,
            message: Message::Text("bad \x1b]0;pwned\x07 name · ok".into()),
            source: None,
        };
        let entry = CallEvent::new(
            crate::util::time::Millis::ZERO,
            Actor::from("kubelet(nöde-1)"),
            What::Event(event),
            Level::Warning,
        );
        let mut out = Outcome::empty();
        out.plain("first \x1b[2J");
        out.later([Arc::new(entry) as Arc<dyn ShownLine>]);
        let via_lines: String = out
            .lines()
            .map(|l| format!("{}\n", crate::render::escape_controls(&l.text())))
            .collect();
        let text = out.to_text();
        assert_eq!(text, via_lines);
        assert!(text.contains("\\u{1b}]0;pwned\\u{7}"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
    }
}
