//! The lab book (`book/`, an mdBook) cannot go stale:
//! - the command reference and the check language pages are what `reference_markdown()` and
//!   `checks_markdown()` generate from the grammar and the lesson predicates;
//! - every captured session under `book/src/sessions/` is what the lab prints today;
//! - every page SUMMARY.md links exists, every `{{#include}}` in it resolves, and every link
//!   between pages (and to a heading) resolves;
//! - every lesson in `lessons/` has a book page that includes it and SUMMARY.md lists it;
//! - every concept card in `assets/explain/` is included on the concepts page.
//!
//! `BLESS=1 cargo test --test it book` rewrites the generated page and the session captures.
//! The build itself (`mdbook build book`) runs in `.ci/run`.

use cni_csi_lab::repl;
use lab_engine::command::reference::{checks_markdown, reference_markdown};
use lab_engine::script::{self, RunOptions, logical_lines, run_line};
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn src() -> PathBuf {
    root().join("book/src")
}

fn bless() -> bool {
    std::env::var_os("BLESS").is_some()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Compare `actual` with the file at `path`; with BLESS, write it instead.
fn check_generated(path: &Path, actual: &str, how: &str) -> Result<(), String> {
    if bless() {
        std::fs::write(path, actual).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected == actual {
        return Ok(());
    }
    let first_diff = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    Err(format!(
        "{} is stale ({how}); first difference at line {}:\n  checked in: {:?}\n  generated:  {:?}\nrun `BLESS=1 cargo test --test it book` to rewrite it",
        path.display(),
        first_diff + 1,
        expected.lines().nth(first_diff).unwrap_or("<end of file>"),
        actual.lines().nth(first_diff).unwrap_or("<end of file>"),
    ))
}

#[test]
fn command_reference_is_generated_from_the_grammar() {
    let path = src().join("reference/commands.md");
    if let Err(e) = check_generated(
        &path,
        &reference_markdown(&lab_engine::resource::Help),
        "the grammar changed",
    ) {
        panic!("{e}");
    }
}

#[test]
fn check_language_page_is_generated_from_the_predicates() {
    let path = src().join("reference/checks.md");
    if let Err(e) = check_generated(
        &path,
        &checks_markdown(&lab_engine::lesson::check::predicate_table()),
        "the check language changed",
    ) {
        panic!("{e}");
    }
}

// ---- captured sessions ---------------------------------------------------------------

/// A `Write` two writers can share, so stdout and stderr interleave as on a terminal.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the interactive session shows for a script typed line by line on the default
/// cluster: the banner, then each prompt with its command, its output and its error.
fn repl_capture(text: &str) -> String {
    let mut desk = crate::common::desk();
    let mut s = format!("{}\n", repl::banner(&desk.lab));
    for (n, line) in logical_lines(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (prompt, _) = repl::prompt(&desk.lab, false);
        s.push_str(&format!("{prompt}{trimmed}\n"));
        if let Some(r) = run_line(&mut desk, n, trimmed) {
            s.push_str(&r.stdout);
            s.push_str(&r.stderr);
        }
    }
    s
}

/// What `cni-csi-lab run --echo FILE` prints (stdout and stderr together) and its status.
fn run_capture(file_name: &str, text: &str) -> String {
    let mut desk = crate::common::desk();
    let buf = Shared::default();
    let ok = script::run(
        &mut desk,
        text,
        RunOptions {
            keep_going: false,
            echo: true,
        },
        &mut buf.clone(),
        &mut buf.clone(),
    )
    .unwrap_or(false);
    let out = String::from_utf8_lossy(&buf.0.borrow()).to_string();
    format!(
        "$ cni-csi-lab run --echo {file_name}\n{out}$ echo $?\n{}\n",
        if ok { 0 } else { 1 }
    )
}

#[test]
fn captured_sessions_are_what_the_lab_prints() {
    let dir = src().join("sessions");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "lab"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "no sessions in {}", dir.display());
    let mut errors = Vec::new();
    for script in &scripts {
        let text = read(script);
        let name = script
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let capture = if name.starts_with("run-") {
            run_capture(&name, &text)
        } else {
            repl_capture(&text)
        };
        if let Err(e) = check_generated(
            &script.with_extension("txt"),
            &capture,
            "the lab's output changed",
        ) {
            errors.push(e);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

// ---- SUMMARY, pages and includes -------------------------------------------------------

/// One entry of SUMMARY.md: its title, its link (empty for a draft), its line.
struct Entry {
    title: String,
    link: String,
    line: usize,
}

fn summary() -> Vec<Entry> {
    let text = read(&src().join("SUMMARY.md"));
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line
            .trim_start()
            .trim_start_matches(['-', '*'])
            .trim_start();
        let Some(rest) = t.strip_prefix('[') else {
            continue;
        };
        let Some((title, after)) = rest.split_once("](") else {
            continue;
        };
        let Some((link, _)) = after.split_once(')') else {
            continue;
        };
        entries.push(Entry {
            title: title.to_string(),
            link: link.to_string(),
            line: i + 1,
        });
    }
    entries
}

/// The `{{#include PATH}}` / `{{#include PATH:ANCHOR}}` targets of a page (escaped ones,
/// `\{{#include …}}`, are text and skipped).
fn includes(page_text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page_text;
    while let Some(i) = rest.find("{{#include") {
        let escaped = rest[..i].ends_with('\\');
        let after = &rest[i + "{{#include".len()..];
        let Some(end) = after.find("}}") else { break };
        if !escaped {
            let arg = after[..end].trim();
            let path = arg.split(':').next().unwrap_or(arg).trim();
            out.push(path.to_string());
        }
        rest = &after[end..];
    }
    out
}

#[test]
fn every_summary_link_and_include_resolves() {
    let mut errors = Vec::new();
    for e in summary() {
        if e.link.is_empty() {
            continue; // a draft chapter (no page yet)
        }
        let page = src().join(&e.link);
        let Ok(text) = std::fs::read_to_string(&page) else {
            errors.push(format!(
                "SUMMARY.md:{}: [{}] links {} which does not exist",
                e.line,
                e.title,
                page.display()
            ));
            continue;
        };
        let dir = page.parent().map(Path::to_path_buf).unwrap_or_else(src);
        for inc in includes(&text) {
            if !dir.join(&inc).is_file() {
                errors.push(format!(
                    "{}: {{{{#include {inc}}}}} does not resolve (looked for {})",
                    e.link,
                    dir.join(&inc).display()
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// A page's text with its includes expanded (whole files; line ranges are ignored), as the
/// reader sees it.
fn expanded(page: &Path) -> String {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let dir = page.parent().map(Path::to_path_buf).unwrap_or_else(src);
    let mut out = text.clone();
    for inc in includes(&text) {
        let body = std::fs::read_to_string(dir.join(&inc)).unwrap_or_default();
        if let Some(start) = out.find(&format!("{{{{#include {inc}")) {
            if let Some(len) = out[start..].find("}}") {
                out.replace_range(start..start + len + 2, &body);
            }
        }
    }
    out
}

/// Lines outside fenced code blocks, with inline code spans removed.
fn prose_lines(text: &str) -> Vec<String> {
    outside_fences(text)
        .iter()
        .map(|l| l.split('`').step_by(2).collect::<Vec<_>>().join(" "))
        .collect()
}

/// Lines outside fenced code blocks, as written.
fn outside_fences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let marker = t.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map(|m| t.chars().take_while(|c| *c == m).count());
        match (fence, marker, run) {
            (None, Some(m), Some(n)) if n >= 3 => fence = Some((m, n)),
            (Some((fm, fnum)), Some(m), Some(n))
                if m == fm && n >= fnum && t.trim_start_matches(m).trim().is_empty() =>
            {
                fence = None
            }
            (None, _, _) => out.push(line.to_string()),
            _ => {}
        }
    }
    out
}

/// Inline link targets `](target)` in the prose of a page.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

/// The ids mdBook gives a page's headings: lower-cased, letters, digits, `-` and `_` kept,
/// whitespace turned into `-`, everything else dropped; a repeated id gets `-1`, `-2`, ….
fn heading_ids(text: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for line in outside_fences(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base: String = line[hashes..]
            .trim()
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_lowercase().collect::<String>())
                } else if c.is_whitespace() {
                    Some("-".to_string())
                } else {
                    None
                }
            })
            .collect();
        let mut id = base.clone();
        let mut n = 1;
        while ids.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        ids.push(id);
    }
    ids
}

#[test]
fn every_link_between_pages_resolves() {
    let mut errors = Vec::new();
    for e in summary() {
        if e.link.is_empty() {
            continue;
        }
        let page = src().join(&e.link);
        if !page.is_file() {
            continue; // reported by every_summary_link_and_include_resolves
        }
        let text = expanded(&page);
        let dir = page.parent().map(Path::to_path_buf).unwrap_or_else(src);
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") || link.is_empty() {
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path)
            };
            if path.ends_with("README.md") {
                errors.push(format!(
                    "{}: link to {link}: mdBook renders README.md as index.html and does not rewrite links to it; name the page index.md",
                    e.link
                ));
                continue;
            }
            if !target.is_file() {
                errors.push(format!("{}: link to {link}: no such file", e.link));
                continue;
            }
            if let Some(a) = anchor {
                if path.ends_with(".md") || path.is_empty() {
                    let ids = heading_ids(&expanded(&target));
                    if !ids.iter().any(|i| i == a) {
                        errors.push(format!(
                            "{}: link to {link}: no heading with id {a:?} (ids: {})",
                            e.link,
                            ids.join(", ")
                        ));
                    }
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `lessons/*.md`, by file stem.
fn lesson_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("lessons"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_lesson_has_a_book_page_that_summary_lists() {
    let entries = summary();
    let mut errors = Vec::new();
    for stem in lesson_files() {
        let rel = format!("lessons/{stem}.md");
        let page = src().join(&rel);
        let include = format!("{{{{#include ../../../lessons/{stem}.md}}}}");
        match std::fs::read_to_string(&page) {
            Err(_) => errors.push(format!(
                "lessons/{stem}.md has no book page: create book/src/{rel} containing\n    {include}\n  and list it in book/src/SUMMARY.md under \"The lessons\""
            )),
            Ok(text) if !text.contains(&include) => errors.push(format!(
                "book/src/{rel} does not include its lesson: it needs the line\n    {include}"
            )),
            Ok(_) => {}
        }
        if !entries.iter().any(|e| e.link == rel) {
            let draft = entries
                .iter()
                .find(|e| e.link.is_empty() && e.title.contains(&chapter_of(&stem)));
            errors.push(match draft {
                Some(d) => format!(
                    "lessons/{stem}.md exists but SUMMARY.md:{} lists it as a draft: change `[{}]()` to `[{}]({rel})`",
                    d.line,
                    d.title,
                    d.title.trim_end_matches(" (coming)")
                ),
                None => format!("book/src/SUMMARY.md does not list {rel}"),
            });
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `ch2-core-ideas` → `Chapter 2`.
fn chapter_of(stem: &str) -> String {
    let n: String = stem
        .trim_start_matches("ch")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    format!("Chapter {n}")
}

#[test]
fn every_lesson_page_includes_an_existing_lesson_file() {
    let entries = summary();
    let dir = src().join("lessons");
    let mut errors = Vec::new();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    pages.sort();
    for page in pages {
        let Some(name) = page.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name == "index.md" || !name.ends_with(".md") {
            continue;
        }
        let text = read(&page);
        let incs: Vec<String> = includes(&text)
            .into_iter()
            .filter(|i| i.starts_with("../../../lessons/"))
            .collect();
        if incs.is_empty() {
            errors.push(format!(
                "book/src/lessons/{name} includes no lesson file (`{{{{#include ../../../lessons/{name}}}}}`)"
            ));
        }
        let listed = entries.iter().any(|e| e.link == format!("lessons/{name}"));
        for inc in incs {
            let exists = dir.join(&inc).is_file();
            if !exists && listed {
                errors.push(format!(
                    "SUMMARY.md lists lessons/{name}, but the lesson it includes ({inc}) does not exist: the build would fail"
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn every_concept_card_is_on_the_concepts_page() {
    let page = read(&src().join("concepts.md"));
    let incs = includes(&page);
    let mut cards: Vec<String> = std::fs::read_dir(root().join("assets/explain"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .filter_map(|p| p.file_name().and_then(|s| s.to_str()).map(String::from))
                .collect()
        })
        .unwrap_or_default();
    cards.sort();
    assert!(!cards.is_empty());
    let missing: Vec<&String> = cards
        .iter()
        .filter(|c| !incs.contains(&format!("../../assets/explain/{c}")))
        .collect();
    assert!(
        missing.is_empty(),
        "concept cards not included in book/src/concepts.md: {missing:?} (add a `## ID` heading and a ```text block with {{{{#include ../../assets/explain/ID.md}}}})"
    );
}

#[test]
fn include_scanner_reads_paths_and_skips_escaped_ones() {
    let text = "a {{#include ../x.md}} b {{#include ../y.md:2:}} \\{{#include z.md}}";
    assert_eq!(includes(text), vec!["../x.md", "../y.md"]);
    assert_eq!(chapter_of("ch2-core-ideas"), "Chapter 2");
}

#[test]
fn link_and_heading_scanners_skip_code() {
    let text = "# The driver, `hostpath.csi.lab`\n[a](x.md#y) `[b](no.md)`\n```text\n[c](no.md)\n# not a heading\n```\n## A\n## A\n";
    assert_eq!(links(text), vec!["x.md#y"]);
    assert_eq!(
        heading_ids(text),
        vec!["the-driver-hostpathcsilab", "a", "a-1"]
    );
}

/// Issue 38: the Reliability page lists every cap with the value the code has.
#[test]
fn the_reliability_page_states_every_cap() {
    use lab_engine::edge::human_size;
    let page = read(&src().join("reference/reliability.md"));
    let caps = [
        ("SCRIPT_CAP", human_size(lab_engine::edge::SCRIPT_CAP)),
        ("CONFIG_CAP", human_size(lab_engine::edge::CONFIG_CAP)),
        ("NET_D_CAP", human_size(lab_engine::cni::conf::NET_D_CAP)),
        (
            "MANIFEST_CAP",
            human_size(lab_engine::manifest::MANIFEST_CAP),
        ),
        ("MAX_OBJECTS", lab_engine::manifest::MAX_OBJECTS.to_string()),
        ("MAX_YAML_NODES", "250,000".to_string()),
        (
            "MAX_YAML_DEPTH",
            format!("{} levels", lab_engine::manifest::MAX_YAML_DEPTH),
        ),
        (
            "MAX_LINE",
            format!("{} characters", lab_engine::command::MAX_LINE),
        ),
        (
            "MAX_CONNECTIONS",
            cni_csi_lab::csi_serve::MAX_CONNECTIONS.to_string(),
        ),
        (
            "IDLE_TIMEOUT",
            format!("{} s", cni_csi_lab::csi_serve::IDLE_TIMEOUT.as_secs()),
        ),
        ("MAX_TIMERS_PER_TICK", "10,000".to_string()),
    ];
    assert_eq!(lab_engine::engine::MAX_TIMERS_PER_TICK, 10_000);
    assert_eq!(lab_engine::manifest::MAX_YAML_NODES, 250_000);
    for (name, value) in caps {
        let row = page
            .lines()
            .find(|l| l.contains(&format!("::{name}`")))
            .unwrap_or_else(|| panic!("reliability.md has no row for {name}"));
        assert!(
            row.contains(&format!("| {value}")),
            "reliability.md's row for {name} does not say {value}: {row}"
        );
    }
}

/// The CSI page lists what the lab's CreateVolume checks, hostpath's and the lab's own:
/// each message it quotes is the driver's answer to such a request.
#[test]
fn the_csi_page_quotes_create_volumes_checks_as_the_driver_answers() {
    let page = read(&src().join("real/csi.md"));
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let mount = r#"{"mount":{},"access_mode":{"mode":"SINGLE_NODE_WRITER"}}"#;
    let cases = [
        (
            r#"{"name":"v1","volume_capabilities":[{}]}"#.to_string(),
            "INVALID_ARGUMENT",
            "volume_capabilities[0]: access_mode is required and cannot be UNKNOWN",
        ),
        (
            r#"{"name":"v1","volume_capabilities":[{"access_mode":{"mode":"SINGLE_NODE_WRITER"}}]}"#
                .to_string(),
            "INVALID_ARGUMENT",
            "volume_capabilities[0]: one of access type block or mount is required",
        ),
        (
            format!(r#"{{"volume_capabilities":[{mount}]}}"#),
            "INVALID_ARGUMENT",
            "Name missing in request",
        ),
        (
            r#"{"name":"v1"}"#.to_string(),
            "INVALID_ARGUMENT",
            "Volume Capabilities missing in request",
        ),
        (
            format!(
                r#"{{"name":"v1","volume_capabilities":[{mount},{{"block":{{}},"access_mode":{{"mode":"SINGLE_NODE_WRITER"}}}}]}}"#
            ),
            "INVALID_ARGUMENT",
            "cannot have both block and mount access type",
        ),
        (
            format!(
                r#"{{"name":"v1","volume_capabilities":[{mount}],"capacity_range":{{"required_bytes":"-1"}}}}"#
            ),
            "INVALID_ARGUMENT",
            "cannot have negative capacity",
        ),
        (
            format!(
                r#"{{"name":"v1","volume_capabilities":[{mount}],"capacity_range":{{"required_bytes":"2","limit_bytes":"1"}}}}"#
            ),
            "INVALID_ARGUMENT",
            "capacity cannot exceed limit",
        ),
    ];
    for (req, code, msg) in &cases {
        let mut lab = crate::common::lab();
        let Err(e) = lab.execute(&format!("csi call CreateVolume '{req}'")) else {
            panic!("{req}: succeeded");
        };
        assert!(
            e.message.contains(&format!("{code} ")) && e.message.ends_with(msg),
            "{req}: {}",
            e.message
        );
        assert!(page.contains(msg), "csi.md does not quote {msg:?}");
    }
    // An existing name with another access mode: ALREADY_EXISTS, in hostpath's wording.
    let mut lab = crate::common::lab();
    crate::common::run(
        &mut lab,
        &format!(r#"csi call CreateVolume '{{"name":"v1","volume_capabilities":[{mount}]}}'"#),
    );
    let Err(e) = lab.execute(
        r#"csi call CreateVolume '{"name":"v1","volume_capabilities":[{"mount":{},"access_mode":{"mode":"MULTI_NODE_MULTI_WRITER"}}]}'"#,
    ) else {
        panic!("same name, other mode: succeeded");
    };
    assert!(
        e.message
            .ends_with("ALREADY_EXISTS (6) from CreateVolume: Volume with the same name: v1 but with different access mode already exist"),
        "{}",
        e.message
    );
    assert!(
        page.contains(
            "Volume with the same name: NAME but with different access mode already exist"
        ) && page.contains("Some checks are the lab's own"),
        "csi.md does not say which checks are the lab's own"
    );
    assert!(
        !page.contains("checks only that block and mount are not both asked for"),
        "csi.md still says CreateVolume checks only block and mount"
    );
}

/// QA 22 §6: the teaching pages said `back` puts a student back where the step began (it
/// goes to the step before; `lesson retry` starts the step over), and stated the spread rule
/// of choice answers without the rounding up the test applies (2 of 4 passes).
#[test]
fn the_teaching_pages_say_what_back_and_the_spread_test_do() {
    let flat = |page: &str| {
        read(&src().join(page))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let index = flat("teaching/index.md");
    assert!(!index.contains("`back` or `lesson retry` puts"), "{index}");
    assert!(index.contains("`back` goes to the step before"), "{index}");
    let writing = flat("teaching/writing-lessons.md");
    assert!(
        writing.contains(
            "40 % of a lesson's choice quizzes, rounded up (at most 1 of 2, 2 of 4 or 5, 4 of 8)"
        ),
        "{writing}"
    );
    // The numbers the page gives are the bound `lesson_files` applies: 40 %, rounded up.
    for (quizzes, most) in [(2usize, 1usize), (4, 2), (5, 2), (8, 4)] {
        assert_eq!((quizzes * 2).div_ceil(5), most, "{quizzes} quizzes");
    }
}
