//! The fast path for the plain lines a script repeats: `pod create NAME --node N`, `pod
//! delete NAME`, `pvc create NAME --size S --class C`, `pvc delete NAME`, `node add NAME
//! --cidr C --ip IP`, each with a few plain options. Matching one of these through clap costs
//! more than running it (issue 21's profile: 17 % of a create+delete script), so such a line
//! is read here into the very [`Command`] clap would give.
//!
//! Anything else gives `None` and goes to clap, which stays the definition of the language:
//! a word with a quote, a backslash, `#`, `=` after a flag or anything outside the plain
//! characters; a flag this path does not know (`--help`, `--port`, `--node=x`, `-nfoo`); a
//! flag given twice that takes one value; a missing or extra argument; a value that starts
//! with `-`. So every error, help text and suggestion still comes from clap. The tests
//! compare the two on every line of the lab's scripts and on generated lines.

use super::grammar::{self, Command, NodeCmd, PodCmd, PodCreateArgs, PvcCmd, PvcCreateArgs};

/// Read `line` (without its comment) when it is one of the plain shapes; `None` otherwise.
pub fn parse(line: &str) -> Option<Command> {
    if !line.bytes().all(plain_byte) {
        return None;
    }
    let mut rest = line.split_ascii_whitespace();
    let command = rest.next()?;
    let verb = rest.next()?;
    match (command, verb) {
        ("pod" | "po" | "pods", "create") => pod_create(rest),
        ("pod" | "po" | "pods", "delete" | "rm") => {
            let (name, ns) = name_in_ns(rest)?;
            Some(Command::Pod(PodCmd::Delete {
                name,
                ns,
                step: false,
            }))
        }
        ("pvc" | "claim", "create") => pvc_create(rest),
        ("pvc" | "claim", "delete" | "rm") => {
            let (name, ns) = name_in_ns(rest)?;
            Some(Command::Pvc(PvcCmd::Delete {
                name,
                ns,
                step: false,
            }))
        }
        ("node" | "no" | "nodes", "add") => node_add(rest),
        _ => None,
    }
}

/// The bytes a plain line holds: letters, digits, the punctuation of names, sizes, CIDRs,
/// labels and selectors, and the blanks between words (the ones shlex splits on). No quote,
/// backslash, `#` or other byte a shell would read specially.
fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b' ' | b'\t' | b'-' | b'.' | b'/' | b':' | b'=' | b',' | b'@' | b'_'
        )
}

/// One pass over a command's words: its flags (each known to take one value) and its one
/// positional argument.
struct Words<'a> {
    /// The positional argument, when there was exactly one.
    name: Option<&'a str>,
    /// `(flag, value)` in the order given, flags as spelled.
    flags: Vec<(&'a str, &'a str)>,
}

/// The words after the command and its verb, as the line gives them.
type Rest<'a> = std::str::SplitAsciiWhitespace<'a>;

/// Split `rest` into one positional and `flag value` pairs; `None` on a second positional,
/// an unknown flag, a flag without a value or a value that starts with `-`.
fn words<'a>(mut rest: Rest<'a>, known: &[&str]) -> Option<Words<'a>> {
    let mut out = Words {
        name: None,
        flags: Vec::new(),
    };
    while let Some(w) = rest.next() {
        if w.starts_with('-') {
            if !known.contains(&w) {
                return None;
            }
            let value = rest.next()?;
            if value.starts_with('-') {
                return None;
            }
            out.flags.push((w, value));
        } else {
            if out.name.is_some() {
                return None;
            }
            out.name = Some(w);
        }
    }
    out.name?;
    Some(out)
}

/// The namespace flag's spellings (`--ns`, its alias `--namespace`, `-n`).
const NS: [&str; 3] = ["-n", "--ns", "--namespace"];

/// The one value of a single-valued option (any of its spellings): `Ok(None)` when absent,
/// `Err(())` when given twice (clap refuses that; its error is clap's to give).
fn single<'a>(w: &Words<'a>, spellings: &[&str]) -> Result<Option<&'a str>, ()> {
    let mut found = None;
    for (flag, value) in &w.flags {
        if spellings.contains(flag) {
            if found.is_some() {
                return Err(());
            }
            found = Some(*value);
        }
    }
    Ok(found)
}

/// Every value of a repeatable option, in order.
fn many(w: &Words<'_>, spellings: &[&str]) -> Vec<String> {
    w.flags
        .iter()
        .filter(|(flag, _)| spellings.contains(flag))
        .map(|(_, v)| v.to_string())
        .collect()
}

/// The namespace, `default` when not given (the flags' default value).
fn ns_of(w: &Words<'_>) -> Option<String> {
    Some(single(w, &NS).ok()?.unwrap_or("default").to_string())
}

/// `NAME [-n NS]`.
fn name_in_ns(rest: Rest<'_>) -> Option<(String, String)> {
    let w = words(rest, &NS)?;
    Some((w.name?.to_string(), ns_of(&w)?))
}

/// `pod create NAME [--node N] [--node-selector K=V]… [--pvc C]… [-l K=V]… [-n NS]`.
fn pod_create(rest: Rest<'_>) -> Option<Command> {
    let w = words(
        rest,
        &[
            "--node",
            "--node-selector",
            "--pvc",
            "--label",
            "-l",
            "-n",
            "--ns",
            "--namespace",
        ],
    )?;
    Some(Command::Pod(PodCmd::Create(Box::new(PodCreateArgs {
        name: w.name?.to_string(),
        node: single(&w, &["--node"]).ok()?.map(String::from),
        node_selector: many(&w, &["--node-selector"]),
        resources: Vec::new(),
        labels: many(&w, &["--label", "-l"]),
        ports: Vec::new(),
        bandwidth_ingress: None,
        bandwidth_egress: None,
        pvcs: many(&w, &["--pvc"]),
        networks: None,
        ns: ns_of(&w)?,
        step: false,
    }))))
}

