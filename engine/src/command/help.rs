//! Help and errors, generated from the one clap tree in [`super::grammar`]: `help` (commands
//! grouped like `kubectl help`), `help COMMAND` (usage, options, examples), the usage line
//! an error ends with, and "did you mean" suggestions. Nothing here is written per command,
//! so a new command in the grammar is documented by its doc comments and `after_help`.

use super::ParseError;
use super::grammar::CommandLine;
use crate::render::{Line, Outcome, Role};
use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::sync::OnceLock;

/// The built clap tree of the command language (built once per process).
pub fn tree() -> &'static clap::Command {
    static TREE: OnceLock<clap::Command> = OnceLock::new();
    TREE.get_or_init(|| {
        let mut c = CommandLine::command();
        c.build();
        c
    })
}

/// Commands the REPL understands itself (they never reach the engine).
pub const REPL_ONLY: &[(&str, &str)] = &[
    ("quit", "Leave the lab (also: exit, Ctrl-D)"),
    (
        "clear",
        "Clear the screen (the REPL) or the Output pane (the dashboard); also Ctrl-L",
    ),
];

/// Why `clear` is refused where it reaches the parser: a script has no screen.
pub(crate) const CLEAR_IN_SCRIPT: &str = "clears the screen of an interactive session (the REPL or the dashboard); a script (`run FILE`, a preset) has no screen to clear: remove the command";

/// Whether `word` clears the interactive session's screen.
pub fn is_clear_word(word: &str) -> bool {
    word == "clear"
}

/// Why `quit` is refused where it reaches the parser: only the interactive front ends
/// (the REPL and the dashboard) handle it; scripts, presets and saves end at their last
/// line.
pub(crate) const QUIT_IN_SCRIPT: &str = "ends an interactive session (the REPL or the dashboard); a script (`run FILE`, a preset) stops after its last command, so it has nothing to quit: remove the command (see `help quit`)";

/// Whether `word` is one of the words the interactive front ends quit on.
pub(crate) fn is_quit_word(word: &str) -> bool {
    matches!(word, "quit" | "exit" | "q")
}

/// `help quit`: what quit does, and that a script does not need it.
fn quit_help() -> Outcome {
    let mut out = Outcome::empty();
    out.line(
        Line::new()
            .push("quit", Role::Header)
            .push(": Leave the lab (also: exit, Ctrl-D)", Role::Plain),
    );
    out.plain("");
    out.plain("usage: quit");
    out.plain("");
    out.plain("In the REPL and the dashboard, quit, exit and Ctrl-D end the session.");
    out.plain("A script (`cni-csi-lab run FILE`, a --preset FILE) stops after its last command:");
    out.plain("quit in a script is an error that says so, and can be removed.");
    out
}

/// How `help` groups the top-level commands, in kubectl's manner. A command missing here
/// is listed under "Other commands", so new commands always show up.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Cluster",
        &[
            "node", "ns", "get", "describe", "label", "cordon", "uncordon", "drain", "delete",
            "apply",
        ],
    ),
    ("Workloads", &["pod"]),
    ("Storage", &["sc", "pvc", "pv", "snapshot"]),
    ("Network", &["policy", "nad", "reach", "trace", "step"]),
    (
        "Plugin calls (as a container runtime or a CSI sidecar makes them)",
        &["cni", "csi"],
    ),
    ("Views", &["show"]),
    ("Time and control loops", &["tick", "mode", "reconcile"]),
    ("History", &["timeline", "rewind", "diff", "why"]),
    ("Lessons", &["lesson", "hint", "skip", "back", "play"]),
    (
        "Session",
        &[
            "help", "explain", "reset", "save", "load", "echo", "clear", "quit",
        ],
    ),
];

/// The commands whose help lists the API kinds they take (`Kinds: …` before their
/// examples).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindsOf {
    /// `get` (and `describe`'s words): every kind.
    Get,
    /// `delete`: the kinds the lab deletes.
    Delete,
    /// `apply -f`: the kinds a manifest may hold, by their `kind`.
    Apply,
}

