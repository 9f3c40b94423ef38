//! The book's command reference (`book/src/reference/commands.md`), generated from the one
//! clap tree in [`super::grammar`] — the same tree `help` reads — so the page cannot say
//! anything the lab does not accept. Commands are grouped as `help` groups them; each leaf
//! gets its usage line, a table of arguments and options, and the examples of its
//! `after_help`. `tests/book.rs` fails when the checked-in page differs from
//! [`reference_markdown`] (and rewrites it with `BLESS=1`).

use super::help::{self, find_sub, placeholder, tree, usage_lines};
use crate::render::Role;

/// Where the page says it comes from (also how to regenerate it).
const GENERATED_NOTE: &str = "<!-- Generated from the command grammar (engine/src/command/grammar.rs) by \
lab_engine::command::reference::reference_markdown(). Do not edit by hand: \
`BLESS=1 cargo test --test it book` rewrites this file. -->";

/// The whole command reference page, as Markdown; the kinds a command takes come from
/// `kinds` (the engine's resource registry, `lab_engine::resource::Help`).
pub fn reference_markdown(kinds: &dyn help::KindLists) -> String {
    let mut md = String::new();
    md.push_str("# Command reference\n\n");
    md.push_str(GENERATED_NOTE);
    md.push_str("\n\n");
    md.push_str(INTRO);
    for (title, names) in groups() {
        md.push_str(&format!("\n## {}\n", escape(&title)));
        for name in names {
            match find_sub(tree(), &name).filter(|c| c.get_name() == name) {
                Some(cmd) => command_section(&mut md, &[cmd], kinds),
                None => repl_only_section(&mut md, &name),
            }
        }
    }
    md
}

/// The lesson check language (`book/src/reference/checks.md`), generated from the table of
/// predicates the lesson player evaluates, given as (pattern, meaning) pairs
/// (`lesson::check::predicate_table`).
pub fn checks_markdown(predicates: &[(&str, &str)]) -> String {
    let mut md = String::from("# Lesson check language\n\n");
    md.push_str(&GENERATED_NOTE.replace("reference_markdown", "checks_markdown"));
    md.push_str("\n\n");
    md.push_str(CHECKS_INTRO);
    md.push_str("\n| check | holds when |\n|---|---|\n");
    for (pattern, about) in predicates {
        // Inside a code span `<pod>` is literal (CommonMark decodes no entity there); only
        // the table's `|` is escaped.
        md.push_str(&format!(
            "| `{}` | {} |\n",
            pattern.replace('|', "\\|"),
            escape(about)
        ));
    }
    md
}

/// The groups of `help` (read from the overview it prints, so the two agree), then any
/// top-level command the overview did not list, under "Other commands".
fn groups() -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for line in help::overview().into_lines() {
        let mut spans = line.spans.iter().filter(|s| !s.text.trim().is_empty());
        let Some(first) = spans.next() else { continue };
        match first.role {
            Role::Header if first.text.ends_with(':') => {
                let title = first.text.trim_end_matches(':').to_string();
                groups.push((title, Vec::new()));
            }
            Role::Name => {
                if let Some((_, names)) = groups.last_mut() {
                    names.push(first.text.trim().to_string());
                }
            }
            _ => {}
        }
    }
    let listed: Vec<String> = groups.iter().flat_map(|(_, n)| n.clone()).collect();
    let rest: Vec<String> = tree()
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && !listed.iter().any(|n| n == c.get_name()))
        .map(|c| c.get_name().to_string())
        .collect();
    if !rest.is_empty() {
        groups.push(("Other commands".to_string(), rest));
    }
    groups.retain(|(_, names)| !names.is_empty());
    groups
}

