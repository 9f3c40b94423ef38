//! The `--real` views of real mode (`--real-cni`, see `crate::cni::real`): the real
//! plugin's call beside the model's wire record (`show wire N --real`), and the kernel's
//! own tables of a node's real namespace after the model's (`show routes NODE --real`,
//! `show iptables NODE --real`).

use super::{Lab, LabError};
use crate::cni::real::{self, Ran, RealCall, RealCni, Verdict, compare};
use crate::command::grammar::TableArg;
use crate::record::wire::WireRecord;
use crate::render::{Line, Outcome, Role};

impl Lab {
    fn require_real(&self) -> Result<&dyn RealCni, LabError> {
        self.edges
            .real
            .as_deref()
            .ok_or_else(|| LabError::msg(real::NOT_REAL))
    }

    /// `show wire [N] --real`: the model's record, then the real plugin's call.
    pub(super) fn show_wire_real(&self, n: Option<u64>) -> Result<Outcome, LabError> {
        let rc = self.require_real()?;
        let mut out = self.show_wire(n, false)?;
        let seq = n.unwrap_or(self.wire.next_seq().saturating_sub(1));
        match self.wire.get(seq) {
            Some(WireRecord::Cni(c)) if c.depth > 0 => out.line(Line::styled(
                format!(
                    "real: none of its own: the real {} runs its IPAM delegate itself; see the wire record of the plugin that delegated",
                    c.plugin_type
                ),
                Role::Dim,
            )),
            Some(WireRecord::Csi(_)) => out.line(Line::styled(
                "real: a CSI call; real mode runs the CNI plugins only",
                Role::Dim,
            )),
            _ => match rc.call(seq) {
                Some(call) => real_call_detail(&mut out, &call),
                None => out.line(Line::styled(
                    format!("real: no real call was recorded for wire #{seq}"),
                    Role::Dim,
                )),
            },
        }
        Ok(out)
    }

    /// Real mode, after `cni add`: the real chain's final result (its last plugin's
    /// answer) and the model's side by side, normalised; empty without `--real-cni`.
    pub(super) fn real_chain_result(&self, first: u64, last: u64) -> Outcome {
        let mut out = Outcome::empty();
        let Some(rc) = self.edges.real.as_deref() else {
            return out;
        };
        let last_top = (first..last)
            .rev()
            .find(|seq| matches!(self.wire.get(*seq), Some(WireRecord::Cni(c)) if c.depth == 0));
        let Some(call) = last_top.and_then(|seq| rc.call(seq)) else {
            return out;
        };
        if let Verdict::NotRun(why) = &call.verdict {
            out.line(Line::styled(
                format!(
                    "real: the real chain has no result: {} not run: {why}",
                    call.plugin_type
                ),
                Role::Warn,
            ));
            return out;
        }
        let (real_view, _) = compare::libcni_view(&call.stdout, &call.stderr, call.exit);
        out.line(Line::styled(
            "real: the chain's result, normalised (the model │ the real plugins; ≠ where they differ):",
            Role::Header,
        ));
        for r in compare::side_by_side(&call.model_stdout, &real_view, &call.paths) {
            let role = if r.contains(" ≠ ") {
                Role::Bad
            } else {
                Role::Json
            };
            out.line(Line::styled(format!("  {r}"), role));
        }
        out
    }

    /// `show ipam [NODE] --real`: the real host-local's files, as the model's are shown
    /// (CR LF in a lease file shown as `\r\n`).
    pub(super) fn show_ipam_real(&self, node: Option<&str>) -> Result<Outcome, LabError> {
        let rc = self.require_real()?;
        let mut out = Outcome::empty();
        for n in self.nodes_selected(node)? {
            let Some(files) = rc.host_local(&n) else {
                out.line(Line::styled(
                    format!("{n} (real): no real host-local data yet (no CNI call has run there)"),
                    Role::Dim,
                ));
                continue;
            };
            if files.networks.is_empty() {
                out.line(Line::styled(
                    format!("{n} (real): {}/ is empty", files.dir),
                    Role::Dim,
                ));
            }
            for (net, entries) in &files.networks {
                out.line(
                    Line::new()
                        .push(format!("{n} (real): "), Role::Name)
                        .push(format!("{net}/"), Role::Header),
                );
                for (name, bytes) in entries {
                    let content = String::from_utf8_lossy(bytes);
                    let shown = content.replace('\r', "\\r").replace('\n', "\\n");
                    if shown.is_empty() {
                        out.line(Line::styled(format!("  {name}"), Role::Name));
                    } else {
                        out.line(
                            Line::new()
                                .push(format!("  {name:<20}"), Role::Name)
                                .push(shown, Role::Plain),
                        );
                    }
                }
            }
        }
        Ok(out)
    }

