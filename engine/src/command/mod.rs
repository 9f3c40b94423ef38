//! The command language: text → [`grammar::Command`]. One definition (a clap tree) serves
//! parsing, help and suggestions for every front end.

pub mod heredoc;
pub use heredoc::{Heredoc, heredoc_marker, heredoc_start, split_heredoc};
pub mod complete;
pub mod explain;
pub mod fast;
pub mod grammar;
pub mod help;
pub mod reference;
pub mod shape;

pub use grammar::{Command, CommandLine};

/// Why a line did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The line was a request for help; the text is the help to print (not a failure).
    Help(String),
    /// The line is malformed; the text says what was wrong and what is accepted.
    Invalid(String),
}

/// Split a line into words the way a shell would (quotes, backslashes).
pub fn split(line: &str) -> Result<Vec<String>, ParseError> {
    shlex::split(line).ok_or_else(|| {
        // An apostrophe inside a word (`c3's`, `isn't`) opens a quote, as in a shell.
        let b = line.as_bytes();
        let apostrophe = (1..b.len().saturating_sub(1)).any(|i| {
            b[i] == b'\'' && b[i - 1].is_ascii_alphanumeric() && b[i + 1].is_ascii_alphanumeric()
        });
        let hint = if apostrophe {
            "; an apostrophe inside a word opens a quote, as in a shell: write it \\' or put the words in double quotes"
        } else {
            ""
        };
        ParseError::Invalid(format!(
            "error: unbalanced quotes in the line (close every ' and \"){hint}"
        ))
    })
}

/// `line` without a leading `kubectl` word: every command may be typed as kubectl's
/// (`kubectl get pods -o wide` is `get pods -o wide`), so a learner's habit and a line
/// pasted from a handbook both work. `kubectl` alone is `help`, as kubectl alone prints
/// its help.
pub fn without_kubectl(line: &str) -> &str {
    let trimmed = line.trim_start();
    match trimmed.strip_prefix(KUBECTL) {
        Some("") => "help",
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => line,
    }
}