fn path_name(path: &[&clap::Command]) -> String {
    path.iter()
        .map(|c| c.get_name())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One command and (recursively) its subcommands; headings go one level deeper per word.
fn command_section(md: &mut String, path: &[&'static clap::Command], kinds: &dyn help::KindLists) {
    let Some(cmd) = path.last() else { return };
    let level = "#".repeat((path.len() + 2).min(6));
    md.push_str(&format!("\n{level} {}\n\n", path_name(path)));
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let mut first = sentence(&about);
    let aliases: Vec<String> = cmd
        .get_visible_aliases()
        .map(|a| format!("`{a}`"))
        .collect();
    if !aliases.is_empty() {
        first.push_str(&format!(" Also spelled {}.", aliases.join(", ")));
    }
    md.push_str(&first);
    md.push('\n');
    if cmd.has_subcommands() {
        md.push_str("\n```text\n");
        for l in usage_lines(path) {
            md.push_str(&l);
            md.push('\n');
        }
        md.push_str("```\n");
        after_help(md, path, kinds);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut p = path.to_vec();
            p.push(sub);
            command_section(md, &p, kinds);
        }
        return;
    }
    md.push_str("\n```text\n");
    for l in usage_lines(path) {
        md.push_str(&l);
        md.push('\n');
    }
    md.push_str("```\n");
    let rows = arg_rows(cmd);
    if !rows.is_empty() {
        md.push_str("\n| argument or option | meaning |\n|---|---|\n");
        for (left, right) in rows {
            md.push_str(&format!("| {left} | {} |\n", escape(&right)));
        }
    }
    after_help(md, path, kinds);
}

/// A command the REPL handles itself (`quit`).
fn repl_only_section(md: &mut String, name: &str) {
    let about = help::REPL_ONLY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
        .unwrap_or("");
    md.push_str(&format!("\n### {name}\n\n"));
    md.push_str(&sentence(about));
    md.push_str(" Only in the interactive session (a script simply ends).\n\n");
    md.push_str(&format!("```text\n{name}\n```\n"));
}

/// Capitalised, escaped, ending with a full stop.
fn sentence(text: &str) -> String {
    let t = escape(text.trim());
    let mut chars = t.chars();
    let mut s = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect::<String>(),
        None => return String::new(),
    };
    if !s.ends_with(['.', '?', '!']) {
        s.push('.');
    }
    s
}

/// `(left, right)` rows: positionals first (in order), then the visible options.
fn arg_rows(cmd: &clap::Command) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut positionals: Vec<&clap::Arg> = cmd.get_positionals().collect();
    positionals.sort_by_key(|a| a.get_index());
    for a in positionals {
        let mut left = format!("`{}`", placeholder(a));
        if !a.is_required_set() {
            left.push_str(" (optional)");
        }
        rows.push((left, arg_about(a)));
    }
    for a in cmd.get_arguments().filter(|a| {
        !a.is_positional() && !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version"
    }) {
        let mut names = Vec::new();
        if let Some(s) = a.get_short() {
            names.push(format!("-{s}"));
        }
        if let Some(l) = a.get_long() {
            names.push(format!("--{l}"));
        }
        if let Some(al) = a.get_visible_aliases() {
            names.extend(al.into_iter().map(|x| format!("--{x}")));
        }
        let value = if takes_value(a) {
            format!(" {}", placeholder(a))
        } else {
            String::new()
        };
        let left = names
            .iter()
            .map(|n| format!("`{n}{value}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let left = if a.is_required_set() {
            format!("{left} (required)")
        } else {
            left
        };
        rows.push((left, arg_about(a)));
    }
    rows
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

/// The help text of an argument with its choices, default and repeatability.
fn arg_about(a: &clap::Arg) -> String {
    let mut s = a.get_help().map(|h| h.to_string()).unwrap_or_default();
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    if takes_value(a) && !choices.is_empty() {
        s.push_str(&format!("; one of {}", choices.join(", ")));
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().to_string())
        .collect();
    if takes_value(a) && !defaults.is_empty() {
        let shown = defaults.join(",");
        let shown = if shown.is_empty() {
            "empty".to_string()
        } else {
            shown
        };
        s.push_str(&format!(" (default: {shown})"));
    }
    if matches!(a.get_action(), clap::ArgAction::Append) && !s.contains("repeatable") {
        s.push_str(" (repeatable)");
    }
    s
}

/// The command's `after_help`: prose lines as a paragraph, `Examples:` as a code block.
fn after_help(md: &mut String, path: &[&clap::Command], kinds: &dyn help::KindLists) {
    let Some(text) = help::after_help_text(path, kinds) else {
        return;
    };
    let mut prose: Vec<String> = Vec::new();
    let mut examples: Vec<String> = Vec::new();
    let mut in_examples = false;
    for line in text.lines() {
        let t = line.trim();
        if t == "Examples:" || t == "Example:" {
            in_examples = true;
        } else if in_examples && !t.is_empty() {
            examples.push(t.to_string());
        } else if !t.is_empty() {
            prose.push(escape(t));
        }
    }
    if !prose.is_empty() {
        md.push('\n');
        md.push_str(&prose.join("  \n"));
        md.push('\n');
    }
    if !examples.is_empty() {
        md.push_str("\nExamples:\n\n```text\n");
        for e in examples {
            md.push_str(&e);
            md.push('\n');
        }
        md.push_str("```\n");
    }
}

/// Escape what Markdown (and mdBook's HTML) would read as markup outside code spans:
/// `|` (table cells), `<`, `>`, `*`. Text inside backticks is left alone.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
            continue;
        }
        match c {
            '|' => out.push_str("\\|"),
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            '*' if !in_code => out.push_str("\\*"),
            _ => out.push(c),
        }
    }
    out
}

