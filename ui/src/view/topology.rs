//! The topology pane: one box per node showing how a pod is wired —
//!
//! ```text
//! ╭─ node-1 · zone-1 · podCIDR 10.244.1.0/24 ──────────────────────────╮
//! │ eth0 192.168.0.1/24 ══ cni0 10.244.1.1/24 (bridge · pods' gateway)   │
//! │                        ├─ veth07c293f6 ⇄ eth0 10.244.1.2/24  web  Running │
//! │                        └─ vethb7c66997 ⇄ eth0 10.244.1.3/24  db   Running │
//! ╰──────────────────────────────────────────────────────────────────────╯
//! ```
//!
//! Rows are virtual: only the boxes inside the viewport are read and formatted, found by a
//! binary search in the rows each node's box starts on (`Derived::topo`, rebuilt once per
//! command): O(log nodes + visible rows) a frame, never O(nodes) or O(pods).

use super::{dim, pane_block, put};
use crate::app::App;
use crate::keymap::Pane;
use lab_engine::cluster::ApiKind;
use lab_engine::dash::{self as model, NodeFacts, PodKey};
use lab_engine::resource::count;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let groups = app.groups();
    let topo = &app.derived.topo;
    let mut extra = vec![Span::styled(
        format!(
            "{} · {}",
            count(ApiKind::Node, topo.nodes()),
            count(ApiKind::Pod, topo.pods())
        ),
        t.dim,
    )];
    if !app.ui.filter.text.is_empty() {
        extra.push(Span::styled(format!(" · /{}", app.ui.filter.text), t.warn));
    }
    let block = pane_block(app, Pane::Topology, extra);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width < 8 {
        return;
    }
    if groups.is_empty() {
        let msg = if app.desk.lab.counts().0 == 0 {
            "no nodes yet — try `node add node-1 --cidr 10.244.1.0/24 --ip 192.168.0.1`"
        } else {
            "nothing matches the filter (Esc clears it)"
        };
        put(buf, inner, 0, &dim(t, msg));
        return;
    }
    let h = inner.height as usize;
    let total = app.topo_rows();
    let scroll = app.ui.scroll[Pane::Topology.index()].min(total.saturating_sub(h));
    super::more_cue(app, area, scroll, total.saturating_sub(scroll + h), buf);
    // The first box in view, and the row it starts on: only the boxes in view are read.
    let Some((first_node, mut row)) = topo.group_at_row(scroll, t.airy) else {
        return;
    };
    let mut drawn = 0usize;
    let in_view = groups.range::<str, _>((
        std::ops::Bound::Included(first_node),
        std::ops::Bound::Unbounded,
    ));
    for (node, pods) in in_view {
        let rows = app.node_rows(node, pods);
        if drawn >= h {
            break;
        }
        let facts = model::node_facts(&app.desk.lab, node).unwrap_or_else(|| NodeFacts {
            name: node.clone(),
            ..NodeFacts::default()
        });
        let first = scroll.saturating_sub(row);
        for r in first..rows {
            if drawn >= h {
                break;
            }
            draw_row(app, inner, buf, drawn as u16, &facts, pods, r);
            drawn += 1;
        }
        row += rows;
    }
}

/// Columns a pod branch needs after its indent (veth ⇄ eth0 IP name status).
const POD_LINE: usize = 66;

/// The column pod branches hang from: under `cni0` when the row has room, else a small
/// indent (narrow screens).
fn branch_col(facts: &NodeFacts, width: u16) -> usize {
    let col = 2 + uplink_text(facts).width() + 4;
    let room = (width as usize).saturating_sub(2);
    if room >= col + POD_LINE {
        col
    } else if room >= 4 + POD_LINE {
        4
    } else {
        1
    }
}

/// A node's device as drawn: highlighted when a stepped trace's hop is at it (the uplink a
/// packet arrives on over the wire, the bridge, the tunnel device), else in `style`.
fn device_style(app: &App, node: &str, dev: &str, style: Style) -> Style {
    let at_hop = app
        .desk
        .stepping()
        .and_then(|s| s.packet())
        .map(|s| s.hop())
        .is_some_and(|h| h.at.node() == node && h.dev.as_deref() == Some(dev));
    if at_hop { app.theme.selected } else { style }
}

