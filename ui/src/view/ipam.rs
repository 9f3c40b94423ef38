//! The IPAM pane: host-local's directory on the selected node as it sits on disk — one
//! file per leased IP holding `<containerID>\r\n<ifname>` (shown as its two fields, the
//! ID shortened), `last_reserved_ip.N`, `lock` —
//! with the range, the gateway, used/free, and what the last command changed marked `●`
//! (written) or `✗` (released).
//!
//! Rows are virtual: the lease rows on screen are read with a skip into the store's ordered
//! map, so a node with many leases costs only the visible rows.

use super::{dim, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::dash::{self as model, IpamSummary};
use lab_engine::engine::node_view::{self, IpamDir, LeaseHolder, LeaseRow};
use lab_engine::engine::views::short_id;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Rows of one network's section.
struct Section<'a> {
    summary: IpamSummary,
    store: Option<IpamDir<'a>>,
    removed: Vec<&'a (String, LeaseRow)>,
    /// The directory, the range and gateway (wrapped to the pane's width), used and free.
    head: Vec<Line<'static>>,
}

impl Section<'_> {
    fn leases(&self) -> usize {
        self.store.map_or(1, |s| s.len().max(1))
    }

    fn cursors(&self) -> usize {
        self.store.map_or(0, |s| s.cursor_count() + 1)
    }

    fn rows(&self) -> usize {
        self.head.len() + self.removed.len() + self.leases() + self.cursors() + 1
    }
}

fn sections(app: &App, width: usize) -> Vec<Section<'_>> {
    let Some(node) = app.ui.sel_node.as_deref() else {
        return Vec::new();
    };
    let Some(dirs) = node_view::ipam_dirs(&app.desk.lab, node) else {
        return Vec::new();
    };
    let changes = &app.derived.ipam;
    model::ipam_summaries(&app.desk.lab, node)
        .into_iter()
        .map(|summary| Section {
            store: dirs.get(summary.net.as_str()).copied(),
            removed: if changes.node == node {
                changes
                    .removed
                    .iter()
                    .filter(|(n, _)| *n == summary.net)
                    .collect()
            } else {
                Vec::new()
            },
            head: head_lines(app, &summary, width),
            summary,
        })
        .collect()
}

/// A section's first rows: the directory, the range and the gateway (on one row when it
/// fits, else wrapped between them so neither is cut), used and free with a bar.
fn head_lines(app: &App, s: &IpamSummary, width: usize) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthStr;
    let t = &app.theme;
    let dir = format!("{}/", s.path);
    let net = format!("  ({})", s.net);
    let mut first = vec![Span::styled(dir.clone(), t.header)];
    if dir.width() + net.width() <= width {
        first.push(Span::styled(net, t.dim));
    }
    let mut out = vec![Line::from(first)];
    if s.ranges.is_empty() {
        // A store of a network the node no longer uses (after `network use`, a conflist
        // that sorts first): no config gives its range, and nothing allocates from it.
        out.extend(super::wrap_segments(
            vec![
                vec![Span::styled("not in the node's network config now:", t.dim)],
                vec![Span::styled(" no range, no new leases", t.dim)],
            ],
            width,
            2,
        ));
        out.push(Line::from(Span::styled(
            format!("used {}", s.used),
            t.plain,
        )));
        return out;
    }
    let ranges = if s.ranges.is_empty() {
        "?".to_string()
    } else {
        s.ranges.join(" + ")
    };
    out.extend(super::wrap_segments(
        vec![
            vec![Span::styled("range ", t.dim), Span::styled(ranges, t.plain)],
            vec![
                Span::styled(" · gateway ", t.dim),
                Span::styled(s.gateway.clone(), t.plain),
                Span::styled(" (skipped)", t.dim),
            ],
        ],
        width,
        2,
    ));
    let full = s.capacity > 0 && s.free() == 0;
    let counts = format!("used {} · free {} ", s.used, s.free());
    let tail = if full { " FULL" } else { "" };
    let bar_w = width
        .saturating_sub(counts.width() + tail.width() + 2)
        .clamp(4, 20) as u128;
    let filled = if s.capacity == 0 {
        0
    } else {
        ((s.used as u128).min(s.capacity) * bar_w).div_ceil(s.capacity)
    };
    out.push(Line::from(vec![
        Span::styled(counts, t.plain),
        Span::styled(
            format!(
                "▕{}{}▏",
                "█".repeat(filled as usize),
                "░".repeat((bar_w - filled) as usize)
            ),
            if full { t.bad } else { t.good },
        ),
        Span::styled(tail, t.bad),
    ]));
    out
}

