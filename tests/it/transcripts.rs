//! Golden transcripts: every `tests/transcripts/*.lab` file is a session — `$ command`
//! lines, each followed by the exact output it must print (stdout, then `error: …` lines).
//! Lines starting with `# ` are comments. Each file starts from the default desk.
//! Run with `BLESS=1` to rewrite the expected output after an intended change.

use lab_engine::script::run_line;
use std::fmt::Write as _;
use std::path::Path;

struct Entry {
    comments: Vec<String>,
    command: String,
    expected: String,
}

fn parse(text: &str) -> (Vec<String>, Vec<Entry>) {
    let mut header = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut pending_comments = Vec::new();
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            entries.push(Entry {
                comments: std::mem::take(&mut pending_comments),
                command: cmd.to_string(),
                expected: String::new(),
            });
        } else if line.starts_with("# ") || line == "#" {
            if entries.is_empty() {
                header.push(line.to_string());
            } else {
                pending_comments.push(line.to_string());
            }
        } else if let Some(e) = entries.last_mut() {
            e.expected.push_str(line);
            e.expected.push('\n');
        }
    }
    for e in &mut entries {
        while e.expected.ends_with("\n\n") {
            e.expected.pop();
        }
        if e.expected == "\n" {
            e.expected.clear();
        }
    }
    (header, entries)
}

fn render(header: &[String], entries: &[(Entry, String)]) -> String {
    let mut s = String::new();
    for h in header {
        let _ = writeln!(s, "{h}");
    }
    for (e, actual) in entries {
        if !s.is_empty() {
            s.push('\n');
        }
        for c in &e.comments {
            let _ = writeln!(s, "{c}");
        }
        let _ = writeln!(s, "$ {}", e.command);
        s.push_str(actual);
    }
    s
}

fn check_file(path: &Path, bless: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (header, entries) = parse(&text);
    let mut desk = crate::common::desk();
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let actual = match run_line(&mut desk, i + 1, &e.command) {
            Some(r) => {
                if !r.ok {
                    failures.push(format!(
                        "--- {} : $ {}\n--- did not meet its expectation (a line without `!` failed, or a `!` line succeeded):\n{}{}",
                        path.display(),
                        e.command,
                        r.stdout,
                        r.stderr
                    ));
                }
                format!("{}{}", r.stdout, r.stderr)
            }
            None => String::new(),
        };
        if actual != e.expected {
            failures.push(format!(
                "--- {} : $ {}\n--- expected\n{}--- actual\n{}",
                path.display(),
                e.command,
                e.expected,
                actual
            ));
        }
        results.push((e, actual));
    }
    if bless {
        std::fs::write(path, render(&header, &results)).map_err(|e| e.to_string())?;
        failures.retain(|f| f.contains("did not meet its expectation"));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

#[test]
fn transcripts() {
    let bless = std::env::var_os("BLESS").is_some();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/transcripts exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "lab"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no transcripts found in {}",
        dir.display()
    );
    let mut errors = Vec::new();
    for f in &files {
        if let Err(e) = check_file(f, bless) {
            errors.push(e);
        }
    }
    assert!(
        errors.is_empty(),
        "{} transcript mismatch(es) (run with BLESS=1 to accept):\n{}",
        errors.len(),
        errors.join("\n")
    );
}
