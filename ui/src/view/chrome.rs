//! Everything around the panes: the title bar (with the flash message), the tab bar of the
//! compact layout, the command line, the key footer and the help overlay. The footer and
//! the overlay are drawn from the keymap table.

use super::{dim, put};
use crate::app::{App, FlashLevel};
use crate::keymap::{self, Mode};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Widget};
use unicode_width::UnicodeWidthStr;

/// The title bar: name, cluster summary, and the flash message on the right.
pub fn title(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    buf.set_style(area, t.bar);
    let mode = match app.desk.lab.mode() {
        lab_engine::engine::Mode::Auto => "auto",
        lab_engine::engine::Mode::Step => "step",
    };
    let left = Line::from(vec![
        Span::styled(
            " cni-csi-lab ",
            t.bar.add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "│ {} · mode {mode}{} ",
                app.desk.lab.summary().text(),
                // Real mode: every CNI call also runs the real plugins (`--real-cni`).
                if app.desk.lab.real_mode() {
                    " · real CNI plugins beside the model"
                } else {
                    ""
                }
            ),
            t.bar,
        ),
    ]);
    buf.set_line(area.x, area.y, &left, area.width);
    let used = left.width() as u16 + 2;
    if let Some(f) = &app.ui.flash {
        let style = match f.level {
            FlashLevel::Info => t.bar,
            FlashLevel::Warn => t.bar.add_modifier(ratatui::style::Modifier::ITALIC),
            FlashLevel::Err => t
                .bar
                .add_modifier(ratatui::style::Modifier::BOLD | ratatui::style::Modifier::REVERSED),
        };
        let room = area.width.saturating_sub(used) as usize;
        if room > 4 {
            let text = truncate(&format!(" {} ", f.text), room);
            let w = text.width() as u16;
            buf.set_string(area.x + area.width - w, area.y, &text, style);
        }
    }
}