/// `pvc create NAME --size S [--class C] [--access A]… [-n NS]`.
fn pvc_create(rest: Rest<'_>) -> Option<Command> {
    let w = words(
        rest,
        &["--size", "--class", "--access", "-n", "--ns", "--namespace"],
    )?;
    let size = grammar::size_text(single(&w, &["--size"]).ok()??).ok()?;
    let mut access = many(&w, &["--access"]);
    if access.is_empty() {
        access.push("RWO".to_string());
    }
    Some(Command::Pvc(PvcCmd::Create(PvcCreateArgs {
        name: w.name?.to_string(),
        size,
        access,
        class: single(&w, &["--class"]).ok()?.map(String::from),
        mode: "Filesystem".to_string(),
        from_snapshot: None,
        from_pvc: None,
        ns: ns_of(&w)?,
    })))
}

/// `node add NAME [--cidr C] [--ip IP] [--zone Z]`.
fn node_add(rest: Rest<'_>) -> Option<Command> {
    let w = words(rest, &["--cidr", "--ip", "--zone"])?;
    let one = |flag: &str| single(&w, &[flag]).map(|v| v.map(String::from));
    Some(Command::Node(NodeCmd::Add {
        name: w.name?.to_string(),
        cidr: one("--cidr").ok()?,
        ip: one("--ip").ok()?,
        zone: one("--zone").ok()?,
        sriov_pf: None,
        vfs: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::parse as fast;
    use crate::command::parse_with_clap as clap;
    use proptest::prelude::*;

    /// Where the fast path reads a line, clap reads the same command from it.
    fn agrees(line: &str) -> Result<bool, String> {
        let Some(quick) = fast(line) else {
            return Ok(false);
        };
        match clap(line) {
            Ok(Some(slow)) if slow == quick => Ok(true),
            other => Err(format!(
                "{line:?}: the fast path read {quick:?}, clap {other:?}"
            )),
        }
    }

    #[test]
    fn the_shapes_scripts_repeat_take_the_fast_path() {
        for line in [
            "pod create web --node node-1",
            "po create web -n team-a --label app=web -l tier=db --pvc data --pvc logs",
            "pods create p1-0 --node-selector kubernetes.io/hostname=node-1 --pvc c1-0",
            "pod delete web",
            "pod rm web --namespace team-a",
            "pvc create c1-0 --size 1Gi --class local-wffc",
            "claim create shared --size 1Gi --access RWX --access ROX --ns x",
            "pvc delete c1-0",
            "node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3",
            "no add edge --zone zone-2",
            "\tpod  create   web\t--node node-1  ",
        ] {
            assert_eq!(agrees(line), Ok(true), "{line}");
        }
    }

    #[test]
    fn anything_else_is_left_to_clap() {
        for line in [
            "",
            "pod create",
            "pod create web --node",
            "pod create web --node node-1 --node node-2",
            "pod create web extra",
            "pod create web --node=node-1",
            "pod delete web --step=true",
            "pod delete web --step=false",
            "pod create web -nteam",
            "pod create web --help",
            "pod create web --port 8080:80",
            "pod create 'web' --node node-1",
            "pod create web --node -x",
            "pod create -web",
            "pvc create c --class x",
            "pvc create c --size -1Gi",
            "node add n --vfs 2",
            "pod list",
            "delete pod web",
            "pod create wéb",
            "pod create web # a comment",
        ] {
            assert!(fast(line).is_none(), "{line}");
        }
    }

    /// Every line of the lab's own scripts, transcripts, lessons and book pages.
    #[test]
    fn every_line_of_the_repository_reads_the_same_both_ways() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let mut files = Vec::new();
        for dir in [
            "tests/transcripts",
            "assets",
            "assets/presets",
            "lessons",
            "book/src",
        ] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "lab" || x == "md") {
                    files.push(p);
                }
            }
        }
        files.push(root.join("book/src/sessions/lesson-start.lab"));
        let (mut lines, mut quick) = (0, 0);
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            for raw in text.lines() {
                let line = crate::command::strip_comment(raw.strip_prefix("$ ").unwrap_or(raw));
                lines += 1;
                if agrees(line).unwrap() {
                    quick += 1;
                }
            }
        }
        assert!(quick > 100, "{quick} of {lines} lines took the fast path");
    }

    /// Words the generator puts together: the shapes' verbs and flags, plain values, and
    /// values that look like flags.
    fn word() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "pod",
            "po",
            "pvc",
            "claim",
            "node",
            "no",
            "create",
            "delete",
            "rm",
            "add",
            "web",
            "node-1",
            "--node",
            "--node-selector",
            "--pvc",
            "--label",
            "-l",
            "-n",
            "--ns",
            "--namespace",
            "--size",
            "1Gi",
            "--class",
            "--access",
            "RWX",
            "--cidr",
            "10.244.3.0/24",
            "--ip",
            "192.168.0.3",
            "--zone",
            "-1Gi",
            "--",
            "-",
            "--port",
            "a=b",
            "--step=true",
            "--step=false",
        ])
    }

    proptest! {
        #[test]
        fn generated_lines_read_the_same_both_ways(
            head in prop::sample::select(vec!["pod create", "pod delete", "pvc create", "pvc rm", "node add", "po rm"]),
            rest in prop::collection::vec(word(), 0..8),
        ) {
            let line = format!("{head} {}", rest.join(" "));
            prop_assert!(agrees(&line).is_ok(), "{}", agrees(&line).unwrap_err());
        }
    }
}
