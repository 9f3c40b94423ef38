//! The routes pane: the selected node's table and the selected pod's table, in `ip route`
//! form, under the prompt a learner would type on that host or in that netns. The node
//! table (one line per node) comes from the derived state; only visible lines are styled.
//! A route too long for the pane loses its `proto kernel scope link` tail, then wraps at
//! words: a prefix or an address is never cut.

use super::{dim, pane_block, put};
use crate::app::{App, RouteRow};
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
/// for a pod's own table) and the route that matched.
fn consulted(
    app: &App,
) -> Option<(
    &lab_engine::net::hop::Place,
    &lab_engine::cni::host::RouteEntry,
)> {
    use lab_engine::net::hop::Entry;
    let hop = app.desk.stepping()?.packet()?.hop();
    match &hop.entry {
        Some(Entry::Route(r)) => Some((&hop.at, r)),
        _ => None,
    }
}

/// The style of a table's route: highlighted when it is the route the stepped hop matched
/// (the same destination, next hop, device and type).
fn route_style(
    app: &App,
    here: &lab_engine::net::hop::Place,
    route: &model::RouteFact,
) -> ratatui::style::Style {
    match consulted(app) {
        Some((at, r))
            if at == here
                && route.via == r.via
                && route.dev == r.dev.as_str()
                && route.blackhole == r.blackhole
                && route.dst == r.dst.to_string() =>
        {
            app.theme.selected
        }
        _ => app.theme.plain,
    }
}

/// A row's text, as [`route_rows`] lays out a route (a prompt has none: it is drawn apart).
fn row_text(row: &RouteRow) -> &str {
    match row {
        RouteRow::Route(f) => &f.line,
        RouteRow::Note(n) => n,
        RouteRow::Prompt(_) => "",
    }
}

/// The rows a table's row takes at a width, styled: a route (highlighted when the stepped
/// hop matched it), a note, or the second command's prompt.
fn row_lines(
    app: &App,
    here: &lab_engine::net::hop::Place,
    at: At<'_>,
    row: &RouteRow,
    width: usize,
) -> Vec<Line<'static>> {
    let style = match row {
        RouteRow::Route(f) => route_style(app, here, f),
        RouteRow::Note(_) => app.theme.plain,
        RouteRow::Prompt(cmd) => return vec![prompt(app, at.who, at.place, cmd)],
    };
    route_rows(row_text(row), width)
        .into_iter()
        .map(|r| Line::styled(r, style))
        .collect()
}

/// How many rows a table's row takes at a width.
fn row_height(row: &RouteRow, width: usize) -> usize {
    match row {
        RouteRow::Prompt(_) => 1,
        _ => route_height(row_text(row), width),
    }
}

/// The prompt a learner would type a command at: who (`node-1`, `pod default/web`) and
/// where (`host`, `netns`).
fn prompt(app: &App, who: &str, place: &str, cmd: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(who.to_string(), app.theme.name),
        Span::styled(format!(" ({place}) $ {cmd}"), app.theme.dim),
    ])
}

/// Who and where a table is (`node-1`, `host`): its prompts' first two parts.
#[derive(Clone, Copy)]
struct At<'a> {
    who: &'a str,
    place: &'static str,
}

/// The node table's rows as the pane holds them.
enum NodeRows<'a> {
    /// A note in place of the table (an error, not computed yet).
    Note(Line<'static>),
    /// The table, every row on one line (most tables: a scrolled-past route costs nothing,
    /// not even its width).
    Fit(&'a [RouteRow], lab_engine::net::hop::Place, At<'a>),
    /// The table with routes wider than the pane (wrapped: rows are counted per route).
    Wrap(&'a [RouteRow], lab_engine::net::hop::Place, At<'a>),
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
    let Some(node) = app.ui.sel_node.as_deref() else {
        return Rows {
            header: dim(t, "no node selected"),
            node: NodeRows::Note(Line::default()),
            node_len: 0,
            tail: Vec::new(),
        };
    };
    let host = At {
        who: node,
        place: "host",
    };
    let header = prompt(app, host.who, host.place, "ip route");
    let r = &app.derived.routes;
    let fresh = r.node.as_deref() == Some(node);
    let (node_rows, node_len) = match &r.error {
        Some(e) if fresh => (NodeRows::Note(Line::styled(format!("  {e}"), t.bad)), 1),
        None if fresh => {
            let here = lab_engine::net::hop::Place::Node(node.to_string());
            if r.widest + 2 <= width {
                (NodeRows::Fit(&r.rows, here, host), r.rows.len())
            } else {
                (
                    NodeRows::Wrap(&r.rows, here, host),
                    r.rows.iter().map(|row| row_height(row, width)).sum(),
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
        let who = format!("pod {}/{}", p.ns, p.name);
        let at = At {
            who: &who,
            place: "netns",
        };
        tail.push(prompt(app, at.who, at.place, "ip route"));
        let routes = RouteRow::of(model::pod_routes(&app.desk.lab, &p));
        if routes.is_empty() {
            tail.push(dim(t, "  (no sandbox network yet)"));
        }
        let here = lab_engine::net::hop::Place::Pod {
            namespace: p.ns.clone(),
            name: p.name.clone(),
            node: p.node.clone(),
        };
        for row in &routes {
            tail.extend(row_lines(app, &here, at, row, width));
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
        NodeRows::Fit(table, here, at) => Box::new(
            table
                .get(in_node..)
                .unwrap_or_default()
                .iter()
                .flat_map(move |row| row_lines(app, &here, at, row, width)),
        ),
        NodeRows::Wrap(table, here, at) => Box::new(
            table
                .iter()
                .flat_map(move |row| row_lines(app, &here, at, row, width))
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
