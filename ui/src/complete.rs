//! Completion and usage hints for the dashboard's command line, derived from the one clap
//! tree (`CommandLine::command()`) plus names the lab knows (nodes, pods, namespaces), so
//! new commands complete without changes here.
//!
//! Candidates come from the shared completer (`command::complete`, the REPL's too); this
//! module applies them to the prompt and words the dashboard's usage hint.

use crate::Lab;
use crate::host::Host;
use clap::CommandFactory;
use lab_engine::command::CommandLine;

/// Candidates for the word being typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// Byte offset in the line where the word being completed starts.
    pub start: usize,
    /// Whole-word candidates, in a useful order (the grammar's order, or sorted names).
    pub candidates: Vec<String>,
}

impl Completion {
    /// The line after completing: the only candidate plus a space, or the longest common
    /// prefix of several. `None` when nothing would change.
    pub fn apply(&self, line: &str) -> Option<String> {
        let head = line.get(..self.start)?;
        let word = line.get(self.start..)?;
        match self.candidates.as_slice() {
            [] => None,
            // A directory goes on being typed; any other word is done.
            [one] if one.ends_with('/') => Some(format!("{head}{one}")),
            [one] => Some(format!("{head}{one} ")),
            many => {
                let common = common_prefix(many);
                (common.len() > word.len()).then(|| format!("{head}{common}"))
            }
        }
    }
}

fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut end = first.len();
    for w in &words[1..] {
        end = end.min(
            first
                .char_indices()
                .zip(w.chars())
                .find(|((_, a), b)| a != b)
                .map_or(end.min(w.len()), |((i, _), _)| i),
        );
    }
    first[..end].to_string()
}

/// How far a line got in the grammar.
struct Walk {
    /// Subcommand names from the root.
    path: Vec<String>,
    /// The deepest command reached.
    cmd: clap::Command,
    /// The option whose value is being typed, if any.
    value_of: Option<clap::Arg>,
    /// Positional words given so far to `cmd`.
    positionals: Vec<String>,
    /// False when a word named no subcommand (nothing to complete).
    valid: bool,
}

fn walk(words: &[&str]) -> Walk {
    let mut w = Walk {
        path: Vec::new(),
        cmd: CommandLine::command(),
        value_of: None,
        positionals: Vec::new(),
        valid: true,
    };
    for word in words {
        if w.value_of.take().is_some() {
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let arg = w
                .cmd
                .get_arguments()
                .find(|a| {
                    a.get_long() == Some(name)
                        || a.get_all_aliases().is_some_and(|al| al.contains(&name))
                })
                .cloned();
            if let Some(a) = arg
                && takes_value(&a)
                && !inline
            {
                w.value_of = Some(a);
            }
            continue;
        }
        if let Some(short) = word.strip_prefix('-')
            && let Some(c) = short.chars().next()
        {
            let arg = w
                .cmd
                .get_arguments()
                .find(|a| a.get_short() == Some(c))
                .cloned();
            if let Some(a) = arg
                && takes_value(&a)
                && short.len() == c.len_utf8()
            {
                w.value_of = Some(a);
            }
            continue;
        }
        if w.cmd.has_subcommands() {
            match w.cmd.find_subcommand(word).cloned() {
                Some(sub) => {
                    w.path.push(sub.get_name().to_string());
                    w.cmd = sub;
                    w.positionals.clear();
                }
                None => {
                    w.valid = false;
                    break;
                }
            }
            continue;
        }
        w.positionals.push((*word).to_string());
    }
    w
}

fn takes_value(a: &clap::Arg) -> bool {
    a.get_num_args().is_none_or(|n| n.takes_values())
        && !matches!(
            a.get_action(),
            clap::ArgAction::SetTrue
                | clap::ArgAction::SetFalse
                | clap::ArgAction::Count
                | clap::ArgAction::Help
                | clap::ArgAction::HelpShort
                | clap::ArgAction::HelpLong
                | clap::ArgAction::Version
        )
}

