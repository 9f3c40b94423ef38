//! Decoys: ways to try to pass a step without doing it, which the linter plays against every
//! step's checks from the state the step starts in. A check must stay false after each:
//!
//! - **one command left out, and echo**: every reference command but one, then `echo` of
//!   every text the checks and the commands name (the words a learner would copy from the
//!   step instead of looking) — so every command the task asks for must matter, a view as
//!   much as a change;
//! - **failure**: every reference command, failing (a usage error: nothing runs);
//! - **wrong object**: every reference command with a node or a pod swapped for another one
//!   the lab has (the right view of the wrong node, a pod on the wrong node).
//!
//! A step whose checks hold after a decoy is a lint error naming the decoy.

use super::check::{self, Check, Observed};
use super::model::Step;
use crate::engine::Lab;

/// Why a decoy completed the step, if one did (`None`: every decoy was caught).
pub(crate) fn passing_decoy(step: &Step, before: &Lab) -> Option<String> {
    if step.checks.is_empty() {
        return None;
    }
    let echo = echo_lines(step);
    let commands: Vec<&str> = step
        .commands
        .iter()
        .filter(|c| !c.expect_failure)
        .map(|c| c.text.as_str())
        .collect();
    for (i, left_out) in commands.iter().enumerate() {
        let mut lines: Vec<String> = commands
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, c)| c.to_string())
            .collect();
        lines.extend(echo.iter().cloned());
        if holds_after(&step.checks, before, &lines) {
            return Some(format!(
                "its checks hold without `{left_out}` (the other commands, then `echo` of the checks' words): every command the task asks for must be checked, by the state it makes or by what its view showed"
            ));
        }
    }
    if commands.is_empty() && holds_after(&step.checks, before, &echo) {
        return Some(
            "its checks hold after only `echo` of their words: a check must read what a view showed, not text".into(),
        );
    }
    let failing: Vec<String> = step
        .commands
        .iter()
        .filter(|c| !c.expect_failure)
        .map(|c| format!("{} --decoy-no-such-flag", c.text))
        .collect();
    if !failing.is_empty() && holds_after(&step.checks, before, &failing) {
        return Some(
            "its checks hold after its commands all failed (a usage error each): a failed command shows nothing".into(),
        );
    }
    for (from, to) in swaps(step, before) {
        let moved: Vec<String> = step
            .commands
            .iter()
            .map(|c| swap_word(&c.text, &from, &to))
            .collect();
        let Some(changed) = moved
            .iter()
            .zip(&step.commands)
            .find(|(m, c)| **m != c.text)
            .map(|(m, _)| m.clone())
        else {
            continue;
        };
        if holds_after(&step.checks, before, &moved) {
            return Some(format!(
                "its checks hold after its commands with {from} swapped for {to} (`{changed}`): a check must name the object it is about"
            ));
        }
    }
    None
}

/// Whether every check holds after running `lines` on a copy of `before`.
fn holds_after(checks: &[Check], before: &Lab, lines: &[String]) -> bool {
    let mut lab = before.clone();
    // As lesson code runs: no file is read (`cni conf load` takes the built-in example).
    lab.swap_replay_files(Some(Default::default()));
    let mut seen = Observed::default();
    for l in lines {
        let ran = lab.run(l);
        seen.record(l, &ran);
    }
    check::eval_all(checks, &lab, &seen).is_ok()
}

/// `echo` lines carrying every quoted text of the checks and every reference command: one
/// line with all of them (what a check of the last output would read), then one each.
fn echo_lines(step: &Step) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in &step.checks {
        words.push(c.text.clone());
        words.extend(c.args.iter().cloned());
    }
    for c in &step.commands {
        words.push(c.text.clone());
    }
    let each: Vec<String> = words
        .iter()
        .filter_map(|w| shlex::try_quote(w).ok().map(|q| format!("echo {q}")))
        .collect();
    let all = words
        .iter()
        .filter_map(|w| shlex::try_quote(w).ok())
        .collect::<Vec<_>>()
        .join(" ");
    let mut lines = each;
    lines.push(format!("echo {all}"));
    lines
}

/// Pairs (a node or pod the step's commands name, another one the lab has) to swap.
fn swaps(step: &Step, lab: &Lab) -> Vec<(String, String)> {
    let nodes: Vec<String> = lab.node_names().map(String::from).collect();
    let pods: Vec<String> = crate::engine::query::pod_names(lab)
        .map(String::from)
        .collect();
    let mut out = Vec::new();
    for c in &step.commands {
        let Ok(words) = crate::command::split(&c.text) else {
            continue;
        };
        for w in &words {
            for group in [&nodes, &pods] {
                if group.contains(w) {
                    if let Some(other) = group.iter().find(|o| *o != w) {
                        let pair = (w.clone(), other.clone());
                        if !out.contains(&pair) {
                            out.push(pair);
                        }
                    }
                }
            }
        }
    }
    out
}