const INTRO: &str = "Every command the lab understands, generated from the same grammar that \
parses what you type, so this page and the lab cannot disagree. The same language works at the \
`lab>` prompt, on the dashboard's command line, in a script played with `cni-csi-lab run`, and \
in lesson steps. Inside the lab, `help` lists the commands and `help COMMAND` (or \
`COMMAND --help`) shows one of them with examples.

Conventions: words in CAPITALS are values you supply; `[...]` is optional; `[options]` stands \
for the optional flags in the table below the usage line. Names follow kubectl (`po`, `no`, \
`netpol`, `pvc`, `sc` ...). A flag that takes no value (a switch, such as `--overwrite`) may \
also be written as kubectl takes it, `--overwrite=true`, or `--overwrite=false` for leaving it \
out. In a script, `#` starts a comment, a trailing `\\` continues a line, and a line starting \
with `!` is expected to fail.
";

const CHECKS_INTRO: &str = "A lesson step is done when every line of its ```` ```check ```` \
block holds. Each line is one of the predicates below: a fact of the cluster's state \
(`pod web phase Running`), or a fact of what the learner ran during the step, read as data, \
never as printed text: a command by its typed shape (`command ran`, `saw error`), what a \
view showed (`saw …`: the wire record, the route table, the trace's hops, the reach verdict), \
which component acted (`caused`). An `echo` of the words, the same view of another object, or \
the command failing satisfies none of them, and `lesson lint` plays those decoys against every \
step. A line starting with `not` holds when the rest does not.

Placeholders: `<pod>` is `name` or `ns/name` (namespace `default`); `<node>`, `<name>` and \
`<word>` are single words; `<ip>` an address; `<cidr>` a network; `<n>` a number; `<port>` \
`P[/PROTO]`; `<flow>` a quoted \"SRC DST [--port P] [--size N]\"; `<command>` a whole lab \
command, quoted (defaults filled in, any spelling of a port, flags in any order); `<text>` a \
word or a \"quoted string\". A token written `a|b` accepts either word. \
`lesson lint` rejects a line that matches no predicate and lists the ones that start with the same word.
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_leaf_command_has_a_section_with_its_usage() {
        let md = reference_markdown(&crate::resource::Help);
        fn walk(md: &str, path: &mut Vec<&'static clap::Command>) {
            let Some(cmd) = path.last() else { return };
            if cmd.has_subcommands() {
                for s in cmd.get_subcommands() {
                    path.push(s);
                    walk(md, path);
                    path.pop();
                }
            } else {
                let name = path_name(path);
                assert!(md.contains(&format!("# {name}\n")), "no section for {name}");
                for u in usage_lines(path) {
                    assert!(md.contains(&format!("\n{u}\n")), "no usage line {u}");
                }
            }
        }
        for top in tree().get_subcommands() {
            walk(&md, &mut vec![top]);
        }
    }

    #[test]
    fn groups_follow_help() {
        let g = groups();
        let titles: Vec<&str> = g.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles.first(), Some(&"Cluster"));
        assert!(titles.contains(&"Storage"), "{titles:?}");
        let session = g.iter().find(|(t, _)| t == "Session").map(|(_, n)| n);
        assert!(session.is_some_and(|n| n.iter().any(|x| x == "quit")));
        // Every top-level command appears exactly once.
        for c in tree().get_subcommands() {
            let n = g
                .iter()
                .flat_map(|(_, names)| names)
                .filter(|x| *x == c.get_name())
                .count();
            assert_eq!(n, 1, "{} listed {n} times", c.get_name());
        }
    }

    #[test]
    fn options_show_defaults_choices_and_repeatability() {
        let md = reference_markdown(&crate::resource::Help);
        assert!(
            md.contains("| `-l LABEL`, `--label LABEL` | Label k=v (repeatable) |"),
            "{md}"
        );
        assert!(
            md.contains("| `--ifname IFNAME` | CNI_IFNAME (default: eth0) |"),
            "{md}"
        );
        assert!(md.contains("one of json, name, wide, yaml"));
        assert!(md.contains("pod create web --node node-1 --label app=web"));
    }

    #[test]
    fn markup_is_escaped_outside_code() {
        assert_eq!(
            escape("a|b <c> *d* `x|<y>`"),
            "a\\|b &lt;c&gt; \\*d\\* `x\\|<y>`"
        );
        assert_eq!(sentence("run the loops"), "Run the loops.");
        assert_eq!(sentence(""), "");
    }
}
