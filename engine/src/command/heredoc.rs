//! Here-documents: `apply -f - <<EOF`, then the manifest, then a line `EOF`, as a shell
//! takes them. Scripts, the REPL and the engine share these functions.
//!
//! The end is found as bash finds it: after `<<EOF` only a line that is exactly `EOF`
//! ends the document (an indented `  EOF` is a line of the document); after `<<-EOF`
//! leading tabs are removed from every line of the document and from the closing line
//! (so `\tEOF` ends it), and nothing else is (spaces stay, as in bash).

/// How a here-document started by a line ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heredoc<'a> {
    /// The word on the closing line (`EOF`; the quotes of `<<'EOF'` removed).
    pub word: &'a str,
    /// `<<-`: leading tabs are removed from the document's lines and the closing line.
    pub strip_tabs: bool,
}

impl Heredoc<'_> {
    /// The document's line as the command reads it (leading tabs removed after `<<-`).
    pub(crate) fn body_line<'l>(&self, line: &'l str) -> &'l str {
        if self.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        }
    }

    /// Whether `line` closes the document: exactly the word (after `<<-`, once leading
    /// tabs are removed).
    pub fn ends_at(&self, line: &str) -> bool {
        self.body_line(line) == self.word
    }

    /// A line that holds the word but does not close the document (indented, or with
    /// spaces after it), for the message about a document that never ends.
    fn near_miss(&self, line: &str) -> bool {
        !self.ends_at(line) && line.trim() == self.word
    }

    /// How the document must end, for messages.
    fn spelled(&self) -> String {
        format!("<<{}{}", if self.strip_tabs { "-" } else { "" }, self.word)
    }
}

/// The here-document a line starts, if it ends with one (`apply -f - <<EOF`, also
/// `<<'EOF'`, `<<"EOF"` and `<<-EOF`): the lines after it, up to the closing line, are the
/// command's standard input, as in a shell.
pub fn heredoc_start(line: &str) -> Option<Heredoc<'_>> {
    let t = line.trim_end();
    // The last `<<`: the last `<` that follows another (memchr looks a word at a time;
    // `str::rfind` of a two-byte pattern sets up a substring search first).
    let bytes = t.as_bytes();
    let i = memchr::memrchr_iter(b'<', bytes).find(|&j| j > 0 && bytes[j - 1] == b'<')? - 1;
    let before = &t[..i];
    if !before.is_empty() && !before.ends_with(char::is_whitespace) {
        return None;
    }
    let after = &t[i + 2..];
    let (strip_tabs, after) = match after.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, after),
    };
    let word = after.trim();
    let word = word
        .strip_prefix('\'')
        .and_then(|w| w.strip_suffix('\''))
        .or_else(|| word.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
        .unwrap_or(word);
    let ok = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(Heredoc { word, strip_tabs })
}

/// The word ending a here-document if `line` ends with one (see [`heredoc_start`]).
pub fn heredoc_marker(line: &str) -> Option<&str> {
    heredoc_start(line).map(|h| h.word)
}

/// Split a command with a here-document (`apply -f - <<EOF` and the lines after it, up to
/// `EOF`) into the command line without the marker and the document's text. A line
/// without a marker is returned as it is.
pub fn split_heredoc(text: &str) -> Result<(&str, Option<String>), String> {
    let (first, rest) = match text.split_once('\n') {
        Some((f, r)) => (f, Some(r)),
        None => (text, None),
    };
    let Some(doc) = heredoc_start(first) else {
        return Ok((text, None));
    };
    let cmd = first.trim_end();
    let cmd = cmd[..cmd.rfind("<<").unwrap_or(cmd.len())].trim_end();
    let Some(rest) = rest else {
        return Err(format!(
            "`{}` starts a here-document, but no lines follow: in a script or at the REPL, put the manifest on the next lines and end it with a line `{}`; in the dashboard, give a file: `apply -f FILE`",
            doc.spelled(),
            doc.word
        ));
    };
    let mut body = String::new();
    let mut near = None;
    for line in rest.lines() {
        if doc.ends_at(line) {
            return Ok((cmd, Some(body)));
        }
        if near.is_none() && doc.near_miss(line) {
            near = Some(line);
        }
        body.push_str(doc.body_line(line));
        body.push('\n');
    }
    let mut msg = format!(
        "the here-document started by `{}` never ends: add a line holding only `{}`, at the start of the line",
        doc.spelled(),
        doc.word
    );
    if let Some(line) = near {
        msg.push_str(&format!(
            " (the line {line:?} does not end it: as in bash, `<<{w}` ends only at a line that is exactly `{w}`, and `<<-{w}` also at one indented with tabs)",
            w = doc.word
        ));
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        assert_eq!(heredoc_marker("apply -f - <<EOF"), Some("EOF"));
        assert_eq!(heredoc_marker("apply -f - <<'END'"), Some("END"));
        assert_eq!(heredoc_marker("apply -f - << \"X_1\"  "), Some("X_1"));
        assert_eq!(heredoc_marker("echo a<<b"), None);
        assert_eq!(heredoc_marker("echo <<"), None);
        assert_eq!(heredoc_marker("pod create web"), None);
        assert_eq!(
            heredoc_start("apply -f - <<-EOF"),
            Some(Heredoc {
                word: "EOF",
                strip_tabs: true
            })
        );
        assert_eq!(
            heredoc_start("apply -f - <<EOF").map(|h| h.strip_tabs),
            Some(false)
        );
    }

    #[test]
    fn splits_the_document_off() {
        let (cmd, doc) = split_heredoc("apply -f - <<EOF\na: 1\n# c\nEOF").unwrap();
        assert_eq!(cmd, "apply -f -");
        assert_eq!(doc.as_deref(), Some("a: 1\n# c\n"));
        assert_eq!(split_heredoc("get pods").unwrap(), ("get pods", None));
        assert!(
            split_heredoc("apply -f - <<EOF")
                .unwrap_err()
                .contains("no lines follow")
        );
        assert!(
            split_heredoc("apply -f - <<EOF\na: 1")
                .unwrap_err()
                .contains("never ends")
        );
    }

    /// Issue 38: an indented `  EOF` ended a `<<EOF` document; bash ends it only at a line
    /// that is exactly the word. `<<-EOF` removes leading tabs (not spaces), as bash does.
    #[test]
    fn the_closing_line_is_found_as_bash_finds_it() {
        let e = split_heredoc("apply -f - <<EOF\na: 1\n  EOF").unwrap_err();
        assert!(e.contains("never ends"), "{e}");
        assert!(e.contains("the line \"  EOF\" does not end it"), "{e}");
        let (_, doc) = split_heredoc("apply -f - <<EOF\na: 1\n  EOF\nEOF").unwrap();
        assert_eq!(doc.as_deref(), Some("a: 1\n  EOF\n"));
        assert!(split_heredoc("apply -f - <<EOF\na: 1\nEOF ").is_err());
        let (_, doc) = split_heredoc("apply -f - <<-EOF\n\ta:\n\t\t  b: 1\n\tEOF").unwrap();
        assert_eq!(doc.as_deref(), Some("a:\n  b: 1\n"));
        assert!(split_heredoc("apply -f - <<-EOF\na: 1\n  EOF").is_err());
        let h = heredoc_start("x <<-EOF").unwrap();
        assert!(h.ends_at("\t\tEOF") && h.ends_at("EOF") && !h.ends_at(" EOF"));
    }
}
