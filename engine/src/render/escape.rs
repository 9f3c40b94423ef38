//! Nothing from outside reaches the terminal raw. Names, files, conflists, lesson text, save
//! journals and echoed command lines can hold control characters: an ESC starts a terminal
//! escape sequence (OSC `\x1b]0;title\x07` retitles the window, CSI `\x1b[2J` clears the
//! screen, others remap keys or write files on some terminals). Every painter
//! ([`Outcome::to_text`](super::Outcome::to_text), [`super::ansi`]) and every front end that
//! writes text of its own passes it through [`escape_controls`] at the edge, so each path is
//! covered whatever produced the text. The dashboard paints the lab's lines the same way
//! (`tui::view::paint`, `tui::view::output::wrap`); the rest of its text goes through
//! ratatui, which drops control characters.

use std::borrow::Cow;

/// A character that must not reach a terminal as is: C0 controls (but tab and newline,
/// which multi-line text keeps), DEL and the C1 controls U+0080–U+009F.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Whether `text` holds an [unsafe](is_unsafe) character, from its bytes: a C0 control
/// but tab and newline, DEL, or a C1 control, which UTF-8 writes as 0xC2 then 0x80–0x9F
/// (0xC2 also starts U+00A0–U+00BF, such as `·`, which are safe). Every line the lab
/// prints passes here; a byte loop is several times cheaper than decoding characters.
fn holds_unsafe(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Most lines hold none of these bytes: one pass decides them, 32 bytes at a time
    // without branches (so the compiler can use vector compares). The last bytes are
    // checked as a block of their own, padded with spaces (byte by byte they would cost
    // more than the rest of the line).
    let suspect = |b: u8| ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2);
    let blocks = bytes.chunks_exact(32);
    let mut last = [b' '; 32];
    last[..blocks.remainder().len()].copy_from_slice(blocks.remainder());
    if !blocks
        .chain(std::iter::once(&last[..]))
        .any(|c| c.iter().fold(false, |seen, &b| seen | suspect(b)))
    {
        return false;
    }
    bytes.iter().enumerate().any(|(i, &b)| {
        (b < 0x20 && b != b'\n' && b != b'\t')
            || b == 0x7f
            || (b == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
    })
}

/// `text` with every [unsafe](is_unsafe) character written as a Rust escape (`\u{1b}`,
/// the form error messages already use when they quote a name with `{:?}`). Text without
/// one is returned as is, without copying.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !holds_unsafe(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_is_untouched() {
        assert_eq!(
            escape_controls("a\x1b]0;pwned\x07b\x1b[2J"),
            "a\\u{1b}]0;pwned\\u{7}b\\u{1b}[2J"
        );
        assert_eq!(escape_controls("\u{7f}\u{9b}\r"), "\\u{7f}\\u{9b}\\u{d}");
        let plain = "tab\tnewline\nünïcode · ✓";
        assert!(matches!(escape_controls(plain), Cow::Borrowed(_)));
        assert_eq!(escape_controls(plain), plain);
        // The byte check and the character check agree on every character.
        for c in (0u32..0x3_0000).filter_map(char::from_u32) {
            let t = format!("a{c}b");
            assert_eq!(holds_unsafe(&t), is_unsafe(c), "{c:?}");
        }
        // Around the 32-byte blocks and the padded tail: a control byte anywhere is found.
        for len in [31, 32, 33, 63, 64, 65] {
            for at in 0..len {
                let mut t = vec![b'x'; len];
                t[at] = 0x1b;
                let t = String::from_utf8(t).unwrap();
                assert!(holds_unsafe(&t), "len {len}, at {at}");
            }
            assert!(!holds_unsafe(&"x".repeat(len)), "len {len}");
        }
    }
}
