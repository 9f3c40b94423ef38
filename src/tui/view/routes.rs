//! The routes pane: the selected node's table and the selected pod's table, in `ip route`
//! form, under the prompt a learner would type on that host or in that netns.

use super::{dim, draw_lines, pane_block};
use crate::tui::app::App;
use crate::tui::keymap::Pane;
use crate::tui::model;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The pane's lines (a node table is one line per node, so this stays small).
pub fn lines(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    let Some(node) = app.ui.sel_node.clone() else {
        out.push(dim(t, "no node selected"));
        return out;
    };
    out.push(Line::from(vec![
        Span::styled(node.clone(), t.name),
        Span::styled(" (host) $ ip route", t.dim),
    ]));
    match model::node_route_lines(&app.lab, &node) {
        Ok(lines) => out.extend(
            lines
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), t.plain)),
        ),
        Err(e) => out.push(Line::styled(format!("  {e}"), t.bad)),
    }
    let pod = app
        .ui
        .sel_pod
        .as_ref()
        .and_then(|k| model::pod_facts(&app.lab, k))
        .filter(|p| p.node == node);
    if let Some(p) = pod {
        out.push(Line::from(vec![
            Span::styled(format!("pod {}/{}", p.ns, p.name), t.name),
            Span::styled(" (netns) $ ip route", t.dim),
        ]));
        let routes = model::pod_route_lines(&app.lab, &p);
        if routes.is_empty() {
            out.push(dim(t, "  (no sandbox network yet)"));
        }
        out.extend(
            routes
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), t.plain)),
        );
    }
    out
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let extra = match &app.ui.sel_node {
        Some(n) => vec![Span::styled(n.clone(), t.name)],
        None => Vec::new(),
    };
    let block = pane_block(app, Pane::Routes, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    draw_lines(buf, inner, &lines(app), app.ui.scroll[Pane::Routes.index()]);
}
