//! The call log pane: who called what, in order (kubelet → containerd → CNI plugin → IPAM),
//! Warning entries marked `!` in the error style, entries with wire records marked `⇄`.
//! Follows the newest entry until one is selected (↑/↓); Esc or End follows again. During a
//! lesson step whose checks name a wire call, its newest entry is marked `▶` and kept in
//! view with the runtime line that ran it.

use super::{dim, highlight, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::dash as model;
use lab_engine::record::Level;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let filtered = app.derived.calls.as_ref();
    let len = filtered.map_or(app.desk.lab.calls().len(), Vec::len);
    let mut extra = vec![Span::styled(
        match app.ui.sel_call {
            Some(s) => format!("#{s} selected · w: wire · Esc: follow"),
            None => format!("{len} · following"),
        },
        t.dim,
    )];
    if !app.ui.filter.text.is_empty() {
        extra.push(Span::styled(format!(" · /{}", app.ui.filter.text), t.warn));
    }
    let block = pane_block(app, Pane::Calls, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 {
        return;
    }
    if len == 0 {
        let msg = if filtered.is_some() {
            "no call matches the filter"
        } else {
            "no calls yet — each command's controllers, runtime and plugins log here"
        };
        put(buf, inner, 0, &dim(t, msg));
        return;
    }
    // With a call selected, its full detail (wrapped) sits under the list.
    let detail: Vec<Line<'static>> = match app.ui.sel_call.and_then(|c| app.desk.lab.calls().get(c))
    {
        Some(e) if inner.height >= 8 => {
            let role = if e.level() == Level::Warning {
                lab_engine::render::Role::Bad
            } else {
                lab_engine::render::Role::Plain
            };
            let text = lab_engine::render::Line::new()
                .push(
                    format!("#{} ", app.ui.sel_call.unwrap_or(0)),
                    lab_engine::render::Role::Dim,
                )
                .push(format!("{} ", e.actor()), lab_engine::render::Role::Actor)
                .push(format!("{}: ", e.action()), lab_engine::render::Role::Dim)
                .push(e.detail(), role);
            let mut rows = super::output::wrap(t, &text, inner.width as usize);
            rows.truncate((inner.height as usize / 2).max(2));
            rows
        }
        _ => Vec::new(),
    };
    let list_h = inner.height.saturating_sub(if detail.is_empty() {
        0
    } else {
        detail.len() as u16 + 1
    });
    if !detail.is_empty() {
        let sep = "┄".repeat(inner.width as usize);
        put(buf, inner, list_h, &Line::from(Span::styled(sep, t.dim)));
        for (i, l) in detail.iter().enumerate() {
            put(buf, inner, list_h + 1 + i as u16, l);
        }
    }
    let inner = Rect::new(inner.x, inner.y, inner.width, list_h);
    let h = inner.height as usize;
    let first_seq = app.desk.lab.calls().iter().next().map_or(0, |(s, _)| s);
    let position_of = |seq: u64| -> Option<usize> {
        match filtered {
            Some(v) => v.binary_search(&seq).ok(),
            None => seq.checked_sub(first_seq).map(|p| p as usize),
        }
    };
    let start = match app.ui.sel_call.and_then(position_of) {
        // Keep the selected row in view even when the detail box took rows.
        Some(pos) => app.ui.scroll[Pane::Calls.index()]
            .min(pos)
            .max((pos + 1).saturating_sub(h))
            .min(len.saturating_sub(h)),
        // Following: the newest entries, unless the lesson step's call (and the runtime
        // line that ran it) would scroll away; then the window keeps them.
        None => {
            let newest = len.saturating_sub(h);
            match app.ui.focus_call.and_then(|c| {
                let first = model::chain_of(&app.desk.lab, c).unwrap_or(c);
                Some((position_of(first)?, position_of(c)?))
            }) {
                Some((first, call)) if first.min(call) < newest => {
                    first.min(call).max((call + 1).saturating_sub(h))
                }
                _ => newest,
            }
        }
    };
    for row in 0..h.min(len - start) {
        let pos = start + row;
        let seq = match filtered {
            Some(v) => v[pos],
            None => first_seq + pos as u64,
        };
        let Some(e) = app.desk.lab.calls().get(seq) else {
            continue;
        };
        let warn = e.level() == Level::Warning;
        let wire = model::wire_range(&app.desk.lab, seq).is_some();
        let focus = app.ui.focus_call == Some(seq);
        let text_style = if warn { t.bad } else { t.plain };
        let line = Line::from(vec![
            Span::styled(format!("{seq:>5} "), t.dim),
            Span::styled(if warn { "! " } else { "  " }, t.bad),
            match (focus, wire) {
                // The record the lesson step asks for.
                (true, _) => Span::styled("▶ ", t.key),
                (false, true) => Span::styled("⇄ ", t.dim),
                (false, false) => Span::styled("  ", t.dim),
            },
            // Always a space after the actor, even one longer than the column.
            Span::styled(format!("{:<21} ", e.actor()), t.actor),
            Span::styled(
                format!("{:<15} ", e.action()),
                if warn { t.bad } else { t.dim },
            ),
            Span::styled(e.detail(), text_style),
        ]);
        put(buf, inner, row as u16, &line);
        if app.ui.sel_call == Some(seq) {
            highlight(buf, inner, row as u16, t.selected);
        }
    }
}
