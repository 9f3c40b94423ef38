//! Rendering: `impl Widget for &App`, a pure function of state (demo2's shape). The screen
//! is laid out by [`layout`] (also used by `App` to know pane sizes for scrolling and mouse
//! hits), each pane is drawn by its own module, and every pane draws only the rows that
//! are visible.
//!
//! Three layouts: *wide* (≥ 120×34) shows every pane at once; the *grid* (≥ 80×24, a
//! classroom projector's 100×30) keeps the cluster's state panes in view together under a
//! tab bar — Topology, IPAM, Routes and Volumes two by two from 100 columns, Topology over
//! one of the other three below that — with a strip of command output (and the lesson
//! beside it while one runs or plays) under them; *compact* (smaller) shows one pane at a
//! time under the tab bar. In the grid and compact layouts, a pane outside the grid
//! (Calls, Wire, Output, Lesson) takes the whole area while it has the focus; during a
//! lesson the grid keeps Calls or Wire in its lower half instead, beside the lesson.

pub mod calls;
pub mod chrome;
pub mod ipam;
pub mod lesson;
pub mod output;
pub mod routes;
pub mod stepping;
pub mod timeline;
pub mod topology;
pub mod volumes;
pub mod wire;

use super::app::App;
use super::keymap::{Mode, Pane};
use super::theme::Theme;
use lab_engine::render::Role;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Widget};

/// Below this width or height the dashboard uses the compact (tabbed) layout.
pub const WIDE_MIN: (u16, u16) = (120, 34);

/// From this size up (and below [`WIDE_MIN`]) the state panes share the screen as a grid.
pub const GRID_MIN: (u16, u16) = (80, 24);

/// From this width up the grid is two by two (Topology and IPAM over Routes and Volumes).
pub const GRID_TWO_COLUMNS: u16 = 100;

/// Whether an area gets a tabbed layout (the grid or compact), not the wide one.
pub fn is_compact(area: Rect) -> bool {
    area.width < WIDE_MIN.0 || area.height < WIDE_MIN.1
}

/// Whether an area gets the grid layout: tabbed, but big enough to show the state panes
/// together.
pub fn is_grid(area: Rect) -> bool {
    is_compact(area) && area.width >= GRID_MIN.0 && area.height >= GRID_MIN.1
}

/// Whether a pane is one of the grid's (the cluster's state).
pub fn in_grid(pane: Pane) -> bool {
    matches!(
        pane,
        Pane::Topology | Pane::Ipam | Pane::Routes | Pane::Volumes
    )
}

/// Whether the grid layout shows the focused pane: one of the grid's, or during a lesson
/// the Calls or Wire pane a step is about (in the grid's lower half, so the lesson's text
/// stays in view beside the output).
fn grid_holds(app: &App) -> bool {
    in_grid(app.ui.focus)
        || (app.lesson.is_some() && matches!(app.ui.focus, Pane::Calls | Pane::Wire))
}

/// Whether the lesson pane is on screen in an area when a lesson runs.
pub fn lesson_on_screen(app: &App, area: Rect) -> bool {
    !is_compact(area)
        || app.ui.focus == Pane::Lesson
        || (is_grid(area)
            && (in_grid(app.ui.focus) || matches!(app.ui.focus, Pane::Calls | Pane::Wire)))
}

/// Where everything goes on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    /// The title bar.
    pub title: Rect,
    /// The tab bar (compact layout only).
    pub tabs: Option<Rect>,
    /// Visible panes with their outer rectangles (borders included).
    pub panes: Vec<(Pane, Rect)>,
    /// The timeline bar (once the lab has an event).
    pub timeline: Option<Rect>,
    /// The command line.
    pub prompt: Rect,
    /// The key footer.
    pub footer: Rect,
    /// Whether this is the compact layout.
    pub compact: bool,
}

impl Screen {
    /// The outer rectangle of a pane, if it is on screen.
    pub fn rect(&self, pane: Pane) -> Option<Rect> {
        self.panes.iter().find(|(p, _)| *p == pane).map(|(_, r)| *r)
    }

    /// The inner rectangle (inside borders and padding) of a pane on screen.
    pub fn inner(&self, pane: Pane, theme: &Theme) -> Option<Rect> {
        self.rect(pane).map(|r| block_inner(r, theme))
    }
}

