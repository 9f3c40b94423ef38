//! The command language: text → [`grammar::Command`]. One definition (a clap tree) serves
//! parsing, help and suggestions for every front end.

pub mod complete;
pub mod explain;
pub mod grammar;
pub mod help;
pub mod reference;

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
        ParseError::Invalid(
            "error: unbalanced quotes in the line (close every ' and \")".to_string(),
        )
    })
}

/// Parse one line (without its comment) into a command. Blank lines give `Ok(None)`.
pub fn parse(line: &str) -> Result<Option<Command>, ParseError> {
    let mut words = split(line)?;
    if words.is_empty() {
        return Ok(None);
    }
    grammar::split_kind_name(&mut words);
    match parse_words(&words) {
        Ok(l) => {
            grammar::check(&l.command).map_err(ParseError::Invalid)?;
            Ok(Some(l.command))
        }
        // `pod create --help` and `pod` alone are the same as `help pod create`/`help pod`.
        Err(e) => match help::from_clap_error(&words, &e) {
            ParseError::Help(w) => Ok(Some(Command::Help(grammar::HelpArgs {
                words: w.split_whitespace().map(String::from).collect(),
            }))),
            invalid => Err(invalid),
        },
    }
}

thread_local! {
    /// The clap tree, built once per thread: building it costs far more than parsing a line.
    static TREE: std::cell::RefCell<clap::Command> =
        std::cell::RefCell::new(<CommandLine as clap::CommandFactory>::command());
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

/// Remove a trailing `#` comment that is not inside quotes.
pub fn strip_comment(line: &str) -> &str {
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
    fn grammar_is_consistent() {
        CommandLine::command().debug_assert();
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

    #[test]
    fn comments_are_stripped_outside_quotes() {
        assert_eq!(strip_comment("echo a # b"), "echo a ");
        assert_eq!(strip_comment("echo 'a # b'"), "echo 'a # b'");
        assert_eq!(strip_comment("echo a#b"), "echo a#b");
    }
}
