//! What a step is about, for a dashboard to show: the pane, the wire call, the node, pod or
//! claim, and the flows whose NetworkPolicy verdict matters. It is computed from the
//! step's typed checks (each predicate says what its arguments name, [`Topic`]), with the
//! step's `Dashboard: PANE` line where the checks cannot say which pane; never from prose.

use super::model::Step;
use crate::command::grammar::FlowArgs;
use crate::record::wire::WireRecord;

/// What a predicate's arguments name, so a step's checks say what the step is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// Nothing a pane shows (the commands run, the mode, an object's existence).
    None,
    /// Argument 0 is a pod.
    Pod,
    /// Argument 0 is a node.
    Node,
    /// Argument 0 is a node whose IPAM store is checked.
    Ipam,
    /// Argument 0 is a node (or `pod/POD`) whose routes, links or tables are checked.
    Routes,
    /// Argument 0 is a flow `trace` walked (the data path: routes).
    Trace,
    /// Argument 0 is a wire call (`PLUGIN:COMMAND`, a CNI command, a CSI RPC).
    WireCall,
    /// Argument 0 is a plugin type; any of its calls.
    WirePlugin,
    /// The newest wire record, whatever it is.
    WireAny,
    /// The call log.
    Calls,
    /// Arguments 0, 1 and 2 are `reach`'s source, destination and port.
    Reach,
    /// Argument 0 is a flow as `reach` takes it.
    Flow,
    /// Argument 0 is a claim.
    Volume,
    /// Argument 0 is a claim and argument 1 a node.
    VolumeOn,
    /// The volumes, no claim in particular.
    Volumes,
    /// Arguments 0 and 1 are the kind and name `describe` took.
    Describe,
}

/// A pane of the dashboard a step can be about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FocusPane {
    /// The wire records of a call (most specific first).
    Wire,
    /// The claims and their mounts.
    Volumes,
    /// The nodes' IPAM stores.
    Ipam,
    /// The call log.
    Calls,
    /// A node's or pod's routes.
    Routes,
    /// Nodes and pods.
    Topology,
}

impl FocusPane {
    /// Every pane, as a `Dashboard:` line names it.
    pub const ALL: [(&'static str, FocusPane); 6] = [
        ("wire", FocusPane::Wire),
        ("volumes", FocusPane::Volumes),
        ("ipam", FocusPane::Ipam),
        ("calls", FocusPane::Calls),
        ("routes", FocusPane::Routes),
        ("topology", FocusPane::Topology),
    ];

    /// The pane a `Dashboard:` line names.
    pub fn parse(word: &str) -> Result<FocusPane, String> {
        FocusPane::ALL
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(word.trim()))
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                let names: Vec<&str> = FocusPane::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown dashboard pane {:?}: expected one of {}",
                    word.trim(),
                    names.join(", ")
                )
            })
    }
}

/// A wire call as a check and `show wire --last` name it: `bridge:ADD`, `DEL`,
/// `CreateVolume`, or a plugin's calls of any command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireCall {
    /// The plugin type (`bridge`), for a CNI call of one plugin.
    pub plugin: Option<String>,
    /// The CNI command or CSI RPC (`None`: any of the plugin's).
    pub command: Option<String>,
}

impl WireCall {
    /// `PLUGIN:COMMAND`, `COMMAND` or `RPC`.
    pub fn parse(want: &str) -> WireCall {
        match want.split_once(':') {
            Some((p, c)) => WireCall {
                plugin: Some(p.to_string()),
                command: Some(c.to_string()),
            },
            None => WireCall {
                plugin: None,
                command: Some(want.to_string()),
            },
        }
    }

    /// Whether a record is this call.
    pub fn matches(&self, rec: &WireRecord) -> bool {
        let cmd_is = |c: &str| {
            self.command
                .as_deref()
                .is_none_or(|w| w.eq_ignore_ascii_case(c))
        };
        match rec {
            WireRecord::Cni(c) => {
                cmd_is(c.env.cmd().as_str())
                    && self.plugin.as_ref().is_none_or(|p| c.plugin_type == *p)
            }
            WireRecord::Csi(c) => self.plugin.is_none() && cmd_is(c.rpc),
        }
    }
}

