//! The volumes pane: each claim followed to its mounts — PVC → PV → volume ID →
//! VolumeAttachment (node) → staging path → publish targets — with the CSI lifecycle drawn
//! as a progression: `● CREATED ━ ● NODE_READY ━ ○ VOL_READY ━ ○ PUBLISHED`.

use super::{dim, pane_block, put};
use crate::tui::app::App;
use crate::tui::keymap::Pane;
use lab_engine::dash::{VolumeRow, VolumeState, volume_rows};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Rows per volume.
const ROWS: usize = 3;

/// Rows of content (for scrolling).
pub fn content_len(app: &App) -> usize {
    (volume_rows(&app.desk.lab).len() * ROWS).max(2)
}

/// The lifecycle progression of a volume.
pub fn progression(app: &App, state: VolumeState) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (i, s) in VolumeState::ALL.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(
                " ━ ",
                if *s <= state { t.step_done } else { t.dim },
            ));
        }
        let (mark, style) = if *s < state {
            ("● ", t.step_done)
        } else if *s == state {
            (
                "◉ ",
                t.step_done
                    .add_modifier(ratatui::style::Modifier::UNDERLINED),
            )
        } else {
            ("○ ", t.dim)
        };
        spans.push(Span::styled(format!("{mark}{}", s.label()), style));
    }
    Line::from(spans)
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "—".to_string()
    } else {
        s.to_string()
    }
}

fn row_lines(app: &App, v: &VolumeRow) -> [Line<'static>; ROWS] {
    let t = &app.theme;
    [
        Line::from(vec![
            Span::styled(v.pvc.clone(), t.name),
            Span::styled(" → ", t.dim),
            Span::styled(or_dash(&v.pv), t.plain),
            Span::styled(" → ", t.dim),
            Span::styled(or_dash(&v.volume_id), t.plain),
            Span::styled(" → ", t.dim),
            Span::styled(or_dash(&v.attachment), t.plain),
            Span::styled(
                if v.node.is_empty() {
                    String::new()
                } else {
                    format!(" @{}", v.node)
                },
                t.dim,
            ),
        ]),
        Line::from(vec![
            Span::styled("  staging ", t.dim),
            Span::styled(or_dash(&v.staging), t.plain),
            Span::styled("  targets ", t.dim),
            Span::styled(
                if v.targets.is_empty() {
                    "—".to_string()
                } else {
                    v.targets.join(", ")
                },
                t.plain,
            ),
        ]),
        {
            let mut l = progression(app, v.state);
            l.spans.insert(0, Span::raw("  "));
            l
        },
    ]
}

/// Draw the pane.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let rows = volume_rows(&app.desk.lab);
    let block = pane_block(
        app,
        Pane::Volumes,
        vec![Span::styled(
            lab_engine::util::text::plural(rows.len(), "claim", "claims"),
            t.dim,
        )],
    );
    let inner = block.inner(area);
    block.render(area, buf);
    if rows.is_empty() {
        put(
            buf,
            inner,
            0,
            &dim(t, "no volumes yet — try `pvc create data --size 1Gi`"),
        );
        put(
            buf,
            inner,
            1,
            &dim(t, "a claim's volume goes, as the CSI calls happen:"),
        );
        let mut l = progression(app, VolumeState::Created);
        for s in &mut l.spans {
            s.style = t.dim;
        }
        l.spans.insert(0, Span::raw("  "));
        put(buf, inner, 2, &l);
        return;
    }
    let h = inner.height as usize;
    let skip = app.ui.scroll[Pane::Volumes.index()].min((rows.len() * ROWS).saturating_sub(h));
    let mut y = 0;
    for (i, v) in rows.iter().enumerate().skip(skip / ROWS) {
        for (j, line) in row_lines(app, v).iter().enumerate() {
            if i * ROWS + j < skip {
                continue;
            }
            if y >= h {
                return;
            }
            put(buf, inner, y as u16, line);
            y += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lab;
    use crate::tui::Theme;

    #[test]
    fn a_volume_row_reads_left_to_right_with_its_progression() {
        let app = App::new(Lab::new(), Theme::standard());
        let v = VolumeRow {
            pvc: "default/data".into(),
            pv: "pvc-1a2b".into(),
            volume_id: "vol-0001".into(),
            attachment: "csi-9f8e".into(),
            node: "node-1".into(),
            staging: "/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.lab/x/globalmount"
                .into(),
            targets: vec![],
            state: VolumeState::VolReady,
        };
        let [a, b, c] = row_lines(&app, &v);
        let text = |l: &Line| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        assert_eq!(
            text(&a),
            "default/data → pvc-1a2b → vol-0001 → csi-9f8e @node-1"
        );
        assert!(text(&b).ends_with("targets —"), "{}", text(&b));
        assert_eq!(
            text(&c),
            "  ● CREATED ━ ● NODE_READY ━ ◉ VOL_READY ━ ○ PUBLISHED"
        );
        // Reached states are styled as done, the rest dim.
        assert_eq!(c.spans[1].style, app.theme.step_done);
        assert_eq!(c.spans[7].style, app.theme.dim);
    }
}