/// The tab bar of the compact layout: every pane, numbered; the visible one highlighted.
pub fn tabs(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (i, p) in app.panes().iter().enumerate() {
        let label = format!(" {} {} ", i + 1, p.title());
        spans.push(if *p == app.ui.focus {
            Span::styled(label, t.tab_active)
        } else {
            Span::styled(label, t.dim)
        });
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

const PROMPT: &str = "lab> ";

/// The command line (or the filter while it is edited), with the usage hint or the
/// completion candidates after the text.
/// What the empty prompt suggests: the lesson's task while a lesson runs, a first pod on an
/// empty cluster, and a look at an existing pod otherwise.
pub fn placeholder(app: &App) -> String {
    const KEYS: &str = "(Tab completes · Esc: keys for the panes · ? help)";
    if let Some(l) = &app.lesson {
        if l.goal.is_empty() {
            return format!("lesson list · lesson start ID   {KEYS}");
        }
        return format!("task: {}   (hint · skip · Tab completes)", l.goal);
    }
    match app.desk.lab.first_pod() {
        None => format!("try: lesson list · pod create web --node node-1   {KEYS}"),
        Some(("default", name)) => {
            format!("try: describe pod {name}  ·  show wire --list   {KEYS}")
        }
        Some((ns, name)) => {
            format!("try: describe pod {name} -n {ns}  ·  show wire --list   {KEYS}")
        }
    }
}

pub fn prompt(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let ui = &app.ui;
    let (lead, text, cursor) = match ui.mode {
        Mode::Filter => ("/", &ui.filter.text, ui.filter.cursor),
        _ => (PROMPT, &ui.prompt.text, ui.prompt.cursor),
    };
    let editing = matches!(ui.mode, Mode::Command | Mode::Filter);
    let lead_style = if editing { t.prompt } else { t.dim };
    let avail = (area.width as usize).saturating_sub(lead.width() + 1);
    let (shown, _) = visible_text(text, cursor, avail);
    let mut spans = vec![
        Span::styled(lead, lead_style),
        Span::styled(shown.to_string(), if editing { t.plain } else { t.dim }),
    ];
    let after = match ui.mode {
        // A playback types into the line: the cue says how to go on or stop, not a hint
        // about what was typed before.
        _ if app.playback.is_some() => {
            format!("   ▶ {}", app.playback.as_ref().map_or("", |p| p.cue()))
        }
        Mode::Filter => "   Enter keep · Esc clear".to_string(),
        Mode::Command if !ui.candidates.is_empty() => {
            format!("   ⇥ {}", ui.candidates.join("  "))
        }
        Mode::Command => match &ui.hint {
            Some(h) => format!("   {h}"),
            None if text.is_empty() => placeholder(app),
            None => String::new(),
        },
        _ if text.is_empty() => {
            if ui.filter.text.is_empty() {
                "keys mode: n d w r e t h act on the selection · : or any other letter types a command · ? keys · q quits".to_string()
            } else {
                format!(
                    "keys mode: : or a letter types a command · filter /{} (Esc clears)",
                    ui.filter.text
                )
            }
        }
        _ => String::new(),
    };
    spans.push(Span::styled(after, t.dim));
    // A hint that does not fit is cut at a word and marked ` …` (the line typed so far
    // always fits: `visible_text` keeps its part around the cursor).
    let line = super::fit_words(&Line::from(spans), area.width as usize);
    buf.set_line(area.x, area.y, &line, area.width);
    if editing && let Some((x, y)) = cursor_in(area, lead, text, cursor) {
        if let Some(cell) = buf.cell_mut((x, y)) {
            cell.set_style(t.cursor);
        }
    }
}

/// The visible part of a line being edited: its tail when the cursor is past the room.
fn visible_text(text: &str, cursor: usize, avail: usize) -> (&str, usize) {
    let before = text.get(..cursor).unwrap_or(text).width();
    if before < avail {
        return (text, 0);
    }
    let mut skip = 0;
    let mut w = before;
    for (i, c) in text.char_indices() {
        if w < avail {
            skip = i;
            break;
        }
        w -= unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        skip = i + c.len_utf8();
    }
    (&text[skip..], skip)
}

fn cursor_in(area: Rect, lead: &str, text: &str, cursor: usize) -> Option<(u16, u16)> {
    let avail = (area.width as usize).saturating_sub(lead.width() + 1);
    let (_, skip) = visible_text(text, cursor, avail);
    let col = lead.width() + text.get(skip..cursor).unwrap_or("").width();
    (col < area.width as usize).then(|| (area.x + col as u16, area.y))
}

/// The terminal cursor's place while editing.
pub fn cursor(app: &App, area: Rect) -> Option<(u16, u16)> {
    match app.ui.mode {
        Mode::Command => cursor_in(area, PROMPT, &app.ui.prompt.text, app.ui.prompt.cursor),
        Mode::Filter => cursor_in(area, "/", &app.ui.filter.text, app.ui.filter.cursor),
        _ => None,
    }
}

/// The footer: the mode, then the keys of this mode from the keymap.
pub fn footer(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let mode = match app.ui.mode {
        Mode::Normal => " KEYS ",
        Mode::Command => " COMMAND ",
        Mode::Filter => " FILTER ",
        Mode::Help => " HELP ",
    };
    let mut spans = vec![Span::styled(mode, t.tab_active), Span::raw(" ")];
    if let Some(kind) = app.desk.watching() {
        spans.push(Span::styled(format!("watching {kind} — Esc stops"), t.key));
        spans.push(Span::raw("  "));
    }
    // Whole keys only: the first that does not fit (with room for the mark) ends the row
    // with ` …`; `?` and F1 list them all.
    let room = area.width as usize;
    let mut used: usize = spans.iter().map(|s| s.width()).sum();
    let keys = keymap::footer(app.ui.mode);
    for (i, (key, desc)) in keys.iter().enumerate() {
        let pair = [
            Span::styled(*key, t.key),
            Span::styled(format!(" {desc}  "), t.dim),
        ];
        let width = pair[0].width() + 1 + desc.width();
        let last = i + 1 == keys.len();
        if used + width + if last { 0 } else { 3 } > room {
            spans.push(Span::styled("…", t.dim));
            break;
        }
        used += pair[0].width() + pair[1].width();
        spans.extend(pair);
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

/// The help overlay: the keymap by section, in two columns when there is room.
pub fn help(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let sections = keymap::help_sections();
    let mut cols: Vec<Vec<Line>> = vec![Vec::new(), Vec::new()];
    let two = area.width >= 110;
    let width = if two {
        area.width.saturating_sub(4).min(150)
    } else {
        area.width.saturating_sub(2).min(84)
    };
    // Inside the borders and the padding; two columns split it with a gap of one.
    let inner_w = width.saturating_sub(4) as usize;
    let col_w = if two { inner_w / 2 - 1 } else { inner_w };
    const KEY_W: usize = 11;
    for (i, (heading, rows)) in sections.iter().enumerate() {
        let col = if two && i >= 2 { 1 } else { 0 };
        let lines = &mut cols[col];
        if !lines.is_empty() {
            lines.push(Line::raw(""));
        }
        lines.push(Line::from(Span::styled(*heading, t.header)));
        for (key, desc) in rows {
            // The description wraps at words under its own column, never cut.
            for (n, part) in super::lesson::wrap_words(desc, col_w.saturating_sub(KEY_W))
                .into_iter()
                .enumerate()
            {
                let key = if n == 0 { *key } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("  {key:<9}"), t.key),
                    Span::styled(part, t.plain),
                ]));
            }
        }
    }
    let mut tail = vec![
        Line::raw(""),
        Line::from(Span::styled("COMMANDS", t.header)),
    ];
    for text in [
        "Type `help` at the prompt for every command, `help pod create` for one.",
        "Every hotkey runs a command you could type; it is echoed in the output.",
    ] {
        for part in super::lesson::wrap_words(text, col_w.saturating_sub(2)) {
            tail.push(dim(t, format!("  {part}")));
        }
    }
    cols[0].extend(tail);
    let content_h = cols.iter().map(Vec::len).max().unwrap_or(0) as u16;
    let height = (content_h + 2).min(area.height.saturating_sub(2));
    let x = area.x + area.width.saturating_sub(width) / 2;
    let y = area.y + area.height.saturating_sub(height) / 2;
    let popup = Rect::new(x, y, width.min(area.width), height);
    Clear.render(popup, buf);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(t.border_type_focused)
        .border_style(t.border_focused)
        .title(Line::from(vec![
            Span::styled(" Keys ", t.border_focused),
            Span::styled("· ↑/↓ scroll · any other key closes ", t.dim),
        ]))
        .padding(Padding::horizontal(1))
        .style(t.plain);
    let inner = block.inner(popup);
    block.render(popup, buf);
    let scroll = app
        .ui
        .help_scroll
        .min(content_h.saturating_sub(inner.height) as usize);
    if two {
        let half = inner.width / 2;
        let left = Rect::new(inner.x, inner.y, half.saturating_sub(1), inner.height);
        let right = Rect::new(inner.x + half, inner.y, inner.width - half, inner.height);
        for (i, l) in cols[0]
            .iter()
            .skip(scroll)
            .take(inner.height as usize)
            .enumerate()
        {
            put(buf, left, i as u16, l);
        }
        for (i, l) in cols[1]
            .iter()
            .skip(scroll)
            .take(inner.height as usize)
            .enumerate()
        {
            put(buf, right, i as u16, l);
        }
    } else {
        for (i, l) in cols[0]
            .iter()
            .skip(scroll)
            .take(inner.height as usize)
            .enumerate()
        {
            put(buf, inner, i as u16, l);
        }
    }
}

/// Cut a string to a display width, with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_show_their_tail_at_the_cursor() {
        assert_eq!(visible_text("abc", 3, 10), ("abc", 0));
        let (shown, skip) = visible_text("abcdefghij", 10, 5);
        assert_eq!((shown, skip), ("ghij", 6));
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
    }
}
