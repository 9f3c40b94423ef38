//! The stepping panel: while a trace is stepped (`trace … --step`), the hop shown and the
//! packet as it is there (addresses before and after NAT, outer headers, size against the
//! MTU) and the entry it consulted; while a CSI flow is stepped (`pod create … --pvc CLAIM
//! --step`), the call shown, its request's key fields, the reply and the object it changed
//! with the volume's state before → after. Beside the Output (or in its place when the
//! screen is narrow). ←/→ move hop by hop or call by call, Esc stops; Topology and Routes
//! follow the hop, Volumes highlights the row the call changed.

use super::put;
use crate::app::App;
use lab_engine::lesson::stepping::{PacketStepping, Stepping};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Padding, Widget};

/// From this width of the Output's place up, the panel goes beside the Output.
const BESIDE_MIN: u16 = 100;

/// Split the Output's place while a trace is stepped: (the Output's rectangle, if it keeps
/// one; the panel's).
pub fn split(app: &App, area: Rect) -> (Option<Rect>, Option<Rect>) {
    if app.desk.stepping().is_none() {
        return (Some(area), None);
    }
    if area.width < BESIDE_MIN {
        return (None, Some(area));
    }
    let [out, panel] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Fill(1)]).areas(area);
    (Some(out), Some(panel))
}

/// The panel's lines for a stepped packet.
fn packet_lines(app: &App, s: &PacketStepping) -> Vec<Line<'static>> {
    let t = &app.theme;
    let h = s.hop();
    // Most telling first: a short panel (the 80×24 grid's strip) keeps the top lines.
    let mut out = vec![Line::styled(h.line(), t.plain)];
    out.extend(
        s.packet_lines()
            .into_iter()
            .map(|l| Line::styled(l, t.plain)),
    );
    out.extend(
        s.entry_lines()
            .into_iter()
            .map(|l| Line::styled(format!("consulted: {l}"), t.warn)),
    );
    out.push(Line::from(vec![
        Span::styled("at ", t.dim),
        Span::styled(h.at.text(), t.name),
        Span::styled(
            h.dev
                .as_deref()
                .map(|d| format!(" · {d}"))
                .unwrap_or_default(),
            t.name,
        ),
    ]));
    out
}

/// The panel's lines for a stepped CSI call: the call, what it changed (most telling
/// first, for a short panel), the reply, the request's fields.
fn csi_lines(app: &App, s: &lab_engine::lesson::csi_stepping::CsiStepping) -> Vec<Line<'static>> {
    let t = &app.theme;
    let failed = s.step().call.reply.is_err();
    let mut out = vec![Line::styled(s.call_line(), t.plain)];
    out.extend(
        s.change_lines()
            .into_iter()
            .map(|l| Line::styled(l, t.warn)),
    );
    out.push(Line::styled(
        s.reply_line(),
        if failed { t.bad } else { t.plain },
    ));
    out.extend(
        s.request_lines()
            .into_iter()
            .map(|l| Line::styled(l, t.plain)),
    );
    out
}

/// Draw the panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(s) = app.desk.stepping() else {
        return;
    };
    let t = &app.theme;
    let title = Line::from(vec![
        Span::styled(" Step ", t.border_focused),
        Span::styled(format!("{} {}/{} ", s.unit(), s.at() + 1, s.len()), t.name),
        Span::styled(format!("· ←/→ {} · Esc stop ", s.unit()), t.dim),
    ]);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(t.border_type_focused)
        .border_style(t.border_focused)
        .title(title)
        .padding(Padding::horizontal(t.pad))
        .style(t.plain);
    let inner = block.inner(area);
    block.render(area, buf);
    let lines = match s {
        Stepping::Packet(p) => packet_lines(app, p),
        Stepping::Csi(c) => csi_lines(app, c),
    };
    for (i, l) in lines.iter().enumerate() {
        put(buf, inner, i as u16, l);
    }
}