    /// `show routes [NODE] [--pod P] --real`: `ip route` in the real namespaces.
    pub(super) fn show_routes_real(
        &self,
        node: Option<&str>,
        pod: Option<&str>,
    ) -> Result<Outcome, LabError> {
        let rc = self.require_real()?;
        let pod_key = pod.map(|p| match p.split_once('/') {
            Some(_) => p.to_string(),
            None => format!("default/{p}"),
        });
        let mut out = Outcome::empty();
        out.line(Line::styled(REAL_TABLES_NOTE, Role::Dim));
        for n in self.nodes_selected(node)? {
            let Some(rt) = self.nodes.get(&n) else {
                continue;
            };
            let model_netns = pod_key
                .as_ref()
                .and_then(|k| rt.sandboxes.get(k))
                .map(|sb| sb.netns());
            if pod_key.is_some() && model_netns.is_none() {
                continue;
            }
            let what = match (&pod_key, model_netns) {
                (Some(k), Some(_)) => format!("pod {k} on {n}"),
                _ => n.clone(),
            };
            match rc.namespace(&n, model_netns) {
                Some(ns) => {
                    // The commands the model's side ran there (`ip route`, and `ip -6
                    // route` where the model's namespace has IPv6 routes).
                    let v6 = |netns: Option<&str>| {
                        match netns {
                            None => Some(rt.host.route_table()),
                            Some(p) => rt.host.netns.get(p).map(|m| m.route_table()),
                        }
                        .is_some_and(|t| t.iter().any(|r| r.is_ipv6()))
                    };
                    let run = |out: &mut Outcome, who: String, ns: &str, v6: bool, indent| {
                        let families: &[&[&str]] = if v6 { &[&[], &["-6"]] } else { &[&[]] };
                        for family in families {
                            let mut args = vec!["ip", "-n", ns];
                            args.extend_from_slice(family);
                            args.push("route");
                            out.line(
                                Line::new()
                                    .push(format!("{who} (real)"), Role::Name)
                                    .push(format!(" $ {}", args.join(" ")), Role::Dim),
                            );
                            kernel_lines(out, &rc.tool(&args), indent);
                        }
                    };
                    run(&mut out, what, &ns, v6(model_netns), "  ");
                    if pod_key.is_none() {
                        for (key, sb) in &rt.sandboxes {
                            if let Some(pns) = rc.namespace(&n, Some(sb.netns())) {
                                run(
                                    &mut out,
                                    format!("  pod {key}"),
                                    &pns,
                                    v6(Some(sb.netns())),
                                    "    ",
                                );
                            }
                        }
                    }
                }
                None => out.line(Line::styled(
                    format!("{what} (real): no real namespace yet (no CNI call has run there)"),
                    Role::Dim,
                )),
            }
        }
        Ok(out)
    }

    /// `show iptables NODE --real`: `iptables -t TABLE -S` in the node's real namespace.
    pub(super) fn show_iptables_real(
        &self,
        node: &str,
        v6: bool,
        table: TableArg,
    ) -> Result<Outcome, LabError> {
        let rc = self.require_real()?;
        let tool = if v6 { "ip6tables" } else { "iptables" };
        let table = match table {
            TableArg::Nat => "nat",
            TableArg::Filter => "filter",
        };
        let mut out = Outcome::empty();
        out.line(Line::styled(REAL_TABLES_NOTE, Role::Dim));
        for n in self.nodes_selected(Some(node))? {
            match rc.namespace(&n, None) {
                Some(ns) => {
                    out.line(Line::new().push(format!("{n} (real)"), Role::Name).push(
                        format!(" $ ip netns exec {ns} {tool} -t {table} -S"),
                        Role::Dim,
                    ));
                    kernel_lines(
                        &mut out,
                        &rc.tool(&["ip", "netns", "exec", &ns, tool, "-t", table, "-S"]),
                        "  ",
                    );
                }
                None => out.line(Line::styled(
                    format!("{n} (real): no real namespace yet (no CNI call has run there)"),
                    Role::Dim,
                )),
            }
        }
        Ok(out)
    }
}