impl KindsOf {
    /// Which list a command's help shows, if any (`path`: the command and the ones above
    /// it; only top-level `get`, `delete` and `apply` list kinds).
    fn of(path: &[&clap::Command]) -> Option<KindsOf> {
        match path {
            [cmd] => match cmd.get_name() {
                "get" => Some(KindsOf::Get),
                "delete" => Some(KindsOf::Delete),
                "apply" => Some(KindsOf::Apply),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The API kinds help lists. The command language knows no kind itself: the engine's
/// resource registry answers (`lab_engine::resource::Help`).
pub trait KindLists {
    /// The kinds, as the list shows each (`nodes (no)`, `Pod`).
    fn kinds(&self, of: KindsOf) -> Vec<String>;
}

/// No kinds (help from the grammar alone).
#[cfg(test)]
pub(crate) struct NoKinds;

#[cfg(test)]
impl KindLists for NoKinds {
    fn kinds(&self, _of: KindsOf) -> Vec<String> {
        Vec::new()
    }
}

/// How wide a `Kinds:` line may grow before the list goes on on the next line.
const KINDS_WIDTH: usize = 96;

/// The text after the options of the command at the end of `path`: the kinds it takes
/// (wrapped, later lines under the first kind), then its `after_help`.
pub(crate) fn after_help_text(path: &[&clap::Command], kinds: &dyn KindLists) -> Option<String> {
    let cmd = path.last()?;
    let mut text = String::new();
    let list = KindsOf::of(path)
        .map(|of| kinds.kinds(of))
        .unwrap_or_default();
    let count = list.len();
    let mut line = String::from("Kinds:");
    for (i, kind) in list.into_iter().enumerate() {
        let item = if i + 1 < count {
            format!("{kind},")
        } else {
            kind
        };
        if line.len() + 1 + item.len() > KINDS_WIDTH && line.len() > "Kinds:".len() {
            text.push_str(&line);
            text.push('\n');
            line = " ".repeat("Kinds:".len());
        }
        line.push(' ');
        line.push_str(&item);
    }
    if count > 0 {
        text.push_str(&line);
        text.push('\n');
    }
    if let Some(after) = cmd.get_after_help() {
        text.push_str(&after.to_string());
    }
    (!text.is_empty()).then_some(text)
}

/// The subcommand of `cmd` called `word` (by name or any alias).
pub fn find_sub<'a>(cmd: &'a clap::Command, word: &str) -> Option<&'a clap::Command> {
    cmd.get_subcommands()
        .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
}

/// Walk `words` down the tree as far as they name subcommands. Returns the chain of
/// commands (without the root) and how many words were used.
pub fn walk(words: &[String]) -> (Vec<&'static clap::Command>, usize) {
    let mut path = Vec::new();
    let mut cur = tree();
    for w in words {
        match find_sub(cur, w) {
            Some(s) => {
                path.push(s);
                cur = s;
            }
            None => break,
        }
    }
    let n = path.len();
    (path, n)
}

fn path_name(path: &[&clap::Command]) -> String {
    path.iter()
        .map(|c| c.get_name())
        .collect::<Vec<_>>()
        .join(" ")
}

fn about(c: &clap::Command) -> String {
    c.get_about().map(|s| s.to_string()).unwrap_or_default()
}

/// The placeholder a value is shown with: the grammar's `value_name` when it set one, else
/// the flag's name in capitals (`--label LABEL`), else `VALUE`.
pub fn placeholder(arg: &clap::Arg) -> String {
    let id = arg.get_id().as_str().to_ascii_uppercase();
    let named = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|s| s.to_string());
    if arg.is_positional() {
        return named.unwrap_or(id);
    }
    match (named, arg.get_long()) {
        (Some(n), _) if n != id => n,
        (_, Some(long)) if !long.contains('-') && long.len() <= 8 => long.to_ascii_uppercase(),
        _ => "VALUE".to_string(),
    }
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

fn is_repeatable(arg: &clap::Arg) -> bool {
    matches!(arg.get_action(), clap::ArgAction::Append)
}

/// Flag text for an option: `--node NODE`, `--all`.
pub(crate) fn flag_text(arg: &clap::Arg) -> String {
    let name = match (arg.get_long(), arg.get_short()) {
        (Some(l), _) => format!("--{l}"),
        (None, Some(s)) => format!("-{s}"),
        (None, None) => arg.get_id().to_string(),
    };
    if takes_value(arg) {
        format!("{name} {}", placeholder(arg))
    } else {
        name
    }
}

fn visible_args(cmd: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
}

/// One usage line for a leaf command: `pod create NAME --node NODE [options]`.
pub(crate) fn usage_line(path: &[&clap::Command]) -> String {
    let Some(cmd) = path.last() else {
        return String::new();
    };
    let mut parts = vec![path_name(path)];
    let mut positionals: Vec<&clap::Arg> = cmd.get_positionals().collect();
    positionals.sort_by_key(|a| a.get_index());
    for a in positionals {
        let p = placeholder(a);
        let many = a.get_num_args().is_some_and(|n| n.max_values() > 1);
        let p = if many { format!("{p}...") } else { p };
        parts.push(if a.is_required_set() {
            p
        } else {
            format!("[{p}]")
        });
    }
    let mut optional = false;
    for a in visible_args(cmd).filter(|a| !a.is_positional()) {
        if a.is_required_set() {
            parts.push(flag_text(a));
        } else {
            optional = true;
        }
    }
    if optional {
        parts.push("[options]".to_string());
    }
    parts.join(" ")
}

/// Usage lines for a command: one line for a leaf, one per subcommand for a group.
pub(crate) fn usage_lines(path: &[&'static clap::Command]) -> Vec<String> {
    let Some(cmd) = path.last() else {
        return Vec::new();
    };
    if cmd.has_subcommands() {
        let mut out = Vec::new();
        for s in cmd.get_subcommands() {
            let mut p = path.to_vec();
            p.push(s);
            out.extend(usage_lines(&p));
        }
        out
    } else {
        vec![usage_line(path)]
    }
}

/// `usage: …` text (lines after the first indented under it).
pub(crate) fn usage_block(path: &[&'static clap::Command]) -> String {
    let lines = usage_lines(path);
    let mut s = String::new();
    for (i, l) in lines.iter().enumerate() {
        s.push_str(if i == 0 { "usage: " } else { "       " });
        s.push_str(l);
        s.push('\n');
    }
    s.trim_end().to_string()
}

fn aliases_of(c: &clap::Command) -> Vec<&str> {
    c.get_visible_aliases().collect()
}

/// A command in the overview: name, description, aliases.
type Entry = (String, String, Vec<String>);

/// Rows of a two-column listing: left, right.
type Rows = Vec<(String, String)>;

fn grouped_top_level() -> Vec<(String, Vec<Entry>)> {
    let root = tree();
    let mut used = std::collections::BTreeSet::new();
    let mut groups = Vec::new();
    let entry = |name: &str| -> Option<Entry> {
        if let Some(c) = find_sub(root, name).filter(|c| c.get_name() == name) {
            return Some((
                name.to_string(),
                about(c),
                aliases_of(c).iter().map(|s| s.to_string()).collect(),
            ));
        }
        REPL_ONLY
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, a)| (n.to_string(), a.to_string(), Vec::new()))
    };
    for (title, names) in GROUPS {
        let items: Vec<_> = names.iter().filter_map(|n| entry(n)).collect();
        for (n, _, _) in &items {
            used.insert(n.clone());
        }
        if !items.is_empty() {
            groups.push((title.to_string(), items));
        }
    }
    let rest: Vec<_> = root
        .get_subcommands()
        .filter(|c| !used.contains(c.get_name()) && !c.is_hide_set())
        .map(|c| {
            (
                c.get_name().to_string(),
                about(c),
                aliases_of(c).iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect();
    if !rest.is_empty() {
        groups.push(("Other commands".to_string(), rest));
    }
    groups
}

/// `help` with no argument: every command, grouped.
pub(crate) fn overview() -> Outcome {
    let groups = grouped_top_level();
    let width = groups
        .iter()
        .flat_map(|(_, items)| items.iter().map(|(n, _, _)| n.chars().count()))
        .max()
        .unwrap_or(0);
    let mut out = Outcome::empty();
    for (i, (title, items)) in groups.iter().enumerate() {
        if i > 0 {
            out.plain("");
        }
        out.line(Line::styled(format!("{title}:"), Role::Header));
        for (name, about, aliases) in items {
            let mut line = Line::new()
                .push("  ", Role::Plain)
                .push(format!("{name:<width$}"), Role::Name)
                .push(format!("  {about}"), Role::Plain);
            if !aliases.is_empty() {
                line = line.push(format!(" ({})", aliases.join(", ")), Role::Dim);
            }
            out.line(line);
        }
    }
    out.plain("");
    out.line(Line::styled(
        "`help COMMAND` shows a command's usage and examples (e.g. `help pod create`);",
        Role::Dim,
    ));
    out.line(Line::styled(
        "`explain` lists the concept cards; `COMMAND --help` works too.",
        Role::Dim,
    ));
    out
}

fn option_rows(cmd: &clap::Command) -> (Rows, Rows) {
    let mut args = Vec::new();
    let mut opts = Vec::new();
    let mut positionals: Vec<&clap::Arg> = cmd.get_positionals().collect();
    positionals.sort_by_key(|a| a.get_index());
    for a in positionals {
        args.push((placeholder(a), arg_about(a)));
    }
    for a in visible_args(cmd).filter(|a| !a.is_positional()) {
        let mut left = String::new();
        if let Some(s) = a.get_short() {
            left.push_str(&format!("-{s}, "));
        }
        let flag = flag_text(a);
        let (name, value) = flag.split_once(' ').unwrap_or((&flag, ""));
        left.push_str(name);
        if let Some(al) = a.get_visible_aliases() {
            for x in al {
                left.push_str(&format!(", --{x}"));
            }
        }
        if !value.is_empty() {
            left.push(' ');
            left.push_str(value);
        }
        opts.push((left, arg_about(a)));
    }
    (args, opts)
}

fn arg_about(a: &clap::Arg) -> String {
    let mut s = a.get_help().map(|h| h.to_string()).unwrap_or_default();
    let pv: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    if !pv.is_empty() && !takes_value_is_bool(a) {
        s.push_str(&format!(" ({})", pv.join(", ")));
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().to_string())
        .collect();
    if !defaults.is_empty() && takes_value(a) {
        s.push_str(&format!(" [default: {}]", defaults.join(",")));
    }
    if is_repeatable(a) && !s.contains("repeatable") {
        s.push_str(" (repeatable)");
    }
    s
}

fn takes_value_is_bool(a: &clap::Arg) -> bool {
    !takes_value(a)
}

fn rows(out: &mut Outcome, title: &str, rows: &[(String, String)]) {
    if rows.is_empty() {
        return;
    }
    out.plain("");
    out.line(Line::styled(format!("{title}:"), Role::Header));
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .filter(|w| *w <= 30)
        .max()
        .unwrap_or(0);
    for (left, right) in rows {
        let pad = width.saturating_sub(left.chars().count());
        out.line(
            Line::new()
                .push(format!("  {left}"), Role::Name)
                .push(format!("{}  {right}", " ".repeat(pad)), Role::Plain),
        );
    }
}

/// `help WORDS…`: a command's description, usage, arguments, options and examples; the
/// kinds a command takes come from `kinds`.
pub(crate) fn command_help(words: &[String], kinds: &dyn KindLists) -> Result<Outcome, String> {
    if words.is_empty() {
        return Ok(overview());
    }
    let (path, used) = walk(words);
    if used == 0 && words.len() == 1 && is_quit_word(&words[0]) {
        return Ok(quit_help());
    }
    if used == 0 && words.len() == 1 && is_clear_word(&words[0]) {
        let mut out = Outcome::empty();
        out.line(Line::new().push("clear", Role::Header).push(
            ": Clear the screen (the REPL) or the Output pane (the dashboard); also Ctrl-L",
            Role::Plain,
        ));
        out.plain("");
        out.plain("usage: clear");
        out.plain("");
        out.plain(
            "Only in an interactive session: a script has no screen, so `clear` there is an error.",
        );
        return Ok(out);
    }
    if let Some(bad) = words.get(used) {
        return Err(unknown_word(&path, bad, "no help for"));
    }
    let Some(cmd) = path.last() else {
        return Ok(overview());
    };
    let name = path_name(&path);
    let mut out = Outcome::empty();
    out.line(
        Line::new()
            .push(name.clone(), Role::Header)
            .push(format!(": {}", about(cmd)), Role::Plain),
    );
    let aliases = aliases_of(cmd);
    if !aliases.is_empty() {
        out.line(Line::styled(
            format!("aliases: {}", aliases.join(", ")),
            Role::Dim,
        ));
    }
    if cmd.has_subcommands() {
        let subs: Vec<(String, String)> = cmd
            .get_subcommands()
            .map(|s| {
                let al = aliases_of(s);
                let about = if al.is_empty() {
                    about(s)
                } else {
                    format!("{} ({})", about(s), al.join(", "))
                };
                (s.get_name().to_string(), about)
            })
            .collect();
        rows(&mut out, "Commands", &subs);
    }
    out.plain("");
    out.line(Line::styled("Usage:", Role::Header));
    for l in usage_lines(&path) {
        out.plain(format!("  {l}"));
    }
    if !cmd.has_subcommands() {
        let (args, opts) = option_rows(cmd);
        rows(&mut out, "Arguments", &args);
        rows(&mut out, "Options", &opts);
    }
    if let Some(after) = after_help_text(&path, kinds) {
        out.plain("");
        for l in after.lines() {
            let role = if l.ends_with(':') && !l.starts_with(' ') {
                Role::Header
            } else {
                Role::Plain
            };
            out.line(Line::styled(l, role));
        }
    }
    if cmd.has_subcommands() {
        out.plain("");
        let first = cmd
            .get_subcommands()
            .next()
            .map(|s| s.get_name().to_string())
            .unwrap_or_default();
        out.line(Line::styled(
            format!("`help {name} COMMAND` shows one of them, e.g. `help {name} {first}`."),
            Role::Dim,
        ));
    }
    Ok(out)
}

/// Damerau–Levenshtein distance (with adjacent transpositions), on chars.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        if let Some(c) = row.first_mut() {
            *c = i;
        }
    }
    if let Some(row) = d.first_mut() {
        for (j, c) in row.iter_mut().enumerate() {
            *c = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a.get(i - 1) != b.get(j - 1));
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a.get(i - 1) == b.get(j - 2) && a.get(i - 2) == b.get(j - 1) {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The best matches for a mistyped `word` among `(spelling, canonical)` pairs: spellings
/// it is a prefix of first, then those within a small edit distance. At most three
/// canonical names, best first.
pub(crate) fn suggest(word: &str, candidates: &[(String, String)]) -> Vec<String> {
    let w = word.to_ascii_lowercase();
    if w.is_empty() {
        return Vec::new();
    }
    let limit = if w.chars().count() <= 4 { 1 } else { 2 };
    let mut scored: Vec<(usize, usize, &str)> = Vec::new();
    for (i, (spelling, canonical)) in candidates.iter().enumerate() {
        let score = if spelling.starts_with(&w) && w.chars().count() >= 2 {
            0
        } else {
            // The distance is at least the length difference: skip the O(n·m) table.
            if w.chars().count().abs_diff(spelling.chars().count()) > limit {
                continue;
            }
            let d = distance(&w, spelling);
            if d > limit {
                continue;
            }
            d + 1
        };
        scored.push((score, i, canonical));
    }
    scored.sort();
    let mut out: Vec<String> = Vec::new();
    let best = scored.first().map(|s| s.0).unwrap_or(0);
    for (score, _, c) in scored {
        if score > best.max(1) {
            break;
        }
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Every spelling of the subcommands of `cmd` (names and aliases) with its name.
pub(crate) fn sub_spellings(cmd: &clap::Command) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for s in cmd.get_subcommands() {
        v.push((s.get_name().to_string(), s.get_name().to_string()));
        for a in s.get_all_aliases() {
            v.push((a.to_string(), s.get_name().to_string()));
        }
    }
    v
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
pub(crate) fn quoted_choice(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    match q.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The lab's command that has the subcommand `verb` and one of whose spellings (its name,
/// its aliases) `names` accepts: `ns` (`namespace`) for `create`, `policy` (`netpol`) for
/// `delete`. (The command language knows no kind: a room above may accept the other
/// spellings of a kind.)
pub(crate) fn kind_command(
    verb: &str,
    names: impl Fn(&str) -> bool,
) -> Option<&'static clap::Command> {
    tree()
        .get_subcommands()
        .filter(|c| c.find_subcommand(verb).is_some())
        .find(|c| {
            std::iter::once(c.get_name())
                .chain(c.get_all_aliases())
                .any(&names)
        })
}

/// kubectl's `create KIND NAME …`, which the lab writes kind first (`ns create NAME`,
/// `policy create NAME …`): the error names the lab's form for the kind `rest` starts
/// with, or every command that creates when it names none the lab creates.
fn create_in_lab_order(rest: &[String]) -> String {
    let creators: Vec<&clap::Command> = tree()
        .get_subcommands()
        .filter(|c| c.find_subcommand("create").is_some())
        .collect();
    // The command's own spellings, singular or plural (`ns`, `namespaces`, `netpol`).
    let found = rest.first().and_then(|k| {
        let one = k.strip_suffix('s').unwrap_or(k);
        kind_command("create", |n| n == k || n == one)
    });
    match found {
        Some(c) => {
            let name = c.get_name();
            let args: Vec<String> = rest[1..]
                .iter()
                .map(|w| {
                    shlex::try_quote(w)
                        .map(|q| q.into_owned())
                        .unwrap_or_else(|_| w.clone())
                })
                .collect();
            let form = std::iter::once(format!("{name} create"))
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ");
            format!(
                "unknown command \"create\": the lab writes the kind first: `{form}` (`help {name} create` for its flags); `apply -f FILE` creates what a manifest holds"
            )
        }
        None => {
            let forms: Vec<String> = creators
                .iter()
                .map(|c| format!("`{} create`", c.get_name()))
                .collect();
            format!(
                "unknown command \"create\": the lab writes the kind first, KIND create NAME: {} (`help KIND create` for the flags); `apply -f FILE` creates what a manifest holds",
                forms.join(", ")
            )
        }
    }
}

/// The error for a word that names no (sub)command under `path`.
fn unknown_word(path: &[&'static clap::Command], word: &str, lead: &str) -> String {
    let parent = path.last().copied().unwrap_or(tree());
    let sugg = suggest(word, &sub_spellings(parent));
    let what = if path.is_empty() {
        format!("{lead} command {word:?}")
    } else if lead == "no help for" {
        format!("{lead} {:?}", format!("{} {word}", path_name(path)))
    } else {
        format!("{lead} subcommand {word:?} for {:?}", path_name(path))
    };
    let mut msg = what;
    // `lesson help`, `pod help`: the help is its own command, the other way round.
    if word == "help" && !path.is_empty() && lead != "no help for" {
        msg.push_str(&format!("; help comes first: `help {}`\n", path_name(path)));
        msg.push_str(&usage_block(path));
        return msg;
    }
    // A lesson's own commands are top-level (`hint`, `skip`, `back`), not `lesson`'s: say
    // so rather than suggest a `lesson` subcommand spelled alike (`lint` for `hint`).
    if let [lesson] = path
        && lesson.get_name() == "lesson"
        && lead != "no help for"
        && matches!(
            super::parse(word),
            Ok(Some(
                super::Command::Hint | super::Command::Skip | super::Command::Back
            ))
        )
    {
        msg.push_str(&format!(
            "; `{word}` is a command of its own during a lesson: type `{word}`"
        ));
        return msg;
    }
    match sugg.first() {
        Some(first) => {
            let shown: Vec<String> = if lead == "no help for" && !path.is_empty() {
                sugg.iter()
                    .map(|s| format!("{} {s}", path_name(path)))
                    .collect()
            } else {
                sugg.clone()
            };
            msg.push_str(&format!("; did you mean {}?", quoted_choice(&shown)));
            if let Some(target) = find_sub(parent, first) {
                let mut p = path.to_vec();
                p.push(target);
                msg.push('\n');
                msg.push_str(&usage_block(&p));
            }
        }
        None if path.is_empty() => {
            msg.push_str("; `help` lists the commands");
        }
        None => {
            let names: Vec<&str> = parent.get_subcommands().map(|s| s.get_name()).collect();
            msg.push_str(&format!("; it takes: {}", names.join(", ")));
            msg.push('\n');
            msg.push_str(&usage_block(path));
        }
    }
    msg
}

fn ctx_str(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        ContextValue::StyledStr(s) => Some(s.to_string()),
        _ => None,
    }
}

fn ctx_strings(e: &clap::Error, kind: ContextKind) -> Vec<String> {
    match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::StyledStr(s)) => vec![s.to_string()],
        _ => Vec::new(),
    }
}

/// `--node <NODE>` / `<NAME>` / `[SECONDS]` as clap names an argument → `--node NODE` /
/// `NAME` / `SECONDS`.
fn plain_arg(s: &str) -> String {
    s.replace(['<', '>', '[', ']'], "")
        .replace("...", "")
        .trim()
        .to_string()
}

/// Turn a clap error on `words` into the learner-facing message (without `error: `).
/// Help requests become [`ParseError::Help`] with the words that name the command.
pub(crate) fn from_clap_error(words: &[String], e: &clap::Error) -> ParseError {
    let (path, used) = walk(words);
    let here = if path.is_empty() {
        String::new()
    } else {
        path_name(&path)
    };
    let usage = if path.is_empty() {
        String::new()
    } else {
        format!("\n{}", usage_block(&path))
    };
    let msg = match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        | ErrorKind::DisplayVersion
        | ErrorKind::MissingSubcommand => {
            return ParseError::Help(
                words
                    .iter()
                    .take(used)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        ErrorKind::InvalidSubcommand => {
            let bad = ctx_str(e, ContextKind::InvalidSubcommand)
                .or_else(|| words.get(used).cloned())
                .unwrap_or_default();
            let parent = path.last().copied().unwrap_or(tree());
            if path.is_empty() && is_quit_word(&bad) {
                format!("{bad:?} {QUIT_IN_SCRIPT}")
            } else if path.is_empty() && is_clear_word(&bad) {
                format!("{bad:?} {CLEAR_IN_SCRIPT}")
            } else if path.is_empty() && bad == "create" {
                create_in_lab_order(words.get(used + 1..).unwrap_or_default())
            } else if parent.has_subcommands() {
                unknown_word(&path, &bad, "unknown")
            } else {
                format!("unexpected argument {bad:?} for {here:?}{usage}")
            }
        }
        ErrorKind::UnknownArgument => {
            let bad = ctx_str(e, ContextKind::InvalidArg).unwrap_or_default();
            // A negative value with a unit (`tick -500ms`) is not a number to clap, so it
            // reads as short flags: say what is wrong with the value instead.
            let negative = words[used.min(words.len())..].iter().find(|w| {
                w.starts_with(&bad)
                    && w.strip_prefix('-')
                        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
            });
            let takes_negative = path.last().and_then(|c| {
                c.get_positionals()
                    .find(|a| a.is_allow_negative_numbers_set())
                    .map(|a| {
                        a.get_value_names()
                            .and_then(|n| n.first())
                            .map(|n| n.to_string())
                            .unwrap_or_else(|| a.get_id().to_string().to_uppercase())
                    })
            });
            if let (Some(tok), Some(arg)) = (negative, takes_negative) {
                return ParseError::Invalid(format!(
                    "invalid value {tok:?} for {arg}: must be ≥ 0{usage}"
                ));
            }
            if bad.starts_with('-') {
                let flag = bad.split('=').next().unwrap_or(&bad).to_string();
                let spellings: Vec<(String, String)> = path
                    .last()
                    .map(|c| {
                        visible_args(c)
                            .filter_map(|a| a.get_long())
                            .map(|l| (format!("--{l}"), format!("--{l}")))
                            .collect()
                    })
                    .unwrap_or_default();
                let sugg = suggest(&flag, &spellings);
                let mut m = format!("unknown flag {flag:?} for {here:?}");
                if !sugg.is_empty() {
                    m.push_str(&format!("; did you mean {}?", quoted_choice(&sugg)));
                } else if matches!(flag.as_str(), "-o" | "--output") && here.starts_with("show ") {
                    // DESIGN.md promises `-o json` on every view of state; the `show` views
                    // are text only for now, so say where the JSON is.
                    m.push_str(
                        ": the show views print text only; JSON is in `get KIND [NAME] -o json|yaml` (the API objects) and `show wire N` (a call's request and response)",
                    );
                }
                m.push_str(&usage);
                m
            } else {
                format!("unexpected argument {bad:?} for {here:?}{usage}")
            }
        }
        ErrorKind::MissingRequiredArgument => {
            let mut missing: Vec<String> = ctx_strings(e, ContextKind::InvalidArg)
                .iter()
                .map(|s| plain_arg(s))
                .collect();
            // Arguments first, then flags, as the usage line has them.
            missing.sort_by_key(|m| m.starts_with('-'));
            format!("{here:?} needs {}{usage}", missing.join(" and "))
        }
        ErrorKind::InvalidValue => {
            let arg = plain_arg(&ctx_str(e, ContextKind::InvalidArg).unwrap_or_default());
            let arg = arg.split(' ').next().unwrap_or(&arg).to_string();
            let value = ctx_str(e, ContextKind::InvalidValue).unwrap_or_default();
            let valid = ctx_strings(e, ContextKind::ValidValue);
            let mut m = if value.is_empty() {
                format!("{arg} needs a value")
            } else {
                format!("invalid value {value:?} for {arg}")
            };
            if !valid.is_empty() {
                m.push_str(&format!("; expected {}", quoted_choice(&valid)));
            }
            m.push_str(&usage);
            m
        }
        ErrorKind::ValueValidation
            if std::error::Error::source(e)
                .is_some_and(|s| s.is::<crate::command::grammar::KubectlSays>()) =>
        {
            // kubectl's own sentence (`-o foo`), as kubectl prints it.
            std::error::Error::source(e)
                .map(|s| s.to_string())
                .unwrap_or_default()
        }
        ErrorKind::ValueValidation => {
            let arg = plain_arg(&ctx_str(e, ContextKind::InvalidArg).unwrap_or_default());
            let arg = arg.split(' ').next().unwrap_or(&arg).to_string();
            let value = ctx_str(e, ContextKind::InvalidValue).unwrap_or_default();
            let why = std::error::Error::source(e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("invalid value {value:?} for {arg}{why}{usage}")
        }
        ErrorKind::ArgumentConflict => {
            let a = plain_arg(&ctx_str(e, ContextKind::InvalidArg).unwrap_or_default());
            let b = plain_arg(&ctx_str(e, ContextKind::PriorArg).unwrap_or_default());
            // clap names an option with its value (`--size <SIZE>`), a switch alone (`--step`).
            let takes_value = a.contains(' ');
            let a = a.split(' ').next().unwrap_or(&a).to_string();
            let b = b.split(' ').next().unwrap_or(&b).to_string();
            if a == b && takes_value {
                // clap reports a single-valued flag given again as a conflict with itself.
                format!("{a} given twice: it takes one value{usage}")
            } else if a == b {
                format!("{a} given twice: it is a switch, give it once{usage}")
            } else {
                format!("{a} and {b} cannot be used together{usage}")
            }
        }
        _ => {
            // Other kinds (a value that does not parse, conflicting flags, …): clap's own
            // first line says it well; drop its `Usage: <COMMAND>` and "try 'help'" tail.
            let text = e.render().to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .replace('\'', "\"");
            format!("{first}{usage}")
        }
    };
    ParseError::Invalid(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn usage_lines_read_like_kubectl() {
        let (p, _) = walk(&words("pod create"));
        assert_eq!(usage_line(&p), "pod create NAME [options]");
        let (p, _) = walk(&words("show ipam"));
        assert_eq!(usage_line(&p), "show ipam [NODE] [options]");
        let (p, _) = walk(&words("show ipset"));
        assert_eq!(usage_line(&p), "show ipset NODE");
        let (p, _) = walk(&words("node"));
        assert_eq!(
            usage_lines(&p),
            vec![
                "node add NAME [options]".to_string(),
                "node list".to_string()
            ]
        );
    }

    #[test]
    fn suggestions_prefer_prefixes_then_small_edits() {
        let root = sub_spellings(tree());
        assert_eq!(suggest("nod", &root), vec!["node"]);
        assert_eq!(suggest("pdo", &root), vec!["pod"]);
        assert_eq!(suggest("descrbie", &root), vec!["describe"]);
        assert!(suggest("zzzzzz", &root).is_empty());
        assert_eq!(distance("abc", "acb"), 1);
    }

    #[test]
    fn every_top_level_command_is_in_the_overview() {
        let text = overview().to_text();
        for c in tree().get_subcommands() {
            assert!(
                text.contains(&format!("  {}", c.get_name())),
                "{} missing",
                c.get_name()
            );
        }
    }

    fn examples(cmd: &clap::Command, out: &mut Vec<String>) {
        if let Some(after) = cmd.get_after_help() {
            let text = after.to_string();
            if let Some((_, ex)) = text.split_once("Examples:") {
                out.extend(
                    ex.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(String::from),
                );
            }
        }
        for s in cmd.get_subcommands() {
            examples(s, out);
        }
    }

    #[test]
    fn words_starting_with_a_multibyte_character_do_not_panic() {
        // Found by `cargo fuzz run parse`: a word whose first character is wider than one
        // byte was sliced at byte 1.
        for line in [
            "back\t\u{FFFD}",
            "hint \u{FFFD}",
            "\u{FFFD}",
            "tick \u{FFFD}",
            "tick -\u{FFFD}",
            "get -\u{FFFD}",
            "pod create web --\u{FFFD}",
            "\u{FFFD} -x",
            "tick é-5",
        ] {
            let _ = super::super::parse(line);
            let _ = crate::lesson::Desk::new().execute(line);
        }
    }

    #[test]
    fn every_example_in_the_help_parses() {
        let mut all = Vec::new();
        examples(tree(), &mut all);
        assert!(all.len() > 10);
        for ex in all {
            assert!(
                matches!(super::super::parse(&ex), Ok(Some(_))),
                "example does not parse: {ex}"
            );
        }
    }

    #[test]
    fn command_help_has_usage_options_and_examples() {
        let text = command_help(&words("pod create"), &NoKinds)
            .unwrap()
            .to_text();
        assert!(text.contains("pod create NAME [options]"), "{text}");
        assert!(text.contains("--node NODE"), "{text}");
        assert!(text.contains("Examples:"), "{text}");
        assert!(command_help(&words("pod craete"), &NoKinds).is_err());
    }
}