/// `line` with every word equal to `from` (alone, or as `ns/from`) replaced by `to`.
fn swap_word(line: &str, from: &str, to: &str) -> String {
    let Ok(words) = crate::command::split(line) else {
        return line.to_string();
    };
    let swapped: Vec<String> = words
        .iter()
        .map(|w| {
            if w == from {
                to.to_string()
            } else if let Some((ns, _)) = w.split_once('/').filter(|(_, n)| *n == from) {
                format!("{ns}/{to}")
            } else {
                w.clone()
            }
        })
        .collect();
    shlex::try_join(swapped.iter().map(String::as_str)).unwrap_or_else(|_| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_a_name_touches_whole_words_only() {
        assert_eq!(
            swap_word("trace web web-2 --port 80", "web", "db"),
            "trace db web-2 --port 80"
        );
        assert_eq!(
            swap_word("show routes node-1", "node-1", "node-2"),
            "show routes node-2"
        );
        assert_eq!(
            swap_word("trace default/web db", "web", "api"),
            "trace default/api db"
        );
    }
}

#[cfg(test)]
mod decoy_tests {
    use super::*;

    /// A one-step lesson on a VXLAN cluster whose task is to trace a too-big packet.
    fn lesson(checks: &str) -> crate::lesson::Lesson {
        let text = format!(
            "# Decoys\n\n```lesson\nformat_version: 1\nid: decoys\ntitle: Decoys\nchapter: 4\n```\n\n\
             ## Step 1 · Too big\n\nSection: 4.3\n\nText.\n\n**Task:** Trace it.\n\n\
             ```lab\npod create web --node node-1\npod create db --node node-2\nnetwork use flannel-vxlan\ntrace web db --size 1500\n```\n\n\
             ```check\n{checks}\n```\n\n```hint\nOne.\n```\n\n```hint\nTwo.\n```\n"
        );
        crate::lesson::parse::parse("decoys.md", &text).expect("parses")
    }

    fn decoy(checks: &str) -> Option<String> {
        let l = lesson(checks);
        passing_decoy(&l.steps[0], &Lab::new())
    }

    #[test]
    fn checks_of_printed_text_are_caught_and_checks_of_facts_are_not() {
        // The old way: that the trace ran, which it does on host-gw too.
        let old = decoy("pod db phase Running\ncommand ran \"trace web db --size 1500\"");
        let why = old.expect("a host-gw trace passes a check of the command alone");
        assert!(why.contains("without `network use flannel-vxlan`"), "{why}");
        // Facts: the trace of that flow stopped at an MTU of 1450.
        assert_eq!(
            decoy("pod db phase Running\nsaw trace \"web db --size 1500\" mtu 1450"),
            None
        );
        // A trace that stays on one node is delivered: the wrong node is caught too.
        assert_eq!(
            decoy(
                "pod web phase Running\npod db phase Running\nsaw trace \"web db --size 1500\" dropped"
            ),
            None
        );
        // A check that names no node accepts a pod on the wrong one.
        let mut l = lesson("pod web phase Running");
        l.steps[0].commands.truncate(1);
        let why = passing_decoy(&l.steps[0], &Lab::new()).expect("the wrong node passes");
        assert!(why.contains("node-1 swapped for node-2"), "{why}");
        l.steps[0]
            .checks
            .push(crate::lesson::check::parse(1, "pod web node node-1").unwrap());
        assert_eq!(passing_decoy(&l.steps[0], &Lab::new()), None);
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;

    fn step(commands: &str, checks: &str) -> crate::lesson::Lesson {
        let text = format!(
            "# V\n\n```lesson\nformat_version: 1\nid: v\ntitle: V\nchapter: 4\n```\n\n\
             ## Step 1 · S\n\nSection: 4.3\n\nText.\n\n**Task:** Do it.\n\n\
             ```lab\n{commands}\n```\n\n```check\n{checks}\n```\n\n```hint\nOne.\n```\n\n```hint\nTwo.\n```\n"
        );
        crate::lesson::parse::parse("v.md", &text).expect("parses")
    }

    #[test]
    fn a_description_s_events_and_a_listing_are_facts_of_their_object() {
        let l = step(
            "node add tiny --cidr 10.244.9.0/30\npod create t1 --node tiny\npod create t2 --node tiny\ndescribe pod t2",
            "pod t2 status ContainerCreating\nsaw describe pod t2 event FailedCreatePodSandBox \"no IP addresses available\"",
        );
        assert_eq!(passing_decoy(&l.steps[0], &Lab::new()), None);
        // `describe pod t1` is a view of the wrong object: t1 runs, its events say so.
        let mut lab = Lab::new();
        for c in &l.steps[0].commands[..3] {
            lab.run(&c.text);
        }
        let mut seen = Observed::default();
        let ran = lab.run("describe pod t1");
        seen.record("describe pod t1", &ran);
        let c = &l.steps[0].checks[1];
        assert!(!c.eval(&lab, &seen).holds);
        let ran = lab.run("describe pod t2");
        seen.record("describe pod t2", &ran);
        assert!(c.eval(&lab, &seen).holds, "{}", c.eval(&lab, &seen).actual);
        // A listing names its objects and its format.
        let ran = lab.run("get pod t2 -o json");
        seen.record("get pod t2 -o json", &ran);
        let get = |t: &str| {
            crate::lesson::check::parse(1, t)
                .unwrap()
                .eval(&lab, &seen)
                .holds
        };
        assert!(get("saw get pod t2 json"));
        assert!(get("saw get po default/t2"));
        assert!(!get("saw get pod t1"));
        assert!(!get("saw get pod t2 yaml"));
    }
}