/// What a step is about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Focus {
    /// The pane to bring forward.
    pub pane: Option<FocusPane>,
    /// The wire record to show (the newest of this call).
    pub wire: Option<WireCall>,
    /// The node to select.
    pub node: Option<String>,
    /// The pod to select (`name` or `ns/name`).
    pub pod: Option<String>,
    /// The claim to show (`name` or `ns/name`).
    pub pvc: Option<String>,
    /// The flows whose NetworkPolicy verdict the step asks about, in check order.
    pub flows: Vec<FlowArgs>,
}

/// What a step is about, from its checks (a `Dashboard:` line names the pane instead).
pub fn of_step(step: &Step) -> Focus {
    let mut f = Focus::default();
    for c in step.checks.iter().filter(|c| !c.negated) {
        let a = |i: usize| c.args.get(i).cloned().unwrap_or_default();
        let topic = super::check::PREDICATES
            .get(c.predicate)
            .map_or(Topic::None, |p| p.topic);
        let pane = match topic {
            Topic::None => None,
            Topic::Pod => {
                f.pod.get_or_insert(a(0));
                Some(FocusPane::Topology)
            }
            Topic::Node => {
                f.node.get_or_insert(a(0));
                Some(FocusPane::Topology)
            }
            Topic::Ipam => {
                f.node.get_or_insert(a(0));
                Some(FocusPane::Ipam)
            }
            Topic::Routes => {
                match a(0).strip_prefix("pod/") {
                    Some(pod) => f.pod.get_or_insert(pod.to_string()),
                    None => f.node.get_or_insert(a(0)),
                };
                Some(FocusPane::Routes)
            }
            Topic::Trace => {
                if let Some(flow) = flow_of(&a(0)) {
                    f.pod.get_or_insert(flow.src);
                }
                Some(FocusPane::Routes)
            }
            Topic::WireCall => {
                f.wire.get_or_insert(WireCall::parse(&a(0)));
                Some(FocusPane::Wire)
            }
            Topic::WirePlugin => {
                f.wire.get_or_insert(WireCall {
                    plugin: Some(a(0)),
                    command: None,
                });
                Some(FocusPane::Wire)
            }
            Topic::WireAny => Some(FocusPane::Wire),
            Topic::Calls => Some(FocusPane::Calls),
            Topic::Reach => {
                push_flow(
                    &mut f.flows,
                    FlowArgs {
                        src: a(0),
                        dst: a(1),
                        port: Some(a(2)),
                        size: None,
                    },
                );
                None
            }
            Topic::Flow => {
                if let Some(flow) = flow_of(&a(0)) {
                    push_flow(&mut f.flows, flow);
                }
                None
            }
            Topic::Volume => {
                f.pvc.get_or_insert(a(0));
                Some(FocusPane::Volumes)
            }
            Topic::VolumeOn => {
                f.pvc.get_or_insert(a(0));
                f.node.get_or_insert(a(1));
                Some(FocusPane::Volumes)
            }
            Topic::Volumes => Some(FocusPane::Volumes),
            Topic::Describe => match a(0).as_str() {
                "pvc" | "persistentvolumeclaim" => {
                    f.pvc.get_or_insert(a(1));
                    Some(FocusPane::Volumes)
                }
                "node" | "no" => {
                    f.node.get_or_insert(a(1));
                    Some(FocusPane::Topology)
                }
                "pod" | "po" => {
                    f.pod.get_or_insert(a(1));
                    Some(FocusPane::Topology)
                }
                _ => None,
            },
        };
        // The most specific pane a check names (the wire before a pod's row).
        f.pane = match (f.pane, pane) {
            (Some(old), Some(new)) => Some(old.min(new)),
            (old, new) => old.or(new),
        };
    }
    if let Some(p) = step.dashboard {
        f.pane = Some(p);
    }
    f
}

