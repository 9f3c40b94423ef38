//! The output pane: each command echoed after `lab> `, then what it printed, painted by
//! role; errors as `✗ error: …`. Long lines wrap. Anchored at the bottom: the scroll
//! position counts lines up from the newest, and only the lines that fit are wrapped.

use super::{dim, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use crate::theme::Theme;
use lab_engine::render::Line as OutLine;
use lab_engine::render::escape_controls;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthChar;

/// Where each row of a line wrapped at `width` columns starts, as character indices into
/// the line's text as shown (control characters escaped): at a word boundary when the word fits on a row, mid-word only for a
/// word longer than the row (JSON and IDs have few spaces to break at). A row's trailing
/// space stays on it, so the text reads back unchanged.
fn row_starts(line: &OutLine, width: usize) -> Vec<usize> {
    let width = width.max(1);
    let texts: Vec<_> = line
        .spans
        .iter()
        .map(|s| escape_controls(&s.text))
        .collect();
    let widths: Vec<usize> = texts
        .iter()
        .flat_map(|t| t.chars())
        .map(|c| c.width().unwrap_or(0))
        .collect();
    let spaces: Vec<bool> = texts
        .iter()
        .flat_map(|t| t.chars())
        .map(|c| c == ' ')
        .collect();
    let mut starts = vec![0];
    let mut col = 0;
    // The index just after the last space on the current row.
    let mut after_space: Option<usize> = None;
    for (i, &cw) in widths.iter().enumerate() {
        if col + cw > width && col > 0 {
            let row_start = *starts.last().unwrap_or(&0);
            let start = match after_space {
                Some(a) if a > row_start && a <= i => a,
                _ => i,
            };
            starts.push(start);
            col = widths[start..i].iter().sum();
            after_space = None;
        }
        col += cw;
        // A space after the row's indentation is a place to break; the indentation is not.
        let row_start = *starts.last().unwrap_or(&0);
        if spaces[i] && spaces[row_start..i].iter().any(|s| !s) {
            after_space = Some(i + 1);
        }
    }
    starts
}

/// Rows a line takes when wrapped at `width` columns ([`wrap`]'s row count).
pub fn wrapped_height(line: &OutLine, width: usize) -> usize {
    row_starts(line, width).len()
}

/// Wrap a line at `width` columns, at word boundaries where a word fits ([`row_starts`]).
/// Control characters are escaped (`\u{1b}`), as the REPL shows them.
pub fn wrap(theme: &Theme, line: &OutLine, width: usize) -> Vec<Line<'static>> {
    let starts = row_starts(line, width);
    let mut rows: Vec<Line<'static>> = vec![Line::default()];
    let mut next_break = starts.iter().skip(1).copied().peekable();
    let mut idx = 0;
    for s in &line.spans {
        let style = theme.role(s.role);
        let mut chunk = String::new();
        for c in escape_controls(&s.text).chars() {
            if next_break.peek() == Some(&idx) {
                next_break.next();
                if let Some(last) = rows.last_mut()
                    && !chunk.is_empty()
                {
                    last.spans
                        .push(Span::styled(std::mem::take(&mut chunk), style));
                }
                rows.push(Line::default());
            }
            chunk.push(c);
            idx += 1;
        }
        if !chunk.is_empty()
            && let Some(last) = rows.last_mut()
        {
            last.spans.push(Span::styled(chunk, style));
        }
    }
    rows
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let out = &app.ui.output;
    let scroll = app.ui.scroll[Pane::Output.index()].min(out.len().saturating_sub(1));
    let keys_here = app.ui.focus == Pane::Output || app.ui.mode == crate::Mode::Command;
    let extra = if scroll > 0 {
        let n = app
            .panes()
            .iter()
            .position(|p| *p == Pane::Output)
            .map_or(7, |i| i + 1);
        let how = if keys_here {
            "PgDn".to_string()
        } else {
            format!("Alt-{n}, then PgDn")
        };
        vec![Span::styled(
            format!(
                "↓ {} below · {how}",
                lab_engine::util::text::plural(scroll, "more line", "more lines")
            ),
            t.warn,
        )]
    } else if let Some(j) = &app.ui.jump {
        let keys = if j.describing {
            "Esc: back to the listing"
        } else {
            "↑/↓ select · Enter describe · Esc back"
        };
        vec![Span::styled(keys, t.warn)]
    } else {
        vec![Span::styled("PgUp/PgDn scroll", t.dim)]
    };
    let block = pane_block(app, Pane::Output, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    if out.is_empty() {
        put(
            buf,
            inner,
            0,
            &dim(
                t,
                "output of your commands appears here — start with `lesson list` (the guided lessons), `help`, or `pod create web --node node-1`",
            ),
        );
        return;
    }
    let (w, h) = (inner.width as usize, inner.height as usize);
    // Walk back from the bottom line, wrapping only what fits.
    let end = out.len() - scroll;
    let selected = app.listing_row();
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut i = end;
    while i > 0 && rows.len() < h {
        i -= 1;
        let mut wrapped = wrap(t, &out[i], w);
        if selected == Some(i) {
            // The `:KIND` listing's selected row, as k9s draws its cursor.
            for row in &mut wrapped {
                for span in &mut row.spans {
                    span.style = span.style.patch(t.selected);
                }
            }
        }
        wrapped.extend(rows);
        rows = wrapped;
    }
    let skip = rows.len().saturating_sub(h);
    for (y, l) in rows.iter().skip(skip).enumerate() {
        put(buf, inner, y as u16, l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_engine::render::Role;

    #[test]
    fn wrapping_keeps_styles_and_counts_rows() {
        let t = Theme::standard();
        let l = OutLine::new()
            .push("abcd", Role::Bad)
            .push("efg", Role::Plain);
        assert_eq!(wrapped_height(&l, 3), 3);
        let rows = wrap(&t, &l, 3);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].spans[0].content, "d");
        assert_eq!(rows[1].spans[0].style, t.bad);
        assert_eq!(rows[1].spans[1].content, "ef");
        assert_eq!(wrapped_height(&OutLine::new(), 10), 1);
    }

    /// Words are not broken when they fit on a row; a longer one is.
    #[test]
    fn wrapping_breaks_at_words() {
        let t = Theme::standard();
        let text = |rows: &[Line]| -> Vec<String> {
            rows.iter()
                .map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        let l = OutLine::new().push("policy namespaceSelector allows", Role::Plain);
        let rows = wrap(&t, &l, 20);
        assert_eq!(text(&rows), ["policy ", "namespaceSelector ", "allows"]);
        assert_eq!(wrapped_height(&l, 20), 3);
        let l = OutLine::new()
            .push("id ", Role::Dim)
            .push("0123456789abcdef", Role::Plain);
        assert_eq!(text(&wrap(&t, &l, 8)), ["id ", "01234567", "89abcdef"]);
        assert_eq!(wrapped_height(&l, 8), 3);
        // Indentation is no place to break: a long indented word is cut, not pushed down.
        let l = OutLine::new().push("  CNI_ARGS=a;b;c;d", Role::Plain);
        assert_eq!(text(&wrap(&t, &l, 10)), ["  CNI_ARGS", "=a;b;c;d"]);
        // A control character shows escaped, as the REPL prints it, and wraps as shown.
        let l = OutLine::new().push("v\x1b[2J ok", Role::Plain);
        assert_eq!(text(&wrap(&t, &l, 9)), ["v\\u{1b}[2", "J ok"]);
        assert_eq!(wrapped_height(&l, 9), 2);
    }
}
