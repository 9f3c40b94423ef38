//! The timeline bar: the lab's events on one line (number and the command, shortened),
//! the one the lab is after highlighted, and the ones a rewind left ahead dimmed (a
//! command typed now drops them: the session forks). `[` and `]` scrub: they run `rewind
//! N` through the desk like any hotkey, so every pane follows the rewound lab. Shown once
//! the lab has an event.

use crate::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// An event's command is cut to this many columns on the bar.
const COMMAND_WIDTH: usize = 22;

/// Between two events.
const SEP: &str = " · ";

/// Whether the bar is on screen: the lab has an event to show.
pub fn shown(app: &App) -> bool {
    app.desk.lab.position().of > 0
}

/// `N command`, the command cut to [`COMMAND_WIDTH`].
fn item(number: usize, line: &str) -> String {
    format!("{number} {}", super::chrome::truncate(line, COMMAND_WIDTH))
}

/// Draw the bar: `timeline N/M` (and `rewound` while the lab is), then the events around
/// the current one, as many as fit, the current one kept in view.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    buf.set_style(area, t.bar);
    let pos = app.desk.lab.position();
    let head = format!(
        " timeline {}/{}{} ",
        pos.at,
        pos.of,
        if pos.rewound() { " rewound" } else { "" }
    );
    // Item k: the start (0) or event k; only the ones near the current one are read.
    let label = |k: usize| match app.desk.lab.event(k) {
        Some(e) => item(e.number, &e.line),
        None => "0 start".to_string(),
    };
    let count = pos.of + 1;
    // The head, a lead `… ` and a trailing ` …`.
    let room = (area.width as usize).saturating_sub(head.width() + 4);
    // Grow a window around the current event, one to the left, one to the right, while it
    // fits.
    let cur = pos.at.min(count - 1);
    let mut window = std::collections::VecDeque::from([label(cur)]);
    let (mut lo, mut hi) = (cur, cur + 1);
    let mut used = window[0].width();
    loop {
        let mut grew = false;
        if lo > 0 {
            let l = label(lo - 1);
            if used + SEP.len() + l.width() <= room {
                used += SEP.len() + l.width();
                window.push_front(l);
                lo -= 1;
                grew = true;
            }
        }
        if hi < count {
            let l = label(hi);
            if used + SEP.len() + l.width() <= room {
                used += SEP.len() + l.width();
                window.push_back(l);
                hi += 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut spans = vec![
        Span::styled(head, t.tab_active),
        Span::styled(if lo > 0 { "… " } else { " " }, t.bar),
    ];
    for (number, text) in (lo..hi).zip(window) {
        if number > lo {
            spans.push(Span::styled(SEP, t.bar));
        }
        let style = if number == pos.at {
            t.selected
        } else if number > pos.at {
            t.bar.add_modifier(Modifier::DIM | Modifier::ITALIC)
        } else {
            t.bar
        };
        spans.push(Span::styled(text, style));
    }
    if hi < count {
        spans.push(Span::styled(" …", t.bar));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}