fn uplink_text(f: &NodeFacts) -> String {
    let addr = if f.uplink.1.is_empty() {
        f.internal_ip.clone()
    } else {
        f.uplink.1.clone()
    };
    format!("{} {}", f.uplink.0, addr)
}

#[allow(clippy::too_many_arguments)]
fn draw_row(
    app: &App,
    area: Rect,
    buf: &mut Buffer,
    y: u16,
    facts: &NodeFacts,
    pods: &[PodKey],
    r: usize,
) {
    let t = &app.theme;
    let w = area.width as usize;
    let rows = app.node_rows(&facts.name, pods);
    let last_box_row = rows - 1 - usize::from(t.airy);
    let node_selected = app.ui.sel_node.as_deref() == Some(facts.name.as_str());
    let frame = if node_selected {
        t.border_focused
    } else {
        t.border
    };
    if t.airy && r == rows - 1 {
        return; // the blank line between boxes
    }
    if r == 0 && facts.name.is_empty() {
        // Pods with no spec.nodeName yet: the scheduler has not placed them.
        let mut spans = vec![
            Span::styled("╭─ ", frame),
            Span::styled("not scheduled yet", t.warn),
            Span::styled(
                " · `describe pod NAME` shows the scheduler's reason ",
                t.dim,
            ),
        ];
        let used: usize = spans.iter().map(|s| s.content.width()).sum();
        spans.push(Span::styled("─".repeat(w.saturating_sub(used + 1)), frame));
        spans.push(Span::styled("╮", frame));
        put(buf, area, y, &Line::from(spans));
        return;
    }
    if r == 1 && facts.name.is_empty() {
        put(buf, area, y, &Line::from(Span::styled("│", frame)));
        let inner = Rect::new(area.x + 1, area.y, w.saturating_sub(2) as u16, area.height);
        put(
            buf,
            inner,
            y,
            &Line::from(Span::styled(
                " Pending: no node, no sandbox, no address",
                t.dim,
            )),
        );
        if w >= 2 {
            put(
                buf,
                Rect::new(area.x + area.width - 1, area.y, 1, area.height),
                y,
                &Line::from(Span::styled("│", frame)),
            );
        }
        return;
    }
    if r == 0 {
        let mut spans = vec![
            Span::styled("╭─ ", frame),
            Span::styled(facts.name.clone(), t.name),
        ];
        if !facts.zone.is_empty() {
            spans.push(Span::styled(format!(" · {}", facts.zone), t.dim));
        }
        spans.push(Span::styled(" · podCIDR ", t.dim));
        spans.push(Span::styled(
            if facts.pod_cidr.is_empty() {
                "none".to_string()
            } else {
                facts.pod_cidr.clone()
            },
            t.plain,
        ));
        spans.push(Span::raw(" "));
        let mut used: usize = spans.iter().map(|s| s.content.width()).sum();
        if used + 1 > w && !facts.zone.is_empty() {
            // A narrow box: the zone goes, the podCIDR stays whole.
            let zone = spans.remove(2);
            used -= zone.content.width();
        }
        let fill = w.saturating_sub(used + 1);
        spans.push(Span::styled("─".repeat(fill), frame));
        spans.push(Span::styled("╮", frame));
        put(buf, area, y, &Line::from(spans));
        return;
    }
    if r == last_box_row {
        let line = format!("╰{}╯", "─".repeat(w.saturating_sub(2)));
        put(buf, area, y, &Line::from(Span::styled(line, frame)));
        return;
    }
    let body_w = w.saturating_sub(2);
    let body = if r == 1 {
        // (span, whether it is an explanation a narrow box can do without)
        let mut spans: Vec<(Span<'static>, bool)> = vec![
            (Span::raw(" "), false),
            (
                Span::styled(
                    facts.uplink.0.clone(),
                    device_style(app, &facts.name, &facts.uplink.0, t.name),
                ),
                false,
            ),
            (Span::raw(" "), false),
            (
                Span::styled(
                    if facts.uplink.1.is_empty() {
                        facts.internal_ip.clone()
                    } else {
                        facts.uplink.1.clone()
                    },
                    t.plain,
                ),
                false,
            ),
            (Span::styled(" ══ ", t.dim), false),
        ];
        match &facts.bridge {
            Some((name, addr)) => {
                let style = device_style(app, &facts.name, name, t.name);
                spans.push((Span::styled(name.clone(), style), false));
                spans.push((Span::raw(" "), false));
                if addr.is_empty() {
                    spans.push((Span::styled("(no address: not a gateway)", t.dim), false));
                } else {
                    spans.push((Span::styled(addr.clone(), t.plain), false));
                    spans.push((Span::styled(" (bridge · pods' gateway)", t.dim), true));
                }
            }
            None => match &facts.routed {
                Some((dev, addr, what)) => {
                    let style = device_style(app, &facts.name, dev, t.name);
                    spans.push((Span::styled(dev.clone(), style), false));
                    if !addr.is_empty() {
                        spans.push((Span::raw(" "), false));
                        spans.push((Span::styled(addr.clone(), t.plain), false));
                    }
                    spans.push((Span::styled(format!(" ({what})"), t.dim), true));
                }
                None => {
                    spans.push((Span::styled("cni0", t.dim), false));
                    spans.push((Span::styled(" not created yet", t.dim), false));
                    spans.push((
                        Span::styled(" — the first pod's CNI ADD creates it", t.dim),
                        true,
                    ));
                }
            },
        }
        if let Some((name, what)) = &facts.tunnel {
            spans.push((Span::styled(" · ", t.dim), false));
            let style = device_style(app, &facts.name, name, t.name);
            spans.push((Span::styled(name.clone(), style), false));
            spans.push((Span::styled(format!(" ({what})"), t.dim), true));
        }
        // On a narrow box the explanations go first: a short one that does not fit whole
        // is left out, a long one is cut at a word (see `put`); an address never is.
        let room = w.saturating_sub(2);
        let essential: usize = spans
            .iter()
            .filter(|(_, optional)| !optional)
            .map(|(s, _)| s.content.width())
            .sum();
        let mut used = essential;
        let mut kept = Vec::new();
        for (span, optional) in spans {
            if optional {
                let sw = span.content.width();
                if used + sw <= room {
                    used += sw;
                } else if sw > 30 && used + 16 <= room {
                    used = room;
                } else {
                    continue;
                }
            }
            kept.push(span);
        }
        Line::from(kept)
    } else {
        let indent = " ".repeat(branch_col(facts, area.width));
        if pods.is_empty() {
            Line::from(vec![
                Span::raw(indent),
                Span::styled("└─ ", t.dim),
                Span::styled("no pods — try `pod create web --node ", t.dim),
                Span::styled(format!("{}`", facts.name), t.dim),
            ])
        } else {
            match app.pod_at_row(&facts.name, pods, r - 2) {
                Some((i, 0)) => pod_line(app, &pods[i], i + 1 == pods.len(), indent, body_w),
                Some((i, k)) => more_line(app, &pods[i], i + 1 == pods.len(), k - 1, indent),
                None => Line::default(),
            }
        }
    };
    put(buf, area, y, &Line::from(Span::styled("│", frame)));
    let inner = Rect::new(area.x + 1, area.y, body_w as u16, area.height);
    put(buf, inner, y, &body);
    if r >= 2
        && let Some((i, _)) = app.pod_at_row(&facts.name, pods, r - 2)
        && app.ui.sel_pod.as_ref() == Some(&pods[i])
    {
        // Highlight the pod's part of the row, not the box.
        let start = branch_col(facts, area.width) as u16;
        let hl = Rect::new(
            inner.x + start.min(inner.width),
            inner.y + y,
            inner.width.saturating_sub(start),
            1,
        );
        buf.set_style(hl, t.selected);
    }
    if w >= 2 {
        put(
            buf,
            Rect::new(area.x + area.width - 1, area.y, 1, area.height),
            y,
            &Line::from(Span::styled("│", frame)),
        );
    }
}

