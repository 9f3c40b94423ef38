//! A command line as a set of typed arguments, for comparing what a learner ran with what a
//! lesson asks for: the subcommand path with aliases resolved (`po ls` → `pod list`), and
//! each argument by its name with its value normalised — defaults filled in (`trace web db`
//! is `--port 80/TCP`), ports and protocols in one spelling (`5432`, `5432/tcp` and
//! `5432/TCP` alike), a pod in the default namespace named either way (`web` and
//! `default/web` alike), a size by its bytes (`1Gi`, `1024Mi`) — so flags in any order and
//! every accepted spelling match. (A kind's names, `po` and `pods`, are the lessons' to
//! resolve: the resource registry is above this room.)

use super::grammar::CommandLine;
use clap::ArgMatches;
use std::collections::BTreeSet;

/// A command line's subcommand path and normalised arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Subcommand names (`["pod", "create"]`).
    pub path: Vec<String>,
    /// `(argument, value)` for every argument given or defaulted (see [`Shape::of`]).
    pub args: BTreeSet<(String, String)>,
    /// The arguments the line itself gave (the rest are defaults).
    pub given: BTreeSet<(String, String)>,
}

/// The arguments whose value names a pod (namespace `default` when none is given).
const POD_ARGS: &[&str] = &["src", "dst", "name", "pod"];

impl Shape {
    /// The shape of a line (without its comment); `None` for a blank line or one that does
    /// not parse.
    pub fn of(line: &str) -> Option<Shape> {
        let line = super::without_kubectl(super::strip_comment(line));
        let mut words = super::split(line).ok()?;
        if words.is_empty() {
            return None;
        }
        super::grammar::split_kind_name(&mut words);
        super::grammar::lift_why_rule_flags(&mut words);
        super::switch_values(&mut words).ok()?;
        let root = <CommandLine as clap::CommandFactory>::command();
        let matches = root.clone().try_get_matches_from(&words).ok()?;
        let mut shape = Shape {
            path: Vec::new(),
            args: BTreeSet::new(),
            given: BTreeSet::new(),
        };
        let mut cmd = &root;
        let mut m = &matches;
        while let Some((name, sub)) = m.subcommand() {
            let Some(def) = cmd.find_subcommand(name) else {
                break;
            };
            shape.path.push(def.get_name().to_string());
            cmd = def;
            m = sub;
            shape.read_level(def, m);
        }
        shape.fill_implied();
        Some(shape)
    }

    /// The arguments of one subcommand level.
    fn read_level(&mut self, def: &clap::Command, m: &ArgMatches) {
        for arg in def.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" {
                continue;
            }
            let Some(raw) = m.get_raw(id) else {
                continue;
            };
            let explicit = m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
            // A flag left at its default says nothing about what was asked.
            if !explicit && !arg.get_action().takes_values() {
                continue;
            }
            for v in raw {
                let value = normalise(id, &v.to_string_lossy());
                if explicit {
                    self.given.insert((id.to_string(), value.clone()));
                }
                self.args.insert((id.to_string(), value));
            }
        }
    }

    /// Defaults the engine applies after parsing: `trace` and `reach` go to port 80/TCP.
    fn fill_implied(&mut self) {
        let flow = matches!(
            self.path.first().map(String::as_str),
            Some("trace" | "reach")
        );
        if flow && !self.args.iter().any(|(k, _)| k == "port") {
            self.args.insert(("port".into(), "80/TCP".into()));
        }
    }

    /// Whether `self` (a learner's command) is the command `want` asks for: the same path,
    /// and every argument `want` gave (or defaults to, for arguments that take a value) has
    /// the same value in `self`. Flags `want` does not give may be anything.
    pub fn matches(&self, want: &Shape) -> bool {
        self.path == want.path && want.args.is_subset(&self.args)
    }
}

/// One argument's value in its canonical spelling.
fn normalise(id: &str, value: &str) -> String {
    if id == "port" {
        if let Ok((port, proto)) = crate::cluster::policy::parse_port(value) {
            return format!("{port}/{}", proto.as_str());
        }
    }
    // A size by its bytes (`1Gi`, `1024Mi` and `1073741824` alike).
    if id == "size" {
        if let Ok(bytes) = crate::util::quantity::parse_bytes(value) {
            return bytes.to_string();
        }
    }
    if POD_ARGS.contains(&id) {
        if let Some(name) = value.strip_prefix("default/") {
            return name.to_string();
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(have: &str, want: &str) -> bool {
        Shape::of(have)
            .zip(Shape::of(want))
            .is_some_and(|(h, w)| h.matches(&w))
    }

    #[test]
    fn defaults_spellings_and_order_do_not_matter() {
        assert!(matches(
            "reach web db --port 5432/TCP",
            "reach web db --port 5432"
        ));
        assert!(matches(
            "reach web db --port 5432/tcp",
            "reach web db --port 5432/TCP"
        ));
        assert!(matches("trace web db", "trace web db --port 80/TCP"));
        assert!(matches("trace web db --port 80", "trace web db"));
        assert!(matches(
            "label pod/web tier=backend",
            "label pod web tier=backend"
        ));
        assert!(matches(
            "csi create-volume vol-a --size 1024Mi",
            "csi create-volume vol-a --size 1Gi"
        ));
        assert!(matches(
            "csi create-volume vol-a --size 1073741824",
            "csi create-volume vol-a --size 1Gi"
        ));
        assert!(!matches(
            "csi create-volume vol-a --size 2Gi",
            "csi create-volume vol-a --size 1Gi"
        ));
        assert!(matches("trace node-1 default/app-b", "trace node-1 app-b"));
        assert!(matches(
            "reach web 10.96.0.10 --port 53/udp",
            "reach web 10.96.0.10 --port 53/UDP"
        ));
        assert!(matches(
            "po create web --label app=web --node node-1",
            "pod create web --node node-1"
        ));
        assert!(matches("show wire --last bridge:ADD", "show wire"));
        // kubectl's form of a command is that command.
        assert!(matches("kubectl get pods -o wide", "get pods -o wide"));
        assert!(matches("describe pod/web", "kubectl describe pod web"));
        assert!(matches(
            "cni del c1 --node node-1 --ifname eth0",
            "cni del c1 --node node-1"
        ));
    }

    #[test]
    fn other_values_other_paths_and_bad_lines_do_not_match() {
        assert!(!matches("trace web db --port 53/UDP", "trace web db"));
        assert!(!matches(
            "reach web db --port 5432",
            "reach web api --port 5432"
        ));
        assert!(!matches("trace db web", "trace web db"));
        assert!(!matches("pod delete web -n team", "pod delete web"));
        assert!(!matches("show routes", "show wire"));
        assert!(!matches("echo trace web db", "trace web db"));
        assert!(!matches("trace web", "trace web db"));
        assert!(Shape::of("").is_none());
        assert!(Shape::of("pod frobnicate").is_none());
    }
}
