//! Tab completion and usage hints, driven by the one clap tree: verbs, subcommands and
//! flags come from the grammar, values from `value_enum`s, and names of live objects from
//! the engine through [`Names`]. No terminal here: the REPL's rustyline helper and the
//! dashboard's prompt both call these functions, and the tests drive them with plain strings.

use super::help::{self, find_sub, placeholder, usage_line};
use crate::cluster::ApiKind;
use clap::Arg;

/// What completion asks the engine for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// The names of the objects of a kind.
    Objects(ApiKind),
    /// The names of the objects of the kind a word names as typed (`po`, `pvc`, or a
    /// command's name such as `snapshot`); none when the word names no kind.
    ObjectsOf(&'a str),
    /// The container IDs in the nodes' libcni result caches.
    Containers,
    /// The words that name a kind (`get <Tab>`).
    Kinds,
    /// The ids of the lessons (`lesson start <Tab>`): the lesson desk knows them, the lab
    /// does not.
    Lessons,
}

/// Where live names come from (the lab implements it; tests may fake it).
pub trait Names {
    /// The names wanted, sorted.
    fn names(&self, wanted: Wanted<'_>) -> Vec<String>;
}

/// No live names (completion from the grammar alone).
#[cfg(test)]
pub(crate) struct NoNames;

#[cfg(test)]
impl Names for NoNames {
    fn names(&self, _wanted: Wanted<'_>) -> Vec<String> {
        Vec::new()
    }
}

/// The result of a completion request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// Byte offset in the line where the word being completed starts.
    pub start: usize,
    /// Candidates for that word, sorted; each is the whole word.
    pub candidates: Vec<String>,
    /// The word is a file path (the front end may complete it from the file system).
    pub wants_path: bool,
}

/// A usage hint shown after the cursor: `display` is the grey text; its first
/// `complete_up_to` bytes may be accepted as input (Right arrow in the REPL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The text shown after the cursor.
    pub display: String,
    /// How many bytes of `display` are real input (the rest is usage).
    pub complete_up_to: usize,
}

/// What is known about the line before the word under the cursor.
struct Walk {
    /// Commands chosen so far (without the root).
    path: Vec<&'static clap::Command>,
    /// The option whose value the current word is.
    expecting: Option<&'static Arg>,
    /// Positional words given to the current command.
    positionals: Vec<String>,
    /// Ids of options already given.
    used: Vec<String>,
    /// The line names something unknown: complete nothing.
    lost: bool,
}

fn find_flag(cmd: &'static clap::Command, word: &str) -> Option<&'static Arg> {
    let name = word.split('=').next().unwrap_or(word);
    if let Some(long) = name.strip_prefix("--") {
        cmd.get_arguments().find(|a| {
            a.get_long() == Some(long)
                || a.get_visible_aliases().is_some_and(|al| al.contains(&long))
        })
    } else {
        let c = name.strip_prefix('-')?.chars().next()?;
        cmd.get_arguments().find(|a| a.get_short() == Some(c))
    }
}

fn takes_value(a: &Arg) -> bool {
    a.get_num_args().is_some_and(|n| n.takes_values())
}

fn walk(words: &[String]) -> Walk {
    let mut w = Walk {
        path: Vec::new(),
        expecting: None,
        positionals: Vec::new(),
        used: Vec::new(),
        lost: false,
    };
    let mut cmd: &'static clap::Command = help::tree();
    // A leading `kubectl` word is dropped, as `command::parse` drops it.
    let words = match words.split_first() {
        Some((first, rest)) if first == super::KUBECTL => rest,
        _ => words,
    };
    for word in words {
        if w.expecting.take().is_some() {
            continue;
        }
        if word.starts_with('-') && word.len() > 1 {
            match find_flag(cmd, word) {
                Some(a) => {
                    w.used.push(a.get_id().to_string());
                    if takes_value(a) && !word.contains('=') {
                        w.expecting = Some(a);
                    }
                }
                None => w.lost = true,
            }
        } else if cmd.has_subcommands() {
            match find_sub(cmd, word) {
                Some(s) => {
                    w.path.push(s);
                    cmd = s;
                }
                None => {
                    w.lost = true;
                    break;
                }
            }
        } else {
            w.positionals.push(word.clone());
        }
    }
    w
}

/// The command the walk ended on (the root when nothing was chosen).
fn current(w: &Walk) -> &'static clap::Command {
    w.path.last().copied().unwrap_or(help::tree())
}

