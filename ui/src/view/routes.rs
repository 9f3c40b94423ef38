//! The routes pane: the selected node's table and the selected pod's table, in `ip route`
//! form, under the prompt a learner would type on that host or in that netns. The node
//! table (one line per node) comes from the derived state; only visible lines are styled.
//! A route too long for the pane loses its `proto kernel scope link` tail, then wraps at
//! words: a prefix or an address is never cut.

use super::{dim, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::dash as model;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// A route as the pane shows it at a width: in full when it fits; else without the tail a
/// learner can do without (`proto kernel scope link`, which every connected route has);
/// else wrapped at words, so no prefix or address is cut.
fn route_rows(route: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let full = format!("  {route}");
    if full.width() <= width {
        return vec![full];
    }
    let short = full.replace(" proto kernel scope link", "");
    if short.width() <= width {
        return vec![short];
    }
    let mut rows = vec![String::new()];
    for word in short.split_whitespace() {
        let cur = rows.last().map_or(0, |r| r.width());
        if cur > 4 && cur + 1 + word.width() > width {
            rows.push("    ".to_string());
        } else if rows.last().is_some_and(|r| r.is_empty()) {
            if let Some(r) = rows.last_mut() {
                r.push_str("  ");
            }
        } else if let Some(r) = rows.last_mut() {
            if !r.ends_with(' ') {
                r.push(' ');
            }
        }
        if let Some(r) = rows.last_mut() {
            r.push_str(word);
        }
    }
    rows
}

/// How many rows a route takes at a width ([`route_rows`]), without formatting it when it
/// fits.
fn route_height(route: &str, width: usize) -> usize {
    use unicode_width::UnicodeWidthStr;
    if route.width() + 2 <= width {
        1
    } else {
        route_rows(route, width).len()
    }
}

/// While a trace is stepped and its hop is a routing decision: where (the node, and the pod
/// for a pod's own table) and the route that matched, as `ip route` prints it.
fn consulted(app: &App) -> Option<(lab_engine::net::hop::Place, String)> {
    use lab_engine::net::hop::Entry;
    let hop = app.desk.stepping()?.packet()?.hop();
    match &hop.entry {
        Some(Entry::Route(r)) => Some((hop.at.clone(), r.to_ip_route())),
        _ => None,
    }
}

/// The style of a table's line: highlighted when it is the route the stepped hop matched.
fn route_style(app: &App, here: &lab_engine::net::hop::Place, line: &str) -> ratatui::style::Style {
    match consulted(app) {
        Some((at, route)) if &at == here && route == line => app.theme.selected,
        _ => app.theme.plain,
    }
}

/// The node table's rows as the pane holds them.
enum NodeRows<'a> {
    /// A note in place of the table (an error, not computed yet).
    Note(Line<'static>),
    /// The table, every route on one row (most tables: the rows are the lines, so a
    /// scrolled-past route costs nothing, not even its width).
    Fit(&'a [String], lab_engine::net::hop::Place),
    /// The table with routes wider than the pane (wrapped: rows are counted per route).
    Wrap(&'a [String], lab_engine::net::hop::Place),
}

/// The pane's content at a width: the node prompt, the node's table, the pod's table.
struct Rows<'a> {
    header: Line<'static>,
    node: NodeRows<'a>,
    node_len: usize,
    tail: Vec<Line<'static>>,
}

impl Rows<'_> {
    fn len(&self) -> usize {
        1 + self.node_len + self.tail.len()
    }
}

fn rows(app: &App, width: usize) -> Rows<'_> {
    let t = &app.theme;
    let Some(node) = app.ui.sel_node.clone() else {
        return Rows {
            header: dim(t, "no node selected"),
            node: NodeRows::Note(Line::default()),
            node_len: 0,
            tail: Vec::new(),
        };
    };
    let header = Line::from(vec![
        Span::styled(node.clone(), t.name),
        Span::styled(" (host) $ ip route", t.dim),
    ]);
    let r = &app.derived.routes;
    let fresh = r.node.as_deref() == Some(node.as_str());
    let (node_rows, node_len) = match &r.error {
        Some(e) if fresh => (NodeRows::Note(Line::styled(format!("  {e}"), t.bad)), 1),
        None if fresh => {
            let here = lab_engine::net::hop::Place::Node(node.clone());
            if r.widest + 2 <= width {
                (NodeRows::Fit(&r.lines, here), r.lines.len())
            } else {
                (
                    NodeRows::Wrap(&r.lines, here),
                    r.lines.iter().map(|l| route_height(l, width)).sum(),
                )
            }
        }
        _ => (NodeRows::Note(dim(t, "  (not computed yet)")), 1),
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
        let here = lab_engine::net::hop::Place::Pod {
            namespace: p.ns.clone(),
            name: p.name.clone(),
            node: p.node.clone(),
        };
        for l in routes {
            let style = route_style(app, &here, &l);
            tail.extend(
                route_rows(&l, width)
                    .into_iter()
                    .map(|row| Line::styled(row, style)),
            );
        }
    }
    Rows {
        header,
        node: node_rows,
        node_len,
        tail,
    }
}

/// The rows from `start` on, formatted only as they are taken.
fn rows_from<'a>(
    app: &'a App,
    rows: Rows<'a>,
    width: usize,
    start: usize,
) -> Box<dyn Iterator<Item = Line<'static>> + 'a> {
    let head = std::iter::once(rows.header).skip(start.min(1));
    let in_node = start.saturating_sub(1);
    let node: Box<dyn Iterator<Item = Line<'static>> + 'a> = match rows.node {
        NodeRows::Note(l) => Box::new(std::iter::once(l).take(rows.node_len).skip(in_node)),
        NodeRows::Fit(lines, here) => Box::new(
            lines
                .get(in_node..)
                .unwrap_or_default()
                .iter()
                .map(move |l| Line::styled(format!("  {l}"), route_style(app, &here, l))),
        ),
        NodeRows::Wrap(lines, here) => Box::new(
            lines
                .iter()
                .flat_map(move |l| {
                    let style = route_style(app, &here, l);
                    route_rows(l, width)
                        .into_iter()
                        .map(move |row| Line::styled(row, style))
                })
                .skip(in_node),
        ),
    };
    let in_tail = start.saturating_sub(1 + rows.node_len);
    Box::new(head.chain(node).chain(rows.tail.into_iter().skip(in_tail)))
}

/// Rows of content (for scrolling).
pub fn content_len(app: &App) -> usize {
    rows(app, app.viewport(Pane::Routes).width as usize).len()
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
    let width = inner.width as usize;
    let rows = rows(app, width);
    let h = inner.height as usize;
    let start = app.ui.scroll[Pane::Routes.index()].min(rows.len().saturating_sub(h));
    let below = rows.len().saturating_sub(start + h);
    for (i, l) in rows_from(app, rows, width, start).take(h).enumerate() {
        put(buf, inner, i as u16, &l);
    }
    super::more_cue(app, area, start, below, buf);
}
