//! Shell completion as a user gets it: the bash script is sourced in a real bash and asked
//! what it completes (`COMP_WORDS` as bash fills them, then the completion function), and
//! the zsh and fish scripts are checked for the same value lists.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_cni-csi-lab");

fn script(shell: &str) -> String {
    let out = Command::new(BIN)
        .args(["completions", shell])
        .output()
        .expect("run completions");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 script")
}

/// What bash completes for the words typed so far (the last one is being completed).
fn complete(words: &[&str]) -> Vec<String> {
    complete_among(words, &[])
}

/// [`complete`] in a working directory holding these (empty) files.
fn complete_among(words: &[&str], files: &[&str]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!(
        "lab-completion-{}-{}",
        std::process::id(),
        files.len()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for f in files {
        std::fs::write(dir.join(f), "").expect("a file");
    }
    let file = dir.join("cni-csi-lab.bash");
    std::fs::write(&file, script("bash")).expect("write script");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD=$((${{#COMP_WORDS[@]}}-1))\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         _cni__csi__lab cni-csi-lab \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        file.display(),
        quoted.join(" ")
    );
    // An empty working directory, so file-name completion adds nothing.
    let out = Command::new("bash")
        .arg("-c")
        .arg(&program)
        .current_dir(&dir)
        .output()
        .expect("run bash");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_subcommands_flags_and_values() {
    let first = complete(&["cni-csi-lab", ""]);
    for w in [
        "run",
        "repl",
        "dash",
        "lesson",
        "--preset",
        "--network",
        "--cni-plugins",
    ] {
        assert!(first.contains(&w.to_string()), "{w} missing from {first:?}");
    }
    // Past the first word: the bug this guards against completed nothing here.
    assert_eq!(
        complete(&["cni-csi-lab", "--network", "c"]),
        ["calico-bgp", "cilium"]
    );
    assert_eq!(
        complete(&["cni-csi-lab", "--preset", "th"]),
        ["three-nodes"]
    );
    let presets = complete(&["cni-csi-lab", "--preset", ""]);
    assert!(presets.contains(&"dc-1000".to_string()), "{presets:?}");
    assert_eq!(
        complete(&["cni-csi-lab", "--cni-plugins", "1.1"]),
        ["1.1.1"]
    );
    let run = complete(&["cni-csi-lab", "run", "--"]);
    assert!(run.contains(&"--echo".to_string()), "{run:?}");
    assert!(run.contains(&"--keep-going".to_string()), "{run:?}");
    let lesson = complete(&["cni-csi-lab", "lesson", ""]);
    for w in ["start", "play", "verify", "lint", "list"] {
        assert!(
            lesson.contains(&w.to_string()),
            "{w} missing from {lesson:?}"
        );
    }
    assert_eq!(
        complete(&["cni-csi-lab", "lesson", "start", "ch3"]),
        ["ch3-architecture", "ch3-csi-multus"]
    );
    assert_eq!(
        complete(&["cni-csi-lab", "lesson", "verify", "ch7"]),
        ["ch7-hands-on"]
    );
    assert_eq!(complete(&["cni-csi-lab", "completions", "f"]), ["fish"]);
}

#[test]
fn bash_completes_run_s_script_file() {
    let files = ["demo.lab", "notes.txt"];
    let mut got = complete_among(&["cni-csi-lab", "run", ""], &files);
    got.sort();
    assert!(got.contains(&"demo.lab".to_string()), "{got:?}");
    assert!(!got.contains(&"--echo".to_string()), "{got:?}");
    assert_eq!(
        complete_among(&["cni-csi-lab", "run", "de"], &files),
        ["demo.lab"]
    );
    assert_eq!(
        complete_among(&["cni-csi-lab", "run", "--echo", "d"], &files),
        ["demo.lab"]
    );
    // Flags still complete after a dash, and a flag's values are still its own.
    let flags = complete_among(&["cni-csi-lab", "run", "--e"], &files);
    assert!(flags.contains(&"--echo".to_string()), "{flags:?}");
    assert_eq!(
        complete_among(&["cni-csi-lab", "run", "--network", "cal"], &files),
        ["calico-bgp"]
    );
}

#[test]
fn fish_completes_top_level_option_values_while_the_value_is_missing() {
    let s = script("fish");
    // The condition leaves the word being completed out, so argparse does not fail on
    // `--preset` without its value.
    assert!(
        s.contains("function __fish_cni_csi_lab_at_top_level\n"),
        "{s}"
    );
    for flag in ["preset", "network", "cni-plugins"] {
        let line = s
            .lines()
            .find(|l| l.contains(&format!(" -l {flag} ")) && !l.contains("using_subcommand"))
            .unwrap_or_default();
        assert!(
            line.starts_with("complete -c cni-csi-lab -n \"__fish_cni_csi_lab_at_top_level\""),
            "{flag}: {line}"
        );
        assert!(line.contains(" -f "), "{flag}: values, not files: {line}");
    }
    // Options without a value keep clap_complete's condition.
    assert!(s.contains("complete -c cni-csi-lab -n \"__fish_cni_csi_lab_needs_command\" -l empty"));
}

#[test]
fn zsh_and_fish_scripts_carry_the_same_values() {
    for shell in ["zsh", "fish"] {
        let s = script(shell);
        for v in [
            "three-nodes",
            "dc-1000",
            "calico-bgp",
            "1.1.1",
            "ch7-hands-on",
        ] {
            assert!(s.contains(v), "{shell}: {v} missing");
        }
    }
}