/// Split off the word being completed: (finished words, the partial word, its start).
fn split_head(head: &str) -> (Vec<&str>, &str, usize) {
    let start = head.rfind(char::is_whitespace).map_or(0, |i| {
        i + head[i..].chars().next().map_or(1, char::len_utf8)
    });
    let words: Vec<&str> = head[..start].split_whitespace().collect();
    (words, &head[start..], start)
}

/// The lab's live names and the lesson ids, for the shared completer.
struct LabNames<'a> {
    lab: &'a Lab,
    lessons: &'a [String],
}

impl lab_engine::command::complete::Names for LabNames<'_> {
    fn names(&self, wanted: lab_engine::command::complete::Wanted<'_>) -> Vec<String> {
        match wanted {
            lab_engine::command::complete::Wanted::Lessons => self.lessons.to_vec(),
            other => self.lab.completion_names(other),
        }
    }
}

/// The candidates for the word at the end of `head` (the text before the cursor): the
/// shared completer's (`command::complete`, the REPL's too), and the host's file names
/// where the word is a path (`apply -f`, `cni conf load`, `--preset`); `lessons` are the
/// ids `lesson start|play <Tab>` offers.
pub fn complete(lab: &Lab, lessons: &[String], head: &str, host: &dyn Host) -> Completion {
    let c = lab_engine::command::complete::complete(head, head.len(), &LabNames { lab, lessons });
    let mut candidates = if c.wants_path {
        host.path_candidates(head.get(c.start..).unwrap_or(""))
    } else {
        c.candidates
    };
    candidates.truncate(MAX_CANDIDATES);
    Completion {
        start: c.start,
        candidates,
    }
}

/// At most this many candidates are offered (names can number in the thousands).
pub const MAX_CANDIDATES: usize = 200;