/// A pod's branch: `├─ veth ⇄ eth0 IP name status`, in columns when the row has room; on
/// a narrow box without the padding, then without the host veth, then without the pod's
/// interface name — its address, name and status stay whole.
fn pod_line(app: &App, key: &PodKey, last: bool, indent: String, room: usize) -> Line<'static> {
    let t = &app.theme;
    let branch = if last { "└─ " } else { "├─ " };
    let Some(p) = model::pod_facts(&app.desk.lab, key) else {
        return Line::from(vec![Span::raw(indent), Span::styled(branch, t.dim)]);
    };
    let name = if p.ns == "default" {
        p.name.clone()
    } else {
        format!("{}/{}", p.ns, p.name)
    };
    let pod_if = if p.pod_if.is_empty() {
        "eth0".to_string()
    } else {
        p.pod_if.clone()
    };
    let status = if p.running {
        Span::styled(p.status.clone(), t.good)
    } else {
        Span::styled(format!("! {}", p.status), t.warn)
    };
    let ip = if p.ip.is_empty() {
        Span::styled("(no IP)", t.warn)
    } else {
        Span::styled(p.ip.clone(), t.name)
    };
    let veth = if p.host_veth.is_empty() {
        Span::styled("············", t.dim)
    } else {
        Span::styled(
            p.host_veth.clone(),
            device_style(app, &p.node, &p.host_veth, t.plain),
        )
    };
    let pad = |s: &Span<'static>, w: usize| Span::styled(format!("{:<w$}", s.content), s.style);
    // The columns, as wide screens show them.
    let full = vec![
        Span::raw(indent.clone()),
        Span::styled(branch, t.dim),
        pad(&veth, 12),
        Span::styled(" ⇄ ", t.dim),
        Span::styled(pod_if.clone(), t.plain),
        Span::raw(" "),
        pad(&ip, 14),
        Span::raw(" "),
        Span::styled(format!("{name:<8} "), t.plain),
        status.clone(),
    ];
    let fits = |spans: &[Span<'_>]| spans.iter().map(Span::width).sum::<usize>() <= room;
    if fits(&full) {
        return Line::from(full);
    }
    let tight = |with_veth: bool, with_if: bool| {
        let mut spans = vec![Span::raw(indent.clone()), Span::styled(branch, t.dim)];
        if with_veth {
            spans.push(veth.clone());
            spans.push(Span::styled(" ⇄ ", t.dim));
        }
        if with_if {
            spans.push(Span::styled(format!("{pod_if} "), t.plain));
        }
        spans.push(ip.clone());
        spans.push(Span::styled(format!(" {name} "), t.plain));
        spans.push(status.clone());
        spans
    };
    for (veth, pod_if) in [(true, true), (false, true)] {
        let spans = tight(veth, pod_if);
        if fits(&spans) {
            return Line::from(spans);
        }
    }
    Line::from(tight(false, false))
}

/// One of a pod's other interfaces, on a row under the pod: `│  ├ net1 10.10.0.5/24
/// macvlan on eth0 · storage`.
fn more_line(app: &App, key: &PodKey, last_pod: bool, k: usize, indent: String) -> Line<'static> {
    let t = &app.theme;
    let stem = if last_pod { "   " } else { "│  " };
    let Some(p) = model::pod_facts(&app.desk.lab, key) else {
        return Line::from(vec![Span::raw(indent), Span::styled(stem, t.dim)]);
    };
    let last = k + 1 >= p.more_ifs.len();
    let mut spans = vec![
        Span::raw(indent),
        Span::styled(stem, t.dim),
        Span::styled(if last { "└ " } else { "├ " }, t.dim),
    ];
    match p.more_ifs.get(k) {
        Some(more) => spans.push(Span::styled(more.clone(), t.plain)),
        None => spans.push(Span::styled(
            "(interface gone from the pod's namespace)",
            t.dim,
        )),
    }
    Line::from(spans)
}