/// Split the text before the cursor into finished words and the word being typed (with its
/// byte offset). `None` inside an open quote.
fn split_prefix(prefix: &str) -> Option<(Vec<String>, String, usize)> {
    let start = prefix
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let done = shlex::split(prefix.get(..start)?)?;
    let cur = prefix.get(start..)?.to_string();
    if cur.contains(['"', '\'']) {
        return None;
    }
    Some((done, cur, start))
}

/// The positional argument at index `i` of `cmd` (the last one if it takes many values).
fn positional(cmd: &clap::Command, i: usize) -> Option<&Arg> {
    let mut ps: Vec<&Arg> = cmd.get_positionals().collect();
    ps.sort_by_key(|a| a.get_index());
    ps.get(i).copied().or_else(|| {
        ps.last()
            .copied()
            .filter(|a| a.get_num_args().is_some_and(|n| n.max_values() > 1))
    })
}

/// Candidate values for `arg` of the command at the end of `w`.
fn values(w: &Walk, arg: &Arg, names: &dyn Names) -> (Vec<String>, bool) {
    let pv: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    if !pv.is_empty() {
        return (pv, false);
    }
    let id = arg.get_id().as_str();
    let top = w.path.first().map(|c| c.get_name()).unwrap_or("");
    let leaf = w.path.last().map(|c| c.get_name()).unwrap_or("");
    let list = match id {
        "node" => names.names(Wanted::Objects(ApiKind::Node)),
        "ns" => names.names(Wanted::Objects(ApiKind::Namespace)),
        "container" => names.names(Wanted::Containers),
        "src" | "dst" => names.names(Wanted::Objects(ApiKind::Pod)),
        "kind" => names.names(Wanted::Kinds),
        "topic" => super::explain::topic_names(),
        "file" => return (Vec::new(), true),
        "id" if top == "lesson" => names.names(Wanted::Lessons),
        "words" if top == "help" => {
            let sub = walk(&w.positionals);
            if sub.lost {
                Vec::new()
            } else {
                subcommand_names(current(&sub), sub.path.is_empty())
            }
        }
        "name" if matches!(leaf, "create" | "add") => Vec::new(),
        "name" | "names" if matches!(top, "get" | "describe" | "delete") => {
            match w.positionals.first() {
                Some(kind) => names.names(Wanted::ObjectsOf(kind)),
                None => Vec::new(),
            }
        }
        "name" => names.names(Wanted::ObjectsOf(top)),
        "pvc" | "pvcs" | "claim" | "from_pvc" => {
            names.names(Wanted::Objects(ApiKind::PersistentVolumeClaim))
        }
        "from_snapshot" | "snapshot" => names.names(Wanted::Objects(ApiKind::VolumeSnapshot)),
        "class" => names.names(Wanted::Objects(ApiKind::StorageClass)),
        // `pod create --networks`: the NADs a pod can name.
        "networks" => names.names(Wanted::Objects(ApiKind::NetworkAttachmentDefinition)),
        other => names.names(Wanted::ObjectsOf(other)),
    };
    (list, false)
}

fn subcommand_names(cmd: &clap::Command, root: bool) -> Vec<String> {
    let mut v: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    if root {
        v.extend(help::REPL_ONLY.iter().map(|(n, _)| n.to_string()));
        v.push("exit".to_string());
    }
    v
}