/// A kernel tool's output, indented, trailing spaces trimmed; its error if it failed.
fn kernel_lines(out: &mut Outcome, ran: &Ran, indent: &str) {
    if !ran.ok() {
        out.line(Line::styled(
            format!("{indent}error: {}", ran.why()),
            Role::Bad,
        ));
        return;
    }
    for l in ran.stdout.lines() {
        out.plain(format!("{indent}{}", l.trim_end()));
    }
}

/// The real half of `show wire N --real`.
fn real_call_detail(out: &mut Outcome, c: &RealCall) {
    if let Verdict::NotRun(why) = &c.verdict {
        out.line(
            Line::new()
                .push("real: ", Role::Header)
                .push(format!("not run: {why}"), Role::Warn),
        );
        return;
    }
    out.line(
        Line::new()
            .push("real: ", Role::Header)
            .push(
                format!("{} in netns {}", c.binary, c.node_netns),
                Role::Actor,
            )
            .push(
                format!(
                    "  {}  exit {}",
                    c.command.as_str(),
                    c.exit
                        .map_or_else(|| "(killed)".to_string(), |e| e.to_string())
                ),
                Role::Dim,
            ),
    );
    if !c.changes.is_empty() {
        out.line(Line::styled(
            "changed from the model's call (nothing else is):",
            Role::Header,
        ));
        for ch in &c.changes {
            out.line(Line::styled(format!("  {ch}"), Role::Dim));
        }
    }
    out.line(Line::styled("env:", Role::Header));
    for (k, v) in &c.env {
        out.plain(format!("  {k}={v}"));
    }
    out.line(Line::styled("stdin:", Role::Header));
    match serde_json::from_str::<serde_json::Value>(&c.stdin) {
        Ok(v) => out.block(&crate::cni::types::to_go_json(&v), Role::Json),
        Err(_) => out.block(&c.stdin, Role::Json),
    }
    out.line(Line::styled("stdout:", Role::Header));
    if c.stdout.trim().is_empty() {
        out.line(Line::styled("  (empty)", Role::Dim));
    } else {
        out.block(c.stdout.trim_end(), Role::Json);
    }
    if !c.stderr.trim().is_empty() {
        out.line(Line::styled("stderr:", Role::Header));
        out.block(c.stderr.trim_end(), Role::Plain);
    }
    let (real_view, _) = compare::libcni_view(&c.stdout, &c.stderr, c.exit);
    let rows = compare::side_by_side(&c.model_stdout, &real_view, &c.paths);
    if !rows.is_empty() {
        out.line(Line::styled(
            "side by side, normalised (the model │ the real plugin; ≠ where they differ):",
            Role::Header,
        ));
        for r in rows {
            let role = if r.contains(" ≠ ") {
                Role::Bad
            } else {
                Role::Json
            };
            out.line(Line::styled(format!("  {r}"), role));
        }
    }
    match &c.verdict {
        Verdict::Same => out.line(Line::styled(
            "same as the model (after normalising MACs, veth names and namespace paths)",
            Role::Good,
        )),
        Verdict::Differs(d) => {
            out.line(Line::styled(
                "DIFFERS from the model (after normalising MACs, veth names and namespace paths; - model, + real):",
                Role::Bad,
            ));
            for l in d {
                out.line(Line::styled(format!("  {l}"), Role::Bad));
            }
        }
        Verdict::NotRun(_) => {}
    }
}

/// What the real namespaces hold, said before their tables.
const REAL_TABLES_NOTE: &str = "real: the kernel's own tables, made by the real CNI plugins alone (no underlay eth0, no flanneld or Calico routes and rules: the model's only)";
