//! Go's `encoding/json` wording for syntax errors, which libcni, Multus and the plugins
//! print: serde finds the same spot, Go names it differently (`unexpected end of JSON
//! input`, `invalid character 'x' looking for beginning of value`, …).

/// Go's `encoding/json` syntax error for the text serde stopped at (the common cases:
/// a character where a value, a key, `,` or `:` should be, a misspelled `null`/`true`/
/// `false`, text after the value, the end of the input); others keep serde's wording.
pub(crate) fn syntax_error(text: &str, e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".to_string();
    }
    let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    let chars: Vec<char> = line.chars().collect();
    let col = e.column().saturating_sub(1);
    let c = chars.get(col).copied();
    let msg = e.to_string();
    let Some(c) = c else { return msg };
    let q = go_char(c);
    if msg.starts_with("expected ident") {
        // serde stops at the first wrong letter of a literal; Go names the letter it expected.
        let start = (0..=col)
            .rev()
            .find(|&i| {
                matches!(chars[i], 'n' | 't' | 'f')
                    && (i == 0 || !chars[i - 1].is_ascii_alphabetic())
            })
            .unwrap_or(col);
        let word = match chars.get(start) {
            Some('n') => "null",
            Some('t') => "true",
            _ => "false",
        };
        let want = word.chars().nth(col - start).unwrap_or(' ');
        return format!(
            "invalid character {q} in literal {word} (expecting {})",
            go_char(want)
        );
    }
    let what = if msg.starts_with("expected value") {
        "looking for beginning of value"
    } else if msg.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if msg.starts_with("expected `,` or `]`") {
        "after array element"
    } else if msg.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if msg.starts_with("expected `:`") {
        "after object key"
    } else if msg.starts_with("trailing characters") {
        "after top-level value"
    } else {
        return msg;
    };
    format!("invalid character {q} {what}")
}

/// Go's `quoteChar`: `'x'`, with `'\''` and `'"'` special.
fn go_char(c: char) -> String {
    match c {
        '\'' => "'\\''".to_string(),
        '"' => "'\"'".to_string(),
        c if c.is_control() => format!("{:?}", c),
        c => format!("'{c}'"),
    }
}