/// Candidates for the word under the cursor at byte `pos` of `line`.
pub fn complete(line: &str, pos: usize, names: &dyn Names) -> Completion {
    let Some(prefix) = line.get(..pos) else {
        return Completion::default();
    };
    let Some((done, cur, start)) = split_prefix(prefix) else {
        return Completion::default();
    };
    let w = walk(&done);
    if w.lost {
        return Completion {
            start,
            ..Completion::default()
        };
    }
    let cmd = current(&w);
    let (mut list, wants_path) = if let Some(a) = w.expecting {
        values(&w, a, names)
    } else if cur.starts_with('-') {
        let flags = cmd
            .get_arguments()
            .filter(|a| !a.is_positional() && !a.is_hide_set())
            .filter(|a| {
                matches!(a.get_action(), clap::ArgAction::Append)
                    || !w.used.iter().any(|u| u == a.get_id().as_str())
            })
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        (flags, false)
    } else if cmd.has_subcommands() {
        let mut v = subcommand_names(cmd, w.path.is_empty());
        // An alias the learner started typing (`netpol`) when no name matches it.
        if !v.iter().any(|n| n.starts_with(&cur)) {
            for s in cmd.get_subcommands() {
                v.extend(s.get_visible_aliases().map(String::from));
            }
        }
        (v, false)
    } else {
        match positional(cmd, w.positionals.len()) {
            Some(a) => values(&w, a, names),
            None => (Vec::new(), false),
        }
    };
    list.retain(|c| c.starts_with(&cur));
    list.sort();
    list.dedup();
    Completion {
        start,
        candidates: list,
        wants_path,
    }
}

/// The rest of a leaf command's usage, given what was typed: positionals not yet given,
/// then required flags not yet given, then `[options]` if any optional flag is left.
fn usage_tail(cmd: &clap::Command, w: &Walk) -> String {
    let mut parts = Vec::new();
    let mut ps: Vec<&Arg> = cmd.get_positionals().collect();
    ps.sort_by_key(|a| a.get_index());
    for a in ps.iter().skip(w.positionals.len()) {
        let p = placeholder(a);
        parts.push(if a.is_required_set() {
            p
        } else {
            format!("[{p}]")
        });
    }
    let mut optional = false;
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && a.get_id() != "help")
    {
        if w.used.iter().any(|u| u == a.get_id().as_str()) {
            continue;
        }
        if a.is_required_set() {
            parts.push(help::flag_text(a));
        } else {
            optional = true;
        }
    }
    if optional {
        parts.push("[options]".to_string());
    }
    parts.join(" ")
}

fn group_tail(cmd: &clap::Command) -> String {
    cmd.get_subcommands()
        .map(|s| s.get_name())
        .collect::<Vec<_>>()
        .join("|")
}

