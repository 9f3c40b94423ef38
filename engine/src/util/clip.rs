//! Cutting what a learner typed before an error message repeats it: a 10 MB word echoed
//! in full buries the message (and the terminal). A word over [`LONG_WORD`] bytes is shown
//! as its first [`KEEP`] characters, `…` and its size: `"aaaa…" (10485760 bytes)`.

use std::borrow::Cow;

/// Words up to this many bytes are echoed whole (longer than any name the API server
/// accepts, 253, and than any path or token the lab prints in an error).
pub(crate) const LONG_WORD: usize = 256;

/// How many characters of a long word are kept.
pub(crate) const KEEP: usize = 60;

fn head(s: &str) -> &str {
    match s.char_indices().nth(KEEP) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A long word cut: its first [`KEEP`] characters, `…` and its size in bytes.
pub fn cut(s: &str) -> String {
    format!("{}… ({} bytes)", head(s), s.len())
}

/// `s` quoted as `{:?}` quotes it, or cut when it is long: `"aaaa…" (10485760 bytes)`.
pub fn quoted(s: &str) -> String {
    if s.len() <= LONG_WORD {
        format!("{s:?}")
    } else {
        let h = format!("{:?}", head(s));
        format!("{}…\" ({} bytes)", &h[..h.len() - 1], s.len())
    }
}

/// `message` with every word (a run without whitespace) over [`LONG_WORD`] bytes cut to
/// its first [`KEEP`] characters, `…` and its size; closing quotes and brackets are kept
/// and punctuation after the word follows the size. Messages without one are returned as
/// is.
pub(crate) fn long_words(message: &str) -> Cow<'_, str> {
    let long = message
        .split(char::is_whitespace)
        .any(|w| w.len() > LONG_WORD);
    if !long {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(LONG_WORD * 2);
    let mut rest = message;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        if word.len() <= LONG_WORD {
            out.push_str(word);
            continue;
        }
        // Trailing punctuation (at most 3 characters): closing quotes and brackets stay
        // with the cut word, the rest (`;`, `,`, `:`) follows the size.
        let body = word.trim_end_matches(|c: char| c.is_ascii_punctuation());
        let tail_start = body.len().max(word.len().saturating_sub(3));
        let tail_start = (tail_start..=word.len())
            .find(|&i| word.is_char_boundary(i))
            .unwrap_or(word.len());
        let tail = &word[tail_start..];
        let close_len = tail
            .find(|c: char| !matches!(c, '"' | '\'' | ')' | ']' | '}' | '`'))
            .unwrap_or(tail.len());
        let (close, after) = tail.split_at(close_len);
        out.push_str(head(word));
        out.push('…');
        out.push_str(close);
        out.push_str(&format!(" ({} bytes)", word.len()));
        out.push_str(after);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_are_cut_and_short_ones_kept() {
        let plain = "unknown command \"nod\"; did you mean \"node\"?";
        assert!(matches!(long_words(plain), Cow::Borrowed(_)));
        let big = "a".repeat(10 << 20);
        let msg = format!("unknown command \"{big}\"; `help` lists the commands");
        let cut = long_words(&msg);
        assert_eq!(
            cut,
            format!(
                "unknown command \"{}…\" ({} bytes); `help` lists the commands",
                "a".repeat(KEEP - 1),
                big.len() + 3
            )
        );
        assert_eq!(quoted("web"), "\"web\"");
        assert_eq!(
            quoted(&big),
            format!("\"{}…\" ({} bytes)", "a".repeat(KEEP), big.len())
        );
        let wide = "é".repeat(300);
        assert!(long_words(&wide).starts_with(&"é".repeat(KEEP)));
        assert!(quoted(&wide).ends_with("(600 bytes)"));
    }
}

/// `s` cut to at most `max` characters, the last of them `…` when something was cut.
pub fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let keep: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", keep.trim_end())
}

#[cfg(test)]
mod fit_tests {
    #[test]
    fn fit_cuts_with_an_ellipsis_only_when_needed() {
        assert_eq!(super::fit("short", 10), "short");
        assert_eq!(super::fit("a long title here", 8), "a long…");
        assert_eq!(super::fit("é中文 abc", 4), "é中文…");
    }
}
