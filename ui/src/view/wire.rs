//! The wire pane: the exact plugin executions behind the selected call — each one's CNI_*
//! environment, stdin (the config with `name`, `cniVersion`, `prevResult`, runtimeConfig)
//! and stdout (the result or error JSON, as the real plugin prints it). A CSI call will
//! shows its request and response or gRPC status the same way.

use super::{dim, draw_lines, pane_block};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::dash as model;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// At most this many records are shown for one call (a chain is 4–8).
const MAX_RECORDS: u64 = 16;

/// The pane's lines for the current call.
pub fn lines(app: &App, _width: u16) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(call) = app.current_call() else {
        return vec![dim(
            t,
            "no plugin calls yet — create a pod to run the CNI chain",
        )];
    };
    let Some((first, last)) = model::wire_range(&app.desk.lab, call) else {
        let who = app
            .desk
            .lab
            .calls()
            .get(call)
            .map(|e| format!("{} {}", e.actor(), e.action()))
            .unwrap_or_default();
        return vec![
            dim(t, format!("call #{call} ({who}) ran no plugin itself;")),
            dim(t, "select an `exec` or `CNI ADD` line in Calls (↑/↓)."),
        ];
    };
    let mut out = Vec::new();
    for seq in first..last.min(first + MAX_RECORDS) {
        let Some(rec) = app.desk.lab.wire().get(seq) else {
            out.push(dim(t, format!("wire #{seq} is no longer kept")));
            continue;
        };
        // The same rendering `show wire N` prints, styled by role.
        let detail = lab_engine::engine::views::wire_detail(seq, rec);
        for l in detail.lines() {
            let painted = super::paint(t, &l);
            out.push(Line::from(
                painted
                    .spans
                    .into_iter()
                    .map(|s| Span::styled(s.content.into_owned(), s.style))
                    .collect::<Vec<_>>(),
            ));
        }
        out.push(Line::raw(""));
    }
    out
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let extra = match app
        .current_call()
        .and_then(|c| model::wire_range(&app.desk.lab, c))
    {
        Some((a, b)) if b > a + 1 => vec![Span::styled(format!("#{a}…#{}", b - 1), t.dim)],
        Some((a, _)) => vec![Span::styled(format!("#{a}"), t.dim)],
        None => Vec::new(),
    };
    let block = pane_block(app, Pane::Wire, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    draw_lines(
        buf,
        inner,
        &lines(app, inner.width),
        app.ui.scroll[Pane::Wire.index()],
    );
}