/// A usage hint for the line with the cursor at its end: after `pod create ` it is
/// `NAME --node NODE [options]`; after `pod cr` it is `eate NAME --node NODE [options]`
/// (of which `eate ` may be accepted). `None` when there is nothing useful to say.
pub fn hint(line: &str, pos: usize) -> Option<Hint> {
    if pos != line.len() || line.trim().is_empty() {
        return None;
    }
    let (done, cur, _) = split_prefix(line)?;
    let w = walk(&done);
    if w.lost {
        return None;
    }
    let cmd = current(&w);
    if let Some(a) = w.expecting {
        if cur.is_empty() {
            return Some(Hint {
                display: placeholder(a),
                complete_up_to: 0,
            });
        }
        return None;
    }
    if cur.starts_with('-') {
        return None;
    }
    if cmd.has_subcommands() {
        if cur.is_empty() {
            return Some(Hint {
                display: group_tail(cmd),
                complete_up_to: 0,
            });
        }
        let matches: Vec<&clap::Command> = cmd
            .get_subcommands()
            .filter(|s| s.get_name().starts_with(&cur))
            .collect();
        let [only] = matches.as_slice() else {
            return None;
        };
        let rest = only.get_name().get(cur.len()..)?;
        let mut path = w.path.clone();
        path.push(only);
        let tail = if only.has_subcommands() {
            group_tail(only)
        } else {
            let full = usage_line(&path);
            let head = path
                .iter()
                .map(|c| c.get_name())
                .collect::<Vec<_>>()
                .join(" ");
            full.get(head.len()..).unwrap_or("").trim().to_string()
        };
        if rest.is_empty() && tail.is_empty() {
            return None;
        }
        let display = if tail.is_empty() {
            rest.to_string()
        } else {
            format!("{rest} {tail}")
        };
        let complete_up_to = if tail.is_empty() {
            rest.len()
        } else {
            rest.len() + 1
        };
        return Some(Hint {
            display,
            complete_up_to,
        });
    }
    if !cur.is_empty() {
        return None;
    }
    let tail = usage_tail(cmd, &w);
    if tail.is_empty() {
        None
    } else {
        Some(Hint {
            display: tail,
            complete_up_to: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(line: &str, names: &dyn Names) -> Vec<String> {
        complete(line, line.len(), names).candidates
    }

    #[test]
    fn verbs_and_subcommands_come_from_the_grammar() {
        assert_eq!(cands("po", &NoNames), vec!["pod", "policy"]);
        assert_eq!(cands("pod cr", &NoNames), vec!["create"]);
        assert_eq!(cands("pod ", &NoNames), vec!["create", "delete", "list"]);
        assert_eq!(cands("cni conf ", &NoNames), vec!["load", "remove", "show"]);
        assert!(cands("", &NoNames).contains(&"explain".to_string()));
        assert!(cands("", &NoNames).contains(&"quit".to_string()));
        // An alias is offered when only an alias matches.
        assert_eq!(cands("netp", &NoNames), vec!["netpol"]);
        let c = complete("pod cr", 6, &NoNames);
        assert_eq!(c.start, 4);
        // After a leading `kubectl`, the same as without it.
        assert_eq!(cands("kubectl pod cr", &NoNames), vec!["create"]);
        assert_eq!(
            cands("kubectl get pods -o ", &NoNames),
            cands("get pods -o ", &NoNames)
        );
        assert_eq!(
            hint("kubectl pod create ", 19).map(|h| h.display),
            hint("pod create ", 11).map(|h| h.display)
        );
    }

    #[test]
    fn flags_and_enum_values_come_from_the_grammar() {
        let f = cands("pod create web --", &NoNames);
        assert!(f.contains(&"--node".to_string()), "{f:?}");
        assert!(f.contains(&"--bandwidth-ingress".to_string()), "{f:?}");
        assert!(!f.contains(&"--help".to_string()) || f.len() > 1);
        // A flag given once is not offered again; a repeatable one is.
        let f = cands("pod create web --node node-1 --label a=b --", &NoNames);
        assert!(!f.contains(&"--node".to_string()), "{f:?}");
        assert!(f.contains(&"--label".to_string()), "{f:?}");
        assert_eq!(
            cands("get pods -o ", &NoNames),
            vec![
                "custom-columns=",
                "json",
                "jsonpath=",
                "name",
                "wide",
                "yaml"
            ]
        );
        let f = cands("get pods -", &NoNames);
        assert!(f.contains(&"--all-namespaces".to_string()), "{f:?}");
        assert!(f.contains(&"--selector".to_string()), "{f:?}");
        assert_eq!(cands("mode s", &NoNames), vec!["step"]);
    }

    #[test]
    fn nonsense_completes_nothing_and_never_panics() {
        assert!(cands("frob ", &NoNames).is_empty());
        assert!(cands("echo 'unclosed ", &NoNames).is_empty());
        assert!(complete("pod", 99, &NoNames).candidates.is_empty());
        assert!(complete("héllo wörld", 2, &NoNames).candidates.is_empty());
        for line in [
            "",
            " ",
            "--",
            "pod --node",
            "get pods -o",
            "\"",
            "help help help",
        ] {
            let _ = complete(line, line.len(), &NoNames);
            let _ = hint(line, line.len());
        }
    }

    #[test]
    fn hints_show_the_rest_of_the_usage() {
        let h = hint("pod create ", 11).unwrap();
        assert_eq!(h.display, "NAME [options]");
        let h = hint("pod create web ", 15).unwrap();
        assert_eq!(h.display, "[options]");
        let h = hint("pod cr", 6).unwrap();
        assert_eq!(h.display, "eate NAME [options]");
        assert_eq!(&h.display[..h.complete_up_to], "eate ");
        assert_eq!(hint("pod ", 4).unwrap().display, "create|delete|list");
        assert_eq!(hint("pod create web --node ", 22).unwrap().display, "NODE");
        assert!(hint("reset --empty", 13).is_none());
        assert!(hint("pod create web", 3).is_none());
        assert!(hint("frob ", 5).is_none());
    }

    proptest::proptest! {
        #[test]
        fn completion_and_hints_never_panic(line in "[a-z -=\"'\\\\é·0-9]{0,40}", cut in 0usize..45) {
            let pos = cut.min(line.len() + 2);
            let _ = complete(&line, pos, &NoNames);
            let _ = hint(&line, pos);
            let _ = super::super::parse(&line);
        }
    }
}
