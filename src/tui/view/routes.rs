//! The routes pane: the selected node's table and the selected pod's table, in `ip route`
//! form, under the prompt a learner would type on that host or in that netns. The node
//! table (one line per node) comes from the derived state; only visible lines are styled.

use super::{dim, pane_block, put};
use crate::tui::app::App;
use crate::tui::keymap::Pane;
use lab_engine::dash as model;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// The pane's lines, lazily: nothing is formatted until taken.
fn rows(app: &App) -> (usize, Box<dyn Iterator<Item = Line<'static>> + '_>) {
    let t = &app.theme;
    let Some(node) = app.ui.sel_node.clone() else {
        return (1, Box::new(std::iter::once(dim(t, "no node selected"))));
    };
    let header = Line::from(vec![
        Span::styled(node.clone(), t.name),
        Span::styled(" (host) $ ip route", t.dim),
    ]);
    let r = &app.derived.routes;
    let fresh = r.node.as_deref() == Some(node.as_str());
    let (node_count, node_lines): (usize, Box<dyn Iterator<Item = Line<'static>> + '_>) =
        match &r.error {
            Some(e) if fresh => (
                1,
                Box::new(std::iter::once(Line::styled(format!("  {e}"), t.bad))),
            ),
            None if fresh => (
                r.lines.len(),
                Box::new(
                    r.lines
                        .iter()
                        .map(move |l| Line::styled(format!("  {l}"), t.plain)),
                ),
            ),
            _ => (1, Box::new(std::iter::once(dim(t, "  (not computed yet)")))),
        };
    let pod = app
        .ui
        .sel_pod
        .as_ref()
        .and_then(|k| model::pod_facts(&app.desk.lab, k))
        .filter(|p| p.node == node);
    let mut tail = Vec::new();
    if let Some(p) = pod {
        tail.push(Line::from(vec![
            Span::styled(format!("pod {}/{}", p.ns, p.name), t.name),
            Span::styled(" (netns) $ ip route", t.dim),
        ]));
        let routes = model::pod_route_lines(&app.desk.lab, &p);
        if routes.is_empty() {
            tail.push(dim(t, "  (no sandbox network yet)"));
        }
        tail.extend(
            routes
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), t.plain)),
        );
    }
    let n = 1 + node_count + tail.len();
    (
        n,
        Box::new(std::iter::once(header).chain(node_lines).chain(tail)),
    )
}

/// Rows of content (for scrolling).
pub fn content_len(app: &App) -> usize {
    rows(app).0
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
    let (n, lines) = rows(app);
    let h = inner.height as usize;
    let start = app.ui.scroll[Pane::Routes.index()].min(n.saturating_sub(h));
    for (i, l) in lines.skip(start).take(h).enumerate() {
        put(buf, inner, i as u16, &l);
    }
}