/// A flow as `reach`/`trace` take it (checked when the lesson was parsed).
fn flow_of(text: &str) -> Option<FlowArgs> {
    match crate::command::parse(&format!("reach {text}")) {
        Ok(Some(crate::command::Command::Reach(f))) => Some(f),
        _ => None,
    }
}

/// Add a flow once: `--port 5432` and `port 5432/TCP` are one flow (the port in the
/// form `PORT/PROTO`, TCP and 80 when not given, as `reach` reads them).
fn push_flow(flows: &mut Vec<FlowArgs>, mut flow: FlowArgs) {
    let port = flow.port.take().unwrap_or_else(|| "80".to_string());
    flow.port = Some(match crate::cluster::policy::parse_port(&port) {
        Ok((n, proto)) => format!("{n}/{}", proto.as_str()),
        Err(_) => port,
    });
    if !flows.contains(&flow) {
        flows.push(flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(checks: &str, dashboard: Option<FocusPane>) -> Step {
        let src = format!(
            "# T\n\n```lesson\nformat_version: 1\nid: t\ntitle: T\nchapter: 2\n```\n\n## Step 1 · s\n\n**Task:** do it.\n\n```lab\npod create web --node node-1\n```\n\n```check\n{checks}\n```\n"
        );
        let mut lesson = crate::lesson::parse::parse("t.md", &src).unwrap();
        let mut s = lesson.steps.remove(0);
        s.dashboard = dashboard;
        s
    }

    #[test]
    fn the_wire_call_a_check_names_wins_over_a_pod_row() {
        let f = of_step(&step(
            "pod loader node node-1\nsaw wire bandwidth:ADD env K8S_POD_NAME=loader",
            None,
        ));
        assert_eq!(f.pane, Some(FocusPane::Wire));
        assert_eq!(
            f.wire,
            Some(WireCall {
                plugin: Some("bandwidth".into()),
                command: Some("ADD".into())
            })
        );
        assert_eq!(f.pod.as_deref(), Some("loader"));
    }

    #[test]
    fn reach_checks_name_flows_and_ipam_checks_a_node() {
        let f = of_step(&step(
            "saw reach \"web db --port 5432\" denied\nreach web db port 5432/TCP denied\nreach web db port 80/TCP denied\nsaw ipam node-2 leak demo-net",
            None,
        ));
        assert_eq!(f.pane, Some(FocusPane::Ipam));
        assert_eq!(f.node.as_deref(), Some("node-2"));
        let flows: Vec<(&str, &str, Option<&str>)> = f
            .flows
            .iter()
            .map(|x| (x.src.as_str(), x.dst.as_str(), x.port.as_deref()))
            .collect();
        assert_eq!(
            flows,
            [
                ("web", "db", Some("5432/TCP")),
                ("web", "db", Some("80/TCP"))
            ],
            "`--port 5432` and `port 5432/TCP` are one flow"
        );
    }

    #[test]
    fn a_negated_check_says_nothing_and_a_dashboard_line_names_the_pane() {
        let f = of_step(&step("not pvc x exists\npod web node node-1", None));
        assert_eq!((f.pane, f.pvc), (Some(FocusPane::Topology), None));
        let f = of_step(&step(
            "saw describe pod s2 event FailedAttachVolume \"Multi-Attach error\"",
            Some(FocusPane::Volumes),
        ));
        assert_eq!(f.pane, Some(FocusPane::Volumes));
        assert_eq!(f.pod.as_deref(), Some("s2"));
    }

    #[test]
    fn a_dashboard_line_names_a_known_pane() {
        assert_eq!(FocusPane::parse("Volumes"), Ok(FocusPane::Volumes));
        let e = FocusPane::parse("volume").unwrap_err();
        assert!(
            e.contains("\"volume\"") && e.contains("wire, volumes"),
            "{e}"
        );
    }
}