/// Rows of content (for scrolling).
pub fn content_len(app: &App) -> usize {
    sections(app, app.viewport(Pane::Ipam).width as usize)
        .iter()
        .map(Section::rows)
        .sum::<usize>()
        .max(1)
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let node = app.ui.sel_node.clone().unwrap_or_default();
    let extra = if node.is_empty() {
        Vec::new()
    } else {
        vec![
            Span::styled(node.clone(), t.name),
            Span::styled("  n/N: other node", t.dim),
        ]
    };
    let block = pane_block(app, Pane::Ipam, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 {
        return;
    }
    if node.is_empty() {
        put(
            buf,
            inner,
            0,
            &dim(t, "no node selected — `node add NAME`, then `n`"),
        );
        return;
    }
    let secs = sections(app, inner.width as usize);
    if secs.is_empty() {
        let other = lab_engine::engine::ipam_view::other_ipam_lines(&app.desk.lab, &node);
        if other.is_empty() {
            put(
                buf,
                inner,
                0,
                &dim(t, "no host-local in this node's network config"),
            );
        }
        for (y, l) in other.iter().enumerate().take(inner.height as usize) {
            let line = if y == 0 {
                Line::from(Span::styled(l.clone(), t.name))
            } else {
                Line::from(Span::styled(l.clone(), t.plain))
            };
            put(buf, inner, y as u16, &line);
        }
        return;
    }
    let h = inner.height as usize;
    let total: usize = secs.iter().map(Section::rows).sum();
    let mut skip = app.ui.scroll[Pane::Ipam.index()].min(total.saturating_sub(h));
    super::more_cue(app, area, skip, total.saturating_sub(skip + h), buf);
    let mut y = 0usize;
    for sec in &secs {
        if y >= h {
            break;
        }
        if skip >= sec.rows() {
            skip -= sec.rows();
            continue;
        }
        let mut r = skip;
        skip = 0;
        let lease_start = sec.head.len() + sec.removed.len();
        let has_leases = sec.store.is_some_and(|s| !s.is_empty());
        while r < sec.rows() && y < h {
            if has_leases && r >= lease_start && r < lease_start + sec.leases() {
                let first = r - lease_start;
                let room = (sec.leases() - first).min(h - y);
                let n = draw_leases(app, &node, sec, first, room, inner, y, buf);
                y += n.max(1);
                r += n.max(1);
                continue;
            }
            put(buf, inner, y as u16, &section_row(app, &node, sec, r));
            y += 1;
            r += 1;
        }
    }
}

fn section_row(app: &App, node: &str, sec: &Section<'_>, r: usize) -> Line<'static> {
    let t = &app.theme;
    let s = &sec.summary;
    let removed = sec.removed.len();
    let lease_start = sec.head.len() + removed;
    let cursor_start = lease_start + sec.leases();
    match r {
        r if r < sec.head.len() => sec.head[r].clone(),
        r if r < lease_start => {
            let (_, lease) = sec.removed[r - sec.head.len()];
            Line::from(vec![
                Span::styled("✗ ", t.bad),
                Span::styled(
                    format!("{:<16}", lease.ip.to_string()),
                    t.dim.add_modifier(Modifier::CROSSED_OUT),
                ),
                Span::styled(
                    format!("released (held {})", short_id(&lease.container_id)),
                    t.dim,
                ),
            ])
        }
        r if r < cursor_start => {
            // Only reached for an empty or missing store (leases are drawn in a run). A
            // cursor file means addresses were handed out before and all were released.
            if sec.store.is_some_and(|s| s.cursor_count() > 0) {
                dim(
                    t,
                    "  (no leases held now: each DEL removed its file; the cursor below stays)",
                )
            } else {
                dim(
                    t,
                    "  (no leases yet: the first pod's ADD writes one file per IP)",
                )
            }
        }
        r => {
            let Some(store) = sec.store else {
                return Line::raw("");
            };
            let i = r - cursor_start;
            if let Some((idx, ip)) = store.cursors().nth(i) {
                let changed = app.derived.ipam.node == node
                    && app.derived.ipam.cursors.contains(&(s.net.clone(), idx));
                let mark = if changed { "● " } else { "  " };
                let style = if changed { t.changed } else { t.plain };
                Line::from(vec![
                    Span::styled(mark, style),
                    Span::styled(format!("last_reserved_ip.{idx:<3} "), style),
                    Span::styled(ip.to_string(), style),
                    Span::styled("  (round-robin cursor)", t.dim),
                ])
            } else if i == store.cursor_count() {
                Line::from(vec![
                    Span::raw("  "),
                    Span::styled("lock", t.plain),
                    Span::styled("  (flock while allocating)", t.dim),
                ])
            } else {
                Line::raw("")
            }
        }
    }
}

/// Draw lease rows from `first` (at most `room`), starting at screen row `y`; returns how
/// many rows were drawn.
#[allow(clippy::too_many_arguments)]
fn draw_leases(
    app: &App,
    node: &str,
    sec: &Section<'_>,
    first: usize,
    room: usize,
    inner: Rect,
    y: usize,
    buf: &mut Buffer,
) -> usize {
    let t = &app.theme;
    let Some(store) = sec.store else {
        return 0;
    };
    let mut n = 0;
    for lease in store.leases_from(first).take(room) {
        let ip = &lease.ip;
        let changed = app.derived.ipam.node == node
            && app
                .derived
                .ipam
                .added
                .contains(&(sec.summary.net.clone(), *ip));
        let owner = match node_view::lease_holder(
            &app.desk.lab,
            node,
            &lease.container_id,
            &lease.ifname,
        ) {
            Some(LeaseHolder::Pod(k)) => k.strip_prefix("default/").unwrap_or(&k).to_string(),
            // The pane is narrow: the REPL's `show ipam` says more.
            Some(LeaseHolder::Attachment) | None => "raw `cni add`".to_string(),
            Some(LeaseHolder::OtherChain { .. }) => "leaked (net changed)".to_string(),
            Some(LeaseHolder::Leaked) => "leaked (no DEL ever)".to_string(),
        };
        let style = if changed { t.changed } else { t.plain };
        // The file's two fields (host-local writes `<containerID>\r\n<ifname>`): the
        // container ID shortened, then the interface; shorter still (and the interface left
        // out) on a narrow pane, so the address and the owner stay whole.
        let fields = |id: &str| match lease.ifname.as_str() {
            "" => format!("{id}…"),
            ifname => format!("{id}…  {ifname}"),
        };
        let wide = fields(short_id(&lease.container_id));
        let ip_text = ip.to_string();
        let full_w = 2 + 16 + wide.chars().count() + 2 + owner.chars().count();
        let (ip_col, held) = if full_w <= inner.width as usize {
            (format!("{ip_text:<16}"), wide)
        } else {
            let id: String = lease.container_id.chars().take(7).collect();
            let mid = fields(&id);
            let w = 2 + ip_text.len() + 2 + mid.chars().count() + 2 + owner.chars().count();
            if w <= inner.width as usize {
                (format!("{ip_text}  "), mid)
            } else {
                (format!("{ip_text}  "), format!("{id}…"))
            }
        };
        let line = Line::from(vec![
            Span::styled(if changed { "● " } else { "  " }, style),
            Span::styled(ip_col, if changed { style } else { t.name }),
            Span::styled(held, style),
            Span::styled(format!("  {owner}"), t.dim),
        ]);
        put(buf, inner, (y + n) as u16, &line);
        n += 1;
    }
    n
}
