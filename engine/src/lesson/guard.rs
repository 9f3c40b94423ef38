//! Lesson code cannot touch the learner's files. A lesson file comes from anywhere (a
//! teacher, the internet), and its code blocks are run by `lesson play`, `lesson verify`,
//! `lesson lint`, `skip`, a predict quiz's answer and the replay `lesson start`, `back`,
//! `lesson retry` and `lesson reset` do. None of that may read or write a file: `save` and
//! `load` are refused, and `cni conf load` only takes the built-in example configs (read
//! from the binary, never from the disk). What the learner types at the prompt during a
//! lesson is not lesson code and may use every command.
//!
//! The rule is [`refusal`]; every place lesson code runs goes through
//! [`Lab::execute_lesson_code`], and the linter reports the same refusals as errors.

use super::desk::Desk;
use crate::command::Command;
use crate::command::grammar::{CniCmd, CniConfCmd};
use crate::engine::cni_cmd::EXAMPLE_CONFLISTS;
use crate::engine::seen::Executed;
use crate::engine::{LabError, Reason};
use crate::render::Outcome;

/// The words every refusal contains (the linter and tests look for them).
pub const MARK: &str = "lessons may not read or write files";

/// Whether `cni conf load FILE` names one of the example configs built into the lab (by
/// its file name, e.g. `assets/conflists/01-minimal.conflist`).
fn is_builtin_conflist(file: &str) -> bool {
    std::path::Path::new(file)
        .file_name()
        .and_then(|s| s.to_str())
        .is_some_and(|base| EXAMPLE_CONFLISTS.iter().any(|(n, _)| *n == base))
}

/// Why this command may not run as lesson code, or `None` when it may: it would read or
/// write a file on the learner's computer.
pub fn refusal(cmd: &Command) -> Option<String> {
    let (name, what) = match cmd {
        Command::Save(a) => ("save", format!("it would write {}", a.file)),
        Command::Load(a) => ("load", format!("it would read {}", a.file)),
        Command::Play(a) => ("play", format!("it would read {}", a.file)),
        Command::Cni(CniCmd::Conf(CniConfCmd::Load { file, .. })) if !is_builtin_conflist(file) => {
            let names: Vec<&str> = EXAMPLE_CONFLISTS.iter().map(|(n, _)| *n).collect();
            (
                "cni conf load",
                format!(
                    "it would read {file}; a lesson may load only the built-in examples: {}",
                    names.join(", ")
                ),
            )
        }
        _ => return None,
    };
    Some(format!(
        "`{name}` refused: {MARK} ({what}); type the command yourself at the prompt if you want it"
    ))
}

/// [`refusal`] of a command line (`None` for a line that does not parse: running it fails
/// anyway, and touches nothing).
pub fn refusal_of_line(line: &str) -> Option<String> {
    match crate::command::parse(crate::command::strip_comment(line)) {
        Ok(Some(cmd)) => refusal(&cmd),
        _ => None,
    }
}

impl Desk {
    /// Run one line of lesson code: refused (nothing runs, nothing is journaled) when
    /// [`refusal`] says so; otherwise through [`Desk::execute`] with the disk out of reach
    /// (a file read is answered like a replay with no files, so `cni conf load` falls back
    /// to the built-in example of that name).
    pub fn execute_lesson_code(&mut self, line: &str) -> Result<Outcome, LabError> {
        self.run_lesson_code(line).result
    }

    /// [`Desk::execute_lesson_code`], saying what the line did as data.
    pub fn run_lesson_code(&mut self, line: &str) -> Executed {
        if let Some(reason) = refusal_of_line(line) {
            return Executed::nothing(Err(LabError::msg(reason).because(Reason::Refused)));
        }
        let saved = self.lab.swap_replay_files(Some(Default::default()));
        let ran = self.run(line);
        self.lab.swap_replay_files(saved);
        ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_commands_are_refused_and_the_rest_runs() {
        for line in [
            "save /tmp/x",
            "load /tmp/x.json",
            "cni conf load /etc/passwd",
            "cni conf load my.conflist --node node-1",
        ] {
            let r = refusal_of_line(line).unwrap_or_else(|| panic!("{line} allowed"));
            assert!(r.contains(MARK), "{r}");
        }
        assert!(
            refusal_of_line("save /tmp/x")
                .unwrap()
                .starts_with("`save` refused")
        );
        for line in [
            "pod create web --node node-1",
            "cni conf load assets/conflists/01-minimal.conflist",
            "cni conf load 05-lab-v110.conflist --node node-1",
            "nonsense words",
            "",
        ] {
            assert_eq!(refusal_of_line(line), None, "{line}");
        }
    }

    #[test]
    fn lesson_code_never_reads_the_disk() {
        let dir = std::env::temp_dir().join(format!("lab-guard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A file on disk named like a built-in example: lesson code gets the built-in.
        let f = dir.join("01-minimal.conflist");
        std::fs::write(&f, "not json").unwrap();
        let mut lab = Desk::new();
        let line = format!("cni conf load {}", f.display());
        lab.execute_lesson_code(&line)
            .expect("the built-in is used");
        assert!(
            lab.execute(&line).is_err(),
            "the learner's line reads the file"
        );
        let save = dir.join("x.json");
        let e = lab
            .execute_lesson_code(&format!("save {}", save.display()))
            .unwrap_err();
        assert!(e.message.contains(MARK), "{}", e.message);
        assert!(!save.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
