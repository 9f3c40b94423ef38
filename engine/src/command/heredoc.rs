//! Here-documents: `apply -f - <<EOF`, then the manifest, then a line `EOF`, as a shell
//! takes them. Scripts, the REPL and the engine share these two functions.

/// The word ending a here-document if `line` ends with one (`apply -f - <<EOF`, also
/// `<<'EOF'` and `<<"EOF"`): the lines after it, up to a line holding only that word, are
/// the command's standard input, as in a shell.
pub fn heredoc_marker(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let i = t.rfind("<<")?;
    let before = &t[..i];
    if !before.is_empty() && !before.ends_with(char::is_whitespace) {
        return None;
    }
    let word = t[i + 2..].trim_start_matches('-').trim();
    let word = word
        .strip_prefix('\'')
        .and_then(|w| w.strip_suffix('\''))
        .or_else(|| word.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
        .unwrap_or(word);
    let ok = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(word)
}

/// Split a command with a here-document (`apply -f - <<EOF` and the lines after it, up to
/// `EOF`) into the command line without the marker and the document's text. A line
/// without a marker is returned as it is.
pub fn split_heredoc(text: &str) -> Result<(&str, Option<String>), String> {
    let (first, rest) = match text.split_once('\n') {
        Some((f, r)) => (f, Some(r)),
        None => (text, None),
    };
    let Some(word) = heredoc_marker(first) else {
        return Ok((text, None));
    };
    let cmd = first.trim_end();
    let cmd = cmd[..cmd.rfind("<<").unwrap_or(cmd.len())].trim_end();
    let Some(rest) = rest else {
        return Err(format!(
            "`<<{word}` starts a here-document, but no lines follow: in a script or at the REPL, put the manifest on the next lines and end it with a line `{word}`; in the dashboard, give a file: `apply -f FILE`"
        ));
    };
    let mut body = String::new();
    for line in rest.lines() {
        if line.trim() == word {
            return Ok((cmd, Some(body)));
        }
        body.push_str(line);
        body.push('\n');
    }
    Err(format!(
        "the here-document started by `<<{word}` never ends: add a line holding only `{word}`"
    ))
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
}