fn block_inner(r: Rect, theme: &Theme) -> Rect {
    let r = Rect::new(
        r.x.saturating_add(1 + theme.pad),
        r.y.saturating_add(1),
        r.width.saturating_sub(2 + 2 * theme.pad),
        r.height.saturating_sub(2),
    );
    if r.width == 0 || r.height == 0 {
        Rect::new(r.x, r.y, 0, 0)
    } else {
        r
    }
}

/// Lay out the screen for an area.
pub fn layout(app: &App, area: Rect) -> Screen {
    let [title, body, prompt, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut screen = panes(app, area, body);
    screen.title = title;
    screen.prompt = prompt;
    screen.footer = footer;
    // The timeline bar takes the body's last row from the panes that reach it (the Output,
    // mostly), so the state panes above keep their size.
    if timeline::shown(app) && body.height > 1 {
        let bottom = body.bottom();
        for (_, r) in &mut screen.panes {
            if r.bottom() == bottom {
                r.height -= 1;
            }
        }
        screen.timeline = Some(Rect::new(body.x, bottom - 1, body.width, 1));
    }
    screen
}

/// The panes of the body (the title, prompt and footer rows are left empty for
/// [`layout`]).
fn panes(app: &App, area: Rect, body: Rect) -> Screen {
    let compact = is_compact(area);
    let (title, prompt, footer, timeline) = (Rect::ZERO, Rect::ZERO, Rect::ZERO, None);
    let mut panes = Vec::new();
    let mut tabs = None;
    if compact {
        let [tab_row, rest] =
            Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(body);
        tabs = Some(tab_row);
        if is_grid(area) && grid_holds(app) {
            grid(app, rest, &mut panes);
            return Screen {
                title,
                tabs,
                panes,
                timeline,
                prompt,
                footer,
                compact,
            };
        }
        let strip = if app.ui.focus != Pane::Output && rest.height >= 16 {
            6
        } else {
            0
        };
        let [main, out] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(strip)]).areas(rest);
        panes.push((app.ui.focus, main));
        if strip > 0 {
            panes.push((Pane::Output, out));
        }
    } else {
        // The Output holds what the last command printed (help is 50 lines): it shares the
        // height with Topology/IPAM as much again as the logs get. Fixed shares, so no
        // pane moves while content grows.
        let lesson = app.lesson.is_some();
        let [a, b, c, d] = Layout::vertical([
            Constraint::Fill(3),
            Constraint::Length(9),
            Constraint::Fill(2),
            Constraint::Fill(3),
        ])
        .areas(body);
        let [topo, ipam] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Fill(1)]).areas(a);
        panes.push((Pane::Topology, topo));
        panes.push((Pane::Ipam, ipam));
        let [routes, vols] =
            Layout::horizontal([Constraint::Percentage(42), Constraint::Fill(1)]).areas(b);
        panes.push((Pane::Routes, routes));
        panes.push((Pane::Volumes, vols));
        let [calls, wire] =
            Layout::horizontal([Constraint::Percentage(56), Constraint::Fill(1)]).areas(c);
        panes.push((Pane::Calls, calls));
        panes.push((Pane::Wire, wire));
        if lesson {
            // The lesson beside the Output, at full height: Routes and Volumes keep their
            // width, and the step's text sits next to what its commands print.
            let [out, les] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)]).areas(d);
            panes.push((Pane::Lesson, les));
            panes.push((Pane::Output, out));
        } else {
            panes.push((Pane::Output, d));
        }
    }
    Screen {
        title,
        tabs,
        panes,
        timeline,
        prompt,
        footer,
        compact,
    }
}