/// The subcommands a line names, by their names in the grammar (`lesson submit` for
/// `lesson submit`, `lesson submit x.json` and a bare `lesson submit` that misses its
/// FILE alike; an alias gives its command's name), whether or not the rest parses.
pub fn command_path(line: &str) -> Vec<String> {
    let line = without_kubectl(strip_comment(line));
    let words =
        split(line).unwrap_or_else(|_| line.split_whitespace().map(str::to_string).collect());
    let mut cmd = help::tree();
    let mut path = Vec::new();
    for w in &words {
        let Some(sub) = cmd.find_subcommand(w) else {
            break;
        };
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    path
}

/// Whether `line` is `lesson submit …` (handing the lesson in, not work on the cluster:
/// a lesson's transcript leaves it out and a grader does not replay it).
pub fn is_lesson_submit(line: &str) -> bool {
    command_path(line) == ["lesson", "submit"]
}

/// The word [`without_kubectl`] drops.
pub(crate) const KUBECTL: &str = "kubectl";

/// Parse one line (without its comment) into a command. Blank lines give `Ok(None)`; a
/// leading `kubectl` word is dropped ([`without_kubectl`]).
pub fn parse(line: &str) -> Result<Option<Command>, ParseError> {
    let line = without_kubectl(line);
    if let Some(command) = fast::parse(line)
        && grammar::check(&command).is_ok()
    {
        return Ok(Some(command));
    }
    parse_with_clap(line)
}

/// A prompt pasted in front of a command (`lab> get pods`, `lab[2 nodes · 0 pods]> get
/// pods`, `$ get pods`, `> get pods`, as the book's sessions, transcripts and other docs
/// show them): the command after it.
fn after_pasted_prompt(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let rest = if let Some(rest) = line.strip_prefix("$ ").or_else(|| line.strip_prefix("> ")) {
        rest
    } else if let Some(rest) = line.strip_prefix("lab>") {
        rest
    } else {
        let inner = line.strip_prefix("lab[")?;
        &inner[inner.find("]>")? + 2..]
    };
    Some(rest.trim()).filter(|c| !c.is_empty())
}

/// [`parse`] through the clap tree alone (what the fast path must agree with).
fn parse_with_clap(line: &str) -> Result<Option<Command>, ParseError> {
    if let Some(command) = after_pasted_prompt(line) {
        return Err(ParseError::Invalid(format!(
            "this line starts with the lab's prompt, which is not part of a command: type what follows it, {}",
            crate::util::clip::quoted(command)
        )));
    }
    let mut words = split(line)?;
    if words.is_empty() {
        return Ok(None);
    }
    if let Some(why) = grammar::broken_kind_name(&words) {
        return Err(ParseError::Invalid(why.to_string()));
    }
    grammar::split_kind_name(&mut words);
    grammar::lift_why_rule_flags(&mut words);
    switch_values(&mut words).map_err(ParseError::Invalid)?;
    match parse_cut(&words) {
        Ok(l) => {
            grammar::check(&l.command).map_err(ParseError::Invalid)?;
            Ok(Some(l.command))
        }
        // `pod create --help` and `pod` alone are the same as `help pod create`/`help pod`.
        Err((words, e)) => match help::from_clap_error(&words, &e) {
            ParseError::Help(w) => Ok(Some(Command::Help(grammar::HelpArgs {
                words: w.split_whitespace().map(String::from).collect(),
            }))),
            invalid => Err(invalid),
        },
    }
}

/// kubectl's `--FLAG=true` and `--FLAG=false` for a switch (a flag that takes no value,
/// such as `--overwrite`): Go's flag package reads a boolean flag so, and handbooks write
/// it. Before clap reads the words, `--FLAG=true` becomes `--FLAG` and `--FLAG=false` goes
/// (the switch off is the switch absent); Go's other spellings (`1`, `t`, `T`, `TRUE`,
/// `True` and their false) too. Any other value is refused, naming what a switch takes.
/// Words after `--` are left alone. Both [`parse`] and [`shape::Shape::of`] read lines so.
pub(crate) fn switch_values(words: &mut Vec<String>) -> Result<(), String> {
    let (path, used) = help::walk(words);
    let Some(cmd) = path.last().copied() else {
        return Ok(());
    };
    let mut i = used;
    while i < words.len() {
        if words[i] == "--" {
            break;
        }
        let Some((flag, value)) = words[i]
            .strip_prefix("--")
            .and_then(|rest| rest.split_once('='))
        else {
            i += 1;
            continue;
        };
        let switch = cmd.get_arguments().any(|a| {
            matches!(a.get_action(), clap::ArgAction::SetTrue)
                && (a.get_long() == Some(flag)
                    || a.get_all_aliases().is_some_and(|all| all.contains(&flag)))
        });
        if !switch {
            i += 1;
            continue;
        }
        match value {
            "true" | "True" | "TRUE" | "t" | "T" | "1" => {
                words[i] = format!("--{flag}");
                i += 1;
            }
            "false" | "False" | "FALSE" | "f" | "F" | "0" => {
                words.remove(i);
            }
            _ => {
                return Err(format!(
                    "invalid value {value:?} for --{flag}: it is a switch, on as --{flag} or --{flag}=true, off as --{flag}=false (or left out)\n{}",
                    help::usage_block(&path)
                ));
            }
        }
    }
    Ok(())
}

thread_local! {
    /// The clap tree, built once per thread: building it costs far more than parsing a line.
    static TREE: std::cell::RefCell<clap::Command> =
        std::cell::RefCell::new(<CommandLine as clap::CommandFactory>::command());
}

/// Parse `words`; a word over [`crate::util::clip::LONG_WORD`] bytes is first stood in for
/// by its cut form (`zzz… (10485760 bytes)`): clap's "did you mean" search on a 10 MB
/// word takes minutes, and the error then echoes the cut form. The words themselves are
/// parsed when the cut ones parse (or fail only on a value's own check). On an error, the
/// words the error is about are returned with it.
fn parse_cut(words: &[String]) -> Result<CommandLine, (Vec<String>, clap::Error)> {
    use crate::util::clip;
    if words.iter().any(|w| w.len() > clip::LONG_WORD) {
        let cut: Vec<String> = words
            .iter()
            .map(|w| {
                if w.len() > clip::LONG_WORD {
                    clip::cut(w)
                } else {
                    w.clone()
                }
            })
            .collect();
        if let Err(e) = parse_words(&cut) {
            if e.kind() != clap::error::ErrorKind::ValueValidation {
                return Err((cut, e));
            }
        }
    }
    parse_words(words).map_err(|e| (words.to_vec(), e))
}

/// `CommandLine::try_parse_from` on the cached tree.
fn parse_words(words: &[String]) -> Result<CommandLine, clap::Error> {
    use clap::FromArgMatches;
    TREE.with(|t| {
        let mut tree = t.borrow_mut();
        let matches = tree.try_get_matches_from_mut(words)?;
        CommandLine::from_arg_matches(&matches)
    })
}

/// The longest command line the lab takes, in bytes: 4,096, what a terminal's own line
/// discipline holds in a line (Linux's N_TTY reads at most 4,095 characters before the
/// newline). No command needs more: a name is at most 253 characters, a label 317. A
/// longer line (a runaway paste) is refused at once, whole, by every front end; a
/// here-document's lines are not counted (the manifest has its own cap).
pub const MAX_LINE: usize = 4096;

/// Why a line of `len` bytes is refused (see [`MAX_LINE`]).
pub fn line_too_long(len: usize) -> String {
    format!(
        "{len} characters: longer than any command may be (at most {MAX_LINE}), refused; nothing was run (a long manifest goes in a file: `apply -f FILE`)"
    )
}

/// Why a line being typed is refused once it passes [`MAX_LINE`]: the front ends drop the
/// rest of it as it comes (up to Enter), so its length is not known.
pub fn typed_line_too_long() -> String {
    format!(
        "longer than any command may be (at most {MAX_LINE} characters), refused: the rest of it was dropped as it came, nothing was run (a long manifest goes in a file: `apply -f FILE`)"
    )
}

/// Whether a command reads its standard input (a here-document): only `apply -f -` and
/// `delete -f -` do.
pub(crate) fn reads_stdin(cmd: &Command) -> bool {
    match cmd {
        Command::Apply(a) => a.file.as_deref() == Some("-"),
        Command::Delete(d) => d.file.as_deref() == Some("-"),
        _ => false,
    }
}

/// The command's name as typed: the verb, and its subcommand when it has subcommands
/// (`pod create`, `po create`, `get`, `cni conf load`), for messages about the command
/// as a whole.
pub(crate) fn command_name(line: &str) -> String {
    let line = without_kubectl(line);
    let Ok(words) = split(line) else {
        return line.split_whitespace().next().unwrap_or("").to_string();
    };
    TREE.with(|t| {
        let tree = t.borrow();
        let mut node: &clap::Command = &tree;
        let mut name = Vec::new();
        for w in &words {
            match node.find_subcommand(w) {
                Some(sub) => {
                    name.push(w.as_str());
                    node = sub;
                }
                None => break,
            }
            if !node.has_subcommands() {
                break;
            }
        }
        if name.is_empty() {
            words.first().cloned().unwrap_or_default()
        } else {
            name.join(" ")
        }
    })
}

/// Remove a trailing `#` comment that is not inside quotes.
pub fn strip_comment(line: &str) -> &str {
    // Most lines hold no `#` at all: one quick search says so.
    if memchr::memchr(b'#', line.as_bytes()).is_none() {
        return line;
    }
    let mut in_single = false;
    let mut in_double = false;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => in_double = !in_double,
            '#' if !in_single && !in_double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn a_switch_may_be_written_true_or_false_as_kubectl_takes_it() {
        let same = |a: &str, b: &str| {
            assert_eq!(parse(a), parse(b), "{a} reads as {b}");
            assert_eq!(
                shape::Shape::of(a),
                shape::Shape::of(b),
                "{a} has the shape of {b}"
            );
        };
        same(
            "label pod web tier=x --overwrite=true",
            "label pod web tier=x --overwrite",
        );
        same(
            "label pod web tier=x --overwrite=T",
            "label pod web tier=x --overwrite",
        );
        same(
            "label pod web tier=x --overwrite=false",
            "label pod web tier=x",
        );
        same("pod delete web --step=0", "pod delete web");
        same(
            "kubectl drain node-2 --force=true --ignore-daemonsets=false",
            "drain node-2 --force",
        );
        let Err(ParseError::Invalid(m)) = parse("label pod web tier=x --overwrite=maybe") else {
            panic!("maybe is no boolean");
        };
        assert!(
            m.starts_with("invalid value \"maybe\" for --overwrite: it is a switch")
                && m.contains("usage: label"),
            "{m}"
        );
        assert!(shape::Shape::of("label pod web tier=x --overwrite=maybe").is_none());
        // A flag that takes a value keeps it.
        assert!(parse("pod create web --node=true").is_ok_and(|c| matches!(
            c,
            Some(Command::Pod(grammar::PodCmd::Create(a))) if a.node.as_deref() == Some("true")
        )));
    }

    #[test]
    fn a_pasted_prompt_is_named_and_the_command_after_it_given() {
        for line in [
            "lab> get pods",
            "lab[2 nodes · 0 pods]> get pods",
            "$ get pods",
            "> get pods",
        ] {
            let Err(ParseError::Invalid(m)) = parse(line) else {
                panic!("{line}: a prompt is not a command");
            };
            assert!(
                m.contains("the lab's prompt") && m.ends_with("\"get pods\""),
                "{line}: {m}"
            );
        }
        // A `$` alone or a word that only starts like the prompt is an unknown command.
        for line in ["$", "lab[x", "label"] {
            let m = match parse(line) {
                Err(ParseError::Invalid(m)) => m,
                other => format!("{other:?}"),
            };
            assert!(!m.contains("prompt"), "{line}: {m}");
        }
    }

    #[test]
    fn grammar_is_consistent() {
        CommandLine::command().debug_assert();
    }

    #[test]
    fn kind_slash_name_is_split_as_kubectl_reads_it() {
        let same = |a: &str, b: &str| {
            assert_eq!(parse(a).unwrap(), parse(b).unwrap(), "{a} / {b}");
        };
        same("describe pod/web", "describe pod web");
        same("delete pod/a pod/b -n x", "delete pod a b -n x");
        same("delete -n x pod/a pod/b", "delete -n x pod a b");
        // Other kinds, or names with and without a kind: left as typed for the engine,
        // which reads them by kubectl's rules.
        for line in [
            "delete pod/a pvc/b",
            "delete pod/a b",
            "delete pod pod/a",
            "delete a/b/c",
        ] {
            let Ok(Some(Command::Delete(d))) = parse(line) else {
                panic!("{line}");
            };
            let typed: Vec<&str> = line.split(' ').skip(1).collect();
            let read: Vec<&str> = d.kind.iter().chain(&d.names).map(String::as_str).collect();
            assert_eq!(read, typed, "{line}");
        }
    }

    #[test]
    fn command_names_as_typed() {
        assert_eq!(command_name("pod create web2 --node node-1"), "pod create");
        assert_eq!(command_name("po create web2"), "po create");
        assert_eq!(command_name("get pods -A"), "get");
        assert_eq!(command_name("cni conf load x.conflist"), "cni conf load");
        assert_eq!(command_name("frob x"), "frob");
        assert!(reads_stdin(&parse("apply -f -").unwrap().unwrap()));
        assert!(reads_stdin(&parse("delete -f -").unwrap().unwrap()));
        assert!(!reads_stdin(&parse("apply -f x.yaml").unwrap().unwrap()));
        assert!(!reads_stdin(
            &parse("pod create w --node node-1").unwrap().unwrap()
        ));
    }

    #[test]
    fn a_leading_kubectl_word_is_kubectl_s_form_of_the_same_command() {
        for line in [
            "get pods -o wide",
            "describe pod/web",
            "delete pod web -n x",
            "pod create web --node node-1",
            "apply -f -",
        ] {
            assert_eq!(
                parse(&format!("kubectl {line}")).unwrap(),
                parse(line).unwrap(),
                "{line}"
            );
            assert_eq!(
                parse(&format!("  kubectl\t{line}")).unwrap(),
                parse(line).unwrap()
            );
        }
        assert_eq!(parse("kubectl").unwrap(), parse("help").unwrap());
        assert_eq!(command_name("kubectl get pods -A"), "get");
        // Only the whole word, only first.
        assert!(parse("kubectlget pods").is_err());
        assert!(parse("get kubectl").is_ok());
        let Err(ParseError::Invalid(m)) = parse("kubectl frob") else {
            panic!("kubectl frob");
        };
        assert!(m.contains("\"frob\""), "{m}");
    }

    #[test]
    fn aliases_parse() {
        assert!(matches!(
            parse("po create web --node node-1").unwrap(),
            Some(Command::Pod(_))
        ));
        assert!(parse("   ").unwrap().is_none());
    }

    #[test]
    fn unknown_verbs_suggest() {
        let Err(ParseError::Invalid(msg)) = parse("nod add x") else {
            panic!("expected an error");
        };
        assert!(msg.contains("node"), "{msg}");
    }

    fn invalid(line: &str) -> String {
        match parse(line) {
            Err(ParseError::Invalid(m)) => m,
            other => panic!("{line}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn negative_numbers_are_refused_as_numbers() {
        for (line, msg) in [
            ("tick -1", "invalid value \"-1\" for DURATION: must be ≥ 0"),
            (
                "tick -500ms",
                "invalid value \"-500ms\" for DURATION: must be ≥ 0",
            ),
            ("show wire -1", "invalid value \"-1\" for N: must be ≥ 0"),
            (
                "show watch --since -2",
                "invalid value \"-2\" for --since: must be ≥ 0",
            ),
            (
                "pvc create x --size -1Gi",
                "invalid value \"-1Gi\" for --size: must be ≥ 0",
            ),
            (
                "pvc expand x -.5Gi",
                "invalid value \"-.5Gi\" for SIZE: must be ≥ 0",
            ),
            (
                "csi node-expand v --node n --path p --size -1",
                "for --size: must be ≥ 0",
            ),
            (
                "tick 18446744073709551616",
                "too large; the clock stops at t=315360000s (10 years of logical seconds), so the largest tick is 315360000 (seconds)",
            ),
        ] {
            let m = invalid(line);
            assert!(m.contains(msg), "{line}: {m}");
            assert!(!m.contains("unknown flag"), "{line}: {m}");
        }
        // Other text keeps its reason; a flag is still a flag.
        assert!(invalid("tick soon").contains("not a duration; expected a whole number"));
        assert!(invalid("tick -x").contains("unknown flag \"-x\""));
        assert!(matches!(
            parse("tick 5").unwrap(),
            Some(Command::Tick { duration }) if duration == crate::util::time::Millis::secs(5)
        ));
        assert!(matches!(
            parse("tick 500ms").unwrap(),
            Some(Command::Tick { duration }) if duration == crate::util::time::Millis::ms(500)
        ));
    }

    #[test]
    fn single_valued_flags_given_twice_say_so_and_repeatable_ones_repeat() {
        let m = invalid("pvc create x --size 1Gi --size 2Gi");
        assert!(
            m.starts_with("--size given twice: it takes one value\nusage: pvc create"),
            "{m}"
        );
        assert!(invalid("cni add c --node a --node b").starts_with("--node given twice"));
        let m = invalid("pod delete w --step --step");
        assert!(
            m.starts_with("--step given twice: it is a switch, give it once\nusage: pod delete"),
            "{m}"
        );
        let Some(Command::Pod(grammar::PodCmd::Create(a))) =
            parse("pod create w --node n -l a=b -l c=d --port 80:80 --port 81:81 --pvc x --pvc y")
                .unwrap()
        else {
            panic!("pod create");
        };
        assert_eq!((a.labels.len(), a.ports.len(), a.pvcs.len()), (2, 2, 2));
    }

    #[test]
    fn kind_slash_name_is_kubectl_s_form() {
        for (line, kind, name) in [
            ("describe pod/web", "pod", "web"),
            ("describe -n team-a pods/web", "pods", "web"),
            ("describe pvc/data -n x", "pvc", "data"),
        ] {
            let Some(Command::Describe(a)) = parse(line).unwrap() else {
                panic!("{line}");
            };
            assert_eq!(
                (a.kind.as_str(), a.names.as_slice()),
                (kind, &[name.to_string()][..]),
                "{line}"
            );
        }
        let Some(Command::Get(a)) = parse("get pod/web -o json").unwrap() else {
            panic!("get");
        };
        assert_eq!(
            (a.kind.as_str(), a.names.as_slice()),
            ("pod", &["web".to_string()][..])
        );
        // Only the first argument of get/describe, and only with text on both sides.
        let Some(Command::Get(a)) = parse("get pod/").unwrap() else {
            panic!("get pod/");
        };
        assert_eq!(a.kind, "pod/");
        assert!(matches!(parse("echo a/b").unwrap(), Some(Command::Echo(_))));
    }

    #[test]
    fn empty_file_names_reconcile_node_and_quit_are_explained() {
        assert!(
            invalid("save ''").starts_with("invalid value \"\" for FILE: the file name is empty")
        );
        assert!(invalid("load ''").contains("the file name is empty"));
        let m = invalid("reconcile scheduler --node node-1");
        assert!(
            m.starts_with(
                "--node does not apply to \"reconcile scheduler\": only the kubelet runs per node"
            ),
            "{m}"
        );
        assert!(invalid("reconcile --node node-1").contains("does not apply"));
        assert!(parse("reconcile kubelet --node node-1").is_ok());
        for w in ["quit", "exit"] {
            let m = invalid(w);
            assert!(m.contains("ends an interactive session"), "{m}");
            assert!(m.contains("`help quit`"), "{m}");
        }
    }

    #[test]
    fn comments_are_stripped_outside_quotes() {
        assert_eq!(strip_comment("echo a # b"), "echo a ");
        assert_eq!(strip_comment("echo 'a # b'"), "echo 'a # b'");
        assert_eq!(strip_comment("echo a#b"), "echo a#b");
    }
}