/// A one-line usage hint for what is typed so far, from the grammar: the command path, its
/// usage and what it does (`pod create [OPTIONS] --node <NODE> <NAME> — Create a pod …`).
/// `None` before the first word or after an unknown one.
pub fn usage_hint(head: &str) -> Option<String> {
    // Working the usage out builds the command tree: on every key of a long paste that
    // made typing slow. No command's words are that long before its hint stops helping.
    if head.len() > HINT_MAX_LINE {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    // The usage of the deepest command the finished words reach; a partial last word only
    // counts once it names a subcommand.
    let w = walk(&words);
    let w = if w.valid && !w.path.is_empty() {
        w
    } else {
        let (done, _, _) = split_head(head);
        let w = walk(&done);
        if !w.valid || w.path.is_empty() {
            return None;
        }
        w
    };
    let mut cmd = w.cmd.clone();
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim().strip_prefix("Usage: ").unwrap_or(usage.trim());
    let rest = usage.split_once(' ').map_or("", |(_, r)| r);
    let mut hint = w.path.join(" ");
    if !rest.is_empty() {
        hint.push(' ');
        hint.push_str(rest);
    }
    if let Some(about) = w.cmd.get_about() {
        hint.push_str(" — ");
        hint.push_str(&about.to_string());
    }
    Some(hint)
}

/// Lines longer than this get no usage hint (see [`usage_hint`]).
pub const HINT_MAX_LINE: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::NoHost;

    fn cands(lab: &Lab, line: &str) -> Vec<String> {
        complete(lab, &[], line, &NoHost).candidates
    }

    #[test]
    fn verbs_come_from_the_grammar() {
        let lab = Lab::new();
        let c = cands(&lab, "");
        assert!(
            c.contains(&"pod".to_string()) && c.contains(&"node".to_string()),
            "{c:?}"
        );
        assert_eq!(cands(&lab, "po"), ["pod", "policy"]);
        assert_eq!(cands(&lab, "pod c"), ["create"]);
        assert_eq!(cands(&lab, "show ip"), ["ipam", "ipset", "iptables"]);
    }

    #[test]
    fn flags_and_values() {
        let lab = Lab::new();
        let c = cands(&lab, "pod create web --n");
        assert!(
            c.contains(&"--node".to_string()) && c.contains(&"--ns".to_string()),
            "{c:?}"
        );
        assert_eq!(cands(&lab, "pod create web --node "), ["node-1", "node-2"]);
        assert_eq!(
            cands(&lab, "pod create web --node node-2 --node n"),
            ["node-1", "node-2"]
        );
        assert_eq!(cands(&lab, "mode "), ["auto", "step"]);
        assert_eq!(
            cands(&lab, "get po -o "),
            [
                "custom-columns=",
                "json",
                "jsonpath=",
                "name",
                "wide",
                "yaml"
            ]
        );
        let ids = ["ch2-core-ideas".to_string(), "ch7-hands-on".to_string()];
        for line in ["lesson start ch", "lesson play c", "kubectl lesson start "] {
            assert_eq!(
                complete(&lab, &ids, line, &NoHost).candidates,
                ids,
                "{line}"
            );
        }
        assert_eq!(
            complete(&lab, &ids, "lesson start ch7", &NoHost).candidates,
            ["ch7-hands-on"]
        );
        assert!(cands(&lab, "lesson start ").is_empty());
    }

    #[test]
    fn names_from_the_lab() {
        let mut lab = Lab::new();
        lab.execute("pod create web --node node-1").unwrap();
        lab.execute("pod create db --node node-2").unwrap();
        assert_eq!(cands(&lab, "describe pod "), ["db", "web"]);
        assert_eq!(cands(&lab, "describe no node-"), ["node-1", "node-2"]);
        assert_eq!(cands(&lab, "pod delete w"), ["web"]);
        assert_eq!(cands(&lab, "show ipam "), ["node-1", "node-2"]);
        assert!(cands(&lab, "get p").contains(&"pods".to_string()));
        assert!(cands(&lab, "bogus ").is_empty());
    }

    #[test]
    fn apply_completes_unique_words_and_common_prefixes() {
        let lab = Lab::new();
        let line = "pod cr";
        assert_eq!(
            complete(&lab, &[], line, &NoHost).apply(line).as_deref(),
            Some("pod create ")
        );
        let line = "pod create web --node no";
        assert_eq!(
            complete(&lab, &[], line, &NoHost).apply(line).as_deref(),
            Some("pod create web --node node-")
        );
        let line = "zzz";
        assert_eq!(complete(&lab, &[], line, &NoHost).apply(line), None);
    }

    #[test]
    fn paths_complete_from_the_host() {
        struct Uploads;
        impl Host for Uploads {
            fn control(&mut self, _: &Lab, _: &str) -> Option<Result<String, String>> {
                None
            }
            fn tick(&mut self, _: &mut Lab) -> Vec<lab_engine::render::Line> {
                Vec::new()
            }
            fn path_candidates(&self, prefix: &str) -> Vec<String> {
                ["net.conflist", "web.yaml"]
                    .into_iter()
                    .filter(|f| f.starts_with(prefix))
                    .map(str::to_string)
                    .collect()
            }
        }
        let lab = Lab::new();
        let line = "apply -f we";
        assert_eq!(
            complete(&lab, &[], line, &Uploads).apply(line).as_deref(),
            Some("apply -f web.yaml ")
        );
        assert!(complete(&lab, &[], line, &NoHost).candidates.is_empty());
    }

    #[test]
    fn usage_hints_name_the_required_parts() {
        let h = usage_hint("pod create ").unwrap();
        assert!(h.starts_with("pod create "), "{h}");
        assert!(h.contains("--node <NODE>") && h.contains("<NAME>"), "{h}");
        assert!(usage_hint("").is_none());
        assert!(usage_hint("zzz ").is_none());
        assert!(usage_hint("pod cre").unwrap().starts_with("pod "));
    }
}