/// The grid layout's body: the state panes over a strip of output (and the lesson beside
/// it while one runs or plays, so its step stays in view).
fn grid(app: &App, rest: Rect, panes: &mut Vec<(Pane, Rect)>) {
    let lesson = app.lesson.is_some();
    let two_columns = rest.width >= GRID_TWO_COLUMNS;
    // The strip: four rows of output at 80×24, six at 100×30; more for a lesson's text.
    let strip = match (lesson, rest.height) {
        (true, h) if h >= 24 => 9,
        (true, _) => 7,
        // A stepped hop's panel: its line, the packet, the entry consulted.
        (false, _) if app.desk.stepping().is_some() => 8,
        (false, _) => 6,
    };
    let [main, bottom] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(strip)]).areas(rest);
    let log = matches!(app.ui.focus, Pane::Calls | Pane::Wire);
    // In the two-by-two grid Topology gets what its boxes need (the default cluster's two
    // nodes with a pod or two), from its 55% share up to what leaves Routes and Volumes
    // eight rows. (At 80×24 the pane under it keeps its share: its leases or volume.)
    let [share, _] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Fill(1)]).areas(main);
    let wants = u16::try_from(app.topo_rows() + 2).unwrap_or(u16::MAX);
    let topo_h = if two_columns {
        wants.min(main.height.saturating_sub(8)).max(share.height)
    } else {
        share.height
    };
    if two_columns {
        let [top, low] =
            Layout::vertical([Constraint::Length(topo_h), Constraint::Fill(1)]).areas(main);
        let [topo, ipam] =
            Layout::horizontal([Constraint::Percentage(58), Constraint::Fill(1)]).areas(top);
        panes.push((Pane::Topology, topo));
        panes.push((Pane::Ipam, ipam));
        if log {
            // A lesson step about a call: its pane under Topology and IPAM.
            panes.push((app.ui.focus, low));
        } else {
            let [routes, vols] =
                Layout::horizontal([Constraint::Percentage(45), Constraint::Fill(1)]).areas(low);
            panes.push((Pane::Routes, routes));
            panes.push((Pane::Volumes, vols));
        }
    } else {
        // Topology over the pane that had the focus last among the other three (IPAM
        // first).
        let partner = match app.ui.focus {
            Pane::Topology => app.ui.grid_partner,
            p => p,
        };
        let [topo, other] =
            Layout::vertical([Constraint::Length(topo_h), Constraint::Fill(1)]).areas(main);
        panes.push((Pane::Topology, topo));
        panes.push((partner, other));
    }
    if lesson {
        let [out, les] = Layout::horizontal([
            Constraint::Percentage(if two_columns { 50 } else { 45 }),
            Constraint::Fill(1),
        ])
        .areas(bottom);
        panes.push((Pane::Lesson, les));
        panes.push((Pane::Output, out));
    } else {
        panes.push((Pane::Output, bottom));
    }
}

/// How many rows a pane's content has (for clamping scroll positions).
pub fn content_len(app: &App, pane: Pane) -> usize {
    match pane {
        Pane::Topology => app.topo_rows(),
        Pane::Ipam => ipam::content_len(app),
        Pane::Routes => routes::content_len(app),
        Pane::Volumes => volumes::content_len(app),
        Pane::Calls => app
            .derived
            .calls
            .as_ref()
            .map_or(app.desk.lab.calls().len(), Vec::len),
        Pane::Wire => wire::lines(app, u16::MAX).len(),
        Pane::Output => app.ui.output.len(),
        Pane::Lesson => {
            let w = app.viewport(Pane::Lesson).width;
            lesson::lines(app, w).len()
        }
    }
}

/// A pane's frame: numbered title (Alt-N), focus shown by colour *and* border weight.
pub fn pane_block<'a>(app: &App, pane: Pane, extra: Vec<Span<'a>>) -> Block<'a> {
    let t = &app.theme;
    let focused = app.ui.focus == pane && app.ui.mode != Mode::Help;
    let n = app
        .panes()
        .iter()
        .position(|p| *p == pane)
        .map_or(0, |i| i + 1);
    let mut title = vec![
        Span::styled(format!(" {n} "), if focused { t.key } else { t.dim }),
        Span::styled(
            pane.title(),
            if focused { t.border_focused } else { t.title },
        ),
    ];
    if !extra.is_empty() {
        title.push(Span::styled(" · ", t.dim));
        title.extend(extra);
    }
    title.push(Span::raw(" "));
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            t.border_type_focused
        } else {
            t.border_type
        })
        .border_style(if focused { t.border_focused } else { t.border })
        // The title's text in the text's colour, not the border's (dark grey unfocused).
        .title_style(
            t.plain
                .fg(t.plain.fg.unwrap_or(ratatui::style::Color::Reset)),
        )
        .title(Line::from(title))
        .padding(Padding::horizontal(t.pad))
        .style(t.plain)
}

/// A scrolled pane's cue on its bottom border, right-aligned: how many of its rows are
/// above and below what it shows (` ↑ 3 · ↓ 12 more `), so a class sees there is more
/// than the projector shows. Nothing when everything fits.
pub fn more_cue(app: &App, area: Rect, above: usize, below: usize, buf: &mut Buffer) {
    if (above == 0 && below == 0) || area.height < 3 {
        return;
    }
    let text = match (above, below) {
        (0, b) => format!(" ↓ {b} more "),
        (a, 0) => format!(" ↑ {a} above "),
        (a, b) => format!(" ↑ {a} · ↓ {b} more "),
    };
    let width = text.chars().count() as u16;
    if width + 4 > area.width {
        return;
    }
    let x = area.x + area.width - width - 2;
    let y = area.y + area.height - 1;
    buf.set_string(x, y, text, app.theme.warn);
}

/// Paint an output line with the theme; control characters are escaped as the REPL's
/// painters escape them (`\u{1b}`), so a name a gRPC client or a file gave reads the same
/// in both (ratatui would drop them silently).
pub fn paint<'a>(theme: &Theme, line: &'a lab_engine::render::Line) -> Line<'a> {
    Line::from(
        line.spans
            .iter()
            .map(|s| {
                Span::styled(
                    lab_engine::render::escape_controls(&s.text),
                    theme.role(s.role),
                )
            })
            .collect::<Vec<_>>(),
    )
}

/// Draw a line at a row. A line wider than the area is cut at a word boundary and marked
/// ` …` (mid-word, with `…`, only for a single word wider than half the row), so no address,
/// prefix or state is ever shown cut short.
pub fn put(buf: &mut Buffer, area: Rect, row: u16, line: &Line<'_>) {
    if row >= area.height {
        return;
    }
    if line.width() <= area.width as usize {
        buf.set_line(area.x, area.y + row, line, area.width);
    } else {
        buf.set_line(
            area.x,
            area.y + row,
            &fit_words(line, area.width as usize),
            area.width,
        );
    }
}

/// Lay out segments (each a run of spans that stays together: a label and its value) in
/// rows of `width` columns, starting a new row, indented by `indent`, before a segment that
/// would not fit; the separator a segment starts with is dropped at the start of a row.
pub fn wrap_segments(
    segments: Vec<Vec<Span<'static>>>,
    width: usize,
    indent: usize,
) -> Vec<Line<'static>> {
    let seg_w = |seg: &[Span<'_>]| seg.iter().map(Span::width).sum::<usize>();
    let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for mut seg in segments {
        let w = seg_w(&seg);
        if used > 0 && used + w > width {
            // A new row: the separator the segment starts with goes.
            if let Some(first) = seg.first_mut() {
                let trimmed = first
                    .content
                    .trim_start_matches([' ', '·', '━', '→'])
                    .trim_start()
                    .to_string();
                first.content = trimmed.into();
            }
            rows.push(vec![Span::raw(" ".repeat(indent))]);
            used = indent;
        }
        used += seg_w(&seg);
        if let Some(row) = rows.last_mut() {
            row.extend(seg);
        }
    }
    rows.into_iter().map(Line::from).collect()
}

/// A line cut to `width` columns at a word boundary, the cut marked ` …` (see [`put`]).
pub fn fit_words(line: &Line<'_>, width: usize) -> Line<'static> {
    use unicode_width::UnicodeWidthChar;
    let owned = |l: &Line<'_>| {
        Line::from(
            l.spans
                .iter()
                .map(|s| Span::styled(s.content.to_string(), l.style.patch(s.style)))
                .collect::<Vec<_>>(),
        )
    };
    if line.width() <= width {
        return owned(line);
    }
    // (span, char, column after it) for every character.
    let mut cells: Vec<(usize, char, usize)> = Vec::new();
    let mut col = 0;
    for (i, s) in line.spans.iter().enumerate() {
        for c in s.content.chars() {
            col += c.width().unwrap_or(0);
            cells.push((i, c, col));
        }
    }
    // Trailing blanks are no content: without them the line may fit.
    while cells.last().is_some_and(|(_, c, _)| *c == ' ') {
        cells.pop();
    }
    let keep = if cells.last().is_none_or(|(_, _, end)| *end <= width) {
        cells.len()
    } else {
        let room = width.saturating_sub(2);
        // The last space that leaves the text before it within `room` columns, after some
        // text (an indentation is not a word boundary).
        let first_text = cells.iter().position(|(_, c, _)| *c != ' ').unwrap_or(0);
        let at_space = (first_text..cells.len())
            .rev()
            .find(|&i| cells[i].1 == ' ' && i > 0 && cells[i - 1].2 <= room);
        match at_space {
            Some(i) if cells[i - 1].2 * 2 >= width => i,
            _ => cells
                .iter()
                .position(|(_, _, end)| *end > width.saturating_sub(1))
                .unwrap_or(cells.len()),
        }
    };
    let cut = keep < cells.len();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut last_style = Style::default();
    for (i, c, _) in &cells[..keep] {
        let style = line.style.patch(line.spans[*i].style);
        match spans.last_mut() {
            Some(s) if s.style == style => s.content.to_mut().push(*c),
            _ => spans.push(Span::styled(c.to_string(), style)),
        }
        last_style = style;
    }
    if cut {
        let at_space = cells.get(keep).is_some_and(|(_, c, _)| *c == ' ');
        spans.push(Span::styled(if at_space { " …" } else { "…" }, last_style));
    }
    Line::from(spans)
}

/// Style a whole row (selection highlight).
pub fn highlight(buf: &mut Buffer, area: Rect, row: u16, style: Style) {
    if row < area.height {
        buf.set_style(Rect::new(area.x, area.y + row, area.width, 1), style);
    }
}

/// Draw plain lines into an area from a scroll offset (clamped so the end stays in view).
pub fn draw_lines(buf: &mut Buffer, area: Rect, lines: &[Line<'_>], scroll: usize) {
    let h = area.height as usize;
    let start = scroll.min(lines.len().saturating_sub(h));
    for (i, l) in lines.iter().skip(start).take(h).enumerate() {
        put(buf, area, i as u16, l);
    }
}

/// A dim line.
pub fn dim<'a>(theme: &Theme, text: impl Into<std::borrow::Cow<'a, str>>) -> Line<'a> {
    Line::from(Span::styled(text.into(), theme.dim))
}

/// A span in a role's style.
pub fn role<'a>(theme: &Theme, r: Role, text: impl Into<std::borrow::Cow<'a, str>>) -> Span<'a> {
    Span::styled(text.into(), theme.role(r))
}

fn render_pane(app: &App, pane: Pane, area: Rect, buf: &mut Buffer) {
    match pane {
        Pane::Topology => topology::render(app, area, buf),
        Pane::Ipam => ipam::render(app, area, buf),
        Pane::Routes => routes::render(app, area, buf),
        Pane::Volumes => volumes::render(app, area, buf),
        Pane::Calls => calls::render(app, area, buf),
        Pane::Wire => wire::render(app, area, buf),
        Pane::Output => {
            let (out, panel) = stepping::split(app, area);
            if let Some(r) = out {
                output::render(app, r, buf);
            }
            if let Some(r) = panel {
                stepping::render(app, r, buf);
            }
        }
        Pane::Lesson => lesson::render(app, area, buf),
    }
}

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        buf.set_style(area, self.theme.plain);
        let screen = layout(self, area);
        chrome::title(self, screen.title, buf);
        if let Some(tabs) = screen.tabs {
            chrome::tabs(self, tabs, buf);
        }
        for (pane, rect) in &screen.panes {
            render_pane(self, *pane, *rect, buf);
        }
        if let Some(bar) = screen.timeline {
            timeline::render(self, bar, buf);
        }
        chrome::prompt(self, screen.prompt, buf);
        chrome::footer(self, screen.footer, buf);
        if self.ui.mode == Mode::Help {
            chrome::help(self, area, buf);
        }
    }
}

/// Where the terminal cursor belongs (in the command line or filter), if anywhere.
pub fn cursor_position(app: &App, area: Rect) -> Option<(u16, u16)> {
    chrome::cursor(app, layout(app, area).prompt)
}
